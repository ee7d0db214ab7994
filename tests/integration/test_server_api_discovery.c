/*
 * test_server_api_discovery.c — discovery, non-resource endpoints, negotiation and HTTP-level
 * errors of the embedded API server (spec §9 #1–#8, #24, #25; 401, 405, 413 Status bodies).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

static int setup(void **state)
{
    *state = ts_start();
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    kc_server_free(*state);
    return 0;
}

static void test_server_api_versions_1(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, "/api", &r), 200);
    assert_string_equal(ts_s(r.json, "kind"), "APIVersions");
    assert_string_equal(ts_s(r.json, "versions.0"), "v1");
    ts_resp_free(&r);
}

static void test_server_api_group_list_2(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, "/apis", &r), 200);
    assert_string_equal(ts_s(r.json, "kind"), "APIGroupList");
    json_t *groups = ts_j(r.json, "groups");
    assert_true(json_array_size(groups) >= 4);
    size_t i;
    json_t *g;
    bool apps = false;
    json_array_foreach(groups, i, g)
    {
        assert_true(json_array_size(ts_j(g, "versions")) >= 1);
        assert_non_null(ts_j(g, "preferredVersion.groupVersion"));
        apps |= !strcmp(ts_s(g, "name"), "apps");
    }
    assert_true(apps);
    ts_resp_free(&r);
}

static json_t *find_res(json_t *list, const char *name)
{
    size_t i;
    json_t *x;
    json_array_foreach(ts_j(list, "resources"), i, x) if (!strcmp(ts_s(x, "name"), name)) return x;
    return NULL;
}

static void test_server_api_resource_lists_3(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, "/api/v1", &r), 200);
    assert_string_equal(ts_s(r.json, "kind"), "APIResourceList");
    json_t *pods = find_res(r.json, "pods");
    assert_non_null(pods);
    assert_string_equal(ts_s(pods, "singularName"), "pod");
    assert_true(json_is_true(ts_j(pods, "namespaced")));
    assert_string_equal(ts_s(pods, "kind"), "Pod");
    assert_string_equal(ts_s(pods, "shortNames.0"), "po");
    assert_true(json_array_size(ts_j(pods, "verbs")) == 8);
    assert_non_null(find_res(r.json, "pods/status"));
    json_t *ns = find_res(r.json, "namespaces");
    assert_true(json_is_false(ts_j(ns, "namespaced")));
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, "/apis/apps/v1", &r), 200);
    assert_string_equal(ts_s(r.json, "groupVersion"), "apps/v1");
    assert_string_equal(ts_s(find_res(r.json, "deployments"), "shortNames.0"), "deploy");
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, "/apis/nope.io/v1", &r), 404);
    ts_resp_free(&r);
}

/* #4: the aggregated documents themselves are tested in test_server_api_resources.c; a plain
 * JSON Accept keeps legacy discovery. */
static void test_server_api_plain_accept_gets_legacy_4(void **state)
{
    ts_resp r;
    ts_req(*state, "GET", "/apis", NULL, NULL, "application/json", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.ctype, "application/json");
    assert_string_equal(ts_s(r.json, "kind"), "APIGroupList");
    ts_resp_free(&r);
}

static void test_server_api_version_5(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, "/version", &r), 200);
    assert_string_equal(ts_s(r.json, "major"), "1");
    assert_true(strlen(ts_s(r.json, "minor")) > 0);
    assert_true(strlen(ts_s(r.json, "gitVersion")) > 0);
    ts_resp_free(&r);
}

static void test_server_api_health_6(void **state)
{
    const char *paths[] = {"/healthz", "/readyz", "/livez"};
    for (size_t i = 0; i < 3; i++) {
        ts_resp r;
        assert_int_equal(ts_get(*state, paths[i], &r), 200);
        assert_string_equal(r.body, "ok");
        ts_resp_free(&r);
    }
}

static void test_server_api_openapi_7(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, "/openapi/v3", &r), 200);
    const char *u = ts_s(r.json, "paths.api/v1.serverRelativeURL");
    (void)u;
    json_t *p = json_object_get(ts_j(r.json, "paths"), "api/v1");
    assert_non_null(p);
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, "/openapi/v3/apis/apps/v1", &r), 200);
    json_t *op = json_object_get(json_object_get(ts_j(r.json, "paths"),
                                                 "/apis/apps/v1/namespaces/{namespace}/"
                                                 "deployments/{name}"),
                                 "patch");
    assert_string_equal(ts_s(op, "x-kubernetes-group-version-kind.kind"), "Deployment");
    assert_string_equal(ts_s(op, "parameters.0.name"), "fieldValidation");
    ts_resp_free(&r);
    /* kubectl's protobuf-only v2 fetch gets a Document without definitions
     * (test_server_api_fidelity) */
    assert_int_equal(ts_req(*state, "GET", "/openapi/v2", NULL, NULL,
                            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf", &r),
                     0);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
}

