/*
 * The events.k8s.io/v1 recorder (kcache/event.h, KC_EVENT_API_EVENTS_V1) against the embedded API
 * server on 127.0.0.1:0 — spec §6.2, each test naming the rule it checks:
 *   - E8: reportingController / reportingInstance ("<component>-<host>"), action (the reason when
 *     none is given), regarding and related written; eventTime a MicroTime;
 *   - E9: the first occurrence created without a series, the second patched with series count 2
 *     (the first note kept), later ones only counted; the finish interval's final write carries
 *     the whole count; a patch that finds the Event gone creates it again with its series;
 *   - E10: reason and action cut to 128 bytes, the note to 1024;
 *   - core/v1 with record_action: action and related written too.
 * Synchronisation: kc_event_recorder_flush for recorded events; the finish write (a timer of the
 * sender) is awaited on the recorder's own counter with a bound.
 */
#include "events_fixture.h"

#include <time.h>

static const kc_gvr EV1 = {"events.k8s.io", "v1", "events"};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static kc_event_recorder *recorder_v1(int64_t finish_ms)
{
    kc_event_recorder_opts o = {.component = "test-controller",
                                .host = "node-1",
                                .retry_interval_ms = 1,
                                .api = KC_EVENT_API_EVENTS_V1,
                                .series_finish_ms = finish_ms};
    return recorder(&o);
}

typedef struct collected {
    kc_obj *items[16];
    size_t n;
    const char *name; /* regarding.name wanted */
} collected;

static int collect(void *ud, kc_obj *item)
{
    collected *c = ud;
    char *n = str_of(item, "/regarding/name");
    if (n && strcmp(n, c->name) == 0 && c->n < 16)
        c->items[c->n++] = item;
    else
        kc_obj_unref(item);
    free(n);
    return 0;
}

/* The events.k8s.io/v1 Events in ns regarding the object named name. */
static collected events_about(const kc_gvr *gvr, const char *ns, const char *name)
{
    collected c = {.name = name};
    kc_error err = KC_ERROR_INIT;
    int rc = kc_client_list(cli, gvr, ns, NULL, NULL, collect, &c, &err);
    if (rc)
        fail_msg("list events: %s %s", kc_errno_name(rc), err.message);
    return c;
}

static void collected_free(collected *c)
{
    for (size_t i = 0; i < c->n; i++)
        kc_obj_unref(c->items[i]);
    c->n = 0;
}

static int64_t int_of(const kc_obj *o, const char *ptr)
{
    int64_t v = -1;
    if (kc_obj_get_int(o, ptr, &v, NULL) < 0)
        return -1;
    return v;
}

static kc_event_ref pod(const char *name)
{
    kc_event_ref r = {"v1", "Pod", "ev1", name, "uid-7", "3", NULL};
    return r;
}

/* E8: the fields of a new Event; the action defaults to the reason; eventTime is a MicroTime. */
static void test_v1_created_fields(void **state)
{
    (void)state;
    kc_event_recorder *rec = recorder_v1(0);
    kc_event_ref r = pod("fields");
    kc_event_ref rel = {"v1", "Secret", "ev1", "creds", NULL, NULL, NULL};
    assert_int_equal(kc_event_recorder_record_action(rec, &r, &rel, KC_EVENT_NORMAL, "Created",
                                                     "CreateSecret", "made %d", 1),
                     0);
    assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_WARNING, "Failed", "no"), 0);
    flush(rec);
    collected c = events_about(&EV1, "ev1", "fields");
    assert_int_equal((int)c.n, 2);
    const kc_obj *e = NULL, *f = NULL;
    for (size_t i = 0; i < c.n; i++) {
        char *reason = str_of(c.items[i], "/reason");
        if (reason && strcmp(reason, "Created") == 0)
            e = c.items[i];
        else
            f = c.items[i];
        free(reason);
    }
    assert_non_null(e);
    assert_non_null(f);
    assert_str(e, "/apiVersion", "events.k8s.io/v1");
    assert_str(e, "/reportingController", "test-controller");
    assert_str(e, "/reportingInstance", "test-controller-node-1");
    assert_str(e, "/action", "CreateSecret");
    assert_str(e, "/note", "made 1");
    assert_str(e, "/type", "Normal");
    assert_str(e, "/regarding/kind", "Pod");
    assert_str(e, "/regarding/uid", "uid-7");
    assert_str(e, "/related/kind", "Secret");
    assert_str(e, "/related/name", "creds");
    char *t = str_of(e, "/eventTime");
    assert_non_null(t);
    assert_int_equal((int)strlen(t), 27); /* 2026-12-02T03:50:00.123456Z */
    assert_int_equal(t[19], '.');
    assert_int_equal(t[26], 'Z');
    free(t);
    assert_int_equal((int)int_of(e, "/series/count"), -1); /* no series on a first occurrence */
    assert_str(f, "/action", "Failed");                    /* the reason when none is given */
    collected_free(&c);
    kc_event_recorder_free(rec);
}

/* E9 + E8: five occurrences differing in note → one Event, series count 2 after the second, the
 * first note kept; the finish write brings the count to 5; afterwards a new Event. */
