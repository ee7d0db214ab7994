/*
 * bench_server.c — the embedded API server under load: LIST throughput, watch fan-out, memory.
 *
 * Usage: bench_server [PODS] [WATCHERS] [WRITES_PER_S] [SECONDS]   (defaults 100000 50 5000 3)
 *
 * 1. Starts kc_server in-process on 127.0.0.1:0 seeded with "pods=PODS" (≈6 KB genpod-shaped
 *    Pods over 100 namespaces) and reports the seeding rate and the server's memory: RSS growth
 *    over the process before the server existed, and its ratio to the stored JSON bytes (the size
 *    of one full LIST body, which carries every stored object).
 * 2. LIST /api/v1/pods over loopback with libcurl into a discarding write callback: one warm-up,
 *    then the median of 5 (GB/s and ms).
 * 3. WATCHERS threads each watch configmaps of one namespace from the current RV (libcurl,
 *    counting newline-terminated events) while writer threads create ConfigMaps there at
 *    WRITES_PER_S for SECONDS. Reports delivered/expected events, the writes/s achieved, how
 *    long after the last write the slowest watcher had everything, and how many watchers ended
 *    early (a watcher the server closed for falling behind).
 * 4. The watch hub alone (no HTTP): WATCHERS threads draining kc__watcher_next while one thread
 *    publishes 200 000 events as fast as it can — deliveries/s and overflowed watchers, to show
 *    how much of the end-to-end fan-out cost is the hub.
 * Prints human text and `BENCH <metric> <value> <unit>` lines.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "kcache/server.h"
#include "server/hub.h"

#define LIST_RUNS   5
#define MAX_WATCH   256
#define MAX_WRITERS 8
#define NS          "bench-watch"

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

/* ---- watchers -------------------------------------------------------------------------------- */

typedef struct watcher {
    pthread_t th;
    char url[512];
    atomic_ulong events;
    uint64_t done_ns; /* when the expected count was reached */
    unsigned long expected;
    bool ended_early;
    bool connected;
} watcher;

static pthread_mutex_t wmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wcv; /* CLOCK_MONOTONIC, initialised in main */
static int w_connected, w_finished;
static unsigned long w_target = ULONG_MAX;

static size_t watch_cb(char *p, size_t sz, size_t n, void *ud)
{
    watcher *w = ud;
    size_t len = sz * n;
    unsigned long nl = 0;
    for (char *q = p; (q = memchr(q, '\n', (size_t)(p + len - q))); q++)
        nl++;
    unsigned long now = atomic_fetch_add(&w->events, nl) + nl;
    pthread_mutex_lock(&wmu);
    if (!w->done_ns && now >= w_target) {
        w->done_ns = kc__now_ns();
        w_finished++;
        pthread_cond_broadcast(&wcv);
    }
    pthread_mutex_unlock(&wmu);
    return len;
}

/* The server flushes the response headers when the watch is registered. */
static size_t watch_header(char *p, size_t sz, size_t n, void *ud)
{
    watcher *w = ud;
    pthread_mutex_lock(&wmu);
    if (!w->connected) {
        w->connected = true;
        w_connected++;
        pthread_cond_broadcast(&wcv);
    }
    pthread_mutex_unlock(&wmu);
    return sz * n;
}

static void *watch_thread(void *arg)
{
    watcher *w = arg;
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, w->url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, watch_cb);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, w);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, watch_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, w);
    curl_easy_perform(c);
    curl_easy_cleanup(c);
    pthread_mutex_lock(&wmu);
    if (!w->done_ns) {
        w->ended_early = true;
        w_finished++;
        pthread_cond_broadcast(&wcv);
    }
    if (!w->connected) {
        w->connected = true;
        w_connected++;
        pthread_cond_broadcast(&wcv);
    }
    pthread_mutex_unlock(&wmu);
    return NULL;
}

/* ---- writers --------------------------------------------------------------------------------- */

typedef struct writer {
    pthread_t th;
    int id;
    unsigned long n, ok;
    double rate; /* writes/s for this writer */
    uint64_t start_ns;
} writer;

