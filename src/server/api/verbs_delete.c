/*
 * verbs_delete.c — the DELETE verbs (spec §3.5, §3.6; #48–#58): DeleteOptions from the body or
 * the query (propagationPolicy validated, dryRun, gracePeriodSeconds), then the storage rules of
 * storage/delete.c on one object or on every object of a collection matching the selectors.
 * Pods and service accounts reply with the object, other types with a Success Status (uid in
 * details).
 */
#include "server/api/api_internal.h"

#include <stdlib.h>
#include <string.h>

/* DeleteOptions from the body (wins when non-empty) or the query. */
static int delete_opts(kc__req *req, json_t **ret_opts, bool *ret_dry, int64_t *ret_grace)
{
    json_t *opts = NULL;
    if (req->body_len) {
        json_error_t je;
        opts = json_loadb(req->body, req->body_len, 0, &je);
        if (!json_is_object(opts)) {
            json_decref(opts);
            return kc__fail(&req->err, 400, "BadRequest", "invalid DeleteOptions: %s", je.text);
        }
    } else {
        opts = json_object();
    }
    const char *prop = json_string_value(json_object_get(opts, "propagationPolicy"));
    if (!prop && req->q.propagation && *req->q.propagation) {
        prop = req->q.propagation; /* one place for the controllers to read it */
        json_object_set_new(opts, "propagationPolicy", json_string(prop));
    }
    if (prop && *prop && strcmp(prop, "Orphan") && strcmp(prop, "Background") &&
        strcmp(prop, "Foreground")) {
        json_decref(opts);
        int rc = kc__fail(&req->err, 422, "Invalid",
                          "propagationPolicy: Unsupported value: \"%s\": supported values: "
                          "\"Foreground\", \"Background\", \"Orphan\"",
                          prop);
        kc__fail_cause(&req->err, "FieldValueNotSupported", "propagationPolicy", prop);
        return rc;
    }
    const char *dry = req->q.dry_run;
    json_t *bd = json_object_get(opts, "dryRun");
    if (json_is_array(bd) && json_array_size(bd))
        dry = json_string_value(json_array_get(bd, 0));
    int rc = kc__dry_run_parse(dry, ret_dry, &req->err);
    if (rc) {
        json_decref(opts);
        return rc;
    }
    json_t *g = json_object_get(opts, "gracePeriodSeconds");
    *ret_grace = json_is_integer(g) ? json_integer_value(g) : req->q.grace;
    *ret_opts = opts;
    return 0;
}

static int reply_deleted(kc__req *req, kc__rsrc *r, kc_obj *obj, bool gone)
{
    if (!gone || r->return_deleted)
        return kc__reply_obj(req, 200, r, obj);
    size_t len;
    char *s = kc__status_success_json(r, kc_obj_name(obj), kc_obj_uid(obj), &len);
    if (!s)
        return KC_ENOMEM;
    return kc__reply(req, 200, s, len);
}

int kc__verb_delete(kc__req *req, kc__rsrc *r)
{
    kc_server *srv = req->srv;
    json_t *opts;
    bool dry;
    int64_t grace;
    int rc = delete_opts(req, &opts, &dry, &grace);
    if (rc)
        return rc;
    const char *ns = r->namespaced ? req->route.ns : "";
    kc_obj *obj = NULL;
    bool gone = false;
    kc__adm_chain *c = NULL;
    if ((rc = kc__admit_begin(req, r, "DELETE", dry, "DeleteOptions", NULL, &c)) != 0) {
        ;
    } else if (c) { /* admission webhooks (admit.c) */
        rc = kc__admit_delete(req, r, c, opts, dry, grace, &obj, &gone);
        kc__adm_end(c);
    } else {
        pthread_mutex_lock(&srv->mu);
        kc__entry *cur = kc__store_find(r, ns, req->route.name);
        if (!cur)
            rc = kc__fail_notfound(&req->err, r, req->route.name);
        else
            rc = kc__delete_one(srv, r, cur, opts, dry, grace, &obj, &gone, &req->err);
        pthread_mutex_unlock(&srv->mu);
    }
    json_decref(opts);
    if (rc)
        return rc;
    rc = reply_deleted(req, r, obj, gone);
    kc_obj_unref(obj);
    return rc;
}

int kc__verb_deletecollection(kc__req *req, kc__rsrc *r)
{
    kc_server *srv = req->srv;
    kc_label_selector *ls = NULL;
    kc_field_selector *fs = NULL;
    json_t *opts = NULL;
    bool dry;
    int64_t grace;
    int rc = delete_opts(req, &opts, &dry, &grace);
    if (rc)
        return rc;
    if (kc_label_selector_parse(req->q.label_sel, &ls, NULL) != 0 ||
        kc_field_selector_parse(req->q.field_sel, &fs, NULL) != 0) {
        rc = kc__fail(&req->err, 400, "BadRequest", "unable to parse the selectors");
        goto out;
    }
    const char *ns = req->route.has_ns ? req->route.ns : NULL;
    kc__adm_chain *c = NULL;
    if ((rc = kc__admit_begin(req, r, "DELETE", dry, "DeleteOptions", NULL, &c)) != 0)
        goto out;
    if (c) { /* admission webhooks: each object as its own DELETE (admit.c) */
        rc = kc__admit_delete_collection(req, r, c, ns, ls, fs, opts, dry, grace);
        kc__adm_end(c);
        goto out;
    }
    pthread_mutex_lock(&srv->mu);
    size_t n;
    kc__entry **s = kc__store_sorted(r, &n);
    kc_obj **objs = n ? malloc(n * sizeof(*objs)) : NULL;
    size_t k = 0;
    for (size_t i = 0; i < n && objs && s; i++)
        if ((!ns || !strcmp(s[i]->ns, ns)) && kc_label_selector_match(ls, s[i]->obj) &&
            kc_field_selector_match(fs, s[i]->obj))
            objs[k++] = kc_obj_ref(s[i]->obj);
    kc_obj **deleted = k ? malloc(k * sizeof(*deleted)) : NULL;
    size_t nd = 0;
    for (size_t i = 0; i < k && rc == 0; i++) {
        kc__entry *e = kc__store_find(r, kc_obj_namespace(objs[i]), kc_obj_name(objs[i]));
        kc_obj *res = NULL;
        bool gone;
        if (e && (rc = kc__delete_one(srv, r, e, opts, dry, grace, &res, &gone, &req->err)) == 0) {
            if (deleted)
                deleted[nd++] = res;
            else
                kc_obj_unref(res);
        }
    }
    uint64_t rv = srv->rv;
    pthread_mutex_unlock(&srv->mu);
    for (size_t i = 0; i < k; i++)
        kc_obj_unref(objs[i]);
    free(objs);
    if (rc == 0) {
        rc = kc__reply_list(req, r, deleted, nd, rv, NULL, -1); /* takes deleted */
    } else {
        for (size_t i = 0; i < nd; i++)
            kc_obj_unref(deleted[i]);
        free(deleted);
    }
out:
    kc_label_selector_free(ls);
    kc_field_selector_free(fs);
    json_decref(opts);
    return rc;
}
