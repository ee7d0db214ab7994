/*
 * core/htab.c — the hash table (kc__htab, core/htab.h): open addressing with linear probing over
 * pointers to intrusive kc__hent heads; load factor kept ≤ 0.75; deletion by backward shift (no
 * tombstone slots), so lookups stay short after churn.
 *
 * Why this design (one table for every user; it was the store's, moved here unchanged):
 *   - a probe reads the 32-byte slot (hash, key length, entry, aux) and touches the entry only on
 *     a full hash and length match: one cache miss per lookup in a big table instead of one per
 *     chain link for chaining (every chained table kcache had — server storage, read-your-writes —
 *     read the entry to compare its hash);
 *   - no node allocation (intrusive), no per-lookup allocation;
 *   - backward shift keeps probe runs short after deletes, which every user does all the time
 *     (the store on DELETED events, the read-your-writes table as writes are observed);
 *   - the slot layout and atomic slot stores let the store's Get probe the live map without a lock
 *     (store/store.c); other users pay nothing for it (release stores are plain moves on x86-64);
 *   - growth doubles through kc__grow_cap (overflow-checked) and never shrinks.
 * Cost: 32 bytes per slot at load 0.375–0.75 (43–85 bytes per entry) against 8–16 bytes of
 * bucket array plus an 8-byte chain link for chaining.
 *
 * Figures (2-core shared EPYC VM, this table vs the chained FNV-1a tables it replaced, runs
 * alternated A B A B, medians of 9–11 pairs; CPU time per operation):
 *   - bench_store, bench_ryw: unchanged (paired ratios 1.00–1.01 for store_get_hot, store_list,
 *     discovery_cached_get, discovery_api; store_get_median swings 136–441 ns between runs of
 *     the same binary, and kc_store_get's machine code is identical: the store's table moved,
 *     it did not change);
 *   - a throwaway micro-bench of the two ported tables, 20,000 keys (2,000 keys): server find
 *     hit 271 vs 251 ns (33 vs 36), miss 12.4 vs 10.9 ns (11.4 vs 9.0: composite-key hashing);
 *     read-your-writes note 327 vs 407 ns (240 vs 230), lookup hit 590 vs 522 (92 vs 115; most
 *     of it is copying the entry out), miss 46 vs 45 (28 vs 41), forget 515 vs 510 (74 vs 86).
 *     At 20,000 keys both are memory-bound and within the run-to-run spread;
 *   - memory: peak RSS +1.1 MiB with 20,000 server objects and 20,000 pending entries (≈ +28
 *     bytes per entry, against ~6 KB per seeded Pod).
 *
 * Large slot arrays (≥ 2 MiB) are 2 MiB-aligned and advised to use transparent huge pages: random
 * probes into a big table then cost no TLB miss.
 */
#include "core/htab.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static inline bool slot_is(const kc__slot *sl, const char *key, size_t klen, uint64_t hash)
{
    return sl->hash == hash && sl->klen == klen && memcmp(sl->e->key, key, klen) == 0;
}

kc__hent *kc__htab_find(const kc__htab *t, const char *key, size_t klen, uint64_t hash)
{
    if (t->cap == 0)
        return NULL;
    size_t mask = t->cap - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        const kc__slot *sl = &t->slots[i];
        if (!sl->e)
            return NULL;
        if (slot_is(sl, key, klen, hash))
            return sl->e;
    }
}

kc__hent *kc__htab_match(const kc__htab *t, const char *key, size_t klen, uint64_t hash,
                         size_t *pos)
{
    if (t->cap == 0)
        return NULL;
    size_t mask = t->cap - 1;
    for (size_t k = *pos; k <= mask; k++) {
        const kc__slot *sl = &t->slots[(hash + k) & mask];
        if (!sl->e)
            break;
        if (slot_is(sl, key, klen, hash)) {
            *pos = k + 1;
            return sl->e;
        }
    }
    *pos = t->cap;
    return NULL;
}

/* ---- composite keys ---------------------------------------------------------------------- */

void kc__hkey_write(const kc__hkey *k, char *dst)
{
    for (size_t i = 0; i < k->n; i++) {
        memcpy(dst, k->part[i], k->len[i]);
        dst += k->len[i];
        *dst++ = '\0'; /* separator, and the final terminator */
    }
    if (k->n == 0)
        *dst = '\0';
}

static bool key_is(const kc__slot *sl, const kc__hkey *k)
{
    if (sl->hash != k->hash || sl->klen != k->klen)
        return false;
    const char *p = sl->e->key;
    for (size_t i = 0; i < k->n; i++) {
        if (memcmp(p, k->part[i], k->len[i]) != 0 || (i + 1 < k->n && p[k->len[i]] != '\0'))
            return false;
        p += k->len[i] + 1;
    }
    return true;
}

kc__hent *kc__htab_find_key(const kc__htab *t, const kc__hkey *k, size_t *pos)
{
    if (t->cap == 0)
        return NULL;
    size_t mask = t->cap - 1, start = pos ? *pos : 0;
    for (size_t j = start; j <= mask; j++) {
        const kc__slot *sl = &t->slots[(k->hash + j) & mask];
        if (!sl->e)
            break;
        if (key_is(sl, k)) {
            if (pos)
                *pos = j + 1;
            return sl->e;
        }
    }
    if (pos)
        *pos = t->cap;
    return NULL;
}

