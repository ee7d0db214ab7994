/*
 * kcache/cached_client.h — kc_cached_client: reads from the informer cache, writes to the API
 * server, and read-your-writes consistency between the two.
 *
 * A cached client wraps a kc_client (writes, live reads) and a kc_cache (one informer per type).
 * Reads (get, list with label/field selectors, list by index) are served from the informer store
 * of the type; a type without an informer gets one started on first use and the read waits for
 * its initial sync, bounded by the call's timeout (unless kc_cached_client_opts
 * .fail_on_missing_informer: then KC_ENOTFOUND). Types listed as uncached, and calls with
 * kc_cached_call_opts.live, read from the API server instead.
 *
 * Read-your-writes (see docs/read-your-writes.md for the protocol):
 *   - KC_RYW_BLOCK_ON_WRITE (default): create / update / update_status / patch / apply return only
 *     once the type's store has observed the returned resourceVersion: its watermark reached it
 *     with the key agreeing (KEP-5504 compare; the store then holds the key at that RV or a later
 *     state, deletion included), or, when RVs are not comparable, the key shows that exact RV or
 *     any later event. delete learns the object's UID before the request is sent (precondition,
 *     cached object, or this client's last write to the key; else the response's) and returns
 *     once the store has observed the deletion of that UID: its DELETED event, a later state
 *     after the UID was seen, or the watermark past an RV of the object with the UID gone — the
 *     key being absent alone proves nothing (the cache may not have seen the object yet). When the
 *     response shows the object still exists (finalizers: deletionTimestamp set) it waits for the
 *     returned RV instead. Waiters are woken by store events (no polling) and never hold the store
 *     lock.
 *   - KC_RYW_BLOCK_ON_READ: writes return at once; the client remembers its own writes per key and
 *     pending deletes by UID; a later get of the key or list of the type waits until the cache
 *     includes the writes. An object whose delete is pending is never returned (get → KC_ENOTFOUND,
 *     lists filter it out) until the store has observed the deletion (the rule above). Entries
 *     are dropped once observed.
 *   - The API server's resourceVersions going back (backup restore, restart with an RV reset)
 *     do not turn waits into no-ops: the store's watermark follows the server down at the
 *     informer's relist, and waits fall back to evidence on the key meanwhile.
 *   - KC_RYW_NONE: never wait (per-client opt-out; kc_cached_call_opts.no_wait is the per-call
 * one). Every wait is bounded: 3 s by default, per client and per call. A write whose wait times
 * out returns KC_ENOT_CAUGHT_UP *and* the object the server returned: the write itself succeeded
 * and is never reported as failed. Stopping the cache wakes every waiter with KC_ESTOPPED (a write
 * then also hands back the server's object).
 *
 * Thread-safety: every function except kc_cached_client_free may be called from any number of
 * threads at once. The client, the cache and the kc_client are borrowed: they must outlive the
 * cached client. Lifecycle: create the kc_client and kc_cache, kc_cached_client_new, use,
 * kc_cache_stop (wakes waiters), kc_cached_client_free, then free the cache and client.
 */
#ifndef KCACHE_CACHED_CLIENT_H
#define KCACHE_CACHED_CLIENT_H

#include "cache.h"
#include "doc.h"
#include "fence.h"

KC_BEGIN_DECLS

typedef struct kc_cached_client kc_cached_client;

/* Read-your-writes mode of a cached client. */
typedef enum kc_ryw_mode {
    KC_RYW_BLOCK_ON_WRITE = 0, /* default: writes wait until the cache has observed them */
    KC_RYW_BLOCK_ON_READ = 1,  /* writes return at once; later reads wait for them */
    KC_RYW_NONE = 2,           /* no read-your-writes waiting at all */
} kc_ryw_mode;

/* Default bound of every read-your-writes wait (and of a first-use sync wait). */
#define KC_RYW_DEFAULT_TIMEOUT_MS 3000

