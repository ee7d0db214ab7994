/*
 * test_client_verbs.c — the request/response REST verbs of kc_client against the embedded API
 * server over TLS with a bearer token: get, list (one page and pager, 410 on an expired
 * continue), create, update, update_status, patch (merge, JSON, strategic, apply), delete
 * (Status vs object, preconditions, finalizers, dry run), deletecollection, the Table GET of
 * server-side printing, and the RESTMapper.
 * Watch (events, cancel from another thread, clean end, 410) is in test_client_watch.c; the
 * server and client set-up is shared through test_client_fixture.h.
 */
#include "kcache/client.h"
#include "kcache/server.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_client_fixture.h"

#define TOKEN "verbs-test-token"

static const kc_gvr PODS = {"", "v1", "pods"};

static int group_setup(void **state)
{
    static const char *const nss[] = {"pager", "expire", "dc", "table", NULL};
    return client_fixture_up(TOKEN, nss);
}

static void test_client_verbs_create_and_get(void **state)
{
    kc_obj *o = create_cm("default", "cg1", NULL);
    assert_string_equal(kc_obj_name(o), "cg1");
    assert_true(kc_obj_rv_int(o) > 0);
    kc_obj *g = NULL;
    kc_client_stats before, after;
    kc_client_get_stats(cli, &before);
    assert_int_equal(kc_client_get(cli, &CM, "default", "cg1", &g, NULL), 0);
    kc_client_get_stats(cli, &after);
    /* the response body of the GET, counted by the transport */
    size_t json_len = 0;
    kc_obj_json(g, &json_len);
    assert_true(after.bytes_received >= before.bytes_received + json_len / 2);
    assert_true(after.connections >= 1);
    assert_string_equal(kc_obj_uid(g), kc_obj_uid(o));
    assert_string_equal(kc_obj_kind(g), "ConfigMap");
    kc_obj_unref(g);
    kc_obj_unref(o);
}

static void test_client_verbs_create_duplicate_is_exists(void **state)
{
    kc_obj_unref(create_cm("default", "dup1", NULL));
    const char *body = "{\"metadata\":{\"name\":\"dup1\"}}";
    kc_error err = KC_ERROR_INIT;
    kc_obj *o = NULL;
    assert_int_equal(kc_client_create(cli, &CM, "default", body, strlen(body), NULL, &o, &err),
                     KC_EEXISTS);
    assert_null(o);
    assert_int_equal(err.http_status, 409);
    assert_string_equal(err.reason, "AlreadyExists");
    kc_error_clear(&err);
}

static void test_client_verbs_get_missing_is_notfound(void **state)
{
    kc_error err = KC_ERROR_INIT;
    kc_obj *o = NULL;
    assert_int_equal(kc_client_get(cli, &CM, "default", "nope", &o, &err), KC_ENOTFOUND);
    assert_int_equal(err.http_status, 404);
    assert_string_equal(err.reason, "NotFound");
    assert_non_null(err.message);
    kc_error_clear(&err);
}

static void test_client_verbs_update_and_conflict(void **state)
{
    kc_obj *o = create_cm("default", "up1", NULL);
    char body[512];
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"up1\","
             "\"resourceVersion\":\"%s\"},\"data\":{\"k\":\"v2\"}}",
             kc_obj_resource_version(o));
    kc_obj *u = NULL;
    assert_int_equal(kc_client_update(cli, &CM, "default", body, strlen(body), NULL, &u, NULL), 0);
    assert_true(kc_obj_rv_int(u) > kc_obj_rv_int(o));
    char *v = NULL;
    assert_int_equal(kc_obj_get_string(u, "/data/k", &v, NULL, NULL), 0);
    assert_string_equal(v, "v2");
    free(v);
    /* the same body again carries a stale resourceVersion */
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_client_update(cli, &CM, "default", body, strlen(body), NULL, NULL, &err),
                     KC_ECONFLICT);
    assert_int_equal(err.http_status, 409);
    kc_error_clear(&err);
    kc_obj_unref(u);
    kc_obj_unref(o);
}

static void test_client_verbs_update_without_name_is_inval(void **state)
{
    const char *body = "{\"metadata\":{}}";
    assert_int_equal(kc_client_update(cli, &CM, "default", body, strlen(body), NULL, NULL, NULL),
                     KC_EINVAL);
}

