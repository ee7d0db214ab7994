/*
 * test_json_hostile — data a hostile or buggy server sends that the decoders must refuse rather
 * than store wrong (issue 29 points 9 and 11):
 *
 *   - a string with a NUL character (\u0000) in any field that becomes a C string (name,
 *     namespace, uid, resourceVersion, kind, apiVersion, label keys and values, controller uid,
 *     the list's own metadata, a watch event's type): KC_EPARSE naming the field, the item
 *     (items[i]) and the byte offset of the string — never a name cut at the NUL (two pods
 *     "p\u0000one" and "p\u0000two" were both "p", one silently lost);
 *   - strings whose escapes are harmless (\u0041, an escaped backslash before "u0000") and a raw
 *     NUL byte inside a string (refused by simdjson's stage 1, which the cheap NUL test relies on);
 *   - an item whose kind or apiVersion is not the list's (a Secret inside a ConfigMapList);
 *     absent is fine, and lists whose kind says nothing (v1 "List") are not checked;
 *   - errors about an item name it: "items[i]: " and its offset, also when the item callback
 *     stopped the decode;
 *   - kc__obj_get_cstring, the library's own read of a string it uses as a C string (discovery,
 *     lease holders, owner references): a NUL is refused, or kept visible as \u0000.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <kcache/decode.h>

#include "json/decode_internal.h" /* kc__obj_get_cstring */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one decode did: the code, the error's message and offset, the names stored. */
typedef struct outcome {
    int rc;
    int64_t off;
    char msg[300];
    char names[8][64];
    size_t n;
    int stop_at; /* the item callback returns KC_EINVAL at this item (-1: never) */
} outcome;

static int collect(void *ud, kc_obj *o)
{
    outcome *oc = ud;
    if ((int)oc->n == oc->stop_at) {
        kc_obj_unref(o);
        return KC_EINVAL;
    }
    if (oc->n < 8)
        snprintf(oc->names[oc->n], sizeof oc->names[0], "%s/%s", kc_obj_namespace(o),
                 kc_obj_name(o));
    oc->n++;
    kc_obj_unref(o);
    return 0;
}

static void finish(outcome *oc, int rc, kc_error *err)
{
    oc->rc = rc;
    oc->off = err->offset;
    snprintf(oc->msg, sizeof oc->msg, "%s", err->message ? err->message : "");
    kc_error_clear(err);
}

/* body (len bytes: it may hold NUL bytes) through kc_list_decode. */
static outcome list_n(const char *body, size_t len, int stop_at)
{
    outcome oc = {.stop_at = stop_at};
    kc_error err = KC_ERROR_INIT;
    finish(&oc, kc_list_decode(body, len, NULL, NULL, collect, &oc, &err), &err);
    return oc;
}

static outcome list(const char *body)
{
    return list_n(body, strlen(body), -1);
}

static int collect_event(void *ud, const kc_watch_event *ev)
{
    return ev->obj ? collect(ud, kc_obj_ref(ev->obj)) : 0;
}

static outcome watch(const char *lines)
{
    outcome oc = {.stop_at = -1};
    kc_error err = KC_ERROR_INIT;
    kc_watch_decoder *w = NULL;
    assert_int_equal(kc_watch_decoder_new(NULL, &w, NULL), 0);
    int rc = kc_watch_decoder_feed(w, lines, strlen(lines), collect_event, &oc, &err);
    if (!rc)
        rc = kc_watch_decoder_finish(w, collect_event, &oc, &err);
    kc_watch_decoder_free(w);
    finish(&oc, rc, &err);
    return oc;
}

/* oc failed with KC_EPARSE, its message holding each of the NULL-terminated words, at the byte
 * of `at` in text. */
static void refused(const outcome *oc, const char *text, const char *at, ...)
{
    if (oc->rc != KC_EPARSE)
        fail_msg("accepted (rc %d, %zu stored: %s): %s", oc->rc, oc->n, oc->names[0], text);
    va_list ap;
    va_start(ap, at);
    for (const char *w; (w = va_arg(ap, const char *));)
        if (!strstr(oc->msg, w))
            fail_msg("message \"%s\" does not say \"%s\"", oc->msg, w);
    va_end(ap);
    const char *p = strstr(text, at);
    assert_non_null(p);
    if (oc->off != p - text)
        fail_msg("offset %lld, expected %lld (%s): %s", (long long)oc->off, (long long)(p - text),
                 at, oc->msg);
}

#define CM_LIST(items) "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"items\":[" items "]}"
#define CM(name, rest) "{\"metadata\":{\"namespace\":\"default\",\"name\":\"" name "\"" rest "}}"