/* Options of a cached client. Zero-initialised (or NULL) means the defaults. Copied. */
typedef struct kc_cached_client_opts {
    kc_ryw_mode mode;
    int64_t timeout_ms;     /* wait bound; 0 → KC_RYW_DEFAULT_TIMEOUT_MS; < 0 → unbounded */
    const kc_gvr *uncached; /* types always read from the API server (array, copied) */
    size_t n_uncached;
    /* Restrict informers of namespaced types to this namespace (copied); NULL = all namespaces.
     * The client then has no cache of other namespaces: cached reads there are KC_EINVAL (live
     * reads work), and writes there are sent to the API server and return without waiting in
     * every mode (no cached read can see them, so there is nothing to wait for or remember). */
    const char *ns;
    const char *field_manager; /* default fieldManager for apply; NULL → "kcache" */
    /* Self-fence (kcache/fence.h; borrowed: must outlive the client, or be detached first with
     * kc_cached_client_set_fence): once it has passed, every write — create, update,
     * update_status, patch, apply, delete, dry runs included — returns KC_EFENCED without being
     * sent. Reads are not fenced. NULL = writes are never fenced. */
    const kc_fence *fence;
    /* (appended) controller-runtime's ReaderFailOnMissingInformer: a cached read (get, list, list
     * by index) of a type this client's cache has no informer for fails at once with KC_ENOTFOUND
     * (err: "no informer for <group/version/resource> …") instead of starting one. A type whose
     * informer exists — bound by a controller, obtained with kc_cache_get_informer (no selectors,
     * the client's namespace or all), or started by an earlier use — is read as before (waiting
     * for its sync). Writes of such a type are sent and return without a read-your-writes wait (no
     * cached read can see them); they start no informer either. Live reads are unaffected.
     * false (default): a type's informer is started on first use. */
    bool fail_on_missing_informer;
} kc_cached_client_opts;

/* Per-call options. Zero-initialised (or NULL) means the client's defaults. */
typedef struct kc_cached_call_opts {
    int64_t timeout_ms; /* 0 → the client's; < 0 → unbounded */
    bool no_wait;       /* do not wait for read-your-writes on this call (write or read) */
    bool live;          /* read from the API server, not the cache */
    /* (appended) This call's own fence (kcache/fence.h; borrowed for the call), checked before
     * a write is sent, besides the client's (kc_cached_client_opts.fence): KC_EFENCED, nothing
     * sent, once it has passed — e.g. a sharded reconcile's kc_reconcile_request.fence. Ignored
     * by reads. NULL = none. */
    const kc_fence *fence;
} kc_cached_call_opts;

/* Counters (monotonic since new), for tests, metrics and the demo. */
typedef struct kc_cached_client_stats {
    uint64_t waits;             /* read-your-writes waits performed */
    uint64_t waits_immediate;   /* ...already satisfied when checked */
    uint64_t wait_timeouts;     /* ...that ended with KC_ENOT_CAUGHT_UP */
    uint64_t informers_started; /* informers started on first use */
    size_t pending;             /* block-on-read entries currently remembered */
} kc_cached_client_stats;

/*
 * New cached client over client and cache (both borrowed: must outlive the cached client; the
 * cache needs no informer yet — each type's informer is obtained from kc_cache on first use,
 * reads and writes alike; the cached client keeps none of its own). opts may be NULL
 * (copied). Errors: KC_EINVAL (bad mode, NULL client/cache), KC_EUNSUPPORTED (opts of a newer
 * header), KC_ENOMEM. On success *ret is new — caller frees with kc_cached_client_free().
 * Thread-safe. Since 0.1.
 */
KC_API int(kc_cached_client_new)(kc_client *client, kc_cache *cache,
                                 const kc_cached_client_opts *opts, size_t opts_size,
                                 kc_cached_client **ret, kc_error *err);
#define kc_cached_client_new(client, cache, opts, ret, err)                                        \
    (kc_cached_client_new)((client), (cache), (opts), sizeof(kc_cached_client_opts), (ret), (err))

/* Free (cc is consumed; the client and cache it borrowed are not freed). No call may be in flight
 * (stop the cache first to wake waiters): not thread-safe. Accepts NULL. Never fails. Since 0.1. */
KC_API void kc_cached_client_free(kc_cached_client *cc);

/* Attach (fence non-NULL), replace or detach (NULL) the self-fence of every later write (see
 * kc_cached_client_opts.fence; borrowed). A write already past its check is not recalled.
 * Returns 0. Errors: KC_EINVAL (cc NULL). Thread-safe. Since 0.1. */
KC_API int kc_cached_client_set_fence(kc_cached_client *cc, const kc_fence *fence);

