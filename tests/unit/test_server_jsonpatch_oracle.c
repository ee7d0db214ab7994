/*
 * test_server_jsonpatch_oracle — kc_doc_json_patch_diff checked against the embedded server's own
 * RFC 6902 applier (kc__json_patch, src/server/patch/patch_json.c): for every pair (a, b), the
 * patch diff(a, b) applied to a gives a value equal to b (numbers by value). Pairs are random
 * edits of fixtures (a seeded PRNG, so a failure reproduces: the message names the seed and both
 * documents) and hand-written edge cases: keys with '~' and '/', nested arrays, type changes,
 * nulls, root replacement. This is what a mutating webhook's patch must do on the API server
 * (admission spec JP2, JP4, JP6).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "core/internal.h"
#include "server/patch/patch_internal.h"

#include <kcache/doc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* diff(a, b) applied to a by the server's applier equals b; label names the case. */
static void check_pair(const json_t *a, const json_t *b, const char *label)
{
    char *ta = json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY);
    char *tb = json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY);
    assert_non_null(ta);
    assert_non_null(tb);
    kc_doc *da = NULL, *db = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_doc_parse(ta, strlen(ta), &da, &err), 0);
    assert_int_equal(kc_doc_parse(tb, strlen(tb), &db, &err), 0);
    char *patch = NULL;
    size_t n = 0;
    if (kc_doc_json_patch_diff(da, db, &patch, &n, &err))
        fail_msg("%s: diff failed: %s", label, err.message);
    json_t *ops = json_loadb(patch, n, 0, NULL);
    assert_non_null(ops);
    json_t *doc = json_deep_copy(a);
    if (kc__json_patch(&doc, ops, &err) != 0)
        fail_msg("%s: the server refused the patch: %s\n a=%s\n b=%s\n patch=%s", label,
                 err.message, ta, tb, patch);
    if (!kc__json_equal(doc, b)) {
        char *got = json_dumps(doc, JSON_COMPACT | JSON_ENCODE_ANY);
        fail_msg("%s: patched a differs from b\n a=%s\n b=%s\n patch=%s\n got=%s", label, ta, tb,
                 patch, got);
    }
    if (kc__json_equal(a, b) && strcmp(patch, "[]") != 0)
        fail_msg("%s: equal documents gave %s", label, patch);
    json_decref(doc);
    json_decref(ops);
    free(patch);
    kc_doc_free(da);
    kc_doc_free(db);
    kc_error_clear(&err);
    free(ta);
    free(tb);
}

static void check_text(const char *a, const char *b)
{
    json_t *ja = json_loads(a, JSON_DECODE_ANY, NULL), *jb = json_loads(b, JSON_DECODE_ANY, NULL);
    assert_non_null(ja);
    assert_non_null(jb);
    check_pair(ja, jb, a);
    check_pair(jb, ja, b); /* and back */
    json_decref(ja);
    json_decref(jb);
}

