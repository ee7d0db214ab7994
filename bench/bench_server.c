/*
 * bench_server.c — the embedded API server under load: LIST throughput, watch fan-out, memory.
 *
 * Usage: bench_server [PODS] [WATCHERS] [WRITES_PER_S] [SECONDS] [--no-hub]
 *        (defaults 100000 50 5000 3; --no-hub skips part 4)
 *
 * 1. Starts kc_server in-process on 127.0.0.1:0 seeded with "pods=PODS" (≈6 KB genpod-shaped
 *    Pods over 100 namespaces) and reports the seeding rate and the server's memory: RSS growth
 *    over the process before the server existed, and its ratio to the stored JSON bytes (the size
 *    of one full LIST body, which carries every stored object).
 * 2. LIST /api/v1/pods over loopback with libcurl into a discarding write callback: one warm-up,
 *    then the median of 5 (GB/s and ms).
 * 3. WATCHERS watch streams on configmaps of one namespace from the current RV, all driven by
 *    one thread with a libcurl multi handle (libcurl does the HTTP), while one writer thread
 *    (another multi handle, 8 keep-alive connections) POSTs ConfigMaps there, write i due at
 *    start + i / WRITES_PER_S, for SECONDS. Each watcher checks every event line: type ADDED,
 *    resourceVersion strictly increasing, and the sequence of RVs equal to the sorted RVs of the
 *    writers' 201 replies (count and an order-sensitive fold). A sampler (every 5 ms) records
 *    how far in time the slowest watcher is behind the acknowledged writes. "Not falling
 *    behind" = achieved writes/s >= 99 % of the target, every write succeeded, every watcher got
 *    every event in order, none ended early, lag and catch-up after the last write <= 100 ms.
 *    CPU: server = process CPU over the window minus the two client threads' CPU.
 *    The watchers and writers live in server_load.h; this file samples the lag and judges.
 * 4. The watch hub alone (no HTTP): WATCHERS threads draining kc__watcher_next while one thread
 *    publishes 200 000 events as fast as it can — deliveries/s and overflowed watchers, to show
 *    how much of the end-to-end fan-out cost is the hub.
 * Prints human text and `BENCH <metric> <value> <unit>` lines.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/internal.h"
#include "kcache/server.h"
#include "server/storage/hub.h"
#include "server_load.h"

#define LIST_RUNS 5
#define MAX_WATCH 256

static const char *base_url;

/* ---- helpers --------------------------------------------------------------------------------- */

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static size_t count_cb(char *p, size_t sz, size_t n, void *ud)
{
    *(size_t *)ud += sz * n;
    return sz * n;
}

static size_t sink_cb(char *p, size_t sz, size_t n, void *ud)
{
    return sz * n;
}

/* GET url into a counting sink; returns bytes or 0 on failure. */
static size_t get_count(CURL *c, const char *url)
{
    size_t bytes = 0;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, count_cb);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &bytes);
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    long code = 0;
    if (curl_easy_perform(c) != CURLE_OK ||
        (curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code), code != 200))
        return 0;
    return bytes;
}

static int post_json(CURL *c, const char *url, const char *body)
{
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink_cb);
    long code = 0;
    if (curl_easy_perform(c) != CURLE_OK)
        return -1;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    return (int)code;
}

/* ---- watch fan-out: the load is in server_load.h; here the sampling and the verdict ---------- */

