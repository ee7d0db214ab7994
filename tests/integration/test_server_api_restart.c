/*
 * test_server_api_restart.c — the embedded server's restarts (spec §9 #101: after a restart with
 * an RV reset clients get TooLarge or Expired and relist, never a silent stale cache):
 * - restore (kc_server_restart KC_SERVER_RESTART_RESTORE, POST /admin/restart?mode=restore):
 *   as after a restore from backup — every object (and CRD) kept with its uid and content, the
 *   RVs renumbered 1..N in their old order so the counter goes back, history gone, every watch
 *   closed; old RVs get 504 TooLarge (above N) or 410 Expired (below), a stale update 409;
 * - wipe (kc_server_restart, POST /admin/restart): every object dropped, built-in namespaces
 *   recreated, and RVs below the new current get 410 too.
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

static json_t *post_ok(kc_server *s, const char *path, const char *body)
{
    ts_resp r;
    if (ts_post(s, path, body, &r) != 201)
        fail_msg("POST %s: HTTP %ld %s", path, r.status, r.body ? r.body : "");
    json_t *j = json_incref(r.json);
    ts_resp_free(&r);
    return j;
}

/* Build some history: creates, updates, a delete, a CRD and a custom resource. Returns the RV. */
static unsigned long long churn(kc_server *s)
{
    for (int i = 0; i < 6; i++) {
        char name[32];
        snprintf(name, sizeof(name), "r%d", i);
        json_decref(post_ok(s, CM_PATH, ts_cm(name, NULL)));
    }
    for (int i = 0; i < 4; i++) {
        ts_resp r;
        char body[64];
        snprintf(body, sizeof(body), "{\"data\":{\"n\":\"%d\"}}", i);
        ts_req(s, "PATCH", CM_PATH "/r1", "application/merge-patch+json", body, NULL, &r);
        assert_int_equal(r.status, 200);
        ts_resp_free(&r);
    }
    ts_resp r;
    ts_req(s, "DELETE", CM_PATH "/r5", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    json_decref(post_ok(
        s, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        "{\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
        "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","
        "\"kind\":\"Widget\"},\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
        "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
        "\"x-kubernetes-preserve-unknown-fields\":true}}}]}}"));
    json_decref(post_ok(s, "/apis/example.com/v1/namespaces/default/widgets",
                        "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":"
                        "{\"name\":\"w1\"},\"spec\":{\"size\":3}}"));
    return kc_server_current_rv(s);
}

static json_t *list(kc_server *s, const char *path)
{
    ts_resp r;
    assert_int_equal(ts_get(s, path, &r), 200);
    json_t *j = json_incref(r.json);
    ts_resp_free(&r);
    return j;
}

/* The first event of a watch from rv, or NULL when none came. */
static json_t *first_event(kc_server *s, unsigned long long rv)
{
    char path[256];
    snprintf(path, sizeof(path), CM_PATH "?watch=1&resourceVersion=%llu", rv);
    ts_watch *w = ts_watch_start(s, path);
    json_t *ev = ts_watch_next(w, 3000);
    ts_watch_free(w);
    return ev;
}

static void assert_error_event(json_t *ev, int code)
{
    assert_non_null(ev);
    assert_string_equal(ts_s(ev, "type"), "ERROR");
    assert_int_equal(json_integer_value(ts_j(ev, "object.code")), code);
    json_decref(ev);
}

/* After a restore: same objects, uids and content; RVs 1..N in the old order; the counter at N. */
static void check_restored(kc_server *s, json_t *before, unsigned long long old_rv)
{
    unsigned long long n = kc_server_current_rv(s);
    assert_true(n < old_rv);
    json_t *after = list(s, CM_PATH);
    assert_int_equal(strtoull(ts_s(after, "metadata.resourceVersion"), NULL, 10), n);
    json_t *bi = json_object_get(before, "items"), *ai = json_object_get(after, "items");
    assert_int_equal(json_array_size(ai), json_array_size(bi));
    for (size_t i = 0; i < json_array_size(bi); i++) {
        json_t *b = json_array_get(bi, i), *a = json_array_get(ai, i);
        assert_string_equal(ts_s(a, "metadata.name"), ts_s(b, "metadata.name"));
        assert_string_equal(ts_s(a, "metadata.uid"), ts_s(b, "metadata.uid"));
        assert_true(json_equal(json_object_get(a, "data"), json_object_get(b, "data")));
        assert_true(ts_rv(a) >= 1 && ts_rv(a) <= n);
        for (size_t k = 0; k < i; k++) /* the old order of RVs is kept */
            assert_true((ts_rv(json_array_get(bi, k)) < ts_rv(b)) ==
                        (ts_rv(json_array_get(ai, k)) < ts_rv(a)));
    }
    json_decref(after);
    json_t *w = list(s, "/apis/example.com/v1/namespaces/default/widgets");
    assert_int_equal(json_array_size(json_object_get(w, "items")), 1);
    assert_true(ts_rv(ts_j(w, "items.0")) <= n);
    json_decref(w);
}

static void test_server_restart_restore_keeps_objects_rv_goes_back_101(void **state)
{
    kc_server *s = *state;
    unsigned long long old_rv = churn(s);
    json_t *before = list(s, CM_PATH);
    ts_resp r;
    ts_get(s, CM_PATH "/r1", &r);
    json_t *stale = json_incref(r.json); /* a client's copy, old RV */
    ts_resp_free(&r);
    char path[256];
    snprintf(path, sizeof(path), CM_PATH "?watch=1&resourceVersion=%llu", old_rv);
    ts_watch *w = ts_watch_start(s, path);
    ts_get(s, CM_PATH, &r); /* the watch is set up before the restart */
    ts_resp_free(&r);
    assert_null(ts_watch_next(w, 200));

    assert_int_equal(kc_server_restart(s, KC_SERVER_RESTART_RESTORE, NULL), 0);
    assert_true(ts_watch_wait_end(w, 3000)); /* every watch closed */
    ts_watch_free(w);
    check_restored(s, before, old_rv);
    unsigned long long n = kc_server_current_rv(s);

    /* Old RVs: above the counter → TooLarge; below it → Expired (history gone). */
    snprintf(path, sizeof(path), CM_PATH "?resourceVersion=%llu", old_rv);
    assert_int_equal(ts_get(s, path, &r), 504);
    ts_resp_free(&r);
    assert_error_event(first_event(s, old_rv), 504);
    assert_error_event(first_event(s, n - 1), 410);
    /* An update carrying the old RV is stale. */
    char *body = json_dumps(stale, JSON_COMPACT);
    ts_req(s, "PUT", CM_PATH "/r1", "application/json", body, NULL, &r);
    assert_int_equal(r.status, 409);
    ts_resp_free(&r);
    free(body);
    json_decref(stale);
    /* A client that relisted at N watches on; new writes continue from N. */
    snprintf(path, sizeof(path), CM_PATH "?watch=1&resourceVersion=%llu", n);
    w = ts_watch_start(s, path);
    json_t *c = post_ok(s, CM_PATH, ts_cm("after", NULL));
    assert_int_equal(ts_rv(c), n + 1);
    json_decref(c);
    json_t *ev = ts_watch_next_nb(w, 3000);
    assert_string_equal(ts_s(ev, "type"), "ADDED");
    assert_int_equal(ts_rv(ts_j(ev, "object")), n + 1);
    json_decref(ev);
    ts_watch_free(w);
    json_decref(before);
}

static void test_server_restart_restore_by_admin_endpoint(void **state)
{
    kc_server *s = *state;
    unsigned long long old_rv = churn(s);
    json_t *before = list(s, CM_PATH);
    ts_resp r;
    ts_req(s, "POST", "/admin/restart?mode=restore", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    check_restored(s, before, old_rv);
    json_decref(before);
    ts_get(s, "/admin/rv", &r);
    assert_int_equal(strtoull(ts_s(r.json, "resourceVersion"), NULL, 10), kc_server_current_rv(s));
    ts_resp_free(&r);
    ts_req(s, "POST", "/admin/restart?mode=bogus", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(ts_s(r.json, "message"), "bogus"));
    ts_resp_free(&r);
    ts_req(s, "GET", "/admin/restart", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 405);
    ts_resp_free(&r);
    ts_req(s, "POST", "/admin/restart?mode=wipe", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, CM_PATH "/r1", &r), 404);
    ts_resp_free(&r);
}

/* A wipe leaves no RV below the new current that a watch could resume from silently. */
static void test_server_restart_wipe_old_rvs_expire_101(void **state)
{
    kc_server *s = *state;
    churn(s);
    assert_int_equal(kc_server_restart(s, KC_SERVER_RESTART_WIPE, NULL), 0);
    unsigned long long n = kc_server_current_rv(s);
    assert_true(n >= 1);
    assert_error_event(first_event(s, n - 1), 410);
    ts_resp r;
    assert_int_equal(ts_get(s, CM_PATH "/r1", &r), 404);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/api/v1/namespaces/kube-system", &r), 200);
    ts_resp_free(&r);
}

static void test_server_restart_ex_bad_arguments(void **state)
{
    assert_int_equal(kc_server_restart(NULL, KC_SERVER_RESTART_RESTORE, NULL), KC_EINVAL);
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_server_restart(*state, (kc_server_restart_mode)7, &e), KC_EINVAL);
    assert_non_null(strstr(e.message, "unknown mode 7"));
    kc_error_clear(&e);
    assert_int_equal(kc_server_restart(NULL, KC_SERVER_RESTART_WIPE, NULL), KC_EINVAL);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_server_restart_restore_keeps_objects_rv_goes_back_101,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_restart_restore_by_admin_endpoint, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_server_restart_wipe_old_rvs_expire_101, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_server_restart_ex_bad_arguments, setup, teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
