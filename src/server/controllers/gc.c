/*
 * gc.c — the garbage collector of metadata.ownerReferences
 * (KC_SERVER_CONTROLLER_GARBAGE_COLLECTOR), as kube-controller-manager's, run synchronously
 * inside the write that triggers it (mu held), so a client sees its effect when its request
 * returns:
 *   - an object removed (any propagation but Orphan): each dependent (an object whose
 *     ownerReferences name its uid — in its namespace, or anywhere for a cluster-scoped owner)
 *     that still has another owner which exists and is not waiting for its dependents loses the
 *     reference; any other dependent is deleted, Background (recursively, as a DELETE would:
 *     finalizers and graceful pods honoured);
 *   - DELETE with propagationPolicy=Foreground: the owner gets deletionTimestamp and the
 *     foregroundDeletion finalizer (one MODIFIED event, and the reply), its dependents are
 *     deleted — Foreground when their reference says blockOwnerDeletion — and once no dependent
 *     with blockOwnerDeletion remains the finalizer is removed and the owner goes;
 *   - DELETE with propagationPolicy=Orphan: the dependents lose their reference, the owner goes.
 * Cost: a removal finds its dependents through the owner-uid index (gc_index.c): proportional to
 * their number, whatever the store holds. Differences from upstream: no orphan
 * finalizer round trip (the end state is the same), no virtual owners, a reference is matched by
 * uid and, for its owner's existence, by apiVersion/kind/name in the dependent's namespace.
 */
#include "server/controllers/internal.h"

#include <stdlib.h>
#include <string.h>

#define FG_FINALIZER "foregroundDeletion"

typedef struct dep {
    kc__rsrc *r;
    kc_obj *obj;
} dep;

json_t *kc__gc_owner_refs(const kc_obj *o)
{
    const char *raw;
    size_t len;
    if (!kc_obj_owner_count(o) || kc_obj_get_raw(o, "/metadata/ownerReferences", &raw, &len, NULL))
        return NULL;
    json_t *a = json_loadb(raw, len, 0, NULL);
    if (!json_is_array(a)) {
        json_decref(a);
        return NULL;
    }
    return a;
}

static size_t ref_index(json_t *refs, const char *uid)
{
    size_t i;
    json_t *ref;
    json_array_foreach(refs, i, ref)
    {
        const char *u = json_string_value(json_object_get(ref, "uid"));
        if (u && !strcmp(u, uid))
            return i;
    }
    return (size_t)-1;
}

static bool has_finalizer(const kc_obj *o, const char *fin)
{
    const char *raw;
    size_t len;
    if (!kc_obj_finalizer_count(o) || kc_obj_get_raw(o, "/metadata/finalizers", &raw, &len, NULL))
        return false;
    json_t *a = json_loadb(raw, len, 0, NULL);
    bool found = false;
    size_t i;
    json_t *f;
    json_array_foreach(a, i, f) found =
        found || !strcmp(json_string_value(f) ? json_string_value(f) : "", fin);
    json_decref(a);
    return found;
}

/* An owner deleted in the foreground, waiting for its blocking dependents. */
static bool waiting(const kc_obj *o)
{
    return kc_obj_deleting(o) && has_finalizer(o, FG_FINALIZER);
}

/* The stored object ref names (in namespace ns when its resource is namespaced), only when its
 * uid is the one the reference carries. */
static kc__entry *ref_owner(kc_server *srv, const char *ns, json_t *ref, kc__rsrc **ret_r)
{
    const char *av = json_string_value(json_object_get(ref, "apiVersion"));
    const char *kind = json_string_value(json_object_get(ref, "kind"));
    const char *name = json_string_value(json_object_get(ref, "name"));
    const char *uid = json_string_value(json_object_get(ref, "uid"));
    kc__rsrc *r = av && kind && name && uid ? kc__registry_find_kind(srv, av, kind) : NULL;
    kc__entry *e = r ? kc__store_find(r, r->namespaced ? ns : "", name) : NULL;
    if (!e || strcmp(kc_obj_uid(e->obj), uid) != 0)
        return NULL;
    *ret_r = r;
    return e;
}

/* Does o have a reference to uid? */
static bool refers_to(const kc_obj *o, const char *uid)
{
    json_t *refs = kc__gc_owner_refs(o);
    bool mine = refs && ref_index(refs, uid) != (size_t)-1;
    json_decref(refs);
    return mine;
}

