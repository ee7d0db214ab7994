/*
 * Unit tests for kc_workqueue's delayed and rate-limited adds (spec §1.2 D1–D4, §1.3 R1–R5), on
 * an injected clock: the test moves time and pumps the delay heap itself
 * (kc__workqueue_pump), so no test sleeps and every delay is checked to the nanosecond. One test
 * (real_timer_thread) runs the queue's own timer thread on the real clock and waits in get.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "workqueue/internal.h"
#include "kcache/workqueue.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS KC__NS_PER_MS

typedef struct fake_clock {
    uint64_t now;
} fake_clock;

static uint64_t fake_now(void *ud)
{
    return __atomic_load_n(&((fake_clock *)ud)->now, __ATOMIC_ACQUIRE);
}

static void advance(fake_clock *c, uint64_t ns)
{
    __atomic_store_n(&c->now, c->now + ns, __ATOMIC_RELEASE);
}

static kc_workqueue *new_fake(const kc_workqueue_opts *o, fake_clock *c)
{
    kc_workqueue *q = NULL;
    assert_int_equal(kc_workqueue_new(o, &q, NULL), 0);
    c->now = 1000 * KC__NS_PER_SEC; /* not 0: catches code that mixes in the real clock */
    kc__workqueue_set_clock(q, fake_now, c);
    return q;
}

static void get_expect(kc_workqueue *q, const char *want)
{
    const char *k = NULL;
    assert_int_equal(kc_workqueue_get(q, 0, &k), 0);
    assert_string_equal(k, want);
}

/* D1: delay 0 adds at once; a positive delay waits, invisible to len (W7, D3). */
static void test_workqueue_delay_d1_waits(void **st)
{
    fake_clock c;
    kc_workqueue *q = new_fake(NULL, &c);
    assert_int_equal(kc_workqueue_add_after(q, "now", 0), 0);
    assert_int_equal(kc_workqueue_len(q), 1);
    assert_int_equal(kc_workqueue_add_after(q, "later", 100), 0);
    assert_int_equal(kc_workqueue_len(q), 1);
    assert_int_equal(kc__workqueue_waiting(q), 1);
    advance(&c, 100 * MS - 1);
    assert_int_equal(kc__workqueue_pump(q), 0);
    assert_int_equal(kc_workqueue_len(q), 1);
    advance(&c, 1);
    assert_int_equal(kc__workqueue_pump(q), 1);
    assert_int_equal(kc_workqueue_len(q), 2);
    get_expect(q, "now");
    get_expect(q, "later");
    kc_workqueue_free(q);
}

/* D2: the earlier ready time wins; a later add_after of a waiting key changes nothing. */
static void test_workqueue_delay_d2_earlier_wins(void **st)
{
    fake_clock c;
    kc_workqueue *q = new_fake(NULL, &c);
    uint64_t t0 = c.now;
    assert_int_equal(kc_workqueue_add_after(q, "a", 100), 0);
    assert_int_equal(kc_workqueue_add_after(q, "a", 50), 0);  /* moves earlier */
    assert_int_equal(kc_workqueue_add_after(q, "a", 200), 0); /* ignored */
    assert_int_equal(kc__workqueue_waiting(q), 1);
    assert_int_equal(kc__workqueue_next_ready(q), t0 + 50 * MS);
    advance(&c, 50 * MS);
    assert_int_equal(kc__workqueue_pump(q), 1);
    get_expect(q, "a");
    assert_int_equal(kc__workqueue_waiting(q), 0);
    kc_workqueue_free(q);
}

/* D3: a delayed add goes through add (W3: a key already dirty stays once); a plain add does not
 * cancel a pending delayed one. */
static void test_workqueue_delay_d3_fires_through_add(void **st)
{
    fake_clock c;
    kc_workqueue *q = new_fake(NULL, &c);
    assert_int_equal(kc_workqueue_add_after(q, "a", 10), 0);
    assert_int_equal(kc_workqueue_add(q, "a"), 0);
    assert_int_equal(kc__workqueue_waiting(q), 1); /* not cancelled */
    assert_int_equal(kc_workqueue_len(q), 1);
    advance(&c, 10 * MS);
    assert_int_equal(kc__workqueue_pump(q), 1);
    assert_int_equal(kc_workqueue_len(q), 1); /* W3: still once */
    get_expect(q, "a");
    assert_int_equal(kc_workqueue_add_after(q, "a", 10), 0); /* fires while processing */
    advance(&c, 10 * MS);
    assert_int_equal(kc__workqueue_pump(q), 1);
    assert_int_equal(kc_workqueue_len(q), 0); /* W4: dirty, not queued, while processing */
    assert_int_equal(kc_workqueue_done(q, "a"), 0);
    get_expect(q, "a");
    kc_workqueue_free(q);
}