/* The case: p\u0000one and p\u0000two were both stored as default/p. */
static void test_nul_in_name_two_pods(void **st)
{
    (void)st;
    const char *body = CM_LIST(CM("p\\u0000one", "") "," CM("p\\u0000two", ""));
    outcome oc = list(body);
    refused(&oc, body, "\"p\\u0000one\"", "items[0]", "metadata.name", "NUL", NULL);
    assert_int_equal(oc.n, 0);
    /* a good item first: it is delivered, the bad one names its index */
    const char *body2 = CM_LIST(CM("ok", "") "," CM("p\\u0000two", ""));
    oc = list(body2);
    refused(&oc, body2, "\"p\\u0000two\"", "items[1]", "metadata.name", NULL);
    assert_int_equal(oc.n, 1);
    assert_string_equal(oc.names[0], "default/ok");
}

/* Every metadata field that becomes a C string. */
static void test_nul_in_each_field(void **st)
{
    (void)st;
    static const struct {
        const char *item, *at, *field;
    } cases[] = {
        {"{\"metadata\":{\"name\":\"a\",\"namespace\":\"d\\u0000x\"}}", "\"d\\u0000x\"",
         "metadata.namespace"},
        {"{\"metadata\":{\"name\":\"a\",\"uid\":\"u\\u0000\"}}", "\"u\\u0000\"", "metadata.uid"},
        {"{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"5\\u00007\"}}", "\"5\\u00007\"",
         "metadata.resourceVersion"},
        {"{\"kind\":\"ConfigMap\\u0000\",\"metadata\":{\"name\":\"a\"}}", "\"ConfigMap\\u0000\"",
         "kind"},
        {"{\"apiVersion\":\"\\u0000v1\",\"metadata\":{\"name\":\"a\"}}", "\"\\u0000v1\"",
         "apiVersion"},
        {"{\"metadata\":{\"name\":\"a\",\"labels\":{\"app\":\"x\\u0000y\"}}}", "\"x\\u0000y\"",
         "metadata.labels value"},
        {"{\"metadata\":{\"name\":\"a\",\"labels\":{\"ok\":\"1\",\"ap\\u0000p\":\"x\"}}}",
         "\"ap\\u0000p\"", "metadata.labels key"},
        {"{\"metadata\": {\"name\": \"a\", \"labels\": {\"ap\\u0000p\" : \"x\"}}}",
         "\"ap\\u0000p\"", "metadata.labels key"}, /* with whitespace: no fast path */
        {"{\"metadata\":{\"name\":\"a\",\"ownerReferences\":[{\"controller\":true,\"uid\":"
         "\"o\\u0000\"}]}}",
         "\"o\\u0000\"", "metadata.ownerReferences[].uid"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char body[512];
        snprintf(body, sizeof body, "{\"kind\":\"ConfigMapList\",\"items\":[%s]}", cases[i].item);
        outcome oc = list(body);
        refused(&oc, body, cases[i].at, "items[0]", cases[i].field, "NUL", NULL);
        /* the same object alone, and as a watch event */
        kc_obj *o = NULL;
        kc_error err = KC_ERROR_INIT;
        assert_int_equal(kc_obj_parse(cases[i].item, strlen(cases[i].item), NULL, &o, &err),
                         KC_EPARSE);
        assert_non_null(strstr(err.message, cases[i].field));
        assert_int_equal(err.offset, strstr(cases[i].item, cases[i].at) - cases[i].item);
        kc_error_clear(&err);
        char line[600];
        snprintf(line, sizeof line, "{\"type\":\"ADDED\",\"object\":%s}\n", cases[i].item);
        oc = watch(line);
        refused(&oc, line, cases[i].at, cases[i].field, NULL);
    }
}

/* The list's own metadata and a watch event's type are C strings too. */
static void test_nul_in_list_metadata_and_event_type(void **st)
{
    (void)st;
    const char *b1 = "{\"kind\":\"ConfigMapList\",\"metadata\":{\"resourceVersion\":\"1\\u00002\"},"
                     "\"items\":[]}";
    outcome oc = list(b1);
    refused(&oc, b1, "\"1\\u00002\"", "list metadata.resourceVersion", NULL);
    const char *b2 =
        "{\"kind\":\"ConfigMapList\",\"metadata\":{\"continue\":\"t\\u0000\"},\"items\":[]}";
    oc = list(b2);
    refused(&oc, b2, "\"t\\u0000\"", "list metadata.continue", NULL);
    const char *b3 = "{\"kind\":\"ConfigMap\\u0000List\",\"items\":[]}";
    oc = list(b3);
    refused(&oc, b3, "\"ConfigMap\\u0000List\"", "list kind", NULL);
    const char *w = "{\"type\":\"ADDED\\u0000x\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n";
    oc = watch(w);
    refused(&oc, w, "\"ADDED\\u0000x\"", "watch event type", NULL);
}

/* Escapes that are not NUL are fine, and a raw NUL byte inside a string is refused (the cheap
 * test skips strings without escapes: stage 1 must refuse raw control characters). */
static void test_escapes_without_nul_and_raw_nul(void **st)
{
    (void)st;
    outcome oc = list(CM_LIST(CM("p\\u0041", "") "," CM("a\\\\u0000", "")));
    assert_int_equal(oc.rc, 0);
    assert_int_equal(oc.n, 2);
    assert_string_equal(oc.names[0], "default/pA");
    assert_string_equal(oc.names[1], "default/a\\u0000");
    static const char raw[] = "{\"items\":[{\"metadata\":{\"name\":\"p\0one\"}}]}";
    oc = list_n(raw, sizeof raw - 1, -1);
    assert_int_equal(oc.rc, KC_EPARSE);
    assert_int_equal(oc.n, 0);
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(raw + 10, sizeof raw - 13, NULL, &o, NULL), KC_EPARSE);
}

