/*
 * bench_sync — a cold informer sync against the wire: the same pages downloaded and thrown away.
 *
 * One embedded API server runs in a forked child (bench/server_child.h) seeded with "pods=N"
 * (genpod-shaped ~6 KB Pods, 40 % managedFields). In one run, REPS rounds, each alternating:
 *   raw   — libcurl in this process downloads exactly the requests an informer makes, into a
 *           null sink: (paged) GET /api/v1/pods?limit=PAGE, following metadata.continue (read
 *           from the first bytes of each page); (stream) one streaming-list watch
 *           (sendInitialEvents=true, resourceVersionMatch=NotOlderThan, bookmarks) until the
 *           k8s.io/initial-events-end bookmark;
 *   cold  — a FRESH PROCESS (fork + exec of this binary with --child: nothing of this process's
 *           memory is inherited) starts a kc_informer in that list mode and waits for synced;
 *   warm  — in that same child, the informer is freed and a second one syncs (the allocator
 *           now recycles the first one's memory).
 * Both modes are measured every round, the order of (raw, child) flipping from round to round.
 * Ratios are per round (cold / the raw transfer of the same round), then the median over rounds.
 * In the child: peak RSS during the cold sync (VmHWM, reset through /proc/self/clear_refs) and
 * the steady RSS after it (store alive, malloc_trim and kc__slab_trim: the object arena's spare
 * populated chunks, which it would unmap within seconds anyway), both above the child's RSS before
 * the informer started; heap per object = sum kc_obj_heap_size / sum of stored (stripped, minified)
 * JSON bytes. The server's CPU (utime + stime of the server child, /proc/PID/stat) over each raw
 * transfer gives its serve rate per CPU-second: when its CPU ≈ the transfer's wall time, the server
 * is the bottleneck of the raw figure. The CPU floor — (client + server CPU over the cold sync) /
 * the machine's CPUs, against the raw transfer — is the best cold/raw ratio any overlap could reach
 * with the server on the same machine. The child also reports RSS after a relist (a third sync's
 * list replacing the store's objects: kc_store_replace via the informer's relist is internal, so a
 * plain kc_store is filled by kc_client_list_all and replaced once) and after deleting half of the
 * objects (every other key), both after malloc_trim and a wait of 2.5 s: the object arena returns
 * the chunks and pages freed by the replace or the deletes after a decay of 1 s (src/core/slab.c).
 * Usage: bench_sync [N=20000] [--reps R=5] [--page P=500] [--list-delay MS=0] [--node]
 * (--list-delay: the server answers every LIST — each page, raw or informer — after MS ms, the
 * time a kube-apiserver spends reading a page from etcd before its first byte; the streaming
 * list, a watch, is not delayed)
 * (--node: one @kubernetes/client-node makeInformer sync of the same server, as bench_informer;
 * KC_NODE_MODULES names its node_modules when this checkout has none). bench/plot_sync.sh runs
 * it over several N and draws docs/img/sync.png.
 * Output: human text plus `BENCH <metric> <value> <unit>` lines (medians), N in the metric name.
 */
#include "core/internal.h"
#include "core/populate.h"
#include "core/slab.h"
#include "kcache/informer.h"
#include "kcache/server.h"

#include <curl/curl.h>
#include <dirent.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "node_sync.h"
#include "popen_scan.h"
#include "proc_usage.h"
#include "server_child.h"

static const kc_gvr PODS = {"", "v1", "pods"};

/* ---- raw transfer --------------------------------------------------------------------------- */

typedef struct sink {
    size_t bytes;
    char head[8192]; /* the first bytes of a page: metadata.continue is there */
    size_t head_len;
    char tail[64]; /* stream: the last bytes of the previous chunk (a marker may straddle) */
    size_t tail_len;
    bool stream, done;
} sink;

static const char END_MARK[] = "\"k8s.io/initial-events-end\":\"true\"";

