/*
 * bench_store — kc_store micro-benchmarks (no server):
 *   - Get: median ns per kc_store_get over 100k objects (random keys; targets ≤ 200 ns);
 *   - list of one 1,000-object namespace through the index (target ≤ 20 µs);
 *   - waiter wake-up latency: event applied → kc_store_wait returns in the waiting thread, p50/p99
 *     (wave 1.5 needs p99 ≤ 100 µs).
 * Each figure is the median of repeated rounds after a warm-up round.
 * Output: human text plus `BENCH <metric> <value> <unit>` lines.
 */
#include "core/internal.h"
#include "store/internal.h"
#include "kcache/store.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_COUNT 100
#define PER_NS   1000

static kc_obj *mk(int ns, int i, uint64_t rv)
{
    char buf[768];
    int n =
        snprintf(buf, sizeof(buf),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"pod-%05d\","
                 "\"namespace\":\"ns-%03d\",\"uid\":\"uid-%03d-%05d\",\"resourceVersion\":"
                 "\"%llu\",\"labels\":{\"app\":\"a%d\",\"tier\":\"web\"}},\"spec\":{\"nodeName\":"
                 "\"node-%d\",\"containers\":[{\"name\":\"c\",\"image\":\"nginx:1.25\"}]}}",
                 i, ns, ns, i, (unsigned long long)rv, i % 50, i % 300);
    kc_obj *o = NULL;
    if (kc_obj_parse(buf, (size_t)n, NULL, &o, NULL) != 0) {
        fprintf(stderr, "parse failed\n");
        exit(1);
    }
    return o;
}

/* This thread's CPU time in ns: the machine is shared, so single-threaded figures use CPU time
 * (wall time is printed beside it). */
static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * KC__NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_u64);
    return v[n / 2];
}

/* ---- waiter latency ------------------------------------------------------------------------ */

typedef struct wl {
    kc_store *s;
    char rv[32];
    uint64_t woke_ns;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int round, done_round;
} wl;

static void *waiter_main(void *p)
{
    wl *w = p;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        while (w->round == w->done_round)
            pthread_cond_wait(&w->cv, &w->mu);
        int r = w->round;
        char rv[32];
        strcpy(rv, w->rv);
        pthread_mutex_unlock(&w->mu);
        if (r < 0)
            return NULL;
        kc_store_cond c = {KC_STORE_WAIT_KEY_RV, "ns-000", "pod-00000", rv, NULL, 0};
        int rc = kc_store_wait(w->s, &c, 10000, NULL);
        uint64_t t = kc__now_ns();
        pthread_mutex_lock(&w->mu);
        w->woke_ns = rc == 0 ? t : 0;
        w->done_round = r;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
    }
}

static bool waiter_linked(kc_store *s)
{
    pthread_mutex_lock(&s->mu);
    bool any = false;
    for (size_t i = 0; i < KC__WAIT_BUCKETS && !any; i++)
        any = s->key_waiters[i] != NULL;
    pthread_mutex_unlock(&s->mu);
    return any;
}

static void bench_wake(kc_store *s, uint64_t *rvp)
{
    enum { ROUNDS = 2000 };
    static uint64_t lat[ROUNDS];
    wl w = {.s = s};
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    pthread_t t;
    pthread_create(&t, NULL, waiter_main, &w);
    size_t n = 0;
    for (int r = 1; r <= ROUNDS + 100; r++) {
        uint64_t rv = ++*rvp;
        pthread_mutex_lock(&w.mu);
        snprintf(w.rv, sizeof(w.rv), "%llu", (unsigned long long)rv);
        w.round = r;
        pthread_cond_broadcast(&w.cv);
        pthread_mutex_unlock(&w.mu);
        while (!waiter_linked(s)) /* the waiter must be blocked before the event is applied */
            sched_yield();
        kc_obj *o = mk(0, 0, rv);
        uint64_t t0 = kc__now_ns();
        kc_store_apply(s, KC_WATCH_MODIFIED, o, NULL, NULL);
        kc_obj_unref(o);
        pthread_mutex_lock(&w.mu);
        while (w.done_round != r)
            pthread_cond_wait(&w.cv, &w.mu);
        uint64_t woke = w.woke_ns;
        pthread_mutex_unlock(&w.mu);
        if (r > 100 && woke)
            lat[n++] = woke - t0;
    }
    pthread_mutex_lock(&w.mu);
    w.round = -1;
    pthread_cond_broadcast(&w.cv);
    pthread_mutex_unlock(&w.mu);
    pthread_join(t, NULL);
    qsort(lat, n, sizeof(lat[0]), cmp_u64);
    double p50 = lat[n / 2] / 1000.0, p99 = lat[n * 99 / 100] / 1000.0;
    printf("waiter wake-up (apply -> wait returns): p50 %.1f us, p99 %.1f us over %zu rounds\n",
           p50, p99, n);
    printf("BENCH store_wake_p50 %.2f us\nBENCH store_wake_p99 %.2f us\n", p50, p99);
}

