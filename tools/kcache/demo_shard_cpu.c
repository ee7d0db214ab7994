/*
 * demo_shard_cpu.c — the fallback's decode cost in `kcache demo shards`: what a replica pays
 * when the server ignores shardSelector and every byte reaches every replica, to be filtered by
 * the decoder (kc_decode_opts.shard: the uid is hashed during the metadata walk and objects out
 * of range are never built).
 *
 * Method: the demo's Pods are fetched once as one LIST body (kc_client_raw) and turned into a
 * watch stream (one MODIFIED line per Pod, from the decoded items). Each repetition decodes both
 * in full and with a quarter-range filter (the range [0, 2^62) of uid hashes), alternating which
 * goes first, on this thread; CPU is CLOCK_THREAD_CPUTIME_ID. The ratio of each repetition is
 * filtered ÷ full; the result is the median of 5 after one warm-up. bench/bench_shard measures
 * the same on more workloads, with the floor no filter can go below (docs/benchmarks-journal.md,
 * "Sharded informers").
 */
#include "demo_shards.h"

#include "kcache/decode.h"
#include "kcache/shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 5

typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static bool sbuf_add(sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 1 << 20;
        while (nc < b->len + n + 1)
            nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np)
            return false;
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    return true;
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* LIST items → the watch stream (MODIFIED lines). */
static int to_stream(void *ud, kc_obj *o)
{
    sbuf *b = ud;
    size_t n = 0;
    const char *j = kc_obj_json(o, &n);
    static const char head[] = "{\"type\":\"MODIFIED\",\"object\":";
    bool ok = sbuf_add(b, head, sizeof head - 1) && sbuf_add(b, j, n) && sbuf_add(b, "}\n", 2);
    kc_obj_unref(o);
    return ok ? 0 : KC_ENOMEM;
}

static int drop_obj(void *ud, kc_obj *o)
{
    (*(size_t *)ud)++;
    kc_obj_unref(o);
    return 0;
}

static int drop_ev(void *ud, const kc_watch_event *ev)
{
    (void)ev;
    (*(size_t *)ud)++;
    return 0;
}

static double decode_list(const char *body, size_t len, const kc_shard_selector *sel)
{
    kc_decode_opts o = {.shard = sel};
    size_t n = 0;
    double t0 = thread_cpu_s();
    kc_list_decode(body, len, &o, NULL, drop_obj, &n, NULL);
    return thread_cpu_s() - t0;
}

static double decode_watch(const sbuf *s, const kc_shard_selector *sel)
{
    kc_decode_opts o = {.shard = sel};
    kc_watch_decoder *d = NULL;
    if (kc_watch_decoder_new(&o, &d, NULL) < 0)
        return -1;
    size_t n = 0;
    double t0 = thread_cpu_s();
    for (size_t off = 0; off < s->len; off += 65536) { /* 64 KiB reads, as from a socket */
        size_t k = s->len - off < 65536 ? s->len - off : 65536;
        kc_watch_decoder_feed(d, s->p + off, k, drop_ev, &n, NULL);
    }
    kc_watch_decoder_finish(d, drop_ev, &n, NULL);
    double t = thread_cpu_s() - t0;
    kc_watch_decoder_free(d);
    return t;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int shards_fallback_cpu(kc_client *cl, double *ret_watch, double *ret_list)
{
    *ret_watch = *ret_list = -1;
    int status = 0;
    char *body = NULL;
    size_t len = 0;
    int rc = kc_client_raw(cl, "GET", "/api/v1/namespaces/" SHARDS_NS "/pods", NULL, NULL, 0,
                           &status, &body, &len, NULL);
    if (rc < 0 || status != 200) {
        free(body);
        return rc < 0 ? rc : KC_EIO;
    }
    sbuf s = {0};
    kc_shard_range q;
    kc_shard_selector *sel = NULL;
    rc = kc_list_decode(body, len, NULL, NULL, to_stream, &s, NULL);
    if (rc == 0 && (rc = kc_shard_range_split(4, 0, &q)) == 0)
        rc = kc_shard_selector_new(KC_SHARD_FIELD_UID, &q, 1, &sel, NULL);
    if (rc == 0) {
        double wr[REPS], lr[REPS];
        decode_list(body, len, NULL); /* warm-up: the decoder's scratch, the pages */
        decode_watch(&s, NULL);
        for (int r = 0; r < REPS; r++) {
            double lf, lq, wf, wq;
            if (r % 2) { /* alternate which goes first */
                lq = decode_list(body, len, sel), lf = decode_list(body, len, NULL);
                wq = decode_watch(&s, sel), wf = decode_watch(&s, NULL);
            } else {
                lf = decode_list(body, len, NULL), lq = decode_list(body, len, sel);
                wf = decode_watch(&s, NULL), wq = decode_watch(&s, sel);
            }
            lr[r] = lq / lf;
            wr[r] = wq / wf;
        }
        qsort(wr, REPS, sizeof *wr, cmp_d);
        qsort(lr, REPS, sizeof *lr, cmp_d);
        *ret_watch = wr[REPS / 2];
        *ret_list = lr[REPS / 2];
    }
    kc_shard_selector_free(sel);
    free(s.p);
    free(body);
    return rc;
}
