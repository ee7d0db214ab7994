/* test_core_rv.c — resourceVersion comparison per KEP-5504 (informer-semantics §c, §6.1). */
#include "kcache/rv.h"
#include "kcache/error.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_core_rv_canonical_accepts_plain_decimals(void **state)
{
    assert_true(kc_rv_is_canonical("1"));
    assert_true(kc_rv_is_canonical("9"));
    assert_true(kc_rv_is_canonical("10"));
    assert_true(kc_rv_is_canonical("123456789012345678901234567890123456789"));
}

static void test_core_rv_canonical_rejects_reserved_and_malformed(void **state)
{
    const char *bad[] = {"",   "0",  "00", "007", "-1",   "+1", "1a",
                         "a1", " 1", "1 ", "1.0", "0x1f", "１"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (kc_rv_is_canonical(bad[i]))
            fail_msg("\"%s\" must not be canonical", bad[i]);
    assert_false(kc_rv_is_canonical(NULL));
}

static void test_core_rv_compare_by_length_first(void **state)
{
    assert_int_equal(kc_rv_compare("9", "10"), KC_RV_LESS);
    assert_int_equal(kc_rv_compare("10", "9"), KC_RV_GREATER);
    assert_int_equal(kc_rv_compare("99999", "100000"), KC_RV_LESS);
}

static void test_core_rv_compare_same_length_by_digits(void **state)
{
    assert_int_equal(kc_rv_compare("123", "124"), KC_RV_LESS);
    assert_int_equal(kc_rv_compare("200", "199"), KC_RV_GREATER);
    assert_int_equal(kc_rv_compare("42", "42"), KC_RV_EQUAL);
}

static void test_core_rv_compare_huge_values_beyond_64_bits(void **state)
{
    /* 40 digits: beyond uint64 and the 2^128-1 conformance bound; still ordered. */
    const char *a = "1234567890123456789012345678901234567890";
    const char *b = "1234567890123456789012345678901234567891";
    assert_int_equal(kc_rv_compare(a, b), KC_RV_LESS);
    assert_int_equal(kc_rv_compare(b, a), KC_RV_GREATER);
    assert_int_equal(kc_rv_compare(a, a), KC_RV_EQUAL);
    assert_int_equal(kc_rv_compare("18446744073709551615", "18446744073709551616"), KC_RV_LESS);
    assert_int_equal(kc_rv_compare("99", a), KC_RV_LESS);
}

static void test_core_rv_compare_incomparable(void **state)
{
    assert_int_equal(kc_rv_compare("", "1"), KC_RV_NOT_COMPARABLE);
    assert_int_equal(kc_rv_compare("1", ""), KC_RV_NOT_COMPARABLE);
    assert_int_equal(kc_rv_compare("0", "1"), KC_RV_NOT_COMPARABLE);
    assert_int_equal(kc_rv_compare("007", "7"), KC_RV_NOT_COMPARABLE);
    assert_int_equal(kc_rv_compare("-1", "1"), KC_RV_NOT_COMPARABLE);
    assert_int_equal(kc_rv_compare("1a", "1"), KC_RV_NOT_COMPARABLE);
    assert_int_equal(kc_rv_compare("abc", "abc"), KC_RV_NOT_COMPARABLE); /* even when equal */
    assert_int_equal(kc_rv_compare(NULL, "1"), KC_RV_NOT_COMPARABLE);
    assert_int_equal(kc_rv_compare("1", NULL), KC_RV_NOT_COMPARABLE);
    assert_int_equal(kc_rv_compare(NULL, NULL), KC_RV_NOT_COMPARABLE);
}

static void test_core_rv_parse_values(void **state)
{
    uint64_t v = 0;
    assert_int_equal(kc_rv_parse("1", &v, NULL), 0);
    assert_int_equal(v, 1);
    assert_int_equal(kc_rv_parse("1234567", &v, NULL), 0);
    assert_int_equal(v, 1234567);
    assert_int_equal(kc_rv_parse("18446744073709551615", &v, NULL), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(kc_rv_parse("1", NULL, NULL), KC_EINVAL); /* never a crash */
}

static void test_core_rv_parse_overflow_is_too_large(void **state)
{
    uint64_t v = 5;
    assert_int_equal(kc_rv_parse("18446744073709551616", &v, NULL), KC_ETOOLARGE);
    assert_int_equal(kc_rv_parse("99999999999999999999", &v, NULL), KC_ETOOLARGE);
    assert_int_equal(kc_rv_parse("1234567890123456789012345678901234567890", &v, NULL),
                     KC_ETOOLARGE);
    assert_int_equal(v, 5); /* untouched */
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_rv_parse("18446744073709551616", &v, &e), KC_ETOOLARGE);
    assert_int_equal(e.code, KC_ETOOLARGE);
    assert_non_null(strstr(e.message, "does not fit 64 bits"));
    kc_error_clear(&e);
}

static void test_core_rv_parse_rejects_non_canonical(void **state)
{
    uint64_t v = 5;
    const char *bad[] = {"", "0", "007", "-1", "1a", " 1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(kc_rv_parse(bad[i], &v, NULL), KC_ENOT_COMPARABLE);
    assert_int_equal(kc_rv_parse(NULL, &v, NULL), KC_ENOT_COMPARABLE);
    assert_int_equal(v, 5);
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_rv_parse("007", &v, &e), KC_ENOT_COMPARABLE);
    assert_non_null(strstr(e.message, "\"007\" is not a canonical decimal"));
    kc_error_clear(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_rv_canonical_accepts_plain_decimals),
        cmocka_unit_test(test_core_rv_canonical_rejects_reserved_and_malformed),
        cmocka_unit_test(test_core_rv_compare_by_length_first),
        cmocka_unit_test(test_core_rv_compare_same_length_by_digits),
        cmocka_unit_test(test_core_rv_compare_huge_values_beyond_64_bits),
        cmocka_unit_test(test_core_rv_compare_incomparable),
        cmocka_unit_test(test_core_rv_parse_values),
        cmocka_unit_test(test_core_rv_parse_overflow_is_too_large),
        cmocka_unit_test(test_core_rv_parse_rejects_non_canonical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
