/*
 * test_server_api_shard_watch.c — server-side sharded WATCH of the embedded API server (KEP-5866;
 * controller-semantics S10, S12): four sharded watchers (on uid, on namespace) each get exactly
 * the ADDED / MODIFIED / DELETED events of their shard's objects, in order, and bookmarks even
 * when their shard is quiet; sendInitialEvents streaming lists send the shard's objects and the
 * initial-events-end bookmark; resume from an RV replays the shard's events and 410 is unchanged;
 * a server that ignores the parameter sends full watches, switchable at run time.
 *
 * "No more events" is proven without sleeping: a BOOKMARK's RV is the stream's progress (every
 * event up to it was sent or filtered out), so the events read before a bookmark at or past the
 * last write are all the stream will ever carry for those writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_shard_util.h"

#define ARRLEN(a) (sizeof(a) / sizeof((a)[0]))
#define N_OBJ     40
#define WAIT_MS   10000

static int setup(void **state)
{
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.bookmark_interval_ms = 100;
    *state = ts_start_opts(&o);
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    kc_server_free(*state);
    return 0;
}

/* The created objects: name and uid. */
typedef struct created {
    char name[32], uid[64];
} created;

static void create_cms(kc_server *s, const char *prefix, created *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        snprintf(out[i].name, sizeof(out[i].name), "%s-%zu", prefix, i);
        ts_resp r;
        assert_int_equal(ts_post(s, CM_PATH, ts_cm(out[i].name, NULL), &r), 201);
        snprintf(out[i].uid, sizeof(out[i].uid), "%s", ts_s(r.json, "metadata.uid"));
        ts_resp_free(&r);
    }
}

/* Update then delete every object. */
static void update_delete(kc_server *s, const created *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char path[256];
        snprintf(path, sizeof(path), CM_PATH "/%s", c[i].name);
        ts_resp r;
        ts_req(s, "PATCH", path, "application/merge-patch+json", "{\"data\":{\"k\":\"w\"}}", NULL,
               &r);
        assert_int_equal(r.status, 200);
        ts_resp_free(&r);
    }
    for (size_t i = 0; i < n; i++) {
        char path[256];
        snprintf(path, sizeof(path), CM_PATH "/%s", c[i].name);
        ts_resp r;
        ts_req(s, "DELETE", path, NULL, NULL, NULL, &r);
        assert_int_equal(r.status, 200);
        ts_resp_free(&r);
    }
}

/* Read w until a BOOKMARK at RV >= rv; the other events into evs (caller frees), their count
 * returned. end_bookmark: also stop at the initial-events-end bookmark (its RV is the snapshot's).
 */
static size_t read_until(ts_watch *w, unsigned long long rv, bool end_bookmark, json_t **evs,
                         size_t cap)
{
    size_t n = 0;
    for (;;) {
        json_t *ev = ts_watch_next(w, WAIT_MS);
        if (!ev)
            fail_msg("watch ended or stalled before a bookmark at RV %llu", rv);
        if (!strcmp(ts_s(ev, "type"), "BOOKMARK")) {
            json_t *ann = ts_j(ev, "object.metadata.annotations");
            bool end = !strcmp(
                json_string_value(json_object_get(ann, "k8s.io/initial-events-end")) ?: "", "true");
            unsigned long long brv = ts_rv(json_object_get(ev, "object"));
            assert_null(ts_j(ev, "object.metadata.shardInfo")); /* S10: no frame carries it */
            json_decref(ev);
            if ((end_bookmark && end) || (!end_bookmark && brv >= rv))
                return n;
            continue;
        }
        assert_true(n < cap);
        evs[n++] = ev;
    }
}

static void free_evs(json_t **evs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        json_decref(evs[i]);
}

static ts_watch *start_shard_watch(kc_server *s, const char *base, const sh_shard *sh,
                                   const char *extra)
{
    char path[2048];
    snprintf(path, sizeof(path), "%s?watch=1&allowWatchBookmarks=true&%s%s", base,
             sh ? sh->param : "", extra ? extra : "");
    return ts_watch_start(s, path);
}

static unsigned long long list_rv(kc_server *s)
{
    ts_resp r;
    assert_int_equal(ts_get(s, CM_PATH, &r), 200);
    unsigned long long rv = ts_rv(r.json);
    ts_resp_free(&r);
    return rv;
}

/* The key of created object c on field (namespace: "default", where they all are). */
static bool created_in(const sh_shard *sh, const created *c)
{
    const char *k = sh->field == KC_SHARD_FIELD_UID ? c->uid : "default";
    return kc_shard_range_contains(&sh->range, kc_shard_hash(k, strlen(k)));
}

