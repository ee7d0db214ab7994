/*
 * test_server_api_shard_list.c — server-side sharded LIST of the embedded API server (KEP-5866;
 * controller-semantics S2–S12): four even shards partition every kind of collection (namespaced,
 * all-namespaces, cluster-scoped, custom resources) on uid and on namespace, each page filtered by
 * the selector it repeats and echoing its canonical form, without remainingItemCount; the S6
 * namespace vectors; Table and metadata-only lists; bad selectors → 400; the ignore switch (S12)
 * from the options, the public setter and the admin endpoint.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_shard_util.h"

#define ARRLEN(a) (sizeof(a) / sizeof((a)[0]))

static const char *crd =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
    "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","
    "\"kind\":\"Widget\"},\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true}]}}";

static void post_ok(kc_server *s, const char *path, const char *body)
{
    ts_resp r;
    if (ts_post(s, path, body, &r) != 201)
        fail_msg("POST %s: %ld %s", path, r.status, r.body ? r.body : "");
    ts_resp_free(&r);
}

/* A server with a few hundred objects: generated configmaps over ns-0..ns-4, persistent volumes
 * (cluster-scoped: namespace "" → range 3 of 4, S6), configmaps and widgets (a custom resource)
 * in "default", "a", "foobar" and "zeta". */
