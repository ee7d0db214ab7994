/* test_core_opts.c — the struct-size handshake (kc__opts_copy, kc__result_copy; docs/abi.md). */
#include "core/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Version 1 of a struct, and version 2 that grew at the end. */
typedef struct v1 {
    int64_t a;
    const char *s;
} v1;
typedef struct v2 {
    int64_t a;
    const char *s;
    int64_t b; /* new in v2 */
    bool c;    /* new in v2 */
} v2;

static void test_core_opts_same_size_copies(void **state)
{
    v1 in = {.a = 7, .s = "x"}, out;
    memset(&out, 0xaa, sizeof out);
    assert_int_equal(KC__OPTS_COPY(&out, &in, sizeof in, v1, NULL), 0);
    assert_int_equal(out.a, 7);
    assert_string_equal(out.s, "x");
}

static void test_core_opts_null_means_all_zero(void **state)
{
    v2 out;
    memset(&out, 0xaa, sizeof out);
    assert_int_equal(KC__OPTS_COPY(&out, NULL, 12345, v2, NULL), 0);
    assert_int_equal(out.a, 0);
    assert_null(out.s);
    assert_int_equal(out.b, 0);
    assert_false(out.c);
}

/* An old caller (v1) against a new library (v2): the new fields read as zero (defaults). */
static void test_core_opts_shorter_caller_gets_defaults(void **state)
{
    v1 in = {.a = 3, .s = "y"};
    v2 out;
    memset(&out, 0xaa, sizeof out);
    assert_int_equal(KC__OPTS_COPY(&out, &in, sizeof in, v2, NULL), 0);
    assert_int_equal(out.a, 3);
    assert_string_equal(out.s, "y");
    assert_int_equal(out.b, 0);
    assert_false(out.c);
}

/* A new caller (v2) against an old library (v1): accepted when the new fields are zero. */
static void test_core_opts_longer_caller_zero_tail_accepted(void **state)
{
    v2 in = {.a = 5, .s = "z"};
    v1 out;
    assert_int_equal(KC__OPTS_COPY(&out, &in, sizeof in, v1, NULL), 0);
    assert_int_equal(out.a, 5);
    assert_string_equal(out.s, "z");
}

/* ... and refused, naming the struct, when a field the library does not know is set. */
static void test_core_opts_longer_caller_set_tail_refused(void **state)
{
    v2 in = {.a = 5, .c = true};
    v1 out = {.a = 99};
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(KC__OPTS_COPY(&out, &in, sizeof in, v1, &err), KC_EUNSUPPORTED);
    assert_int_equal(err.code, KC_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "v1"));
    assert_non_null(strstr(err.message, "newer kcache header"));
    kc_error_clear(&err);
}

/* A nested pointer whose _size field was left 0 is an error, not "no fields". */
static void test_core_opts_zero_size_refused(void **state)
{
    v1 in = {.a = 1}, out;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__opts_copy(&out, sizeof out, &in, 0, "kc_x_opts.decode", &err), KC_EINVAL);
    assert_non_null(strstr(err.message, "kc_x_opts.decode"));
    kc_error_clear(&err);
}

static void test_core_result_copy_writes_at_most_size(void **state)
{
    v2 src = {.a = 1, .s = "r", .b = 2, .c = true};
    /* An old caller's buffer (v1) followed by a guard that must stay untouched. */
    struct {
        v1 res;
        unsigned char guard[sizeof(v2)];
    } buf;
    memset(&buf, 0x5a, sizeof buf);
    kc__result_copy(&buf.res, sizeof buf.res, &src, sizeof src);
    assert_int_equal(buf.res.a, 1);
    assert_string_equal(buf.res.s, "r");
    for (size_t i = 0; i < sizeof buf.guard; i++)
        assert_int_equal(buf.guard[i], 0x5a);
}

static void test_core_result_copy_zeroes_unknown_tail(void **state)
{
    v1 src = {.a = 4, .s = "q"};
    v2 dst;
    memset(&dst, 0xaa, sizeof dst);
    kc__result_copy(&dst, sizeof dst, &src, sizeof src);
    assert_int_equal(dst.a, 4);
    assert_int_equal(dst.b, 0);
    assert_false(dst.c);
    kc__result_copy(NULL, sizeof dst, &src, sizeof src); /* no crash */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_opts_same_size_copies),
        cmocka_unit_test(test_core_opts_null_means_all_zero),
        cmocka_unit_test(test_core_opts_shorter_caller_gets_defaults),
        cmocka_unit_test(test_core_opts_longer_caller_zero_tail_accepted),
        cmocka_unit_test(test_core_opts_longer_caller_set_tail_refused),
        cmocka_unit_test(test_core_opts_zero_size_refused),
        cmocka_unit_test(test_core_result_copy_writes_at_most_size),
        cmocka_unit_test(test_core_result_copy_zeroes_unknown_tail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
