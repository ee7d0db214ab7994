/*
 * status.c — metav1.Status error bodies of the embedded API server (spec §3.7).
 *
 * Verbs describe a failure in a kc_error (http_status, reason, message, details name/group/kind,
 * causes, retry_after_s); this file fills those fields and renders the full Status:
 * {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message","reason",
 *  "details":{name,group,kind,causes,retryAfterSeconds},"code"}. Thread-safe (no shared state).
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

char *kc__status_json(const kc_error *err, size_t *ret_len)
{
    int http = kc__err_http(err);
    const char *msg = err->message ? err->message : kc_strerror(err->code);
    json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion", "v1",
                           "metadata", "status", "Failure", "message", msg, "reason",
                           err_reason(err), "code", http);
    if (!st)
        return NULL;
    if (!*err_reason(err))
        json_object_del(st, "reason");
    json_t *d = json_object();
    if (err->name)
        json_object_set_new(d, "name", json_string(err->name));
    if (err->group)
        json_object_set_new(d, "group", json_string(err->group));
    if (err->kind)
        json_object_set_new(d, "kind", json_string(err->kind));
    if (err->uid)
        json_object_set_new(d, "uid", json_string(err->uid));
    if (err->n_causes) {
        json_t *causes = json_array();
        for (size_t i = 0; i < err->n_causes; i++) {
            json_t *c = json_object();
            if (err->causes[i].reason)
                json_object_set_new(c, "reason", json_string(err->causes[i].reason));
            if (err->causes[i].message)
                json_object_set_new(c, "message", json_string(err->causes[i].message));
            if (err->causes[i].field)
                json_object_set_new(c, "field", json_string(err->causes[i].field));
            json_array_append_new(causes, c);
        }
        json_object_set_new(d, "causes", causes);
    }
    if (err->retry_after_s > 0)
        json_object_set_new(d, "retryAfterSeconds", json_integer(err->retry_after_s));
    if (json_object_size(d))
        json_object_set_new(st, "details", d);
    else
        json_decref(d);
    char *s = json_dumps(st, JSON_COMPACT);
    json_decref(st);
    if (s && ret_len)
        *ret_len = strlen(s);
    return s;
}

char *kc__status_success_json(const kc__rsrc *r, const char *name, const char *uid, size_t *ret_len)
{
    json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:{s:s,s:s,s:s}}", "kind", "Status", "apiVersion",
                           "v1", "metadata", "status", "Success", "details", "name", name, "group",
                           r->group, "kind", r->plural);
    if (!st)
        return NULL;
    if (uid && *uid)
        json_object_set_new(json_object_get(st, "details"), "uid", json_string(uid));
    char *s = json_dumps(st, JSON_COMPACT);
    json_decref(st);
    if (s && ret_len)
        *ret_len = strlen(s);
    return s;
}
