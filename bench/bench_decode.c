/*
 * bench_decode — the decoding hot path (wave 1.1): LIST and watch decode into stored kc_obj,
 * memory per stored Pod, JSON Pointer access.
 *
 * Usage: bench_decode [N] [REPS] [--cold-only] [--cold-pages]   (N Pods, default 100000; REPS
 * timed repetitions, default 7; --cold-only stops after the cold figure, for perf stat / perf
 * record; --cold-pages makes the cold decode pages of 500 Pods through one padded in-place
 * decoder, as the informer's pager does, instead of one whole-body kc_list_decode, and prints it
 * against the warm pages figure)
 *
 * Workload: N Pods from bench/genpod.h (~6 KB each, ~40 % managedFields), generated in memory.
 * One thread.
 *
 * Method. Each figure is measured REPS times after one warm-up run; the median, min and max are
 * printed. "Cold" is the first run in a fresh process (fresh pages: on these VMs first-touch page
 * faults dominate); "warm" reuses memory: the objects of the previous repetition are freed before
 * the next one (glibc keeps the pages: M_TRIM_THRESHOLD/M_MMAP_THRESHOLD raised below) and the
 * LIST decoder's scratch is retained (kc_list_decoder). Decode times include building every
 * stored object (minify check, managedFields strip, metadata extraction, one malloc + copy);
 * objects are kept in an array until the repetition ends, then freed outside the timed region.
 *
 * Output: human-readable lines, plus one `BENCH <metric> <value> <unit>` line per figure.
 */
#include "decode_sink.h"
#include "genpod.h"

#include <kcache/decode.h>

#include "json/sj.h" /* kc__sj_reference_pass: the bare simdjson pass, for calibration */

#include <malloc.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One LIST decode of body with dec (objects kept in sink, dropped after): thread CPU seconds. */
static double list_once(kc_list_decoder *dec, const char *body, size_t len, struct sink *sink)
{
    kc_list_meta meta;
    kc_error err = KC_ERROR_INIT;
    double c0 = cpu_now();
    int r = kc_list_decoder_decode(dec, body, len, &meta, keep, sink, &err);
    double dc = cpu_now() - c0;
    if (r)
        die("kc_list_decoder_decode", r, &err);
    kc_list_meta_clear(&meta);
    drop_all(sink);
    return dc;
}

/* One watch decode of the stream in 64 KiB chunks with a new decoder of opts: thread CPU seconds
 * (decoder creation included: one per stream, as an informer does). */
static double watch_once(const kc_decode_opts *opts, const char *w, size_t len, struct sink *sink)
{
    kc_error err = KC_ERROR_INIT;
    double c0 = cpu_now();
    kc_watch_decoder *wd = NULL;
    (void)kc_watch_decoder_new(opts, &wd, NULL);
    int r = 0;
    for (size_t off = 0; off < len && !r; off += 65536)
        r = kc_watch_decoder_feed(wd, w + off, len - off < 65536 ? len - off : 65536, keep_event,
                                  sink, &err);
    if (!r)
        r = kc_watch_decoder_finish(wd, keep_event, sink, &err);
    kc_watch_decoder_free(wd);
    double dc = cpu_now() - c0;
    if (r)
        die("kc_watch_decoder_feed", r, &err);
    drop_all(sink);
    return dc;
}

/* The LIST body cut into pages of PAGE Pods (an informer's default limit), each page one
 * {head, items, "]}"} document like a server's page. */
enum { PAGE = 500 };

typedef struct pages {
    const char *list;
    size_t hl;  /* bytes of the head up to and including "items":[ */
    size_t *at; /* item i starts at at[i] */
    char *pg;   /* one padded page buffer */
    unsigned n;
    double bytes; /* the pages' total length */
} pages;

