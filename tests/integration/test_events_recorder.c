/*
 * The event recorder (kcache/event.h, docs/events.md) against the embedded API server on
 * 127.0.0.1:0 — spec §6 rules E1–E7, each test naming the rule it checks:
 *   - E1: names "<object>.<hex unix-nanos>", namespace "default" for cluster-scoped objects,
 *     count 1 and first = last on a new Event, types other than Normal/Warning refused;
 *   - E5: N identical events → one Event with count N (created once, then patched), different
 *     messages → different Events, a deleted Event is created again (404 on the patch);
 *   - E4: 10 distinct messages of one group → "(combined from similar events): …";
 *   - E6: the spam filter lets 25 events per object and type through and counts the rest;
 *   - E2: record never waits (a server that never answers; a sender stuck in retries): the queue
 *     bound holds and drops are counted;
 *   - E7: 5xx is retried a bounded number of times, then given up (counted); a transient fault
 *     heals; a 4xx is not retried.
 * No sleep synchronises anything: kc_event_recorder_flush waits for the sender, and the one
 * condition polled (a retry has happened) is read from the recorder's counters.
 */
#include "events_fixture.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const kc_gvr EVENTS = {"", "v1", "events"};

typedef struct collected {
    kc_obj *items[64];
    size_t n;
} collected;

static int collect(void *ud, kc_obj *item)
{
    collected *c = ud;
    if (c->n < 64)
        c->items[c->n++] = item;
    else
        kc_obj_unref(item);
    return 0;
}

/* The Events in ns about the object named name (field selector involvedObject.name). */
static collected events_about(const char *ns, const char *name)
{
    collected c = {{0}, 0};
    char sel[256];
    snprintf(sel, sizeof sel, "involvedObject.name=%s", name);
    kc_list_opts lo = {.field_selector = sel};
    kc_error err = KC_ERROR_INIT;
    int rc = kc_client_list(cli, &EVENTS, ns, &lo, NULL, collect, &c, &err);
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

static int64_t count_of(const kc_obj *ev)
{
    int64_t n = -1;
    assert_int_equal(kc_obj_get_int(ev, "/count", &n, NULL), 0);
    return n;
}

/* The Event among c whose message is msg (fails when absent). */
static const kc_obj *with_message(const collected *c, const char *msg)
{
    for (size_t i = 0; i < c->n; i++) {
        char *m = str_of(c->items[i], "/message");
        bool eq = m && strcmp(m, msg) == 0;
        free(m);
        if (eq)
            return c->items[i];
    }
    fail_msg("no event with message \"%s\"", msg);
    return NULL;
}

static kc_event_ref pod_ref(const char *name)
{
    kc_event_ref r = {"v1", "Pod", "ev", name, "uid-1", "7", NULL};
    return r;
}

/* E1 + E5: identical events collapse into one Event whose count is the number recorded. */
static void test_identical_events_one_event_with_count(void **state)
{
    (void)state;
    kc_event_recorder *rec = recorder(NULL);
    kc_event_ref r = pod_ref("same");
    for (int i = 0; i < 20; i++)
        assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_WARNING, "BackOff",
                                                  "Back-off restarting %s", "app"),
                         0);
    flush(rec);
    collected c = events_about("ev", "same");
    assert_int_equal(c.n, 1);
    const kc_obj *ev = c.items[0];
    assert_int_equal(count_of(ev), 20);
    assert_str(ev, "/type", "Warning");
    assert_str(ev, "/reason", "BackOff");
    assert_str(ev, "/message", "Back-off restarting app");
    assert_str(ev, "/source/component", "test-controller");
    assert_str(ev, "/source/host", "node-1");
    assert_str(ev, "/involvedObject/kind", "Pod");
    assert_str(ev, "/involvedObject/uid", "uid-1");
    assert_str(ev, "/involvedObject/resourceVersion", "7");
    /* E1: "<involved name>.<hex unix-nanos>" */
    const char *name = kc_obj_name(ev);
    assert_true(strncmp(name, "same.", 5) == 0);
    assert_true(strlen(name) > 5 && strspn(name + 5, "0123456789abcdef") == strlen(name + 5));
    char *first = str_of(ev, "/firstTimestamp"), *last = str_of(ev, "/lastTimestamp");
    assert_non_null(first);
    assert_non_null(last);
    assert_true(strcmp(first, last) <= 0); /* RFC 3339 "…Z" strings order as times */
    free(first);
    free(last);
    kc_event_recorder_stats st = stats(rec);
    assert_int_equal(st.recorded, 20);
    assert_int_equal(st.created, 1);
    assert_int_equal(st.patched, 19);
    assert_int_equal(st.dropped + st.errors + st.spam_filtered + st.aggregated, 0);
    /* E12: the counters as metrics */
    char *m = kc_event_recorder_metrics_render(rec);
    assert_non_null(m);
    assert_non_null(strstr(m, "# TYPE kcache_events_total counter\n"));
    assert_non_null(
        strstr(m, "kcache_events_total{component=\"test-controller\",result=\"created\"} 1\n"));
    assert_non_null(
        strstr(m, "kcache_events_total{component=\"test-controller\",result=\"patched\"} 19\n"));
    assert_non_null(strstr(m, "kcache_events_queue_depth{component=\"test-controller\"} 0\n"));
    free(m);
    collected_free(&c);
    kc_event_recorder_free(rec);
}

