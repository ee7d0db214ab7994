/*
 * test_server_api_delete.c — DELETE and DELETECOLLECTION of the embedded API server
 * (spec §9 #48–#58), plus namespace cascade and CRD removal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

#define POD_PATH "/api/v1/namespaces/default/pods"

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

static long del(kc_server *s, const char *path, const char *body, ts_resp *r)
{
    ts_req(s, "DELETE", path, body ? "application/json" : NULL, body, NULL, r);
    return r->status;
}

static void test_server_delete_cm_status_pod_object_48_55(void **state)
{
    kc_server *s = *state;
    ts_resp r, d;
    ts_post(s, CM_PATH, ts_cm("d48", NULL), &r);
    assert_int_equal(del(s, CM_PATH "/d48", NULL, &d), 200);
    assert_string_equal(ts_s(d.json, "kind"), "Status");
    assert_string_equal(ts_s(d.json, "status"), "Success");
    assert_string_equal(ts_s(d.json, "details.uid"), ts_s(r.json, "metadata.uid"));
    assert_string_equal(ts_s(d.json, "details.kind"), "configmaps");
    ts_resp_free(&r);
    ts_resp_free(&d);
    ts_post(s, POD_PATH, "{\"metadata\":{\"name\":\"p48\"},\"spec\":{" TS_CONTAINERS "}}", &r);
    assert_int_equal(del(s, POD_PATH "/p48", NULL, &d), 200);
    assert_string_equal(ts_s(d.json, "kind"), "Pod");
    assert_string_equal(ts_s(d.json, "metadata.uid"), ts_s(r.json, "metadata.uid"));
    ts_resp_free(&r);
    ts_resp_free(&d);
}

static void test_server_delete_missing_404_49(void **state)
{
    ts_resp d;
    assert_int_equal(del(*state, CM_PATH "/none", NULL, &d), 404);
    assert_string_equal(ts_s(d.json, "reason"), "NotFound");
    ts_resp_free(&d);
}

static void test_server_delete_with_finalizers_50_51(void **state)
{
    kc_server *s = *state;
    ts_resp r, d, d2, g;
    ts_post(s, CM_PATH, "{\"metadata\":{\"name\":\"d50\",\"finalizers\":[\"a/b\"]}}", &r);
    char path[256];
    snprintf(path, sizeof(path), CM_PATH "?watch=1&resourceVersion=%llu", ts_rv(r.json));
    ts_watch *w = ts_watch_start(s, path);
    assert_int_equal(del(s, CM_PATH "/d50", NULL, &d), 200);
    assert_true(strlen(ts_s(d.json, "metadata.deletionTimestamp")) > 0);
    assert_int_equal(ts_get(s, CM_PATH "/d50", &g), 200);
    json_t *ev = ts_watch_next_nb(w, 2000);
    assert_string_equal(ts_s(ev, "type"), "MODIFIED");
    json_decref(ev);
    assert_int_equal(del(s, CM_PATH "/d50", NULL, &d2), 200);
    assert_string_equal(ts_s(d2.json, "metadata.resourceVersion"),
                        ts_s(d.json, "metadata.resourceVersion"));
    ts_watch_free(w);
    ts_resp_free(&r);
    ts_resp_free(&d);
    ts_resp_free(&d2);
    ts_resp_free(&g);
}

static void test_server_delete_preconditions_52(void **state)
{
    kc_server *s = *state;
    ts_resp r, d;
    ts_post(s, CM_PATH, ts_cm("d52", NULL), &r);
    assert_int_equal(del(s, CM_PATH "/d52", "{\"preconditions\":{\"resourceVersion\":\"1\"}}", &d),
                     409);
    ts_resp_free(&d);
    assert_int_equal(del(s, CM_PATH "/d52", "{\"preconditions\":{\"uid\":\"nope\"}}", &d), 409);
    ts_resp_free(&d);
    char body[256];
    snprintf(body, sizeof(body), "{\"preconditions\":{\"uid\":\"%s\",\"resourceVersion\":\"%s\"}}",
             ts_s(r.json, "metadata.uid"), ts_s(r.json, "metadata.resourceVersion"));
    assert_int_equal(del(s, CM_PATH "/d52", body, &d), 200);
    ts_resp_free(&d);
    ts_resp_free(&r);
}

static void test_server_delete_unscheduled_pod_immediate_53(void **state)
{
    kc_server *s = *state;
    ts_resp r, d, g;
    ts_post(s, POD_PATH, "{\"metadata\":{\"name\":\"p53\"},\"spec\":{" TS_CONTAINERS "}}", &r);
    assert_int_equal(del(s, POD_PATH "/p53", NULL, &d), 200);
    assert_int_equal(ts_get(s, POD_PATH "/p53", &g), 404);
    ts_resp_free(&r);
    ts_resp_free(&d);
    ts_resp_free(&g);
    /* a bound pod is deleted gracefully unless gracePeriodSeconds=0 */
    ts_post(s, POD_PATH,
            "{\"metadata\":{\"name\":\"p53b\"},\"spec\":{\"nodeName\":\"n1\"," TS_CONTAINERS "}}",
            &r);
    assert_int_equal(del(s, POD_PATH "/p53b", NULL, &d), 200);
    assert_int_equal(ts_get(s, POD_PATH "/p53b", &g), 200);
    assert_true(strlen(ts_s(g.json, "metadata.deletionTimestamp")) > 0);
    ts_resp_free(&d);
    ts_resp_free(&g);
    assert_int_equal(del(s, POD_PATH "/p53b?gracePeriodSeconds=0", NULL, &d), 200);
    assert_int_equal(ts_get(s, POD_PATH "/p53b", &g), 404);
    ts_resp_free(&r);
    ts_resp_free(&d);
    ts_resp_free(&g);
}