static void test_server_jsonpatch_oracle_edges(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {
        {"{\"a/b\":1,\"c~d\":2,\"~1\":3,\"/\":4,\"~\":5}", "{\"a/b\":2,\"~01\":3,\"/\":{\"x\":1}}"},
        {"{\"metadata\":{\"annotations\":{\"example.com/x\":\"1\"}}}",
         "{\"metadata\":{\"annotations\":{\"example.com/x\":\"2\",\"a~/b\":\"\"}}}"},
        {"{\"l\":[[1,2,[3,4]],[5]]}", "{\"l\":[[1,[3]],[5,6],[],[7]]}"},
        {"[[[]]]", "[[[1]],[]]"},
        {"{\"v\":1}", "{\"v\":\"1\"}"},
        {"{\"v\":[1]}", "{\"v\":{\"0\":1}}"},
        {"{\"v\":null}", "{\"v\":false}"},
        {"{\"v\":null,\"w\":1}", "{\"w\":null}"},
        {"{\"a\":1}", "[1,2]"},
        {"{\"a\":1}", "null"},
        {"\"s\"", "{\"a\":{\"b\":[]}}"},
        {"[1,2,3,1,2,3]", "[3,2,1]"},
        {"[1,1,1]", "[1,1]"},
        {"[{\"name\":\"a\"},{\"name\":\"b\"}]", "[{\"name\":\"b\"}]"},
        {"{\"\":{\"\":1}}", "{\"\":{\"\":2,\"x\":[]}}"},
        {"{\"a\":1.5,\"b\":-0.0}", "{\"a\":2,\"b\":1e300}"},
        {"{\"spec\":{\"containers\":[{\"name\":\"web\",\"image\":\"nginx\"}]}}",
         "{\"spec\":{\"containers\":[{\"name\":\"init\"},{\"name\":\"web\",\"image\":\"nginx:2\"}]}"
         "}"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        check_text(pairs[i][0], pairs[i][1]);
}

/* ---- random edits ------------------------------------------------------------------------- */

static const char *const KEYS[] = {"a",  "b",        "name",   "a/b",       "~", "~1",
                                   "~0", "/",        "",       "x~/y",      "é", "0",
                                   "-",  "metadata", "labels", "k8s.io/app"};

static json_t *random_value(kc__rng *r, int depth)
{
    switch (kc__rng_range(r, 0, depth > 2 ? 5 : 7)) {
    case 0:
        return json_null();
    case 1:
        return json_boolean(kc__rng_range(r, 0, 1));
    case 2:
        return json_integer((json_int_t)kc__rng_range(r, 0, 20) - 10);
    case 3:
        return json_real((double)kc__rng_range(r, 0, 100) / 8.0);
    case 4:
        return json_string(KEYS[kc__rng_range(r, 0, KC__ARRAY_LEN(KEYS) - 1)]);
    case 5: {
        json_t *o = json_object();
        for (uint64_t i = kc__rng_range(r, 0, 3); i > 0; i--)
            json_object_set_new(o, KEYS[kc__rng_range(r, 0, KC__ARRAY_LEN(KEYS) - 1)],
                                random_value(r, depth + 1));
        return o;
    }
    default: {
        json_t *a = json_array();
        for (uint64_t i = kc__rng_range(r, 0, 4); i > 0; i--)
            json_array_append_new(a, random_value(r, depth + 1));
        return a;
    }
    }
}

/* One random edit somewhere in v (a container). */
static void edit(json_t *v, kc__rng *r, int depth)
{
    uint64_t act = kc__rng_range(r, 0, 4);
    if (json_is_object(v)) {
        size_t n = json_object_size(v), k = n ? (size_t)kc__rng_range(r, 0, n - 1) : 0;
        const char *key = NULL;
        json_t *m = NULL;
        void *it = json_object_iter(v);
        for (size_t i = 0; it && i < k; i++)
            it = json_object_iter_next(v, it);
        if (it) {
            key = json_object_iter_key(it);
            m = json_object_iter_value(it);
        }
        if (act == 0 && m && (json_is_object(m) || json_is_array(m)) && depth < 8)
            edit(m, r, depth + 1);
        else if (act <= 1 || !key)
            json_object_set_new(v, KEYS[kc__rng_range(r, 0, KC__ARRAY_LEN(KEYS) - 1)],
                                random_value(r, depth));
        else if (act == 2)
            json_object_del(v, key);
        else
            json_object_set_new(v, key, random_value(r, depth));
    } else if (json_is_array(v)) {
        size_t n = json_array_size(v), k = n ? (size_t)kc__rng_range(r, 0, n - 1) : 0;
        json_t *e = n ? json_array_get(v, k) : NULL;
        if (act == 0 && e && (json_is_object(e) || json_is_array(e)) && depth < 8)
            edit(e, r, depth + 1);
        else if (act <= 1 || !e)
            json_array_insert_new(v, (size_t)kc__rng_range(r, 0, n), random_value(r, depth));
        else if (act == 2)
            json_array_remove(v, k);
        else
            json_array_set_new(v, k, random_value(r, depth));
    }
}

static const char *const FIXTURES[] = {
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"d\","
    "\"labels\":{\"app\":\"web\",\"k8s.io/x\":\"1\"},\"annotations\":{\"a~b\":\"\"},"
    "\"finalizers\":[\"f1\",\"f2\"]},\"spec\":{\"containers\":[{\"name\":\"web\",\"image\":"
    "\"nginx\",\"ports\":[{\"containerPort\":80},{\"containerPort\":443}],\"env\":[{\"name\":\"A\","
    "\"value\":\"1\"}]}],\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}}],\"nodeName\":null},"
    "\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
    "{\"a\":[1,[2,[3,[4]]],{\"b\":{\"c\":[null,true,1.5]}}],\"/\":{\"~\":[]}}",
    "[[],[[]],{},\"s\",0,null]",
};

static void test_server_jsonpatch_oracle_random(void **state)
{
    (void)state;
    size_t cases = 0;
    for (uint64_t seed = 1; seed <= 4000; seed++) {
        kc__rng r;
        kc__rng_seed(&r, seed);
        json_t *a = json_loads(FIXTURES[seed % KC__ARRAY_LEN(FIXTURES)], 0, NULL);
        assert_non_null(a);
        for (uint64_t i = kc__rng_range(&r, 0, 3); i > 0; i--) /* a itself edited */
            edit(a, &r, 0);
        json_t *b = json_deep_copy(a);
        if (kc__rng_range(&r, 0, 99) == 0) { /* a new root */
            json_decref(b);
            b = random_value(&r, 0);
        } else {
            for (uint64_t i = kc__rng_range(&r, 1, 6); i > 0; i--)
                edit(b, &r, 0);
        }
        char label[32];
        snprintf(label, sizeof label, "seed %llu", (unsigned long long)seed);
        check_pair(a, b, label);
        check_pair(b, a, label);
        cases += 2;
        json_decref(a);
        json_decref(b);
    }
    assert_int_equal(cases, 8000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_jsonpatch_oracle_edges),
        cmocka_unit_test(test_server_jsonpatch_oracle_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
