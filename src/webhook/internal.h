/*
 * webhook/internal.h — shared between the transport (server.c, tls*.c: listener, TLS, health,
 * metrics, readiness) and the reviews (review*.c: AdmissionReview / ConversionReview decoding,
 * handler calls, response encoding, JSONPatch).
 */
#ifndef KC_WEBHOOK_INTERNAL_H
#define KC_WEBHOOK_INTERNAL_H

#include "kcache/webhook.h"

typedef enum kc__wh_kind {
    KC__WH_VALIDATING = 0,
    KC__WH_MUTATING = 1,
    KC__WH_CONVERSION = 2,
    KC__WH_RAW = 3, /* benches only: kc__wh_server_add_raw */
} kc__wh_kind;

/* A raw route's review step (benches only): answer body (len bytes) with a 200 application/json
 * body, *resp new malloc'd (caller frees). Returns 0 or KC_ENOMEM. Runs on a worker thread. */
typedef int (*kc__wh_raw_fn)(void *ud, const char *body, size_t len, char **resp, size_t *resp_len);

/* One registered path (owned by the server; immutable after start). */
typedef struct kc__wh_route {
    char *path;
    char *name; /* metrics label: ho.name or the path */
    kc__wh_kind kind;
    kc_admission_fn admit;    /* validating, mutating */
    kc_conversion_fn convert; /* conversion */
    kc__wh_raw_fn raw;        /* KC__WH_RAW */
    void *ud;
    bool cache_wait;       /* admission && !ho.no_cache_wait && the server has a cache */
    int64_t ready_wait_ms; /* resolved: handler's, else the server's */
    int not_ready_policy;  /* resolved */
} kc__wh_route;

/*
 * review.c: answer one POST body (len bytes; content_type the request's Content-Type header value,
 * NULL when absent) for route. Sets *status (200 with a review; 400 with a plain-text reason for a
 * malformed request; 415 for a content type other than application/json; 500 only for out of
 * memory while encoding), *resp (new malloc'd body, caller frees), *resp_len, *ctype (static
 * string). For admission routes with cache_wait it calls kc__wh_wait_ready(srv, route->
 * ready_wait_ms) before the handler and answers by route->not_ready_policy when that is false.
 * srv may be NULL (unit tests): then the cache counts as ready. Returns 0 or KC_ENOMEM.
 */
int kc__wh_review(kc_webhook_server *srv, const kc__wh_route *route, const char *content_type,
                  const char *body, size_t len, int *status, char **resp, size_t *resp_len,
                  const char **ctype);

/* server.c: register a raw route at path (benches only: bench/bench_webhook.c's floor). The
 * request goes through the whole transport — TLS, libmicrohttpd, bounds, the handler pool,
 * metrics — but its review step is fn alone: no Content-Type check, no decoding, no cache wait.
 * Errors: as kc_webhook_server_add_validating. Not thread-safe: set-up thread. */
int kc__wh_server_add_raw(kc_webhook_server *srv, const char *path, kc__wh_raw_fn fn, void *ud,
                          kc_error *err);

/* server.c: wait until the server is ready (serving and the cache's required informers synced and
 * fresh), at most timeout_ms (0: check once). true when ready. Woken by the cache's sync fd, not
 * polled. */
bool kc__wh_wait_ready(kc_webhook_server *srv, int64_t timeout_ms);

#endif
