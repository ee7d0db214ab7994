/*
 * What each reconcile result does to the queue (spec C3), against the embedded API server:
 * requeue-after runs the key again no sooner than asked and resets its backoff (forget +
 * add_after); errors requeue with a growing per-key backoff (rate-limited, counted); terminal
 * errors are not requeued and not forgotten; an unknown code is treated as an error and counted
 * apart. Timing assertions are lower bounds the queue guarantees, with generous upper bounds
 * only where a bound is the behaviour (the key does come back).
 */
#include "test_controller_fixture.h"

static kc_reconcile_result requeue_once(crec *r, const kc_reconcile_request *req,
                                        kc_cached_client *cc, unsigned nth)
{
    (void)r, (void)req, (void)cc;
    if (nth == 0)
        return (kc_reconcile_result){KC_RECONCILE_REQUEUE_AFTER, 300};
    return (kc_reconcile_result){KC_RECONCILE_DONE, 0};
}

/* C3 RequeueAfter: the second run starts ≥ 300 ms after the first ended, and comes (10 s
 * bound). */
static void test_controller_requeue_after_timing(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, NULL, requeue_once);
    kc_controller *c = cfx_make(&x);
    cfx_start(c);
    cfx_create_cm(&x.f, "ra");
    assert_true(crec_wait_key(&x.r, "default/ra", 2, 10000));
    pthread_mutex_lock(&x.r.mu);
    uint64_t end0 = x.r.log[0].end_ns, start1 = x.r.log[1].start_ns;
    pthread_mutex_unlock(&x.r.mu);
    assert_true(end0 > 0 && start1 >= end0 + 300 * KC__NS_PER_MS);
    kc_controller_stats s;
    assert_true(CFX_WAIT_STATS(c, s, s.reconciles >= 2, 10000));
    assert_int_equal(s.requeue_after, 1);
    assert_int_equal(s.done, 1);
    assert_int_equal(kc_workqueue_num_requeues(kc_controller_queue(c), "default/ra"), 0);
    cfx_down(&x);
}

/* Errors 4 times, then requeue-after (which must reset the backoff), then done. */
static kc_reconcile_result fail_four(crec *r, const kc_reconcile_request *req, kc_cached_client *cc,
                                     unsigned nth)
{
    (void)r, (void)req, (void)cc;
    if (nth < 4)
        return (kc_reconcile_result){KC_RECONCILE_ERROR, 0};
    if (nth == 4)
        return (kc_reconcile_result){KC_RECONCILE_REQUEUE_AFTER, 1};
    return (kc_reconcile_result){KC_RECONCILE_DONE, 0};
}

/* C3 error row + R2: gaps between retries grow 50, 100, 200, 400 ms (base 50 ms, doubling; the
 * bucket is off); NumRequeues counts them; RequeueAfter forgets (count back to 0). */
static void test_controller_error_backoff_grows(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, NULL, fail_four);
    x.queue.base_delay_ms = 50;
    x.queue.bucket_qps = -1;
    kc_controller *c = cfx_make(&x);
    cfx_start(c);
    cfx_create_cm(&x.f, "bo");
    assert_true(crec_wait_key(&x.r, "default/bo", 4, 20000));
    kc_controller_stats s;
    /* after the 4th error (3 requeues before it, 4 once it returned) */
    assert_true(CFX_WAIT_STATS(c, s, s.errors >= 4, 10000));
    assert_true(crec_wait_key(&x.r, "default/bo", 6, 20000));
    pthread_mutex_lock(&x.r.mu);
    for (unsigned i = 1; i < 5; i++) {
        uint64_t gap = x.r.log[i].start_ns - x.r.log[i - 1].end_ns;
        uint64_t want = (50ull << (i - 1)) * KC__NS_PER_MS;
        if (gap < want)
            fprintf(stderr, "retry %u: gap %llu ms < %llu ms\n", i,
                    (unsigned long long)(gap / KC__NS_PER_MS),
                    (unsigned long long)(want / KC__NS_PER_MS));
        assert_true(gap >= want);
    }
    pthread_mutex_unlock(&x.r.mu);
    assert_true(CFX_WAIT_STATS(c, s, s.done >= 1, 10000));
    assert_int_equal(s.errors, 4);
    assert_int_equal(s.requeue_after, 1);
    assert_int_equal(kc_workqueue_num_requeues(kc_controller_queue(c), "default/bo"), 0);
    cfx_down(&x);
}