/* E5: events that differ in message (or reason) are different Events, each with its count. */
static void test_different_messages_separate_events(void **state)
{
    (void)state;
    kc_event_recorder *rec = recorder(NULL);
    kc_event_ref r = pod_ref("diff");
    for (int i = 0; i < 3; i++) {
        assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, "Pulled", "image a"),
                         0);
        assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, "Pulled", "image b"),
                         0);
    }
    assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, "Started", "image a"), 0);
    flush(rec);
    collected c = events_about("ev", "diff");
    assert_int_equal(c.n, 3);
    assert_int_equal(count_of(with_message(&c, "image b")), 3);
    int64_t pulled_a = 0, started_a = 0;
    for (size_t i = 0; i < c.n; i++) {
        char *reason = str_of(c.items[i], "/reason");
        if (strcmp(reason, "Pulled") == 0 && count_of(c.items[i]) == 3)
            pulled_a++;
        if (strcmp(reason, "Started") == 0 && count_of(c.items[i]) == 1)
            started_a++;
        free(reason);
    }
    assert_int_equal(pulled_a, 2);
    assert_int_equal(started_a, 1);
    collected_free(&c);
    kc_event_recorder_free(rec);
}

/* E4: the 10th distinct message of one group (object + type + reason) within 600 s becomes the
 * combined event, and every new message after it patches that one Event. */
static void test_similar_events_combined(void **state)
{
    (void)state;
    kc_event_recorder *rec = recorder(NULL);
    kc_event_ref r = pod_ref("similar");
    for (int i = 1; i <= 12; i++)
        assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_WARNING, "FailedMount",
                                                  "volume v%d not found", i),
                         0);
    flush(rec);
    collected c = events_about("ev", "similar");
    assert_int_equal(c.n, 10); /* v1..v9 alone, then one combined Event */
    for (int i = 1; i <= 9; i++) {
        char msg[64];
        snprintf(msg, sizeof msg, "volume v%d not found", i);
        assert_int_equal(count_of(with_message(&c, msg)), 1);
    }
    const kc_obj *comb = with_message(&c, "(combined from similar events): volume v12 not found");
    assert_int_equal(count_of(comb), 3);
    kc_event_recorder_stats st = stats(rec);
    assert_int_equal(st.aggregated, 3);
    assert_int_equal(st.created, 10);
    assert_int_equal(st.patched, 2);
    collected_free(&c);
    kc_event_recorder_free(rec);
}

/* E6: 25 events per (object, type) pass, the rest are skipped before any request and counted;
 * reason is not in the key, type is. */
static void test_spam_filter_burst(void **state)
{
    (void)state;
    kc_event_recorder *rec = recorder(NULL);
    kc_event_ref r = pod_ref("spam");
    for (int i = 0; i < 30; i++) {
        char reason[32];
        snprintf(reason, sizeof reason, "Reason%d", i);
        assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_WARNING, reason, "message"), 0);
    }
    /* A different type has its own bucket. */
    assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, "Fine", "ok"), 0);
    flush(rec);
    collected c = events_about("ev", "spam");
    assert_int_equal(c.n, 26);
    kc_event_recorder_stats st = stats(rec);
    assert_int_equal(st.spam_filtered, 5);
    assert_int_equal(st.created, 26);
    collected_free(&c);

    /* Identical events past the burst: the Event shows the 25 that were sent; the skipped ones
     * were counted by dedupe first (client-go order, E3), so the next patch carries them. */
    kc_event_ref r2 = pod_ref("spam-same");
    for (int i = 0; i < 30; i++)
        assert_int_equal(
            kc_event_recorder_record(rec, &r2, KC_EVENT_WARNING, "Unhealthy", "probe failed"), 0);
    flush(rec);
    c = events_about("ev", "spam-same");
    assert_int_equal(c.n, 1);
    assert_int_equal(count_of(c.items[0]), 25);
    assert_int_equal(stats(rec).spam_filtered, 10);
    collected_free(&c);
    kc_event_recorder_free(rec);
}

