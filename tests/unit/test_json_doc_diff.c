/*
 * test_json_doc_diff — kc_doc_merge_diff (RFC 7386 merge patches), the document bounds (512
 * levels, KC_DEFAULT_MAX_OBJECT_SIZE bytes) and kc_base64_* (RFC 4648, as Secret data).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "doc_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* merge_diff(from, to, ptr) is want. */
static void want_diff(const char *from, const char *to, const char *ptr, const char *want)
{
    kc_doc *a = parse(from), *b = parse(to);
    char *p = NULL;
    size_t n = 0;
    kc_error err = KC_ERROR_INIT;
    if (kc_doc_merge_diff(a, b, ptr, &p, &n, &err))
        fail_msg("diff: %s", err.message);
    assert_string_equal(p, want);
    assert_int_equal(n, strlen(want));
    free(p);
    kc_doc_free(a);
    kc_doc_free(b);
    kc_error_clear(&err);
}

static void test_json_doc_diff_cases(void **state)
{
    (void)state;
    want_diff("{\"a\":1,\"b\":[1]}", "{\"b\":[1],\"a\":1.0}", NULL, "{}");  /* equal */
    want_diff("{\"a\":1}", "{\"a\":1,\"b\":\"x\"}", NULL, "{\"b\":\"x\"}"); /* added */
    want_diff("{\"a\":1,\"b\":2}", "{\"a\":1}", NULL, "{\"b\":null}");      /* removed */
    want_diff("{\"a\":1}", "{\"a\":2}", "", "{\"a\":2}");                   /* changed */
    /* Nested objects: only what changed. */
    want_diff("{\"m\":{\"l\":{\"x\":\"1\",\"y\":\"2\"},\"n\":\"a\"}}",
              "{\"m\":{\"l\":{\"x\":\"1\",\"z\":\"3\"},\"n\":\"a\"}}", NULL,
              "{\"m\":{\"l\":{\"z\":\"3\",\"y\":null}}}");
    /* Arrays are replaced whole. */
    want_diff("{\"f\":[\"a\",\"b\"]}", "{\"f\":[\"a\"]}", NULL, "{\"f\":[\"a\"]}");
    /* A type change replaces the value. */
    want_diff("{\"s\":\"x\"}", "{\"s\":{\"k\":1}}", NULL, "{\"s\":{\"k\":1}}");
    want_diff("{\"s\":{\"k\":1}}", "{\"s\":[]}", NULL, "{\"s\":[]}");
    /* A non-object target is the patch itself. */
    want_diff("{\"a\":1}", "[1]", NULL, "[1]");
    want_diff("[1]", "[1]", NULL, "[1]"); /* "{}" would make it {} */
    want_diff("{\"a\":1}", "{\"a\":1}", "", "{}");
    want_diff("3", "{\"a\":1}", NULL, "{\"a\":1}");
}

static void test_json_doc_diff_restricted(void **state)
{
    (void)state;
    static const char FROM[] = "{\"spec\":{\"r\":1},\"status\":{\"phase\":\"A\",\"n\":1,"
                               "\"c\":[{\"type\":\"Ready\"}]}}";
    static const char TO[] = "{\"spec\":{\"r\":2},\"status\":{\"phase\":\"B\",\"n\":1,"
                             "\"c\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}";
    /* "/status": spec's change is left out, the patch holds the path. */
    want_diff(FROM, TO, "/status",
              "{\"status\":{\"phase\":\"B\",\"c\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    want_diff(FROM, TO, "/spec", "{\"spec\":{\"r\":2}}");
    want_diff(FROM, TO, "/status/n", "{}");
    want_diff(FROM, FROM, "/status", "{}");
    /* Absent on one side: added whole, or removed (null); absent on both: nothing. */
    want_diff("{}", "{\"status\":{\"a\":1}}", "/status", "{\"status\":{\"a\":1}}");
    want_diff("{\"status\":{\"a\":1}}", "{}", "/status", "{\"status\":null}");
    want_diff("{}", "{}", "/status", "{}");
    want_diff("{}", "{\"a/b\":{\"c~\":{\"d\":1}}}", "/a~1b/c~0/d", "{\"a/b\":{\"c~\":{\"d\":1}}}");
    kc_doc *a = parse("{}");
    char *p = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_doc_merge_diff(a, a, "status", &p, NULL, &err), KC_EINVAL);
    assert_non_null(strstr(err.message, "status"));
    assert_int_equal(kc_doc_merge_diff(a, NULL, NULL, &p, NULL, &err), KC_EINVAL);
    assert_int_equal(kc_doc_merge_diff(a, a, NULL, NULL, NULL, &err), KC_EINVAL);
    kc_doc_free(a);
    kc_error_clear(&err);
}

/* A string of depth brackets: "[[[…]]]". */
static char *nested(size_t depth, size_t *ret_len)
{
    char *s = malloc(2 * depth + 1);
    memset(s, '[', depth);
    memset(s + depth, ']', depth);
    s[2 * depth] = '\0';
    *ret_len = 2 * depth;
    return s;
}

