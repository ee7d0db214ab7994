/*
 * kcache/controller.h — kc_controller: a reconcile loop over a work queue, fed by informers, that
 * starts only when its caches are ready (controller-runtime's Controller, in C).
 *
 * A controller has one primary type (its objects' keys are reconciled), any number of owned types
 * (an event on an owned object enqueues its controller owner: the ownerReference with
 * controller=true whose group and kind match the primary type's) and any number of extra watches
 * (an event enqueues whatever keys a map function names). Predicates filter events before they
 * enqueue. Keys are "namespace/name" ("name" for a cluster-scoped primary type).
 *
 * max_concurrent_reconciles worker threads each loop get → reconcile → done on one kc_workqueue,
 * so a key is never reconciled by two workers at once, and a key changed during its reconcile is
 * reconciled once more afterwards. The reconcile callback receives the key and a kc_cached_client
 * with read-your-writes (block-on-write by default): an object it created is in its next read.
 *
 * Start is gated on readiness: kc_controller_start starts every informer, serves /readyz (when
 * asked) and returns only once every cache the controller reads from has synced — no reconcile
 * runs before — or fails with the reason of the informer that did not sync.
 *
 * Lifecycle: kc_controller_new → kc_controller_own / kc_controller_watch … → kc_controller_start →
 * … → kc_controller_stop → kc_controller_free (free without stop also stops). docs/controller.md
 * has the design: threads, locks, ownership, and where it differs from controller-runtime and
 * kube-rs.
 * Thread-safety: stated per function; the reconcile callback runs on worker threads, up to
 * max_concurrent_reconciles at once (never two for the same key).
 */
#ifndef KCACHE_CONTROLLER_H
#define KCACHE_CONTROLLER_H

#include "cached_client.h"
#include "leader.h"
#include "coordinator.h"
#include "workqueue.h"

KC_BEGIN_DECLS

typedef struct kc_controller kc_controller;

/* ---- reconcile ---------------------------------------------------------------------------- */

/* What a reconcile asks for (spec C3). */
typedef enum kc_reconcile_code {
    KC_RECONCILE_DONE = 0,          /* success: the key's backoff is reset (forget) */
    KC_RECONCILE_REQUEUE_AFTER = 1, /* success, run again after requeue_after_ms: forget, then
                                       add_after (0 ms = at once) */
    KC_RECONCILE_ERROR = 2,         /* failure: rate-limited requeue (backoff grows), counted */
    KC_RECONCILE_TERMINAL = 3,      /* failure that retrying cannot fix: not requeued, not
                                       forgotten, counted. The key runs again on its next event. */
} kc_reconcile_code;

/*
 * A reconcile's result. Any code outside kc_reconcile_code is a bug in the callback: the
 * controller treats it as KC_RECONCILE_ERROR (rate-limited requeue, so the key is not lost),
 * counts it in kc_controller_stats.unknown (and in errors), and logs it at error level with the
 * key and the code through the library's log. The queue keeps running.
 * Frozen (docs/abi.md): the callback returns it by value, so its layout never changes within a
 * major version; what a later version needs beyond these two fields comes as a new callback type.
 */
typedef struct kc_reconcile_result {
    int code;                  /* kc_reconcile_code */
    uint64_t requeue_after_ms; /* KC_RECONCILE_REQUEUE_AFTER only; ignored otherwise */
} kc_reconcile_result;

/* The request (spec C1). Strings borrowed for the call. */
typedef struct kc_reconcile_request {
    const char *key; /* "namespace/name", or "name" for a cluster-scoped primary type */
    const char *ns;  /* "" for a cluster-scoped primary type */
    const char *name;
    /* (appended) The fence this reconcile acts under: its key's range fence when the controller
     * runs sharded (kc_shard_coordinator_fence), else the leader elector's, else NULL. Pass it
     * as kc_cached_call_opts.fence to writes that must not land after the authority ended (the
     * cached client already checks the leader's own fence on every write). Borrowed: valid for
     * the call. */
    const kc_fence *fence;
} kc_reconcile_request;