/* Counters, copied into *ret (the caller's). Thread-safe. Never fails (zeroes for a NULL cc).
 * Since 0.1. */
KC_API void(kc_cached_client_get_stats)(kc_cached_client *cc, kc_cached_client_stats *ret,
                                        size_t ret_size);
#define kc_cached_client_get_stats(cc, ret)                                                        \
    (kc_cached_client_get_stats)((cc), (ret), sizeof(kc_cached_client_stats))

/* ---- reads -------------------------------------------------------------------------------- */
/*
 * Common rules: gvr and strings are borrowed for the call; call may be NULL. ns is the namespace
 * of namespaced types (NULL or "" for cluster-scoped types, or all namespaces for lists).
 * Errors: KC_ENOTFOUND; KC_EINVAL (a cached read in a namespace outside opts.ns);
 * KC_ETIMEOUT (first-use informer did not sync within the timeout);
 * KC_ENOT_CAUGHT_UP (block-on-read: the cache did not catch up with this client's writes within
 * the timeout; out-parameters untouched); KC_ESTOPPED (the cache was stopped); API errors for
 * live reads and when an informer cannot start (e.g. KC_EFORBIDDEN, KC_ENOTFOUND for an unknown
 * resource). Thread-safe.
 */

/* Get one object. gvr, ns, name and call are borrowed for the call. On success *ret_obj is a new
 * reference — caller unrefs. Errors: as the reads' common rules above (KC_ENOTFOUND, KC_EINVAL,
 * KC_ETIMEOUT, KC_ENOT_CAUGHT_UP, KC_ESTOPPED, the API's errors). Thread-safe. Since 0.1. */
KC_API int(kc_cached_client_get)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                                 const char *name, const kc_cached_call_opts *call,
                                 size_t call_size, kc_obj **ret_obj, kc_error *err);
#define kc_cached_client_get(cc, gvr, ns, name, call, ret_obj, err)                                \
    (kc_cached_client_get)((cc), (gvr), (ns), (name), (call), sizeof(kc_cached_call_opts),         \
                           (ret_obj), (err))

/*
 * List objects of gvr in ns (NULL/"" = all namespaces) matching label_selector and field_selector
 * (NULL or "" = everything; KC_EINVAL when unparsable). On success *ret_items is a new malloc'd
 * array of *ret_n new references (sorted by namespace/name) — caller frees with
 * kc_obj_array_free(). An empty result gives *ret_n = 0 and a non-NULL array. The arguments are
 * borrowed for the call. Errors: as the reads' common rules above (KC_ENOTFOUND, KC_EINVAL,
 * KC_ETIMEOUT, KC_ENOT_CAUGHT_UP, KC_ESTOPPED, the API's errors). Thread-safe. Since 0.1.
 */
KC_API int(kc_cached_client_list)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                                  const char *label_selector, const char *field_selector,
                                  const kc_cached_call_opts *call, size_t call_size,
                                  kc_obj ***ret_items, size_t *ret_n, kc_error *err);
#define kc_cached_client_list(cc, gvr, ns, label_selector, field_selector, call, ret_items, ret_n, \
                              err)                                                                 \
    (kc_cached_client_list)((cc), (gvr), (ns), (label_selector), (field_selector), (call),         \
                            sizeof(kc_cached_call_opts), (ret_items), (ret_n), (err))

/*
 * List the objects of gvr whose index index_name holds value: KC_STORE_INDEX_NAMESPACE (always
 * there), or a user indexer registered for the type with kc_cache_add_indexer /
 * kc_cache_opts.indexers before the type's first use; KC_ENOTFOUND names a missing index. Always
 * served from the cache (call->live is KC_EINVAL here). Result as kc_cached_client_list (a new
 * array of new references — caller frees with kc_obj_array_free()); the arguments are borrowed for
 * the call. Errors: as the reads' common rules above (KC_ENOTFOUND, KC_EINVAL, KC_ETIMEOUT,
 * KC_ENOT_CAUGHT_UP, KC_ESTOPPED, the API's errors). Thread-safe. Since 0.1.
 */
KC_API int(kc_cached_client_list_by_index)(kc_cached_client *cc, const kc_gvr *gvr,
                                           const char *index_name, const char *value,
                                           const kc_cached_call_opts *call, size_t call_size,
                                           kc_obj ***ret_items, size_t *ret_n, kc_error *err);
