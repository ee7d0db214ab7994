/*
 * review_response.c — kc_admission_response: what an admission handler answers, and its encoding
 * as the AdmissionReview response.
 *
 * A response starts allowed. The handler may deny it (a metav1.Status: code, default 403 as
 * controller-runtime's Denied, SV6; the reason defaults from the code as the API server names
 * them), add warnings (AR13) and audit annotations (AR14: the API server records them as
 * "<webhook name>/<key>" and refuses a key that does not make a qualified name, so the key must be
 * a qualified name's name part: no '/'), and, on a mutating route only (AR12: a validating
 * webhook's patch is an invalid response), give the object it wants (the JSONPatch is the
 * difference from the request's object, JP6) or explicit JSON Patch operations (checked: an
 * array of RFC 6902 operations, JP1). Only a request that carries an object can be patched (CH12).
 *
 * The encoding (AR9–AR15): apiVersion echoed from the request, kind AdmissionReview,
 * response.uid the request's uid, allowed; when denied a Status {metadata:{}, status:"Failure",
 * code, reason, message}; patch (base64) with patchType "JSONPatch" only for a non-empty patch
 * of an allowed mutating answer (never a patchType without a patch, AR11); warnings and
 * auditAnnotations only when there are some.
 */
#include "webhook/review_internal.h"

#include "json/locate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Most characters of one warning (the API's advice: the API server shows them as headers). */
#define MAX_WARNING_RUNES 120

void kc__wh_response_init(kc_admission_response *r, kc__wh_kind kind, kc_obj *object)
{
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->object = object;
    r->allowed = true;
}

void kc__wh_response_fini(kc_admission_response *r)
{
    free(r->reason);
    free(r->message);
    for (size_t i = 0; i < r->n_warnings; i++)
        free(r->warnings[i]);
    free(r->warnings);
    for (size_t i = 0; i < r->n_ann * 2; i++)
        free(r->ann[i]);
    free(r->ann);
    free(r->patch);
    kc_doc_free(r->from);
    memset(r, 0, sizeof *r);
}

/* The API server's Status reason for an HTTP code ("" when it has none). */
static const char *reason_for(int code)
{
    switch (code) {
    case 400:
        return "BadRequest";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 405:
        return "MethodNotAllowed";
    case 406:
        return "NotAcceptable";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 413:
        return "RequestEntityTooLarge";
    case 415:
        return "UnsupportedMediaType";
    case 422:
        return "Invalid";
    case 429:
        return "TooManyRequests";
    case 500:
        return "InternalError";
    case 503:
        return "ServiceUnavailable";
    case 504:
        return "Timeout";
    default:
        return "";
    }
}

int kc_admission_response_deny(kc_admission_response *resp, int code, const char *reason,
                               const char *message)
{
    if (!resp || code < 0 || (code != 0 && (code < 400 || code > 599)))
        return KC_EINVAL;
    if ((reason && kc__json_bad_utf8(reason, strlen(reason)) >= 0) ||
        (message && kc__json_bad_utf8(message, strlen(message)) >= 0))
        return KC_EINVAL;
    if (code == 0)
        code = 403;
    char *rs = kc__strdup(reason ? reason : reason_for(code));
    char *m = kc__strdup(message ? message : "");
    if (!rs || !m) {
        free(rs);
        free(m);
        return KC_ENOMEM;
    }
    free(resp->reason);
    free(resp->message);
    resp->reason = rs;
    resp->message = m;
    resp->code = code;
    resp->allowed = false;
    return 0;
}

/* Append p to the array *arr of *n entries. */
static int push(char ***arr, size_t *n, size_t per, char **p)
{
    char **a = realloc(*arr, (*n + 1) * per * sizeof *a);
    if (!a)
        return KC_ENOMEM;
    memcpy(a + *n * per, p, per * sizeof *a);
    *arr = a;
    (*n)++;
    return 0;
}

