/*
 * bench_shard — what sharded informers save (docs/informer.md, "Sharded informers";
 * controller-semantics S9, S10, S13).
 *
 * (a) Bytes per replica with server-side sharding. An embedded API server (in process) seeded with
 *     N genpod-shaped Pods (seed_spec "pods=N", ~6 KB each). For R = 4 and R = 2, R informers on
 *     the R even uid ranges (kc_shard_range_split), each on its own kc_client, and one unsharded
 *     informer on another: each syncs by paged LIST (500 per page), then the bench patches M Pods
 *     (a label) and waits until every store's watermark has passed the last patch. Bytes are the
 *     response body bytes each client's transport received (kc__http_bytes_received: every LIST
 *     page, the watch stream, bookmarks). share_i = bytes of replica i ÷ bytes of the unsharded
 *     informer, over the same traffic; the target is ≈ 1/R. When the server ignores shardSelector
 *     (an old server, S12; or before server support), every share is ≈ 1.
 * (b) Client-side fallback cost, on two workloads: "server" — the same N Pods captured once as
 *     LIST pages (raw GET, 500 per page) and as a watch stream (one MODIFIED line per Pod, built
 *     from the decoded items); "genpod" — min(N, 5000) genpod Pods (bench/genpod.h: metadata in
 *     kube-apiserver's field order, uid early) as one LIST body and a MODIFIED stream. Each
 *     repetition decodes them in full and with a quarter-range filter (json/decode_internal.h),
 *     alternating which goes first, on one thread; CPU is CLOCK_THREAD_CPUTIME_ID. Ratio per
 *     repetition, median over REPS (≥ 5) repetitions; the target is ≤ 0.4× (kept objects: ~1/4).
 *     watch_quarter_floor_ratio is what no filter can go below: one memchr pass over the stream
 *     (every line end must be found) plus the full decode of the kept quarter, ÷ full decode.
 *
 * Usage: bench_shard [N=20000] [M=2000] [REPS=7]
 * Output: human text plus `BENCH <metric> <value> <unit>` lines.
 */
#include "core/internal.h"
#include "json/decode_internal.h"
#include "json/obj_internal.h"
#include "json/sj.h"
#include "rest/internal.h"
#include "kcache/informer.h"
#include "kcache/server.h"
#include "kcache/shard.h"

#include "genpod.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const kc_gvr PODS = {"", "v1", "pods"};

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static kc_client *client_new(const char *url, kc_config **cfg)
{
    kc_client *c = NULL;
    kc_client_opts co = {.qps = -1};
    if (kc_config_from_url(url, NULL, NULL, cfg, NULL) || kc_client_new(*cfg, &co, &c, NULL)) {
        fprintf(stderr, "bench_shard: client setup failed\n");
        exit(1);
    }
    return c;
}

/* ---- (a) bytes per replica ------------------------------------------------------------------ */

typedef struct replica {
    kc_config *cfg;
    kc_client *client;
    kc_informer *inf;
} replica;

static void replica_start(replica *r, const char *url, const kc_shard_range *range)
{
    r->client = client_new(url, &r->cfg);
    kc_informer_opts o = {.ns = "default",
                          .list_mode = KC_INFORMER_LIST_PAGED,
                          .shard_field = range ? KC_SHARD_FIELD_UID : KC_SHARD_FIELD_NONE,
                          .shard_ranges = range,
                          .shard_ranges_count = range ? 1 : 0};
    kc_error e = KC_ERROR_INIT;
    if (kc_informer_new(r->client, &PODS, &o, &r->inf, &e) || kc_informer_start(r->inf, &e) ||
        kc_informer_wait_synced(r->inf, 600000, &e)) {
        fprintf(stderr, "bench_shard: informer: %s\n", e.message ? e.message : "?");
        exit(1);
    }
}

static void replica_free(replica *r)
{
    kc_informer_free(r->inf);
    kc_client_free(r->client);
    kc_config_unref(r->cfg);
}

static int name_cb(void *ud, kc_obj *o)
{
    char ***names = ud;
    size_t n = 0;
    while ((*names)[n])
        n++;
    *names = realloc(*names, (n + 2) * sizeof(char *));
    (*names)[n] = strdup(kc_obj_name(o));
    (*names)[n + 1] = NULL;
    kc_obj_unref(o);
    return 0;
}

