/*
 * kcache/store.h — kc_store: the thread-safe, indexed object store behind an informer, with a
 * monotonic resourceVersion watermark and event-driven waiters (the primitive read-your-writes is
 * built on).
 *
 * Contents: a map "namespace/name" (cluster-scoped objects: "name") → immutable kc_obj references.
 * Reads never copy: kc_store_get returns a new reference to the stored object. A built-in index by
 * namespace and user indexers (obj → zero or more values) answer list-by-index without scanning.
 *
 * Writes: the informer's reflector is the one writer (kc_store_apply, kc_store_bookmark, and
 * kc_store_replace for relists). Mutations must be serialised by the caller (one writer thread at a
 * time); reads and waits may run on any number of threads concurrently with the writer.
 * A relist is built off to the side in a kc_store_batch and swapped in atomically: readers see the
 * old set or the new set, never a half-built one.
 *
 * Watermark: the highest resourceVersion the store has applied (KEP-5504 comparison, kcache/rv.h).
 * Advanced by applied events, list RVs (replace) and bookmarks. An RV that is not comparable never
 * moves it, but still counts as "an event happened" (the store sequence grows). It moves back only
 * when a replace brings a list RV below it: the server's resourceVersions went back (restored from
 * a backup, restarted with an RV reset), and the watermark follows the server's new timeline (it is
 * reset to the list RV) instead of staying at a value the new RVs may not reach for a long time.
 * Conditions of the RYW kinds (KC_STORE_WAIT_WRITTEN, KC_STORE_WAIT_DELETED) whose after_seq
 * predates such a regression no longer trust RV comparisons and fall back to evidence on the key.
 *
 * Sequence: every applied event, every key touched by a replace, and every replace itself gets a
 * store-wide sequence number, recorded per key (deleted keys keep a bounded tombstone record: the
 * sequence, the delete RV and the UID of the deleted object). kc_store_key_seq() gives a number
 * such that every later event on that key gets a larger one: read it before sending a write, then
 * wait with after_seq.
 *
 * Locking: one mutex per store, held only for the map/index operation itself; never held while user
 * code (indexers excepted — they run while a batch or an apply is built, so they must be pure and
 * fast) or handlers run. kc_store_get / kc_store_get_key take no lock at all (a seqlock-validated
 * probe; memory the writer replaces is freed only after the readers that could see it have left —
 * docs/informer.md, "Lock-free Get"), so they never wait for a writer. Waiters block on their own
 * futex word and are woken only by events on their key (hashed wait lists) or by watermark moves,
 * after the writer has released the lock.
 *
 * Threads: reads, waits, kc_store_seq/key_seq/watermark and kc_store_stop are thread-safe; the
 * writes (kc_store_add_indexer, kc_store_apply, kc_store_bookmark, kc_store_replace) and a batch's
 * calls are not: one writer thread at a time; kc_store_free must not race with any call.
 */
#ifndef KCACHE_STORE_H
#define KCACHE_STORE_H

#include "decode.h"
#include "obj.h"

KC_BEGIN_DECLS

typedef struct kc_store kc_store;
typedef struct kc_store_batch kc_store_batch;

/* Longest resourceVersion the watermark keeps (longer ones are treated as not comparable). */
#define KC_STORE_RV_MAX 64
/* Maximum number of user indexers per store. */
#define KC_STORE_MAX_INDEXERS 8
/* Maximum values one indexer may return for one object. */
#define KC_STORE_MAX_INDEX_VALUES 32

/*
 * An indexer: writes up to max values for obj into ret_values (each a pointer borrowed from obj or
 * a static string, valid while obj lives) and returns how many (0 = not indexed). Must be pure,
 * fast and thread-safe: it runs on the writer's thread, possibly under the store lock.
 */
typedef size_t (*kc_store_indexer_fn)(void *ud, const kc_obj *obj, const char **ret_values,
                                      size_t max);

/* Store options. Zero-initialised (or NULL) means the defaults. */
typedef struct kc_store_opts {
    size_t max_tombstones; /* deleted-key records kept for "any later event" waits; 0 = 65536 */
} kc_store_opts;

/* New empty store. opts may be NULL (copied). Errors: KC_EINVAL (ret NULL), KC_EUNSUPPORTED (opts
 * of a newer header setting a field this library lacks), KC_ENOMEM. *ret is new — caller frees
 * with kc_store_free. Thread-safe. Since 0.1. */
KC_API int(kc_store_new)(const kc_store_opts *opts, size_t opts_size, kc_store **ret,
                         kc_error *err);
