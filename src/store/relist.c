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
    char key[KC__KEY_MAX];
    int kl = kc__store_key(kc_obj_namespace(obj), kc_obj_name(obj), key, sizeof(key));
    if (kl < 0)
        return kc_error_set(err, KC_EINVAL, "store: object without a name or key too long");
    uint64_t h = kc__hash(key, (size_t)kl);
    kc__ent *e = (kc__ent *)kc__htab_find(&b->tab->map, key, (size_t)kl, h);
    int rc;
    if (e) {
        kc_obj *old = NULL;
        rc = kc__stab_set(b->tab, b->s->ixs, e, obj, &old);
        kc_obj_unref(old);
    } else {
        rc = kc__stab_insert(b->tab, b->s->ixs, key, (size_t)kl, h, obj, 0, NULL);
    }
    if (rc < 0)
        return kc_error_set(err, rc, "store: out of memory");
    const char *rv = kc_obj_resource_version(obj);
    if (kc_rv_is_canonical(rv) && strlen(rv) < KC_STORE_RV_MAX &&
        (!b->tab->max_rv[0] || kc_rv_compare(rv, b->tab->max_rv) == KC_RV_GREATER))
        strcpy(b->tab->max_rv, rv);
    return 0;
}

size_t kc_store_batch_len(const kc_store_batch *b)
{
    return b ? b->tab->map.n : 0;
}

void kc_store_batch_free(kc_store_batch *b)
{
    if (!b)
        return;
    kc__stab_free(b->tab);
    free(b);
}

static bool same_version(const kc_obj *a, const kc_obj *b)
{
    return a == b || strcmp(kc_obj_resource_version(a), kc_obj_resource_version(b)) == 0;
}

int kc_store_replace(kc_store *s, kc_store_batch *b, const char *list_rv,
                     kc_store_change_cb on_change, void *ud, kc_error *err)
{
    if (!s || !b) {
        kc_store_batch_free(b);
        return kc_error_set(err, KC_EINVAL, "store replace: store and batch are required");
    }
    KC__STORE_WRITER_ENTER(s);
    kc__stab *nt = b->tab, *ot = s->tab; /* ot: only this (writer) thread mutates it */
    free(b);
    nt->bulk = false;      /* the store's table now: a watch event's entry is malloc'd */
    uint64_t seq = s->seq; /* written only by the writer thread */
    /* Pass 1 (unpublished): sequence numbers for changed keys, marks on vanished ones. */
    for (size_t i = 0; i < nt->map.cap; i++) {
        kc__ent *e = (kc__ent *)KC__HTAB_AT(&nt->map, i);
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
    size_t vanished = 0;
    for (size_t i = 0; i < ot->map.cap; i++) {
        kc__ent *o = (kc__ent *)KC__HTAB_AT(&ot->map, i);
        if (!o)
            continue;
        o->flags = kc__htab_find(&nt->map, o->h.key, o->h.klen, o->h.hash) ? 0 : KC__ENT_VANISHED;
        vanished += o->flags ? 1 : 0;
    }
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
    for (size_t i = 0; on_change && !stop && i < nt->map.cap; i++) {
        kc__ent *e = (kc__ent *)KC__HTAB_AT(&nt->map, i);
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
    (void)err;
    KC__STORE_WRITER_EXIT(s);
    return 0;
}
