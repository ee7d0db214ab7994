/*
 * verbs_write.c — the GET, POST (create), PUT (update, incl. /status) and PATCH (merge, JSON,
 * strategic, apply) verbs of the embedded API server (spec §3.1–§3.4; #9–#47).
 *
 * Request bodies are parsed with jansson outside the lock; the storage rules (storage/write.c)
 * and the patch engines (patch.h) run under srv->mu so a patch always applies to the latest
 * object and its result is committed atomically.
 */
#include "server/api/api_internal.h"

#include "server/patch/patch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_body(kc__req *req, json_t **ret)
{
    if (req->content_type &&
        kc__starts_with(req->content_type, "application/vnd.kubernetes.protobuf"))
        return kc__proto_to_json(req->body, req->body_len, ret, &req->err);
    json_error_t je;
    json_t *doc = json_loadb(req->body, req->body_len, 0, &je);
    if (!doc)
        return kc__fail(&req->err, 400, "BadRequest",
                        "couldn't get version/kind; json parse error: %s", je.text);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return kc__fail(&req->err, 400, "BadRequest", "the request body is not a JSON object");
    }
    *ret = doc;
    return 0;
}

/* The write options of a request; manager (a buffer filled by kc__write_manager, borrowed)
 * becomes the managedFields "Update" entry's manager, NULL/"" for none. */
static kc__write make_write(kc__req *req, kc__rsrc *r, bool dry, const char *manager)
{
    kc__write w = {.r = r,
                   .ns = r->namespaced ? req->route.ns : "",
                   .version = req->route.version,
                   .dry_run = dry,
                   .status_sub = req->route.has_sub,
                   .manager = manager && *manager ? manager : NULL,
                   .subresource = req->route.has_sub ? req->route.sub : NULL};
    return w;
}

int kc__verb_get(kc__req *req, kc__rsrc *r)
{
    kc_server *srv = req->srv;
    const char *rvp = req->q.rv;
    uint64_t want = 0;
    if (rvp && *rvp && strcmp(rvp, "0") != 0 && kc_rv_parse(rvp, &want, NULL) != 0)
        return kc__fail(&req->err, 400, "BadRequest", "invalid resource version: %s", rvp);
    pthread_mutex_lock(&srv->mu);
    kc_obj *obj = NULL;
    int rc = 0;
    if (want > srv->rv) {
        rc = kc__fail(&req->err, 504, "Timeout",
                      "Timeout: Too large resource version: %llu, "
                      "current: %llu",
                      (unsigned long long)want, (unsigned long long)srv->rv);
        kc__fail_cause(&req->err, "ResourceVersionTooLarge", NULL, "Too large resource version");
        req->err.retry_after_s = 1; /* upstream: retry in 1 s */
    } else {
        kc__entry *e = kc__store_find(r, r->namespaced ? req->route.ns : "", req->route.name);
        if (e)
            obj = kc_obj_ref(e->obj);
        else
            rc = kc__fail_notfound(&req->err, r, req->route.name);
    }
    pthread_mutex_unlock(&srv->mu);
    if (rc == 0 && r->is_crd) /* CV7: read in another version */
        rc = kc__convert_objs(req, r, &obj, 1);
    if (rc == 0)
        rc = kc__reply_obj(req, 200, r, obj);
    kc_obj_unref(obj);
    return rc;
}

/* The reply of a write: a custom resource back in the request's version (CV7). */
static int reply_written(kc__req *req, unsigned status, kc__rsrc *r, kc_obj *obj)
{
    int rc = r->is_crd ? kc__convert_objs(req, r, &obj, 1) : 0;
    if (rc == 0)
        rc = kc__reply_obj(req, status, r, obj);
    kc_obj_unref(obj);
    return rc;
}