#define kc_store_new(opts, ret, err) (kc_store_new)((opts), sizeof(kc_store_opts), (ret), (err))

/* Stop: every current and future kc_store_wait returns KC_ESTOPPED. Reads keep working.
 * Idempotent. s is borrowed for the call. Thread-safe. Never fails. Since 0.1. */
KC_API void kc_store_stop(kc_store *s);

/* Free the store (consumed) and drop its references. No call may be in flight (stop first if
 * threads may be waiting): not thread-safe. Accepts NULL. Never fails. Since 0.1. */
KC_API void kc_store_free(kc_store *s);

/*
 * Register a user indexer under name (copied). Must be called before the first object is added
 * (KC_EBUSY otherwise). Errors: KC_EINVAL (name NULL/empty/duplicate/"namespace"), KC_ETOOLARGE
 * (more than KC_STORE_MAX_INDEXERS), KC_ENOMEM. fn and ud are kept for the store's life (ud
 * borrowed: must outlive the store). Not thread-safe with writes (Threads: see the header).
 * Since 0.1.
 */
KC_API int kc_store_add_indexer(kc_store *s, const char *name, kc_store_indexer_fn fn, void *ud,
                                kc_error *err);

/* ---- reads (thread-safe) -------------------------------------------------------------------- */

/* The object at ns/name (ns NULL or "" for cluster-scoped), or NULL. New reference — caller
 * unrefs. Lock-free (falls back to the lock only when writes keep interfering); linearizable with
 * the writer's operations. Cost: one hash, one slot read, the entry's key words, the object's
 * reference count. ns and name are borrowed for the call. Thread-safe. Never fails (NULL also
 * for a NULL store). Since 0.1. */
KC_API kc_obj *kc_store_get(kc_store *s, const char *ns, const char *name);

/* The same by key "ns/name" (or "name", borrowed for the call). New reference — caller unrefs;
 * NULL when absent. Thread-safe. Never fails. Since 0.1. */
KC_API kc_obj *kc_store_get_key(kc_store *s, const char *key);

/* Number of objects (0 for NULL). No ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API size_t kc_store_len(kc_store *s);

/* Name of the built-in index every store keeps: objects by namespace (kc_store_list_by_namespace,
 * and kc_store_list_by_index with this name). */
#define KC_STORE_INDEX_NAMESPACE "namespace"

/* A snapshot of references. *ret_objs is a new malloc'd array of *ret_n new references — caller
 * releases it with kc_obj_array_free(). An empty result gives *ret_objs = NULL, *ret_n = 0.
 * Errors (err, may be NULL, says which): KC_EINVAL (a NULL argument), KC_ENOMEM;
 * kc_store_list_by_index also KC_ENOTFOUND (no such index). Thread-safe. Since 0.1. */
KC_API int kc_store_list(kc_store *s, kc_obj ***ret_objs, size_t *ret_n, kc_error *err);
/* Objects of one namespace (ns NULL or "": cluster-scoped ones; borrowed for the call), through
 * the built-in index. *ret_objs: a new array of new references — caller frees with
 * kc_obj_array_free(). Errors: KC_EINVAL, KC_ENOMEM. Thread-safe. Since 0.1. */
KC_API int kc_store_list_by_namespace(kc_store *s, const char *ns, kc_obj ***ret_objs,
                                      size_t *ret_n, kc_error *err);
/* Objects whose indexer `index` returned value (both borrowed for the call). *ret_objs: a new
 * array of new references — caller frees with kc_obj_array_free(). Errors: KC_EINVAL, KC_ENOMEM,
 * KC_ENOTFOUND (no such index). Thread-safe. Since 0.1. */
KC_API int kc_store_list_by_index(kc_store *s, const char *index, const char *value,
                                  kc_obj ***ret_objs, size_t *ret_n, kc_error *err);

/* Copy the watermark into buf (NUL-terminated; "" before anything comparable was applied).
 * Returns its length; buf is the caller's (copied into). Errors: KC_ETOOLARGE when cap is too
 * small (buf untouched), KC_EINVAL (s or buf NULL). Thread-safe. Since 0.1. */
KC_API int kc_store_watermark(kc_store *s, char *buf, size_t cap);

/* Store-wide event sequence (grows with every applied event, relisted key and replace); 0 for
 * NULL. No ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API uint64_t kc_store_seq(kc_store *s);

/* A sequence number for "events after now" on ns/name: every event applied to that key later gets
 * a larger one. Use as kc_store_cond.after_seq. ns and name are borrowed for the call.
 * Thread-safe. Never fails (0 for a NULL store). Since 0.1. */
