/*
 * test_json_obj — kc_obj_parse, accessors, transforms, reference counting, bad input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../bench/genpod.h"

#include <kcache/decode.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kc_obj *parse_ok(const char *json, unsigned flags)
{
    kc_decode_opts o = {.flags = flags, .max_object_size = 0};
    kc_error err = KC_ERROR_INIT;
    kc_obj *obj = NULL;
    int r = kc_obj_parse(json, strlen(json), &o, &obj, &err);
    if (r)
        fail_msg("parse failed: %s (%s) for %s", kc_errno_name(r), err.message, json);
    kc_error_clear(&err);
    return obj;
}

/* Expects KC_EPARSE whose message contains want (when not NULL); returns the error offset. */
static int64_t parse_bad(const char *json, size_t len, const char *want)
{
    kc_error err = KC_ERROR_INIT;
    kc_obj *obj = (kc_obj *)0x1;
    int r = kc_obj_parse(json, len, NULL, &obj, &err);
    assert_int_equal(r, KC_EPARSE);
    assert_int_equal(err.code, KC_EPARSE);
    assert_ptr_equal(obj, (kc_obj *)0x1); /* untouched on failure */
    assert_non_null(err.message);
    if (want && !strstr(err.message, want))
        fail_msg("message \"%s\" lacks \"%s\"", err.message, want);
    int64_t off = err.offset;
    kc_error_clear(&err);
    return off;
}

static void test_json_obj_pod_metadata(void **state)
{
    char buf[KC_GENPOD_MAX];
    kc_genpod_one(buf, sizeof buf, 42);
    kc_obj *o = parse_ok(buf, 0);
    assert_string_equal(kc_obj_kind(o), "Pod");
    assert_string_equal(kc_obj_api_version(o), "v1");
    assert_string_equal(kc_obj_namespace(o), "ns-42");
    assert_string_equal(kc_obj_name(o), "web-7d9f8c6b5-00042");
    assert_string_equal(kc_obj_uid(o), "3f2b1c9e-8a7d-4e6f-9b0a-000000000042");
    assert_string_equal(kc_obj_resource_version(o), "1000042");
    assert_int_equal(kc_obj_rv_int(o), 1000042);
    assert_string_equal(kc_obj_controller_uid(o), "aa11bb22-cc33-dd44-ee55-ff6677889900");
    assert_int_equal(kc_obj_owner_count(o), 1);
    assert_int_equal(kc_obj_finalizer_count(o), 0);
    assert_int_equal(kc_obj_generation(o), 0);
    assert_false(kc_obj_deleting(o));
    assert_int_equal(kc_obj_label_count(o), 4);
    assert_string_equal(kc_obj_label(o, "tier"), "frontend");
    assert_string_equal(kc_obj_label(o, "app"), "web");
    assert_null(kc_obj_label(o, "nope"));
    kc_obj_unref(o);
}

static void test_json_obj_strips_managed_fields(void **state)
{
    char buf[KC_GENPOD_MAX];
    size_t in = kc_genpod_one(buf, sizeof buf, 1);
    kc_obj *o = parse_ok(buf, 0);
    size_t len;
    const char *j = kc_obj_json(o, &len);
    assert_null(strstr(j, "managedFields"));
    assert_null(strstr(j, "f:metadata"));
    assert_non_null(strstr(j, "\"creationTimestamp\":\"2024-05-01T12:00:00Z\",\"labels\""));
    assert_true(len < in * 7 / 10); /* ~40 % of the Pod is managedFields */
    assert_int_equal(j[len], '\0');
    assert_int_equal(strlen(j), len);
    kc_obj_unref(o);

    o = parse_ok(buf, KC_DECODE_KEEP_MANAGED_FIELDS);
    j = kc_obj_json(o, &len);
    assert_int_equal(len, in);
    assert_memory_equal(j, buf, in);
    kc_obj_unref(o);
}

