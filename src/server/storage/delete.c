/*
 * delete.c — the storage side of DELETE (spec §3.5; #48–#58), on one entry with srv->mu held:
 * preconditions (uid, resourceVersion → 409); objects with finalizers get deletionTimestamp
 * (+ generation bump) and stay (MODIFIED; repeated deletes return them unchanged); pods bound to
 * a node and not finished are deleted gracefully (deletionTimestamp = now + grace) unless
 * gracePeriodSeconds=0; everything else is removed at once with a DELETED event carrying the last
 * state at the deletion RV. propagationPolicy matters only with the optional garbage collector
 * (controllers/gc.c), which srv->ctl->deleting and ->removed call into. Removing a namespace
 * removes its contents first (unless the optional namespace controller runs its lifecycle);
 * removing a CRD removes its objects and unregisters its resources.
 * Returns objects and a kc_error; the verbs (api/verbs_delete.c) reply.
 */
#include "server/storage/storage_internal.h"

#include <stdlib.h>
#include <string.h>

/* Remove every object of r matching ns (NULL = all) with DELETED events. */
static int remove_all(kc_server *srv, kc__rsrc *r, const char *ns, kc_error *err)
{
    size_t n;
    kc__entry **s = kc__store_sorted(r, &n);
    if (!n)
        return 0;
    kc_obj **objs = malloc(n * sizeof(*objs));
    if (!s || !objs) {
        free(objs);
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!ns || strcmp(s[i]->ns, ns) == 0)
            objs[k++] = kc_obj_ref(s[i]->obj);
    int rc = 0;
    for (size_t i = 0; i < k; i++) {
        kc__entry *e = kc__store_find(r, kc_obj_namespace(objs[i]), kc_obj_name(objs[i]));
        if (e && rc == 0)
            rc = kc__write_remove(srv, r, e, NULL, err);
        kc_obj_unref(objs[i]);
    }
    free(objs);
    return rc;
}

int kc__write_remove(kc_server *srv, kc__rsrc *r, kc__entry *cur, kc_obj **ret_last, kc_error *err)
{
    int rc;
    kc_obj *old = kc_obj_ref(cur->obj);
    if (!r->group[0] && strcmp(r->plural, "namespaces") == 0) {
        for (size_t i = 0; i < srv->n_rsrcs; i++)
            if (srv->rsrcs[i]->namespaced &&
                (rc = remove_all(srv, srv->rsrcs[i], kc_obj_name(old), err)) != 0)
                goto out;
    } else if (!r->is_crd && strcmp(r->plural, "customresourcedefinitions") == 0) {
        for (size_t i = 0; i < srv->n_rsrcs; i++)
            if (srv->rsrcs[i]->crd_name && strcmp(srv->rsrcs[i]->crd_name, kc_obj_name(old)) == 0 &&
                (rc = remove_all(srv, srv->rsrcs[i], NULL, err)) != 0)
                goto out;
        if (srv->crd)
            srv->crd->removed(srv, kc_obj_name(old));
    }
    cur = kc__store_find(r, kc_obj_namespace(old), kc_obj_name(old));
    if (!cur) {
        rc = 0;
        goto out;
    }
    uint64_t rv = srv->rv + 1;
    kc_obj *last;
    if ((rc = kc__obj_with_rv(srv, old, rv, &last, err)) != 0)
        goto out;
    if ((rc = kc__store_commit(srv, r, KC_WATCH_DELETED, last, old, rv)) != 0) {
        kc_obj_unref(last);
        rc = kc_error_set(err, rc, "out of memory");
        goto out;
    }
    kc__write_released(srv, r, old);
    if (srv->ctl)
        srv->ctl->removed(srv, r, old);
    if (ret_last)
        *ret_last = last;
    else
        kc_obj_unref(last);
out:
    kc_obj_unref(old);
    return rc;
}

