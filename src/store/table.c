/*
 * store/table.c — the store's tables and index buckets (no locking here).
 *
 * The hash table is core's kc__htab (core/htab.c: open addressing, backward-shift deletion).
 * kc__stab: one generation of store contents — the key map plus one kc__htab per indexer mapping an
 * index value to a bucket (a dense array of entries). Every entry remembers its position in each
 * bucket (kc__ixref), so removal from an index is O(1) (swap with the last element).
 */
#include "store/internal.h"
#include "core/slab.h"

#include <stdlib.h>
#include <string.h>

/* ---- keys and index values ----------------------------------------------------------------------
 */

int kc__store_key(const char *ns, const char *name, char *buf, size_t cap)
{
    if (!name || !*name)
        return -1;
    size_t nl = ns ? strlen(ns) : 0, ml = strlen(name);
    size_t len = nl ? nl + 1 + ml : ml;
    if (len + 1 > cap)
        return -1;
    char *p = buf;
    if (nl) {
        memcpy(p, ns, nl);
        p += nl;
        *p++ = '/';
    }
    memcpy(p, name, ml);
    p[ml] = '\0';
    return (int)len;
}

size_t kc__stab_values(const kc__indexer *ixs, size_t i, const kc_obj *obj, const char **vals)
{
    if (i == 0) {
        vals[0] = kc_obj_namespace(obj);
        return 1;
    }
    size_t n = ixs[i].fn(ixs[i].ud, obj, vals, KC_STORE_MAX_INDEX_VALUES);
    return n > KC_STORE_MAX_INDEX_VALUES ? KC_STORE_MAX_INDEX_VALUES : n;
}

/* ---- buckets ------------------------------------------------------------------------------------
 */

static kc__bucket *bucket_get(kc__htab *ix, const char *v)
{
    size_t vl = strlen(v);
    uint64_t h = kc__hash(v, vl);
    kc__bucket *b = (kc__bucket *)kc__htab_find(ix, v, vl, h);
    if (b)
        return b;
    b = calloc(1, sizeof(*b) + vl + 1);
    if (!b)
        return NULL;
    memcpy(b->keybuf, v, vl + 1);
    b->h.key = b->keybuf;
    b->h.klen = vl;
    b->h.hash = h;
    if (kc__htab_insert(ix, &b->h) < 0) {
        free(b);
        return NULL;
    }
    return b;
}

static int bucket_push(kc__bucket *b, kc__ent *e, size_t *ret_pos)
{
    if (kc__grow(&b->items, &b->cap, b->n + 1, sizeof(*b->items), 4) < 0)
        return KC_ENOMEM;
    *ret_pos = b->n;
    b->items[b->n++] = e;
    return 0;
}

static void bucket_drop(kc__htab *ix, kc__bucket *b, size_t pos)
{
    size_t lastpos = b->n - 1;
    kc__ent *last = b->items[lastpos];
    b->items[pos] = last;
    b->n--;
    if (pos != lastpos) {
        /* Fix the moved entry's back reference. */
        for (uint32_t r = 0; r < last->nrefs; r++)
            if (last->refs[r].b == b && last->refs[r].pos == lastpos) {
                last->refs[r].pos = pos;
                break;
            }
    }
    if (b->n == 0) {
        kc__htab_remove(ix, b->h.key, b->h.klen, b->h.hash);
        free(b->items);
        free(b);
    }
}

static void drop_refs(kc__stab *t, const kc__ixref *refs, uint32_t n)
{
    /* Each ref lives in a different bucket, so removing one never moves another of e's refs. */
    for (uint32_t r = n; r-- > 0;)
        bucket_drop(&t->idx[refs[r].ix], refs[r].b, refs[r].pos);
}

static void ent_unindex(kc__stab *t, kc__ent *e)
{
    drop_refs(t, e->refs, e->nrefs);
    if (e->refs != e->inl)
        free(e->refs);
    e->refs = e->inl;
    e->nrefs = 0;
}

