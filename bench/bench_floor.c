/*
 * bench_floor — the decoders against their floor, simdjson's stage 1, measured in the same time
 * slices, so the VM's speed swings cancel out.
 *
 * Usage: bench_floor [N=20000] [REPS=5] [BLOCK=500]
 *
 * Why. On this 2-vCPU VM the same code runs at very different speeds from one quarter second to
 * the next (simdjson's stage 1 alone over the same 500 Pods, measured every 250 ms: 1.75 to
 * 3.17 GB/s), so a decoder figure taken a second apart from its reference is mostly noise. Every
 * decoder built on simdjson runs stage 1 over every input byte; how far above that floor it costs
 * is what our code decides.
 *
 * Method. N genpod Pods (~6 KB, 40 % managedFields), one thread, warm (one untimed repetition
 * first; objects are kept until the end of a repetition, then freed untimed, and glibc is told
 * to keep freed pages, so their memory is reused, as in bench_decode; without that every
 * repetition first-touches its objects again and the decoders measure ~3x their stage 1). The Pods
 * are cut into blocks of BLOCK; for each block, back to back: a. stage 1 alone over each of its
 * watch lines (simdjson's iterate, nothing walked); b. the watch decoder over the block's lines (64
 * KiB chunks, objects built and kept); c. stage 1 alone over the block as one LIST page (the
 * informer's default page: 500); d. the LIST decoder over that page, padded, in place (objects
 * built and kept). Times are thread CPU time. Per repetition: each path's GB/s over all blocks and
 * its ratio to its stage 1 (b/a, d/c); medians over REPS. Then the blocks of all repetitions are
 * ranked by their stage 1 speed, and the decoders' GB/s is given over the quarter of blocks where
 * stage 1 ran fastest — the figure a quiet machine gives, measured rather than extrapolated.
 *
 * Output: human text plus `BENCH <metric> <value> <unit>` lines.
 */
#include "decode_sink.h"
#include "genpod.h"

#include <kcache/decode.h>

#include "json/sj.h" /* kc__sj_reference_pass */

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One block's four timings (seconds) and its byte counts. */
struct block {
    double s1_watch, watch, s1_list, list;
    double watch_bytes, list_bytes;
};

