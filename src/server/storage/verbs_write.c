/*
 * verbs_write.c — the GET, POST (create), PUT (update, incl. /status) and PATCH (merge, JSON,
 * strategic, apply) verbs of the embedded API server (spec §3.1–§3.4; #9–#47), plus the seeding
 * entry point that creates objects from JSON text through the same create path.
 *
 * Request bodies are parsed with jansson outside the lock; the storage rules (write.c) and the
 * patch engines (patch.h) run under srv->mu so a patch always applies to the latest object and
 * its result is committed atomically.
 */
#include "server/storage/srv.h"

#include "server/defaults/defaults.h"
#include "server/patch/patch.h"

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

/* Printable ASCII or any byte of a UTF-8 sequence (upstream: unicode.IsPrint; the non-ASCII
 * classes are not checked here). */
static bool printable(unsigned char c)
{
    return c >= 0x20 && c != 0x7f;
}

int kc__write_manager(kc__req *req, char out[KC__FIELD_MANAGER_MAX + 1])
{
    out[0] = 0;
    const char *fm = req->q.field_manager;
    if (fm && *fm) {
        size_t n = strlen(fm);
        if (n > KC__FIELD_MANAGER_MAX) {
            int rc = kc__fail(&req->err, 422, "Invalid",
                              "fieldManager: Too long: may not be more than %d bytes",
                              KC__FIELD_MANAGER_MAX);
            kc__fail_cause(&req->err, "FieldValueTooLong", "fieldManager", "Too long");
            return rc;
        }
        for (size_t i = 0; i < n; i++) {
            if (!printable((unsigned char)fm[i])) {
                int rc = kc__fail(&req->err, 422, "Invalid",
                                  "fieldManager: Invalid value: \"%s\": must only contain "
                                  "printable characters",
                                  fm);
                kc__fail_cause(&req->err, "FieldValueInvalid", "fieldManager", "Invalid value");
                return rc;
            }
        }
        memcpy(out, fm, n + 1);
        return 0;
    }
    /* upstream prefixFromUserAgent: the part before the first '/', printable only, cut at the
     * limit ("kubectl/v1.30.0 (linux/amd64) …" → "kubectl"). */
    const char *ua = MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, "User-Agent");
    size_t o = 0;
    for (const char *p = ua; p && *p && *p != '/' && o < KC__FIELD_MANAGER_MAX; p++)
        if (printable((unsigned char)*p))
            out[o++] = *p;
    out[o] = 0;
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
    if (rc)
        return rc;
    rc = kc__reply_obj(req, 200, r, obj);
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
    if ((rc = kc__field_check(req, r, doc, NULL)) != 0) {
        json_decref(doc);
        return rc;
    }
    kc__write w = make_write(req, r, dry, mgr);
    kc_obj *obj = NULL;
    pthread_mutex_lock(&srv->mu);
    if (r->removed)
        rc = kc__fail_generic(&req->err, 404);
    else
        rc = kc__write_create(srv, &w, doc, &obj, &req->err);
    pthread_mutex_unlock(&srv->mu);
    json_decref(doc);
    if (rc)
        return rc;
    rc = kc__reply_obj(req, 201, r, obj);
    kc_obj_unref(obj);
    return rc;
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
    if (rc) {
        json_decref(doc);
        return rc;
    }
    kc__write w = make_write(req, r, dry, mgr);
    kc_obj *obj = NULL;
    pthread_mutex_lock(&srv->mu);
    kc__entry *cur = kc__store_find(r, w.ns, req->route.name);
    if (!cur)
        rc = kc__fail_notfound(&req->err, r, req->route.name);
    else
        rc = kc__write_update(srv, &w, cur, doc, true, &obj, &req->err);
    pthread_mutex_unlock(&srv->mu);
    json_decref(doc);
    if (rc)
        return rc;
    rc = kc__reply_obj(req, 200, r, obj);
    kc_obj_unref(obj);
    return rc;
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
static int patch_existing(kc__req *req, kc__rsrc *r, const kc__write *w, kc__entry *cur,
                          kc__patch_type type, json_t *applied, const char *now, json_t **nu,
                          json_t **cur_doc, kc_obj **obj)
{
    int rc;
    if (!(*cur_doc = kc__doc_from_obj(cur->obj)))
        return kc_error_set(&req->err, KC_ENOMEM, "cannot decode stored object");
    if (type == KC__PATCH_APPLY)
        rc = kc__apply_doc(*cur_doc, applied, req->q.field_manager, req->q.force, now, nu,
                           &req->err);
    else
        rc = kc__patch_apply(type, *cur_doc, req->body, req->body_len, r->kind, !r->is_crd, nu,
                             &req->err);
    if (rc == 0)
        rc = patch_check_name(req, *nu);
    if (rc == 0 && !json_is_object(*nu))
        rc = kc__fail(&req->err, 422, "Invalid", "the patch result is not an object");
    if (rc == 0 && type != KC__PATCH_APPLY)
        rc = kc__field_check(req, r, *nu, *cur_doc);
    if (rc == 0)
        rc = kc__write_update(req->srv, w, cur, *nu, false, obj, &req->err);
    return rc;
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
         (rc = kc__field_check(req, r, applied, NULL)) != 0)) {
        json_decref(applied);
        return rc;
    }
    kc__write w = make_write(req, r, dry, mgr);
    char now[32];
    kc__now_rfc3339(now);
    kc_obj *obj = NULL;
    json_t *nu = NULL, *cur_doc = NULL;
    unsigned status = 200;
    pthread_mutex_lock(&srv->mu);
    kc__entry *cur = kc__store_find(r, w.ns, req->route.name);
    if (!cur && type != KC__PATCH_APPLY) {
        rc = kc__fail_notfound(&req->err, r, req->route.name);
    } else if (!cur) { /* apply of an object that does not exist: create it */
        rc = kc__apply_doc(NULL, applied, req->q.field_manager, req->q.force, now, &nu, &req->err);
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
    if (rc) {
        if (!req->err.http_status && rc == KC_EMEDIATYPE)
            req->err.http_status = 415;
        return rc;
    }
    rc = kc__reply_obj(req, status, r, obj);
    kc_obj_unref(obj);
    return rc;
}

