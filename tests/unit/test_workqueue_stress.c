/*
 * Concurrency stress for kc_workqueue (run under TSan by `make tsan`): 8 workers and 3 producers
 * over 64 keys, with re-adds during processing from producers and from the workers themselves,
 * delayed adds, rate-limited adds, forgets and adds at several priorities (C12). Checks:
 *   - W6: a key is never held by two workers at once (a per-key in-flight counter must be 0 when a
 *     worker receives the key);
 *   - no key is lost: each add is preceded by a bump of the key's "wanted" generation, and every
 *     processing records the generation it saw after get; at the end, the last processing of
 *     every key saw the final generation (an add either found the key dirty — then a later get
 *     follows — or made it dirty, which a later get or done-requeue serves);
 *   - shutdown drains: every worker ends with KC_ESTOPPED and the queue holds no record.
 * No sleeps: producers and workers run flat out; the end is reached through observable states.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "workqueue/internal.h"
#include "kcache/workqueue.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { KEYS = 64, WORKERS = 8, PRODUCERS = 3, ADDS_PER_PRODUCER = 20000 };

typedef struct shared {
    kc_workqueue *q;
    atomic_int inflight[KEYS];
    atomic_uint_fast64_t wanted[KEYS]; /* generation of the last add issued */
    atomic_uint_fast64_t seen[KEYS];   /* max generation a processing observed */
    atomic_uint_fast64_t processed;
    atomic_int violations;
} shared;

static int key_index(const char *k)
{
    return atoi(k + 4); /* "key-N" */
}

static void key_name(char *buf, size_t n, int i)
{
    snprintf(buf, n, "key-%d", i);
}

static void want(shared *s, int i)
{
    atomic_fetch_add(&s->wanted[i], 1);
}

static void *worker(void *arg)
{
    shared *s = arg;
    uint64_t rng = (uint64_t)(uintptr_t)&rng;
    for (;;) {
        const char *k;
        int rc = kc_workqueue_get(s->q, -1, &k);
        if (rc == KC_ESTOPPED)
            break;
        assert_int_equal(rc, 0);
        int i = key_index(k);
        if (atomic_fetch_add(&s->inflight[i], 1) != 0)
            atomic_fetch_add(&s->violations, 1); /* two workers on one key */
        uint64_t g = atomic_load(&s->wanted[i]);
        uint64_t prev = atomic_load(&s->seen[i]);
        while (prev < g && !atomic_compare_exchange_weak(&s->seen[i], &prev, g))
            ;
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        if ((rng >> 60) == 0) { /* 1 in 16: re-add itself while processing (W6) */
            want(s, i);
            if (kc_workqueue_add(s->q, k) == KC_ESTOPPED) /* after shutdown (W2): not wanted */
                atomic_fetch_sub(&s->wanted[i], 1);       /* only this worker holds key i */
        }
        atomic_fetch_sub(&s->inflight[i], 1);
        atomic_fetch_add(&s->processed, 1);
        assert_int_equal(kc_workqueue_done(s->q, k), 0);
    }
    return NULL;
}

static void *producer(void *arg)
{
    shared *s = arg;
    uint64_t rng = (uint64_t)(uintptr_t)&rng;
    char key[32];
    for (int n = 0; n < ADDS_PER_PRODUCER; n++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        int i = (int)((rng >> 33) % KEYS);
        key_name(key, sizeof(key), i);
        want(s, i);
        switch ((rng >> 20) % 8) {
        case 0:
            assert_int_equal(kc_workqueue_add_after(s->q, key, (rng >> 40) % 3), 0);
            break;
        case 1:
            assert_int_equal(kc_workqueue_add_rate_limited(s->q, key), 0);
            break;
        case 2:
            assert_int_equal(kc_workqueue_forget(s->q, key), 0);
            assert_int_equal(kc_workqueue_add(s->q, key), 0);
            break;
        case 3: /* priorities (C12): raises and re-adds in every state */
            assert_int_equal(kc_workqueue_add_with_priority(s->q, key, KC_WORKQUEUE_PRIORITY_LOW),
                             0);
            break;
        case 4:
            assert_int_equal(kc_workqueue_add_with_priority(s->q, key, 7), 0);
            break;
        case 5:
            assert_int_equal(kc_workqueue_add_after_with_priority(s->q, key, (rng >> 40) % 3,
                                                                  KC_WORKQUEUE_PRIORITY_LOW),
                             0);
            break;
        default:
            assert_int_equal(kc_workqueue_add(s->q, key), 0);
        }
    }
    return NULL;
}

static void test_workqueue_stress_workers(void **st)
{
    static shared s;
    /* small backoff so rate-limited keys come back during the run: cap 2 ms, no bucket */
    kc_workqueue_opts o = {
        .name = "stress", .base_delay_ms = 1, .max_delay_ms = 2, .bucket_qps = -1};
    assert_int_equal(kc_workqueue_new(&o, &s.q, NULL), 0);
    pthread_t w[WORKERS], p[PRODUCERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&w[i], NULL, worker, &s);
    for (int i = 0; i < PRODUCERS; i++)
        pthread_create(&p[i], NULL, producer, &s);
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(p[i], NULL);
    /* every delayed add fires (≤ 2 ms each; the timer thread runs on the real clock), then every
     * key's latest generation is seen by a processing; a lost key fails here, after 60 s */
    uint64_t deadline = kc__deadline_after_ms(60000);
    while (kc__workqueue_waiting(s.q) > 0 && kc__now_ns() < deadline)
        sched_yield();
    for (int i = 0; i < KEYS; i++) {
        while (atomic_load(&s.seen[i]) < atomic_load(&s.wanted[i]) && kc__now_ns() < deadline)
            sched_yield();
        assert_true(atomic_load(&s.seen[i]) >= atomic_load(&s.wanted[i]));
    }
    assert_int_equal(kc_workqueue_shutdown_drain(s.q, -1), 0);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(w[i], NULL);
    assert_int_equal(atomic_load(&s.violations), 0);
    for (int i = 0; i < KEYS; i++) {
        assert_int_equal(atomic_load(&s.inflight[i]), 0);
        assert_int_equal(atomic_load(&s.seen[i]), atomic_load(&s.wanted[i]));
        char key[32];
        key_name(key, sizeof(key), i);
        kc_workqueue_forget(s.q, key);
    }
    assert_int_equal(kc_workqueue_len(s.q), 0);
    assert_int_equal(kc__workqueue_records(s.q), 0);
    uint64_t processed = atomic_load(&s.processed);
    assert_true(processed >= KEYS);
    printf("stress: %llu processings for %d adds over %d keys\n", (unsigned long long)processed,
           PRODUCERS * ADDS_PER_PRODUCER, KEYS);
    char *m = kc_workqueue_metrics_text(s.q);
    assert_non_null(strstr(m, "workqueue_depth{name=\"stress\"} 0\n"));
    free(m);
    kc_workqueue_free(s.q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workqueue_stress_workers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
