/*
 * test_server_admission_conversion.c — `kcache serve` calling a CRD's conversion webhook
 * (spec.conversion.strategy: Webhook): reads in another version (GET, LIST with only the items not
 * at the wanted version sent, order kept), writes in a non-storage version (converted to the
 * storage version, the reply back), the reply's checks and failures. The webhook is the test
 * webhook (support_webhook.c) behind the Service wh.default:443. Rule ids: the admission semantics
 * spec (CV*), checklist §11 items 20–22.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_admission_fixture.h"

#define CRD_PATH "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
#define W1       "/apis/example.com/v1/namespaces/default/widgets"
#define W2       "/apis/example.com/v2/namespaces/default/widgets"

/* The Widget CRD (v1 storage, v2 served); with the conversion webhook when webhook. */
static long put_crd(adm_fx *f, bool webhook, bool update)
{
    char conv[4096] = "";
    if (webhook)
        snprintf(conv, sizeof(conv),
                 ",\"conversion\":{\"strategy\":\"Webhook\",\"webhook\":{\"clientConfig\":{"
                 "\"service\":{\"name\":\"wh\",\"namespace\":\"default\",\"path\":\"/convert\","
                 "\"port\":443},\"caBundle\":\"%s\"},\"conversionReviewVersions\":[\"v1\"]}}",
                 kc_twh_ca_bundle(f->wh));
    const char *schema = "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
                         "\"x-kubernetes-preserve-unknown-fields\":true}}";
    char body[8192];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
             "\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
             "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","
             "\"kind\":\"Widget\",\"listKind\":\"WidgetList\"},\"versions\":[{\"name\":\"v1\","
             "\"served\":true,\"storage\":true,%s},{\"name\":\"v2\",\"served\":true,\"storage\":"
             "false,%s}]%s}}",
             schema, schema, conv);
    ts_resp r;
    if (update)
        ts_req(f->srv, "PUT", CRD_PATH "/widgets.example.com", "application/json", body, NULL, &r);
    else
        ts_post(f->srv, CRD_PATH, body, &r);
    long st = r.status;
    if (st >= 300)
        fprintf(stderr, "crd: %ld %s\n", st, r.body ? r.body : "");
    ts_resp_free(&r);
    return st;
}

static long widget(adm_fx *f, const char *path, const char *av, const char *name)
{
    char body[512];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"%s\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"%s\"},"
             "\"spec\":{\"size\":1}}",
             av, name);
    ts_resp r;
    long st = ts_post(f->srv, path, body, &r);
    ts_resp_free(&r);
    return st;
}

static void convert_ok(adm_fx *f)
{
    kc_twh_reply ok = {.convert = KC_TWH_CONVERT_OK};
    kc_twh_set(f->wh, "/convert", &ok);
}

/* §11.20 — CV2, CV6, CV7: GET at v2 of an object stored at v1 is one review with
 * desiredAPIVersion example.com/v2; a read at the stored version makes no call; CV5: the
 * webhook's label is kept, its resourceVersion ignored. */
static void test_conversion_get(void **state)
{
    adm_fx *f = *state;
    convert_ok(f);
    assert_int_equal(put_crd(f, true, false), 201);
    assert_int_equal(widget(f, W1, "example.com/v1", "a"), 201);
    assert_int_equal(kc_twh_count(f->wh, "/convert"), 0); /* v1 is the storage version */
    ts_resp r1, r2;
    assert_int_equal(ts_get(f->srv, W1 "/a", &r1), 200);
    assert_int_equal(kc_twh_count(f->wh, "/convert"), 0);
    assert_int_equal(ts_get(f->srv, W2 "/a", &r2), 200);
    assert_string_equal(ts_s(r2.json, "apiVersion"), "example.com/v2");
    assert_string_equal(ts_s(r2.json, "metadata.labels.converted"), "v2");
    assert_string_equal(ts_s(r2.json, "metadata.resourceVersion"),
                        ts_s(r1.json, "metadata.resourceVersion"));
    ts_resp_free(&r1);
    ts_resp_free(&r2);
    assert_int_equal(kc_twh_count(f->wh, "/convert"), 1);
    json_t *rev = kc_twh_review(f->wh, "/convert", 0);
    assert_string_equal(ts_s(rev, "apiVersion"), "apiextensions.k8s.io/v1");
    assert_string_equal(ts_s(rev, "kind"), "ConversionReview");
    assert_string_equal(ts_s(rev, "request.desiredAPIVersion"), "example.com/v2");
    assert_int_equal(json_array_size(ts_j(rev, "request.objects")), 1);
    assert_string_equal(ts_s(rev, "request.objects.0.apiVersion"), "example.com/v1");
    assert_int_equal(strlen(ts_s(rev, "request.uid")), 36);
    json_decref(rev);
}

