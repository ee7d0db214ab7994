/*
 * pm_entry.c — the node agent cache's entries: immutable, reference-counted records of one pod
 * (or tombstone) and one namespace.
 *
 * A pod entry is ONE allocation: the header and the container table (kc__pm_cont: per container
 * the spans of its status name, image, imageID and containerID, and the length of containerID's
 * "<runtime>://"). A span points into the projected kc_obj's own text (the entry holds a
 * reference), so a string is stored once; only a string with escapes (never seen from a real
 * API server) is unescaped into the entry's tail. They are found once, by the writer, when the
 * informer event arrives (enrich-semantics CI1/CI2), so the lookup path never parses JSON: it
 * hashes the query's key, compares bytes and takes a reference. The NUL-terminated copies that
 * kc_podmeta_pod_container hands out are made on its first call for an entry (published with one
 * compare-and-swap, freed with the entry): lookups and the enricher never need them. The
 * projected kc_obj carries the rest (labels, annotations, owner, IPs) for the agent to read with
 * the kc_obj accessors. Entries never change after construction (but for that copy): a change of
 * the pod is a new entry.
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

const char *kc__pm_strip_runtime(const char *cid)
{
    const char *p = strstr(cid, "://");
    return p ? p + 3 : cid;
}

/* The containers' spans, collected before the entry is sized: strings with escapes are copied
 * (unescaped) to tail, the entry's tail-to-be. */
typedef struct collect {
    const char *text; /* the object's stored text */
    size_t text_len;
    kc__buf tail;
    size_t n;
    kc__pm_cont cont[255]; /* the index's slots hold a container index in 8 bits, 0xff = none */
} collect;

static const char *const FIELDS[4] = {"name", "image", "imageID", "containerID"};

/* The span of s (sn bytes) into *off and *len: in the object's text when s is there, else a copy.
 */
static int span_of(collect *c, const char *s, size_t sn, uint32_t *off, uint32_t *len)
{
    *len = (uint32_t)sn;
    if (s >= c->text && s + sn <= c->text + c->text_len) {
        *off = (uint32_t)(s - c->text);
        return 0;
    }
    if (c->tail.len + sn >= KC__PM_TAIL)
        return KC_ETOOLARGE;
    *off = KC__PM_TAIL | (uint32_t)c->tail.len;
    return kc__buf_append(&c->tail, s, sn);
}

/* "<runtime>://" at the start of the sn bytes at s: its length, else 0 (kc__pm_strip_runtime). */
static uint32_t runtime_len(const char *s, size_t sn)
{
    for (size_t i = 0; i + 3 <= sn; i++)
        if (s[i] == ':' && s[i + 1] == '/' && s[i + 2] == '/')
            return (uint32_t)(i + 3);
    return 0;
}

/* One status element (an object): its four strings, "" when absent or not a string. */
static int collect_one(collect *c, const kc_obj_iter *el, kc__pm_cont *ct)
{
    kc_obj_iter *m = NULL;
    if (kc__obj_iter_child(el, &m, NULL))
        return 1; /* not an object: skipped */
    int r = 0;
    while (!r && kc_obj_iter_next(m) == 1) {
        size_t kn;
        const char *k = kc_obj_iter_key(m, &kn);
        for (int f = 0; f < 4 && !r; f++) {
            if (!k || strlen(FIELDS[f]) != kn || memcmp(k, FIELDS[f], kn) != 0)
                continue;
            const char *s;
            size_t sn;
            if (kc_obj_iter_string(m, &s, &sn) == 0 && !memchr(s, 0, sn)) {
                r = span_of(c, s, sn, &ct->off[f], &ct->len[f]);
                if (!r && f == 3)
                    ct->id_skip = runtime_len(s, sn);
            }
        }
    }
    kc_obj_iter_free(m);
    return r;
}

static int collect_kind(collect *c, const kc_obj *obj, const char *ptr,
                        kc_podmeta_container_kind kind)
{
    kc_obj_iter *it = NULL;
    if (kc_obj_iter_new(obj, ptr, &it, NULL))
        return 0; /* absent (or not an array): no containers of that kind */
    int r = 0;
    while (!r && c->n < sizeof c->cont / sizeof c->cont[0] && kc_obj_iter_next(it) == 1) {
        if (kc_obj_iter_type(it) != KC_JSON_OBJECT)
            continue;
        kc__pm_cont *ct = &c->cont[c->n];
        memset(ct, 0, sizeof *ct);
        ct->kind = kind;
        r = collect_one(c, it, ct);
        if (r == 1)
            r = 0;
        else if (!r)
            c->n++;
    }
    kc_obj_iter_free(it);
    return r;
}

