/*
 * controller/metrics.c — controller-runtime's reconcile metrics, served on the controller's
 * /metrics (kc_controller_opts.health_listen) after the work queue's (spec C3, C5; names, help,
 * labels, types and buckets as [CR pkg/internal/controller/metrics/metrics.go]; every series
 * exists from the start, as controller-runtime's initMetrics sets them):
 *
 *   controller_runtime_reconcile_total{controller,result}   counter; result = success, error,
 *       requeue, requeue_after. KC_RECONCILE_DONE → success; KC_RECONCILE_ERROR, TERMINAL and an
 *       unknown code → error (C3: a terminal error is an error too); KC_RECONCILE_REQUEUE_AFTER
 *       with requeue_after_ms > 0 → requeue_after, with 0 → requeue (controller-runtime's
 *       Result{Requeue: true}: run again at once).
 *   controller_runtime_reconcile_errors_total{controller}            counter: the error results
 *   controller_runtime_terminal_reconcile_errors_total{controller}   counter: KC_RECONCILE_TERMINAL
 *   controller_runtime_reconcile_panics_total{controller}            counter: always 0 (C has no
 *       panics to recover; kept so dashboards and alerts written for controller-runtime work)
 *   controller_runtime_reconcile_time_seconds{controller}            histogram,
 * controller-runtime's 40 buckets 0.005 … 60 s: the reconcile callback's duration
 *   controller_runtime_max_concurrent_reconciles{controller}         gauge: worker threads
 *   controller_runtime_active_workers{controller}                    gauge: workers holding a key
 *       now (kc_controller_stats.running)
 *   controller_runtime_reconcile_timeouts_total{controller}          counter: always 0 (no
 *       ReconciliationTimeout: C has no cancellation)
 *
 * The counts and the histogram are kept here under one mutex (a reconcile takes it once, after
 * its callback returned), separate from kc_controller_stats' atomics, so a scrape sees the
 * counters and the histogram's count agree.
 */
#include "controller/internal.h"
#include "workqueue/internal.h"

#include <stdlib.h>

#define N_BUCKETS 40

/* [CR pkg/internal/controller/metrics/metrics.go] ReconcileTime buckets, as Go prints them. */
static const double BOUNDS[N_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3,  0.35,
                                         0.4,   0.45, 0.5,   0.6,  0.7, 0.8,  0.9, 1.0,  1.25, 1.5,
                                         1.75,  2.0,  2.5,   3.0,  3.5, 4.0,  4.5, 5,    6,    7,
                                         8,     9,    10,    15,   20,  25,   30,  40,   50,   60};
static const char *const BOUND_TEXT[N_BUCKETS] = {
    "0.005", "0.01", "0.025", "0.05", "0.1", "0.15", "0.2", "0.25", "0.3",  "0.35",
    "0.4",   "0.45", "0.5",   "0.6",  "0.7", "0.8",  "0.9", "1",    "1.25", "1.5",
    "1.75",  "2",    "2.5",   "3",    "3.5", "4",    "4.5", "5",    "6",    "7",
    "8",     "9",    "10",    "15",   "20",  "25",   "30",  "40",   "50",   "60"};

enum { R_ERROR, R_REQUEUE, R_REQUEUE_AFTER, R_SUCCESS, R_N }; /* label values, sorted */
static const char *const RESULT[R_N] = {"error", "requeue", "requeue_after", "success"};

struct kc__ctrl_metrics {
    pthread_mutex_t mu;
    uint64_t results[R_N];
    uint64_t errors, terminal;
    uint64_t le[N_BUCKETS]; /* non-cumulative */
    uint64_t count;
    double sum_s;
};

kc__ctrl_metrics *kc__ctrl_metrics_new(void)
{
    kc__ctrl_metrics *m = calloc(1, sizeof(*m));
    if (m)
        pthread_mutex_init(&m->mu, NULL);
    return m;
}

void kc__ctrl_metrics_free(kc__ctrl_metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

void kc__ctrl_metrics_observe(kc_controller *ctrl, kc_reconcile_result r, uint64_t elapsed_ns)
{
    kc__ctrl_metrics *m = ctrl->metrics;
    double s = (double)elapsed_ns / 1e9;
    pthread_mutex_lock(&m->mu);
    switch (r.code) {
    case KC_RECONCILE_DONE:
        m->results[R_SUCCESS]++;
        break;
    case KC_RECONCILE_REQUEUE_AFTER:
        m->results[r.requeue_after_ms ? R_REQUEUE_AFTER : R_REQUEUE]++;
        break;
    default: /* KC_RECONCILE_ERROR, TERMINAL (an error too, C3) or an unknown code */
        m->terminal += r.code == KC_RECONCILE_TERMINAL;
        m->results[R_ERROR]++;
        m->errors++;
        break;
    }
    m->count++;
    m->sum_s += s;
    for (size_t i = 0; i < N_BUCKETS; i++)
        if (s <= BOUNDS[i]) {
            m->le[i]++;
            break;
        }
    pthread_mutex_unlock(&m->mu);
}

static void one(kc__buf *b, const char *metric, const char *type, const char *help, const char *lv,
                uint64_t v)
{
    kc__prom_header(b, metric, type, help);
    kc__buf_printf(b, "%s{%s} %llu\n", metric, lv, (unsigned long long)v);
}

char *kc__ctrl_metrics_render(void *ud)
{
    kc_controller *c = ud;
    if (!c)
        return NULL;
    kc__buf lb = KC__BUF_INIT(0), b = KC__BUF_INIT(0);
    kc__buf_append_str(&lb, "controller=\"");
    kc__prom_escape(&lb, c->name);
    kc__buf_append_char(&lb, '"');
    const char *lv = lb.data ? lb.data : "";
    pthread_mutex_lock(&c->mu);
    unsigned active = c->running;
    pthread_mutex_unlock(&c->mu);
    kc__ctrl_metrics *m = c->metrics;
    pthread_mutex_lock(&m->mu);
    kc__prom_header(&b, "controller_runtime_reconcile_total", "counter",
                    "Total number of reconciliations per controller");
    for (int i = 0; i < R_N; i++)
        kc__buf_printf(&b, "controller_runtime_reconcile_total{%s,result=\"%s\"} %llu\n", lv,
                       RESULT[i], (unsigned long long)m->results[i]);
    one(&b, "controller_runtime_reconcile_errors_total", "counter",
        "Total number of reconciliation errors per controller", lv, m->errors);
    one(&b, "controller_runtime_terminal_reconcile_errors_total", "counter",
        "Total number of terminal reconciliation errors per controller", lv, m->terminal);
    one(&b, "controller_runtime_reconcile_panics_total", "counter",
        "Total number of reconciliation panics per controller", lv, 0);
    kc__prom_histogram(&b, "controller_runtime_reconcile_time_seconds",
                       "Length of time per reconciliation per controller", lv, BOUND_TEXT, m->le,
                       N_BUCKETS, m->count, m->sum_s);
    pthread_mutex_unlock(&m->mu);
    one(&b, "controller_runtime_max_concurrent_reconciles", "gauge",
        "Maximum number of concurrent reconciles per controller", lv, c->workers);
    one(&b, "controller_runtime_active_workers", "gauge",
        "Number of currently used workers per controller", lv, active);
    one(&b, "controller_runtime_reconcile_timeouts_total", "counter",
        "Total number of reconciliation timeouts per controller", lv, 0);
    kc__buf_free(&lb);
    return kc__buf_steal(&b, NULL);
}