/* §11.20 — CV6: a LIST at v2 of mixed versions sends only the items not at v2, in order, and
 * puts them back at their places. */
static void test_conversion_list_mixed(void **state)
{
    adm_fx *f = *state;
    convert_ok(f);
    assert_int_equal(put_crd(f, false, false), 201);
    /* without conversion, objects keep the version they were written in */
    assert_int_equal(widget(f, W1, "example.com/v1", "a"), 201);
    assert_int_equal(widget(f, W2, "example.com/v2", "b"), 201);
    assert_int_equal(widget(f, W1, "example.com/v1", "c"), 201);
    assert_int_equal(put_crd(f, true, true), 200);
    ts_resp r;
    assert_int_equal(ts_get(f->srv, W2, &r), 200);
    assert_int_equal(json_array_size(ts_j(r.json, "items")), 3);
    for (int i = 0; i < 3; i++) {
        char p[64];
        snprintf(p, sizeof(p), "items.%d.apiVersion", i);
        assert_string_equal(ts_s(r.json, p), "example.com/v2");
    }
    assert_string_equal(ts_s(r.json, "items.0.metadata.name"), "a");
    assert_string_equal(ts_s(r.json, "items.1.metadata.name"), "b");
    assert_string_equal(ts_s(r.json, "items.2.metadata.name"), "c");
    assert_string_equal(ts_s(r.json, "items.0.metadata.labels.converted"), "v2");
    assert_null(ts_j(r.json, "items.1.metadata.labels")); /* not sent */
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/convert"), 1);
    json_t *rev = kc_twh_review(f->wh, "/convert", 0);
    assert_int_equal(json_array_size(ts_j(rev, "request.objects")), 2);
    assert_string_equal(ts_s(rev, "request.objects.0.metadata.name"), "a");
    assert_string_equal(ts_s(rev, "request.objects.1.metadata.name"), "c");
    json_decref(rev);
}

/* CV7: a create at v2 is converted to the storage version v1 before it is stored, and the reply
 * back to v2. */
static void test_conversion_write(void **state)
{
    adm_fx *f = *state;
    convert_ok(f);
    assert_int_equal(put_crd(f, true, false), 201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, W2,
                             "{\"apiVersion\":\"example.com/v2\",\"kind\":\"Widget\",\"metadata\":"
                             "{\"name\":\"w\"},\"spec\":{\"size\":2}}",
                             &r),
                     201);
    assert_string_equal(ts_s(r.json, "apiVersion"), "example.com/v2");
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/convert"), 2); /* to v1, then the reply to v2 */
    json_t *rev = kc_twh_review(f->wh, "/convert", 0);
    assert_string_equal(ts_s(rev, "request.desiredAPIVersion"), "example.com/v1");
    json_decref(rev);
    assert_int_equal(ts_get(f->srv, W1 "/w", &r), 200); /* stored at v1: no call */
    assert_string_equal(ts_s(r.json, "apiVersion"), "example.com/v1");
    assert_string_equal(ts_s(r.json, "metadata.labels.converted"), "v1");
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/convert"), 2);
}

/* CV7: a PATCH (merge, JSON patch, apply) at v2 of an object stored at v1: the stored object
 * converted to v2, patched there, the result converted back and stored at v1, the reply at v2. */