static void test_json_doc_bounds(void **state)
{
    (void)state;
    kc_doc *d = NULL;
    kc_error err = KC_ERROR_INIT;
    size_t n;
    char *s = nested(600, &n);
    assert_int_equal(kc_doc_parse(s, n, &d, &err), KC_ETOOLARGE);
    assert_non_null(strstr(err.message, "512"));
    free(s);
    s = nested(512, &n); /* the limit itself is fine */
    if (kc_doc_parse(s, n, &d, &err) != 0)
        fail_msg("512 levels: %s", err.message);
    kc_doc_free(d);
    /* Brackets inside strings do not count. */
    char *str = malloc(1300);
    str[0] = '"';
    memset(str + 1, '[', 1200);
    memcpy(str + 1201, "\\\"\"", 4);
    assert_int_equal(kc_doc_parse(str, strlen(str), &d, NULL), 0);
    kc_doc_free(d);
    free(str);
    /* Setters: the pointer's depth plus the value's. */
    assert_int_equal(kc_doc_new(&d, NULL), 0);
    assert_int_equal(kc_doc_set_raw(d, "/a", s, n, &err), KC_ETOOLARGE); /* 1 + 512 */
    assert_int_equal(kc_doc_set_raw(d, "/a", s + 1, n - 2, NULL), 0);    /* 1 + 511 */
    /* Inside the innermost array (root, /a and 510 more): a scalar fits, an array does not. */
    char *inner = malloc(2 + 2 * 510 + 3);
    strcpy(inner, "/a");
    for (size_t i = 0; i < 510; i++)
        strcat(inner, "/0");
    strcat(inner, "/-");
    assert_int_equal(kc_doc_set_raw(d, inner, "[]", 2, &err), KC_ETOOLARGE);
    assert_int_equal(kc_doc_set_int(d, inner, 7, &err), 0);
    free(inner);
    char *ptr = malloc(2 * 600 + 1);
    for (size_t i = 0; i < 600; i++)
        memcpy(ptr + 2 * i, "/x", 2);
    ptr[2 * 513] = '\0';
    assert_int_equal(kc_doc_set_int(d, ptr, 1, &err), KC_ETOOLARGE);
    assert_non_null(strstr(err.message, "512"));
    ptr[2 * 512] = '\0';
    assert_int_equal(kc_doc_set_int(d, ptr, 1, &err), 0);
    ptr[2 * 511] = '\0';
    assert_int_equal(kc_doc_set_raw(d, ptr, "{}", 2, &err), 0);
    assert_int_equal(kc_doc_set_raw(d, ptr, "[[]]", 4, &err), KC_ETOOLARGE);
    kc_doc *deep = NULL;
    assert_int_equal(kc_doc_parse(s, n, &deep, NULL), 0);
    assert_int_equal(kc_doc_set_doc(d, "/b", deep, &err), KC_ETOOLARGE);
    assert_int_equal(kc_doc_set_doc(d, "", deep, &err), 0);
    kc_doc_free(deep);
    free(ptr);
    free(s);
    kc_doc_free(d);
    /* Size: over KC_DEFAULT_MAX_OBJECT_SIZE (8 MiB of valid JSON). */
    size_t big = 8u << 20;
    char *text = malloc(big + 1);
    memset(text, ' ', big);
    text[0] = '"';
    memset(text + 1, 'a', big - 2);
    text[big - 1] = '"';
    text[big] = '\0';
    assert_int_equal(kc_doc_parse(text, big, &d, &err), KC_ETOOLARGE);
    assert_int_equal(kc_doc_new(&d, NULL), 0);
    assert_int_equal(kc_doc_set_raw(d, "/big", text, big, &err), KC_ETOOLARGE);
    assert_non_null(strstr(err.message, "/big"));
    assert_int_equal(kc_doc_set_raw(d, "/big", text, KC_DEFAULT_MAX_OBJECT_SIZE, &err), KC_EPARSE);
    kc_doc_free(d);
    free(text);
    kc_error_clear(&err);
}

/* encode(data) is want and decodes back to data. */
static void round_trip(const char *data, size_t len, const char *want)
{
    char *e = NULL;
    size_t en = 0;
    assert_int_equal(kc_base64_encode(data, len, &e, &en, NULL), 0);
    assert_string_equal(e, want);
    assert_int_equal(en, strlen(want));
    unsigned char *d = NULL;
    size_t dn = 99;
    assert_int_equal(kc_base64_decode(e, en, &d, &dn, NULL), 0);
    assert_int_equal(dn, len);
    assert_memory_equal(d, data, len);
    assert_int_equal(d[len], '\0');
    free(d);
    free(e);
}

