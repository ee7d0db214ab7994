/*
 * informer/internal.h — the informer's internals shared by informer.c (lifecycle,
 * readiness, status), handlers.c (registrations and dispatcher threads) and reflector.c (list/watch
 * loop).
 *
 * Locks (never more than two held, always in this order):
 *   inf->ev_mu  → store mutex   the event lock: serialises "apply to the store + push to every
 *                               registration" against handler registration (a late registration's
 *                               snapshot is taken under ev_mu, so it is consistent with the stream)
 *   inf->ev_mu  → reg->mu       pushing into a registration's queue
 *   inf->st_mu                  state, readiness and the current cancel token; never nested
 */
#ifndef KC_INFORMER_INTERNAL_H
#define KC_INFORMER_INTERNAL_H

#include "core/internal.h"
#include "rest/internal.h"
#include "store/internal.h"
#include "kcache/cache.h"
#include "kcache/informer.h"
#include "kcache/shard.h"

#include <pthread.h>
#include <stdatomic.h>

/* Changes held back for one push to the registrations (see kc__inf_flush). */
#define KC__PEND_MAX 64

/* One queued notification. */
typedef enum { KC__Q_ADD = 1, KC__Q_UPDATE, KC__Q_DELETE, KC__Q_SYNCED } kc__qkind;

typedef struct kc__qitem {
    kc__qkind kind;
    bool tombstone;
    kc_obj *old_obj, *new_obj; /* references owned by the queue */
} kc__qitem;

/* A coalesced key while lagging: what the handler last saw → the latest state. */
typedef struct kc__coal {
    kc__hent h;
    kc_obj *first_old; /* NULL: the handler has not seen this key */
    kc_obj *latest;    /* NULL: deleted */
    kc_obj *final;     /* deleted: the final state from the delete event (may be NULL) */
    bool tombstone;
    char keybuf[];
} kc__coal;

struct kc_informer_reg {
    kc_informer *inf;
    kc_informer_handlers h;
    int64_t resync_ms;
    size_t cap;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* dispatcher: work arrived / stop */
    pthread_cond_t idle_cv; /* waiters: synced / idle / stopped */
    kc__qitem *ring;
    size_t rcap, head, n;
    bool lagging;
    kc__htab coal;
    size_t coal_cursor;
    bool sync_after_drain; /* SYNCED arrived while lagging */
    bool synced, busy, stop, thread_started;
    pthread_t thread;
    struct kc_informer_reg *next;
};

/* What an informer watches, checked and canonicalised (spec.c). Strings owned. */
typedef struct kc__inf_spec {
    char *group, *version, *resource; /* group "" for the core group */
    char *ns;                         /* NULL = all namespaces / cluster-scoped */
    char *label_selector;             /* canonical text; NULL = everything */
    char *field_selector;             /* canonical text; NULL = everything */
    bool metadata_only;
    kc_shard_selector *shard;  /* the ranges asked at creation; NULL = unsharded or none */
    kc_shard_field shard_none; /* the field, when sharded on it with no range (shard NULL) */
    char *id;                  /* identity: kc_cache key and derived display name (spec.c) */
} kc__inf_spec;

/* Check gvr and the spec fields of o (namespace, selectors, metadata_only) and fill *s; KC_EINVAL
 * with err naming the field and the reason, KC_ENOMEM. On failure *s is empty. */
int kc__inf_spec_init(kc__inf_spec *s, const kc_gvr *gvr, const kc_informer_opts *o, kc_error *err);
void kc__inf_spec_clear(kc__inf_spec *s);

/* The last list/watch failure (st_mu). */
typedef struct kc__inf_err {
    int code, http_status;
    char reason[64], message[256];
    int64_t unix_ms;
    uint64_t mono_ns;
    int64_t offset; /* kc_error.offset; -1 none */
} kc__inf_err;

struct kc_informer {
    kc_client *client;
    kc__inf_spec spec;
    kc_gvr gvr;         /* points into spec */
    kc_informer_opts o; /* ns/selectors point into spec; name is NULL (see name); decode points
                           at dec */
    kc_decode_opts dec; /* the decoding options (copied) */
    char *name;         /* display name: opts->name or spec.id */
    kc_store *store;

