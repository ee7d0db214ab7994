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
 * Deliberate differences: series carry the label name="<queue name>" only (controller-runtime
 * also sets controller="<name>"; a controller can pick its queue's name to match); the two
 * processing gauges are computed when rendered (client-go refreshes them every 500 ms), so a
 * scrape always sees the current value.
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

static void label(kc__buf *b, const char *name)
{
    kc__buf_append_str(b, "{name=\"");
    for (const char *s = name; *s; s++) {
        if (*s == '\\' || *s == '"')
            kc__buf_append_char(b, '\\');
        if (*s == '\n')
            kc__buf_append_str(b, "\\n");
        else
            kc__buf_append_char(b, *s);
    }
    kc__buf_append_char(b, '"');
}

static void header(kc__buf *b, const char *metric, const char *type, const char *help)
{
    kc__buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", metric, help, metric, type);
}

static void scalar(kc__buf *b, const char *metric, const char *type, const char *help,
                   const char *name, double v)
{
    header(b, metric, type, help);
    kc__buf_append_str(b, metric);
    label(b, name);
    kc__buf_printf(b, "} %.9g\n", v);
}

static void histogram(kc__buf *b, const char *metric, const char *help, const char *name,
                      const kc__wq_hist *h)
{
    header(b, metric, "histogram", help);
    uint64_t cum = 0;
    for (size_t i = 0; i < KC__WQ_BUCKETS; i++) {
        cum += h->le[i];
        kc__buf_printf(b, "%s_bucket", metric);
        label(b, name);
        kc__buf_printf(b, ",le=\"%s\"} %llu\n", BOUND_TEXT[i], (unsigned long long)cum);
    }
    kc__buf_printf(b, "%s_bucket", metric);
    label(b, name);
    kc__buf_printf(b, ",le=\"+Inf\"} %llu\n", (unsigned long long)h->count);
    kc__buf_printf(b, "%s_sum", metric);
    label(b, name);
    kc__buf_printf(b, "} %.9g\n", h->sum_s);
    kc__buf_printf(b, "%s_count", metric);
    label(b, name);
    kc__buf_printf(b, "} %llu\n", (unsigned long long)h->count);
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
    const char *n = q->name;
    scalar(&b, "workqueue_depth", "gauge", "Current depth of workqueue", n, (double)q->depth);
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
    pthread_mutex_unlock(&q->mu);
    return kc__buf_steal(&b, NULL);
}

char *kc_workqueue_metrics_render(void *q)
{
    return kc_workqueue_metrics_text(q);
}
