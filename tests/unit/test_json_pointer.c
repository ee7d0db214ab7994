/*
 * test_json_pointer — RFC 6901 field access on stored objects: escapes, arrays, types, errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../bench/genpod.h"

#include <kcache/obj.h>

#include <stdlib.h>
#include <string.h>

static const char DOC[] =
    "{\"kind\":\"X\",\"metadata\":{\"name\":\"n\",\"labels\":{\"a/b\":\"slash\",\"m~n\":\"tilde\","
    "\"~1\":\"lit\"}},\"spec\":{\"s\":\"caf\\u00e9 "
    "\\\"q\\\"\",\"i\":-42,\"big\":12345678901234567890,"
    "\"f\":1.5,\"t\":true,\"fl\":false,\"nul\":null,\"arr\":[10,{\"k\":\"v\"},[1,2]],\"o\":{\"x\":"
    "1},"
    "\"\":\"empty key\",\"e\":[]}}";

static kc_obj *doc(void)
{
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(DOC, sizeof DOC - 1, NULL, &o, NULL), 0);
    return o;
}

static void want_string(kc_obj *o, const char *ptr, const char *want)
{
    char *s = NULL;
    size_t n = 0;
    kc_error err = KC_ERROR_INIT;
    int r = kc_obj_get_string(o, ptr, &s, &n, &err);
    if (r)
        fail_msg("%s: %s (%s)", ptr, kc_errno_name(r), err.message);
    assert_string_equal(s, want);
    assert_int_equal(n, strlen(want));
    free(s);
}

static void want_error(kc_obj *o, const char *ptr, int code)
{
    kc_error err = KC_ERROR_INIT;
    char *s = (char *)0x1;
    int r = kc_obj_get_string(o, ptr, &s, NULL, &err);
    if (r != code)
        fail_msg("%s: got %s want %s", ptr, kc_errno_name(r), kc_errno_name(code));
    assert_ptr_equal(s, (char *)0x1);
    assert_int_equal(err.code, code);
    assert_non_null(err.message);
    kc_error_clear(&err);
}

static void test_json_pointer_strings_and_escapes(void **state)
{
    kc_obj *o = doc();
    want_string(o, "/kind", "X");
    want_string(o, "/metadata/name", "n");
    want_string(o, "/metadata/labels/a~1b", "slash");
    want_string(o, "/metadata/labels/m~0n", "tilde");
    want_string(o, "/metadata/labels/~01", "lit"); /* ~01 is "~1", not "/" */
    want_string(o, "/spec/s", "caf\xc3\xa9 \"q\"");
    want_string(o, "/spec/", "empty key");
    want_string(o, "/spec/arr/1/k", "v");
    kc_obj_unref(o);
}

static void test_json_pointer_numbers_and_bools(void **state)
{
    kc_obj *o = doc();
    int64_t i = 0;
    bool b = false;
    assert_int_equal(kc_obj_get_int(o, "/spec/i", &i, NULL), 0);
    assert_int_equal(i, -42);
    assert_int_equal(kc_obj_get_int(o, "/spec/arr/0", &i, NULL), 0);
    assert_int_equal(i, 10);
    assert_int_equal(kc_obj_get_int(o, "/spec/arr/2/1", &i, NULL), 0);
    assert_int_equal(i, 2);
    assert_int_equal(kc_obj_get_bool(o, "/spec/t", &b, NULL), 0);
    assert_true(b);
    assert_int_equal(kc_obj_get_bool(o, "/spec/fl", &b, NULL), 0);
    assert_false(b);
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_obj_get_int(o, "/spec/f", &i, &err), KC_EINVAL);
    kc_error_clear(&err);
    assert_int_equal(kc_obj_get_int(o, "/spec/big", &i, &err), KC_EINVAL);
    kc_error_clear(&err);
    assert_int_equal(kc_obj_get_bool(o, "/spec/nul", &b, &err), KC_EINVAL);
    assert_non_null(strstr(err.message, "null"));
    kc_error_clear(&err);
    kc_obj_unref(o);
}

static void test_json_pointer_raw(void **state)
{
    kc_obj *o = doc();
    const char *p;
    size_t n;
    assert_int_equal(kc_obj_get_raw(o, "/spec/arr", &p, &n, NULL), 0);
    assert_int_equal(n, strlen("[10,{\"k\":\"v\"},[1,2]]"));
    assert_memory_equal(p, "[10,{\"k\":\"v\"},[1,2]]", n);
    assert_int_equal(kc_obj_get_raw(o, "/spec/o", &p, &n, NULL), 0);
    assert_memory_equal(p, "{\"x\":1}", n);
    assert_int_equal(kc_obj_get_raw(o, "/spec/i", &p, &n, NULL), 0);
    assert_memory_equal(p, "-42", n);
    assert_int_equal(kc_obj_get_raw(o, "/spec/nul", &p, &n, NULL), 0);
    assert_memory_equal(p, "null", n);
    assert_int_equal(kc_obj_get_raw(o, "/spec/s", &p, &n, NULL), 0);
    assert_memory_equal(p, "\"caf\\u00e9 \\\"q\\\"\"", n);
    assert_int_equal(kc_obj_get_raw(o, "/spec/e", &p, &n, NULL), 0);
    assert_memory_equal(p, "[]", n);
    size_t len;
    const char *all = kc_obj_json(o, &len);
    assert_int_equal(kc_obj_get_raw(o, "", &p, &n, NULL), 0);
    assert_ptr_equal(p, all);
    assert_int_equal(n, len);
    kc_obj_unref(o);
}

