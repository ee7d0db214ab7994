/*
 * pm_index.c — the node agent cache's indexes: immutable snapshots, each one allocation, built by
 * the writer from its lists of entries and never changed after (pm_hazard.c publishes them).
 *
 * Pod snapshot: the entries (live pods, then tombstones; one reference each) and three open-
 * addressing hash tables of 8-byte slots (the upper half of the 64-bit hash — the lower bits pick
 * the slot —, a 24-bit entry index, an 8-bit container index) with linear probing, at most half
 * full: by "namespace/name", by uid, and by container id without its runtime prefix
 * (enrich-semantics CA2, CI2). A key may be found several times (a live pod and the tombstones of
 * earlier pods of the same name; a uid in a tombstone and, rarely, a live entry): a lookup visits
 * every slot of its probe run with the right hash and picks (DP4, DP5, CA6):
 *   - container_id: the pod with a container of that id whose other query keys (uid, ns/name)
 *     agree, a live one before a tombstone; when no container has that id (the status not yet
 *     updated, and no other pod has it either), the uid if given, else the LIVE pod of that
 *     ns/name — a tombstone's statuses are final, so an id it lacks is not its pod;
 *   - uid: the entry of that uid (agreeing with ns/name if given);
 *   - ns/name: the live pod, else the newest tombstone.
 * Building is O(entries): a node holds ~110 pods plus its tombstones, and the writer rebuilds per
 * event. Namespaces have a snapshot of their own (one table by name), rebuilt only on namespace
 * events and tombstone sweeps, so pod events do not copy a cluster's namespaces.
 */
#include "nodeagent/internal.h"

#include <stdlib.h>
#include <string.h>

/* A table slot, 8 bytes: the hash's upper half (its lower bits chose the slot), the entry index
 * + 1 (0 = empty) and the container index (NO_CONT for the name and uid tables). */
typedef struct tslot {
    uint32_t h;
    uint32_t ent : 24;
    uint32_t cont : 8;
} tslot;

#define NO_CONT      0xffu
#define MAX_ENTS     0xfffffeu /* entries of one snapshot (the slot's 24 bits) */
#define HI(h)        ((uint32_t)((h) >> 32))
#define SLOT_CONT(t) ((t).cont == NO_CONT ? -1 : (int)(t).cont)

struct kc__pm_psnap {
    size_t n, heap;
    uint32_t m_name, m_uid, m_cid; /* capacity - 1 */
    tslot *t_name, *t_uid, *t_cid;
    kc_podmeta_pod *ents[];
};

struct kc__pm_nsnap {
    size_t n, heap;
    uint32_t m;
    tslot *t;
    kc_podmeta_ns *ents[];
};

static uint32_t cap_for(size_t n)
{
    uint32_t c = 8;
    while (c < 2 * n)
        c <<= 1;
    return c;
}

static void put(tslot *t, uint32_t mask, uint64_t h, size_t ent, int cont)
{
    uint32_t i = (uint32_t)h & mask;
    while (t[i].ent)
        i = (i + 1) & mask;
    t[i] = (tslot){HI(h), (uint32_t)ent + 1, cont < 0 ? NO_CONT : (uint32_t)cont};
}

static const uint64_t SEED = 0xcbf29ce484222325ULL;

kc__pm_psnap *kc__pm_psnap_new(kc_podmeta_pod *const *live, size_t n_live,
                               kc_podmeta_pod *const *tombs, size_t n_tombs)
{
    size_t n = n_live + n_tombs, n_cid = 0;
    if (n > MAX_ENTS)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const kc_podmeta_pod *p = i < n_live ? live[i] : tombs[i - n_live];
        for (uint32_t c = 0; c < p->n_cont; c++)
            n_cid += p->h_cid[c] != 0;
    }
    uint32_t cn = cap_for(n), cc = cap_for(n_cid);
    size_t head = sizeof(kc__pm_psnap) + n * sizeof(kc_podmeta_pod *);
    head = (head + 7) & ~(size_t)7;
    size_t total = head + (2 * (size_t)cn + cc) * sizeof(tslot);
    kc__pm_psnap *s = calloc(1, total);
    if (!s)
        return NULL;
    s->n = n;
    s->heap = total;
    s->m_name = s->m_uid = cn - 1;
    s->m_cid = cc - 1;
    s->t_name = (tslot *)((char *)s + head);
    s->t_uid = s->t_name + cn;
    s->t_cid = s->t_uid + cn;
    for (size_t i = 0; i < n; i++) {
        kc_podmeta_pod *p = i < n_live ? live[i] : tombs[i - n_live];
        s->ents[i] = kc_podmeta_pod_ref(p);
        put(s->t_name, s->m_name, p->h_name, i, -1);
        put(s->t_uid, s->m_uid, p->h_uid, i, -1);
        for (uint32_t c = 0; c < p->n_cont; c++)
            if (p->h_cid[c])
                put(s->t_cid, s->m_cid, p->h_cid[c], i, (int)c);
    }
    return s;
}

void kc__pm_psnap_free(kc__pm_psnap *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        kc_podmeta_pod_unref(s->ents[i]);
    free(s);
}

size_t kc__pm_psnap_heap(const kc__pm_psnap *s)
{
    return s ? s->heap : 0;
}