/* Patch m Pods (round robin over names); returns the last RV. */
static void patch_pods(kc_client *c, char **names, size_t n, size_t m, int round, char *rv)
{
    for (size_t i = 0; i < m; i++) {
        char body[128];
        snprintf(body, sizeof body, "{\"metadata\":{\"labels\":{\"bench-shard\":\"r%d-%zu\"}}}",
                 round, i);
        kc_obj *o = NULL;
        if (kc_client_patch(c, &PODS, "default", names[i % n], KC_PATCH_MERGE, body, strlen(body),
                            NULL, &o, NULL) == 0)
            snprintf(rv, KC_STORE_RV_MAX, "%s", kc_obj_resource_version(o));
        kc_obj_unref(o);
    }
}

static void wait_watermark(kc_informer *inf, const char *rv)
{
    kc_store_cond c = {KC_STORE_WAIT_WATERMARK, NULL, NULL, rv, NULL, 0};
    if (kc_store_wait(kc_informer_store(inf), &c, 600000, NULL) != 0)
        fprintf(stderr, "bench_shard: watermark %s not reached\n", rv);
}

static void bytes_run(const char *url, kc_client *writer, char **names, size_t n, size_t m,
                      unsigned R, int round)
{
    replica full, rep[4];
    replica_start(&full, url, NULL);
    kc_shard_range rg[4];
    for (unsigned i = 0; i < R; i++) {
        kc_shard_range_split(R, i, &rg[i]);
        replica_start(&rep[i], url, &rg[i]);
    }
    char rv[KC_STORE_RV_MAX] = "";
    patch_pods(writer, names, n, m, round, rv);
    wait_watermark(full.inf, rv);
    for (unsigned i = 0; i < R; i++)
        wait_watermark(rep[i].inf, rv);
    double fb = (double)kc__http_bytes_received(full.client->http), max = 0;
    kc_informer_status st;
    kc_informer_get_status(rep[0].inf, &st);
    const char *ss = st.server_sharding == KC_INFORMER_SHARDING_YES  ? "yes"
                     : st.server_sharding == KC_INFORMER_SHARDING_NO ? "no"
                                                                     : "unknown";
    printf("R=%u: unsharded informer %.1f MB; server_sharding=%s\n", R, fb / 1e6, ss);
    for (unsigned i = 0; i < R; i++) {
        double b = (double)kc__http_bytes_received(rep[i].client->http);
        double share = b / fb;
        if (share > max)
            max = share;
        kc_informer_get_status(rep[i].inf, &st);
        printf("  replica %u: %.1f MB, %llu objects, share %.3f\n", i, b / 1e6,
               (unsigned long long)st.objects, share);
        printf("BENCH shard_bytes_share_r%u_%u %.4f x\n", R, i, share);
    }
    printf("BENCH shard_bytes_share_r%u_max %.4f x\n", R, max);
    printf("BENCH shard_bytes_share_r%u_target %.4f x\n", R, 1.0 / R);
    for (unsigned i = 0; i < R; i++)
        replica_free(&rep[i]);
    replica_free(&full);
}

/* ---- (b) client-side filter CPU ---------------------------------------------------------------
 */

typedef struct pages {
    char **body;
    size_t *len, n;
} pages;

static void capture_pages(kc_client *c, pages *p)
{
    memset(p, 0, sizeof *p);
    char *cont = NULL;
    do {
        kc__buf path = KC__BUF_INIT(0);
        kc__buf_printf(&path, "/api/v1/namespaces/default/pods?limit=500");
        if (cont)
            kc__query(&path, "continue", cont);
        free(cont);
        cont = NULL;
        int status = 0;
        char *body = NULL;
        size_t len = 0;
        if (kc_client_raw(c, "GET", path.data, NULL, NULL, 0, &status, &body, &len, NULL) ||
            status != 200) {
            fprintf(stderr, "bench_shard: capture failed (%d)\n", status);
            exit(1);
        }
        kc__buf_free(&path);
        p->body = realloc(p->body, (p->n + 1) * sizeof(char *));
        p->len = realloc(p->len, (p->n + 1) * sizeof(size_t));
        p->body[p->n] = body;
        p->len[p->n] = len;
        p->n++;
        kc_list_meta meta = {0};
        kc_list_decode(body, len, NULL, &meta, NULL, NULL, NULL);
        if (meta.continue_token && *meta.continue_token)
            cont = strdup(meta.continue_token);
        kc_list_meta_clear(&meta);
    } while (cont);
}

static int watch_line_cb(void *ud, kc_obj *o)
{
    kc__buf *b = ud;
    size_t n = 0;
    const char *j = kc_obj_json(o, &n);
    kc__buf_append_str(b, "{\"type\":\"MODIFIED\",\"object\":");
    kc__buf_append(b, j, n);
    kc__buf_append_str(b, "}\n");
    kc_obj_unref(o);
    return 0;
}