static void test_json_obj_strip_positions(void **state)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"{\"metadata\":{\"managedFields\":[{\"a\":1}]}}", "{\"metadata\":{}}"},
        {"{\"metadata\":{\"managedFields\":[],\"name\":\"x\"}}", "{\"metadata\":{\"name\":\"x\"}}"},
        {"{\"metadata\":{\"name\":\"x\",\"managedFields\":[]}}", "{\"metadata\":{\"name\":\"x\"}}"},
        {"{\"metadata\":{\"name\":\"x\",\"managedFields\":null,\"uid\":\"u\"}}",
         "{\"metadata\":{\"name\":\"x\",\"uid\":\"u\"}}"},
        {"{\"spec\":{\"managedFields\":[1]}}", "{\"spec\":{\"managedFields\":[1]}}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kc_obj *o = parse_ok(cases[i].in, 0);
        assert_string_equal(kc_obj_json(o, NULL), cases[i].out);
        kc_obj_unref(o);
    }
}

static void test_json_obj_metadata_only(void **state)
{
    char buf[KC_GENPOD_MAX];
    kc_genpod_one(buf, sizeof buf, 3);
    kc_obj *o = parse_ok(buf, KC_DECODE_METADATA_ONLY);
    const char *j = kc_obj_json(o, NULL);
    assert_true(strncmp(j, "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{", 44) == 0);
    assert_null(strstr(j, "\"spec\""));
    assert_null(strstr(j, "\"status\""));
    assert_null(strstr(j, "managedFields"));
    assert_string_equal(kc_obj_name(o), "web-7d9f8c6b5-00003");
    kc_obj_unref(o);

    o = parse_ok("{\"spec\":{},\"metadata\":{\"name\":\"a\"},\"kind\":\"K\"}",
                 KC_DECODE_METADATA_ONLY);
    assert_string_equal(kc_obj_json(o, NULL), "{\"kind\":\"K\",\"metadata\":{\"name\":\"a\"}}");
    kc_obj_unref(o);
    o = parse_ok("{}", KC_DECODE_METADATA_ONLY);
    assert_string_equal(kc_obj_json(o, NULL), "{}");
    kc_obj_unref(o);
}

static void test_json_obj_minifies_pretty_input(void **state)
{
    const char *in = "{\n  \"kind\": \"ConfigMap\",\r\n\t\"metadata\": { \"name\": \"a b\",\n"
                     "  \"managedFields\": [ {\"x\": 1} ] ,\n \"labels\": {\"k\" : \"v w\"} },\n"
                     "  \"data\": { \"s\": \"two  spaces\" }\n}\n";
    kc_obj *o = parse_ok(in, 0);
    assert_string_equal(kc_obj_json(o, NULL),
                        "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a b\",\"labels\":{\"k\":"
                        "\"v w\"}},\"data\":{\"s\":\"two  spaces\"}}");
    assert_string_equal(kc_obj_name(o), "a b");
    assert_string_equal(kc_obj_label(o, "k"), "v w");
    kc_obj_unref(o);
}

static void test_json_obj_absent_fields_are_empty(void **state)
{
    kc_obj *o = parse_ok("{}", 0);
    assert_string_equal(kc_obj_kind(o), "");
    assert_string_equal(kc_obj_api_version(o), "");
    assert_string_equal(kc_obj_namespace(o), "");
    assert_string_equal(kc_obj_name(o), "");
    assert_string_equal(kc_obj_uid(o), "");
    assert_string_equal(kc_obj_resource_version(o), "");
    assert_string_equal(kc_obj_controller_uid(o), "");
    assert_int_equal(kc_obj_rv_int(o), 0);
    assert_int_equal(kc_obj_label_count(o), 0);
    assert_null(kc_obj_label(o, "a"));
    const char *k = (const char *)0x1;
    assert_int_equal(kc_obj_label_at(o, 0, &k, NULL), KC_EINVAL);
    assert_ptr_equal(k, (const char *)0x1);
    kc_obj_unref(o);
}

