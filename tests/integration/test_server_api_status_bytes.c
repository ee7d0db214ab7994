/*
 * test_server_api_status_bytes.c — the bytes of error and success bodies, compared whole with
 * what a Kubernetes 1.33 API server sends for the same request (captured wording; spec §3.7):
 * metav1.Status in the Go struct's field order (kind, apiVersion, metadata, status, message,
 * reason, details, code), StatusDetails in its order (name, group, kind, uid, causes,
 * retryAfterSeconds), StatusCause as reason, message, field; empty strings omitted; the generic
 * 404 with "details":{}; every JSON body ending in the newline Go's json.Encoder writes; and
 * Go's HTML-safe escapes (<, >, & as \u003c, \u003e, \u0026) in stored objects and replies.
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

/* Send the request and compare the whole body with want, and the status. */
static void expect_bytes(kc_server *s, const char *method, const char *path, const char *body,
                         long status, const char *want)
{
    ts_resp r;
    assert_int_equal(ts_req(s, method, path, body ? "application/json" : NULL, body, NULL, &r), 0);
    assert_int_equal(r.status, status);
    assert_non_null(r.body);
    assert_string_equal(r.body, want);
    ts_resp_free(&r);
}

#define ST_HEAD "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"

/* Upstream's NewGenericServerResponse: empty StatusDetails, so "details":{} — for an unknown
 * path, an unknown group and an unknown subresource alike. */
static void test_server_status_generic_404(void **state)
{
    const char *want = ST_HEAD "\"Failure\",\"message\":\"the server could not find the requested "
                               "resource\",\"reason\":\"NotFound\",\"details\":{},\"code\":404}\n";
    expect_bytes(*state, "GET", "/apis/nope.example.com/v1/things", NULL, 404, want);
    expect_bytes(*state, "GET", "/api/v1/namespaces/default/configmaps/x/nosuch", NULL, 404, want);
    expect_bytes(*state, "GET", "/no/such/path", NULL, 404, want);
}

/* NewNotFound / NewAlreadyExists: details name + kind (the resource), no group for core;
 * group for a named group. */
static void test_server_status_not_found_exists(void **state)
{
    kc_server *s = *state;
    expect_bytes(s, "GET", CM_PATH "/x", NULL, 404,
                 ST_HEAD "\"Failure\",\"message\":\"configmaps \\\"x\\\" not found\",\"reason\":"
                         "\"NotFound\",\"details\":{\"name\":\"x\",\"kind\":\"configmaps\"},"
                         "\"code\":404}\n");
    expect_bytes(s, "GET", "/apis/apps/v1/namespaces/default/deployments/d", NULL, 404,
                 ST_HEAD "\"Failure\",\"message\":\"deployments.apps \\\"d\\\" not found\","
                         "\"reason\":\"NotFound\",\"details\":{\"name\":\"d\",\"group\":\"apps\","
                         "\"kind\":\"deployments\"},\"code\":404}\n");
    ts_resp r;
    assert_int_equal(ts_post(s, CM_PATH, ts_cm("x", NULL), &r), 201);
    ts_resp_free(&r);
    expect_bytes(s, "POST", CM_PATH, ts_cm("x", NULL), 409,
                 ST_HEAD "\"Failure\",\"message\":\"configmaps \\\"x\\\" already exists\","
                         "\"reason\":\"AlreadyExists\",\"details\":{\"name\":\"x\",\"kind\":"
                         "\"configmaps\"},\"code\":409}\n");
    /* the NamespaceLifecycle plugin: a create in a namespace that does not exist */
    expect_bytes(s, "POST", "/api/v1/namespaces/nope/configmaps", ts_cm("y", NULL), 404,
                 ST_HEAD "\"Failure\",\"message\":\"namespaces \\\"nope\\\" not found\","
                         "\"reason\":\"NotFound\",\"details\":{\"name\":\"nope\",\"kind\":"
                         "\"namespaces\"},\"code\":404}\n");
}