int kc_admission_response_warn(kc_admission_response *resp, const char *warning)
{
    if (!resp || !warning || !*warning)
        return KC_EINVAL;
    size_t n = strlen(warning), runes = 0, cut = n;
    if (kc__json_bad_utf8(warning, n) >= 0)
        return KC_EINVAL;
    for (size_t i = 0; i < n; i++) { /* cut after MAX_WARNING_RUNES characters */
        if (((unsigned char)warning[i] & 0xC0) != 0x80 && runes++ == MAX_WARNING_RUNES) {
            cut = i;
            break;
        }
    }
    char *w = kc__strdup_n(warning, cut);
    if (!w || push(&resp->warnings, &resp->n_warnings, 1, &w)) {
        free(w);
        return KC_ENOMEM;
    }
    return 0;
}

int kc_admission_response_annotate(kc_admission_response *resp, const char *key, const char *value)
{
    if (!resp || !key || !value || strchr(key, '/') || kc__check_qualified_name(key, strlen(key)) ||
        kc__json_bad_utf8(value, strlen(value)) >= 0)
        return KC_EINVAL;
    for (size_t i = 0; i < resp->n_ann; i++) { /* a key again replaces its value */
        if (strcmp(resp->ann[2 * i], key) == 0) {
            char *v = kc__strdup(value);
            if (!v)
                return KC_ENOMEM;
            free(resp->ann[2 * i + 1]);
            resp->ann[2 * i + 1] = v;
            return 0;
        }
    }
    char *kv[2] = {kc__strdup(key), kc__strdup(value)};
    if (!kv[0] || !kv[1] || push(&resp->ann, &resp->n_ann, 2, kv)) {
        free(kv[0]);
        free(kv[1]);
        return KC_ENOMEM;
    }
    return 0;
}

int kc_admission_response_set_object(kc_admission_response *resp, const kc_doc *doc)
{
    if (!resp || !doc || resp->kind != KC__WH_MUTATING || !resp->object)
        return KC_EINVAL;
    kc_doc *from = NULL;
    char *p = NULL;
    size_t n = 0;
    int rc = resp->from ? 0 : kc_doc_from_obj(resp->object, &from, NULL);
    if (rc == 0)
        rc = kc_doc_json_patch_diff(resp->from ? resp->from : from, doc, &p, &n, NULL);
    kc_doc_free(from);
    if (rc)
        return rc == KC_ENOMEM ? rc : KC_EINVAL;
    free(resp->patch);
    resp->patch = p;
    resp->patch_len = n;
    return 0;
}

/* true when the pointer at ptr of ops is a string holding an RFC 6901 pointer. */
static bool pointer_at(const kc_doc *ops, const char *ptr)
{
    const char *s;
    size_t n;
    if (kc_doc_get_string(ops, ptr, &s, &n, NULL) || (n && s[0] != '/'))
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '~' && (i + 1 == n || (s[i + 1] != '0' && s[i + 1] != '1')))
            return false;
    return true;
}

/* One operation of a JSON Patch: op one of the six, path (and from) pointers, value present. */
static bool valid_op(const kc_doc *ops, size_t i)
{
    char p[64];
    const char *op;
    snprintf(p, sizeof p, "/%zu/op", i);
    if (kc_doc_get_string(ops, p, &op, NULL, NULL))
        return false;
    bool from = strcmp(op, "move") == 0 || strcmp(op, "copy") == 0;
    bool value = strcmp(op, "add") == 0 || strcmp(op, "replace") == 0 || strcmp(op, "test") == 0;
    if (!from && !value && strcmp(op, "remove") != 0)
        return false;
    snprintf(p, sizeof p, "/%zu/path", i);
    if (!pointer_at(ops, p))
        return false;
    snprintf(p, sizeof p, "/%zu/from", i);
    if (from && !pointer_at(ops, p))
        return false;
    snprintf(p, sizeof p, "/%zu/value", i);
    return !value || kc_doc_has(ops, p);
}

