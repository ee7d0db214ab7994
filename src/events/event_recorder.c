/*
 * event_recorder.c — kc_event_recorder (kcache/event.h): a bounded queue in front of one sender
 * thread, so recording an event never waits for the network (spec E2).
 *
 * Threads and locks: one mutex (mu) guards the queue, the counters and the stop flag; `work` wakes
 * the sender (an event queued, or stop) and also times its waits between tries; `idle` wakes
 * flush waiters. record takes mu only to link the event (formatting and copying happen before),
 * so it never waits for the sender, which never holds mu during a request. The correlator (E3–E6,
 * event_correlate.c) is touched by the sender alone and needs no lock.
 *
 * Ordering and flush: events are sent in the order recorded. Every accepted event gets a sequence
 * number (enqueued), and the sender counts events finished (done: sent, skipped or given up); a
 * flush waits until done reaches the enqueued count seen at its start.
 *
 * Retries (E7): a retryable failure (kc__event_retryable) is tried again after a wait — the first
 * random in [0, interval), then interval — up to max_tries in all; the wait is cut short by free.
 * While the sender waits, new events queue up and, past the bound, are dropped and counted: the
 * caller is never the one who waits.
 *
 * Ownership: an event is owned by the queue, then by the sender, which frees it when done. free
 * stops the sender (a request in flight finishes; no retry follows), drops what is still queued
 * (counted) and joins the thread.
 */
#include "events/internal.h"

#include "core/internal.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_QUEUE_LEN 1000
#define DEFAULT_MAX_TRIES 12
#define DEFAULT_RETRY_MS  10000
#define MAX_MESSAGE       4096 /* bytes kept of a message (bounded memory); longer: " ..." */
#define MAX_NOTE_V1       1024 /* E10: events.k8s.io/v1 note */
#define MAX_WORD_V1       128  /* E10: events.k8s.io/v1 reason, action, reportingInstance */
#define DEFAULT_COMPONENT "kcache"

struct kc_event_recorder {
    kc_client *client; /* borrowed */
    char *component, *host;
    size_t queue_len;
    int max_tries;
    uint64_t retry_ns;
    kc_event_api api;
    char *instance;             /* events.k8s.io/v1 reportingInstance: component-host (E8) */
    kc__event_correlator *corr; /* sender thread only (events.k8s.io/v1: its spam filter only) */
    kc__event_series *series;   /* events.k8s.io/v1 only; sender thread only */
    kc__rng rng;                /* sender thread only */

    pthread_mutex_t mu;
    pthread_cond_t work, idle;
    kc__event *head, *tail;
    size_t n;
    bool stopping;
    uint64_t enqueued, done;
    kc_event_recorder_stats stats;
    pthread_t thread;
};

/* ---- the sender ------------------------------------------------------------------------------ */

/* Wait ns on `work` unless stopping (mu held). Returns true when stopping. */
static bool wait_retry(kc_event_recorder *rec, uint64_t ns)
{
    uint64_t deadline = kc__now_ns() + ns;
    while (!rec->stopping && kc__cond_wait_until(&rec->work, &rec->mu, deadline) == 0)
        ;
    return rec->stopping;
}

