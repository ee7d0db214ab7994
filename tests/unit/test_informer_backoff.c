/*
 * Unit tests for the reflector's decisions (src/informer/backoff.h), on a virtual clock: the
 * backoff schedule and its reset, which restarts go at once and which back off, Retry-After's cap,
 * and what events mean. Issue 29 points 1-3; the schedule is client-go's reflector backoff
 * (informer-semantics spec §2.1: 800 ms initial, 30 s cap, factor 2, jitter 1.0, reset after 2 min
 * of health). fuzz_reflector checks the same contract on arbitrary sequences.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "informer/backoff.h"

#define MS KC__NS_PER_MS
#define T0 (1000 * KC__NS_PER_SEC)

static kc__backoff defaults(void)
{
    kc__backoff b;
    kc__backoff_init(&b, 800, 30000, 120000, 42);
    return b;
}

/* A watch of `ran_ms` (timeoutSeconds 300) that ended with `end` at `at`. */
static kc__refl_next watch_end(kc__backoff *b, uint64_t at, uint64_t ran_ms, kc__refl_end end)
{
    kc__refl_result r = {.end = end,
                         .started_ns = at - ran_ms * MS,
                         .ended_ns = at,
                         .timeout_ns = 300 * KC__NS_PER_SEC,
                         .retry_after_s = -1};
    return kc__refl_decide(b, &r);
}

static kc__refl_next list_end(kc__backoff *b, uint64_t at, bool at_rv, kc__refl_end end,
                              int64_t retry_after_s)
{
    kc__refl_result r = {.list = true,
                         .list_at_rv = at_rv,
                         .end = end,
                         .started_ns = at - 10 * MS,
                         .ended_ns = at,
                         .retry_after_s = retry_after_s};
    return kc__refl_decide(b, &r);
}

/* Point 1: a watch that closes early after events backs off, doubling from 800 ms to the 30 s
 * cap (jitter 1.0: each wait in [step, 2 × step), capped). */
static void test_backoff_early_closes_double_to_the_cap(void **st)
{
    (void)st;
    kc__backoff b = defaults();
    uint64_t now = T0, step = 800 * MS;
    for (int i = 0; i < 12; i++) {
        kc__refl_next n = watch_end(&b, now, 5, KC__END_OK);
        assert_true(n.stepped);
        assert_false(n.need_list);
        assert_true(n.delay_ns >= step);
        assert_true(n.delay_ns < 2 * step || n.delay_ns == 30000 * MS);
        assert_true(n.delay_ns <= 30000 * MS);
        now += n.delay_ns + 5 * MS;
        step = step * 2 > 30000 * MS ? 30000 * MS : step * 2;
    }
}

/* The steps reset once backoff_reset_ms pass without one. */
static void test_backoff_resets_after_quiet_period(void **st)
{
    (void)st;
    kc__backoff b = defaults();
    uint64_t now = T0;
    for (int i = 0; i < 6; i++)
        now += watch_end(&b, now, 5, KC__END_ERROR).delay_ns;
    assert_true(watch_end(&b, now, 5, KC__END_ERROR).delay_ns >= 25600 * MS);
    now += 120001 * MS;
    kc__refl_next n = watch_end(&b, now, 5, KC__END_ERROR);
    assert_true(n.delay_ns >= 800 * MS && n.delay_ns < 1600 * MS);
}

/* Point 1: a healthy watch — it lasted its timeoutSeconds (or the reset period) — restarts at
 * once, whatever ended it; a 410 there relists at the last RV at once (point 2). */
static void test_backoff_healthy_watch_restarts_at_once(void **st)
{
    (void)st;
    kc__backoff b = defaults();
    kc__refl_next n = watch_end(&b, T0, 300000, KC__END_OK);
    assert_int_equal(n.delay_ns, 0);
    assert_false(n.stepped);
    n = watch_end(&b, T0 + 600 * KC__NS_PER_SEC, 300000, KC__END_GONE);
    assert_int_equal(n.delay_ns, 0);
    assert_true(n.need_list && n.list_at_rv);
    /* a short watch's 410 backs off */
    n = watch_end(&b, T0 + 601 * KC__NS_PER_SEC, 1000, KC__END_GONE);
    assert_true(n.stepped && n.delay_ns >= 800 * MS);
    assert_true(n.need_list && n.list_at_rv);
}

/* Point 2: the server going back in time (a bookmark below the list's RV, too large) relists from
 * scratch, and backs off. */
static void test_backoff_rv_back_relists_from_scratch_backing_off(void **st)
{
    (void)st;
    kc__backoff b = defaults();
    kc__refl_next n = watch_end(&b, T0, 5, KC__END_RV_BACK);
    assert_true(n.need_list);
    assert_false(n.list_at_rv);
    assert_true(n.stepped && n.delay_ns >= 800 * MS);
}

