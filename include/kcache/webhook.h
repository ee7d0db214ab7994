/*
 * kcache/webhook.h — kc_webhook_server: an HTTPS admission and conversion webhook server that
 * never answers from a cache that has not synced.
 *
 * One server listens on one address (TLS 1.2 and 1.3 only). Handlers are registered per path:
 * validating and mutating admission (admission.k8s.io/v1 AdmissionReview) and conversion
 * (apiextensions.k8s.io/v1 ConversionReview). The library decodes the review, calls the handler
 * with the request decoded (objects as kc_obj), and encodes the answer: the response echoes the
 * request's uid and apiVersion; a mutating handler returns the object it wants and the library
 * computes the RFC 6902 JSONPatch. Malformed requests are answered 400 with the reason and never
 * reach a handler.
 *
 * Readiness: the server is *serving* once TLS accepts and *ready* once every required informer of
 * the cache it was given has synced (and stays fresh: kc_informer_opts.max_staleness_ms). /readyz
 * answers 503 until ready; /healthz only says the process serves. An admission handler whose
 * request arrives before the cache is ready waits for it at most ready_wait_ms (shorter than the
 * webhook's timeoutSeconds), then the request is answered by the not-ready policy — denied with a
 * 503-like Status, or allowed — never from a partial cache. Conversion handlers never wait: the
 * cache's own LIST may need this very conversion webhook (docs/webhooks.md: the deadlock).
 *
 * Certificates: the certificate and key are read from PEM files and chosen per TLS handshake from
 * an atomically swapped, reference-counted pair; the files are re-read when they change (polled,
 * cert_poll_ms) or on kc_webhook_server_reload_certs, and the last good pair is kept when new files
 * are unreadable. Rotation needs no restart and fails no request.
 *
 * Lifecycle: kc_webhook_server_new → kc_webhook_server_add_* → kc_webhook_server_start → … →
 * kc_webhook_server_stop → kc_webhook_server_free. Thread-safety is stated per function; handlers
 * run on the server's worker threads, up to opts.workers at once.
 */
#ifndef KCACHE_WEBHOOK_H
#define KCACHE_WEBHOOK_H

#include "cache.h"
#include "doc.h"

KC_BEGIN_DECLS

typedef struct kc_webhook_server kc_webhook_server;
typedef struct kc_admission_response kc_admission_response;

/* Default bound of one request body: 7 MiB. The API server stores objects of up to 3 MiB (its
 * request body limit) and an AdmissionReview carries two of them (object and oldObject) plus the
 * envelope, so 3 MiB would refuse legitimate UPDATE reviews; 7 MiB is controller-runtime's cap
 * (docs/webhooks.md, "Transport"). */
#define KC_WEBHOOK_DEFAULT_MAX_REQUEST_BYTES ((size_t)7 * 1024 * 1024)

/* What an admission request that cannot be answered from a ready cache gets. */
typedef enum kc_webhook_not_ready_policy {
    KC_WEBHOOK_NOT_READY_DENY = 0,  /* default: allowed=false, Status 503 ServiceUnavailable */
    KC_WEBHOOK_NOT_READY_ALLOW = 1, /* allowed=true with a warning */
} kc_webhook_not_ready_policy;

/* Server options. Zero-initialised fields are the defaults. Strings copied. */
typedef struct kc_webhook_server_opts {
    const char *listen;         /* "ADDR:PORT" (port 0: a free one); NULL = "0.0.0.0:9443" */
    const char *cert_file;      /* required: serving certificate chain, PEM (tls.crt) */
    const char *key_file;       /* required: its private key, PEM (tls.key) */
    const char *client_ca_file; /* verify client certificates against this CA; NULL = none */
    int64_t cert_poll_ms;       /* re-read the files when changed, checked this often; 0 = 10000 */
    size_t max_request_bytes;   /* 0 = KC_WEBHOOK_DEFAULT_MAX_REQUEST_BYTES */
    int64_t request_timeout_ms; /* reading a request and running its handler; 0 = 10000 */
    unsigned max_connections;   /* 0 = 256 */
    unsigned workers;           /* handler threads; 0 = 4 */
    /* The cache the handlers read (borrowed: must outlive the server); readiness follows its
     * required informers. NULL = no cache: ready once serving. */
    kc_cache *cache;
    int64_t ready_wait_ms; /* an early admission request's wait for readiness; 0 = 5000 */
    int not_ready_policy;  /* kc_webhook_not_ready_policy */
    /* Also serve /readyz, /healthz and /metrics over plain HTTP on this "ADDR:PORT" (the probe
     * port, as controller-runtime's :8081); NULL = only on the TLS listener. */
    const char *health_listen;
} kc_webhook_server_opts;