/* E1: Normal and Warning only; kind, name and reason required; nothing is queued otherwise. */
static void test_invalid_events_refused(void **state)
{
    (void)state;
    kc_event_recorder *rec = recorder(NULL);
    kc_event_ref r = pod_ref("invalid");
    assert_int_equal(kc_event_recorder_record(rec, &r, "Info", "Reason", "m"), KC_EINVAL);
    assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, "", "m"), KC_EINVAL);
    kc_event_ref noname = {"v1", "Pod", "ev", NULL, NULL, NULL, NULL};
    assert_int_equal(kc_event_recorder_record(rec, &noname, KC_EVENT_NORMAL, "R", "m"), KC_EINVAL);
    flush(rec);
    kc_event_recorder_stats st = stats(rec);
    assert_int_equal(st.invalid, 3);
    assert_int_equal(st.recorded, 0);
    collected c = events_about("ev", "invalid");
    assert_int_equal(c.n, 0);
    kc_event_recorder_free(rec);
}

/* Options: an unknown api or a negative count or timing is KC_EINVAL; nothing is returned on
 * failure (events.k8s.io/v1 is covered by test_events_v1). */
static void test_options_refused(void **state)
{
    (void)state;
    kc_event_recorder *rec = NULL;
    kc_error err = KC_ERROR_INIT;
    kc_event_recorder_opts v1 = {.api = KC_EVENT_API_EVENTS_V1, .series_finish_ms = -1};
    assert_int_equal(kc_event_recorder_new(cli, &v1, &rec, &err), KC_EINVAL);
    kc_error_clear(&err);
    kc_event_recorder_opts bad = {.api = (kc_event_api)7};
    assert_int_equal(kc_event_recorder_new(cli, &bad, &rec, &err), KC_EINVAL);
    kc_error_clear(&err);
    kc_event_recorder_opts neg = {.max_tries = -1};
    assert_int_equal(kc_event_recorder_new(cli, &neg, &rec, &err), KC_EINVAL);
    kc_error_clear(&err);
    assert_null(rec);
}

/* E1: record_obj takes the involved object from an object; a cluster-scoped object's Events go
 * to "default". */
static void test_record_obj_and_default_namespace(void **state)
{
    (void)state;
    kc_event_recorder *rec = recorder(NULL);
    kc_obj *cm = create_cm("ev", "cm-events", NULL);
    assert_int_equal(kc_event_recorder_record_obj(rec, cm, KC_EVENT_NORMAL, "Synced", "ok"), 0);
    const char *ns_json = "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
                          "\"cluster-thing\",\"uid\":\"u-ns\"}}";
    kc_obj *nsobj = NULL;
    assert_int_equal(kc_obj_parse(ns_json, strlen(ns_json), NULL, &nsobj, NULL), 0);
    assert_int_equal(kc_event_recorder_record_obj(rec, nsobj, KC_EVENT_NORMAL, "Seen", "x"), 0);
    flush(rec);
    collected c = events_about("ev", "cm-events");
    assert_int_equal(c.n, 1);
    assert_str(c.items[0], "/involvedObject/kind", "ConfigMap");
    assert_str(c.items[0], "/involvedObject/uid", kc_obj_uid(cm));
    assert_str(c.items[0], "/involvedObject/resourceVersion", kc_obj_resource_version(cm));
    assert_int_equal(count_of(c.items[0]), 1);
    collected_free(&c);
    c = events_about("default", "cluster-thing");
    assert_int_equal(c.n, 1);
    assert_str(c.items[0], "/involvedObject/kind", "Namespace");
    collected_free(&c);
    kc_obj_unref(cm);
    kc_obj_unref(nsobj);
    kc_event_recorder_free(rec);
}

/* E5: a repeat whose Event was deleted meanwhile (the patch gets 404) creates it again, with the
 * count carried on. */
