/*
 * test_http_ratelimit.c — the token bucket: burst passes at once, the sustained rate stays within
 * 10 % of qps (also with several threads), and a disabled limiter never waits.
 */
#include "http/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

static void test_http_ratelimit_burst_is_free(void **state)
{
    kc__ratelimit rl;
    assert_int_equal(kc__ratelimit_init(&rl, 10, 5), 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(kc__ratelimit_reserve(&rl), 0);
    uint64_t w = kc__ratelimit_reserve(&rl);
    assert_true(w > 50 * KC__NS_PER_MS && w <= 100 * KC__NS_PER_MS); /* ~1/qps */
    kc__ratelimit_destroy(&rl);
}

static void test_http_ratelimit_holds_qps_within_10_percent(void **state)
{
    const double qps = 200;
    const int n = 200;
    kc__ratelimit rl;
    assert_int_equal(kc__ratelimit_init(&rl, qps, 1), 0);
    kc__ratelimit_wait(&rl); /* spend the burst */
    uint64_t t0 = kc__now_ns();
    for (int i = 0; i < n; i++)
        kc__ratelimit_wait(&rl);
    double secs = (double)(kc__now_ns() - t0) / 1e9;
    double rate = n / secs;
    if (rate > qps * 1.1 || rate < qps * 0.9)
        fail_msg("rate %.1f/s, want %.0f ± 10%%", rate, qps);
    kc__ratelimit_destroy(&rl);
}

typedef struct {
    kc__ratelimit *rl;
    int n;
} worker_arg;

static void *worker(void *p)
{
    worker_arg *a = p;
    for (int i = 0; i < a->n; i++)
        kc__ratelimit_wait(a->rl);
    return NULL;
}

static void test_http_ratelimit_shared_by_threads(void **state)
{
    const double qps = 200;
    kc__ratelimit rl;
    assert_int_equal(kc__ratelimit_init(&rl, qps, 1), 0);
    kc__ratelimit_wait(&rl);
    pthread_t th[4];
    worker_arg a = {&rl, 50};
    uint64_t t0 = kc__now_ns();
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, worker, &a), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    double rate = 200 / ((double)(kc__now_ns() - t0) / 1e9);
    if (rate > qps * 1.1 || rate < qps * 0.9)
        fail_msg("rate %.1f/s with 4 threads, want %.0f ± 10%%", rate, qps);
    kc__ratelimit_destroy(&rl);
}

static void test_http_ratelimit_disabled(void **state)
{
    kc__ratelimit rl;
    assert_int_equal(kc__ratelimit_init(&rl, -1, 1), 0);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(kc__ratelimit_reserve(&rl), 0);
    kc__ratelimit_destroy(&rl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_ratelimit_burst_is_free),
        cmocka_unit_test(test_http_ratelimit_holds_qps_within_10_percent),
        cmocka_unit_test(test_http_ratelimit_shared_by_threads),
        cmocka_unit_test(test_http_ratelimit_disabled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