int kc__mark_deleting(kc_server *srv, kc__rsrc *r, kc__entry *cur, int64_t grace,
                      const char *add_finalizer, bool dry_run, kc_obj **ret_obj, kc_error *err)
{
    json_t *doc = kc__doc_from_obj(cur->obj);
    if (!doc)
        return kc_error_set(err, KC_ENOMEM, "cannot decode stored object");
    char ts[32];
    kc__now_rfc3339(ts);
    if (grace > 0) {
        time_t t = (time_t)(kc__wall_ms() / 1000) + (time_t)grace;
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    json_t *m = kc__meta(doc);
    if (add_finalizer) {
        json_t *f = json_object_get(m, "finalizers");
        if (!json_is_array(f)) {
            f = json_array();
            json_object_set_new(m, "finalizers", f);
        }
        json_array_append_new(f, json_string(add_finalizer));
    }
    if (!r->group[0] && strcmp(r->plural, "namespaces") == 0) { /* namespace strategy */
        if (!json_is_object(json_object_get(doc, "status")))
            json_object_set_new(doc, "status", json_object());
        json_object_set_new(json_object_get(doc, "status"), "phase", json_string("Terminating"));
    }
    json_object_set_new(m, "deletionTimestamp", json_string(ts));
    json_object_set_new(m, "deletionGracePeriodSeconds", json_integer(grace > 0 ? grace : 0));
    json_int_t g = json_integer_value(json_object_get(m, "generation"));
    if (g > 0)
        json_object_set_new(m, "generation", json_integer(g + 1));
    uint64_t rv = srv->rv + 1;
    if (!dry_run) {
        char s[24];
        kc__rv_str(rv, s);
        json_object_set_new(m, "resourceVersion", json_string(s));
    }
    kc_obj *obj;
    int rc = kc__obj_from_doc(srv, doc, &obj, err);
    json_decref(doc);
    if (rc)
        return rc;
    if (!dry_run && (rc = kc__store_commit(srv, r, KC_WATCH_MODIFIED, obj, cur->obj, rv)) != 0) {
        kc_obj_unref(obj);
        return kc_error_set(err, rc, "out of memory");
    }
    *ret_obj = obj;
    return 0;
}

int kc__delete_one(kc_server *srv, kc__rsrc *r, kc__entry *cur, json_t *opts, bool dry_run,
                   int64_t grace, kc_obj **ret_obj, bool *ret_gone, kc_error *err)
{
    json_t *pre = json_object_get(opts, "preconditions");
    const char *puid = json_string_value(json_object_get(pre, "uid"));
    const char *prv = json_string_value(json_object_get(pre, "resourceVersion"));
    char q[300];
    kc__rsrc_qualified(r, q, sizeof(q));
    if (puid && strcmp(puid, kc_obj_uid(cur->obj)) != 0) {
        int rc = kc__fail(err, 409, "Conflict",
                          "Operation cannot be fulfilled on %s \"%s\": Precondition failed: UID "
                          "in precondition: %s, UID in object meta: %s",
                          q, cur->name, puid, kc_obj_uid(cur->obj));
        kc__fail_details(err, cur->name, r->group[0] ? r->group : NULL, r->plural);
        return rc;
    }
    if (prv && strcmp(prv, kc_obj_resource_version(cur->obj)) != 0) {
        int rc = kc__fail(err, 409, "Conflict",
                          "Operation cannot be fulfilled on %s \"%s\": the ResourceVersion in the "
                          "precondition (%s) does not match the ResourceVersion in record (%s). "
                          "The object might have been modified",
                          q, cur->name, prv, kc_obj_resource_version(cur->obj));
        kc__fail_details(err, cur->name, r->group[0] ? r->group : NULL, r->plural);
        return rc;
    }
    *ret_gone = false;
    if (srv->ctl && !dry_run) {
        const char *prop = json_string_value(json_object_get(opts, "propagationPolicy"));
        char ns[256], name[256];
        snprintf(ns, sizeof(ns), "%s", cur->ns);
        snprintf(name, sizeof(name), "%s", cur->name);
        int c = srv->ctl->deleting(srv, r, cur, prop, ret_obj, err);
        if (c != 0)
            return c < 0 ? c : 0;
        if (!(cur = kc__store_find(r, ns, name))) /* the controller's writes may move entries */
            return kc__fail_notfound(err, r, name);
    }
    if (kc_obj_finalizer_count(cur->obj) > 0) {
        if (kc_obj_deleting(cur->obj)) { /* idempotent (#51) */
            *ret_obj = kc_obj_ref(cur->obj);
            return 0;
        }
        return kc__mark_deleting(srv, r, cur, 0, NULL, dry_run, ret_obj, err);
    }
    if (r->graceful && grace != 0) {
        char *node = NULL, *phase = NULL;
        kc_obj_get_string(cur->obj, "/spec/nodeName", &node, NULL, NULL);
        kc_obj_get_string(cur->obj, "/status/phase", &phase, NULL, NULL);
        bool bound =
            node && *node && !(phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")));
        free(node);
        free(phase);
        if (bound) {
            if (kc_obj_deleting(cur->obj)) {
                *ret_obj = kc_obj_ref(cur->obj);
                return 0;
            }
            if (grace < 0) {
                int64_t t = 30;
                if (kc_obj_get_int(cur->obj, "/spec/terminationGracePeriodSeconds", &t, NULL) != 0)
                    t = 30;
                grace = t;
            }
            if (grace > 0)
                return kc__mark_deleting(srv, r, cur, grace, NULL, dry_run, ret_obj, err);
        }
    }
    *ret_gone = true;
    if (dry_run) {
        *ret_obj = kc_obj_ref(cur->obj);
        return 0;
    }
    return kc__write_remove(srv, r, cur, ret_obj, err);
}