static int count_obj(void *ud, kc_obj *o)
{
    (*(size_t *)ud)++;
    kc_obj_unref(o);
    return 0;
}

static int count_ev(void *ud, const kc_watch_event *ev)
{
    (void)ev;
    (*(size_t *)ud)++;
    return 0;
}

/* CPU seconds to decode every page (sel NULL: full); *kept gets the objects delivered. */
static double decode_list(const pages *p, const kc_shard_selector *sel, size_t *kept)
{
    *kept = 0;
    double t0 = thread_cpu_s();
    for (size_t i = 0; i < p->n; i++) {
        kc_error e = KC_ERROR_INIT;
        int rc =
            kc__list_decode_ex(p->body[i], p->len[i], NULL, sel, NULL, NULL, count_obj, kept, &e);
        if (rc)
            fprintf(stderr, "bench_shard: page %zu: %s\n", i, e.message ? e.message : "?");
        kc_error_clear(&e);
    }
    return thread_cpu_s() - t0;
}

static double decode_watch(const kc__buf *s, const kc_shard_selector *sel, size_t *kept)
{
    *kept = 0;
    kc_watch_decoder *d = NULL;
    kc_watch_decoder_new(NULL, &d, NULL);
    kc__watch_decoder_set_shard(d, sel);
    double t0 = thread_cpu_s();
    for (size_t off = 0; off < s->len; off += 65536) { /* 64 KiB reads, as from a socket */
        size_t n = s->len - off < 65536 ? s->len - off : 65536;
        kc_watch_decoder_feed(d, s->data + off, n, count_ev, kept, NULL);
    }
    kc_watch_decoder_finish(d, count_ev, kept, NULL);
    double t = thread_cpu_s() - t0;
    kc_watch_decoder_free(d);
    return t;
}

/* CPU seconds of the least any watch filter must do: find every line end (memchr). */
static double scan_watch(const kc__buf *s, size_t *lines)
{
    *lines = 0;
    double t0 = thread_cpu_s();
    for (const char *p = s->data, *end = s->data + s->len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break;
        (*lines)++;
        p = nl + 1;
    }
    return thread_cpu_s() - t0;
}

/* The parts of a filtered watch decode, each alone over the whole stream (CPU seconds):
 * what = 0: the whitespace scan the decoder runs per line (kc__sj_find_ws); 1: the prefilter
 * on every line. */
static double part_watch(const kc__buf *s, const kc_shard_selector *sel, int what)
{
    size_t sink = 0;
    double t0 = thread_cpu_s();
    for (const char *p = s->data, *end = s->data + s->len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break;
        size_t n = (size_t)(nl - p);
        sink += what == 0 ? kc__sj_find_ws(p, n) : (size_t)kc__watch_prefilter_drop(p, n, sel);
        p = nl + 1;
    }
    double t = thread_cpu_s() - t0;
    if (sink == (size_t)-1)
        fprintf(stderr, "unreachable\n");
    return t;
}

/* Median ratios (filtered ÷ full) of REPS alternated decodes of p and stream, printed as
 * BENCH lines with the workload's tag. */
