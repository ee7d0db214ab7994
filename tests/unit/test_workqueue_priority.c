/*
 * Unit tests for the work queue's priorities (controller-runtime's priority queue, spec C12, on
 * client-go's semantics W1–W11 and D1–D3): highest priority first, FIFO within a priority, the
 * highest priority kept on re-add (raised, never lowered), deduplication with dirty and
 * processing unchanged, delayed adds with priority (earliest time and highest priority kept, fired
 * keys ordered by ready time), get_with_priority, shutdown draining in priority order, the depth
 * by priority of a controller's queue, and 100k keys.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "workqueue/internal.h"
#include "kcache/workqueue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOW KC_WORKQUEUE_PRIORITY_LOW

static kc_workqueue *new_queue(const char *name)
{
    kc_workqueue *q = NULL;
    kc_workqueue_opts o = {.name = name, .bucket_qps = -1};
    assert_int_equal(kc_workqueue_new(&o, &q, NULL), 0);
    return q;
}

/* Get (no wait), check key and priority, done. */
static void take(kc_workqueue *q, const char *want, int want_prio)
{
    const char *k = NULL;
    int p = 12345;
    assert_int_equal(kc_workqueue_get_with_priority(q, 0, &k, &p), 0);
    assert_string_equal(k, want);
    assert_int_equal(p, want_prio);
    assert_int_equal(kc_workqueue_done(q, k), 0);
}

/* C12: higher priority first, FIFO within a priority; plain add is priority 0. */
static void test_workqueue_priority_order(void **st)
{
    (void)st;
    kc_workqueue *q = new_queue(NULL);
    assert_int_equal(kc_workqueue_add_with_priority(q, "low1", LOW), 0);
    assert_int_equal(kc_workqueue_add_with_priority(q, "low2", LOW), 0);
    assert_int_equal(kc_workqueue_add(q, "n1"), 0);
    assert_int_equal(kc_workqueue_add_with_priority(q, "high", 10), 0);
    assert_int_equal(kc_workqueue_add_with_priority(q, "n2", 0), 0);
    assert_int_equal(kc_workqueue_add_with_priority(q, "low3", LOW), 0);
    assert_int_equal(kc_workqueue_len(q), 6); /* W7 */
    take(q, "high", 10);
    take(q, "n1", 0);
    take(q, "n2", 0);
    take(q, "low1", LOW);
    take(q, "low2", LOW);
    take(q, "low3", LOW);
    const char *k;
    assert_int_equal(kc_workqueue_get(q, 0, &k), KC_ETIMEOUT);
    assert_int_equal(kc__workqueue_records(q), 0);
    kc_workqueue_free(q);
}

/* C12 / W3: a re-add keeps the highest priority: a higher one raises a queued key to the tail of
 * its new level; a lower one changes nothing (no duplicate either). */
static void test_workqueue_priority_highest_kept(void **st)
{
    (void)st;
    kc_workqueue *q = new_queue(NULL);
    assert_int_equal(kc_workqueue_add_with_priority(q, "a", LOW), 0);
    assert_int_equal(kc_workqueue_add_with_priority(q, "b", LOW), 0);
    assert_int_equal(kc_workqueue_add(q, "c"), 0);
    assert_int_equal(kc_workqueue_add(q, "b"), 0);                     /* raised: behind c */
    assert_int_equal(kc_workqueue_add_with_priority(q, "c", LOW), 0);  /* lower: no change */
    assert_int_equal(kc_workqueue_add_with_priority(q, "a", -200), 0); /* lower: no change */
    assert_int_equal(kc_workqueue_len(q), 3);                          /* W3: deduplicated */
    take(q, "c", 0);
    take(q, "b", 0);
    take(q, "a", LOW);
    kc_workqueue_free(q);
}

/* W4/W6 with priorities: a key re-added while processing is not queued twice and not handed to a
 * second worker; at done it is queued once, at the highest priority it was re-added with. */
