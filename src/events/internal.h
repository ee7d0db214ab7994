/*
 * events/internal.h — internals of the event recorder (kcache/event.h): the event as
 * queued, the correlator (aggregation, dedupe, spam filter: spec §6 E3–E6, event_correlate.c), the
 * bounded string-keyed LRU it keeps its state in (event_lru.c) and the sender's requests
 * (event_send.c). Not installed.
 *
 * Thread-safety: none here. The correlator and the LRUs are owned by the recorder's one sender
 * thread; a kc__event belongs to whoever holds it (the queue, then the sender).
 */
#ifndef KC_EVENTS_INTERNAL_H
#define KC_EVENTS_INTERNAL_H

#include "kcache/event.h"

#include "core/internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- one event ------------------------------------------------------------------------------ */

typedef struct kc__event {
    struct kc__event *next; /* queue link */
    /* involvedObject, type and reason: in the event's own block ("" when not given, never
     * NULL; not freed separately) */
    char *api_version, *kind, *obj_ns, *name, *uid, *rv, *field_path;
    char *type, *reason;
    char *action; /* "" when not given (core/v1); the reason when not given (events.k8s.io/v1) */
    /* related (events.k8s.io/v1 `related`, core/v1 `related`): "" fields when has_related is
     * false */
    char *rel_api_version, *rel_kind, *rel_ns, *rel_name, *rel_uid, *rel_rv, *rel_field_path;
    bool has_related;
    char *message;    /* owned (malloc'd: aggregation may replace it) */
    uint64_t wall_ns; /* CLOCK_REALTIME when recorded: the Event's timestamps */
    uint64_t mono_ns; /* CLOCK_MONOTONIC when recorded: the correlator's windows */
    /* Set by the correlator: */
    char *event_name;       /* Event metadata.name to create or patch (owned) */
    char *key;              /* the dedupe key the send result is recorded under (owned) */
    int64_t count;          /* Event count */
    uint64_t first_wall_ns; /* firstTimestamp */
    bool patch;             /* a repeat: patch event_name instead of creating it */
    bool aggregated;        /* message replaced by "(combined from similar events): …" */
    /* events.k8s.io/v1, set by the series cache (event_series.c): */
    uint64_t series_wall_ns; /* series.lastObservedTime; 0 = the Event has no series yet */
} kc__event;

/* New event from ref, related (may be NULL), type, reason, action (may be NULL) and a formatted
 * message (all copied; mono/wall taken now). NULL on ENOMEM. */
kc__event *kc__event_new(const kc_event_ref *ref, const kc_event_ref *related, const char *type,
                         const char *reason, const char *action, const char *message);
/* A copy of ev's content (references, type, reason, action, message, times), without the
 * correlator's fields and queue link. NULL on ENOMEM. */
kc__event *kc__event_clone(const kc__event *ev);
void kc__event_free(kc__event *ev);

/* A fresh Event name for ev: "<name>.<hex stamp>" where stamp is the wall clock in ns made
 * strictly increasing through *last_stamp, or a random UUID when that is not a DNS subdomain
 * (E1). New malloc'd; NULL on ENOMEM. */
char *kc__event_name_new(const kc__event *ev, uint64_t *last_stamp, kc__rng *rng);

/* ---- bounded LRU map: string key → value ------------------------------------------------------
 */

typedef struct kc__lru kc__lru;

/* New LRU of at most cap entries; free_value (may be NULL) releases a value when its entry is
 * evicted, replaced or freed. NULL on ENOMEM. */
kc__lru *kc__lru_new(size_t cap, void (*free_value)(void *));
void kc__lru_free(kc__lru *lru);
/* The value under key (and marks it most recent), or NULL. */
void *kc__lru_get(kc__lru *lru, const char *key);
/* Put value under key (key copied; replaces and frees an earlier value; evicts the least recent
 * entry when full). Returns 0, or KC_ENOMEM (value then freed). */
int kc__lru_put(kc__lru *lru, const char *key, void *value);
size_t kc__lru_len(const kc__lru *lru);
/* Call fn on every entry, most recent first; an entry for which fn returns true is removed (its
 * value freed). fn must not call other kc__lru functions on lru. */
void kc__lru_each(kc__lru *lru, bool (*fn)(void *ud, const char *key, void *value), void *ud);

/* ---- correlator (E3–E6) -----------------------------------------------------------------------
 */

typedef struct kc__event_correlator kc__event_correlator;