static size_t sink_write(char *p, size_t sz, size_t nm, void *ud)
{
    sink *s = ud;
    size_t n = sz * nm;
    s->bytes += n;
    if (!s->stream) {
        size_t take = n < sizeof(s->head) - 1 - s->head_len ? n : sizeof(s->head) - 1 - s->head_len;
        memcpy(s->head + s->head_len, p, take);
        s->head_len += take;
        s->head[s->head_len] = '\0';
        return n;
    }
    char probe[2 * sizeof(s->tail) + 1];
    size_t k = n < sizeof(s->tail) ? n : sizeof(s->tail);
    memcpy(probe, s->tail, s->tail_len);
    memcpy(probe + s->tail_len, p, k);
    probe[s->tail_len + k] = '\0';
    if (strstr(probe, END_MARK) || memmem(p, n, END_MARK, sizeof(END_MARK) - 1)) {
        s->done = true;
        return 0; /* stop the transfer: the initial list is complete */
    }
    s->tail_len = k;
    memcpy(s->tail, p + n - k, k);
    return n;
}

typedef struct rawres {
    double wall_s, server_cpu_s, client_cpu_s;
    size_t bytes;
} rawres;

static int raw_transfer(const child *c, bool stream, int page, rawres *r)
{
    CURL *h = curl_easy_init();
    sink s = {.stream = stream};
    char url[4096], cont[2048] = "";
    double sc0 = proc_cpu(c->pid), cc0 = self_cpu();
    uint64_t t0 = kc__now_ns();
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    int rc = 0;
    for (;;) {
        if (stream)
            snprintf(url, sizeof(url),
                     "%s/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch="
                     "NotOlderThan&allowWatchBookmarks=true",
                     c->url);
        else
            snprintf(url, sizeof(url), "%s/api/v1/pods?limit=%d%s%s", c->url, page,
                     cont[0] ? "&continue=" : "", cont);
        s.head_len = 0;
        curl_easy_setopt(h, CURLOPT_URL, url);
        CURLcode cr = curl_easy_perform(h);
        if (stream) {
            rc = s.done ? 0 : -1;
            break;
        }
        if (cr != CURLE_OK) {
            rc = -1;
            break;
        }
        char *at = strstr(s.head, "\"continue\":\"");
        if (!at)
            break;
        at += strlen("\"continue\":\"");
        char *end = strchr(at, '"');
        if (!end || end == at || (size_t)(end - at) >= sizeof(cont))
            break;
        memcpy(cont, at, (size_t)(end - at));
        cont[end - at] = '\0';
    }
    r->wall_s = (kc__now_ns() - t0) / 1e9;
    r->server_cpu_s = proc_cpu(c->pid) - sc0;
    r->client_cpu_s = self_cpu() - cc0;
    r->bytes = s.bytes;
    curl_easy_cleanup(h);
    return rc;
}

/* ---- the fresh process ---------------------------------------------------------------------- */

static int sync_informer(kc_client *cli, bool stream, int page, int n, kc_informer **ret)
{
    kc_informer_opts o = {.list_mode = stream ? KC_INFORMER_LIST_STREAMING : KC_INFORMER_LIST_PAGED,
                          .page_size = page,
                          .initial_events_timeout_ms = 60000};
    kc_informer *inf = NULL;
    if (kc_informer_new(cli, &PODS, &o, &inf, NULL) || kc_informer_start(inf, NULL))
        return -1;
    int rc = kc_informer_wait_synced(inf, 600000, NULL);
    if (rc || kc_store_len(kc_informer_store(inf)) != (size_t)n) {
        kc_informer_free(inf);
        return -1;
    }
    *ret = inf;
    return 0;
}

static int batch_add(void *ud, kc_obj *o)
{
    int rc = kc_store_batch_add(ud, o, NULL);
    kc_obj_unref(o);
    return rc;
}

/* RSS (KiB, above base) after a relist (a plain store filled by one paged list, then replaced by
 * a second) and after deleting every other object, each after malloc_trim and the arena's decay. */