static void test_client_verbs_update_status(void **state)
{
    const char *pod = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"st1\"},"
                      "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}";
    kc_obj *o = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_client_create(cli, &PODS, "default", pod, strlen(pod), NULL, &o, &err);
    if (rc)
        fail_msg("create pod: %s", err.message);
    const char *st = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"st1\"},"
                     "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]},"
                     "\"status\":{\"phase\":\"Running\"}}";
    kc_obj *u = NULL;
    rc = kc_client_update_status(cli, &PODS, "default", st, strlen(st), NULL, &u, &err);
    if (rc)
        fail_msg("update status: %s", err.message);
    char *phase = NULL;
    assert_int_equal(kc_obj_get_string(u, "/status/phase", &phase, NULL, NULL), 0);
    assert_string_equal(phase, "Running");
    free(phase);
    kc_obj_unref(u);
    kc_obj_unref(o);
}

static void patch_expect(kc_patch_type t, const char *body, const kc_patch_opts *po,
                         const char *ptr, const char *want)
{
    kc_obj *o = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_client_patch(cli, &CM, "default", "pt1", t, body, strlen(body), po, &o, &err);
    if (rc)
        fail_msg("patch type %d: %s %s", t, kc_errno_name(rc), err.message);
    char *v = NULL;
    assert_int_equal(kc_obj_get_string(o, ptr, &v, NULL, NULL), 0);
    assert_string_equal(v, want);
    free(v);
    kc_obj_unref(o);
}

static void test_client_verbs_patch_all_types(void **state)
{
    kc_obj_unref(create_cm("default", "pt1", NULL));
    patch_expect(KC_PATCH_MERGE, "{\"data\":{\"m\":\"merge\"}}", NULL, "/data/m", "merge");
    patch_expect(KC_PATCH_JSON, "[{\"op\":\"add\",\"path\":\"/data/j\",\"value\":\"json\"}]", NULL,
                 "/data/j", "json");
    patch_expect(KC_PATCH_STRATEGIC, "{\"data\":{\"s\":\"smp\"}}", NULL, "/data/s", "smp");
    kc_patch_opts po = {.field_manager = "tester", .force = true};
    patch_expect(KC_PATCH_APPLY,
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"pt1\"},"
                 "\"data\":{\"a\":\"apply\"}}",
                 &po, "/data/a", "apply");
}

static void test_client_verbs_apply_needs_manager(void **state)
{
    const char *b = "{}";
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(
        kc_client_patch(cli, &CM, "default", "x", KC_PATCH_APPLY, b, 2, NULL, NULL, &err),
        KC_EINVAL);
    kc_error_clear(&err);
}

typedef struct {
    int n;
    char names[64][64];
} collect;

static int collect_item(void *ud, kc_obj *o)
{
    collect *c = ud;
    if (c->n < 64)
        snprintf(c->names[c->n], 64, "%s", kc_obj_name(o));
    c->n++;
    kc_obj_unref(o);
    return 0;
}

static void test_client_verbs_list_selector_and_pager(void **state)
{
    for (int i = 0; i < 7; i++) {
        char n[32];
        snprintf(n, sizeof n, "pg%d", i);
        kc_obj_unref(create_cm("pager", n, i % 2 ? "\"odd\":\"yes\"" : "\"odd\":\"no\""));
    }
    collect c = {0};
    kc_list_meta meta = {0};
    kc_list_opts lo = {.label_selector = "odd=yes"};
    assert_int_equal(kc_client_list(cli, &CM, "pager", &lo, &meta, collect_item, &c, NULL), 0);
    assert_int_equal(c.n, 3);
    assert_non_null(meta.resource_version);
    kc_list_meta_clear(&meta);

    memset(&c, 0, sizeof c);
    lo = (kc_list_opts){.limit = 2};
    assert_int_equal(kc_client_list(cli, &CM, "pager", &lo, &meta, collect_item, &c, NULL), 0);
    assert_int_equal(c.n, 2);
    assert_non_null(meta.continue_token);
    kc_list_meta_clear(&meta);

    memset(&c, 0, sizeof c);
    assert_int_equal(kc_client_list_all(cli, &CM, "pager", &lo, &meta, collect_item, &c, NULL), 0);
    assert_int_equal(c.n, 7);
    assert_null(meta.continue_token);
    assert_non_null(meta.resource_version);
    kc_list_meta_clear(&meta);
}

/* Server-side printing: the Table of a page (continue to the next), of one object, and the
 * mapped error of a missing one. */
