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
    json_t *doc = NULL, *scale = NULL, *nu = NULL;
    pthread_mutex_lock(&srv->mu);
    kc__entry *e = kc__store_find(r, req->route.ns, req->route.name);
    if (!e) {
        rc = kc__fail_notfound(&req->err, r, req->route.name);
        goto unlock;
    }
    if (!(doc = kc__doc_from_obj(e->obj)) || !(scale = scale_of(doc))) {
        rc = kc_error_set(&req->err, KC_ENOMEM, "out of memory");
        goto unlock;
    }
    if (patch)
        rc = kc__patch_apply(type, scale, req->body, req->body_len, "Scale", true, &nu, &req->err);
    else
        nu = json_incref(body);
    if (rc)
        goto unlock;
    json_t *rep = json_object_get(json_object_get(nu, "spec"), "replicas");
    if (!json_is_integer(rep) || json_integer_value(rep) < 0) {
        rc = kc__fail(&req->err, 422, "Invalid",
                      "Scale \"%s\" is invalid: spec.replicas: must "
                      "be a non-negative integer",
                      req->route.name);
        goto unlock;
    }
    const char *rv =
        json_string_value(json_object_get(json_object_get(nu, "metadata"), "resourceVersion"));
    if (!json_is_object(json_object_get(doc, "spec")))
        json_object_set_new(doc, "spec", json_object());
    json_object_set(json_object_get(doc, "spec"), "replicas", rep);
    kc__meta_set_str(doc, "resourceVersion", rv && *rv ? rv : kc_obj_resource_version(e->obj));
    rc = kc__write_update(srv, &w, e, doc, false, &out, &req->err);
unlock:
    pthread_mutex_unlock(&srv->mu);
    json_decref(body);
    json_decref(doc);
    json_decref(scale);
    json_decref(nu);
    if (rc)
        return rc;
    rc = reply_scale(req, out);
    kc_obj_unref(out);
    return rc;
}