static void test_conversion_patch(void **state)
{
    adm_fx *f = *state;
    convert_ok(f);
    assert_int_equal(put_crd(f, true, false), 201);
    assert_int_equal(widget(f, W1, "example.com/v1", "p"), 201);
    ts_resp r;
    ts_req(f->srv, "PATCH", W2 "/p", "application/merge-patch+json", "{\"spec\":{\"size\":5}}",
           NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "apiVersion"), "example.com/v2");
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.size")), 5);
    ts_resp_free(&r);
    /* stored v1 -> v2, patched result -> v1, reply -> v2 */
    assert_int_equal(kc_twh_count(f->wh, "/convert"), 3);
    json_t *rev = kc_twh_review(f->wh, "/convert", 0);
    assert_string_equal(ts_s(rev, "request.desiredAPIVersion"), "example.com/v2");
    json_decref(rev);
    rev = kc_twh_review(f->wh, "/convert", 1);
    assert_string_equal(ts_s(rev, "request.desiredAPIVersion"), "example.com/v1");
    assert_string_equal(ts_s(rev, "request.objects.0.apiVersion"), "example.com/v2");
    json_decref(rev);
    ts_req(f->srv, "PATCH", W2 "/p", "application/json-patch+json",
           "[{\"op\":\"replace\",\"path\":\"/spec/size\",\"value\":6}]", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "apiVersion"), "example.com/v2");
    ts_resp_free(&r);
    ts_req(f->srv, "PATCH", W2 "/p?fieldManager=m", "application/apply-patch+yaml",
           "{\"apiVersion\":\"example.com/v2\",\"kind\":\"Widget\",\"metadata\":{\"name\":"
           "\"p\"},\"spec\":{\"color\":\"red\"}}",
           NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "apiVersion"), "example.com/v2");
    ts_resp_free(&r);
    assert_int_equal(ts_get(f->srv, W1 "/p", &r), 200); /* stored at v1 */
    assert_string_equal(ts_s(r.json, "apiVersion"), "example.com/v1");
    assert_string_equal(ts_s(r.json, "metadata.labels.converted"), "v1");
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.size")), 6);
    assert_string_equal(ts_s(r.json, "spec.color"), "red");
    ts_resp_free(&r);
    /* a patch of nothing stored is a 404, an apply at v2 creates at v1 (201) */
    ts_req(f->srv, "PATCH", W2 "/none", "application/merge-patch+json", "{}", NULL, &r);
    assert_int_equal(r.status, 404);
    ts_resp_free(&r);
    ts_req(f->srv, "PATCH", W2 "/q?fieldManager=m", "application/apply-patch+yaml",
           "{\"apiVersion\":\"example.com/v2\",\"kind\":\"Widget\",\"metadata\":{\"name\":"
           "\"q\"},\"spec\":{\"size\":1}}",
           NULL, &r);
    assert_int_equal(r.status, 201);
    assert_string_equal(ts_s(r.json, "apiVersion"), "example.com/v2");
    ts_resp_free(&r);
    assert_int_equal(ts_get(f->srv, W1 "/q", &r), 200);
    assert_string_equal(ts_s(r.json, "apiVersion"), "example.com/v1");
    ts_resp_free(&r);
}

/* The current RV of the widgets (a LIST), for watches that must not miss an event. */
static char *widgets_rv(adm_fx *f)
{
    ts_resp r;
    assert_int_equal(ts_get(f->srv, W1, &r), 200);
    char *rv = strdup(ts_s(r.json, "metadata.resourceVersion"));
    ts_resp_free(&r);
    return rv;
}

static ts_watch *watch_at(adm_fx *f, const char *base, const char *rv)
{
    char path[256];
    snprintf(path, sizeof(path), "%s?watch=1&resourceVersion=%s", base, rv);
    return ts_watch_start(f->srv, path);
}

/* CV7: a watch at v2 of objects stored at v1 gets ADDED and MODIFIED events converted (initial
 * and live); a watch at v1 gets them as stored, without a call; CV8: a failing conversion ends
 * the v2 watch with an ERROR event (500 InternalError and the reason). */
