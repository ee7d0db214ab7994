/*
 * kcache/informer.h — kc_informer: a reflector (list + watch with resume, relist, backoff) feeding
 * a kc_store, event handlers delivered on dispatcher threads, and readiness you can await.
 *
 * Lifecycle: kc_informer_new → (add indexers / handlers) → kc_informer_start → … → kc_informer_stop
 * → kc_informer_free. Stop cancels the watch, joins the reflector and dispatcher threads and wakes
 * every waiter (store waits and readiness waits return KC_ESTOPPED). Free after stop is always
 * safe.
 *
 * Reflector (docs/informer.md has the state machine): initial sync by streaming list (watch with
 * sendInitialEvents=true, resourceVersionMatch=NotOlderThan, ends at the k8s.io/initial-events-end
 * bookmark) when the server supports it, else paged LIST then WATCH from the list RV. A rejected
 * streaming list (4xx) or a bookmark that does not come within initial_events_timeout_ms falls back
 * to LIST (with KC_INFORMER_LIST_STREAMING the latter is a KC_ETIMEOUT failure, "streaming list
 * timed out"). Watches ask for bookmarks and resume from the last RV; 410 → relist at the last RV,
 * then at "" ; a list RV older than the watermark or ResourceVersionTooLarge → relist from scratch.
 *
 * Backoff — the informer never hot-loops against its server. Every restart after a list or watch
 * that ended early waits one exponential step with jitter (client-go's: backoff_initial_ms, 800
 * ms, doubling to backoff_max_ms, 30 s; each wait in [step, 2 × step) capped at backoff_max_ms),
 * whatever ended it: a clean close after any number of events or bookmarks, a network error, a
 * 429/5xx, a 410 Expired or ResourceVersionTooLarge ERROR event, an event or bookmark older than
 * the resume RV, a failed list. The steps reset once backoff_reset_ms (2 min) pass without one.
 * At once, without a step: the restart after a healthy watch — one that lasted its timeoutSeconds
 * (the server ended it on schedule) or backoff_reset_ms —, so the routine relist after a 410 at
 * the end of a long watch goes at once; the retry at "" of a list at the last RV that failed with
 * 410 or too large (once); the watch after a successful list (which does not reset the steps).
 * So at most 3 calls go between two steps: LIST at the last RV, LIST at "", WATCH (a streaming
 * list answered 404 is followed by a paged LIST in the same call). Retry-After is honoured but
 * bounded: the wait is at least min(Retry-After, backoff_max_ms) and never longer than
 * backoff_max_ms. Watches also count in the client's token bucket (kc_client_opts.qps/burst),
 * whose own Retry-After retries are capped too (kc_client_opts.retry_after_max_ms).
 *
 * Bad data is refused, never stored: an object the decoders refuse (kcache/decode.h: a NUL in a
 * name, an item whose kind or apiVersion is not its list's), one the store refuses (without a
 * name), and a watch event whose object says another kind or apiVersion than the informer's
 * objects (those of the last LIST — its kind minus "List" — or, before any, of the first event
 * that says one) fail the list or watch with KC_EPARSE / KC_EINVAL, backed off like any failure;
 * the error names the item ("items[3]: …") and, for bad data, its byte offset (status below).
 *
 * Readiness: "synced" means the initial list has been applied in full. By default it stays true
 * through later relists (the old view is still served); with max_staleness_ms, kc_informer_ready
 * turns false while the watch has been down longer than the bound.
 *
 * Handlers: each registration has its own dispatcher thread and bounded queue; events arrive in
 * store order, never under the store lock. Queue policy (overflow): when a registration's queue
 * holds handler_queue_cap events, it switches to "lagging" mode and further events are coalesced
 * per key (first old state → latest state, so deletes are never lost, per-key order is kept) until
 * the backlog is drained; see docs/informer.md.
 *
 * Thread-safety: every function is thread-safe except kc_informer_free (no call may race with it).
 * Handler callbacks run on the registration's dispatcher thread: they may call any kc_store /
 * kc_informer read function, but must not stop or free the informer.
 */
