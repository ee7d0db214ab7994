/*
 * test_server_api_schema.c — built-in objects against their generated schemas (spec §3.1 "Invalid
 * object", "Unknown or duplicate fields"; checklist #20): type errors fail the write and store
 * nothing, worded as the API server's decode path words them — POST/PUT 400 BadRequest
 * `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number
 * into Go struct field ConfigMap.data of type string`, JSON/merge patches 422 on field "patch",
 * strategic merge patches 422 with the converter's words, apply 500 `failed to create typed patch
 * object (…)`; quantities take numbers, IntOrString ints or strings, []byte base64; unknown fields
 * at any depth are found (Strict 400 naming the path, Warn a warning and the field dropped).
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

#define DEPLOY_PATH "/apis/apps/v1/namespaces/default/deployments"
#define POD_PATH    "/api/v1/namespaces/default/pods"

static void expect_message(ts_resp *r, long status, const char *reason, const char *msg)
{
    if (r->status != status || strcmp(ts_s(r->json, "message"), msg) != 0)
        fail_msg("got %ld %s\nwant %ld %s", r->status, r->body ? r->body : "", status, msg);
    assert_string_equal(ts_s(r->json, "reason"), reason);
    assert_int_equal(json_integer_value(ts_j(r->json, "code")), status);
}

/* §3.1: `data: {a: 1}` in a ConfigMap is a 400 as on a real server, and nothing is stored. */
static void test_server_api_configmap_number_rejected_400(void **state)
{
    ts_resp r;
    ts_post(*state, CM_PATH,
            "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
            "\"c1\"},\"data\":{\"a\":1}}",
            &r);
    expect_message(&r, 400, "BadRequest",
                   "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot "
                   "unmarshal number into Go struct field ConfigMap.data of type string");
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, CM_PATH "/c1", &r), 404);
    ts_resp_free(&r);
    /* the same on PUT */
    assert_int_equal(ts_post(*state, CM_PATH, ts_cm("c2", NULL), &r), 201);
    ts_resp_free(&r);
    ts_req(*state, "PUT", CM_PATH "/c2", "application/json",
           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c2\"},"
           "\"data\":{\"k\":true}}",
           NULL, &r);
    expect_message(&r, 400, "BadRequest",
                   "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot "
                   "unmarshal bool into Go struct field ConfigMap.data of type string");
    ts_resp_free(&r);
}

/* Nested structs name the innermost struct and the JSON path from the root without indices;
 * integer fields quote a number that does not fit. */
static void test_server_api_nested_type_errors_400(void **state)
{
    ts_resp r;
    ts_post(*state, DEPLOY_PATH,
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d1\"},"
            "\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":1}]}}}}",
            &r);
    expect_message(&r, 400, "BadRequest",
                   "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot "
                   "unmarshal number into Go struct field Container.spec.template.spec.containers."
                   "image of type string");
    ts_resp_free(&r);
    ts_post(*state, DEPLOY_PATH,
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d1\"},"
            "\"spec\":{\"replicas\":1.5}}",
            &r);
    expect_message(&r, 400, "BadRequest",
                   "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot "
                   "unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type "
                   "int32");
    ts_resp_free(&r);
    ts_post(*state, POD_PATH,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":"
            "\"x\"}}",
            &r);
    expect_message(&r, 400, "BadRequest",
                   "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal "
                   "string into Go struct field ObjectMeta.metadata.labels of type "
                   "map[string]string");
    ts_resp_free(&r);
    ts_post(*state, "/api/v1/namespaces/default/services",
            "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"ports\":[{\"port\":80,\"targetPort\":"
            "true}]}}",
            &r);
    expect_message(&r, 400, "BadRequest",
                   "Service in version \"v1\" cannot be handled as a Service: json: cannot "
                   "unmarshal bool into Go struct field ServicePort.spec.ports.targetPort of type "
                   "int32");
    ts_resp_free(&r);
    ts_post(*state, "/api/v1/namespaces/default/secrets",
            "{\"metadata\":{\"name\":\"s\"},\"data\":{\"a\":\"abc!\"}}", &r);
    expect_message(&r, 400, "BadRequest",
                   "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data "
                   "at input byte 3");
    ts_resp_free(&r);
}