kc_podmeta_pod *kc__pm_pod_new(kc_obj *obj, bool deleted, int64_t deleted_at_ms,
                               uint64_t expires_ns)
{
    collect *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    c->text = kc_obj_json(obj, &c->text_len);
    c->n = 0;
    kc__buf_init(&c->tail, 0);
    int r = collect_kind(c, obj, "/status/containerStatuses", KC_PODMETA_CONTAINER);
    if (!r)
        r = collect_kind(c, obj, "/status/initContainerStatuses", KC_PODMETA_INIT);
    if (!r)
        r = collect_kind(c, obj, "/status/ephemeralContainerStatuses", KC_PODMETA_EPHEMERAL);
    size_t head = sizeof(kc_podmeta_pod) + c->n * sizeof(kc__pm_cont);
    kc_podmeta_pod *p = r ? NULL : malloc(head + c->tail.len);
    if (!p) {
        kc__buf_free(&c->tail);
        free(c);
        return NULL;
    }
    memset(p, 0, sizeof *p);
    atomic_init(&p->refs, 1);
    atomic_init(&p->cstrs, NULL);
    p->n_cont = (uint32_t)c->n;
    p->obj = kc_obj_ref(obj);
    p->deleted = deleted;
    p->deleted_at_ms = deleted ? deleted_at_ms : 0;
    p->expires_ns = deleted ? expires_ns : 0;
    p->h_name = kc__pm_hash_name(kc_obj_namespace(obj), kc_obj_name(obj));
    const char *uid = kc_obj_uid(obj);
    p->h_uid = kc__pm_hash(uid, strlen(uid), PM_SEED);
    p->heap = (uint32_t)(head + c->tail.len);
    memcpy(p->cont, c->cont, c->n * sizeof(kc__pm_cont));
    if (c->tail.len)
        memcpy((char *)p + head, c->tail.data, c->tail.len);
    kc__buf_free(&c->tail);
    free(c);
    return p;
}

const char *kc__pm_cont_str(const kc_podmeta_pod *p, uint32_t c, int f, size_t *len)
{
    const kc__pm_cont *ct = &p->cont[c];
    *len = ct->len[f];
    if (ct->off[f] & KC__PM_TAIL)
        return (const char *)&p->cont[p->n_cont] + (ct->off[f] & ~KC__PM_TAIL);
    return kc_obj_json(p->obj, NULL) + ct->off[f];
}

const char *kc__pm_cont_id(const kc_podmeta_pod *p, uint32_t c, size_t *len)
{
    const char *s = kc__pm_cont_str(p, c, 3, len);
    *len -= p->cont[c].id_skip;
    return s + p->cont[c].id_skip;
}

size_t kc__pm_pod_heap(const kc_podmeta_pod *p)
{
    const kc__pm_cstrs *cs = atomic_load_explicit(&p->cstrs, memory_order_acquire);
    return p->heap + (cs ? cs->heap : 0);
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
        free(atomic_load_explicit(&pod->cstrs, memory_order_relaxed));
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

const kc_obj *kc_podmeta_pod_obj(const kc_podmeta_pod *pod)
{
    return pod ? pod->obj : NULL;
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

/* The containers' NUL-terminated strings: made once (the first caller's copy is published; a
 * racing one frees its own), freed with the entry. NULL on out of memory. */
static const kc__pm_cstrs *cstrs(kc_podmeta_pod *pod)
{
    kc__pm_cstrs *cs = atomic_load_explicit(&pod->cstrs, memory_order_acquire);
    if (cs)
        return cs;
    size_t n = 4 * (size_t)pod->n_cont, text = 0, len;
    for (uint32_t c = 0; c < pod->n_cont; c++)
        for (int f = 0; f < 4; f++)
            text += pod->cont[c].len[f] + 1;
    size_t heap = sizeof *cs + n * sizeof(char *) + text;
    cs = malloc(heap);
    if (!cs)
        return NULL;
    cs->heap = heap;
    char *d = (char *)&cs->s[n];
    for (uint32_t c = 0; c < pod->n_cont; c++)
        for (int f = 0; f < 4; f++) {
            const char *s = kc__pm_cont_str(pod, c, f, &len);
            cs->s[4 * c + f] = d;
            memcpy(d, s, len);
            d += len;
            *d++ = '\0';
        }
    kc__pm_cstrs *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&pod->cstrs, &none, cs, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        free(cs);
        return none;
    }
    return cs;
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
    /* the entry is immutable but for this cache of its strings */
    const kc__pm_cstrs *cs = cstrs((kc_podmeta_pod *)pod);
    if (!cs)
        return KC_ENOMEM;
    const char *const *s = &cs->s[4 * i];
    kc_podmeta_container out = {
        s[0], s[1], s[2], s[3], s[3] + pod->cont[i].id_skip, pod->cont[i].kind};
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
