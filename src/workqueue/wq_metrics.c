/*
 * workqueue/wq_metrics.c — the work queue's metrics under client-go's names (spec §1.5, M1–M2).
 *
 * Kept under q->mu, and only for a named queue (an unnamed one emits nothing and skips the clock
 * reads on add / get / done):
 *   workqueue_depth                      gauge: keys dirty and not yet handed out (+1 when a key
 *                                        enters dirty, −1 at get), as client-go counts it;
 *   workqueue_adds_total                 counter: adds that made a key dirty (deduplicated adds
 *                                        are not counted);
 *   workqueue_queue_duration_seconds     histogram: first add → get;
 *   workqueue_work_duration_seconds      histogram: get → done;
 *   workqueue_unfinished_work_seconds    gauge: sum of the ages of the keys being processed;
 *   workqueue_longest_running_processor_seconds  gauge: the largest such age;
 *   workqueue_retries_total              counter: accepted add_after / add_rate_limited calls.
 * Histogram buckets are 1e-8·10^k s for k = 0..11, as controller-runtime registers them.
 *
 * Labels: a standalone queue's series carry name="<queue name>" (client-go's provider). A
 * controller's queue (kc__workqueue_set_controller) carries controller-runtime's labels
 * [CR pkg/internal/metrics/workqueue.go]: controller="<controller>" and name on every series, and
 * priority on workqueue_depth — one series per priority seen for the priority queue (at most 25,
 * the rest summed under "exceeded_cardinality_limit"), priority="" otherwise.
 *
 * Deliberate differences: the two processing gauges are computed when rendered (client-go
 * refreshes them every 500 ms), so a scrape always sees the current value; the priority queue's
 * depth series for priority 0 exists from the start (controller-runtime creates each on first
 * use); past 25 priorities only the new ones go to the overflow series (controller-runtime then
 * moves every later change there).
 */
#include "workqueue/internal.h"

#include <stdlib.h>

static const double BOUNDS[KC__WQ_BUCKETS] = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3,
                                              1e-2, 1e-1, 1e0,  1e1,  1e2,  1e3};
static const char *const BOUND_TEXT[KC__WQ_BUCKETS] = {
    "1e-08", "1e-07", "1e-06", "1e-05", "0.0001", "0.001", "0.01", "0.1", "1", "10", "100", "1000"};

void kc__wq_hist_observe(kc__wq_hist *h, double s)
{
    h->count++;
    h->sum_s += s;
    for (size_t i = 0; i < KC__WQ_BUCKETS; i++)
        if (s <= BOUNDS[i]) {
            h->le[i]++;
            return;
        }
}

void kc__prom_escape(kc__buf *b, const char *v)
{
    for (const char *s = v; *s; s++) {
        if (*s == '\\' || *s == '"')
            kc__buf_append_char(b, '\\');
        if (*s == '\n')
            kc__buf_append_str(b, "\\n");
        else
            kc__buf_append_char(b, *s);
    }
}

/* The label pairs every series of q carries, sorted by name as client_golang writes them:
 * controller="…",name="…" for a controller's queue, else name="…". */
static void labels(kc__buf *b, const kc_workqueue *q)
{
    if (q->controller) {
        kc__buf_append_str(b, "controller=\"");
        kc__prom_escape(b, q->controller);
        kc__buf_append_str(b, "\",");
    }
    kc__buf_append_str(b, "name=\"");
    kc__prom_escape(b, q->name);
    kc__buf_append_char(b, '"');
}

void kc__prom_header(kc__buf *b, const char *metric, const char *type, const char *help)
{
    kc__buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", metric, help, metric, type);
}

static void scalar(kc__buf *b, const char *metric, const char *type, const char *help,
                   const char *lv, double v)
{
    kc__prom_header(b, metric, type, help);
    kc__buf_printf(b, "%s{%s} %.9g\n", metric, lv, v);
}

void kc__prom_histogram(kc__buf *b, const char *metric, const char *help, const char *lv,
                        const char *const *bound_text, const uint64_t *le, size_t n, uint64_t count,
                        double sum)
{
    kc__prom_header(b, metric, "histogram", help);
    uint64_t cum = 0;
    for (size_t i = 0; i < n; i++) {
        cum += le[i];
        kc__buf_printf(b, "%s_bucket{%s,le=\"%s\"} %llu\n", metric, lv, bound_text[i],
                       (unsigned long long)cum);
    }
    kc__buf_printf(b, "%s_bucket{%s,le=\"+Inf\"} %llu\n", metric, lv, (unsigned long long)count);
    kc__buf_printf(b, "%s_sum{%s} %.9g\n", metric, lv, sum);
    kc__buf_printf(b, "%s_count{%s} %llu\n", metric, lv, (unsigned long long)count);
}

static void histogram(kc__buf *b, const char *metric, const char *help, const char *lv,
                      const kc__wq_hist *h)
{
    kc__prom_histogram(b, metric, help, lv, BOUND_TEXT, h->le, KC__WQ_BUCKETS, h->count, h->sum_s);
}

