/*
 * pod_binding.c — the pods/binding subresource: POST a v1 Binding to assign a pending pod to a
 * node, as a scheduler does (kube-scheduler's DefaultBinder, or a custom scheduler written
 * against kcache serve).
 *
 * Rules follow upstream's BindingREST (pkg/registry/core/pod/storage/storage.go, Create →
 * assignPod → setPodHostAndAnnotations) and ValidatePodBinding:
 *   - only POST (405 otherwise); the body is a Binding in JSON or protobuf;
 *   - metadata.name must be the URL's pod name (400 "name in URL does not match name in Binding
 *     object");
 *   - target.kind "" or "Node" (else 422 NotSupported on target.kind), target.name required
 *     (422 Required on target.name);
 *   - the pod must exist (404), not be terminating (409 "pod P is being deleted, cannot be
 *     assigned to a host") and not be bound yet (409 "pod P is already assigned to node "N"");
 *   - the binding's metadata.annotations are set on the pod, spec.nodeName = target.name, and the
 *     PodScheduled condition becomes True, in one update (one MODIFIED event), recorded in
 *     managedFields as an Update through subresource "binding";
 *   - the reply is 201 with a Success Status; dryRun=All validates and stores nothing.
 * Admission webhooks (upstream's create handler around BindingREST.Create): a binding is a
 * CREATE of subresource pods/binding whose object is the Binding (kind v1 Binding, AR2; oldObject
 * null, options CreateOptions, AR6/AR7), metadata.namespace filled from the URL as the create
 * handler does. The mutating chain runs on the Binding as sent (CH1), then the checks above run on
 * what it left (the name, the target), then the validating webhooks see that Binding (CH6), then
 * the pod is assigned; a denial or a failing Fail-policy call stores nothing. Without a webhook
 * configuration the binding takes its single-lock path unchanged.
 * Thread-safe: the storage part runs under srv->mu like the other verbs.
 */
#include "server/api/api_internal.h"

#include "server/patch/validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool kc__pod_binding_sub(const kc__rsrc *r, const char *sub)
{
    return !r->group[0] && strcmp(r->plural, "pods") == 0 && strcmp(sub, "binding") == 0;
}

static int binding_invalid(kc_error *err, const char *name, const char *field, const char *cause,
                           const char *msg)
{
    int rc = kc__fail(err, 422, "Invalid", "Binding \"%s\" is invalid: %s: %s", name, field, msg);
    kc__fail_details(err, name, NULL, "Binding");
    kc__fail_cause(err, cause, field, msg);
    return rc;
}

static int binding_body(kc__req *req, json_t **ret)
{
    if (req->content_type &&
        kc__starts_with(req->content_type, "application/vnd.kubernetes.protobuf"))
        return kc__proto_to_json(req->body, req->body_len, ret, &req->err);
    json_error_t je;
    json_t *doc = json_loadb(req->body, req->body_len, 0, &je);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return kc__fail(&req->err, 400, "BadRequest", "invalid Binding: %s",
                        doc ? "the request body is not a JSON object" : je.text);
    }
    *ret = doc;
    return 0;
}

/* The checks of the Binding alone; *node the target node (borrowed from b). */
static int binding_check(kc__req *req, json_t *b, const char **node)
{
    const char *kind = json_string_value(json_object_get(b, "kind"));
    if (kind && *kind && strcmp(kind, "Binding") != 0)
        return kc__fail(&req->err, 400, "BadRequest", "the body is a %s, not a Binding", kind);
    const char *name = kc__meta_str(b, "name");
    if (!name || strcmp(name, req->route.name) != 0)
        return kc__fail(&req->err, 400, "BadRequest",
                        "name in URL does not match name in Binding object");
    json_t *target = json_object_get(b, "target");
    const char *tkind = json_string_value(json_object_get(target, "kind"));
    if (tkind && *tkind && strcmp(tkind, "Node") != 0)
        return binding_invalid(&req->err, name, "target.kind", "FieldValueNotSupported",
                               "Unsupported value: \"Node\"");
    *node = json_string_value(json_object_get(target, "name"));
    if (!*node || !**node)
        return binding_invalid(&req->err, name, "target.name", "FieldValueRequired",
                               "Required value");
    return 0;
}

/* PodScheduled=True in doc's status.conditions (replaced when present). */
static void set_scheduled(json_t *doc)
{
    json_t *st = json_object_get(doc, "status");
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(doc, "status", st);
    }
    json_t *conds = json_object_get(st, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(st, "conditions", conds);
    }
    char now[32];
    kc__now_rfc3339(now);
    json_t *c = json_pack("{s:s,s:s,s:n,s:s}", "type", "PodScheduled", "status", "True",
                          "lastProbeTime", "lastTransitionTime", now);
    size_t i;
    json_t *e;
    json_array_foreach(conds, i, e)
    {
        if (kc__streq(json_string_value(json_object_get(e, "type")), "PodScheduled")) {
            json_array_set_new(conds, i, c);
            return;
        }
    }
    json_array_append_new(conds, c);
}