static void test_deleted_event_created_again(void **state)
{
    (void)state;
    kc_event_recorder *rec = recorder(NULL);
    kc_event_ref r = pod_ref("gone");
    assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, "Scheduled", "on n1"), 0);
    flush(rec);
    collected c = events_about("ev", "gone");
    assert_int_equal(c.n, 1);
    char *name = strdup(kc_obj_name(c.items[0]));
    collected_free(&c);
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_client_delete(cli, &EVENTS, "ev", name, NULL, NULL, &err), 0);
    assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, "Scheduled", "on n1"), 0);
    flush(rec);
    c = events_about("ev", "gone");
    assert_int_equal(c.n, 1);
    assert_string_equal(kc_obj_name(c.items[0]), name);
    assert_int_equal(count_of(c.items[0]), 2);
    assert_int_equal(stats(rec).errors, 0);
    collected_free(&c);
    free(name);
    kc_event_recorder_free(rec);
}

static void set_create_500(double rate)
{
    kc_server_faults f;
    kc_server_get_faults(srv, &f);
    f.rate_500[KC_SERVER_VERB_CREATE] = rate;
    f.rate_500[KC_SERVER_VERB_PATCH] = rate;
    assert_int_equal(kc_server_set_faults(srv, &f), 0);
}

/* E7: a 500 is retried max_tries times in all, then the event is given up and counted. */
static void test_server_errors_retried_bounded(void **state)
{
    (void)state;
    kc_event_recorder_opts o = {.max_tries = 3, .retry_interval_ms = 1};
    kc_event_recorder *rec = recorder(&o);
    kc_event_ref r = pod_ref("retry");
    set_create_500(1.0);
    assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, "Try", "one"), 0);
    flush(rec);
    set_create_500(0.0);
    kc_event_recorder_stats st = stats(rec);
    assert_int_equal(st.errors, 1);
    assert_int_equal(st.retries, 2);
    assert_int_equal(st.created, 0);
    collected c = events_about("ev", "retry");
    assert_int_equal(c.n, 0);
    /* The recorder is not stuck: the next event goes through. */
    assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, "Try", "two"), 0);
    flush(rec);
    assert_int_equal(stats(rec).created, 1);
    kc_event_recorder_free(rec);
}

/* Wait (bounded) until the recorder has retried at least once: a condition on its counters. */
static void wait_for_retry(kc_event_recorder *rec)
{
    for (int i = 0; i < 20000 && stats(rec).retries == 0; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    assert_true(stats(rec).retries > 0);
}

/* E7: a transient fault heals within the tries: the event arrives, nothing is counted as lost. */
static void test_transient_fault_heals(void **state)
{
    (void)state;
    kc_event_recorder_opts o = {.max_tries = 100000, .retry_interval_ms = 2};
    kc_event_recorder *rec = recorder(&o);
    kc_event_ref r = pod_ref("heal");
    set_create_500(1.0);
    assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, "Heal", "x"), 0);
    wait_for_retry(rec);
    set_create_500(0.0);
    flush(rec);
    kc_event_recorder_stats st = stats(rec);
    assert_int_equal(st.created, 1);
    assert_int_equal(st.errors, 0);
    collected c = events_about("ev", "heal");
    assert_int_equal(c.n, 1);
    collected_free(&c);
    kc_event_recorder_free(rec);
}

/* E7: an API error other than 5xx/429 (here 404: the namespace does not exist) is final: one try.
 */
static void test_client_error_not_retried(void **state)
{
    (void)state;
    kc_event_recorder_opts o = {.max_tries = 5, .retry_interval_ms = 1};
    kc_event_recorder *rec = recorder(&o);
    kc_event_ref r = {"v1", "Pod", "no-such-namespace", "p", NULL, NULL, NULL};
    assert_int_equal(kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, "X", "y"), 0);
    flush(rec);
    kc_event_recorder_stats st = stats(rec);
    assert_int_equal(st.errors, 1);
    assert_int_equal(st.retries, 0);
    kc_event_recorder_free(rec);
}

/* E2: with the sender stuck in retries, record still returns at once; past the queue bound events
 * are dropped (KC_EBUSY) and counted; flush reports what is pending; free does not wait for the
 * retries. */
