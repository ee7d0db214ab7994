/*
 * test_json_obj_iter — kc_obj_iter: members and elements of a stored object in document order,
 * read in place (keys, strings and raw spans point into kc_obj_json unless they had escapes),
 * typed getters, errors, large arrays.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_fixture.h"

#include <kcache/obj.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kc_obj_iter *iter(const kc_obj *o, const char *ptr)
{
    kc_obj_iter *it = NULL;
    kc_error err = KC_ERROR_INIT;
    int r = kc_obj_iter_new(o, ptr, &it, &err);
    if (r)
        fail_msg("%s: %s (%s)", ptr, kc_errno_name(r), err.message);
    return it;
}

static bool inside(const kc_obj *o, const char *p)
{
    size_t n;
    const char *t = kc_obj_json(o, &n);
    return p >= t && p < t + n;
}

static void want_key(const kc_obj_iter *it, const char *want)
{
    size_t n = 99;
    const char *k = kc_obj_iter_key(it, &n);
    assert_non_null(k);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(k, want, n);
}

static void want_str(kc_obj_iter *it, const char *want, size_t want_n)
{
    const char *s = NULL;
    size_t n = 0;
    assert_int_equal(kc_obj_iter_type(it), KC_JSON_STRING);
    assert_int_equal(kc_obj_iter_string(it, &s, &n), 0);
    assert_int_equal(n, want_n);
    assert_memory_equal(s, want, n);
}

/* Members come in the text's order (not sorted), keys and plain strings borrowed from the text. */
static void test_json_obj_iter_document_order(void **state)
{
    (void)state;
    kc_obj *o = jf_obj("{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"},"
                       "\"data\":{\"zeta\":\"1\",\"alpha\":\"two\",\"mid\":\"\"}}");
    kc_obj_iter *it = iter(o, "/data");
    const char *keys[] = {"zeta", "alpha", "mid"}, *vals[] = {"1", "two", ""};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(kc_obj_iter_next(it), 1);
        want_key(it, keys[i]);
        assert_true(inside(o, kc_obj_iter_key(it, NULL)));
        want_str(it, vals[i], strlen(vals[i]));
        const char *s;
        size_t n;
        assert_int_equal(kc_obj_iter_string(it, &s, &n), 0);
        assert_true(inside(o, s));
    }
    assert_int_equal(kc_obj_iter_next(it), 0);
    assert_int_equal(kc_obj_iter_next(it), 0);
    assert_null(kc_obj_iter_key(it, NULL)); /* past the end: not positioned */
    kc_obj_iter_free(it);

    it = iter(o, ""); /* the whole object */
    const char *top[] = {"kind", "metadata", "data"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(kc_obj_iter_next(it), 1);
        want_key(it, top[i]);
    }
    assert_int_equal(kc_obj_iter_next(it), 0);
    kc_obj_iter_free(it);
    kc_obj_unref(o);
}

/* Escapes in keys and values: unescaped (by simdjson), into the iterator's memory. */
static void test_json_obj_iter_escapes(void **state)
{
    (void)state;
    kc_obj *o = jf_obj("{\"metadata\":{\"name\":\"e\"},\"data\":{\"a\\\"b\":\"line1\\nline2\","
                       "\"caf\\u00e9\":\"x\\u0000y\",\"a/b~c\":\"\\\\\"}}");
    kc_obj_iter *it = iter(o, "/data");
    assert_int_equal(kc_obj_iter_next(it), 1);
    want_key(it, "a\"b");
    assert_false(inside(o, kc_obj_iter_key(it, NULL)));
    want_str(it, "line1\nline2", 11);
    assert_int_equal(kc_obj_iter_next(it), 1);
    want_key(it, "caf\xc3\xa9");
    want_str(it, "x\0y", 3); /* a NUL inside: the length says so */
    assert_int_equal(kc_obj_iter_next(it), 1);
    want_key(it, "a/b~c"); /* keys are not pointer-escaped */
    want_str(it, "\\", 1);
    const char *raw;
    size_t n;
    assert_int_equal(kc_obj_iter_raw(it, &raw, &n), 0);
    assert_int_equal(n, 4);
    assert_memory_equal(raw, "\"\\\\\"", 4);
    assert_true(inside(o, raw));
    assert_int_equal(kc_obj_iter_next(it), 0);
    kc_obj_iter_free(it);
    kc_obj_unref(o);
}

static const char TYPED[] =
    "{\"metadata\":{\"name\":\"t\"},\"spec\":{\"list\":[\"s\",-42,1.5,true,false,null,{\"k\":1},"
    "[1,2],9223372036854775807,18446744073709551615,1e3,123456789012345678901234567890]}}";