#ifndef KCACHE_INFORMER_H
#define KCACHE_INFORMER_H

#include "client.h"
#include "shard.h"
#include "store.h"

KC_BEGIN_DECLS

typedef struct kc_informer kc_informer;
typedef struct kc_informer_reg kc_informer_reg;

/* How the initial (and every) full list is fetched. */
typedef enum kc_informer_list_mode {
    KC_INFORMER_LIST_AUTO = 0,      /* streaming list, falling back to paged LIST when rejected */
    KC_INFORMER_LIST_PAGED = 1,     /* always paged LIST + WATCH */
    KC_INFORMER_LIST_STREAMING = 2, /* streaming list only (no fallback; for tests) */
} kc_informer_list_mode;

/* Informer options. Zero-initialised (or NULL) means the defaults. Strings are copied. */
typedef struct kc_informer_opts {
    const char *ns;               /* namespace; NULL or "" = all namespaces / cluster-scoped */
    const char *label_selector;   /* NULL = everything */
    const char *field_selector;   /* NULL = everything */
    int64_t page_size;            /* LIST limit; 0 = 500 */
    const kc_decode_opts *decode; /* transform (copied); NULL = default (strips managedFields) */
    size_t decode_size;           /* sizeof(kc_decode_opts) when decode is set (docs/abi.md) */
    bool metadata_only;           /* PartialObjectMetadata (metadata only) */
    int64_t resync_ms;            /* default periodic resync for handlers; 0 = none */
    kc_informer_list_mode list_mode;
    int64_t initial_events_timeout_ms; /* streaming list bound before falling back; 0 = 10000 */
    int64_t max_staleness_ms;   /* ready=false after the watch is down this long; 0 = never */
    size_t handler_queue_cap;   /* events per handler queue before coalescing; 0 = 65536 */
    int64_t backoff_initial_ms; /* first backoff step; 0 = 800 */
    int64_t backoff_max_ms;     /* step cap, and the cap of a Retry-After wait; 0 = 30000 (taken
                                   as backoff_initial_ms when smaller) */
    int64_t backoff_reset_ms;   /* time without a step that resets the steps, and a watch this
                                   long is healthy (restarts at once); 0 = 120000 */
    int64_t watch_timeout_s;    /* server-side timeoutSeconds per watch; 0 = random 300..600 */
    const char *name;           /* display name for /readyz and /metrics; NULL = derived (see
                                   kc_informer_name); must be unique within a kc_cache */
    bool optional;              /* not required for kc_cache readiness and /readyz */
    /* Sharding (docs/informer.md, "Sharded informers"): watch only the objects whose shard_field
     * (kcache/shard.h: metadata.uid or metadata.namespace) hashes into one of the ranges. Sent as
     * shardSelector on every LIST page and WATCH, and always also filtered by the decoder, so an
     * old server (which ignores it) yields the same store. KC_SHARD_FIELD_NONE (0) with no
     * ranges = unsharded. A field with shard_ranges_count 0 = no range at all (a replica that
     * holds none yet): the informer is synced and empty and sends no request until
     * kc_informer_set_shard_ranges gives it ranges. shard_ranges is borrowed for the call and
     * copied. decode->shard is ignored (the informer sets its own). */
    kc_shard_field shard_field;
    const kc_shard_range *shard_ranges;
    size_t shard_ranges_count;
    /* Bounds of one full list, paged or streaming (a server whose list never ends: continue
     * tokens forever, or a streaming list that never sends its initial-events-end bookmark).
     * Past one, the list fails with KC_ETOOLARGE naming the field, and is retried after the
     * informer's backoff; memory stays bounded by what the limits allow. 0 = the default,
     * < 0 = no limit. */
    int64_t max_list_items; /* items of one list; 0 = 10000000 */
    int64_t max_list_bytes; /* their kc_obj_heap_size, summed; 0 = 8 GiB (8589934592) */
    int64_t max_list_pages; /* pages of a paged list; 0 = max_list_items / page_size + 1000
                             * (21000 with the defaults; no limit when max_list_items < 0) */
    /* Transform (client-go's SetTransform; docs/informer.md "Transform"): called on the
     * informer's thread for every object a LIST or WATCH brings (added, modified, deleted), after
     * decoding (decode's projection) and before it is stored and handed to handlers, with the
     * decoded object (borrowed for the call). Returns what to store instead: a new reference the
     * informer takes over (obj itself, kc_obj_ref'd, is fine), or NULL to store obj unchanged (it
     * had nothing to change, or failed). A result whose namespace, name, uid or resourceVersion
     * differ from obj's is refused (obj stored, a warning logged): the store keys and resumes by
     * them. Must not call back into this informer. NULL = none. */
    kc_obj *(*transform)(void *ud, kc_obj *obj);
    void *transform_ud; /* borrowed: must outlive the informer */
} kc_informer_opts;

