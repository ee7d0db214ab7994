/*
 * cached/internal.h — internals of kc_cached_client shared by the files of src/cached/.
 *
 *   client.c  struct, new/free, options, type → informer store resolution, stats, and the wait
 *             primitive: store condition + timeout → KC_ENOT_CAUGHT_UP/ESTOPPED
 *   ryw.c     block-on-read bookkeeping: own writes per key, max RV per type, pending deletes by
 *             UID; pruned once observed
 *   write.c   the write verbs and their block-on-write waits
 *   read.c    get / list / list by index, cached or live, with block-on-read waits
 *
 * Locking: the cached client has one mutex (the block-on-read table); it is never held while a
 * store or kc_cache function runs, nor while waiting. Store waits block on the store's own per-
 * waiter condition variables (kcache/store.h).
 */
#ifndef KC_CACHED_INTERNAL_H
#define KC_CACHED_INTERNAL_H

#include "core/htab.h"
#include "core/internal.h"
#include "kcache/cached_client.h"
#include "kcache/fence.h"
#include "kcache/store.h"

#include <stdatomic.h>
#include <string.h>

/* ---- block-on-read bookkeeping (ryw.c) ------------------------------------------------------- */

typedef struct kc__ryw_entry kc__ryw_entry;

/* One remembered write, copied out of the table for a wait (strings owned). */
typedef struct kc__ryw_want {
    char *ns, *name;
    char *rv;           /* write: the returned RV; pending delete: an RV the deleted object had
                           (or its deletion RV), NULL when none is known */
    char *uid;          /* write: the written object's UID (NULL: unknown) */
    char *delete_uid;   /* pending delete: the UID that must not be returned ("" = unknown: any
                           object at the key), else NULL */
    uint64_t after_seq; /* store seq before the write was sent */
    uint64_t gen;       /* entry generation, to drop exactly this entry once observed */
} kc__ryw_want;

/* The table: per type key "group/version/resource" → per-object entries + max comparable RV. */
typedef struct kc__ryw {
    kc__htab map;    /* kc__ryw_entry by (type, ns, name); map.n = the entries */
    size_t sweep_at; /* sweep observed entries when map.n reaches this */
    uint64_t next_gen;
} kc__ryw;

void kc__ryw_init(kc__ryw *t);
void kc__ryw_destroy(kc__ryw *t);
void kc__ryw_want_clear(kc__ryw_want *w);

/* Record a successful write of (type, ns, name) at rv of the object uid (NULL: unknown) with the
 * pre-send seq. Replaces the key's entry; a pending delete of a known UID is kept instead,
 * superseded, until forgotten by its generation (ryw.c). Caller holds the client lock.
 * 0 or KC_ENOMEM. */
int kc__ryw_note_write(kc__ryw *t, const char *type, const char *ns, const char *name,
                       const char *rv, const char *uid, uint64_t after_seq);
/* Register a pending delete of uid ("" = unknown) at (type, ns, name), before the request is sent;
 * rv (NULL: none) is an RV the object had, or its deletion RV. It becomes the key's entry (an
 * earlier pending delete of a known UID stays, superseded). *ret_gen identifies it for
 * kc__ryw_forget. 0 or KC_ENOMEM. Caller holds the lock. */
int kc__ryw_note_delete(kc__ryw *t, const char *type, const char *ns, const char *name,
                        const char *uid, const char *rv, uint64_t after_seq, uint64_t *ret_gen);
/* Refine the pending delete gen of the key (nothing when a newer entry replaced it): uid (non-NULL,
 * non-empty, different) replaces its UID and its RV by rv — the DELETE response named the object it
 * deleted; otherwise rv fills an unknown RV — e.g. a read saw the deleted UID at rv: the entry then
 * completes once the watermark passes rv with the UID gone, even if the DELETED event's tombstone
 * is lost. Caller holds the lock. */
void kc__ryw_refine(kc__ryw *t, const char *type, const char *ns, const char *name, uint64_t gen,
                    const char *uid, const char *rv);
