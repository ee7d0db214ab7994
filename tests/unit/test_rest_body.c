/*
 * test_rest_body.c — kc_json_format: directives, escaping of untrusted strings, NULLs, and
 * rejection of unknown directives.
 */
#include "rest/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_rest_body_directives(void **state)
{
    char *s = NULL;
    size_t len = 0;
    assert_int_equal(kc_json_format(&s, &len, NULL,
                                    "{\"n\":%s,\"r\":%r,\"d\":%d,\"l\":%l,"
                                    "\"b\":%b,\"p\":\"100%%\"}",
                                    "x", "[1,2]", -3, (int64_t)1 << 40, 1),
                     0);
    assert_string_equal(s, "{\"n\":\"x\",\"r\":[1,2],\"d\":-3,\"l\":1099511627776,\"b\":true,"
                           "\"p\":\"100%\"}");
    assert_int_equal(len, strlen(s));
    free(s);
}

static void test_rest_body_escapes_strings(void **state)
{
    char *s = NULL;
    assert_int_equal(kc_json_format(&s, NULL, NULL, "{\"name\":%s}", "a\"b\\c\n\x01"), 0);
    assert_string_equal(s, "{\"name\":\"a\\\"b\\\\c\\n\\u0001\"}");
    free(s);
}

static void test_rest_body_null_values(void **state)
{
    char *s = NULL;
    assert_int_equal(
        kc_json_format(&s, NULL, NULL, "[%s,%r]", (const char *)NULL, (const char *)NULL), 0);
    assert_string_equal(s, "[null,null]");
    free(s);
}

static void test_rest_body_unknown_directive(void **state)
{
    char *s = (char *)1;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_json_format(&s, NULL, &err, "{%x}"), KC_EINVAL);
    assert_ptr_equal(s, (char *)1); /* untouched on failure */
    assert_non_null(err.message);
    kc_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rest_body_directives),
        cmocka_unit_test(test_rest_body_escapes_strings),
        cmocka_unit_test(test_rest_body_null_values),
        cmocka_unit_test(test_rest_body_unknown_directive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