typedef struct kc__event_correlator_opts {
    size_t lru_len;             /* entries of each of the three caches; 0 → 4096 (E4, E5) */
    size_t max_similar;         /* distinct messages that trigger aggregation; 0 → 10 (E4) */
    uint64_t similar_window_ns; /* 0 → 600 s (E4) */
    int spam_burst;             /* 0 → 25; < 0 → no spam filter (E6) */
    uint64_t spam_refill_ns;    /* one token per this; 0 → 300 s (E6) */
} kc__event_correlator_opts;

kc__event_correlator *kc__event_correlator_new(const kc__event_correlator_opts *opts);
void kc__event_correlator_free(kc__event_correlator *c);

/*
 * Run E3's three stages on ev at monotonic time ev->mono_ns: aggregation (may replace ev->message
 * and set ev->aggregated), dedupe (sets ev->event_name, ev->key, ev->count, ev->first_wall_ns,
 * ev->patch) and the spam filter. Returns 1 when the spam filter skips the event (nothing to
 * send), 0 when it must be sent, KC_ENOMEM.
 */
int kc__event_correlate(kc__event_correlator *c, kc__event *ev);

/* The spam filter alone (E6; the events.k8s.io/v1 recorder offers it too, E12): 1 when ev is
 * skipped, 0 when it may be sent, KC_ENOMEM. */
int kc__event_spam(kc__event_correlator *c, const kc__event *ev);

/* After the server accepted ev (created or patched): remember the Event's name and count under
 * ev->key, so the next identical event patches it (client-go UpdateState). */
void kc__event_correlator_sent(kc__event_correlator *c, const kc__event *ev, const char *name,
                               int64_t count);

/* ---- sending ----------------------------------------------------------------------------------
 */

/* The source of every event of a recorder. */
typedef struct kc__event_source {
    const char *component, *host;
} kc__event_source;

/* POST ev (core/v1) into its namespace, or PATCH it when ev->patch (POST again on 404). On success
 * *ret_name (new malloc'd) and *ret_count are the server's. Returns 0 or the request's error. */
int kc__event_send(kc_client *client, const kc__event_source *src, const kc__event *ev,
                   char **ret_name, int64_t *ret_count, kc_error *err);

/* The JSON of an ObjectReference (`{"kind":…}`; empty fields left out) appended to b. f:
 * apiVersion, kind, namespace, name, uid, resourceVersion, fieldPath. 0 or KC_ENOMEM. */
int kc__event_ref_json(kc__buf *b, const char *const f[7]);
/* ,"related":{…} appended to b when ev has a related object (nothing otherwise). 0 or KC_ENOMEM. */
int kc__event_related_json(const kc__event *ev, kc__buf *b);

/* POST ev as an events.k8s.io/v1 Event, or when ev->patch a merge PATCH of its series (POST with
 * the series again on 404). controller/instance are reportingController/reportingInstance. */
int kc__event_send_v1(kc_client *client, const char *controller, const char *instance,
                      const kc__event *ev, kc_error *err);

/* ---- events.k8s.io/v1 series (E8, E9; event_series.c) -----------------------------------------
 */

typedef struct kc__event_series kc__event_series;

/* New series cache: at most lru_len isomorphic keys (0 → 4096); a series not observed for finish_ns
 * gets a final write and is evicted, a singleton older than that is dropped (0 → 6 min); every
 * refresh_ns all series are written again (0 → 30 min). NULL on ENOMEM. */
kc__event_series *kc__event_series_new(size_t lru_len, uint64_t finish_ns, uint64_t refresh_ns);
void kc__event_series_free(kc__event_series *s);

/* Observe ev (E9): the first occurrence of its isomorphic key is created (0, ev->patch false,
 * ev->event_name set); the second patched with series count 2 (0, ev->patch true); later ones
 * only bump the cache (1: nothing to send). KC_ENOMEM. */
int kc__event_series_observe(kc__event_series *s, kc__event *ev, kc__rng *rng);

/* The writes due at monotonic now (E9 refresh and finish): *ret gets a malloc'd array of *ret_n
 * new events to send (ev->patch set), each to free with kc__event_free; evicts finished entries.
 * *ret_next is the monotonic time of the next check, 0 when nothing is cached (no timer until the
 * next event). KC_ENOMEM. */
int kc__event_series_due(kc__event_series *s, uint64_t now, kc__event ***ret, size_t *ret_n,
                         uint64_t *ret_next);

/* true for an error worth another try (E7: transport errors; here also 5xx and 429). */
bool kc__event_retryable(int code);

/* "2026-12-01T22:54:44Z" of a CLOCK_REALTIME ns (RFC 3339, seconds, as metav1.Time). */
void kc__event_time(uint64_t wall_ns, char out[32]);

#endif