/* Drop the key's entry of generation gen, current or superseded (gen 0: the current one). Caller
 * holds the lock. */
void kc__ryw_forget(kc__ryw *t, const char *type, const char *ns, const char *name, uint64_t gen);
/* Copy the current entry of one key into *ret (1), or 0 when none / KC_ENOMEM. Caller holds the
 * lock. */
int kc__ryw_lookup(kc__ryw *t, const char *type, const char *ns, const char *name,
                   kc__ryw_want *ret);
/* Copy every entry, superseded ones included, of a type (ns NULL/"" = all namespaces), or of one
 * key when name is not NULL, into a new array *ret (caller frees each with kc__ryw_want_clear and
 * the array with free). Returns the count or KC_ENOMEM. */
int kc__ryw_collect(kc__ryw *t, const char *type, const char *ns, const char *name,
                    kc__ryw_want **ret);
/* The store condition that means w has been observed (strings borrowed from w). */
kc_store_cond kc__ryw_want_cond(const kc__ryw_want *w);

/*
 * The condition "the store has observed a write of ns/name at rv" (strings borrowed): the store's
 * KC_STORE_WAIT_WRITTEN (kcache/store.h).
 *   - comparable rv: watermark >= rv, with the key agreeing. Watch events arrive in RV order, so
 *     once the store has applied anything at or past rv it holds our write or a later state of the
 *     key — including its absence when someone deleted it before we saw it, even across a relist
 *     (which leaves no tombstone for a key the store never held, so a per-key condition would wait
 *     forever). The key check catches the one case where the watermark lies: the server's RVs
 *     went back and the informer has not relisted yet.
 *   - otherwise, or across an RV regression: that exact RV, or any event on the key after
 *     after_seq.
 */
kc_store_cond kc__cc_written_cond(const char *ns, const char *name, const char *rv,
                                  uint64_t after_seq);
/*
 * The condition "the store has observed the deletion of uid at ns/name" (strings borrowed; rv NULL
 * when unknown): the store's KC_STORE_WAIT_DELETED — the DELETED event of uid (its tombstone), a
 * state without uid after the store held it during the wait, or (rv comparable: an RV the object
 * had, or its deletion RV) the watermark at rv with uid gone. Used by block-on-write deletes and
 * by block-on-read pending deletes alike.
 */
kc_store_cond kc__cc_deleted_cond(const char *ns, const char *name, const char *uid, const char *rv,
                                  uint64_t after_seq);
/* true when the table has grown enough that the caller should sweep. */
bool kc__ryw_should_sweep(const kc__ryw *t);
/* After a sweep: next sweep when the table doubles (at least 1024 entries). */
void kc__ryw_swept(kc__ryw *t);

/* ---- the client ------------------------------------------------------------------------------ */

typedef struct kc__cc_gvr {
    char *group, *version, *resource;
} kc__cc_gvr;

/* A resolved (type, namespace) → informer, published once and never changed: readers scan the
 * array without a lock up to the count they load (acquire); writers append under the lock. */
#define KC__CC_TYPES_MAX 64
typedef struct kc__cc_type {
    char *group, *version, *resource, *ns; /* ns "" = all namespaces / cluster-scoped */
    kc_informer *inf;                      /* borrowed from the cache */
    kc_store *store;
    atomic_bool synced; /* latched: an informer's has_synced never goes back */
} kc__cc_type;

struct kc_cached_client {
    kc_client *client; /* borrowed */
    kc_cache *cache;   /* borrowed */
    kc_ryw_mode mode;
    int64_t timeout_ms;
    char *ns;
    char *field_manager;
    kc__cc_gvr *uncached;
    size_t n_uncached;

    pthread_mutex_t lock; /* ryw table; appends to types */
    kc__ryw ryw;
    kc__cc_type types[KC__CC_TYPES_MAX];
    _Atomic size_t n_types;
    _Atomic size_t last_type;  /* index of the last type_find hit: a hint, any value is safe */
    _Atomic size_t n_ns_bound; /* entries of one namespace bound in a client of all namespaces */