/* Send ev, retrying as E7 says. Called without mu. */
static void deliver(kc_event_recorder *rec, kc__event *ev)
{
    kc__event_source src = {rec->component, rec->host};
    for (int attempt = 1;; attempt++) {
        kc_error err = KC_ERROR_INIT;
        char *name = NULL;
        int64_t count = 0;
        int rc = rec->api == KC_EVENT_API_EVENTS_V1
                     ? kc__event_send_v1(rec->client, rec->component, rec->instance, ev, &err)
                     : kc__event_send(rec->client, &src, ev, &name, &count, &err);
        if (rc == 0) {
            if (rec->api == KC_EVENT_API_CORE_V1)
                kc__event_correlator_sent(rec->corr, ev, name, count);
            free(name);
            pthread_mutex_lock(&rec->mu);
            if (ev->patch)
                rec->stats.patched++;
            else
                rec->stats.created++;
            pthread_mutex_unlock(&rec->mu);
            return;
        }
        bool again = kc__event_retryable(rc) && attempt < rec->max_tries;
        pthread_mutex_lock(&rec->mu);
        if (again) {
            uint64_t wait =
                attempt == 1 ? kc__rng_range(&rec->rng, 0, rec->retry_ns - 1) : rec->retry_ns;
            again = !wait_retry(rec, wait);
            if (again)
                rec->stats.retries++;
        }
        if (!again)
            rec->stats.errors++;
        pthread_mutex_unlock(&rec->mu);
        if (!again) {
            kc__log(KC_LOG_LEVEL_WARN, "controller",
                    "event %s/%s (%s %s on %s %s): not written after %d tries: %s",
                    ev->obj_ns[0] ? ev->obj_ns : "default", ev->event_name, ev->type, ev->reason,
                    ev->kind, ev->name, attempt, err.message ? err.message : kc_strerror(rc));
            kc_error_clear(&err);
            return;
        }
        kc_error_clear(&err);
    }
}

/* events.k8s.io/v1: the spam filter (offered for both APIs, E12), then the series cache (E9). */
static void handle_v1(kc_event_recorder *rec, kc__event *ev)
{
    int rc = kc__event_spam(rec->corr, ev);
    bool spam = rc == 1;
    if (rc == 0)
        rc = kc__event_series_observe(rec->series, ev, &rec->rng);
    if (rc == 0) {
        deliver(rec, ev);
        return;
    }
    pthread_mutex_lock(&rec->mu);
    if (spam)
        rec->stats.spam_filtered++;
    else if (rc == 1)
        rec->stats.series_cached++;
    else
        rec->stats.errors++;
    pthread_mutex_unlock(&rec->mu);
}

static void handle(kc_event_recorder *rec, kc__event *ev)
{
    if (rec->api == KC_EVENT_API_EVENTS_V1) {
        handle_v1(rec, ev);
        return;
    }
    int rc = kc__event_correlate(rec->corr, ev);
    if (ev->aggregated) {
        pthread_mutex_lock(&rec->mu);
        rec->stats.aggregated++;
        pthread_mutex_unlock(&rec->mu);
    }
    if (rc == 0) {
        deliver(rec, ev);
        return;
    }
    pthread_mutex_lock(&rec->mu);
    if (rc == 1)
        rec->stats.spam_filtered++;
    else
        rec->stats.errors++;
    pthread_mutex_unlock(&rec->mu);
}

/* Send the series writes due now (E9 refresh and finish); returns when the next are due. Called
 * without mu. */
static uint64_t series_writes(kc_event_recorder *rec)
{
    kc__event **v = NULL;
    size_t n = 0;
    uint64_t next = 0;
    if (kc__event_series_due(rec->series, kc__now_ns(), &v, &n, &next) < 0) {
        pthread_mutex_lock(&rec->mu);
        rec->stats.errors++;
        pthread_mutex_unlock(&rec->mu);
    }
    for (size_t i = 0; i < n; i++) {
        deliver(rec, v[i]);
        kc__event_free(v[i]);
    }
    free(v);
    return next;
}

