/*
 * store/relist.c — kc_store batches and the atomic relist swap (kc_store_replace).
 *
 * Relist: with the writer being the only mutator, the diff between the live
 * table and the batch is computed without the lock (reads of the live table by its only writer
 * cannot race with readers). New sequence numbers are assigned to changed keys in the unpublished
 * batch; the swap, the tombstone records of vanished keys and the new watermark are published under
 * the lock, then every waiter is re-evaluated. Change notifications run after the lock is released,
 * from the old table which no new reader can reach any more.
 *
 * The swap publishes the batch's table inside a seqlock window (kc__store_swap_tab) and hands
 * the old table to the reclamation of store.c (kc__store_retire_tab), which waits out lock-free
 * readers still probing it before freeing it.
 *
 * The replace itself takes a sequence number (relist_seq): "absent after a replace since
 * after_seq" is how a write the store never saw, deleted meanwhile, is recognised as observed.
 * A list RV below the watermark means the server's RVs went back (backup restore, restart with an
 * RV reset): the watermark is reset to the new timeline and regress_seq records when, so that RV
 * conditions of waits that began before fall back to key-level evidence (wait.c).
 */
#include "store/internal.h"

#include "kcache/rv.h"

#include <stdlib.h>
#include <string.h>

int kc_store_batch_new(kc_store *s, kc_store_batch **ret, kc_error *err)
{
    if (!s || !ret)
        return kc_error_set(err, KC_EINVAL, "store batch: store and ret are required");
    kc_store_batch *b = calloc(1, sizeof(*b));
    if (b) {
        b->s = s;
        pthread_mutex_lock(&s->mu);
        s->has_objects = true; /* freeze the indexer set */
        size_t nidx = s->nixs;
        pthread_mutex_unlock(&s->mu);
        b->tab = kc__stab_new(nidx);
        if (b->tab)
            b->tab->bulk = true;
    }
    if (!b || !b->tab) {
        free(b);
        return kc_error_set(err, KC_ENOMEM, "store: out of memory");
    }
    *ret = b;
    return 0;
}

int kc_store_batch_add(kc_store_batch *b, kc_obj *obj, kc_error *err)
{
    if (!b || !obj)
        return kc_error_set(err, KC_EINVAL, "store batch: batch and obj are required");
    if (b->failed)
        return kc_error_set(err, b->failed, "store batch: out of memory placing earlier objects");
    char key[KC__KEY_MAX];
    int kl = kc__store_key(kc_obj_namespace(obj), kc_obj_name(obj), key, sizeof(key));
    if (kl < 0)
        return kc_error_set(err, KC_EINVAL, "store: object without a name or key too long");
    if (b->n == b->cap && kc__grow(&b->order, &b->cap, b->n + 1, sizeof(*b->order), 1024) < 0)
        return kc_error_set(err, KC_ENOMEM, "store: out of memory");
    uint64_t h = kc__hash(key, (size_t)kl);
    kc__ent *e = NULL;
    if (kc__stab_ent_new(b->tab, b->s->ixs, key, (size_t)kl, h, obj, &e) < 0)
        return kc_error_set(err, KC_ENOMEM, "store: out of memory");
    b->order[b->n++] = e;
    const char *rv = kc_obj_resource_version(obj);
    if (kc_rv_is_canonical(rv) && strlen(rv) < KC_STORE_RV_MAX &&
        (!b->tab->max_rv[0] || kc_rv_compare(rv, b->tab->max_rv) == KC_RV_GREATER))
        strcpy(b->tab->max_rv, rv);
    return 0;
}

/* Walking entries in order, the loops below ask for entry i + AHEAD and for the home slot of entry
 * i + AHEAD / 2 (whose hash that first prefetch brought in): the entries, interleaved with their
 * objects in the arena, and the slots, random lines of a table larger than the caches, would
 * otherwise be a cache miss each, one after the other. */
enum { AHEAD = 16 };

