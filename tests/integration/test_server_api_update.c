/*
 * test_server_api_update.c — GET and PUT semantics of the embedded API server (spec §9 #21–#37):
 * Status bodies, read-your-writes, optimistic concurrency, no-op updates, immutable fields,
 * status subresource, generation, finalizers.
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

static char *dumps(json_t *j)
{
    return json_dumps(j, JSON_COMPACT);
}

/* PUT the JSON j at path; returns status. */
static long put(kc_server *s, const char *path, json_t *j, ts_resp *r)
{
    char *b = dumps(j);
    ts_req(s, "PUT", path, "application/json", b, NULL, r);
    free(b);
    return r->status;
}

static void test_server_get_missing_full_status_21(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, "/apis/apps/v1/namespaces/default/deployments/web", &r), 404);
    assert_string_equal(ts_s(r.json, "kind"), "Status");
    assert_string_equal(ts_s(r.json, "apiVersion"), "v1");
    assert_true(json_is_object(ts_j(r.json, "metadata")));
    assert_string_equal(ts_s(r.json, "status"), "Failure");
    assert_string_equal(ts_s(r.json, "message"), "deployments.apps \"web\" not found");
    assert_string_equal(ts_s(r.json, "reason"), "NotFound");
    assert_string_equal(ts_s(r.json, "details.name"), "web");
    assert_string_equal(ts_s(r.json, "details.group"), "apps");
    assert_string_equal(ts_s(r.json, "details.kind"), "deployments");
    assert_int_equal(json_integer_value(ts_j(r.json, "code")), 404);
    ts_resp_free(&r);
}

static void test_server_get_after_write_same_rv_22(void **state)
{
    ts_resp r, g;
    assert_int_equal(ts_post(*state, CM_PATH, ts_cm("u22", NULL), &r), 201);
    assert_int_equal(ts_get(*state, CM_PATH "/u22", &g), 200);
    assert_string_equal(ts_s(r.json, "metadata.resourceVersion"),
                        ts_s(g.json, "metadata.resourceVersion"));
    ts_resp_free(&r);
    ts_resp_free(&g);
}

static void test_server_put_current_rv_26(void **state)
{
    kc_server *s = *state;
    ts_resp r, u, other;
    ts_post(s, CM_PATH, ts_cm("u26", NULL), &r);
    ts_post(s, CM_PATH, ts_cm("u26b", NULL), &other);
    json_object_set_new(ts_j(r.json, "data"), "k", json_string("changed"));
    assert_int_equal(put(s, CM_PATH "/u26", r.json, &u), 200);
    assert_true(ts_rv(u.json) > ts_rv(r.json));
    assert_true(ts_rv(u.json) > ts_rv(other.json));
    assert_int_equal(ts_rv(u.json), kc_server_current_rv(s));
    ts_resp_free(&r);
    ts_resp_free(&u);
    ts_resp_free(&other);
}

static void test_server_put_stale_rv_409_27(void **state)
{
    kc_server *s = *state;
    ts_resp r, u, u2;
    ts_post(s, CM_PATH, ts_cm("u27", NULL), &r);
    json_object_set_new(ts_j(r.json, "data"), "k", json_string("1"));
    assert_int_equal(put(s, CM_PATH "/u27", r.json, &u), 200);
    json_object_set_new(ts_j(r.json, "data"), "k", json_string("2"));
    assert_int_equal(put(s, CM_PATH "/u27", r.json, &u2), 409);
    assert_string_equal(ts_s(u2.json, "reason"), "Conflict");
    assert_non_null(strstr(ts_s(u2.json, "message"), "the object has been modified"));
    ts_resp_free(&r);
    ts_resp_free(&u);
    ts_resp_free(&u2);
}

static const char *crd =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
    "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","
    "\"kind\":\"Widget\"},\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
    "\"subresources\":{\"status\":{}}}]}}";
#define W_PATH "/apis/example.com/v1/namespaces/default/widgets"

static json_t *make_widget(kc_server *s, const char *name)
{
    ts_resp r;
    ts_post(s, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd, &r);
    ts_resp_free(&r);
    char body[256];
    snprintf(
        body, sizeof(body),
        "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"%s\"},"
        "\"spec\":{\"a\":1}}",
        name);
    assert_int_equal(ts_post(s, W_PATH, body, &r), 201);
    json_t *j = json_incref(r.json);
    ts_resp_free(&r);
    return j;
}

