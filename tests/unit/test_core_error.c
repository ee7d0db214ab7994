/* test_core_error.c — the error table (names, messages), kc_error lifecycle, HTTP mapping. */
#include "core/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_core_error_codes_are_stable(void **state)
{
    assert_int_equal(KC_ENOMEM, -1);
    assert_int_equal(KC_EINVAL, -2);
    assert_int_equal(KC_EGONE, -11);
    assert_int_equal(KC_ETOOLARGE, -12);
    assert_int_equal(KC_ENOT_CAUGHT_UP, -19);
    assert_int_equal(KC_ENOT_COMPARABLE, -28);
}

static void test_core_error_every_code_has_name_and_message(void **state)
{
#define CHECK(name, val, msg)                                                                      \
    assert_string_equal(kc_errno_name(val), "KC_E" #name);                                         \
    assert_string_equal(kc_strerror(val), msg);
    KC_ERRNO_MAP(CHECK)
#undef CHECK
    assert_string_equal(kc_errno_name(0), "KC_OK");
    assert_string_equal(kc_strerror(0), "success");
    assert_string_equal(kc_errno_name(-9999), "KC_E?");
    assert_string_equal(kc_strerror(12345), "unknown error");
}

static void test_core_error_set_formats_and_clear_frees(void **state)
{
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_error_set(&e, KC_EINVAL, "bad %s at %d", "key", 7), KC_EINVAL);
    assert_int_equal(e.code, KC_EINVAL);
    assert_string_equal(e.message, "bad key at 7");
    assert_int_equal(e.offset, -1);
    kc_error_set(&e, KC_EPARSE, "second"); /* replaces, no leak */
    assert_string_equal(e.message, "second");
    kc_error_clear(&e);
    assert_int_equal(e.code, 0);
    assert_null(e.message);
    assert_int_equal(e.retry_after_s, -1);
    kc_error_clear(NULL);
    assert_int_equal(kc_error_set(NULL, KC_EIO, "x"), KC_EIO);
}

static void test_core_error_http_mapping(void **state)
{
    assert_int_equal(kc_errno_from_http(200, NULL), 0);
    assert_int_equal(kc_errno_from_http(201, "x"), 0);
    assert_int_equal(kc_errno_from_http(404, "NotFound"), KC_ENOTFOUND);
    assert_int_equal(kc_errno_from_http(409, "AlreadyExists"), KC_EEXISTS);
    assert_int_equal(kc_errno_from_http(409, "Conflict"), KC_ECONFLICT);
    assert_int_equal(kc_errno_from_http(410, "Expired"), KC_EGONE);
    assert_int_equal(kc_errno_from_http(422, NULL), KC_EUNPROCESSABLE);
    assert_int_equal(kc_errno_from_http(429, NULL), KC_ETHROTTLED);
    assert_int_equal(kc_errno_from_http(504, "Timeout"), KC_ESERVER);
    assert_int_equal(kc_errno_from_http(504, "ResourceVersionTooLarge"), KC_ERV_TOO_LARGE);
    assert_int_equal(kc_errno_from_http(503, NULL), KC_ESERVER);
    assert_int_equal(kc_errno_from_http(418, NULL), KC_EHTTP);
}

static void test_core_error_version_string(void **state)
{
    assert_string_equal(kc_version(), KC_VERSION_STRING);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_error_codes_are_stable),
        cmocka_unit_test(test_core_error_every_code_has_name_and_message),
        cmocka_unit_test(test_core_error_set_formats_and_clear_frees),
        cmocka_unit_test(test_core_error_http_mapping),
        cmocka_unit_test(test_core_error_version_string),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