static void test_conversion_watch(void **state)
{
    adm_fx *f = *state;
    convert_ok(f);
    assert_int_equal(put_crd(f, true, false), 201);
    assert_int_equal(widget(f, W1, "example.com/v1", "a"), 201);
    ts_watch *w2 = ts_watch_start(f->srv, W2 "?watch=1");
    json_t *ev = ts_watch_next_nb(w2, 5000); /* the initial ADDED, converted */
    assert_non_null(ev);
    assert_string_equal(ts_s(ev, "type"), "ADDED");
    assert_string_equal(ts_s(ev, "object.apiVersion"), "example.com/v2");
    assert_string_equal(ts_s(ev, "object.metadata.labels.converted"), "v2");
    json_decref(ev);
    char *rv = widgets_rv(f);
    ts_watch *w1 = watch_at(f, W1, rv);
    free(rv);
    assert_int_equal(widget(f, W1, "example.com/v1", "b"), 201);
    ts_resp r;
    ts_req(f->srv, "PATCH", W1 "/a", "application/merge-patch+json", "{\"spec\":{\"size\":9}}",
           NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    ev = ts_watch_next_nb(w2, 5000);
    assert_non_null(ev);
    assert_string_equal(ts_s(ev, "type"), "ADDED");
    assert_string_equal(ts_s(ev, "object.metadata.name"), "b");
    assert_string_equal(ts_s(ev, "object.apiVersion"), "example.com/v2");
    json_decref(ev);
    ev = ts_watch_next_nb(w2, 5000);
    assert_non_null(ev);
    assert_string_equal(ts_s(ev, "type"), "MODIFIED");
    assert_string_equal(ts_s(ev, "object.apiVersion"), "example.com/v2");
    assert_string_equal(ts_s(ev, "object.metadata.labels.converted"), "v2");
    assert_int_equal(json_integer_value(ts_j(ev, "object.spec.size")), 9);
    json_decref(ev);
    ev = ts_watch_next_nb(w1, 5000); /* the storage version: as stored */
    assert_non_null(ev);
    assert_string_equal(ts_s(ev, "object.apiVersion"), "example.com/v1");
    json_decref(ev);
    kc_twh_reply failed = {.convert = KC_TWH_CONVERT_FAIL, .message = "m"};
    kc_twh_set(f->wh, "/convert", &failed);
    assert_int_equal(widget(f, W1, "example.com/v1", "c"), 201);
    ev = ts_watch_next_nb(w2, 5000);
    assert_non_null(ev);
    assert_string_equal(ts_s(ev, "type"), "ERROR");
    assert_int_equal(json_integer_value(ts_j(ev, "object.code")), 500);
    assert_string_equal(ts_s(ev, "object.reason"), "InternalError");
    assert_non_null(strstr(ts_s(ev, "object.message"), "conversion webhook for example.com/v1, "
                                                       "Kind=Widget failed: m"));
    json_decref(ev);
    assert_true(ts_watch_wait_end(w2, 5000));
    ts_watch_free(w2);
    ts_watch_free(w1);
}

/* CV7 (C design): a watch converts on its own path — a slow conversion webhook delays only
 * the watch at v2; the watch at the storage version and the write are not held up. */
static void test_conversion_watch_slow(void **state)
{
    adm_fx *f = *state;
    convert_ok(f);
    assert_int_equal(put_crd(f, true, false), 201);
    char *rv = widgets_rv(f);
    ts_watch *w2 = watch_at(f, W2, rv), *w1 = watch_at(f, W1, rv);
    free(rv);
    kc_twh_reply slow = {.convert = KC_TWH_CONVERT_OK, .delay_ms = 4000};
    kc_twh_set(f->wh, "/convert", &slow);
    assert_int_equal(widget(f, W1, "example.com/v1", "x"), 201); /* stored version: no call */
    json_t *ev = ts_watch_next_nb(w1, 3000);
    assert_non_null(ev); /* while the v2 watch's conversion still waits */
    assert_string_equal(ts_s(ev, "object.metadata.name"), "x");
    json_decref(ev);
    ev = ts_watch_next_nb(w2, 0);
    assert_null(ev);
    assert_int_equal(widget(f, W1, "example.com/v1", "y"), 201);
    ev = ts_watch_next_nb(w1, 3000);
    assert_non_null(ev);
    assert_string_equal(ts_s(ev, "object.metadata.name"), "y");
    json_decref(ev);
    ev = ts_watch_next_nb(w2, 10000); /* then the v2 watch, converted */
    assert_non_null(ev);
    assert_string_equal(ts_s(ev, "object.metadata.name"), "x");
    assert_string_equal(ts_s(ev, "object.apiVersion"), "example.com/v2");
    json_decref(ev);
    ts_watch_free(w1);
    ts_watch_free(w2);
}

/* §11.21, §11.22 — CV4, CV8: a renamed object, a failed result, fewer objects: the request fails
 * with 500 and the reason. */
static void test_conversion_failures(void **state)
{
    adm_fx *f = *state;
    convert_ok(f);
    assert_int_equal(put_crd(f, true, false), 201);
    assert_int_equal(widget(f, W1, "example.com/v1", "a"), 201);
    ts_resp r;
    kc_twh_reply rename = {.convert = KC_TWH_CONVERT_RENAME};
    kc_twh_set(f->wh, "/convert", &rename);
    assert_int_equal(ts_get(f->srv, W2 "/a", &r), 500);
    assert_string_equal(ts_s(r.json, "reason"), "InternalError");
    assert_string_equal(ts_s(r.json, "message"),
                        "Internal error occurred: conversion webhook for example.com/v1, "
                        "Kind=Widget failed: invalid converted object at index 0: must have the "
                        "same name: \"renamed\" != \"a\"");
    ts_resp_free(&r);
    kc_twh_reply failed = {.convert = KC_TWH_CONVERT_FAIL, .message = "m"};
    kc_twh_set(f->wh, "/convert", &failed);
    assert_int_equal(ts_get(f->srv, W2 "/a", &r), 500);
    assert_string_equal(ts_s(r.json, "message"),
                        "Internal error occurred: conversion webhook for example.com/v1, "
                        "Kind=Widget failed: m");
    ts_resp_free(&r);
    kc_twh_reply fewer = {.convert = KC_TWH_CONVERT_FEWER};
    kc_twh_set(f->wh, "/convert", &fewer);
    assert_int_equal(ts_get(f->srv, W2, &r), 500);
    assert_string_equal(ts_s(r.json, "message"),
                        "Internal error occurred: conversion webhook for example.com/v1, "
                        "Kind=Widget failed: returned 0 objects, expected 1");
    ts_resp_free(&r);
    assert_int_equal(ts_get(f->srv, W1 "/a", &r), 200); /* the stored version needs no call */
    ts_resp_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_conversion_get, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_conversion_list_mixed, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_conversion_write, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_conversion_patch, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_conversion_watch, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_conversion_watch_slow, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_conversion_failures, adm_setup, adm_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