static void *sender_main(void *arg)
{
    kc_event_recorder *rec = arg;
    uint64_t next_check = 0; /* events.k8s.io/v1: when series writes may be due; 0 = none */
    pthread_mutex_lock(&rec->mu);
    for (;;) {
        while (!rec->head && !rec->stopping && (!next_check || kc__now_ns() < next_check)) {
            if (next_check)
                kc__cond_wait_until(&rec->work, &rec->mu, next_check);
            else
                pthread_cond_wait(&rec->work, &rec->mu);
        }
        if (rec->stopping)
            break;
        if (rec->series && (!rec->head || (next_check && kc__now_ns() >= next_check))) {
            pthread_mutex_unlock(&rec->mu);
            next_check = series_writes(rec);
            pthread_mutex_lock(&rec->mu);
            continue;
        }
        kc__event *ev = rec->head;
        rec->head = ev->next;
        if (!rec->head)
            rec->tail = NULL;
        rec->n--;
        pthread_mutex_unlock(&rec->mu);
        handle(rec, ev);
        kc__event_free(ev);
        if (rec->series && !next_check)
            next_check = series_writes(rec); /* arms the timer after the first event */
        pthread_mutex_lock(&rec->mu);
        rec->done++;
        pthread_cond_broadcast(&rec->idle);
    }
    /* Stopping: what is still queued is dropped (counted). */
    while (rec->head) {
        kc__event *ev = rec->head;
        rec->head = ev->next;
        kc__event_free(ev);
        rec->stats.dropped++;
        rec->done++;
    }
    rec->tail = NULL;
    rec->n = 0;
    pthread_cond_broadcast(&rec->idle);
    pthread_mutex_unlock(&rec->mu);
    return NULL;
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

static void rec_free_fields(kc_event_recorder *rec)
{
    kc__event_correlator_free(rec->corr);
    kc__event_series_free(rec->series);
    free(rec->instance);
    free(rec->component);
    free(rec->host);
    free(rec);
}

/* reportingInstance = reportingController + "-" + hostname (E8), at most 128 bytes (E10). */
static char *instance_name(const char *component, const char *host)
{
    if (!component || !host)
        return NULL;
    kc__buf b;
    kc__buf_init(&b, 0);
    if (kc__buf_printf(&b, "%s-%s", component, host) < 0) {
        kc__buf_free(&b);
        return NULL;
    }
    if (b.len > MAX_WORD_V1)
        kc__buf_truncate(&b, MAX_WORD_V1);
    return kc__buf_steal(&b, NULL);
}

static int check_opts(const kc_event_recorder_opts *o, kc_error *err)
{
    if (o->api != KC_EVENT_API_CORE_V1 && o->api != KC_EVENT_API_EVENTS_V1)
        return kc_error_set(err, KC_EINVAL, "event recorder: unknown api %d", (int)o->api);
    if (o->max_tries < 0 || o->retry_interval_ms < 0 || o->spam_refill_ms < 0 ||
        o->series_finish_ms < 0 || o->series_refresh_ms < 0)
        return kc_error_set(err, KC_EINVAL,
                            "event recorder: max_tries, retry_interval_ms, spam_refill_ms and "
                            "series_*_ms must not be negative");
    return 0;
}

int(kc_event_recorder_new)(kc_client *client, const kc_event_recorder_opts *opts, size_t opts_size,
                           kc_event_recorder **ret, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_event_recorder_opts, err);
    kc_event_recorder_opts o = *opts;
    if (!client || !ret)
        return kc_error_set(err, KC_EINVAL, "event recorder: client and ret are required");
    int rc = check_opts(&o, err);
    if (rc < 0)
        return rc;
    kc_event_recorder *rec = calloc(1, sizeof *rec);
    if (!rec)
        return kc_error_set(err, KC_ENOMEM, "event recorder: out of memory");
    char hostname[256] = "";
    if (!o.host && gethostname(hostname, sizeof hostname - 1) != 0)
        hostname[0] = '\0';
    rec->client = client;
    rec->component = kc__strdup(o.component ? o.component : DEFAULT_COMPONENT);
    rec->host = kc__strdup(o.host ? o.host : hostname);
    rec->queue_len = o.queue_len ? o.queue_len : DEFAULT_QUEUE_LEN;
    rec->max_tries = o.max_tries ? o.max_tries : DEFAULT_MAX_TRIES;
    rec->retry_ns =
        (uint64_t)(o.retry_interval_ms ? o.retry_interval_ms : DEFAULT_RETRY_MS) * KC__NS_PER_MS;
    kc__event_correlator_opts co = {0};
    co.spam_burst = o.spam_burst;
    co.spam_refill_ns = (uint64_t)o.spam_refill_ms * KC__NS_PER_MS;
    rec->corr = kc__event_correlator_new(&co);
    rec->api = o.api;
    bool v1_ok = true;
    if (o.api == KC_EVENT_API_EVENTS_V1) {
        rec->series = kc__event_series_new(0, (uint64_t)o.series_finish_ms * KC__NS_PER_MS,
                                           (uint64_t)o.series_refresh_ms * KC__NS_PER_MS);
        rec->instance = instance_name(rec->component, rec->host);
        v1_ok = rec->series && rec->instance;
    }
    kc__rng_seed_auto(&rec->rng);
    if (!rec->component || !rec->host || !rec->corr || !v1_ok) {
        rec_free_fields(rec);
        return kc_error_set(err, KC_ENOMEM, "event recorder: out of memory");
    }
    pthread_mutex_init(&rec->mu, NULL);
    if (kc__cond_init_monotonic(&rec->work) != 0 || kc__cond_init_monotonic(&rec->idle) != 0) {
        pthread_mutex_destroy(&rec->mu);
        rec_free_fields(rec);
        return kc_error_set(err, KC_ENOMEM, "event recorder: cannot create condition variables");
    }
    if (pthread_create(&rec->thread, NULL, sender_main, rec) != 0) {
        pthread_cond_destroy(&rec->work);
        pthread_cond_destroy(&rec->idle);
        pthread_mutex_destroy(&rec->mu);
        rec_free_fields(rec);
        return kc_error_set(err, KC_EIO, "event recorder: cannot start the sender thread");
    }
    *ret = rec;
    return 0;
}

