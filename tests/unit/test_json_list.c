/*
 * test_json_list — kc_list_decode / kc_list_decoder: list metadata, items, injection of
 * kind/apiVersion, transforms, bad bodies.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../bench/genpod.h"

#include <kcache/decode.h>

#include "core/populate.h" /* kc__mem_huge_stats_get */
#include "core/slab.h"     /* kc__slab_set_enabled */
#include "json/sj.h"       /* kc__sj_list_window_set */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int windowed; /* its address is the state of the suite's run in windows */

struct items {
    kc_obj *objs[64];
    size_t n;
    int stop_after; /* return KC_ECANCELED after this many items; 0 = never */
};

static int collect(void *ud, kc_obj *obj)
{
    struct items *it = ud;
    if (it->n == 64) {
        kc_obj_unref(obj);
        return KC_ENOMEM;
    }
    it->objs[it->n++] = obj;
    if (it->stop_after && (int)it->n >= it->stop_after)
        return KC_ECANCELED;
    return 0;
}

static void drop(struct items *it)
{
    for (size_t i = 0; i < it->n; i++)
        kc_obj_unref(it->objs[i]);
    it->n = 0;
}

static int decode(const char *body, unsigned flags, kc_list_meta *meta, struct items *it,
                  kc_error *err)
{
    kc_decode_opts o = {.flags = flags, .max_object_size = 0};
    return kc_list_decode(body, strlen(body), &o, meta, collect, it, err);
}

static void test_json_list_genpod_items(void **state)
{
    size_t len;
    char *body = kc_genpod_list(20, &len);
    struct items it = {{0}, 0, 0};
    kc_list_meta meta;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_list_decode(body, len, NULL, &meta, collect, &it, &err), 0);
    assert_int_equal(it.n, 20);
    assert_string_equal(meta.kind, "PodList");
    assert_string_equal(meta.api_version, "v1");
    assert_string_equal(meta.resource_version, "2000000");
    assert_null(meta.continue_token);
    assert_int_equal(meta.remaining_item_count, -1);
    for (size_t i = 0; i < it.n; i++) {
        char want[64], one[KC_GENPOD_MAX];
        snprintf(want, sizeof want, "web-7d9f8c6b5-%05zu", i);
        assert_string_equal(kc_obj_name(it.objs[i]), want);
        assert_null(strstr(kc_obj_json(it.objs[i], NULL), "managedFields"));
        /* the same as decoding the Pod on its own */
        size_t n = kc_genpod_one(one, sizeof one, (unsigned)i);
        kc_obj *single = NULL;
        assert_int_equal(kc_obj_parse(one, n, NULL, &single, NULL), 0);
        assert_string_equal(kc_obj_json(single, NULL), kc_obj_json(it.objs[i], NULL));
        kc_obj_unref(single);
    }
    kc_list_meta_clear(&meta);
    assert_null(meta.kind);
    assert_int_equal(meta.remaining_item_count, -1);
    drop(&it);
    free(body);
}

static void test_json_list_injects_kind_and_api_version(void **state)
{
    struct items it = {{0}, 0, 0};
    kc_list_meta meta;
    const char *body = "{\"kind\":\"DeploymentList\",\"apiVersion\":\"apps/v1\",\"metadata\":{},"
                       "\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"kind\":\"Deployment\","
                       "\"apiVersion\":\"apps/v1\",\"metadata\":{\"name\":\"b\"}},{},"
                       "{\"metadata\":{}}]}";
    /* an item's own apiVersion other than the list's is refused (issue 29 point 11:
     * test_json_hostile) */
    assert_int_equal(decode(body, 0, &meta, &it, NULL), 0);
    assert_int_equal(it.n, 4);
    assert_string_equal(
        kc_obj_json(it.objs[0], NULL),
        "{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\",\"metadata\":{\"name\":"
        "\"a\"}}");
    assert_string_equal(kc_obj_kind(it.objs[0]), "Deployment");
    assert_string_equal(kc_obj_api_version(it.objs[0]), "apps/v1");
    assert_string_equal(
        kc_obj_json(it.objs[1], NULL),
        "{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\",\"metadata\":{\"name\":"
        "\"b\"}}");
    assert_string_equal(kc_obj_json(it.objs[2], NULL),
                        "{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\"}");
    assert_string_equal(kc_obj_json(it.objs[3], NULL),
                        "{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\",\"metadata\":{}}");
    assert_string_equal(kc_obj_api_version(it.objs[3]), "apps/v1");
    kc_list_meta_clear(&meta);
    drop(&it);
}

