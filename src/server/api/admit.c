/*
 * admit.c — the verbs' side of admission webhooks (admission/admission.h): the attributes of a
 * write, and the write itself around the chain, so that no webhook is called under srv->mu:
 * mutating webhooks on the object the request asks for (CH1: before the server's own defaulting
 * and validation); then, when validating webhooks exist, the write as a dry run under the lock
 * to get the object the server would store — defaulted, validated, with its system fields — and,
 * without the lock, the validating webhooks on it; then the write itself. Between the lock's
 * periods another write may change the stored object: the verb then starts again from the new
 * state (as kube-apiserver's GuaranteedUpdate re-runs admission on a conflict), a bounded number
 * of times (KC__ADMIT_RETRIES) before a 409.
 *
 * Design: when no webhook configuration is stored (kc__admit_begin gives NULL) the verbs take
 * their own single-lock path unchanged, so a server without webhooks pays one lookup per write.
 */
#include "server/api/api_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void warn(void *ctx, const char *text)
{
    kc__req *req = ctx;
    if (req->n_warnings < KC__MAX_WARNINGS)
        snprintf(req->warnings[req->n_warnings++], KC__WARNING_MAX, "%s", text);
}

int kc__admit_begin(kc__req *req, kc__rsrc *r, const char *op, bool dry, const char *opts_kind,
                    const char *manager, kc__adm_chain **ret)
{
    kc__adm_attrs a = {.r = r,
                       .version = req->route.version,
                       .sub = req->route.has_sub ? req->route.sub : NULL,
                       .ns = r->namespaced ? req->route.ns : "",
                       .name = req->route.has_name ? req->route.name : "",
                       .op = op,
                       .dry_run = dry,
                       .user_info = req->user_info,
                       .warn = warn,
                       .warn_ctx = req};
    int rc = kc__adm_begin(req->srv, &a, ret, &req->err);
    if (rc == 0 && *ret)
        kc__adm_set_options(*ret, kc__admit_options(opts_kind, dry, manager));
    return rc;
}

json_t *kc__admit_options(const char *kind, bool dry, const char *manager)
{
    json_t *o = json_pack("{s:s, s:s}", "kind", kind, "apiVersion", "meta.k8s.io/v1");
    if (o && dry)
        json_object_set_new(o, "dryRun", json_pack("[s]", "All"));
    if (o && manager && *manager)
        json_object_set_new(o, "fieldManager", json_string(manager));
    return o;
}

/* Under mu: create, or update the entry still at old_rv (else *retry). */
static int commit(kc__req *req, const kc__write *w, const char *old_rv, bool require_rv,
                  json_t *doc, kc_obj **ret_obj, bool *retry)
{
    if (!old_rv) {
        if (w->r->removed)
            return kc__fail_generic(&req->err, 404);
        return kc__write_create(req->srv, w, doc, ret_obj, &req->err);
    }
    kc__entry *cur = kc__store_find(w->r, w->ns, req->route.name);
    if (!cur)
        return kc__fail_notfound(&req->err, w->r, req->route.name);
    if (strcmp(kc_obj_resource_version(cur->obj), old_rv) != 0) {
        *retry = true;
        return 0;
    }
    return kc__write_update(req->srv, w, cur, doc, require_rv, ret_obj, &req->err);
}