    pthread_mutex_t ev_mu;
    kc_informer_reg *regs;
    size_t nregs;
    bool ev_synced; /* SYNCED markers were pushed (ev_mu) */
    /* Changes applied to the store but not yet pushed to the registrations (ev_mu): a burst of
     * watch events reaches each registration's queue under one lock with one wake-up. */
    kc_store_change pend[KC__PEND_MAX];
    size_t npend;

    pthread_mutex_t st_mu;
    pthread_cond_t st_cv;
    kc_informer_phase phase;
    bool synced, started, stopping, connected, streaming, streaming_unsupported;
    bool stop_done;              /* kc_informer_stop finished joining (concurrent stops wait) */
    kc__inf_err last_err;        /* the last failure; code 0 = none yet */
    uint64_t consecutive_errors; /* failures since the last success */
    bool exit_registered;        /* listed for the exit handler (exit.c; its mutex) */
    bool exit_pinned;            /* st_mu: the exit handler is stopping it; free waits */
    bool initial_end_seen;       /* streaming attempt reached the bookmark (watchdog reads it) */
    bool initial_timed_out;      /* st_mu: the watchdog gave up on the streaming attempt */
    uint64_t disconnected_since_ns;
    uint64_t sync_start_ns;
    double last_sync_s;
    kc_cancel *cancel; /* the call in flight, fired by stop */
    pthread_t thread, watchdog;
    int sync_fd;
    char start_rv[KC_STORE_RV_MAX]; /* kc__informer_watch_from: first watch's RV, no list */
    /* cache hook, called outside the informer's locks when it syncs, fails or stops (set before
     * start, never changed) */
    void (*on_state)(void *ud);
    void *on_state_ud;

    /* sharding (shard.c). `shard` is the reflector's: read and replaced only by its thread, between
     * calls (the decoders borrow it). A change waits in shard_next (st_mu) until it takes it. */
    kc_shard_selector *shard;      /* ranges in force; NULL = unsharded */
    kc_shard_selector *shard_next; /* st_mu: the pending change (NULL = unshard) */
    bool shard_change;             /* st_mu: shard_next is pending */
    bool shard_none;               /* no range at all (shard NULL): empty, synced, no requests */
    bool shard_next_none;          /* st_mu: the pending change is to no range */
    kc_informer_server_sharding server_sharding; /* st_mu */

    /* verify.c (the reflector's): why the last object was refused; the kind and apiVersion of
     * the objects ("" until the first LIST or event says) */
    kc_error item_err;
    char want_kind[128], want_api[128];

    _Atomic uint64_t relists, watch_restarts, events_applied, bookmarks, errors;
    _Atomic uint64_t events_dropped; /* handlers.c: changes lost on out of memory */
    _Atomic uint64_t last_event_ns;
};

/* handlers.c, ev_mu held: queue one store change for every registration. It reaches their queues
 * at the next kc__inf_flush (done at once when KC__PEND_MAX are pending); everything that reads
 * "what was pushed" (late registration, wait_idle, synced markers) flushes first under ev_mu.
 * push_change takes its own references; push_change_owned consumes ch's (and zeroes it). */
void kc__inf_push_change(kc_informer *inf, const kc_store_change *ch);
void kc__inf_push_change_owned(kc_informer *inf, kc_store_change *ch);
/* handlers.c, ev_mu held: push the pending changes to every registration (one lock and at most one
 * wake-up per registration) and release them. */
void kc__inf_flush(kc_informer *inf);
/* handlers.c: tell every registration the informer has synced (ev_mu held; flushes first). */
void kc__inf_push_synced(kc_informer *inf);
/* handlers.c: stop every registration and join its dispatcher (informer stopping); they stay
 * allocated until kc__inf_regs_free_all (informer freed). */
void kc__inf_regs_stop_all(kc_informer *inf);
void kc__inf_regs_free_all(kc_informer *inf);
/* handlers.c: registrations currently lagging. */
size_t kc__inf_lagging_count(kc_informer *inf);

/* reflector.c: the thread body. */
void *kc__reflector_main(void *arg);

/* informer.c: state transitions used by the reflector. set_connected(true) is a success: it
 * ends a streak of failures. */
