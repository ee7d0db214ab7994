/*
 * hub.h — watch fan-out hub of the embedded API server.
 *
 * Storage publishes every committed change for a resource; each watcher of that resource has a
 * bounded queue. Publishing never blocks: a watcher whose queue is full is marked overflowed and
 * its stream ends (the client must resume or relist) instead of the server growing memory.
 * A per-watcher filter, run at publish time, decides whether and as what type an event is
 * delivered (label/field selector transitions: an object relabelled out of the selector is sent
 * as DELETED, into it as ADDED). Watch-delay faults: each event is due at
 * max(previous due time of the same watcher, publish time + random delay), so order is kept.
 * Watchers pinned to a field value (kc__hub_subscribe_pinned, hub_index.h) are offered only the
 * events of their value.
 * Thread-safety: publish/subscribe may run under the storage lock (they take only the hub's and
 * the watcher's own short locks); next() blocks without any storage lock held.
 */
#ifndef KC_SERVER_HUB_H
#define KC_SERVER_HUB_H

#include "kcache/decode.h"
#include "server/testbed/faults.h"

typedef struct kc__hub kc__hub;
typedef struct kc__watcher kc__watcher;

/* A field's value located once per published event and shared by every watcher's filter
 * (kc_field_selector_match_fn): pointer (the JSON Pointer the selector handed its lookup,
 * borrowed), its raw JSON text borrowed from the event's object (NULL when absent). */
typedef struct kc__ev_field {
    const char *pointer, *raw;
    size_t len;
} kc__ev_field;
#define KC__EV_MEMO_MAX 8
typedef struct kc__ev_memo {
    kc__ev_field f[2][KC__EV_MEMO_MAX]; /* [0] of obj, [1] of old */
    size_t n[2];
} kc__ev_memo;

typedef struct kc__hub_event {
    kc_watch_type type; /* ADDED, MODIFIED or DELETED */
    kc_obj *obj;        /* new state; for DELETED the last state carrying the delete RV */
    kc_obj *old;        /* previous state for MODIFIED/DELETED, else NULL */
    uint64_t rv;        /* the event's resourceVersion */
    /* shard hashes of obj's uid and namespace, filled by the publisher when hashed (for the
     * filters of sharded watchers; not kept in queued copies) */
    uint64_t uid_hash, ns_hash;
    bool hashed;
    /* field lookups shared by the filters of one publish (kc__hub_publish sets it; NULL in
     * queued copies and elsewhere) */
    kc__ev_memo *memo;
} kc__hub_event;

/* Filter: return the type to deliver (0 = do not deliver) and set *ret_obj to the object to
 * send (borrowed from ev: ev->obj or ev->old). Runs under the publisher's locks: must be quick
 * and must not call back into the hub. */
typedef kc_watch_type (*kc__watch_filter_fn)(void *ud, const kc__hub_event *ev, kc_obj **ret_obj);

/* New hub. faults may be NULL (no delays); borrowed, must outlive the hub. queue_bound = max
 * queued events per watcher (0 = 100000). NULL on ENOMEM. */
kc__hub *kc__hub_new(kc__faults *faults, size_t queue_bound);
/* Closes every watcher (their next() returns KC_ESTOPPED) and frees the hub. Watchers must have
 * been freed by their owners before, or be freed after: kc__watcher_free stays safe. */
void kc__hub_free(kc__hub *hub);

/* Subscribe to events of resource_key (an opaque pointer identifying one resource, compared by
 * address). filter may be NULL (deliver everything as is); filter_ud is borrowed until
 * kc__watcher_free. Call with the storage lock held when taking an initial snapshot, so that no
 * event falls between the snapshot and the subscription. NULL on ENOMEM. */
kc__watcher *kc__hub_subscribe(kc__hub *hub, const void *resource_key, kc__watch_filter_fn filter,
                               void *filter_ud);
/* kc__hub_subscribe for a watcher whose filter can only deliver events whose new or old object
 * has, at the JSON Pointer pointer ("/spec/nodeName"), the string form value (as field selectors
 * compare: a string unescaped, a number or boolean as written, absent or null as ""): publish
 * then offers it only those events (an index by value, kube-apiserver's watch cache "triggers"),
 * so a publish costs O(unpinned watchers + watchers of the event's values). The first pinned
 * watcher of a resource chooses the indexed pointer; a watcher pinning another one, or pointer
 * or value NULL, is offered every event. Both copied. NULL on ENOMEM. */
