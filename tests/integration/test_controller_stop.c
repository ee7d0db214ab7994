/*
 * Stopping a controller against the embedded API server: stop takes no more keys, lets running
 * reconciles finish before it returns, and stops the informers; a reconcile blocked past the stop
 * bound (a read-your-writes wait on a stalled watch) is woken by the cache stop and stop says
 * KC_ETIMEOUT; stop-then-free, free without stop, stop of a never-started controller, and the
 * NULL handle conventions.
 */
#include "test_controller_fixture.h"

/* Reconciles block until the test releases them, then note whether stop had returned. */
typedef struct hold {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool release;
    bool stop_returned;
    unsigned finished_before_stop_returned;
} hold;

static hold g_hold;

static kc_reconcile_result block_until_released(crec *r, const kc_reconcile_request *req,
                                                kc_cached_client *cc, unsigned nth)
{
    (void)r, (void)req, (void)cc, (void)nth;
    uint64_t deadline = kc__deadline_after_ms(20000); /* safety bound; the test releases */
    pthread_mutex_lock(&g_hold.mu);
    while (!g_hold.release && kc__cond_wait_until(&g_hold.cv, &g_hold.mu, deadline) == 0) {
    }
    if (!g_hold.stop_returned)
        g_hold.finished_before_stop_returned++;
    pthread_mutex_unlock(&g_hold.mu);
    return (kc_reconcile_result){KC_RECONCILE_DONE, 0};
}

typedef struct stopper {
    kc_controller *c;
    int rc;
} stopper;

static void *stop_main(void *arg)
{
    stopper *s = arg;
    s->rc = kc_controller_stop(s->c);
    pthread_mutex_lock(&g_hold.mu);
    g_hold.stop_returned = true;
    pthread_mutex_unlock(&g_hold.mu);
    return NULL;
}

/* Stop during two running reconciles: both finish before stop returns 0; keys queued meanwhile
 * are not reconciled; enqueue after stop is KC_ESTOPPED; the informers are stopped. */
static void test_controller_stop_waits_for_running_reconciles(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, NULL, block_until_released);
    memset(&g_hold, 0, sizeof(g_hold));
    pthread_mutex_init(&g_hold.mu, NULL);
    kc__cond_init_monotonic(&g_hold.cv);
    x.o.max_concurrent_reconciles = 2;
    kc_controller *c = cfx_make(&x);
    cfx_start(c);
    kc_controller_enqueue(c, "default", "a");
    kc_controller_enqueue(c, "default", "b");
    assert_true(crec_wait_running(&x.r, 2, 10000));
    kc_controller_enqueue(c, "default", "queued"); /* waits behind the two */
    stopper s = {c, 1};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, stop_main, &s), 0);
    /* stop has begun once new keys are refused */
    uint64_t deadline = kc__deadline_after_ms(10000);
    while (kc_controller_enqueue(c, "default", "late") != KC_ESTOPPED && kc__now_ns() < deadline)
        kc__sleep_ns(KC__NS_PER_MS); /* bounded poll: stop runs on the other thread */
    assert_int_equal(kc_controller_enqueue(c, "default", "late"), KC_ESTOPPED);
    pthread_mutex_lock(&g_hold.mu);
    g_hold.release = true;
    pthread_cond_broadcast(&g_hold.cv);
    pthread_mutex_unlock(&g_hold.mu);
    pthread_join(t, NULL);
    assert_int_equal(s.rc, 0);
    assert_int_equal(g_hold.finished_before_stop_returned, 2);
    assert_int_equal(crec_count(&x.r, "default/queued"), 0);
    assert_int_equal(crec_count(&x.r, "default/late"), 0);
    kc_informer *inf = kc_cache_informer_at(kc_controller_cache(c), 0);
    kc_informer_status is;
    kc_informer_get_status(inf, &is);
    assert_int_equal(is.phase, KC_INFORMER_PHASE_STOPPED);
    kc_controller_stats cs;
    kc_controller_get_stats(c, &cs);
    assert_int_equal(cs.running, 0);
    assert_false(cs.started);
    assert_int_equal(kc_controller_stop(c), 0); /* idempotent */
    kc_controller_free(c);
    crec_destroy(&x.r);
    pthread_cond_destroy(&g_hold.cv);
    pthread_mutex_destroy(&g_hold.mu);
    ifx_down(&x.f);
}

/* A reconcile that creates a Secret while the watch is stalled blocks in the read-your-writes
 * wait (3 s); stop's bound (100 ms) passes, the cache stop wakes it (KC_ESTOPPED), stop returns
 * KC_ETIMEOUT after joining the worker. */
static int g_create_rc;

static kc_reconcile_result create_while_stalled(crec *r, const kc_reconcile_request *req,
                                                kc_cached_client *cc, unsigned nth)
{
    (void)r, (void)nth;
    char body[256];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"%s-s\"}}",
             req->name);
    kc_obj *o = NULL;
    g_create_rc = kc_cached_client_create(cc, &cfx_secrets, req->ns, body, strlen(body), NULL, NULL,
                                          &o, NULL);
    kc_obj_unref(o);
    return (kc_reconcile_result){KC_RECONCILE_DONE, 0};
}