/* Errors twice, then terminal. */
static kc_reconcile_result fail_then_terminal(crec *r, const kc_reconcile_request *req,
                                              kc_cached_client *cc, unsigned nth)
{
    (void)r, (void)cc;
    if (!strcmp(req->name, "marker"))
        return (kc_reconcile_result){KC_RECONCILE_DONE, 0};
    if (nth < 2)
        return (kc_reconcile_result){KC_RECONCILE_ERROR, 0};
    return (kc_reconcile_result){KC_RECONCILE_TERMINAL, 0};
}

/* C3 terminal row: not requeued (NumRequeues stays, nothing queued) and not forgotten (the count
 * of the two earlier errors is kept); the next event on the key runs it again. */
static void test_controller_terminal_not_requeued(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, NULL, fail_then_terminal);
    x.queue.base_delay_ms = 10;
    kc_controller *c = cfx_make(&x);
    cfx_start(c);
    cfx_create_cm(&x.f, "term");
    kc_controller_stats s;
    assert_true(CFX_WAIT_STATS(c, s, s.terminal >= 1, 20000));
    kc_workqueue *q = kc_controller_queue(c);
    assert_int_equal(kc_workqueue_num_requeues(q, "default/term"), 2);
    assert_int_equal(s.errors, 2);
    /* counters move after the queue action: had terminal requeued through the rate limiter,
     * NumRequeues would be 3 by now */
    kc_controller_enqueue(c, "default", "marker");
    assert_true(crec_wait_key(&x.r, "default/marker", 1, 10000));
    assert_int_equal(kc_workqueue_num_requeues(q, "default/term"), 2);
    /* the next event runs it again */
    assert_int_equal(ifx_cm_update(&x.f, "default", "term", "2"), 0);
    assert_true(crec_wait_key(&x.r, "default/term", 4, 10000));
    cfx_down(&x);
}

static kc_reconcile_result unknown_once(crec *r, const kc_reconcile_request *req,
                                        kc_cached_client *cc, unsigned nth)
{
    (void)r, (void)req, (void)cc;
    return (kc_reconcile_result){nth == 0 ? 42 : KC_RECONCILE_DONE, 0};
}

/* An unknown code is an error: counted apart (and in errors), requeued, the queue keeps
 * running. */
static void test_controller_unknown_code_is_error(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, NULL, unknown_once);
    x.queue.base_delay_ms = 10;
    kc_controller *c = cfx_make(&x);
    cfx_start(c);
    cfx_create_cm(&x.f, "unk");
    assert_true(crec_wait_key(&x.r, "default/unk", 2, 10000));
    kc_controller_stats s;
    assert_true(CFX_WAIT_STATS(c, s, s.done >= 1, 10000));
    assert_int_equal(s.unknown, 1);
    assert_int_equal(s.errors, 1);
    assert_int_equal(s.reconciles, 2);
    cfx_down(&x);
}

/* C4: with 4 workers, many keys and re-adds during processing, no key is ever reconciled by two
 * workers at once and no key is lost. */
static kc_reconcile_result readd_self(crec *r, const kc_reconcile_request *req,
                                      kc_cached_client *cc, unsigned nth)
{
    (void)cc;
    if (nth < 3)
        kc_controller_enqueue(r->ctrl, req->ns, req->name); /* re-add while processing */
    return (kc_reconcile_result){KC_RECONCILE_DONE, 0};
}

static void test_controller_workers_never_share_a_key(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, "configmaps=40:ns=default", readd_self);
    x.o.max_concurrent_reconciles = 4;
    kc_controller *c = cfx_make(&x);
    cfx_start(c);
    kc_obj **items = NULL;
    size_t n = 0;
    assert_int_equal(kc_cached_client_list(kc_controller_client(c), &ifx_cm, "default", NULL, NULL,
                                           NULL, &items, &n, NULL),
                     0);
    assert_true(n >= 40);
    for (size_t i = 0; i < n; i++) {
        char key[160];
        snprintf(key, sizeof(key), "default/%s", kc_obj_name(items[i]));
        assert_true(crec_wait_key(&x.r, key, 4, 20000));
    }
    kc_obj_array_free(items, n);
    pthread_mutex_lock(&x.r.mu);
    assert_int_equal(x.r.same_key, 0);
    assert_true(x.r.max_running <= 4);
    pthread_mutex_unlock(&x.r.mu);
    cfx_down(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_controller_requeue_after_timing),
        cmocka_unit_test(test_controller_error_backoff_grows),
        cmocka_unit_test(test_controller_terminal_not_requeued),
        cmocka_unit_test(test_controller_unknown_code_is_error),
        cmocka_unit_test(test_controller_workers_never_share_a_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
