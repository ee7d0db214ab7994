/*
 * bench_ryw.c — read-your-writes costs.
 *
 * 1. Wait latency: the time a block-on-write wait adds beyond the moment the watch event reaches
 *    the client, i.e. from kc_store_apply() of the event (what the reflector does when the event
 *    arrives) to the waiting thread running again. The waiter goes through the cached client's
 *    wait path (kc__cc_wait: check, then kc_store_wait on the store's per-waiter condvar). The
 *    same events are then awaited the mig-controller way — a cache Get every 5 ms until the RV
 *    shows up — in the same run. Each event is applied after a random 0.2–5.2 ms so that it falls
 *    at a random phase of the poll period. Three runs each; medians of the per-run p50/p99.
 *    "Reaches the client" is the moment the reflector hands the decoded event to the store: the
 *    figure includes kc_store_apply itself (lookup, replace, claiming the waiter) and the wake-up
 *    of the blocked thread (futex post after the store lock is released → scheduler), but not the
 *    network read or JSON decode of the event, which a polling reader pays as well. The reflector
 *    applies events on its own thread (no dispatcher hop: handlers are notified separately).
 * 2. Discovery: N = 1,000 PersistentVolumes read one by one through live API GETs (embedded
 *    server, loopback, no rate limit) vs through the cached client; and the raw store lookup as
 *    the floor. Three runs; in each, one API pass, one cache pass right after it (cold), then 9
 *    warm passes of each reader whose median counts (a 50 µs pass is visibly slowed by one timer
 *    interrupt or a neighbour's burst on this shared VM). Medians of the three runs.
 * Prints human text and `BENCH <metric> <value> <unit>` lines.
 */
#include "cached/internal.h"
#include "core/internal.h"
#include "kcache/cached_client.h"
#include "kcache/rv.h"
#include "kcache/server.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUNS 3
#define WARM 9 /* warm cache passes per run (each ~50 µs: one timer interrupt shows in a pass) */

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
    qsort(v, n, sizeof(*v), cmp_d);
    size_t r = (size_t)(p / 100.0 * (double)n + 0.999999);
    return v[(r < 1 ? 1 : r > n ? n : r) - 1];
}

static double median3(double *v)
{
    return pct(v, RUNS, 50);
}

static void die(const char *what, int rc, const kc_error *e)
{
    fprintf(stderr, "bench_ryw: %s: %s%s%s\n", what, kc_strerror(rc), e && e->message ? ": " : "",
            e && e->message ? e->message : "");
    exit(1);
}

/* ---- 1. wait latency ------------------------------------------------------------------------- */

typedef struct waitbench {
    kc_cached_client *cc;
    kc_store *store;
    bool polling;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int phase;       /* 0 idle, 1 go (target set), 2 waiter ready, 3 woke, 4 quit */
    char target[32]; /* RV awaited */
    uint64_t woke_ns;
} waitbench;

static void *waiter(void *p)
{
    waitbench *b = p;
    for (;;) {
        pthread_mutex_lock(&b->mu);
        while (b->phase != 1 && b->phase != 4)
            pthread_cond_wait(&b->cv, &b->mu);
        if (b->phase == 4) {
            pthread_mutex_unlock(&b->mu);
            return NULL;
        }
        char rv[32];
        memcpy(rv, b->target, sizeof(rv));
        b->phase = 2;
        pthread_cond_broadcast(&b->cv);
        pthread_mutex_unlock(&b->mu);

        if (b->polling) { /* mig-controller: Get from the cache every 5 ms */
            for (;;) {
                kc_obj *o = kc_store_get(b->store, "ns", "obj");
                bool ok = o && kc_rv_compare(kc_obj_resource_version(o), rv) != KC_RV_LESS;
                kc_obj_unref(o);
                if (ok)
                    break;
                kc__sleep_ns(5 * KC__NS_PER_MS);
            }
        } else {
            kc_store_cond c = kc__cc_written_cond("ns", "obj", rv, 0); /* what writes wait on */
            int rc = kc__cc_wait(b->cc, b->store, &c, kc__deadline_after_ms(5000), NULL);
            if (rc < 0)
                die("wait", rc, NULL);
        }
        uint64_t now = kc__now_ns();
        pthread_mutex_lock(&b->mu);
        b->woke_ns = now;
        b->phase = 3;
        pthread_cond_broadcast(&b->cv);
        pthread_mutex_unlock(&b->mu);
    }
}

