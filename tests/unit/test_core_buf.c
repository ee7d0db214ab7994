/* test_core_buf.c — kc__buf: append, printf, reserve, ceiling (KC_ETOOLARGE), consume, steal. */
#include "core/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_core_buf_append_keeps_nul_terminated(void **state)
{
    kc__buf b = KC__BUF_INIT(0);
    assert_int_equal(kc__buf_append(&b, "ab", 2), 0);
    assert_int_equal(kc__buf_append_str(&b, "cd"), 0);
    assert_int_equal(kc__buf_append_char(&b, 'e'), 0);
    assert_int_equal(b.len, 5);
    assert_string_equal(b.data, "abcde");
    kc__buf_free(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
}

static void test_core_buf_printf_appends_long_output(void **state)
{
    kc__buf b = KC__BUF_INIT(0);
    assert_int_equal(kc__buf_printf(&b, "x=%d ", 42), 0);
    char big[1000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(kc__buf_printf(&b, "%s|%s", big, "end"), 0);
    assert_int_equal(b.len, 5 + 999 + 4);
    assert_memory_equal(b.data, "x=42 zz", 7);
    assert_string_equal(b.data + b.len - 4, "|end");
    kc__buf_free(&b);
}

static void test_core_buf_ceiling_is_enforced_and_buffer_unchanged(void **state)
{
    kc__buf b = KC__BUF_INIT(8);
    assert_int_equal(kc__buf_append(&b, "12345678", 8), 0);
    assert_int_equal(kc__buf_append_char(&b, '9'), KC_ETOOLARGE);
    assert_int_equal(b.len, 8);
    assert_string_equal(b.data, "12345678");
    assert_int_equal(kc__buf_printf(&b, "%d", 1), KC_ETOOLARGE);
    assert_string_equal(b.data, "12345678");
    assert_true(b.cap <= 9);
    kc__buf_free(&b);
}

static void test_core_buf_reserve_overflow_is_too_large(void **state)
{
    kc__buf b = KC__BUF_INIT(SIZE_MAX);
    assert_int_equal(kc__buf_append(&b, "a", 1), 0);
    assert_int_equal(kc__buf_reserve(&b, SIZE_MAX), KC_ETOOLARGE);
    kc__buf_free(&b);
}

static void test_core_buf_default_max_applies(void **state)
{
    kc__buf b;
    kc__buf_init(&b, 0);
    assert_int_equal(kc__buf_reserve(&b, KC__BUF_DEFAULT_MAX + 1), KC_ETOOLARGE);
    assert_null(b.data);
}

static void test_core_buf_consume_and_truncate(void **state)
{
    kc__buf b = KC__BUF_INIT(0);
    assert_int_equal(kc__buf_append_str(&b, "line1\nline2\n"), 0);
    kc__buf_consume(&b, 6);
    assert_string_equal(b.data, "line2\n");
    kc__buf_truncate(&b, 5);
    assert_string_equal(b.data, "line2");
    kc__buf_truncate(&b, 100);
    assert_int_equal(b.len, 5);
    kc__buf_consume(&b, 99);
    assert_int_equal(b.len, 0);
    assert_string_equal(b.data, "");
    kc__buf_free(&b);
}

static void test_core_buf_reset_keeps_memory(void **state)
{
    kc__buf b = KC__BUF_INIT(0);
    assert_int_equal(kc__buf_append_str(&b, "hello"), 0);
    char *p = b.data;
    kc__buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_ptr_equal(b.data, p);
    assert_string_equal(b.data, "");
    kc__buf_free(&b);
}

static void test_core_buf_steal_hands_over_and_empties(void **state)
{
    kc__buf b = KC__BUF_INIT(0);
    size_t n = 99;
    char *s = kc__buf_steal(&b, &n);
    assert_non_null(s);
    assert_string_equal(s, "");
    assert_int_equal(n, 0);
    free(s);
    assert_int_equal(kc__buf_append_str(&b, "data"), 0);
    s = kc__buf_steal(&b, &n);
    assert_string_equal(s, "data");
    assert_int_equal(n, 4);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    free(s);
}

static void test_core_buf_grows_through_many_appends(void **state)
{
    kc__buf b = KC__BUF_INIT(1 << 20);
    for (int i = 0; i < 10000; i++)
        assert_int_equal(kc__buf_printf(&b, "%04d", i % 10000), 0);
    assert_int_equal(b.len, 40000);
    assert_memory_equal(b.data + 4 * 1234, "1234", 4);
    kc__buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_buf_append_keeps_nul_terminated),
        cmocka_unit_test(test_core_buf_printf_appends_long_output),
        cmocka_unit_test(test_core_buf_ceiling_is_enforced_and_buffer_unchanged),
        cmocka_unit_test(test_core_buf_reserve_overflow_is_too_large),
        cmocka_unit_test(test_core_buf_default_max_applies),
        cmocka_unit_test(test_core_buf_consume_and_truncate),
        cmocka_unit_test(test_core_buf_reset_keeps_memory),
        cmocka_unit_test(test_core_buf_steal_hands_over_and_empties),
        cmocka_unit_test(test_core_buf_grows_through_many_appends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