static void *writer_thread(void *arg)
{
    writer *wr = arg;
    CURL *c = curl_easy_init();
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    char url[256], body[256];
    snprintf(url, sizeof url, "%s/api/v1/namespaces/" NS "/configmaps", base_url);
    for (unsigned long i = 0; i < wr->n; i++) {
        uint64_t due = wr->start_ns + (uint64_t)((double)i * 1e9 / wr->rate);
        uint64_t now = kc__now_ns();
        if (due > now)
            kc__sleep_ns(due - now); /* pacing, not synchronisation */
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                 "\"w%d-%lu\"},\"data\":{\"k\":\"v\"}}",
                 wr->id, i);
        if (post_json(c, url, body) == 201)
            wr->ok++;
    }
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return NULL;
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
    kc__cond_init_monotonic(&wcv);
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
              "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"" NS "\"}}");
    curl_slist_free_all(h);
    curl_easy_cleanup(cc);
    uint64_t rv = kc_server_current_rv(srv);
    int nwriters = (int)(rate / 1000) + 1; /* one keep-alive connection per ~1000 writes/s */
    if (nwriters > MAX_WRITERS)
        nwriters = MAX_WRITERS;
    unsigned long total = (unsigned long)(rate * secs);
    unsigned long per = total / (unsigned long)nwriters;
    total = per * (unsigned long)nwriters;
    static watcher ws[MAX_WATCH];
    pthread_mutex_lock(&wmu);
    w_target = total;
    pthread_mutex_unlock(&wmu);
    for (int i = 0; i < nwatch; i++) {
        snprintf(ws[i].url, sizeof ws[i].url,
                 "%s/api/v1/namespaces/" NS "/configmaps?watch=1&resourceVersion=%llu"
                 "&timeoutSeconds=%d",
                 base_url, (unsigned long long)rv, (int)(secs * 4 + 30));
        pthread_create(&ws[i].th, NULL, watch_thread, &ws[i]);
    }
    pthread_mutex_lock(&wmu);
    while (w_connected < nwatch)
        pthread_cond_wait(&wcv, &wmu);
    pthread_mutex_unlock(&wmu);
    writer wr[MAX_WRITERS];
    uint64_t ws0 = kc__now_ns();
    for (int i = 0; i < nwriters; i++) {
        wr[i] = (writer){.id = i, .n = per, .rate = rate / nwriters, .start_ns = ws0};
        pthread_create(&wr[i].th, NULL, writer_thread, &wr[i]);
    }
    unsigned long ok = 0;
    for (int i = 0; i < nwriters; i++) {
        pthread_join(wr[i].th, NULL);
        ok += wr[i].ok;
    }
    uint64_t wend = kc__now_ns();
    double wsecs = (double)(wend - ws0) / 1e9;
    pthread_mutex_lock(&wmu);
    w_target = ok;
    for (int i = 0; i < nwatch; i++) /* re-check against the writes that succeeded */
        if (!ws[i].done_ns && atomic_load(&ws[i].events) >= ok) {
            ws[i].done_ns = kc__now_ns();
            w_finished++;
        }
    uint64_t deadline = kc__now_ns() + 30 * KC__NS_PER_SEC;
    pthread_mutex_unlock(&wmu);
    pthread_mutex_lock(&wmu);
    while (w_finished < nwatch && kc__cond_wait_until(&wcv, &wmu, deadline) == 0)
        ;
    pthread_mutex_unlock(&wmu);
    kc_server_stop(srv); /* ends the watch streams */
    unsigned long delivered = 0;
    int early = 0;
    double lag_ms = 0;
    for (int i = 0; i < nwatch; i++) {
        pthread_join(ws[i].th, NULL);
        delivered += atomic_load(&ws[i].events);
        early += ws[i].ended_early;
        if (ws[i].done_ns) {
            double l = ws[i].done_ns > wend ? (double)(ws[i].done_ns - wend) / 1e6 : 0;
            lag_ms = l > lag_ms ? l : lag_ms;
        }
    }
    double expected = (double)ok * nwatch;
    printf("watch: %d watchers, %lu/%lu writes ok at %.0f writes/s; delivered %lu/%.0f events "
           "(%.4f); %d watcher(s) ended early; slowest caught up %.1f ms after the last write\n",
           nwatch, ok, total, (double)ok / wsecs, delivered, expected,
           expected > 0 ? delivered / expected : 0, early, lag_ms);

    printf("BENCH server_seed_objects_per_s %.0f obj/s\n", (double)pods / seed_s);
    printf("BENCH server_list_pods_gbps %.3f GB/s\n", gbps[LIST_RUNS / 2]);
    printf("BENCH server_list_pods_ms %.1f ms\n", ms[LIST_RUNS / 2]);
    printf("BENCH server_list_body_mb %.1f MB\n", (double)body / 1e6);
    printf("BENCH server_rss_growth_mb %.1f MB\n", mem_mb);
    printf("BENCH server_mem_ratio %.2f x\n", ratio);
    printf("BENCH server_watch_writes_per_s %.0f writes/s\n", (double)ok / wsecs);
    printf("BENCH server_watch_delivered_ratio %.4f ratio\n",
           expected > 0 ? delivered / expected : 0);
    printf("BENCH server_watch_ended_early %d watchers\n", early);
    printf("BENCH server_watch_catchup_ms %.1f ms\n", lag_ms);
    kc_server_free(srv);
    kc_error_clear(&err);
    bench_hub(nwatch);
    curl_global_cleanup();
    return delivered == (unsigned long)expected ? 0 : 1;
}