int kc__verb_create(kc__req *req, kc__rsrc *r)
{
    kc_server *srv = req->srv;
    bool dry;
    json_t *doc;
    char mgr[KC__FIELD_MANAGER_MAX + 1];
    int rc = kc__dry_run_parse(req->q.dry_run, &dry, &req->err);
    if (rc || (rc = kc__write_manager(req, mgr)) != 0)
        return rc;
    if (r->namespaced && !req->route.has_ns)
        return kc__fail_generic(&req->err, 404);
    if ((rc = parse_body(req, &doc)) != 0)
        return rc;
    bool conv = false;
    if ((rc = kc__field_check(req, r, doc, NULL)) != 0 ||
        (r->is_crd && (rc = kc__convert_in(req, r, &doc, &conv)) != 0)) {
        json_decref(doc);
        return rc;
    }
    kc__write w = make_write(req, r, dry, mgr);
    if (conv) /* CV7: stored at the storage version */
        w.version = r->versions[0];
    kc_obj *obj = NULL;
    kc__adm_chain *c = NULL;
    bool retry;
    if ((rc = kc__admit_begin(req, r, "CREATE", dry, "CreateOptions", w.manager, &c)) != 0) {
        ;
    } else if (c) { /* admission webhooks (admit.c) */
        rc = kc__admit_write(req, &w, c, NULL, false, &doc, &obj, &retry);
        kc__adm_end(c);
    } else {
        pthread_mutex_lock(&srv->mu);
        if (r->removed)
            rc = kc__fail_generic(&req->err, 404);
        else
            rc = kc__write_create(srv, &w, doc, &obj, &req->err);
        pthread_mutex_unlock(&srv->mu);
    }
    json_decref(doc);
    if (rc)
        return rc;
    return reply_written(req, 201, r, obj);
}

/* PUT through admission webhooks: again from the new state when the object changed meanwhile. */
static int update_admitted(kc__req *req, kc__rsrc *r, const kc__write *w, kc__adm_chain *c,
                           const json_t *doc, kc_obj **obj)
{
    for (int i = 0; i < KC__ADMIT_RETRIES; i++) {
        json_t *old = NULL;
        char rv[24];
        int rc = kc__admit_read(req, r, w->ns, &old, rv);
        if (rc)
            return rc;
        json_t *d = json_deep_copy(doc);
        bool retry = false;
        kc__adm_set_old(c, "UPDATE", old);
        rc = d ? kc__admit_write(req, w, c, rv, true, &d, obj, &retry)
               : kc_error_set(&req->err, KC_ENOMEM, "out of memory");
        kc__adm_set_old(c, "UPDATE", NULL);
        json_decref(d);
        json_decref(old);
        if (rc || !retry)
            return rc;
    }
    return kc__admit_conflict(req, r);
}

int kc__verb_update(kc__req *req, kc__rsrc *r)
{
    kc_server *srv = req->srv;
    bool dry;
    json_t *doc;
    char mgr[KC__FIELD_MANAGER_MAX + 1];
    int rc = kc__dry_run_parse(req->q.dry_run, &dry, &req->err);
    if (rc || (rc = kc__write_manager(req, mgr)) != 0 || (rc = parse_body(req, &doc)) != 0)
        return rc;
    const char *bname = kc__meta_str(doc, "name");
    const char *bns = kc__meta_str(doc, "namespace");
    if (bname && *bname && strcmp(bname, req->route.name) != 0)
        rc = kc__fail(&req->err, 400, "BadRequest",
                      "the name of the object (%s) does not match the name on the URL (%s)", bname,
                      req->route.name);
    else if (r->namespaced && bns && *bns && strcmp(bns, req->route.ns) != 0)
        rc = kc__fail(&req->err, 400, "BadRequest",
                      "the namespace of the provided object does "
                      "not match the namespace sent on the request");
    else
        rc = kc__field_check(req, r, doc, NULL);
    bool conv = false;
    if (rc == 0 && r->is_crd)
        rc = kc__convert_in(req, r, &doc, &conv);
    if (rc) {
        json_decref(doc);
        return rc;
    }
    kc__write w = make_write(req, r, dry, mgr);
    if (conv) /* CV7: stored at the storage version */
        w.version = r->versions[0];
    kc_obj *obj = NULL;
    kc__adm_chain *c = NULL;
    if ((rc = kc__admit_begin(req, r, "UPDATE", dry, "UpdateOptions", w.manager, &c)) != 0) {
        ;
    } else if (c) { /* admission webhooks (admit.c) */
        rc = update_admitted(req, r, &w, c, doc, &obj);
        kc__adm_end(c);
    } else {
        pthread_mutex_lock(&srv->mu);
        kc__entry *cur = kc__store_find(r, w.ns, req->route.name);
        if (!cur)
            rc = kc__fail_notfound(&req->err, r, req->route.name);
        else
            rc = kc__write_update(srv, &w, cur, doc, true, &obj, &req->err);
        pthread_mutex_unlock(&srv->mu);
    }
    json_decref(doc);
    if (rc)
        return rc;
    return reply_written(req, 200, r, obj);
}

