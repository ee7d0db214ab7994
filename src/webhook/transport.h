/*
 * webhook/transport.h — the transport's own pieces, shared by server.c, certs.c, tls.c, pool.c
 * and metrics.c (the reviews never include it): the certificate watcher, the TLS front end, the
 * handler pool and the per-route metrics.
 */
#ifndef KC_WEBHOOK_TRANSPORT_H
#define KC_WEBHOOK_TRANSPORT_H

#include "core/internal.h"
#include "webhook/internal.h"

#include <microhttpd.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdatomic.h>

/* ---- certs.c: the certificate pair and its watcher (TLS1–TLS3, TLS6) ------------------------ */

/* One loaded pair: leaf, the rest of the chain, the key. Reference-counted, immutable. */
typedef struct kc__wh_pair {
    atomic_int refs;
    X509 *leaf;
    STACK_OF(X509) * chain;
    EVP_PKEY *key;
} kc__wh_pair;

typedef struct kc__wh_certs kc__wh_certs;

/* Load both files now (KC_ECONFIG naming the file and the OpenSSL reason; key must match). */
int kc__wh_certs_new(const char *cert_file, const char *key_file, int64_t poll_ms,
                     kc__wh_certs **ret, kc_error *err);
/* Start the poller thread (KC_ENOMEM when it cannot start). */
int kc__wh_certs_start(kc__wh_certs *c);
/* Re-read both files; the pair changes only when both load and match (else KC_ECONFIG). */
int kc__wh_certs_reload(kc__wh_certs *c, kc_error *err);
/* The current pair, a new reference: release with kc__wh_pair_unref. */
kc__wh_pair *kc__wh_certs_get(kc__wh_certs *c);
void kc__wh_pair_unref(kc__wh_pair *p);
/* certwatcher_read_certificate_total / _errors_total. */
void kc__wh_certs_counts(kc__wh_certs *c, uint64_t *reads, uint64_t *errors);
/* Stop the poller and free. Accepts NULL. */
void kc__wh_certs_free(kc__wh_certs *c);

/* ---- tls.c: the TLS front end (accept loop, handshake, relay to libmicrohttpd) --------------- */

typedef struct kc__wh_tls kc__wh_tls;
struct MHD_Daemon;

typedef struct kc__wh_tls_opts {
    int listen_fd;          /* bound and listening; owned by the front end from now on */
    struct MHD_Daemon *mhd; /* MHD_USE_NO_LISTEN_SOCKET daemon the plaintext goes to */
    kc__wh_certs *certs;    /* borrowed */
    const char *client_ca;  /* NULL = no client certificates asked */
    int64_t handshake_ms;   /* bound of one TLS handshake */
    unsigned max_connections;
} kc__wh_tls_opts;

int kc__wh_tls_start(const kc__wh_tls_opts *o, kc__wh_tls **ret, kc_error *err);
/* Stop accepting (close the listener); connections keep relaying. */
void kc__wh_tls_stop_accepting(kc__wh_tls *t);
/* After the MHD daemon stopped: wait for every connection's relay to end (bounded), then free. */
void kc__wh_tls_free(kc__wh_tls *t);
/* Live TLS connections (tests). */
unsigned kc__wh_tls_connections(kc__wh_tls *t);

/* ---- pool.c: the handler workers (bounded concurrency, bounded wait) ------------------------ */

typedef struct kc__wh_pool kc__wh_pool;

int kc__wh_pool_new(kc_webhook_server *srv, unsigned workers, kc__wh_pool **ret);
/* Run kc__wh_review for one request on a worker; wait until deadline_ns. content_type (may be
 * NULL) and body are malloc'd and consumed. On time: the review's return code and outputs. Past
 * the deadline: KC_ETIMEOUT (the handler finishes into the void and its answer is freed). */
int kc__wh_pool_run(kc__wh_pool *p, const kc__wh_route *route, char *content_type, char *body,
                    size_t len, uint64_t deadline_ns, int *status, char **resp, size_t *resp_len,
                    const char **ctype);
/* Stop the workers (after the abandoned handlers return) and free. Accepts NULL. */
void kc__wh_pool_free(kc__wh_pool *p);

/* ---- metrics.c: controller-runtime's webhook metrics (MT1–MT4) ----------------------------- */

typedef struct kc__wh_metrics kc__wh_metrics;

kc__wh_metrics *kc__wh_metrics_new(void);
/* Register a route's series (code 200 and 500 at 0, MT2); returns its index or KC_ENOMEM. */
int kc__wh_metrics_add(kc__wh_metrics *m, const char *webhook);
void kc__wh_metrics_begin(kc__wh_metrics *m, int idx);
/* code 0: the request ended without an answer (only in_flight changes). */
void kc__wh_metrics_end(kc__wh_metrics *m, int idx, unsigned code, double seconds);
/* Append the Prometheus text (webhook series, then certwatcher counters). */
void kc__wh_metrics_render(kc__wh_metrics *m, uint64_t cert_reads, uint64_t cert_errors,
                           kc__buf *b);
void kc__wh_metrics_free(kc__wh_metrics *m);

/* ---- server.c / http.c: the server ---------------------------------------------------------- */

struct kc_webhook_server {
    /* options, resolved and copied */
    char *listen, *health_listen, *cert_file, *key_file, *client_ca_file;
    int64_t cert_poll_ms, request_timeout_ms, ready_wait_ms;
    size_t max_request_bytes;
    unsigned max_connections, workers;
    int not_ready_policy;
    kc_cache *cache;
    /* routes: fixed after start */
    kc__wh_route *routes;
    int *route_metric; /* index of each route's series */
    size_t n_routes;
    kc__wh_metrics *metrics;
    kc__wh_certs *certs;
    /* running */
    struct MHD_Daemon *mhd, *health_mhd;
    kc__wh_tls *tls;
    kc__wh_pool *pool;
    int port;
    char url[80], health_url[80];
    pthread_mutex_t mu;  /* guards the state below */
    pthread_cond_t cond; /* serving changed, or a request ended */
    bool started, serving, stopped;
    unsigned active; /* admission/conversion requests between their first byte and completion */
};

/* http.c: libmicrohttpd's access handler and completion callback; cls is the server for the TLS
 * listener's daemon, and the server's address | 1 for the plain health listener's (no routes). */
enum MHD_Result kc__wh_http_access(void *cls, struct MHD_Connection *conn, const char *url,
                                   const char *method, const char *version, const char *upload,
                                   size_t *upload_size, void **con_cls);
void kc__wh_http_completed(void *cls, struct MHD_Connection *conn, void **con_cls, int toe);
/* The /readyz answer: 200 or 503, text in b. */
unsigned kc__wh_readyz(kc_webhook_server *srv, bool verbose, kc__buf *b);

#endif