/*
 * Reconcile callback. Runs on a worker thread; cc is the controller's cached client (borrowed,
 * valid for the call; read-your-writes as configured in kc_controller_opts.client); ud is
 * kc_controller_opts.ud. The object may be gone: look it up (KC_ENOTFOUND) and act on that.
 * It must not call kc_controller_stop or kc_controller_free.
 */
typedef kc_reconcile_result (*kc_reconcile_fn)(void *ud, const kc_reconcile_request *req,
                                               kc_cached_client *cc);

/* ---- predicates --------------------------------------------------------------------------- */

/* Event kinds seen by a custom predicate. */
typedef enum kc_controller_event {
    KC_CONTROLLER_EVENT_ADD = 0,
    KC_CONTROLLER_EVENT_UPDATE = 1,
    KC_CONTROLLER_EVENT_DELETE = 2,
} kc_controller_event;

/* Built-in predicates (spec C8). Each passes every add and delete; on an update it passes only
 * when the named part of the object differs between the old and the new state. */
enum kc_predicate_flags {
    KC_PREDICATE_GENERATION_CHANGED = 1u << 0,       /* metadata.generation */
    KC_PREDICATE_RESOURCE_VERSION_CHANGED = 1u << 1, /* metadata.resourceVersion (drops resyncs) */
    KC_PREDICATE_LABELS_CHANGED = 1u << 2,           /* metadata.labels */
    KC_PREDICATE_ANNOTATIONS_CHANGED = 1u << 3,      /* metadata.annotations (as JSON text) */
};

/*
 * Event filter of one watched type (kc_controller_type.predicate, by pointer and size; NULL =
 * every event passes). Zero-initialised = every event passes. The built-in flags
 * are combined with AND (as several controller-runtime predicates), or with OR when any is set;
 * custom (may be NULL) must also pass. custom runs on the informer's dispatcher thread with
 * borrowed objects (old_obj NULL unless an update); it must be fast and must not block.
 */
typedef struct kc_predicate {
    unsigned flags; /* enum kc_predicate_flags */
    bool any;       /* combine the flags with OR instead of AND */
    bool (*custom)(void *ud, kc_controller_event ev, kc_obj *old_obj, kc_obj *new_obj);
    void *ud;
} kc_predicate;

/* ---- types -------------------------------------------------------------------------------- */

/*
 * A watched type. gvr identifies the resource; kind is its Kind (needed for the primary type:
 * ownerReferences name the owner by apiVersion and kind); informer (may be NULL; copied, with its
 * decode options) chooses the namespace and selectors of its informer, which is shared through
 * the controller's kc_cache (kc_cache_get_informer); predicate (may be NULL = every event passes;
 * copied) filters its events. Nested structs go by pointer and size (docs/abi.md): set
 * informer_size = sizeof *informer and predicate_size = sizeof *predicate; a non-NULL pointer
 * with a size of 0 is KC_EINVAL. Strings are copied.
 */
typedef struct kc_controller_type {
    kc_gvr gvr;
    const char *kind;    /* e.g. "Migration"; required for the primary type */
    bool cluster_scoped; /* primary type: keys are "name" and requests have ns "" */
    const kc_informer_opts *informer;
    size_t informer_size;
    const kc_predicate *predicate;
    size_t predicate_size;
} kc_controller_type;

/*
 * Options. Zero-initialised means the defaults. Copied (strings and nested structs too). Nested
 * structs go by pointer and <field>_size = sizeof *<field> (docs/abi.md); a non-NULL pointer
 * with a size of 0 is KC_EINVAL.
 */