static int setup(void **state)
{
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.seed_spec = "namespaces=5,configmaps=250,persistentvolumes=40";
    kc_server *s = ts_start_opts(&o);
    if (!s)
        return -1;
    post_ok(s, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    const char *nss[] = {"default", "a", "foobar", "zeta"};
    for (size_t n = 0; n < ARRLEN(nss); n++) {
        char body[256], path[256];
        if (n) {
            snprintf(
                body, sizeof(body),
                "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
                nss[n]);
            post_ok(s, "/api/v1/namespaces", body);
        }
        for (int i = 0; i < 12; i++) {
            char name[32];
            snprintf(name, sizeof(name), "cm-%d", i);
            snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", nss[n]);
            post_ok(s, path, ts_cm(name, NULL));
            snprintf(path, sizeof(path), "/apis/example.com/v1/namespaces/%s/widgets", nss[n]);
            snprintf(body, sizeof(body),
                     "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":"
                     "{\"name\":\"w-%d\"},\"spec\":{\"i\":%d}}",
                     i, i);
            post_ok(s, path, body);
        }
    }
    *state = s;
    return 0;
}

/* ---- collecting lists ----------------------------------------------------------------------- */

typedef struct uidset {
    char **v;
    size_t n;
} uidset;

static void uidset_add(uidset *u, const char *uid)
{
    u->v = realloc(u->v, (u->n + 1) * sizeof(*u->v));
    u->v[u->n++] = strdup(uid);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void uidset_free(uidset *u)
{
    for (size_t i = 0; i < u->n; i++)
        free(u->v[i]);
    free(u->v);
    memset(u, 0, sizeof(*u));
}

static bool uidset_has(const uidset *u, const char *uid)
{
    return bsearch(&uid, u->v, u->n, sizeof(*u->v), cmp_str) != NULL;
}

/* Every item of base (a collection path) with sh's selector (NULL = none), page by page with
 * limit (0 = one request); each page must echo the canonical selector and omit
 * remainingItemCount (S8, S9), each item must hash into the shard (S7). The uids go into *out
 * (sorted). Returns the number of pages. */
static size_t list_shard(kc_server *s, const char *base, const sh_shard *sh, int limit, uidset *out)
{
    char cont[1024] = "";
    size_t pages = 0;
    memset(out, 0, sizeof(*out));
    do {
        char path[2048];
        snprintf(path, sizeof(path), "%s?%s%s%s%s%s", base, sh ? sh->param : "",
                 limit ? "&limit=" : "", limit ? "7" : "", *cont ? "&continue=" : "", cont);
        ts_resp r;
        if (ts_get(s, path, &r) != 200)
            fail_msg("GET %s: %ld %s", path, r.status, r.body ? r.body : "");
        pages++;
        json_t *items = ts_j(r.json, "items");
        assert_true(json_is_array(items));
        if (sh) {
            assert_string_equal(ts_s(r.json, "metadata.shardInfo.selector"), sh->canonical);
            assert_null(ts_j(r.json, "metadata.remainingItemCount"));
        } else {
            assert_null(ts_j(r.json, "metadata.shardInfo"));
        }
        if (limit)
            assert_true(json_array_size(items) <= (size_t)limit);
        for (size_t i = 0; i < json_array_size(items); i++) {
            json_t *it = json_array_get(items, i);
            if (sh && !sh_in(sh, it))
                fail_msg("%s: item %s/%s outside %s", base, ts_s(it, "metadata.namespace"),
                         ts_s(it, "metadata.name"), sh->canonical);
            uidset_add(out, ts_s(it, "metadata.uid"));
        }
        snprintf(cont, sizeof(cont), "%s", ts_s(r.json, "metadata.continue"));
        ts_resp_free(&r);
        assert_true(pages < 1000); /* paging terminates */
    } while (*cont);
    if (out->n)
        qsort(out->v, out->n, sizeof(*out->v), cmp_str);
    for (size_t i = 1; i < out->n; i++) /* each object once */
        assert_string_not_equal(out->v[i - 1], out->v[i]);
    return pages;
}

/* S7, S9: the four shards of base on field are disjoint and their union is the full list, paged
 * (limit=7) and unpaged alike. */
static void check_partition(kc_server *s, const char *base, kc_shard_field field)
{
    uidset full;
    list_shard(s, base, NULL, 0, &full);
    assert_true(full.n > 0);
    size_t total = 0;
    for (uint64_t i = 0; i < 4; i++) {
        sh_shard sh;
        sh_shard_init(&sh, field, 4, i);
        uidset paged, whole;
        size_t pages = list_shard(s, base, &sh, 7, &paged);
        assert_true(pages <= paged.n / 7 + 1); /* pages are filled: no empty trailing page */
        list_shard(s, base, &sh, 0, &whole);
        assert_int_equal(paged.n, whole.n);
        for (size_t k = 0; k < paged.n; k++) {
            assert_string_equal(paged.v[k], whole.v[k]);
            assert_true(uidset_has(&full, paged.v[k]));
        }
        total += paged.n;
        uidset_free(&paged);
        uidset_free(&whole);
    }
    assert_int_equal(total, full.n); /* disjoint subsets of full summing to it: a partition */
    uidset_free(&full);
}

static void test_shard_list_partition_uid_S7_S9(void **state)
{
    check_partition(*state, "/api/v1/configmaps", KC_SHARD_FIELD_UID);
    check_partition(*state, "/api/v1/namespaces/ns-1/configmaps", KC_SHARD_FIELD_UID);
    check_partition(*state, "/api/v1/persistentvolumes", KC_SHARD_FIELD_UID);
    check_partition(*state, "/api/v1/namespaces", KC_SHARD_FIELD_UID);
    check_partition(*state, "/apis/example.com/v1/widgets", KC_SHARD_FIELD_UID);
    check_partition(*state, "/apis/example.com/v1/namespaces/a/widgets", KC_SHARD_FIELD_UID);
}

static void test_shard_list_partition_namespace_S7_S9(void **state)
{
    check_partition(*state, "/api/v1/configmaps", KC_SHARD_FIELD_NAMESPACE);
    check_partition(*state, "/api/v1/persistentvolumes", KC_SHARD_FIELD_NAMESPACE);
    check_partition(*state, "/apis/example.com/v1/widgets", KC_SHARD_FIELD_NAMESPACE);
}

/* The items of shard i of 4 on namespace: how many there are in namespace ns. */
static size_t count_in(kc_server *s, const char *base, uint64_t i, const char *ns)
{
    sh_shard sh;
    sh_shard_init(&sh, KC_SHARD_FIELD_NAMESPACE, 4, i);
    char path[1024];
    snprintf(path, sizeof(path), "%s?%s", base, sh.param);
    ts_resp r;
    assert_int_equal(ts_get(s, path, &r), 200);
    size_t n = 0;
    json_t *items = ts_j(r.json, "items");
    for (size_t k = 0; k < json_array_size(items); k++)
        n += !strcmp(ts_s(json_array_get(items, k), "metadata.namespace"), ns);
    ts_resp_free(&r);
    return n;
}

/* S6 vectors: "default" → range 3 of 4, "a" and "foobar" → 2, "" (cluster-scoped) → 3. */
static void test_shard_list_namespace_vectors_S6(void **state)
{
    struct {
        const char *ns;
        uint64_t range;
    } v[] = {{"default", 3}, {"a", 2}, {"foobar", 2}};
    for (size_t k = 0; k < ARRLEN(v); k++)
        for (uint64_t i = 0; i < 4; i++)
            assert_int_equal(count_in(*state, "/api/v1/configmaps", i, v[k].ns),
                             i == v[k].range ? 12 : 0);
    for (uint64_t i = 0; i < 4; i++) {
        sh_shard sh;
        sh_shard_init(&sh, KC_SHARD_FIELD_NAMESPACE, 4, i);
        uidset u;
        list_shard(*state, "/api/v1/persistentvolumes", &sh, 0, &u);
        assert_int_equal(u.n, i == 3 ? 40 : 0);
        uidset_free(&u);
    }
}

/* S8: Table and PartialObjectMetadataList responses echo the canonical selector as well, and
 * carry only the shard's rows / items. */
static void test_shard_list_table_and_metadata_S8(void **state)
{
    sh_shard sh;
    sh_shard_init(&sh, KC_SHARD_FIELD_UID, 4, 1);
    uidset want;
    list_shard(*state, "/api/v1/configmaps", &sh, 0, &want);
    char path[1024];
    snprintf(path, sizeof(path), "/api/v1/configmaps?%s", sh.param);
    ts_resp r;
    ts_req(*state, "GET", path, NULL, NULL, "application/json;as=Table;v=v1;g=meta.k8s.io", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "kind"), "Table");
    assert_string_equal(ts_s(r.json, "metadata.shardInfo.selector"), sh.canonical);
    assert_int_equal(json_array_size(ts_j(r.json, "rows")), want.n);
    ts_resp_free(&r);
    ts_req(*state, "GET", path, NULL, NULL,
           "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "kind"), "PartialObjectMetadataList");
    assert_string_equal(ts_s(r.json, "metadata.shardInfo.selector"), sh.canonical);
    json_t *items = ts_j(r.json, "items");
    assert_int_equal(json_array_size(items), want.n);
    for (size_t k = 0; k < json_array_size(items); k++)
        assert_true(uidset_has(&want, ts_s(json_array_get(items, k), "metadata.uid")));
    ts_resp_free(&r);
    uidset_free(&want);
}

/* S8: a selector of two non-contiguous terms is echoed term by term in canonical form; an
 * unsharded list has no shardInfo and keeps remainingItemCount. */
static void test_shard_list_union_echo_S5_S8(void **state)
{
    const char *text = "shardRange(object.metadata.uid,'0x0000000000000000','0x4000000000000000')"
                       "||shardRange(object.metadata.uid,'0xc000000000000000',"
                       "'0x10000000000000000')";
    char param[1024], path[1200];
    sh_param(text, param, sizeof(param));
    snprintf(path, sizeof(path), "/api/v1/configmaps?%s", param);
    ts_resp r;
    assert_int_equal(ts_get(*state, path, &r), 200);
    assert_string_equal(ts_s(r.json, "metadata.shardInfo.selector"),
                        "shardRange(object.metadata.uid, '0x0000000000000000', "
                        "'0x4000000000000000') || shardRange(object.metadata.uid, "
                        "'0xc000000000000000', '0x10000000000000000')");
    json_t *items = ts_j(r.json, "items");
    for (size_t k = 0; k < json_array_size(items); k++) {
        const char *uid = ts_s(json_array_get(items, k), "metadata.uid");
        uint64_t h = kc_shard_hash(uid, strlen(uid));
        assert_true(h < 0x4000000000000000ull || h >= 0xc000000000000000ull);
    }
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, "/api/v1/configmaps?limit=7", &r), 200);
    assert_null(ts_j(r.json, "metadata.shardInfo"));
    assert_non_null(ts_j(r.json, "metadata.remainingItemCount"));
    ts_resp_free(&r);
}