/* Point 2: a list at the last RV that failed with 410 retries at "" at once, once; that list's
 * failure backs off; a complete list goes on to its watch at once without resetting the steps. */
static void test_backoff_list_retry_at_empty_rv_once(void **st)
{
    (void)st;
    kc__backoff b = defaults();
    kc__refl_next n = list_end(&b, T0, true, KC__END_GONE, -1);
    assert_int_equal(n.delay_ns, 0);
    assert_true(n.need_list);
    assert_false(n.list_at_rv);
    n = list_end(&b, T0 + MS, false, KC__END_GONE, -1);
    assert_true(n.stepped && n.delay_ns >= 800 * MS);
    assert_true(n.need_list);
    uint64_t now = T0 + MS + n.delay_ns;
    n = list_end(&b, now, false, KC__END_OK, -1);
    assert_int_equal(n.delay_ns, 0);
    assert_false(n.need_list);
    n = watch_end(&b, now + 5 * MS, 5, KC__END_GONE); /* the second step: 1.6 s */
    assert_true(n.delay_ns >= 1600 * MS);
}

/* Point 3: Retry-After is honoured up to backoff_max_ms: 999999 s waits 30 s, 5 s waits >= 5 s. */
static void test_backoff_retry_after_capped(void **st)
{
    (void)st;
    kc__backoff b = defaults();
    kc__refl_next n = list_end(&b, T0, false, KC__END_ERROR, 999999);
    assert_int_equal(n.delay_ns, 30000 * MS);
    kc__backoff c = defaults();
    n = list_end(&c, T0, false, KC__END_ERROR, 5);
    assert_true(n.delay_ns >= 5000 * MS && n.delay_ns <= 30000 * MS);
}

/* A cancel (stop, range change) is not the server's doing: no step. */
static void test_backoff_cancel_does_not_step(void **st)
{
    (void)st;
    kc__backoff b = defaults();
    kc__refl_next n = watch_end(&b, T0, 5, KC__END_CANCELED);
    assert_int_equal(n.delay_ns, 0);
    assert_int_equal(b.steps, 0);
}

/* What events mean: RV regressions end the stream, initial events go to the batch. */
static void test_backoff_classify_events(void **st)
{
    (void)st;
    assert_int_equal(kc__refl_classify(false, KC_WATCH_BOOKMARK, "10", "5", false, 0),
                     KC__EV_STOP_RV_BACK);
    assert_int_equal(kc__refl_classify(false, KC_WATCH_BOOKMARK, "10", "12", false, 0),
                     KC__EV_BOOKMARK);
    assert_int_equal(kc__refl_classify(false, KC_WATCH_MODIFIED, "10", "9", false, 0),
                     KC__EV_STOP_RV_BACK);
    assert_int_equal(kc__refl_classify(false, KC_WATCH_ADDED, "", "9", false, 0), KC__EV_APPLY);
    assert_int_equal(kc__refl_classify(false, KC_WATCH_ERROR, "10", "", false, KC_EGONE),
                     KC__EV_STOP_GONE);
    assert_int_equal(kc__refl_classify(false, KC_WATCH_ERROR, "10", "", false, KC_ERV_TOO_LARGE),
                     KC__EV_STOP_RV_BACK);
    assert_int_equal(kc__refl_classify(false, 99, "10", "11", false, 0), KC__EV_STOP_ERROR);
    assert_int_equal(kc__refl_classify(true, KC_WATCH_ADDED, "10", "3", false, 0), KC__EV_APPLY);
    assert_int_equal(kc__refl_classify(true, KC_WATCH_DELETED, "", "3", false, 0),
                     KC__EV_STOP_ERROR);
    assert_int_equal(kc__refl_classify(true, KC_WATCH_BOOKMARK, "", "3", false, 0), KC__EV_SKIP);
    assert_int_equal(kc__refl_classify(true, KC_WATCH_BOOKMARK, "", "3", true, 0),
                     KC__EV_INITIAL_END);
    kc_error e = KC_ERROR_INIT;
    e.http_status = 410;
    assert_int_equal(kc__refl_error_code(&e), KC_EGONE);
    e.http_status = 504;
    e.message = "Too large resource version: 12, current: 10";
    assert_int_equal(kc__refl_error_code(&e), KC_ERV_TOO_LARGE);
    assert_int_equal(kc__refl_error_code(NULL), KC_ESERVER);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff_early_closes_double_to_the_cap),
        cmocka_unit_test(test_backoff_resets_after_quiet_period),
        cmocka_unit_test(test_backoff_healthy_watch_restarts_at_once),
        cmocka_unit_test(test_backoff_rv_back_relists_from_scratch_backing_off),
        cmocka_unit_test(test_backoff_list_retry_at_empty_rv_once),
        cmocka_unit_test(test_backoff_retry_after_capped),
        cmocka_unit_test(test_backoff_cancel_does_not_step),
        cmocka_unit_test(test_backoff_classify_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