typedef struct kc_controller_opts {
    const char *name;                  /* for logs and queue metrics; NULL = the primary resource */
    const kc_controller_type *primary; /* required: gvr and kind */
    size_t primary_size;
    kc_reconcile_fn reconcile;          /* required */
    void *ud;                           /* passed to reconcile (borrowed) */
    unsigned max_concurrent_reconciles; /* worker threads; 0 = 1 */
    int64_t sync_timeout_ms; /* start's bound on the cache sync; 0 = 120000; < 0 = none */
    int64_t stop_timeout_ms; /* stop's bound on running reconciles; 0 = 30000 */
    /* Backoff and bucket (name defaults to the controller's); NULL = the defaults. */
    const kc_workqueue_opts *queue;
    size_t queue_size;
    /* The cache to use (borrowed: must outlive the controller), so several controllers share
     * informers; NULL = the controller makes its own over the client and stops it on stop. */
    kc_cache *cache;
    /* The reconcile's cached client; NULL = the defaults (block-on-write). */
    const kc_cached_client_opts *client;
    size_t client_size;
    /* Serve /readyz, /healthz, /metrics on this "ADDR:PORT" (kc_health on the controller's cache)
     * from kc_controller_start on, so /readyz answers 503 while starting; NULL = none. /metrics
     * has the cache's, the queue's (workqueue_*) and the controller's series under
     * controller-runtime's names (controller_runtime_reconcile_total, …; docs/controller.md). */
    const char *health_listen;
    bool start_inactive; /* begin gated off (kc_controller_set_active) */
    /* Leader-only (spec C10, L10, L12a): borrowed, must outlive the controller. The controller
     * starts gated off, the elector opens the gate while it leads and closes it at once on loss
     * (kc_controller_set_active); its fence is attached to the controller's cached client (every
     * write refused with KC_EFENCED once it passed) and checked before each reconcile — a key
     * taken while fenced is put back and the gate closed. Caches still sync while not leading
     * (warm failover), and /readyz reports the sync, not leadership. The elector's L11 metrics are
     * added to /metrics when health_listen is set. NULL = not gated on leadership. */
    kc_leader_elector *leader_elector;
    /* Run sharded (docs/scale-out.md): reconcile only keys whose range (FNV-1a of the primary
     * object's uid; for an owned object, of its controller ownerReference's uid, A15) this
     * coordinator holds — not draining, before its fence (A11). Other keys are dropped, not
     * requeued (kc_controller_stats.shard_dropped); a gained range re-enqueues the cache's keys
     * in it; a draining range waits for its reconciles in flight. Borrowed: must outlive the
     * controller; start it before or after the controller. NULL = not sharded. The primary
     * informer (unless its options name a shard field of their own) is sharded on uid and
     * follows the held ranges — none held: empty, no request (A14); owned and watched types stay
     * unsharded and are filtered at admission (A15). Each reconcile gets its range's fence in
     * kc_reconcile_request.fence. */
    kc_shard_coordinator *coordinator;
    /* (appended) Turn the priority queue off. By default (false) the controller enqueues as
     * controller-runtime's priority queue does (its default since v0.23, spec C12): keys from an
     * informer's initial list (the adds delivered before its registration synced) and from
     * resyncs (updates with an unchanged resourceVersion) at KC_WORKQUEUE_PRIORITY_LOW, keys from
     * changes and kc_controller_enqueue at 0, so a change is reconciled before a startup or
     * resync backlog; a requeue (error, requeue_after) keeps the priority the key was taken at.
     * true: every key at priority 0 (plain FIFO, client-go's order). */
    bool no_priority_queue;
} kc_controller_opts;

/*
 * New controller over client (borrowed: must outlive the controller). Checks the options (err
 * names the bad one) and builds the queue, the cache (unless given) and the cached client; starts
 * nothing. Errors: KC_EINVAL (NULL client/opts/ret, no reconcile, primary missing, its gvr or kind
 * missing or bad, a nested pointer with a size of 0), KC_EUNSUPPORTED (a field this library does
 * not know is set: docs/abi.md), KC_ENOMEM. opts and what they point to are copied, except what
 * they mark borrowed (cache, leader_elector, coordinator, ud). *ret is new — caller frees with
 * kc_controller_free. Thread-safe. The macro passes sizeof(kc_controller_opts). Since 0.1.
 */
