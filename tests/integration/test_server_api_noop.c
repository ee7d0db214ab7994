/*
 * test_server_api_noop.c — a write that changes nothing changes nothing, whatever its verb: a
 * server-side apply, PUT, PUT /status, merge / JSON / strategic PATCH, PUT and PATCH of /scale,
 * all repeated with the same content a few seconds later (the server's clock moved on through
 * kc__clock_advance, no sleeping) keep the resourceVersion, metadata.generation and every
 * managedFields entry's time, and send no watch event (spec §2 resourceVersion: "A no-op write …
 * is not persisted … Changes that only touch managedFields timestamps are ignored"; checklist
 * #29, #82). A real change still bumps the RV — a labels-only one without generation (#34) — and
 * restamps only the writer's entry.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "server/patch/validate.h"
#include "test_server_util.h"

#define DEP   "/apis/apps/v1/namespaces/default/deployments"
#define APPLY "application/apply-patch+yaml"
#define MERGE "application/merge-patch+json"
#define JSONP "application/json-patch+json"
#define STRAT "application/strategic-merge-patch+json"
#define DEP_DOC                                                                                    \
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\","            \
    "\"labels\":{\"app\":\"d\"}},\"spec\":{\"replicas\":2,\"selector\":{\"matchLabels\":"          \
    "{\"app\":\"d\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"d\"}},\"spec\":"           \
    "{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}}}"

/* The stored Deployment d (caller json_decref). */
static json_t *get_d(kc_server *s)
{
    ts_resp r;
    assert_int_equal(ts_get(s, DEP "/d", &r), 200);
    json_t *j = json_incref(r.json);
    ts_resp_free(&r);
    return j;
}

/* Send a write; assert its status; return the reply body's resourceVersion (0 when none). */
static unsigned long long write_ok(kc_server *s, const char *method, const char *path,
                                   const char *ctype, const char *body, long want)
{
    ts_resp r;
    ts_req(s, method, path, ctype, body, NULL, &r);
    if (r.status != want)
        fail_msg("%s %s: HTTP %ld, want %ld: %s", method, path, r.status, want,
                 r.body ? r.body : "");
    unsigned long long rv = r.json ? ts_rv(r.json) : 0;
    ts_resp_free(&r);
    return rv;
}

/* The stored object is exactly before (RV, generation, managedFields with their times). */
static void assert_unchanged(kc_server *s, json_t *before, const char *what)
{
    json_t *now = get_d(s);
    if (!json_equal(now, before)) {
        char *a = json_dumps(before, JSON_COMPACT), *b = json_dumps(now, JSON_COMPACT);
        fail_msg("%s changed the object:\nbefore %s\nafter  %s", what, a, b);
    }
    json_decref(now);
}

/* The next event of w is the MODIFIED of a real change of d written now (label mark=1): nothing
 * was sent for the writes before it. */
static void assert_no_event_before_mark(kc_server *s, ts_watch *w)
{
    write_ok(s, "PATCH", DEP "/d", MERGE, "{\"metadata\":{\"labels\":{\"mark\":\"1\"}}}", 200);
    json_t *ev = ts_watch_next_nb(w, 5000);
    assert_non_null(ev);
    assert_string_equal(ts_s(ev, "type"), "MODIFIED");
    assert_string_equal(ts_s(ev, "object.metadata.labels.mark"), "1");
    json_decref(ev);
}

/* Every verb repeated with the same content after the clock moved on: nothing changes. */
static void test_server_noop_every_verb(void **state)
{
    kc_server *s = *state;
    write_ok(s, "PATCH", DEP "/d?fieldManager=t", APPLY, DEP_DOC, 201);
    json_t *before = get_d(s);
    assert_int_equal(json_integer_value(ts_j(before, "metadata.generation")), 1);
    char path[256];
    snprintf(path, sizeof(path), "/apis/apps/v1/deployments?watch=1&resourceVersion=%llu",
             ts_rv(before));
    ts_watch *w = ts_watch_start(s, path);
    assert_non_null(w);

    kc__clock_advance(2); /* the bug: the apply entry's time moved, and with it the RV */
    write_ok(s, "PATCH", DEP "/d?fieldManager=t", APPLY, DEP_DOC, 200);
    assert_unchanged(s, before, "a repeated server-side apply");

    kc__clock_advance(2);
    char *doc = json_dumps(before, JSON_COMPACT);
    write_ok(s, "PUT", DEP "/d?fieldManager=kubectl-replace", "application/json", doc, 200);
    assert_unchanged(s, before, "PUT of the stored object");
    write_ok(s, "PUT", DEP "/d/status?fieldManager=k", "application/json", doc, 200);
    assert_unchanged(s, before, "PUT /status of the stored object");
    free(doc);

    kc__clock_advance(2);
    write_ok(s, "PATCH", DEP "/d?fieldManager=kubectl-label", MERGE,
             "{\"metadata\":{\"labels\":{\"app\":\"d\"}}}", 200);
    assert_unchanged(s, before, "a merge patch setting a label to its value");
    write_ok(s, "PATCH", DEP "/d?fieldManager=j", JSONP,
             "[{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":2}]", 200);
    assert_unchanged(s, before, "a JSON patch replacing replicas by its value");
    write_ok(s, "PATCH", DEP "/d?fieldManager=kubectl-patch", STRAT,
             "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
             "\"image\":\"nginx\"}]}}}}",
             200);
    assert_unchanged(s, before, "a strategic patch of a container with its own values");

    kc__clock_advance(2);
    write_ok(s, "PATCH", DEP "/d/scale?fieldManager=kubectl-scale", MERGE,
             "{\"spec\":{\"replicas\":2}}", 200);
    assert_unchanged(s, before, "PATCH /scale to the current replicas");
    write_ok(s, "PUT", DEP "/d/scale?fieldManager=sc", "application/json",
             "{\"apiVersion\":\"autoscaling/v1\",\"kind\":\"Scale\",\"metadata\":{\"name\":\"d\","
             "\"namespace\":\"default\"},\"spec\":{\"replicas\":2}}",
             200);
    assert_unchanged(s, before, "PUT /scale to the current replicas");

    assert_no_event_before_mark(s, w);
    ts_watch_free(w);
    json_decref(before);
}

