/*
 * test_server_hub.c — the watch fan-out hub (src/server/storage/hub.c) through the blocking next():
 * order (spec §9 #77), delays that keep order, bounded queues and overflow, filter transitions
 * (#80), keys kept apart, stall, close/close_all/free waking a blocked next() from another
 * thread, and many watchers × many events across threads (run under TSan by `make tsan`). The
 * non-blocking owners (take/arm/wake, coalescing) are in test_server_hub_arm.c.
 */
#include <pthread.h>
#include <string.h>

#include "hub_fixture.h"

static void test_server_hub_delivers_in_order(void **state)
{
    kc__hub *hub = kc__hub_new(NULL, 0);
    kc__watcher *w = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    assert_non_null(w);
    for (uint64_t rv = 1; rv <= 100; rv++)
        publish(hub, &key_pods, KC_WATCH_ADDED, rv, true, false);
    assert_int_equal(kc__watcher_queued(w), 100);
    for (uint64_t rv = 1; rv <= 100; rv++) {
        kc__hub_event ev;
        assert_int_equal(kc__watcher_next(w, &ev, 1000), 0);
        assert_int_equal(ev.rv, rv);
        assert_int_equal(ev.type, KC_WATCH_ADDED);
        assert_int_equal(kc_obj_rv_int(ev.obj), rv);
        assert_null(ev.old);
        kc__hub_event_release(&ev);
        assert_null(ev.obj);
    }
    kc__hub_event ev;
    assert_int_equal(kc__watcher_next(w, &ev, 0), KC_ETIMEOUT);
    kc__watcher_free(w);
    kc__hub_free(hub);
}

static void test_server_hub_timeout_when_idle(void **state)
{
    kc__hub *hub = kc__hub_new(NULL, 0);
    kc__watcher *w = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    kc__hub_event ev;
    uint64_t t0 = kc__now_ms();
    assert_int_equal(kc__watcher_next(w, &ev, 50), KC_ETIMEOUT);
    assert_true(kc__now_ms() - t0 >= 49);
    kc__watcher_free(w);
    kc__hub_free(hub);
}

static void test_server_hub_keys_are_separate(void **state)
{
    kc__hub *hub = kc__hub_new(NULL, 0);
    kc__watcher *wp = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    kc__watcher *wc = kc__hub_subscribe(hub, &key_cms, NULL, NULL);
    publish(hub, &key_cms, KC_WATCH_ADDED, 1, true, false);
    assert_int_equal(kc__watcher_queued(wp), 0);
    assert_int_equal(kc__watcher_queued(wc), 1);
    assert_int_equal(kc__hub_watchers(hub), 2);
    kc__watcher_free(wp);
    assert_int_equal(kc__hub_watchers(hub), 1);
    kc__watcher_free(wc);
    assert_int_equal(kc__hub_watchers(hub), 0);
    kc__hub_free(hub);
}

/* Every event is delayed by 10..40 ms but comes out in publish order (#77 under --watch-delay). */
static void test_server_hub_order_preserved_under_random_delays(void **state)
{
    kc_server_faults f = {.watch_delay_min_ms = 10, .watch_delay_max_ms = 40};
    kc__faults *faults = kc__faults_new(&f, 1234);
    kc__hub *hub = kc__hub_new(faults, 0);
    kc__watcher *w = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    uint64_t t0 = kc__now_ns();
    for (uint64_t rv = 1; rv <= 200; rv++)
        publish(hub, &key_pods, KC_WATCH_ADDED, rv, true, false);
    kc__hub_event ev;
    uint64_t first_ns = 0;
    for (uint64_t rv = 1; rv <= 200; rv++) {
        assert_int_equal(kc__watcher_next(w, &ev, 5000), 0);
        if (rv == 1)
            first_ns = kc__now_ns();
        assert_int_equal(ev.rv, rv);
        kc__hub_event_release(&ev);
    }
    assert_true(first_ns - t0 >= 10 * KC__NS_PER_MS); /* never before the minimum delay */
    kc__watcher_free(w);
    kc__hub_free(hub);
    kc__faults_free(faults);
}

