/*
 * write.c — the storage-side write rules shared by create, update, patch, apply and delete
 * (spec §2, §3.1, §3.3, §3.5): names and generateName, namespace checks, system fields (uid,
 * creationTimestamp, resourceVersion), custom resources' schema validation (srv->crd->validate;
 * 422 with causes), status dropping and the status subresource, generation,
 * finalizers and deletionTimestamp, optimistic concurrency, no-op writes, dry runs, and the
 * managedFields "Update" entry of non-apply writes (#46; kc__write.manager, docs/server.md).
 *
 * Every function runs with srv->mu held: the RV is assigned, the object encoded and committed
 * (map + history + hub) in one critical section, so RVs are strictly increasing in commit order.
 * Documents are jansson trees owned by the caller; stored objects are parsed from their compact
 * dump (KC_DECODE_KEEP_MANAGED_FIELDS).
 */
#include "server/storage/storage_internal.h"

#include "server/patch/patch.h"
#include "server/validation/validation.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* RFC 3339 → seconds since the epoch (fraction ignored; Z or ±hh:mm offset). false when not
 * a timestamp. Clients re-encode creationTimestamp ("+00:00", ".000Z"), so compare instants. */
static bool ts_seconds(const char *s, int64_t *ret)
{
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!p)
        return false;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++)
            ;
    int64_t off = 0;
    if (*p == '+' || *p == '-') {
        int h, m;
        if (sscanf(p + 1, "%2d:%2d", &h, &m) != 2)
            return false;
        off = (*p == '+' ? 1 : -1) * (int64_t)(h * 3600 + m * 60);
    } else if (*p != 'Z' && *p != 'z') {
        return false;
    }
    *ret = (int64_t)timegm(&tm) - off;
    return true;
}

static bool same_instant(const char *a, const char *b)
{
    int64_t x, y;
    if (ts_seconds(a, &x) && ts_seconds(b, &y))
        return x == y;
    return strcmp(a, b) == 0;
}

static int set_rv(json_t *doc, uint64_t rv)
{
    char s[24];
    kc__rv_str(rv, s);
    return kc__meta_set_str(doc, "resourceVersion", s);
}

static void copy_meta(json_t *dst, json_t *src, const char *key)
{
    json_t *v = json_object_get(json_object_get(src, "metadata"), key);
    if (v)
        json_object_set(kc__meta(dst), key, v);
    else
        kc__meta_del(dst, key);
}

static int conflict(kc_error *err, const kc__rsrc *r, const char *name)
{
    char q[300];
    kc__rsrc_qualified(r, q, sizeof(q));
    int rc = kc__fail(err, 409, "Conflict",
                      "Operation cannot be fulfilled on %s \"%s\": the object has been modified; "
                      "please apply your changes to the latest version and try again",
                      q, name);
    kc__fail_details(err, name, r->group[0] ? r->group : NULL, r->plural);
    return rc;
}

static int invalid(kc_error *err, const kc__rsrc *r, const char *name, const char *field,
                   const char *cause, const char *msg)
{
    int rc =
        kc__fail(err, 422, "Invalid", "%s \"%s\" is invalid: %s: %s", r->kind, name, field, msg);
    kc__fail_details(err, name, r->group[0] ? r->group : NULL, r->kind);
    kc__fail_cause(err, cause, field, msg);
    return rc;
}

static bool finalizers_subset(json_t *a, json_t *b)
{
    size_t i, j;
    json_t *x, *y;
    json_array_foreach(a, i, x)
    {
        bool found = false;
        json_array_foreach(b, j, y) found |= json_equal(x, y);
        if (!found)
            return false;
    }
    return true;
}

/* Record the write's managedFields "Update" entry in doc (#46) when w names a manager. On a
 * create the status of a resource with a status subresource is left out of the field set: it
 * is the server's defaulting (phase: Pending/Active), not the creator's, as upstream where the
 * create strategy resets status before ownership is computed. */
