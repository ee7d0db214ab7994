/*
 * error.c — the error table and the kc_error detail struct.
 *
 * Codes, names and messages are all generated from KC_ERRNO_MAP (kcache/error.h), so the three
 * can never drift apart. kc_error owns its strings; kc_error_clear() frees them. HTTP statuses map
 * to codes here (kc_errno_from_http); parsing a metav1.Status body lives with the JSON layer
 * (src/json/status.c) because it needs the parser.
 */
#include "core/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *kc_version(void)
{
    return KC_VERSION_STRING;
}

const char *kc_strerror(int code)
{
    switch (code) {
    case 0:
        return "success";
#define KC__ERR_MSG(name, val, msg)                                                                \
    case val:                                                                                      \
        return msg;
        KC_ERRNO_MAP(KC__ERR_MSG)
#undef KC__ERR_MSG
    default:
        return "unknown error";
    }
}

const char *kc_errno_name(int code)
{
    switch (code) {
    case 0:
        return "KC_OK";
#define KC__ERR_NAME(name, val, msg)                                                               \
    case val:                                                                                      \
        return "KC_E" #name;
        KC_ERRNO_MAP(KC__ERR_NAME)
#undef KC__ERR_NAME
    default:
        return "KC_E?";
    }
}

void kc_error_init(kc_error *err)
{
    if (!err)
        return;
    memset(err, 0, sizeof *err);
    err->retry_after_s = -1;
    err->offset = -1;
}

void kc_error_clear(kc_error *err)
{
    if (!err)
        return;
    free(err->reason);
    free(err->message);
    free(err->name);
    free(err->group);
    free(err->kind);
    free(err->uid);
    for (size_t i = 0; i < err->n_causes; i++) {
        free(err->causes[i].reason);
        free(err->causes[i].message);
        free(err->causes[i].field);
    }
    free(err->causes);
    kc_error_init(err);
}

int kc__error_vset(kc_error *err, int code, const char *fmt, va_list ap)
{
    if (!err)
        return code;
    kc_error_clear(err);
    err->code = code;
    if (fmt) {
        char *msg = NULL;
        if (vasprintf(&msg, fmt, ap) >= 0)
            err->message = msg;
    }
    return code;
}

int kc_error_set(kc_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kc__error_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

int kc_errno_from_http(int status, const char *reason)
{
    if (status >= 200 && status < 300)
        return 0;
    if (reason && strcmp(reason, "AlreadyExists") == 0)
        return KC_EEXISTS;
    if (reason && (strcmp(reason, "Expired") == 0 || strcmp(reason, "Gone") == 0))
        return KC_EGONE;
    switch (status) {
    case 400:
        return KC_EBADREQUEST;
    case 401:
        return KC_EUNAUTHORIZED;
    case 403:
        return KC_EFORBIDDEN;
    case 404:
        return KC_ENOTFOUND;
    case 405:
        return KC_EMETHOD;
    case 406:
    case 415:
        return KC_EMEDIATYPE;
    case 409:
        return KC_ECONFLICT;
    case 410:
        return KC_EGONE;
    case 413:
        return KC_ETOOLARGE;
    case 422:
        return KC_EUNPROCESSABLE;
    case 429:
        return KC_ETHROTTLED;
    case 504:
        if (reason && strcmp(reason, "ResourceVersionTooLarge") == 0)
            return KC_ERV_TOO_LARGE;
        return KC_ESERVER;
    default:
        if (status >= 500)
            return KC_ESERVER;
        return KC_EHTTP;
    }
}