static void test_server_put_without_rv_28(void **state)
{
    kc_server *s = *state;
    ts_resp r, u;
    ts_post(s, CM_PATH, ts_cm("u28", NULL), &r);
    json_object_del(ts_j(r.json, "metadata"), "resourceVersion");
    assert_int_equal(put(s, CM_PATH "/u28", r.json, &u), 200);
    ts_resp_free(&r);
    ts_resp_free(&u);
    json_t *w = make_widget(s, "w28");
    json_object_del(ts_j(w, "metadata"), "resourceVersion");
    json_object_set_new(ts_j(w, "spec"), "a", json_integer(2));
    assert_int_equal(put(s, W_PATH "/w28", w, &u), 422);
    assert_non_null(strstr(ts_s(u.json, "message"), "must be specified for an update"));
    ts_resp_free(&u);
    json_decref(w);
}

static void test_server_put_noop_same_rv_no_event_29(void **state)
{
    kc_server *s = *state;
    ts_resp r, u;
    ts_post(s, CM_PATH, ts_cm("u29", NULL), &r);
    char path[256];
    snprintf(path, sizeof(path), CM_PATH "?watch=1&resourceVersion=%llu", ts_rv(r.json));
    ts_watch *w = ts_watch_start(s, path);
    assert_int_equal(put(s, CM_PATH "/u29", r.json, &u), 200);
    assert_string_equal(ts_s(u.json, "metadata.resourceVersion"),
                        ts_s(r.json, "metadata.resourceVersion"));
    assert_null(ts_watch_next_nb(w, 300));
    ts_watch_free(w);
    ts_resp_free(&r);
    ts_resp_free(&u);
}

static void test_server_put_missing_404_30(void **state)
{
    ts_resp u;
    json_t *j = json_loads(ts_cm("u30", NULL), 0, NULL);
    assert_int_equal(put(*state, CM_PATH "/u30", j, &u), 404);
    json_decref(j);
    ts_resp_free(&u);
}

static void test_server_put_immutables_31(void **state)
{
    kc_server *s = *state;
    ts_resp r, u;
    ts_post(s, CM_PATH, ts_cm("u31", NULL), &r);
    assert_int_equal(put(s, CM_PATH "/other", r.json, &u), 400);
    ts_resp_free(&u);
    json_t *c = json_deep_copy(r.json);
    json_object_set_new(ts_j(c, "metadata"), "uid", json_string("x-y-z"));
    assert_int_equal(put(s, CM_PATH "/u31", c, &u), 409);
    ts_resp_free(&u);
    json_decref(c);
    c = json_deep_copy(r.json);
    json_object_set_new(ts_j(c, "metadata"), "creationTimestamp",
                        json_string("2001-01-01T00:00:00Z"));
    assert_int_equal(put(s, CM_PATH "/u31", c, &u), 422);
    ts_resp_free(&u);
    json_decref(c);
    ts_resp_free(&r);
}

#define DEP_PATH "/apis/apps/v1/namespaces/default/deployments"

static void test_server_put_main_keeps_status_32_status_sub_33(void **state)
{
    kc_server *s = *state;
    ts_resp r, u, st;
    ts_post(s, DEP_PATH,
            "{\"metadata\":{\"name\":\"d32\"},\"spec\":{\"replicas\":1," TS_DEP_SPEC "}}", &r);
    json_object_set_new(r.json, "status", json_pack("{s:i}", "replicas", 5));
    assert_int_equal(put(s, DEP_PATH "/d32", r.json, &u), 200);
    assert_null(ts_j(u.json, "status.replicas"));
    /* now /status: only status changes, generation unchanged (#33) */
    json_t *c = json_deep_copy(u.json);
    json_object_set_new(c, "status", json_pack("{s:i}", "replicas", 5));
    json_object_set_new(ts_j(c, "spec"), "replicas", json_integer(9));
    assert_int_equal(put(s, DEP_PATH "/d32/status", c, &st), 200);
    assert_int_equal(json_integer_value(ts_j(st.json, "status.replicas")), 5);
    assert_int_equal(json_integer_value(ts_j(st.json, "spec.replicas")), 1);
    assert_int_equal(json_integer_value(ts_j(st.json, "metadata.generation")),
                     json_integer_value(ts_j(u.json, "metadata.generation")));
    json_decref(c);
    ts_resp_free(&r);
    ts_resp_free(&u);
    ts_resp_free(&st);
}

static void test_server_put_cr_generation_34(void **state)
{
    kc_server *s = *state;
    ts_resp u, u2;
    json_t *w = make_widget(s, "w34");
    json_object_set_new(ts_j(w, "metadata"), "labels", json_pack("{s:s}", "a", "b"));
    assert_int_equal(put(s, W_PATH "/w34", w, &u), 200);
    assert_int_equal(json_integer_value(ts_j(u.json, "metadata.generation")), 1);
    json_object_set_new(ts_j(u.json, "spec"), "a", json_integer(5));
    assert_int_equal(put(s, W_PATH "/w34", u.json, &u2), 200);
    assert_int_equal(json_integer_value(ts_j(u2.json, "metadata.generation")), 2);
    json_decref(w);
    ts_resp_free(&u);
    ts_resp_free(&u2);
}

