/*
 * bench_workqueue — kc_workqueue throughput and memory (no server).
 *
 * Method:
 *   - one thread: add K distinct keys ("ns-NNN/pod-NNNNNNN", 18 bytes), then get + done each;
 *     keys/s = K / elapsed, median of ROUNDS rounds after a warm-up round, for K = 1,000 (hot in
 *     cache) and K = 100,000, for an unnamed queue (no metrics, no clock reads) and a named one
 *     (metrics on: three clock reads and two histogram updates per key). Target: ≥ 2 M keys/s.
 *     The rate is per second of the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so that other
 *     processes on a shared machine do not skew it; the wall-clock rate is printed beside it.
 *   - 4 workers: the same K = 100,000 keys added by one producer thread while 4 workers get and
 *     done them (every worker blocks in get when the FIFO is empty); keys/s = K / (time from the
 *     first add to the last done), median of ROUNDS. On a 2-core machine the 5 threads share 2
 *     cores: this measures the lock's cost under contention, not parallel speed-up.
 *   - 4 threads each doing add+get+done: every thread adds its own 25,000 of the 100,000 keys in
 *     batches of 100 and gets + dones 100 keys (any thread's) after each batch; keys/s = 100,000 /
 *     wall time, median of ROUNDS (again 4 threads on 2 cores: the lock under contention).
 *   - memory per queued key: glibc mallinfo2() bytes in use (uordblks, plus hblkhd for the large
 *     blocks malloc maps separately, such as the hash table's bucket array) before and after adding
 *     N = 1,000,000 distinct keys (none processed), divided by N, minus the key's bytes (18):
 *     what the queue costs per key beyond the key itself, malloc overhead and the hash table
 *     included. Target: ≤ 64 B plus the key bytes.
 * Output: human text plus `BENCH <metric> <value> <unit>` lines.
 */
#include "core/internal.h"
#include "kcache/workqueue.h"

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 7
#define KEYLEN 18

static char (*keys)[KEYLEN + 1];

static void make_keys(size_t n)
{
    keys = malloc(n * sizeof(*keys));
    for (size_t i = 0; i < n; i++)
        snprintf(keys[i], sizeof(keys[i]), "ns-%03zu/pod-%07zu", i % 1000, i);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    return v[n / 2];
}

static void check(int rc, const char *what)
{
    if (rc != 0) {
        fprintf(stderr, "bench_workqueue: %s failed: %s\n", what, kc_strerror(rc));
        exit(1);
    }
}

static kc_workqueue *new_q(const char *name)
{
    kc_workqueue *q = NULL;
    kc_workqueue_opts o = {.name = name};
    check(kc_workqueue_new(&o, &q, NULL), "kc_workqueue_new");
    return q;
}

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * KC__NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* keys per CPU second (and *wall: per wall second) of add × k, then (get + done) × k, on one
 * thread. */
static double one_thread(const char *name, size_t k, double *wall)
{
    kc_workqueue *q = new_q(name);
    double rates[ROUNDS], walls[ROUNDS];
    for (int r = -1; r < ROUNDS; r++) {
        uint64_t t0 = cpu_ns(), w0 = kc__now_ns();
        size_t rounds = 100000 / k ? 100000 / k : 1; /* ≥ 100k keys per measurement */
        for (size_t x = 0; x < rounds; x++) {
            for (size_t i = 0; i < k; i++)
                check(kc_workqueue_add(q, keys[i]), "add");
            for (size_t i = 0; i < k; i++) {
                const char *key;
                check(kc_workqueue_get(q, 0, &key), "get");
                check(kc_workqueue_done(q, key), "done");
            }
        }
        uint64_t dt = cpu_ns() - t0, dw = kc__now_ns() - w0;
        if (r >= 0) {
            rates[r] = (double)(k * rounds) / ((double)dt / 1e9);
            walls[r] = (double)(k * rounds) / ((double)dw / 1e9);
        }
    }
    kc_workqueue_free(q);
    *wall = median(walls, ROUNDS);
    return median(rates, ROUNDS);
}

typedef struct pool {
    kc_workqueue *q;
    size_t k;
} pool;

static void *worker(void *arg)
{
    pool *p = arg;
    const char *key;
    while (kc_workqueue_get(p->q, -1, &key) == 0)
        check(kc_workqueue_done(p->q, key), "done");
    return NULL;
}

static void *producer(void *arg)
{
    pool *p = arg;
    for (size_t i = 0; i < p->k; i++)
        check(kc_workqueue_add(p->q, keys[i]), "add");
    return NULL;
}