static int pages_init(pages *p, const char *list, size_t list_len, unsigned n)
{
    const char *head = strstr(list, "\"items\":[");
    p->list = list, p->n = n;
    p->hl = head ? (size_t)(head - list) + 9 : 0;
    p->at = malloc(((size_t)n + 1) * sizeof *p->at);
    p->pg = malloc(list_len + KC_DECODE_PADDING);
    if (!head || !p->at || !p->pg)
        return -1;
    char one[KC_GENPOD_MAX];
    p->at[0] = p->hl;
    for (unsigned i = 0; i < n; i++)
        p->at[i + 1] = p->at[i] + kc_genpod_one(one, sizeof one, i) + 1; /* + the ',' */
    /* The pages hold the same items; their heads and tails add (n / PAGE) * (hl + 2) bytes. */
    p->bytes =
        (double)(p->at[n] - 1 - p->hl) + (double)((n + PAGE - 1) / PAGE) * (double)(p->hl + 2);
    return 0;
}

static void pages_free(pages *p)
{
    free(p->at);
    free(p->pg);
}

/* One pass over all pages through pd: each page is copied into the padded buffer untimed (as the
 * receive path writes it, so it is in cache as a received page is), then decoded in place, timed.
 * *wall and *cpu get the decode time only; the objects stay in sink. */
static void pages_pass(pages *p, kc_list_decoder *pd, struct sink *sink, double *wall, double *cpu)
{
    kc_error err = KC_ERROR_INIT;
    kc_list_meta meta;
    double dt = 0, dc = 0;
    for (unsigned first = 0; first < p->n; first += PAGE) {
        unsigned last = first + PAGE < p->n ? first + PAGE : p->n;
        size_t il = p->at[last] - p->at[first] - 1, len = p->hl + il + 2;
        memcpy(p->pg, p->list, p->hl);
        memcpy(p->pg + p->hl, p->list + p->at[first], il);
        memcpy(p->pg + p->hl + il, "]}", 2);
        memset(p->pg + len, ' ', KC_DECODE_PADDING);
        double t0 = now(), c0 = cpu_now();
        int r = kc_list_decoder_decode(pd, p->pg, len, &meta, keep, sink, &err);
        dt += now() - t0, dc += cpu_now() - c0;
        if (r)
            die("kc_list_decoder_decode (page)", r, &err);
        kc_list_meta_clear(&meta);
    }
    if (sink->n != p->n)
        die("pages: object count", KC_EPARSE, &err);
    *wall = dt, *cpu = dc;
}

/* KC_DECODE_STRICT against the default: the same body and stream decoded alternately in the two
 * modes (so both see the same machine state), thread CPU medians, and their ratio. */