static void test_json_doc_base64_round_trips(void **state)
{
    (void)state;
    /* RFC 4648 section 10: every padding length. */
    round_trip("", 0, "");
    round_trip("f", 1, "Zg==");
    round_trip("fo", 2, "Zm8=");
    round_trip("foo", 3, "Zm9v");
    round_trip("foob", 4, "Zm9vYg==");
    round_trip("fooba", 5, "Zm9vYmE=");
    round_trip("foobar", 6, "Zm9vYmFy");
    round_trip("\0\xff\xfe\x00", 4, "AP/+AA==");
    char *e = NULL;
    assert_int_equal(kc_base64_encode(NULL, 0, &e, NULL, NULL), 0);
    assert_string_equal(e, "");
    free(e);
    /* Every byte value, every length up to 70. */
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)(i * 7 + 3);
    for (size_t len = 0; len <= 70; len++) {
        size_t en;
        assert_int_equal(kc_base64_encode(all, len, &e, &en, NULL), 0);
        assert_int_equal(en, (len + 2) / 3 * 4);
        unsigned char *d;
        size_t dn;
        assert_int_equal(kc_base64_decode(e, en, &d, &dn, NULL), 0);
        assert_int_equal(dn, len);
        assert_memory_equal(d, all, len);
        free(d);
        free(e);
    }
}

/* decode(text) fails with KC_EINVAL naming "offset <off>". */
static void bad(const char *text, size_t off)
{
    unsigned char *d = NULL;
    size_t dn;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_base64_decode(text, strlen(text), &d, &dn, &err), KC_EINVAL);
    char want[64];
    snprintf(want, sizeof want, "offset %zu", off);
    if (!strstr(err.message, want))
        fail_msg("%s: \"%s\" lacks \"%s\"", text, err.message, want);
    assert_null(d);
    kc_error_clear(&err);
}

static void test_json_doc_base64_errors(void **state)
{
    (void)state;
    bad("Zg=", 3);        /* length */
    bad("Zm9vY", 5);      /* length */
    bad("Zm9v\nYmFy", 4); /* no whitespace */
    bad(" Zm9v", 0);
    bad("Zm9-", 3); /* URL alphabet */
    bad("Zm_v", 2);
    bad("Z===", 1); /* three padding characters */
    bad("====", 0);
    bad("Zg==Zm9v", 2); /* padding before the end */
    bad("Zm=v", 2);
    bad("Zm9\xc3", 3);
    unsigned char *d;
    size_t dn;
    assert_int_equal(kc_base64_decode("Zg==", 4, NULL, &dn, NULL), KC_EINVAL);
    assert_int_equal(kc_base64_decode("Zg==", 4, &d, NULL, NULL), KC_EINVAL);
    assert_int_equal(kc_base64_decode(NULL, 4, &d, &dn, NULL), KC_EINVAL);
    assert_int_equal(kc_base64_decode(NULL, 0, &d, &dn, NULL), 0);
    assert_int_equal(dn, 0);
    free(d);
    char *e;
    assert_int_equal(kc_base64_encode("x", 1, NULL, NULL, NULL), KC_EINVAL);
    assert_int_equal(kc_base64_encode(NULL, 1, &e, NULL, NULL), KC_EINVAL);
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_base64_encode("x", SIZE_MAX, &e, NULL, &err), KC_ETOOLARGE);
    /* Bits under the padding are ignored, as Go's StdEncoding (the API server) does. */
    assert_int_equal(kc_base64_decode("Zh==", 4, &d, &dn, NULL), 0);
    assert_int_equal(dn, 1);
    assert_int_equal(d[0], 'f');
    free(d);
    kc_error_clear(&err);
}

/* A Secret's data value through a document: decode, edit, encode (the mirror controller). */
static void test_json_doc_base64_secret(void **state)
{
    (void)state;
    kc_doc *d = parse("{\"kind\":\"Secret\",\"data\":{\"password\":\"aHVudGVyMg==\"}}");
    const char *s;
    size_t n;
    assert_int_equal(kc_doc_get_string(d, "/data/password", &s, &n, NULL), 0);
    unsigned char *plain;
    size_t pn;
    assert_int_equal(kc_base64_decode(s, n, &plain, &pn, NULL), 0);
    assert_string_equal((char *)plain, "hunter2");
    char *e;
    assert_int_equal(kc_base64_encode("new value", 9, &e, NULL, NULL), 0);
    assert_int_equal(kc_doc_set_string(d, "/data/other", e, NULL), 0);
    assert_int_equal(kc_doc_get_string(d, "/data/other", &s, NULL, NULL), 0);
    assert_string_equal(s, "bmV3IHZhbHVl");
    free(e);
    free(plain);
    kc_doc_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_doc_diff_cases),
        cmocka_unit_test(test_json_doc_diff_restricted),
        cmocka_unit_test(test_json_doc_bounds),
        cmocka_unit_test(test_json_doc_base64_round_trips),
        cmocka_unit_test(test_json_doc_base64_errors),
        cmocka_unit_test(test_json_doc_base64_secret),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