/* S10: every event of w is of an object of its shard; each such object shows ADDED, MODIFIED,
 * DELETED in that order and nothing else. Returns how many objects of c are in the shard. */
static size_t check_shard_events(const sh_shard *sh, const created *c, size_t nc, json_t **evs,
                                 size_t n)
{
    static const char *const order[] = {"ADDED", "MODIFIED", "DELETED"};
    size_t mine = 0;
    for (size_t k = 0; k < n; k++)
        if (!sh_in(sh, json_object_get(evs[k], "object")))
            fail_msg("%s got %s of %s", sh->canonical, ts_s(evs[k], "type"),
                     ts_s(evs[k], "object.metadata.name"));
    for (size_t i = 0; i < nc; i++) {
        if (!created_in(sh, &c[i]))
            continue;
        mine++;
        size_t seen = 0;
        for (size_t k = 0; k < n; k++) {
            if (strcmp(ts_s(evs[k], "object.metadata.uid"), c[i].uid) != 0)
                continue;
            assert_true(seen < 3);
            assert_string_equal(ts_s(evs[k], "type"), order[seen++]);
        }
        assert_int_equal(seen, 3);
    }
    assert_int_equal(n, 3 * mine);
    return mine;
}

/* Four sharded watchers of base on field while N_OBJ objects are created, updated, deleted. */
static void run_four(kc_server *s, const char *base, kc_shard_field field, size_t *ret_mine)
{
    unsigned long long rv0 = list_rv(s);
    char from[64];
    snprintf(from, sizeof(from), "&resourceVersion=%llu", rv0);
    sh_shard sh[4];
    ts_watch *w[4];
    for (uint64_t i = 0; i < 4; i++) {
        sh_shard_init(&sh[i], field, 4, i);
        w[i] = start_shard_watch(s, base, &sh[i], from);
    }
    created c[N_OBJ];
    create_cms(s, field == KC_SHARD_FIELD_UID ? "u" : "n", c, N_OBJ);
    update_delete(s, c, N_OBJ);
    unsigned long long last = kc_server_current_rv(s);
    size_t total = 0;
    for (int i = 0; i < 4; i++) {
        json_t *evs[3 * N_OBJ + 1];
        size_t n = read_until(w[i], last, false, evs, ARRLEN(evs));
        ret_mine[i] = check_shard_events(&sh[i], c, N_OBJ, evs, n);
        total += ret_mine[i];
        free_evs(evs, n);
        ts_watch_free(w[i]);
    }
    assert_int_equal(total, N_OBJ); /* the shards partition the objects */
}

static void test_shard_watch_uid_four_watchers_S10(void **state)
{
    size_t mine[4];
    run_four(*state, CM_PATH, KC_SHARD_FIELD_UID, mine);
}

/* S10 with bookmarks: on namespace, every object (in "default": range 3 of 4, S6) goes to shard 3;
 * shards 0–2 see no event at all and still get bookmarks that move past the last write. */
static void test_shard_watch_namespace_quiet_shards_bookmarks_S10(void **state)
{
    size_t mine[4];
    run_four(*state, "/api/v1/configmaps", KC_SHARD_FIELD_NAMESPACE, mine);
    assert_int_equal(mine[0], 0);
    assert_int_equal(mine[1], 0);
    assert_int_equal(mine[2], 0);
    assert_int_equal(mine[3], N_OBJ);
}

/* S10: a streaming list (sendInitialEvents=true) sends ADDED for exactly the shard's objects,
 * each once, then the initial-events-end bookmark. */
static void test_shard_watch_streaming_list_S10(void **state)
{
    kc_server *s = *state;
    created c[N_OBJ];
    create_cms(s, "s", c, N_OBJ);
    for (uint64_t i = 0; i < 4; i++) {
        sh_shard sh;
        sh_shard_init(&sh, KC_SHARD_FIELD_UID, 4, i);
        ts_watch *w = start_shard_watch(
            s, CM_PATH, &sh, "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan");
        json_t *evs[N_OBJ + 1];
        size_t n = read_until(w, 0, true, evs, ARRLEN(evs));
        size_t want = 0;
        for (size_t k = 0; k < N_OBJ; k++) {
            if (!created_in(&sh, &c[k]))
                continue;
            want++;
            size_t hits = 0;
            for (size_t e = 0; e < n; e++)
                hits += !strcmp(ts_s(evs[e], "object.metadata.uid"), c[k].uid) &&
                        !strcmp(ts_s(evs[e], "type"), "ADDED");
            assert_int_equal(hits, 1);
        }
        assert_int_equal(n, want);
        free_evs(evs, n);
        ts_watch_free(w);
    }
}

