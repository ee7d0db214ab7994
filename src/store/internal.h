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

#include "core/internal.h"
#include "kcache/store.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

/* Common head of everything kept in a kc__htab (entries, tombstones, index buckets). */
typedef struct kc__hent {
    uint64_t hash;
    size_t klen;
    char *key; /* NUL-terminated; usually points into the owning struct */
} kc__hent;

/* A slot keeps the hash and key length (probes skip mismatches without touching the entry) and an
 * aux pointer (the store map keeps the entry's object there, so a Get never reads the entry's
 * header). 32 bytes: two slots per cache line, none straddling two. */
typedef struct kc__slot {
    uint64_t hash;
    kc__hent *e; /* NULL: empty */
    void *aux;
    size_t klen;
} kc__slot;

/* Deferred frees (store.c): memory a lock-free reader may still be reading is handed to the
 * retirer instead of being freed; it is released after a grace period (docs/informer.md, "Lock-free
 * Get"). kind: KC__RETIRE_MEM (free), KC__RETIRE_OBJ (kc_obj_unref), KC__RETIRE_STAB (whole table).
 */
enum { KC__RETIRE_MEM = 0, KC__RETIRE_OBJ = 1, KC__RETIRE_STAB = 2 };
typedef struct kc__retirer {
    void (*fn)(struct kc__retirer *r, int kind, void *p);
} kc__retirer;

/*
 * Open addressing, linear probing, backward-shift deletion. Not thread-safe for writers. Slot
 * stores are atomic release stores (see store.c, "Lock-free Get") so that a table published to
 * lock-free readers (store map, ret != NULL) can be probed concurrently; the slot array is
 * allocated with a header slot in front holding the capacity (slots[-1].hash), so a reader that
 * loads the array pointer also gets the matching capacity. With ret set, replaced slot arrays are
 * retired, not freed.
 */
typedef struct kc__htab {
    kc__slot *slots;
    size_t cap; /* power of two, or 0 */
    size_t n;
    kc__retirer *ret; /* NULL: free at once (private tables) */
} kc__htab;

/* Writer-side slot store (see kc__htab). */
static inline void kc__slot_put(kc__slot *d, uint64_t hash, size_t klen, kc__hent *e, void *aux)
{
    __atomic_store_n(&d->hash, hash, __ATOMIC_RELEASE);
    __atomic_store_n(&d->klen, klen, __ATOMIC_RELEASE);
    __atomic_store_n(&d->aux, aux, __ATOMIC_RELEASE);
    __atomic_store_n(&d->e, e, __ATOMIC_RELEASE);
}

static inline uint64_t kc__rd64(const char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v)); /* one unaligned load */
    return v;
}

static inline uint64_t kc__rd32(const char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

/* 64×64 → 128-bit multiply folded to 64 bits (every input bit reaches every output bit); without
 * __int128 a weaker 64-bit fold. */
static inline uint64_t kc__mum(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
#else
    uint64_t r = a * b;
    return r ^ (r >> 29) ^ ((a >> 32) * (b >> 32));
#endif
}

static inline uint64_t kc__hash(const char *s, size_t n)
{
    /* wyhash-style (keys are short: "namespace/name", 10–40 bytes): one 128-bit multiply per 16
     * bytes instead of one multiply per byte as in FNV-1a, whose serial byte chain dominated a Get.
     * Loads stay inside [s, s+n) (overlapping words for the tail; bytes 0, n/2, n-1 below 4). The
     * hash lives in memory only (never stored or sent), so it may change between versions. */
    const uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull;
    uint64_t h = k0, a, b;
    const char *p = s;
    size_t r = n;
    for (; r > 16; r -= 16, p += 16)
        h = kc__mum(kc__rd64(p) ^ k1, kc__rd64(p + 8) ^ h);
    if (r > 8) {
        a = kc__rd64(p);
        b = kc__rd64(p + r - 8);
    } else if (r >= 4) {
        a = kc__rd32(p);
        b = kc__rd32(p + r - 4);
    } else if (r > 0) {
        a = ((uint64_t)(unsigned char)p[0] << 16) | ((uint64_t)(unsigned char)p[r >> 1] << 8) |
            (unsigned char)p[r - 1];
        b = 0;
    } else {
        a = b = 0;
    }
    return kc__mum(k1 ^ n, kc__mum(a ^ k1, b ^ h));
}

kc__hent *kc__htab_find(const kc__htab *t, const char *key, size_t klen, uint64_t hash);
/* The slot holding e (which must be in t). */
kc__slot *kc__htab_slot_of(const kc__htab *t, const kc__hent *e);
/* i-th slot's entry (NULL when empty), for iteration. */
#define KC__HTAB_AT(t, i) ((t)->slots[(i)].e)
/* Insert e (key must be absent). 0 or KC_ENOMEM. */
int kc__htab_insert(kc__htab *t, kc__hent *e);
/* Remove and return the entry with key, or NULL. */
kc__hent *kc__htab_remove(kc__htab *t, const char *key, size_t klen, uint64_t hash);
void kc__htab_free(kc__htab *t); /* frees the slot array only */

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
    unsigned flags; /* relist bookkeeping (writer only) */
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
} kc__stab;

/* Up to this many bytes of key; longer keys are rejected (ns ≤ 63 + '/' + name ≤ 253). */
#define KC__KEY_MAX 512

/* Build "ns/name" (or "name") into buf. Returns the length or -1 when too long / no name. */
int kc__store_key(const char *ns, const char *name, char *buf, size_t cap);

/* Index values of obj for indexer i (0 = namespace). Returns count (≤ KC_STORE_MAX_INDEX_VALUES).
 */
size_t kc__stab_values(const kc__indexer *ixs, size_t i, const kc_obj *obj, const char **vals);

/* New entry for obj (takes a reference) under key, indexed into t. 0 / KC_ENOMEM. */
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
 * window; record a tombstone for key (seq; rv and uid may be NULL) / drop one. Without the lock,
 * by the writer: retire t (no longer reachable) and free it once no lock-free reader can hold it.
 */
void kc__store_swap_tab(kc_store *s, kc__stab *t);
void kc__store_tomb_put(kc_store *s, const char *key, size_t kl, uint64_t h, uint64_t seq,
                        const char *rv, const char *uid);
void kc__store_tomb_drop(kc_store *s, const char *key, size_t kl, uint64_t h);
void kc__store_retire_tab(kc_store *s, kc__stab *t);

#endif
