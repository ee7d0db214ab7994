/*
 * test_server_api_cluster_defaults.c — what a server with zero-initialised options has, as every
 * cluster: the namespace and garbage-collector controllers (spec §6 item 9: deleting a namespace
 * marks it Terminating and removes its contents before it goes; ownerReferences cascade), the
 * Service `kubernetes` in namespace default with its Endpoints and EndpointSlice, and one stated
 * Kubernetes version (/version and the OpenAPI documents agree). KC_SERVER_CONTROLLER_NONE gives
 * the bare store: a namespace and its contents go at once, dependents stay.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

static kc_server *start(unsigned controllers)
{
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.controllers = controllers;
    return ts_start_opts(&o);
}

static long status_of(kc_server *s, const char *method, const char *path)
{
    ts_resp r;
    ts_req(s, method, path, NULL, NULL, NULL, &r);
    long st = r.status;
    ts_resp_free(&r);
    return st;
}

/* Namespace n holding ConfigMap "owner" and ConfigMap "dep" owned by it; owner's uid. */
static void fill(kc_server *s, const char *n, char uid[64])
{
    char path[256], body[512];
    ts_resp r;
    snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\"}}", n);
    assert_int_equal(ts_post(s, "/api/v1/namespaces", body, &r), 201);
    ts_resp_free(&r);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", n);
    assert_int_equal(ts_post(s, path, "{\"metadata\":{\"name\":\"owner\"}}", &r), 201);
    snprintf(uid, 64, "%s", ts_s(r.json, "metadata.uid"));
    ts_resp_free(&r);
    snprintf(body, sizeof(body),
             "{\"metadata\":{\"name\":\"dep\",\"ownerReferences\":[{\"apiVersion\":\"v1\","
             "\"kind\":\"ConfigMap\",\"name\":\"owner\",\"uid\":\"%s\"}]}}",
             uid);
    assert_int_equal(ts_post(s, path, body, &r), 201);
    ts_resp_free(&r);
}

/* Zero options: deleting an owner deletes its dependent; deleting a namespace whose object holds
 * a finalizer leaves it Terminating (its other objects gone) until the finalizer goes. */
static void test_server_defaults_controllers_on(void **state)
{
    (void)state;
    kc_server *s = start(0);
    assert_non_null(s);
    char uid[64];
    fill(s, "a", uid);
    assert_int_equal(status_of(s, "DELETE", "/api/v1/namespaces/a/configmaps/owner"), 200);
    assert_int_equal(status_of(s, "GET", "/api/v1/namespaces/a/configmaps/dep"), 404);
    ts_resp r;
    assert_int_equal(ts_post(s, "/api/v1/namespaces/a/configmaps",
                             "{\"metadata\":{\"name\":\"held\",\"finalizers\":[\"x.io/f\"]}}", &r),
                     201);
    ts_resp_free(&r);
    assert_int_equal(
        ts_post(s, "/api/v1/namespaces/a/configmaps", "{\"metadata\":{\"name\":\"p\"}}", &r), 201);
    ts_resp_free(&r);
    ts_req(s, "DELETE", "/api/v1/namespaces/a", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "status.phase"), "Terminating");
    ts_resp_free(&r);
    assert_int_equal(status_of(s, "GET", "/api/v1/namespaces/a/configmaps/p"), 404);
    assert_int_equal(status_of(s, "GET", "/api/v1/namespaces/a"), 200);
    ts_req(s, "PATCH", "/api/v1/namespaces/a/configmaps/held", "application/merge-patch+json",
           "{\"metadata\":{\"finalizers\":null}}", NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    assert_int_equal(status_of(s, "GET", "/api/v1/namespaces/a"), 404);
    kc_server_free(s);
}

/* KC_SERVER_CONTROLLER_NONE: the bare store — dependents stay, a namespace goes at once with
 * everything in it. */
static void test_server_defaults_controllers_none(void **state)
{
    (void)state;
    kc_server *s = start(KC_SERVER_CONTROLLER_NONE);
    assert_non_null(s);
    char uid[64];
    fill(s, "b", uid);
    assert_int_equal(status_of(s, "DELETE", "/api/v1/namespaces/b/configmaps/owner"), 200);
    assert_int_equal(status_of(s, "GET", "/api/v1/namespaces/b/configmaps/dep"), 200);
    assert_int_equal(status_of(s, "DELETE", "/api/v1/namespaces/b"), 200);
    assert_int_equal(status_of(s, "GET", "/api/v1/namespaces/b"), 404);
    assert_int_equal(status_of(s, "GET", "/api/v1/namespaces/b/configmaps/dep"), 404);
    kc_server_free(s);
}