/* A create in a terminating namespace: admission.NewForbidden plus the NamespaceTerminating
 * cause (StatusCause fields reason, message, field). */
static void test_server_status_namespace_terminating(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(ts_post(s, "/api/v1/namespaces",
                             "{\"metadata\":{\"name\":\"t\",\"finalizers\":[\"x/hold\"]}}", &r),
                     201);
    ts_resp_free(&r);
    ts_req(s, "DELETE", "/api/v1/namespaces/t", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    expect_bytes(s, "POST", "/api/v1/namespaces/t/configmaps", ts_cm("c", NULL), 403,
                 ST_HEAD "\"Failure\",\"message\":\"configmaps \\\"c\\\" is forbidden: unable to "
                         "create new content in namespace t because it is being terminated\","
                         "\"reason\":\"Forbidden\",\"details\":{\"name\":\"c\",\"kind\":"
                         "\"configmaps\",\"causes\":[{\"reason\":\"NamespaceTerminating\","
                         "\"message\":\"namespace t is being terminated\",\"field\":"
                         "\"metadata.namespace\"}]},\"code\":403}\n");
}

/* The Success Status of a delete: no message, reason or code; details name, group, kind, uid. */
static void test_server_status_delete_success(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(ts_post(s, CM_PATH, ts_cm("gone", NULL), &r), 201);
    char uid[64];
    snprintf(uid, sizeof(uid), "%s", ts_s(r.json, "metadata.uid"));
    ts_resp_free(&r);
    char want[512];
    snprintf(want, sizeof(want),
             ST_HEAD "\"Success\",\"details\":{\"name\":\"gone\",\"kind\":\"configmaps\","
                     "\"uid\":\"%s\"}}\n",
             uid);
    expect_bytes(s, "DELETE", CM_PATH "/gone", NULL, 200, want);
}

/* Objects and lists end in a newline; <, > and & are written as Go writes them, in the reply
 * and in what is stored (a later GET, a list). */
static void test_server_status_newline_and_html_escapes(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(
        ts_post(s, CM_PATH, "{\"metadata\":{\"name\":\"h\"},\"data\":{\"k\":\"<a&b>\"}}", &r), 201);
    assert_true(r.len > 2 && r.body[r.len - 1] == '\n' && r.body[r.len - 2] == '}');
    assert_non_null(strstr(r.body, "\"data\":{\"k\":\"\\u003ca\\u0026b\\u003e\"}"));
    assert_string_equal(ts_s(r.json, "data.k"), "<a&b>");
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, CM_PATH "/h", &r), 200);
    assert_true(r.body[r.len - 1] == '\n');
    assert_non_null(strstr(r.body, "\\u003ca\\u0026b\\u003e"));
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, CM_PATH, &r), 200);
    assert_true(r.len > 3 && !strcmp(r.body + r.len - 3, "]}\n"));
    assert_non_null(strstr(r.body, "\\u003ca\\u0026b\\u003e"));
    assert_non_null(r.json); /* the announced length covers the newline: the body is whole */
    ts_resp_free(&r);
    /* U+2028 / U+2029 (raw UTF-8 in the request) are written \u2028 / \u2029, as Go does */
    assert_int_equal(ts_post(s, CM_PATH,
                             "{\"metadata\":{\"name\":\"ls\"},\"data\":{\"k\":\"a\xe2\x80\xa8"
                             "b\xe2\x80\xa9"
                             "c\xe2\x80\xa0\"}}",
                             &r),
                     201);
    assert_non_null(strstr(r.body, "\"k\":\"a\\u2028b\\u2029c\xe2\x80\xa0\"")); /* U+2020 as is */
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/api/v1/namespaces/default/secrets", &r), 200);
    assert_true(r.len > 3 && !strcmp(r.body + r.len - 3, "]}\n")); /* an empty list too */
    ts_resp_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_server_status_generic_404, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_status_not_found_exists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_status_namespace_terminating, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_status_delete_success, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_status_newline_and_html_escapes, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