KC_API int(kc_controller_new)(kc_client *client, const kc_controller_opts *opts, size_t opts_size,
                              kc_controller **ret, kc_error *err);
#define kc_controller_new(client, opts, ret, err)                                                  \
    (kc_controller_new)((client), (opts), sizeof(kc_controller_opts), (ret), (err))

/*
 * Watch an owned type (spec C7): an add, update (old and new state) or delete of an object of
 * type->gvr enqueues the owner named by its first ownerReference with controller=true, if that
 * reference's group (from apiVersion; the version is ignored) and kind equal the primary type's;
 * the key is the owned object's namespace and the reference's name (namespace "" for a
 * cluster-scoped primary type). type is copied; type->kind is not needed. Before start only.
 * Errors: KC_EINVAL (NULL, bad gvr, a nested pointer with a size of 0), KC_EUNSUPPORTED (a field
 * this library does not know is set), KC_EBUSY (already started), KC_ENOMEM. The macro passes
 * sizeof(kc_controller_type). Not thread-safe: from the thread setting the controller up, before
 * start. Since 0.1.
 */
KC_API int(kc_controller_own)(kc_controller *ctrl, const kc_controller_type *type, size_t type_size,
                              kc_error *err);
#define kc_controller_own(ctrl, type, err)                                                         \
    (kc_controller_own)((ctrl), (type), sizeof(kc_controller_type), (err))

/*
 * Map function of an extra watch: called on the informer's dispatcher thread for every event
 * that passes the predicate (old_obj NULL unless an update; objects borrowed for the call); it
 * enqueues keys with kc_controller_enqueue (any number). Must be fast and must not block.
 */
typedef void (*kc_controller_map_fn)(void *ud, kc_controller *ctrl, kc_controller_event ev,
                                     kc_obj *old_obj, kc_obj *new_obj);

/* Watch another type through a map function (ud borrowed: must outlive the controller). type
 * copied. Before start only. Errors: KC_EINVAL (NULL, no map, bad gvr, a nested pointer with a
 * size of 0), KC_EUNSUPPORTED, KC_EBUSY, KC_ENOMEM. The macro passes sizeof(kc_controller_type).
 * Not thread-safe: from the thread setting the controller up, before start. Since 0.1. */
KC_API int(kc_controller_watch)(kc_controller *ctrl, const kc_controller_type *type,
                                size_t type_size, kc_controller_map_fn map, void *ud,
                                kc_error *err);
#define kc_controller_watch(ctrl, type, map, ud, err)                                              \
    (kc_controller_watch)((ctrl), (type), sizeof(kc_controller_type), (map), (ud), (err))

/*
 * Cleanup callback of a controller's finalizer (kube-runtime's finalizer() Event::Cleanup): runs on
 * a worker thread for a primary object being deleted (deletionTimestamp set) that still carries
 * the finalizer. obj is the cached object (borrowed for the call), cc the controller's cached
 * client, ud the ud given to kc_controller_add_finalizer. KC_RECONCILE_DONE removes the finalizer
 * (the server then deletes the object once no finalizer is left); any other result keeps it and is
 * handled as a reconcile's (KC_RECONCILE_ERROR: rate-limited retry).
 */
typedef kc_reconcile_result (*kc_finalizer_cleanup_fn)(void *ud, const kc_reconcile_request *req,
                                                       kc_obj *obj, kc_cached_client *cc);