static void test_server_hub_delayed_event_not_due_yet(void **state)
{
    kc_server_faults f = {.watch_delay_min_ms = 300, .watch_delay_max_ms = 300};
    kc__faults *faults = kc__faults_new(&f, 1);
    kc__hub *hub = kc__hub_new(faults, 0);
    kc__watcher *w = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    publish(hub, &key_pods, KC_WATCH_ADDED, 1, true, false);
    kc__hub_event ev;
    assert_int_equal(kc__watcher_next(w, &ev, 0), KC_ETIMEOUT);
    assert_int_equal(kc__watcher_queued(w), 1);
    assert_int_equal(kc__watcher_next(w, &ev, 5000), 0);
    assert_int_equal(ev.rv, 1);
    kc__hub_event_release(&ev);
    kc__watcher_free(w);
    kc__hub_free(hub);
    kc__faults_free(faults);
}

/* A full queue marks the watcher overflowed, releases its events, and stops growing. */
static void test_server_hub_overflow_closes_watcher_bounded(void **state)
{
    kc__hub *hub = kc__hub_new(NULL, 10);
    kc__watcher *slow = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    kc__watcher *fast = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    kc__hub_event ev;
    for (uint64_t rv = 1; rv <= 10; rv++) {
        publish(hub, &key_pods, KC_WATCH_ADDED, rv, true, false);
        assert_int_equal(kc__watcher_next(fast, &ev, 0), 0);
        kc__hub_event_release(&ev);
    }
    assert_int_equal(kc__watcher_queued(slow), 10);
    for (uint64_t rv = 11; rv <= 1000; rv++) {
        publish(hub, &key_pods, KC_WATCH_ADDED, rv, true, false);
        assert_true(kc__watcher_queued(slow) <= 10);
        assert_int_equal(kc__watcher_next(fast, &ev, 0), 0);
        assert_int_equal(ev.rv, rv);
        kc__hub_event_release(&ev);
    }
    assert_int_equal(kc__watcher_queued(slow), 0);
    assert_int_equal(kc__watcher_next(slow, &ev, 1000), KC_ETOOLARGE);
    assert_int_equal(kc__hub_watchers(hub), 1);
    kc__watcher_free(slow);
    kc__watcher_free(fast);
    kc__hub_free(hub);
}

/* Selector semantics as server-core implements them (#80): the hub delivers what the filter
 * decides, including DELETED carrying the old object. */
static kc_watch_type sel_filter(void *ud, const kc__hub_event *ev, kc_obj **ret_obj)
{
    int *calls = ud;
    (*calls)++;
    bool now = ev->obj && !strcmp(kc_obj_label(ev->obj, "sel"), "yes");
    bool was = ev->old && !strcmp(kc_obj_label(ev->old, "sel"), "yes");
    if (now && !was) {
        *ret_obj = ev->obj;
        return KC_WATCH_ADDED;
    }
    if (now && was) {
        *ret_obj = ev->obj;
        return ev->type;
    }
    if (was) {
        *ret_obj = ev->old;
        return KC_WATCH_DELETED;
    }
    return 0;
}

