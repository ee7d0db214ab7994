/*
 * test_server_api_controllers.c — the controllers (kc_server_opts.controllers), each alone (the
 * default set and "none": test_server_api_cluster_defaults.c): the ownerReference garbage
 * collector (Background, Foreground with blockOwnerDeletion, Orphan), the namespace lifecycle
 * (Terminating, contents deleted with their finalizers honoured, the namespace gone once empty) and
 * the ServiceAccount "default" of every namespace. The controllers act inside the triggering
 * request, so each assertion reads the state right after the request returns (no waiting).
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

#define NS_PATH "/api/v1/namespaces/default/configmaps"

/* Create ConfigMap name with extra metadata (JSON members, may be ""); its uid into uid. */
static void cm(kc_server *s, const char *ns, const char *name, const char *meta, char uid[64])
{
    char path[256], body[2048];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", ns);
    snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\"%s%s}}", name, *meta ? "," : "",
             meta);
    ts_resp r;
    assert_int_equal(ts_post(s, path, body, &r), 201);
    if (uid)
        snprintf(uid, 64, "%s", ts_s(r.json, "metadata.uid"));
    ts_resp_free(&r);
}

/* An ownerReferences member naming ConfigMap name/uid. */
static const char *owner(const char *name, const char *uid, bool block)
{
    static __thread char b[512];
    snprintf(b, sizeof(b),
             "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"%s\","
             "\"uid\":\"%s\"%s}]",
             name, uid, block ? ",\"blockOwnerDeletion\":true" : "");
    return b;
}

static long status_of(kc_server *s, const char *method, const char *path, const char *ctype,
                      const char *body)
{
    ts_resp r;
    ts_req(s, method, path, ctype, body, NULL, &r);
    long st = r.status;
    ts_resp_free(&r);
    return st;
}

static long get(kc_server *s, const char *path)
{
    return status_of(s, "GET", path, NULL, NULL);
}

/* Background (the default): dependents whose only owner went are deleted, recursively; one with
 * another live owner loses the reference. Without the controller nothing happens to them. */
static void test_server_gc_background(void **state)
{
    (void)state;
    for (int with = 0; with < 2; with++) {
        kc_server *s =
            start(with ? KC_SERVER_CONTROLLER_GARBAGE_COLLECTOR : KC_SERVER_CONTROLLER_NONE);
        assert_non_null(s);
        char o[64], keep[64], d1[64];
        cm(s, "default", "o", "", o);
        cm(s, "default", "keep", "", keep);
        cm(s, "default", "d1", owner("o", o, false), d1);
        cm(s, "default", "d3", owner("d1", d1, false), NULL); /* grandchild */
        char two[1024];
        snprintf(two, sizeof(two),
                 "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":"
                 "\"o\",\"uid\":\"%s\"},{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":"
                 "\"keep\",\"uid\":\"%s\"}]",
                 o, keep);
        cm(s, "default", "d2", two, NULL);
        assert_int_equal(status_of(s, "DELETE", NS_PATH "/o", NULL, NULL), 200);
        assert_int_equal(get(s, NS_PATH "/d1"), with ? 404 : 200);
        assert_int_equal(get(s, NS_PATH "/d3"), with ? 404 : 200);
        ts_resp r;
        assert_int_equal(ts_get(s, NS_PATH "/d2", &r), 200);
        json_t *refs = ts_j(r.json, "metadata.ownerReferences");
        assert_int_equal(json_array_size(refs), with ? 1 : 2);
        if (with)
            assert_string_equal(json_string_value(json_object_get(json_array_get(refs, 0), "uid")),
                                keep);
        ts_resp_free(&r);
        kc_server_free(s);
    }
}

/* Foreground: the owner stays with deletionTimestamp and the foregroundDeletion finalizer while a
 * dependent with blockOwnerDeletion exists (here held by its own finalizer); a non-blocking
 * dependent goes at once; the owner goes with its last blocking dependent. */
static void test_server_gc_foreground(void **state)
{
    (void)state;
    kc_server *s = start(KC_SERVER_CONTROLLER_GARBAGE_COLLECTOR);
    assert_non_null(s);
    char o[64], meta[1024];
    cm(s, "default", "o", "", o);
    snprintf(meta, sizeof(meta), "\"finalizers\":[\"example.com/hold\"],%s", owner("o", o, true));
    cm(s, "default", "blocker", meta, NULL);
    cm(s, "default", "free", owner("o", o, false), NULL);
    ts_resp r;
    ts_req(s, "DELETE", NS_PATH "/o", "application/json",
           "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"propagationPolicy\":"
           "\"Foreground\"}",
           NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "kind"), "ConfigMap"); /* the object, as upstream */
    assert_non_null(ts_j(r.json, "metadata.deletionTimestamp"));
    assert_string_equal(json_string_value(json_array_get(ts_j(r.json, "metadata.finalizers"), 0)),
                        "foregroundDeletion");
    ts_resp_free(&r);
    assert_int_equal(get(s, NS_PATH "/free"), 404);
    assert_int_equal(ts_get(s, NS_PATH "/blocker", &r), 200);
    assert_non_null(ts_j(r.json, "metadata.deletionTimestamp")); /* deleted, held */
    ts_resp_free(&r);
    assert_int_equal(get(s, NS_PATH "/o"), 200); /* waits for the blocker */
    assert_int_equal(status_of(s, "PATCH", NS_PATH "/blocker", "application/merge-patch+json",
                               "{\"metadata\":{\"finalizers\":null}}"),
                     200);
    assert_int_equal(get(s, NS_PATH "/blocker"), 404);
    assert_int_equal(get(s, NS_PATH "/o"), 404);
    kc_server_free(s);
}