/* Each type, its getter, and every mismatch being KC_EINVAL. */
static void test_json_obj_iter_typed(void **state)
{
    (void)state;
    kc_obj *o = jf_obj(TYPED);
    kc_obj_iter *it = iter(o, "/spec/list");
    const kc_json_type types[] = {KC_JSON_STRING, KC_JSON_INT,    KC_JSON_DOUBLE, KC_JSON_BOOL,
                                  KC_JSON_BOOL,   KC_JSON_NULL,   KC_JSON_OBJECT, KC_JSON_ARRAY,
                                  KC_JSON_INT,    KC_JSON_DOUBLE, KC_JSON_DOUBLE, KC_JSON_DOUBLE};
    const char *raws[] = {"\"s\"",
                          "-42",
                          "1.5",
                          "true",
                          "false",
                          "null",
                          "{\"k\":1}",
                          "[1,2]",
                          "9223372036854775807",
                          "18446744073709551615",
                          "1e3",
                          "123456789012345678901234567890"}; /* beyond uint64: a double */
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        assert_int_equal(kc_obj_iter_next(it), 1);
        assert_null(kc_obj_iter_key(it, NULL)); /* array elements have no key */
        assert_int_equal(kc_obj_iter_type(it), types[i]);
        const char *raw, *s;
        size_t n;
        assert_int_equal(kc_obj_iter_raw(it, &raw, &n), 0);
        assert_int_equal(n, strlen(raws[i]));
        assert_memory_equal(raw, raws[i], n);
        assert_true(inside(o, raw));
        int64_t iv = 0;
        double dv = 0;
        bool bv = false;
        int want_s = types[i] == KC_JSON_STRING ? 0 : KC_EINVAL;
        int want_i = types[i] == KC_JSON_INT ? 0 : KC_EINVAL;
        int want_d = types[i] == KC_JSON_INT || types[i] == KC_JSON_DOUBLE ? 0 : KC_EINVAL;
        int want_b = types[i] == KC_JSON_BOOL ? 0 : KC_EINVAL;
        assert_int_equal(kc_obj_iter_string(it, &s, &n), want_s);
        assert_int_equal(kc_obj_iter_int(it, &iv), want_i);
        assert_int_equal(kc_obj_iter_double(it, &dv), want_d);
        assert_int_equal(kc_obj_iter_bool(it, &bv), want_b);
        if (i == 1) {
            assert_int_equal(iv, -42);
            assert_true(dv == -42.0);
        }
        if (i == 2)
            assert_true(dv == 1.5);
        if (i == 3 || i == 4)
            assert_int_equal(bv, i == 3);
        if (i == 8)
            assert_true(iv == INT64_MAX);
        if (i == 9)
            assert_true(dv == 18446744073709551615.0);
        if (i == 10)
            assert_true(dv == 1000.0);
        if (i == 11)
            assert_true(dv == 123456789012345678901234567890.0);
    }
    assert_int_equal(kc_obj_iter_next(it), 0);
    kc_obj_iter_free(it);
    kc_obj_unref(o);
}

/* Nested pointers (escaped tokens, array indexes), empty containers. */
static void test_json_obj_iter_nested_and_empty(void **state)
{
    (void)state;
    kc_obj *o = jf_obj("{\"metadata\":{\"name\":\"n\",\"labels\":{\"a/b\":\"v\"}},\"spec\":{"
                       "\"x\":[{\"y\":{\"deep\":1,\"er\":2}}],\"eo\":{},\"ea\":[]}}");
    kc_obj_iter *it = iter(o, "/spec/x/0/y");
    assert_int_equal(kc_obj_iter_next(it), 1);
    want_key(it, "deep");
    assert_int_equal(kc_obj_iter_next(it), 1);
    want_key(it, "er");
    int64_t v = 0;
    assert_int_equal(kc_obj_iter_int(it, &v), 0);
    assert_int_equal(v, 2);
    assert_int_equal(kc_obj_iter_next(it), 0);
    kc_obj_iter_free(it);
    it = iter(o, "/spec/eo");
    assert_int_equal(kc_obj_iter_type(it), KC_JSON_NULL); /* not positioned yet */
    assert_int_equal(kc_obj_iter_next(it), 0);
    kc_obj_iter_free(it);
    it = iter(o, "/spec/ea");
    assert_int_equal(kc_obj_iter_next(it), 0);
    const char *raw;
    size_t n;
    assert_int_equal(kc_obj_iter_raw(it, &raw, &n), KC_EINVAL);
    kc_obj_iter_free(it);
    kc_obj_unref(o);
}