void kc_event_recorder_free(kc_event_recorder *rec)
{
    if (!rec)
        return;
    pthread_mutex_lock(&rec->mu);
    rec->stopping = true;
    pthread_cond_broadcast(&rec->work);
    pthread_mutex_unlock(&rec->mu);
    pthread_join(rec->thread, NULL);
    pthread_cond_destroy(&rec->work);
    pthread_cond_destroy(&rec->idle);
    pthread_mutex_destroy(&rec->mu);
    rec_free_fields(rec);
}

/* ---- recording ---------------------------------------------------------------------------------
 */

/* Cut b to at most max bytes on a UTF-8 boundary, " ..." appended (E10). 0 or KC_ENOMEM. */
static int cut_text(kc__buf *b, size_t max)
{
    if (b->len <= max)
        return 0;
    size_t cut = max - 4;
    while (cut > 0 && ((unsigned char)b->data[cut] & 0xc0) == 0x80)
        cut--;
    kc__buf_truncate(b, cut);
    return kc__buf_append_str(b, " ...");
}

/* A copy of s cut to max bytes (cut_text). New malloc'd; NULL on ENOMEM. */
static char *cut_copy(const char *s, size_t max)
{
    kc__buf b;
    kc__buf_init(&b, 0);
    if (kc__buf_append_str(&b, s) < 0 || cut_text(&b, max) < 0) {
        kc__buf_free(&b);
        return NULL;
    }
    return kc__buf_steal(&b, NULL);
}

/* Format the message, at most max bytes (cut on a UTF-8 boundary, " ..." appended). */
static KC__PRINTF(1, 0) char *format_message(const char *fmt, va_list ap, size_t max)
{
    kc__buf b;
    kc__buf_init(&b, 0);
    if (kc__buf_vprintf(&b, fmt, ap) < 0) {
        kc__buf_free(&b);
        return NULL;
    }
    if (cut_text(&b, max) < 0) {
        kc__buf_free(&b);
        return NULL;
    }
    return kc__buf_steal(&b, NULL);
}