/* The Service kubernetes (ClusterIP 10.96.0.1, 443/https to the server's port), its Endpoints and
 * EndpointSlice naming the address the server listens on. */
static void test_server_defaults_kubernetes_service(void **state)
{
    (void)state;
    kc_server *s = start(0);
    assert_non_null(s);
    const char *url = kc_server_url(s); /* http://127.0.0.1:PORT */
    long port = strtol(strrchr(url, ':') + 1, NULL, 10);
    ts_resp r;
    assert_int_equal(ts_get(s, "/api/v1/namespaces/default/services/kubernetes", &r), 200);
    assert_string_equal(ts_s(r.json, "spec.type"), "ClusterIP");
    assert_string_equal(ts_s(r.json, "spec.clusterIP"), "10.96.0.1");
    assert_string_equal(ts_s(r.json, "metadata.labels.component"), "apiserver");
    json_t *p = json_array_get(ts_j(r.json, "spec.ports"), 0);
    assert_string_equal(json_string_value(json_object_get(p, "name")), "https");
    assert_int_equal(json_integer_value(json_object_get(p, "port")), 443);
    assert_int_equal(json_integer_value(json_object_get(p, "targetPort")), port);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/api/v1/namespaces/default/endpoints/kubernetes", &r), 200);
    assert_string_equal(ts_s(r.json, "subsets.0.addresses.0.ip"), "127.0.0.1");
    assert_int_equal(json_integer_value(ts_j(r.json, "subsets.0.ports.0.port")), port);
    ts_resp_free(&r);
    assert_int_equal(
        ts_get(s, "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes", &r),
        200);
    assert_string_equal(json_string_value(json_object_get(ts_j(r.json, "metadata.labels"),
                                                          "kubernetes.io/service-name")),
                        "kubernetes");
    ts_resp_free(&r);
    /* a second IP-less Service gets another IP: the first is the kubernetes Service's */
    assert_int_equal(ts_post(s, "/api/v1/namespaces/default/services",
                             "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"ports\":[{\"port\":80}]}}",
                             &r),
                     201);
    assert_string_not_equal(ts_s(r.json, "spec.clusterIP"), "10.96.0.1");
    ts_resp_free(&r);
    /* a wiping restart brings it back */
    assert_int_equal(kc_server_restart(s, KC_SERVER_RESTART_WIPE, NULL), 0);
    assert_int_equal(status_of(s, "GET", "/api/v1/namespaces/default/services/kubernetes"), 200);
    assert_int_equal(status_of(s, "GET", "/api/v1/namespaces/default/services/x"), 404);
    kc_server_free(s);
}

/* /version and the OpenAPI documents state one version. */
static void test_server_defaults_one_version(void **state)
{
    (void)state;
    kc_server *s = start(0);
    assert_non_null(s);
    ts_resp v, o2, o3;
    assert_int_equal(ts_get(s, "/version", &v), 200);
    assert_int_equal(ts_get(s, "/openapi/v2", &o2), 200);
    assert_int_equal(ts_get(s, "/openapi/v3/api/v1", &o3), 200);
    const char *git = ts_s(v.json, "gitVersion"), *info = ts_s(o2.json, "info.version");
    char want[64];
    snprintf(want, sizeof(want), "v%s.%s.", ts_s(v.json, "major"), ts_s(v.json, "minor"));
    assert_int_equal(strncmp(info, want, strlen(want)), 0);
    assert_int_equal(strncmp(git, info, strlen(info)), 0); /* "v1.34.0-kcache.…" */
    assert_string_equal(ts_s(o3.json, "info.version"), info);
    ts_resp_free(&v);
    ts_resp_free(&o2);
    ts_resp_free(&o3);
    kc_server_free(s);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_defaults_controllers_on),
        cmocka_unit_test(test_server_defaults_controllers_none),
        cmocka_unit_test(test_server_defaults_kubernetes_service),
        cmocka_unit_test(test_server_defaults_one_version),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