int kc_admission_response_set_patch(kc_admission_response *resp, const char *json, size_t len)
{
    if (!resp || !json || resp->kind != KC__WH_MUTATING || !resp->object)
        return KC_EINVAL;
    kc_doc *ops = NULL;
    kc_json_type t;
    size_t n = 0;
    int rc = kc_doc_parse(json, len, &ops, NULL);
    if (rc)
        return rc == KC_ENOMEM ? rc : KC_EINVAL;
    if (kc_doc_type(ops, "", &t, NULL) || t != KC_JSON_ARRAY)
        rc = KC_EINVAL;
    else
        kc_doc_count(ops, "", &n, NULL);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (!valid_op(ops, i))
            rc = KC_EINVAL;
    char *p = NULL;
    if (rc == 0) /* the compact text: what is checked is what is sent */
        rc = kc_doc_json(ops, &p, &n, NULL);
    kc_doc_free(ops);
    if (rc)
        return rc;
    free(resp->patch);
    resp->patch = p;
    resp->patch_len = n;
    return 0;
}

/* ---- encoding ---------------------------------------------------------------------------------
 */

static int encode_status(const kc_admission_response *r, kc_doc *d, kc_error *err)
{
    int rc;
    if ((rc = kc_doc_set_raw(d, "/response/status/metadata", "{}", 2, err)) ||
        (rc = kc_doc_set_string(d, "/response/status/status", "Failure", err)) ||
        (rc = kc_doc_set_int(d, "/response/status/code", r->code, err)))
        return rc;
    if (r->reason && *r->reason &&
        (rc = kc_doc_set_string(d, "/response/status/reason", r->reason, err)))
        return rc;
    if (r->message && *r->message &&
        (rc = kc_doc_set_string(d, "/response/status/message", r->message, err)))
        return rc;
    return 0;
}

static int encode_patch(const kc_admission_response *r, kc_doc *d, kc_error *err)
{
    if (!r->allowed || r->kind != KC__WH_MUTATING || !r->patch || strcmp(r->patch, "[]") == 0)
        return 0;
    char *b64 = NULL;
    int rc = kc_base64_encode(r->patch, r->patch_len, &b64, NULL, err);
    if (rc == 0 && (rc = kc_doc_set_string(d, "/response/patch", b64, err)) == 0)
        rc = kc_doc_set_string(d, "/response/patchType", "JSONPatch", err);
    free(b64);
    return rc;
}

static int encode_lists(const kc_admission_response *r, kc_doc *d, kc_error *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < r->n_warnings; i++)
        rc = kc_doc_set_string(d, "/response/warnings/-", r->warnings[i], err);
    if (rc == 0 && r->n_ann)
        rc = kc_doc_set_raw(d, "/response/auditAnnotations", "{}", 2, err);
    for (size_t i = 0; rc == 0 && i < r->n_ann; i++) {
        char p[128];
        snprintf(p, sizeof p, "/response/auditAnnotations/%s", r->ann[2 * i]); /* no '~' '/' */
        rc = kc_doc_set_string(d, p, r->ann[2 * i + 1], err);
    }
    return rc;
}

int kc__wh_response_encode(const kc_admission_response *r, const char *api_version, const char *uid,
                           char **ret, size_t *ret_len, kc_error *err)
{
    kc_doc *d = NULL;
    int rc = kc_doc_new(&d, err);
    if (rc == 0 && (rc = kc_doc_set_string(d, "/apiVersion", api_version, err)) == 0 &&
        (rc = kc_doc_set_string(d, "/kind", "AdmissionReview", err)) == 0 &&
        (rc = kc_doc_set_string(d, "/response/uid", uid, err)) == 0 &&
        (rc = kc_doc_set_bool(d, "/response/allowed", r->allowed, err)) == 0 &&
        (r->allowed || (rc = encode_status(r, d, err)) == 0) &&
        (rc = encode_patch(r, d, err)) == 0 && (rc = encode_lists(r, d, err)) == 0)
        rc = kc_doc_json(d, ret, ret_len, err);
    kc_doc_free(d);
    return rc;
}