void kc__inf_set_connected(kc_informer *inf, bool connected);
void kc__inf_mark_synced(kc_informer *inf);
void kc__inf_set_phase(kc_informer *inf, kc_informer_phase phase);
/* Sleep until the deadline or stop; returns true when stopping. */
bool kc__inf_sleep(kc_informer *inf, uint64_t ns);
/* A new cancel token installed as the current one, or NULL when stopping / out of memory. */
kc_cancel *kc__inf_new_cancel(kc_informer *inf);
void kc__inf_drop_cancel(kc_informer *inf, kc_cancel *c);
bool kc__inf_stopping(kc_informer *inf);

/* verify.c: keep e (consumed) as the reason an object was refused, for kc__inf_item_error;
 * returns rc. */
int kc__inf_keep_reason(kc_informer *inf, int rc, kc_error *e);
/* verify.c: obj into the batch; the store's reason for a refusal is kept for
 * kc__inf_item_error. */
int kc__inf_batch_add(kc_informer *inf, kc_store_batch *b, kc_obj *obj);
/* verify.c: 0, or KC_EPARSE (reason kept) when a watch event's object says another kind or
 * apiVersion than the informer's objects have. */
int kc__inf_check_event(kc_informer *inf, const kc_obj *obj);
/* transform.c: what to store for the decoded obj (borrowed): kc_informer_opts.transform's result
 * when it keeps obj's namespace, name, uid and resourceVersion, else obj. A new reference. */
kc_obj *kc__inf_transform(kc_informer *inf, kc_obj *obj);
/* verify.c: the kind of the informer's objects is list_kind minus "List" (NULL or not so named:
 * unchanged), their apiVersion api_version (NULL or "": unchanged). */
void kc__inf_expect_type(kc_informer *inf, const char *list_kind, const char *api_version);
/* verify.c: after a list or watch call that returned rc with err: when an object was refused
 * during it, err says why instead of "stopped by the … callback". */
void kc__inf_item_error(kc_informer *inf, int rc, kc_error *err);

/* watchdog.c: the streaming list's watchdog thread (fires the cancel token and sets
 * initial_timed_out when the initial-events-end bookmark does not come). A zeroed kc__watchdog is
 * not started; stop joins a started one and does nothing otherwise. */
typedef struct kc__watchdog {
    kc_informer *inf;
    pthread_t th;
    bool started;
} kc__watchdog;
void kc__watchdog_start(kc__watchdog *wd, kc_informer *inf);
void kc__watchdog_stop(kc__watchdog *wd);

/* status.c: a list or watch failed with code (detail e, may be NULL): record it as the last
 * error and wake sync waiters (they return at once on a permanent failure). Returns the number
 * of consecutive failures, this one included. */
uint64_t kc__inf_note_failure(kc_informer *inf, int code, const kc_error *e);
/* status.c: not synced, and the last failure (nothing succeeded since) is permanent. */
bool kc__inf_failed_permanently(kc_informer *inf);
/* status.c: true for failures of the initial list that retrying cannot fix while the server stays
 * as it is (404 NotFound: resource not served; 400 BadRequest; 405 MethodNotAllowed): sync waiters
 * fail fast with the code instead of timing out. The reflector keeps retrying (a CRD may appear).
 */
bool kc__inf_permanent(int code);
/* status.c: "KC_ENOTFOUND (HTTP 404 NotFound): message" for st's last error, appended to b. */
void kc__inf_error_text(const kc_informer_status *st, kc__buf *b);
/* health.c: /readyz's check lines for cache into lines; false when a required informer is not
 * ready (the webhook server's /readyz adds its own "serving" check before them). */
bool kc__health_readyz_checks(kc_cache *cache, kc__buf *lines);
/* status.c, reflector thread: a streak of failures as logged (n in a row; when last warned). */
typedef struct kc__inf_streak {
    uint64_t n, warned_ns;
} kc__inf_streak;
/* status.c, reflector thread: record a failed list or watch (the errors counter, the last error,
 * disconnected) and log it — at warning level from the third failure in a row, then at most once
 * a minute while they last, and at once for a permanent one — saying it retries in retry_ns. */
void kc__inf_record_failure(kc_informer *inf, kc__inf_streak *s, const char *what, int rc,
                            const kc_error *e, uint64_t retry_ns);
/* status.c, reflector thread: a success ended the streak (said at info level after a warning). */
void kc__inf_streak_end(kc_informer *inf, kc__inf_streak *s);

/* shard.c: the selector of field + n ranges (*ret NULL for NONE without ranges, and for a field
 * with n 0: no range at all — the caller tells the two apart by the field); KC_EINVAL with
 * err naming what (the options field or the argument), KC_ENOMEM. */