/* Patch: the patch type from Content-Type (415 when unknown, or strategic on a custom
 * resource), and the apply-only options (force, required fieldManager; 422). */
static int patch_check_type(kc__req *req, kc__rsrc *r, kc__patch_type *type)
{
    int rc = kc__patch_type_from_content_type(req->content_type ? req->content_type : "", type,
                                              &req->err);
    if (rc) {
        req->err.http_status = 415;
        return rc;
    }
    if (*type == KC__PATCH_STRATEGIC && r->is_crd)
        return kc__fail(&req->err, 415, "UnsupportedMediaType",
                        "the body of the request was in an unknown format - accepted media types "
                        "include: application/json-patch+json, application/merge-patch+json, "
                        "application/apply-patch+yaml");
    if (req->q.force_set && *type != KC__PATCH_APPLY) {
        rc = kc__fail(&req->err, 422, "Invalid",
                      "force: Invalid value: true: may not be specified for non-apply patch");
        kc__fail_cause(&req->err, "FieldValueInvalid", "force", "may not be specified");
        return rc;
    }
    if (*type == KC__PATCH_APPLY && (!req->q.field_manager || !*req->q.field_manager)) {
        rc = kc__fail(&req->err, 422, "Invalid",
                      "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is "
                      "required for apply patch");
        kc__fail_cause(&req->err, "FieldValueRequired", "fieldManager", "Required value");
        return rc;
    }
    return 0;
}

/* Server-side apply of applied (scoped by apply_scope) to cur_doc, or a create when cur_doc is
 * NULL — refused (404) through a subresource, which cannot create. */
static int apply_run(kc__req *req, kc__rsrc *r, const json_t *cur_doc, const json_t *applied,
                     const char *now, json_t **nu)
{
    const char *sub = req->route.has_sub ? req->route.sub : NULL;
    if (!cur_doc && sub)
        return kc__fail_notfound(&req->err, r, req->route.name);
    return kc__apply_doc_sub(cur_doc, applied, req->q.field_manager, sub, req->q.force, now, nu,
                             &req->err);
}

/* What an apply may set: through /status only the status (with the identity members), as
 * upstream's status strategies reset every other field before ownership is computed; through
 * the main resource of a kind with a status subresource everything but the status. *applied
 * is replaced by the scoped copy. */
static int apply_scope(kc__req *req, kc__rsrc *r, json_t **applied)
{
    if (req->route.has_sub && strcmp(req->route.sub, "status") == 0) {
        json_t *in = *applied, *md = json_object_get(in, "metadata");
        json_t *out =
            json_pack("{s:O*, s:O*, s:{}}", "apiVersion", json_object_get(in, "apiVersion"), "kind",
                      json_object_get(in, "kind"), "metadata");
        if (!out)
            return kc_error_set(&req->err, KC_ENOMEM, "out of memory");
        json_t *omd = json_object_get(out, "metadata");
        static const char *const ids[] = {"name", "namespace"};
        for (size_t i = 0; i < 2; i++) {
            json_t *v = json_object_get(md, ids[i]);
            if (v)
                json_object_set(omd, ids[i], v);
        }
        json_t *st = json_object_get(in, "status");
        if (st)
            json_object_set(out, "status", st);
        json_decref(in);
        *applied = out;
    } else if (!req->route.has_sub && r->has_status && json_object_get(*applied, "status")) {
        json_t *c = json_copy(*applied);
        if (!c)
            return kc_error_set(&req->err, KC_ENOMEM, "out of memory");
        json_object_del(c, "status");
        json_decref(*applied);
        *applied = c;
    }
    return 0;
}

