/*
 * test_server_api_openapi.c — /openapi/v3 and /openapi/v2 built from the generated schemas
 * (what `kubectl explain` reads): the index names every served group-version (autoscaling v1
 * and v2, custom resources) with a hash that changes with the content; a group-version document
 * has each kind's definition with x-kubernetes-group-version-kind, its fields' types and
 * formats, required lists, references in the allOf form and every referenced definition; a
 * custom resource's definition is its CRD schema with metadata referring to ObjectMeta; v2 is
 * one Swagger document of the same definitions for JSON clients.
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

static json_t *def(json_t *doc, const char *key)
{
    json_t *d = json_object_get(ts_j(doc, "components.schemas"), key);
    if (!d)
        fail_msg("no definition %s", key);
    return d;
}

static void test_server_api_openapi_v3_index(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, "/openapi/v3", &r), 200);
    json_t *paths = ts_j(r.json, "paths");
    const char *want[] = {"api/v1",
                          "apis/apps/v1",
                          "apis/autoscaling/v1",
                          "apis/autoscaling/v2",
                          "apis/rbac.authorization.k8s.io/v1",
                          "apis/resource.k8s.io/v1"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const char *u =
            json_string_value(ts_j(json_object_get(paths, want[i]), "serverRelativeURL"));
        if (!u || strncmp(u, "/openapi/v3/", 12) != 0 || !strstr(u, "?hash="))
            fail_msg("%s: %s", want[i], u ? u : "(none)");
    }
    ts_resp_free(&r);
}

/* kubectl explain deployment.spec: DeploymentSpec's fields, types, required, references. */
static void test_server_api_openapi_v3_deployment(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, "/openapi/v3/apis/apps/v1", &r), 200);
    json_t *d = def(r.json, "v1.Deployment");
    assert_string_equal(ts_s(d, "x-kubernetes-group-version-kind.0.group"), "apps");
    assert_string_equal(ts_s(d, "x-kubernetes-group-version-kind.0.kind"), "Deployment");
    assert_string_equal(ts_s(d, "properties.spec.allOf.0.$ref"),
                        "#/components/schemas/v1.DeploymentSpec");
    json_t *spec = def(r.json, "v1.DeploymentSpec");
    assert_string_equal(ts_s(spec, "properties.replicas.type"), "integer");
    assert_string_equal(ts_s(spec, "properties.replicas.format"), "int32");
    assert_string_equal(ts_s(spec, "properties.paused.type"), "boolean");
    json_t *req = ts_j(spec, "required");
    assert_int_equal(json_array_size(req), 2); /* selector, template */
    json_t *c = def(r.json, "v1.Container");
    assert_string_equal(ts_s(c, "properties.args.type"), "array");
    assert_string_equal(ts_s(c, "properties.args.items.type"), "string");
    assert_string_equal(ts_s(c, "properties.ports.items.$ref"),
                        "#/components/schemas/v1.ContainerPort");
    json_t *rr = def(r.json, "v1.ResourceRequirements");
    assert_string_equal(ts_s(rr, "properties.limits.additionalProperties.$ref"),
                        "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity");
    def(r.json, "io.k8s.apimachinery.pkg.api.resource.Quantity");
    def(r.json, "v1.ObjectMeta");
    assert_string_equal(ts_s(def(r.json, "v1.ObjectMeta"), "properties.creationTimestamp.format"),
                        "date-time");
    /* the PATCH operation kubectl's validation looks for is still there */
    json_t *op = json_object_get(json_object_get(ts_j(r.json, "paths"),
                                                 "/apis/apps/v1/namespaces/{namespace}/"
                                                 "deployments/{name}"),
                                 "patch");
    assert_string_equal(ts_s(op, "parameters.0.name"), "fieldValidation");
    assert_null(json_object_get(op, "requestBody"));
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, "/openapi/v3/apis/autoscaling/v2", &r), 200);
    assert_string_equal(ts_s(def(r.json, "v2.HorizontalPodAutoscaler"),
                             "x-kubernetes-group-version-kind.0.version"),
                        "v2");
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, "/openapi/v3/apis/events.k8s.io/v1", &r), 200);
    def(r.json, "events.v1.Event");
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, "/openapi/v3/apis/nope.example/v1", &r), 404);
    ts_resp_free(&r);
}

/* The index's URL of example.com/v1 ("" when none; the key has dots, so no ts_s). */
static const char *crd_url(json_t *index)
{
    const char *u = json_string_value(
        json_object_get(json_object_get(json_object_get(index, "paths"), "apis/example.com/v1"),
                        "serverRelativeURL"));
    return u ? u : "";
}

/* A CRD's group-version appears with its schema; a schema change changes the hash. */
static void test_server_api_openapi_v3_crd(void **state)
{
    const char *crd =
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
        "\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
        "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"kind\":\"Widget\"},"
        "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,\"schema\":{"
        "\"openAPIV3Schema\":{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
        "\"properties\":{\"size\":{\"type\":\"integer\"}}}}}}}]}}";
    ts_resp r;
    assert_int_equal(
        ts_post(*state, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd, &r), 201);
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, "/openapi/v3", &r), 200);
    char *url1 = strdup(crd_url(r.json));
    ts_resp_free(&r);
    assert_true(strstr(url1, "/openapi/v3/apis/example.com/v1?hash=") == url1);
    assert_int_equal(ts_get(*state, "/openapi/v3/apis/example.com/v1", &r), 200);
    json_t *d = def(r.json, "com.example.v1.Widget");
    assert_string_equal(ts_s(d, "x-kubernetes-group-version-kind.0.kind"), "Widget");
    assert_string_equal(ts_s(d, "properties.spec.properties.size.type"), "integer");
    assert_string_equal(ts_s(d, "properties.metadata.allOf.0.$ref"),
                        "#/components/schemas/v1.ObjectMeta");
    def(r.json, "v1.ObjectMeta");
    ts_resp_free(&r);
    /* change the schema: the URL's hash changes */
    assert_int_equal(ts_get(*state,
                            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                            "widgets.example.com",
                            &r),
                     200);
    json_t *doc = json_deep_copy(r.json);
    ts_resp_free(&r);
    json_object_set_new(ts_j(doc, "spec.versions.0.schema.openAPIV3Schema.properties.spec."
                                  "properties"),
                        "color", json_pack("{s:s}", "type", "string"));
    char *body = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    ts_req(*state, "PUT",
           "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
           "application/json", body, NULL, &r);
    free(body);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, "/openapi/v3", &r), 200);
    assert_string_not_equal(crd_url(r.json), url1);
    ts_resp_free(&r);
    free(url1);
}

static void test_server_api_openapi_v2_json(void **state)
{
    ts_resp r;
    assert_int_equal(ts_req(*state, "GET", "/openapi/v2", NULL, NULL, "application/json", &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "swagger"), "2.0");
    json_t *defs = ts_j(r.json, "definitions");
    json_t *d = json_object_get(defs, "v1.Deployment");
    assert_non_null(d);
    assert_string_equal(ts_s(d, "properties.spec.$ref"), "#/definitions/v1.DeploymentSpec");
    assert_non_null(json_object_get(defs, "v1.ConfigMap"));
    assert_string_equal(
        ts_s(json_object_get(defs, "io.k8s.apimachinery.pkg.util.intstr.IntOrString"), "format"),
        "int-or-string");
    ts_resp_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_server_api_openapi_v3_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_api_openapi_v3_deployment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_api_openapi_v3_crd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_api_openapi_v2_json, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