static void test_client_verbs_get_table(void **state)
{
    for (int i = 0; i < 3; i++) {
        char n[32];
        snprintf(n, sizeof n, "tb%d", i);
        kc_obj_unref(create_cm("table", n, NULL));
    }
    char *body = NULL;
    size_t len = 0;
    kc_list_opts lo = {.limit = 2};
    assert_int_equal(kc_client_get_table(cli, &CM, "table", NULL, &lo, &body, &len, NULL), 0);
    kc_obj *t = NULL;
    assert_int_equal(kc_obj_parse(body, len, NULL, &t, NULL), 0);
    assert_string_equal(kc_obj_kind(t), "Table");
    char *s = NULL;
    assert_int_equal(kc_obj_get_string(t, "/rows/1/cells/0", &s, NULL, NULL), 0);
    assert_string_equal(s, "tb1");
    free(s);
    assert_int_equal(kc_obj_get_string(t, "/columnDefinitions/0/name", &s, NULL, NULL), 0);
    assert_string_equal(s, "Name");
    free(s);
    char *cont = NULL;
    assert_int_equal(kc_obj_get_string(t, "/metadata/continue", &cont, NULL, NULL), 0);
    kc_obj_unref(t);
    free(body);

    lo.continue_token = cont;
    assert_int_equal(kc_client_get_table(cli, &CM, "table", NULL, &lo, &body, &len, NULL), 0);
    assert_int_equal(kc_obj_parse(body, len, NULL, &t, NULL), 0);
    assert_int_equal(kc_obj_get_string(t, "/rows/0/cells/0", &s, NULL, NULL), 0);
    assert_string_equal(s, "tb2");
    free(s);
    assert_int_equal(kc_obj_get_string(t, "/rows/1/cells/0", &s, NULL, NULL), KC_ENOTFOUND);
    kc_obj_unref(t);
    free(body);
    free(cont);

    assert_int_equal(kc_client_get_table(cli, &CM, "table", "tb0", NULL, &body, NULL, NULL), 0);
    assert_int_equal(kc_obj_parse(body, strlen(body), NULL, &t, NULL), 0);
    assert_int_equal(kc_obj_get_string(t, "/rows/0/cells/0", &s, NULL, NULL), 0);
    assert_string_equal(s, "tb0");
    free(s);
    kc_obj_unref(t);
    free(body);

    kc_error err = KC_ERROR_INIT;
    body = NULL;
    assert_int_equal(kc_client_get_table(cli, &CM, "table", "nope", NULL, &body, NULL, &err),
                     KC_ENOTFOUND);
    assert_null(body);
    assert_string_equal(err.reason, "NotFound");
    kc_error_clear(&err);
    assert_int_equal(kc_client_get_table(cli, &CM, "table", "", NULL, &body, NULL, NULL),
                     KC_EINVAL);
    assert_int_equal(kc_client_get_table(NULL, &CM, "table", NULL, NULL, &body, NULL, NULL),
                     KC_EINVAL);
}

static void test_client_verbs_expired_continue_is_gone(void **state)
{
    for (int i = 0; i < 3; i++) {
        char n[32];
        snprintf(n, sizeof n, "ex%d", i);
        kc_obj_unref(create_cm("expire", n, NULL));
    }
    kc_list_meta meta = {0};
    kc_list_opts lo = {.limit = 1};
    assert_int_equal(kc_client_list(cli, &CM, "expire", &lo, &meta, NULL, NULL, NULL), 0);
    assert_non_null(meta.continue_token);
    kc_obj_unref(create_cm("expire", "ex-new", NULL));
    assert_int_equal(kc_server_compact(srv), 0);
    lo.continue_token = meta.continue_token;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_client_list(cli, &CM, "expire", &lo, NULL, NULL, NULL, &err), KC_EGONE);
    assert_int_equal(err.http_status, 410);
    kc_error_clear(&err);
    kc_list_meta_clear(&meta);
}

static void test_client_verbs_delete_returns_status_or_object(void **state)
{
    kc_obj_unref(create_cm("default", "del1", NULL));
    kc_obj *o = (kc_obj *)1;
    assert_int_equal(kc_client_delete(cli, &CM, "default", "del1", NULL, &o, NULL), 0);
    assert_null(o); /* configmaps answer a Status */
    assert_int_equal(kc_client_get(cli, &CM, "default", "del1", &o, NULL), KC_ENOTFOUND);

    /* with a finalizer: the object comes back with a deletionTimestamp */
    const char *b = "{\"metadata\":{\"name\":\"fin1\",\"finalizers\":[\"example.com/f\"]}}";
    assert_int_equal(kc_client_create(cli, &CM, "default", b, strlen(b), NULL, NULL, NULL), 0);
    o = NULL;
    assert_int_equal(kc_client_delete(cli, &CM, "default", "fin1", NULL, &o, NULL), 0);
    assert_non_null(o);
    assert_true(kc_obj_deleting(o));
    kc_obj_unref(o);
    const char *rm = "[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]";
    assert_int_equal(kc_client_patch(cli, &CM, "default", "fin1", KC_PATCH_JSON, rm, strlen(rm),
                                     NULL, NULL, NULL),
                     0);
    assert_int_equal(kc_client_get(cli, &CM, "default", "fin1", &o, NULL), KC_ENOTFOUND);
}

