/*
 * field_validation.c — the fieldValidation query parameter of writes (spec §3.1, §6 item 7;
 * checklist #20, #7/#8), one mechanism for POST, PUT (incl. /status) and every PATCH type:
 *   Strict → 400 BadRequest `strict decoding error: unknown field "spec.x"` (POST and PUT word it
 *     as a decoding failure: `Pod in version "v1" cannot be handled as a Pod: strict …`), nothing
 *     written;
 *   Warn (the default, as in Kubernetes >= 1.23) → one `Warning: 299 - "unknown field …"` header
 *     per unknown field (up to KC__MAX_WARNINGS), the field dropped, the write done;
 *   Ignore → the field dropped silently; any other value → 400.
 * What is "unknown": for built-in kinds, every field at any depth that their schema (the models
 * generated into server/schema) does not declare; for custom resources with a structural schema,
 * what pruning removes (server/schema/schema_crd.c: unknown fields, unless
 * x-kubernetes-preserve-unknown-fields) and every metadata field ObjectMeta does not have; custom
 * resources without a schema keep everything outside metadata. POST and PUT check the request's
 * object; a merge, JSON or strategic PATCH checks the patched object, except for the fields the
 * stored object already had (a patch is blamed only for what it adds); an apply PATCH checks the
 * applied configuration before it is merged, so a dropped field is not recorded in managedFields
 * either.
 * The same pass is the decoding step of a real server: built-in objects are type-checked first
 * (a mismatch fails the request as that decode path does: 400, 422 or 500, schema_check.c) and
 * custom resources get their schema's defaults after pruning (kc__decode_check).
 * Thread-safety: per request; no shared state.
 */
#include "server/api/api_internal.h"
#include "server/discovery/discovery.h"

#include "server/patch/patch.h"
#include "server/schema/schema.h"

#include <stdio.h>
#include <string.h>

static const char *const meta_keys[] = {"name",
                                        "generateName",
                                        "namespace",
                                        "selfLink",
                                        "uid",
                                        "resourceVersion",
                                        "generation",
                                        "creationTimestamp",
                                        "deletionTimestamp",
                                        "deletionGracePeriodSeconds",
                                        "labels",
                                        "annotations",
                                        "ownerReferences",
                                        "finalizers",
                                        "managedFields",
                                        NULL};
static const char *const top_keys[] = {"apiVersion", "kind",      "metadata",   "spec",
                                       "status",     "data",      "binaryData", "stringData",
                                       "type",       "immutable", NULL};
static const char *const event_keys[] = {"involvedObject",
                                         "reason",
                                         "message",
                                         "source",
                                         "firstTimestamp",
                                         "lastTimestamp",
                                         "count",
                                         "eventTime",
                                         "series",
                                         "action",
                                         "related",
                                         "reportingComponent",
                                         "reportingInstance",
                                         NULL};
static const char *const misc_keys[] = {"subsets", "secrets", "imagePullSecrets",
                                        "automountServiceAccountToken", NULL};

static bool in_list(const char *k, const char *const *l)
{
    for (; *l; l++)
        if (!strcmp(*l, k))
            return true;
    return false;
}

/* One unknown field under fieldValidation: Strict → 400 (#20); Warn (the default, as in
 * Kubernetes ≥ 1.23) → a Warning header naming it; Ignore → nothing. Under Warn and Ignore the
 * field is dropped, as the API server drops what its schema does not know. The text is the API
 * server's ('unknown field "spec.x"'); in the header its quotes are escaped. */
static int unknown_field(kc__req *req, const kc__rsrc *r, const char *mode, const char *prefix,
                         const char *k)
{
    /* POST and PUT decode the body, and word a decoding failure as such; patches do not */
    bool body = req->method == KC__M_POST || req->method == KC__M_PUT;
    if (strcmp(mode, "Strict") == 0)
        return kc__fail(&req->err, 400, "BadRequest",
                        "%s%s%s%s%s%sstrict decoding error: unknown field \"%s%s\"",
                        body ? r->kind : "", body ? " in version \"" : "",
                        body ? req->route.version : "", body ? "\" cannot be handled as a " : "",
                        body ? r->kind : "", body ? ": " : "", prefix, k);
    if (strcmp(mode, "Warn") != 0 || req->n_warnings >= KC__MAX_WARNINGS)
        return 0;
    /* A header quoted-string: '"' and '\\' escaped; control and non-ASCII bytes (a key may hold
     * any) become '?', so a key cannot break the header line. */
    char *w = req->warnings[req->n_warnings++];
    size_t n = (size_t)snprintf(w, KC__WARNING_MAX, "unknown field \\\"%s", prefix);
    for (const unsigned char *c = (const unsigned char *)k; *c && n + 8 < KC__WARNING_MAX; c++) {
        if (*c == '"' || *c == '\\')
            w[n++] = '\\';
        w[n++] = (*c < 0x20 || *c >= 0x7f) ? '?' : (char)*c;
    }
    snprintf(w + n, KC__WARNING_MAX - n, "\\\"");
    return 0;
}

