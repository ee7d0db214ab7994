/* test_core_time.c — monotonic clock, deadlines, monotonic condvar waits. */
#include "core/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_core_time_now_is_monotonic_and_consistent(void **state)
{
    uint64_t a = kc__now_ns();
    uint64_t ms = kc__now_ms();
    uint64_t b = kc__now_ns();
    assert_true(b >= a);
    assert_true(ms >= a / KC__NS_PER_MS && ms <= b / KC__NS_PER_MS);
    assert_true(kc__wall_ms() > 1600000000000ull); /* after 2020 */
}

static void test_core_time_deadline_after_ms(void **state)
{
    uint64_t now = kc__now_ns();
    uint64_t d = kc__deadline_after_ms(1000);
    assert_true(d >= now + 1000 * KC__NS_PER_MS);
    assert_true(d < now + 2000 * KC__NS_PER_MS);
    assert_true(kc__deadline_left_ns(d) <= 1000 * KC__NS_PER_MS);
    assert_true(kc__deadline_left_ns(d) > 0);
    assert_int_equal(kc__deadline_after_ms(-1), KC__DEADLINE_NEVER);
    assert_int_equal(kc__deadline_after_ms(INT64_MAX), KC__DEADLINE_NEVER);
    assert_int_equal(kc__deadline_left_ns(now - 1), 0);
}

static void test_core_time_deadline_timespec_splits_ns(void **state)
{
    struct timespec ts = kc__deadline_timespec(3 * KC__NS_PER_SEC + 250);
    assert_int_equal(ts.tv_sec, 3);
    assert_int_equal(ts.tv_nsec, 250);
    ts = kc__deadline_timespec(KC__DEADLINE_NEVER);
    assert_true(ts.tv_sec > 0);
    assert_true(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000);
}

static void test_core_time_cond_wait_until_times_out(void **state)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c;
    assert_int_equal(kc__cond_init_monotonic(&c), 0);
    uint64_t start = kc__now_ns();
    uint64_t deadline = start + 20 * KC__NS_PER_MS;
    int rc = 0;
    pthread_mutex_lock(&m);
    while (rc == 0) /* no one signals: spurious wake-ups loop until the deadline */
        rc = kc__cond_wait_until(&c, &m, deadline);
    pthread_mutex_unlock(&m);
    assert_int_equal(rc, KC_ETIMEOUT);
    assert_true(kc__now_ns() >= deadline);
    pthread_cond_destroy(&c);
}

struct waker {
    pthread_mutex_t m;
    pthread_cond_t c;
    bool flag;
};

static void *wake_thread(void *arg)
{
    struct waker *w = arg;
    pthread_mutex_lock(&w->m);
    w->flag = true;
    pthread_cond_signal(&w->c);
    pthread_mutex_unlock(&w->m);
    return NULL;
}

static void test_core_time_cond_wait_until_wakes_on_signal(void **state)
{
    struct waker w = {.m = PTHREAD_MUTEX_INITIALIZER, .flag = false};
    assert_int_equal(kc__cond_init_monotonic(&w.c), 0);
    pthread_t t;
    uint64_t deadline = kc__deadline_after_ms(30000);
    pthread_mutex_lock(&w.m);
    assert_int_equal(pthread_create(&t, NULL, wake_thread, &w), 0);
    int rc = 0;
    while (!w.flag && rc == 0)
        rc = kc__cond_wait_until(&w.c, &w.m, deadline);
    pthread_mutex_unlock(&w.m);
    pthread_join(t, NULL);
    assert_int_equal(rc, 0);
    assert_true(w.flag);
    assert_true(kc__now_ns() < deadline);
    pthread_cond_destroy(&w.c);
}

static void test_core_time_sleep_lasts_at_least(void **state)
{
    uint64_t a = kc__now_ns();
    kc__sleep_ns(2 * KC__NS_PER_MS);
    assert_true(kc__now_ns() - a >= 2 * KC__NS_PER_MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_time_now_is_monotonic_and_consistent),
        cmocka_unit_test(test_core_time_deadline_after_ms),
        cmocka_unit_test(test_core_time_deadline_timespec_splits_ns),
        cmocka_unit_test(test_core_time_cond_wait_until_times_out),
        cmocka_unit_test(test_core_time_cond_wait_until_wakes_on_signal),
        cmocka_unit_test(test_core_time_sleep_lasts_at_least),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