void kc__wq_depth_add(kc_workqueue *q, int priority, int64_t delta)
{
    if (!q->name || !q->prio_metrics)
        return;
    for (size_t i = 0; i < q->n_prio_depth; i++)
        if (q->prio_depth[i].priority == priority) {
            q->prio_depth[i].depth += delta;
            return;
        }
    if (q->n_prio_depth < KC__WQ_PRIO_SERIES)
        q->prio_depth[q->n_prio_depth++] = (kc__wq_prio_depth){priority, delta};
    else
        q->depth_exceeded += delta;
}

/* workqueue_depth: one series; for a controller's queue with the priority label (per priority
 * seen for the priority queue, in the order first seen; "" otherwise). */
static void depth(kc__buf *b, const kc_workqueue *q, const char *lv)
{
    static const char HELP[] = "Current depth of workqueue";
    static const char HELP_PRIO[] = "Current depth of workqueue by workqueue and priority";
    kc__prom_header(b, "workqueue_depth", "gauge", q->controller ? HELP_PRIO : HELP);
    if (!q->controller) {
        kc__buf_printf(b, "workqueue_depth{%s} %llu\n", lv, (unsigned long long)q->depth);
        return;
    }
    if (!q->prio_metrics) {
        kc__buf_printf(b, "workqueue_depth{%s,priority=\"\"} %llu\n", lv,
                       (unsigned long long)q->depth);
        return;
    }
    for (size_t i = 0; i < q->n_prio_depth; i++)
        kc__buf_printf(b, "workqueue_depth{%s,priority=\"%d\"} %lld\n", lv,
                       q->prio_depth[i].priority, (long long)q->prio_depth[i].depth);
    if (q->n_prio_depth == KC__WQ_PRIO_SERIES)
        kc__buf_printf(b, "workqueue_depth{%s,priority=\"exceeded_cardinality_limit\"} %lld\n", lv,
                       (long long)q->depth_exceeded);
}

int kc__workqueue_set_controller(kc_workqueue *q, const char *controller, bool by_priority)
{
    char *c = kc__strdup(controller);
    if (!c)
        return KC_ENOMEM;
    pthread_mutex_lock(&q->mu);
    free(q->controller);
    q->controller = c;
    q->prio_metrics = by_priority;
    q->n_prio_depth = 0;
    q->depth_exceeded = 0;
    if (by_priority) /* the default priority's series from the start */
        q->prio_depth[q->n_prio_depth++] = (kc__wq_prio_depth){0, (int64_t)q->depth};
    pthread_mutex_unlock(&q->mu);
    return 0;
}

/* Sum and maximum age (s) of the keys being processed, at now. */
static void processing_ages(kc_workqueue *q, uint64_t now, double *sum, double *max)
{
    *sum = *max = 0;
    if (!q->n_processing)
        return;
    for (size_t i = 0; i < q->cap; i++)
        for (kc__wq_ent *e = q->buckets[i]; e; e = e->hnext)
            if (e->flags & KC__WQ_PROCESSING) {
                double age = now > e->u.t_start ? (double)(now - e->u.t_start) / 1e9 : 0;
                *sum += age;
                if (age > *max)
                    *max = age;
            }
}

char *kc_workqueue_metrics_text(kc_workqueue *q)
{
    if (!q)
        return NULL;
    kc__buf b = KC__BUF_INIT(0);
    pthread_mutex_lock(&q->mu);
    if (!q->name) { /* M2: an unnamed queue emits nothing */
        pthread_mutex_unlock(&q->mu);
        return kc__buf_steal(&b, NULL);
    }
    double unfinished, longest;
    processing_ages(q, kc__wq_now(q), &unfinished, &longest);
    kc__buf lb = KC__BUF_INIT(0);
    labels(&lb, q);
    const char *n = lb.data ? lb.data : "";
    depth(&b, q, n);
    scalar(&b, "workqueue_adds_total", "counter", "Total number of adds handled by workqueue", n,
           (double)q->adds_total);
    histogram(&b, "workqueue_queue_duration_seconds",
              "How long in seconds an item stays in workqueue before being requested", n,
              &q->queue_hist);
    histogram(&b, "workqueue_work_duration_seconds",
              "How long in seconds processing an item from workqueue takes.", n, &q->work_hist);
    scalar(&b, "workqueue_unfinished_work_seconds", "gauge",
           "How many seconds of work has been done that is in progress and hasn't been observed "
           "by work_duration. Large values indicate stuck threads. One can deduce the number of "
           "stuck threads by observing the rate at which this increases.",
           n, unfinished);
    scalar(&b, "workqueue_longest_running_processor_seconds", "gauge",
           "How many seconds has the longest running processor for workqueue been running.", n,
           longest);
    scalar(&b, "workqueue_retries_total", "counter", "Total number of retries handled by workqueue",
           n, (double)q->retries_total);
    kc__buf_free(&lb);
    pthread_mutex_unlock(&q->mu);
    return kc__buf_steal(&b, NULL);
}

char *kc_workqueue_metrics_render(void *q)
{
    return kc_workqueue_metrics_text(q);
}