static void test_server_api_unknown_path_404_status_8(void **state)
{
    const char *paths[] = {"/api/v1/nothings", "/apis/apps/v1/namespaces/default/nothings", "/foo",
                           "/api/v1/namespaces/default/pods/x/log"};
    for (size_t i = 0; i < 4; i++) {
        ts_resp r;
        assert_int_equal(ts_get(*state, paths[i], &r), 404);
        assert_string_equal(ts_s(r.json, "kind"), "Status");
        assert_string_equal(ts_s(r.json, "reason"), "NotFound");
        assert_int_equal(json_integer_value(ts_j(r.json, "code")), 404);
        ts_resp_free(&r);
    }
}

/* #24: the server picks the first type it supports — protobuf for built-in kinds (the
 * protobuf responses themselves: test_server_api_protobuf); JSON when protobuf comes later. */
static void test_server_api_protobuf_accept_gets_json_24(void **state)
{
    ts_resp r;
    ts_req(*state, "GET", "/api/v1/namespaces/default", NULL, NULL,
           "application/json, application/vnd.kubernetes.protobuf;q=0.5", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.ctype, "application/json");
    assert_string_equal(ts_s(r.json, "kind"), "Namespace");
    ts_resp_free(&r);
    ts_req(*state, "GET", "/api/v1/namespaces/default", NULL, NULL,
           "application/vnd.kubernetes.protobuf, application/json", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.ctype, "application/vnd.kubernetes.protobuf");
    assert_true(r.len > 4 && !memcmp(r.body, "k8s", 4));
    ts_resp_free(&r);
}

static void test_server_api_unsupported_accept_406_25(void **state)
{
    ts_resp r;
    ts_req(*state, "GET", "/api/v1/namespaces/default", NULL, NULL,
           "application/yaml, application/cbor", &r);
    assert_int_equal(r.status, 406);
    assert_string_equal(ts_s(r.json, "reason"), "NotAcceptable");
    ts_resp_free(&r);
}

static void test_server_api_method_not_allowed_405(void **state)
{
    ts_resp r;
    ts_req(*state, "POST", "/api/v1/namespaces/default/configmaps/x", "application/json", "{}",
           NULL, &r);
    assert_int_equal(r.status, 405);
    assert_string_equal(ts_s(r.json, "kind"), "Status");
    ts_resp_free(&r);
    ts_req(*state, "PUT", CM_PATH, "application/json", "{}", NULL, &r);
    assert_int_equal(r.status, 405);
    ts_resp_free(&r);
}

static void test_server_api_malformed_json_400(void **state)
{
    ts_resp r;
    assert_int_equal(ts_post(*state, CM_PATH, "{not json", &r), 400);
    assert_string_equal(ts_s(r.json, "reason"), "BadRequest");
    ts_resp_free(&r);
}

static void test_server_api_body_limit_413(void **state)
{
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.max_body = 1024;
    kc_server *s = ts_start_opts(&o);
    assert_non_null(s);
    char *big = malloc(4096);
    memset(big, ' ', 4095);
    big[0] = '{';
    big[4094] = '}';
    big[4095] = 0;
    ts_resp r;
    assert_int_equal(ts_post(s, CM_PATH, big, &r), 413);
    assert_string_equal(ts_s(r.json, "reason"), "RequestEntityTooLarge");
    ts_resp_free(&r);
    free(big);
    kc_server_free(s);
}

static void test_server_api_token_auth_401(void **state)
{
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.token = "s3cret";
    kc_server *s = ts_start_opts(&o);
    assert_non_null(s);
    ts_resp r;
    assert_int_equal(ts_get(s, "/api/v1/namespaces", &r), 401);
    assert_string_equal(ts_s(r.json, "reason"), "Unauthorized");
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/admin/faults", &r), 401);
    ts_resp_free(&r);
    const char *h[] = {"Authorization: Bearer s3cret", NULL};
    ts_req_h(s, "GET", "/api/v1/namespaces", NULL, NULL, NULL, h, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    const char *bad[] = {"Authorization: Bearer s3cre", NULL};
    ts_req_h(s, "GET", "/api/v1/namespaces", NULL, NULL, NULL, bad, &r);
    assert_int_equal(r.status, 401);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/healthz", &r), 200);
    ts_resp_free(&r);
    kc_server_free(s);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_api_versions_1),
        cmocka_unit_test(test_server_api_group_list_2),
        cmocka_unit_test(test_server_api_resource_lists_3),
        cmocka_unit_test(test_server_api_plain_accept_gets_legacy_4),
        cmocka_unit_test(test_server_api_version_5),
        cmocka_unit_test(test_server_api_health_6),
        cmocka_unit_test(test_server_api_openapi_7),
        cmocka_unit_test(test_server_api_unknown_path_404_status_8),
        cmocka_unit_test(test_server_api_protobuf_accept_gets_json_24),
        cmocka_unit_test(test_server_api_unsupported_accept_406_25),
        cmocka_unit_test(test_server_api_method_not_allowed_405),
        cmocka_unit_test(test_server_api_malformed_json_400),
        cmocka_unit_test(test_server_api_body_limit_413),
        cmocka_unit_test(test_server_api_token_auth_401),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    curl_global_cleanup();
    return rc;
}
