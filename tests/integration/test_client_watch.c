/*
 * test_client_watch.c — kc_client_watch against the embedded API server over TLS with a bearer
 * token: events from a list RV with bookmarks, cancel from another thread (a wake-up, not a
 * poll), a clean end when the server closes the stream, 410 for a compacted RV, a token fired
 * before the start, and one token cancelling two open watches. The other REST verbs are in
 * test_client_verbs.c; the server and client set-up is shared through test_client_fixture.h.
 */
#include "http/internal.h"
#include "kcache/client.h"
#include "kcache/server.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "test_client_fixture.h"

#define TOKEN "watch-test-token"

static uint64_t kc__test_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int group_setup(void **state)
{
    static const char *const nss[] = {"watch", NULL};
    return client_fixture_up(TOKEN, nss);
}

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int added, errors, bookmarks;
    int error_code;
    char rv[32];
    kc_cancel *cancel;
    int rc;
    bool done;
    kc_watch_opts opts;
} wstate;

static int on_event(void *ud, const kc_watch_event *ev)
{
    wstate *w = ud;
    pthread_mutex_lock(&w->mu);
    if (ev->type == KC_WATCH_ADDED)
        w->added++;
    if (ev->type == KC_WATCH_BOOKMARK)
        w->bookmarks++;
    if (ev->type == KC_WATCH_ERROR) {
        w->errors++;
        w->error_code = ev->error ? ev->error->code : 0;
    }
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return 0;
}

static void *watch_thread(void *p)
{
    wstate *w = p;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_client_watch(cli, &CM, "watch", &w->opts, on_event, w, w->cancel, &err);
    kc_error_clear(&err);
    pthread_mutex_lock(&w->mu);
    w->rc = rc;
    w->done = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Wait (bounded) until pred holds. */
static bool wait_for(wstate *w, bool (*pred)(wstate *), int ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&w->mu);
    while (!pred(w))
        if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) != 0)
            break;
    bool ok = pred(w);
    pthread_mutex_unlock(&w->mu);
    return ok;
}

static bool got_two_added(wstate *w)
{
    return w->added >= 2;
}
static bool is_done(wstate *w)
{
    return w->done;
}

static void wstate_init(wstate *w)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    assert_int_equal(kc_cancel_new(&w->cancel, NULL), 0);
}

static void test_client_watch_events_and_cancel(void **state)
{
    kc_obj_unref(create_cm("watch", "w0", NULL));
    kc_list_meta meta = {0};
    assert_int_equal(kc_client_list(cli, &CM, "watch", NULL, &meta, NULL, NULL, NULL), 0);
    wstate w;
    wstate_init(&w);
    w.opts.resource_version = meta.resource_version;
    w.opts.allow_bookmarks = true;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, watch_thread, &w), 0);
    kc_obj_unref(create_cm("watch", "w1", NULL));
    kc_obj_unref(create_cm("watch", "w2", NULL));
    assert_true(wait_for(&w, got_two_added, 10000));
    kc_cancel_fire(w.cancel);
    /* Woken, not polled: the open stream's transfer is registered with the token, so the fire
     * must have called curl_multi_wakeup on it. This replaces a "< 900 ms" bound, which both
     * flaked under load and could not tell a wake-up from the 1 s curl_multi_poll timeout. The
     * 5 s bound on the end of the watch is only a liveness guard. */
    assert_int_equal(kc__cancel_wakeups(w.cancel), 1);
    assert_true(wait_for(&w, is_done, 5000));
    pthread_join(th, NULL);
    assert_int_equal(w.rc, KC_ECANCELED);
    assert_int_equal(w.added, 2);
    kc_cancel_free(w.cancel);
    kc_list_meta_clear(&meta);
}

static void test_client_watch_clean_end(void **state)
{
    wstate w;
    wstate_init(&w);
    w.opts.timeout_s = 1; /* the server ends the stream after 1 s */
    uint64_t t0 = kc__test_now_ms();
    watch_thread(&w);
    assert_int_equal(w.rc, 0);
    assert_true(kc__test_now_ms() - t0 >= 900);
    assert_true(w.added >= 1); /* no RV: synthetic ADDED for the current state */
    kc_cancel_free(w.cancel);
}

static void test_client_watch_too_old_is_gone(void **state)
{
    kc_obj_unref(create_cm("watch", "old1", NULL));
    kc_list_meta meta = {0};
    assert_int_equal(kc_client_list(cli, &CM, "watch", NULL, &meta, NULL, NULL, NULL), 0);
    kc_obj_unref(create_cm("watch", "old2", NULL));
    assert_int_equal(kc_server_compact(srv), 0);
    wstate w;
    wstate_init(&w);
    w.opts.resource_version = meta.resource_version;
    w.opts.timeout_s = 2;
    watch_thread(&w);
    /* Either the HTTP status (410) or an ERROR event carrying the 410 Status. */
    if (w.rc == 0) {
        assert_int_equal(w.errors, 1);
        assert_int_equal(w.error_code, KC_EGONE);
    } else {
        assert_int_equal(w.rc, KC_EGONE);
    }
    kc_cancel_free(w.cancel);
    kc_list_meta_clear(&meta);
}

static void test_client_watch_cancelled_before_start(void **state)
{
    wstate w;
    wstate_init(&w);
    kc_cancel_fire(w.cancel);
    watch_thread(&w);
    assert_int_equal(w.rc, KC_ECANCELED);
    assert_int_equal(w.added, 0);
    kc_cancel_free(w.cancel);
}

static bool got_one_added(wstate *w)
{
    return w->added >= 1;
}

static void test_client_watch_one_cancel_stops_two_watches(void **state)
{
    kc_obj_unref(create_cm("watch", "shared-cancel", NULL));
    wstate a, b;
    wstate_init(&a);
    wstate_init(&b);
    kc_cancel_free(b.cancel);
    b.cancel = a.cancel;
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, watch_thread, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, watch_thread, &b), 0);
    assert_true(wait_for(&a, got_one_added, 10000)); /* both streams are open */
    assert_true(wait_for(&b, got_one_added, 10000));
    kc_cancel_fire(a.cancel);
    assert_true(wait_for(&a, is_done, 5000));
    assert_true(wait_for(&b, is_done, 5000));
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_int_equal(a.rc, KC_ECANCELED);
    assert_int_equal(b.rc, KC_ECANCELED);
    kc_cancel_free(a.cancel);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_watch_events_and_cancel),
        cmocka_unit_test(test_client_watch_clean_end),
        cmocka_unit_test(test_client_watch_too_old_is_gone),
        cmocka_unit_test(test_client_watch_cancelled_before_start),
        cmocka_unit_test(test_client_watch_one_cancel_stops_two_watches),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