static void want_new_error(const kc_obj *o, const char *ptr, int code)
{
    kc_obj_iter *it = (kc_obj_iter *)0x1;
    kc_error err = KC_ERROR_INIT;
    int r = kc_obj_iter_new(o, ptr, &it, &err);
    if (r != code)
        fail_msg("%s: got %s want %s", ptr ? ptr : "(null)", kc_errno_name(r), kc_errno_name(code));
    assert_ptr_equal(it, (kc_obj_iter *)0x1);
    assert_int_equal(err.code, code);
    assert_non_null(err.message);
    kc_error_clear(&err);
}

/* A scalar at ptr is KC_EINVAL (naming its type), a missing path KC_ENOTFOUND. */
static void test_json_obj_iter_errors(void **state)
{
    (void)state;
    kc_obj *o = jf_obj("{\"metadata\":{\"name\":\"n\"},\"spec\":{\"s\":\"x\",\"a\":[1]}}");
    want_new_error(o, "/spec/s", KC_EINVAL);
    kc_error err = KC_ERROR_INIT;
    kc_obj_iter *it = NULL;
    assert_int_equal(kc_obj_iter_new(o, "/metadata/name", &it, &err), KC_EINVAL);
    assert_non_null(strstr(err.message, "a string"));
    kc_error_clear(&err);
    want_new_error(o, "/spec/none", KC_ENOTFOUND);
    want_new_error(o, "/spec/a/5", KC_ENOTFOUND);
    want_new_error(o, "/nope/deeper", KC_ENOTFOUND);
    want_new_error(o, "spec", KC_EINVAL);  /* malformed: no leading '/' */
    want_new_error(o, "/a~2b", KC_EINVAL); /* malformed escape */
    want_new_error(o, NULL, KC_EINVAL);
    want_new_error(NULL, "", KC_EINVAL);
    assert_int_equal(kc_obj_iter_new(o, "", NULL, NULL), KC_EINVAL);
    /* NULL iterators */
    assert_int_equal(kc_obj_iter_next(NULL), KC_EINVAL);
    assert_null(kc_obj_iter_key(NULL, NULL));
    assert_int_equal(kc_obj_iter_type(NULL), KC_JSON_NULL);
    kc_obj_iter_free(NULL);
    kc_obj_unref(o);
}

/* Malformed text in a sub-tree the default decoder does not validate: KC_EPARSE, not a crash. */
static void test_json_obj_iter_malformed_subtree(void **state)
{
    (void)state;
    kc_obj *o = NULL;
    const char *j = "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"a\":[1,tru]}}";
    /* the default decoder checks only bracket balance in spec (docs/decoding.md, Validation) */
    assert_int_equal(kc_obj_parse(j, strlen(j), NULL, &o, NULL), 0);
    want_new_error(o, "/spec/a", KC_EPARSE);
    kc_obj_unref(o);
}

/* 1M elements: the span array grows geometrically; order and values kept. */
static void test_json_obj_iter_large_array(void **state)
{
    (void)state;
    enum { N = 1000000 };
    size_t cap = (size_t)N * 12 + 128, len = 0;
    char *j = malloc(cap);
    assert_non_null(j);
    len += (size_t)snprintf(j, cap, "{\"metadata\":{\"name\":\"big\"},\"items\":[");
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(j + len, cap - len, i ? ",%d" : "%d", i);
    len += (size_t)snprintf(j + len, cap - len, "]}");
    kc_decode_opts opts = {.max_object_size = cap * 2};
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(j, len, &opts, &o, NULL), 0);
    free(j);
    kc_obj_iter *it = iter(o, "/items");
    int i = 0;
    int64_t v = -1;
    while (kc_obj_iter_next(it) == 1) {
        if (i % 9973 == 0 || i == N - 1) {
            assert_int_equal(kc_obj_iter_int(it, &v), 0);
            assert_int_equal(v, i);
        }
        i++;
    }
    assert_int_equal(i, N);
    kc_obj_iter_free(it);
    kc_obj_unref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_obj_iter_document_order),
        cmocka_unit_test(test_json_obj_iter_escapes),
        cmocka_unit_test(test_json_obj_iter_typed),
        cmocka_unit_test(test_json_obj_iter_nested_and_empty),
        cmocka_unit_test(test_json_obj_iter_errors),
        cmocka_unit_test(test_json_obj_iter_malformed_subtree),
        cmocka_unit_test(test_json_obj_iter_large_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
