/*
 * controller/event_internal.h — internals of the event recorder (kcache/event.h): the event as
 * queued, the correlator (aggregation, dedupe, spam filter: spec §6 E3–E6, event_correlate.c), the
 * bounded string-keyed LRU it keeps its state in (event_lru.c) and the sender's requests
 * (event_send.c). Not installed.
 *
 * Thread-safety: none here. The correlator and the LRUs are owned by the recorder's one sender
 * thread; a kc__event belongs to whoever holds it (the queue, then the sender).
 */
#ifndef KC_CONTROLLER_EVENT_INTERNAL_H
#define KC_CONTROLLER_EVENT_INTERNAL_H

#include "kcache/event.h"

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
} kc__event;

/* New event from ref/type/reason and a formatted message (copied; mono/wall taken now). NULL on
 * ENOMEM. */
kc__event *kc__event_new(const kc_event_ref *ref, const char *type, const char *reason,
                         const char *message);
void kc__event_free(kc__event *ev);

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

/* true for an error worth another try (E7: transport errors; here also 5xx and 429). */
bool kc__event_retryable(int code);

/* "2026-12-01T22:54:44Z" of a CLOCK_REALTIME ns (RFC 3339, seconds, as metav1.Time). */
void kc__event_time(uint64_t wall_ns, char out[32]);

#endif