/* What decodes in Go decodes here: quantities as numbers, IntOrString, null anywhere. */
static void test_server_api_valid_types_accepted(void **state)
{
    ts_resp r;
    assert_int_equal(
        ts_post(*state, POD_PATH,
                "{\"metadata\":{\"name\":\"p1\",\"labels\":null},\"spec\":{\"containers\":[{"
                "\"name\":\"a\",\"image\":\"i\",\"resources\":{\"limits\":{\"cpu\":1,"
                "\"nvidia.com/gpu\":\"2\",\"memory\":\"1Gi\"}},\"ports\":[{\"containerPort\":80}]"
                "}],\"terminationGracePeriodSeconds\":null}}",
                &r),
        201);
    ts_resp_free(&r);
    assert_int_equal(ts_post(*state, "/api/v1/namespaces/default/services",
                             "{\"metadata\":{\"name\":\"s1\"},\"spec\":{\"ports\":[{\"port\":80,"
                             "\"targetPort\":\"http\"},{\"port\":81,\"targetPort\":8081}]}}",
                             &r),
                     201);
    ts_resp_free(&r);
    ts_post(*state, POD_PATH,
            "{\"metadata\":{\"name\":\"p2\"},\"spec\":{\"containers\":[{\"name\":\"a\","
            "\"resources\":{\"limits\":{\"cpu\":\"one\"}}}]}}",
            &r);
    expect_message(&r, 400, "BadRequest",
                   "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the "
                   "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    ts_resp_free(&r);
}

/* Patches are checked on their result and fail as the patch path does. */
static void test_server_api_patch_type_errors(void **state)
{
    ts_resp r;
    assert_int_equal(ts_post(*state, CM_PATH, ts_cm("pc", NULL), &r), 201);
    ts_resp_free(&r);
    ts_req(*state, "PATCH", CM_PATH "/pc", "application/merge-patch+json", "{\"data\":{\"a\":1}}",
           NULL, &r);
    assert_int_equal(r.status, 422);
    assert_string_equal(ts_s(r.json, "reason"), "Invalid");
    assert_string_equal(ts_s(r.json, "details.causes.0.field"), "patch");
    assert_non_null(strstr(ts_s(r.json, "message"),
                           "json: cannot unmarshal number into Go struct field ConfigMap.data of "
                           "type string"));
    assert_true(
        !strncmp(ts_s(r.json, "message"), " \"\" is invalid: patch: Invalid value: \"{", 40));
    ts_resp_free(&r);
    ts_req(*state, "PATCH", CM_PATH "/pc", "application/strategic-merge-patch+json",
           "{\"data\":{\"a\":1}}", NULL, &r);
    expect_message(&r, 422, "Invalid",
                   " \"\" is invalid: patch: Invalid value: \"map[data:map[a:1]]\": cannot convert "
                   "int64 to string");
    ts_resp_free(&r);
    ts_req(*state, "PATCH", CM_PATH "/pc?fieldManager=m", "application/apply-patch+yaml",
           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"pc\","
           "\"namespace\":\"default\"},\"data\":{\"a\":1}}",
           NULL, &r);
    expect_message(&r, 500, "Unknown",
                   "failed to create typed patch object (default/pc; /v1, Kind=ConfigMap): "
                   ".data.a: expected string, got &value.valueUnstructured{Value:1}");
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, CM_PATH "/pc", &r), 200); /* unchanged */
    assert_string_equal(ts_s(r.json, "data.k"), "v");
    assert_null(ts_j(r.json, "data.a"));
    ts_resp_free(&r);
}

/* #20 below the top level: Strict names the nested path (with indices), Warn warns and drops. */
static void test_server_api_nested_unknown_fields_20(void **state)
{
    const char *pod = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"u1\"},"
                      "\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"i\",\"bogus\":1}]}}";
    ts_resp r;
    ts_req(*state, "POST", POD_PATH "?fieldValidation=Strict", "application/json", pod, NULL, &r);
    expect_message(&r, 400, "BadRequest",
                   "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: "
                   "unknown field \"spec.containers[0].bogus\"");
    ts_resp_free(&r);
    assert_int_equal(ts_post(*state, POD_PATH, pod, &r), 201);
    assert_string_equal(r.warnings, "299 - \"unknown field \\\"spec.containers[0].bogus\\\"\"\n");
    assert_null(ts_j(r.json, "spec.containers.0.bogus"));
    assert_string_equal(ts_s(r.json, "spec.containers.0.image"), "i");
    ts_resp_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_server_api_configmap_number_rejected_400, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_server_api_nested_type_errors_400, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_api_valid_types_accepted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_api_patch_type_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_api_nested_unknown_fields_20, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
