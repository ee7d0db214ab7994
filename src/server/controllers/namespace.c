/*
 * namespace.c — two controllers about namespaces, run synchronously inside the write
 * that triggers them (mu held):
 *   - the namespace lifecycle (KC_SERVER_CONTROLLER_NAMESPACE), as kube-controller-manager's
 *     namespace controller with the API server's namespace strategy: DELETE of a namespace sets
 *     deletionTimestamp and status.phase Terminating (the reply), deletes every object in it as a
 *     DELETE with propagationPolicy=Background would (so objects with finalizers and graceful
 *     pods stay until they go), and removes the namespace once nothing is left in it and it has
 *     no metadata.finalizers — at once, on the removal of its last object, or when its last
 *     metadata finalizer goes (not before its objects are gone). (The "kubernetes"
 *     entry of spec.finalizers is this controller's; it is not written back separately.)
 *   - the ServiceAccount "default" of every namespace (KC_SERVER_CONTROLLER_SERVICE_ACCOUNT), as
 *     the serviceaccounts controller: created with each namespace (the built-in ones included)
 *     and again when deleted while its namespace is not terminating. No token Secret (upstream
 *     has not created one since 1.24).
 */
#include "server/controllers/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool kc__ctl_is_core(const kc__rsrc *r, const char *plural)
{
    return !r->group[0] && !strcmp(r->plural, plural);
}

/* The namespace empty_namespace is deleting the objects of (this thread, mu held): their
 * removals do not each look whether it is empty — kc__ns_deleting does, once, after. Keeps a
 * namespace deletion of N objects linear. */
static _Thread_local const char *emptying;

/* true when some namespaced object lives in ns (the maps in hash order: no re-sort of a
 * resource a removal just changed). */
static bool ns_has_objects(kc_server *srv, const char *ns)
{
    for (size_t j = 0; j < srv->n_rsrcs; j++) {
        kc__rsrc *r = srv->rsrcs[j];
        for (size_t b = 0; r->namespaced && r->map.n && b < r->map.cap; b++) {
            const kc__entry *e = (const kc__entry *)KC__HTAB_AT(&r->map, b);
            if (e && !strcmp(e->ns, ns))
                return true;
        }
    }
    return false;
}

/* Remove namespace ns when it is terminating, empty and without metadata.finalizers. */
static void try_finalize(kc_server *srv, const char *ns)
{
    kc__rsrc *nsr = kc__rsrc_namespaces(srv);
    kc__entry *e = nsr ? kc__store_find(nsr, "", ns) : NULL;
    if (!e || !kc_obj_deleting(e->obj) || kc_obj_finalizer_count(e->obj) || ns_has_objects(srv, ns))
        return;
    kc_error err = KC_ERROR_INIT;
    kc__write_remove(srv, nsr, e, NULL, &err);
    kc_error_clear(&err);
}

/* Delete every object of namespace ns (Background). */
static void empty_namespace(kc_server *srv, const char *ns)
{
    for (size_t j = 0; j < srv->n_rsrcs; j++) {
        kc__rsrc *r = srv->rsrcs[j];
        if (!r->namespaced || !r->map.n)
            continue;
        size_t n, k = 0;
        kc__entry **s = kc__store_sorted(r, &n);
        kc_obj **objs = s && n ? malloc(n * sizeof(*objs)) : NULL;
        for (size_t i = 0; objs && i < n; i++)
            if (!strcmp(s[i]->ns, ns))
                objs[k++] = kc_obj_ref(s[i]->obj);
        json_t *opts = json_pack("{s:s}", "propagationPolicy", "Background");
        for (size_t i = 0; i < k; i++) {
            kc__entry *e = kc__store_find(r, ns, kc_obj_name(objs[i]));
            kc_obj *res = NULL;
            bool gone;
            kc_error err = KC_ERROR_INIT;
            if (e && opts && !strcmp(kc_obj_uid(e->obj), kc_obj_uid(objs[i])))
                kc__delete_one(srv, r, e, opts, false, -1, &res, &gone, &err);
            kc_obj_unref(res);
            kc_error_clear(&err);
            kc_obj_unref(objs[i]);
        }
        json_decref(opts);
        free(objs);
    }
}

int kc__ns_deleting(kc_server *srv, kc__rsrc *r, kc__entry *cur, kc_obj **ret_obj, kc_error *err)
{
    if (!kc__ctl_is_core(r, "namespaces"))
        return 0;
    if (kc_obj_deleting(cur->obj)) {
        *ret_obj = kc_obj_ref(cur->obj);
        return 1;
    }
    char ns[256];
    snprintf(ns, sizeof(ns), "%s", cur->name);
    int rc = kc__mark_deleting(srv, r, cur, 0, NULL, false, ret_obj, err);
    if (rc)
        return rc;
    const char *outer = emptying;
    emptying = ns;
    empty_namespace(srv, ns);
    emptying = outer;
    try_finalize(srv, ns);
    return 1;
}

bool kc__ns_holds(kc_server *srv, const kc__rsrc *r, const kc__entry *cur)
{
    return kc__ctl_is_core(r, "namespaces") && ns_has_objects(srv, cur->name);
}

void kc__ns_removed(kc_server *srv, kc__rsrc *r, kc_obj *obj)
{
    const char *ns = kc_obj_namespace(obj);
    if (r->namespaced && ns && *ns && !(emptying && !strcmp(emptying, ns)))
        try_finalize(srv, ns);
}

/* Create ServiceAccount default in ns unless it exists or ns is terminating. */
static void ensure_default_sa(kc_server *srv, const char *ns)
{
    kc__rsrc *nsr = kc__rsrc_namespaces(srv);
    kc__entry *ne = nsr ? kc__store_find(nsr, "", ns) : NULL;
    kc__rsrc *sar = kc__registry_find_kind(srv, "v1", "ServiceAccount");
    if (!ne || kc_obj_deleting(ne->obj) || !sar || kc__store_find(sar, ns, "default"))
        return;
    char json[512];
    int n = snprintf(json, sizeof(json),
                     "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":"
                     "\"default\",\"namespace\":\"%s\"}}",
                     ns);
    kc_error err = KC_ERROR_INIT;
    if (n > 0 && (size_t)n < sizeof(json))
        kc__create_json_ex(srv, json, (size_t)n, true, false, &err);
    kc_error_clear(&err);
}

void kc__sa_created(kc_server *srv, kc__rsrc *r, kc_obj *obj)
{
    if (kc__ctl_is_core(r, "namespaces"))
        ensure_default_sa(srv, kc_obj_name(obj));
}

void kc__sa_removed(kc_server *srv, kc__rsrc *r, kc_obj *obj)
{
    if (kc__ctl_is_core(r, "serviceaccounts") && !strcmp(kc_obj_name(obj), "default"))
        ensure_default_sa(srv, kc_obj_namespace(obj));
}