/* A controller's finalizer (kc_controller_add_finalizer). Zero-initialised fields are defaults. */
typedef struct kc_finalizer_opts {
    const char *finalizer;           /* required: a qualified name, e.g. "example.com/cleanup" */
    kc_finalizer_cleanup_fn cleanup; /* required */
    void *ud;                        /* passed to cleanup (borrowed: must outlive the controller) */
    /* The objects the finalizer is for (label selector text, e.g. "mirror=true"); NULL or "" =
     * every object of the primary type. An object that does not match gets no finalizer, and one
     * that stops matching while it carries the finalizer is cleaned up and released as if it were
     * being deleted (cleanup, then the finalizer removed) — so a finalizer never outlives the
     * controller's interest in the object (unlabelling is not a leak). */
    const char *label_selector;
} kc_finalizer_opts;

/*
 * Manage a finalizer on the primary type (kube-runtime's finalizer() helper; docs/controller.md,
 * "Idioms"). Each key's worker then reads the primary object from the cache first:
 *   - absent: reconcile is called as without a finalizer;
 *   - not being deleted, matching opts->label_selector, finalizer missing: it is added
 *     (kc_cached_client_add_finalizer, under the request's fence), then reconcile is called
 *     (Event::Apply); present: reconcile;
 *   - being deleted (or no longer matching), finalizer present: cleanup (Event::Cleanup); DONE →
 *     the finalizer is removed; then, for an object not being deleted, reconcile is called;
 *   - being deleted, finalizer absent: nothing (neither reconcile nor cleanup);
 *   - not matching, finalizer absent: reconcile.
 * A failed add or remove is a KC_RECONCILE_ERROR (rate-limited retry; counted in errors).
 * opts is copied (its strings too; ud is borrowed). One finalizer per controller. Before start
 * only. Errors: KC_EINVAL (NULL, no cleanup, a name that is not a qualified name, a bad label
 * selector: err says where), KC_EEXISTS (one is registered already), KC_EBUSY (started),
 * KC_EUNSUPPORTED (opts of a newer header), KC_ENOMEM. Not thread-safe: from the thread setting
 * the controller up, before start. Since 0.1.
 */
KC_API int(kc_controller_add_finalizer)(kc_controller *ctrl, const kc_finalizer_opts *opts,
                                        size_t opts_size, kc_error *err);
#define kc_controller_add_finalizer(ctrl, opts, err)                                               \
    (kc_controller_add_finalizer)((ctrl), (opts), sizeof(kc_finalizer_opts), (err))

/* Enqueue the request ns/name (ns NULL or "" for cluster-scoped; copied) at priority 0 — or, from
 * a map function handling an initial-list add or a resync, at KC_WORKQUEUE_PRIORITY_LOW (as
 * controller-runtime's mapped handler does; see kc_controller_opts.no_priority_queue). Thread-safe;
 * any time. Errors: KC_EINVAL (NULL ctrl or name, or a name too long), KC_ESTOPPED, KC_ENOMEM.
 * Since 0.1. */
KC_API int kc_controller_enqueue(kc_controller *ctrl, const char *ns, const char *name);

/*
 * Start (spec C9): register the handlers (starting the informers), serve health if asked, wait
 * until every informer of the controller's cache has synced — bounded by sync_timeout_ms — and
 * then start the workers. No reconcile runs before this returns 0. On failure the controller is
 * stopped and the call returns the code of kc_cache_wait_synced (KC_ETIMEOUT, KC_ENOTFOUND for a
 * resource the server does not serve, …) with err naming the informer that did not sync and its
 * last error. Errors: those, and KC_EINVAL (NULL), KC_EBUSY (started already), KC_ESTOPPED (stopped
 * meanwhile), KC_ENOMEM. No ownership transfer. Thread-safe with kc_controller_stop (which makes a
 * waiting start return KC_ESTOPPED). Since 0.1.
 */
KC_API int kc_controller_start(kc_controller *ctrl, kc_error *err);

/*
 * Gate for leader election or shard ownership (wave 2.4). While inactive, workers take no key:
 * a key a worker got when the gate closed is put back (queued again, not reconciled), and events
 * keep being queued (deduplicated) for when it opens. Reconciles already running finish (C has
 * no cancellation; a long reconcile can check kc_controller_active before each write).
 * Thread-safe; any time, also before start. Returns 0. Errors: KC_EINVAL (NULL). No ownership
 * transfer. Since 0.1.
 */