static void relist_rss(kc_client *cli, int page, long base, long *after_relist, long *after_half)
{
    kc_store *st = NULL;
    kc_store_new(NULL, &st, NULL);
    for (int round = 0; round < 2; round++) {
        kc_store_batch *b = NULL;
        kc_store_batch_new(st, &b, NULL);
        kc_list_opts lo = {.limit = page};
        kc_list_meta meta = {0};
        kc_client_list_all(cli, &PODS, NULL, &lo, &meta, batch_add, b, NULL);
        kc_store_replace(st, b, meta.resource_version, NULL, NULL, NULL);
        kc_list_meta_clear(&meta);
    }
    malloc_trim(0);
    kc__sleep_ns(2500 * KC__NS_PER_MS); /* the arena's decay (not a synchronisation: a figure) */
    *after_relist = status_kb("VmRSS") - base;
    kc_obj **objs = NULL;
    size_t n = 0;
    kc_store_list(st, &objs, &n, NULL);
    for (size_t i = 0; i < n; i += 2) {
        kc_store_change ch;
        if (kc_store_apply(st, KC_WATCH_DELETED, objs[i], &ch, NULL) == 0)
            kc_store_change_clear(&ch);
    }
    for (size_t i = 0; i < n; i++)
        kc_obj_unref(objs[i]);
    free(objs);
    malloc_trim(0);
    kc__sleep_ns(2500 * KC__NS_PER_MS);
    *after_half = status_kb("VmRSS") - base;
    kc_store_free(st);
}

/* --child MODE URL N PAGE RSS: cold sync, then warm; one RESULT line on stdout. */
static int child_main(bool stream, const char *url, int n, int page, bool rss, pid_t server)
{
    kc_config *cfg = NULL;
    kc_client *cli = NULL;
    kc_client_opts co = {.qps = -1};
    if (kc_config_from_url(url, NULL, NULL, &cfg, NULL) || kc_client_new(cfg, &co, &cli, NULL))
        return 2;
    malloc_trim(0);
    long base = status_kb("VmRSS");
    reset_hwm();
    kc_informer *inf = NULL;
    kc__mem_huge_stats h0;
    kc__mem_huge_stats_get(&h0);
    double c0 = self_cpu(), s0 = proc_cpu(server);
    uint64_t t0 = kc__now_ns();
    if (sync_informer(cli, stream, page, n, &inf))
        return 3;
    double cold = (kc__now_ns() - t0) / 1e9, cold_cpu = self_cpu() - c0;
    double srv = proc_cpu(server) - s0, delay = run_delay(); /* the informer's threads live on */
    long peak = status_kb("VmHWM") - base;
    kc__mem_huge_stats hs;
    kc__mem_huge_stats_get(&hs);
    double pop_s = (double)(hs.total_ns - h0.total_ns) / 1e9;
    double pop_mib = (double)(hs.total_bytes - h0.total_bytes) / (1 << 20);
    fprintf(stderr,
            "  cold populate: %zu on huge pages (%.0f us per 2 MiB), %zu on small (%.0f us)\n",
            hs.huge_maps, hs.huge_ns / 1e3, hs.small_maps, hs.small_ns / 1e3);
    malloc_trim(0);
    kc__slab_trim();
    long steady = status_kb("VmRSS") - base;
    kc_obj **objs = NULL;
    size_t m = 0, heap = 0, text = 0;
    kc_store_list(kc_informer_store(inf), &objs, &m, NULL);
    for (size_t i = 0; i < m; i++) {
        size_t len = 0;
        kc_obj_json(objs[i], &len);
        heap += kc_obj_heap_size(objs[i]);
        text += len;
        kc_obj_unref(objs[i]);
    }
    free(objs);
    kc_informer_free(inf);
    t0 = kc__now_ns();
    if (sync_informer(cli, stream, page, n, &inf))
        return 4;
    double warm = (kc__now_ns() - t0) / 1e9;
    kc_informer_free(inf);
    long relist = -1, half = -1;
    if (rss)
        relist_rss(cli, page, base, &relist, &half);
    printf("RESULT %.6f %.6f %ld %ld %.6f %.4f %ld %ld %.6f %.6f %.6f %.1f\n", cold, warm, peak,
           steady, cold_cpu, text ? (double)heap / text : 0, relist, half, srv, delay, pop_s,
           pop_mib);
    kc_client_free(cli);
    kc_config_unref(cfg);
    return 0;
}