static int ent_index(kc__stab *t, const kc__indexer *ixs, kc__ent *e)
{
    const char *vals[KC_STORE_MAX_INDEX_VALUES];
    kc__ixref tmp[KC_STORE_MAX_INDEX_VALUES * (1 + KC_STORE_MAX_INDEXERS)];
    uint32_t n = 0;
    for (size_t i = 0; i < t->nidx; i++) {
        size_t nv = kc__stab_values(ixs, i, e->obj, vals);
        for (size_t v = 0; v < nv; v++) {
            if (!vals[v])
                continue;
            bool dup = false; /* an indexer returning the same value twice indexes once */
            for (size_t w = 0; w < v; w++)
                dup = dup || (vals[w] && strcmp(vals[w], vals[v]) == 0);
            if (dup)
                continue;
            kc__bucket *b = bucket_get(&t->idx[i], vals[v]);
            if (!b || bucket_push(b, e, &tmp[n].pos) < 0) {
                if (b && b->n == 0) {
                    kc__htab_remove(&t->idx[i], b->h.key, b->h.klen, b->h.hash);
                    free(b->items);
                    free(b);
                }
                drop_refs(t, tmp, n);
                return KC_ENOMEM;
            }
            tmp[n].ix = (uint32_t)i;
            tmp[n++].b = b;
        }
    }
    kc__ixref *refs = e->inl;
    if (n > KC__ARRAY_LEN(e->inl)) {
        refs = kc__calloc("store.index_refs", n, sizeof(*refs)); /* a test can fail it */
        if (!refs) {
            drop_refs(t, tmp, n);
            return KC_ENOMEM;
        }
    }
    memcpy(refs, tmp, n * sizeof(*refs));
    e->refs = refs;
    e->nrefs = n;
    return 0;
}

/* true when obj would get exactly the index values e has now. */
static bool same_values(const kc__stab *t, const kc__indexer *ixs, const kc__ent *e,
                        const kc_obj *obj)
{
    const char *vals[KC_STORE_MAX_INDEX_VALUES];
    uint32_t r = 0;
    for (size_t i = 0; i < t->nidx; i++) {
        size_t nv = kc__stab_values(ixs, i, obj, vals);
        for (size_t v = 0; v < nv; v++) {
            if (!vals[v])
                continue;
            if (r >= e->nrefs || strcmp(e->refs[r].b->h.key, vals[v]) != 0)
                return false;
            r++;
        }
    }
    return r == e->nrefs;
}

/* ---- store tables -------------------------------------------------------------------------------
 */

kc__stab *kc__stab_new(size_t nidx)
{
    kc__stab *t = calloc(1, sizeof(*t));
    if (t)
        t->nidx = nidx;
    return t;
}

static size_t ent_size(size_t klen)
{
    return sizeof(kc__ent) + KC__KEY_WORDS(klen) * 8;
}

/* A batch's entries are written by the thread that decodes the list, as its objects are: from the
 * object arena they cost no page faults on that thread (the arena populates ahead), where
 * malloc's heap grows a 4 KiB page at a time — 10-15 % of a cold streaming list's decoding thread
 * went to faulting in ~100-byte entries. Zero-filled (the key's padding words are compared). */
static kc__ent *ent_alloc(const kc__stab *t, size_t klen)
{
    size_t n = ent_size(klen), got = 0;
    kc__ent *e = t->bulk ? kc__slab_alloc(n, &got) : NULL;
    if (e) {
        memset(e, 0, n);
        e->arena = 1;
        return e;
    }
    return calloc(1, n);
}

void kc__ent_free(kc__ent *e)
{
    if (e && e->arena)
        kc__slab_free(e, kc__slab_size(ent_size(e->h.klen)));
    else
        free(e);
}