static void strict_vs_default(const char *list, size_t list_len, const char *watch,
                              size_t watch_len, int reps, struct sink *sink)
{
    kc_decode_opts dflt = {.flags = 0, .max_object_size = 0},
                   strict = {.flags = KC_DECODE_STRICT, .max_object_size = 0};
    kc_list_decoder *dd = NULL, *sd = NULL;
    (void)kc_list_decoder_new(&dflt, &dd, NULL);
    (void)kc_list_decoder_new(&strict, &sd, NULL);
    if (!dd || !sd)
        die("kc_list_decoder_new", KC_ENOMEM, NULL);
    double ld[100], ls[100], wd[100], ws[100];
    for (int i = -1; i < reps; i++) {
        double a = list_once(dd, list, list_len, sink), b = list_once(sd, list, list_len, sink);
        double c = watch_once(&dflt, watch, watch_len, sink);
        double d = watch_once(&strict, watch, watch_len, sink);
        if (i >= 0)
            ld[i] = a, ls[i] = b, wd[i] = c, ws[i] = d;
    }
    kc_list_decoder_free(dd);
    kc_list_decoder_free(sd);
    struct stats a = summarize(ld, reps), b = summarize(ls, reps);
    struct stats c = summarize(wd, reps), d = summarize(ws, reps);
    printf("Strict mode (KC_DECODE_STRICT), alternated with the default, thread CPU medians: LIST "
           "%.2f GB/s strict vs %.2f default = %.2fx the time; watch %.2f vs %.2f GB/s = %.2fx\n",
           list_len / b.med / 1e9, list_len / a.med / 1e9, b.med / a.med, watch_len / d.med / 1e9,
           watch_len / c.med / 1e9, d.med / c.med);
    printf("BENCH list_decode_strict_cpu_gbps %.3f GB/s\n", list_len / b.med / 1e9);
    printf("BENCH list_decode_strict_ratio %.2f x\n", b.med / a.med);
    printf("BENCH watch_decode_strict_cpu_gbps %.3f GB/s\n", watch_len / d.med / 1e9);
    printf("BENCH watch_decode_strict_ratio %.2f x\n", d.med / c.med);
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 100000;
    int reps = argc > 2 ? atoi(argv[2]) : 7;
    bool cold_only = false, cold_pages = false;
    for (int i = 3; i < argc; i++) {
        cold_only |= strcmp(argv[i], "--cold-only") == 0; /* for perf stat / perf record */
        cold_pages |= strcmp(argv[i], "--cold-pages") == 0;
    }
    if (n == 0 || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: %s [N>0] [REPS 1..100]\n", argv[0]);
        return 2;
    }
    mallopt(M_TRIM_THRESHOLD, 1 << 30); /* keep freed pages: measure the decoder, not the VM */
    mallopt(M_MMAP_THRESHOLD, 1 << 25);

    size_t list_len = 0, watch_len = 0;
    char *list = kc_genpod_list(n, &list_len);
    char *watch = kc_genpod_watch(n, "ADDED", &watch_len);
    if (!list || !watch) {
        fprintf(stderr, "out of memory generating %u pods\n", n);
        return 1;
    }
    struct sink sink = {calloc(n, sizeof(kc_obj *)), 0, n};
    if (!sink.objs)
        return 1;
    printf("bench_decode: %u Pods, LIST body %.1f MB (%.0f B/Pod), watch stream %.1f MB; "
           "%d timed reps after 1 warm-up; one thread\n",
           n, list_len / 1e6, (double)list_len / n, watch_len / 1e6, reps);

    /* Reference for the state of this (shared) machine: memcpy of the LIST body, warm. */
    {
        char *dst = malloc(list_len);
        if (!dst)
            return 1;
        memcpy(dst, list, list_len);
        double best = 1e9;
        for (int i = 0; i < 3; i++) {
            double c0 = now();
            memcpy(dst, list, list_len);
            double dt = now() - c0;
            best = dt < best ? dt : best;
        }
        printf("Reference: memcpy of the LIST body, warm, best of 3: %.2f GB/s (machine state)\n",
               list_len / best / 1e9);
        printf("BENCH memcpy_reference_gbps %.3f GB/s\n", list_len / best / 1e9);
        free(dst);
    }

    kc_error err = KC_ERROR_INIT;
    double t[100];
    kc_list_meta meta;
    int r;

    /* ---- LIST, cold: the very first decode in this process ------------------------------------
     * Default: one-shot kc_list_decode of the whole body. --cold-pages: the body as pages of 500
     * through one padded in-place decoder (the informer's pager); its figure is printed with the
     * warm pages figure below. */
    struct rusage ru0, ru1;
    double cold = 0, cold_pages_s = 0, t0;
    getrusage(RUSAGE_SELF, &ru0);
    if (cold_pages) {
        pages pp;
        kc_decode_opts po = {.flags = KC_DECODE_INPUT_PADDED, .max_object_size = 0};
        kc_list_decoder *pd = NULL;
        if (pages_init(&pp, list, list_len, n) || kc_list_decoder_new(&po, &pd, NULL))
            return 1;
        double dc;
        getrusage(RUSAGE_SELF, &ru0);
        pages_pass(&pp, pd, &sink, &cold_pages_s, &dc);
        getrusage(RUSAGE_SELF, &ru1);
        kc_list_decoder_free(pd);
        pages_free(&pp);
        printf("LIST decode cold (first run, fresh pages, pages of %d Pods): %.3f s\n", PAGE,
               cold_pages_s);
    } else {
        t0 = now();
        r = kc_list_decode(list, list_len, NULL, &meta, keep, &sink, &err);
        cold = now() - t0;
        getrusage(RUSAGE_SELF, &ru1);
        if (r)
            die("kc_list_decode", r, &err);
        if (sink.n != n)
            die("cold: object count", KC_EPARSE, &err);
        kc_list_meta_clear(&meta);
        printf("LIST decode cold (first run, fresh pages, one-shot kc_list_decode): %.3f s, %.2f "
               "GB/s\n",
               cold, list_len / cold / 1e9);
        printf("BENCH list_decode_cold_gbps %.3f GB/s\n", list_len / cold / 1e9);
    }
    drop_all(&sink);
    printf("  cold: user %.3f s, sys %.3f s, %ld minor faults (%.2f us of sys each)\n",
           tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime), tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime),
           ru1.ru_minflt - ru0.ru_minflt,
           (tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime)) * 1e6 /
               (double)(ru1.ru_minflt - ru0.ru_minflt + 1));
    printf("BENCH list_decode_cold%s_minflt %ld faults\n", cold_pages ? "_pages" : "",
           ru1.ru_minflt - ru0.ru_minflt);
    if (cold_only)
        return 0;

    /* ---- LIST, warm: retained decoder, recycled object memory -------------------------------- */
    kc_list_decoder *ld = NULL;
    (void)kc_list_decoder_new(NULL, &ld, NULL);
    double tc[100];
    for (int i = -1; i < reps; i++) {
        t0 = now();
        double c0 = cpu_now();
        r = kc_list_decoder_decode(ld, list, list_len, &meta, keep, &sink, &err);
        double dt = now() - t0, dc = cpu_now() - c0;
        if (r)
            die("kc_list_decoder_decode", r, &err);
        kc_list_meta_clear(&meta);
        if (i >= 0)
            t[i] = dt, tc[i] = dc;
        if (i < reps - 1)
            drop_all(&sink);
    }
    struct stats sc = summarize(tc, reps);
    double list_cpu_med = sc.med;
    printf("LIST decode warm, thread CPU time: median %.3f s = %.2f GB/s (%.2f..%.2f), %.0f "
           "objects/s\n",
           sc.med, list_len / sc.med / 1e9, list_len / sc.max / 1e9, list_len / sc.min / 1e9,
           n / sc.med);
    printf("BENCH list_decode_cpu_gbps %.3f GB/s\n", list_len / sc.med / 1e9);
    struct stats s = summarize(t, reps);
    printf("LIST decode warm (kc_list_decoder): median %.3f s (min %.3f, max %.3f) = %.2f GB/s "
           "(%.2f..%.2f), %.0f objects/s\n",
           s.med, s.min, s.max, list_len / s.med / 1e9, list_len / s.max / 1e9,
           list_len / s.min / 1e9, n / s.med);
    printf("BENCH list_decode_gbps %.3f GB/s\n", list_len / s.med / 1e9);
    printf("BENCH list_decode_objects_per_s %.0f obj/s\n", n / s.med);
    if (cold > 0)
        printf("BENCH list_decode_cold_vs_warm %.2f x\n", s.med / cold);

    /* Reference: the bare simdjson On-Demand pass the decoder builds on (stage 1 over the body +
     * skipping every item), same padded body, same thread: the decoder's cost relative to it is
     * what this machine's load does not change much. */
    double ref_cpu = 0;
    {
        char *padded = malloc(list_len + KC_DECODE_PADDING);
        kc__sj_ctx *ctx = kc__sj_ctx_new();
        if (!padded || !ctx)
            return 1;
        memcpy(padded, list, list_len);
        memset(padded + list_len, ' ', KC_DECODE_PADDING);
        for (int i = -1; i < reps; i++) {
            t0 = now();
            double c0 = cpu_now();
            int64_t items = kc__sj_reference_pass(ctx, padded, list_len, false);
            double dt = now() - t0, dc = cpu_now() - c0;
            if (items != (int64_t)n)
                die("reference pass", (int)items, &err);
            if (i >= 0)
                t[i] = dt, tc[i] = dc;
        }
        kc__sj_ctx_free(ctx);
        free(padded);
        s = summarize(t, reps);
        sc = summarize(tc, reps);
        ref_cpu = sc.med;
        printf("Reference: bare simdjson On-Demand pass over the LIST body (stage 1 + skip every "
               "item, no objects): median %.2f GB/s wall, %.2f GB/s thread CPU\n",
               list_len / s.med / 1e9, list_len / sc.med / 1e9);
        printf("BENCH simdjson_reference_gbps %.3f GB/s\n", list_len / s.med / 1e9);
        printf("BENCH simdjson_reference_cpu_gbps %.3f GB/s\n", list_len / sc.med / 1e9);
        printf("LIST decode (copying kc_list_decoder) costs %.2fx the bare simdjson pass (thread "
               "CPU)\n",
               list_cpu_med / ref_cpu);
        printf("BENCH list_decode_vs_simdjson_ratio %.2f x\n", list_cpu_med / ref_cpu);
    }

    /* padded body (KC_DECODE_INPUT_PADDED): parsed in place, no copy of the body */
    {
        char *padded = malloc(list_len + KC_DECODE_PADDING);
        if (!padded)
            return 1;
        memcpy(padded, list, list_len);
        memset(padded + list_len, ' ', KC_DECODE_PADDING);
        kc_decode_opts po = {.flags = KC_DECODE_INPUT_PADDED, .max_object_size = 0};
        kc_list_decoder *pd = NULL;
        (void)kc_list_decoder_new(&po, &pd, NULL);
        drop_all(&sink);
        for (int i = -1; i < reps; i++) {
            t0 = now();
            double c0 = cpu_now();
            r = kc_list_decoder_decode(pd, padded, list_len, &meta, keep, &sink, &err);
            double dt = now() - t0, dc = cpu_now() - c0;
            if (r)
                die("kc_list_decoder_decode (padded)", r, &err);
            kc_list_meta_clear(&meta);
            if (i >= 0)
                t[i] = dt, tc[i] = dc;
            drop_all(&sink);
        }
        kc_list_decoder_free(pd);
        free(padded);
        s = summarize(t, reps);
        sc = summarize(tc, reps);
        printf("LIST decode warm, padded input (in place): median %.2f GB/s wall (%.2f..%.2f), "
               "%.2f GB/s thread CPU, %.0f objects/s\n",
               list_len / s.med / 1e9, list_len / s.max / 1e9, list_len / s.min / 1e9,
               list_len / sc.med / 1e9, n / s.med);
        printf("BENCH list_decode_padded_gbps %.3f GB/s\n", list_len / s.med / 1e9);
        printf("BENCH list_decode_padded_cpu_gbps %.3f GB/s\n", list_len / sc.med / 1e9);
        printf("LIST decode padded costs %.2fx the bare simdjson pass (thread CPU)\n",
               sc.med / ref_cpu);
        printf("BENCH list_decode_padded_vs_simdjson_ratio %.2f x\n", sc.med / ref_cpu);
    }

    /* The same Pods as LIST pages of 500, decoded in place (pages_pass). The whole-body figures
     * above also pay for stage 1's index of the entire body (~0.9 B per input byte) going through
     * memory. */
    {
        pages pp;
        if (pages_init(&pp, list, list_len, n))
            return 1;
        kc_decode_opts po = {.flags = KC_DECODE_INPUT_PADDED, .max_object_size = 0};
        kc_list_decoder *pd = NULL;
        (void)kc_list_decoder_new(&po, &pd, NULL);
        drop_all(&sink);
        for (int i = -1; i < reps; i++) {
            double dt, dc;
            pages_pass(&pp, pd, &sink, &dt, &dc);
            if (i >= 0)
                t[i] = dt, tc[i] = dc;
            drop_all(&sink);
        }
        kc_list_decoder_free(pd);
        double bytes = pp.bytes;
        pages_free(&pp);
        s = summarize(t, reps);
        sc = summarize(tc, reps);
        printf("LIST decode warm, pages of %d Pods (padded, in place): median %.2f GB/s wall "
               "(%.2f..%.2f), %.2f GB/s thread CPU, %.0f objects/s\n",
               PAGE, bytes / s.med / 1e9, bytes / s.max / 1e9, bytes / s.min / 1e9,
               bytes / sc.med / 1e9, n / s.med);
        printf("BENCH list_decode_pages_gbps %.3f GB/s\n", bytes / s.med / 1e9);
        printf("BENCH list_decode_pages_cpu_gbps %.3f GB/s\n", bytes / sc.med / 1e9);
        if (cold_pages_s > 0) {
            printf("LIST decode cold, pages of %d Pods: %.3f s = %.2f GB/s; cold / warm (pages) "
                   "%.2f\n",
                   PAGE, cold_pages_s, bytes / cold_pages_s / 1e9, s.med / cold_pages_s);
            printf("BENCH list_decode_cold_pages_gbps %.3f GB/s\n", bytes / cold_pages_s / 1e9);
            printf("BENCH list_decode_cold_pages_vs_warm %.2f x\n", s.med / cold_pages_s);
        }
    }

    /* one-shot kc_list_decode with warm object memory (its scratch is fresh each call) */
    drop_all(&sink);
    for (int i = 0; i < reps; i++) {
        t0 = now();
        r = kc_list_decode(list, list_len, NULL, &meta, keep, &sink, &err);
        t[i] = now() - t0;
        if (r)
            die("kc_list_decode", r, &err);
        kc_list_meta_clear(&meta);
        drop_all(&sink);
    }
    s = summarize(t, reps);
    printf("LIST decode one-shot kc_list_decode (scratch allocated per call): median %.2f GB/s "
           "(%.2f..%.2f)\n",
           list_len / s.med / 1e9, list_len / s.max / 1e9, list_len / s.min / 1e9);
    printf("BENCH list_decode_oneshot_gbps %.3f GB/s\n", list_len / s.med / 1e9);

    /* ---- memory per stored Pod --------------------------------------------------------------- */
    r = kc_list_decoder_decode(ld, list, list_len, &meta, keep, &sink, &err);
    if (r)
        die("kc_list_decoder_decode", r, &err);
    kc_list_meta_clear(&meta);
    size_t json_sum = 0, heap_sum = 0, usable_sum = 0;
    for (size_t i = 0; i < sink.n; i++) {
        size_t jl;
        kc_obj_json(sink.objs[i], &jl);
        json_sum += jl;
        heap_sum += kc_obj_heap_size(sink.objs[i]);
        usable_sum += malloc_usable_size(sink.objs[i]) + sizeof(size_t); /* + chunk header */
    }
    double jper = (double)json_sum / sink.n;
    printf("Memory per stored Pod: stripped minified JSON %.0f B (input %.0f B); "
           "kc_obj_heap_size %.0f B = %.3fx; malloc_usable_size+header %.0f B = %.3fx\n",
           jper, (double)list_len / n, (double)heap_sum / sink.n, (double)heap_sum / json_sum,
           (double)usable_sum / sink.n, (double)usable_sum / json_sum);
    printf("BENCH heap_per_pod_ratio %.3f x\n", (double)heap_sum / json_sum);
    printf("BENCH heap_per_pod_malloc_ratio %.3f x\n", (double)usable_sum / json_sum);
    printf("BENCH heap_per_pod_bytes %.0f B\n", (double)usable_sum / sink.n);

    /* ---- JSON Pointer access on stored Pods (objects still held) ----------------------------- */
    {
        size_t ops = sink.n < 200000 ? sink.n : 200000;
        for (int i = -1; i < reps; i++) {
            t0 = now();
            for (size_t k = 0; k < ops; k++) {
                char *v = NULL;
                r = kc_obj_get_string(sink.objs[k], "/spec/nodeName", &v, NULL, &err);
                if (r)
                    die("kc_obj_get_string", r, &err);
                free(v);
            }
            if (i >= 0)
                t[i] = (now() - t0) / ops * 1e9;
        }
        s = summarize(t, reps);
        printf("JSON Pointer /spec/nodeName (kc_obj_get_string, incl. malloc of the result): "
               "median %.0f ns/op (min %.0f, max %.0f)\n",
               s.med, s.min, s.max);
        printf("BENCH pointer_get_ns %.0f ns\n", s.med);
        for (int i = -1; i < reps; i++) {
            t0 = now();
            for (size_t k = 0; k < ops; k++) {
                const char *raw;
                size_t rl;
                r = kc_obj_get_raw(sink.objs[k], "/status/phase", &raw, &rl, &err);
                if (r)
                    die("kc_obj_get_raw", r, &err);
            }
            if (i >= 0)
                t[i] = (now() - t0) / ops * 1e9;
        }
        s = summarize(t, reps);
        printf("JSON Pointer /status/phase (kc_obj_get_raw, last top-level field): median %.0f "
               "ns/op (min %.0f, max %.0f)\n",
               s.med, s.min, s.max);
        printf("BENCH pointer_get_raw_status_ns %.0f ns\n", s.med);
        t0 = now();
        size_t hits = 0;
        for (int i = 0; i < 10; i++)
            for (size_t k = 0; k < sink.n; k++)
                hits += kc_obj_label(sink.objs[k], "tier") != NULL;
        double lns = (now() - t0) / (10.0 * sink.n) * 1e9;
        printf("Label lookup kc_obj_label(\"tier\"): %.1f ns/op (%zu hits)\n", lns, hits);
        printf("BENCH label_get_ns %.1f ns\n", lns);
    }
    drop_all(&sink);

    /* ---- watch stream ------------------------------------------------------------------------ */
    /* References: simdjson's stage 1 alone per event line (the floor: any decoder built on it runs
     * stage 1 over every byte), then the bare On-Demand pass (stage 1 + skipping the event), in
     * place. */
    double wref_cpu = 0, wst1_cpu = 0;
    for (int mode = 0; mode < 2; mode++) {
        bool stage1_only = mode == 0;
        kc__sj_ctx *ctx = kc__sj_ctx_new();
        double tw[100], twc[100];
        for (int i = -1; i < reps; i++) {
            t0 = now();
            double c0 = cpu_now();
            size_t lines = 0;
            for (const char *p = watch, *e = watch + watch_len; p < e;) {
                const char *nl = memchr(p, '\n', (size_t)(e - p));
                if (!nl)
                    break;
                if (kc__sj_reference_pass(ctx, p, (size_t)(nl - p), stage1_only) < 0)
                    die("reference pass (watch)", KC_EPARSE, &err);
                lines++;
                p = nl + 1;
            }
            if (lines != n)
                die("reference pass (watch lines)", KC_EPARSE, &err);
            if (i >= 0)
                tw[i] = now() - t0, twc[i] = cpu_now() - c0;
        }
        kc__sj_ctx_free(ctx);
        s = summarize(tw, reps);
        sc = summarize(twc, reps);
        if (stage1_only) {
            printf("Reference: simdjson stage 1 alone per watch line (the floor): median %.2f GB/s "
                   "wall, %.2f GB/s thread CPU (max %.2f)\n",
                   watch_len / s.med / 1e9, watch_len / sc.med / 1e9, watch_len / sc.min / 1e9);
            printf("BENCH simdjson_stage1_watch_cpu_gbps %.3f GB/s\n", watch_len / sc.med / 1e9);
            wst1_cpu = sc.med;
            continue;
        }
        wref_cpu = sc.med;
        printf("Reference: bare simdjson On-Demand pass per watch line (no objects): median %.2f "
               "GB/s wall, %.2f GB/s thread CPU\n",
               watch_len / s.med / 1e9, watch_len / sc.med / 1e9);
        printf("BENCH simdjson_watch_reference_cpu_gbps %.3f GB/s\n", watch_len / sc.med / 1e9);
    }
    static const size_t chunks[] = {65536, 16384};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        size_t chunk = chunks[c];
        kc_watch_decoder *wd = NULL;
        (void)kc_watch_decoder_new(NULL, &wd, NULL);
        for (int i = -1; i < reps; i++) {
            t0 = now();
            double c0 = cpu_now();
            for (size_t off = 0; off < watch_len; off += chunk) {
                size_t k = watch_len - off < chunk ? watch_len - off : chunk;
                r = kc_watch_decoder_feed(wd, watch + off, k, keep_event, &sink, &err);
                if (r)
                    die("kc_watch_decoder_feed", r, &err);
            }
            r = kc_watch_decoder_finish(wd, keep_event, &sink, &err);
            double dt = now() - t0, dc = cpu_now() - c0;
            if (r)
                die("kc_watch_decoder_finish", r, &err);
            if (sink.n != n) {
                fprintf(stderr, "decoded %zu of %u events\n", sink.n, n);
                return 1;
            }
            if (i >= 0)
                t[i] = dt, tc[i] = dc;
            drop_all(&sink);
        }
        kc_watch_decoder_free(wd);
        sc = summarize(tc, reps);
        printf("Watch decode warm, %zu-byte chunks, thread CPU time: median %.3f s = %.2f GB/s "
               "(%.2f..%.2f), %.0f events/s\n",
               chunk, sc.med, watch_len / sc.med / 1e9, watch_len / sc.max / 1e9,
               watch_len / sc.min / 1e9, n / sc.med);
        if (chunk == 65536) {
            printf("Watch decode costs %.2fx the bare simdjson pass per line (thread CPU)\n",
                   sc.med / wref_cpu);
            printf("BENCH watch_decode_vs_simdjson_ratio %.2f x\n", sc.med / wref_cpu);
            printf("Watch decode costs %.2fx simdjson's stage 1 alone (thread CPU)\n",
                   sc.med / wst1_cpu);
            printf("BENCH watch_decode_vs_stage1_ratio %.2f x\n", sc.med / wst1_cpu);
            printf("BENCH watch_decode_cpu_gbps %.3f GB/s\n", watch_len / sc.med / 1e9);
            printf("BENCH watch_decode_cpu_events_per_s %.0f events/s\n", n / sc.med);
        }
        s = summarize(t, reps);
        printf("Watch decode warm, %zu-byte chunks: median %.3f s (min %.3f, max %.3f) = %.2f GB/s "
               "(%.2f..%.2f), %.0f events/s\n",
               chunk, s.med, s.min, s.max, watch_len / s.med / 1e9, watch_len / s.max / 1e9,
               watch_len / s.min / 1e9, n / s.med);
        if (chunk == 65536) {
            printf("BENCH watch_decode_gbps %.3f GB/s\n", watch_len / s.med / 1e9);
            printf("BENCH watch_decode_events_per_s %.0f events/s\n", n / s.med);
        } else {
            printf("BENCH watch_decode_16k_gbps %.3f GB/s\n", watch_len / s.med / 1e9);
        }
    }

    strict_vs_default(list, list_len, watch, watch_len, reps, &sink);

    kc_list_decoder_free(ld);
    kc_error_clear(&err);
    free(sink.objs);
    free(list);
    free(watch);
    return 0;
}