static int dep_cmp(const void *a, const void *b)
{
    const dep *x = a, *y = b;
    int c = strcmp(x->r->group, y->r->group);
    if (!c)
        c = strcmp(x->r->plural, y->r->plural);
    if (!c)
        c = strcmp(kc_obj_namespace(x->obj), kc_obj_namespace(y->obj));
    return c ? c : strcmp(kc_obj_name(x->obj), kc_obj_name(y->obj));
}

typedef struct dep_list {
    const char *ns, *uid;
    dep *out;
    size_t k, cap;
} dep_list;

static void list_one(kc__rsrc *r, kc__entry *e, void *ud)
{
    dep_list *c = ud;
    if ((c->ns && strcmp(e->ns, c->ns) != 0) || !refers_to(e->obj, c->uid))
        return;
    if (c->k == c->cap) {
        dep *g = realloc(c->out, (c->cap ? 2 * c->cap : 8) * sizeof(*g));
        if (!g)
            return;
        c->out = g;
        c->cap = c->cap ? 2 * c->cap : 8;
    }
    c->out[c->k].r = r;
    c->out[c->k++].obj = kc_obj_ref(e->obj);
}

/* Every stored object with a reference to uid (new references in *ret; free with deps_free):
 * in namespace ns, or in any namespace when ns is NULL; by group, resource, namespace and name.
 * Cost: the dependents themselves, through the owner-uid index (gc_index.c). */
static size_t dependents(kc_server *srv, const char *ns, const char *uid, dep **ret)
{
    dep_list c = {.ns = ns, .uid = uid};
    kc__gc_index_dependents(srv, uid, list_one, &c);
    if (c.k > 1)
        qsort(c.out, c.k, sizeof(*c.out), dep_cmp);
    *ret = c.out;
    return c.k;
}

static void deps_free(dep *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        kc_obj_unref(d[i].obj);
    free(d);
}

/* d's entry when it still holds the same object (uid), else NULL. */
static kc__entry *live(const dep *d)
{
    kc__entry *e = kc__store_find(d->r, kc_obj_namespace(d->obj), kc_obj_name(d->obj));
    return e && !strcmp(kc_obj_uid(e->obj), kc_obj_uid(d->obj)) ? e : NULL;
}

/* Store e's object with reference index i removed. */
static void drop_ref(kc_server *srv, kc__rsrc *r, kc__entry *e, size_t i)
{
    json_t *doc = kc__doc_from_obj(e->obj);
    json_t *refs = json_object_get(kc__meta(doc), "ownerReferences");
    if (json_array_remove(refs, i) == 0) {
        if (!json_array_size(refs))
            kc__meta_del(doc, "ownerReferences");
        kc_error err = KC_ERROR_INIT;
        kc__write_internal_update(srv, r, e, doc, &err);
        kc_error_clear(&err);
    }
    json_decref(doc);
}

/* The dependent d of uid, whose owner is gone or (owner_waiting) deleted in the foreground. */
static void collect(kc_server *srv, const dep *d, const char *uid, bool owner_waiting)
{
    kc__entry *e = live(d);
    json_t *refs = e ? kc__gc_owner_refs(e->obj) : NULL;
    size_t mine = refs ? ref_index(refs, uid) : (size_t)-1;
    if (mine == (size_t)-1) {
        json_decref(refs);
        return;
    }
    bool solid = false, block = false;
    size_t i;
    json_t *ref;
    json_array_foreach(refs, i, ref)
    {
        kc__rsrc * or ;
        kc__entry *oe = i == mine ? NULL : ref_owner(srv, e->ns, ref, & or);
        solid = solid || (oe && !waiting(oe->obj));
        if (i == mine)
            block = owner_waiting && json_is_true(json_object_get(ref, "blockOwnerDeletion"));
    }
    json_decref(refs);
    if (solid) {
        drop_ref(srv, d->r, e, mine);
        return;
    }
    json_t *opts = json_pack("{s:s}", "propagationPolicy", block ? "Foreground" : "Background");
    kc_obj *res = NULL;
    bool gone;
    kc_error err = KC_ERROR_INIT;
    if (opts)
        kc__delete_one(srv, d->r, e, opts, false, -1, &res, &gone, &err);
    kc_obj_unref(res);
    kc_error_clear(&err);
    json_decref(opts);
}