/* ---- insertion and removal ----------------------------------------------------------------- */

kc__slot *kc__htab_slot_of(const kc__htab *t, const kc__hent *e)
{
    size_t mask = t->cap - 1;
    for (size_t i = e->hash & mask;; i = (i + 1) & mask)
        if (t->slots[i].e == e || !t->slots[i].e)
            return t->slots[i].e == e ? &t->slots[i] : NULL;
}

static void htab_place(kc__slot *slots, size_t cap, kc__slot sl)
{
    size_t mask = cap - 1;
    size_t i = sl.hash & mask;
    while (slots[i].e)
        i = (i + 1) & mask;
    kc__slot_put(&slots[i], sl.hash, sl.klen, sl.e, sl.aux);
}

/* Zeroed array of n slots behind a header slot holding n (see kc__htab). */
static kc__slot *slots_alloc(size_t n)
{
    size_t bytes;
    if (!kc__size_mul(n + 1, sizeof(kc__slot), &bytes))
        return NULL;
    const size_t huge = (size_t)2 << 20;
    kc__slot *p = NULL;
    /* 64-byte aligned: 32-byte slots then never straddle a cache line. */
    if (posix_memalign((void **)&p, bytes < huge ? 64 : huge, bytes) != 0)
        return NULL;
    if (bytes >= huge)
        madvise(p, bytes, MADV_HUGEPAGE); /* advice only: failure is harmless */
    memset(p, 0, bytes);
    p[0].hash = n; /* written before the array is published, never changed */
    return p + 1;
}

/* Free (or, for a table with a retirer, retire) a slot array from slots_alloc. */
static void slots_free(kc__retirer *ret, kc__slot *slots)
{
    if (!slots)
        return;
    if (ret)
        ret->fn(ret, KC__RETIRE_MEM, slots - 1);
    else
        free(slots - 1);
}

/* Moves every member to a new array of ncap slots. */
static int rehash(kc__htab *t, size_t ncap)
{
    kc__slot *ns = ncap ? slots_alloc(ncap) : NULL;
    if (!ns)
        return KC_ENOMEM;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].e)
            htab_place(ns, ncap, t->slots[i]);
    kc__slot *old = t->slots;
    __atomic_store_n(&t->slots, ns, __ATOMIC_RELEASE); /* complete before readers see it */
    t->cap = ncap;
    slots_free(t->ret, old);
    return 0;
}

int kc__htab_reserve(kc__htab *t, size_t n)
{
    size_t need; /* slots for n members at load <= 0.75: ceil(4n / 3) */
    if (!kc__size_mul(n, 4, &need))
        return KC_ENOMEM;
    need = need / 3 + (need % 3 != 0);
    if (need <= t->cap)
        return 0;
    size_t cap = kc__grow_cap(t->cap, need, sizeof(kc__slot), 16);
    return cap ? rehash(t, cap) : KC_ENOMEM;
}

int kc__htab_insert_slot(kc__htab *t, kc__slot sl)
{
    if ((t->n + 1) * 4 > t->cap * 3) {
        size_t ncap = kc__grow_cap(t->cap, t->cap + 1, sizeof(kc__slot), 16);
        if (rehash(t, ncap) < 0)
            return KC_ENOMEM;
    }
    htab_place(t->slots, t->cap, sl);
    t->n++;
    return 0;
}

int kc__htab_insert(kc__htab *t, kc__hent *e)
{
    return kc__htab_insert_slot(t, (kc__slot){e->hash, e, NULL, e->klen});
}

/* Empty slot i, then move later members of its probe run into the hole when allowed. */
static void delete_at(kc__htab *t, size_t i)
{
    size_t mask = t->cap - 1, hole = i;
    kc__slot_put(&t->slots[hole], 0, 0, NULL, NULL);
    for (size_t j = (hole + 1) & mask; t->slots[j].e; j = (j + 1) & mask) {
        size_t home = t->slots[j].hash & mask;
        /* Can slots[j] move to hole? Only if home is not in (hole, j] cyclically. */
        bool in_range = (hole <= j) ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!in_range) {
            kc__slot m = t->slots[j];
            kc__slot_put(&t->slots[hole], m.hash, m.klen, m.e, m.aux);
            kc__slot_put(&t->slots[j], 0, 0, NULL, NULL);
            hole = j;
        }
    }
    t->n--;
}

kc__hent *kc__htab_remove(kc__htab *t, const char *key, size_t klen, uint64_t hash)
{
    if (t->cap == 0)
        return NULL;
    size_t mask = t->cap - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        kc__slot *sl = &t->slots[i];
        if (!sl->e)
            return NULL;
        if (slot_is(sl, key, klen, hash)) {
            kc__hent *found = sl->e;
            delete_at(t, i);
            return found;
        }
    }
}

void kc__htab_remove_ent(kc__htab *t, kc__hent *e)
{
    kc__slot *sl = t->cap ? kc__htab_slot_of(t, e) : NULL;
    if (sl)
        delete_at(t, (size_t)(sl - t->slots));
}

void kc__htab_free(kc__htab *t)
{
    slots_free(NULL, t->slots); /* callers guarantee no reader (retired tables, private ones) */
    t->slots = NULL;
    t->cap = t->n = 0;
}
