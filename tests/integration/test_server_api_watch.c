/*
 * test_server_api_watch.c — WATCH semantics of the embedded API server (spec §9 #71–#92):
 * framing, starting points, event types, selector transitions, 410 / TooLarge ERROR events,
 * bookmarks, timeouts, streaming lists, fault-driven closes, restart; and the event-loop
 * server: many suspended streams resumed in batches keep every event in order (#77), a slow
 * request does not stall other connections, stop with parked streams.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "server/storage/write.h"
#include "test_server_util.h"

static kc_server *start_with(unsigned bookmark_ms, size_t history)
{
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.bookmark_interval_ms = bookmark_ms;
    o.history = history;
    return ts_start_opts(&o);
}

static int setup(void **state)
{
    *state = start_with(200, 0);
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    kc_server_free(*state);
    return 0;
}

static unsigned long long mk(kc_server *s, const char *name, const char *labels)
{
    ts_resp r;
    assert_int_equal(ts_post(s, CM_PATH, ts_cm(name, labels), &r), 201);
    unsigned long long rv = ts_rv(r.json);
    ts_resp_free(&r);
    return rv;
}

static unsigned long long relabel(kc_server *s, const char *name, const char *labels)
{
    char path[256], body[256];
    snprintf(path, sizeof(path), CM_PATH "/%s", name);
    snprintf(body, sizeof(body), "{\"metadata\":{\"labels\":%s}}", labels);
    ts_resp r;
    ts_req(s, "PATCH", path, "application/merge-patch+json", body, NULL, &r);
    assert_int_equal(r.status, 200);
    unsigned long long rv = ts_rv(r.json);
    ts_resp_free(&r);
    return rv;
}

static void expect(ts_watch *w, const char *type, const char *name)
{
    json_t *ev = ts_watch_next_nb(w, 3000);
    assert_non_null(ev);
    assert_string_equal(ts_s(ev, "type"), type);
    if (name)
        assert_string_equal(ts_s(ev, "object.metadata.name"), name);
    assert_string_equal(ts_s(ev, "object.kind"), "ConfigMap"); /* #76 */
    assert_string_equal(ts_s(ev, "object.apiVersion"), "v1");
    json_decref(ev);
}

static void test_server_watch_param_forms_71(void **state)
{
    kc_server *s = *state;
    mk(s, "w71", NULL);
    const char *on[] = {"watch=1", "watch=true", "watch=True", "watch="};
    for (size_t i = 0; i < 4; i++) {
        char path[256];
        snprintf(path, sizeof(path), CM_PATH "?%s&fieldSelector=metadata.name%%3Dw71", on[i]);
        ts_watch *w = ts_watch_start(s, path);
        expect(w, "ADDED", "w71");
        ts_watch_free(w);
    }
    ts_resp r;
    assert_int_equal(ts_get(s, CM_PATH "?watch=0", &r), 200);
    assert_string_equal(ts_s(r.json, "kind"), "ConfigMapList");
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, CM_PATH "?watch=false", &r), 200);
    assert_string_equal(ts_s(r.json, "kind"), "ConfigMapList");
    ts_resp_free(&r);
}

static void test_server_watch_framing_72(void **state)
{
    kc_server *s = *state;
    mk(s, "w72", NULL);
    ts_watch *w = ts_watch_start(s, CM_PATH "?watch=1&fieldSelector=metadata.name%3Dw72");
    expect(w, "ADDED", "w72");
    pthread_mutex_lock(&w->mu);
    assert_string_equal(w->ctype, "application/json");
    assert_null(strchr(w->lines[0], '\n'));
    pthread_mutex_unlock(&w->mu);
    ts_watch_free(w);
}

static void test_server_watch_rv_unset_and_zero_synthetic_added_73_74(void **state)
{
    kc_server *s = *state;
    mk(s, "w73a", "{\"t\":\"73\"}");
    mk(s, "w73b", "{\"t\":\"73\"}");
    const char *paths[] = {CM_PATH "?watch=1&labelSelector=t%3D73",
                           CM_PATH "?watch=1&labelSelector=t%3D73&resourceVersion=0"};
    for (size_t i = 0; i < 2; i++) {
        ts_watch *w = ts_watch_start(s, paths[i]);
        expect(w, "ADDED", "w73a");
        expect(w, "ADDED", "w73b");
        if (i)
            expect(w, "ADDED", "w73c");
        mk(s, i ? "w73d" : "w73c", "{\"t\":\"73\"}");
        expect(w, "ADDED", i ? "w73d" : "w73c");
        ts_watch_free(w);
    }
}