static inline void ahead(kc__ent *const *v, size_t n, size_t i, const kc__htab *m)
{
    if (i + AHEAD < n && v[i + AHEAD])
        __builtin_prefetch(v[i + AHEAD], 1);
    if (i + AHEAD / 2 < n && v[i + AHEAD / 2])
        kc__htab_prefetch(m, v[i + AHEAD / 2]->h.hash);
}

/* Puts the entries added since the last call into the batch's key map, in the order they were
 * added (a key added twice keeps the later object, as kc__stab_set does for a live table).
 * Deferred to here so that the map is sized once for them all and never rehashed: adding them one
 * by one cost a cache-missing probe per object and a rehash per doubling (~10 % of a cold
 * streaming list's decoding thread at 100,000 Pods). */
static int place_pending(kc_store_batch *b)
{
    kc__htab *m = &b->tab->map;
    size_t n = b->n;
    if (b->failed || b->placed == n)
        return b->failed;
    if (kc__htab_reserve(m, m->n + (n - b->placed)) < 0)
        return KC_ENOMEM;
    for (size_t i = b->placed; i < n; i++) {
        ahead(b->order, n, i, m);
        kc__ent *e = b->order[i];
        kc__ent *old = (kc__ent *)kc__htab_find(m, e->h.key, e->h.klen, e->h.hash);
        if (!old) { /* reserved: cannot fail */
            (void)kc__htab_insert_slot(m, (kc__slot){e->h.hash, &e->h, e->obj, e->h.klen});
            continue;
        }
        kc_obj *prev = NULL;
        int rc = kc__stab_set(b->tab, b->s->ixs, old, e->obj, &prev);
        kc_obj_unref(prev);
        kc__stab_ent_drop(b->tab, e);
        b->order[i] = NULL;
        if (rc < 0) {
            for (size_t j = i + 1; j < n; j++)
                kc__stab_ent_drop(b->tab, b->order[j]);
            b->placed = b->n = i + 1;
            b->failed = rc; /* objects were dropped: a replace must not install the rest */
            return rc;
        }
    }
    b->placed = n;
    return 0;
}

size_t kc_store_batch_len(const kc_store_batch *b)
{
    if (!b)
        return 0;
    /* logically const: placing changes no observable content (out of memory: not counted) */
    (void)place_pending((kc_store_batch *)b);
    return b->tab->map.n;
}

void kc_store_batch_free(kc_store_batch *b)
{
    if (!b)
        return;
    for (size_t i = b->placed; i < b->n; i++) /* the placed ones: kc__stab_free */
        kc__stab_ent_drop(b->tab, b->order[i]);
    free(b->order);
    kc__stab_free(b->tab);
    free(b);
}

static bool same_version(const kc_obj *a, const kc_obj *b)
{
    return a == b || strcmp(kc_obj_resource_version(a), kc_obj_resource_version(b)) == 0;
}

/* Pass 1 of a replace (unpublished): sequence numbers from seq on for the changed keys of nt,
 * marks on the vanished ones of ot (counted in *vanished). Returns the last sequence number. In
 * the order of the list, with the entries (and their old counterparts' slots) prefetched a few
 * ahead: walking nt's slots instead reached the entries in random order, a cache miss each. */
static uint64_t mark(kc__ent **ents, size_t nents, const kc__stab *nt, const kc__stab *ot,
                     uint64_t seq, size_t *vanished)
{
    for (size_t i = 0; i < nents; i++) {
        ahead(ents, nents, i, &ot->map);
        kc__ent *e = ents[i];
        if (!e)
            continue;
        kc__ent *o = (kc__ent *)kc__htab_find(&ot->map, e->h.key, e->h.klen, e->h.hash);
        if (o && same_version(o->obj, e->obj)) {
            e->seq = o->seq;
            e->flags = 0;
        } else {
            e->seq = ++seq;
            e->flags = KC__ENT_CHANGED;
        }
    }
    for (size_t i = 0; i < ot->map.cap; i++) {
        kc__ent *o = (kc__ent *)KC__HTAB_AT(&ot->map, i);
        if (!o)
            continue;
        o->flags = kc__htab_find(&nt->map, o->h.key, o->h.klen, o->h.hash) ? 0 : KC__ENT_VANISHED;
        *vanished += o->flags ? 1 : 0;
    }
    return seq;
}