int main(void)
{
    kc_store *s = NULL;
    if (kc_store_new(NULL, &s, NULL) != 0)
        return 1;
    uint64_t rv = 1;
    uint64_t t0 = kc__now_ns();
    for (int ns = 0; ns < NS_COUNT; ns++)
        for (int i = 0; i < PER_NS; i++) {
            kc_obj *o = mk(ns, i, ++rv);
            kc_store_apply(s, KC_WATCH_ADDED, o, NULL, NULL);
            kc_obj_unref(o);
        }
    printf("store filled with %zu objects in %.1f ms\n", kc_store_len(s),
           (kc__now_ns() - t0) / 1e6);

    /* Get: rounds of 100k random gets. */
    enum { GETS = 100000, ROUNDS = 9 };
    static char keys[4096][32];
    static char nss[4096][16];
    kc__rng rng;
    kc__rng_seed(&rng, 7);
    for (int k = 0; k < 4096; k++) {
        snprintf(nss[k], sizeof(nss[k]), "ns-%03d", (int)kc__rng_range(&rng, 0, NS_COUNT - 1));
        snprintf(keys[k], sizeof(keys[k]), "pod-%05d", (int)kc__rng_range(&rng, 0, PER_NS - 1));
    }
    uint64_t per[ROUNDS], wper[ROUNDS];
    for (int r = 0; r < ROUNDS + 1; r++) {
        uint64_t a = cpu_ns(), wa = kc__now_ns();
        for (int i = 0; i < GETS; i++) {
            kc_obj *o = kc_store_get(s, nss[i & 4095], keys[i & 4095]);
            kc_obj_unref(o);
        }
        if (r > 0) {
            per[r - 1] = (cpu_ns() - a) / GETS;
            wper[r - 1] = (kc__now_ns() - wa) / GETS;
        }
    }
    uint64_t get_ns = median(per, ROUNDS), get_wall = median(wper, ROUNDS);
    printf("get (incl. unref) over %zu objects, random keys: median %llu ns CPU (%llu ns wall)\n",
           kc_store_len(s), (unsigned long long)get_ns, (unsigned long long)get_wall);
    printf("BENCH store_get_median %llu ns\n", (unsigned long long)get_ns);
    printf("BENCH store_get_median_wall %llu ns\n", (unsigned long long)get_wall);

    /* Get over a hot set (64 keys, cache-resident): the cost without memory latency. */
    for (int r = 0; r < ROUNDS + 1; r++) {
        uint64_t a = cpu_ns();
        for (int i = 0; i < GETS; i++) {
            kc_obj *o = kc_store_get(s, nss[i & 63], keys[i & 63]);
            kc_obj_unref(o);
        }
        if (r > 0)
            per[r - 1] = (cpu_ns() - a) / GETS;
    }
    uint64_t hot_ns = median(per, ROUNDS);
    printf("get, hot set of 64 keys: median %llu ns CPU\n", (unsigned long long)hot_ns);
    printf("BENCH store_get_hot_median %llu ns\n", (unsigned long long)hot_ns);

    /* List one namespace of 1,000 objects through the index. */
    enum { LISTS = 200 };
    uint64_t lt[LISTS];
    for (int r = 0; r < LISTS + 20; r++) {
        kc_obj **v;
        size_t n;
        uint64_t a = cpu_ns();
        kc_store_list_by_namespace(s, "ns-042", &v, &n, NULL);
        kc_obj_array_free(v, n);
        if (r >= 20)
            lt[r - 20] = cpu_ns() - a;
        if (n != PER_NS) {
            fprintf(stderr, "namespace list returned %zu\n", n);
            return 1;
        }
    }
    double list_us = median(lt, LISTS) / 1000.0;
    printf("list namespace of %d objects (incl. unref): median %.2f us CPU\n", PER_NS, list_us);
    printf("BENCH store_list_ns_1000 %.2f us\n", list_us);

    bench_wake(s, &rv);
    kc_store_free(s);
    return 0;
}