static void test_server_hub_filter_transitions(void **state)
{
    kc__hub *hub = kc__hub_new(NULL, 0);
    int calls = 0;
    kc__watcher *w = kc__hub_subscribe(hub, &key_pods, sel_filter, &calls);
    publish(hub, &key_pods, KC_WATCH_ADDED, 1, false, false);   /* not selected: nothing */
    publish(hub, &key_pods, KC_WATCH_MODIFIED, 2, true, false); /* relabelled in: ADDED */
    publish(hub, &key_pods, KC_WATCH_MODIFIED, 3, true, true);  /* stays in: MODIFIED */
    publish(hub, &key_pods, KC_WATCH_MODIFIED, 4, false, true); /* relabelled out: DELETED */
    publish(hub, &key_pods, KC_WATCH_MODIFIED, 5, false, false);
    assert_int_equal(calls, 5);
    kc__hub_event ev;
    assert_int_equal(kc__watcher_next(w, &ev, 0), 0);
    assert_int_equal(ev.type, KC_WATCH_ADDED);
    assert_int_equal(ev.rv, 2);
    kc__hub_event_release(&ev);
    assert_int_equal(kc__watcher_next(w, &ev, 0), 0);
    assert_int_equal(ev.type, KC_WATCH_MODIFIED);
    assert_int_equal(ev.rv, 3);
    kc__hub_event_release(&ev);
    assert_int_equal(kc__watcher_next(w, &ev, 0), 0);
    assert_int_equal(ev.type, KC_WATCH_DELETED);
    assert_int_equal(ev.rv, 4);
    assert_string_equal(kc_obj_label(ev.obj, "sel"), "yes"); /* the old state */
    kc__hub_event_release(&ev);
    assert_int_equal(kc__watcher_next(w, &ev, 0), KC_ETIMEOUT);
    kc__watcher_free(w);
    kc__hub_free(hub);
}

typedef struct waiter {
    kc__watcher *w;
    int rc;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool started;
} waiter;

static void *wait_thread(void *arg)
{
    waiter *wt = arg;
    pthread_mutex_lock(&wt->mu);
    wt->started = true;
    pthread_cond_signal(&wt->cv);
    pthread_mutex_unlock(&wt->mu);
    kc__hub_event ev = {0};
    wt->rc = kc__watcher_next(wt->w, &ev, -1);
    if (wt->rc == 0)
        kc__hub_event_release(&ev);
    return NULL;
}

static void start_waiter(waiter *wt, pthread_t *th, kc__watcher *w)
{
    memset(wt, 0, sizeof *wt);
    wt->w = w;
    wt->rc = 1;
    pthread_mutex_init(&wt->mu, NULL);
    pthread_cond_init(&wt->cv, NULL);
    assert_int_equal(pthread_create(th, NULL, wait_thread, wt), 0);
    pthread_mutex_lock(&wt->mu);
    while (!wt->started)
        pthread_cond_wait(&wt->cv, &wt->mu);
    pthread_mutex_unlock(&wt->mu);
}

static void end_waiter(waiter *wt, pthread_t th)
{
    pthread_join(th, NULL);
    pthread_mutex_destroy(&wt->mu);
    pthread_cond_destroy(&wt->cv);
}

static void test_server_hub_close_wakes_blocked_next(void **state)
{
    kc__hub *hub = kc__hub_new(NULL, 0);
    kc__watcher *w = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    waiter wt;
    pthread_t th;
    start_waiter(&wt, &th, w);
    kc__watcher_close(w);
    kc__watcher_close(w); /* idempotent */
    end_waiter(&wt, th);
    assert_int_equal(wt.rc, KC_ESTOPPED);
    kc__watcher_free(w);
    kc__hub_free(hub);
}

static void test_server_hub_close_all_wakes_every_watcher(void **state)
{
    kc__hub *hub = kc__hub_new(NULL, 0);
    kc__watcher *a = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    kc__watcher *b = kc__hub_subscribe(hub, &key_cms, NULL, NULL);
    waiter wa, wb;
    pthread_t ta, tb;
    start_waiter(&wa, &ta, a);
    start_waiter(&wb, &tb, b);
    kc__hub_close_all(hub);
    end_waiter(&wa, ta);
    end_waiter(&wb, tb);
    assert_int_equal(wa.rc, KC_ESTOPPED);
    assert_int_equal(wb.rc, KC_ESTOPPED);
    assert_int_equal(kc__hub_watchers(hub), 0);
    kc__watcher_free(a);
    kc__watcher_free(b);
    kc__hub_free(hub);
}

/* A watcher may outlive the hub: next() reports KC_ESTOPPED and free stays safe. */
static void test_server_hub_free_before_watcher(void **state)
{
    kc__hub *hub = kc__hub_new(NULL, 0);
    kc__watcher *w = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    publish(hub, &key_pods, KC_WATCH_ADDED, 1, true, false);
    waiter wt;
    pthread_t th;
    kc__hub_free(hub);
    start_waiter(&wt, &th, w);
    end_waiter(&wt, th);
    assert_int_equal(wt.rc, KC_ESTOPPED);
    kc__watcher_free(w);
}