static void test_json_list_kind_after_items(void **state)
{
    struct items it = {{0}, 0, 0};
    kc_list_meta meta;
    const char *body = "{\"items\":[{\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":\"y\"}}}],"
                       "\"metadata\":{\"resourceVersion\":\"9\"},\"apiVersion\":\"v1\",\"kind\":"
                       "\"SecretList\"}";
    assert_int_equal(decode(body, 0, &meta, &it, NULL), 0);
    assert_int_equal(it.n, 1);
    assert_string_equal(kc_obj_kind(it.objs[0]), "Secret");
    assert_string_equal(kc_obj_api_version(it.objs[0]), "v1");
    assert_string_equal(kc_obj_label(it.objs[0], "x"), "y");
    assert_string_equal(meta.resource_version, "9");
    assert_string_equal(meta.kind, "SecretList");
    kc_list_meta_clear(&meta);
    drop(&it);
}

static void test_json_list_metadata_fields(void **state)
{
    struct items it = {{0}, 0, 0};
    kc_list_meta meta;
    const char *body =
        "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"77\",\"continue\":"
        "\"tok==\",\"remainingItemCount\":1234},\"items\":[]}";
    assert_int_equal(decode(body, 0, &meta, &it, NULL), 0);
    assert_int_equal(it.n, 0);
    assert_string_equal(meta.resource_version, "77");
    assert_string_equal(meta.continue_token, "tok==");
    assert_int_equal(meta.remaining_item_count, 1234);
    assert_null(meta.api_version);
    kc_list_meta_clear(&meta);
    /* empty continue means none */
    assert_int_equal(decode("{\"metadata\":{\"continue\":\"\"},\"items\":[]}", 0, &meta, &it, NULL),
                     0);
    assert_null(meta.continue_token);
    kc_list_meta_clear(&meta);
}

static void test_json_list_empty_null_missing_items(void **state)
{
    static const char *bodies[] = {
        "{\"kind\":\"PodList\",\"items\":[]}",
        "{\"kind\":\"PodList\",\"items\":null}",
        "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"1\"}}",
        "{}",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        struct items it = {{0}, 0, 0};
        kc_list_meta meta;
        assert_int_equal(decode(bodies[i], 0, &meta, &it, NULL), 0);
        assert_int_equal(it.n, 0);
        kc_list_meta_clear(&meta);
    }
}

static void test_json_list_transforms(void **state)
{
    size_t len;
    char *body = kc_genpod_list(2, &len);
    struct items it = {{0}, 0, 0};
    kc_decode_opts o = {.flags = KC_DECODE_METADATA_ONLY, .max_object_size = 0};
    assert_int_equal(kc_list_decode(body, len, &o, NULL, collect, &it, NULL), 0);
    assert_int_equal(it.n, 2);
    assert_null(strstr(kc_obj_json(it.objs[0], NULL), "\"spec\""));
    assert_null(strstr(kc_obj_json(it.objs[0], NULL), "managedFields"));
    drop(&it);
    o.flags = KC_DECODE_KEEP_MANAGED_FIELDS;
    assert_int_equal(kc_list_decode(body, len, &o, NULL, collect, &it, NULL), 0);
    assert_non_null(strstr(kc_obj_json(it.objs[1], NULL), "managedFields"));
    drop(&it);
    free(body);
}