static void test_never_blocks_queue_bound(void **state)
{
    (void)state;
    kc_event_recorder_opts o = {.component = "test-controller",
                                .queue_len = 5,
                                .max_tries = 1000,
                                .retry_interval_ms = 600000};
    kc_event_recorder *rec = recorder(&o);
    set_create_500(1.0);
    kc_event_ref r = pod_ref("blocked");
    int busy = 0;
    for (int i = 0; i < 20; i++) {
        int rc = kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, "R", "m%d", i);
        assert_true(rc == 0 || rc == KC_EBUSY);
        busy += rc == KC_EBUSY;
    }
    kc_event_recorder_stats st = stats(rec);
    assert_int_equal(st.recorded + st.dropped, 20);
    assert_int_equal(st.dropped, (uint64_t)busy);
    assert_true(st.recorded <= 6); /* 5 queued + at most 1 taken by the sender */
    assert_true(st.dropped >= 14);
    assert_true(st.queued <= 5);
    char *m = kc_event_recorder_metrics_text(rec);
    char want[128];
    snprintf(want, sizeof want,
             "kcache_events_total{component=\"test-controller\",result=\"dropped\"} %llu\n",
             (unsigned long long)st.dropped);
    assert_non_null(strstr(m, want));
    free(m);
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_event_recorder_flush(rec, 50, &err), KC_ETIMEOUT);
    kc_error_clear(&err);
    kc_event_recorder_free(rec); /* wakes the retry wait; joins */
    set_create_500(0.0);
}

/* E2: a server that accepts connections and never answers: record returns at once regardless. */
static void test_never_blocks_hung_server(void **state)
{
    (void)state;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 64), 0); /* never accepted: requests hang until the timeout */
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", ntohs(a.sin_port));
    kc_config *cfg = NULL;
    kc_client *hung = NULL;
    assert_int_equal(kc_config_from_url(url, NULL, NULL, &cfg, NULL), 0);
    kc_client_opts co = {.qps = -1, .request_timeout_ms = 1000, .max_retries = -1};
    assert_int_equal(kc_client_new(cfg, &co, &hung, NULL), 0);
    kc_config_unref(cfg);
    kc_event_recorder_opts o = {.queue_len = 4, .max_tries = 1};
    kc_event_recorder *rec = NULL;
    assert_int_equal(kc_event_recorder_new(hung, &o, &rec, NULL), 0);
    kc_event_ref r = pod_ref("hung");
    for (int i = 0; i < 50; i++) {
        int rc = kc_event_recorder_record(rec, &r, KC_EVENT_NORMAL, "R", "m%d", i);
        assert_true(rc == 0 || rc == KC_EBUSY);
    }
    kc_event_recorder_stats st = stats(rec);
    assert_int_equal(st.recorded + st.dropped, 50);
    assert_true(st.recorded <= 5);
    kc_event_recorder_free(rec); /* waits for the one request in flight (≤ 1 s timeout) */
    kc_client_free(hung);
    close(fd);
}

/* Many threads recording at once (TSan): every event is accounted for exactly once. */
typedef struct rec_thread {
    kc_event_recorder *rec;
    int id;
} rec_thread;

static void *record_many(void *arg)
{
    rec_thread *t = arg;
    char name[32];
    snprintf(name, sizeof name, "thr-%d", t->id);
    kc_event_ref r = pod_ref(name);
    for (int i = 0; i < 100; i++)
        kc_event_recorder_record(t->rec, &r, KC_EVENT_NORMAL, "Tick", "tick %d", i % 3);
    return NULL;
}

static void test_concurrent_record(void **state)
{
    (void)state;
    kc_event_recorder_opts o = {.queue_len = 50, .retry_interval_ms = 1};
    kc_event_recorder *rec = recorder(&o);
    pthread_t th[4];
    rec_thread args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (rec_thread){rec, i};
        assert_int_equal(pthread_create(&th[i], NULL, record_many, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    flush(rec);
    kc_event_recorder_stats st = stats(rec);
    assert_int_equal(st.recorded + st.dropped, 400);
    assert_int_equal(st.created + st.patched + st.spam_filtered + st.errors, st.recorded);
    assert_int_equal(st.errors, 0);
    assert_int_equal(st.queued, 0);
    kc_event_recorder_free(rec);
}

static int group_setup(void **state)
{
    (void)state;
    static const char *const nss[] = {"ev", NULL};
    return client_fixture_up("events-token", nss);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical_events_one_event_with_count),
        cmocka_unit_test(test_different_messages_separate_events),
        cmocka_unit_test(test_similar_events_combined),
        cmocka_unit_test(test_spam_filter_burst),
        cmocka_unit_test(test_invalid_events_refused),
        cmocka_unit_test(test_options_refused),
        cmocka_unit_test(test_record_obj_and_default_namespace),
        cmocka_unit_test(test_deleted_event_created_again),
        cmocka_unit_test(test_server_errors_retried_bounded),
        cmocka_unit_test(test_transient_fault_heals),
        cmocka_unit_test(test_client_error_not_retried),
        cmocka_unit_test(test_never_blocks_queue_bound),
        cmocka_unit_test(test_never_blocks_hung_server),
        cmocka_unit_test(test_concurrent_record),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
