/*
 * scale.c — the `scale` subresource (autoscaling/v1 Scale) of the resources whose table row lists
 * it (deployments, replicasets, statefulsets, replicationcontrollers), so `kubectl scale` works.
 * GET renders a Scale from the object (spec.replicas, status.replicas, status.selector from
 * spec.selector.matchLabels); PUT and PATCH (merge, JSON, strategic) compute a new Scale, then
 * write spec.replicas into the object through the normal update rules (RV precondition from the
 * Scale's metadata, generation bump, MODIFIED event). Runs the storage part under srv->mu like the
 * other verbs.
 */
#include "server/api/api_internal.h"

#include "server/patch/patch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool kc__rsrc_has_scale(const kc__rsrc *r)
{
    return kc__rsrc_has_sub(r, "scale");
}

static json_t *scale_of(json_t *obj)
{
    json_t *m = json_object_get(obj, "metadata");
    json_t *meta = json_object();
    const char *keys[] = {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"};
    for (size_t i = 0; i < KC__ARRAY_LEN(keys); i++)
        if (json_object_get(m, keys[i]))
            json_object_set(meta, keys[i], json_object_get(m, keys[i]));
    json_t *spec = json_object_get(obj, "spec");
    json_int_t want = json_is_integer(json_object_get(spec, "replicas"))
                          ? json_integer_value(json_object_get(spec, "replicas"))
                          : 1;
    json_int_t have =
        json_integer_value(json_object_get(json_object_get(obj, "status"), "replicas"));
    kc__buf sel = KC__BUF_INIT(4096);
    const char *k;
    json_t *v;
    /* a LabelSelector's matchLabels; a ReplicationController's selector is the label map */
    json_t *selector = json_object_get(spec, "selector");
    json_t *labels = json_object_get(selector, "matchLabels");
    if (!labels && !json_object_get(selector, "matchExpressions"))
        labels = selector;
    json_object_foreach(labels, k, v)
    {
        kc__buf_printf(&sel, "%s%s=%s", sel.len ? "," : "", k,
                       json_string_value(v) ? json_string_value(v) : "");
    }
    json_t *s = json_pack("{s:s,s:s,s:o,s:{s:I},s:{s:I,s:s}}", "kind", "Scale", "apiVersion",
                          "autoscaling/v1", "metadata", meta, "spec", "replicas", want, "status",
                          "replicas", have, "selector", sel.data ? sel.data : "");
    kc__buf_free(&sel);
    return s;
}

static int reply_scale(kc__req *req, kc_obj *obj)
{
    json_t *doc = kc__doc_from_obj(obj);
    json_t *s = doc ? scale_of(doc) : NULL;
    json_decref(doc);
    return s ? kc__reply_doc(req, 200, s) : KC_ENOMEM;
}

int kc__scale_get(kc__req *req, kc__rsrc *r)
{
    kc_server *srv = req->srv;
    kc_obj *obj = NULL;
    pthread_mutex_lock(&srv->mu);
    kc__entry *e = kc__store_find(r, req->route.ns, req->route.name);
    if (e)
        obj = kc_obj_ref(e->obj);
    pthread_mutex_unlock(&srv->mu);
    if (!obj)
        return kc__fail_notfound(&req->err, r, req->route.name);
    int rc = reply_scale(req, obj);
    kc_obj_unref(obj);
    return rc;
}

typedef struct scale_in {
    bool patch;
    kc__patch_type type;
    json_t *body; /* PUT: the Scale */
} scale_in;

/* Under mu: the Scale a PUT or PATCH makes of the stored object (*ret_old its Scale before, *nu
 * the new one, *doc the stored object's document, rv its RV). */
static int scale_compute(kc__req *req, kc__rsrc *r, const scale_in *in, json_t **doc,
                         json_t **ret_old, json_t **nu, char rv[24])
{
    kc__entry *e = kc__store_find(r, req->route.ns, req->route.name);
    if (!e)
        return kc__fail_notfound(&req->err, r, req->route.name);
    snprintf(rv, 24, "%s", kc_obj_resource_version(e->obj));
    if (!(*doc = kc__doc_from_obj(e->obj)) || !(*ret_old = scale_of(*doc)))
        return kc_error_set(&req->err, KC_ENOMEM, "out of memory");
    if (in->patch)
        return kc__patch_apply(in->type, *ret_old, req->body, req->body_len, "Scale", true, nu,
                               &req->err);
    *nu = json_incref(in->body);
    return 0;
}

/* The Scale nu's replicas into doc (422 when not a count), with nu's RV precondition or rv. */
static int scale_into(kc__req *req, json_t *doc, json_t *nu, const char *cur_rv)
{
    json_t *rep = json_object_get(json_object_get(nu, "spec"), "replicas");
    if (!json_is_integer(rep) || json_integer_value(rep) < 0)
        return kc__fail(&req->err, 422, "Invalid",
                        "Scale \"%s\" is invalid: spec.replicas: must be a non-negative integer",
                        req->route.name);
    const char *rv =
        json_string_value(json_object_get(json_object_get(nu, "metadata"), "resourceVersion"));
    if (!json_is_object(json_object_get(doc, "spec")))
        json_object_set_new(doc, "spec", json_object());
    json_object_set(json_object_get(doc, "spec"), "replicas", rep);
    kc__meta_set_str(doc, "resourceVersion", rv && *rv ? rv : cur_rv);
    return 0;
}

/* Under mu: compute and write (nu_in: the admitted Scale of an object at want_rv, else computed
 * here; *retry when the object moved on since want_rv). */
static int scale_once(kc__req *req, kc__rsrc *r, const kc__write *w, const scale_in *in,
                      json_t *nu_in, const char *want_rv, kc_obj **out)
{
    json_t *doc = NULL, *old = NULL, *nu = NULL;
    char rv[24] = "";
    int rc = scale_compute(req, r, in, &doc, &old, &nu, rv);
    if (rc == 0 && want_rv && strcmp(rv, want_rv) != 0)
        rc = KC_ECONFLICT; /* moved on: the caller starts again */
    if (rc == 0)
        rc = scale_into(req, doc, nu_in ? nu_in : nu, rv);
    if (rc == 0)
        rc = kc__write_update(req->srv, w, kc__store_find(r, req->route.ns, req->route.name), doc,
                              false, out, &req->err);
    json_decref(doc);
    json_decref(old);
    json_decref(nu);
    return rc;
}

/* /scale through admission webhooks: the Scale is the object (AR2), the old Scale oldObject; the
 * validating webhooks see the Scale of the object the write would store. */
static int scale_admitted(kc__req *req, kc__rsrc *r, const kc__write *w, kc__adm_chain *c,
                          const scale_in *in, kc_obj **out)
{
    kc__write dw = *w;
    dw.dry_run = true;
    for (int i = 0; i < KC__ADMIT_RETRIES; i++) {
        json_t *doc = NULL, *old = NULL, *nu = NULL, *dd = NULL, *ds = NULL;
        char rv[24] = "";
        kc_obj *dry = NULL;
        pthread_mutex_lock(&req->srv->mu);
        int rc = scale_compute(req, r, in, &doc, &old, &nu, rv);
        pthread_mutex_unlock(&req->srv->mu);
        kc__adm_set_old(c, "UPDATE", old);
        if (rc == 0)
            rc = kc__adm_mutate(c, &nu, &req->err);
        if (rc == 0 && kc__adm_has_validating(c)) {
            pthread_mutex_lock(&req->srv->mu);
            rc = scale_once(req, r, &dw, in, nu, rv, &dry);
            pthread_mutex_unlock(&req->srv->mu);
            if (rc == 0 && (!(dd = kc__doc_from_obj(dry)) || !(ds = scale_of(dd))))
                rc = kc_error_set(&req->err, KC_ENOMEM, "out of memory");
            if (rc == 0)
                rc = kc__adm_validate(c, ds, &req->err);
        }
        if (rc == 0) {
            pthread_mutex_lock(&req->srv->mu);
            rc = scale_once(req, r, w, in, nu, rv, out);
            pthread_mutex_unlock(&req->srv->mu);
        }
        kc__adm_set_old(c, "UPDATE", NULL);
        kc_obj_unref(dry);
        json_decref(dd);
        json_decref(ds);
        json_decref(doc);
        json_decref(old);
        json_decref(nu);
        if (rc != KC_ECONFLICT || req->err.code)
            return rc;
    }
    return kc__admit_conflict(req, r);
}

/* PUT (patch false) or PATCH (patch true) of /scale. */
int kc__scale_write(kc__req *req, kc__rsrc *r, bool patch)
{
    kc_server *srv = req->srv;
    kc__patch_type type = KC__PATCH_MERGE;
    json_t *body = NULL;
    int rc = 0;
    bool dry;
    if ((rc = kc__dry_run_parse(req->q.dry_run, &dry, &req->err)) != 0)
        return rc;
    if (patch) {
        rc = kc__patch_type_from_content_type(req->content_type ? req->content_type : "", &type,
                                              &req->err);
        if (rc || type == KC__PATCH_APPLY) {
            if (!rc)
                rc = kc__fail(&req->err, 415, "UnsupportedMediaType",
                              "apply is not supported on the scale subresource");
            req->err.http_status = 415;
            return rc;
        }
    } else {
        json_error_t je;
        body = json_loadb(req->body, req->body_len, 0, &je);
        if (!json_is_object(body)) {
            json_decref(body);
            return kc__fail(&req->err, 400, "BadRequest", "invalid Scale: %s", je.text);
        }
    }
    char mgr[KC__FIELD_MANAGER_MAX + 1];
    if ((rc = kc__write_manager(req, mgr)) != 0) {
        json_decref(body);
        return rc;
    }
    kc__write w = {.r = r,
                   .ns = req->route.ns,
                   .version = req->route.version,
                   .dry_run = dry,
                   .manager = *mgr ? mgr : NULL,
                   .subresource = "scale"};
    kc_obj *out = NULL;
    scale_in in = {.patch = patch, .type = type, .body = body};
    kc__adm_chain *c = NULL;
    if ((rc = kc__admit_begin(req, r, "UPDATE", dry, "UpdateOptions", w.manager, &c)) == 0 && c) {
        kc__adm_set_kind(c, "autoscaling", "v1", "Scale"); /* AR2 */
        rc = scale_admitted(req, r, &w, c, &in, &out);
        kc__adm_end(c);
    } else if (rc == 0) {
        pthread_mutex_lock(&srv->mu);
        rc = scale_once(req, r, &w, &in, NULL, NULL, &out);
        pthread_mutex_unlock(&srv->mu);
    }
    json_decref(body);
    if (rc)
        return rc;
    rc = reply_scale(req, out);
    kc_obj_unref(out);
    return rc;
}