static kc_obj *secret(uint64_t rv)
{
    char json[256];
    int n = snprintf(json, sizeof(json),
                     "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"obj\","
                     "\"namespace\":\"ns\",\"uid\":\"u-1\",\"resourceVersion\":\"%llu\"}}",
                     (unsigned long long)rv);
    kc_obj *o = NULL;
    kc_error e = KC_ERROR_INIT;
    int rc = kc_obj_parse(json, (size_t)n, NULL, &o, &e);
    if (rc < 0)
        die("parse", rc, &e);
    return o;
}

/* One run: n events; returns the added latencies (µs) in out[]. */
static void wait_run(waitbench *b, kc__rng *rng, uint64_t *rv, unsigned n, double *out)
{
    for (unsigned i = 0; i < n; i++) {
        uint64_t next = ++*rv;
        kc_obj *o = secret(next); /* built before timing: the event has been decoded */
        pthread_mutex_lock(&b->mu);
        snprintf(b->target, sizeof(b->target), "%llu", (unsigned long long)next);
        b->phase = 1;
        pthread_cond_broadcast(&b->cv);
        while (b->phase != 2)
            pthread_cond_wait(&b->cv, &b->mu);
        pthread_mutex_unlock(&b->mu);
        kc__sleep_ns(kc__rng_range(rng, 200, 5200) * 1000); /* random phase */
        uint64_t t_apply = kc__now_ns();
        int rc = kc_store_apply(b->store, KC_WATCH_MODIFIED, o, NULL, NULL);
        if (rc < 0)
            die("apply", rc, NULL);
        kc_obj_unref(o);
        pthread_mutex_lock(&b->mu);
        while (b->phase != 3)
            pthread_cond_wait(&b->cv, &b->mu);
        b->phase = 0;
        out[i] = (double)(b->woke_ns - t_apply) / 1e3;
        pthread_mutex_unlock(&b->mu);
    }
}

