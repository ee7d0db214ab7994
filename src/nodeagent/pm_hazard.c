/*
 * pm_hazard.c — lock-free readers of the node agent cache's snapshots, and safe reclamation of
 * the snapshots they may still read (hazard slots).
 *
 * Publication. The current pod and namespace snapshots (pm_index.c) sit behind two atomic
 * pointers. The writer (one at a time: the caller holds the writer lock) builds a new snapshot
 * aside and stores its pointer (seq_cst); readers never wait for it.
 *
 * Reading. A reader claims one of KC__PM_SLOTS cache-line slots (CAS on its owner word, starting
 * at a per-thread index, so a thread usually finds the slot it used last, uncontended), then for
 * each pointer: load the current snapshot, store it in the slot's hazard word, load the current
 * pointer again; equal → protected (else repeat). It looks up, takes a reference on the entry it
 * returns (entries are reference-counted, pm_entry.c), clears its hazard words and releases the
 * slot. The slot also holds the reader's lookup counters (only its owner adds to them), so
 * readers share no written cache line. All lookups in flight beyond KC__PM_SLOTS wait for a
 * slot to free (other readers, never the writer) — a node agent has a handful of threads.
 *
 * Reclamation. After publishing, the writer appends the previous snapshot to its retired list and
 * frees every retired snapshot that no slot's hazard word holds (seq_cst loads). Why this is safe:
 * all the stores and loads above are seq_cst, so in their single total order either the reader's
 * hazard store comes before the writer's scan — the scan sees it and keeps the snapshot — or after
 * it, and then after the writer's publication too, so the reader's re-check load sees the new
 * pointer and the reader retries without touching the old one. A retired snapshot a reader still
 * protects is freed by a later publication (or by kc__pm_domain_clear, when no reader can be
 * inside). The retired list stays short: at most one snapshot per busy slot plus the new one.
 * The ThreadSanitizer stress test (test_nodeagent_stress) runs readers against a churning writer.
 */
#include "nodeagent/internal.h"

#include <sched.h>
#include <stdlib.h>

static _Atomic unsigned next_thread;
static _Thread_local unsigned my_slot = ~0u;

kc__pm_slot *kc__pm_enter(kc__pm_domain *d, kc__pm_psnap **pods, kc__pm_nsnap **ns)
{
    if (my_slot == ~0u)
        my_slot = atomic_fetch_add_explicit(&next_thread, 1, memory_order_relaxed);
    kc__pm_slot *s = NULL;
    for (unsigned i = 0; !s; i++) {
        kc__pm_slot *c = &d->slots[(my_slot + i) % KC__PM_SLOTS];
        int free_ = 0;
        if (atomic_load_explicit(&c->owner, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong_explicit(&c->owner, &free_, 1, memory_order_acquire,
                                                    memory_order_relaxed))
            s = c;
        else if (i % KC__PM_SLOTS == KC__PM_SLOTS - 1)
            sched_yield(); /* every slot busy: other readers, not the writer */
    }
    kc__pm_psnap *p;
    do {
        p = atomic_load(&d->pods);
        atomic_store(&s->hp_pods, p);
    } while (p != atomic_load(&d->pods));
    kc__pm_nsnap *n;
    do {
        n = atomic_load(&d->ns);
        atomic_store(&s->hp_ns, n);
    } while (n != atomic_load(&d->ns));
    *pods = p;
    *ns = n;
    return s;
}

void kc__pm_leave(kc__pm_slot *s)
{
    atomic_store(&s->hp_pods, NULL);
    atomic_store(&s->hp_ns, NULL);
    atomic_store_explicit(&s->owner, 0, memory_order_release);
}

static bool protected_pods(kc__pm_domain *d, kc__pm_psnap *p)
{
    for (int i = 0; i < KC__PM_SLOTS; i++)
        if (atomic_load(&d->slots[i].hp_pods) == p)
            return true;
    return false;
}

static bool protected_ns(kc__pm_domain *d, kc__pm_nsnap *n)
{
    for (int i = 0; i < KC__PM_SLOTS; i++)
        if (atomic_load(&d->slots[i].hp_ns) == n)
            return true;
    return false;
}

/* Append old to the retired list; on out of memory wait (spin) until no slot holds it: a reader
 * holds a slot for a lookup's duration only. */
static void retire_pods(kc__pm_domain *d, kc__pm_psnap *old)
{
    if (!old)
        return;
    if (kc__grow(&d->old_pods, &d->cap_old_pods, d->n_old_pods + 1, sizeof old, 8) == 0) {
        d->old_pods[d->n_old_pods++] = old;
        return;
    }
    while (protected_pods(d, old))
        sched_yield();
    kc__pm_psnap_free(old);
}

static void retire_ns(kc__pm_domain *d, kc__pm_nsnap *old)
{
    if (!old)
        return;
    if (kc__grow(&d->old_ns, &d->cap_old_ns, d->n_old_ns + 1, sizeof old, 8) == 0) {
        d->old_ns[d->n_old_ns++] = old;
        return;
    }
    while (protected_ns(d, old))
        sched_yield();
    kc__pm_nsnap_free(old);
}

void kc__pm_publish(kc__pm_domain *d, kc__pm_psnap *pods, kc__pm_nsnap *ns)
{
    if (pods)
        retire_pods(d, atomic_exchange(&d->pods, pods));
    if (ns)
        retire_ns(d, atomic_exchange(&d->ns, ns));
    size_t k = 0;
    for (size_t i = 0; i < d->n_old_pods; i++) {
        if (protected_pods(d, d->old_pods[i]))
            d->old_pods[k++] = d->old_pods[i];
        else
            kc__pm_psnap_free(d->old_pods[i]);
    }
    d->n_old_pods = k;
    k = 0;
    for (size_t i = 0; i < d->n_old_ns; i++) {
        if (protected_ns(d, d->old_ns[i]))
            d->old_ns[k++] = d->old_ns[i];
        else
            kc__pm_nsnap_free(d->old_ns[i]);
    }
    d->n_old_ns = k;
}

void kc__pm_domain_clear(kc__pm_domain *d)
{
    for (size_t i = 0; i < d->n_old_pods; i++)
        kc__pm_psnap_free(d->old_pods[i]);
    for (size_t i = 0; i < d->n_old_ns; i++)
        kc__pm_nsnap_free(d->old_ns[i]);
    free(d->old_pods);
    free(d->old_ns);
    kc__pm_psnap_free(atomic_exchange(&d->pods, NULL));
    kc__pm_nsnap_free(atomic_exchange(&d->ns, NULL));
    d->old_pods = NULL;
    d->old_ns = NULL;
    d->n_old_pods = d->n_old_ns = d->cap_old_pods = d->cap_old_ns = 0;
}