#define kc_cached_client_list_by_index(cc, gvr, index_name, value, call, ret_items, ret_n, err)    \
    (kc_cached_client_list_by_index)((cc), (gvr), (index_name), (value), (call),                   \
                                     sizeof(kc_cached_call_opts), (ret_items), (ret_n), (err))

/* ---- writes ------------------------------------------------------------------------------- */
/*
 * Common rules: the request goes to the API server through kc_client (wo/po/dopts are forwarded,
 * may be NULL; bodies are copied for the request). On success the call returns 0 and *ret_obj
 * (may be NULL) gets the object the server returned — a new reference, caller unrefs.
 * If the write succeeded but the wait did not finish, the call returns KC_ENOT_CAUGHT_UP (timeout)
 * or KC_ESTOPPED (cache stopped) and STILL sets *ret_obj: the write is never reported as failed.
 * KC_EFENCED: the attached fence (kc_cached_client_opts.fence) has passed; nothing was sent.
 * Any other error is the write's own failure (out-parameters untouched). Dry runs (dry_run in
 * wo/po/dopts) persist nothing and never wait. Thread-safe.
 */

/* Create (POST) json in ns. gvr, strings, options and the body are borrowed for the call; *ret_obj
 * is a new reference — caller unrefs. Errors: as the writes' common rules above (KC_ENOT_CAUGHT_UP
 * or KC_ESTOPPED with *ret_obj set, KC_EFENCED, KC_EINVAL, the API's errors). Thread-safe.
 * Since 0.1. */
KC_API int(kc_cached_client_create)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                                    const char *json, size_t len, const kc_write_opts *wo,
                                    size_t wo_size, const kc_cached_call_opts *call,
                                    size_t call_size, kc_obj **ret_obj, kc_error *err);
#define kc_cached_client_create(cc, gvr, ns, json, len, wo, call, ret_obj, err)                    \
    (kc_cached_client_create)((cc), (gvr), (ns), (json), (len), (wo), sizeof(kc_write_opts),       \
                              (call), sizeof(kc_cached_call_opts), (ret_obj), (err))

/* Replace (PUT) the object named by the body's metadata.name. gvr, strings, options and the body
 * are borrowed for the call; *ret_obj is a new reference — caller unrefs. Errors: as the writes'
 * common rules above (KC_ENOT_CAUGHT_UP or KC_ESTOPPED with *ret_obj set, KC_EFENCED, KC_EINVAL,
 * the API's errors). Thread-safe. Since 0.1. */
KC_API int(kc_cached_client_update)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                                    const char *json, size_t len, const kc_write_opts *wo,
                                    size_t wo_size, const kc_cached_call_opts *call,
                                    size_t call_size, kc_obj **ret_obj, kc_error *err);
#define kc_cached_client_update(cc, gvr, ns, json, len, wo, call, ret_obj, err)                    \
    (kc_cached_client_update)((cc), (gvr), (ns), (json), (len), (wo), sizeof(kc_write_opts),       \
                              (call), sizeof(kc_cached_call_opts), (ret_obj), (err))

/* Replace the /status subresource. gvr, strings, options and the body are borrowed for the call;
 * *ret_obj is a new reference — caller unrefs. Errors: as the writes' common rules above
 * (KC_ENOT_CAUGHT_UP or KC_ESTOPPED with *ret_obj set, KC_EFENCED, KC_EINVAL, the API's errors).
 * Thread-safe. Since 0.1. */
KC_API int(kc_cached_client_update_status)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                                           const char *json, size_t len, const kc_write_opts *wo,
                                           size_t wo_size, const kc_cached_call_opts *call,
                                           size_t call_size, kc_obj **ret_obj, kc_error *err);
#define kc_cached_client_update_status(cc, gvr, ns, json, len, wo, call, ret_obj, err)             \
    (kc_cached_client_update_status)((cc), (gvr), (ns), (json), (len), (wo),                       \
                                     sizeof(kc_write_opts), (call), sizeof(kc_cached_call_opts),   \
                                     (ret_obj), (err))

/* Patch name with a body of any kc_patch_type (po->subresource "status" patches the status).
 * gvr, strings, options and the body are borrowed for the call; *ret_obj is a new reference —
 * caller unrefs. Errors: as the writes' common rules above (KC_ENOT_CAUGHT_UP or KC_ESTOPPED with
 * *ret_obj set, KC_EFENCED, KC_EINVAL, the API's errors). Thread-safe. Since 0.1. */
