/*
 * test_nodeagent_rec.c — a cached pod's record (src/nodeagent/pm_rec.c) and its accessors and
 * JSON (pm_access.c, pm_entry.c): every kept field read back as it was, absent kept apart from
 * empty, values with escapes and NUL bytes whole, keys interned once per cache (and stored in the
 * record when the dictionary will not take them), wide slots for a large record, the container
 * bound; and the informer-facing side: the identity object the record rides in.
 * Issue 34 point 1 (heap per cached pod); enrich-semantics CI1 (container fields), CA2 (the
 * metadata an enricher emits).
 */
#include "nodeagent/internal.h"

#include <kcache/decode.h>

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char POD[] =
    "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-1\",\"namespace\":"
    "\"shop\","
    "\"uid\":\"u-1\",\"resourceVersion\":\"42\",\"generation\":3,\"labels\":{\"app\":\"web\","
    "\"q\\\"k\":\"v\\\\1\\u00e9\",\"empty\":\"\"},\"annotations\":{\"nul\":\"a\\u0000b\","
    "\"note\":\"line\\nnext\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
    "\"ReplicaSet\",\"name\":\"web-rs\",\"uid\":\"rs-1\",\"controller\":true,"
    "\"blockOwnerDeletion\":false},{\"kind\":\"Thing\",\"name\":\"t\"}],\"deletionTimestamp\":"
    "\"2024-05-01T12:00:00Z\",\"managedFields\":[{\"manager\":\"x\"}]},\"spec\":{\"nodeName\":"
    "\"node-1\",\"containers\":[{\"name\":\"api\"}]},\"status\":{\"podIP\":\"\",\"hostIP\":"
    "\"10.0.0.1\",\"initContainerStatuses\":[{\"name\":\"init\",\"image\":\"busybox\","
    "\"containerID\":\"cri-o://i1\"}],\"containerStatuses\":[{\"name\":\"api\",\"image\":\"img:1\","
    "\"imageID\":\"img@sha256:aa\",\"containerID\":\"containerd://c1\"},{\"name\":\"side\","
    "\"image\":\"envoy\"}]}}";

/* What kc_podmeta_pod_json must give for POD: the kept fields, containers before init
 * containers. */
