/*
 * store/internal.h — the store's data structures, shared by table.c (hash table and
 * indexes), store.c (public reads/writes, relist swap) and wait.c (waiters).
 *
 * A kc__stab ("store table") is one complete generation of contents: a hash map key → entry plus
 * one index map per indexer (index 0 = namespace). The live store points at one kc__stab; a batch
 * is another kc__stab built off to the side and swapped in by kc_store_replace. Deleted keys leave
 * a small record in kc_store.tombs (key, sequence, delete RV, deleted UID) so that waiters can ask
 * "any event on this key after seq" and "was uid deleted here"; that table is bounded (cleared when
 * full, raising tomb_floor: an absent key without a record may have had an event at any seq <
 * tomb_floor).
 */
#ifndef KC_STORE_INTERNAL_H
#define KC_STORE_INTERNAL_H

#include "core/htab.h"
#include "core/internal.h"
#include "kcache/store.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

/* Deferred frees (store.c): memory a lock-free reader may still be reading is handed to the
 * retirer (core/htab.h) instead of being freed; it is released after a grace period
 * (docs/informer.md, "Lock-free Get"). kind: KC__RETIRE_MEM (free), KC__RETIRE_OBJ (kc_obj_unref),
 * KC__RETIRE_STAB (whole table), KC__RETIRE_ENT (kc__ent_free). The hash table itself (kc__htab,
 * kc__hash) is core's.
 */
enum { KC__RETIRE_OBJ = 1, KC__RETIRE_STAB = 2, KC__RETIRE_ENT = 3 };

struct kc__bucket;
typedef struct kc__ixref {
    struct kc__bucket *b;
    uint32_t ix; /* which index map b lives in */
    size_t pos;
} kc__ixref;

enum { KC__ENT_CHANGED = 1, KC__ENT_VANISHED = 2 };

/* One live object. */
typedef struct kc__ent {
    kc__hent h;
    kc_obj *obj; /* one reference owned by the entry */
    uint64_t seq;
    unsigned flags : 31; /* relist bookkeeping (writer only) */
    unsigned arena : 1;  /* allocated from the object arena (core/slab.h), else malloc'd */
    uint32_t nrefs;
    kc__ixref *refs;
    kc__ixref inl[2];
    /* h.key: NUL-terminated and zero-padded to a whole number of 8-byte words (KC__KEY_WORDS), so
     * a Get compares whole aligned words, the terminator included (no length field, no libc call).
     */
    _Alignas(8) char keybuf[];
} kc__ent;

/* 8-byte words holding a key of klen bytes plus its NUL (the padded size of kc__ent.keybuf). */
#define KC__KEY_WORDS(klen) (((klen) + 8) / 8)

/* One index value → the entries that have it. */
typedef struct kc__bucket {
    kc__hent h;
    kc__ent **items;
    size_t n, cap;
    char keybuf[];
} kc__bucket;

typedef struct kc__tomb {
    kc__hent h;
    uint64_t seq;
    char rv[KC_STORE_RV_MAX]; /* RV of the delete event ("" when unknown) */
    const char *uid;          /* UID of the deleted object ("" when unknown), after the key */
    char keybuf[];
} kc__tomb;

typedef struct kc__indexer {
    char *name;
    kc_store_indexer_fn fn;
    void *ud;
} kc__indexer;

typedef struct kc__stab {
    kc__htab map;
    size_t nidx; /* 1 + user indexers */
    kc__htab idx[1 + KC_STORE_MAX_INDEXERS];
    char max_rv[KC_STORE_RV_MAX]; /* highest comparable item RV (batches) */
    bool bulk; /* a batch being filled by a list: entries come from the object arena */
} kc__stab;

/* Up to this many bytes of key; longer keys are rejected (ns ≤ 63 + '/' + name ≤ 253). */
#define KC__KEY_MAX 512

/* Build "ns/name" (or "name") into buf. Returns the length or -1 when too long / no name. */
int kc__store_key(const char *ns, const char *name, char *buf, size_t cap);

