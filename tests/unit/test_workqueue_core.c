/*
 * Unit tests for kc_workqueue's core queue (spec §1.1, rules W1–W11): FIFO order, dedup, the
 * dirty and processing sets (W6's sequence literally), done of a key not processing (W10),
 * shutdown (W8) and shutdown with drain (W9), keys by value (W11), argument checks.
 * No sleeps: every wait is on the queue itself (kc_workqueue_get) or on an observable state.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "workqueue/internal.h"
#include "kcache/workqueue.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kc_workqueue *new_q(void)
{
    kc_workqueue *q = NULL;
    assert_int_equal(kc_workqueue_new(NULL, &q, NULL), 0);
    return q;
}

static void get_expect(kc_workqueue *q, const char *want)
{
    const char *k = NULL;
    assert_int_equal(kc_workqueue_get(q, 0, &k), 0);
    assert_string_equal(k, want);
}

/* W1, W4, W5: keys come out in the order they went in; len counts the FIFO. */
static void test_workqueue_fifo(void **st)
{
    kc_workqueue *q = new_q();
    assert_int_equal(kc_workqueue_add(q, "ns/a"), 0);
    assert_int_equal(kc_workqueue_add(q, "ns/b"), 0);
    assert_int_equal(kc_workqueue_add(q, "ns/c"), 0);
    assert_int_equal(kc_workqueue_len(q), 3);
    get_expect(q, "ns/a");
    assert_int_equal(kc_workqueue_len(q), 2); /* W7: processing is not counted */
    get_expect(q, "ns/b");
    get_expect(q, "ns/c");
    const char *k = NULL;
    assert_int_equal(kc_workqueue_get(q, 0, &k), KC_ETIMEOUT);
    kc_workqueue_free(q);
}

/* W3: adding a queued key again changes nothing (one entry, same place). */
static void test_workqueue_add_dedup(void **st)
{
    kc_workqueue *q = new_q();
    assert_int_equal(kc_workqueue_add(q, "ns/a"), 0);
    assert_int_equal(kc_workqueue_add(q, "ns/b"), 0);
    assert_int_equal(kc_workqueue_add(q, "ns/a"), 0);
    assert_int_equal(kc_workqueue_len(q), 2);
    get_expect(q, "ns/a");
    get_expect(q, "ns/b");
    kc_workqueue_free(q);
}

/* W6, literally: Add(a); Get→a; Add(a)×3; Len()==0; Done(a); Len()==1; Get→a. */
static void test_workqueue_w6_readd_during_processing(void **st)
{
    kc_workqueue *q = new_q();
    assert_int_equal(kc_workqueue_add(q, "a"), 0);
    get_expect(q, "a");
    for (int i = 0; i < 3; i++)
        assert_int_equal(kc_workqueue_add(q, "a"), 0);
    assert_int_equal(kc_workqueue_len(q), 0); /* never handed to a second worker */
    const char *k = NULL;
    assert_int_equal(kc_workqueue_get(q, 0, &k), KC_ETIMEOUT);
    assert_int_equal(kc_workqueue_done(q, "a"), 0);
    assert_int_equal(kc_workqueue_len(q), 1); /* exactly once more */
    get_expect(q, "a");
    assert_int_equal(kc_workqueue_done(q, "a"), 0);
    assert_int_equal(kc_workqueue_len(q), 0);
    assert_int_equal(kc__workqueue_records(q), 0); /* nothing left behind */
    kc_workqueue_free(q);
}

/* W10: done of a key that is not processing is KC_EINVAL and changes nothing. */
static void test_workqueue_done_not_processing(void **st)
{
    kc_workqueue *q = new_q();
    assert_int_equal(kc_workqueue_done(q, "never"), KC_EINVAL);
    assert_int_equal(kc_workqueue_add(q, "a"), 0);
    assert_int_equal(kc_workqueue_done(q, "a"), KC_EINVAL); /* queued, not processing */
    assert_int_equal(kc_workqueue_len(q), 1);
    get_expect(q, "a");
    assert_int_equal(kc_workqueue_add(q, "a"), 0); /* dirty while processing */
    assert_int_equal(kc_workqueue_done(q, "a"), 0);
    assert_int_equal(kc_workqueue_len(q), 1);
    assert_int_equal(kc_workqueue_done(q, "a"), KC_EINVAL); /* a second done: queued once only */
    assert_int_equal(kc_workqueue_len(q), 1);
    get_expect(q, "a");
    assert_int_equal(kc_workqueue_done(q, "a"), 0);
    assert_int_equal(kc_workqueue_done(q, "a"), KC_EINVAL);
    assert_int_equal(kc_workqueue_len(q), 0);
    kc_workqueue_free(q);
}

