/*
 * test_server_api_bookmarks.c — BOOKMARK resourceVersions of the embedded API server (spec §5.4,
 * checklist #84): a bookmark carries the server's current RV as soon as the stream has been given
 * every event up to it, not the RV of the last event it delivered. A watch scoped by namespace,
 * label or field selector (or on a quiet resource) thus moves on while writes happen elsewhere,
 * and resuming from its bookmark after a compaction of the older history gets no 410 (#83 is
 * for clients that are really behind). A bookmark never passes an event that is queued for the
 * stream and not yet sent (stall fault), and bookmark RVs never go down.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

#define WAIT_MS 10000 /* generous: bookmarks come every 50 ms */

static int setup(void **state)
{
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.bookmark_interval_ms = 50;
    kc_server *s = ts_start_opts(&o);
    if (!s)
        return -1;
    ts_resp r;
    ts_post(s, "/api/v1/namespaces", "{\"metadata\":{\"name\":\"other\"}}", &r);
    ts_resp_free(&r);
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    kc_server_free(*state);
    return 0;
}

static void post_ok(kc_server *s, const char *path, const char *body)
{
    ts_resp r;
    assert_int_equal(ts_post(s, path, body, &r), 201);
    ts_resp_free(&r);
}

/* Read events until a BOOKMARK with RV >= want; fails after WAIT_MS. Bookmark RVs must not go
 * down and must be >= every RV delivered before them (#84). Returns the bookmark's RV. */
static unsigned long long bookmark_reaching(ts_watch *w, unsigned long long want)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned long long last = 0, got = 0;
    for (;;) {
        json_t *ev = ts_watch_next(w, WAIT_MS);
        if (!ev)
            fail_msg("no bookmark with RV >= %llu; the last one had %llu", want, got);
        unsigned long long rv = ts_rv(ts_j(ev, "object"));
        bool bm = strcmp(ts_s(ev, "type"), "BOOKMARK") == 0;
        json_decref(ev);
        assert_true(rv >= last);
        last = rv;
        if (bm && (got = rv) >= want)
            return rv;
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > WAIT_MS)
            fail_msg("no bookmark with RV >= %llu within %d ms; the last one had %llu", want,
                     WAIT_MS, got);
    }
}

/* A scoped watch that sees none of the writes: its bookmarks reach the server's current RV, and
 * resuming from there after a compaction works. */
static void scoped(kc_server *s, const char *watch_path, const char *write_path, const char *prefix,
                   const char *labels)
{
    char url[512];
    snprintf(url, sizeof(url), "%s%swatch=1&allowWatchBookmarks=true&resourceVersion=%llu",
             watch_path, strchr(watch_path, '?') ? "&" : "?",
             (unsigned long long)kc_server_current_rv(s));
    ts_watch *w = ts_watch_start(s, url);
    for (int i = 0; i < 10; i++) {
        char b[512];
        snprintf(b, sizeof(b), "{\"metadata\":{\"name\":\"%s-%d\"%s%s}}", prefix, i,
                 labels ? ",\"labels\":" : "", labels ? labels : "");
        post_ok(s, write_path, b);
    }
    unsigned long long now = kc_server_current_rv(s);
    unsigned long long bm = bookmark_reaching(w, now);
    assert_int_equal(bm, now); /* never beyond the server */
    ts_watch_free(w);
    /* The history before the bookmark is gone: resuming from it is still fine (no 410). */
    kc_server_compact(s);
    snprintf(url, sizeof(url), "%s%swatch=1&allowWatchBookmarks=true&resourceVersion=%llu",
             watch_path, strchr(watch_path, '?') ? "&" : "?", bm);
    w = ts_watch_start(s, url);
    json_t *ev = ts_watch_next(w, WAIT_MS);
    assert_non_null(ev);
    assert_string_equal(ts_s(ev, "type"), "BOOKMARK"); /* not ERROR 410 Expired */
    assert_true(ts_rv(ts_j(ev, "object")) >= bm);
    json_decref(ev);
    ts_watch_free(w);
}

static void test_server_bookmark_namespace_scope_84(void **state)
{
    scoped(*state, CM_PATH, "/api/v1/namespaces/other/configmaps", "ns", NULL);
}

static void test_server_bookmark_label_selector_84(void **state)
{
    scoped(*state, CM_PATH "?labelSelector=app%3Dmine", CM_PATH, "ls", "{\"app\":\"theirs\"}");
}

static void test_server_bookmark_field_selector_84(void **state)
{
    scoped(*state, "/api/v1/configmaps?fieldSelector=metadata.name%3Dmine", CM_PATH, "fs", NULL);
}

/* Writes to other resources move the RV too: a watch on a quiet resource follows. */
static void test_server_bookmark_quiet_resource_84(void **state)
{
    scoped(*state, CM_PATH, "/api/v1/namespaces/default/secrets", "sec", NULL);
}

/* An event queued for the stream and not yet sent (stall fault) holds the bookmarks back just
 * before it; once it is sent, they move on to the current RV. */
static void test_server_bookmark_never_passes_a_queued_event_84(void **state)
{
    kc_server *s = *state;
    char url[256];
    snprintf(url, sizeof(url), CM_PATH "?watch=1&allowWatchBookmarks=true&resourceVersion=%llu",
             (unsigned long long)kc_server_current_rv(s));
    ts_watch *w = ts_watch_start(s, url);
    unsigned long long start = bookmark_reaching(w, kc_server_current_rv(s));
    kc_server_faults f;
    memset(&f, 0, sizeof(f));
    f.watch_stall = true;
    kc_server_set_faults(s, &f);
    post_ok(s, CM_PATH, ts_cm("held", NULL));
    unsigned long long held = kc_server_current_rv(s);
    for (int i = 0; i < 5; i++) {
        char b[128];
        snprintf(b, sizeof(b), "{\"metadata\":{\"name\":\"later-%d\"}}", i);
        post_ok(s, "/api/v1/namespaces/other/configmaps", b);
    }
    /* Several bookmarks while the event is held: each stops just before it. */
    for (int i = 0; i < 3; i++) {
        json_t *ev = ts_watch_next(w, WAIT_MS);
        assert_non_null(ev);
        assert_string_equal(ts_s(ev, "type"), "BOOKMARK");
        unsigned long long rv = ts_rv(ts_j(ev, "object"));
        assert_true(rv >= start);
        assert_true(rv < held);
        json_decref(ev);
    }
    memset(&f, 0, sizeof(f));
    kc_server_set_faults(s, &f);
    json_t *ev = ts_watch_next_nb(w, WAIT_MS);
    assert_string_equal(ts_s(ev, "type"), "ADDED");
    assert_string_equal(ts_s(ev, "object.metadata.name"), "held");
    assert_int_equal(ts_rv(ts_j(ev, "object")), held);
    json_decref(ev);
    bookmark_reaching(w, kc_server_current_rv(s));
    ts_watch_free(w);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_bookmark_namespace_scope_84),
        cmocka_unit_test(test_server_bookmark_label_selector_84),
        cmocka_unit_test(test_server_bookmark_field_selector_84),
        cmocka_unit_test(test_server_bookmark_quiet_resource_84),
        cmocka_unit_test(test_server_bookmark_never_passes_a_queued_event_84),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    curl_global_cleanup();
    return rc;
}