/* Patch: 400 when the result names another object than the URL. */
static int patch_check_name(kc__req *req, json_t *nu)
{
    const char *bn = kc__meta_str(nu, "name");
    if (bn && strcmp(bn, req->route.name) != 0)
        return kc__fail(&req->err, 400, "BadRequest",
                        "the name of the object (%s) does not "
                        "match the name on the URL (%s)",
                        bn, req->route.name);
    return 0;
}

/* Patch, under srv->mu, of the stored object cur: the apply or patch result (*nu, new
 * reference; *cur_doc the stored object's document), checked and written as an update. */
static int patch_compute_doc(kc__req *req, kc__rsrc *r, json_t *cur_doc, kc__patch_type type,
                             json_t *applied, const char *now, json_t **nu)
{
    int rc;
    if (type == KC__PATCH_APPLY)
        rc = apply_run(req, r, cur_doc, applied, now, nu);
    else
        rc = kc__patch_apply(type, cur_doc, req->body, req->body_len, r->kind, !r->is_crd, nu,
                             &req->err);
    if (rc == 0)
        rc = patch_check_name(req, *nu);
    if (rc == 0 && !json_is_object(*nu))
        rc = kc__fail(&req->err, 422, "Invalid", "the patch result is not an object");
    if (rc == 0 && type != KC__PATCH_APPLY)
        rc = kc__field_check(req, r, *nu, cur_doc);
    return rc;
}

static int patch_compute(kc__req *req, kc__rsrc *r, kc__entry *cur, kc__patch_type type,
                         json_t *applied, const char *now, json_t **nu, json_t **cur_doc)
{
    if (!(*cur_doc = kc__doc_from_obj(cur->obj)))
        return kc_error_set(&req->err, KC_ENOMEM, "cannot decode stored object");
    return patch_compute_doc(req, r, *cur_doc, type, applied, now, nu);
}

/* One round of a PATCH in a non-storage version (mu NOT held): the stored document *old and
 * its rv (NULL *old: nothing stored), and the result *nu converted to the storage version. */
static int patch_conv_round(kc__req *req, kc__rsrc *r, const kc__write *w, kc__conv *cv,
                            kc__patch_type type, json_t *applied, const char *now, json_t **old,
                            char rv[24], json_t **nu)
{
    char want[256], storage[256];
    kc__rsrc_api_version(r, req->route.version, want, sizeof(want));
    kc__rsrc_api_version(r, r->versions[0], storage, sizeof(storage));
    pthread_mutex_lock(&req->srv->mu);
    kc__entry *cur = kc__store_find(r, w->ns, req->route.name);
    *old = cur ? kc__doc_from_obj(cur->obj) : NULL;
    if (cur)
        snprintf(rv, 24, "%s", kc_obj_resource_version(cur->obj));
    pthread_mutex_unlock(&req->srv->mu);
    if (!cur && type != KC__PATCH_APPLY)
        return kc__fail_notfound(&req->err, r, req->route.name);
    if (cur && !*old)
        return kc_error_set(&req->err, KC_ENOMEM, "cannot decode stored object");
    int rc = 0;
    if (!cur) {
        rc = apply_run(req, r, NULL, applied, now, nu);
        if (rc == 0)
            rc = patch_check_name(req, *nu);
    } else {
        json_t *in = json_incref(*old); /* kc__conv_docs releases what it replaces */
        rc = kc__conv_docs(cv, &in, 1, want, &req->err);
        if (rc == 0)
            rc = patch_compute_doc(req, r, in, type, applied, now, nu);
        json_decref(in);
    }
    if (rc == 0 && !json_object_get(*nu, "apiVersion"))
        json_object_set_new(*nu, "apiVersion", json_string(want));
    if (rc == 0 && !json_object_get(*nu, "kind"))
        json_object_set_new(*nu, "kind", json_string(r->kind));
    return rc ? rc : kc__conv_docs(cv, nu, 1, storage, &req->err);
}