static void test_server_watch_from_list_rv_75_77_78_79(void **state)
{
    kc_server *s = *state;
    ts_resp l;
    ts_get(s, CM_PATH, &l);
    char path[256];
    snprintf(path, sizeof(path), CM_PATH "?watch=1&resourceVersion=%llu", ts_rv(l.json));
    ts_resp_free(&l);
    ts_watch *w = ts_watch_start(s, path);
    unsigned long long c = mk(s, "w75", NULL);
    unsigned long long m = relabel(s, "w75", "{\"x\":\"1\"}");
    ts_resp d;
    ts_req(s, "DELETE", CM_PATH "/w75", NULL, NULL, NULL, &d);
    ts_resp_free(&d);
    json_t *e1 = ts_watch_next_nb(w, 3000), *e2 = ts_watch_next_nb(w, 3000),
           *e3 = ts_watch_next_nb(w, 3000);
    assert_string_equal(ts_s(e1, "type"), "ADDED");
    assert_string_equal(ts_s(e2, "type"), "MODIFIED");
    assert_string_equal(ts_s(e3, "type"), "DELETED");
    assert_int_equal(ts_rv(ts_j(e1, "object")), c); /* #77 */
    assert_int_equal(ts_rv(ts_j(e2, "object")), m);
    assert_true(ts_rv(ts_j(e3, "object")) > m); /* #79 */
    assert_string_equal(ts_s(e3, "object.metadata.labels.x"), "1");
    json_decref(e1);
    json_decref(e2);
    json_decref(e3);
    ts_watch_free(w);
}

static void test_server_watch_selector_transitions_80(void **state)
{
    kc_server *s = *state;
    mk(s, "w80", "{\"sel\":\"in\"}");
    ts_watch *w = ts_watch_start(s, CM_PATH "?watch=1&labelSelector=sel%3Din");
    expect(w, "ADDED", "w80");
    unsigned long long out = relabel(s, "w80", "{\"sel\":\"out\"}");
    json_t *ev = ts_watch_next_nb(w, 3000);
    assert_string_equal(ts_s(ev, "type"), "DELETED");
    assert_string_equal(ts_s(ev, "object.metadata.labels.sel"), "in");
    assert_int_equal(ts_rv(ts_j(ev, "object")), out);
    json_decref(ev);
    relabel(s, "w80", "{\"sel\":\"in\"}");
    expect(w, "ADDED", "w80");
    ts_watch_free(w);
}

static void test_server_watch_field_name_81_noop_82(void **state)
{
    kc_server *s = *state;
    mk(s, "w81", NULL);
    mk(s, "w81x", NULL);
    ts_watch *w = ts_watch_start(s, CM_PATH "?watch=1&fieldSelector=metadata.name%3Dw81");
    expect(w, "ADDED", "w81");
    relabel(s, "w81x", "{\"a\":\"b\"}");
    relabel(s, "w81", "{\"a\":\"b\"}");
    relabel(s, "w81", "{\"a\":\"b\"}"); /* no-op: no event (#82) */
    relabel(s, "w81", "{\"a\":\"c\"}");
    json_t *e1 = ts_watch_next_nb(w, 3000), *e2 = ts_watch_next_nb(w, 3000);
    assert_string_equal(ts_s(e1, "object.metadata.labels.a"), "b");
    assert_string_equal(ts_s(e2, "object.metadata.labels.a"), "c");
    assert_null(ts_watch_next_nb(w, 300));
    json_decref(e1);
    json_decref(e2);
    ts_watch_free(w);
}

static void test_server_watch_too_old_410_83(void **state)
{
    kc_server *s = start_with(0, 3);
    for (int i = 0; i < 6; i++) {
        char n[16];
        snprintf(n, sizeof(n), "o%d", i);
        mk(s, n, NULL);
    }
    ts_watch *w = ts_watch_start(s, CM_PATH "?watch=1&resourceVersion=2");
    json_t *ev = ts_watch_next(w, 3000);
    assert_string_equal(ts_s(ev, "type"), "ERROR");
    assert_int_equal(json_integer_value(ts_j(ev, "object.code")), 410);
    assert_string_equal(ts_s(ev, "object.reason"), "Expired");
    json_decref(ev);
    assert_true(ts_watch_wait_end(w, 3000));
    assert_int_equal(w->status, 200);
    ts_watch_free(w);
    kc_server_free(s);
}