/* W11: the key is copied on add and compared by value; done takes an equal string. */
static void test_workqueue_keys_by_value(void **st)
{
    kc_workqueue *q = new_q();
    char buf[32];
    strcpy(buf, "default/web-0");
    assert_int_equal(kc_workqueue_add(q, buf), 0);
    strcpy(buf, "default/web-1");
    assert_int_equal(kc_workqueue_add(q, buf), 0);
    memset(buf, 'x', sizeof(buf) - 1);
    const char *k = NULL;
    assert_int_equal(kc_workqueue_get(q, 0, &k), 0);
    assert_string_equal(k, "default/web-0");
    char other[] = "default/web-0";
    assert_ptr_not_equal(other, k);
    assert_int_equal(kc_workqueue_done(q, other), 0);
    get_expect(q, "default/web-1");
    kc_workqueue_free(q);
}

/* W2, W8: after shutdown adds are dropped, get drains what is queued, then KC_ESTOPPED;
 * shutdown is idempotent. */
static void test_workqueue_shutdown_drains_fifo(void **st)
{
    kc_workqueue *q = new_q();
    assert_int_equal(kc_workqueue_add(q, "a"), 0);
    assert_int_equal(kc_workqueue_add(q, "b"), 0);
    kc_workqueue_shutdown(q);
    kc_workqueue_shutdown(q);
    assert_int_equal(kc_workqueue_add(q, "c"), KC_ESTOPPED);
    assert_int_equal(kc_workqueue_add_after(q, "c", 0), KC_ESTOPPED);
    assert_int_equal(kc_workqueue_add_rate_limited(q, "c"), KC_ESTOPPED);
    assert_int_equal(kc_workqueue_len(q), 2);
    get_expect(q, "a");
    get_expect(q, "b");
    const char *k = NULL;
    assert_int_equal(kc_workqueue_get(q, -1, &k), KC_ESTOPPED);
    assert_int_equal(kc_workqueue_done(q, "a"), 0); /* done still works after shutdown */
    kc_workqueue_free(q);
}

typedef struct getter {
    kc_workqueue *q;
    int rc;
    char key[64];
} getter;

static void *get_forever(void *arg)
{
    getter *g = arg;
    const char *k = NULL;
    g->rc = kc_workqueue_get(g->q, -1, &k);
    if (g->rc == 0)
        snprintf(g->key, sizeof(g->key), "%s", k);
    return NULL;
}

/* W5: a blocked get returns the key added later. */
static void test_workqueue_get_blocks_until_add(void **st)
{
    kc_workqueue *q = new_q();
    getter g = {q, 1, ""};
    pthread_t t;
    pthread_create(&t, NULL, get_forever, &g);
    assert_int_equal(kc_workqueue_add(q, "late"), 0);
    pthread_join(t, NULL);
    assert_int_equal(g.rc, 0);
    assert_string_equal(g.key, "late");
    kc_workqueue_free(q);
}

/* W8: shutdown wakes every blocked get with KC_ESTOPPED. */
static void test_workqueue_shutdown_wakes_getters(void **st)
{
    kc_workqueue *q = new_q();
    getter g[3];
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        g[i] = (getter){q, 1, ""};
        pthread_create(&t[i], NULL, get_forever, &g[i]);
    }
    for (;;) { /* observable: all three are blocked in get */
        pthread_mutex_lock(&q->mu);
        size_t w = q->waiters;
        pthread_mutex_unlock(&q->mu);
        if (w == 3)
            break;
        sched_yield();
    }
    kc_workqueue_shutdown(q);
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(g[i].rc, KC_ESTOPPED);
    }
    kc_workqueue_free(q);
}

typedef struct drainer {
    kc_workqueue *q;
    int64_t timeout_ms;
    int rc;
} drainer;

static void *drain_main(void *arg)
{
    drainer *d = arg;
    d->rc = kc_workqueue_shutdown_drain(d->q, d->timeout_ms);
    return NULL;
}

static bool draining(kc_workqueue *q)
{
    pthread_mutex_lock(&q->mu);
    bool d = q->draining;
    pthread_mutex_unlock(&q->mu);
    return d;
}

/* W9: shutdown_drain waits for the keys being processed, not for the queued ones. */
static void test_workqueue_shutdown_drain_waits_for_processing(void **st)
{
    kc_workqueue *q = new_q();
    assert_int_equal(kc_workqueue_add(q, "a"), 0);
    assert_int_equal(kc_workqueue_add(q, "b"), 0);
    get_expect(q, "a"); /* a processing, b queued */
    assert_int_equal(kc_workqueue_shutdown_drain(q, 0), KC_ETIMEOUT);
    drainer d = {q, -1, 1};
    pthread_t t;
    pthread_create(&t, NULL, drain_main, &d);
    while (!draining(q)) /* observable: the drainer is waiting */
        sched_yield();
    assert_int_equal(kc_workqueue_done(q, "a"), 0);
    pthread_join(t, NULL);
    assert_int_equal(d.rc, 0);
    assert_int_equal(kc_workqueue_len(q), 1); /* b was not waited for and is still there */
    get_expect(q, "b");
    assert_int_equal(kc_workqueue_done(q, "b"), 0);
    assert_int_equal(kc_workqueue_shutdown_drain(q, 0), 0);
    kc_workqueue_free(q);
}