static void cpu_ratios(const char *tag, const pages *p, const kc__buf *stream, int reps)
{
    kc_shard_range q0;
    kc_shard_range_split(4, 0, &q0);
    kc_shard_selector *sel = NULL;
    kc_shard_selector_new(KC_SHARD_FIELD_UID, &q0, 1, &sel, NULL);
    double lr[64], wr[64], lf[64], wf[64], fl[64], pw[64], pp[64];
    size_t lines = 0;
    size_t kl = 0, kw = 0, nl = 0, nw = 0, bytes = 0;
    for (size_t i = 0; i < p->n; i++)
        bytes += p->len[i];
    decode_list(p, NULL, &nl); /* warm-up */
    for (int r = 0; r < reps; r++) {
        double a, b, c2, d;
        if (r % 2) { /* alternate which goes first */
            b = decode_list(p, sel, &kl);
            a = decode_list(p, NULL, &nl);
            d = decode_watch(stream, sel, &kw);
            c2 = decode_watch(stream, NULL, &nw);
        } else {
            a = decode_list(p, NULL, &nl);
            b = decode_list(p, sel, &kl);
            c2 = decode_watch(stream, NULL, &nw);
            d = decode_watch(stream, sel, &kw);
        }
        lr[r] = b / a;
        wr[r] = d / c2;
        /* floor: read every byte once for the line ends, decode the kept quarter in full */
        fl[r] = (scan_watch(stream, &lines) + c2 * (double)kw / (double)(nw ? nw : 1)) / c2;
        pw[r] = (part_watch(stream, sel, 0) - scan_watch(stream, &lines)) / c2;
        pp[r] = (part_watch(stream, sel, 1) - scan_watch(stream, &lines)) / c2;
        lf[r] = a;
        wf[r] = c2;
    }
    printf("%s LIST: %zu pages, %.1f MB, %zu objects; quarter filter keeps %zu\n", tag, p->n,
           bytes / 1e6, nl, kl);
    printf("%s watch: %.1f MB, %zu events; quarter filter keeps %zu\n", tag, stream->len / 1e6, nw,
           kw);
    printf("BENCH shard_%s_list_full_decode_cpu_s %.4f s\n", tag, median(lf, (size_t)reps));
    printf("BENCH shard_%s_list_quarter_filter_cpu_ratio %.3f x\n", tag, median(lr, (size_t)reps));
    printf("BENCH shard_%s_watch_full_decode_cpu_s %.4f s\n", tag, median(wf, (size_t)reps));
    printf("BENCH shard_%s_watch_quarter_filter_cpu_ratio %.3f x\n", tag, median(wr, (size_t)reps));
    printf("BENCH shard_%s_watch_quarter_floor_ratio %.3f x\n", tag, median(fl, (size_t)reps));
    /* parts, each ÷ the full decode, beyond the memchr pass they include */
    printf("BENCH shard_%s_watch_find_ws_part_ratio %.3f x\n", tag, median(pw, (size_t)reps));
    printf("BENCH shard_%s_watch_prefilter_part_ratio %.3f x\n", tag, median(pp, (size_t)reps));
    kc_shard_selector_free(sel);
}

static void pages_free(pages *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->body[i]);
    free(p->body);
    free(p->len);
}

/* Two workloads: the embedded server's LIST pages as captured (its serialiser writes metadata
 * keys sorted, so uid comes after managedFields and the walker reads nearly all of it), and the
 * genpod reference Pods in kube-apiserver's field order (uid right after namespace, as Go's
 * ObjectMeta is serialised), one LIST body of n Pods and n MODIFIED lines. */
static void cpu_run(kc_client *c, size_t n, int reps)
{
    pages p;
    capture_pages(c, &p);
    kc__buf stream = KC__BUF_INIT((size_t)1 << 30);
    for (size_t i = 0; i < p.n; i++)
        kc_list_decode(p.body[i], p.len[i], NULL, NULL, watch_line_cb, &stream, NULL);
    cpu_ratios("server", &p, &stream, reps);
    kc__buf_free(&stream);
    pages_free(&p);

    pages g = {0};
    size_t len = 0;
    g.body = malloc(sizeof(char *));
    g.len = malloc(sizeof(size_t));
    g.body[0] = kc_genpod_list((unsigned)n, &len);
    g.len[0] = len;
    g.n = 1;
    kc__buf ws = KC__BUF_INIT((size_t)1 << 30);
    size_t wl = 0;
    char *w = kc_genpod_watch((unsigned)n, "MODIFIED", &wl);
    kc__buf_append(&ws, w, wl);
    free(w);
    cpu_ratios("genpod", &g, &ws, reps);
    kc__buf_free(&ws);
    pages_free(&g);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
    size_t m = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000;
    int reps = argc > 3 ? atoi(argv[3]) : 7;
    if (reps < 5)
        reps = 5;
    if (reps > 64)
        reps = 64;
    char spec[64];
    snprintf(spec, sizeof spec, "pods=%zu:ns=default", n);
    kc_server_opts so = {
        .listen = "127.0.0.1:0", .seed_spec = spec, .bookmark_interval_ms = 100, .quiet = true};
    kc_server *srv = NULL;
    if (kc_server_new(&so, &srv, NULL) || kc_server_start(srv, NULL)) {
        fprintf(stderr, "bench_shard: server failed\n");
        return 1;
    }
    kc_config *cfg = NULL;
    kc_client *writer = client_new(kc_server_url(srv), &cfg);
    char **names = calloc(1, sizeof(char *));
    kc_client_list_all(writer, &PODS, "default", NULL, NULL, name_cb, &names, NULL);
    size_t nn = 0;
    while (names[nn])
        nn++;
    printf("bench_shard: %zu Pods, %zu patches per run, %d repetitions\n", nn, m, reps);
    bytes_run(kc_server_url(srv), writer, names, nn, m, 4, 0);
    bytes_run(kc_server_url(srv), writer, names, nn, m, 2, 1);
    cpu_run(writer, nn < 5000 ? nn : 5000, reps);
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    kc_client_free(writer);
    kc_config_unref(cfg);
    kc_server_free(srv);
    return 0;
}