static void test_server_put_deployment_annotation_generation_35(void **state)
{
    kc_server *s = *state;
    ts_resp r, u;
    ts_post(s, DEP_PATH,
            "{\"metadata\":{\"name\":\"d35\"},\"spec\":{\"replicas\":1," TS_DEP_SPEC "}}", &r);
    json_object_set_new(ts_j(r.json, "metadata"), "annotations", json_pack("{s:s}", "x", "y"));
    assert_int_equal(put(s, DEP_PATH "/d35", r.json, &u), 200);
    assert_int_equal(json_integer_value(ts_j(u.json, "metadata.generation")), 2);
    ts_resp_free(&r);
    ts_resp_free(&u);
}

static void test_server_finalizers_36_37(void **state)
{
    kc_server *s = *state;
    ts_resp r, d, u, g;
    ts_post(s, CM_PATH, "{\"metadata\":{\"name\":\"f36\",\"finalizers\":[\"x/y\"]}}", &r);
    char path[256];
    snprintf(path, sizeof(path), CM_PATH "?watch=1&resourceVersion=%llu", ts_rv(r.json));
    ts_watch *w = ts_watch_start(s, path);
    ts_req(s, "DELETE", CM_PATH "/f36", NULL, NULL, NULL, &d);
    assert_int_equal(d.status, 200);
    assert_true(strlen(ts_s(d.json, "metadata.deletionTimestamp")) > 0);
    /* adding a finalizer while deleting → 422 (#36) */
    json_t *c = json_deep_copy(d.json);
    json_array_append_new(ts_j(c, "metadata.finalizers"), json_string("a/b"));
    assert_int_equal(put(s, CM_PATH "/f36", c, &u), 422);
    ts_resp_free(&u);
    json_decref(c);
    /* removing the last one deletes it (#37) */
    c = json_deep_copy(d.json);
    json_object_set_new(ts_j(c, "metadata"), "finalizers", json_array());
    assert_int_equal(put(s, CM_PATH "/f36", c, &u), 200);
    assert_int_equal(ts_get(s, CM_PATH "/f36", &g), 404);
    json_t *e1 = ts_watch_next_nb(w, 2000), *e2 = ts_watch_next_nb(w, 2000);
    assert_string_equal(ts_s(e1, "type"), "MODIFIED");
    assert_string_equal(ts_s(e2, "type"), "DELETED");
    assert_true(ts_rv(ts_j(e2, "object")) > ts_rv(ts_j(e1, "object")));
    json_decref(e1);
    json_decref(e2);
    json_decref(c);
    ts_watch_free(w);
    ts_resp_free(&r);
    ts_resp_free(&d);
    ts_resp_free(&u);
    ts_resp_free(&g);
}

static void test_server_get_rv_too_large_504(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, "/api/v1/namespaces/default?resourceVersion=999999", &r), 504);
    assert_string_equal(ts_s(r.json, "details.causes.0.reason"), "ResourceVersionTooLarge");
    ts_resp_free(&r);
}

/* Regression: after compaction the store holds the only reference to the current object; an
 * update/delete must keep it alive while it becomes the history's "old" state. */
static void test_server_update_after_compaction(void **state)
{
    kc_server *s = *state;
    ts_resp r, u, d;
    ts_post(s, CM_PATH, ts_cm("uc", NULL), &r);
    kc_server_compact(s);
    json_object_set_new(ts_j(r.json, "data"), "k", json_string("after"));
    assert_int_equal(put(s, CM_PATH "/uc", r.json, &u), 200);
    kc_server_compact(s);
    ts_req(s, "DELETE", CM_PATH "/uc", NULL, NULL, NULL, &d);
    assert_int_equal(d.status, 200);
    ts_resp_free(&r);
    ts_resp_free(&u);
    ts_resp_free(&d);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_get_missing_full_status_21),
        cmocka_unit_test(test_server_get_after_write_same_rv_22),
        cmocka_unit_test(test_server_put_current_rv_26),
        cmocka_unit_test(test_server_put_stale_rv_409_27),
        cmocka_unit_test(test_server_put_without_rv_28),
        cmocka_unit_test(test_server_put_noop_same_rv_no_event_29),
        cmocka_unit_test(test_server_put_missing_404_30),
        cmocka_unit_test(test_server_put_immutables_31),
        cmocka_unit_test(test_server_put_main_keeps_status_32_status_sub_33),
        cmocka_unit_test(test_server_put_cr_generation_34),
        cmocka_unit_test(test_server_put_deployment_annotation_generation_35),
        cmocka_unit_test(test_server_finalizers_36_37),
        cmocka_unit_test(test_server_get_rv_too_large_504),
        cmocka_unit_test(test_server_update_after_compaction),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    curl_global_cleanup();
    return rc;
}
