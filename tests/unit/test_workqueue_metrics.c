/*
 * Unit tests for kc_workqueue_metrics_text (spec §1.5, M1–M2) on an injected clock: client-go's
 * names, depth as client-go counts it, adds counted only when a key enters dirty, queue and work
 * durations, the processing gauges, retries, histogram buckets 1e-8·10^k, and nothing for an
 * unnamed queue.
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

static uint64_t fake_now(void *ud)
{
    return *(uint64_t *)ud;
}

/* Assert that the metrics text holds the line (exactly). */
#define HAS_LINE(text, line)                                                                       \
    do {                                                                                           \
        if (!strstr((text), line "\n"))                                                            \
            fail_msg("missing line \"%s\" in:\n%s", line, (text));                                 \
    } while (0)

static void test_workqueue_metrics_m1_m2(void **st)
{
    uint64_t now = 5000 * KC__NS_PER_SEC;
    kc_workqueue *q = NULL;
    kc_workqueue_opts o = {.name = "pods\"x"};
    assert_int_equal(kc_workqueue_new(&o, &q, NULL), 0);
    kc__workqueue_set_clock(q, fake_now, &now);
    assert_int_equal(kc_workqueue_add(q, "a"), 0);
    assert_int_equal(kc_workqueue_add(q, "a"), 0); /* deduplicated: not counted (M2) */
    assert_int_equal(kc_workqueue_add(q, "b"), 0);
    now += 2 * KC__NS_PER_SEC;
    const char *k;
    assert_int_equal(kc_workqueue_get(q, 0, &k), 0); /* a: queued 2 s */
    assert_int_equal(kc_workqueue_add(q, "a"), 0);   /* dirty again while processing: counted */
    now += 3 * KC__NS_PER_SEC;
    char *m = kc_workqueue_metrics_text(q);
    HAS_LINE(m, "# TYPE workqueue_depth gauge");
    HAS_LINE(m, "workqueue_depth{name=\"pods\\\"x\"} 2"); /* b, and a dirty again */
    HAS_LINE(m, "# TYPE workqueue_adds_total counter");
    HAS_LINE(m, "workqueue_adds_total{name=\"pods\\\"x\"} 3");
    HAS_LINE(m, "# TYPE workqueue_queue_duration_seconds histogram");
    HAS_LINE(m, "workqueue_queue_duration_seconds_bucket{name=\"pods\\\"x\",le=\"1\"} 0");
    HAS_LINE(m, "workqueue_queue_duration_seconds_bucket{name=\"pods\\\"x\",le=\"10\"} 1");
    HAS_LINE(m, "workqueue_queue_duration_seconds_bucket{name=\"pods\\\"x\",le=\"+Inf\"} 1");
    HAS_LINE(m, "workqueue_queue_duration_seconds_sum{name=\"pods\\\"x\"} 2");
    HAS_LINE(m, "workqueue_queue_duration_seconds_count{name=\"pods\\\"x\"} 1");
    HAS_LINE(m, "workqueue_unfinished_work_seconds{name=\"pods\\\"x\"} 3");
    HAS_LINE(m, "workqueue_longest_running_processor_seconds{name=\"pods\\\"x\"} 3");
    HAS_LINE(m, "workqueue_work_duration_seconds_count{name=\"pods\\\"x\"} 0");
    HAS_LINE(m, "workqueue_retries_total{name=\"pods\\\"x\"} 0");
    /* M1: twelve buckets 1e-8 … 1000, then +Inf */
    HAS_LINE(m, "workqueue_work_duration_seconds_bucket{name=\"pods\\\"x\",le=\"1e-08\"} 0");
    HAS_LINE(m, "workqueue_work_duration_seconds_bucket{name=\"pods\\\"x\",le=\"1000\"} 0");
    free(m);

    assert_int_equal(kc_workqueue_get(q, 0, &k), 0); /* b: 5 s queued; two processing now */
    now += 1 * KC__NS_PER_SEC;
    m = kc_workqueue_metrics_text(q);
    HAS_LINE(m, "workqueue_unfinished_work_seconds{name=\"pods\\\"x\"} 5"); /* 4 + 1 */
    HAS_LINE(m, "workqueue_longest_running_processor_seconds{name=\"pods\\\"x\"} 4");
    free(m);
    assert_int_equal(kc_workqueue_done(q, "a"), 0); /* worked 4 s; requeued (W6) */
    assert_int_equal(kc_workqueue_done(q, "b"), 0); /* worked 1 s */
    assert_int_equal(kc_workqueue_add_after(q, "c", 10), 0);
    assert_int_equal(kc_workqueue_add_rate_limited(q, "d"), 0);
    assert_int_equal(kc_workqueue_add_after(q, "c", 0), 0);
    m = kc_workqueue_metrics_text(q);
    HAS_LINE(m, "workqueue_work_duration_seconds_count{name=\"pods\\\"x\"} 2");
    HAS_LINE(m, "workqueue_work_duration_seconds_sum{name=\"pods\\\"x\"} 5");
    HAS_LINE(m, "workqueue_work_duration_seconds_bucket{name=\"pods\\\"x\",le=\"1\"} 1");
    HAS_LINE(m, "workqueue_retries_total{name=\"pods\\\"x\"} 3"); /* D1: each accepted call */
    HAS_LINE(m, "workqueue_depth{name=\"pods\\\"x\"} 2");         /* a requeued, c now */
    HAS_LINE(m, "workqueue_unfinished_work_seconds{name=\"pods\\\"x\"} 0");
    free(m);
    kc_workqueue_free(q);
}

/* M2: an unnamed queue emits nothing. */
static void test_workqueue_metrics_unnamed_empty(void **st)
{
    kc_workqueue *q = NULL;
    kc_workqueue_opts o = {.name = ""};
    assert_int_equal(kc_workqueue_new(&o, &q, NULL), 0);
    assert_int_equal(kc_workqueue_add(q, "a"), 0);
    char *m = kc_workqueue_metrics_text(q);
    assert_string_equal(m, "");
    free(m);
    kc_workqueue_free(q);
    assert_null(kc_workqueue_metrics_text(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workqueue_metrics_m1_m2),
        cmocka_unit_test(test_workqueue_metrics_unnamed_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