KC_API int(kc_cached_client_patch)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                                   const char *name, kc_patch_type type, const char *body,
                                   size_t len, const kc_patch_opts *po, size_t po_size,
                                   const kc_cached_call_opts *call, size_t call_size,
                                   kc_obj **ret_obj, kc_error *err);
#define kc_cached_client_patch(cc, gvr, ns, name, type, body, len, po, call, ret_obj, err)         \
    (kc_cached_client_patch)((cc), (gvr), (ns), (name), (type), (body), (len), (po),               \
                             sizeof(kc_patch_opts), (call), sizeof(kc_cached_call_opts),           \
                             (ret_obj), (err))

/* Server-side apply (KC_PATCH_APPLY) of body (YAML or JSON) to name; the field manager is
 * po->field_manager, else the client's default. gvr, strings, options and the body are borrowed for
 * the call; *ret_obj is a new reference — caller unrefs. Errors: as the writes' common rules above
 * (KC_ENOT_CAUGHT_UP or KC_ESTOPPED with *ret_obj set, KC_EFENCED, KC_EINVAL, the API's errors).
 * Thread-safe. Since 0.1. */
KC_API int(kc_cached_client_apply)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                                   const char *name, const char *body, size_t len,
                                   const kc_patch_opts *po, size_t po_size,
                                   const kc_cached_call_opts *call, size_t call_size,
                                   kc_obj **ret_obj, kc_error *err);
#define kc_cached_client_apply(cc, gvr, ns, name, body, len, po, call, ret_obj, err)               \
    (kc_cached_client_apply)((cc), (gvr), (ns), (name), (body), (len), (po),                       \
                             sizeof(kc_patch_opts), (call), sizeof(kc_cached_call_opts),           \
                             (ret_obj), (err))

/*
 * Delete name. *ret_obj (may be NULL) gets the object when the server returned one (finalizers
 * pending: deletionTimestamp set; or a type that returns the deleted object, e.g. pods), else NULL.
 * Block-on-write waits until the cache has observed the deletion of the object's UID (see the top
 * of this file; with finalizers, until the returned RV is observed). gvr, strings, options and the
 * body are borrowed for the call; *ret_obj is a new reference — caller unrefs. Errors: as the
 * writes' common rules above (KC_ENOT_CAUGHT_UP or KC_ESTOPPED with *ret_obj set, KC_EFENCED,
 * KC_EINVAL, the API's errors). Thread-safe. Since 0.1.
 */
KC_API int(kc_cached_client_delete)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                                    const char *name, const kc_delete_opts *dopts,
                                    size_t dopts_size, const kc_cached_call_opts *call,
                                    size_t call_size, kc_obj **ret_obj, kc_error *err);
#define kc_cached_client_delete(cc, gvr, ns, name, dopts, call, ret_obj, err)                      \
    (kc_cached_client_delete)((cc), (gvr), (ns), (name), (dopts), sizeof(kc_delete_opts), (call),  \
                              sizeof(kc_cached_call_opts), (ret_obj), (err))

/* ---- create-or-update, create-or-patch, finalizers ----------------------------------------- */
/*
 * controller-runtime's controllerutil.CreateOrUpdate / CreateOrPatch / AddFinalizer /
 * RemoveFinalizer on the cached client (docs/controller.md, "Idioms"). They read and write
 * through the cached client's own get / create / update / patch, so read-your-writes applies: the
 * object they return is in the cache when they return (block-on-write), and a later get of this
 * client sees it.
 */

/* What a create-or-update / create-or-patch did (controllerutil.OperationResult). */
typedef enum kc_op_result {
    KC_OP_UNCHANGED = 0,           /* "unchanged": the object exists and mutate changed nothing;
                                      nothing was written */
    KC_OP_CREATED = 1,             /* "created" */
    KC_OP_UPDATED = 2,             /* "updated": the object (not its status) was written */
    KC_OP_UPDATED_STATUS = 3,      /* "updatedStatus" (patch only): the object and its status */
    KC_OP_UPDATED_STATUS_ONLY = 4, /* "updatedStatusOnly" (patch only): the status alone */
} kc_op_result;

