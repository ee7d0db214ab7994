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
#include "controller/event_internal.h"

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
#define DEFAULT_COMPONENT "kcache"

struct kc_event_recorder {
    kc_client *client; /* borrowed */
    char *component, *host;
    size_t queue_len;
    int max_tries;
    uint64_t retry_ns;
    kc__event_correlator *corr; /* sender thread only */
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

/* ---- events -------------------------------------------------------------------------------- */

kc__event *kc__event_new(const kc_event_ref *ref, const char *type, const char *reason,
                         const char *message)
{
    /* One block holds the struct and the seven reference strings, type and reason (the hot path
     * of record: one allocation instead of ten); the message is separate because aggregation may
     * replace it. */
    const char *src[] = {ref->api_version,      ref->kind,       ref->uid, ref->ns, ref->name,
                         ref->resource_version, ref->field_path, type,     reason};
    size_t lens[KC__ARRAY_LEN(src)], total = sizeof(kc__event);
    for (size_t i = 0; i < KC__ARRAY_LEN(src); i++) {
        lens[i] = src[i] ? strlen(src[i]) : 0;
        total += lens[i] + 1;
    }
    kc__event *ev = calloc(1, total);
    char *msg = kc__strdup(message ? message : "");
    if (!ev || !msg) {
        free(ev);
        free(msg);
        return NULL;
    }
    char **dst[] = {&ev->api_version, &ev->kind,       &ev->uid,  &ev->obj_ns, &ev->name,
                    &ev->rv,          &ev->field_path, &ev->type, &ev->reason};
    char *p = (char *)(ev + 1);
    for (size_t i = 0; i < KC__ARRAY_LEN(src); i++) {
        if (lens[i])
            memcpy(p, src[i], lens[i]);
        p[lens[i]] = '\0';
        *dst[i] = p;
        p += lens[i] + 1;
    }
    ev->message = msg;
    ev->mono_ns = kc__now_ns();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ev->wall_ns = (uint64_t)ts.tv_sec * KC__NS_PER_SEC + (uint64_t)ts.tv_nsec;
    return ev;
}

void kc__event_free(kc__event *ev)
{
    if (!ev)
        return;
    free(ev->message);
    free(ev->event_name);
    free(ev->key);
    free(ev);
}

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
        int rc = kc__event_send(rec->client, &src, ev, &name, &count, &err);
        if (rc == 0) {
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

static void handle(kc_event_recorder *rec, kc__event *ev)
{
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

static void *sender_main(void *arg)
{
    kc_event_recorder *rec = arg;
    pthread_mutex_lock(&rec->mu);
    for (;;) {
        while (!rec->head && !rec->stopping)
            pthread_cond_wait(&rec->work, &rec->mu);
        if (rec->stopping)
            break;
        kc__event *ev = rec->head;
        rec->head = ev->next;
        if (!rec->head)
            rec->tail = NULL;
        rec->n--;
        pthread_mutex_unlock(&rec->mu);
        handle(rec, ev);
        kc__event_free(ev);
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
    free(rec->component);
    free(rec->host);
    free(rec);
}

static int check_opts(const kc_event_recorder_opts *o, kc_error *err)
{
    if (o->api == KC_EVENT_API_EVENTS_V1)
        return kc_error_set(err, KC_EUNSUPPORTED,
                            "event recorder: events.k8s.io/v1 is not implemented yet (use "
                            "KC_EVENT_API_CORE_V1)");
    if (o->api != KC_EVENT_API_CORE_V1)
        return kc_error_set(err, KC_EINVAL, "event recorder: unknown api %d", (int)o->api);
    if (o->max_tries < 0 || o->retry_interval_ms < 0 || o->spam_refill_ms < 0)
        return kc_error_set(err, KC_EINVAL,
                            "event recorder: max_tries, retry_interval_ms and spam_refill_ms must "
                            "not be negative");
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
    kc__rng_seed_auto(&rec->rng);
    if (!rec->component || !rec->host || !rec->corr) {
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

/* Format the message, at most MAX_MESSAGE bytes (cut on a UTF-8 boundary, " ..." appended). */
static KC__PRINTF(1, 0) char *format_message(const char *fmt, va_list ap)
{
    kc__buf b;
    kc__buf_init(&b, 0);
    if (kc__buf_vprintf(&b, fmt, ap) < 0) {
        kc__buf_free(&b);
        return NULL;
    }
    if (b.len > MAX_MESSAGE) {
        size_t cut = MAX_MESSAGE - 4;
        while (cut > 0 && ((unsigned char)b.data[cut] & 0xc0) == 0x80)
            cut--;
        kc__buf_truncate(&b, cut);
        if (kc__buf_append_str(&b, " ...") < 0) {
            kc__buf_free(&b);
            return NULL;
        }
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

static KC__PRINTF(5, 0) int vrecord(kc_event_recorder *rec, const kc_event_ref *ref,
                                    const char *type, const char *reason, const char *fmt,
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
    char *msg = format_message(fmt, ap);
    kc__event *ev = msg ? kc__event_new(ref, type, reason, msg) : NULL;
    free(msg);
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
    int rc = vrecord(rec, ref, type, reason, fmt, ap);
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
    int rc = vrecord(rec, &ref, type, reason, fmt, ap);
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
    } results[] = {
        {"created", st.created}, {"patched", st.patched}, {"spam_filtered", st.spam_filtered},
        {"dropped", st.dropped}, {"invalid", st.invalid}, {"error", st.errors}};
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