/* Orphan: the dependents stay, without the reference. */
static void test_server_gc_orphan(void **state)
{
    (void)state;
    kc_server *s = start(KC_SERVER_CONTROLLER_GARBAGE_COLLECTOR);
    assert_non_null(s);
    char o[64];
    cm(s, "default", "o", "", o);
    cm(s, "default", "d", owner("o", o, true), NULL);
    assert_int_equal(status_of(s, "DELETE", NS_PATH "/o?propagationPolicy=Orphan", NULL, NULL),
                     200);
    assert_int_equal(get(s, NS_PATH "/o"), 404);
    ts_resp r;
    assert_int_equal(ts_get(s, NS_PATH "/d", &r), 200);
    assert_null(ts_j(r.json, "metadata.ownerReferences"));
    ts_resp_free(&r);
    kc_server_free(s);
}

/* The owner-uid index follows every write after it was built (at the first removal): a reference
 * a PATCH adds cascades, one a PATCH drops does not, and after a wiping restart it is rebuilt. */
static void test_server_gc_index_follows_writes(void **state)
{
    (void)state;
    kc_server *s = start(KC_SERVER_CONTROLLER_GARBAGE_COLLECTOR);
    assert_non_null(s);
    char o1[64], o2[64], meta[1024], patch[1024];
    cm(s, "default", "o1", "", o1);
    cm(s, "default", "o2", "", o2);
    cm(s, "default", "x", "", NULL);
    cm(s, "default", "d1", "", NULL);
    cm(s, "default", "d2", owner("o2", o2, false), NULL);
    assert_int_equal(status_of(s, "DELETE", NS_PATH "/x", NULL, NULL), 200); /* builds the index */
    snprintf(patch, sizeof(patch), "{\"metadata\":{%s}}", owner("o1", o1, false));
    assert_int_equal(status_of(s, "PATCH", NS_PATH "/d1", "application/merge-patch+json", patch),
                     200);
    assert_int_equal(status_of(s, "PATCH", NS_PATH "/d2", "application/merge-patch+json",
                               "{\"metadata\":{\"ownerReferences\":null}}"),
                     200);
    assert_int_equal(status_of(s, "DELETE", NS_PATH "/o1", NULL, NULL), 200);
    assert_int_equal(get(s, NS_PATH "/d1"), 404);
    assert_int_equal(status_of(s, "DELETE", NS_PATH "/o2", NULL, NULL), 200);
    assert_int_equal(get(s, NS_PATH "/d2"), 200);
    assert_int_equal(kc_server_restart(s, KC_SERVER_RESTART_WIPE, NULL), 0);
    cm(s, "default", "o3", "", o1);
    snprintf(meta, sizeof(meta), "%s", owner("o3", o1, false));
    cm(s, "default", "d3", meta, NULL);
    assert_int_equal(status_of(s, "DELETE", NS_PATH "/o3", NULL, NULL), 200);
    assert_int_equal(get(s, NS_PATH "/d3"), 404);
    kc_server_free(s);
}

/* The namespace lifecycle: Terminating at once, contents deleted, a held object keeps the
 * namespace (and creates in it are refused) until its finalizer goes. */