typedef struct coldres {
    double cold_s, warm_s, cold_cpu_s, heap_ratio, server_cpu_s, delay_s, pop_s, pop_mib;
    long peak_kb, steady_kb, relist_kb, half_kb;
} coldres;

static int run_child(const char *self, const child *c, bool stream, int n, int page, bool rss,
                     coldres *r)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "%s --child %s %s %d %d %d %d", self, stream ? "stream" : "paged",
             c->url, n, page, rss ? 1 : 0, (int)c->pid);
    return popen_scan(cmd, 12, "RESULT %lf %lf %ld %ld %lf %lf %ld %ld %lf %lf %lf %lf", &r->cold_s,
                      &r->warm_s, &r->peak_kb, &r->steady_kb, &r->cold_cpu_s, &r->heap_ratio,
                      &r->relist_kb, &r->half_kb, &r->server_cpu_s, &r->delay_s, &r->pop_s,
                      &r->pop_mib);
}

#define MAXREPS 32

typedef struct series {
    double raw[MAXREPS], cold[MAXREPS], warm[MAXREPS], rc[MAXREPS], rw[MAXREPS];
    double srv_rate[MAXREPS], srv_busy[MAXREPS], peak[MAXREPS], steady[MAXREPS], heap[MAXREPS];
    double cpu[MAXREPS], raw_cpu[MAXREPS], raw_srv[MAXREPS], cold_srv[MAXREPS], rcpu[MAXREPS],
        delay[MAXREPS], pop_s[MAXREPS], pop_mib[MAXREPS];
    long relist_kb, half_kb;
    size_t bytes;
} series;