static const char WANT[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\",\"namespace\":"
    "\"shop\",\"uid\":\"u-1\",\"resourceVersion\":\"42\",\"labels\":{\"app\":\"web\",\"q\\\"k\":"
    "\"v\\\\1\\u00e9\",\"empty\":\"\"},\"annotations\":{\"nul\":\"a\\u0000b\",\"note\":"
    "\"line\\nnext\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
    "\"name\":\"web-rs\",\"uid\":\"rs-1\",\"controller\":true,\"blockOwnerDeletion\":false},"
    "{\"kind\":\"Thing\",\"name\":\"t\"}],\"deletionTimestamp\":\"2024-05-01T12:00:00Z\"},"
    "\"spec\":{\"nodeName\":\"node-1\"},\"status\":{\"podIP\":\"\",\"hostIP\":\"10.0.0.1\","
    "\"containerStatuses\":[{\"name\":\"api\",\"image\":\"img:1\",\"imageID\":\"img@sha256:aa\","
    "\"containerID\":\"containerd://c1\"},{\"name\":\"side\",\"image\":\"envoy\"}],"
    "\"initContainerStatuses\":[{\"name\":\"init\",\"image\":\"busybox\",\"containerID\":"
    "\"cri-o://i1\"}]}}";

static kc_podmeta_pod *entry(const char *json, size_t n, kc__pm_dict *d)
{
    kc_decode_opts o = {.keep = kc__pm_pod_keep};
    kc_obj *src = NULL, *rec = NULL;
    kc_error e = KC_ERROR_INIT;
    if (kc_obj_parse(json, n, &o, &src, &e))
        fail_msg("parse: %s", e.message);
    assert_int_equal(kc__pm_rec_build(src, d, &rec), 0);
    kc_obj_unref(src);
    kc_podmeta_pod *p = kc__pm_pod_new(rec, d, false, 0, 0);
    kc_obj_unref(rec);
    assert_non_null(p);
    return p;
}

static void assert_json_same(const char *got, size_t n, const char *want)
{
    json_error_t je;
    json_t *g = json_loadb(got, n, JSON_ALLOW_NUL, &je), *w = json_loads(want, JSON_ALLOW_NUL, &je);
    assert_non_null(g);
    assert_non_null(w);
    if (!json_equal(g, w))
        fail_msg("JSON differs:\n got  %.*s\n want %s", (int)n, got, want);
    json_decref(g);
    json_decref(w);
}

static void test_nodeagent_rec_fields_read_back(void **state)
{
    (void)state;
    kc__pm_dict *d = kc__pm_dict_new();
    kc_podmeta_pod *p = entry(POD, sizeof POD - 1, d);
    size_t n;
    assert_string_equal(kc_podmeta_pod_get(p, KC_PODMETA_FIELD_NAME, NULL), "web-1");
    assert_string_equal(kc_podmeta_pod_get(p, KC_PODMETA_FIELD_NAMESPACE, NULL), "shop");
    assert_string_equal(kc_podmeta_pod_get(p, KC_PODMETA_FIELD_UID, NULL), "u-1");
    assert_string_equal(kc_podmeta_pod_get(p, KC_PODMETA_FIELD_RESOURCE_VERSION, NULL), "42");
    assert_string_equal(kc_podmeta_pod_get(p, KC_PODMETA_FIELD_NODE_NAME, &n), "node-1");
    assert_int_equal(n, 6);
    assert_string_equal(kc_podmeta_pod_get(p, KC_PODMETA_FIELD_POD_IP, &n), "");
    assert_string_equal(kc_podmeta_pod_get(p, KC_PODMETA_FIELD_HOST_IP, NULL), "10.0.0.1");
    assert_string_equal(kc_podmeta_pod_get(p, KC_PODMETA_FIELD_DELETION_TIMESTAMP, NULL),
                        "2024-05-01T12:00:00Z");
    assert_null(kc_podmeta_pod_get(p, (kc_podmeta_field)99, NULL));
    assert_null(kc_podmeta_pod_map_get(p, KC_PODMETA_LABELS, "absent"));
    /* labels in order; escapes unescaped */
    assert_int_equal(kc_podmeta_pod_map_count(p, KC_PODMETA_LABELS), 3);
    const char *k, *v;
    assert_int_equal(kc_podmeta_pod_map_at(p, KC_PODMETA_LABELS, 1, &k, &v, &n), 0);
    assert_string_equal(k, "q\"k");
    assert_string_equal(v, "v\\1\xc3\xa9");
    assert_int_equal(n, 5);
    assert_int_equal(kc_podmeta_pod_map_at(p, KC_PODMETA_LABELS, 3, &k, &v, &n), KC_ENOTFOUND);
    assert_int_equal(kc_podmeta_pod_map_at(p, (kc_podmeta_map)5, 0, &k, &v, &n), KC_EINVAL);
    assert_string_equal(kc_podmeta_pod_map_get(p, KC_PODMETA_LABELS, "empty"), "");
    /* a value holding a NUL byte: whole, by its length */
    assert_int_equal(kc_podmeta_pod_map_at(p, KC_PODMETA_ANNOTATIONS, 0, &k, &v, &n), 0);
    assert_string_equal(k, "nul");
    assert_int_equal(n, 3);
    assert_memory_equal(v, "a\0b", 3);
    /* owners and their booleans */
    assert_int_equal(kc_podmeta_pod_owner_count(p), 2);
    kc_podmeta_owner ow;
    assert_int_equal(kc_podmeta_pod_owner(p, 0, &ow), 0);
    assert_string_equal(ow.kind, "ReplicaSet");
    assert_string_equal(ow.uid, "rs-1");
    assert_true(ow.controller);
    assert_false(ow.block_owner_deletion);
    assert_int_equal(kc_podmeta_pod_owner(p, 1, &ow), 0);
    assert_string_equal(ow.api_version, "");
    assert_false(ow.controller);
    assert_int_equal(kc_podmeta_pod_owner(p, 2, &ow), KC_ENOTFOUND);
    /* containers: containers first, then init (CI1); absent fields "" */
    assert_int_equal(kc_podmeta_pod_container_count(p), 3);
    kc_podmeta_container c;
    assert_int_equal(kc_podmeta_pod_container(p, 0, &c), 0);
    assert_string_equal(c.container_id, "containerd://c1");
    assert_string_equal(c.id, "c1");
    assert_string_equal(c.image_id, "img@sha256:aa");
    assert_int_equal(kc_podmeta_pod_container(p, 1, &c), 0);
    assert_string_equal(c.name, "side");
    assert_string_equal(c.container_id, "");
    assert_string_equal(c.id, "");
    assert_int_equal(kc_podmeta_pod_container(p, 2, &c), 0);
    assert_int_equal(c.kind, KC_PODMETA_INIT);
    assert_string_equal(c.id, "i1");
    assert_int_equal(kc_podmeta_pod_find_container(p, NULL, "cri-o://i1"), 2);
    assert_int_equal(kc_podmeta_pod_find_container(p, "side", NULL), 1);
    /* the JSON, and the kc_obj made from it */
    char *json = kc_podmeta_pod_json(p, &n);
    assert_non_null(json);
    assert_json_same(json, n, WANT);
    free(json);
    const kc_obj *o = kc_podmeta_pod_obj(p);
    assert_string_equal(kc_obj_label(o, "app"), "web");
    assert_ptr_equal(kc_podmeta_pod_obj(p), o); /* made once */
    assert_true(kc__pm_pod_heap(p) > kc_obj_heap_size(o));
    kc_podmeta_pod_unref(p);
    kc__pm_dict_unref(d);
}

/* The record rides in the pod's identity object: valid JSON of its identity, the fields the
 * informer's store keys and resumes by. */
static void test_nodeagent_rec_identity_object(void **state)
{
    (void)state;
    kc__pm_dict *d = kc__pm_dict_new();
    kc_podmeta_pod *p = entry(POD, sizeof POD - 1, d);
    size_t n;
    const char *t = kc_obj_json(p->obj, &n);
    assert_json_same(t, n,
                     "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\","
                     "\"namespace\":\"shop\",\"uid\":\"u-1\",\"resourceVersion\":\"42\"}}");
    assert_true(kc_obj_deleting(p->obj));
    assert_int_equal(kc_obj_generation(p->obj), 3);
    assert_int_equal(kc_obj_label_count(p->obj), 0);
    const char *raw;
    size_t rn;
    assert_int_equal(kc_obj_get_raw(p->obj, "/metadata/uid", &raw, &rn, NULL), 0);
    assert_int_equal(rn, 5);
    kc_podmeta_pod_unref(p);
    kc__pm_dict_unref(d);
}

/* Keys are interned once per cache: two pods hand out the same key; a key the dictionary will not
 * take (too long) is kept in the record and reads the same. */
static void test_nodeagent_rec_keys_interned(void **state)
{
    (void)state;
    kc__pm_dict *d = kc__pm_dict_new();
    char big[1200];
    int n = snprintf(big, sizeof big,
                     "{\"metadata\":{\"name\":\"a\",\"namespace\":\"x\",\"uid\":\"u\",\"labels\":"
                     "{\"app\":\"1\",\"%0400d\":\"long\"}}}",
                     7);
    kc_podmeta_pod *a = entry(big, (size_t)n, d), *b = entry(POD, sizeof POD - 1, d);
    const char *ka, *kb, *v;
    assert_int_equal(kc_podmeta_pod_map_at(a, KC_PODMETA_LABELS, 0, &ka, &v, NULL), 0);
    assert_int_equal(kc_podmeta_pod_map_at(b, KC_PODMETA_LABELS, 0, &kb, &v, NULL), 0);
    assert_string_equal(ka, "app");
    assert_ptr_equal(ka, kb);
    assert_int_equal(kc_podmeta_pod_map_at(a, KC_PODMETA_LABELS, 1, &ka, &v, NULL), 0);
    assert_int_equal(strlen(ka), 400);
    assert_string_equal(v, "long");
    assert_string_equal(kc_podmeta_pod_map_get(a, KC_PODMETA_LABELS, ka), "long");
    kc_podmeta_pod_unref(a);
    kc_podmeta_pod_unref(b);
    kc__pm_dict_unref(d);
}

/* A full dictionary: new keys go into the records, nothing is lost. */
static void test_nodeagent_rec_dictionary_full(void **state)
{
    (void)state;
    kc__pm_dict *d = kc__pm_dict_new();
    char k[32];
    for (int i = 0; i < KC__PM_DICT_MAX; i++) {
        int n = snprintf(k, sizeof k, "key-%d", i);
        assert_int_equal(kc__pm_dict_intern(d, k, (size_t)n), i);
    }
    assert_int_equal(kc__pm_dict_intern(d, "new", 3), -1);
    assert_int_equal(kc__pm_dict_intern(d, "key-5", 5), 5);
    static const char P[] = "{\"metadata\":{\"name\":\"a\",\"namespace\":\"x\",\"uid\":\"u\","
                            "\"labels\":{\"key-5\":\"old\",\"fresh\":\"new\"}}}";
    kc_podmeta_pod *p = entry(P, sizeof P - 1, d);
    assert_string_equal(kc_podmeta_pod_map_get(p, KC_PODMETA_LABELS, "key-5"), "old");
    assert_string_equal(kc_podmeta_pod_map_get(p, KC_PODMETA_LABELS, "fresh"), "new");
    assert_true(kc__pm_dict_heap(d) > (size_t)KC__PM_DICT_MAX * 8);
    kc_podmeta_pod_unref(p);
    kc__pm_dict_unref(d);
}

/* A record of 32 KiB or more takes 4-byte slots; more than 255 container statuses stop at 255. */
static void test_nodeagent_rec_wide_and_bounds(void **state)
{
    (void)state;
    kc__pm_dict *d = kc__pm_dict_new();
    kc__buf b;
    kc__buf_init(&b, 0);
    kc__buf_append_str(&b, "{\"metadata\":{\"name\":\"a\",\"namespace\":\"x\",\"uid\":\"u\","
                           "\"annotations\":{\"big\":\"");
    for (int i = 0; i < 40000; i++)
        kc__buf_append_char(&b, (char)('a' + i % 26));
    kc__buf_append_str(&b, "\",\"after\":\"z\"}},\"status\":{\"containerStatuses\":[");
    for (int i = 0; i < 300; i++)
        kc__buf_printf(&b, "%s{\"name\":\"c%d\",\"containerID\":\"containerd://%d\"}", i ? "," : "",
                       i, i);
    kc__buf_append_str(&b, "]}}");
    kc_podmeta_pod *p = entry(b.data, b.len, d);
    assert_true(kc__pm_rec_of(p)->wide);
    const char *k, *v;
    size_t n;
    assert_int_equal(kc_podmeta_pod_map_at(p, KC_PODMETA_ANNOTATIONS, 0, &k, &v, &n), 0);
    assert_int_equal(n, 40000);
    assert_int_equal(v[39999], 'a' + 39999 % 26);
    assert_string_equal(kc_podmeta_pod_map_get(p, KC_PODMETA_ANNOTATIONS, "after"), "z");
    assert_int_equal(kc_podmeta_pod_container_count(p), KC__PM_MAX_CONT);
    kc_podmeta_container c;
    assert_int_equal(kc_podmeta_pod_container(p, 254, &c), 0);
    assert_string_equal(c.id, "254");
    assert_int_equal(kc_podmeta_pod_find_container(p, NULL, "containerd://254"), 254);
    kc__buf_free(&b);
    kc_podmeta_pod_unref(p);
    kc__pm_dict_unref(d);
}

/* Text a lazy decode let through (a bad escape in one annotation): that part is left out, the
 * rest of the pod is kept (the record is built field by field when one walk over it fails). */
static void test_nodeagent_rec_malformed_part(void **state)
{
    (void)state;
    kc__pm_dict *d = kc__pm_dict_new();
    static const char P[] = "{\"metadata\":{\"name\":\"a\",\"namespace\":\"x\",\"uid\":\"u\","
                            "\"labels\":{\"app\":\"web\"},\"annotations\":{\"bad\":\"a\\utea0b\"}},"
                            "\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"containerStatuses\":"
                            "[{\"name\":\"c\",\"containerID\":\"containerd://x1\"}]}}";
    kc_podmeta_pod *p = entry(P, sizeof P - 1, d);
    assert_string_equal(kc_podmeta_pod_map_get(p, KC_PODMETA_LABELS, "app"), "web");
    assert_int_equal(kc_podmeta_pod_map_count(p, KC_PODMETA_ANNOTATIONS), 0);
    assert_string_equal(kc_podmeta_pod_get(p, KC_PODMETA_FIELD_NODE_NAME, NULL), "n1");
    assert_int_equal(kc_podmeta_pod_find_container(p, NULL, "x1"), 0);
    kc_podmeta_pod_unref(p);
    kc__pm_dict_unref(d);
}

/* Issue 34 point 1: a typical Pod (the benchmark's: 10 labels, 4 annotations, an owner, 2
 * containers; bench/bench_podmeta) costs at most 1.5 KB cached. Here the entry and its object
 * (what every cached pod holds alone), with the index's and dictionary's shares left to the
 * benchmark (≈ 70 bytes at 1,000 pods): bytes asked of malloc, deterministic. */
static void test_nodeagent_rec_typical_pod_heap(void **state)
{
    (void)state;
    FILE *f = fopen(KC_SOURCE_DIR "/tests/fuzz/corpus/podmeta_record/deployment-pod.json", "rb");
    assert_non_null(f);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    kc__pm_dict *d = kc__pm_dict_new();
    kc_podmeta_pod *p = entry(buf, n, d);
    assert_int_equal(kc_podmeta_pod_map_count(p, KC_PODMETA_LABELS), 10);
    size_t heap = kc__pm_pod_heap(p);
    print_message("entry + object: %zu bytes\n", heap);
    assert_true(heap <= 1536 - 100);
    kc_podmeta_pod_unref(p);
    kc__pm_dict_unref(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodeagent_rec_fields_read_back),
        cmocka_unit_test(test_nodeagent_rec_identity_object),
        cmocka_unit_test(test_nodeagent_rec_keys_interned),
        cmocka_unit_test(test_nodeagent_rec_dictionary_full),
        cmocka_unit_test(test_nodeagent_rec_wide_and_bounds),
        cmocka_unit_test(test_nodeagent_rec_malformed_part),
        cmocka_unit_test(test_nodeagent_rec_typical_pod_heap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
