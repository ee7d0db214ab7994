/*
 * test_server_pod_binding.c — the pods/binding subresource of the embedded API server (what a
 * scheduler POSTs): a Binding sets spec.nodeName, the PodScheduled condition and the binding's
 * annotations in one write (one MODIFIED event), answered 201 with a Success Status; a bound
 * or terminating pod is 409, a name other than the URL's 400, a missing target 422, a missing
 * pod 404, any method but POST 405; managedFields records the write through "binding".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

#define POD_PATH "/api/v1/namespaces/default/pods"
#define JSON     "application/json"

static int setup(void **state)
{
    kc_server *s = ts_start();
    if (!s)
        return -1;
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    kc_server_free(*state);
    return 0;
}

static void create_pod(kc_server *s, const char *name)
{
    ts_resp r;
    assert_int_equal(ts_post(s, POD_PATH, ts_pod(name, NULL), &r), 201);
    ts_resp_free(&r);
}

static long post_binding(kc_server *s, const char *pod, const char *body_name, const char *target,
                         ts_resp *r)
{
    char path[256], body[512];
    snprintf(path, sizeof path, POD_PATH "/%s/binding?fieldManager=my-scheduler", pod);
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"%s\","
             "\"annotations\":{\"sched/why\":\"least-loaded\"}},\"target\":%s}",
             body_name, target);
    ts_req(s, "POST", path, JSON, body, NULL, r);
    return r->status;
}

static void test_server_binding_sets_node_condition_annotations(void **state)
{
    kc_server *s = *state;
    create_pod(s, "p1");
    ts_watch *w = ts_watch_start(s, POD_PATH "?watch=1&fieldSelector=metadata.name%3Dp1");
    json_t *ev = ts_watch_next(w, 5000); /* ADDED */
    assert_non_null(ev);
    json_decref(ev);
    ts_resp r;
    assert_int_equal(post_binding(s, "p1", "p1", "{\"kind\":\"Node\",\"name\":\"n1\"}", &r), 201);
    assert_string_equal(ts_s(r.json, "kind"), "Status");
    assert_string_equal(ts_s(r.json, "status"), "Success");
    ts_resp_free(&r);
    ev = ts_watch_next(w, 5000);
    assert_non_null(ev);
    assert_string_equal(ts_s(ev, "type"), "MODIFIED");
    json_t *pod = ts_j(ev, "object");
    assert_string_equal(ts_s(pod, "spec.nodeName"), "n1");
    assert_string_equal(ts_s(pod, "status.conditions.0.type"), "PodScheduled");
    assert_string_equal(ts_s(pod, "status.conditions.0.status"), "True");
    assert_string_equal(ts_s(pod, "metadata.annotations.sched/why"), "least-loaded");
    json_decref(ev);
    ts_watch_free(w);
    assert_int_equal(ts_get(s, POD_PATH "/p1", &r), 200);
    size_t i;
    json_t *e;
    bool found = false;
    json_array_foreach(ts_j(r.json, "metadata.managedFields"), i, e)
    {
        found |= !strcmp(ts_s(e, "manager"), "my-scheduler") &&
                 !strcmp(ts_s(e, "subresource"), "binding") &&
                 ts_j(e, "fieldsV1.f:spec.f:nodeName") != NULL;
    }
    assert_true(found);
    ts_resp_free(&r);
    /* bound already: 409 with upstream's message */
    assert_int_equal(post_binding(s, "p1", "p1", "{\"name\":\"n2\"}", &r), 409);
    assert_string_equal(ts_s(r.json, "message"), "pod p1 is already assigned to node \"n1\"");
    ts_resp_free(&r);
}

static void test_server_binding_rejects_bad_requests(void **state)
{
    kc_server *s = *state;
    create_pod(s, "p2");
    ts_resp r;
    assert_int_equal(post_binding(s, "p2", "other", "{\"name\":\"n1\"}", &r), 400);
    assert_string_equal(ts_s(r.json, "message"),
                        "name in URL does not match name in Binding object");
    ts_resp_free(&r);
    assert_int_equal(post_binding(s, "p2", "p2", "{\"kind\":\"Node\"}", &r), 422);
    assert_string_equal(ts_s(r.json, "details.causes.0.field"), "target.name");
    ts_resp_free(&r);
    assert_int_equal(post_binding(s, "p2", "p2", "{\"kind\":\"Pod\",\"name\":\"n1\"}", &r), 422);
    assert_string_equal(ts_s(r.json, "details.causes.0.field"), "target.kind");
    ts_resp_free(&r);
    assert_int_equal(post_binding(s, "nope", "nope", "{\"name\":\"n1\"}", &r), 404);
    ts_resp_free(&r);
    ts_req(s, "GET", POD_PATH "/p2/binding", JSON, NULL, NULL, &r);
    assert_int_equal(r.status, 405);
    ts_resp_free(&r);
    /* nothing above changed the pod */
    assert_int_equal(ts_get(s, POD_PATH "/p2", &r), 200);
    assert_null(ts_j(r.json, "spec.nodeName"));
    ts_resp_free(&r);
    /* a dry run answers 201 and stores nothing */
    char body[] = "{\"metadata\":{\"name\":\"p2\"},\"target\":{\"name\":\"n1\"}}";
    ts_req(s, "POST", POD_PATH "/p2/binding?dryRun=All", JSON, body, NULL, &r);
    assert_int_equal(r.status, 201);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, POD_PATH "/p2", &r), 200);
    assert_null(ts_j(r.json, "spec.nodeName"));
    ts_resp_free(&r);
}

static void test_server_binding_terminating_pod_409(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(
        ts_post(s, POD_PATH,
                "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p3\","
                "\"finalizers\":[\"x/y\"]},\"spec\":{" TS_CONTAINERS "}}",
                &r),
        201);
    ts_resp_free(&r);
    ts_req(s, "DELETE", POD_PATH "/p3", JSON, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    assert_int_equal(post_binding(s, "p3", "p3", "{\"name\":\"n1\"}", &r), 409);
    assert_string_equal(ts_s(r.json, "message"),
                        "pod p3 is being deleted, cannot be assigned to a host");
    ts_resp_free(&r);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_binding_sets_node_condition_annotations),
        cmocka_unit_test(test_server_binding_rejects_bad_requests),
        cmocka_unit_test(test_server_binding_terminating_pod_409),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    curl_global_cleanup();
    return rc;
}