/* S4, S11: invalid selectors fail LIST and WATCH with 400 BadRequest and the parser's message
 * (kube-apiserver: 500 Unknown, same text). An empty parameter is no parameter (the API field is a
 * plain string whose zero value means unset). */
static void test_shard_list_bad_selectors_400_S4_S11(void **state)
{
    const char *bad[] = {
        "shardRange(object.metadata.uid, '0x0', '0x4000000000000000')", /* short hex */
        "shardRange(object.metadata.uid, '0x000000000000000A', '0x4000000000000000')",
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') && "
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000')",
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') || "
        "shardRange(object.metadata.namespace, '0x4000000000000000', '0x8000000000000000')",
        "shardRange(metadata.uid, '0x0000000000000000', '0x4000000000000000')",
        "shardRange(object.metadata.uid, '0x8000000000000000', '0x4000000000000000')",
        "   ",
    };
    for (size_t k = 0; k < ARRLEN(bad); k++) {
        for (int watch = 0; watch < 2; watch++) {
            char param[1024], path[1200];
            sh_param(bad[k], param, sizeof(param));
            snprintf(path, sizeof(path), "/api/v1/namespaces/default/configmaps?%s%s", param,
                     watch ? "&watch=1" : "");
            ts_resp r;
            assert_int_equal(ts_get(*state, path, &r), 400);
            assert_string_equal(ts_s(r.json, "kind"), "Status");
            assert_string_equal(ts_s(r.json, "reason"), "BadRequest");
            const char *msg = ts_s(r.json, "message");
            if (strncmp(msg, "invalid shard selector: ", 24) != 0 || strlen(msg) < 30 ||
                strstr(msg + 1, "invalid shard selector"))
                fail_msg("selector %s: message '%s'", bad[k], msg);
            ts_resp_free(&r);
        }
    }
    uidset all;
    list_shard(*state, CM_PATH, NULL, 0, &all);
    ts_resp r;
    assert_int_equal(ts_get(*state, CM_PATH "?shardSelector=", &r), 200);
    assert_null(ts_j(r.json, "metadata.shardInfo"));
    assert_int_equal(json_array_size(ts_j(r.json, "items")), all.n);
    ts_resp_free(&r);
    uidset_free(&all);
}