static int refuse(kc_event_recorder *rec, const char *why, const char *type, const char *reason)
{
    pthread_mutex_lock(&rec->mu);
    rec->stats.invalid++;
    pthread_mutex_unlock(&rec->mu);
    kc__log(KC_LOG_LEVEL_WARN, "controller",
            "event recorder: event dropped: %s (type %s, reason %s)", why, type ? type : "(null)",
            reason ? reason : "(null)");
    return KC_EINVAL;
}

/* The event as queued: events.k8s.io/v1 cuts reason and action to 128 bytes and the note to 1024
 * (E10) and takes the reason as the action when none is given. NULL on ENOMEM. */
static KC__PRINTF(7, 0) kc__event *make_event(kc_event_recorder *rec, const kc_event_ref *ref,
                                              const kc_event_ref *related, const char *type,
                                              const char *reason, const char *action,
                                              const char *fmt, va_list ap)
{
    bool v1 = rec->api == KC_EVENT_API_EVENTS_V1;
    char *msg = format_message(fmt, ap, v1 ? MAX_NOTE_V1 : MAX_MESSAGE);
    char *r = v1 ? cut_copy(reason, MAX_WORD_V1) : NULL;
    const char *act = action && action[0] ? action : v1 ? reason : "";
    char *a = v1 ? cut_copy(act, MAX_WORD_V1) : NULL;
    kc__event *ev = NULL;
    if (msg && (!v1 || (r && a)))
        ev = kc__event_new(ref, related, type, v1 ? r : reason, v1 ? a : act, msg);
    free(msg);
    free(r);
    free(a);
    return ev;
}

static KC__PRINTF(7, 0) int vrecord(kc_event_recorder *rec, const kc_event_ref *ref,
                                    const kc_event_ref *related, const char *type,
                                    const char *reason, const char *action, const char *fmt,
                                    va_list ap)
{
    if (!rec)
        return KC_EINVAL;
    if (!ref || !fmt || !ref->kind || !ref->kind[0] || !ref->name || !ref->name[0])
        return refuse(rec, "the involved object needs a kind and a name", type, reason);
    if (!type || (strcmp(type, KC_EVENT_NORMAL) != 0 && strcmp(type, KC_EVENT_WARNING) != 0))
        return refuse(rec, "type must be Normal or Warning (E1)", type, reason);
    if (!reason || !reason[0])
        return refuse(rec, "reason is required", type, reason);
    kc__event *ev = make_event(rec, ref, related, type, reason, action, fmt, ap);
    if (!ev)
        return KC_ENOMEM;
    pthread_mutex_lock(&rec->mu);
    if (rec->n >= rec->queue_len || rec->stopping) {
        rec->stats.dropped++;
        pthread_mutex_unlock(&rec->mu);
        kc__event_free(ev);
        return KC_EBUSY;
    }
    if (rec->tail)
        rec->tail->next = ev;
    else
        rec->head = ev;
    rec->tail = ev;
    rec->n++;
    rec->enqueued++;
    rec->stats.recorded++;
    pthread_cond_signal(&rec->work);
    pthread_mutex_unlock(&rec->mu);
    return 0;
}

