/*
 * The controller's /metrics (kc_controller_opts.health_listen) under controller-runtime's names,
 * labels, types and buckets [CR pkg/internal/controller/metrics/metrics.go,
 * pkg/internal/metrics/workqueue.go]: controller_runtime_reconcile_total{controller,result} with
 * all four results present at 0 from the start, the error / terminal / panic / timeout counters,
 * the reconcile time histogram with its 40 buckets, max_concurrent_reconciles, active_workers, and
 * the queue's workqueue_* series labelled controller and name (depth also priority, M1). Reconciles
 * return each result kind (spec C3); the test scrapes over HTTP and checks every line it names.
 */
#include "test_controller_fixture.h"

/* GET base/metrics: the body (malloc'd; caller frees), NULL unless 200. */
static char *scrape(const char *base)
{
    long st;
    char *text = cfx_http_get(base, "/metrics", &st);
    if (st != 200) {
        free(text);
        return NULL;
    }
    return text;
}

/* The text holds this exact line. */
#define HAS_LINE(text, line)                                                                       \
    do {                                                                                           \
        if (!strstr((text), line "\n"))                                                            \
            fail_msg("missing line \"%s\" in:\n%s", line, (text));                                 \
    } while (0)

#define CR "controller_runtime_"
#define L  "{controller=\"test\""

/* C3: each key returns one result on its first reconcile and DONE on later ones. */
static kc_reconcile_result decide(crec *r, const kc_reconcile_request *req, kc_cached_client *cc,
                                  unsigned nth)
{
    (void)r;
    (void)cc;
    kc_reconcile_result res = {KC_RECONCILE_DONE, 0};
    if (nth > 0)
        return res;
    if (!strcmp(req->name, "err"))
        res.code = KC_RECONCILE_ERROR; /* rate-limited requeue (5 ms), then DONE */
    else if (!strcmp(req->name, "term"))
        res.code = KC_RECONCILE_TERMINAL;
    else if (!strcmp(req->name, "rq"))
        res.code = KC_RECONCILE_REQUEUE_AFTER; /* 0 ms: "requeue" */
    else if (!strcmp(req->name, "rqa")) {
        res.code = KC_RECONCILE_REQUEUE_AFTER;
        res.requeue_after_ms = 20;
    }
    return res;
}

