/*
 * test_core_fence.c — kc_fence (kcache/fence.h, spec L12a): closed when new, valid strictly
 * before its valid-until on CLOCK_MONOTONIC, KC_EFENCED after (with its kc_strerror text), NULL
 * handling. No clock is waited on: deadlines are set in the past or far in the future.
 */
#include "core/internal.h"
#include "kcache/fence.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static void test_fence_states(void **state)
{
    (void)state;
    kc_fence *f = NULL;
    assert_int_equal(kc_fence_new(&f, NULL), 0);
    assert_false(kc_fence_valid(f)); /* closed when new */
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_fence_check(f, &e), KC_EFENCED);
    assert_non_null(strstr(e.message, "no lease"));
    kc_error_clear(&e);
    uint64_t now = kc_fence_now_ns();
    kc_fence_set_valid_until(f, now + 3600 * KC__NS_PER_SEC);
    assert_true(kc_fence_valid(f));
    assert_int_equal(kc_fence_check(f, NULL), 0);
    assert_int_equal(kc_fence_valid_until(f), now + 3600 * KC__NS_PER_SEC);
    kc_fence_set_valid_until(f, now); /* already passed */
    assert_false(kc_fence_valid(f));
    assert_int_equal(kc_fence_check(f, &e), KC_EFENCED);
    assert_non_null(strstr(e.message, "passed"));
    kc_error_clear(&e);
    kc_fence_set_valid_until(f, 0);
    assert_int_equal(kc_fence_valid_until(f), 0);
    kc_fence_free(f);
}

static void test_fence_null_and_code(void **state)
{
    (void)state;
    assert_int_equal(kc_fence_new(NULL, NULL), KC_EINVAL);
    assert_false(kc_fence_valid(NULL));
    assert_int_equal(kc_fence_valid_until(NULL), 0);
    assert_int_equal(kc_fence_check(NULL, NULL), KC_EINVAL);
    kc_fence_set_valid_until(NULL, 1);
    kc_fence_free(NULL);
    assert_int_equal(KC_EFENCED, -31); /* appended at the end of the table: codes are stable */
    assert_string_equal(kc_strerror(KC_EFENCED), "fenced: the local lease deadline passed");
    assert_string_equal(kc_errno_name(KC_EFENCED), "KC_EFENCED");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fence_states),
        cmocka_unit_test(test_fence_null_and_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