/* keys/s with 4 workers and one producer. */
static double four_workers(size_t k)
{
    double rates[ROUNDS];
    for (int r = -1; r < ROUNDS; r++) {
        pool p = {new_q(NULL), k};
        pthread_t w[4], prod;
        uint64_t t0 = kc__now_ns();
        for (int i = 0; i < 4; i++)
            pthread_create(&w[i], NULL, worker, &p);
        pthread_create(&prod, NULL, producer, &p);
        pthread_join(prod, NULL);
        /* the queue drains; shutdown_drain returns when the last key is done */
        while (kc_workqueue_len(p.q) > 0)
            sched_yield();
        check(kc_workqueue_shutdown_drain(p.q, -1), "shutdown_drain");
        uint64_t dt = kc__now_ns() - t0;
        for (int i = 0; i < 4; i++)
            pthread_join(w[i], NULL);
        kc_workqueue_free(p.q);
        if (r >= 0)
            rates[r] = (double)k / ((double)dt / 1e9);
    }
    return median(rates, ROUNDS);
}

typedef struct mixed {
    kc_workqueue *q;
    size_t first, n;
} mixed;

static void *mixed_main(void *arg)
{
    mixed *m = arg;
    for (size_t i = 0; i < m->n; i += 100) {
        size_t b = m->n - i < 100 ? m->n - i : 100;
        for (size_t j = 0; j < b; j++)
            check(kc_workqueue_add(m->q, keys[m->first + i + j]), "add");
        for (size_t j = 0; j < b; j++) {
            const char *key;
            check(kc_workqueue_get(m->q, -1, &key), "get");
            check(kc_workqueue_done(m->q, key), "done");
        }
    }
    return NULL;
}

/* keys/s with 4 threads each adding, getting and doning. */
static double four_mixed(size_t k)
{
    double rates[ROUNDS];
    for (int r = -1; r < ROUNDS; r++) {
        kc_workqueue *q = new_q(NULL);
        mixed m[4];
        pthread_t t[4];
        uint64_t t0 = kc__now_ns();
        for (int i = 0; i < 4; i++) {
            m[i] = (mixed){q, (size_t)i * (k / 4), k / 4};
            pthread_create(&t[i], NULL, mixed_main, &m[i]);
        }
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
        uint64_t dt = kc__now_ns() - t0;
        kc_workqueue_free(q);
        if (r >= 0)
            rates[r] = (double)k / ((double)dt / 1e9);
    }
    return median(rates, ROUNDS);
}

/* Bytes per queued key beyond its KEYLEN bytes. */
static double memory_per_key(size_t n)
{
    struct mallinfo2 before = mallinfo2();
    kc_workqueue *q = new_q(NULL);
    for (size_t i = 0; i < n; i++)
        check(kc_workqueue_add(q, keys[i]), "add");
    struct mallinfo2 after = mallinfo2();
    if ((size_t)kc_workqueue_len(q) != n) {
        fprintf(stderr, "bench_workqueue: %d queued, want %zu\n", kc_workqueue_len(q), n);
        exit(1);
    }
    kc_workqueue_free(q);
    size_t used = (after.uordblks + after.hblkhd) - (before.uordblks + before.hblkhd);
    return (double)used / (double)n - KEYLEN;
}

int main(void)
{
    enum { MEM_KEYS = 1000000 };
    make_keys(MEM_KEYS);
    double hot_w, cold_w, named_w;
    double hot = one_thread(NULL, 1000, &hot_w);
    double cold = one_thread(NULL, 100000, &cold_w);
    double named = one_thread("bench", 100000, &named_w);
    double four = four_workers(100000);
    double mixed4 = four_mixed(100000);
    double mem = memory_per_key(MEM_KEYS);
    printf("add+get+done, one thread, 1k keys:            %.2f M keys/CPU-s (%.2f M/s wall)\n",
           hot / 1e6, hot_w / 1e6);
    printf("add+get+done, one thread, 100k keys:          %.2f M keys/CPU-s (%.2f M/s wall)\n",
           cold / 1e6, cold_w / 1e6);
    printf("add+get+done, one thread, 100k keys, metrics: %.2f M keys/CPU-s (%.2f M/s wall)\n",
           named / 1e6, named_w / 1e6);
    printf("add (1 producer) + get+done (4 workers), 100k: %.2f M keys/s\n", four / 1e6);
    printf("add+get+done on each of 4 threads, 100k:       %.2f M keys/s\n", mixed4 / 1e6);
    printf("memory per queued key (1M keys): %.1f B + %d key bytes\n", mem, KEYLEN);
    printf("BENCH workqueue_1thread_1k_keys_per_s %.0f keys/s\n", hot);
    printf("BENCH workqueue_1thread_100k_keys_per_s %.0f keys/s\n", cold);
    printf("BENCH workqueue_1thread_100k_metrics_keys_per_s %.0f keys/s\n", named);
    printf("BENCH workqueue_4workers_100k_keys_per_s %.0f keys/s\n", four);
    printf("BENCH workqueue_4threads_mixed_100k_keys_per_s %.0f keys/s\n", mixed4);
    printf("BENCH workqueue_bytes_per_queued_key %.1f B\n", mem);
    free(keys);
    return 0;
}