static void test_workqueue_priority_processing_dirty(void **st)
{
    (void)st;
    kc_workqueue *q = new_queue(NULL);
    assert_int_equal(kc_workqueue_add_with_priority(q, "a", LOW), 0);
    const char *k;
    int p;
    assert_int_equal(kc_workqueue_get_with_priority(q, 0, &k, &p), 0);
    assert_int_equal(p, LOW);
    assert_int_equal(kc_workqueue_add_with_priority(q, "a", LOW), 0);
    assert_int_equal(kc_workqueue_add_with_priority(q, "a", 5), 0);
    assert_int_equal(kc_workqueue_add_with_priority(q, "a", 1), 0);
    assert_int_equal(kc_workqueue_add_with_priority(q, "z", 3), 0);
    assert_int_equal(kc_workqueue_len(q), 1); /* only z: a is processing (W4) */
    const char *k2;
    assert_int_equal(kc_workqueue_get(q, 0, &k2), 0);
    assert_string_equal(k2, "z");
    assert_int_equal(kc_workqueue_get(q, 0, &k2), KC_ETIMEOUT); /* a never twice at once */
    assert_int_equal(kc_workqueue_done(q, "z"), 0);
    assert_int_equal(kc_workqueue_add(q, "n"), 0);
    assert_int_equal(kc_workqueue_done(q, k), 0); /* W6: a queued again, at 5 */
    assert_int_equal(kc_workqueue_len(q), 2);
    take(q, "a", 5);
    take(q, "n", 0);
    assert_int_equal(kc__workqueue_records(q), 0);
    kc_workqueue_free(q);
}

static uint64_t fake_now(void *ud)
{
    return *(uint64_t *)ud;
}

/* D1–D3 with priorities: the delayed key is added at its priority when it fires; a second delayed
 * add keeps the earlier time and the higher priority; keys that fire join their level in ready
 * time order; waiting keys are not queued. */
static void test_workqueue_priority_add_after(void **st)
{
    (void)st;
    uint64_t now = 1000 * KC__NS_PER_SEC;
    kc_workqueue *q = new_queue(NULL);
    kc__workqueue_set_clock(q, fake_now, &now);
    assert_int_equal(kc_workqueue_add_after_with_priority(q, "late", 30, LOW), 0);
    assert_int_equal(kc_workqueue_add_after_with_priority(q, "late", 50, 7),
                     0); /* later: 30 kept */
    assert_int_equal(kc_workqueue_add_after_with_priority(q, "early", 20, 0), 0);
    assert_int_equal(kc_workqueue_add_after_with_priority(q, "early", 10, LOW), 0);
    assert_int_equal(kc_workqueue_add_with_priority(q, "now", LOW), 0);
    assert_int_equal(kc_workqueue_add_after_with_priority(q, "zero", 0, 2), 0); /* d = 0: now */
    assert_int_equal(kc_workqueue_len(q), 2);
    assert_int_equal(kc__workqueue_waiting(q), 2);
    now += 60 * KC__NS_PER_MS;
    assert_int_equal(kc__workqueue_pump(q), 2);
    take(q, "late", 7);  /* earliest time (30 ms), highest priority (7) */
    take(q, "zero", 2);  /* d = 0: added at once with its priority */
    take(q, "early", 0); /* 10 ms, priority 0 */
    take(q, "now", LOW);
    /* same priority: fired keys by ready time, after the keys already queued */
    assert_int_equal(kc_workqueue_add(q, "q0"), 0);
    assert_int_equal(kc_workqueue_add_after_with_priority(q, "d2", 20, 0), 0);
    assert_int_equal(kc_workqueue_add_after_with_priority(q, "d1", 10, 0), 0);
    assert_int_equal(kc_workqueue_add_rate_limited_with_priority(q, "r", 9), 0); /* 5 ms */
    now += 30 * KC__NS_PER_MS;
    assert_int_equal(kc__workqueue_pump(q), 3);
    take(q, "r", 9);
    take(q, "q0", 0);
    take(q, "d1", 0);
    take(q, "d2", 0);
    kc_workqueue_forget(q, "r");
    assert_int_equal(kc__workqueue_records(q), 0);
    kc_workqueue_free(q);
}

/* W2/W8: after shutdown, adds of any priority are dropped; get drains what is queued, highest
 * priority first, then reports KC_ESTOPPED. */