/*
 * New informer for gvr (copied) through client (borrowed: must outlive the informer). opts may be
 * NULL. Everything that decides what is watched is checked here, not by the server later:
 *   gvr.group    "" or NULL (core), else a lowercase DNS subdomain ("apps", "example.com")
 *   gvr.version  a lowercase DNS-1035 label ("v1", "v1beta1")
 *   gvr.resource a lowercase plural name ("pods"): no '/', '?', subresources or paths
 *   opts->ns     NULL, "" or a lowercase RFC 1123 label
 *   selectors    label selectors by the Kubernetes grammar (kcache/selector.h); field selectors by
 *                theirs, each term naming a dotted field path ("metadata.name", "status.phase")
 *   shard        shard_field UID or NAMESPACE with 0..KC_SHARD_SELECTOR_MAX_TERMS non-empty
 *                ranges (0: no range), or NONE with none (kc_shard_selector_new's rules)
 * Selectors are kept in canonical form (kc_label_selector_string / kc_field_selector_string).
 * Errors: KC_EINVAL (err names the field, the reason and, for selectors, the byte offset;
 * client NULL, ret NULL), KC_EUNSUPPORTED (opts of a newer header), KC_ENOMEM. opts are copied.
 * *ret is new — caller frees with kc_informer_free. Thread-safe. Since 0.1.
 */
KC_API int(kc_informer_new)(kc_client *client, const kc_gvr *gvr, const kc_informer_opts *opts,
                            size_t opts_size, kc_informer **ret, kc_error *err);
#define kc_informer_new(client, gvr, opts, ret, err)                                               \
    (kc_informer_new)((client), (gvr), (opts), sizeof(kc_informer_opts), (ret), (err))

/* Start the reflector thread. Errors: KC_EINVAL (inf NULL), KC_EBUSY (already started or
 * stopped), KC_ENOMEM. No ownership transfer. Thread-safe. Since 0.1. */
KC_API int kc_informer_start(kc_informer *inf, kc_error *err);

/* Stop: cancel the watch, join every thread, wake every waiter with KC_ESTOPPED. Idempotent; a
 * call made while another is in progress returns once the threads are joined. Accepts NULL.
 * Returning from main (or exit()) while informers run is safe: an exit handler stops every
 * informer still running before the process tears down (docs/informer.md, "Exit"); stopping or
 * freeing them first is the orderly shutdown. No ownership transfer. Thread-safe. Never fails.
 * Since 0.1. */
KC_API void kc_informer_stop(kc_informer *inf);

/* Stop if needed and free (inf is consumed, with its store and registrations). Accepts NULL.
 * Not thread-safe: no call may race with it. Never fails. Since 0.1. */
KC_API void kc_informer_free(kc_informer *inf);

/* The informer's store. Borrowed: valid until kc_informer_free. Add indexers before start.
 * NULL when inf is NULL. Thread-safe. Never fails. Since 0.1. */
KC_API kc_store *kc_informer_store(kc_informer *inf);