/* Index values of obj for indexer i (0 = namespace). Returns count (≤ KC_STORE_MAX_INDEX_VALUES).
 */
size_t kc__stab_values(const kc__indexer *ixs, size_t i, const kc_obj *obj, const char **vals);

/* A new entry for key → obj (a new reference to obj), in t's indexes but not yet in its key map:
 * a bulk fill places it later (kc__htab_insert_slot with the object as the slot's aux). 0 or
 * KC_ENOMEM. */
int kc__stab_ent_new(kc__stab *t, const kc__indexer *ixs, const char *key, size_t klen,
                     uint64_t hash, kc_obj *obj, kc__ent **ret);
/* Undo kc__stab_ent_new for an entry that never entered the key map. */
void kc__stab_ent_drop(kc__stab *t, kc__ent *e);
/* New entry for obj (takes a reference) under key, indexed into t and in its key map. 0 /
 * KC_ENOMEM. */
int kc__stab_insert(kc__stab *t, const kc__indexer *ixs, const char *key, size_t klen,
                    uint64_t hash, kc_obj *obj, uint64_t seq, kc__ent **ret);
/* Replace e's object (takes a reference to obj, returns the old one's reference to the caller),
 * re-indexing when index values change. 0 / KC_ENOMEM (then e unchanged). */
int kc__stab_set(kc__stab *t, const kc__indexer *ixs, kc__ent *e, kc_obj *obj, kc_obj **ret_old);
/* Unlink e from the map and indexes; returns the object reference to the caller; frees e (retires
 * it, and an extra reference to its object, when the map has a retirer). kc__stab_set likewise
 * retires an extra reference to the replaced object. */
kc_obj *kc__stab_remove(kc__stab *t, kc__ent *e);
/* Free everything (dropping references). Accepts NULL. */
void kc__stab_free(kc__stab *t);
/* Frees an entry (its own memory only: not its object or refs), arena or malloc. Accepts NULL. */
void kc__ent_free(kc__ent *e);
kc__stab *kc__stab_new(size_t nidx);

/* Waiters (wait.c). */
typedef struct kc__waiter {
    struct kc__waiter *next, **pprev;
    struct kc__waiter *post_next; /* on the writer's to-post list once claimed */
    const kc_store_cond *c;
    uint64_t hash; /* key hash (KEY kinds) */
    size_t klen;
    char key[KC__KEY_MAX];
    _Atomic uint32_t posted; /* futex word: 1 once the writer has posted the result */
    int result;              /* 0 or KC_ESTOPPED, set when claimed */
    bool done;               /* claimed by a writer (unlinked), under s->mu */
    bool seen;               /* DELETED: the key held the uid at an evaluation of this waiter */
} kc__waiter;

#define KC__WAIT_BUCKETS 64

/* A deferred free (store.c). */
typedef struct kc__retired {
    int kind;
    void *p;
} kc__retired;

typedef struct kc__retire_list {
    kc__retired *v;
    size_t n, cap;
} kc__retire_list;

typedef struct kc__rcount {
    _Alignas(64) _Atomic long n; /* readers inside a lock-free Get, per epoch parity */
} kc__rcount;

/* Debug builds: a mutation (apply, replace, bookmark) brackets itself with these; a second one in
 * flight at the same time breaks the single-writer rule (kcache/store.h) and trips the assert. */
#define KC__STORE_WRITER_ENTER(s)                                                                  \
    KC__DEBUG_ASSERT(atomic_fetch_add_explicit(&(s)->writers, 1, memory_order_relaxed) == 0)
#define KC__STORE_WRITER_EXIT(s)                                                                   \
    KC__DEBUG_ASSERT(atomic_fetch_sub_explicit(&(s)->writers, 1, memory_order_relaxed) == 1)