static void test_client_verbs_delete_preconditions_and_dry_run(void **state)
{
    kc_obj *o = create_cm("default", "pre1", NULL);
    kc_delete_opts d = {0};
    d.precondition_uid = "not-the-uid";
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_client_delete(cli, &CM, "default", "pre1", &d, NULL, &err), KC_ECONFLICT);
    kc_error_clear(&err);
    d.precondition_uid = NULL;
    d.precondition_rv = "1";
    assert_int_equal(kc_client_delete(cli, &CM, "default", "pre1", &d, NULL, &err), KC_ECONFLICT);
    kc_error_clear(&err);
    d = (kc_delete_opts){0};
    d.dry_run = true;
    assert_int_equal(kc_client_delete(cli, &CM, "default", "pre1", &d, NULL, NULL), 0);
    kc_obj *g = NULL;
    assert_int_equal(kc_client_get(cli, &CM, "default", "pre1", &g, NULL), 0);
    kc_obj_unref(g);
    d = (kc_delete_opts){0};
    d.precondition_uid = kc_obj_uid(o);
    d.precondition_rv = kc_obj_resource_version(o);
    d.propagation = "Background";
    d.has_grace_period = true;
    d.grace_period_s = 0;
    assert_int_equal(kc_client_delete(cli, &CM, "default", "pre1", &d, NULL, NULL), 0);
    assert_int_equal(kc_client_get(cli, &CM, "default", "pre1", &g, NULL), KC_ENOTFOUND);
    kc_obj_unref(o);
}

/* A zero-initialised kc_delete_opts means the server's default grace period: no
 * gracePeriodSeconds is sent, so a Pod bound to a node is deleted gracefully (deletionTimestamp
 * set, the object kept for its kubelet; spec §3.5, #53) and not force-deleted. Only
 * has_grace_period sends one. */
static void test_client_verbs_delete_zero_opts_keep_grace_period(void **state)
{
    static const char pod[] = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                              "\"grace1\"},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{"
                              "\"name\":\"c\",\"image\":\"pause\"}]}}";
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_client_create(cli, &PODS, "default", pod, strlen(pod), NULL, NULL, &err),
                     0);
    kc_delete_opts d = {0};
    kc_obj *o = NULL, *g = NULL;
    assert_int_equal(kc_client_delete(cli, &PODS, "default", "grace1", &d, &o, &err), 0);
    assert_non_null(o);
    assert_true(kc_obj_deleting(o)); /* graceful: deletionTimestamp set */
    kc_obj_unref(o);
    assert_int_equal(kc_client_get(cli, &PODS, "default", "grace1", &g, &err), 0); /* still there */
    assert_true(kc_obj_deleting(g));
    kc_obj_unref(g);
    /* NULL options are the same */
    assert_int_equal(kc_client_delete(cli, &PODS, "default", "grace1", NULL, NULL, &err), 0);
    assert_int_equal(kc_client_get(cli, &PODS, "default", "grace1", &g, &err), 0);
    kc_obj_unref(g);
    /* an explicit gracePeriodSeconds=0 deletes now */
    d.has_grace_period = true;
    d.grace_period_s = 0;
    assert_int_equal(kc_client_delete(cli, &PODS, "default", "grace1", &d, NULL, &err), 0);
    assert_int_equal(kc_client_get(cli, &PODS, "default", "grace1", &g, &err), KC_ENOTFOUND);
    kc_error_clear(&err);
}

static void test_client_verbs_delete_collection(void **state)
{
    kc_obj_unref(create_cm("dc", "a", "\"gone\":\"yes\""));
    kc_obj_unref(create_cm("dc", "b", "\"gone\":\"yes\""));
    kc_obj_unref(create_cm("dc", "c", "\"gone\":\"no\""));
    kc_delete_opts d = {0};
    d.label_selector = "gone=yes";
    assert_int_equal(kc_client_delete_collection(cli, &CM, "dc", &d, NULL), 0);
    collect c = {0};
    assert_int_equal(kc_client_list(cli, &CM, "dc", NULL, NULL, collect_item, &c, NULL), 0);
    assert_int_equal(c.n, 1);
    assert_string_equal(c.names[0], "c");
}

