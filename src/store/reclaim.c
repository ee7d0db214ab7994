/*
 * store/reclaim.c — the writer's side of the store's epoch-based reclamation: what lock-free
 * readers may still hold is retired, not freed, and released after a grace period.
 *
 * A kc_store's Get takes no lock (store.c): a reader announces itself in readers[epoch & 1]
 * (seq_cst increment, then re-checks the epoch — the Dekker pair with the writer's seq_cst epoch
 * flip and counter load) for the few dozen ns of its probe. The writer hands everything such a
 * reader could still hold — replaced slot arrays, removed entries, one extra reference to each
 * replaced or removed object, relisted-away tables — to kc__store_retire (the store's
 * kc__retirer, core/htab.h), which files it under the current epoch's parity. An item retired
 * during epoch e is released once the readers of epoch e have drained:
 *   - after each write, kc__store_reclaim (never blocking) frees the items of epoch e-1 and flips
 *     to e+1 when the e-1 counter is zero: all of epoch e-1's readers have left, and readers that
 *     enter from now on read the table after the unlink;
 *   - a relist (kc__store_retire_tab) and a retire that cannot grow its list wait for both
 *     parities to drain (kc__store_reclaim_all), so the old table is released at once.
 * The writer runs all of this with no lock of its own: it is the single writer, under s->mu or
 * (relist) alone. Readers never block the writer and never wait on the mutex while announced.
 */
#include "store/internal.h"

#include <sched.h>
#include <stdlib.h>

static void release_one(const kc__retired *r)
{
    if (r->kind == KC__RETIRE_OBJ)
        kc_obj_unref(r->p);
    else if (r->kind == KC__RETIRE_STAB)
        kc__stab_free(r->p);
    else if (r->kind == KC__RETIRE_ENT)
        kc__ent_free(r->p);
    else
        free(r->p);
}

static void release_list(kc__retire_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        release_one(&l->v[i]);
    l->n = 0;
}

/* Block until every reader announced before this call has left (writer; no lock needed). */
static void wait_readers(kc_store *s)
{
    for (int k = 0; k < 2; k++) {
        unsigned e = atomic_load_explicit(&s->epoch, memory_order_relaxed);
        atomic_store_explicit(&s->epoch, e + 1, memory_order_seq_cst);
        for (unsigned spin = 0;
             atomic_load_explicit(&s->readers[e & 1].n, memory_order_seq_cst) != 0; spin++)
            if (spin > 64)
                sched_yield();
    }
}

/* Writer: release everything retired so far (blocking grace period). */
void kc__store_reclaim_all(kc_store *s)
{
    if (!s->pend[0].n && !s->pend[1].n)
        return;
    wait_readers(s);
    release_list(&s->pend[0]);
    release_list(&s->pend[1]);
}

/* Writer, after a write: free epoch e-1's items and move to e+1 when e-1's readers are gone. */
void kc__store_reclaim(kc_store *s)
{
    if (!s->pend[0].n && !s->pend[1].n)
        return;
    unsigned e = atomic_load_explicit(&s->epoch, memory_order_relaxed);
    if (atomic_load_explicit(&s->readers[(e + 1) & 1].n, memory_order_seq_cst) != 0)
        return; /* a reader of epoch e-1 is still inside: try again after the next write */
    release_list(&s->pend[(e + 1) & 1]);
    atomic_store_explicit(&s->epoch, e + 1, memory_order_seq_cst);
}

void kc__store_retire(kc__retirer *r, int kind, void *p)
{
    kc_store *s = (kc_store *)((char *)r - offsetof(kc_store, retirer));
    kc__retire_list *l = &s->pend[atomic_load_explicit(&s->epoch, memory_order_relaxed) & 1];
    if (kc__grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v), 16) < 0) {
        /* cannot defer: wait out the readers, then free now */
        kc__store_reclaim_all(s);
        kc__retired one = {kind, p};
        wait_readers(s);
        release_one(&one);
        return;
    }
    l->v[l->n++] = (kc__retired){kind, p};
}

void kc__store_retire_tab(kc_store *s, kc__stab *t)
{
    t->map.ret = NULL;
    kc__store_retire(&s->retirer, KC__RETIRE_STAB, t);
    kc__store_reclaim_all(s);
}

/* kc_store_free: no call in flight, so no reader: release every retired item and the lists. */
void kc__store_release_retired(kc_store *s)
{
    release_list(&s->pend[0]);
    release_list(&s->pend[1]);
    free(s->pend[0].v);
    free(s->pend[1].v);
}