/* Under mu: the pod's new state from the Binding, written as an update. */
static int bind_locked(kc__req *req, kc__rsrc *r, const kc__write *w, json_t *b, const char *node,
                       kc_obj **ret)
{
    kc__entry *cur = kc__store_find(r, w->ns, req->route.name);
    if (!cur)
        return kc__fail_notfound(&req->err, r, req->route.name);
    if (kc_obj_deleting(cur->obj))
        return kc__fail(&req->err, 409, "Conflict",
                        "pod %s is being deleted, cannot be assigned to a host", req->route.name);
    json_t *doc = kc__doc_from_obj(cur->obj);
    if (!doc)
        return kc_error_set(&req->err, KC_ENOMEM, "out of memory");
    json_t *spec = json_object_get(doc, "spec");
    const char *had = json_string_value(json_object_get(spec, "nodeName"));
    if (had && *had) {
        int rc = kc__fail(&req->err, 409, "Conflict", "pod %s is already assigned to node \"%s\"",
                          req->route.name, had);
        json_decref(doc);
        return rc;
    }
    if (!json_is_object(spec)) {
        spec = json_object();
        json_object_set_new(doc, "spec", spec);
    }
    json_object_set_new(spec, "nodeName", json_string(node));
    const char *k;
    json_t *v, *ann = json_object_get(json_object_get(b, "metadata"), "annotations");
    json_t *md = json_object_get(doc, "metadata");
    if (json_object_size(ann) && !json_is_object(json_object_get(md, "annotations")))
        json_object_set_new(md, "annotations", json_object());
    json_object_foreach(ann, k, v)
    {
        if (json_is_string(v))
            json_object_set(json_object_get(md, "annotations"), k, v);
    }
    set_scheduled(doc);
    kc__meta_del(doc, "resourceVersion");
    int rc = kc__write_update(req->srv, w, cur, doc, false, ret, &req->err);
    json_decref(doc);
    return rc;
}

/* The Binding as admission sees it: kind and apiVersion set, metadata.namespace the URL's (400
 * when the body names another, as the create handler answers). */
static int binding_for_admission(kc__req *req, json_t *b)
{
    if (!json_is_string(json_object_get(b, "kind")))
        json_object_set_new(b, "kind", json_string("Binding"));
    if (!json_is_string(json_object_get(b, "apiVersion")))
        json_object_set_new(b, "apiVersion", json_string("v1"));
    const char *ns = kc__meta_str(b, "namespace");
    if (ns && *ns && strcmp(ns, req->route.ns) != 0)
        return kc__fail(&req->err, 400, "BadRequest",
                        "the namespace of the provided object does not match the namespace sent "
                        "on the request");
    if (!json_is_object(json_object_get(b, "metadata")))
        json_object_set_new(b, "metadata", json_object());
    return kc__meta_set_str(b, "namespace", req->route.ns) == 0
               ? 0
               : kc_error_set(&req->err, KC_ENOMEM, "out of memory");
}

/* Admission of the Binding *b (CREATE pods/binding): the mutating chain (*b replaced by what it
 * returns), the Binding's own checks, the validating webhooks; *node borrowed from *b. Without a
 * webhook configuration only the checks. mu NOT held. */
static int binding_admit(kc__req *req, kc__rsrc *r, bool dry, const char *mgr, json_t **b,
                         const char **node)
{
    kc__adm_chain *c = NULL;
    int rc = kc__admit_begin(req, r, "CREATE", dry, "CreateOptions", mgr, &c);
    if (rc == 0 && c) {
        kc__adm_set_kind(c, "", "v1", "Binding"); /* AR2: the object is a Binding */
        if ((rc = binding_for_admission(req, *b)) == 0)
            rc = kc__adm_mutate(c, b, &req->err);
    }
    if (rc == 0)
        rc = binding_check(req, *b, node);
    if (rc == 0 && c)
        rc = kc__adm_validate(c, *b, &req->err);
    kc__adm_end(c);
    return rc;
}

int kc__pod_binding(kc__req *req, kc__rsrc *r)
{
    if (req->method != KC__M_POST || !req->route.has_name)
        return kc__fail(&req->err, 405, "MethodNotAllowed",
                        "the server does not allow this method on the requested resource");
    bool dry;
    int rc = kc__dry_run_parse(req->q.dry_run, &dry, &req->err);
    char mgr[KC__FIELD_MANAGER_MAX + 1] = "";
    json_t *b = NULL;
    const char *node = NULL;
    if (rc || (rc = kc__write_manager(req, mgr)) != 0 || (rc = binding_body(req, &b)) != 0 ||
        (rc = binding_admit(req, r, dry, mgr, &b, &node)) != 0) {
        json_decref(b);
        return rc;
    }
    kc__write w = {.r = r,
                   .ns = req->route.ns,
                   .version = req->route.version,
                   .dry_run = dry,
                   .binding = true,
                   .manager = *mgr ? mgr : NULL,
                   .subresource = "binding"};
    kc_obj *obj = NULL;
    pthread_mutex_lock(&req->srv->mu);
    rc = bind_locked(req, r, &w, b, node, &obj);
    pthread_mutex_unlock(&req->srv->mu);
    kc_obj_unref(obj);
    json_decref(b);
    if (rc)
        return rc;
    json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:i}", "kind", "Status", "apiVersion", "v1",
                           "metadata", "status", "Success", "code", 201);
    return kc__reply_doc(req, 201, st);
}