/* Per-handler options. Zero-initialised (or NULL) means the server's defaults. */
typedef struct kc_webhook_handler_opts {
    const char *name;      /* metrics label webhook="…"; NULL = the path */
    bool no_cache_wait;    /* admission: the handler does not read the cache: never wait */
    int64_t ready_wait_ms; /* 0 = the server's */
    int not_ready_policy;  /* 0 = the server's (KC_WEBHOOK_NOT_READY_DENY); see the enum */
} kc_webhook_handler_opts;

/* A group/version/kind. */
typedef struct kc_gvk {
    const char *group; /* "" for the core group */
    const char *version;
    const char *kind;
} kc_gvk;

/*
 * An admission request, decoded (the library's struct: borrowed for the handler's call, never
 * copied by value or kept; docs/abi.md rule 5). Strings are NUL-terminated, "" when absent.
 */
typedef struct kc_admission_request {
    const char *api_version; /* of the review: "admission.k8s.io/v1" */
    const char *uid;
    kc_gvk kind;
    kc_gvr resource;
    const char *sub_resource;
    kc_gvk request_kind;
    kc_gvr request_resource;
    const char *request_sub_resource;
    const char *operation; /* "CREATE", "UPDATE", "DELETE", "CONNECT" */
    const char *ns;        /* namespace */
    const char *name;
    const char *user;          /* userInfo.username */
    const char *user_uid;      /* userInfo.uid */
    const char *const *groups; /* userInfo.groups */
    size_t n_groups;
    bool dry_run;
    kc_obj *object;             /* NULL when absent (DELETE) */
    kc_obj *old_object;         /* NULL when absent (CREATE, CONNECT) */
    const char *options_json;   /* raw JSON of options ("" when absent), NUL-terminated */
    const char *user_info_json; /* raw JSON of userInfo (extra fields), NUL-terminated */
} kc_admission_request;

/*
 * Admission handler: decide on req (borrowed for the call) by calling the kc_admission_response_*
 * functions on resp (borrowed for the call). A response starts allowed. Return 0, or a negative
 * KC_E… code: the request is then denied with Status 500 InternalError (the code's text; the
 * handler's own words go in kc_admission_response_deny). Runs on a worker thread.
 */
typedef int (*kc_admission_fn)(void *ud, const kc_admission_request *req,
                               kc_admission_response *resp);

/*
 * Conversion handler: convert obj (one of the request's objects; the library's copy, the
 * handler's to edit in place, borrowed for the call) to desired_api_version ("group/version").
 * The library sets apiVersion itself afterwards and checks the kind, name, namespace and uid did
 * not change. Return 0, or a negative KC_E… code with err set: the review answers Failure with
 * err's message. Runs on a worker thread; never waits for the cache.
 */
typedef int (*kc_conversion_fn)(void *ud, const char *desired_api_version, kc_doc *obj,
                                kc_error *err);

/* ---- responses (only inside an admission handler) ---------------------------------------- */

/* Deny: allowed=false with Status code (0 = 403), reason (NULL = "Forbidden" style from code)
 * and message (copied). Errors: KC_EINVAL (NULL resp), KC_ENOMEM. Not thread-safe (the handler's
 * call). Since 0.1. */
KC_API int kc_admission_response_deny(kc_admission_response *resp, int code, const char *reason,
                                      const char *message);
/* Add a warning (copied; at most 120 characters each as the API server shows them). Errors:
 * KC_EINVAL, KC_ENOMEM. Not thread-safe (the handler's call). Since 0.1. */
KC_API int kc_admission_response_warn(kc_admission_response *resp, const char *warning);
/* Add an audit annotation key=value (copied). Errors: KC_EINVAL (NULL, bad key), KC_ENOMEM. Not
 * thread-safe (the handler's call). Since 0.1. */
KC_API int kc_admission_response_annotate(kc_admission_response *resp, const char *key,
                                          const char *value);