/* S10: resuming from an RV replays the shard's events of the history only; an RV older than the
 * history still gets 410 Expired. */
static void test_shard_watch_resume_and_410_S10(void **state)
{
    kc_server *s = *state;
    unsigned long long rv0 = list_rv(s);
    created c[N_OBJ];
    create_cms(s, "r", c, N_OBJ);
    update_delete(s, c, N_OBJ);
    unsigned long long last = kc_server_current_rv(s);
    char from[64];
    snprintf(from, sizeof(from), "&resourceVersion=%llu", rv0);
    size_t total = 0;
    for (uint64_t i = 0; i < 4; i++) { /* started after the writes: everything is replay */
        sh_shard sh;
        sh_shard_init(&sh, KC_SHARD_FIELD_UID, 4, i);
        ts_watch *w = start_shard_watch(s, CM_PATH, &sh, from);
        json_t *evs[3 * N_OBJ + 1];
        size_t n = read_until(w, last, false, evs, ARRLEN(evs));
        total += check_shard_events(&sh, c, N_OBJ, evs, n);
        free_evs(evs, n);
        ts_watch_free(w);
    }
    assert_int_equal(total, N_OBJ);
    assert_int_equal(kc_server_compact(s), 0);
    sh_shard sh;
    sh_shard_init(&sh, KC_SHARD_FIELD_UID, 4, 0);
    ts_watch *w = start_shard_watch(s, CM_PATH, &sh, from);
    json_t *ev = ts_watch_next(w, WAIT_MS);
    assert_non_null(ev);
    assert_string_equal(ts_s(ev, "type"), "ERROR");
    assert_int_equal(json_integer_value(ts_j(ev, "object.code")), 410);
    json_decref(ev);
    ts_watch_free(w);
}

static json_t *admin_sharding(kc_server *s)
{
    ts_resp r;
    assert_int_equal(ts_get(s, "/admin/sharding", &r), 200);
    json_t *j = json_incref(r.json);
    ts_resp_free(&r);
    return j;
}

/* S12: while ignored, a watch with a selector is a full watch (and stays one when the switch
 * flips back); once honoured again a new watch is sharded. The admin endpoint counts sharded
 * watches and the events their selectors filtered out. */
static void test_shard_watch_ignored_toggle_S12(void **state)
{
    kc_server *s = *state;
    sh_shard sh;
    sh_shard_init(&sh, KC_SHARD_FIELD_UID, 4, 2);
    char from[64];
    snprintf(from, sizeof(from), "&resourceVersion=%llu", list_rv(s));
    assert_int_equal(kc_server_set_shard_selector_ignored(s, true), 0);
    ts_watch *full = start_shard_watch(s, CM_PATH, &sh, from);
    /* the first bookmark proves the stream started (and decided) while ignored */
    assert_int_equal(read_until(full, 0, false, NULL, 0), 0);
    json_t *a = admin_sharding(s);
    assert_int_equal(json_integer_value(json_object_get(a, "shardedWatches")), 0);
    json_decref(a);
    assert_int_equal(kc_server_set_shard_selector_ignored(s, false), 0);
    ts_watch *part = start_shard_watch(s, CM_PATH, &sh, from);
    assert_int_equal(read_until(part, 0, false, NULL, 0), 0);
    a = admin_sharding(s);
    assert_int_equal(json_integer_value(json_object_get(a, "shardedWatches")), 1);
    json_int_t filtered0 = json_integer_value(json_object_get(a, "filteredEvents"));
    json_decref(a);
    created c[N_OBJ];
    create_cms(s, "i", c, N_OBJ);
    update_delete(s, c, N_OBJ);
    unsigned long long last = kc_server_current_rv(s);
    json_t *evs[3 * N_OBJ + 1];
    size_t n = read_until(full, last, false, evs, ARRLEN(evs));
    assert_int_equal(n, 3 * N_OBJ); /* every event of every object */
    free_evs(evs, n);
    n = read_until(part, last, false, evs, ARRLEN(evs));
    size_t mine = check_shard_events(&sh, c, N_OBJ, evs, n);
    free_evs(evs, n);
    a = admin_sharding(s);
    assert_int_equal(json_integer_value(json_object_get(a, "filteredEvents")) - filtered0,
                     3 * (N_OBJ - mine));
    json_decref(a);
    ts_watch_free(full);
    ts_watch_free(part);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_shard_watch_uid_four_watchers_S10, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shard_watch_namespace_quiet_shards_bookmarks_S10,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_shard_watch_streaming_list_S10, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shard_watch_resume_and_410_S10, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shard_watch_ignored_toggle_S12, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