static void bench_wait(kc_cached_client *cc)
{
    kc_store *store = NULL;
    if (kc_store_new(NULL, &store, NULL) < 0)
        die("store", KC_ENOMEM, NULL);
    uint64_t rv = 100;
    kc_obj *first = secret(rv);
    kc_store_apply(store, KC_WATCH_ADDED, first, NULL, NULL);
    kc_obj_unref(first);
    kc__rng rng;
    kc__rng_seed(&rng, 42);

    const unsigned n_event = 500, n_poll = 150;
    double *lat = calloc(n_event, sizeof(double));
    double ev50[RUNS], ev99[RUNS], po50[RUNS], po99[RUNS];
    for (int pass = 0; pass < 2; pass++) {
        waitbench b = {.cc = cc, .store = store, .polling = pass == 1};
        pthread_mutex_init(&b.mu, NULL);
        pthread_cond_init(&b.cv, NULL);
        pthread_t th;
        pthread_create(&th, NULL, waiter, &b);
        unsigned n = b.polling ? n_poll : n_event;
        wait_run(&b, &rng, &rv, 20, lat); /* warm-up */
        for (int r = 0; r < RUNS; r++) {
            wait_run(&b, &rng, &rv, n, lat);
            (b.polling ? po50 : ev50)[r] = pct(lat, n, 50);
            (b.polling ? po99 : ev99)[r] = pct(lat, n, 99);
        }
        pthread_mutex_lock(&b.mu);
        b.phase = 4;
        pthread_cond_broadcast(&b.cv);
        pthread_mutex_unlock(&b.mu);
        pthread_join(th, NULL);
        pthread_cond_destroy(&b.cv);
        pthread_mutex_destroy(&b.mu);
    }
    double e50 = median3(ev50), e99 = median3(ev99), p50 = median3(po50), p99 = median3(po99);
    printf(
        "wait added beyond the event reaching the store (%u events × %d runs; polling %u × %d)\n",
        n_event, RUNS, n_poll, RUNS);
    printf("  event-driven wait  p50 %8.1f µs   p99 %8.1f µs\n", e50, e99);
    printf("  5 ms polling       p50 %8.1f µs   p99 %8.1f µs\n", p50, p99);
    printf("  ratio (polling / event-driven)  p50 %.0f×  p99 %.0f×\n\n", p50 / e50, p99 / e99);
    printf("BENCH ryw_wait_added_p50 %.1f us\n", e50);
    printf("BENCH ryw_wait_added_p99 %.1f us\n", e99);
    printf("BENCH ryw_poll5ms_added_p50 %.1f us\n", p50);
    printf("BENCH ryw_poll5ms_added_p99 %.1f us\n", p99);
    printf("BENCH ryw_poll_vs_wait_p50_ratio %.0f x\n", p50 / e50);
    printf("BENCH ryw_poll_vs_wait_p99_ratio %.0f x\n", p99 / e99);
    free(lat);
    kc_store_free(store);
}

/* ---- 2. discovery ---------------------------------------------------------------------------- */

static const kc_gvr pvs = {"", "v1", "persistentvolumes"};

static double pass_s(kc_cached_client *cc, kc_store *raw, char **names, unsigned n, bool live)
{
    kc_cached_call_opts call = {.live = live};
    uint64_t t0 = kc__now_ns();
    for (unsigned i = 0; i < n; i++) {
        kc_obj *o = NULL;
        if (raw) {
            o = kc_store_get(raw, NULL, names[i]);
        } else {
            int rc = kc_cached_client_get(cc, &pvs, NULL, names[i], &call, &o, NULL);
            if (rc < 0)
                die("get", rc, NULL);
        }
        kc_obj_unref(o);
    }
    return (double)(kc__now_ns() - t0) / 1e9;
}

