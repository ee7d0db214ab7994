/*
 * test_server_hub_arm.c — the watch hub's non-blocking owners (src/server/storage/hub.c), as the
 * server's event loop uses them: take drains a batch in order (spec §9 #77), arm wakes once per
 * batch on an event / close / overflow / stall lifted / timer, coalescing delays only busy
 * watchers, no wake comes after free, and the bookmark progress of a filtered watcher. The blocking
 * next() side is in test_server_hub.c.
 */
#include <pthread.h>
#include <string.h>

#include "hub_fixture.h"

typedef struct waker {
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int wakes;
} waker;

static void on_wake(void *ud)
{
    waker *k = ud;
    pthread_mutex_lock(&k->mu);
    k->wakes++;
    pthread_cond_broadcast(&k->cond);
    pthread_mutex_unlock(&k->mu);
}

static void waker_init(waker *k)
{
    memset(k, 0, sizeof *k);
    pthread_mutex_init(&k->mu, NULL);
    assert_int_equal(kc__cond_init_monotonic(&k->cond), 0);
}

static int wakes(waker *k)
{
    pthread_mutex_lock(&k->mu);
    int n = k->wakes;
    pthread_mutex_unlock(&k->mu);
    return n;
}

/* Wait (condvar, generous bound) until at least n wakes happened; returns the count. */
static int wait_wakes(waker *k, int n)
{
    uint64_t deadline = kc__now_ns() + 10 * KC__NS_PER_SEC;
    pthread_mutex_lock(&k->mu);
    while (k->wakes < n && kc__cond_wait_until(&k->cond, &k->mu, deadline) == 0)
        ;
    int got = k->wakes;
    pthread_mutex_unlock(&k->mu);
    return got;
}

static void test_server_hub_take_drains_batch_in_order_77(void **state)
{
    kc__hub *hub = kc__hub_new(NULL, 0);
    kc__watcher *w = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    for (uint64_t rv = 1; rv <= 100; rv++)
        publish(hub, &key_pods, KC_WATCH_ADDED, rv, true, false);
    kc__hub_event evs[64];
    size_t n = 0;
    uint64_t want = 1;
    assert_int_equal(kc__watcher_take(w, evs, 64, &n), 0);
    assert_int_equal(n, 64);
    for (size_t i = 0; i < n; i++, want++) {
        assert_int_equal(evs[i].rv, want);
        kc__hub_event_release(&evs[i]);
    }
    assert_int_equal(kc__watcher_take(w, evs, 64, &n), 0);
    assert_int_equal(n, 36);
    for (size_t i = 0; i < n; i++, want++) {
        assert_int_equal(evs[i].rv, want);
        kc__hub_event_release(&evs[i]);
    }
    assert_int_equal(kc__watcher_take(w, evs, 64, &n), 0);
    assert_int_equal(n, 0);
    kc__watcher_close(w);
    assert_int_equal(kc__watcher_take(w, evs, 64, &n), KC_ESTOPPED);
    assert_int_equal(n, 0);
    kc__watcher_free(w);
    kc__hub_free(hub);
}