/* Pass criteria of "50 watchers each receive every event without the server falling behind". */
#define PASS_RATE_FRACTION 0.99 /* achieved writes/s >= 99 % of the target */
#define PASS_LAG_MS        100  /* slowest watcher never more than 100 ms behind the writes */
#define SAMPLE_NS          (5 * KC__NS_PER_MS)
#define MAX_SAMPLES        (1 << 16)

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Returns true when the run passed every criterion. */
static bool bench_fanout(kc_server *srv, int nwatch, double rate, double secs)
{
    static watcher ws[MAX_WATCH];
    static uint64_t s_ns[MAX_SAMPLES];
    static unsigned long s_acked[MAX_SAMPLES];
    fanout f = {.ws = ws, .nwatch = nwatch, .rate = rate, .base_url = base_url};
    g_fan = &f;
    f.total = (unsigned long)(rate * secs);
    f.rvs = calloc(f.total ? f.total : 1, sizeof *f.rvs);
    f.lat_us = calloc(f.total ? f.total : 1, sizeof *f.lat_us);
    atomic_store(&f.target, ULONG_MAX);
    uint64_t rv = kc_server_current_rv(srv);
    f.wm = curl_multi_init();
    for (int i = 0; i < nwatch; i++) {
        watcher *w = &ws[i];
        snprintf(w->url, sizeof w->url,
                 "%s/api/v1/namespaces/" LOAD_NS "/configmaps?watch=1&resourceVersion=%llu"
                 "&timeoutSeconds=%d",
                 base_url, (unsigned long long)rv, (int)(secs * 4 + 30));
        w->easy = curl_easy_init();
        curl_easy_setopt(w->easy, CURLOPT_URL, w->url);
        curl_easy_setopt(w->easy, CURLOPT_WRITEFUNCTION, watch_cb);
        curl_easy_setopt(w->easy, CURLOPT_WRITEDATA, w);
        curl_easy_setopt(w->easy, CURLOPT_HEADERFUNCTION, watch_header);
        curl_easy_setopt(w->easy, CURLOPT_HEADERDATA, w);
        curl_easy_setopt(w->easy, CURLOPT_BUFFERSIZE, 256L * 1024);
        curl_easy_setopt(w->easy, CURLOPT_NOSIGNAL, 1L); /* no sigaction pair per transfer */
        curl_multi_add_handle(f.wm, w->easy);
    }
    pthread_t wth, rth;
    pthread_create(&wth, NULL, watch_loop, &f);
    while (atomic_load(&f.connected) < nwatch) /* set-up only, not measured */
        kc__sleep_ns(KC__NS_PER_MS);
    double pcpu0 = cpu_clock_s(CLOCK_PROCESS_CPUTIME_ID);
    f.start_ns = kc__now_ns();
    pthread_create(&rth, NULL, write_loop, &f);
    /* Sample: how far (in time) the slowest watcher is behind the acknowledged writes. */
    size_t ns = 0;
    double lag_max_ms = 0;
    uint64_t deadline = 0;
    for (;;) {
        uint64_t now = kc__now_ns();
        unsigned long acked = atomic_load(&f.acked), minev = ULONG_MAX;
        for (int i = 0; i < nwatch; i++) {
            unsigned long e = atomic_load(&ws[i].events);
            minev = e < minev ? e : minev;
        }
        if (ns < MAX_SAMPLES && (ns == 0 || acked != s_acked[ns - 1])) {
            s_ns[ns] = now;
            s_acked[ns++] = acked;
        }
        /* earliest sample whose acknowledged count the slowest watcher has not reached */
        size_t lo = 0, hi = ns;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (s_acked[mid] <= minev)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < ns) {
            double lag = (double)(now - s_ns[lo]) / 1e6;
            lag_max_ms = lag > lag_max_ms ? lag : lag_max_ms;
        }
        if (acked >= f.total && !deadline) {
            pthread_join(rth, NULL);
            atomic_store(&f.target, atomic_load(&f.ok));
            for (int i = 0; i < nwatch; i++) /* the ok count is known only now */
                if (!ws[i].done_ns && atomic_load(&ws[i].events) >= atomic_load(&f.ok)) {
                    ws[i].done_ns = kc__now_ns();
                    atomic_fetch_add(&f.finished, 1);
                }
            deadline = kc__now_ns() + 30 * KC__NS_PER_SEC;
        }
        if (deadline && (atomic_load(&f.finished) >= nwatch || now > deadline))
            break;
        kc__sleep_ns(SAMPLE_NS); /* sampling period, not synchronisation */
    }
    uint64_t all_ns = kc__now_ns();
    double pcpu = cpu_clock_s(CLOCK_PROCESS_CPUTIME_ID) - pcpu0;
    kc_server_stop(srv); /* ends the watch streams */
    pthread_join(wth, NULL);
    unsigned long ok = atomic_load(&f.ok), delivered = 0, bad = 0;
    qsort(f.rvs, ok, sizeof *f.rvs, cmp_u64);
    uint64_t fold = 0;
    for (unsigned long i = 0; i < ok; i++)
        fold = fold * 1000003u + f.rvs[i];
    int early = 0, wrong = 0;
    double catchup_ms = 0;
    for (int i = 0; i < nwatch; i++) {
        watcher *w = &ws[i];
        delivered += atomic_load(&w->events);
        bad += w->bad;
        early += w->ended && !w->done_ns;
        wrong += atomic_load(&w->events) != ok || w->fold != fold || w->bad;
        if (w->done_ns) {
            double l = w->done_ns > f.end_ns ? (double)(w->done_ns - f.end_ns) / 1e6 : 0;
            catchup_ms = l > catchup_ms ? l : catchup_ms;
        } else {
            catchup_ms = 1e9;
        }
        curl_multi_remove_handle(f.wm, w->easy);
        curl_easy_cleanup(w->easy);
    }
    curl_multi_cleanup(f.wm);
    free(f.rvs);
    qsort(f.lat_us, f.total, sizeof *f.lat_us, cmp_double);
    printf("writes: round trip p50 %.0f us, p99 %.0f us, max %.0f us; %lu connections opened\n",
           f.lat_us[f.total / 2], f.lat_us[f.total * 99 / 100], f.lat_us[f.total - 1], f.new_conns);
    free(f.lat_us);
    double wsecs = (double)(f.end_ns - f.start_ns) / 1e9;
    double achieved = (double)ok / wsecs;
    double client_cpu = f.watch_cpu_s + f.write_cpu_s;
    double server_cpu = pcpu - client_cpu; /* minus the sampler's negligible share */
    double window = (double)(all_ns - f.start_ns) / 1e9;
    double expected = (double)ok * nwatch;
    bool pass = achieved >= PASS_RATE_FRACTION * rate && ok == f.total && wrong == 0 &&
                early == 0 && lag_max_ms <= PASS_LAG_MS && catchup_ms <= PASS_LAG_MS;
    printf("watch: %d watchers, %lu/%lu writes ok at %.0f writes/s (target %.0f); delivered "
           "%lu/%.0f events (%.4f), %lu out of order, %d watcher(s) with a wrong sequence, %d "
           "ended early; slowest watcher at most %.1f ms behind the writes, caught up %.1f ms "
           "after the last write\n",
           nwatch, ok, f.total, achieved, rate, delivered, expected,
           expected > 0 ? delivered / expected : 0, bad, wrong, early, lag_max_ms, catchup_ms);
    printf("watch CPU over %.2f s: server %.2f s (%.0f%% of a core, %.1f us per write), client "
           "%.2f s (watchers %.2f, writers %.2f)\n",
           window, server_cpu, server_cpu / window * 100, server_cpu / (double)ok * 1e6, client_cpu,
           f.watch_cpu_s, f.write_cpu_s);
    printf("not falling behind (writes/s >= %.0f%% of target, every watcher every event in order, "
           "none closed, lag and catch-up <= %d ms): %s\n",
           PASS_RATE_FRACTION * 100, PASS_LAG_MS, pass ? "PASS" : "FAIL");
    printf("BENCH server_watch_writes_per_s %.0f writes/s\n", achieved);
    printf("BENCH server_watch_delivered_ratio %.4f ratio\n",
           expected > 0 ? delivered / expected : 0);
    printf("BENCH server_watch_wrong_sequence %d watchers\n", wrong);
    printf("BENCH server_watch_ended_early %d watchers\n", early);
    printf("BENCH server_watch_lag_max_ms %.1f ms\n", lag_max_ms);
    printf("BENCH server_watch_catchup_ms %.1f ms\n", catchup_ms);
    printf("BENCH server_watch_server_cpu_s %.2f s\n", server_cpu);
    printf("BENCH server_watch_client_cpu_s %.2f s\n", client_cpu);
    printf("BENCH server_watch_pass %d bool\n", pass);
    return pass;
}