/* managedFields entry of manager (operation Apply or Update) in obj; NULL when none. */
static json_t *entry_of(json_t *obj, const char *manager)
{
    size_t i;
    json_t *e;
    json_array_foreach(ts_j(obj, "metadata.managedFields"), i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "manager")), manager) == 0)
            return e;
    }
    return NULL;
}

/* A labels-only change bumps the RV and not the generation; the writer's entry is restamped, the
 * others keep their times; repeating it is a no-op. */
static void test_server_noop_labels_change(void **state)
{
    kc_server *s = *state;
    write_ok(s, "PATCH", DEP "/d?fieldManager=t", APPLY, DEP_DOC, 200);
    write_ok(s, "PATCH", DEP "/d?fieldManager=kubectl-label", MERGE,
             "{\"metadata\":{\"labels\":{\"tier\":\"web\"}}}", 200);
    json_t *a = get_d(s);
    kc__clock_advance(5);
    write_ok(s, "PATCH", DEP "/d?fieldManager=kubectl-label", MERGE,
             "{\"metadata\":{\"labels\":{\"tier\":\"db\"}}}", 200);
    json_t *b = get_d(s);
    assert_true(ts_rv(b) > ts_rv(a));
    assert_int_equal(json_integer_value(ts_j(b, "metadata.generation")),
                     json_integer_value(ts_j(a, "metadata.generation")));
    assert_string_equal(json_string_value(json_object_get(entry_of(b, "t"), "time")),
                        json_string_value(json_object_get(entry_of(a, "t"), "time")));
    assert_string_not_equal(
        json_string_value(json_object_get(entry_of(b, "kubectl-label"), "time")),
        json_string_value(json_object_get(entry_of(a, "kubectl-label"), "time")));
    kc__clock_advance(5);
    write_ok(s, "PATCH", DEP "/d?fieldManager=kubectl-label", MERGE,
             "{\"metadata\":{\"labels\":{\"tier\":\"db\"}}}", 200);
    assert_unchanged(s, b, "the same label patch again");
    json_decref(a);
    json_decref(b);
}

/* A spec change through apply bumps RV and generation once; the same apply again changes
 * nothing (the create-or-update pattern of `kubectl apply --server-side` run in a loop). */
static void test_server_noop_apply_change_then_repeat(void **state)
{
    kc_server *s = *state;
    static const char *doc3 =
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\","
        "\"labels\":{\"app\":\"d\"}},\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":"
        "{\"app\":\"d\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"d\"}},\"spec\":"
        "{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}}}";
    json_t *a = get_d(s);
    kc__clock_advance(3);
    write_ok(s, "PATCH", DEP "/d?fieldManager=t&force=true", APPLY, doc3, 200);
    json_t *b = get_d(s);
    assert_true(ts_rv(b) > ts_rv(a));
    assert_int_equal(json_integer_value(ts_j(b, "metadata.generation")),
                     json_integer_value(ts_j(a, "metadata.generation")) + 1);
    for (int i = 0; i < 3; i++) {
        kc__clock_advance(3);
        write_ok(s, "PATCH", DEP "/d?fieldManager=t&force=true", APPLY, doc3, 200);
        assert_unchanged(s, b, "a repeated apply after a change");
    }
    json_decref(a);
    json_decref(b);
}

/* POST /admin/clock?advance=S moves the server's timestamps forward (what run_kubectl_noop.sh
 * uses); a missing, zero or oversized advance is 400, GET 405. */
static void test_server_noop_admin_clock(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    ts_req(s, "POST", "/admin/clock?advance=0", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 400);
    ts_resp_free(&r);
    ts_req(s, "POST", "/admin/clock?advance=86401", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 400);
    ts_resp_free(&r);
    ts_req(s, "GET", "/admin/clock?advance=1", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 405);
    ts_resp_free(&r);
    assert_int_equal(ts_post(s, CM_PATH, "{\"metadata\":{\"name\":\"c1\"}}", &r), 201);
    time_t t0 = time(NULL);
    ts_resp_free(&r);
    ts_req(s, "POST", "/admin/clock?advance=3600", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    assert_int_equal(ts_post(s, CM_PATH, "{\"metadata\":{\"name\":\"c2\"}}", &r), 201);
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    assert_non_null(
        strptime(ts_s(r.json, "metadata.creationTimestamp"), "%Y-%m-%dT%H:%M:%SZ", &tm));
    assert_true(timegm(&tm) >= t0 + 3600 - 5); /* an hour on (earlier advances only add) */
    ts_resp_free(&r);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_noop_every_verb),
        cmocka_unit_test(test_server_noop_labels_change),
        cmocka_unit_test(test_server_noop_apply_change_then_repeat),
        cmocka_unit_test(test_server_noop_admin_clock),
    };
    int rc = cmocka_run_group_tests(tests, ts_group_setup_t1, ts_group_teardown);
    curl_global_cleanup();
    return rc;
}