struct kc_store {
    /* Lock-free Get (store.c): seqlock over the live map (odd while the writer mutates it), the
     * reader epoch, and readers per epoch parity. Written by the writer / readers only. */
    _Alignas(64) _Atomic uint64_t rseq;
    _Atomic unsigned epoch;
    kc__rcount readers[2];
    kc__retirer retirer;
    kc__retire_list pend[2]; /* retired during an epoch of that parity (writer only) */

    _Alignas(64) pthread_mutex_t mu;
    _Atomic int writers; /* debug builds: mutations in flight (the single-writer rule: <= 1) */
    kc__stab *tab;       /* readers load it atomically */
    kc__htab tombs;
    size_t max_tombs;
    uint64_t tomb_floor;
    uint64_t seq;
    uint64_t relist_seq;  /* sequence number of the last replace (0: none) */
    uint64_t regress_seq; /* ...of the last replace that moved the watermark back (0: none) */
    char wm[KC_STORE_RV_MAX];
    bool stopped;
    bool has_objects; /* indexers frozen */
    size_t nixs;
    kc__indexer ixs[1 + KC_STORE_MAX_INDEXERS];
    kc__waiter *key_waiters[KC__WAIT_BUCKETS];
    kc__waiter *wm_waiters;
    kc__waiter *to_post; /* claimed waiters, posted after the mutex is released */
};

struct kc_store_batch {
    kc_store *s;
    kc__stab *tab;
    kc__ent **order; /* every entry added, in order; [0, placed) are in the map (NULL: a later
                        one of the same key replaced it) */
    size_t n, cap, placed;
    int failed; /* a placement ran out of memory after dropping objects: the batch can only be
                   freed (kc_store_batch_add and kc_store_replace report it) */
};

/* With s->mu held: evaluate w's condition (1 holds, 0 not); may update w->seen. */
int kc__store_eval(kc_store *s, kc__waiter *w);
/* With s->mu held: claim the waiters an event on key can satisfy, and watermark waiters. */
void kc__store_wake_key(kc_store *s, uint64_t hash, const char *key, size_t klen);
/* With s->mu held: re-evaluate every waiter (relist, stop). */
void kc__store_wake_all(kc_store *s);
/* With s->mu held: detach the claimed waiters; after unlocking, kc__store_post them (wakes each
 * one; the waiter may return as soon as it is posted, so the list is read before each post). */
kc__waiter *kc__store_take_posts(kc_store *s);
void kc__store_post(kc__waiter *list);
/* With s->mu held: advance the watermark to rv when newer and comparable. Returns true if moved. */
bool kc__store_advance(kc_store *s, const char *rv);

/* store.c, for relist.c. With s->mu held: publish t as the live table inside a seqlock
 * window; record a tombstone for key (seq; rv and uid may be NULL) / drop one. reclaim.c, for
 * relist.c: without the lock, by the writer, retire t (no longer reachable) and free it once no
 * lock-free reader can hold it.
 */
void kc__store_swap_tab(kc_store *s, kc__stab *t);
void kc__store_tomb_put(kc_store *s, const char *key, size_t kl, uint64_t h, uint64_t seq,
                        const char *rv, const char *uid);
void kc__store_tomb_drop(kc_store *s, const char *key, size_t kl, uint64_t h);
void kc__store_retire_tab(kc_store *s, kc__stab *t);

/* reclaim.c, the writer's side of the epoch-based reclamation (no lock of its own; the single
 * writer). kc__store_retire: the store's kc__retirer function (defer freeing p, of kind
 * KC__RETIRE_*, until no lock-free reader can hold it). kc__store_reclaim: after a write, release
 * what the readers of the previous epoch could hold, without blocking. kc__store_reclaim_all:
 * wait out every announced reader, then release everything retired. kc__store_release_retired:
 * kc_store_free's release of everything retired (no reader can be inside). */
void kc__store_retire(kc__retirer *r, int kind, void *p);
void kc__store_reclaim(kc_store *s);
void kc__store_reclaim_all(kc_store *s);
void kc__store_release_retired(kc_store *s);

#endif
