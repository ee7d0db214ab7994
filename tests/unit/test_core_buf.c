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

/* A huge buffer (the pager's page buffers) maps a capacity of 2 MiB or more 2 MiB-aligned in whole
 * 2 MiB; growth keeps the contents, free keeps the mark, steal hands over malloc'd memory. */
static void test_core_buf_huge_maps_aligned_and_keeps_contents(void **state)
{
    const size_t mib2 = (size_t)2 << 20;
    kc__buf b = KC__BUF_INIT(0);
    b.huge = true;
    assert_int_equal(kc__buf_append_str(&b, "head"), 0);
    assert_false(b.mapped); /* small: malloc's */
    assert_int_equal(kc__buf_reserve_populated(&b, 3 << 20), 0);
    assert_true(b.mapped);
    assert_int_equal((uintptr_t)b.data % mib2, 0);
    assert_int_equal(b.cap % mib2, 0);
    assert_true(b.cap >= 4 + ((size_t)3 << 20) + 1);
    assert_string_equal(b.data, "head");
    memset(b.data + b.len, 'x', (size_t)3 << 20); /* every byte of the room is writable */
    b.len += (size_t)3 << 20;
    b.data[b.len] = '\0';
    size_t cap = b.cap;
    assert_int_equal(kc__buf_append(&b, "tail", 4), 0); /* within the capacity: same mapping */
    assert_int_equal(b.cap, cap);
    assert_int_equal(kc__buf_reserve(&b, cap), 0); /* beyond it: the mapping moves, contents kept */
    assert_true(b.mapped);
    assert_true(b.cap >= 2 * cap);
    assert_memory_equal(b.data, "headxx", 6);
    assert_string_equal(b.data + b.len - 5, "xtail");
    size_t len = b.len, n = 0;
    char *s = kc__buf_steal(&b, &n);
    assert_non_null(s);
    assert_int_equal(n, len);
    assert_string_equal(s + n - 4, "tail");
    free(s); /* malloc'd: a mapping would crash free() */
    assert_false(b.mapped);
    assert_null(b.data);
    assert_int_equal(kc__buf_reserve_populated(&b, 5 << 20), 0);
    assert_true(b.mapped);
    assert_int_equal(b.cap, (size_t)6 << 20); /* a known size: 2 MiB-rounded, not doubled */
    kc__buf_free(&b);
    assert_true(b.huge); /* the owner's mark survives */
    assert_false(b.mapped);
    assert_null(b.data);
}

/* An unmarked buffer never maps, however large; the ceiling still holds for a huge one. */
static void test_core_buf_huge_only_when_marked_and_bounded(void **state)
{
    kc__buf b = KC__BUF_INIT(0);
    assert_int_equal(kc__buf_reserve_populated(&b, 3 << 20), 0);
    assert_false(b.mapped);
    kc__buf_free(&b);
    kc__buf h = KC__BUF_INIT(3 << 20);
    h.huge = true;
    assert_int_equal(kc__buf_reserve_populated(&h, (3 << 20) + 1), KC_ETOOLARGE);
    assert_null(h.data); /* unchanged on failure */
    assert_int_equal(kc__buf_reserve_populated(&h, 3 << 20), 0);
    assert_true(h.mapped);
    kc__buf_free(&h);
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
        cmocka_unit_test(test_core_buf_huge_maps_aligned_and_keeps_contents),
        cmocka_unit_test(test_core_buf_huge_only_when_marked_and_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