/* A foreground deletion of e's object completes once no dependent with blockOwnerDeletion is
 * left: the finalizer goes (and with the last finalizer, the object). */
static void finish_foreground(kc_server *srv, kc__rsrc *r, kc__entry *e)
{
    if (!waiting(e->obj))
        return;
    dep *d;
    size_t n = dependents(srv, r->namespaced ? e->ns : NULL, kc_obj_uid(e->obj), &d);
    bool blocked = false;
    for (size_t i = 0; i < n && !blocked; i++) {
        json_t *refs = kc__gc_owner_refs(d[i].obj);
        size_t k = ref_index(refs, kc_obj_uid(e->obj));
        blocked = json_is_true(json_object_get(json_array_get(refs, k), "blockOwnerDeletion"));
        json_decref(refs);
    }
    deps_free(d, n);
    if (blocked)
        return;
    json_t *doc = kc__doc_from_obj(e->obj);
    json_t *fins = json_object_get(kc__meta(doc), "finalizers");
    size_t i;
    json_t *f;
    json_array_foreach(fins, i, f) if (!strcmp(json_string_value(f) ? json_string_value(f) : "",
                                               FG_FINALIZER)) break;
    if (i < json_array_size(fins) && json_array_remove(fins, i) == 0) {
        kc_error err = KC_ERROR_INIT;
        kc__write_internal_update(srv, r, e, doc, &err);
        kc_error_clear(&err);
    }
    json_decref(doc);
}

/* Sweep the dependents of an owner (uid, in ns or cluster-scoped: NULL). */
static void sweep(kc_server *srv, const char *ns, const char *uid, bool owner_waiting)
{
    dep *d;
    size_t n = dependents(srv, ns, uid, &d);
    for (size_t i = 0; i < n; i++)
        collect(srv, &d[i], uid, owner_waiting);
    deps_free(d, n);
}

void kc__gc_removed(kc_server *srv, kc__rsrc *r, kc_obj *obj)
{
    sweep(srv, r->namespaced ? kc_obj_namespace(obj) : NULL, kc_obj_uid(obj), false);
    /* obj may have been the last blocking dependent of a foreground owner */
    json_t *refs = kc__gc_owner_refs(obj);
    size_t i;
    json_t *ref;
    json_array_foreach(refs, i, ref)
    {
        kc__rsrc * or ;
        kc__entry *oe = ref_owner(srv, kc_obj_namespace(obj), ref, & or);
        if (oe)
            finish_foreground(srv, or, oe);
    }
    json_decref(refs);
}

int kc__gc_deleting(kc_server *srv, kc__rsrc *r, kc__entry *cur, const char *propagation,
                    kc_obj **ret_obj, kc_error *err)
{
    const char *ns = r->namespaced ? cur->ns : NULL;
    char uid[128], name[256], nsb[256];
    snprintf(uid, sizeof(uid), "%s", kc_obj_uid(cur->obj));
    snprintf(name, sizeof(name), "%s", cur->name);
    snprintf(nsb, sizeof(nsb), "%s", cur->ns);
    if (propagation && !strcmp(propagation, "Orphan")) {
        dep *d;
        size_t n = dependents(srv, ns ? nsb : NULL, uid, &d);
        for (size_t i = 0; i < n; i++) {
            kc__entry *e = live(&d[i]);
            json_t *refs = e ? kc__gc_owner_refs(e->obj) : NULL;
            size_t k = refs ? ref_index(refs, uid) : (size_t)-1;
            json_decref(refs);
            if (k != (size_t)-1)
                drop_ref(srv, d[i].r, e, k);
        }
        deps_free(d, n);
        return 0;
    }
    if (!propagation || strcmp(propagation, "Foreground") != 0 || kc_obj_deleting(cur->obj))
        return 0; /* Background: the removal sweeps (kc__gc_removed) */
    kc_obj *marked = NULL;
    int rc = kc__mark_deleting(srv, r, cur, 0, FG_FINALIZER, false, &marked, err);
    if (rc)
        return rc;
    sweep(srv, ns ? nsb : NULL, uid, true);
    kc__entry *e = kc__store_find(r, nsb, name);
    if (e && !strcmp(kc_obj_uid(e->obj), uid))
        finish_foreground(srv, r, e);
    *ret_obj = marked;
    return 1;
}
