/*
 * kcache/event.h — kc_event_recorder: posts Kubernetes Events about objects without ever blocking
 * the caller (a reconcile), with client-go's correlation (spec §6, E rules; docs/events.md).
 *
 * kc_event_recorder_record() validates and formats the event, puts it on a bounded queue
 * (default 1000, E2) and returns at once; a full queue drops the event and counts it. One
 * background sender thread takes events in order and runs client-go's EventCorrelate (E3):
 *   1. aggregation (E4): events of one group — source (component, host), involved object
 *      (kind, namespace, name, uid, apiVersion), type, reason — with 10 distinct messages less than
 *      600 s apart are folded into one event "(combined from similar events): <message>";
 *   2. dedupe (E5): an identical event (same group, fieldPath and message) is sent as a patch of
 *      count, lastTimestamp and message of the Event already posted (created again on 404), so N
 *      identical events give one Event with count N;
 *   3. spam filter (E6): a token bucket per (source, involved object, type) — burst 25, one token
 *      per 300 s; reason and message are not part of its key — skips excess events before any API
 *      call (counted).
 * Then it POSTs (new) or PATCHes (repeat) the Event through the kc_client; transport errors, 5xx
 * and 429 are retried a bounded number of times (E7: 12 tries, 10 s apart, the first wait random);
 * other API errors are final (counted).
 *
 * By default the recorder writes core/v1 Events. With KC_EVENT_API_EVENTS_V1 it writes
 * events.k8s.io/v1 Events instead, as client-go's tools/events (E8–E10): events with the same
 * isomorphic key — type, action, reason, regarding and related (the note is not in the key; the
 * first note is kept) — form a series: the first occurrence is created, the second patches in
 * `series {count: 2, lastObservedTime}`, later ones only bump the local count; every
 * series_refresh_ms (30 min) all series are written again, and a series not seen for
 * series_finish_ms (6 min) gets a final write with its count and is forgotten (a singleton older
 * than that is forgotten too). reportingController is the component, reportingInstance
 * "<component>-<host>"; reason and action are cut to 128 bytes and the note to 1024 (E10). There
 * is no aggregation; the E6 spam filter applies to both APIs (spam_burst < 0 turns it off).
 * kcache defaults to core/v1 (client-go's recommended default is events.k8s.io/v1): `kubectl get
 * events` and most dashboards read core/v1, which the API server also serves for v1-written
 * Events.
 *
 * Thread-safety: record, flush and get_stats may be called from any number of threads at once;
 * free must not race with any other call on the same recorder. The kc_client is borrowed: it must
 * outlive the recorder.
 */
#ifndef KCACHE_EVENT_H
#define KCACHE_EVENT_H

#include "client.h"

KC_BEGIN_DECLS

typedef struct kc_event_recorder kc_event_recorder;

/* The two event types the API accepts (E1). */
#define KC_EVENT_NORMAL  "Normal"
#define KC_EVENT_WARNING "Warning"

/* Which Events API the recorder writes. */
typedef enum kc_event_api {
    KC_EVENT_API_CORE_V1 = 0,   /* default: core/v1 Event (count, firstTimestamp, lastTimestamp) */
    KC_EVENT_API_EVENTS_V1 = 1, /* events.k8s.io/v1 (regarding, related, action, note, series) */
} kc_event_api;

/* Options of a recorder. Zero-initialised (or NULL) means the defaults. Strings are copied. */
typedef struct kc_event_recorder_opts {
    const char *component; /* source.component / reportingController; NULL → "kcache" */
    const char *host;      /* source.host / reportingInstance suffix; NULL → gethostname() */
    kc_event_api api;
    size_t queue_len;       /* events waiting for the sender; 0 → 1000 (E2) */
    int spam_burst;         /* spam filter burst; 0 → 25 (E6); < 0 → no spam filter */
    int64_t spam_refill_ms; /* one token per this; 0 → 300000 (E6) */
    int max_tries;          /* tries per event for retryable errors; 0 → 12 (E7) */
    int64_t
        retry_interval_ms; /* wait between tries; 0 → 10000 (E7); the first is random in [0,it) */
    /* events.k8s.io/v1 series timings (E9): */
    int64_t series_finish_ms;  /* a series not seen this long is finished; 0 → 360000 (6 min) */
    int64_t series_refresh_ms; /* every series is written again this often; 0 → 1800000 */
} kc_event_recorder_opts;

/* The object an event is about (involvedObject / regarding): a frozen struct (docs/abi.md), the
 * fields of an ObjectReference. Strings are borrowed for the call (copied into the event). kind and
 * name are required; ns NULL or "" puts the Event in "default" (E1); the others may be NULL. */
typedef struct kc_event_ref {
    const char *api_version;
    const char *kind;
    const char *ns;
    const char *name;
    const char *uid;
    const char *resource_version;
    const char *field_path;
} kc_event_ref;

/* Counters (monotonic since new). */
typedef struct kc_event_recorder_stats {
    uint64_t recorded;      /* events accepted by record (queued) */
    uint64_t dropped;       /* events dropped by record: queue full, or freed before sending */
    uint64_t invalid;       /* events refused by record (bad type, missing reason/kind/name) */
    uint64_t created;       /* Events created on the server (POST succeeded) */
    uint64_t patched;       /* repeats sent as a patch of an existing Event (count bumped) */
    uint64_t aggregated;    /* events folded into a "(combined from similar events)" Event (E4) */
    uint64_t spam_filtered; /* events skipped by the spam filter (E6) */
    uint64_t retries;       /* tries repeated after a retryable error */
    uint64_t errors;        /* events given up: a final API error or the tries exhausted */
    size_t queued;          /* events currently waiting in the queue */
    uint64_t series_cached; /* events.k8s.io/v1: occurrences only counted in a series (E9) */
} kc_event_recorder_stats;