static void test_controller_stop_bound_wakes_blocked_reconcile(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, NULL, create_while_stalled);
    x.o.stop_timeout_ms = 100;
    x.client.timeout_ms = 60000; /* longer than the test: only the cache stop can end the wait */
    kc_controller *c = cfx_make(&x);
    kc_controller_type owned = {.gvr = cfx_secrets};
    assert_int_equal(kc_controller_own(c, &owned, NULL), 0);
    cfx_start(c);
    kc_server_faults fl = {0};
    fl.watch_stall = true;
    ifx_faults(&x.f, &fl);
    kc_controller_enqueue(c, "default", "stall");
    assert_true(crec_wait_running(&x.r, 1, 10000));
    uint64_t t0 = kc__now_ns();
    assert_int_equal(kc_controller_stop(c), KC_ETIMEOUT);
    assert_true(kc__now_ns() - t0 < 30000 * KC__NS_PER_MS); /* not the 60 s wait */
    assert_int_equal(g_create_rc, KC_ESTOPPED);
    cfx_down(&x);
}

/* Free without stop while a reconcile-heavy controller runs; stop of a never-started one; the
 * NULL conventions. */
static void test_controller_free_without_stop(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, "configmaps=100:ns=default", NULL);
    x.o.max_concurrent_reconciles = 3;
    kc_controller *c = cfx_make(&x);
    cfx_start(c);
    assert_true(crec_wait_key(&x.r, "default/cm-00000", 1, 10000));
    kc_controller_free(c); /* reconciles may be running */

    kc_controller *never = cfx_new(&x.f, &x.o, &x.r);
    assert_int_equal(kc_controller_stop(never), 0);
    assert_int_equal(kc_controller_start(never, NULL), KC_ESTOPPED);
    kc_controller_free(never);
    kc_controller_free(cfx_new(&x.f, &x.o, &x.r)); /* never started, never stopped */

    assert_int_equal(kc_controller_stop(NULL), KC_EINVAL);
    assert_int_equal(kc_controller_start(NULL, NULL), KC_EINVAL);
    assert_int_equal(kc_controller_enqueue(NULL, "a", "b"), KC_EINVAL);
    assert_false(kc_controller_active(NULL));
    assert_null(kc_controller_cache(NULL));
    assert_null(kc_controller_client(NULL));
    assert_null(kc_controller_queue(NULL));
    assert_null(kc_controller_health_url(NULL));
    kc_controller_stats s;
    kc_controller_get_stats(NULL, &s);
    assert_int_equal(s.reconciles, 0);
    kc_controller_free(NULL);
    crec_destroy(&x.r);
    ifx_down(&x.f);
}

/* Options are checked at new, naming what is wrong. */
static void test_controller_new_checks_options(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, NULL, NULL);
    kc_controller *c = NULL;
    kc_error e = KC_ERROR_INIT;
    x.o.reconcile = NULL;
    assert_int_equal(kc_controller_new(x.f.client, &x.o, &c, &e), KC_EINVAL);
    assert_non_null(strstr(e.message, "reconcile"));
    cfx_reset_opts(&x);
    x.primary.kind = NULL;
    assert_int_equal(kc_controller_new(x.f.client, &x.o, &c, &e), KC_EINVAL);
    assert_non_null(strstr(e.message, "kind"));
    cfx_reset_opts(&x);
    x.primary.gvr.resource = "Bad/Resource";
    assert_int_equal(kc_controller_new(x.f.client, &x.o, &c, &e), KC_EINVAL);
    assert_null(c);
    assert_int_equal(kc_controller_new(NULL, &x.o, &c, NULL), KC_EINVAL);
    kc_error_clear(&e);
    crec_destroy(&x.r);
    ifx_down(&x.f);
}

/* kc_controller_new names an option whose nested pointer has no _size, or which is missing. */
static void expect_new_inval(cfx *x, const char *what)
{
    kc_controller *c = NULL;
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_controller_new(x->f.client, &x->o, &c, &e), KC_EINVAL);
    assert_null(c);
    assert_non_null(e.message);
    if (!strstr(e.message, what))
        fail_msg("error \"%s\" does not name %s", e.message, what);
    kc_error_clear(&e);
    cfx_reset_opts(x);
}

/* docs/abi.md: nested structs of the controller's options go by pointer and size; a non-NULL
 * pointer with a size of 0 is KC_EINVAL naming the field (not guessed), at any depth. */
static void test_controller_nested_size_zero_is_inval(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, NULL, NULL);
    x.o.primary = NULL;
    expect_new_inval(&x, "opts.primary is required");
    x.o.primary_size = 0;
    expect_new_inval(&x, "kc_controller_opts.primary");
    x.o.queue_size = 0;
    expect_new_inval(&x, "kc_controller_opts.queue");
    x.o.client_size = 0;
    expect_new_inval(&x, "kc_controller_opts.client");
    x.primary.predicate_size = 0;
    expect_new_inval(&x, "kc_controller_opts.primary.predicate");
    x.primary.informer = &cfx_fast_retry; /* informer_size left 0 */
    expect_new_inval(&x, "kc_controller_opts.primary.informer");
    kc_controller *c = cfx_make(&x);
    kc_error e = KC_ERROR_INIT;
    kc_informer_opts io = {0};
    kc_controller_type owned = {.gvr = cfx_secrets, .informer = &io}; /* informer_size left 0 */
    assert_int_equal(kc_controller_own(c, &owned, &e), KC_EINVAL);
    assert_non_null(strstr(e.message, "kc_controller_type.informer"));
    kc_error_clear(&e);
    owned.informer_size = sizeof io;
    assert_int_equal(kc_controller_own(c, &owned, &e), 0);
    cfx_down(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_controller_stop_waits_for_running_reconciles),
        cmocka_unit_test(test_controller_stop_bound_wakes_blocked_reconcile),
        cmocka_unit_test(test_controller_free_without_stop),
        cmocka_unit_test(test_controller_new_checks_options),
        cmocka_unit_test(test_controller_nested_size_zero_is_inval),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