kc__pm_nsnap *kc__pm_nsnap_new(kc_podmeta_ns *const *ents, size_t n)
{
    if (n > MAX_ENTS)
        return NULL;
    uint32_t cn = cap_for(n);
    size_t head = sizeof(kc__pm_nsnap) + n * sizeof(kc_podmeta_ns *);
    head = (head + 7) & ~(size_t)7;
    size_t total = head + (size_t)cn * sizeof(tslot);
    kc__pm_nsnap *s = calloc(1, total);
    if (!s)
        return NULL;
    s->n = n;
    s->heap = total;
    s->m = cn - 1;
    s->t = (tslot *)((char *)s + head);
    for (size_t i = 0; i < n; i++) {
        s->ents[i] = kc_podmeta_ns_ref(ents[i]);
        put(s->t, s->m, ents[i]->h_name, i, -1);
    }
    return s;
}

void kc__pm_nsnap_free(kc__pm_nsnap *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        kc_podmeta_ns_unref(s->ents[i]);
    free(s);
}

size_t kc__pm_nsnap_heap(const kc__pm_nsnap *s)
{
    return s ? s->heap : 0;
}

/* ---- lookup ------------------------------------------------------------------------------- */

typedef struct want {
    const char *ns, *name, *uid, *cid; /* NULL when not given */
    size_t cid_len;
    bool live_only;
    bool cid_seen; /* set by probe: some entry has that container id */
} want;

/* The query's other keys agree with p. */
static bool agrees(const kc_podmeta_pod *p, const want *w)
{
    if (w->uid && strcmp(kc_obj_uid(p->obj), w->uid) != 0)
        return false;
    if (w->name &&
        (strcmp(kc_obj_name(p->obj), w->name) != 0 || strcmp(kc_obj_namespace(p->obj), w->ns) != 0))
        return false;
    return !(w->live_only && p->deleted);
}

/* p better than best: live first, then the newest tombstone. */
static bool better(const kc_podmeta_pod *p, const kc_podmeta_pod *best)
{
    if (!best)
        return true;
    if (best->deleted != p->deleted)
        return !p->deleted;
    return p->deleted_at_ms > best->deleted_at_ms;
}

enum which { BY_NAME, BY_UID, BY_CID };

static kc_podmeta_pod *probe(const kc__pm_psnap *s, enum which k, want *w, int *cont)
{
    const tslot *t = k == BY_NAME ? s->t_name : k == BY_UID ? s->t_uid : s->t_cid;
    uint32_t mask = k == BY_NAME ? s->m_name : k == BY_UID ? s->m_uid : s->m_cid;
    uint64_t h = k == BY_NAME  ? kc__pm_hash_name(w->ns, w->name)
                 : k == BY_UID ? kc__pm_hash(w->uid, strlen(w->uid), SEED)
                               : kc__pm_hash_cid(w->cid, w->cid_len);
    kc_podmeta_pod *best = NULL;
    int best_c = -1;
    for (uint32_t i = (uint32_t)h & mask; t[i].ent; i = (i + 1) & mask) {
        if (t[i].h != HI(h))
            continue;
        kc_podmeta_pod *p = s->ents[t[i].ent - 1];
        if (k == BY_CID) {
            size_t idn;
            if (p->h_cid[t[i].cont] != h) /* the whole hash first */
                continue;
            const char *id = kc__pm_cont_id(p, t[i].cont, &idn);
            if (idn != w->cid_len || memcmp(id, w->cid, idn) != 0)
                continue;
        }
        w->cid_seen = true;
        if (!agrees(p, w) || !better(p, best))
            continue;
        best = p;
        best_c = SLOT_CONT(t[i]);
    }
    *cont = best_c;
    return best;
}

static const char *given(const char *s)
{
    return s && *s ? s : NULL;
}

kc_podmeta_pod *kc__pm_psnap_find(const kc__pm_psnap *s, const kc_podmeta_query *q, int *cont)
{
    want w = {given(q->ns), given(q->name), given(q->uid), given(q->container_id), 0, false, false};
    if (!w.ns || !w.name)
        w.ns = w.name = NULL;
    *cont = -1;
    if (!s)
        return NULL;
    if (w.cid) {
        w.cid = kc__pm_strip_runtime(w.cid);
        w.cid_len = strlen(w.cid);
        kc_podmeta_pod *p = probe(s, BY_CID, &w, cont);
        if (p || w.cid_seen || (!w.uid && !w.name))
            return p;       /* an id another pod has names that pod, not this query's */
        w.live_only = true; /* the id is not in any status: not a tombstone's (DP5) */
    }
    int ignored;
    if (w.uid)
        return probe(s, BY_UID, &w, &ignored);
    if (w.name)
        return probe(s, BY_NAME, &w, &ignored);
    return NULL;
}

kc_podmeta_ns *kc__pm_nsnap_find(const kc__pm_nsnap *s, const char *name)
{
    if (!s || !name)
        return NULL;
    uint64_t h = kc__pm_hash(name, strlen(name), SEED);
    kc_podmeta_ns *best = NULL;
    for (uint32_t i = (uint32_t)h & s->m; s->t[i].ent; i = (i + 1) & s->m) {
        kc_podmeta_ns *n = s->ents[s->t[i].ent - 1];
        if (s->t[i].h == HI(h) && strcmp(kc_obj_name(n->obj), name) == 0 && (!best || !n->deleted))
            best = n;
    }
    return best;
}
