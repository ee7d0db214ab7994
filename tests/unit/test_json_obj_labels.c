/*
 * test_json_obj_labels — kc_obj's labels: every way the stored text is made (whole object,
 * managedFields cut before or after the labels, kind/apiVersion injected from a list, metadata
 * only, a projection that keeps the labels, one that does not, pretty input) gives the same
 * sorted labels by kc_obj_label and kc_obj_label_at; a key with escapes is unescaped, and a key
 * given twice (once escaped) is refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <kcache/decode.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const KEYS[] = {"a/b", "app", "app.kubernetes.io/name", "tier", "zz"};
static const char *const VALS[] = {"slash", "web", "shop", "", "last"};

/* The labels of o are exactly KEYS/VALS, by kc_obj_label and kc_obj_label_at. */
static void check_labels(const kc_obj *o)
{
    assert_int_equal(kc_obj_label_count(o), 5);
    for (size_t i = 0; i < 5; i++) {
        const char *k = NULL, *v = NULL;
        assert_int_equal(kc_obj_label_at(o, i, &k, &v), 0);
        assert_string_equal(k, KEYS[i]);
        assert_string_equal(v, VALS[i]);
        assert_string_equal(kc_obj_label(o, KEYS[i]), VALS[i]);
    }
    assert_null(kc_obj_label(o, "ap"));
    assert_null(kc_obj_label(o, "appx"));
    assert_null(kc_obj_label(o, ""));
    assert_null(kc_obj_label(o, "zzz"));
}

static kc_obj *parse(const char *json, unsigned flags, const char *const *keep)
{
    kc_decode_opts o = {.flags = flags, .keep = keep};
    kc_error err = KC_ERROR_INIT;
    kc_obj *obj = NULL;
    int r = kc_obj_parse(json, strlen(json), &o, &obj, &err);
    if (r)
        fail_msg("parse: %s (%s)", kc_errno_name(r), err.message);
    return obj;
}

#define LABELS                                                                                     \
    "\"labels\":{\"zz\":\"last\",\"tier\":\"\",\"app.kubernetes.io/name\":\"shop\","               \
    "\"a\\/b\":\"slash\",\"app\":\"web\"}"
#define MF "\"managedFields\":[{\"manager\":\"m\",\"fieldsV1\":{\"f:metadata\":{}}}]"

static void test_json_obj_labels_every_text(void **state)
{
    (void)state;
    static const char *const keep_labels[] = {"/metadata/labels", "/spec/x", NULL};
    static const char *const keep_meta[] = {"/metadata", NULL};
    static const char *const keep_name[] = {"/metadata/name", NULL};
    static const char *const keep_one[] = {"/metadata/labels/app", NULL};
    const char *texts[] = {
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"," LABELS "},\"spec\":{\"x\":1}}",
        "{\"metadata\":{" MF ",\"name\":\"p\"," LABELS "},\"spec\":{}}",
        "{\"metadata\":{\"name\":\"p\"," LABELS "," MF "},\"spec\":{}}",
        "{ \"metadata\" : { \"name\" : \"p\", " LABELS " } }", /* minified first */
    };
    for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
        const char *const *keeps[] = {NULL, keep_labels, keep_meta, keep_name, keep_one};
        for (size_t k = 0; k < 5; k++) {
            kc_obj *o = parse(texts[t], 0, keeps[k]);
            check_labels(o);
            kc_obj_unref(o);
        }
        kc_obj *o = parse(texts[t], KC_DECODE_METADATA_ONLY, NULL);
        check_labels(o);
        kc_obj_unref(o);
        o = parse(texts[t], KC_DECODE_KEEP_MANAGED_FIELDS, NULL);
        check_labels(o);
        kc_obj_unref(o);
    }
}

static int count_item(void *ud, kc_obj *obj)
{
    check_labels(obj);
    ++*(int *)ud;
    kc_obj_unref(obj);
    return 0;
}

/* Items of a list get the list's kind and apiVersion injected before their own members. */
static void test_json_obj_labels_list_injected(void **state)
{
    (void)state;
    static const char body[] =
        "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"5\"},"
        "\"items\":[{\"metadata\":{\"name\":\"a\"," LABELS "}},{\"metadata\":{" MF
        ",\"name\":\"b\"," LABELS "}}]}";
    int n = 0;
    kc_list_meta meta;
    kc_error err = KC_ERROR_INIT;
    int r = kc_list_decode(body, strlen(body), NULL, &meta, count_item, &n, &err);
    if (r)
        fail_msg("list: %s", err.message);
    assert_int_equal(n, 2);
    kc_list_meta_clear(&meta);
}

static void test_json_obj_labels_escaped_keys(void **state)
{
    (void)state;
    static const char *const keep_meta[] = {"/metadata", NULL};
    kc_obj *o =
        parse("{\"metadata\":{\"labels\":{\"\\u0061pp\":\"x\",\"b\":\"\\u00e9\",\"a\":\"1\"}"
              "}}",
              0, keep_meta);
    assert_int_equal(kc_obj_label_count(o), 3);
    const char *k, *v;
    assert_int_equal(kc_obj_label_at(o, 0, &k, &v), 0);
    assert_string_equal(k, "a");
    assert_int_equal(kc_obj_label_at(o, 1, &k, &v), 0);
    assert_string_equal(k, "app");
    assert_string_equal(v, "x");
    assert_string_equal(kc_obj_label(o, "b"), "\xc3\xa9");
    kc_obj_unref(o);
    /* the same key twice, once escaped: refused */
    kc_obj *bad = NULL;
    static const char dup[] = "{\"metadata\":{\"labels\":{\"a\\u0062\":\"1\",\"ab\":\"2\"}}}";
    assert_int_equal(kc_obj_parse(dup, strlen(dup), NULL, &bad, NULL), KC_EPARSE);
    assert_null(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_obj_labels_every_text),
        cmocka_unit_test(test_json_obj_labels_list_injected),
        cmocka_unit_test(test_json_obj_labels_escaped_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