static int record_manager(const kc__write *w, json_t *doc, const json_t *old, kc_error *err)
{
    if (!w->manager || !*w->manager)
        return 0;
    json_t *st = NULL;
    if (!old && w->r->has_status && (st = json_object_get(doc, "status")) != NULL) {
        json_incref(st);
        json_object_del(doc, "status");
    }
    int rc = kc__managed_fields_update_sub(doc, old, w->manager, w->subresource, NULL, err);
    if (st) {
        if (json_object_set_new(doc, "status", st) < 0 && rc == 0)
            rc = kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    return rc;
}

/* The validation of a built-in object (server/validation/, docs/server.md "Validation of
 * built-in types") after defaulting: 422 Invalid. Not for custom resources (their schemas) nor
 * for writes of the status subresource (upstream's status strategies validate other rules), nor
 * for a binding (spec.nodeName only: upstream's binding REST checks the node, not the pod). */
static int validate_builtin(const kc__write *w, const json_t *doc, const json_t *old, kc_error *err)
{
    if (w->r->is_crd || w->status_sub || w->binding)
        return 0;
    return kc__validate_object(w->r->group, w->r->kind, doc, old, err);
}

/* Fill kind/apiVersion; 400 when the body names another kind. */
static int fix_type(const kc__write *w, json_t *doc, kc_error *err)
{
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    if (kind && *kind && strcmp(kind, w->r->kind) != 0)
        return kc__fail(err, 400, "BadRequest",
                        "the kind in the body (%s) does not match the "
                        "resource kind (%s)",
                        kind, w->r->kind);
    char av[256];
    kc__rsrc_api_version(w->r, w->version, av, sizeof(av));
    const char *have = json_string_value(json_object_get(doc, "apiVersion"));
    if (!have || !*have)
        json_object_set_new(doc, "apiVersion", json_string(av));
    json_object_set_new(doc, "kind", json_string(w->r->kind));
    return 0;
}

/* Create: the request's namespace into doc (checked against the body's; the namespace must
 * exist and not be terminating), or none for a cluster-scoped resource. */
static int create_namespace(kc_server *srv, const kc__write *w, json_t *doc, kc_error *err)
{
    kc__rsrc *r = w->r;
    if (!r->namespaced) {
        kc__meta_del(doc, "namespace");
        return 0;
    }
    const char *bns = kc__meta_str(doc, "namespace");
    if (bns && *bns && strcmp(bns, w->ns) != 0)
        return kc__fail(err, 400, "BadRequest",
                        "the namespace of the provided object does "
                        "not match the namespace sent on the request");
    kc__meta_set_str(doc, "namespace", w->ns);
    return kc__check_namespace(srv, w->ns, r, kc__meta_str(doc, "name"), err);
}

/* Create: the object's name (*ret_name, borrowed from doc): metadata.name, or generateName plus
 * a random suffix not yet taken (409 with a retry after 8 tries); validated by the resource's
 * name rule. */
static int create_name(kc_server *srv, const kc__write *w, json_t *doc, const char **ret_name,
                       kc_error *err)
{
    kc__rsrc *r = w->r;
    int rc;
    const char *name = kc__meta_str(doc, "name");
    const char *gen = kc__meta_str(doc, "generateName");
    char nbuf[320];
    if ((!name || !*name) && gen && *gen) {
        bool ok = false;
        for (int i = 0; i < 8 && !ok; i++) {
            char sfx[6];
            kc__generate_name_suffix(&srv->rng, sfx);
            snprintf(nbuf, sizeof(nbuf), "%.58s%s", gen, sfx);
            ok = !kc__store_find(r, w->ns, nbuf);
        }
        if (!ok) {
            char q[300];
            kc__rsrc_qualified(r, q, sizeof(q));
            rc = kc__fail(err, 409, "AlreadyExists",
                          "%s \"%s\" already exists, the server was "
                          "not able to generate a unique name for the "
                          "object",
                          q, nbuf);
            kc__fail_details(err, nbuf, r->group[0] ? r->group : NULL, r->plural);
            err->retry_after_s = 1;
            return rc;
        }
        kc__meta_set_str(doc, "name", nbuf);
        name = kc__meta_str(doc, "name");
    }
    char qkind[300];
    snprintf(qkind, sizeof(qkind), "%s%s%s", r->kind, r->group[0] ? "." : "", r->group);
    if ((rc = kc__validate_object_name(name, gen, r->name_rule, qkind, err)) != 0) {
        /* validate.c words it as upstream's apimachinery validation ("Deployment.apps \"x\"
         * is invalid"); the details name the kind and its group apart */
        kc__fail_details(err, NULL, r->group[0] ? r->group : NULL, r->kind);
        return rc;
    }
    *ret_name = name;
    return 0;
}

/* Create: the system fields (uid, creationTimestamp, generation 1 where the resource counts
 * generations; no deletion fields, no selfLink) and, unless kept, no status. */
static void create_system_fields(kc_server *srv, const kc__write *w, json_t *doc, json_t *m)
{
    kc__rsrc *r = w->r;
    char uid[37], ts[32];
    kc__uuid_v4(&srv->rng, uid);
    kc__now_rfc3339(ts);
    kc__meta_set_str(doc, "uid", uid);
    kc__meta_set_str(doc, "creationTimestamp", ts);
    kc__meta_del(doc, "deletionTimestamp");
    kc__meta_del(doc, "deletionGracePeriodSeconds");
    kc__meta_del(doc, "selfLink");
    if (r->gen_rule != KC__GEN_NONE)
        json_object_set_new(m, "generation", json_integer(1));
    else
        kc__meta_del(doc, "generation");
    if (r->has_status && !w->keep_status)
        json_object_del(doc, "status"); /* the server's own status comes with the defaults */
}

/* Create: the next RV, the stored object, and (unless a dry run) the commit: a new CRD is
 * registered, the object stored with an ADDED event, the controllers told. */
static int create_commit(kc_server *srv, const kc__write *w, json_t *doc, kc_obj **ret_obj,
                         kc_error *err)
{
    kc__rsrc *r = w->r;
    int rc;
    uint64_t rv = srv->rv + 1;
    if (w->dry_run)
        kc__meta_del(doc, "resourceVersion");
    else
        set_rv(doc, rv);
    kc_obj *obj = NULL;
    if ((rc = kc__obj_from_doc(srv, doc, &obj, err)) != 0)
        goto fail;
    if (!w->dry_run) {
        if (srv->crd && strcmp(r->plural, "customresourcedefinitions") == 0 && !r->is_crd &&
            (rc = srv->crd->stored(srv, obj, err)) != 0)
            goto fail;
        if ((rc = kc__store_commit(srv, r, KC_WATCH_ADDED, obj, NULL, rv)) != 0) {
            rc = kc_error_set(err, rc, "out of memory");
            goto fail;
        }
        if (srv->ctl)
            srv->ctl->created(srv, r, obj);
    }
    *ret_obj = obj;
    return 0;
fail:
    kc_obj_unref(obj);
    kc__write_settle(srv, w, doc, NULL, false);
    return rc;
}

int kc__write_create(kc_server *srv, const kc__write *w, json_t *doc, kc_obj **ret_obj,
                     kc_error *err)
{
    kc__rsrc *r = w->r;
    json_t *m = kc__meta(doc);
    if (!m)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    int rc = fix_type(w, doc, err);
    if (rc)
        return rc;
    const char *rvs = kc__meta_str(doc, "resourceVersion");
    if (rvs && *rvs)
        return kc__fail(err, 500, "", "resourceVersion should not be set on objects to be created");
    const char *name = NULL;
    if ((rc = create_namespace(srv, w, doc, err)) != 0 ||
        (rc = create_name(srv, w, doc, &name, err)) != 0)
        return rc;
    /* schema validation (custom resources), after the name and before storage, as upstream's
     * create strategy; the status a create drops is not validated */
    if (r->is_crd && srv->crd &&
        (rc = srv->crd->validate(r, w->version, doc, name, r->has_status && !w->keep_status,
                                 err)) != 0)
        return rc;
    if (kc__store_find(r, w->ns, name)) {
        char q[300];
        kc__rsrc_qualified(r, q, sizeof(q));
        rc = kc__fail(err, 409, "AlreadyExists", "%s \"%s\" already exists", q, name);
        kc__fail_details(err, name, r->group[0] ? r->group : NULL, r->plural);
        return rc;
    }
    create_system_fields(srv, w, doc, m);
    if ((rc = kc__write_defaults(srv, w, doc, err)) != 0)
        return rc;
    if (srv->crd && r->plural && strcmp(r->plural, "customresourcedefinitions") == 0 &&
        (rc = srv->crd->prepare(srv, doc, err)) != 0)
        return rc;
    if ((rc = record_manager(w, doc, NULL, err)) != 0 ||
        (rc = kc__write_prepare(srv, w, doc, NULL, err)) != 0)
        return rc;
    if ((rc = validate_builtin(w, doc, NULL, err)) != 0) {
        kc__write_settle(srv, w, doc, NULL, false);
        return rc;
    }
    return create_commit(srv, w, doc, ret_obj, err);
}

/* json_equal that holds for two absent values (jansson's is false when either is NULL). */
static bool same_value(const json_t *a, const json_t *b)
{
    return (!a && !b) || (a && b && json_equal(a, b));
}

/* Did the fields that drive generation change? */
static bool gen_changed(const kc__rsrc *r, json_t *old, json_t *nu)
{
    switch (r->gen_rule) {
    case KC__GEN_SPEC:
        return !same_value(json_object_get(old, "spec"), json_object_get(nu, "spec"));
    case KC__GEN_SPEC_ANNOT:
        return !same_value(json_object_get(old, "spec"), json_object_get(nu, "spec")) ||
               !same_value(json_object_get(json_object_get(old, "metadata"), "annotations"),
                           json_object_get(json_object_get(nu, "metadata"), "annotations"));
    case KC__GEN_CR: {
        const char *key;
        json_t *v;
        json_object_foreach(nu, key, v)
        {
            if (!strcmp(key, "metadata") || (r->has_status && !strcmp(key, "status")) ||
                !strcmp(key, "apiVersion") || !strcmp(key, "kind"))
                continue;
            if (!json_equal(v, json_object_get(old, key)))
                return true;
        }
        json_object_foreach(old, key, v)
        {
            if (!strcmp(key, "metadata") || (r->has_status && !strcmp(key, "status")) ||
                !strcmp(key, "apiVersion") || !strcmp(key, "kind"))
                continue;
            if (!json_object_get(nu, key))
                return true;
        }
        return false;
    }
    default:
        return false;
    }
}

/* Update: the body's preconditions against the stored object (old): its resourceVersion (409),
 * required for custom resources when require_rv (422), its uid (409) and an unchanged
 * creationTimestamp (422). */
static int update_preconditions(const kc__write *w, kc__entry *cur, json_t *doc, json_t *old,
                                bool require_rv, kc_error *err)
{
    kc__rsrc *r = w->r;
    const char *name = cur->name;
    const char *cur_rv = kc_obj_resource_version(cur->obj);
    const char *brv = kc__meta_str(doc, "resourceVersion");
    if (brv && *brv && strcmp(brv, cur_rv) != 0)
        return conflict(err, r, name);
    if ((!brv || !*brv) && r->is_crd && require_rv)
        return invalid(err, r, name, "metadata.resourceVersion", "FieldValueInvalid",
                       "Invalid value: 0x0: must be specified for an update");
    const char *buid = kc__meta_str(doc, "uid");
    if (buid && *buid && strcmp(buid, kc_obj_uid(cur->obj)) != 0) {
        char q[300];
        kc__rsrc_qualified(r, q, sizeof(q));
        int c = kc__fail(err, 409, "Conflict",
                         "Operation cannot be fulfilled on %s \"%s\": Precondition failed: UID "
                         "in precondition: %s, UID in object meta: %s",
                         q, name, buid, kc_obj_uid(cur->obj));
        kc__fail_details(err, name, r->group[0] ? r->group : NULL, r->plural);
        return c;
    }
    const char *bts = kc__meta_str(doc, "creationTimestamp");
    const char *ots = kc__meta_str(old, "creationTimestamp");
    if (bts && *bts && ots && !same_instant(bts, ots))
        return invalid(err, r, name, "metadata.creationTimestamp", "FieldValueInvalid",
                       "field is immutable");
    return 0;
}

/* Update: the object the write would store (a new reference): the body with the stored status
 * (or, on the status subresource, the stored object with the body's status), the stored name,
 * namespace and system fields. */
static json_t *update_merge(const kc__write *w, kc__entry *cur, json_t *doc, json_t *old)
{
    kc__rsrc *r = w->r;
    json_t *nu = doc;
    if (w->status_sub) {
        nu = json_deep_copy(old);
        json_t *st = json_object_get(doc, "status");
        if (st)
            json_object_set(nu, "status", st);
        else
            json_object_del(nu, "status");
        if (w->status_annotations)
            copy_meta(nu, doc, "annotations");
        if (w->apply)
            copy_meta(nu, doc, "managedFields");
    } else {
        json_incref(nu);
        /* a binding also sets the PodScheduled condition, in the same write (upstream's
         * setPodHostAndAnnotations) */
        if (r->has_status && !w->binding) {
            json_t *st = json_object_get(old, "status");
            if (st)
                json_object_set(nu, "status", st);
            else
                json_object_del(nu, "status");
        }
    }
    kc__meta_set_str(nu, "name", cur->name);
    if (r->namespaced)
        kc__meta_set_str(nu, "namespace", cur->ns);
    else
        kc__meta_del(nu, "namespace");
    copy_meta(nu, old, "uid");
    copy_meta(nu, old, "creationTimestamp");
    copy_meta(nu, old, "deletionTimestamp");
    copy_meta(nu, old, "deletionGracePeriodSeconds");
    copy_meta(nu, old, "generation");
    kc__meta_del(nu, "selfLink");
    return nu;
}

/* Update: defaults and the write hooks on nu, the generation bump, no new finalizers on an
 * object being deleted (422), and a custom resource's schema. */
static int update_prepare(kc_server *srv, const kc__write *w, kc__entry *cur, json_t *nu,
                          json_t *old, kc_error *err)
{
    kc__rsrc *r = w->r;
    int rc;
    if ((rc = kc__write_defaults(srv, w, nu, err)) != 0 ||
        (rc = kc__write_prepare(srv, w, nu, old, err)) != 0)
        return rc;
    if (r->gen_rule != KC__GEN_NONE && !w->status_sub && gen_changed(r, old, nu)) {
        json_int_t g = json_integer_value(json_object_get(kc__meta(old), "generation"));
        json_object_set_new(kc__meta(nu), "generation", json_integer(g + 1));
    }
    json_t *nf = json_object_get(kc__meta(nu), "finalizers");
    json_t *of = json_object_get(kc__meta(old), "finalizers");
    if (kc_obj_deleting(cur->obj) && !finalizers_subset(nf, of)) {
        rc = invalid(err, r, cur->name, "metadata.finalizers", "FieldValueForbidden",
                     "Forbidden: no new finalizers can be added if the object is being deleted");
        kc__write_settle(srv, w, nu, old, false);
        return rc;
    }
    /* validation of built-in kinds (server/validation/) and the schema validation of custom
     * resources, of the object the update would store */
    if ((rc = validate_builtin(w, nu, old, err)) != 0) {
        kc__write_settle(srv, w, nu, old, false);
        return rc;
    }
    if (r->is_crd && srv->crd &&
        (rc = srv->crd->validate(r, w->version, nu, cur->name, false, err)) != 0) {
        /* every failure after kc__write_prepare settles (a no-op unless the kind allocates) */
        kc__write_settle(srv, w, nu, old, false);
        return rc;
    }
    return 0;
}

/* Update: store nu in place of cur: nothing on a no-op (same RV, no event; #29, #82), the
 * object alone on a dry run, a delete when the last finalizer of an object being deleted is
 * gone (#37), else a MODIFIED commit. */
static int update_commit(kc_server *srv, const kc__write *w, kc__entry *cur, json_t *nu,
                         json_t *old, kc_obj **ret_obj, kc_error *err)
{
    kc__rsrc *r = w->r;
    kc_obj *obj = NULL;
    int rc;
    bool deleting = kc_obj_deleting(cur->obj);
    json_t *nf = json_object_get(kc__meta(nu), "finalizers");
    if (!json_object_get(kc__meta(nu), "managedFields"))
        copy_meta(nu, old, "managedFields");
    kc__meta_set_str(nu, "resourceVersion", kc_obj_resource_version(cur->obj));
    /* no-op: same RV, no event, the old entries' times (#29, #82; spec §2 resourceVersion) */
    if (kc__doc_same_but_times(nu, old)) {
        *ret_obj = kc_obj_ref(cur->obj);
        return 0;
    }
    /* After the no-op check: an unchanged write must not refresh the entry's time (upstream
     * skips no-op updates entirely). */
    if ((rc = record_manager(w, nu, old, err)) != 0)
        goto fail;
    uint64_t rv = srv->rv + 1;
    if (!w->dry_run)
        set_rv(nu, rv);
    if ((rc = kc__obj_from_doc(srv, nu, &obj, err)) != 0)
        goto fail;
    if (w->dry_run) {
        *ret_obj = obj;
        return 0;
    }
    if (deleting && json_array_size(nf) == 0 && /* last finalizer gone: delete (#37) */
        !(srv->ctl && srv->ctl->holds(srv, r, cur))) {
        kc__write_settle(srv, w, nu, old, false); /* the removal releases the stored state's */
        kc_obj *last = NULL;
        rc = kc__write_remove(srv, r, cur, &last, err);
        kc_obj_unref(last);
        if (rc) {
            kc_obj_unref(obj);
            return rc;
        }
        *ret_obj = obj;
        return 0;
    }
    if (srv->crd && r->plural && strcmp(r->plural, "customresourcedefinitions") == 0 &&
        !r->is_crd && (rc = srv->crd->stored(srv, obj, err)) != 0)
        goto fail;
    if ((rc = kc__store_commit(srv, r, KC_WATCH_MODIFIED, obj, cur->obj, rv)) != 0) {
        rc = kc_error_set(err, rc, "out of memory");
        goto fail;
    }
    kc__write_settle(srv, w, nu, old, true);
    *ret_obj = obj;
    return 0;
fail:
    kc__write_settle(srv, w, nu, old, false);
    kc_obj_unref(obj);
    return rc;
}

int kc__write_update(kc_server *srv, const kc__write *w, kc__entry *cur, json_t *doc,
                     bool require_rv, kc_obj **ret_obj, kc_error *err)
{
    json_t *old = kc__doc_from_obj(cur->obj);
    if (!old)
        return kc_error_set(err, KC_ENOMEM, "cannot decode the stored object");
    int rc = 0;
    if (!kc__meta(doc) || (rc = fix_type(w, doc, err)) != 0) {
        json_decref(old);
        return rc ? rc : kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    if ((rc = update_preconditions(w, cur, doc, old, require_rv, err)) != 0) {
        json_decref(old);
        return rc;
    }
    json_t *nu = update_merge(w, cur, doc, old);
    if ((rc = update_prepare(srv, w, cur, nu, old, err)) == 0)
        rc = update_commit(srv, w, cur, nu, old, ret_obj, err);
    json_decref(nu);
    json_decref(old);
    return rc;
}

int kc__write_internal_update(kc_server *srv, kc__rsrc *r, kc__entry *cur, json_t *doc,
                              kc_error *err)
{
    kc__write w = {.r = r, .ns = r->namespaced ? cur->ns : "", .version = r->versions[0]};
    json_t *d = json_deep_copy(doc);
    if (!d)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    kc__meta_del(d, "resourceVersion");
    kc_obj *obj = NULL;
    int rc = kc__write_update(srv, &w, cur, d, false, &obj, err);
    json_decref(d);
    kc_obj_unref(obj);
    return rc;
}
