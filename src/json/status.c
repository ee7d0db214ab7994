/*
 * status.c — metav1.Status bodies → kc_error.
 *
 * sj.cpp reads the Status fields (kind, status, code, reason, message, details{name, group, kind,
 * uid, causes[], retryAfterSeconds}); this file decides what they mean: "Success" is 0, anything
 * else maps through kc_errno_from_http(code, reason). A Status without an HTTP code (seen in some
 * watch ERROR events) gets one from its reason.
 */
#include "json/obj_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool eq(kc__sj_str s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* HTTP status implied by a Kubernetes reason, for a Status without a code; 0 when unknown. */
static int http_from_reason(kc__sj_str r)
{
    static const struct {
        const char *reason;
        int http;
    } map[] = {
        {"BadRequest", 400},
        {"Unauthorized", 401},
        {"Forbidden", 403},
        {"NotFound", 404},
        {"MethodNotAllowed", 405},
        {"NotAcceptable", 406},
        {"AlreadyExists", 409},
        {"Conflict", 409},
        {"Gone", 410},
        {"Expired", 410},
        {"RequestEntityTooLarge", 413},
        {"UnsupportedMediaType", 415},
        {"Invalid", 422},
        {"TooManyRequests", 429},
        {"InternalError", 500},
        {"ServiceUnavailable", 503},
        {"ServerTimeout", 504},
        {"Timeout", 504},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (eq(r, map[i].reason))
            return map[i].http;
    return 0;
}

static char *dup(kc__sj_str s, bool *oom)
{
    if (!s.n)
        return NULL;
    char *p = malloc(s.n + 1);
    if (!p) {
        *oom = true;
        return NULL;
    }
    memcpy(p, s.p, s.n);
    p[s.n] = '\0';
    return p;
}

struct status_state {
    kc_error *err;
    int result;
};

static int status_cb(void *ud, const kc__sj_status_info *st, kc__sj_err *e)
{
    struct status_state *ss = ud;
    if (st->has_kind && !eq(st->kind, "Status")) {
        e->code = KC_EPARSE;
        snprintf(e->msg, sizeof e->msg, "not a Status (kind \"%.*s\")",
                 (int)(st->kind.n > 64 ? 64 : st->kind.n), st->kind.p ? st->kind.p : "");
        return KC_EPARSE;
    }
    if (!st->has_kind && !st->has_status) {
        e->code = KC_EPARSE;
        snprintf(e->msg, sizeof e->msg, "not a Status (neither kind nor status)");
        return KC_EPARSE;
    }
    if (eq(st->status, "Success")) {
        ss->result = 0;
        kc_error_clear(ss->err);
        return 0;
    }
    int http = st->has_code ? (int)st->code : 0;
    if (http <= 0 || http > 999)
        http = http_from_reason(st->reason);
    char tmp[64];
    size_t rn = st->reason.n < sizeof tmp - 1 ? st->reason.n : sizeof tmp - 1;
    memcpy(tmp, st->reason.p ? st->reason.p : "", rn);
    tmp[rn] = '\0';
    int code = kc_errno_from_http(http, rn ? tmp : NULL);
    if (code == 0) /* "Failure" with a 2xx code or no code at all */
        code = KC_EHTTP;
    ss->result = code;

    kc_error *err = ss->err;
    if (!err)
        return 0;
    kc_error_clear(err);
    bool oom = false;
    err->code = code;
    err->http_status = http;
    err->reason = dup(st->reason, &oom);
    err->message = dup(st->message, &oom);
    err->name = dup(st->d_name, &oom);
    err->group = dup(st->d_group, &oom);
    err->kind = dup(st->d_kind, &oom);
    err->uid = dup(st->d_uid, &oom);
    if (st->has_retry)
        err->retry_after_s = st->retry_after < 0       ? 0
                             : st->retry_after > 86400 ? 86400
                                                       : (int)st->retry_after;
    if (st->n_causes) {
        err->causes = calloc(st->n_causes, sizeof *err->causes);
        if (!err->causes) {
            oom = true;
        } else {
            err->n_causes = st->n_causes;
            for (size_t i = 0; i < st->n_causes; i++) {
                err->causes[i].reason = dup(st->causes[i].reason, &oom);
                err->causes[i].message = dup(st->causes[i].message, &oom);
                err->causes[i].field = dup(st->causes[i].field, &oom);
            }
        }
    }
    if (oom) {
        kc_error_clear(err);
        e->code = KC_ENOMEM;
        snprintf(e->msg, sizeof e->msg, "out of memory");
        return KC_ENOMEM;
    }
    return 0;
}

int kc_status_parse(const char *json, size_t len, kc_error *err)
{
    if (!json && len)
        return kc_error_set(err, KC_EINVAL, "kc_status_parse: NULL body");
    int crc = kc__json_cpu_check(err);
    if (crc)
        return crc;
    kc__sj_ctx *ctx = kc__sj_thread_ctx();
    if (!ctx)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    struct status_state ss = {err, 0};
    kc__sj_err e = {0, -1, ""};
    int r = kc__sj_status(ctx, json ? json : "", len, status_cb, &ss, &e);
    kc__sj_ctx_trim(ctx, (size_t)1 << 20);
    if (r)
        return kc__sj_err_to(&e, 0, err);
    return ss.result;
}