static void test_workqueue_priority_shutdown(void **st)
{
    (void)st;
    kc_workqueue *q = new_queue(NULL);
    assert_int_equal(kc_workqueue_add_with_priority(q, "a", LOW), 0);
    assert_int_equal(kc_workqueue_add_with_priority(q, "b", 1), 0);
    kc_workqueue_shutdown(q);
    assert_int_equal(kc_workqueue_add_with_priority(q, "c", 100), KC_ESTOPPED);
    assert_int_equal(kc_workqueue_add_after_with_priority(q, "d", 5, 100), KC_ESTOPPED);
    assert_int_equal(kc_workqueue_add_rate_limited_with_priority(q, "e", 100), KC_ESTOPPED);
    take(q, "b", 1);
    take(q, "a", LOW);
    const char *k;
    int p;
    assert_int_equal(kc_workqueue_get_with_priority(q, -1, &k, &p), KC_ESTOPPED);
    assert_int_equal(kc_workqueue_get_with_priority(NULL, 0, &k, &p), KC_EINVAL);
    assert_int_equal(kc_workqueue_add_with_priority(NULL, "x", 0), KC_EINVAL);
    assert_int_equal(kc_workqueue_add_with_priority(q, NULL, 0), KC_EINVAL);
    kc_workqueue_free(q);
}

/* Many distinct priorities (more levels than the initial room) come out sorted. */
static void test_workqueue_priority_many_levels(void **st)
{
    (void)st;
    kc_workqueue *q = new_queue(NULL);
    char key[32];
    for (int i = 0; i < 40; i++) { /* priorities 0, 7, 14, … in a scrambled order */
        int prio = (i * 17) % 40 * 7;
        snprintf(key, sizeof key, "k%d", prio);
        assert_int_equal(kc_workqueue_add_with_priority(q, key, prio), 0);
    }
    for (int prio = 39 * 7; prio >= 0; prio -= 7) {
        snprintf(key, sizeof key, "k%d", prio);
        take(q, key, prio);
    }
    kc_workqueue_free(q);
}

/* A controller's queue: workqueue_depth by priority, with the controller label (M1), moved by a
 * raise and by get. */
static void test_workqueue_priority_depth_metrics(void **st)
{
    (void)st;
    kc_workqueue *q = new_queue("pods");
    assert_int_equal(kc__workqueue_set_controller(q, "pods", true), 0);
    assert_int_equal(kc_workqueue_add_with_priority(q, "a", LOW), 0);
    assert_int_equal(kc_workqueue_add_with_priority(q, "b", LOW), 0);
    assert_int_equal(kc_workqueue_add(q, "b"), 0); /* raised: one from -100 to 0 */
    char *m = kc_workqueue_metrics_text(q);
    assert_non_null(strstr(m, "workqueue_depth{controller=\"pods\",name=\"pods\",priority=\"0\"} "
                              "1\n"));
    assert_non_null(strstr(m, "workqueue_depth{controller=\"pods\",name=\"pods\",priority=\"-100\"}"
                              " 1\n"));
    assert_non_null(strstr(m, "workqueue_adds_total{controller=\"pods\",name=\"pods\"} 2\n"));
    free(m);
    take(q, "b", 0);
    m = kc_workqueue_metrics_text(q);
    assert_non_null(strstr(m, "workqueue_depth{controller=\"pods\",name=\"pods\",priority=\"0\"} "
                              "0\n"));
    free(m);
    kc_workqueue_free(q);
}

/* 100k keys: a change added behind a backlog of 100k low-priority keys is next; the backlog comes
 * out whole and in order. */
static void test_workqueue_priority_100k(void **st)
{
    (void)st;
    kc_workqueue *q = new_queue(NULL);
    char key[32];
    for (int i = 0; i < 100000; i++) {
        snprintf(key, sizeof key, "ns/p%d", i);
        assert_int_equal(kc_workqueue_add_with_priority(q, key, LOW), 0);
    }
    take(q, "ns/p0", LOW);
    assert_int_equal(kc_workqueue_add(q, "ns/p99999"), 0); /* raised out of the backlog */
    assert_int_equal(kc_workqueue_add(q, "ns/new"), 0);
    take(q, "ns/p99999", 0);
    take(q, "ns/new", 0);
    for (int i = 1; i < 99999; i++) {
        snprintf(key, sizeof key, "ns/p%d", i);
        take(q, key, LOW);
    }
    assert_int_equal(kc_workqueue_len(q), 0);
    kc_workqueue_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workqueue_priority_order),
        cmocka_unit_test(test_workqueue_priority_highest_kept),
        cmocka_unit_test(test_workqueue_priority_processing_dirty),
        cmocka_unit_test(test_workqueue_priority_add_after),
        cmocka_unit_test(test_workqueue_priority_shutdown),
        cmocka_unit_test(test_workqueue_priority_many_levels),
        cmocka_unit_test(test_workqueue_priority_depth_metrics),
        cmocka_unit_test(test_workqueue_priority_100k),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