/* PATCH of a custom resource in a version other than its storage version, its CRD converting by
 * webhook (CV7): the stored object converted to the request's version outside mu, patched
 * there, the result converted back to the storage version and written (through the admission
 * chain c when there is one) if the object did not change meanwhile, else again. */
static int patch_converted(kc__req *req, kc__rsrc *r, kc__write *w, kc__conv *cv, kc__adm_chain *c,
                           kc__patch_type type, json_t *applied, const char *now, kc_obj **obj,
                           unsigned *status)
{
    w->version = r->versions[0];
    for (int i = 0; i < KC__ADMIT_RETRIES; i++) {
        json_t *nu = NULL, *old = NULL;
        char rv[24] = "";
        bool retry = false;
        int rc = patch_conv_round(req, r, w, cv, type, applied, now, &old, rv, &nu);
        *status = old ? 200 : 201;
        if (rc == 0 && c) {
            kc__adm_set_old(c, old ? "UPDATE" : "CREATE", old);
            kc__adm_set_options(c, kc__admit_options(old ? "UpdateOptions" : "CreateOptions",
                                                     w->dry_run, w->manager));
        }
        if (rc == 0)
            rc = kc__admit_write(req, w, c, old ? rv : NULL, false, &nu, obj, &retry);
        if (c)
            kc__adm_set_old(c, "UPDATE", NULL);
        json_decref(nu);
        json_decref(old);
        if (rc || !retry)
            return rc;
    }
    return kc__admit_conflict(req, r);
}

static int patch_existing(kc__req *req, kc__rsrc *r, const kc__write *w, kc__entry *cur,
                          kc__patch_type type, json_t *applied, const char *now, json_t **nu,
                          json_t **cur_doc, kc_obj **obj)
{
    int rc = patch_compute(req, r, cur, type, applied, now, nu, cur_doc);
    if (rc == 0)
        rc = kc__write_update(req->srv, w, cur, *nu, false, obj, &req->err);
    return rc;
}

/* Under mu: the patch result *nu of the stored object (*cur_doc, rv), or of nothing for an
 * apply that creates (*status 201). */
static int patch_result(kc__req *req, kc__rsrc *r, const kc__write *w, kc__patch_type type,
                        json_t *applied, const char *now, json_t **nu, json_t **cur_doc,
                        char rv[24], unsigned *status)
{
    kc__entry *cur = kc__store_find(r, w->ns, req->route.name);
    if (!cur && type != KC__PATCH_APPLY)
        return kc__fail_notfound(&req->err, r, req->route.name);
    if (!cur) {
        *status = 201;
        int rc = apply_run(req, r, NULL, applied, now, nu);
        return rc ? rc : patch_check_name(req, *nu);
    }
    *status = 200;
    snprintf(rv, 24, "%s", kc_obj_resource_version(cur->obj));
    return patch_compute(req, r, cur, type, applied, now, nu, cur_doc);
}

/* PATCH through admission webhooks (AR4, AR7: a patch that creates is a CREATE with
 * CreateOptions); again from the new state when the object changed meanwhile. */
static int patch_admitted(kc__req *req, kc__rsrc *r, const kc__write *w, kc__adm_chain *c,
                          kc__patch_type type, json_t *applied, const char *now, kc_obj **obj,
                          unsigned *status)
{
    for (int i = 0; i < KC__ADMIT_RETRIES; i++) {
        json_t *nu = NULL, *cur_doc = NULL;
        char rv[24] = "";
        bool retry = false;
        pthread_mutex_lock(&req->srv->mu);
        int rc = patch_result(req, r, w, type, applied, now, &nu, &cur_doc, rv, status);
        pthread_mutex_unlock(&req->srv->mu);
        if (rc == 0) {
            kc__adm_set_old(c, cur_doc ? "UPDATE" : "CREATE", cur_doc);
            kc__adm_set_options(c, kc__admit_options(cur_doc ? "UpdateOptions" : "CreateOptions",
                                                     w->dry_run, w->manager));
            rc = kc__admit_write(req, w, c, cur_doc ? rv : NULL, false, &nu, obj, &retry);
            kc__adm_set_old(c, "UPDATE", NULL);
        }
        json_decref(nu);
        json_decref(cur_doc);
        if (rc || !retry)
            return rc;
    }
    return kc__admit_conflict(req, r);
}