KC_API int kc_controller_set_active(kc_controller *ctrl, bool active);

/* Whether the gate is open. false for NULL. No ownership transfer. Thread-safe. Never fails.
 * Since 0.1. */
KC_API bool kc_controller_active(kc_controller *ctrl);

/* Counters (monotonic since new). */
typedef struct kc_controller_stats {
    uint64_t reconciles;    /* reconcile calls returned */
    uint64_t done;          /* ...KC_RECONCILE_DONE */
    uint64_t requeue_after; /* ...KC_RECONCILE_REQUEUE_AFTER */
    uint64_t errors;        /* ...KC_RECONCILE_ERROR or an unknown code */
    uint64_t terminal;      /* ...KC_RECONCILE_TERMINAL */
    uint64_t unknown;       /* ...a code outside kc_reconcile_code (also in errors) */
    uint64_t put_back;      /* keys put back unreconciled because the gate was closed */
    uint64_t enqueued;      /* keys handed to the queue by handlers and kc_controller_enqueue */
    uint64_t filtered;      /* events a predicate dropped */
    unsigned running;       /* reconciles in progress now */
    bool started;           /* start succeeded (workers running) */
    uint64_t fenced;        /* keys put back because the leader fence had passed (also put_back) */
    uint64_t shard_dropped; /* keys not reconciled: their range not held here (sharded only) */
} kc_controller_stats;

/* Counters, written into *ret (at most ret_size bytes; docs/abi.md). ctrl NULL: zeroed. ret NULL:
 * nothing. Copied into the caller's *ret. Thread-safe. Never fails. The macro passes
 * sizeof(kc_controller_stats). Since 0.1. */
KC_API void(kc_controller_get_stats)(kc_controller *ctrl, kc_controller_stats *ret,
                                     size_t ret_size);
#define kc_controller_get_stats(ctrl, ret)                                                         \
    (kc_controller_get_stats)((ctrl), (ret), sizeof(kc_controller_stats))

/* The controller's cache; borrowed: valid until kc_controller_free. NULL for NULL. Thread-safe.
 * Never fails. Since 0.1. */
KC_API kc_cache *kc_controller_cache(kc_controller *ctrl);
/* The reconciles' cached client; borrowed: valid until kc_controller_free. NULL for NULL.
 * Thread-safe. Never fails. Since 0.1. */
KC_API kc_cached_client *kc_controller_client(kc_controller *ctrl);
/* The work queue; borrowed: valid until kc_controller_free. NULL for NULL. Thread-safe.
 * Never fails. Since 0.1. */
KC_API kc_workqueue *kc_controller_queue(kc_controller *ctrl);
/* The health endpoint's URL (NULL when not serving, or for NULL); borrowed: valid until
 * kc_controller_free. Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_controller_health_url(kc_controller *ctrl);

/*
 * Stop: take no more keys, let running reconciles finish within stop_timeout_ms, remove the
 * handlers, stop the cache (when the controller made it; this also wakes a reconcile waiting in
 * the cached client), join the workers. Returns 0, or KC_ETIMEOUT when reconciles were still
 * running at the bound (the cache was then stopped under them and the workers joined once they
 * returned). Idempotent (0 for a controller never started); KC_EINVAL for NULL. Must not be
 * called from a reconcile or a map function. Errors: KC_ETIMEOUT, KC_EINVAL. No ownership
 * transfer. Thread-safe with start. Since 0.1.
 */
KC_API int kc_controller_stop(kc_controller *ctrl);

/* Stop if needed and free (ctrl is consumed; the cache too when the controller made it; borrowed
 * objects are not freed). Accepts NULL. Not thread-safe: no other call on ctrl may be in flight.
 * Never fails. Since 0.1. */
KC_API void kc_controller_free(kc_controller *ctrl);

KC_END_DECLS

#endif