/* Mutating handlers: the object wanted (doc borrowed for the call, copied); the library computes
 * the JSONPatch from the request's object to it (none when equal). Errors: KC_EINVAL (NULL,
 * a validating handler, no object in the request), KC_ENOMEM. Not thread-safe (the handler's
 * call). Since 0.1. */
KC_API int kc_admission_response_set_object(kc_admission_response *resp, const kc_doc *doc);
/* Mutating handlers: explicit RFC 6902 operations (json, len bytes: a JSON array; copied,
 * validated), instead of set_object. Errors: KC_EINVAL (not a JSON Patch array), KC_ENOMEM. Not
 * thread-safe (the handler's call). Since 0.1. */
KC_API int kc_admission_response_set_patch(kc_admission_response *resp, const char *json,
                                           size_t len);

/* ---- the server --------------------------------------------------------------------------- */

/* New server (not yet listening). opts copied. The certificate pair is loaded now (KC_ECONFIG
 * naming the file and what is wrong). Errors: KC_EINVAL (NULL, bad option), KC_ECONFIG,
 * KC_EUNSUPPORTED (opts of a newer header), KC_ENOMEM. *ret is new — caller frees with
 * kc_webhook_server_free(). Thread-safe. Since 0.1. */
KC_API int(kc_webhook_server_new)(const kc_webhook_server_opts *opts, size_t opts_size,
                                  kc_webhook_server **ret, kc_error *err);
#define kc_webhook_server_new(opts, ret, err)                                                      \
    (kc_webhook_server_new)((opts), sizeof(kc_webhook_server_opts), (ret), (err))

/* Register a validating admission handler at path (copied; e.g. "/validate-migration"). ud is
 * borrowed (must outlive the server); ho copied (NULL = defaults). Before start only. Errors:
 * KC_EINVAL (NULL, a path not starting with '/', a reserved path: /readyz /healthz /livez
 * /metrics), KC_EEXISTS (path taken), KC_EBUSY (started), KC_ENOMEM. Not thread-safe: set-up
 * thread. Since 0.1. */
KC_API int(kc_webhook_server_add_validating)(kc_webhook_server *srv, const char *path,
                                             kc_admission_fn fn, void *ud,
                                             const kc_webhook_handler_opts *ho, size_t ho_size,
                                             kc_error *err);
#define kc_webhook_server_add_validating(srv, path, fn, ud, ho, err)                               \
    (kc_webhook_server_add_validating)((srv), (path), (fn), (ud), (ho),                            \
                                       sizeof(kc_webhook_handler_opts), (err))
/* Register a mutating admission handler (as kc_webhook_server_add_validating; the handler may
 * call kc_admission_response_set_object / set_patch). ud borrowed, ho copied. Errors: as
 * kc_webhook_server_add_validating (KC_EINVAL, KC_EEXISTS, KC_EBUSY, KC_ENOMEM). Not
 * thread-safe: set-up thread. Since 0.1. */
KC_API int(kc_webhook_server_add_mutating)(kc_webhook_server *srv, const char *path,
                                           kc_admission_fn fn, void *ud,
                                           const kc_webhook_handler_opts *ho, size_t ho_size,
                                           kc_error *err);
#define kc_webhook_server_add_mutating(srv, path, fn, ud, ho, err)                                 \
    (kc_webhook_server_add_mutating)((srv), (path), (fn), (ud), (ho),                              \
                                     sizeof(kc_webhook_handler_opts), (err))
/* Register a conversion handler at path (ud borrowed, ho copied; never waits for the cache).
 * Errors: as kc_webhook_server_add_validating (KC_EINVAL, KC_EEXISTS, KC_EBUSY, KC_ENOMEM). Not
 * thread-safe: set-up thread. Since 0.1. */
KC_API int(kc_webhook_server_add_conversion)(kc_webhook_server *srv, const char *path,
                                             kc_conversion_fn fn, void *ud,
                                             const kc_webhook_handler_opts *ho, size_t ho_size,
                                             kc_error *err);
#define kc_webhook_server_add_conversion(srv, path, fn, ud, ho, err)                               \
    (kc_webhook_server_add_conversion)((srv), (path), (fn), (ud), (ho),                            \
                                       sizeof(kc_webhook_handler_opts), (err))