static void test_json_pointer_missing_is_notfound(void **state)
{
    kc_obj *o = doc();
    want_error(o, "/nope", KC_ENOTFOUND);
    want_error(o, "/spec/nope", KC_ENOTFOUND);
    want_error(o, "/spec/arr/3", KC_ENOTFOUND);
    want_error(o, "/spec/arr/-", KC_ENOTFOUND);
    want_error(o, "/spec/arr/x", KC_ENOTFOUND);
    want_error(o, "/spec/arr/01", KC_ENOTFOUND);
    want_error(o, "/spec/i/x", KC_ENOTFOUND); /* through a number */
    want_error(o, "/spec/s/0", KC_ENOTFOUND);
    want_error(o, "/metadata/labels/a/b", KC_ENOTFOUND);
    kc_obj_unref(o);
}

static void test_json_pointer_wrong_type_is_einval(void **state)
{
    kc_obj *o = doc();
    want_error(o, "/spec/i", KC_EINVAL);
    want_error(o, "/spec/o", KC_EINVAL);
    want_error(o, "/spec/arr", KC_EINVAL);
    want_error(o, "/spec/t", KC_EINVAL);
    want_error(o, "/spec/nul", KC_EINVAL);
    want_error(o, "", KC_EINVAL); /* the document is an object */
    kc_error err = KC_ERROR_INIT;
    char *s;
    assert_int_equal(kc_obj_get_string(o, "/spec/arr", &s, NULL, &err), KC_EINVAL);
    assert_non_null(strstr(err.message, "array"));
    kc_error_clear(&err);
    kc_obj_unref(o);
}

static void test_json_pointer_malformed(void **state)
{
    kc_obj *o = doc();
    want_error(o, "spec", KC_EINVAL);
    want_error(o, "/spec/~2", KC_EINVAL);
    want_error(o, "/spec/~", KC_EINVAL);
    assert_int_equal(kc_obj_get_string(o, NULL, NULL, NULL, NULL), KC_EINVAL);
    assert_int_equal(kc_obj_get_string(NULL, "/a", NULL, NULL, NULL), KC_EINVAL);
    kc_obj_unref(o);
}

static void test_json_pointer_pod_node_name(void **state)
{
    char buf[KC_GENPOD_MAX];
    size_t n = kc_genpod_one(buf, sizeof buf, 4321);
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(buf, n, NULL, &o, NULL), 0);
    want_string(o, "/spec/nodeName", "node-4321");
    want_string(o, "/spec/containers/0/ports/0/name", "http");
    want_string(o, "/status/phase", "Running");
    want_error(o, "/metadata/managedFields", KC_ENOTFOUND); /* stripped */
    int64_t v;
    assert_int_equal(kc_obj_get_int(o, "/spec/terminationGracePeriodSeconds", &v, NULL), 0);
    assert_int_equal(v, 30);
    kc_obj_unref(o);
}

static void test_json_pointer_large_object(void **state)
{
    size_t big = (size_t)2 << 20;
    char *js = malloc(big + 64);
    int n = snprintf(js, 64, "{\"spec\":{\"a\":1,\"big\":\"");
    memset(js + n, 'x', big);
    strcpy(js + n + big, "\",\"z\":true}}");
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(js, strlen(js), NULL, &o, NULL), 0);
    for (int i = 0; i < 2; i++) { /* the second call runs after the thread's buffers were trimmed */
        char *s = NULL;
        size_t sl = 0;
        assert_int_equal(kc_obj_get_string(o, "/spec/big", &s, &sl, NULL), 0);
        assert_int_equal(sl, big);
        assert_int_equal(s[0], 'x');
        assert_int_equal(s[big - 1], 'x');
        free(s);
        bool b = false;
        assert_int_equal(kc_obj_get_bool(o, "/spec/z", &b, NULL), 0);
        assert_true(b);
    }
    kc_obj_unref(o);
    free(js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_pointer_strings_and_escapes),
        cmocka_unit_test(test_json_pointer_numbers_and_bools),
        cmocka_unit_test(test_json_pointer_raw),
        cmocka_unit_test(test_json_pointer_missing_is_notfound),
        cmocka_unit_test(test_json_pointer_wrong_type_is_einval),
        cmocka_unit_test(test_json_pointer_malformed),
        cmocka_unit_test(test_json_pointer_pod_node_name),
        cmocka_unit_test(test_json_pointer_large_object),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
