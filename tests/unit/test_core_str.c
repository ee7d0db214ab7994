/* test_core_str.c — kc__strdup_n, kc__streq, kc__streq_n, kc__starts_with, checked arithmetic. */
#include "core/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_core_str_strdup_n_copies_span(void **state)
{
    char *s = kc__strdup_n("hello world", 5);
    assert_string_equal(s, "hello");
    free(s);
    s = kc__strdup_n("", 0);
    assert_string_equal(s, "");
    free(s);
    s = kc__strdup_n(NULL, 0);
    assert_non_null(s);
    assert_string_equal(s, "");
    free(s);
    assert_null(kc__strdup_n(NULL, 3));
}

static void test_core_str_strdup_null_is_null(void **state)
{
    assert_null(kc__strdup(NULL));
    char *s = kc__strdup("x");
    assert_string_equal(s, "x");
    free(s);
}

static void test_core_str_streq_handles_null(void **state)
{
    assert_true(kc__streq(NULL, NULL));
    assert_false(kc__streq("a", NULL));
    assert_false(kc__streq(NULL, "a"));
    assert_true(kc__streq("abc", "abc"));
    assert_false(kc__streq("abc", "abd"));
    assert_false(kc__streq("abc", "ab"));
}

static void test_core_str_streq_n_compares_span(void **state)
{
    assert_true(kc__streq_n("abcdef", 3, "abc"));
    assert_false(kc__streq_n("abcdef", 3, "abcd"));
    assert_false(kc__streq_n("abcdef", 4, "abc"));
    assert_true(kc__streq_n("", 0, ""));
    assert_true(kc__streq_n(NULL, 0, ""));
    assert_false(kc__streq_n("abc", 3, NULL));
}

static void test_core_str_starts_with(void **state)
{
    assert_true(kc__starts_with("Bearer x", "Bearer "));
    assert_false(kc__starts_with("Bear", "Bearer"));
    assert_true(kc__starts_with("x", ""));
    assert_false(kc__starts_with(NULL, "x"));
}

static void test_core_str_checked_arithmetic_detects_overflow(void **state)
{
    size_t r = 7;
    assert_true(kc__size_add(1, 2, &r));
    assert_int_equal(r, 3);
    assert_false(kc__size_add(SIZE_MAX, 1, &r));
    assert_int_equal(r, 3);
    assert_true(kc__size_mul(6, 7, &r));
    assert_int_equal(r, 42);
    assert_false(kc__size_mul(SIZE_MAX / 2 + 1, 2, &r));
    assert_int_equal(r, 42);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_str_strdup_n_copies_span),
        cmocka_unit_test(test_core_str_strdup_null_is_null),
        cmocka_unit_test(test_core_str_streq_handles_null),
        cmocka_unit_test(test_core_str_streq_n_compares_span),
        cmocka_unit_test(test_core_str_starts_with),
        cmocka_unit_test(test_core_str_checked_arithmetic_detects_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