static void test_server_hub_stall_holds_events(void **state)
{
    kc_server_faults f = {.watch_stall = true};
    kc__faults *faults = kc__faults_new(&f, 1);
    kc__hub *hub = kc__hub_new(faults, 0);
    kc__watcher *w = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    publish(hub, &key_pods, KC_WATCH_ADDED, 1, true, false);
    kc__hub_event ev;
    assert_int_equal(kc__watcher_next(w, &ev, 20), KC_ETIMEOUT);
    assert_int_equal(kc__watcher_queued(w), 1); /* held, not lost */
    waiter wt;
    pthread_t th;
    start_waiter(&wt, &th, w);
    f.watch_stall = false;
    kc__faults_set(faults, &f); /* lifting the stall wakes the blocked next() */
    end_waiter(&wt, th);
    assert_int_equal(wt.rc, 0);
    assert_int_equal(kc__watcher_queued(w), 0);
    kc__watcher_free(w);
    kc__hub_free(hub);
    kc__faults_free(faults);
}

/* ---- many watchers × many events across threads ---------------------------------------------- */

#define N_WATCHERS 16
#define N_EVENTS   5000

typedef struct reader {
    kc__watcher *w;
    uint64_t got;
    bool in_order;
} reader;

static void *reader_thread(void *arg)
{
    reader *r = arg;
    r->in_order = true;
    uint64_t last = 0;
    while (r->got < N_EVENTS) {
        kc__hub_event ev;
        if (kc__watcher_next(r->w, &ev, 10000) != 0)
            break;
        if (ev.rv != last + 1)
            r->in_order = false;
        last = ev.rv;
        r->got++;
        kc__hub_event_release(&ev);
    }
    return NULL;
}

static void test_server_hub_many_watchers_many_events(void **state)
{
    kc__hub *hub = kc__hub_new(NULL, N_EVENTS);
    reader rd[N_WATCHERS];
    pthread_t th[N_WATCHERS];
    for (int i = 0; i < N_WATCHERS; i++) {
        rd[i] = (reader){.w = kc__hub_subscribe(hub, &key_pods, NULL, NULL)};
        assert_non_null(rd[i].w);
        assert_int_equal(pthread_create(&th[i], NULL, reader_thread, &rd[i]), 0);
    }
    kc__watcher *other = kc__hub_subscribe(hub, &key_cms, NULL, NULL);
    for (uint64_t rv = 1; rv <= N_EVENTS; rv++) {
        publish(hub, &key_pods, KC_WATCH_ADDED, rv, true, false);
        if (rv % 100 == 0)
            publish(hub, &key_cms, KC_WATCH_ADDED, rv, true, false);
    }
    for (int i = 0; i < N_WATCHERS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(rd[i].got, N_EVENTS);
        assert_true(rd[i].in_order);
        kc__watcher_free(rd[i].w);
    }
    assert_int_equal(kc__watcher_queued(other), N_EVENTS / 100);
    kc__watcher_free(other);
    kc__hub_free(hub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_hub_delivers_in_order),
        cmocka_unit_test(test_server_hub_timeout_when_idle),
        cmocka_unit_test(test_server_hub_keys_are_separate),
        cmocka_unit_test(test_server_hub_order_preserved_under_random_delays),
        cmocka_unit_test(test_server_hub_delayed_event_not_due_yet),
        cmocka_unit_test(test_server_hub_overflow_closes_watcher_bounded),
        cmocka_unit_test(test_server_hub_filter_transitions),
        cmocka_unit_test(test_server_hub_close_wakes_blocked_next),
        cmocka_unit_test(test_server_hub_close_all_wakes_every_watcher),
        cmocka_unit_test(test_server_hub_free_before_watcher),
        cmocka_unit_test(test_server_hub_stall_holds_events),
        cmocka_unit_test(test_server_hub_many_watchers_many_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