/* ---- RESTMapper ---------------------------------------------------------------------------- */

static void resolve_expect(const char *name, const char *group, const char *resource,
                           const char *kind, bool namespaced)
{
    kc_resource_info ri = {0};
    kc_error err = KC_ERROR_INIT;
    int rc = kc_client_resolve(cli, name, &ri, &err);
    if (rc)
        fail_msg("resolve %s: %s %s", name, kc_errno_name(rc), err.message);
    assert_string_equal(ri.group, group);
    assert_string_equal(ri.resource, resource);
    assert_string_equal(ri.kind, kind);
    assert_int_equal(ri.namespaced, namespaced);
    assert_true(ri.n_verbs > 0);
    kc_resource_info_clear(&ri);
}

static void test_client_verbs_resolve_builtin_names(void **state)
{
    resolve_expect("pods", "", "pods", "Pod", true);
    resolve_expect("po", "", "pods", "Pod", true);
    resolve_expect("Pod", "", "pods", "Pod", true);
    resolve_expect("pod", "", "pods", "Pod", true);
    resolve_expect("deployments.apps", "apps", "deployments", "Deployment", true);
    resolve_expect("deploy", "apps", "deployments", "Deployment", true);
    resolve_expect("Deployment.v1.apps", "apps", "deployments", "Deployment", true);
    resolve_expect("namespaces", "", "namespaces", "Namespace", false);
    resolve_expect("cm", "", "configmaps", "ConfigMap", true);
}

static void test_client_verbs_resolve_unknown_is_notfound(void **state)
{
    kc_resource_info ri = {0};
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_client_resolve(cli, "flunders", &ri, &err), KC_ENOTFOUND);
    assert_non_null(strstr(err.message, "flunders"));
    kc_error_clear(&err);
}

static void test_client_verbs_resolve_new_crd_after_refresh(void **state)
{
    kc_resource_info ri = {0};
    /* warm the cache first so the CRD is really discovered through the miss-refresh */
    assert_int_equal(kc_client_resolve(cli, "pods", &ri, NULL), 0);
    kc_resource_info_clear(&ri);
    const kc_gvr crd = {"apiextensions.k8s.io", "v1", "customresourcedefinitions"};
    const char *body =
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
        "\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
        "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","
        "\"kind\":\"Widget\",\"shortNames\":[\"wd\"]},\"versions\":[{\"name\":\"v1\","
        "\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
        "\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";
    kc_error err = KC_ERROR_INIT;
    int rc = kc_client_create(cli, &crd, NULL, body, strlen(body), NULL, NULL, &err);
    if (rc)
        fail_msg("create CRD: %s %s", kc_errno_name(rc), err.message);
    resolve_expect("Widget", "example.com", "widgets", "Widget", true);
    resolve_expect("wd", "example.com", "widgets", "Widget", true);
    resolve_expect("widgets.example.com", "example.com", "widgets", "Widget", true);
    resolve_expect("widget.v1.example.com", "example.com", "widgets", "Widget", true);
    assert_int_equal(kc_client_discovery_invalidate(cli), 0);
    resolve_expect("widgets", "example.com", "widgets", "Widget", true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_verbs_create_and_get),
        cmocka_unit_test(test_client_verbs_create_duplicate_is_exists),
        cmocka_unit_test(test_client_verbs_get_missing_is_notfound),
        cmocka_unit_test(test_client_verbs_update_and_conflict),
        cmocka_unit_test(test_client_verbs_update_without_name_is_inval),
        cmocka_unit_test(test_client_verbs_update_status),
        cmocka_unit_test(test_client_verbs_patch_all_types),
        cmocka_unit_test(test_client_verbs_apply_needs_manager),
        cmocka_unit_test(test_client_verbs_list_selector_and_pager),
        cmocka_unit_test(test_client_verbs_get_table),
        cmocka_unit_test(test_client_verbs_expired_continue_is_gone),
        cmocka_unit_test(test_client_verbs_delete_returns_status_or_object),
        cmocka_unit_test(test_client_verbs_delete_preconditions_and_dry_run),
        cmocka_unit_test(test_client_verbs_delete_zero_opts_keep_grace_period),
        cmocka_unit_test(test_client_verbs_delete_collection),
        cmocka_unit_test(test_client_verbs_resolve_builtin_names),
        cmocka_unit_test(test_client_verbs_resolve_unknown_is_notfound),
        cmocka_unit_test(test_client_verbs_resolve_new_crd_after_refresh),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