static void test_json_obj_rv_int(void **state)
{
    static const struct {
        const char *rv;
        uint64_t v;
    } cases[] = {
        {"1", 1},
        {"123", 123},
        {"18446744073709551615", UINT64_MAX},
        {"18446744073709551616", 0},
        {"0", 0},
        {"01", 0},
        {"-1", 0},
        {"1a", 0},
        {"", 0},
        {"+5", 0},
        {"99999999999999999999", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char js[128];
        snprintf(js, sizeof js, "{\"metadata\":{\"resourceVersion\":\"%s\"}}", cases[i].rv);
        kc_obj *o = parse_ok(js, 0);
        assert_string_equal(kc_obj_resource_version(o), cases[i].rv);
        if (kc_obj_rv_int(o) != cases[i].v)
            fail_msg("rv \"%s\": got %llu want %llu", cases[i].rv,
                     (unsigned long long)kc_obj_rv_int(o), (unsigned long long)cases[i].v);
        kc_obj_unref(o);
    }
}

static void test_json_obj_lifecycle_fields(void **state)
{
    kc_obj *o =
        parse_ok("{\"metadata\":{\"generation\":7,\"deletionTimestamp\":\"2024-01-01T00:00:00Z\","
                 "\"finalizers\":[\"a\",\"b\",\"c\"],\"ownerReferences\":[{\"uid\":\"u1\"},"
                 "{\"uid\":\"u2\",\"controller\":true},{\"uid\":\"u3\",\"controller\":false}]}}",
                 0);
    assert_int_equal(kc_obj_generation(o), 7);
    assert_true(kc_obj_deleting(o));
    assert_int_equal(kc_obj_finalizer_count(o), 3);
    assert_int_equal(kc_obj_owner_count(o), 3);
    assert_string_equal(kc_obj_controller_uid(o), "u2");
    kc_obj_unref(o);
    o = parse_ok("{\"metadata\":{\"deletionTimestamp\":null}}", 0);
    assert_false(kc_obj_deleting(o));
    kc_obj_unref(o);
}

static void test_json_obj_labels_sorted_and_unescaped(void **state)
{
    kc_obj *o =
        parse_ok("{\"metadata\":{\"labels\":{\"zeta\":\"1\",\"a\\/b\":\"x\\u00e9\",\"mid\":\"\","
                 "\"b\":\"2\",\"aa\":\"3\"}}}",
                 0);
    assert_int_equal(kc_obj_label_count(o), 5);
    const char *want[] = {"a/b", "aa", "b", "mid", "zeta"};
    for (size_t i = 0; i < 5; i++) {
        const char *k, *v;
        assert_int_equal(kc_obj_label_at(o, i, &k, &v), 0);
        assert_string_equal(k, want[i]);
        assert_string_equal(kc_obj_label(o, k), v);
    }
    assert_string_equal(kc_obj_label(o, "a/b"), "x\xc3\xa9");
    assert_string_equal(kc_obj_label(o, "mid"), "");
    kc_obj_unref(o);
}

static void test_json_obj_many_labels_sorted(void **state)
{
    char js[2048] = "{\"metadata\":{\"labels\":{";
    size_t at = strlen(js);
    for (int i = 39; i >= 0; i--)
        at += (size_t)sprintf(js + at, "%s\"k%02d\":\"v%d\"", i == 39 ? "" : ",", i, i);
    strcpy(js + at, "}}}");
    kc_obj *o = parse_ok(js, 0);
    assert_int_equal(kc_obj_label_count(o), 40);
    for (size_t i = 0; i < 40; i++) {
        const char *k, *v;
        char wk[8], wv[8];
        snprintf(wk, sizeof wk, "k%02zu", i);
        snprintf(wv, sizeof wv, "v%zu", i);
        assert_int_equal(kc_obj_label_at(o, i, &k, &v), 0);
        assert_string_equal(k, wk);
        assert_string_equal(v, wv);
        assert_string_equal(kc_obj_label(o, wk), wv);
    }
    assert_null(kc_obj_label(o, "k40"));
    kc_obj_unref(o);
}

static void test_json_obj_refcount_and_heap_size(void **state)
{
    char buf[KC_GENPOD_MAX];
    kc_genpod_one(buf, sizeof buf, 9);
    kc_obj *o = parse_ok(buf, 0);
    size_t len;
    kc_obj_json(o, &len);
    size_t heap = kc_obj_heap_size(o);
    assert_true(heap >= len + 64);
    assert_true(heap <= len + len / 8 + 512);
    assert_ptr_equal(kc_obj_ref(o), o);
    assert_ptr_equal(kc_obj_ref(o), o);
    kc_obj_unref(o);
    kc_obj_unref(o);
    assert_string_equal(kc_obj_kind(o), "Pod"); /* still one reference */
    kc_obj_unref(o);
    kc_obj_unref(NULL);
    assert_null(kc_obj_ref(NULL));
    assert_int_equal(kc_obj_heap_size(NULL), 0);
    o = parse_ok("{}", 0);
    assert_true(kc_obj_heap_size(o) >= 2 + 64); /* padding for in-place pointer access */
    kc_obj_unref(o);
}

static void test_json_obj_wrong_metadata_types(void **state)
{
    static const struct {
        const char *json, *want;
    } cases[] = {
        {"{\"metadata\":5}", "metadata is not an object"},
        {"{\"metadata\":{\"name\":5}}", "metadata.name"},
        {"{\"metadata\":{\"namespace\":[]}}", "metadata.namespace"},
        {"{\"metadata\":{\"uid\":true}}", "metadata.uid"},
        {"{\"metadata\":{\"resourceVersion\":12}}", "metadata.resourceVersion"},
        {"{\"metadata\":{\"labels\":[]}}", "metadata.labels"},
        {"{\"metadata\":{\"labels\":{\"a\":1}}}", "labels value"},
        {"{\"metadata\":{\"annotations\":\"x\"}}", "metadata.annotations"},
        {"{\"metadata\":{\"generation\":\"1\"}}", "metadata.generation"},
        {"{\"metadata\":{\"generation\":1.5}}", "metadata.generation"},
        {"{\"metadata\":{\"finalizers\":{}}}", "metadata.finalizers"},
        {"{\"metadata\":{\"ownerReferences\":{}}}", "metadata.ownerReferences"},
        {"{\"metadata\":{\"ownerReferences\":[1]}}", "ownerReferences[] entry"},
        {"{\"metadata\":{\"ownerReferences\":[{\"controller\":\"yes\"}]}}", "controller"},
        {"{\"metadata\":{\"managedFields\":{}}}", "metadata.managedFields"},
        {"{\"metadata\":{\"deletionTimestamp\":1}}", "deletionTimestamp"},
        {"{\"kind\":1}", "kind"},
        {"{\"apiVersion\":{}}", "apiVersion"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t off = parse_bad(cases[i].json, strlen(cases[i].json), cases[i].want);
        assert_true(off > 0 && off < (int64_t)strlen(cases[i].json));
    }
}

static void test_json_obj_not_an_object(void **state)
{
    parse_bad("[1,2]", 5, "not a JSON object");
    parse_bad("\"x\"", 3, NULL);
    parse_bad("17", 2, NULL);
    parse_bad("", 0, NULL);
    parse_bad("   ", 3, NULL);
    parse_bad("nul", 3, NULL);
    parse_bad("{\"a\":1} x", 9, NULL);
    parse_bad("{\"a\":1}}", 8, NULL);
}

static void test_json_obj_truncated_every_prefix(void **state)
{
    char buf[KC_GENPOD_MAX];
    size_t n = kc_genpod_one(buf, sizeof buf, 5);
    for (size_t cut = 0; cut < n; cut++) {
        kc_error err = KC_ERROR_INIT;
        kc_obj *o = NULL;
        int r = kc_obj_parse(buf, cut, NULL, &o, &err);
        if (r != KC_EPARSE)
            fail_msg("prefix of %zu bytes: %s", cut, kc_errno_name(r));
        assert_null(o);
        kc_error_clear(&err);
    }
}

static void test_json_obj_invalid_utf8(void **state)
{
    static const char *cases[] = {
        "{\"metadata\":{\"name\":\"\xff\"}}",
        "{\"spec\":{\"x\":\"\xc3\"}}",
        "{\"spec\":{\"x\":\"\xed\xa0\x80\"}}", /* surrogate */
        "{\"spec\":\"\xe2\x82\"}",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        parse_bad(cases[i], strlen(cases[i]), "UTF-8");
}

static void test_json_obj_deep_nesting(void **state)
{
    size_t n = 10000;
    char *s = malloc(2 * n + 16 + 8000);
    memset(s, '[', n);
    parse_bad(s, n, NULL); /* 10k '[' */
    strcpy(s, "{\"a\":");
    memset(s + 5, '[', n);
    parse_bad(s, n + 5, NULL); /* 10k unclosed '[' inside an object */
    memset(s + 5, '{', n);
    parse_bad(s, n + 5, NULL);
    /* balanced: 10k '[' … ']' inside spec */
    memset(s + 5, '[', n);
    memset(s + 5 + n, ']', n);
    strcpy(s + 5 + 2 * n, "}");
    parse_bad(s, strlen(s), "deeper");
    /* 400 levels are fine, and so is a wide object with many brackets but little depth */
    kc_obj *o = NULL;
    memset(s + 5, '[', 400);
    memset(s + 5 + 400, ']', 400);
    strcpy(s + 805, "}");
    assert_int_equal(kc_obj_parse(s, strlen(s), NULL, &o, NULL), 0);
    kc_obj_unref(o);
    strcpy(s, "{\"a\":[");
    size_t at = strlen(s);
    for (int i = 0; i < 2000; i++)
        at += (size_t)sprintf(s + at, "%s[]", i ? "," : "");
    strcpy(s + at, "]}");
    assert_int_equal(kc_obj_parse(s, strlen(s), NULL, &o, NULL), 0);
    kc_obj_unref(o);
    free(s);
}

static void test_json_obj_too_large(void **state)
{
    char buf[KC_GENPOD_MAX];
    size_t n = kc_genpod_one(buf, sizeof buf, 5);
    kc_decode_opts o = {.flags = 0, .max_object_size = 1000};
    kc_error err = KC_ERROR_INIT;
    kc_obj *obj = NULL;
    assert_int_equal(kc_obj_parse(buf, n, &o, &obj, &err), KC_ETOOLARGE);
    assert_null(obj);
    kc_error_clear(&err);
    o.max_object_size = 100000;
    assert_int_equal(kc_obj_parse(buf, n, &o, &obj, &err), 0);
    kc_obj_unref(obj);
}

static void test_json_obj_null_arguments(void **state)
{
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(NULL, 5, NULL, &o, NULL), KC_EINVAL);
    assert_int_equal(kc_obj_parse("{}", 2, NULL, NULL, NULL), KC_EINVAL);
    assert_int_equal(kc_obj_parse("{\"a\":", 5, NULL, &o, NULL), KC_EPARSE); /* err may be NULL */
    /* accessors take a NULL object as one without fields */
    size_t len = 1;
    assert_string_equal(kc_obj_json(NULL, &len), "");
    assert_int_equal(len, 0);
    assert_string_equal(kc_obj_name(NULL), "");
    assert_string_equal(kc_obj_kind(NULL), "");
    assert_int_equal(kc_obj_rv_int(NULL), 0);
    assert_int_equal(kc_obj_generation(NULL), 0);
    assert_false(kc_obj_deleting(NULL));
    assert_int_equal(kc_obj_label_count(NULL), 0);
    assert_int_equal(kc_obj_finalizer_count(NULL), 0);
    assert_int_equal(kc_obj_owner_count(NULL), 0);
    assert_null(kc_obj_label(NULL, "a"));
    const char *k = NULL;
    assert_int_equal(kc_obj_label_at(NULL, 0, &k, NULL), KC_EINVAL);
    o = parse_ok("{\"metadata\":{\"labels\":{\"a\":\"b\"}}}", 0);
    assert_null(kc_obj_label(o, NULL));
    kc_obj_unref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_obj_pod_metadata),
        cmocka_unit_test(test_json_obj_strips_managed_fields),
        cmocka_unit_test(test_json_obj_strip_positions),
        cmocka_unit_test(test_json_obj_metadata_only),
        cmocka_unit_test(test_json_obj_minifies_pretty_input),
        cmocka_unit_test(test_json_obj_absent_fields_are_empty),
        cmocka_unit_test(test_json_obj_rv_int),
        cmocka_unit_test(test_json_obj_lifecycle_fields),
        cmocka_unit_test(test_json_obj_labels_sorted_and_unescaped),
        cmocka_unit_test(test_json_obj_many_labels_sorted),
        cmocka_unit_test(test_json_obj_refcount_and_heap_size),
        cmocka_unit_test(test_json_obj_wrong_metadata_types),
        cmocka_unit_test(test_json_obj_not_an_object),
        cmocka_unit_test(test_json_obj_truncated_every_prefix),
        cmocka_unit_test(test_json_obj_invalid_utf8),
        cmocka_unit_test(test_json_obj_deep_nesting),
        cmocka_unit_test(test_json_obj_too_large),
        cmocka_unit_test(test_json_obj_null_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
