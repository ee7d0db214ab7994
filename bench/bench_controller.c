/*
 * bench_controller — controller throughput: a no-op reconcile over N Pods (default 100,000) with
 * 4 workers, against the embedded API server in a forked child (bench/server_child.h, seeded
 * "pods=N").
 *
 * After one informer sync as a warm-up (the server's first full list is slower), each repeat
 * runs, in one process, back to back:
 *   1. the informer alone: a kc_cache with one Pod informer, from kc_cache_new to synced
 *      ("informer sync", the baseline);
 *   2. the controller: kc_controller_new + kc_controller_start (its own cache, which syncs the
 *      same N Pods) until every Pod has been reconciled once (a per-Pod flag set by the reconcile;
 *      the main thread waits on a condition variable).
 * Reported (medians over the repeats): the informer sync time, the controller's time from start to
 * "every object reconciled once", their ratio (target ≤ 1.5: the controller adds at most half an
 * informer sync on top of its own), and reconciles/s over the part after the sync (start returned
 * → the last first reconcile).
 * Usage: bench_controller [N=100000] [--workers W=4] [--repeat R=3]
 * Output: human text plus `BENCH <metric> <value> <unit>` lines.
 */
#include "core/internal.h"
#include "kcache/controller.h"
#include "kcache/server.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc_usage.h"
#include "server_child.h"

static const kc_gvr PODS = {"", "v1", "pods"};

typedef struct tally {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned char *seen; /* per Pod index */
    size_t n, distinct;
    uint64_t reconciles;
    uint64_t last_ns;
} tally;

/* The seed names Pods web-7d9f8c6b5-<index, 5+ digits>. */
static long pod_index(const char *name)
{
    const char *dash = strrchr(name, '-');
    return dash ? strtol(dash + 1, NULL, 10) : -1;
}

static kc_reconcile_result noop(void *ud, const kc_reconcile_request *req, kc_cached_client *cc)
{
    (void)cc;
    tally *t = ud;
    long i = pod_index(req->name);
    pthread_mutex_lock(&t->mu);
    t->reconciles++;
    if (i >= 0 && (size_t)i < t->n && !t->seen[i]) {
        t->seen[i] = 1;
        if (++t->distinct == t->n) {
            t->last_ns = kc__now_ns();
            pthread_cond_broadcast(&t->cv);
        }
    }
    pthread_mutex_unlock(&t->mu);
    return (kc_reconcile_result){KC_RECONCILE_DONE, 0};
}

static double informer_sync_s(kc_client *client)
{
    uint64_t t0 = kc__now_ns();
    kc_cache *cache = NULL;
    kc_informer *inf = NULL;
    kc_error e = KC_ERROR_INIT;
    if (kc_cache_new(client, NULL, &cache, &e) ||
        kc_cache_get_informer(cache, &PODS, NULL, &inf, &e) ||
        kc_cache_wait_synced(cache, 600000, &e)) {
        fprintf(stderr, "informer: %s\n", e.message ? e.message : "failed");
        exit(1);
    }
    double s = (double)(kc__now_ns() - t0) / 1e9;
    kc_cache_free(cache);
    return s;
}

/* One controller run: *ret_all_s start → all reconciled once; *ret_rate reconciles/s after the
 * sync. */
static void controller_run(kc_client *client, size_t n, unsigned workers, double *ret_all_s,
                           double *ret_rate)
{
    tally t = {.n = n};
    pthread_mutex_init(&t.mu, NULL);
    kc__cond_init_monotonic(&t.cv);
    t.seen = calloc(n, 1);
    kc_controller_type pods = {.gvr = PODS, .kind = "Pod"};
    kc_controller_opts o = {.name = "bench",
                            .primary = &pods,
                            .primary_size = sizeof pods,
                            .reconcile = noop,
                            .ud = &t,
                            .max_concurrent_reconciles = workers,
                            .sync_timeout_ms = 600000};
    kc_controller *c = NULL;
    kc_error e = KC_ERROR_INIT;
    uint64_t t0 = kc__now_ns();
    if (kc_controller_new(client, &o, &c, &e) || kc_controller_start(c, &e)) {
        fprintf(stderr, "controller: %s\n", e.message ? e.message : "failed");
        exit(1);
    }
    uint64_t t_synced = kc__now_ns();
    uint64_t deadline = kc__deadline_after_ms(600000);
    pthread_mutex_lock(&t.mu);
    while (t.distinct < n && kc__cond_wait_until(&t.cv, &t.mu, deadline) == 0) {
    }
    size_t distinct = t.distinct;
    uint64_t last = t.last_ns;
    pthread_mutex_unlock(&t.mu);
    if (distinct < n) {
        fprintf(stderr, "controller: only %zu of %zu reconciled\n", distinct, n);
        exit(1);
    }
    *ret_all_s = (double)(last - t0) / 1e9;
    *ret_rate = (double)n / ((double)(last - t_synced) / 1e9);
    kc_controller_free(c);
    free(t.seen);
    pthread_cond_destroy(&t.cv);
    pthread_mutex_destroy(&t.mu);
}

int main(int argc, char **argv)
{
    int n = 100000, repeat = 3;
    unsigned workers = 4;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--workers") && i + 1 < argc)
            workers = (unsigned)atoi(argv[++i]);
        else
            n = atoi(argv[i]);
    }
    if (n < 1 || repeat < 1 || repeat > 20 || workers < 1 || workers > 256) {
        fprintf(stderr, "usage: bench_controller [N] [--workers W] [--repeat R]\n");
        return 2;
    }
    child ch;
    if (child_start(&ch, n, 0) < 0)
        return 1;
    kc_config *cfg = NULL;
    kc_client *client = child_client(&ch, &cfg, "bench_controller");
    if (!client)
        return 1;
    double sync[20], all[20], rate[20], ratio[20];
    /* warm-up (not counted): the server's first full list of N Pods is slower than later ones */
    printf("warm-up informer sync %.3f s (not counted)\n", informer_sync_s(client));
    for (int r = 0; r < repeat; r++) {
        sync[r] = informer_sync_s(client);
        controller_run(client, (size_t)n, workers, &all[r], &rate[r]);
        ratio[r] = all[r] / sync[r];
        printf("run %d: informer sync %.3f s; controller start → all %d reconciled once %.3f s "
               "(%.2f x); %.0f reconciles/s after the sync\n",
               r + 1, sync[r], n, all[r], ratio[r], rate[r]);
    }
    printf("BENCH controller_informer_sync %.3f s\n", med(sync, repeat));
    printf("BENCH controller_all_reconciled %.3f s\n", med(all, repeat));
    printf("BENCH controller_all_reconciled_vs_sync %.2f x\n", med(ratio, repeat));
    printf("BENCH controller_noop_reconciles_per_s %.0f reconciles/s\n", med(rate, repeat));
    kc_client_free(client);
    kc_config_unref(cfg);
    child_stop(&ch);
    return 0;
}