/*
 * New recorder writing through client (borrowed: must outlive the recorder). Starts the sender
 * thread. opts may be NULL (copied). Errors: KC_EINVAL (NULL client, unknown api, bad option),
 * KC_EUNSUPPORTED (opts of a newer header), KC_ENOMEM, KC_EIO (thread creation failed). On success
 * *ret is new — caller frees with kc_event_recorder_free(). Thread-safe. Since 0.1.
 */
KC_API int(kc_event_recorder_new)(kc_client *client, const kc_event_recorder_opts *opts,
                                  size_t opts_size, kc_event_recorder **ret, kc_error *err);
#define kc_event_recorder_new(client, opts, ret, err)                                              \
    (kc_event_recorder_new)((client), (opts), sizeof(kc_event_recorder_opts), (ret), (err))

/*
 * Stop the sender and free. An event being sent finishes its current request (bounded by the
 * client's timeout) but is not retried; events still queued are dropped and counted (call
 * kc_event_recorder_flush first to deliver them). rec is consumed. Accepts NULL. Not thread-safe:
 * not concurrent with other calls. Never fails. Since 0.1.
 */
KC_API void kc_event_recorder_free(kc_event_recorder *rec);

/*
 * Record an event about ref: type KC_EVENT_NORMAL or KC_EVENT_WARNING, reason (a short
 * CamelCase word, required) and a printf-style message. Never blocks on the network or the sender:
 * returns 0 when queued, KC_EBUSY when the queue is full (the event is dropped and counted),
 * KC_EINVAL for a NULL recorder/ref/reason/fmt, a missing ref->kind or ref->name, or a type other
 * than Normal/Warning (E1; counted as invalid), KC_ENOMEM. ref, type, reason and the message are
 * copied (borrowed for the call). Errors: KC_EBUSY, KC_EINVAL, KC_ENOMEM. Thread-safe. Since 0.1.
 */
KC_API int kc_event_recorder_record(kc_event_recorder *rec, const kc_event_ref *ref,
                                    const char *type, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* As kc_event_recorder_record, about obj (borrowed for the call; apiVersion, kind, namespace,
 * name, uid and resourceVersion are copied from its metadata). Errors: as kc_event_recorder_record
 * (KC_EBUSY, KC_EINVAL, KC_ENOMEM). Thread-safe. Since 0.1. */
KC_API int kc_event_recorder_record_obj(kc_event_recorder *rec, const kc_obj *obj, const char *type,
                                        const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/*
 * As kc_event_recorder_record, with the action taken (events.k8s.io/v1 `action`, core/v1 `action`;
 * NULL or "" → the reason in events.k8s.io/v1, left out in core/v1) and a second object the
 * event is about (related; NULL = none; its strings borrowed for the call). regarding needs a kind
 * and a name as ref does. Everything is copied (borrowed for the call). Errors: as
 * kc_event_recorder_record (KC_EBUSY, KC_EINVAL, KC_ENOMEM). Thread-safe. Since 0.1.
 */
KC_API int kc_event_recorder_record_action(kc_event_recorder *rec, const kc_event_ref *regarding,
                                           const kc_event_ref *related, const char *type,
                                           const char *reason, const char *action, const char *fmt,
                                           ...) __attribute__((format(printf, 7, 8)));

/*
 * Wait until every event recorded before the call has been handled (sent, patched, filtered or
 * given up) — for tests and shutdown. timeout_ms < 0 waits without bound. Errors: KC_EINVAL (NULL
 * recorder), KC_ETIMEOUT (events still pending at the deadline). No ownership transfer.
 * Thread-safe. Since 0.1.
 */
KC_API int kc_event_recorder_flush(kc_event_recorder *rec, int64_t timeout_ms, kc_error *err);

/* Counters, copied into *ret (the caller's). A NULL recorder gives zeroes. Thread-safe.
 * Never fails. Since 0.1. */
KC_API void(kc_event_recorder_get_stats)(kc_event_recorder *rec, kc_event_recorder_stats *ret,
                                         size_t ret_size);
#define kc_event_recorder_get_stats(rec, ret)                                                      \
    (kc_event_recorder_get_stats)((rec), (ret), sizeof(kc_event_recorder_stats))

/*
 * Prometheus text (0.0.4) of the counters (E12: drops exported as metrics), labelled
 * component="<opts.component>":
 *   kcache_events_total{result="created|patched|spam_filtered|dropped|invalid|error"} counter
 *   kcache_events_aggregated_total  counter: events folded into a combined Event (E4)
 *   kcache_events_retries_total     counter
 *   kcache_events_queue_depth       gauge
 * New malloc'd string (caller frees). Errors: NULL on out of memory or for NULL. Thread-safe.
 * Since 0.1.
 */
KC_API char *kc_event_recorder_metrics_text(kc_event_recorder *rec);

/* kc_event_recorder_metrics_text with the signature of a health endpoint's metrics source
 * (render(void *ud) → malloc'd text): rec is a kc_event_recorder * (borrowed for the call); a new
 * string — caller (the endpoint) frees. Errors: NULL on out of memory or for NULL. Thread-safe.
 * Since 0.1. */
KC_API char *kc_event_recorder_metrics_render(void *rec);

KC_END_DECLS

#endif