static void test_controller_metrics_names_and_values(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, NULL, decide);
    x.o.health_listen = "127.0.0.1:0";
    x.o.max_concurrent_reconciles = 3;
    kc_controller *c = cfx_make(&x);
    cfx_start(c);
    const char *url = kc_controller_health_url(c);
    assert_non_null(url);

    /* from the start, before any reconcile: every series at 0 (controller-runtime's initMetrics) */
    char *m = scrape(url);
    assert_non_null(m);
    HAS_LINE(m, "# TYPE " CR "reconcile_total counter");
    HAS_LINE(m, CR "reconcile_total" L ",result=\"success\"} 0");
    HAS_LINE(m, CR "reconcile_total" L ",result=\"error\"} 0");
    HAS_LINE(m, CR "reconcile_total" L ",result=\"requeue\"} 0");
    HAS_LINE(m, CR "reconcile_total" L ",result=\"requeue_after\"} 0");
    HAS_LINE(m, CR "reconcile_errors_total" L "} 0");
    HAS_LINE(m, CR "terminal_reconcile_errors_total" L "} 0");
    HAS_LINE(m, CR "reconcile_panics_total" L "} 0");
    HAS_LINE(m, CR "reconcile_time_seconds_count" L "} 0");
    HAS_LINE(m, CR "max_concurrent_reconciles" L "} 3");
    HAS_LINE(m, CR "active_workers" L "} 0");
    HAS_LINE(m, "workqueue_depth" L ",name=\"test\",priority=\"0\"} 0");
    free(m);

    const char *names[] = {"ok", "err", "term", "rq", "rqa"};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(kc_controller_enqueue(c, "default", names[i]), 0);
    /* ok 1, err 2, term 1, rq 2, rqa 2 = 8 reconciles returned */
    kc_controller_stats s;
    assert_true(CFX_WAIT_STATS(c, s, s.reconciles >= 8 && s.running == 0, 20000));
    assert_int_equal(s.reconciles, 8);

    m = scrape(url);
    assert_non_null(m);
    HAS_LINE(m, "# HELP " CR "reconcile_total Total number of reconciliations per controller");
    HAS_LINE(m, CR "reconcile_total" L ",result=\"success\"} 4"); /* ok + 3 second runs */
    HAS_LINE(m, CR "reconcile_total" L ",result=\"error\"} 2");   /* err + term (C3) */
    HAS_LINE(m, CR "reconcile_total" L ",result=\"requeue\"} 1");
    HAS_LINE(m, CR "reconcile_total" L ",result=\"requeue_after\"} 1");
    HAS_LINE(m, "# TYPE " CR "reconcile_errors_total counter");
    HAS_LINE(m, CR "reconcile_errors_total" L "} 2");
    HAS_LINE(m, "# TYPE " CR "terminal_reconcile_errors_total counter");
    HAS_LINE(m, CR "terminal_reconcile_errors_total" L "} 1");
    HAS_LINE(m, "# TYPE " CR "reconcile_panics_total counter");
    HAS_LINE(m, "# TYPE " CR "reconcile_timeouts_total counter");
    HAS_LINE(m, CR "reconcile_timeouts_total" L "} 0");
    HAS_LINE(m, "# TYPE " CR "reconcile_time_seconds histogram");
    static const char *const le[] = {
        "0.005", "0.01", "0.025", "0.05", "0.1", "0.15", "0.2", "0.25", "0.3",  "0.35",
        "0.4",   "0.45", "0.5",   "0.6",  "0.7", "0.8",  "0.9", "1",    "1.25", "1.5",
        "1.75",  "2",    "2.5",   "3",    "3.5", "4",    "4.5", "5",    "6",    "7",
        "8",     "9",    "10",    "15",   "20",  "25",   "30",  "40",   "50",   "60"};
    for (size_t i = 0; i < sizeof le / sizeof *le; i++) {
        char want[160];
        snprintf(want, sizeof want, CR "reconcile_time_seconds_bucket" L ",le=\"%s\"} ", le[i]);
        if (!strstr(m, want))
            fail_msg("missing bucket le=%s in:\n%s", le[i], m);
    }
    HAS_LINE(m, CR "reconcile_time_seconds_bucket" L ",le=\"60\"} 8");
    HAS_LINE(m, CR "reconcile_time_seconds_bucket" L ",le=\"+Inf\"} 8");
    HAS_LINE(m, CR "reconcile_time_seconds_count" L "} 8");
    HAS_LINE(m, "# TYPE " CR "max_concurrent_reconciles gauge");
    HAS_LINE(m, "# TYPE " CR "active_workers gauge");
    HAS_LINE(m, CR "active_workers" L "} 0");
    /* the queue's, labelled as controller-runtime labels them (M1) */
    HAS_LINE(m, "# TYPE workqueue_depth gauge");
    HAS_LINE(m, "workqueue_depth" L ",name=\"test\",priority=\"0\"} 0");
    HAS_LINE(m, "# TYPE workqueue_adds_total counter");
    HAS_LINE(m, "workqueue_adds_total" L ",name=\"test\"} 8");
    HAS_LINE(m, "# TYPE workqueue_retries_total counter");
    HAS_LINE(m, "workqueue_retries_total" L ",name=\"test\"} 3"); /* err, rq, rqa (D1) */
    HAS_LINE(m, "# TYPE workqueue_queue_duration_seconds histogram");
    HAS_LINE(m, "workqueue_queue_duration_seconds_count" L ",name=\"test\"} 8");
    HAS_LINE(m, "workqueue_work_duration_seconds_count" L ",name=\"test\"} 8");
    HAS_LINE(m, "workqueue_work_duration_seconds_bucket" L ",name=\"test\",le=\"1e-08\"} 0");
    HAS_LINE(m, "# TYPE workqueue_unfinished_work_seconds gauge");
    HAS_LINE(m, "workqueue_unfinished_work_seconds" L ",name=\"test\"} 0");
    HAS_LINE(m, "# TYPE workqueue_longest_running_processor_seconds gauge");
    HAS_LINE(m, "workqueue_longest_running_processor_seconds" L ",name=\"test\"} 0");
    free(m);
    cfx_down(&x);
}

/* A busy worker shows in active_workers while its reconcile runs. */
static kc_reconcile_result hold(crec *r, const kc_reconcile_request *req, kc_cached_client *cc,
                                unsigned nth)
{
    (void)req;
    (void)cc;
    (void)nth;
    pthread_mutex_lock(&r->mu);
    while (!r->ud) /* released by the test */
        pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
    return (kc_reconcile_result){KC_RECONCILE_DONE, 0};
}

static void test_controller_metrics_active_workers(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, NULL, hold);
    x.o.health_listen = "127.0.0.1:0";
    x.o.no_priority_queue = true;
    kc_controller *c = cfx_make(&x);
    cfx_start(c);
    assert_int_equal(kc_controller_enqueue(c, "default", "busy"), 0);
    assert_true(crec_wait_running(&x.r, 1, 20000));
    char *m = scrape(kc_controller_health_url(c));
    assert_non_null(m);
    HAS_LINE(m, CR "active_workers" L "} 1");
    HAS_LINE(m, CR "max_concurrent_reconciles" L "} 1");
    /* without the priority queue the depth has priority="" (client-go's queue in c-r) */
    HAS_LINE(m, "workqueue_depth" L ",name=\"test\",priority=\"\"} 0");
    free(m);
    pthread_mutex_lock(&x.r.mu);
    x.r.ud = &x;
    pthread_cond_broadcast(&x.r.cv);
    pthread_mutex_unlock(&x.r.mu);
    cfx_down(&x);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_controller_metrics_names_and_values),
        cmocka_unit_test(test_controller_metrics_active_workers),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