static void test_server_watch_bookmarks_84_85(void **state)
{
    kc_server *s = *state;
    unsigned long long rv = mk(s, "w84", NULL);
    ts_watch *w = ts_watch_start(s, CM_PATH "?watch=1&allowWatchBookmarks=true&fieldSelector="
                                            "metadata.name%3Dw84");
    expect(w, "ADDED", "w84");
    json_t *bm = ts_watch_next(w, 3000);
    assert_string_equal(ts_s(bm, "type"), "BOOKMARK");
    assert_string_equal(ts_s(bm, "object.kind"), "ConfigMap");
    assert_string_equal(ts_s(bm, "object.apiVersion"), "v1");
    assert_true(ts_rv(ts_j(bm, "object")) >= rv);
    json_decref(bm);
    ts_watch_free(w);
    w = ts_watch_start(s, CM_PATH "?watch=1&fieldSelector=metadata.name%3Dw84");
    expect(w, "ADDED", "w84");
    assert_null(ts_watch_next(w, 600)); /* interval is 200 ms: none without the flag */
    ts_watch_free(w);
}

static void test_server_watch_timeout_seconds_86(void **state)
{
    ts_watch *w = ts_watch_start(*state, CM_PATH "?watch=1&timeoutSeconds=1&resourceVersion=1");
    assert_true(ts_watch_wait_end(w, 4000));
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < w->n; i++)
        assert_null(strstr(w->lines[i], "\"ERROR\""));
    pthread_mutex_unlock(&w->mu);
    ts_watch_free(w);
}

static void test_server_watchlist_rules_89_90(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, CM_PATH "?watch=1&sendInitialEvents=true", &r), 422);
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, CM_PATH "?watch=1&resourceVersionMatch=NotOlderThan", &r), 422);
    ts_resp_free(&r);
}

static void test_server_watchlist_end_bookmark_91(void **state)
{
    kc_server *s = *state;
    unsigned long long a = mk(s, "w91a", "{\"t\":\"91\"}");
    unsigned long long b = mk(s, "w91b", "{\"t\":\"91\"}");
    ts_watch *w =
        ts_watch_start(s, CM_PATH "?watch=1&sendInitialEvents=true&allowWatchBookmarks="
                                  "true&resourceVersionMatch=NotOlderThan&resourceVersion="
                                  "&labelSelector=t%3D91");
    json_t *e1 = ts_watch_next(w, 3000), *e2 = ts_watch_next(w, 3000), *e3 = ts_watch_next(w, 3000);
    assert_string_equal(ts_s(e1, "type"), "ADDED");
    assert_string_equal(ts_s(e2, "type"), "ADDED");
    assert_string_equal(ts_s(e3, "type"), "BOOKMARK");
    assert_string_equal(ts_s(e3, "object.metadata.annotations.k8s.io/initial-events-end"), "");
    json_t *ann = ts_j(e3, "object.metadata.annotations");
    assert_string_equal(json_string_value(json_object_get(ann, "k8s.io/initial-events-end")),
                        "true");
    assert_true(ts_rv(ts_j(e3, "object")) >= a && ts_rv(ts_j(e3, "object")) >= b);
    json_decref(e1);
    json_decref(e2);
    json_decref(e3);
    mk(s, "w91c", "{\"t\":\"91\"}");
    expect(w, "ADDED", "w91c");
    ts_watch_free(w);
}

static void test_server_watch_rv_too_large_error(void **state)
{
    ts_watch *w = ts_watch_start(*state, CM_PATH "?watch=1&resourceVersion=99999999");
    json_t *ev = ts_watch_next(w, 3000);
    assert_string_equal(ts_s(ev, "type"), "ERROR");
    assert_string_equal(ts_s(ev, "object.details.causes.0.reason"), "ResourceVersionTooLarge");
    json_decref(ev);
    assert_true(ts_watch_wait_end(w, 3000));
    ts_watch_free(w);
}

static void test_server_watch_close_every_n_fault(void **state)
{
    kc_server *s = start_with(0, 0);
    kc_server_faults f;
    memset(&f, 0, sizeof(f));
    f.watch_close_every = 2;
    kc_server_set_faults(s, &f);
    ts_watch *w = ts_watch_start(s, CM_PATH "?watch=1&resourceVersion=1");
    mk(s, "f1", NULL);
    mk(s, "f2", NULL);
    mk(s, "f3", NULL);
    assert_true(ts_watch_wait_end(w, 3000));
    pthread_mutex_lock(&w->mu);
    assert_int_equal(w->n, 2);
    pthread_mutex_unlock(&w->mu);
    ts_watch_free(w);
    kc_server_free(s);
}