int kc_store_replace(kc_store *s, kc_store_batch *b, const char *list_rv,
                     kc_store_change_cb on_change, void *ud, kc_error *err)
{
    if (!s || !b) {
        kc_store_batch_free(b);
        return kc_error_set(err, KC_EINVAL, "store replace: store and batch are required");
    }
    if (place_pending(b) < 0) {
        kc_store_batch_free(b);
        return kc_error_set(err, KC_ENOMEM, "store replace: out of memory");
    }
    KC__STORE_WRITER_ENTER(s);
    kc__stab *nt = b->tab, *ot = s->tab; /* ot: only this (writer) thread mutates it */
    kc__ent **ents = b->order; /* nt's entries in the order they were added (NULL: replaced) */
    size_t nents = b->n;
    free(b);
    nt->bulk = false;      /* the store's table now: a watch event's entry is malloc'd */
    uint64_t seq = s->seq; /* written only by the writer thread */
    size_t vanished = 0;
    seq = mark(ents, nents, nt, ot, seq, &vanished);
    /* Publish. */
    pthread_mutex_lock(&s->mu);
    kc__store_swap_tab(s, nt);
    s->has_objects = true;
    for (size_t i = 0; vanished && i < ot->map.cap; i++) {
        kc__ent *o = (kc__ent *)KC__HTAB_AT(&ot->map, i);
        if (o && (o->flags & KC__ENT_VANISHED))
            kc__store_tomb_put(s, o->h.key, o->h.klen, o->h.hash, ++seq, NULL, kc_obj_uid(o->obj));
    }
    for (size_t i = 0; s->tombs.n && i < s->tombs.cap; i++) {
        kc__tomb *t = (kc__tomb *)KC__HTAB_AT(&s->tombs, i);
        if (t && kc__htab_find(&nt->map, t->h.key, t->h.klen, t->h.hash)) {
            kc__store_tomb_drop(s, t->h.key, t->h.klen, t->h.hash);
            i--; /* backward shift may have moved another record into slot i */
        }
    }
    s->seq = s->relist_seq = ++seq;
    if (list_rv && s->wm[0] && kc_rv_is_canonical(list_rv) &&
        kc_rv_compare(list_rv, s->wm) == KC_RV_LESS) {
        s->wm[0] = '\0'; /* the server went back: follow it (advanced again just below) */
        s->regress_seq = seq;
    }
    kc__store_advance(s, nt->max_rv);
    kc__store_advance(s, list_rv);
    kc__store_wake_all(s);
    kc__waiter *wk = kc__store_take_posts(s);
    pthread_mutex_unlock(&s->mu);
    kc__store_post(wk);
    /* Notify from the tables no reader can reach any more (nt entries are read-only here). */
    int stop = 0;
    for (size_t i = 0; on_change && !stop && i < nents; i++) {
        ahead(ents, nents, i, &ot->map);
        kc__ent *e = ents[i];
        if (!e || !(e->flags & KC__ENT_CHANGED))
            continue;
        kc__ent *o = (kc__ent *)kc__htab_find(&ot->map, e->h.key, e->h.klen, e->h.hash);
        kc_store_change ch = {o ? KC_STORE_CHANGE_UPDATED : KC_STORE_CHANGE_ADDED,
                              o ? o->obj : NULL, e->obj, false};
        stop = on_change(ud, &ch);
    }
    for (size_t i = 0; on_change && !stop && i < ot->map.cap; i++) {
        kc__ent *o = (kc__ent *)KC__HTAB_AT(&ot->map, i);
        if (!o || !(o->flags & KC__ENT_VANISHED))
            continue;
        kc_store_change ch = {KC_STORE_CHANGE_DELETED, o->obj, NULL, true};
        stop = on_change(ud, &ch);
    }
    /* Lock-free readers may still be probing ot: retire it and wait them out (a relist is rare;
     * readers stay inside for a few dozen ns), so the old objects are released now. */
    kc__store_retire_tab(s, ot);
    free(ents);
    (void)err;
    KC__STORE_WRITER_EXIT(s);
    return 0;
}