/* D4: shutdown drops waiting keys; add_after after shutdown is KC_ESTOPPED. */
static void test_workqueue_delay_d4_shutdown_drops(void **st)
{
    fake_clock c;
    kc_workqueue *q = new_fake(NULL, &c);
    assert_int_equal(kc_workqueue_add_after(q, "a", 10), 0);
    assert_int_equal(kc_workqueue_add_rate_limited(q, "b"), 0);
    assert_int_equal(kc__workqueue_waiting(q), 2);
    kc_workqueue_shutdown(q);
    assert_int_equal(kc__workqueue_waiting(q), 0);
    assert_int_equal(kc__workqueue_records(q), 1); /* b: its failure count is remembered */
    assert_int_equal(kc_workqueue_add_after(q, "a", 10), KC_ESTOPPED);
    advance(&c, 1000 * MS);
    assert_int_equal(kc__workqueue_pump(q), 0);
    const char *k;
    assert_int_equal(kc_workqueue_get(q, 0, &k), KC_ESTOPPED);
    kc_workqueue_free(q);
}

/* The heap keeps order over many keys with moves: pops come out by ready time. */
static void test_workqueue_delay_heap_order(void **st)
{
    fake_clock c;
    kc_workqueue *q = new_fake(NULL, &c);
    enum { N = 2000 };
    static uint64_t ready[N];
    uint64_t s = 12345;
    char key[32];
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < N; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t d = 1 + (s >> 33) % 5000;
            snprintf(key, sizeof(key), "k%d", i);
            assert_int_equal(kc_workqueue_add_after(q, key, d), 0);
            if (round == 0 || d < ready[i])
                ready[i] = d; /* D2 over two rounds */
        }
    assert_int_equal(kc__workqueue_waiting(q), N);
    uint64_t t = 0;
    int seen = 0;
    while (seen < N) {
        advance(&c, MS);
        t++;
        kc__workqueue_pump(q);
        const char *k;
        while (kc_workqueue_get(q, 0, &k) == 0) {
            int i = atoi(k + 1);
            assert_int_equal(ready[i], t); /* fired exactly at its time */
            assert_int_equal(kc_workqueue_done(q, k), 0);
            seen++;
        }
    }
    assert_int_equal(kc__workqueue_records(q), 0);
    kc_workqueue_free(q);
}

/* The queue's own timer thread, real clock: keys come out of get in ready-time order. */
static void test_workqueue_delay_real_timer_thread(void **st)
{
    kc_workqueue *q = NULL;
    assert_int_equal(kc_workqueue_new(NULL, &q, NULL), 0);
    assert_int_equal(kc_workqueue_add_after(q, "second", 60), 0);
    assert_int_equal(kc_workqueue_add_after(q, "first", 20), 0);
    const char *k;
    assert_int_equal(kc_workqueue_get(q, 10000, &k), 0);
    assert_string_equal(k, "first");
    assert_int_equal(kc_workqueue_done(q, k), 0);
    assert_int_equal(kc_workqueue_get(q, 10000, &k), 0);
    assert_string_equal(k, "second");
    assert_int_equal(kc_workqueue_done(q, k), 0);
    kc_workqueue_free(q);
}

/* Threads of this process (entries of /proc/self/task). */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    int n = 0;
    for (struct dirent *de; (de = readdir(d));)
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

/* One timer thread per queue, never a thread per delayed key: 1,000 waiting keys add none.
 * (Counts compare with <=: a thread joined by an earlier test may still leave /proc briefly.) */