static void report(const char *mode, int n, int page, const series *s, int reps)
{
    double raw = med(s->raw, reps), cold = med(s->cold, reps), warm = med(s->warm, reps);
    printf("%s, N=%d, %d rounds (median, min..max of the per-round ratio):\n", mode, n, reps);
    printf("  raw download %.3f s (%.0f MB, %.2f GB/s); server CPU %.0f %% of the transfer's wall "
           "time (%s)\n",
           raw, s->bytes / 1e6, s->bytes / raw / 1e9, 100 * med(s->srv_busy, reps),
           med(s->srv_busy, reps) > 0.9 ? "the server is the bottleneck" : "not saturated");
    double lo = 1e9, hi = 0;
    for (int i = 0; i < reps; i++)
        lo = s->rc[i] < lo ? s->rc[i] : lo, hi = s->rc[i] > hi ? s->rc[i] : hi;
    printf("  cold sync %.3f s (client CPU %.3f s) = %.2fx raw (%.2f..%.2f); warm %.3f s = %.2fx\n",
           cold, med(s->cpu, reps), med(s->rc, reps), lo, hi, warm, med(s->rw, reps));
    printf("  CPU: raw client %.3f s + server %.3f s; cold client %.3f s + server %.3f s = "
           "%.2fx the raw transfer's CPU\n",
           med(s->raw_cpu, reps), med(s->raw_srv, reps), med(s->cpu, reps), med(s->cold_srv, reps),
           med(s->rcpu, reps));
    printf("  cold sync: the client's threads waited %.3f s for a CPU (run queue; machine load)\n",
           med(s->delay, reps));
    /* Client and server share this machine's CPUs: however well receive, decode and the arena's
     * population overlap, the cold sync cannot take less wall time than their CPU spread over all
     * CPUs. That floor, against the raw transfer, is the best cold/raw ratio this machine allows.
     */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    double floor_s = (med(s->cpu, reps) + med(s->cold_srv, reps)) / (double)(ncpu > 0 ? ncpu : 1);
    printf("  CPU floor: (client + server CPU of the cold sync) / %ld CPUs = %.3f s = %.2fx raw\n",
           ncpu, floor_s, floor_s / raw);
    printf("BENCH sync_%s_%d_cpu_floor_vs_raw %.2f x\n", mode, n, floor_s / raw);
    /* Fresh memory: the object arena times every 2 MiB it populates (core/populate.h) — page
     * faults, the kernel zeroing, and on a VM the host backing the pages. The raw transfer into a
     * null sink touches no fresh memory; the same floor without that cost shows how much of the
     * gap is the machine's price of new memory rather than decoding. */
    double pop = med(s->pop_s, reps), mib = med(s->pop_mib, reps);
    double floor_nomem =
        (med(s->cpu, reps) - pop + med(s->cold_srv, reps)) / (double)(ncpu > 0 ? ncpu : 1);
    printf("  fresh memory: populating %.0f MiB took %.3f s (%.2f us per 4 KiB, %.1f ms per 2 "
           "MiB); the CPU floor without it = %.2fx raw\n",
           mib, pop, mib > 0 ? pop * 1e6 / (mib * 256) : 0, mib > 0 ? pop * 1e3 / (mib / 2) : 0,
           floor_nomem / raw);
    printf("BENCH sync_%s_%d_fresh_memory_s %.4f s\n", mode, n, pop);
    printf("BENCH sync_%s_%d_cpu_floor_without_fresh_memory_vs_raw %.2f x\n", mode, n,
           floor_nomem / raw);
    printf("  peak RSS %.0f MiB, steady %.0f MiB (peak/steady %.2f); heap/JSON %.3f\n",
           med(s->peak, reps) / 1024, med(s->steady, reps) / 1024,
           med(s->peak, reps) / med(s->steady, reps), med(s->heap, reps));
    if (s->relist_kb >= 0)
        printf("  RSS after a relist %.0f MiB, after deleting half %.0f MiB\n",
               s->relist_kb / 1024.0, s->half_kb / 1024.0);
    printf("BENCH sync_%s_%d_raw_s %.4f s\n", mode, n, raw);
    printf("BENCH sync_%s_%d_cold_s %.4f s\n", mode, n, cold);
    printf("BENCH sync_%s_%d_warm_s %.4f s\n", mode, n, warm);
    printf("BENCH sync_%s_%d_cold_vs_raw %.2f x\n", mode, n, med(s->rc, reps));
    printf("BENCH sync_%s_%d_cold_vs_raw_cpu %.2f x\n", mode, n, med(s->rcpu, reps));
    printf("BENCH sync_%s_%d_cold_client_cpu_s %.4f s\n", mode, n, med(s->cpu, reps));
    printf("BENCH sync_%s_%d_raw_client_cpu_s %.4f s\n", mode, n, med(s->raw_cpu, reps));
    printf("BENCH sync_%s_%d_warm_vs_raw %.2f x\n", mode, n, med(s->rw, reps));
    printf("BENCH sync_%s_%d_peak_vs_steady_rss %.2f x\n", mode, n,
           med(s->peak, reps) / med(s->steady, reps));
    printf("BENCH sync_%s_%d_heap_vs_json %.3f x\n", mode, n, med(s->heap, reps));
    printf("BENCH sync_%s_%d_server_gbps_per_cpu %.2f GB/s\n", mode, n, med(s->srv_rate, reps));
    printf("BENCH sync_%s_%d_server_busy %.2f x\n", mode, n, med(s->srv_busy, reps));
    /* The server's own rate: pages (paged) or objects (stream) per server CPU-second, and its CPU
     * over the cold sync against the client's (> 1: the server is slower than the client). */
    double units = strcmp(mode, "paged") == 0 ? (double)((n + page - 1) / page) : (double)n;
    printf("  server: %.0f %s per CPU-s while serving curl; over the cold sync server CPU %.3f s "
           "vs client %.3f s (%.2fx)\n",
           units / med(s->raw_srv, reps), strcmp(mode, "paged") == 0 ? "pages" : "objects",
           med(s->cold_srv, reps), med(s->cpu, reps), med(s->cold_srv, reps) / med(s->cpu, reps));
    printf("BENCH sync_%s_%d_server_units_per_cpu_s %.0f /s\n", mode, n,
           units / med(s->raw_srv, reps));
    printf("BENCH sync_%s_%d_server_vs_client_cpu %.2f x\n", mode, n,
           med(s->cold_srv, reps) / med(s->cpu, reps));
}