static void bench_discovery(unsigned n)
{
    kc_error e = KC_ERROR_INIT;
    char seed[64];
    snprintf(seed, sizeof(seed), "persistentvolumes=%u", n);
    kc_server_opts so = {.listen = "127.0.0.1:0", .quiet = true, .seed_spec = seed};
    kc_server *srv = NULL;
    kc_config *cfg = NULL;
    kc_client *client = NULL;
    kc_cache *cache = NULL;
    kc_cached_client *cc = NULL;
    int rc;
    if ((rc = kc_server_new(&so, &srv, &e)) < 0 || (rc = kc_server_start(srv, &e)) < 0)
        die("server", rc, &e);
    kc_client_opts co = {.qps = -1};
    if ((rc = kc_config_from_url(kc_server_url(srv), NULL, NULL, &cfg, &e)) < 0 ||
        (rc = kc_client_new(cfg, &co, &client, &e)) < 0 ||
        (rc = kc_cache_new(client, NULL, &cache, &e)) < 0 ||
        (rc = kc_cached_client_new(client, cache, NULL, &cc, &e)) < 0)
        die("set-up", rc, &e);
    kc_obj **items = NULL;
    size_t n_items = 0;
    if ((rc = kc_cached_client_list(cc, &pvs, NULL, NULL, NULL, NULL, &items, &n_items, &e)) < 0)
        die("list", rc, &e);
    unsigned m = n_items < n ? (unsigned)n_items : n;
    char **names = calloc(m, sizeof(*names));
    for (unsigned i = 0; i < m; i++)
        names[i] = kc__strdup(kc_obj_name(items[i]));
    kc_obj_array_free(items, n_items);
    kc_informer *inf = NULL;
    kc_cache_get_informer(cache, &pvs, NULL, &inf, NULL);
    kc_store *raw = kc_informer_store(inf);

    /* Per run: the API pass, then the cache pass right after it (cold: the HTTP work evicted the
     * store from the CPU caches), then warm passes alternating cached client / raw store. */
    double api[RUNS], cold[RUNS], cached[RUNS], floor_s[RUNS];
    pass_s(cc, NULL, names, m < 50 ? m : 50, true); /* warm-up: connection, pages */
    pass_s(cc, NULL, names, m, false);
    for (int r = 0; r < RUNS; r++) {
        api[r] = pass_s(cc, NULL, names, m, true);
        cold[r] = pass_s(cc, NULL, names, m, false);
        double w[WARM], fl[WARM];
        for (int k = 0; k < WARM; k++) {
            fl[k] = pass_s(NULL, raw, names, m, false);
            w[k] = pass_s(cc, NULL, names, m, false);
        }
        cached[r] = pct(w, WARM, 50);
        floor_s[r] = pct(fl, WARM, 50);
    }
    double a = median3(api), c = median3(cached), k = median3(cold), f = median3(floor_s);
    printf("discovery: %u PersistentVolumes read one by one (median of %d runs)\n", m, RUNS);
    printf("  API GETs               %10.6f s   (%.1f µs each)\n", a, a * 1e6 / m);
    printf("  cached client, warm    %10.6f s   (%.0f ns each)\n", c, c * 1e9 / m);
    printf("  cached client, cold    %10.6f s   (%.0f ns each; right after the API pass)\n", k,
           k * 1e9 / m);
    printf("  raw store lookup, warm %10.6f s   (%.0f ns each)\n", f, f * 1e9 / m);
    printf("  ratio API / cached client  warm %.0f×  cold %.0f×\n", a / c, a / k);
    printf("BENCH discovery_api_%u %.6f s\n", m, a);
    printf("BENCH discovery_cache_%u %.6f s\n", m, c);
    printf("BENCH discovery_cache_cold_%u %.6f s\n", m, k);
    printf("BENCH discovery_store_get_ns %.0f ns\n", f * 1e9 / m);
    printf("BENCH discovery_cached_get_ns %.0f ns\n", c * 1e9 / m);
    printf("BENCH discovery_ratio_%u %.0f x\n", m, a / c);
    printf("BENCH discovery_ratio_cold_%u %.0f x\n", m, a / k);
    for (unsigned i = 0; i < m; i++)
        free(names[i]);
    free(names);
    kc_cache_stop(cache);
    kc_cached_client_free(cc);
    kc_cache_free(cache);
    kc_client_free(client);
    kc_config_unref(cfg);
    kc_server_free(srv);
}

int main(void)
{
    /* The wait bench needs a cached client only for its wait path; nothing is contacted. */
    kc_config *cfg = NULL;
    kc_client *client = NULL;
    kc_cache *cache = NULL;
    kc_cached_client *cc = NULL;
    kc_error e = KC_ERROR_INIT;
    int rc;
    if ((rc = kc_config_from_url("http://127.0.0.1:1", NULL, NULL, &cfg, &e)) < 0 ||
        (rc = kc_client_new(cfg, NULL, &client, &e)) < 0 ||
        (rc = kc_cache_new(client, NULL, &cache, &e)) < 0 ||
        (rc = kc_cached_client_new(client, cache, NULL, &cc, &e)) < 0)
        die("set-up", rc, &e);
    bench_wait(cc);
    kc_cached_client_free(cc);
    kc_cache_free(cache);
    kc_client_free(client);
    kc_config_unref(cfg);
    bench_discovery(1000);
    return 0;
}