/* ---- hub only -------------------------------------------------------------------------------- */

#define HUB_EVENTS 200000

typedef struct hub_reader {
    pthread_t th;
    kc__watcher *w;
    unsigned long got;
    int end;
} hub_reader;

static void *hub_reader_thread(void *arg)
{
    hub_reader *r = arg;
    kc__hub_event ev;
    while (r->got < HUB_EVENTS && (r->end = kc__watcher_next(r->w, &ev, 10000)) == 0) {
        r->got++;
        kc__hub_event_release(&ev);
    }
    return NULL;
}

static void bench_hub(int nwatch)
{
    static int key;
    const char *json = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\","
                       "\"namespace\":\"default\",\"resourceVersion\":\"1\"}}";
    kc_obj *obj = NULL;
    if (kc_obj_parse(json, strlen(json), NULL, &obj, NULL) || nwatch == 0)
        return;
    kc__hub *hub = kc__hub_new(NULL, 100000);
    static hub_reader rd[MAX_WATCH];
    for (int i = 0; i < nwatch; i++) {
        rd[i] = (hub_reader){.w = kc__hub_subscribe(hub, &key, NULL, NULL)};
        pthread_create(&rd[i].th, NULL, hub_reader_thread, &rd[i]);
    }
    uint64_t t0 = kc__now_ns();
    for (uint64_t rv = 1; rv <= HUB_EVENTS; rv++) {
        kc__hub_event ev = {.type = KC_WATCH_MODIFIED, .obj = obj, .rv = rv};
        kc__hub_publish(hub, &key, &ev);
    }
    double pub_s = (double)(kc__now_ns() - t0) / 1e9;
    unsigned long got = 0;
    int overflowed = 0;
    for (int i = 0; i < nwatch; i++) {
        pthread_join(rd[i].th, NULL);
        got += rd[i].got;
        overflowed += rd[i].end == KC_ETOOLARGE;
        kc__watcher_free(rd[i].w);
    }
    double all_s = (double)(kc__now_ns() - t0) / 1e9;
    kc__hub_free(hub);
    kc_obj_unref(obj);
    printf("hub only: %d watchers x %d events: publish %.0f events/s, delivered %lu (%.1f M "
           "deliveries/s), %d watcher(s) overflowed\n",
           nwatch, HUB_EVENTS, HUB_EVENTS / pub_s, got, (double)got / all_s / 1e6, overflowed);
    printf("BENCH server_hub_publish_per_s %.0f events/s\n", HUB_EVENTS / pub_s);
    printf("BENCH server_hub_deliveries_per_s %.0f deliveries/s\n", (double)got / all_s);
    printf("BENCH server_hub_overflowed %d watchers\n", overflowed);
}