static void test_json_list_pretty_body(void **state)
{
    struct items it = {{0}, 0, 0};
    kc_list_meta meta;
    const char *body = "{\n  \"kind\": \"PodList\" ,\n  \"apiVersion\": \"v1\"\n,  \"items\": [\n"
                       "    {\n      \"metadata\": {\n        \"name\": \"p 1\",\n"
                       "        \"managedFields\": [ { \"manager\": \"x\" } ]\n      },\n"
                       "      \"spec\": { \"nodeName\": \"n\" }\n    },\n"
                       "    {\"metadata\":{\"name\":\"p2\"}}\n  ]\n}\n";
    assert_int_equal(decode(body, 0, &meta, &it, NULL), 0);
    assert_int_equal(it.n, 2);
    assert_string_equal(kc_obj_json(it.objs[0], NULL),
                        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p 1\"},"
                        "\"spec\":{\"nodeName\":\"n\"}}");
    assert_string_equal(kc_obj_name(it.objs[0]), "p 1");
    assert_string_equal(kc_obj_json(it.objs[1], NULL),
                        "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p2\"}}");
    kc_list_meta_clear(&meta);
    drop(&it);
}

static void test_json_list_padded_input(void **state)
{
    size_t len;
    char *body = kc_genpod_list(3, &len);
    char *padded = malloc(len + KC_DECODE_PADDING);
    memcpy(padded, body, len);
    memset(padded + len, ' ', KC_DECODE_PADDING);
    struct items it = {{0}, 0, 0};
    kc_decode_opts o = {.flags = KC_DECODE_INPUT_PADDED, .max_object_size = 0};
    assert_int_equal(kc_list_decode(padded, len, &o, NULL, collect, &it, NULL), 0);
    assert_int_equal(it.n, 3);
    assert_string_equal(kc_obj_name(it.objs[2]), "web-7d9f8c6b5-00002");
    drop(&it);
    free(padded);
    free(body);
}

/* A parser grown for a body of a MiB or more has its stage-1 index populated in one call
 * (sj.cpp, populate_index) instead of faulted in by stage 1 a page at a time: the fresh memory
 * core/populate.c counts grows by at least the body's length. The body is padded (decoded in
 * place: no scratch copy) and the object arena is off, so nothing else that big is populated. */
static void test_json_list_big_body_populates_the_index(void **state)
{
    if (*state == &windowed)
        skip(); /* in windows the index is window-sized: nothing big to populate */
    size_t len;
    char *body = kc_genpod_list(800, &len); /* ~4.8 MB */
    char *padded = malloc(len + KC_DECODE_PADDING);
    assert_non_null(padded);
    memcpy(padded, body, len);
    memset(padded + len, ' ', KC_DECODE_PADDING);
    bool arena = kc__slab_enabled();
    kc__slab_set_enabled(false);
    kc_decode_opts o = {.flags = KC_DECODE_INPUT_PADDED};
    kc_list_decoder *dec = NULL;
    assert_int_equal(kc_list_decoder_new(&o, &dec, NULL), 0);
    kc__mem_huge_stats a, b;
    kc__mem_huge_stats_get(&a);
    assert_int_equal(kc_list_decoder_decode(dec, padded, len, NULL, NULL, NULL, NULL), 0);
    kc__mem_huge_stats_get(&b);
    assert_true(b.total_bytes - a.total_bytes >= len - 8192);
    kc__mem_huge_stats_get(&a); /* a second body of the same size: the index is reused */
    assert_int_equal(kc_list_decoder_decode(dec, padded, len, NULL, NULL, NULL, NULL), 0);
    kc__mem_huge_stats_get(&b);
    assert_int_equal(b.total_bytes, a.total_bytes);
    kc_list_decoder_free(dec);
    kc__slab_set_enabled(arena);
    free(padded);
    free(body);
}

