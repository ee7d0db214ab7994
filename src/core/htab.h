/*
 * core/htab.h — kcache's one hash table (htab.c) and its string hash. Internal API.
 *
 * Intrusive: a member embeds a kc__hent (hash, key length, key pointer — the key bytes usually
 * live in the member itself), so the table allocates only its slot array: no node per entry and
 * no allocation per lookup. Users: the store's key map, tombstones and index buckets (src/store/),
 * the informer's coalescing table, the read-your-writes table (src/cached/) and the embedded
 * server's per-resource maps (src/server/storage/). The design and the figures: htab.c.
 *
 * Keys are byte strings (klen bytes, compared with memcmp; a NUL may be part of the key, e.g.
 * "ns\0name"). The caller computes the hash once (kc__hash, or its own) and passes it to every
 * call, so one key hashed for several tables is hashed once.
 */
#ifndef KC_CORE_HTAB_H
#define KC_CORE_HTAB_H

#include "core/internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Common head of everything kept in a kc__htab. */
typedef struct kc__hent {
    uint64_t hash;
    size_t klen;
    char *key; /* klen bytes (usually NUL-terminated too); usually points into the owning struct */
} kc__hent;

/* A slot keeps the hash and key length (probes skip mismatches without touching the entry) and an
 * aux word for the caller (the store map keeps the entry's object there, so a Get never reads the
 * entry's header). 32 bytes: two slots per cache line, none straddling two. */
typedef struct kc__slot {
    uint64_t hash;
    kc__hent *e; /* NULL: empty */
    void *aux;
    size_t klen;
} kc__slot;

/* Deferred frees: a table published to lock-free readers (the store's map) hands replaced slot
 * arrays to its retirer instead of freeing them (kind KC__RETIRE_MEM: free(p) after a grace
 * period). Other kinds are the owner's (store/internal.h). */
enum { KC__RETIRE_MEM = 0 };
typedef struct kc__retirer {
    void (*fn)(struct kc__retirer *r, int kind, void *p);
} kc__retirer;

/*
 * Open addressing, linear probing, load factor ≤ 0.75, backward-shift deletion (no tombstones).
 * Zero-initialised = empty. Not thread-safe: one writer, or a caller's lock. Slot stores are
 * atomic release stores so that a table published to lock-free readers (ret != NULL) can be
 * probed concurrently under the owner's seqlock (store/store.c, "Lock-free Get"); the slot array
 * is allocated with a header slot in front holding the capacity (slots[-1].hash), so a reader that
 * loads the array pointer also gets the matching capacity. With ret set, replaced slot arrays are
 * retired, not freed.
 * Keys are unique unless the caller inserts duplicates on purpose (kc__htab_match finds each;
 * kc__htab_find the first).
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

/*
 * Composite keys: up to KC__HKEY_PARTS NUL-free strings joined by NUL — (namespace, name) in the
 * server, (type, namespace, name) in the read-your-writes table — looked up without joining them
 * into a buffer (so without a length limit or an allocation per lookup). An entry's kc__hent holds
 * the joined key (kc__hkey_write) and the key's hash, klen.
 */
#define KC__HKEY_PARTS 3
typedef struct kc__hkey {
    const char *part[KC__HKEY_PARTS];
    size_t len[KC__HKEY_PARTS];
    size_t n;    /* parts in use */
    size_t klen; /* joined length: the parts plus n - 1 separators */
    uint64_t hash;
} kc__hkey;

/* k = the key of parts a, b, c (the first n ≤ KC__HKEY_PARTS of them; NULL reads as ""), hashed.
 * Inline: with n a constant the loop unrolls (a server miss costs little more than the hash). */
static inline void kc__hkey_init(kc__hkey *k, size_t n, const char *a, const char *b, const char *c)
{
    const char *in[KC__HKEY_PARTS] = {a, b, c};
    k->n = n;
    k->klen = n ? n - 1 : 0;
    k->hash = 0x8ebc6af09c88c6e3ull;
    for (size_t i = 0; i < n; i++) {
        k->part[i] = in[i] ? in[i] : "";
        k->len[i] = strlen(k->part[i]);
        k->klen += k->len[i];
        /* each part hashed on its own, folded in by position: ("a","") and ("","a") differ */
        k->hash = kc__mum(k->hash ^ 0xe7037ed1a0b428dbull, kc__hash(k->part[i], k->len[i]) ^ i);
    }
}

/* Write the joined key (k->klen bytes, then a NUL) to dst. */
void kc__hkey_write(const kc__hkey *k, char *dst);
/* The entry with key k, or NULL; pos as in kc__htab_match (NULL: the first). */
kc__hent *kc__htab_find_key(const kc__htab *t, const kc__hkey *k, size_t *pos);

/* The (first) entry with this key, or NULL. */
kc__hent *kc__htab_find(const kc__htab *t, const char *key, size_t klen, uint64_t hash);
/* Duplicate keys: the next entry with this key after those already returned; *pos counts the
 * slots probed (start at 0). NULL when there is none left. Any insert or remove restarts it. */
kc__hent *kc__htab_match(const kc__htab *t, const char *key, size_t klen, uint64_t hash,
                         size_t *pos);
/* The slot holding e (which must be in t). */
kc__slot *kc__htab_slot_of(const kc__htab *t, const kc__hent *e);
/* i-th slot's entry (NULL when empty), for iteration over i < t->cap. Removing the entry at i
 * may move a later one into slot i: an iteration that removes re-reads slot i before moving on. */
#define KC__HTAB_AT(t, i) ((t)->slots[(i)].e)
/* Insert e (its hash, klen and key set; the key absent unless duplicates are meant). Grows the
 * slot array (doubling, overflow-checked) past load 0.75. 0 or KC_ENOMEM (then t unchanged). */
int kc__htab_insert(kc__htab *t, kc__hent *e);
/* kc__htab_insert of a whole slot (hash, e, aux, klen): *sl.e is not read, so a bulk insert touches
 * only the slot array. Same result codes. */
int kc__htab_insert_slot(kc__htab *t, kc__slot sl);
/* Grow now so that n members fit under the load factor (a bulk insert of a known count then never
 * rehashes). 0 or KC_ENOMEM (then t unchanged). */
int kc__htab_reserve(kc__htab *t, size_t n);
/* Ask for the home slot of hash ahead of an insert or a find (a bulk loop prefetches a few
 * iterations ahead: the slots are random lines of a table larger than the caches). */
static inline void kc__htab_prefetch(const kc__htab *t, uint64_t hash)
{
    if (t->cap)
        __builtin_prefetch(&t->slots[hash & (t->cap - 1)], 1);
}
/* Remove and return the (first) entry with key, or NULL. */
kc__hent *kc__htab_remove(kc__htab *t, const char *key, size_t klen, uint64_t hash);
/* Remove e itself (which must be in t). */
void kc__htab_remove_ent(kc__htab *t, kc__hent *e);
void kc__htab_free(kc__htab *t); /* frees the slot array only; t is empty (and reusable) after */

#endif