int kc__admit_write(kc__req *req, const kc__write *w, kc__adm_chain *c, const char *old_rv,
                    bool require_rv, json_t **doc, kc_obj **ret_obj, bool *retry)
{
    kc_server *srv = req->srv;
    *retry = false;
    int rc = kc__adm_mutate(c, doc, &req->err);
    if (rc == 0 && kc__adm_has_validating(c)) {
        kc__write dw = *w;
        dw.dry_run = true;
        json_t *copy = json_deep_copy(*doc);
        kc_obj *dry = NULL;
        if (!copy)
            return kc_error_set(&req->err, KC_ENOMEM, "out of memory");
        pthread_mutex_lock(&srv->mu);
        rc = commit(req, &dw, old_rv, require_rv, copy, &dry, retry);
        pthread_mutex_unlock(&srv->mu);
        json_decref(copy);
        json_t *dd = dry ? kc__doc_from_obj(dry) : NULL;
        kc_obj_unref(dry);
        const char *gen =
            dd && !old_rv && !kc__meta_str(*doc, "name") ? kc__meta_str(dd, "name") : NULL;
        if (gen) /* the validated name is the stored one (generateName) */
            kc__meta_set_str(*doc, "name", gen);
        if (rc == 0 && !*retry)
            rc = dd ? kc__adm_validate(c, dd, &req->err)
                    : kc_error_set(&req->err, KC_ENOMEM, "out of memory");
        json_decref(dd);
    }
    if (rc || *retry)
        return rc;
    pthread_mutex_lock(&srv->mu);
    rc = commit(req, w, old_rv, require_rv, *doc, ret_obj, retry);
    pthread_mutex_unlock(&srv->mu);
    return rc;
}

int kc__admit_conflict(kc__req *req, kc__rsrc *r)
{
    int rc = kc__fail(&req->err, 409, "Conflict",
                      "Operation cannot be fulfilled on %s%s%s \"%s\": the object has been "
                      "modified; please apply your changes to the latest version and try again",
                      r->plural, r->group[0] ? "." : "", r->group, req->route.name);
    kc__fail_details(&req->err, req->route.name, r->group[0] ? r->group : NULL, r->plural);
    return rc;
}

int kc__admit_read(kc__req *req, kc__rsrc *r, const char *ns, json_t **ret_old, char rv[24])
{
    pthread_mutex_lock(&req->srv->mu);
    kc__entry *cur = kc__store_find(r, ns, req->route.name);
    *ret_old = cur ? kc__doc_from_obj(cur->obj) : NULL;
    if (cur)
        snprintf(rv, 24, "%s", kc_obj_resource_version(cur->obj));
    pthread_mutex_unlock(&req->srv->mu);
    if (!cur)
        return kc__fail_notfound(&req->err, r, req->route.name);
    return *ret_old ? 0 : kc_error_set(&req->err, KC_ENOMEM, "out of memory");
}

static void delete_options(kc__adm_chain *c, const json_t *opts)
{
    json_t *o = json_deep_copy(opts);
    if (o) {
        json_object_set_new(o, "kind", json_string("DeleteOptions"));
        json_object_set_new(o, "apiVersion", json_string("meta.k8s.io/v1"));
    }
    kc__adm_set_options(c, o);
}

/* The webhooks of the DELETE of old (AR6: object null, oldObject the stored one). */
static int admit_delete_of(kc__req *req, kc__adm_chain *c, const json_t *old)
{
    json_t *none = NULL;
    kc__adm_set_old(c, "DELETE", old);
    int rc = kc__adm_mutate(c, &none, &req->err);
    if (rc == 0)
        rc = kc__adm_validate(c, NULL, &req->err);
    kc__adm_set_old(c, "DELETE", NULL);
    json_decref(none);
    return rc;
}

/* Under mu: delete ns/name if still at rv; *changed when it moved on. *ret_obj may be NULL. */
static int delete_if_at(kc__req *req, kc__rsrc *r, const char *ns, const char *name, const char *rv,
                        json_t *opts, bool dry, int64_t grace, kc_obj **ret_obj, bool *ret_gone,
                        bool *changed)
{
    kc__entry *cur = kc__store_find(r, ns, name);
    *changed = cur && strcmp(kc_obj_resource_version(cur->obj), rv) != 0;
    if (!cur)
        return kc__fail_notfound(&req->err, r, name);
    if (*changed)
        return 0;
    return kc__delete_one(req->srv, r, cur, opts, dry, grace, ret_obj, ret_gone, &req->err);
}