KC_API uint64_t kc_store_key_seq(kc_store *s, const char *ns, const char *name);

/* ---- waiters (thread-safe) ------------------------------------------------------------------ */

typedef enum kc_store_wait_kind {
    /* Key present with RV >= rv (KEP-5504 compare), or deleted by an event whose RV >= rv.
     * If rv is not comparable: the key's RV == rv exactly, OR any event on the key after
     * after_seq (a delete counts). */
    KC_STORE_WAIT_KEY_RV = 1,
    /* Key absent, or present with a uid != uid (uid NULL or "": absent only). A state, not an
     * observation: it also holds before the store has seen the object at all — to know that a
     * deletion has been observed, use KC_STORE_WAIT_DELETED. */
    KC_STORE_WAIT_KEY_GONE = 2,
    /* Store watermark >= rv. If rv is not comparable: watermark == rv exactly, or any event
     * anywhere after after_seq. */
    KC_STORE_WAIT_WATERMARK = 3,
    /*
     * The store has observed a write of ns/name that returned rv, sent after after_seq: it holds
     * that write or a later state of the key. rv comparable: watermark >= rv, and the key's state
     * agrees — present at an RV >= rv, deleted at an RV >= rv, or absent after a replace (or a
     * tombstone overflow) since after_seq (someone deleted it before the store saw it). A key
     * still holding an older RV, or absent with no replace since, is "not yet" even when the
     * watermark has passed rv (that only happens when the server's RVs went back). rv not
     * comparable, or a regression since after_seq: the key's RV == rv exactly, or any event on
     * the key after after_seq (a delete counts), or (comparable) the rule above on the new
     * timeline.
     */
    KC_STORE_WAIT_WRITTEN = 4,
    /*
     * The store has observed the deletion of the object uid at ns/name: the key does not hold uid,
     * and the store has seen it go — the key's tombstone records the deletion of uid (its DELETED
     * event, or uid vanished across a replace); or the key held uid during this wait; or rv is
     * comparable (an RV the object had, or its deletion RV), no regression since after_seq, and
     * the watermark >= rv. "Key absent" alone proves nothing: the store may not have seen the
     * object yet. uid NULL or "" (unknown): the key is absent (and, rv comparable, watermark >=
     * rv).
     */
    KC_STORE_WAIT_DELETED = 5,
} kc_store_wait_kind;

/* A condition. Strings are borrowed for the call. */
typedef struct kc_store_cond {
    kc_store_wait_kind kind;
    const char *ns, *name; /* KEY_* kinds; ns NULL or "" for cluster-scoped */
    const char *rv;        /* KEY_RV, WATERMARK, WRITTEN; DELETED (optional) */
    const char *uid;       /* KEY_GONE, DELETED */
    uint64_t after_seq;    /* from kc_store_key_seq / kc_store_seq, for "any later event" */
} kc_store_cond;

/* Non-blocking: 1 when c holds now, 0 when not, KC_EINVAL for a malformed condition (err, may be
 * NULL, says what is wrong with it). c is borrowed for the call. Errors: KC_EINVAL.
 * Thread-safe. Since 0.1. */
KC_API int(kc_store_check)(kc_store *s, const kc_store_cond *c, size_t c_size, kc_error *err);
#define kc_store_check(s, c, err) (kc_store_check)((s), (c), sizeof(kc_store_cond), (err))

/*
 * Block until c holds, the timeout passes, or the store stops. timeout_ms < 0 waits forever;
 * 0 only checks. Woken by the events that can satisfy c (no polling). Never holds the store lock
 * while returning to the caller. Returns 0, KC_ETIMEOUT, KC_ESTOPPED or KC_EINVAL (a malformed
 * condition); err (may be NULL) says which. c is borrowed for the call (copied before blocking).
 * Errors: KC_ETIMEOUT, KC_ESTOPPED, KC_EINVAL. Thread-safe. Since 0.1.
 */
KC_API int(kc_store_wait)(kc_store *s, const kc_store_cond *c, size_t c_size, int64_t timeout_ms,
                          kc_error *err);
#define kc_store_wait(s, c, timeout_ms, err)                                                       \
    (kc_store_wait)((s), (c), sizeof(kc_store_cond), (timeout_ms), (err))

/* ---- writes (one writer at a time; the informer's reflector) -------------------------------- */

/* What a write did, for handler notification. Every obj pointer is a new reference — release with
 * kc_store_change_clear(). */