int kc__inf_shard_build(kc_shard_field field, const kc_shard_range *ranges, size_t n,
                        const char *what, kc_shard_selector **ret, kc_error *err);
/* shard.c: the selector of o's shard options (*ret NULL when unsharded); KC_EINVAL naming the
 * field, KC_ENOMEM. */
int kc__inf_shard_from_opts(const kc_informer_opts *o, kc_shard_selector **ret, kc_error *err);
/* shard.c: the identity's shard part "(shard uid:START-END,…)" appended to b; 0 or KC_ENOMEM. */
int kc__inf_shard_id(kc__buf *b, kc_shard_field none_field, const kc_shard_selector *sel);
/* shard.c, reflector thread: take a pending range change (true: the ranges changed, relist). */
bool kc__inf_shard_take(kc_informer *inf);
/* shard.c, reflector thread: the informer holds no range (kc_informer_set_shard_ranges with a
 * field and n 0): empty the store (deletes for the handlers), report synced, and wait — without
 * a request — until the ranges change or the informer stops. */
void kc__inf_shard_hold_none(kc_informer *inf, int (*install_empty)(void *ud), void *ud);
/* shard.c: a range change is pending (st_mu taken; kc__inf_new_cancel uses the _locked form). */
bool kc__inf_shard_pending(kc_informer *inf);
/* shard.c, reflector thread: a complete LIST answered; echo says how its pages echoed the
 * selector. Sets server_sharding (S13.1) and logs a change. */
void kc__inf_shard_note_list(kc_informer *inf, const kc__list_echo *echo);
/* shard.c, reflector thread: before a streaming list of a sharded informer whose server support
 * is unknown, probe with LIST limit=1 carrying the selector (S13.3). */
void kc__inf_shard_probe(kc_informer *inf);

/* exit.c: list a started informer for the exit handler / drop it (stop, free). */
void kc__inf_exit_register(kc_informer *inf);
void kc__inf_exit_unregister(kc_informer *inf);

/* limits.c: one full list's items counted against kc_informer_opts.max_list_items and
 * max_list_bytes on their way into its batch (issue 29 points 4 and 7). */
typedef struct kc__list_limits {
    kc_informer *inf;
    kc_store_batch *batch; /* borrowed: where the items go */
    uint64_t items, bytes; /* so far (bytes: kc_obj_heap_size) */
    int rc;                /* KC_ETOOLARGE once a limit was passed; else 0 */
    kc_error err;          /* its message */
} kc__list_limits;
/* Start counting a list whose items go into b. */
void kc__list_limits_init(kc__list_limits *l, kc_informer *inf, kc_store_batch *b);
/* Count obj (borrowed) and add it to the batch: 0, KC_ETOOLARGE past a limit (obj not added; the
 * message kept for kc__list_limits_result), or kc_store_batch_add's code. */
int kc__list_limits_add(kc__list_limits *l, kc_obj *obj);
/* The list call returned rc: when a limit stopped it, its message goes into err (which the
 * decoder filled with "stopped by the callback"). Releases what l holds; returns rc. */
int kc__list_limits_result(kc__list_limits *l, int rc, kc_error *err);
/* The pages bound of a paged list (kc_list_opts.max_pages from max_list_pages). */
void kc__list_limits_opts(const kc_informer *inf, kc_list_opts *lo);

/* informer.c, for benchmarks only: before kc_informer_start, make the reflector skip the initial
 * list and watch from rv (the informer never reports synced unless a relist happens). Lets
 * bench_informer measure the informer's watch path on a replayed history. 0, KC_EBUSY (started),
 * KC_EINVAL (rv empty or too long). */
int kc__informer_watch_from(kc_informer *inf, const char *rv);

/* cache.c: the informer kc_cache_get_informer would return for gvr and opts (may be NULL), if the
 * cache already has it; nothing is created or started (kc_cached_client_opts
 * .fail_on_missing_informer). *ret_inf borrowed. 0; KC_ENOTFOUND (none); KC_ESTOPPED; KC_EINVAL
 * (bad gvr or options). Thread-safe. */
int kc__cache_find_informer(kc_cache *c, const kc_gvr *gvr, const kc_informer_opts *opts,
                            kc_informer **ret_inf);

#endif