/* ---- main ------------------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    unsigned long pods = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
    int nwatch = argc > 2 ? atoi(argv[2]) : 50;
    double rate = argc > 3 ? atof(argv[3]) : 5000;
    double secs = argc > 4 ? atof(argv[4]) : 3;
    if (nwatch < 0 || nwatch > MAX_WATCH || rate <= 0 || secs <= 0) {
        fprintf(stderr, "usage: bench_server [PODS] [WATCHERS<=%d] [WRITES_PER_S] [SECONDS]\n",
                MAX_WATCH);
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    signal(SIGPIPE, SIG_IGN); /* lets the bench's curl handles use CURLOPT_NOSIGNAL */
    char spec[64];
    snprintf(spec, sizeof spec, "pods=%lu", pods);
    kc_server_opts o = {.listen = "127.0.0.1:0", .seed_spec = spec, .quiet = true};
    o.watch_queue = 100000;
    long rss0 = rss_kb();
    uint64_t t0 = kc__now_ns();
    kc_server *srv = NULL;
    kc_error err = KC_ERROR_INIT;
    if (kc_server_new(&o, &srv, &err) || kc_server_start(srv, &err)) {
        fprintf(stderr, "bench_server: %s\n", err.message ? err.message : "server failed");
        return 1;
    }
    double seed_s = (double)(kc__now_ns() - t0) / 1e9;
    long rss1 = rss_kb();
    base_url = kc_server_url(srv);
    printf("server %s seeded with %lu pods in %.2f s (%.0f objects/s)\n", base_url, pods, seed_s,
           (double)pods / seed_s);

    /* LIST */
    char url[512];
    snprintf(url, sizeof url, "%s/api/v1/pods", base_url);
    CURL *c = curl_easy_init();
    size_t body = get_count(c, url); /* warm-up */
    double gbps[LIST_RUNS], ms[LIST_RUNS];
    for (int i = 0; i < LIST_RUNS && body; i++) {
        uint64_t s = kc__now_ns();
        size_t b = get_count(c, url);
        double dt = (double)(kc__now_ns() - s) / 1e9;
        gbps[i] = (double)b / dt / 1e9;
        ms[i] = dt * 1e3;
    }
    curl_easy_cleanup(c);
    if (!body) {
        fprintf(stderr, "bench_server: LIST failed\n");
        return 1;
    }
    qsort(gbps, LIST_RUNS, sizeof gbps[0], cmp_double);
    qsort(ms, LIST_RUNS, sizeof ms[0], cmp_double);
    double mem_mb = (double)(rss1 - rss0) / 1024.0;
    double ratio = (double)(rss1 - rss0) * 1024.0 / (double)body;
    printf("LIST all pods: %.1f MB body, median %.1f ms = %.2f GB/s (min %.2f, max %.2f)\n",
           (double)body / 1e6, ms[LIST_RUNS / 2], gbps[LIST_RUNS / 2], gbps[0],
           gbps[LIST_RUNS - 1]);
    printf("memory: RSS grew %.1f MB for %.1f MB of stored JSON (%.2fx)\n", mem_mb,
           (double)body / 1e6, ratio);

    /* WATCH fan-out */
    CURL *cc = curl_easy_init();
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(cc, CURLOPT_HTTPHEADER, h);
    snprintf(url, sizeof url, "%s/api/v1/namespaces", base_url);
    post_json(cc, url,
              "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"" LOAD_NS
              "\"}}");
    curl_slist_free_all(h);
    curl_easy_cleanup(cc);
    printf("BENCH server_seed_objects_per_s %.0f obj/s\n", (double)pods / seed_s);
    printf("BENCH server_list_pods_gbps %.3f GB/s\n", gbps[LIST_RUNS / 2]);
    printf("BENCH server_list_pods_ms %.1f ms\n", ms[LIST_RUNS / 2]);
    printf("BENCH server_list_body_mb %.1f MB\n", (double)body / 1e6);
    printf("BENCH server_rss_growth_mb %.1f MB\n", mem_mb);
    printf("BENCH server_mem_ratio %.2f x\n", ratio);
    bool pass = bench_fanout(srv, nwatch, rate, secs);
    kc_server_free(srv);
    kc_error_clear(&err);
    if (!(argc > 5 && !strcmp(argv[5], "--no-hub")))
        bench_hub(nwatch);
    curl_global_cleanup();
    return pass ? 0 : 1;
}