static void test_json_list_callback_stops(void **state)
{
    size_t len;
    char *body = kc_genpod_list(5, &len);
    struct items it = {{0}, 0, 2};
    kc_list_meta meta = {(char *)0x1, NULL, NULL, NULL, 0};
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_list_decode(body, len, NULL, &meta, collect, &it, &err), KC_ECANCELED);
    assert_int_equal(err.code, KC_ECANCELED);
    assert_int_equal(it.n, 2);
    assert_ptr_equal(meta.api_version, (char *)0x1); /* untouched on failure */
    kc_error_clear(&err);
    drop(&it);
    /* on_item NULL: decoded and dropped */
    assert_int_equal(kc_list_decode(body, len, NULL, NULL, NULL, NULL, NULL), 0);
    free(body);
}

static void test_json_list_bad_bodies(void **state)
{
    static const struct {
        const char *body, *want;
    } cases[] = {
        {"[]", "not a JSON object"},
        {"{\"items\":5}", "items is not an array"},
        {"{\"items\":{}}", "items"},
        {"{\"items\":[1]}", "items[] element"},
        {"{\"items\":[{\"metadata\":{\"name\":1}}]}", "metadata.name"},
        {"{\"items\":[{\"metadata\":{\"labels\":\"x\"}}]}", "metadata.labels"},
        {"{\"metadata\":[],\"items\":[]}", "list metadata"},
        {"{\"metadata\":{\"remainingItemCount\":\"x\"},\"items\":[]}", "remainingItemCount"},
        {"{\"kind\":5,\"items\":[]}", "list kind"},
        {"{\"items\":[{}", NULL},
        {"{\"items\":[{}]", NULL},
        {"{\"items\":[{\"a\":\"\xff\"}]}", "UTF-8"},
        {"{\"items\":[]} []", NULL},
        {"", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct items it = {{0}, 0, 0};
        kc_error err = KC_ERROR_INIT;
        int r = decode(cases[i].body, 0, NULL, &it, &err);
        if (r != KC_EPARSE)
            fail_msg("case %zu (%s): %s", i, cases[i].body, kc_errno_name(r));
        assert_non_null(err.message);
        if (cases[i].want && !strstr(err.message, cases[i].want))
            fail_msg("case %zu: message \"%s\" lacks \"%s\"", i, err.message, cases[i].want);
        kc_error_clear(&err);
        drop(&it);
    }
}

static void test_json_list_deep_item(void **state)
{
    size_t n = 5000;
    char *body = malloc(2 * n + 64);
    strcpy(body, "{\"items\":[{\"spec\":");
    size_t at = strlen(body);
    memset(body + at, '[', n);
    memset(body + at + n, ']', n);
    strcpy(body + at + 2 * n, "}]}");
    struct items it = {{0}, 0, 0};
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_list_decode(body, strlen(body), NULL, NULL, collect, &it, &err), KC_EPARSE);
    assert_non_null(strstr(err.message, "deeper"));
    assert_int_equal(it.n, 0);
    kc_error_clear(&err);
    free(body);
}

static void test_json_list_truncated_every_prefix(void **state)
{
    size_t len;
    char *body = kc_genpod_list(2, &len);
    for (size_t cut = 0; cut < len; cut += 7) {
        struct items it = {{0}, 0, 0};
        int r = kc_list_decode(body, cut, NULL, NULL, collect, &it, NULL);
        if (r != KC_EPARSE)
            fail_msg("prefix %zu: %s", cut, kc_errno_name(r));
        drop(&it);
    }
    free(body);
}

static void test_json_list_item_too_large(void **state)
{
    size_t len;
    char *body = kc_genpod_list(2, &len);
    struct items it = {{0}, 0, 0};
    kc_decode_opts o = {.flags = 0, .max_object_size = 2000};
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_list_decode(body, len, &o, NULL, collect, &it, &err), KC_ETOOLARGE);
    assert_int_equal(it.n, 0);
    kc_error_clear(&err);
    free(body);
}