static void test_workqueue_delay_one_timer_thread(void **st)
{
    kc_workqueue *q = NULL;
    assert_int_equal(kc_workqueue_new(NULL, &q, NULL), 0);
    int with_queue = thread_count();
    assert_true(with_queue >= 2); /* this thread and the queue's timer */
    char key[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        assert_int_equal(kc_workqueue_add_after(q, key, 60000 + (uint64_t)i), 0);
    }
    assert_int_equal(kc__workqueue_waiting(q), 1000);
    assert_true(thread_count() <= with_queue);
    kc_workqueue_free(q);
}

/* The delay add_rate_limited gave key, then let it fire and process it (done). */
static uint64_t fail_once(kc_workqueue *q, fake_clock *c, const char *key)
{
    uint64_t t0 = c->now;
    assert_int_equal(kc_workqueue_add_rate_limited(q, key), 0);
    uint64_t d = kc__workqueue_next_ready(q) - t0;
    advance(c, d);
    assert_int_equal(kc__workqueue_pump(q), 1);
    get_expect(q, key);
    assert_int_equal(kc_workqueue_done(q, key), 0);
    return d;
}

/* R2, R5: the per-key delay doubles from 5 ms: 5, 10, 20 … ms; the 18th failure waits 655.36 s,
 * the 19th and later 1000 s; num_requeues counts them. (Bucket off to see this half alone.) */
static void test_workqueue_limit_r2_exponential(void **st)
{
    fake_clock c;
    kc_workqueue_opts o = {.bucket_qps = -1};
    kc_workqueue *q = new_fake(&o, &c);
    for (int n = 0; n < 25; n++) {
        assert_int_equal(kc_workqueue_num_requeues(q, "a"), n);
        uint64_t d = fail_once(q, &c, "a");
        uint64_t want = n < 18 ? (5 * MS) << n : 1000 * KC__NS_PER_SEC;
        assert_int_equal(d, want);
    }
    assert_int_equal(kc_workqueue_num_requeues(q, "a"), 25);
    assert_int_equal(kc_workqueue_num_requeues(q, "other"), 0);
    kc_workqueue_free(q);
}

/* R2: a cap that base·2^n cannot reach before 64 doublings still caps (no overflow). */
static void test_workqueue_limit_r2_overflow_caps(void **st)
{
    fake_clock c;
    kc_workqueue_opts o = {
        .base_delay_ms = 1, .max_delay_ms = UINT64_MAX / KC__NS_PER_MS, .bucket_qps = -1};
    kc_workqueue *q = new_fake(&o, &c);
    uint64_t t0 = c.now;
    for (int n = 0; n < 70; n++)
        assert_int_equal(kc_workqueue_add_rate_limited(q, "a"), 0);
    /* D2 keeps the first (earliest) delay: 1 ms; the count still went to 70 */
    assert_int_equal(kc__workqueue_next_ready(q), t0 + MS);
    assert_int_equal(kc_workqueue_num_requeues(q, "a"), 70);
    kc_workqueue_free(q);
}

/* R1: forget resets the count (the next delay is the base again) and does not replace done. */
static void test_workqueue_limit_r1_forget(void **st)
{
    fake_clock c;
    kc_workqueue_opts o = {.bucket_qps = -1};
    kc_workqueue *q = new_fake(&o, &c);
    for (int n = 0; n < 3; n++)
        fail_once(q, &c, "a");
    assert_int_equal(kc_workqueue_num_requeues(q, "a"), 3);
    assert_int_equal(kc_workqueue_add(q, "a"), 0);
    get_expect(q, "a");
    assert_int_equal(kc_workqueue_forget(q, "a"), 0);
    assert_int_equal(kc_workqueue_num_requeues(q, "a"), 0);
    assert_int_equal(kc_workqueue_add(q, "a"), 0); /* still processing: dirty, not queued */
    assert_int_equal(kc_workqueue_len(q), 0);
    assert_int_equal(kc_workqueue_done(q, "a"), 0);
    get_expect(q, "a");
    assert_int_equal(kc_workqueue_done(q, "a"), 0);
    assert_int_equal(fail_once(q, &c, "a"), 5 * MS);
    assert_int_equal(kc_workqueue_forget(q, "a"), 0);
    assert_int_equal(kc_workqueue_forget(q, "unknown"), 0);
    assert_int_equal(kc__workqueue_records(q), 0);
    kc_workqueue_free(q);
}

