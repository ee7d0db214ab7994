/*
 * reply.c — the replies of the verbs (spec §3.7): a body (taken over) into the request's
 * libmicrohttpd response with Go's encoder's bytes (gojson.c: HTML-safe escapes, a final newline)
 * and the Warning headers of fieldValidation=Warn, plain text, a document, and a failure as a
 * metav1.Status. Rooms below the verbs describe a failure in a kc_error (filled by
 * storage/errors.c); this file renders the full Status in the Go struct's field order, as the API
 * server's encoder writes it:
 * {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message","reason",
 *  "details":{name,group,kind,uid,causes,retryAfterSeconds},"code"} — empty strings omitted
 * (omitempty), "details" present when any detail was set, so a generic error
 * (kc__fail_generic: upstream's NewGenericServerResponse) carries "details":{}.
 * Thread-safe (request-local state only).
 */
#include "server/api/api_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- reply helpers -------------------------------------------------------------------------- */

/* The body as given (taken over), Content-Type application/json, the Warning headers. */
void kc__reply_warnings(const kc__req *req, struct MHD_Response *resp)
{
    for (int i = 0; i < req->n_warnings; i++) {
        char h[KC__WARNING_MAX + 16];
        snprintf(h, sizeof(h), "299 - \"%s\"", req->warnings[i]);
        MHD_add_response_header(resp, "Warning", h);
    }
}

int kc__reply_raw(kc__req *req, unsigned status, char *body, size_t len)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(body);
        return KC_ENOMEM;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    kc__reply_warnings(req, resp);
    if (req->resp)
        MHD_destroy_response(req->resp);
    req->resp = resp;
    req->status = status;
    return 0;
}

int kc__reply(kc__req *req, unsigned status, char *body, size_t len)
{
    /* Go's json.Encoder is HTML-safe and ends every document with a newline; so does the API
     * server's. */
    size_t elen = 0;
    char *esc = kc__go_json_escape(body, len, &elen);
    if (esc) {
        free(body);
        body = esc;
        len = elen;
    }
    if (len == 0 || body[len - 1] != '\n') {
        char *b = realloc(body, len + 2);
        if (!b) {
            free(body);
            return KC_ENOMEM;
        }
        b[len++] = '\n';
        b[len] = '\0';
        body = b;
    }
    return kc__reply_raw(req, status, body, len);
}

int kc__reply_text(kc__req *req, unsigned status, const char *text)
{
    char *b = kc__strdup(text);
    if (!b)
        return KC_ENOMEM;
    int rc = kc__reply_raw(req, status, b, strlen(b));
    if (rc == 0) {
        MHD_del_response_header(req->resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
        MHD_add_response_header(req->resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                "text/plain; charset=utf-8");
    }
    return rc;
}

int kc__reply_error(kc__req *req, const kc_error *err)
{
    size_t len;
    char *s = kc__status_json(err, &len);
    if (!s)
        return KC_ENOMEM;
    int rc = kc__reply(req, (unsigned)kc__err_http(err), s, len);
    if (rc == 0 && err->retry_after_s > 0) {
        char ra[16];
        snprintf(ra, sizeof(ra), "%d", err->retry_after_s);
        MHD_add_response_header(req->resp, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
    return rc;
}

int kc__reply_doc(kc__req *req, unsigned status, json_t *doc)
{
    char *s = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (!s)
        return KC_ENOMEM;
    return kc__reply(req, status, s, strlen(s));
}
