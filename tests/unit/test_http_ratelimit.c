/*
 * test_http_ratelimit.c — the token bucket: burst passes at once, the sustained rate stays within
 * 10 % of qps (also with several threads), and a disabled limiter never waits.
 *
 * Timing: load can only make a caller slower, so "never faster than qps + 10 %" is checked on the
 * wall clock (a lower bound on elapsed time: robust). "Never slower than qps - 10 %" is not a
 * wall-clock matter on a loaded 2-core CI VM; it is checked exactly on the limiter's own schedule
 * (test_http_ratelimit_schedule_is_exactly_qps), and the wall-clock tests only keep a generous
 * sanity floor.
 */
#include "http/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

static void test_http_ratelimit_burst_is_free(void **state)
{
    kc__ratelimit rl;
    /* qps 1 (was 10): the 6th reservation waits 1/qps minus the time the loop took, so the lower
     * bound now survives a 500 ms stall instead of 50 ms; the upper bound is exact. */
    assert_int_equal(kc__ratelimit_init(&rl, 1, 5), 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(kc__ratelimit_reserve(&rl), 0);
    uint64_t w = kc__ratelimit_reserve(&rl);
    assert_true(w > 500 * KC__NS_PER_MS && w <= 1000 * KC__NS_PER_MS); /* ~1/qps */
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
    /* upper: exact contract, robust under load; lower: sanity only (see the top comment) */
    if (rate > qps * 1.1 || rate < qps * 0.25)
        fail_msg("rate %.1f/s, want at most %.0f + 10%%", rate, qps);
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
    /* upper: exact contract, robust under load; lower: sanity only (see the top comment) */
    if (rate > qps * 1.1 || rate < qps * 0.25)
        fail_msg("rate %.1f/s with 4 threads, want at most %.0f + 10%%", rate, qps);
    kc__ratelimit_destroy(&rl);
}

/* Each reservation is granted exactly 1/qps after the previous one, however late the caller is:
 * reservation k is due at anchor + (k - anchor_k) / qps, where the anchor is the last reservation
 * granted at once (w == 0: the caller was overdue and the bucket was full). Uses the limiter's own
 * clock reading (last_ns), so it is exact under any load; this is the "not slower than qps" half
 * of the ±10 % requirement. */
static void test_http_ratelimit_schedule_is_exactly_qps(void **state)
{
    const double qps = 200;
    kc__ratelimit rl;
    assert_int_equal(kc__ratelimit_init(&rl, qps, 1), 0);
    uint64_t anchor_ns = 0;
    int anchor_k = 0, reanchors = 0;
    double prev_due = 0;
    for (int k = 0; k < 400; k++) {
        uint64_t w = kc__ratelimit_reserve(&rl);
        if (w == 0) {
            /* granted at once only when its slot had passed */
            assert_true(k == 0 || (double)rl.last_ns >= prev_due + 1e9 / qps - 1000);
            anchor_ns = rl.last_ns;
            anchor_k = k;
            reanchors++;
            prev_due = (double)anchor_ns;
            continue;
        }
        double due = (double)anchor_ns + (double)(k - anchor_k) * 1e9 / qps;
        double at = (double)rl.last_ns + (double)w;
        if (at < due - 1000 || at > due + 1000)
            fail_msg("reservation %d at %+.0f ns from its slot", k, at - due);
        prev_due = due;
    }
    assert_true(reanchors < 400); /* most reservations were queued, not all granted at once */
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
        cmocka_unit_test(test_http_ratelimit_schedule_is_exactly_qps),
        cmocka_unit_test(test_http_ratelimit_disabled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