static void test_v1_series_and_finish(void **state)
{
    (void)state;
    kc_event_recorder *rec = recorder_v1(300);
    kc_event_ref r = pod("series");
    for (int i = 0; i < 5; i++)
        assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, "Synced", "try %d", i),
                         0);
    flush(rec);
    kc_event_recorder_stats st = stats(rec);
    assert_int_equal((int)st.created, 1);
    assert_int_equal((int)st.patched, 1);
    assert_int_equal((int)st.series_cached, 3);
    collected c = events_about(&EV1, "ev1", "series");
    assert_int_equal((int)c.n, 1);
    assert_int_equal((int)int_of(c.items[0], "/series/count"), 2);
    assert_str(c.items[0], "/note", "try 0");
    collected_free(&c);
    /* The finish write: bounded wait on the recorder's counter (a timer of its sender). */
    uint64_t deadline = now_ms() + 20000;
    while (stats(rec).patched < 2 && now_ms() < deadline) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal((int)stats(rec).patched, 2);
    c = events_about(&EV1, "ev1", "series");
    assert_int_equal((int)c.n, 1);
    assert_int_equal((int)int_of(c.items[0], "/series/count"), 5);
    collected_free(&c);
    assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, "Synced", "again"), 0);
    flush(rec);
    c = events_about(&EV1, "ev1", "series");
    assert_int_equal((int)c.n, 2); /* the finished series is forgotten */
    collected_free(&c);
    kc_event_recorder_free(rec);
}

/* E9: the second occurrence's patch finds the Event deleted → created again, with its series. */
static void test_v1_deleted_created_with_series(void **state)
{
    (void)state;
    kc_event_recorder *rec = recorder_v1(0);
    kc_event_ref r = pod("gone");
    assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, "Synced", "one"), 0);
    flush(rec);
    collected c = events_about(&EV1, "ev1", "gone");
    assert_int_equal((int)c.n, 1);
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_client_delete(cli, &EV1, "ev1", kc_obj_name(c.items[0]), NULL, NULL, &err),
                     0);
    collected_free(&c);
    assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, "Synced", "two"), 0);
    flush(rec);
    c = events_about(&EV1, "ev1", "gone");
    assert_int_equal((int)c.n, 1);
    assert_int_equal((int)int_of(c.items[0], "/series/count"), 2);
    assert_str(c.items[0], "/note", "one");
    collected_free(&c);
    kc_event_recorder_stats st = stats(rec);
    assert_int_equal((int)st.created, 1); /* the re-creation counts as the series write it is */
    assert_int_equal((int)st.patched, 1);
    assert_int_equal((int)st.errors, 0);
    kc_event_recorder_free(rec);
}

/* E10: reason and action at most 128 bytes, the note at most 1024, cut with " ...". */
static void test_v1_limits(void **state)
{
    (void)state;
    kc_event_recorder *rec = recorder_v1(0);
    kc_event_ref r = pod("limits");
    char reason[201], note[2001];
    memset(reason, 'R', 200);
    reason[200] = '\0';
    memset(note, 'n', 2000);
    note[2000] = '\0';
    assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, reason, "%s", note), 0);
    flush(rec);
    collected c = events_about(&EV1, "ev1", "limits");
    assert_int_equal((int)c.n, 1);
    char *got_r = str_of(c.items[0], "/reason"), *got_a = str_of(c.items[0], "/action"),
         *got_n = str_of(c.items[0], "/note");
    assert_int_equal((int)strlen(got_r), 128);
    assert_int_equal((int)strlen(got_a), 128);
    assert_int_equal((int)strlen(got_n), 1024);
    assert_string_equal(got_n + 1020, " ...");
    free(got_r);
    free(got_a);
    free(got_n);
    collected_free(&c);
    kc_event_recorder_free(rec);
}

/* core/v1 with record_action: action and related are written into the core/v1 Event too. */
static void test_core_action_related(void **state)
{
    (void)state;
    kc_event_recorder_opts o = {.component = "c", .host = "h", .retry_interval_ms = 1};
    kc_event_recorder *rec = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_event_recorder_new(cli, &o, &rec, &err), 0);
    kc_event_ref r = pod("core");
    kc_event_ref rel = {"v1", "ConfigMap", "ev1", "cfg", NULL, NULL, NULL};
    assert_int_equal(
        kc_event_recorder_record_action(rec, &r, &rel, KC_EVENT_NORMAL, "Updated", "Patch", "ok"),
        0);
    flush(rec);
    char *body = NULL;
    size_t len = 0;
    int status = 0;
    assert_int_equal(kc_client_raw(cli, "GET",
                                   "/api/v1/namespaces/ev1/events?fieldSelector=involvedObject."
                                   "name%3Dcore",
                                   NULL, NULL, 0, &status, &body, &len, &err),
                     0);
    assert_int_equal(status, 200);
    assert_non_null(strstr(body, "\"action\":\"Patch\""));
    assert_non_null(strstr(body, "\"related\":{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\""));
    free(body);
    kc_event_recorder_free(rec);
}

static int group_setup(void **state)
{
    (void)state;
    static const char *const nss[] = {"ev1", NULL};
    return client_fixture_up("events-v1-token", nss);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v1_created_fields),
        cmocka_unit_test(test_v1_series_and_finish),
        cmocka_unit_test(test_v1_deleted_created_with_series),
        cmocka_unit_test(test_v1_limits),
        cmocka_unit_test(test_core_action_related),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