static void test_server_namespace_lifecycle(void **state)
{
    (void)state;
    kc_server *s = start(KC_SERVER_CONTROLLER_NAMESPACE);
    assert_non_null(s);
    ts_resp r;
    assert_int_equal(ts_post(s, "/api/v1/namespaces", "{\"metadata\":{\"name\":\"t\"}}", &r), 201);
    ts_resp_free(&r);
    cm(s, "t", "plain", "", NULL);
    cm(s, "t", "held", "\"finalizers\":[\"example.com/hold\"]", NULL);
    ts_req(s, "DELETE", "/api/v1/namespaces/t", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "status.phase"), "Terminating");
    assert_non_null(ts_j(r.json, "metadata.deletionTimestamp"));
    ts_resp_free(&r);
    assert_int_equal(get(s, "/api/v1/namespaces/t/configmaps/plain"), 404);
    assert_int_equal(get(s, "/api/v1/namespaces/t"), 200);
    assert_int_equal(ts_post(s, "/api/v1/namespaces/t/configmaps", ts_cm("new", NULL), &r), 403);
    ts_resp_free(&r);
    assert_int_equal(status_of(s, "PATCH", "/api/v1/namespaces/t/configmaps/held",
                               "application/merge-patch+json",
                               "{\"metadata\":{\"finalizers\":null}}"),
                     200);
    assert_int_equal(get(s, "/api/v1/namespaces/t/configmaps/held"), 404);
    assert_int_equal(get(s, "/api/v1/namespaces/t"), 404);
    /* a namespace finalizer that goes first does not take the held objects with it */
    assert_int_equal(ts_post(s, "/api/v1/namespaces",
                             "{\"metadata\":{\"name\":\"f\",\"finalizers\":[\"example.com/ns\"]}}",
                             &r),
                     201);
    ts_resp_free(&r);
    cm(s, "f", "held", "\"finalizers\":[\"example.com/hold\"]", NULL);
    assert_int_equal(status_of(s, "DELETE", "/api/v1/namespaces/f", NULL, NULL), 200);
    assert_int_equal(status_of(s, "PATCH", "/api/v1/namespaces/f", "application/merge-patch+json",
                               "{\"metadata\":{\"finalizers\":null}}"),
                     200);
    assert_int_equal(ts_get(s, "/api/v1/namespaces/f", &r), 200);
    assert_string_equal(ts_s(r.json, "status.phase"), "Terminating");
    ts_resp_free(&r);
    assert_int_equal(get(s, "/api/v1/namespaces/f/configmaps/held"), 200);
    assert_int_equal(status_of(s, "PATCH", "/api/v1/namespaces/f/configmaps/held",
                               "application/merge-patch+json",
                               "{\"metadata\":{\"finalizers\":null}}"),
                     200);
    assert_int_equal(get(s, "/api/v1/namespaces/f"), 404);
    /* an empty namespace goes at once */
    assert_int_equal(ts_post(s, "/api/v1/namespaces", "{\"metadata\":{\"name\":\"e\"}}", &r), 201);
    ts_resp_free(&r);
    assert_int_equal(status_of(s, "DELETE", "/api/v1/namespaces/e", NULL, NULL), 200);
    assert_int_equal(get(s, "/api/v1/namespaces/e"), 404);
    kc_server_free(s);
}

/* ServiceAccount default: in the built-in namespaces, in a new one, back after a delete; none
 * without the controller (it is not in the default set). */
static void test_server_serviceaccount_default(void **state)
{
    (void)state;
    kc_server *off = start(0);
    assert_non_null(off);
    assert_int_equal(get(off, "/api/v1/namespaces/default/serviceaccounts/default"), 404);
    kc_server_free(off);
    kc_server *s = start(KC_SERVER_CONTROLLER_SERVICE_ACCOUNT);
    assert_non_null(s);
    assert_int_equal(get(s, "/api/v1/namespaces/default/serviceaccounts/default"), 200);
    assert_int_equal(get(s, "/api/v1/namespaces/kube-system/serviceaccounts/default"), 200);
    ts_resp r;
    assert_int_equal(ts_post(s, "/api/v1/namespaces", "{\"metadata\":{\"name\":\"n\"}}", &r), 201);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/api/v1/namespaces/n/serviceaccounts/default", &r), 200);
    char uid[64];
    snprintf(uid, sizeof(uid), "%s", ts_s(r.json, "metadata.uid"));
    ts_resp_free(&r);
    assert_int_equal(
        status_of(s, "DELETE", "/api/v1/namespaces/n/serviceaccounts/default", NULL, NULL), 200);
    assert_int_equal(ts_get(s, "/api/v1/namespaces/n/serviceaccounts/default", &r), 200);
    assert_string_not_equal(ts_s(r.json, "metadata.uid"), uid);
    ts_resp_free(&r);
    kc_server_free(s);
}

/* An unknown controller bit is refused by kc_server_new. */
static void test_server_controllers_unknown_bit(void **state)
{
    (void)state;
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.listen = "127.0.0.1:0";
    o.controllers = 1u << 20;
    kc_server *s = NULL;
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_server_new(&o, &s, &e), KC_EINVAL);
    assert_null(s);
    assert_non_null(strstr(e.message, "controllers"));
    kc_error_clear(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_gc_background),
        cmocka_unit_test(test_server_gc_foreground),
        cmocka_unit_test(test_server_gc_orphan),
        cmocka_unit_test(test_server_gc_index_follows_writes),
        cmocka_unit_test(test_server_namespace_lifecycle),
        cmocka_unit_test(test_server_serviceaccount_default),
        cmocka_unit_test(test_server_controllers_unknown_bit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
