/*
 * field_validation.c — the fieldValidation query parameter of writes (spec §3.1, §6 item 7;
 * checklist #20, #7/#8), one mechanism for POST, PUT (incl. /status) and every PATCH type:
 *   Strict → 400 BadRequest `strict decoding error: unknown field "spec.x"`, nothing written;
 *   Warn (the default, as in Kubernetes >= 1.23) → one `Warning: 299 - "unknown field …"` header
 *     per unknown field (up to KC__MAX_WARNINGS), the field dropped, the write done;
 *   Ignore → the field dropped silently; any other value → 400.
 * What is "unknown": the server has no schemas below the top level, so it checks the top-level
 * fields of built-in kinds and every object's metadata fields (custom resources keep their
 * unknown top-level fields). POST and PUT check the request's object; a merge, JSON or strategic
 * PATCH checks the patched object, except for the fields the stored object already had (a patch
 * is blamed only for what it adds); an apply PATCH checks the applied configuration before it is
 * merged, so a dropped field is not recorded in managedFields either.
 * Thread-safety: per request; no shared state.
 */
#include "server/storage/srv.h"

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
static int unknown_field(kc__req *req, const char *mode, const char *prefix, const char *k)
{
    if (strcmp(mode, "Strict") == 0)
        return kc__fail(&req->err, 400, "BadRequest",
                        "strict decoding error: unknown field \"%s%s\"", prefix, k);
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

int kc__field_check(kc__req *req, const kc__rsrc *r, json_t *doc, const json_t *base)
{
    const char *mode;
    int rc = kc__field_validation_mode(req, &mode);
    if (rc)
        return rc;
    const char *k;
    json_t *v;
    void *tmp;
    json_t *meta = json_object_get(doc, "metadata");
    const json_t *base_meta = base ? json_object_get(base, "metadata") : NULL;
    json_object_foreach_safe(meta, tmp, k, v)
    {
        if (in_list(k, meta_keys) || known_before(base_meta, k))
            continue;
        if ((rc = unknown_field(req, mode, "metadata.", k)) != 0)
            return rc;
        json_object_del(meta, k);
    }
    if (r->is_crd)
        return 0;
    json_object_foreach_safe(doc, tmp, k, v)
    {
        if (in_list(k, top_keys) || in_list(k, misc_keys) ||
            (strcmp(r->plural, "events") == 0 && in_list(k, event_keys)) || known_before(base, k))
            continue;
        if ((rc = unknown_field(req, mode, "", k)) != 0)
            return rc;
        json_object_del(doc, k);
    }
    return 0;
}
