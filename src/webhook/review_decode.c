/*
 * review_decode.c — an AdmissionReview's request stanza → kc_admission_request.
 *
 * The review is a kc_doc (parsed once by review.c); every field is read by JSON Pointer and its
 * type checked: a field of the wrong type is a malformed request (KC_EBADREQUEST, the message
 * naming the field as "request.userInfo.groups[2]" reads), which review.c answers 400 before any
 * handler runs. What the API server may leave out (AR5: empty userInfo fields, AR6: object or
 * oldObject null, AR7: options null for CONNECT) reads as empty: "" strings, NULL objects, no
 * groups. The request must carry a non-empty uid and one of the four operations (AR4).
 * Strings are borrowed from the document (no copies); a string holding a NUL character is
 * refused, as it could not be handed over as a C string. object and oldObject become kc_obj by
 * kc_obj_parse of their raw JSON (any object: CONNECT options and DELETE's oldObject need no
 * particular metadata), bounded by their own size so a body the transport accepted is never
 * refused here for size. options and userInfo are handed over as raw JSON text.
 */
#include "json/doc_internal.h"
#include "webhook/review_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "request.userInfo.groups.2" → as printed: '/' → '.', array indexes as [i]. */
static void field_name(const char *ptr, char *buf, size_t cap)
{
    size_t n = 0;
    for (const char *p = ptr + (*ptr == '/'); *p && n + 2 < cap; p++) {
        if (*p != '/') {
            buf[n++] = *p;
            continue;
        }
        const char *q = p + 1;
        while (*q >= '0' && *q <= '9')
            q++;
        if (q > p + 1 && (*q == '\0' || *q == '/')) { /* an index */
            int w = snprintf(buf + n, cap - n, "[%.*s]", (int)(q - p - 1), p + 1);
            n = w > 0 && (size_t)w < cap - n ? n + (size_t)w : cap - 1;
            p = q - 1;
        } else {
            buf[n++] = '.';
        }
    }
    buf[n < cap ? n : cap - 1] = '\0';
}

int kc__wh_bad_type(kc_error *err, const char *ptr, const char *want, kc_json_type got)
{
    char f[256];
    field_name(ptr, f, sizeof f);
    return kc_error_set(err, KC_EBADREQUEST, "%s: expected %s, got %s", f, want,
                        kc_json_type_name(got));
}

/* The type at ptr into *t; false when absent. */
/* The value at ptr (one walk of the tree), NULL when absent or the path crosses a scalar. */
static const json_t *at(const kc_doc *doc, const char *ptr)
{
    json_t *v = NULL;
    return kc__doc_lookup(doc->root, ptr, "review", &v, NULL) == 0 ? v : NULL;
}

static bool type_at(const kc_doc *doc, const char *ptr, kc_json_type *t)
{
    const json_t *v = at(doc, ptr);
    if (v)
        *t = kc__doc_jtype(v);
    return v != NULL;
}

int kc__wh_opt_string(const kc_doc *doc, const char *ptr, const char **ret, kc_error *err)
{
    const json_t *v = at(doc, ptr);
    *ret = "";
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return kc__wh_bad_type(err, ptr, "a string", kc__doc_jtype(v));
    const char *s = json_string_value(v);
    if (strlen(s) != json_string_length(v)) {
        char f[256];
        field_name(ptr, f, sizeof f);
        return kc_error_set(err, KC_EBADREQUEST, "%s: holds a NUL character", f);
    }
    *ret = s;
    return 0;
}

/* An object, null or absent at ptr: *present says which. KC_EBADREQUEST for another type. */
static int opt_object(const kc_doc *doc, const char *ptr, bool *present, kc_error *err)
{
    kc_json_type t;
    *present = false;
    if (!type_at(doc, ptr, &t) || t == KC_JSON_NULL)
        return 0;
    if (t != KC_JSON_OBJECT)
        return kc__wh_bad_type(err, ptr, "an object", t);
    *present = true;
    return 0;
}