int kc__verb_patch(kc__req *req, kc__rsrc *r)
{
    kc_server *srv = req->srv;
    kc__patch_type type;
    bool dry;
    int rc = patch_check_type(req, r, &type);
    if (rc)
        return rc;
    /* apply records its own "Apply" entry (kc__apply_doc); the other patches an "Update" one */
    char mgr[KC__FIELD_MANAGER_MAX + 1] = "";
    const char *fv_mode;
    if ((rc = kc__dry_run_parse(req->q.dry_run, &dry, &req->err)) != 0 ||
        (rc = kc__field_validation_mode(req, &fv_mode)) != 0 ||
        (type != KC__PATCH_APPLY && (rc = kc__write_manager(req, mgr)) != 0))
        return rc;
    /* fieldValidation: an apply's configuration is checked before it merges (what it drops is
     * not recorded as owned); other patches' results below, for the fields they add. */
    json_t *applied = NULL;
    if (type == KC__PATCH_APPLY &&
        ((rc = kc__apply_decode(req->body, req->body_len, &applied, &req->err)) != 0 ||
         (rc = kc__field_check(req, r, applied, NULL)) != 0 ||
         (rc = apply_scope(req, r, &applied)) != 0)) {
        json_decref(applied);
        return rc;
    }
    kc__write w = make_write(req, r, dry, mgr);
    w.apply = type == KC__PATCH_APPLY;
    char now[32];
    kc__now_rfc3339(now);
    kc_obj *obj = NULL;
    json_t *nu = NULL, *cur_doc = NULL;
    unsigned status = 200;
    kc__adm_chain *c = NULL;
    kc__conv *cv = NULL;
    if (r->is_crd && strcmp(req->route.version, r->versions[0]) != 0 &&
        (rc = kc__conv_begin(srv, r, &cv, &req->err)) != 0) {
        json_decref(applied);
        goto done;
    }
    if ((rc = kc__admit_begin(req, r, "UPDATE", dry, "UpdateOptions", w.manager, &c)) == 0 && cv)
        rc = patch_converted(req, r, &w, cv, c, type, applied, now, &obj, &status); /* CV7 */
    else if (rc == 0 && c) /* admission webhooks (admit.c) */
        rc = patch_admitted(req, r, &w, c, type, applied, now, &obj, &status);
    if (rc || c || cv) {
        kc__conv_end(cv);
        kc__adm_end(c);
        json_decref(applied);
        goto done;
    }
    pthread_mutex_lock(&srv->mu);
    kc__entry *cur = kc__store_find(r, w.ns, req->route.name);
    if (!cur && type != KC__PATCH_APPLY) {
        rc = kc__fail_notfound(&req->err, r, req->route.name);
    } else if (!cur) { /* apply of an object that does not exist: create it */
        rc = apply_run(req, r, NULL, applied, now, &nu);
        if (rc == 0) {
            if ((rc = patch_check_name(req, nu)) == 0)
                rc = kc__write_create(srv, &w, nu, &obj, &req->err);
            status = 201;
        }
    } else {
        rc = patch_existing(req, r, &w, cur, type, applied, now, &nu, &cur_doc, &obj);
    }
    pthread_mutex_unlock(&srv->mu);
    json_decref(applied);
    json_decref(nu);
    json_decref(cur_doc);
done:
    if (rc) {
        if (!req->err.http_status && rc == KC_EMEDIATYPE)
            req->err.http_status = 415;
        return rc;
    }
    return reply_written(req, status, r, obj);
}