static void test_server_delete_background_no_gc_finalizers_54(void **state)
{
    kc_server *s = *state;
    ts_resp r, d, g;
    ts_post(s, CM_PATH, ts_cm("d54", NULL), &r);
    assert_int_equal(del(s, CM_PATH "/d54", "{\"propagationPolicy\":\"Background\"}", &d), 200);
    assert_int_equal(ts_get(s, CM_PATH "/d54", &g), 404);
    ts_resp_free(&r);
    ts_resp_free(&d);
    ts_resp_free(&g);
    ts_post(s, CM_PATH, ts_cm("d54f", NULL), &r);
    assert_int_equal(del(s, CM_PATH "/d54f?propagationPolicy=Foreground", NULL, &d), 200);
    assert_int_equal(ts_get(s, CM_PATH "/d54f", &g), 404);
    ts_resp_free(&r);
    ts_resp_free(&d);
    ts_resp_free(&g);
    assert_int_equal(del(s, CM_PATH "/x?propagationPolicy=Sideways", NULL, &d), 422);
    ts_resp_free(&d);
}

static void test_server_delete_dry_run_keeps_56(void **state)
{
    kc_server *s = *state;
    ts_resp r, d, g;
    ts_post(s, CM_PATH, ts_cm("d56", NULL), &r);
    assert_int_equal(del(s, CM_PATH "/d56?dryRun=All", NULL, &d), 200);
    assert_int_equal(ts_get(s, CM_PATH "/d56", &g), 200);
    ts_resp_free(&r);
    ts_resp_free(&d);
    ts_resp_free(&g);
}

static void test_server_deletecollection_57_58(void **state)
{
    kc_server *s = *state;
    ts_resp r, d, l;
    ts_post(s, CM_PATH, ts_cm("c1", "{\"grp\":\"x\"}"), &r);
    ts_resp_free(&r);
    ts_post(s, CM_PATH, ts_cm("c2", "{\"grp\":\"x\"}"), &r);
    ts_resp_free(&r);
    ts_post(s, CM_PATH, ts_cm("c3", "{\"grp\":\"y\"}"), &r);
    char path[256];
    snprintf(path, sizeof(path), CM_PATH "?watch=1&resourceVersion=%llu", ts_rv(r.json));
    ts_resp_free(&r);
    ts_watch *w = ts_watch_start(s, path);
    assert_int_equal(del(s, CM_PATH "?labelSelector=grp%3Dx", NULL, &d), 200);
    assert_int_equal(json_array_size(ts_j(d.json, "items")), 2);
    ts_get(s, CM_PATH "?labelSelector=grp", &l);
    assert_int_equal(json_array_size(ts_j(l.json, "items")), 1);
    assert_string_equal(ts_s(l.json, "items.0.metadata.name"), "c3");
    for (int i = 0; i < 2; i++) {
        json_t *ev = ts_watch_next_nb(w, 2000);
        assert_string_equal(ts_s(ev, "type"), "DELETED");
        json_decref(ev);
    }
    ts_watch_free(w);
    ts_resp_free(&d);
    ts_resp_free(&l);
}

static void test_server_delete_namespace_cascades(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(ts_post(s, "/api/v1/namespaces", "{\"metadata\":{\"name\":\"tmp\"}}", &r),
                     201);
    ts_resp_free(&r);
    assert_int_equal(ts_post(s, "/api/v1/namespaces/tmp/configmaps", ts_cm("x", NULL), &r), 201);
    ts_resp_free(&r);
    assert_int_equal(del(s, "/api/v1/namespaces/tmp", NULL, &r), 200);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/api/v1/namespaces/tmp/configmaps/x", &r), 404);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/api/v1/namespaces/tmp", &r), 404);
    ts_resp_free(&r);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_delete_cm_status_pod_object_48_55),
        cmocka_unit_test(test_server_delete_missing_404_49),
        cmocka_unit_test(test_server_delete_with_finalizers_50_51),
        cmocka_unit_test(test_server_delete_preconditions_52),
        cmocka_unit_test(test_server_delete_unscheduled_pod_immediate_53),
        cmocka_unit_test(test_server_delete_background_no_gc_finalizers_54),
        cmocka_unit_test(test_server_delete_dry_run_keeps_56),
        cmocka_unit_test(test_server_deletecollection_57_58),
        cmocka_unit_test(test_server_delete_namespace_cascades),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    curl_global_cleanup();
    return rc;
}