static void test_server_watch_delay_fault_keeps_order(void **state)
{
    kc_server *s = start_with(0, 0);
    kc_server_faults f;
    memset(&f, 0, sizeof(f));
    f.watch_delay_min_ms = 1;
    f.watch_delay_max_ms = 40;
    kc_server_set_faults(s, &f);
    ts_resp r;
    ts_get(s, CM_PATH, &r);
    char path[256];
    snprintf(path, sizeof(path), CM_PATH "?watch=1&resourceVersion=%llu", ts_rv(r.json));
    ts_resp_free(&r);
    ts_watch *w = ts_watch_start(s, path);
    unsigned long long rvs[20];
    for (int i = 0; i < 20; i++) {
        char n[16];
        snprintf(n, sizeof(n), "d%d", i);
        rvs[i] = mk(s, n, NULL);
    }
    for (int i = 0; i < 20; i++) {
        json_t *ev = ts_watch_next_nb(w, 5000);
        assert_non_null(ev);
        assert_int_equal(ts_rv(ts_j(ev, "object")), rvs[i]);
        json_decref(ev);
    }
    kc_server_free(s);
    ts_watch_free(w);
}

static void test_server_restart_closes_watches_and_resets_rv_101(void **state)
{
    kc_server *s = start_with(0, 0);
    unsigned long long rv = mk(s, "r1", NULL);
    char path[256];
    snprintf(path, sizeof(path), CM_PATH "?watch=1&resourceVersion=%llu", rv);
    ts_watch *w = ts_watch_start(s, path);
    ts_resp r;
    ts_get(s, CM_PATH, &r); /* make sure the watch is established before restarting */
    ts_resp_free(&r);
    assert_null(ts_watch_next(w, 200));
    kc_server_restart(s, KC_SERVER_RESTART_WIPE, NULL);
    assert_true(ts_watch_wait_end(w, 3000));
    ts_watch_free(w);
    assert_true(kc_server_current_rv(s) < rv);
    assert_int_equal(ts_get(s, CM_PATH "/r1", &r), 404);
    ts_resp_free(&r);
    snprintf(path, sizeof(path), CM_PATH "?resourceVersion=%llu", rv + 5);
    assert_int_equal(ts_get(s, path, &r), 504);
    ts_resp_free(&r);
    kc_server_free(s);
}

static void test_server_watch_many_concurrent(void **state)
{
    kc_server *s = start_with(0, 0);
    enum { N = 50 };
    ts_watch *w[N];
    for (int i = 0; i < N; i++)
        w[i] = ts_watch_start(s, CM_PATH "?watch=1&resourceVersion=1");
    ts_resp r;
    ts_get(s, CM_PATH, &r);
    ts_resp_free(&r);
    for (int i = 0; i < 20; i++) {
        char n[16];
        snprintf(n, sizeof(n), "m%d", i);
        mk(s, n, NULL);
    }
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < 20; k++) {
            json_t *ev = ts_watch_next_nb(w[i], 5000);
            assert_non_null(ev);
            char n[16];
            snprintf(n, sizeof(n), "m%d", k);
            assert_string_equal(ts_s(ev, "object.metadata.name"), n);
            json_decref(ev);
        }
    }
    kc_server_free(s);
    for (int i = 0; i < N; i++)
        ts_watch_free(w[i]);
}

/* Watch streams parked (suspended) between batches: more streams than server threads, events
 * written faster than one per wake, each stream gets every event once and in order (#77, #78). */
static void test_server_watch_batched_streams_keep_order_77(void **state)
{
    kc_server *s = start_with(0, 0);
    enum { N = 60, E = 300 };
    ts_resp r;
    ts_get(s, CM_PATH, &r);
    char path[256];
    snprintf(path, sizeof(path), CM_PATH "?watch=1&resourceVersion=%llu", ts_rv(r.json));
    ts_resp_free(&r);
    ts_watch *w[N];
    for (int i = 0; i < N; i++)
        w[i] = ts_watch_start(s, path);
    unsigned long long rvs[E];
    for (int k = 0; k < E; k++) {
        char n[16];
        snprintf(n, sizeof(n), "b%d", k);
        rvs[k] = mk(s, n, NULL);
    }
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < E; k++) {
            json_t *ev = ts_watch_next_nb(w[i], 10000);
            assert_non_null(ev);
            assert_string_equal(ts_s(ev, "type"), "ADDED");
            assert_int_equal(ts_rv(ts_j(ev, "object")), rvs[k]);
            json_decref(ev);
        }
    }
    kc_server_free(s); /* stops with every stream parked */
    for (int i = 0; i < N; i++) {
        assert_true(ts_watch_wait_end(w[i], 5000));
        ts_watch_free(w[i]);
    }
}