static int round_mode(const char *self, const child *c, bool stream, int n, int page, int i,
                      series *s)
{
    rawres r;
    coldres k = {0};
    bool raw_first = (i % 2) == 0;
    if (raw_first && raw_transfer(c, stream, page, &r))
        return -1;
    if (run_child(self, c, stream, n, page, i == 0, &k))
        return -1;
    if (!raw_first && raw_transfer(c, stream, page, &r))
        return -1;
    s->raw[i] = r.wall_s, s->cold[i] = k.cold_s, s->warm[i] = k.warm_s;
    s->rc[i] = k.cold_s / r.wall_s, s->rw[i] = k.warm_s / r.wall_s;
    s->srv_rate[i] = r.bytes / r.server_cpu_s / 1e9, s->srv_busy[i] = r.server_cpu_s / r.wall_s;
    s->peak[i] = (double)k.peak_kb, s->steady[i] = (double)k.steady_kb, s->heap[i] = k.heap_ratio;
    s->cpu[i] = k.cold_cpu_s, s->raw_cpu[i] = r.client_cpu_s, s->raw_srv[i] = r.server_cpu_s;
    s->cold_srv[i] = k.server_cpu_s, s->delay[i] = k.delay_s;
    s->pop_s[i] = k.pop_s, s->pop_mib[i] = k.pop_mib;
    s->rcpu[i] = (k.cold_cpu_s + k.server_cpu_s) / (r.client_cpu_s + r.server_cpu_s);
    s->bytes = r.bytes;
    if (i == 0)
        s->relist_kb = k.relist_kb, s->half_kb = k.half_kb;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 8 && strcmp(argv[1], "--child") == 0)
        return child_main(strcmp(argv[2], "stream") == 0, argv[3], atoi(argv[4]), atoi(argv[5]),
                          atoi(argv[6]) != 0, (pid_t)atoi(argv[7]));
    int n = 20000, reps = 5, page = 500;
    bool node = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--page") == 0 && i + 1 < argc)
            page = atoi(argv[++i]);
        else if (strcmp(argv[i], "--node") == 0)
            node = true;
        else if (strcmp(argv[i], "--list-delay") == 0 && i + 1 < argc)
            child_list_delay_ms = (unsigned)atoi(argv[++i]);
        else
            n = atoi(argv[i]);
    }
    reps = reps < 1 ? 1 : reps > MAXREPS ? MAXREPS : reps;
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    child c;
    if (child_start(&c, n, 0))
        return 1;
    printf("bench_sync: %d Pods, page %d, %d alternated rounds; server pid %d; LIST delay %u ms\n",
           n, page, reps, (int)c.pid, child_list_delay_ms);
    rawres warmup;
    raw_transfer(&c, false, page, &warmup);
    raw_transfer(&c, true, page, &warmup);
    static series sp, ss;
    int rc = 0;
    for (int i = 0; i < reps && rc == 0; i++) {
        rc = round_mode(argv[0], &c, false, n, page, i, &sp);
        if (rc == 0)
            rc = round_mode(argv[0], &c, true, n, page, i, &ss);
    }
    if (rc) {
        fprintf(stderr, "a round failed\n");
        child_stop(&c);
        return 1;
    }
    report("paged", n, page, &sp, reps);
    report("stream", n, page, &ss, reps);
    double nw;
    long npk, nsd;
    if (node && node_sync(&c, n, &nw, &npk, &nsd) == 0) {
        printf("client-node 1.4.0 makeInformer: %.2f s = %.1fx kcache cold (paged)\n", nw,
               nw / med(sp.cold, reps));
        printf("BENCH sync_node_%d_s %.3f s\n", n, nw);
    }
    child_stop(&c);
    curl_global_cleanup();
    return 0;
}
