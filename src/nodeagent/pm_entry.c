/*
 * pm_entry.c — the node agent cache's entries: immutable, reference-counted records of one pod
 * (or tombstone) and one namespace.
 *
 * A pod entry is ONE allocation: the header, the container table (kc__pm_cont), then the
 * containers' strings (name, image, imageID, containerID, NUL-terminated, back to back; the id is
 * a pointer into containerID past "<runtime>://"). They are extracted once, by the writer, when
 * the informer event arrives (enrich-semantics CI1/CI2), so the lookup path never parses JSON: it
 * hashes the query's key, compares strings and takes a reference. The projected kc_obj (a
 * reference) carries the rest (labels, annotations, owner, IPs) for the agent to read with the
 * kc_obj accessors. Entries never change after construction: a change of the pod is a new entry.
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

/* The statuses' four strings of each container, collected before the entry is sized. */
typedef struct collect {
    kc__buf strs; /* per container: 4 NUL-terminated strings */
    size_t n;
    kc_podmeta_container_kind kinds[256];
} collect;

static const char *const FIELDS[4] = {"name", "image", "imageID", "containerID"};

/* One status element (an object): its four strings, "" when absent or not a string. */
static int collect_one(collect *c, const kc_obj_iter *el)
{
    kc_obj_iter *m = NULL;
    if (kc__obj_iter_child(el, &m, NULL))
        return 0; /* not an object: skipped */
    const char *v[4] = {"", "", "", ""};
    size_t vn[4] = {0, 0, 0, 0};
    char *own[4] = {0};
    while (kc_obj_iter_next(m) == 1) {
        size_t kn;
        const char *k = kc_obj_iter_key(m, &kn);
        for (int f = 0; f < 4; f++) {
            if (!k || strlen(FIELDS[f]) != kn || memcmp(k, FIELDS[f], kn) != 0)
                continue;
            const char *s;
            size_t sn;
            if (kc_obj_iter_string(m, &s, &sn) == 0 && !memchr(s, 0, sn)) {
                free(own[f]);
                own[f] = kc__strdup_n(s, sn); /* an escaped string lives in the iterator's buffer */
                v[f] = own[f] ? own[f] : "";
                vn[f] = own[f] ? sn : 0;
            }
        }
    }
    kc_obj_iter_free(m);
    int r = 0;
    for (int f = 0; f < 4 && !r; f++) {
        r = kc__buf_append(&c->strs, v[f], vn[f]);
        if (!r)
            r = kc__buf_append_char(&c->strs, '\0');
    }
    for (int f = 0; f < 4; f++)
        free(own[f]);
    return r;
}

static int collect_kind(collect *c, const kc_obj *obj, const char *ptr,
                        kc_podmeta_container_kind kind)
{
    kc_obj_iter *it = NULL;
    if (kc_obj_iter_new(obj, ptr, &it, NULL))
        return 0; /* absent (or not an array): no containers of that kind */
    int r = 0;
    while (!r && c->n < sizeof c->kinds / sizeof c->kinds[0] && kc_obj_iter_next(it) == 1) {
        if (kc_obj_iter_type(it) != KC_JSON_OBJECT)
            continue;
        r = collect_one(c, it);
        if (!r)
            c->kinds[c->n++] = kind;
    }
    kc_obj_iter_free(it);
    return r;
}

kc_podmeta_pod *kc__pm_pod_new(kc_obj *obj, bool deleted, int64_t deleted_at_ms,
                               uint64_t expires_ns)
{
    collect c = {.n = 0};
    kc__buf_init(&c.strs, 0);
    int r = collect_kind(&c, obj, "/status/containerStatuses", KC_PODMETA_CONTAINER);
    if (!r)
        r = collect_kind(&c, obj, "/status/initContainerStatuses", KC_PODMETA_INIT);
    if (!r)
        r = collect_kind(&c, obj, "/status/ephemeralContainerStatuses", KC_PODMETA_EPHEMERAL);
    size_t head = sizeof(kc_podmeta_pod) + c.n * sizeof(kc__pm_cont);
    kc_podmeta_pod *p = r ? NULL : malloc(head + c.strs.len + 1);
    if (!p) {
        kc__buf_free(&c.strs);
        return NULL;
    }
    memset(p, 0, head);
    atomic_init(&p->refs, 1);
    p->n_cont = (uint32_t)c.n;
    p->obj = kc_obj_ref(obj);
    p->deleted = deleted;
    p->deleted_at_ms = deleted ? deleted_at_ms : 0;
    p->expires_ns = deleted ? expires_ns : 0;
    p->h_name = kc__pm_hash_name(kc_obj_namespace(obj), kc_obj_name(obj));
    const char *uid = kc_obj_uid(obj);
    p->h_uid = kc__pm_hash(uid, strlen(uid), PM_SEED);
    p->heap = head + c.strs.len + 1;
    char *s = (char *)p + head;
    if (c.strs.len)
        memcpy(s, c.strs.data, c.strs.len);
    s[c.strs.len] = '\0';
    for (size_t i = 0; i < c.n; i++) {
        const char **f[4] = {&p->cont[i].name, &p->cont[i].image, &p->cont[i].image_id,
                             &p->cont[i].container_id};
        for (int k = 0; k < 4; k++) {
            *f[k] = s;
            s += strlen(s) + 1;
        }
        p->cont[i].id = kc__pm_strip_runtime(p->cont[i].container_id);
        p->cont[i].kind = c.kinds[i];
    }
    kc__buf_free(&c.strs);
    return p;
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
    const kc__pm_cont *c = &pod->cont[i];
    kc_podmeta_container out = {c->name, c->image, c->image_id, c->container_id, c->id, c->kind};
    kc__result_copy(ret, ret_size, &out, sizeof out);
    return 0;
}

int kc_podmeta_pod_find_container(const kc_podmeta_pod *pod, const char *name, const char *id)
{
    if (!pod)
        return -1;
    const char *bare = id ? kc__pm_strip_runtime(id) : NULL;
    for (uint32_t i = 0; i < pod->n_cont; i++) {
        const kc__pm_cont *c = &pod->cont[i];
        if (name && strcmp(c->name, name) != 0)
            continue;
        if (bare && (!*c->id || strcmp(c->id, bare) != 0))
            continue;
        return (int)i;
    }
    return -1;
}

const kc_obj *kc_podmeta_ns_obj(const kc_podmeta_ns *ns)
{
    return ns ? ns->obj : NULL;
}