/*
 * Display name: opts->name, else derived from what is watched, unique per informer of a cache:
 *   [NAMESPACE/]RESOURCE[.VERSION.GROUP][{LABEL SELECTOR}][[FIELD SELECTOR]][(metadata-only)]
 * e.g. "pods", "default/configmaps{app=web}", "deployments.v1.apps[metadata.name=x]",
 * "configmaps(metadata-only)", "pods(shard uid:0000000000000000-4000000000000000)" (the ranges
 * it was created with; a later kc_informer_set_shard_ranges keeps the name); the core group shows
 * its version only when it is not v1 ("pods.v2."). Selectors appear in canonical form. /readyz
 * and the informer="…" label of /metrics use it. Borrowed: valid until kc_informer_free. "" when
 * inf is NULL. Thread-safe. Never fails. Since 0.1.
 */
KC_API const char *kc_informer_name(const kc_informer *inf);

/* ---- readiness ------------------------------------------------------------------------------ */

/* true once the initial list has been applied in full (stays true through relists). false for
 * NULL. No ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_informer_has_synced(kc_informer *inf);

/* Synced and, with max_staleness_ms, not disconnected for longer than the bound. false for NULL.
 * No ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_informer_ready(kc_informer *inf);

/*
 * Block until synced (0), timeout_ms passes (KC_ETIMEOUT; < 0 = forever) or the informer stops
 * (KC_ESTOPPED). Woken by the sync itself (no polling). Fails fast, before the timeout, when the
 * initial list was refused in a way retrying cannot fix while the server stays as it is: the
 * resource is not served (KC_ENOTFOUND), or the request is rejected (KC_EBADREQUEST — e.g. a
 * field selector the server does not support —, KC_EMETHOD); the reflector keeps retrying with
 * backoff, so a CRD installed later still syncs. err (may be NULL) says why on failure: the
 * informer's name and its last error (code, HTTP status, reason, message, how long ago, how many
 * in a row), also on KC_ETIMEOUT; err->http_status, err->reason and err->offset are those of the
 * last error.
 * KC_EINVAL for a NULL inf. Errors: KC_ETIMEOUT, KC_ESTOPPED, KC_ENOTFOUND, KC_EBADREQUEST,
 * KC_EMETHOD, KC_EINVAL. No ownership transfer. Thread-safe. Since 0.1.
 */
KC_API int kc_informer_wait_synced(kc_informer *inf, int64_t timeout_ms, kc_error *err);

/* A file descriptor (eventfd) that becomes readable exactly when the informer has synced, and
 * stays readable. Borrowed: owned by the informer, closed by kc_informer_free. Never read it.
 * Errors: KC_EINVAL for NULL. Thread-safe. Since 0.1. */
KC_API int kc_informer_sync_fd(kc_informer *inf);

typedef enum kc_informer_phase {
    KC_INFORMER_PHASE_NEW = 0,       /* not started */
    KC_INFORMER_PHASE_SYNCING = 1,   /* initial list in progress */
    KC_INFORMER_PHASE_SYNCED = 2,    /* watching */
    KC_INFORMER_PHASE_RESYNCING = 3, /* relist in progress (synced stays true) */
    KC_INFORMER_PHASE_STOPPED = 4,
} kc_informer_phase;

/* Name of a phase ("syncing", …; "unknown" for another value). Borrowed (static). Thread-safe.
 * Never fails. Since 0.1. */
KC_API const char *kc_informer_phase_name(kc_informer_phase phase);

/* Whether the API server filters by the shard selector (controller-semantics S13.4). */
typedef enum kc_informer_server_sharding {
    KC_INFORMER_SHARDING_UNKNOWN = 0, /* unsharded informer, or no LIST answered yet */
    KC_INFORMER_SHARDING_YES = 1,     /* every page of the last LIST echoed the selector */
    KC_INFORMER_SHARDING_NO = 2,      /* a page lacked metadata.shardInfo or echoed another text:
                                         the client-side filter does all the work */
} kc_informer_server_sharding;