/* {group, version, <third>} at ptr (absent: all ""). */
static int triple(const kc_doc *doc, const char *ptr, const char *third, const char **g,
                  const char **v, const char **x, kc_error *err)
{
    bool present;
    int rc = opt_object(doc, ptr, &present, err);
    char p[64];
    *g = *v = *x = "";
    if (rc || !present)
        return rc;
    snprintf(p, sizeof p, "%s/group", ptr);
    if ((rc = kc__wh_opt_string(doc, p, g, err)))
        return rc;
    snprintf(p, sizeof p, "%s/version", ptr);
    if ((rc = kc__wh_opt_string(doc, p, v, err)))
        return rc;
    snprintf(p, sizeof p, "%s/%s", ptr, third);
    return kc__wh_opt_string(doc, p, x, err);
}

/* object / oldObject: NULL when absent or null, else a kc_obj of its raw JSON — the slice of
 * review_obj's compact text when the review was parsed as one (no re-serialisation), else the
 * document's. */
static int decode_object(const kc_doc *doc, const kc_obj *review_obj, const char *ptr, kc_obj **ret,
                         kc_error *err)
{
    bool present;
    int rc = opt_object(doc, ptr, &present, err);
    *ret = NULL;
    if (rc || !present)
        return rc;
    char *raw = NULL, *owned = NULL;
    const char *slice = NULL;
    size_t n = 0;
    if (review_obj && kc_obj_get_raw(review_obj, ptr, &slice, &n, NULL) == 0)
        raw = (char *)slice;
    else if ((rc = kc_doc_get_raw(doc, ptr, &owned, &n, err)))
        return rc;
    else
        raw = owned;
    kc_decode_opts o = {0};
    o.max_object_size = n > KC_DEFAULT_MAX_OBJECT_SIZE ? n : 0;
    kc_error e = KC_ERROR_INIT;
    rc = kc_obj_parse(raw, n, &o, ret, &e);
    free(owned);
    if (rc) {
        char f[64];
        field_name(ptr, f, sizeof f);
        rc = rc == KC_ENOMEM ? kc_error_set(err, rc, "%s: out of memory", f)
                             : kc_error_set(err, KC_EBADREQUEST, "%s: %s", f, e.message);
    }
    kc_error_clear(&e);
    return rc;
}

/* Raw JSON of an object at ptr into *owned ("" when absent or null). */
static int raw_object(const kc_doc *doc, const char *ptr, char **owned, const char **ret,
                      kc_error *err)
{
    bool present;
    int rc = opt_object(doc, ptr, &present, err);
    *ret = "";
    if (rc || !present)
        return rc;
    if ((rc = kc_doc_get_raw(doc, ptr, owned, NULL, err)))
        return rc;
    *ret = *owned;
    return 0;
}

static int decode_user(const kc_doc *doc, kc__wh_admission *a, kc_error *err)
{
    kc_admission_request *r = &a->req;
    int rc = raw_object(doc, "/request/userInfo", &a->user_info_json, &r->user_info_json, err);
    if (rc || (rc = kc__wh_opt_string(doc, "/request/userInfo/username", &r->user, err)) ||
        (rc = kc__wh_opt_string(doc, "/request/userInfo/uid", &r->user_uid, err)))
        return rc;
    kc_json_type t;
    if (!*r->user_info_json || !type_at(doc, "/request/userInfo/groups", &t) || t == KC_JSON_NULL)
        return 0;
    if (t != KC_JSON_ARRAY)
        return kc__wh_bad_type(err, "/request/userInfo/groups", "an array", t);
    size_t n = 0;
    kc_doc_count(doc, "/request/userInfo/groups", &n, NULL);
    if (n == 0)
        return 0;
    if (!(a->groups = calloc(n, sizeof *a->groups)))
        return kc_error_set(err, KC_ENOMEM, "admission review: out of memory");
    for (size_t i = 0; i < n; i++) {
        char p[64];
        snprintf(p, sizeof p, "/request/userInfo/groups/%zu", i);
        t = KC_JSON_NULL;
        if (!type_at(doc, p, &t) || t != KC_JSON_STRING)
            return kc__wh_bad_type(err, p, "a string", t);
        if ((rc = kc__wh_opt_string(doc, p, &a->groups[i], err)))
            return rc;
    }
    r->groups = a->groups;
    r->n_groups = n;
    return 0;
}