/* W9: a later shutdown releases a drain that would otherwise wait forever. */
static void test_workqueue_shutdown_releases_drain(void **st)
{
    kc_workqueue *q = new_q();
    assert_int_equal(kc_workqueue_add(q, "stuck"), 0);
    get_expect(q, "stuck");
    drainer d = {q, -1, 1};
    pthread_t t;
    pthread_create(&t, NULL, drain_main, &d);
    while (!draining(q))
        sched_yield();
    kc_workqueue_shutdown(q);
    pthread_join(t, NULL);
    assert_int_equal(d.rc, KC_ECANCELED);
    kc_workqueue_free(q);
}

static void test_workqueue_bad_arguments(void **st)
{
    kc_workqueue *q = new_q();
    const char *k = NULL;
    assert_int_equal(kc_workqueue_add(q, NULL), KC_EINVAL);
    assert_int_equal(kc_workqueue_add(NULL, "a"), KC_EINVAL);
    assert_int_equal(kc_workqueue_get(q, 0, NULL), KC_EINVAL);
    assert_int_equal(kc_workqueue_get(NULL, 0, &k), KC_EINVAL);
    char *big = malloc(KC_WORKQUEUE_KEY_MAX + 2);
    memset(big, 'k', KC_WORKQUEUE_KEY_MAX + 1);
    big[KC_WORKQUEUE_KEY_MAX + 1] = '\0';
    assert_int_equal(kc_workqueue_add(q, big), KC_EINVAL);
    big[KC_WORKQUEUE_KEY_MAX] = '\0'; /* exactly the limit is accepted */
    assert_int_equal(kc_workqueue_add(q, big), 0);
    assert_int_equal(kc_workqueue_get(q, 0, &k), 0);
    assert_int_equal(strlen(k), KC_WORKQUEUE_KEY_MAX);
    assert_int_equal(kc_workqueue_done(q, big), 0);
    free(big);
    kc_workqueue_free(q);

    kc_error e = KC_ERROR_INIT;
    kc_workqueue_opts o = {.base_delay_ms = 10, .max_delay_ms = 5};
    assert_int_equal(kc_workqueue_new(&o, &q, &e), KC_EINVAL);
    assert_non_null(strstr(e.message, "base_delay_ms"));
    kc_error_clear(&e);
    o = (kc_workqueue_opts){.bucket_qps = __builtin_nan("")};
    assert_int_equal(kc_workqueue_new(&o, &q, &e), KC_EINVAL);
    assert_non_null(strstr(e.message, "bucket_qps"));
    kc_error_clear(&e);
    assert_int_equal(kc_workqueue_new(NULL, NULL, &e), KC_EINVAL);
    kc_error_clear(&e);
}

/* Records are recycled: a million add/get/done cycles over 10 keys hold 10 records at most. */
static void test_workqueue_records_released(void **st)
{
    kc_workqueue *q = new_q();
    char key[32];
    for (int i = 0; i < 100000; i++) {
        snprintf(key, sizeof(key), "ns/k%d", i % 10);
        assert_int_equal(kc_workqueue_add(q, key), 0);
        assert_true(kc__workqueue_records(q) <= 10);
        const char *k;
        assert_int_equal(kc_workqueue_get(q, 0, &k), 0);
        assert_int_equal(kc_workqueue_done(q, k), 0);
    }
    assert_int_equal(kc__workqueue_records(q), 0);
    for (int i = 0; i < 5000; i++) { /* grow the table past several doublings, then drain */
        snprintf(key, sizeof(key), "ns/many-%d", i);
        assert_int_equal(kc_workqueue_add(q, key), 0);
    }
    assert_int_equal(kc_workqueue_len(q), 5000);
    for (int i = 0; i < 5000; i++) {
        const char *k;
        assert_int_equal(kc_workqueue_get(q, 0, &k), 0);
        snprintf(key, sizeof(key), "ns/many-%d", i);
        assert_string_equal(k, key);
        assert_int_equal(kc_workqueue_done(q, k), 0);
    }
    assert_int_equal(kc__workqueue_records(q), 0);
    kc_workqueue_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workqueue_fifo),
        cmocka_unit_test(test_workqueue_add_dedup),
        cmocka_unit_test(test_workqueue_w6_readd_during_processing),
        cmocka_unit_test(test_workqueue_done_not_processing),
        cmocka_unit_test(test_workqueue_keys_by_value),
        cmocka_unit_test(test_workqueue_shutdown_drains_fifo),
        cmocka_unit_test(test_workqueue_get_blocks_until_add),
        cmocka_unit_test(test_workqueue_shutdown_wakes_getters),
        cmocka_unit_test(test_workqueue_shutdown_drain_waits_for_processing),
        cmocka_unit_test(test_workqueue_shutdown_releases_drain),
        cmocka_unit_test(test_workqueue_bad_arguments),
        cmocka_unit_test(test_workqueue_records_released),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