/* A snapshot of an informer's state and counters. */
typedef struct kc_informer_status {
    kc_informer_phase phase;
    bool synced, ready;
    bool connected;              /* a watch (or list) is currently established */
    int64_t disconnected_ms;     /* how long the watch has been down; 0 when connected */
    uint64_t objects;            /* objects in the store */
    char watermark[64];          /* store watermark ("" when none); 64 >= KC_STORE_RV_MAX, fixed */
    uint64_t relists;            /* full lists after the first */
    uint64_t watch_restarts;     /* watches started after the first */
    uint64_t events_applied;     /* watch events applied to the store */
    uint64_t bookmarks;          /* bookmarks received */
    uint64_t errors;             /* list/watch failures */
    double last_sync_duration_s; /* duration of the last complete (re)list */
    bool streaming;              /* the last full list used a streaming list */
    size_t lagging_handlers;     /* registrations currently coalescing */
    /* The last list/watch failure, kept after recovery (last_error_code 0: none so far). Also
     * logged: at warning level from the third failure in a row (then at most once a minute while
     * it lasts) and at once for a permanent one (see kc_informer_wait_synced). */
    int last_error_code;          /* KC_E… code */
    int last_error_http_status;   /* HTTP status; 0 when there was no answer (refused, DNS, TLS) */
    char last_error_reason[64];   /* Kubernetes Status reason (e.g. "Forbidden"); "" when none */
    char last_error_message[256]; /* the detail (truncated); never holds credentials */
    int64_t last_error_unix_ms;   /* when (ms since the Unix epoch) */
    int64_t last_error_age_ms;    /* how long ago (monotonic clock) */
    uint64_t consecutive_errors;  /* failures since the last successful list or watch event */
    /* Changes a handler registration lost because memory ran out while it was coalescing (its
     * queue full; see kc_informer_handler_opts.queue_cap), summed over registrations. Each loss is
     * also logged at warning level ("informer" subsystem). 0 in a healthy process. */
    uint64_t events_dropped;
    kc_informer_server_sharding server_sharding; /* (appended) */
    /* (appended) Byte offset of the last error in the body it was found in (a LIST page, a watch
     * stream's line), as kc_error.offset says: where bad data from the server was (a parse error,
     * an item refused: "items[3]: …"); -1 when not about a position. */
    int64_t last_error_offset;
} kc_informer_status;

/* Fill *ret (copied). inf NULL: *ret is zeroed; ret NULL: nothing. Thread-safe. Never fails.
 * Since 0.1. */
KC_API void(kc_informer_get_status)(kc_informer *inf, kc_informer_status *ret, size_t ret_size);
#define kc_informer_get_status(inf, ret)                                                           \
    (kc_informer_get_status)((inf), (ret), sizeof(kc_informer_status))

/*
 * Change the ranges of a (running) informer: field and n ranges (copied) as for
 * kc_informer_opts.shard_*; field NONE with n 0 makes it unsharded; field UID or NAMESPACE with
 * n 0 is the empty set (a replica that holds no range): the store is emptied (on_delete,
 * tombstone = true) and the informer stays synced and empty, sending no request, until the next
 * change. Setting the ranges already asked for (pending or in force; compared by their canonical
 * selector) does nothing: no relist. Asynchronous: returns at once;
 * the reflector cancels its list or watch in flight, then relists from scratch with the new
 * selector. The relist's swap deletes the objects that left the ranges (on_delete with
 * tombstone = true, as every relist delete: the object lives on, out of range), adds the gained
 * ones (on_add) and updates those whose state changed meanwhile; objects in both keep their place.
 * Meanwhile the informer stays synced and serves the old view (phase RESYNCING; server_sharding
 * back to unknown until the relist answers). Other informers (of the same kc_cache too) are
 * untouched; the informer's name keeps the creation-time ranges. A change made before
 * kc_informer_start applies to the first list. Errors: KC_EINVAL (inf NULL; bad ranges, err naming
 * them), KC_ESTOPPED, KC_ENOMEM. Thread-safe (not from a handler's callback when it then waits for
 * the change). Since 0.1.
 */
KC_API int kc_informer_set_shard_ranges(kc_informer *inf, kc_shard_field field,
                                        const kc_shard_range *ranges, size_t n, kc_error *err);