typedef struct bg_get {
    kc_server *s;
    const char *path;
    long status;
} bg_get;

static void *bg_get_main(void *arg)
{
    bg_get *g = arg;
    ts_resp r;
    g->status = ts_get(g->s, g->path, &r);
    ts_resp_free(&r);
    return NULL;
}

/* A LIST that cannot finish (the store lock is held here) runs on a helper thread: connections
 * already open on every server thread — watch streams sending bookmarks (#84) — and new requests
 * are still served meanwhile. */
static void test_server_slow_list_does_not_stall_other_connections(void **state)
{
    kc_server *s = start_with(30, 0);
    enum { N = 8 };
    ts_watch *w[N];
    for (int i = 0; i < N; i++) /* spread over the server's threads */
        w[i] = ts_watch_start(s, CM_PATH "?watch=1&allowWatchBookmarks=true");
    for (int i = 0; i < N; i++) {
        json_t *ev = ts_watch_next(w[i], 5000);
        assert_non_null(ev);
        assert_string_equal(ts_s(ev, "type"), "BOOKMARK");
        json_decref(ev);
    }
    pthread_mutex_lock(&s->mu);
    bg_get g = {.s = s, .path = CM_PATH};
    pthread_t th;
    pthread_create(&th, NULL, bg_get_main, &g);
    /* wait until the LIST runs on its helper thread (blocked on the lock held here) */
    uint64_t deadline = kc__now_ns() + 10 * KC__NS_PER_SEC;
    pthread_mutex_lock(&s->off_mu);
    while (s->offloaded == 0 && kc__cond_wait_until(&s->off_cond, &s->off_mu, deadline) == 0)
        ;
    assert_int_equal(s->offloaded, 1);
    pthread_mutex_unlock(&s->off_mu);
    for (int i = 0; i < N; i++) { /* fresh lines: sent while the LIST is stuck */
        pthread_mutex_lock(&w[i]->mu);
        w[i]->next = w[i]->n;
        pthread_mutex_unlock(&w[i]->mu);
        json_t *ev = ts_watch_next(w[i], 5000);
        assert_non_null(ev);
        assert_string_equal(ts_s(ev, "type"), "BOOKMARK");
        json_decref(ev);
    }
    ts_resp r;
    assert_int_equal(ts_get(s, "/healthz", &r), 200);
    ts_resp_free(&r);
    pthread_mutex_unlock(&s->mu);
    pthread_join(th, NULL);
    assert_int_equal(g.status, 200);
    kc_server_free(s);
    for (int i = 0; i < N; i++)
        ts_watch_free(w[i]);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_watch_param_forms_71),
        cmocka_unit_test(test_server_watch_framing_72),
        cmocka_unit_test(test_server_watch_rv_unset_and_zero_synthetic_added_73_74),
        cmocka_unit_test(test_server_watch_from_list_rv_75_77_78_79),
        cmocka_unit_test(test_server_watch_selector_transitions_80),
        cmocka_unit_test(test_server_watch_field_name_81_noop_82),
        cmocka_unit_test(test_server_watch_too_old_410_83),
        cmocka_unit_test(test_server_watch_bookmarks_84_85),
        cmocka_unit_test(test_server_watch_timeout_seconds_86),
        cmocka_unit_test(test_server_watchlist_rules_89_90),
        cmocka_unit_test(test_server_watchlist_end_bookmark_91),
        cmocka_unit_test(test_server_watch_rv_too_large_error),
        cmocka_unit_test(test_server_watch_close_every_n_fault),
        cmocka_unit_test(test_server_watch_delay_fault_keeps_order),
        cmocka_unit_test(test_server_restart_closes_watches_and_resets_rv_101),
        cmocka_unit_test(test_server_watch_many_concurrent),
        cmocka_unit_test(test_server_watch_batched_streams_keep_order_77),
        cmocka_unit_test(test_server_slow_list_does_not_stall_other_connections),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    curl_global_cleanup();
    return rc;
}
