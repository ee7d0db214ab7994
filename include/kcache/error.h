/*
 * kcache/error.h — the one error model.
 *
 * Every fallible function returns 0 (or a count) on success and a negative code from KC_ERRNO_MAP
 * on failure. Codes are stable: never renumbered; a changed meaning gets a new name.
 * Rich context travels in an optional kc_error the caller passes in (NULL is always allowed):
 * HTTP status, Kubernetes reason and message, Status details (name, group, kind, uid, causes),
 * Retry-After, and for parse errors the byte offset.
 */
#ifndef KCACHE_ERROR_H
#define KCACHE_ERROR_H

#include "common.h"

KC_BEGIN_DECLS

/* X(NAME, value, message). KC_E##NAME == value. */
#define KC_ERRNO_MAP(X)                                                                            \
    X(NOMEM, -1, "out of memory")                                                                  \
    X(INVAL, -2, "invalid argument")                                                               \
    X(IO, -3, "I/O or transport error")                                                            \
    X(TLS, -4, "TLS error")                                                                        \
    X(TIMEOUT, -5, "timed out")                                                                    \
    X(CANCELED, -6, "cancelled")                                                                   \
    X(STOPPED, -7, "stopped")                                                                      \
    X(NOTFOUND, -8, "not found (404)")                                                             \
    X(EXISTS, -9, "already exists (409)")                                                          \
    X(CONFLICT, -10, "conflict (409)")                                                             \
    X(GONE, -11, "resource version expired or gone (410)")                                         \
    X(TOOLARGE, -12, "too large")                                                                  \
    X(UNAUTHORIZED, -13, "unauthorized (401)")                                                     \
    X(FORBIDDEN, -14, "forbidden (403)")                                                           \
    X(UNPROCESSABLE, -15, "invalid object (422)")                                                  \
    X(THROTTLED, -16, "too many requests (429)")                                                   \
    X(SERVER, -17, "server error (5xx)")                                                           \
    X(PARSE, -18, "bad data from server")                                                          \
    X(NOT_CAUGHT_UP, -19, "write succeeded but cache not caught up")                               \
    X(BADREQUEST, -20, "bad request (400)")                                                        \
    X(UNSUPPORTED, -21, "not supported")                                                           \
    X(DNS, -22, "cannot resolve host")                                                             \
    X(CONFIG, -23, "bad configuration")                                                            \
    X(AUTH, -24, "credential plugin or token error")                                               \
    X(METHOD, -25, "method not allowed (405)")                                                     \
    X(MEDIATYPE, -26, "unsupported media type (415) or not acceptable (406)")                      \
    X(RV_TOO_LARGE, -27, "resource version too large (server behind or reset)")                    \
    X(NOT_COMPARABLE, -28, "resource versions not comparable")                                     \
    X(HTTP, -29, "unexpected HTTP status")                                                         \
    X(BUSY, -30, "busy or already running")                                                        \
    X(FENCED, -31, "fenced: the local lease deadline passed")

enum kc_errno {
#define KC__ERR_ENUM(name, val, msg) KC_E##name = (val),
    KC_ERRNO_MAP(KC__ERR_ENUM)
#undef KC__ERR_ENUM
};

/* Human-readable message for a code ("unknown error" for codes not in the table).
 * Borrowed (static). Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_strerror(int code);

/* The code's name, e.g. "KC_ENOTFOUND" ("KC_E?" when unknown). Borrowed (static). Thread-safe.
 * Never fails. Since 0.1. */
KC_API const char *kc_errno_name(int code);

/* One entry of a Status's details.causes[]. */
typedef struct kc_cause {
    char *reason;  /* e.g. "FieldValueInvalid"; may be NULL */
    char *message; /* may be NULL */
    char *field;   /* e.g. "metadata.name"; may be NULL */
} kc_cause;

/*
 * Detail of one failure. Initialise with KC_ERROR_INIT or kc_error_init(); release with
 * kc_error_clear() (frees the strings it owns and resets it). All strings are owned by the struct.
 * Not thread-safe: one kc_error per call in flight.
 */
typedef struct kc_error {
    int code;         /* KC_E… code, 0 when no error */
    int http_status;  /* HTTP status code, 0 when none */
    char *reason;     /* Kubernetes Status reason, e.g. "NotFound", "Expired"; NULL when none */
    char *message;    /* human-readable message; NULL when none */
    char *name;       /* Status details.name */
    char *group;      /* Status details.group */
    char *kind;       /* Status details.kind */
    char *uid;        /* Status details.uid */
    kc_cause *causes; /* Status details.causes[] */
    size_t n_causes;
    int retry_after_s; /* Retry-After or details.retryAfterSeconds; -1 when none */
    int64_t offset;    /* byte offset of a parse error in its input; -1 when unknown */
    void *reserved[4]; /* for fields of later versions (kc_error is frozen: docs/abi.md); NULL */
} kc_error;

#define KC_ERROR_INIT                                                                              \
    {                                                                                              \
        0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, -1, -1,                                 \
        {                                                                                          \
            NULL                                                                                   \
        }                                                                                          \
    }

/* Initialise to the empty state. err is borrowed for the call (nothing freed: use on a fresh
 * kc_error). Thread-safe for distinct errs (it touches only err). Never fails. Since 0.1. */
KC_API void kc_error_init(kc_error *err);

/* Free everything err owns and re-initialise it. err is borrowed for the call. Accepts NULL.
 * Thread-safe for distinct errs (it touches only err). Never fails. Since 0.1. */
KC_API void kc_error_clear(kc_error *err);

/*
 * Record a failure: clears err, sets err->code = code and a formatted message (copied).
 * Returns code, so `return kc_error_set(err, KC_EINVAL, "bad %s", what);` reads naturally.
 * err may be NULL (then only the code is returned); err is borrowed for the call, fmt and its
 * arguments are read during it. Thread-safe for distinct errs (it touches only err).
 * Never fails: returns code (without memory for the message, err->message stays NULL). Since 0.1.
 */
KC_API int kc_error_set(kc_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Map an HTTP status and optional Kubernetes reason to a KC_E… code (0 for 2xx).
 * E.g. 409+"AlreadyExists" → KC_EEXISTS, 409 → KC_ECONFLICT, 410 → KC_EGONE, 504 with reason
 * "Timeout" → KC_ESERVER. reason may be NULL (borrowed for the call). Thread-safe. Never fails.
 * Since 0.1. */
KC_API int kc_errno_from_http(int http_status, const char *reason);

KC_END_DECLS

#endif