int kc__stab_ent_new(kc__stab *t, const kc__indexer *ixs, const char *key, size_t klen,
                     uint64_t hash, kc_obj *obj, kc__ent **ret)
{
    kc__ent *e = ent_alloc(t, klen);
    if (!e)
        return KC_ENOMEM;
    memcpy(e->keybuf, key, klen);
    e->h.key = e->keybuf;
    e->h.klen = klen;
    e->h.hash = hash;
    e->obj = obj;
    e->refs = e->inl;
    if (ent_index(t, ixs, e) < 0) { /* in no map yet: no reader can have seen it */
        kc__ent_free(e);
        return KC_ENOMEM;
    }
    kc_obj_ref(obj);
    *ret = e;
    return 0;
}

void kc__stab_ent_drop(kc__stab *t, kc__ent *e)
{
    ent_unindex(t, e);
    kc_obj_unref(e->obj);
    kc__ent_free(e);
}

int kc__stab_insert(kc__stab *t, const kc__indexer *ixs, const char *key, size_t klen,
                    uint64_t hash, kc_obj *obj, uint64_t seq, kc__ent **ret)
{
    kc__ent *e = NULL;
    int rc = kc__stab_ent_new(t, ixs, key, klen, hash, obj, &e);
    if (rc < 0)
        return rc;
    e->seq = seq;
    /* the object goes into the slot with the entry: a lock-free Get reads it from there */
    if (kc__htab_insert_slot(&t->map, (kc__slot){hash, &e->h, obj, klen}) < 0) {
        kc__stab_ent_drop(t, e);
        return KC_ENOMEM;
    }
    if (ret)
        *ret = e;
    return 0;
}

int kc__stab_set(kc__stab *t, const kc__indexer *ixs, kc__ent *e, kc_obj *obj, kc_obj **ret_old)
{
    kc_obj *old = e->obj;
    if (!same_values(t, ixs, e, obj)) {
        ent_unindex(t, e);
        e->obj = obj;
        if (ent_index(t, ixs, e) < 0) {
            e->obj = old;
            ent_index(t, ixs, e); /* restoring may fail too: the entry then stays unindexed */
            return KC_ENOMEM;
        }
    }
    e->obj = kc_obj_ref(obj);
    __atomic_store_n(&kc__htab_slot_of(&t->map, &e->h)->aux, obj, __ATOMIC_RELEASE);
    if (t->map.ret) /* a lock-free reader may be about to take a reference to old */
        t->map.ret->fn(t->map.ret, KC__RETIRE_OBJ, kc_obj_ref(old));
    *ret_old = old;
    return 0;
}

kc_obj *kc__stab_remove(kc__stab *t, kc__ent *e)
{
    ent_unindex(t, e);
    kc__htab_remove(&t->map, e->h.key, e->h.klen, e->h.hash);
    kc_obj *o = e->obj;
    if (t->map.ret) { /* a lock-free reader may still read e and reference o */
        t->map.ret->fn(t->map.ret, KC__RETIRE_OBJ, kc_obj_ref(o));
        t->map.ret->fn(t->map.ret, KC__RETIRE_ENT, e);
    } else {
        kc__ent_free(e);
    }
    return o;
}

void kc__stab_free(kc__stab *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->map.cap; i++) {
        kc__ent *e = (kc__ent *)KC__HTAB_AT(&t->map, i);
        if (!e)
            continue;
        kc_obj_unref(e->obj);
        if (e->refs != e->inl)
            free(e->refs);
        kc__ent_free(e);
    }
    kc__htab_free(&t->map);
    for (size_t x = 0; x < t->nidx; x++) {
        for (size_t i = 0; i < t->idx[x].cap; i++) {
            kc__bucket *b = (kc__bucket *)KC__HTAB_AT(&t->idx[x], i);
            if (b) {
                free(b->items);
                free(b);
            }
        }
        kc__htab_free(&t->idx[x]);
    }
    free(t);
}
