/*
 * webhook/metrics.c — controller-runtime's webhook and certwatcher metrics (rules MT1–MT4).
 *
 * Names, types and labels are controller-runtime's (pkg/webhook/internal/metrics/metrics.go and
 * pkg/certwatcher/metrics): controller_runtime_webhook_requests_total{webhook,code} (counter),
 * controller_runtime_webhook_latency_seconds{webhook} (histogram, buckets
 * ExponentialBuckets(1e-8, 10, 12): 1e-08 … 1000 s), controller_runtime_webhook_requests_in_flight
 * {webhook} (gauge), certwatcher_read_certificate_total and
 * certwatcher_read_certificate_errors_total (counters). webhook is the route's name (its path
 * unless the handler options name it); code is the HTTP status written, and the code="200" and
 * code="500" series exist from registration at 0 (MT2). Every route is instrumented, conversion
 * included (MT4). One mutex guards all series: a request takes it twice (begin, end), far below the
 * cost of a TLS record.
 */
#include "webhook/transport.h"

#include <stdlib.h>
#include <string.h>

#define N_BUCKETS 12
#define MAX_CODES 24 /* distinct status codes per route; more are folded into the last one */

typedef struct code_count {
    unsigned code;
    uint64_t n;
} code_count;

typedef struct series {
    char *webhook;
    int64_t in_flight;
    code_count codes[MAX_CODES];
    size_t n_codes;
    uint64_t buckets[N_BUCKETS]; /* non-cumulative; summed when rendered */
    uint64_t count;
    double sum;
} series;

struct kc__wh_metrics {
    pthread_mutex_t mu;
    series *s;
    size_t n;
};

static const double BUCKETS[N_BUCKETS] = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3,
                                          1e-2, 1e-1, 1,    10,   100,  1000};

kc__wh_metrics *kc__wh_metrics_new(void)
{
    kc__wh_metrics *m = calloc(1, sizeof(*m));
    if (m)
        pthread_mutex_init(&m->mu, NULL);
    return m;
}

int kc__wh_metrics_add(kc__wh_metrics *m, const char *webhook)
{
    series *ns = realloc(m->s, (m->n + 1) * sizeof(*ns));
    if (!ns)
        return KC_ENOMEM;
    m->s = ns;
    series *s = &m->s[m->n];
    memset(s, 0, sizeof(*s));
    if (!(s->webhook = kc__strdup(webhook)))
        return KC_ENOMEM;
    s->codes[0].code = 200;
    s->codes[1].code = 500;
    s->n_codes = 2;
    return (int)m->n++;
}

void kc__wh_metrics_begin(kc__wh_metrics *m, int idx)
{
    pthread_mutex_lock(&m->mu);
    m->s[idx].in_flight++;
    pthread_mutex_unlock(&m->mu);
}

void kc__wh_metrics_end(kc__wh_metrics *m, int idx, unsigned code, double seconds)
{
    pthread_mutex_lock(&m->mu);
    series *s = &m->s[idx];
    s->in_flight--;
    if (code == 0) {
        pthread_mutex_unlock(&m->mu);
        return;
    }
    size_t i = 0;
    while (i < s->n_codes && s->codes[i].code != code)
        i++;
    if (i == s->n_codes) {
        if (s->n_codes < MAX_CODES)
            s->codes[s->n_codes++].code = code;
        else
            i = MAX_CODES - 1;
    }
    s->codes[i].n++;
    size_t b = 0;
    while (b < N_BUCKETS && seconds > BUCKETS[b])
        b++;
    if (b < N_BUCKETS)
        s->buckets[b]++;
    s->count++;
    s->sum += seconds;
    pthread_mutex_unlock(&m->mu);
}

static void label(kc__buf *b, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            kc__buf_append_char(b, '\\');
        if (*v == '\n')
            kc__buf_append_str(b, "\\n");
        else
            kc__buf_append_char(b, *v);
    }
}

static void render_series(const series *s, kc__buf *b, int which)
{
    switch (which) {
    case 0:
        for (size_t i = 0; i < s->n_codes; i++) {
            kc__buf_append_str(b, "controller_runtime_webhook_requests_total{code=\"");
            kc__buf_printf(b, "%u\",webhook=\"", s->codes[i].code);
            label(b, s->webhook);
            kc__buf_printf(b, "\"} %llu\n", (unsigned long long)s->codes[i].n);
        }
        break;
    case 1: {
        uint64_t cum = 0;
        for (size_t i = 0; i < N_BUCKETS; i++) {
            cum += s->buckets[i];
            kc__buf_printf(b, "controller_runtime_webhook_latency_seconds_bucket{webhook=\"");
            label(b, s->webhook);
            kc__buf_printf(b, "\",le=\"%g\"} %llu\n", BUCKETS[i], (unsigned long long)cum);
        }
        kc__buf_append_str(b, "controller_runtime_webhook_latency_seconds_bucket{webhook=\"");
        label(b, s->webhook);
        kc__buf_printf(b, "\",le=\"+Inf\"} %llu\n", (unsigned long long)s->count);
        kc__buf_append_str(b, "controller_runtime_webhook_latency_seconds_sum{webhook=\"");
        label(b, s->webhook);
        kc__buf_printf(b, "\"} %.9g\n", s->sum);
        kc__buf_append_str(b, "controller_runtime_webhook_latency_seconds_count{webhook=\"");
        label(b, s->webhook);
        kc__buf_printf(b, "\"} %llu\n", (unsigned long long)s->count);
        break;
    }
    default:
        kc__buf_append_str(b, "controller_runtime_webhook_requests_in_flight{webhook=\"");
        label(b, s->webhook);
        kc__buf_printf(b, "\"} %lld\n", (long long)s->in_flight);
    }
}

void kc__wh_metrics_render(kc__wh_metrics *m, uint64_t cert_reads, uint64_t cert_errors, kc__buf *b)
{
    static const char *const head[3] = {
        "# HELP controller_runtime_webhook_requests_total Total number of admission requests by "
        "HTTP status code.\n# TYPE controller_runtime_webhook_requests_total counter\n",
        "# HELP controller_runtime_webhook_latency_seconds Histogram of the latency of processing "
        "admission requests\n# TYPE controller_runtime_webhook_latency_seconds histogram\n",
        "# HELP controller_runtime_webhook_requests_in_flight Current number of admission requests "
        "being served.\n# TYPE controller_runtime_webhook_requests_in_flight gauge\n"};
    pthread_mutex_lock(&m->mu);
    for (int w = 0; w < 3; w++) {
        kc__buf_append_str(b, head[w]);
        for (size_t i = 0; i < m->n; i++)
            render_series(&m->s[i], b, w);
    }
    pthread_mutex_unlock(&m->mu);
    kc__buf_printf(b,
                   "# HELP certwatcher_read_certificate_total Total number of certificate reads\n"
                   "# TYPE certwatcher_read_certificate_total counter\n"
                   "certwatcher_read_certificate_total %llu\n"
                   "# HELP certwatcher_read_certificate_errors_total Total number of certificate "
                   "read errors\n"
                   "# TYPE certwatcher_read_certificate_errors_total counter\n"
                   "certwatcher_read_certificate_errors_total %llu\n",
                   (unsigned long long)cert_reads, (unsigned long long)cert_errors);
}

void kc__wh_metrics_free(kc__wh_metrics *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        free(m->s[i].webhook);
    free(m->s);
    pthread_mutex_destroy(&m->mu);
    free(m);
}