/* Start listening (TLS), and the health listener when asked. Returns at once: readiness follows
 * the cache. Errors: KC_EINVAL (NULL), KC_EIO (cannot bind: err names the address), KC_EBUSY
 * (started), KC_ENOMEM. Thread-safe. Since 0.1. No ownership transfer. */
KC_API int kc_webhook_server_start(kc_webhook_server *srv, kc_error *err);
/* The TLS listener's port (after start). No ownership transfer. Errors: KC_EINVAL (NULL, not
 * started). Thread-safe. Since 0.1. */
KC_API int kc_webhook_server_port(const kc_webhook_server *srv);
/* "https://ADDR:PORT" of the TLS listener (after start). Borrowed: valid until free. NULL for NULL
 * or before start. Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_webhook_server_url(const kc_webhook_server *srv);
/* "http://ADDR:PORT" of the health listener, NULL when there is none. Borrowed: valid until free.
 * Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_webhook_server_health_url(const kc_webhook_server *srv);
/* true when serving and every required informer of the cache is synced and fresh. false for NULL.
 * No ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_webhook_server_ready(kc_webhook_server *srv);
/* Re-read the certificate files now (TLS6's "reload now"); the pair in use changes only when both
 * load and match. Errors: KC_EINVAL (NULL), KC_ECONFIG (unreadable or mismatched: the old pair is
 * kept; err names the file). Thread-safe. Since 0.1. No ownership transfer. */
KC_API int kc_webhook_server_reload_certs(kc_webhook_server *srv, kc_error *err);
/* Prometheus text of the server's metrics (controller_runtime_webhook_requests_total{webhook,code},
 * controller_runtime_webhook_latency_seconds{webhook},
 * controller_runtime_webhook_requests_in_flight {webhook}; certificate reloads): a new malloc'd
 * string — caller frees; NULL for NULL or on out of memory. Usable as a kc_health metrics source.
 * Thread-safe. Errors: NULL (KC_ENOMEM). Since 0.1. */
KC_API char *kc_webhook_server_metrics_text(void *srv);
/* Stop accepting, finish requests in flight (bounded by request_timeout_ms), stop the listeners.
 * Returns 0. Errors: KC_EINVAL (NULL). Thread-safe; idempotent. Since 0.1. No ownership transfer.
 */
KC_API int kc_webhook_server_stop(kc_webhook_server *srv);
/* Stop if needed and free (srv consumed). Accepts NULL. Not thread-safe: no other call may be in
 * flight. Never fails. Since 0.1. */
KC_API void kc_webhook_server_free(kc_webhook_server *srv);

/* ---- development certificates ------------------------------------------------------------- */

/* What kc_webhook_cert_generate makes. Zero-initialised fields are the defaults. */
typedef struct kc_webhook_cert_opts {
    const char *dir;              /* required: writes ca.crt, tls.crt, tls.key (0600) there */
    const char *const *dns_names; /* subjectAltName DNS entries, e.g. "svc.ns.svc" */
    size_t n_dns_names;
    const char *const *ip_addresses; /* subjectAltName IP entries, e.g. "127.0.0.1" */
    size_t n_ip_addresses;
    int valid_days; /* 0 = 365 */
    bool reuse_ca;  /* keep dir/ca.crt + ca.key when present (rotation: same CA) */
} kc_webhook_cert_opts;

/* Make a self-signed CA (unless reused) and a serving certificate signed by it for the names
 * given (OpenSSL; EC P-256), written atomically (temp file + rename) into opts->dir. *ret_ca_bundle
 * (may be NULL) gets the base64 of the CA PEM, the caBundle of a webhook configuration: a new
 * malloc'd string — caller frees. Errors: KC_EINVAL (no dir, no name, a bad IP), KC_EIO (cannot
 * write: err names the file), KC_ENOMEM. Thread-safe. Since 0.1. */
KC_API int(kc_webhook_cert_generate)(const kc_webhook_cert_opts *opts, size_t opts_size,
                                     char **ret_ca_bundle, kc_error *err);
#define kc_webhook_cert_generate(opts, ret_ca_bundle, err)                                         \
    (kc_webhook_cert_generate)((opts), sizeof(kc_webhook_cert_opts), (ret_ca_bundle), (err))

KC_END_DECLS

#endif