int kc__field_validation_mode(kc__req *req, const char **ret_mode)
{
    const char *fv = req->q.field_validation;
    if (fv && *fv && strcmp(fv, "Strict") && strcmp(fv, "Warn") && strcmp(fv, "Ignore"))
        return kc__fail(&req->err, 400, "BadRequest", "fieldValidation: Unsupported value: \"%s\"",
                        fv);
    *ret_mode = fv && *fv ? fv : "Warn";
    return 0;
}

/* A key of obj that base (the stored object a patch started from) already has is not the
 * request's doing. */
static bool known_before(const json_t *base, const char *k)
{
    return base && json_object_get(base, k) != NULL;
}

typedef struct unknown_ud {
    kc__req *req;
    const kc__rsrc *r;
    const char *mode;
} unknown_ud;

/* A schema walk's unknown field: path is the full dotted path. */
static int on_unknown(void *ud, const char *path, json_t *obj, const char *key)
{
    unknown_ud *u = ud;
    (void)obj;
    (void)key;
    int rc = unknown_field(u->req, u->r, u->mode, "", path);
    return rc ? rc : 0;
}

/* metadata fields ObjectMeta does not have (custom resources and kinds without a model). */
static int check_meta(kc__req *req, const kc__rsrc *r, const char *mode, json_t *doc,
                      const json_t *base)
{
    const char *k;
    json_t *v;
    void *tmp;
    json_t *meta = json_object_get(doc, "metadata");
    const json_t *base_meta = base ? json_object_get(base, "metadata") : NULL;
    json_object_foreach_safe(meta, tmp, k, v)
    {
        if (in_list(k, meta_keys) || known_before(base_meta, k))
            continue;
        int rc = unknown_field(req, r, mode, "metadata.", k);
        if (rc)
            return rc;
        json_object_del(meta, k);
    }
    return 0;
}

/* The decode path of the request, for the wording of type errors. */
static enum kc__decode_style decode_style(const kc__req *req)
{
    kc__patch_type t;
    if (req->method != KC__M_PATCH ||
        kc__patch_type_from_content_type(req->content_type ? req->content_type : "", &t, NULL))
        return KC__DECODE_BODY;
    return t == KC__PATCH_APPLY       ? KC__DECODE_APPLY
           : t == KC__PATCH_STRATEGIC ? KC__DECODE_SMP
                                      : KC__DECODE_JSON_PATCH;
}

/* Built-in kinds: the type check, then unknown fields at every depth. */
static int check_builtin(kc__req *req, const kc__rsrc *r, int m, const char *mode, json_t *doc,
                         const json_t *base)
{
    char group_version[256];
    const char *av = json_string_value(json_object_get(doc, "apiVersion"));
    const char *slash = av ? strrchr(av, '/') : NULL;
    kc__decode_ctx ctx = {.style = decode_style(req),
                          .kind = r->kind,
                          .group = r->group,
                          .version = req->route.version,
                          .ns = kc__meta_str(doc, "namespace"),
                          .name = kc__meta_str(doc, "name")};
    if (ctx.style == KC__DECODE_APPLY && slash) { /* apply names the applied GVK */
        snprintf(group_version, sizeof(group_version), "%.*s", (int)(slash - av), av);
        ctx.group = group_version;
        ctx.version = slash + 1;
    }
    int rc = kc__schema_typecheck(m, doc, &ctx, &req->err);
    if (rc && ctx.style == KC__DECODE_SMP) { /* its message quotes the patch: decode it now */
        json_t *patch = json_loadb(req->body, req->body_len, 0, NULL);
        kc_error_clear(&req->err);
        ctx.patch = patch;
        rc = kc__schema_typecheck(m, doc, &ctx, &req->err);
        json_decref(patch);
    }
    if (rc) {
        req->n_warnings = 0;
        return rc;
    }
    unknown_ud u = {req, r, mode};
    return kc__schema_unknown(m, doc, base, on_unknown, &u);
}

int kc__field_check(kc__req *req, const kc__rsrc *r, json_t *doc, const json_t *base)
{
    const char *mode;
    int rc = kc__field_validation_mode(req, &mode);
    if (rc)
        return rc;
    int vi = kc__rsrc_version_index(r, req->route.version);
    int m = vi >= 0 && !r->is_crd ? r->model[vi] : -1;
    if (m >= 0)
        return check_builtin(req, r, m, mode, doc, base);
    if ((rc = check_meta(req, r, mode, doc, base)) != 0)
        return rc;
    if (r->is_crd)
        return kc__crd_decode((kc__rsrc *)r, req->route.version, doc, base, on_unknown,
                              &(unknown_ud){req, r, mode}); /* r's crd_mu is its own */
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(doc, tmp, k, v)
    {
        if (in_list(k, top_keys) || in_list(k, misc_keys) ||
            (strcmp(r->plural, "events") == 0 && in_list(k, event_keys)) || known_before(base, k))
            continue;
        if ((rc = unknown_field(req, r, mode, "", k)) != 0)
            return rc;
        json_object_del(doc, k);
    }
    return 0;
}