/* S12: a server that ignores shardSelector returns full lists without shardInfo (and with
 * remainingItemCount, as for any unselected list), even for a selector it could not parse. */
static void check_ignored(kc_server *s)
{
    sh_shard sh;
    sh_shard_init(&sh, KC_SHARD_FIELD_UID, 4, 0);
    char path[1024];
    snprintf(path, sizeof(path), "/api/v1/configmaps?%s&limit=7", sh.param);
    ts_resp r;
    assert_int_equal(ts_get(s, path, &r), 200);
    assert_null(ts_j(r.json, "metadata.shardInfo"));
    assert_non_null(ts_j(r.json, "metadata.remainingItemCount"));
    assert_int_equal(json_array_size(ts_j(r.json, "items")), 7);
    ts_resp_free(&r);
    uidset all;
    list_shard(s, "/api/v1/configmaps", NULL, 0, &all);
    snprintf(path, sizeof(path), "/api/v1/configmaps?%s", sh.param);
    assert_int_equal(ts_get(s, path, &r), 200);
    assert_int_equal(json_array_size(ts_j(r.json, "items")), all.n);
    ts_resp_free(&r);
    uidset_free(&all);
    assert_int_equal(ts_get(s, CM_PATH "?shardSelector=0x0", &r), 200);
    ts_resp_free(&r);
}

static void check_honoured(kc_server *s)
{
    sh_shard sh;
    sh_shard_init(&sh, KC_SHARD_FIELD_UID, 4, 0);
    uidset u;
    list_shard(s, "/api/v1/configmaps", &sh, 7, &u); /* asserts the echo */
    uidset_free(&u);
}

static void test_shard_list_ignored_option_S12(void **state)
{
    (void)state;
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.seed_spec = "namespaces=2,configmaps=30";
    o.ignore_shard_selector = true;
    kc_server *s = ts_start_opts(&o);
    assert_non_null(s);
    assert_true(kc_server_shard_selector_ignored(s));
    check_ignored(s);
    kc_server_free(s);
}

/* S12 at run time: the public setter and PUT /admin/sharding switch a running server between
 * ignoring and honouring shardSelector. */
static void test_shard_list_ignored_toggle_S12(void **state)
{
    kc_server *s = *state;
    assert_false(kc_server_shard_selector_ignored(s));
    assert_int_equal(kc_server_set_shard_selector_ignored(s, true), 0);
    check_ignored(s);
    assert_int_equal(kc_server_set_shard_selector_ignored(s, false), 0);
    check_honoured(s);
    ts_resp r;
    ts_req(s, "PUT", "/admin/sharding", "application/json", "{\"ignoreShardSelector\":true}", NULL,
           &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(ts_j(r.json, "ignoreShardSelector")));
    ts_resp_free(&r);
    assert_true(kc_server_shard_selector_ignored(s));
    check_ignored(s);
    ts_req(s, "PUT", "/admin/sharding", "application/json", "{\"ignoreShardSelector\":false}", NULL,
           &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/admin/sharding", &r), 200);
    assert_true(json_is_false(ts_j(r.json, "ignoreShardSelector")));
    ts_resp_free(&r);
    ts_req(s, "PUT", "/admin/sharding", "application/json", "{\"ignore\":1}", NULL, &r);
    assert_int_equal(r.status, 400);
    ts_resp_free(&r);
    check_honoured(s);
    assert_int_equal(kc_server_set_shard_selector_ignored(NULL, true), KC_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shard_list_partition_uid_S7_S9),
        cmocka_unit_test(test_shard_list_partition_namespace_S7_S9),
        cmocka_unit_test(test_shard_list_namespace_vectors_S6),
        cmocka_unit_test(test_shard_list_table_and_metadata_S8),
        cmocka_unit_test(test_shard_list_union_echo_S5_S8),
        cmocka_unit_test(test_shard_list_bad_selectors_400_S4_S11),
        cmocka_unit_test(test_shard_list_ignored_option_S12),
        cmocka_unit_test(test_shard_list_ignored_toggle_S12),
    };
    return cmocka_run_group_tests(tests, setup, ts_group_teardown);
}