static void test_server_hub_arm_wakes_once_per_batch(void **state)
{
    waker k;
    waker_init(&k);
    kc__hub *hub = kc__hub_new(NULL, 0);
    kc__watcher *w = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    kc__watcher_set_wake(w, on_wake, &k);
    publish(hub, &key_pods, KC_WATCH_ADDED, 1, true, false);
    assert_int_equal(wakes(&k), 0);                              /* not armed: no callback */
    assert_int_equal(kc__watcher_arm(w, KC__DEADLINE_NEVER), 1); /* a due event: take again */
    kc__hub_event evs[8];
    size_t n;
    assert_int_equal(kc__watcher_take(w, evs, 8, &n), 0);
    assert_int_equal(n, 1);
    kc__hub_event_release(&evs[0]);
    assert_int_equal(kc__watcher_arm(w, KC__DEADLINE_NEVER), 0);
    publish(hub, &key_pods, KC_WATCH_ADDED, 2, true, false); /* wakes in the publisher */
    publish(hub, &key_pods, KC_WATCH_ADDED, 3, true, false); /* same batch: no second wake */
    assert_int_equal(wakes(&k), 1);
    assert_int_equal(kc__watcher_take(w, evs, 8, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(evs[0].rv, 2);
    assert_int_equal(evs[1].rv, 3);
    kc__hub_event_release(&evs[0]);
    kc__hub_event_release(&evs[1]);
    kc__watcher_free(w);
    kc__hub_free(hub);
}

static void test_server_hub_arm_wakes_on_close_overflow_and_timer(void **state)
{
    waker k;
    waker_init(&k);
    kc__hub *hub = kc__hub_new(NULL, 2);
    kc__watcher *a = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    kc__watcher *b = kc__hub_subscribe(hub, &key_cms, NULL, NULL);
    kc__watcher_set_wake(a, on_wake, &k);
    kc__watcher_set_wake(b, on_wake, &k);
    /* close */
    assert_int_equal(kc__watcher_arm(a, KC__DEADLINE_NEVER), 0);
    kc__watcher_close(a);
    assert_int_equal(wakes(&k), 1);
    assert_int_equal(kc__watcher_arm(a, KC__DEADLINE_NEVER), 1); /* closed: never sleeps */
    /* timer: not before the wake time */
    uint64_t at = kc__now_ns() + 20 * KC__NS_PER_MS;
    assert_int_equal(kc__watcher_arm(b, at), 0);
    assert_int_equal(wait_wakes(&k, 2), 2);
    assert_true(kc__now_ns() >= at);
    /* overflow (bound 2): the wake comes with the first event; once full, take reports it */
    assert_int_equal(kc__watcher_arm(b, KC__DEADLINE_NEVER), 0);
    publish(hub, &key_cms, KC_WATCH_ADDED, 1, true, false);
    assert_int_equal(wakes(&k), 3);
    assert_int_equal(kc__watcher_arm(b, KC__DEADLINE_NEVER), 1); /* event due */
    publish(hub, &key_cms, KC_WATCH_ADDED, 2, true, false);
    publish(hub, &key_cms, KC_WATCH_ADDED, 3, true, false);
    kc__hub_event ev;
    size_t n;
    assert_int_equal(kc__watcher_take(b, &ev, 1, &n), KC_ETOOLARGE);
    kc__watcher_free(a);
    kc__watcher_free(b);
    kc__hub_free(hub);
}

static void test_server_hub_arm_wakes_when_stall_lifted(void **state)
{
    waker k;
    waker_init(&k);
    kc_server_faults f;
    memset(&f, 0, sizeof f);
    f.watch_stall = true;
    kc__faults *faults = kc__faults_new(&f, 1);
    kc__hub *hub = kc__hub_new(faults, 0);
    kc__watcher *w = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    kc__watcher_set_wake(w, on_wake, &k);
    publish(hub, &key_pods, KC_WATCH_ADDED, 1, true, false);
    assert_int_equal(kc__watcher_arm(w, KC__DEADLINE_NEVER), 0); /* stalled: nothing ready */
    kc__hub_event ev;
    size_t n;
    assert_int_equal(kc__watcher_take(w, &ev, 1, &n), 0);
    assert_int_equal(n, 0);
    f.watch_stall = false;
    kc__faults_set(faults, &f);
    assert_int_equal(wakes(&k), 1);
    assert_int_equal(kc__watcher_take(w, &ev, 1, &n), 0);
    assert_int_equal(n, 1);
    kc__hub_event_release(&ev);
    kc__watcher_free(w);
    kc__hub_free(hub);
    kc__faults_free(faults);
}

static void test_server_hub_coalesce_delays_only_busy_watchers(void **state)
{
    waker k;
    waker_init(&k);
    kc__hub *hub = kc__hub_new(NULL, 0);
    kc__hub_set_coalesce(hub, 200 * KC__NS_PER_MS, 2);
    kc__watcher *w = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    kc__watcher_set_wake(w, on_wake, &k);
    kc__hub_event evs[8];
    size_t n;
    /* one event per batch: every wake is immediate */
    for (uint64_t rv = 1; rv <= 3; rv++) {
        assert_int_equal(kc__watcher_arm(w, KC__DEADLINE_NEVER), 0);
        publish(hub, &key_pods, KC_WATCH_ADDED, rv, true, false);
        assert_int_equal(wakes(&k), (int)rv);
        assert_int_equal(kc__watcher_take(w, evs, 8, &n), 0);
        assert_int_equal(n, 1);
        kc__hub_event_release(&evs[0]);
    }
    /* a batch of 3 marks the watcher busy: the next wake waits for the period */
    assert_int_equal(kc__watcher_arm(w, KC__DEADLINE_NEVER), 0);
    uint64_t t4 = kc__now_ns();
    publish(hub, &key_pods, KC_WATCH_ADDED, 4, true, false);
    assert_int_equal(wakes(&k), 4);
    publish(hub, &key_pods, KC_WATCH_ADDED, 5, true, false);
    publish(hub, &key_pods, KC_WATCH_ADDED, 6, true, false);
    assert_int_equal(kc__watcher_take(w, evs, 8, &n), 0);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < n; i++)
        kc__hub_event_release(&evs[i]);
    assert_int_equal(kc__watcher_arm(w, KC__DEADLINE_NEVER), 0);
    uint64_t t0 = kc__now_ns();
    publish(hub, &key_pods, KC_WATCH_ADDED, 7, true, false);
    publish(hub, &key_pods, KC_WATCH_ADDED, 8, true, false);
    int now_wakes = wakes(&k);
    assert_true(now_wakes == 4 || kc__now_ns() - t4 >= 200 * KC__NS_PER_MS); /* not at once */
    assert_int_equal(wait_wakes(&k, 5), 5); /* the hub timer wakes it */
    assert_true(kc__now_ns() - t0 < 10 * KC__NS_PER_SEC);
    assert_int_equal(kc__watcher_take(w, evs, 8, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(evs[0].rv, 7);
    assert_int_equal(evs[1].rv, 8);
    kc__hub_event_release(&evs[0]);
    kc__hub_event_release(&evs[1]);
    kc__watcher_free(w);
    kc__hub_free(hub);
}

static void test_server_hub_no_wake_after_free(void **state)
{
    waker k;
    waker_init(&k);
    kc__hub *hub = kc__hub_new(NULL, 0);
    kc__watcher *w = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    kc__watcher_set_wake(w, on_wake, &k);
    assert_int_equal(kc__watcher_arm(w, kc__now_ns() + 5 * KC__NS_PER_MS), 0);
    kc__watcher_free(w); /* armed with a timer: freeing must not call back */
    publish(hub, &key_pods, KC_WATCH_ADDED, 1, true, false);
    kc__hub_close_all(hub);
    kc__hub_free(hub); /* joins the timer thread */
    assert_int_equal(wakes(&k), 0);
}

/* Deliver only objects labelled sel=yes (the filter of a scoped watch). */
static kc_watch_type only_yes(void *ud, const kc__hub_event *ev, kc_obj **ret)
{
    (void)ud;
    *ret = ev->obj;
    const char *v = kc_obj_label(ev->obj, "sel");
    return v && !strcmp(v, "yes") ? ev->type : 0;
}

/* Bookmark progress (spec §5.4, #84): events filtered out (or on other topics) move it to the
 * last published RV; a queued event holds it just before itself until taken; a closed or
 * overflowed watcher (queue dropped) has none; a reset RV counter starts it again. */
static void test_server_hub_progress_follows_filtered_events_84(void **state)
{
    (void)state;
    kc__hub *hub = kc__hub_new(NULL, 2);
    kc__watcher *w = kc__hub_subscribe(hub, &key_pods, only_yes, NULL);
    publish(hub, &key_pods, KC_WATCH_ADDED, 5, false, false); /* filtered out */
    publish(hub, &key_cms, KC_WATCH_ADDED, 6, true, false);   /* another resource */
    assert_int_equal(kc__watcher_progress(w), 6);
    publish(hub, &key_pods, KC_WATCH_ADDED, 7, true, false); /* queued for w */
    publish(hub, &key_pods, KC_WATCH_ADDED, 8, false, false);
    assert_int_equal(kc__watcher_progress(w), 6);
    kc__hub_event ev;
    size_t n = 0;
    assert_int_equal(kc__watcher_take(w, &ev, 1, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(ev.rv, 7);
    kc__hub_event_release(&ev);
    assert_int_equal(kc__watcher_progress(w), 8);
    publish(hub, &key_pods, KC_WATCH_ADDED, 9, true, false);
    publish(hub, &key_pods, KC_WATCH_ADDED, 10, true, false);
    publish(hub, &key_pods, KC_WATCH_ADDED, 11, true, false); /* over the bound of 2 */
    assert_int_equal(kc__watcher_progress(w), 0);
    kc__watcher *w2 = kc__hub_subscribe(hub, &key_pods, NULL, NULL);
    kc__hub_close_all(hub);
    assert_int_equal(kc__watcher_progress(w2), 0);
    kc__hub_reset_rv(hub, 0);
    kc__watcher *w3 = kc__hub_subscribe(hub, &key_pods, only_yes, NULL);
    assert_int_equal(kc__watcher_progress(w3), 0);
    publish(hub, &key_pods, KC_WATCH_ADDED, 2, false, false);
    assert_int_equal(kc__watcher_progress(w3), 2);
    kc__watcher_free(w);
    kc__watcher_free(w2);
    kc__watcher_free(w3);
    kc__hub_free(hub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_hub_take_drains_batch_in_order_77),
        cmocka_unit_test(test_server_hub_arm_wakes_once_per_batch),
        cmocka_unit_test(test_server_hub_arm_wakes_on_close_overflow_and_timer),
        cmocka_unit_test(test_server_hub_arm_wakes_when_stall_lifted),
        cmocka_unit_test(test_server_hub_coalesce_delays_only_busy_watchers),
        cmocka_unit_test(test_server_hub_no_wake_after_free),
        cmocka_unit_test(test_server_hub_progress_follows_filtered_events_84),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