kc__watcher *kc__hub_subscribe_pinned(kc__hub *hub, const void *resource_key,
                                      kc__watch_filter_fn filter, void *filter_ud,
                                      const char *pointer, const char *value);

/* Deliver ev to every watcher of resource_key (takes its own object references). Never blocks. */
void kc__hub_publish(kc__hub *hub, const void *resource_key, const kc__hub_event *ev);

/* Next due event. Blocks until one is due, timeout_ms passes (KC_ETIMEOUT; timeout_ms < 0 =
 * forever), the watcher is closed (KC_ESTOPPED) or overflowed (KC_ETOOLARGE). While the stall
 * fault is on, queued events are held back (not lost). On 0, *ret holds new references:
 * release with kc__hub_event_release(). */
int kc__watcher_next(kc__watcher *w, kc__hub_event *ret, int64_t timeout_ms);

/* Wake next() with KC_ESTOPPED from any thread. Idempotent. */
void kc__watcher_close(kc__watcher *w);
/* Unsubscribe and free (closes first if needed). Accepts NULL. */
void kc__watcher_free(kc__watcher *w);

/* Close every watcher (restart, compaction of a resource, server stop). */
void kc__hub_close_all(kc__hub *hub);
/* Number of live watchers (metrics, tests). */
size_t kc__hub_watchers(kc__hub *hub);

/* Drop the references an event holds and zero it. */
void kc__hub_event_release(kc__hub_event *ev);

/* ---- additions (server-edge) ----------------------------------------------------------------- */

/* ---- non-blocking owners (event-loop servers) ------------------------------------------------ */

/* Wake callback of an armed watcher. Runs under the hub lock, on the publisher's thread, the
 * hub's timer thread, a closer's thread or the faults setter's thread: it must be quick and must
 * not call into the hub. */
typedef void (*kc__watcher_wake_fn)(void *ud);

/* Install the wake callback (fn NULL = none; ud borrowed until kc__watcher_free). Thread-safe. */
void kc__watcher_set_wake(kc__watcher *w, kc__watcher_wake_fn fn, void *ud);

/* Pop up to max due events into evs[] without blocking; *ret_n = how many (0 when none is due or
 * the stall fault holds them). Each popped event holds new references (kc__hub_event_release).
 * Returns 0, KC_ESTOPPED (closed) or KC_ETOOLARGE (overflowed) — then *ret_n is 0. */
int kc__watcher_take(kc__watcher *w, kc__hub_event *evs, size_t max, size_t *ret_n);

/* The owner is going to sleep: unless something is ready now (a due event, closed, overflowed:
 * returns 1 and does not arm — take again), arm the watcher (returns 0). An armed watcher's wake
 * callback is called once, when an event is queued, it is closed or overflowed, the stall fault
 * is lifted, or wake_at_ns (monotonic; KC__DEADLINE_NEVER = none) or the head event's due time
 * passes — whichever is first; then it is disarmed. KC_ENOMEM when the hub's timer thread cannot
 * be started. Thread-safe. */
int kc__watcher_arm(kc__watcher *w, uint64_t wake_at_ns);

/* Coalescing of event wakes (armed watchers only): an armed watcher that took at least min_batch
 * events after its last event wake, and was woken less than ns ago, is woken for a new event only
 * ns after that wake (by the hub's timer), so a busy stream takes its events in batches instead
 * of one wake per event, while a stream that takes events one at a time is woken at once.
 * ns 0 (default) = always wake at once. Close, overflow and stall-lifted wakes are never
 * delayed. Thread-safe. */
void kc__hub_set_coalesce(kc__hub *hub, uint64_t ns, size_t min_batch);

/* Bookmark progress: an RV P such that every event with RV <= P published for w's resource has
 * been either filtered out for w or taken by its owner — the RV of the last event published on
 * any topic when w's queue is empty, else just before its first queued event; 0 once w is
 * closed or overflowed (its queue was dropped: the owner must use the last RV it delivered).
 * The owner may send a BOOKMARK at P after writing out everything it took. Thread-safe. */
uint64_t kc__watcher_progress(kc__watcher *w);

/* The RV counter went back (server restart with RV reset): progress restarts at rv. Call with
 * the storage lock held, after closing every watcher. */
void kc__hub_reset_rv(kc__hub *hub, uint64_t rv);

/* Events queued for w right now (tests, metrics). Thread-safe. */
size_t kc__watcher_queued(kc__watcher *w);

#endif
