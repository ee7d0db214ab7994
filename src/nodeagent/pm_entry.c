/*
 * pm_entry.c — the node agent cache's entries: immutable, reference-counted records of one pod
 * (or tombstone) and one namespace.
 *
 * A pod entry is small: the hashes its indexes use, the tombstone's times, and references to the
 * pod's identity object — which carries the pod's record (pm_rec.c: every kept string, packed,
 * NUL-terminated) — and to the key dictionary the record's ids name. The informer stores that
 * same object, so a pod is held once. Made by the writer when the informer event arrives
 * (enrich-semantics CI1/CI2), so the lookup path never parses JSON: it hashes the query's key,
 * compares bytes and takes a reference. The container accessors here read the record's slots
 * directly (no copy); the other accessors are in pm_access.c. Entries never change after
 * construction (but for the projected kc_obj kc_podmeta_pod_obj makes on its first call): a change
 * of the pod is a new entry.
 */
#include "json/obj_internal.h"
#include "nodeagent/internal.h"

#include <stdlib.h>
#include <string.h>

uint64_t kc__pm_hash(const char *s, size_t n, uint64_t h)
{
    /* FNV-1a, 64-bit; keys are short (names, uids, 64-hex ids) */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

#define PM_SEED 0xcbf29ce484222325ULL

uint64_t kc__pm_hash_name(const char *ns, const char *name)
{
    uint64_t h = kc__pm_hash(ns, strlen(ns), PM_SEED);
    h = kc__pm_hash("/", 1, h);
    return kc__pm_hash(name, strlen(name), h);
}

uint64_t kc__pm_hash_cid(const char *id, size_t n)
{
    uint64_t h = kc__pm_hash(id, n, PM_SEED);
    return h ? h : 1;
}

const char *kc__pm_strip_runtime(const char *cid)
{
    const char *p = strstr(cid, "://");
    return p ? p + 3 : cid;
}

kc_podmeta_pod *kc__pm_pod_new(kc_obj *obj, kc__pm_dict *d, bool deleted, int64_t deleted_at_ms,
                               uint64_t expires_ns)
{
    const kc__pm_rec *r = kc__obj_ext(obj);
    kc_podmeta_pod *p = r ? calloc(1, sizeof *p + r->n_cont * sizeof(uint64_t)) : NULL;
    if (!p)
        return NULL;
    atomic_init(&p->refs, 1);
    atomic_init(&p->full, NULL);
    p->n_cont = r->n_cont;
    p->obj = kc_obj_ref(obj);
    p->dict = kc__pm_dict_ref(d);
    p->deleted = deleted;
    p->deleted_at_ms = deleted ? deleted_at_ms : 0;
    p->expires_ns = deleted ? expires_ns : 0;
    p->h_name = kc__pm_hash_name(kc_obj_namespace(obj), kc_obj_name(obj));
    const char *uid = kc_obj_uid(obj);
    p->h_uid = kc__pm_hash(uid, strlen(uid), PM_SEED);
    for (uint32_t c = 0; c < p->n_cont; c++) { /* the index hashes them at every rebuild */
        size_t idn;
        const char *id = kc__pm_cont_id(p, c, &idn);
        p->h_cid[c] = idn ? kc__pm_hash_cid(id, idn) : 0;
    }
    return p;
}

const char *kc__pm_cont_str(const kc_podmeta_pod *p, uint32_t c, int f, size_t *len)
{
    const kc__pm_rec *r = kc__pm_rec_of(p);
    return kc__pm_rec_str(r, p->dict, kc__pm_rec_cont(r, c) + (size_t)f, len, NULL);
}

const char *kc__pm_cont_id(const kc_podmeta_pod *p, uint32_t c, size_t *len)
{
    const char *s = kc__pm_cont_str(p, c, 3, len); /* NUL-terminated: strstr stops within it */
    const char *id = kc__pm_strip_runtime(s);
    *len -= (size_t)(id - s);
    return id;
}

size_t kc__pm_pod_heap(const kc_podmeta_pod *p)
{
    const kc_obj *full = atomic_load_explicit(&p->full, memory_order_acquire);
    return sizeof *p + p->n_cont * sizeof(uint64_t) + kc_obj_heap_size(p->obj) +
           (full ? kc_obj_heap_size(full) : 0);
}

kc_podmeta_ns *kc__pm_ns_new(kc_obj *obj, bool deleted)
{
    kc_podmeta_ns *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    atomic_init(&n->refs, 1);
    n->obj = kc_obj_ref(obj);
    n->deleted = deleted;
    const char *name = kc_obj_name(obj);
    n->h_name = kc__pm_hash(name, strlen(name), PM_SEED);
    n->heap = sizeof *n;
    return n;
}

/* ---- the public accessors ---------------------------------------------------------------------
 */

kc_podmeta_pod *kc_podmeta_pod_ref(kc_podmeta_pod *pod)
{
    if (pod)
        atomic_fetch_add_explicit(&pod->refs, 1, memory_order_relaxed);
    return pod;
}

void kc_podmeta_pod_unref(kc_podmeta_pod *pod)
{
    if (pod && atomic_fetch_sub_explicit(&pod->refs, 1, memory_order_acq_rel) == 1) {
        kc_obj_unref(pod->obj);
        kc_obj_unref(atomic_load_explicit(&pod->full, memory_order_relaxed));
        kc__pm_dict_unref(pod->dict);
        free(pod);
    }
}

kc_podmeta_ns *kc_podmeta_ns_ref(kc_podmeta_ns *ns)
{
    if (ns)
        atomic_fetch_add_explicit(&ns->refs, 1, memory_order_relaxed);
    return ns;
}

void kc_podmeta_ns_unref(kc_podmeta_ns *ns)
{
    if (ns && atomic_fetch_sub_explicit(&ns->refs, 1, memory_order_acq_rel) == 1) {
        kc_obj_unref(ns->obj);
        free(ns);
    }
}

bool kc_podmeta_pod_deleted(const kc_podmeta_pod *pod)
{
    return pod && pod->deleted;
}

int64_t kc_podmeta_pod_deleted_at_ms(const kc_podmeta_pod *pod)
{
    return pod ? pod->deleted_at_ms : 0;
}

size_t kc_podmeta_pod_container_count(const kc_podmeta_pod *pod)
{
    return pod ? pod->n_cont : 0;
}

int(kc_podmeta_pod_container)(const kc_podmeta_pod *pod, size_t i, kc_podmeta_container *ret,
                              size_t ret_size)
{
    if (!pod || !ret)
        return KC_EINVAL;
    if (ret_size > sizeof(kc_podmeta_container)) {
        memset(ret, 0, ret_size);
        return KC_EUNSUPPORTED; /* a newer header's struct */
    }
    if (i >= pod->n_cont)
        return KC_ENOTFOUND;
    const kc__pm_rec *r = kc__pm_rec_of(pod);
    const char *s[4];
    size_t n;
    for (int f = 0; f < 4; f++)
        s[f] = kc__pm_cont_str(pod, (uint32_t)i, f, &n);
    const uint8_t *kinds = kc__pm_rec_flags(r) + r->n_own;
    kc_podmeta_container out = {s[0],
                                s[1],
                                s[2],
                                s[3],
                                kc__pm_cont_id(pod, (uint32_t)i, &n),
                                (kc_podmeta_container_kind)kinds[i]};
    kc__result_copy(ret, ret_size, &out, sizeof out);
    return 0;
}

static bool span_eq(const char *s, size_t n, const char *z)
{
    return strlen(z) == n && memcmp(s, z, n) == 0;
}

int kc_podmeta_pod_find_container(const kc_podmeta_pod *pod, const char *name, const char *id)
{
    if (!pod)
        return -1;
    const char *bare = id ? kc__pm_strip_runtime(id) : NULL;
    for (uint32_t i = 0; i < pod->n_cont; i++) {
        size_t n;
        const char *s = kc__pm_cont_str(pod, i, 0, &n);
        if (name && !span_eq(s, n, name))
            continue;
        s = kc__pm_cont_id(pod, i, &n);
        if (bare && (!n || !span_eq(s, n, bare)))
            continue;
        return (int)i;
    }
    return -1;
}

const kc_obj *kc_podmeta_ns_obj(const kc_podmeta_ns *ns)
{
    return ns ? ns->obj : NULL;
}