static int cmp_block_s1(const void *a, const void *b)
{ /* fastest stage 1 (bytes per second over both paths) first */
    const struct block *x = a, *y = b;
    double vx = (x->watch_bytes + x->list_bytes) / (x->s1_watch + x->s1_list);
    double vy = (y->watch_bytes + y->list_bytes) / (y->s1_watch + y->s1_list);
    return vx > vy ? -1 : vx < vy;
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 20000;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    unsigned bsz = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 500;
    if (n == 0 || reps < 1 || reps > 100 || bsz == 0 || bsz > n) {
        fprintf(stderr, "usage: %s [N>0] [REPS 1..100] [BLOCK 1..N]\n", argv[0]);
        return 2;
    }
    mallopt(M_TRIM_THRESHOLD, 1 << 30); /* keep freed pages (as bench_decode): warm objects */
    mallopt(M_MMAP_THRESHOLD, 1 << 25);
    size_t watch_len = 0;
    char *watch = kc_genpod_watch(n, "ADDED", &watch_len);
    unsigned nb = (n + bsz - 1) / bsz;
    size_t *at = malloc(((size_t)n + 1) * sizeof *at); /* line i of the stream starts at at[i] */
    struct block *blk = calloc((size_t)nb * (size_t)reps, sizeof *blk);
    struct sink sink = {calloc(2 * (size_t)n, sizeof(kc_obj *)), 0, 2 * (size_t)n};
    static const char head[] = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{"
                               "\"resourceVersion\":\"2000000\"},"
                               "\"items\":[";
    char *page = malloc((size_t)bsz * KC_GENPOD_MAX + sizeof head + 2 + KC_DECODE_PADDING);
    if (!watch || !at || !blk || !sink.objs || !page)
        return 1;
    at[0] = 0;
    for (unsigned i = 0; i < n; i++)
        at[i + 1] =
            (size_t)((const char *)memchr(watch + at[i], '\n', watch_len - at[i]) - watch) + 1;
    printf("bench_floor: %u Pods in %u blocks of %u, %d repetitions (+1 warm-up), one thread, "
           "thread CPU time\n",
           n, nb, bsz, reps);

    kc__sj_ctx *ctx = kc__sj_ctx_new();
    kc_watch_decoder *wd = NULL;
    (void)kc_watch_decoder_new(NULL, &wd, NULL);
    kc_decode_opts po = {.flags = KC_DECODE_INPUT_PADDED, .max_object_size = 0};
    kc_list_decoder *ld = NULL;
    (void)kc_list_decoder_new(&po, &ld, NULL);
    kc_list_meta meta;
    kc_error err = KC_ERROR_INIT;
    const size_t obj_off = strlen("{\"type\":\"ADDED\",\"object\":");
    for (int rep = -1; rep < reps; rep++) {
        for (unsigned b = 0; b < nb; b++) {
            unsigned first = b * bsz, last = first + bsz < n ? first + bsz : n;
            struct block *k = rep >= 0 ? &blk[(size_t)rep * nb + b] : &(struct block){0};
            /* The page: the block's Pods (each line's object) as one LIST body, built untimed. */
            size_t len = sizeof head - 1;
            memcpy(page, head, len);
            for (unsigned i = first; i < last; i++) {
                size_t ol = at[i + 1] - at[i] - obj_off - 2; /* without "}\n" */
                if (i > first)
                    page[len++] = ',';
                memcpy(page + len, watch + at[i] + obj_off, ol);
                len += ol;
            }
            memcpy(page + len, "]}", 2);
            len += 2;
            memset(page + len, ' ', KC_DECODE_PADDING);
            k->watch_bytes = (double)(at[last] - at[first]);
            k->list_bytes = (double)len;

            double t = cpu_now();
            for (unsigned i = first; i < last; i++)
                if (kc__sj_reference_pass(ctx, watch + at[i], at[i + 1] - at[i] - 1, true) < 0)
                    die("stage 1 (watch line)", KC_EPARSE, NULL);
            double t1 = cpu_now();
            for (size_t off = at[first]; off < at[last]; off += 65536) {
                size_t c = at[last] - off < 65536 ? at[last] - off : 65536;
                int r = kc_watch_decoder_feed(wd, watch + off, c, keep_event, &sink, &err);
                if (r)
                    die("kc_watch_decoder_feed", r, &err);
            }
            double t2 = cpu_now();
            if (kc__sj_reference_pass(ctx, page, len, true) < 0)
                die("stage 1 (page)", KC_EPARSE, NULL);
            double t3 = cpu_now();
            int r = kc_list_decoder_decode(ld, page, len, &meta, keep, &sink, &err);
            double t4 = cpu_now();
            if (r)
                die("kc_list_decoder_decode", r, &err);
            kc_list_meta_clear(&meta);
            k->s1_watch = t1 - t, k->watch = t2 - t1, k->s1_list = t3 - t2, k->list = t4 - t3;
        }
        if (sink.n != 2 * (size_t)n)
            die("object count", KC_EPARSE, NULL);
        drop_all(&sink);
    }

    double wr[100], lr[100], wg[100], lg[100], s1w[100], s1l[100];
    for (int rep = 0; rep < reps; rep++) {
        struct block sum = {0};
        for (unsigned b = 0; b < nb; b++) {
            struct block *k = &blk[(size_t)rep * nb + b];
            sum.s1_watch += k->s1_watch, sum.watch += k->watch;
            sum.s1_list += k->s1_list, sum.list += k->list;
            sum.watch_bytes += k->watch_bytes, sum.list_bytes += k->list_bytes;
        }
        wr[rep] = sum.watch / sum.s1_watch, lr[rep] = sum.list / sum.s1_list;
        wg[rep] = sum.watch_bytes / sum.watch / 1e9, lg[rep] = sum.list_bytes / sum.list / 1e9;
        s1w[rep] = sum.watch_bytes / sum.s1_watch / 1e9;
        s1l[rep] = sum.list_bytes / sum.s1_list / 1e9;
    }
    printf("stage 1 alone: watch lines %.2f GB/s, LIST pages %.2f GB/s (medians)\n",
           summarize(s1w, reps).med, summarize(s1l, reps).med);
    printf("watch decode: %.2f GB/s, %.2fx its stage 1 in the same slices (median of %d)\n",
           summarize(wg, reps).med, summarize(wr, reps).med, reps);
    printf("LIST page decode: %.2f GB/s, %.2fx its stage 1 in the same slices (median of %d)\n",
           summarize(lg, reps).med, summarize(lr, reps).med, reps);
    printf("BENCH floor_stage1_watch_gbps %.3f GB/s\n", summarize(s1w, reps).med);
    printf("BENCH floor_watch_decode_gbps %.3f GB/s\n", summarize(wg, reps).med);
    printf("BENCH floor_watch_vs_stage1_ratio %.3f x\n", summarize(wr, reps).med);
    printf("BENCH floor_list_page_decode_gbps %.3f GB/s\n", summarize(lg, reps).med);
    printf("BENCH floor_list_page_vs_stage1_ratio %.3f x\n", summarize(lr, reps).med);

    /* The quarter of all blocks where stage 1 ran fastest. */
    size_t all = (size_t)nb * (size_t)reps, q = all / 4 ? all / 4 : 1;
    qsort(blk, all, sizeof *blk, cmp_block_s1);
    struct block top = {0};
    for (size_t i = 0; i < q; i++) {
        top.s1_watch += blk[i].s1_watch, top.watch += blk[i].watch;
        top.s1_list += blk[i].s1_list, top.list += blk[i].list;
        top.watch_bytes += blk[i].watch_bytes, top.list_bytes += blk[i].list_bytes;
    }
    double tw = top.watch_bytes / top.watch / 1e9, tl = top.list_bytes / top.list / 1e9;
    printf("fastest quarter of the slices (%zu of %zu blocks): stage 1 %.2f / %.2f GB/s; watch "
           "decode %.2f GB/s (%.0f events/s), LIST page decode %.2f GB/s\n",
           q, all, top.watch_bytes / top.s1_watch / 1e9, top.list_bytes / top.s1_list / 1e9, tw,
           (double)q * bsz / top.watch, tl);
    printf("BENCH floor_fast_quarter_watch_decode_gbps %.3f GB/s\n", tw);
    printf("BENCH floor_fast_quarter_watch_events_per_s %.0f events/s\n",
           (double)q * bsz / top.watch);
    printf("BENCH floor_fast_quarter_list_page_decode_gbps %.3f GB/s\n", tl);

    kc_list_decoder_free(ld);
    kc_watch_decoder_free(wd);
    kc__sj_ctx_free(ctx);
    free(sink.objs);
    free(page);
    free(blk);
    free(at);
    free(watch);
    kc_error_clear(&err);
    return 0;
}