static void test_json_list_decoder_reuse(void **state)
{
    kc_list_decoder *d = NULL;
    assert_int_equal(kc_list_decoder_new(NULL, &d, NULL), 0);
    assert_non_null(d);
    for (unsigned n = 1; n <= 9; n += 4) {
        size_t len;
        char *body = kc_genpod_list(n, &len);
        struct items it = {{0}, 0, 0};
        kc_list_meta meta;
        assert_int_equal(kc_list_decoder_decode(d, body, len, &meta, collect, &it, NULL), 0);
        assert_int_equal(it.n, n);
        kc_list_meta_clear(&meta);
        drop(&it);
        free(body);
        assert_int_equal(kc_list_decoder_decode(d, "{", 1, NULL, collect, &it, NULL), KC_EPARSE);
    }
    kc_list_decoder_trim(d);
    assert_int_equal(kc_list_decoder_decode(d, "{\"items\":[]}", 12, NULL, NULL, NULL, NULL), 0);
    kc_list_decoder_free(d);
    kc_list_decoder_free(NULL);
}

struct nested {
    int outer, inner;
};

static int inner_item(void *ud, kc_obj *obj)
{
    ((struct nested *)ud)->inner++;
    kc_obj_unref(obj);
    return 0;
}

static int outer_item(void *ud, kc_obj *obj)
{
    struct nested *n = ud;
    n->outer++;
    size_t len;
    char *body = kc_genpod_list(3, &len);
    int r = kc_list_decode(body, len, NULL, NULL, inner_item, n, NULL);
    free(body);
    /* the outer item is still intact */
    if (strncmp(kc_obj_name(obj), "web-7d9f8c6b5-", 14) != 0)
        r = KC_EINVAL;
    kc_obj_unref(obj);
    return r;
}

static void test_json_list_nested_decode_in_callback(void **state)
{
    size_t len;
    char *body = kc_genpod_list(4, &len);
    struct nested n = {0, 0};
    assert_int_equal(kc_list_decode(body, len, NULL, NULL, outer_item, &n, NULL), 0);
    assert_int_equal(n.outer, 4);
    assert_int_equal(n.inner, 12);
    /* and again, with the per-thread scratch warm */
    assert_int_equal(kc_list_decode(body, len, NULL, NULL, outer_item, &n, NULL), 0);
    assert_int_equal(n.outer, 8);
    free(body);
}

static int windows_on(void **state)
{
    *state = &windowed;
    kc__sj_list_window_set(1, 13);
    return 0;
}

static int windows_off(void **state)
{
    (void)state;
    kc__sj_list_window_set(0, 0);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_list_genpod_items),
        cmocka_unit_test(test_json_list_injects_kind_and_api_version),
        cmocka_unit_test(test_json_list_kind_after_items),
        cmocka_unit_test(test_json_list_metadata_fields),
        cmocka_unit_test(test_json_list_empty_null_missing_items),
        cmocka_unit_test(test_json_list_transforms),
        cmocka_unit_test(test_json_list_pretty_body),
        cmocka_unit_test(test_json_list_padded_input),
        cmocka_unit_test(test_json_list_big_body_populates_the_index),
        cmocka_unit_test(test_json_list_callback_stops),
        cmocka_unit_test(test_json_list_bad_bodies),
        cmocka_unit_test(test_json_list_deep_item),
        cmocka_unit_test(test_json_list_truncated_every_prefix),
        cmocka_unit_test(test_json_list_item_too_large),
        cmocka_unit_test(test_json_list_decoder_reuse),
        cmocka_unit_test(test_json_list_nested_decode_in_callback),
    };
    /* The whole suite again with every body over 1 byte decoded in windows of 13 bytes (windows
     * against one pass: test_json_list_window.c). */
    return cmocka_run_group_tests(tests, NULL, NULL) |
           cmocka_run_group_tests_name("in windows of 13 bytes", tests, windows_on, windows_off);
}