int kc__create_json_ex(kc_server *srv, const char *json, size_t len, bool have_lock, bool as_stored,
                       kc_error *err)
{
    kc_obj *o0 = NULL;
    if (kc_obj_parse(json, len, &srv->dopts, &o0, NULL) == 0) {
        if (!have_lock)
            pthread_mutex_lock(&srv->mu);
        kc__rsrc *fr = kc__registry_find_kind(srv, kc_obj_api_version(o0), kc_obj_kind(o0));
        /* the fast path stores objects as given: only for text already in the stored form or
         * kinds without defaults */
        if (fr && !as_stored && !fr->is_crd && kc__defaults_known(fr->group, fr->kind))
            fr = NULL;
        int frc = fr ? kc__create_fast(srv, fr, o0, err) : KC_EUNSUPPORTED;
        if (!have_lock)
            pthread_mutex_unlock(&srv->mu);
        kc_obj_unref(o0);
        if (frc != KC_EUNSUPPORTED)
            return frc;
        kc_error_clear(err);
    }
    json_error_t je;
    json_t *doc = json_loadb(json, len, 0, &je);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return kc__fail(err, 400, "BadRequest", "seed object is not a JSON object: %s", je.text);
    }
    const char *av = json_string_value(json_object_get(doc, "apiVersion"));
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    int rc;
    if (!have_lock)
        pthread_mutex_lock(&srv->mu);
    kc__rsrc *r = av && kind ? kc__registry_find_kind(srv, av, kind) : NULL;
    if (!r) {
        rc = kc__fail(err, 404, "NotFound", "no resource for apiVersion %s kind %s", av ? av : "?",
                      kind ? kind : "?");
    } else {
        const char *ns = kc__meta_str(doc, "namespace");
        const char *slash = strchr(av, '/');
        kc__write w = {.r = r,
                       .ns = r->namespaced ? (ns && *ns ? ns : "default") : "",
                       .version = slash ? slash + 1 : av,
                       .keep_status = true};
        char nsbuf[256];
        snprintf(nsbuf, sizeof(nsbuf), "%s", w.ns);
        w.ns = nsbuf;
        kc_obj *obj = NULL;
        rc = kc__write_create(srv, &w, doc, &obj, err);
        kc_obj_unref(obj);
    }
    if (!have_lock)
        pthread_mutex_unlock(&srv->mu);
    json_decref(doc);
    return rc;
}

int kc__create_json(kc_server *srv, const char *json, size_t len, bool as_stored, kc_error *err)
{
    return kc__create_json_ex(srv, json, len, false, as_stored, err);
}