/* R3, R5: the bucket (10/s, burst 100) lets 100 adds through at the per-key delay, then spaces
 * them 100 ms apart; a second later 10 tokens are back. */
static void test_workqueue_limit_r3_bucket(void **st)
{
    fake_clock c;
    kc_workqueue *q = new_fake(NULL, &c); /* the default limiter */
    uint64_t t0 = c.now;
    char key[32];
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        assert_int_equal(kc_workqueue_add_rate_limited(q, key), 0);
    }
    assert_int_equal(kc__workqueue_next_ready(q), t0 + 5 * MS); /* per-key base wins */
    assert_int_equal(kc_workqueue_add_rate_limited(q, "k100"), 0);
    assert_int_equal(kc_workqueue_add_rate_limited(q, "k101"), 0);
    advance(&c, 5 * MS);
    assert_int_equal(kc__workqueue_pump(q), 100);
    assert_int_equal(kc__workqueue_next_ready(q), t0 + 100 * MS);
    advance(&c, 95 * MS);
    assert_int_equal(kc__workqueue_pump(q), 1);
    assert_int_equal(kc__workqueue_next_ready(q), t0 + 200 * MS);
    advance(&c, 100 * MS);
    assert_int_equal(kc__workqueue_pump(q), 1);
    /* at t0+200ms the balance is 0 (two tokens borrowed, 2 refilled); a second later 10 */
    advance(&c, 1000 * MS);
    uint64_t t1 = c.now;
    for (int i = 0; i < 10; i++) {
        snprintf(key, sizeof(key), "late%d", i);
        assert_int_equal(kc_workqueue_add_rate_limited(q, key), 0);
    }
    assert_int_equal(kc__workqueue_next_ready(q), t1 + 5 * MS);
    assert_int_equal(kc_workqueue_add_rate_limited(q, "late10"), 0);
    advance(&c, 5 * MS);
    assert_int_equal(kc__workqueue_pump(q), 10);
    assert_int_equal(kc__workqueue_next_ready(q), t1 + 100 * MS);
    kc_workqueue_free(q);
}

/* R4: the bucket spends its token even when the per-key delay is the larger one. */
static void test_workqueue_limit_r4_max_spends_token(void **st)
{
    fake_clock c;
    kc_workqueue_opts o = {
        .base_delay_ms = 3000, .max_delay_ms = 3000, .bucket_qps = 1, .bucket_burst = 1};
    kc_workqueue *q = new_fake(&o, &c);
    uint64_t t0 = c.now;
    assert_int_equal(kc_workqueue_add_rate_limited(q, "a"), 0); /* 3 s from the key; token spent */
    assert_int_equal(kc__workqueue_next_ready(q), t0 + 3000 * MS);
    kc_workqueue_opts o2 = {
        .base_delay_ms = 1, .max_delay_ms = 1, .bucket_qps = 1, .bucket_burst = 1};
    kc_workqueue_free(q);
    q = new_fake(&o2, &c);
    t0 = c.now;
    assert_int_equal(kc_workqueue_add_rate_limited(q, "a"), 0); /* 1 ms (key) vs 0 (token) */
    assert_int_equal(kc_workqueue_add_rate_limited(q, "b"), 0); /* bucket empty: 1 s */
    advance(&c, MS);
    assert_int_equal(kc__workqueue_pump(q), 1);
    assert_int_equal(kc__workqueue_next_ready(q), t0 + 1000 * MS);
    kc_workqueue_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workqueue_delay_d1_waits),
        cmocka_unit_test(test_workqueue_delay_d2_earlier_wins),
        cmocka_unit_test(test_workqueue_delay_d3_fires_through_add),
        cmocka_unit_test(test_workqueue_delay_d4_shutdown_drops),
        cmocka_unit_test(test_workqueue_delay_heap_order),
        cmocka_unit_test(test_workqueue_delay_real_timer_thread),
        cmocka_unit_test(test_workqueue_delay_one_timer_thread),
        cmocka_unit_test(test_workqueue_limit_r2_exponential),
        cmocka_unit_test(test_workqueue_limit_r2_overflow_caps),
        cmocka_unit_test(test_workqueue_limit_r1_forget),
        cmocka_unit_test(test_workqueue_limit_r3_bucket),
        cmocka_unit_test(test_workqueue_limit_r4_max_spends_token),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