/* Issue 29 point 11: an item of another kind, or apiVersion, than its list's. */
static void test_item_kind_or_api_version_not_the_lists(void **st)
{
    (void)st;
    const char *b1 = CM_LIST(CM("a", "") ",{\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\"}}");
    outcome oc = list(b1);
    refused(&oc, b1, "\"kind\":\"Secret\"", "items[1]", "Secret", "ConfigMapList", "ConfigMap",
            NULL);
    assert_int_equal(oc.n, 1);
    const char *b2 = CM_LIST("{\"apiVersion\":\"v2\",\"metadata\":{\"name\":\"a\"}}");
    oc = list(b2);
    refused(&oc, b2, "\"apiVersion\":\"v2\"", "items[0]", "apiVersion", "\"v2\"", "\"v1\"", NULL);
    /* pretty-printed: the item is decoded again from a minified copy, offsets still the body's */
    const char *b3 = CM_LIST("{ \"kind\" : \"Secret\" ,\"metadata\":{\"name\":\"s\"}}");
    oc = list(b3);
    refused(&oc, b3, "\"kind\" : \"Secret\"", "items[0]", "Secret", NULL);
    /* the right kind and apiVersion, or none, are fine */
    oc = list(CM_LIST("{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\"}}"
                      "," CM("b", "")));
    assert_int_equal(oc.rc, 0);
    assert_int_equal(oc.n, 2);
    /* metadata-only lists hold PartialObjectMetadata */
    oc = list("{\"kind\":\"PartialObjectMetadataList\",\"apiVersion\":\"meta.k8s.io/v1\","
              "\"items\":[{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\","
              "\"metadata\":{\"name\":\"a\"}}]}");
    assert_int_equal(oc.rc, 0);
    /* a generic v1 List holds any kind, a list that does not say is not checked */
    oc = list("{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[{\"kind\":\"Secret\","
              "\"metadata\":{\"name\":\"a\"}},{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\","
              "\"metadata\":{\"name\":\"b\"}}]}");
    assert_int_equal(oc.rc, 0);
    assert_int_equal(oc.n, 2);
    oc = list("{\"items\":[{\"kind\":\"Secret\",\"metadata\":{\"name\":\"a\"}}]}");
    assert_int_equal(oc.rc, 0);
}

/* The item callback's refusal names the item and its offset. */
static void test_callback_error_names_the_item(void **st)
{
    (void)st;
    const char *body = CM_LIST(CM("a", "") "," CM("b", "") "," CM("c", ""));
    outcome oc = list_n(body, strlen(body), 1);
    assert_int_equal(oc.rc, KC_EINVAL);
    assert_non_null(strstr(oc.msg, "items[1]: stopped by the item callback"));
    assert_int_equal(oc.off, strstr(body, "},{") + 2 - body);
}

/* The library's own reads of strings it uses as C strings (discovery, leases, owner references)
 * refuse a NUL, or keep it visible as \u0000 where absent would mean something else. */
static void test_get_cstring_refuses_or_escapes_nul(void **st)
{
    (void)st;
    const char *j = "{\"spec\":{\"holderIdentity\":\"replica-a\\u0000x\",\"ok\":\"b\"}}";
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(j, strlen(j), NULL, &o, NULL), 0);
    char *s = NULL;
    size_t n = 0;
    assert_int_equal(kc_obj_get_string(o, "/spec/holderIdentity", &s, &n, NULL), 0);
    assert_int_equal(n, 11); /* the public accessor returns it whole, with its length */
    free(s);
    s = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__obj_get_cstring(o, "/spec/holderIdentity", &s, false, &err), KC_EPARSE);
    assert_null(s);
    assert_non_null(strstr(err.message, "/spec/holderIdentity contains a NUL"));
    kc_error_clear(&err);
    assert_int_equal(kc__obj_get_cstring(o, "/spec/holderIdentity", &s, true, NULL), 0);
    assert_string_equal(s, "replica-a\\u0000x");
    free(s);
    assert_int_equal(kc__obj_get_cstring(o, "/spec/ok", &s, false, NULL), 0);
    assert_string_equal(s, "b");
    free(s);
    kc_obj_unref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nul_in_name_two_pods),
        cmocka_unit_test(test_nul_in_each_field),
        cmocka_unit_test(test_nul_in_list_metadata_and_event_type),
        cmocka_unit_test(test_escapes_without_nul_and_raw_nul),
        cmocka_unit_test(test_item_kind_or_api_version_not_the_lists),
        cmocka_unit_test(test_callback_error_names_the_item),
        cmocka_unit_test(test_get_cstring_refuses_or_escapes_nul),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