/* Name of a kc_op_result as controller-runtime spells it ("unchanged", "created", "updated",
 * "updatedStatus", "updatedStatusOnly"; "?" otherwise). Borrowed (static). Thread-safe. Never
 * fails. Since 0.1. */
KC_API const char *kc_op_result_name(kc_op_result r);

/*
 * Mutate callback: bring doc to the wanted state. doc holds a copy of the current object, or —
 * when it does not exist (existing NULL) — {"apiVersion","kind","metadata":{"name"[,
 * "namespace"]}}. Both borrowed for the call (doc is the caller's to edit; existing is the cached
 * object). It may run more than once (a conflict retries with a fresh object): it must be
 * idempotent and must not change metadata.name or metadata.namespace (KC_EINVAL). A nonzero return
 * aborts the call with that code (nothing more is written).
 */
typedef int (*kc_mutate_fn)(void *ud, kc_doc *doc, const kc_obj *existing);

/* Options of a create-or-update / create-or-patch. Zero-initialised (or NULL) means the defaults.
 * Copied. */
typedef struct kc_mutate_opts {
    /* Retries after a 409 Conflict from the server (or an AlreadyExists of a racing creator),
     * each from a fresh read: 0 → 5 (client-go's retry.DefaultRetry); < 0 → none. */
    int max_retries;
    /* Delay before the first retry, with 10% jitter (client-go: 10 ms, factor 1): 0 → 10 ms. */
    int64_t backoff_ms;
    /* Growth of the delay per retry, in percent of the previous one: 0 → 100 (constant). */
    unsigned backoff_factor_pct;
} kc_mutate_opts;

/*
 * Create the object kind (e.g. "ConfigMap"; its apiVersion is gvr's group/version) named
 * ns/name, or update it (controllerutil.CreateOrUpdate): read it from the cache; absent → a
 * skeleton, mutate, create (KC_OP_CREATED; a racing creator's KC_EEXISTS retries); present → a
 * copy, mutate, and — only when it differs from the object read — a PUT carrying the read's
 * resourceVersion (KC_OP_UPDATED), so a concurrent writer makes it fail with 409 instead of being
 * overwritten; else nothing is written (KC_OP_UNCHANGED, no resourceVersion bump). A 409 from the
 * server retries (kc_mutate_opts) with the object read live from the server. *ret_result (may be
 * NULL) says what happened; *ret_obj (may be NULL) gets the object as written or read — a new
 * reference, caller unrefs. gvr, kind, ns, name and the options are borrowed for the call; ud is
 * passed to mutate. Errors: KC_EINVAL (NULL arguments, no kind, mutate changed the name or
 * namespace), mutate's own nonzero code, KC_ECONFLICT (retries exhausted), the reads' and writes'
 * errors (KC_ENOT_CAUGHT_UP / KC_ESTOPPED: the write succeeded, *ret_result and *ret_obj are set).
 * Thread-safe. Since 0.1.
 */
KC_API int(kc_cached_client_create_or_update)(kc_cached_client *cc, const kc_gvr *gvr,
                                              const char *kind, const char *ns, const char *name,
                                              kc_mutate_fn mutate, void *ud,
                                              const kc_mutate_opts *opts, size_t opts_size,
                                              const kc_cached_call_opts *call, size_t call_size,
                                              kc_op_result *ret_result, kc_obj **ret_obj,
                                              kc_error *err);
#define kc_cached_client_create_or_update(cc, gvr, kind, ns, name, mutate, ud, opts, call,         \
                                          ret_result, ret_obj, err)                                \
    (kc_cached_client_create_or_update)(                                                           \
        (cc), (gvr), (kind), (ns), (name), (mutate), (ud), (opts), sizeof(kc_mutate_opts), (call), \
        sizeof(kc_cached_call_opts), (ret_result), (ret_obj), (err))