int kc_event_recorder_record(kc_event_recorder *rec, const kc_event_ref *ref, const char *type,
                             const char *reason, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vrecord(rec, ref, NULL, type, reason, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

int kc_event_recorder_record_obj(kc_event_recorder *rec, const kc_obj *obj, const char *type,
                                 const char *reason, const char *fmt, ...)
{
    if (!rec || !obj)
        return KC_EINVAL;
    kc_event_ref ref = {kc_obj_api_version(obj),
                        kc_obj_kind(obj),
                        kc_obj_namespace(obj),
                        kc_obj_name(obj),
                        kc_obj_uid(obj),
                        kc_obj_resource_version(obj),
                        NULL};
    va_list ap;
    va_start(ap, fmt);
    int rc = vrecord(rec, &ref, NULL, type, reason, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

int kc_event_recorder_record_action(kc_event_recorder *rec, const kc_event_ref *regarding,
                                    const kc_event_ref *related, const char *type,
                                    const char *reason, const char *action, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vrecord(rec, regarding, related, type, reason, action, fmt, ap);
    va_end(ap);
    return rc;
}

int kc_event_recorder_flush(kc_event_recorder *rec, int64_t timeout_ms, kc_error *err)
{
    if (!rec)
        return kc_error_set(err, KC_EINVAL, "event recorder: NULL recorder");
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    int rc = 0;
    pthread_mutex_lock(&rec->mu);
    uint64_t target = rec->enqueued;
    while (rec->done < target && rc == 0)
        rc = kc__cond_wait_until(&rec->idle, &rec->mu, deadline);
    uint64_t left = target > rec->done ? target - rec->done : 0;
    pthread_mutex_unlock(&rec->mu);
    if (left)
        return kc_error_set(err, KC_ETIMEOUT, "event recorder: %llu events still pending",
                            (unsigned long long)left);
    return 0;
}

void(kc_event_recorder_get_stats)(kc_event_recorder *rec, kc_event_recorder_stats *ret,
                                  size_t ret_size)
{
    kc_event_recorder_stats st;
    memset(&st, 0, sizeof st);
    if (rec) {
        pthread_mutex_lock(&rec->mu);
        st = rec->stats;
        st.queued = rec->n;
        pthread_mutex_unlock(&rec->mu);
    }
    kc__result_copy(ret, ret_size, &st, sizeof st);
}

char *kc_event_recorder_metrics_text(kc_event_recorder *rec)
{
    if (!rec)
        return NULL;
    kc_event_recorder_stats st;
    kc_event_recorder_get_stats(rec, &st);
    char *label = NULL;
    if (kc_json_format(&label, NULL, NULL, "%s", rec->component) < 0) /* quoted, escaped */
        return NULL;
    kc__buf b;
    kc__buf_init(&b, 0);
    const struct {
        const char *result;
        uint64_t n;
    } results[] = {{"created", st.created},
                   {"patched", st.patched},
                   {"spam_filtered", st.spam_filtered},
                   {"dropped", st.dropped},
                   {"invalid", st.invalid},
                   {"error", st.errors},
                   {"series_cached", st.series_cached}};
    int rc = kc__buf_append_str(&b, "# HELP kcache_events_total Events recorded, by outcome.\n"
                                    "# TYPE kcache_events_total counter\n");
    for (size_t i = 0; rc == 0 && i < KC__ARRAY_LEN(results); i++)
        rc = kc__buf_printf(&b, "kcache_events_total{component=%s,result=\"%s\"} %llu\n", label,
                            results[i].result, (unsigned long long)results[i].n);
    if (rc == 0)
        rc = kc__buf_printf(
            &b,
            "# HELP kcache_events_aggregated_total Events folded into a combined Event.\n"
            "# TYPE kcache_events_aggregated_total counter\n"
            "kcache_events_aggregated_total{component=%s} %llu\n"
            "# HELP kcache_events_retries_total Event writes tried again after an error.\n"
            "# TYPE kcache_events_retries_total counter\n"
            "kcache_events_retries_total{component=%s} %llu\n"
            "# HELP kcache_events_queue_depth Events waiting for the sender.\n"
            "# TYPE kcache_events_queue_depth gauge\n"
            "kcache_events_queue_depth{component=%s} %zu\n",
            label, (unsigned long long)st.aggregated, label, (unsigned long long)st.retries, label,
            st.queued);
    free(label);
    if (rc < 0) {
        kc__buf_free(&b);
        return NULL;
    }
    return kc__buf_steal(&b, NULL);
}

char *kc_event_recorder_metrics_render(void *rec)
{
    return kc_event_recorder_metrics_text(rec);
}