int kc__admit_delete(kc__req *req, kc__rsrc *r, kc__adm_chain *c, json_t *opts, bool dry,
                     int64_t grace, kc_obj **ret_obj, bool *ret_gone)
{
    const char *ns = r->namespaced ? req->route.ns : "";
    delete_options(c, opts);
    for (int i = 0; i < KC__ADMIT_RETRIES; i++) {
        json_t *old = NULL;
        char rv[24];
        bool changed = false;
        int rc = kc__admit_read(req, r, ns, &old, rv);
        if (rc == 0)
            rc = admit_delete_of(req, c, old);
        json_decref(old);
        if (rc)
            return rc;
        pthread_mutex_lock(&req->srv->mu);
        rc = delete_if_at(req, r, ns, req->route.name, rv, opts, dry, grace, ret_obj, ret_gone,
                          &changed);
        pthread_mutex_unlock(&req->srv->mu);
        if (rc || !changed)
            return rc;
    }
    return kc__admit_conflict(req, r);
}

/* The objects of a DELETE of a collection (mu held): new references. */
static kc_obj **collection(kc__rsrc *r, const char *ns, const kc_label_selector *ls,
                           const kc_field_selector *fs, size_t *ret_n)
{
    size_t n = 0, k = 0;
    kc__entry **s = kc__store_sorted(r, &n);
    kc_obj **objs = n ? malloc(n * sizeof(*objs)) : NULL;
    for (size_t i = 0; i < n && objs && s; i++)
        if ((!ns || !strcmp(s[i]->ns, ns)) && kc_label_selector_match(ls, s[i]->obj) &&
            kc_field_selector_match(fs, s[i]->obj))
            objs[k++] = kc_obj_ref(s[i]->obj);
    *ret_n = k;
    return objs;
}

int kc__admit_delete_collection(kc__req *req, kc__rsrc *r, kc__adm_chain *c, const char *ns,
                                const kc_label_selector *ls, const kc_field_selector *fs,
                                json_t *opts, bool dry, int64_t grace)
{
    size_t k = 0, nd = 0;
    int rc = 0;
    delete_options(c, opts);
    pthread_mutex_lock(&req->srv->mu);
    kc_obj **objs = collection(r, ns, ls, fs, &k);
    pthread_mutex_unlock(&req->srv->mu);
    kc_obj **deleted = k ? malloc(k * sizeof(*deleted)) : NULL;
    if (k && (!objs || !deleted))
        rc = kc_error_set(&req->err, KC_ENOMEM, "out of memory");
    for (size_t i = 0; i < k && rc == 0; i++) { /* each object as its own DELETE */
        json_t *old = kc__doc_from_obj(objs[i]);
        bool changed = false, gone = false;
        kc_obj *res = NULL;
        rc = old ? admit_delete_of(req, c, old) : kc_error_set(&req->err, KC_ENOMEM, "no memory");
        json_decref(old);
        if (rc)
            break;
        pthread_mutex_lock(&req->srv->mu);
        rc =
            delete_if_at(req, r, kc_obj_namespace(objs[i]), kc_obj_name(objs[i]),
                         kc_obj_resource_version(objs[i]), opts, dry, grace, &res, &gone, &changed);
        pthread_mutex_unlock(&req->srv->mu);
        if (rc == KC_ENOTFOUND) { /* gone meanwhile: not this request's failure */
            kc_error_clear(&req->err);
            rc = 0;
        }
        if (res)
            deleted[nd++] = res;
    }
    uint64_t rv = req->srv->rv;
    for (size_t i = 0; i < k; i++)
        kc_obj_unref(objs[i]);
    free(objs);
    if (rc == 0)
        return kc__reply_list(req, r, deleted, nd, rv, NULL, -1); /* takes deleted */
    for (size_t i = 0; i < nd; i++)
        kc_obj_unref(deleted[i]);
    free(deleted);
    return rc;
}