static int decode_operation(const kc_doc *doc, kc_admission_request *r, kc_error *err)
{
    int rc = kc__wh_opt_string(doc, "/request/operation", &r->operation, err);
    if (rc)
        return rc;
    static const char *const ops[] = {"CREATE", "UPDATE", "DELETE", "CONNECT"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(r->operation, ops[i]) == 0)
            return 0;
    return kc_error_set(err, KC_EBADREQUEST,
                        "request.operation: \"%.64s\" is not CREATE, UPDATE, DELETE or CONNECT",
                        r->operation);
}

/* uid, the two GVK/GVR triples, names, operation, dryRun. */
static int decode_scalars(const kc_doc *doc, kc_admission_request *r, kc_error *err)
{
    int rc;
    if ((rc = kc__wh_opt_string(doc, "/request/uid", &r->uid, err)))
        return rc;
    if (!*r->uid)
        return kc_error_set(err, KC_EBADREQUEST, "request.uid: missing or empty");
    if ((rc = triple(doc, "/request/kind", "kind", &r->kind.group, &r->kind.version, &r->kind.kind,
                     err)) ||
        (rc = triple(doc, "/request/resource", "resource", &r->resource.group, &r->resource.version,
                     &r->resource.resource, err)) ||
        (rc = kc__wh_opt_string(doc, "/request/subResource", &r->sub_resource, err)) ||
        (rc = triple(doc, "/request/requestKind", "kind", &r->request_kind.group,
                     &r->request_kind.version, &r->request_kind.kind, err)) ||
        (rc = triple(doc, "/request/requestResource", "resource", &r->request_resource.group,
                     &r->request_resource.version, &r->request_resource.resource, err)) ||
        (rc = kc__wh_opt_string(doc, "/request/requestSubResource", &r->request_sub_resource,
                                err)) ||
        (rc = kc__wh_opt_string(doc, "/request/namespace", &r->ns, err)) ||
        (rc = kc__wh_opt_string(doc, "/request/name", &r->name, err)) ||
        (rc = decode_operation(doc, r, err)))
        return rc;
    kc_json_type t;
    if (type_at(doc, "/request/dryRun", &t) && t != KC_JSON_NULL) {
        if (t != KC_JSON_BOOL)
            return kc__wh_bad_type(err, "/request/dryRun", "a boolean", t);
        kc_doc_get_bool(doc, "/request/dryRun", &r->dry_run, NULL);
    }
    return 0;
}

int kc__wh_admission_decode(const kc_doc *review, const kc_obj *review_obj, kc__wh_admission *a,
                            kc_error *err)
{
    memset(a, 0, sizeof *a);
    kc_admission_request *r = &a->req;
    r->options_json = r->user_info_json = "";
    bool present;
    int rc = opt_object(review, "/request", &present, err);
    if (rc)
        return rc;
    if (!present)
        return kc_error_set(err, KC_EBADREQUEST, "request: missing");
    r->api_version = "";
    kc__wh_opt_string(review, "/apiVersion", &r->api_version, NULL);
    if ((rc = decode_scalars(review, r, err)) || (rc = decode_user(review, a, err)) ||
        (rc = raw_object(review, "/request/options", &a->options_json, &r->options_json, err)) ||
        (rc = decode_object(review, review_obj, "/request/object", &r->object, err)) ||
        (rc = decode_object(review, review_obj, "/request/oldObject", &r->old_object, err)))
        return rc;
    return 0;
}

void kc__wh_admission_fini(kc__wh_admission *a)
{
    kc_obj_unref(a->req.object);
    kc_obj_unref(a->req.old_object);
    free(a->groups);
    free(a->options_json);
    free(a->user_info_json);
    memset(a, 0, sizeof *a);
}