/* ---- handlers ------------------------------------------------------------------------------- */

/* Callbacks (any may be NULL). Objects are borrowed for the call: kc_obj_ref() to keep them. */
typedef struct kc_informer_handlers {
    void (*on_add)(void *ud, kc_obj *obj);
    void (*on_update)(void *ud, kc_obj *old_obj, kc_obj *new_obj); /* resync: old == new */
    void (*on_delete)(void *ud, kc_obj *obj, bool tombstone); /* tombstone: final state unknown */
    void *ud;
    /* (appended) Called instead of on_add when set. in_initial_list is true for an add of the
     * registration's initial contents — the informer's initial list, or what the store held when
     * the registration was added — delivered before the registration is synced; false for the
     * adds of watch events and later relists (client-go's OnAdd(obj, isInInitialList)). */
    void (*on_add_ex)(void *ud, kc_obj *obj, bool in_initial_list);
} kc_informer_handlers;

/* Per-registration options. Zero-initialised (or NULL) means the informer's defaults. */
typedef struct kc_informer_handler_opts {
    int64_t resync_ms; /* periodic resync; 0 = informer default; < 0 = none */
    size_t queue_cap;  /* 0 = informer default */
} kc_informer_handler_opts;

/*
 * Register handlers (copied). If the informer already holds objects, the registration first
 * receives them as adds; it is "synced" once it has been handed everything up to the informer's
 * initial sync. Can be called before or after start. *ret_reg (may be NULL) is borrowed: valid
 * until kc_informer_remove_handler or kc_informer_free. Errors: KC_ESTOPPED, KC_ENOMEM,
 * KC_EINVAL (inf or h NULL), KC_EUNSUPPORTED (structs of a newer header). h and opts are copied (ud
 * borrowed: must outlive the registration). Thread-safe. Since 0.1.
 */
KC_API int(kc_informer_add_handler)(kc_informer *inf, const kc_informer_handlers *h, size_t h_size,
                                    const kc_informer_handler_opts *opts, size_t opts_size,
                                    kc_informer_reg **ret_reg, kc_error *err);
#define kc_informer_add_handler(inf, h, opts, ret_reg, err)                                        \
    (kc_informer_add_handler)((inf), (h), sizeof(kc_informer_handlers), (opts),                    \
                              sizeof(kc_informer_handler_opts), (ret_reg), (err))

/* Unregister: joins the registration's dispatcher (waits for a callback in progress; do not call
 * from a handler of the same registration). Accepts NULL reg. reg is consumed (freed). Thread-safe,
 * except that it must not race with kc_informer_stop or kc_informer_free. Never fails. Since 0.1.
 */
KC_API void kc_informer_remove_handler(kc_informer *inf, kc_informer_reg *reg);

/* true once the registration has delivered the initial contents (false for NULL). No ownership
 * transfer. Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_informer_reg_synced(kc_informer_reg *reg);

/* Block until the registration is synced: 0, KC_ETIMEOUT, KC_ESTOPPED (err, may be NULL, says
 * which informer and how long). timeout_ms < 0 waits forever. Errors: KC_ETIMEOUT, KC_ESTOPPED,
 * KC_EINVAL (reg NULL). No ownership transfer. Thread-safe. Since 0.1. */
KC_API int kc_informer_reg_wait_synced(kc_informer_reg *reg, int64_t timeout_ms, kc_error *err);

/* true while the registration is coalescing (its queue overflowed; false for NULL). No ownership
 * transfer. Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_informer_reg_lagging(kc_informer_reg *reg);

/* Block until every change already visible in the informer's store has been handed to the
 * registration's callbacks: 0, KC_ETIMEOUT, KC_ESTOPPED (err as above). (For tests and orderly
 * shutdown.) Errors: KC_ETIMEOUT, KC_ESTOPPED, KC_EINVAL (reg NULL). No ownership transfer.
 * Thread-safe. Since 0.1. */
KC_API int kc_informer_reg_wait_idle(kc_informer_reg *reg, int64_t timeout_ms, kc_error *err);

KC_END_DECLS

#endif