typedef enum kc_store_change_kind {
    KC_STORE_CHANGE_NONE = 0,    /* nothing changed (e.g. delete of an absent key) */
    KC_STORE_CHANGE_ADDED = 1,   /* new_obj added */
    KC_STORE_CHANGE_UPDATED = 2, /* old_obj replaced by new_obj */
    KC_STORE_CHANGE_DELETED =
        3, /* old_obj removed (new_obj = the final state from the event, or NULL) */
} kc_store_change_kind;

typedef struct kc_store_change {
    kc_store_change_kind kind;
    kc_obj *old_obj, *new_obj;
    bool tombstone; /* delete whose final state is unknown (vanished across a relist) */
} kc_store_change;

/* Drop the references of ch (consumed) and zero it. Accepts NULL. Thread-safe for distinct chs.
 * Never fails. Since 0.1. */
KC_API void kc_store_change_clear(kc_store_change *ch);

/*
 * Apply one watch event: KC_WATCH_ADDED/MODIFIED insert or replace obj (borrowed: the store takes
 * its own reference), KC_WATCH_DELETED removes the key. Advances the watermark with obj's RV and
 * wakes the waiters of that key. ret_change (may be NULL) reports what changed. Errors: KC_EINVAL
 * (other types, obj without a name), KC_ENOMEM. ret_change's objects are new references — caller
 * releases them with kc_store_change_clear(). Not thread-safe: one writer at a time.
 * Since 0.1.
 */
KC_API int kc_store_apply(kc_store *s, kc_watch_type type, kc_obj *obj, kc_store_change *ret_change,
                          kc_error *err);

/* Advance the watermark to rv (a bookmark; copied). No-op when rv is not comparable or not newer.
 * Not thread-safe: one writer at a time. Never fails. Since 0.1. */
KC_API void kc_store_bookmark(kc_store *s, const char *rv);

/* A set of objects built off to the side for kc_store_replace. Not thread-safe (one builder).
 * Errors: KC_EINVAL (s or ret NULL), KC_ENOMEM. *ret is new — consumed by kc_store_replace or
 * caller frees with kc_store_batch_free. Since 0.1. */
KC_API int kc_store_batch_new(kc_store *s, kc_store_batch **ret, kc_error *err);
/* Add obj (borrowed: the batch takes its own reference; a later object with the same key replaces
 * an earlier one). Errors: KC_EINVAL (no name), KC_ENOMEM (also when an earlier placement by
 * kc_store_batch_len ran out of memory: the batch can then only be freed). Not thread-safe (the
 * builder thread only). Since 0.1. */
KC_API int kc_store_batch_add(kc_store_batch *b, kc_obj *obj, kc_error *err);
/* The number of distinct keys added so far (0 for NULL). The builder thread only, like the other
 * batch calls; not constant-time: it places the objects added since the last call in the batch's
 * map, as the replace would. No error result: when placing runs out of memory the objects not
 * placed are not counted, and the batch is then refused by kc_store_batch_add and
 * kc_store_replace (KC_ENOMEM). Never fails. No ownership transfer. Not thread-safe. Since 0.1. */
KC_API size_t kc_store_batch_len(const kc_store_batch *b);
/* Free a batch that was not replaced (consumed, with its references). Accepts NULL.
 * Not thread-safe (the builder thread only). Never fails. Since 0.1. */
KC_API void kc_store_batch_free(kc_store_batch *b);

/* Called by kc_store_replace for each change, after the swap, outside the store lock, in this
 * order: adds/updates (in the order the batch's objects were added), then deletes (tombstone =
 * true). ch is borrowed for the call (take references to keep objects). Return 0 to go on,
 * non-zero to stop notifying. */
typedef int (*kc_store_change_cb)(void *ud, const kc_store_change *ch);

/*
 * Replace the whole contents with batch b (consumed, even on failure) atomically, and advance the
 * watermark to list_rv (may be NULL or not comparable: then only the items' RVs count). A
 * comparable list_rv below the watermark means the server's RVs went back: the watermark is reset
 * to list_rv (or the highest item RV above it) — see "Watermark" above. Objects whose RV did not
 * change produce no change; vanished keys produce tombstone deletes. Wakes every waiter. on_change
 * may be NULL; list_rv is borrowed for the call. Errors: KC_EINVAL (s or b NULL), KC_ENOMEM. Not
 * thread-safe: one writer at a time (reads and waits run meanwhile). Since 0.1.
 */
KC_API int kc_store_replace(kc_store *s, kc_store_batch *b, const char *list_rv,
                            kc_store_change_cb on_change, void *ud, kc_error *err);

KC_END_DECLS

#endif