    _Atomic uint64_t n_waits, n_waits_immediate, n_wait_timeouts, n_informers_started;
    const kc_fence *_Atomic fence; /* borrowed; NULL = writes are not fenced */
    bool fail_on_missing;          /* opts.fail_on_missing_informer */
};

/* Inline equality of two short strings (version, group, namespace: a few bytes each). */
static inline bool kc__cc_same(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

/* Direct compares, resource first (it differs first; libc's vector strcmp for the longest one):
 * cheaper than hashing the four strings on every read, for the handful of types a client uses. */
static inline bool kc__cc_type_is(const kc__cc_type *t, const kc_gvr *gvr, const char *ns)
{
    return !strcmp(t->resource, gvr->resource) && kc__cc_same(t->version, gvr->version) &&
           kc__cc_same(t->group, gvr->group ? gvr->group : "") && kc__cc_same(t->ns, ns);
}

/* Lock-free lookup of a published (gvr, ns) entry, starting with the one the last lookup found (a
 * client that alternates a few types mostly hits on the first compare). The hint is only a start
 * index: a stale value costs a scan, never a wrong answer. Inline: it is on every cached read. */
static inline kc__cc_type *kc__cc_type_find(kc_cached_client *cc, const kc_gvr *gvr, const char *ns)
{
    size_t n = atomic_load_explicit(&cc->n_types, memory_order_acquire);
    size_t h = atomic_load_explicit(&cc->last_type, memory_order_relaxed);
    if (h < n && kc__cc_type_is(&cc->types[h], gvr, ns))
        return &cc->types[h];
    for (size_t i = 0; i < n; i++)
        if (i != h && kc__cc_type_is(&cc->types[i], gvr, ns)) {
            atomic_store_explicit(&cc->last_type, i, memory_order_relaxed);
            return &cc->types[i];
        }
    return NULL;
}

/* Serve the reads (and write waits) of gvr in ns from inf (borrowed: an informer of cc's cache,
 * which outlives cc) instead of an informer obtained on first use: a controller's own informers,
 * with their selectors and shard ranges. ns NULL or "": the informer watches all namespaces. In a
 * client of all namespaces an informer of one namespace serves calls naming that namespace only.
 * 0; KC_EEXISTS (the type already has an informer here: it is kept); KC_EINVAL (ns outside the
 * client's namespace, or an all-namespace informer for a client of one: not bound); KC_ENOMEM or
 * KC_ETOOLARGE (table full: not bound). Thread-safe. */
int kc__cached_client_bind(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                           kc_informer *inf);

/* true when ns is a namespace this client has no cache of (opts.ns set and ns another one): writes
 * there are sent without waiting, cached reads there are KC_EINVAL. */
static inline bool kc__cc_foreign_ns(const kc_cached_client *cc, const char *ns)
{
    return cc->ns && ns && *ns && strcmp(ns, cc->ns) != 0;
}

/* Effective timeout of a call (ms, < 0 = unbounded) and whether to wait at all. */
int64_t kc__cc_timeout(const kc_cached_client *cc, const kc_cached_call_opts *call);
bool kc__cc_wait_enabled(const kc_cached_client *cc, const kc_cached_call_opts *call);
/* true when gvr is marked uncached. */
bool kc__cc_uncached(const kc_cached_client *cc, const kc_gvr *gvr);
/* "group/version/resource" into buf (cap bytes). KC_EINVAL on a bad gvr or overflow. */
int kc__cc_type_key(const kc_gvr *gvr, char *buf, size_t cap, kc_error *err);

/*
 * The store of gvr's informer for namespace ns, starting the informer on first use and waiting
 * for its sync until the call's deadline. wait_sync false: return the store at once even when not
 * synced (writes: the wait that follows covers the sync). *deadline_ns is the call's deadline,
 * computed lazily (0 = not yet; see kc__cc_deadline_lazy) so the hot read path never reads the
 * clock. *ret_store is borrowed: valid until the cache is freed. Errors: KC_EINVAL (namespace
 * outside the client's), KC_ETIMEOUT, KC_ESTOPPED, cache errors; KC_ENOTFOUND with
 * cc->fail_on_missing when the cache has no informer for the type (none is started).
 */
int kc__cc_store(kc_cached_client *cc, const kc_gvr *gvr, const char *ns, bool wait_sync,
                 const kc_cached_call_opts *call, uint64_t *deadline_ns, kc_store **ret_store,
                 kc_error *err);

/* *slot, computing it from the call's timeout first when it is still 0. */
uint64_t kc__cc_deadline_lazy(const kc_cached_client *cc, const kc_cached_call_opts *call,
                              uint64_t *slot);

/* Wait for c on s until deadline_ns (KC__DEADLINE_NEVER = unbounded). Returns 0, KC_ENOT_CAUGHT_UP
 * (timeout; err says what was awaited), KC_ESTOPPED or KC_EINVAL. Counts stats. */
int kc__cc_wait(kc_cached_client *cc, kc_store *s, const kc_store_cond *c, uint64_t deadline_ns,
                kc_error *err);

/* Deadline of a call: now + timeout (never when unbounded). */
uint64_t kc__cc_deadline(const kc_cached_client *cc, const kc_cached_call_opts *call);

/* ---- create-or-update / create-or-patch (create_or_update.c, create_or_patch.c) ------------- */

/* One create-or-update / create-or-patch call: its arguments and retry state. */
typedef struct kc__mutate_run {
    kc_cached_client *cc;
    const kc_gvr *gvr;
    const char *kind, *ns, *name;
    kc_mutate_fn mutate;
    void *ud;
    const kc_cached_call_opts *call; /* the caller's (a full-size copy) */
    int max_retries;                 /* after the first attempt */
    uint64_t delay_ns;               /* before the next retry */
    unsigned factor_pct;
    kc__rng rng;
} kc__mutate_run;

/* Check the arguments, apply the defaults of o (a full-size copy). KC_EINVAL naming what is
 * missing. */
int kc__mutate_init(kc__mutate_run *m, kc_cached_client *cc, const kc_gvr *gvr, const char *kind,
                    const char *ns, const char *name, kc_mutate_fn mutate, void *ud,
                    const kc_mutate_opts *o, const kc_cached_call_opts *call, kc_error *err);
/* Sleep before retry number attempt (>= 1): the delay with 10% jitter, then grow it. */
void kc__mutate_backoff(kc__mutate_run *m);
/* The current object: from the cache (live false: read-your-writes) or the server. *ret NULL and 0
 * when it does not exist. */
int kc__mutate_read(kc__mutate_run *m, bool live, kc_obj **ret, kc_error *err);
/* The document before (a copy of existing, or the skeleton when existing is NULL) and after mutate.
 * Both new — caller frees. Errors: mutate's code, KC_EINVAL (name or namespace changed), kc_doc
 * errors. */
int kc__mutate_apply(kc__mutate_run *m, const kc_obj *existing, kc_doc **ret_before,
                     kc_doc **ret_after, kc_error *err);
/* Create doc through the cached client (read-your-writes). */
int kc__mutate_create(kc__mutate_run *m, const kc_doc *doc, kc_obj **ret_obj, kc_error *err);
/* The JSON text of doc with /metadata/resourceVersion set to rv (doc is changed). */
int kc__mutate_json_at_rv(kc_doc *doc, const char *rv, char **ret, size_t *ret_len, kc_error *err);
/* A write succeeded (0, or its wait did not finish: KC_ENOT_CAUGHT_UP, KC_ESTOPPED). */
static inline bool kc__write_done(int rc)
{
    return rc == 0 || rc == KC_ENOT_CAUGHT_UP || rc == KC_ESTOPPED;
}

#endif
