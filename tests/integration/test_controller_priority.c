/*
 * The controller's priority queue (spec C12, controller-runtime's default since v0.23) against the
 * embedded API server: the keys of the informer's initial list are enqueued at low priority, so a
 * change (a watch event) and an explicit kc_controller_enqueue queued behind a backlog of them are
 * reconciled first; with kc_controller_opts.no_priority_queue the same change waits behind the
 * whole backlog (FIFO, client-go's order); a resync (unchanged resourceVersion) is low too.
 * Deterministic: one worker, the gate closed
 * (start_inactive) while the backlog and the change are queued, then opened; the queue's contents
 * are checked through its depth by priority (workqueue_depth{priority}), not by timing.
 */
#include "test_controller_fixture.h"

#define BACKLOG 200

/* Queue the backlog (initial list) and one change with the gate closed; return the controller. */
static kc_controller *queue_backlog_and_change(cfx *x, bool no_priority)
{
    x->o.start_inactive = true;
    x->o.max_concurrent_reconciles = 1;
    x->o.no_priority_queue = no_priority;
    kc_controller *c = cfx_make(x);
    cfx_start(c);
    kc_controller_stats s;
    assert_true(CFX_WAIT_STATS(c, s, s.enqueued >= BACKLOG, 20000));
    cfx_create_cm(&x->f, "zz-change"); /* a watch event after the initial list */
    /* and the worker has put its first key back (admit, gate closed) and waits on the gate */
    assert_true(CFX_WAIT_STATS(c, s, s.enqueued >= BACKLOG + 1 && s.put_back >= 1, 20000));
    assert_int_equal(kc_controller_enqueue(c, "default", "cm-00150"), 0); /* explicit: normal */
    assert_int_equal(crec_count(&x->r, "default/zz-change"), 0);          /* gate closed */
    return c;
}

/* Index in the reconcile log of the first reconcile of key (-1 when none). */
static long first_index(crec *r, const char *key)
{
    long at = -1;
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->n && i < CREC_MAX; i++)
        if (!strcmp(r->log[i].key, key)) {
            at = (long)i;
            break;
        }
    pthread_mutex_unlock(&r->mu);
    return at;
}

/* C12: initial-list keys are low priority; the change and the explicit enqueue go first. */
static void test_controller_priority_change_before_backlog(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, "configmaps=200:ns=default", NULL);
    kc_controller *c = queue_backlog_and_change(&x, false);
    /* what is queued, by priority: the change and the raised key at 0, the rest low */
    char *m = kc_workqueue_metrics_text(kc_controller_queue(c));
    assert_non_null(m);
    if (!strstr(m, "workqueue_depth{controller=\"test\",name=\"test\",priority=\"0\"} 2\n") ||
        !strstr(m, "workqueue_depth{controller=\"test\",name=\"test\",priority=\"-100\"} 199\n"))
        fail_msg("unexpected depth by priority:\n%s", m);
    free(m);
    assert_int_equal(kc_controller_set_active(c, true), 0);
    assert_true(crec_wait_key(&x.r, "default/cm-00199", 1, 20000)); /* the backlog's last */
    assert_int_equal(first_index(&x.r, "default/zz-change"), 0);
    assert_int_equal(first_index(&x.r, "default/cm-00150"), 1);
    /* the backlog after, in list order (FIFO within the low priority; the key the worker put
     * back at start, cm-00000, went to the tail of its priority) */
    assert_true(first_index(&x.r, "default/cm-00001") < first_index(&x.r, "default/cm-00199"));
    cfx_down(&x);
}

/* Off: the same change waits behind the whole backlog. */
static void test_controller_priority_off_is_fifo(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, "configmaps=200:ns=default", NULL);
    kc_controller *c = queue_backlog_and_change(&x, true);
    char *m = kc_workqueue_metrics_text(kc_controller_queue(c));
    assert_non_null(strstr(m, "workqueue_depth{controller=\"test\",name=\"test\",priority=\"\"} "));
    free(m);
    assert_int_equal(kc_controller_set_active(c, true), 0);
    assert_true(crec_wait_key(&x.r, "default/zz-change", 1, 20000));
    assert_true(first_index(&x.r, "default/zz-change") >= BACKLOG - 1);
    assert_true(first_index(&x.r, "default/cm-00150") > 100);
    cfx_down(&x);
}

/* Whether the queue's depth at priority reaches n within timeout_ms (bounded poll of the
 * metrics text: the resync is timer-driven, no callback to wait on). */
static bool depth_reaches(kc_controller *c, const char *priority, long n, int64_t timeout_ms)
{
    char want[160];
    snprintf(want, sizeof want,
             "workqueue_depth{controller=\"test\",name=\"test\",priority=\"%s\"} %ld\n", priority,
             n);
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    for (;;) {
        char *m = kc_workqueue_metrics_text(kc_controller_queue(c));
        bool ok = m && strstr(m, want);
        if (!ok && kc__now_ns() >= deadline)
            fprintf(stderr, "no \"%s\" in:\n%s\n", want, m ? m : "");
        free(m);
        if (ok || kc__now_ns() >= deadline)
            return ok;
        kc__sleep_ns(2 * KC__NS_PER_MS);
    }
}

/* C12: a resync (an update with an unchanged resourceVersion) enqueues at low priority, a change
 * at 0. Everything is reconciled once, the gate closed, then the informer's periodic resync
 * queues every key again — all at -100 — and a new object's key lands at 0. */
static void test_controller_priority_resync_is_low(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, "configmaps=50:ns=default", NULL);
    kc_informer_opts resync = {.resync_ms = 100};
    x.primary.informer = &resync;
    x.primary.informer_size = sizeof resync;
    x.o.max_concurrent_reconciles = 1;
    kc_controller *c = cfx_make(&x);
    cfx_start(c);
    assert_true(crec_wait_key(&x.r, "default/cm-00049", 1, 20000));
    assert_int_equal(kc_controller_set_active(c, false), 0);
    assert_true(depth_reaches(c, "-100", 50, 20000)); /* the resync's keys, all low */
    assert_true(depth_reaches(c, "0", 0, 1));
    cfx_create_cm(&x.f, "zz-change");
    assert_true(depth_reaches(c, "0", 1, 20000)); /* the change at 0 */
    assert_true(depth_reaches(c, "-100", 50, 1));
    assert_int_equal(kc_controller_set_active(c, true), 0);
    cfx_down(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_controller_priority_change_before_backlog),
        cmocka_unit_test(test_controller_priority_off_is_fifo),
        cmocka_unit_test(test_controller_priority_resync_is_low),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
