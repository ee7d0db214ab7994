/*
 * status.c — metav1.Status error bodies of the embedded API server (spec §3.7).
 *
 * Verbs describe a failure in a kc_error (http_status, reason, message, details name/group/kind,
 * causes, retry_after_s); this file fills those fields and renders the full Status in the Go
 * struct's field order, as the API server's encoder writes it:
 * {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message","reason",
 *  "details":{name,group,kind,uid,causes,retryAfterSeconds},"code"} — empty strings omitted
 * (omitempty), "details" present when any detail was set, so a generic error
 * (kc__fail_generic: upstream's NewGenericServerResponse) carries "details":{}.
 * Thread-safe (no shared state).
 */
#include "server/storage/srv.h"

#include "server/schema/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kc__fail(kc_error *err, int http, const char *reason, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = kc__serr_v(err, http, reason, fmt, ap); /* the schema room's, as below */
    va_end(ap);
    return code;
}

/* details and causes: the schema room's helpers (one implementation; it cannot call up here) */
void kc__fail_details(kc_error *err, const char *name, const char *group, const char *kind)
{
    kc__serr_details(err, name, group, kind);
}

int kc__fail_cause(kc_error *err, const char *reason, const char *field, const char *msg)
{
    return kc__serr_cause(err, reason, field, msg);
}

int kc__fail_notfound(kc_error *err, const kc__rsrc *r, const char *name)
{
    char q[300];
    kc__rsrc_qualified(r, q, sizeof(q));
    int code = kc__fail(err, 404, "NotFound", "%s \"%s\" not found", q, name);
    kc__fail_details(err, name, r->group[0] ? r->group : NULL, r->plural);
    return code;
}

static const struct {
    int code;
    int http;
    const char *reason;
} code_map[] = {
    {KC_ENOTFOUND, 404, "NotFound"},
    {KC_EEXISTS, 409, "AlreadyExists"},
    {KC_ECONFLICT, 409, "Conflict"},
    {KC_EGONE, 410, "Expired"},
    {KC_EUNAUTHORIZED, 401, "Unauthorized"},
    {KC_EFORBIDDEN, 403, "Forbidden"},
    {KC_EUNPROCESSABLE, 422, "Invalid"},
    {KC_ETHROTTLED, 429, "TooManyRequests"},
    {KC_EBADREQUEST, 400, "BadRequest"},
    {KC_EPARSE, 400, "BadRequest"},
    {KC_EINVAL, 400, "BadRequest"},
    {KC_ETOOLARGE, 413, "RequestEntityTooLarge"},
    {KC_EMEDIATYPE, 415, "UnsupportedMediaType"},
    {KC_EMETHOD, 405, "MethodNotAllowed"},
    {KC_ERV_TOO_LARGE, 504, "Timeout"},
    {KC_ETIMEOUT, 504, "Timeout"},
};

int kc__err_http(const kc_error *err)
{
    if (err->http_status)
        return err->http_status;
    for (size_t i = 0; i < KC__ARRAY_LEN(code_map); i++)
        if (code_map[i].code == err->code)
            return code_map[i].http;
    return 500;
}

static const char *err_reason(const kc_error *err)
{
    if (err->reason)
        return err->reason;
    if (err->http_status)
        return err->http_status == 500 ? "InternalError" : "";
    for (size_t i = 0; i < KC__ARRAY_LEN(code_map); i++)
        if (code_map[i].code == err->code)
            return code_map[i].reason;
    return "InternalError";
}

int kc__fail_generic(kc_error *err, int http)
{
    int code = http == 405 ? kc__fail(err, 405, "MethodNotAllowed",
                                      "the server does not allow this method on the requested "
                                      "resource")
                           : kc__fail(err, 404, "NotFound",
                                      "the server could not find the requested resource");
    kc__fail_details(err, "", NULL, NULL); /* empty StatusDetails: "details":{} */
    return code;
}

/* Add key: v to o when v is a non-empty string (Go's omitempty). */
static void set_nonempty(json_t *o, const char *key, const char *v)
{
    if (v && *v)
        json_object_set_new(o, key, json_string(v));
}

/* metav1.StatusDetails in the Go struct's field order; NULL when the error has none. */
static json_t *status_details(const kc_error *err)
{
    if (!err->name && !err->group && !err->kind && !err->uid && !err->n_causes &&
        err->retry_after_s <= 0)
        return NULL;
    json_t *d = json_object();
    set_nonempty(d, "name", err->name);
    set_nonempty(d, "group", err->group);
    set_nonempty(d, "kind", err->kind);
    set_nonempty(d, "uid", err->uid);
    if (err->n_causes) {
        json_t *causes = json_array();
        for (size_t i = 0; i < err->n_causes; i++) {
            json_t *c = json_object();
            set_nonempty(c, "reason", err->causes[i].reason);
            set_nonempty(c, "message", err->causes[i].message);
            set_nonempty(c, "field", err->causes[i].field);
            json_array_append_new(causes, c);
        }
        json_object_set_new(d, "causes", causes);
    }
    if (err->retry_after_s > 0)
        json_object_set_new(d, "retryAfterSeconds", json_integer(err->retry_after_s));
    return d;
}

char *kc__status_json(const kc_error *err, size_t *ret_len)
{
    /* metav1.Status in the Go struct's field order: kind, apiVersion, metadata, status, message,
     * reason, details, code (jansson keeps insertion order). */
    int http = kc__err_http(err);
    const char *msg = err->message ? err->message : kc_strerror(err->code);
    json_t *st = json_pack("{s:s,s:s,s:{},s:s}", "kind", "Status", "apiVersion", "v1", "metadata",
                           "status", "Failure");
    if (!st)
        return NULL;
    set_nonempty(st, "message", msg);
    set_nonempty(st, "reason", err_reason(err));
    json_t *d = status_details(err);
    if (d)
        json_object_set_new(st, "details", d);
    json_object_set_new(st, "code", json_integer(http));
    char *s = json_dumps(st, JSON_COMPACT);
    json_decref(st);
    if (s && ret_len)
        *ret_len = strlen(s);
    return s;
}

char *kc__status_success_json(const kc__rsrc *r, const char *name, const char *uid, size_t *ret_len)
{
    json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:{}}", "kind", "Status", "apiVersion", "v1",
                           "metadata", "status", "Success", "details");
    if (!st)
        return NULL;
    json_t *d = json_object_get(st, "details");
    set_nonempty(d, "name", name);
    set_nonempty(d, "group", r->group);
    set_nonempty(d, "kind", r->plural);
    set_nonempty(d, "uid", uid);
    char *s = json_dumps(st, JSON_COMPACT);
    json_decref(st);
    if (s && ret_len)
        *ret_len = strlen(s);
    return s;
}