/*
 * As kc_cached_client_create_or_update, but an existing object is patched
 * (controllerutil.CreateOrPatch): a JSON merge patch of what mutate changed outside /status, with
 * metadata.resourceVersion as an optimistic-lock precondition (KC_OP_UPDATED), then, when /status
 * changed, a merge patch of the status to the status subresource, also under the resourceVersion
 * the first write returned (KC_OP_UPDATED_STATUS, or KC_OP_UPDATED_STATUS_ONLY when only the status
 * changed). A 409 retries as above; the result then counts what every attempt wrote. Arguments
 * are borrowed for the call; *ret_obj is a new reference — caller unrefs. Errors: KC_EINVAL (NULL
 * arguments, no kind, name or namespace changed), mutate's own code, KC_ECONFLICT (retries
 * exhausted), KC_ENOTFOUND (a type without a status subresource given a status), the API's
 * errors (KC_ENOT_CAUGHT_UP / KC_ESTOPPED: written, results set). Thread-safe. Since 0.1.
 */
KC_API int(kc_cached_client_create_or_patch)(kc_cached_client *cc, const kc_gvr *gvr,
                                             const char *kind, const char *ns, const char *name,
                                             kc_mutate_fn mutate, void *ud,
                                             const kc_mutate_opts *opts, size_t opts_size,
                                             const kc_cached_call_opts *call, size_t call_size,
                                             kc_op_result *ret_result, kc_obj **ret_obj,
                                             kc_error *err);
#define kc_cached_client_create_or_patch(cc, gvr, kind, ns, name, mutate, ud, opts, call,          \
                                         ret_result, ret_obj, err)                                 \
    (kc_cached_client_create_or_patch)(                                                            \
        (cc), (gvr), (kind), (ns), (name), (mutate), (ud), (opts), sizeof(kc_mutate_opts), (call), \
        sizeof(kc_cached_call_opts), (ret_result), (ret_obj), (err))

/*
 * Add finalizer to ns/name on the server (controllerutil.AddFinalizer + a patch): a JSON patch
 * (RFC 6902) whose first operation tests /metadata/resourceVersion against the object read, so a
 * concurrent writer is never overwritten — a conflict or a failed test (409/422) retries from an
 * object read live, up to 5 times (client-go's retry.DefaultRetry). Nothing is written when the
 * object already has it. *ret_obj (may be NULL) gets the object — a new reference, caller unrefs.
 * Arguments borrowed for the call. Errors: KC_EINVAL (NULL arguments, finalizer not a qualified
 * name), KC_ENOTFOUND, KC_EUNPROCESSABLE (the object is being deleted: no new finalizers),
 * KC_ECONFLICT (retries exhausted), the reads' and writes' errors (KC_ENOT_CAUGHT_UP /
 * KC_ESTOPPED with *ret_obj set). Thread-safe. Since 0.1.
 */
KC_API int(kc_cached_client_add_finalizer)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                                           const char *name, const char *finalizer,
                                           const kc_cached_call_opts *call, size_t call_size,
                                           kc_obj **ret_obj, kc_error *err);
#define kc_cached_client_add_finalizer(cc, gvr, ns, name, finalizer, call, ret_obj, err)           \
    (kc_cached_client_add_finalizer)((cc), (gvr), (ns), (name), (finalizer), (call),               \
                                     sizeof(kc_cached_call_opts), (ret_obj), (err))

/*
 * Remove finalizer from ns/name on the server (controllerutil.RemoveFinalizer + a patch), as
 * kc_cached_client_add_finalizer: a JSON patch with a resourceVersion test, retried on conflict,
 * nothing written when it is absent (or the object is gone: 0, *ret_obj NULL). Removing the last
 * finalizer of an object being deleted deletes it; the call then waits (block-on-write) until the
 * cache has observed that state, and *ret_obj is the server's last view of the object. Arguments
 * borrowed for the call; *ret_obj a new reference — caller unrefs. Errors: KC_EINVAL, KC_ECONFLICT, the reads' and writes' errors
 * (KC_ENOT_CAUGHT_UP / KC_ESTOPPED). Thread-safe. Since 0.1.
 */
KC_API int(kc_cached_client_remove_finalizer)(kc_cached_client *cc, const kc_gvr *gvr,
                                              const char *ns, const char *name,
                                              const char *finalizer,
                                              const kc_cached_call_opts *call, size_t call_size,
                                              kc_obj **ret_obj, kc_error *err);
#define kc_cached_client_remove_finalizer(cc, gvr, ns, name, finalizer, call, ret_obj, err)        \
    (kc_cached_client_remove_finalizer)((cc), (gvr), (ns), (name), (finalizer), (call),            \
                                        sizeof(kc_cached_call_opts), (ret_obj), (err))

KC_END_DECLS

#endif
