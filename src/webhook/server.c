/*
 * webhook/server.c — kc_webhook_server's lifecycle, routes and readiness.
 *
 * Pieces (one file each): certs.c (the certificate pair and its watcher), tls.c (accept loop,
 * OpenSSL handshake, relay into libmicrohttpd), http.c (routing and bounds), pool.c (handler
 * workers), metrics.c; the reviews (review*.c) decode and answer one body.
 *
 * libmicrohttpd runs with MHD_USE_NO_LISTEN_SOCKET (tls.c hands it each decrypted connection) and
 * a thread per connection: the access handler then may block while the pool runs the handler
 * (bounded by request_timeout_ms), which a single polling thread could not do without suspending
 * and resuming connections. Connections are bounded by max_connections (tls.c refuses beyond it),
 * so threads are too: one relay and one MHD thread per connection, plus `workers` handler threads.
 * Keep-alive connections idle for 90 s are closed (controller-runtime's IdleTimeout, SV7).
 *
 * Start order (RD1, RD5): certificate watcher, handler pool, MHD, TLS listener, health listener;
 * the server is *serving* once the listener accepts. It is *ready* when serving and, when a cache
 * was given, kc_cache_ready (every required informer synced and fresh). kc__wh_wait_ready waits on
 * the server's condition variable for serving and on kc_cache_sync_fd (poll, no busy loop) for the
 * sync; only a synced-but-stale cache, which has no event to wait on, is re-checked every 20 ms.
 *
 * Stop: the listener closes first (no new connection), requests in flight get until
 * request_timeout_ms to finish, then MHD stops (closing its side of every relay), the relays end,
 * the workers are joined (a handler that never returns blocks this: C threads cannot be killed).
 */
#include "webhook/transport.h"

#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define IDLE_TIMEOUT_S 90

static const char *const RESERVED[] = {"/readyz", "/healthz", "/livez", "/metrics"};

static void free_strings(kc_webhook_server *s)
{
    free(s->listen);
    free(s->health_listen);
    free(s->cert_file);
    free(s->key_file);
    free(s->client_ca_file);
}

int(kc_webhook_server_new)(const kc_webhook_server_opts *opts, size_t opts_size,
                           kc_webhook_server **ret, kc_error *err)
{
    if (!opts || !ret)
        return kc_error_set(err, KC_EINVAL, "webhook: opts and ret are required");
    KC__OPTS_TAKE(opts, kc_webhook_server_opts, err);
    if (!opts->cert_file || !opts->key_file)
        return kc_error_set(err, KC_EINVAL, "webhook: cert_file and key_file are required");
    if (opts->cert_poll_ms < 0 || opts->request_timeout_ms < 0 || opts->ready_wait_ms < 0 ||
        (opts->not_ready_policy != KC_WEBHOOK_NOT_READY_DENY &&
         opts->not_ready_policy != KC_WEBHOOK_NOT_READY_ALLOW))
        return kc_error_set(err, KC_EINVAL, "webhook: a negative duration or a bad policy");
    kc_webhook_server *s = calloc(1, sizeof(*s));
    if (!s)
        return kc_error_set(err, KC_ENOMEM, "webhook: out of memory");
    s->listen = kc__strdup(opts->listen ? opts->listen : "0.0.0.0:9443");
    s->health_listen = opts->health_listen ? kc__strdup(opts->health_listen) : NULL;
    s->cert_file = kc__strdup(opts->cert_file);
    s->key_file = kc__strdup(opts->key_file);
    s->client_ca_file = opts->client_ca_file ? kc__strdup(opts->client_ca_file) : NULL;
    s->cert_poll_ms = opts->cert_poll_ms ? opts->cert_poll_ms : 10000;
    s->request_timeout_ms = opts->request_timeout_ms ? opts->request_timeout_ms : 10000;
    s->ready_wait_ms = opts->ready_wait_ms ? opts->ready_wait_ms : 5000;
    s->max_request_bytes =
        opts->max_request_bytes ? opts->max_request_bytes : KC_WEBHOOK_DEFAULT_MAX_REQUEST_BYTES;
    s->max_connections = opts->max_connections ? opts->max_connections : 256;
    s->workers = opts->workers ? opts->workers : 4;
    s->not_ready_policy = opts->not_ready_policy;
    s->cache = opts->cache;
    pthread_mutex_init(&s->mu, NULL);
    kc__cond_init_monotonic(&s->cond);
    s->metrics = kc__wh_metrics_new();
    int rc = 0;
    if (!s->listen || !s->cert_file || !s->key_file || !s->metrics ||
        (opts->health_listen && !s->health_listen) || (opts->client_ca_file && !s->client_ca_file))
        rc = kc_error_set(err, KC_ENOMEM, "webhook: out of memory");
    if (rc == 0)
        rc = kc__wh_certs_new(s->cert_file, s->key_file, s->cert_poll_ms, &s->certs, err);
    if (rc) {
        kc_webhook_server_free(s);
        return rc;
    }
    *ret = s;
    return 0;
}

static int add_route(kc_webhook_server *srv, const char *path, kc__wh_kind kind,
                     kc_admission_fn admit, kc_conversion_fn convert, kc__wh_raw_fn raw, void *ud,
                     const kc_webhook_handler_opts *ho, size_t ho_size, kc_error *err)
{
    if (!srv || !path || (!admit && !convert && !raw))
        return kc_error_set(err, KC_EINVAL, "webhook: server, path and handler are required");
    KC__OPTS_TAKE(ho, kc_webhook_handler_opts, err);
    if (path[0] != '/')
        return kc_error_set(err, KC_EINVAL, "webhook: path %s does not start with '/'", path);
    for (size_t i = 0; i < KC__ARRAY_LEN(RESERVED); i++) {
        if (strcmp(path, RESERVED[i]) == 0)
            return kc_error_set(err, KC_EINVAL, "webhook: path %s is reserved", path);
    }
    if (ho->ready_wait_ms < 0 || ho->not_ready_policy < 0 || ho->not_ready_policy > 1)
        return kc_error_set(err, KC_EINVAL, "webhook: %s: bad handler options", path);
    pthread_mutex_lock(&srv->mu);
    bool started = srv->started;
    pthread_mutex_unlock(&srv->mu);
    if (started)
        return kc_error_set(err, KC_EBUSY, "webhook: %s: the server has started", path);
    for (size_t i = 0; i < srv->n_routes; i++) {
        if (strcmp(srv->routes[i].path, path) == 0)
            return kc_error_set(err, KC_EEXISTS, "webhook: path %s is taken", path);
    }
    kc__wh_route *nr = realloc(srv->routes, (srv->n_routes + 1) * sizeof(*nr));
    if (nr)
        srv->routes = nr;
    int *nm = nr ? realloc(srv->route_metric, (srv->n_routes + 1) * sizeof(*nm)) : NULL;
    if (nm)
        srv->route_metric = nm;
    kc__wh_route r = {0};
    r.path = kc__strdup(path);
    r.name = kc__strdup(ho->name ? ho->name : path);
    int idx = r.name && nm ? kc__wh_metrics_add(srv->metrics, r.name) : KC_ENOMEM;
    if (!nr || !nm || !r.path || idx < 0) {
        free(r.path);
        free(r.name);
        return kc_error_set(err, KC_ENOMEM, "webhook: out of memory");
    }
    r.kind = kind;
    r.admit = admit;
    r.convert = convert;
    r.raw = raw;
    r.ud = ud;
    r.cache_wait = kind < KC__WH_CONVERSION && !ho->no_cache_wait && srv->cache;
    r.ready_wait_ms = ho->ready_wait_ms ? ho->ready_wait_ms : srv->ready_wait_ms;
    r.not_ready_policy = ho->not_ready_policy ? ho->not_ready_policy : srv->not_ready_policy;
    srv->routes[srv->n_routes] = r;
    srv->route_metric[srv->n_routes++] = idx;
    return 0;
}

int(kc_webhook_server_add_validating)(kc_webhook_server *srv, const char *path, kc_admission_fn fn,
                                      void *ud, const kc_webhook_handler_opts *ho, size_t ho_size,
                                      kc_error *err)
{
    return add_route(srv, path, KC__WH_VALIDATING, fn, NULL, NULL, ud, ho, ho_size, err);
}

int(kc_webhook_server_add_mutating)(kc_webhook_server *srv, const char *path, kc_admission_fn fn,
                                    void *ud, const kc_webhook_handler_opts *ho, size_t ho_size,
                                    kc_error *err)
{
    return add_route(srv, path, KC__WH_MUTATING, fn, NULL, NULL, ud, ho, ho_size, err);
}

int(kc_webhook_server_add_conversion)(kc_webhook_server *srv, const char *path, kc_conversion_fn fn,
                                      void *ud, const kc_webhook_handler_opts *ho, size_t ho_size,
                                      kc_error *err)
{
    return add_route(srv, path, KC__WH_CONVERSION, NULL, fn, NULL, ud, ho, ho_size, err);
}

int kc__wh_server_add_raw(kc_webhook_server *srv, const char *path, kc__wh_raw_fn fn, void *ud,
                          kc_error *err)
{
    kc_webhook_handler_opts ho = {.no_cache_wait = true};
    return add_route(srv, path, KC__WH_RAW, NULL, NULL, fn, ud, &ho, sizeof ho, err);
}

/* Resolve "HOST:PORT" ("[v6]:PORT" too) and bind a listening socket; *ret_url gets the URL. */
static int bind_listen(const char *addr, const char *scheme, int *ret_fd, int *ret_port, char *url,
                       size_t url_cap, kc_error *err)
{
    const char *colon = strrchr(addr, ':');
    char host[256];
    if (!colon || colon == addr || (size_t)(colon - addr) >= sizeof host || !colon[1])
        return kc_error_set(err, KC_EINVAL, "webhook: bad listen address %s", addr);
    size_t hl = (size_t)(colon - addr);
    const char *h = addr;
    if (h[0] == '[' && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    memcpy(host, h, hl);
    host[hl] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    if (getaddrinfo(host, colon + 1, &hints, &ai) != 0 || !ai)
        return kc_error_set(err, KC_EINVAL, "webhook: bad listen address %s", addr);
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return kc_error_set(err, KC_EIO, "webhook: cannot listen on %s: %s", addr, strerror(e));
    }
    bool v6 = ai->ai_family == AF_INET6;
    freeaddrinfo(ai);
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    *ret_port =
        ntohs(v6 ? ((struct sockaddr_in6 *)&sa)->sin6_port : ((struct sockaddr_in *)&sa)->sin_port);
    bool any = !strcmp(host, "0.0.0.0") || !strcmp(host, "") || !strcmp(host, "::");
    snprintf(url, url_cap, "%s://%s%s%s:%d", scheme, v6 && !any ? "[" : "",
             any ? "127.0.0.1" : host, v6 && !any ? "]" : "", *ret_port);
    *ret_fd = fd;
    return 0;
}

static int start_health(kc_webhook_server *srv, kc_error *err)
{
    int fd, port;
    int rc = bind_listen(srv->health_listen, "http", &fd, &port, srv->health_url,
                         sizeof srv->health_url, err);
    if (rc)
        return rc;
    srv->health_mhd = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL, kc__wh_http_access,
        (void *)((uintptr_t)srv | 1), MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)64, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_NOTIFY_COMPLETED,
        kc__wh_http_completed, (void *)((uintptr_t)srv | 1), MHD_OPTION_END);
    if (!srv->health_mhd) {
        close(fd);
        srv->health_url[0] = '\0';
        return kc_error_set(err, KC_EIO, "webhook: cannot serve %s", srv->health_listen);
    }
    return 0;
}

static void stop_all(kc_webhook_server *srv);

int kc_webhook_server_start(kc_webhook_server *srv, kc_error *err)
{
    if (!srv)
        return kc_error_set(err, KC_EINVAL, "webhook: server is NULL");
    pthread_mutex_lock(&srv->mu);
    bool busy = srv->started;
    srv->started = true;
    pthread_mutex_unlock(&srv->mu);
    if (busy)
        return kc_error_set(err, KC_EBUSY, "webhook: already started");
    int fd = -1,
        rc = bind_listen(srv->listen, "https", &fd, &srv->port, srv->url, sizeof srv->url, err);
    if (rc == 0 &&
        (kc__wh_certs_start(srv->certs) < 0 || kc__wh_pool_new(srv, srv->workers, &srv->pool) < 0))
        rc = kc_error_set(err, KC_ENOMEM, "webhook: cannot start threads");
    if (rc == 0) {
        srv->mhd = MHD_start_daemon(
            MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC,
            0, NULL, NULL, kc__wh_http_access, srv, MHD_OPTION_CONNECTION_LIMIT,
            srv->max_connections, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S,
            MHD_OPTION_NOTIFY_COMPLETED, kc__wh_http_completed, srv, MHD_OPTION_END);
        if (!srv->mhd)
            rc = kc_error_set(err, KC_EIO, "webhook: cannot start libmicrohttpd");
    }
    if (rc == 0) {
        kc__wh_tls_opts to = {fd,
                              srv->mhd,
                              srv->certs,
                              srv->client_ca_file,
                              srv->request_timeout_ms,
                              srv->max_connections};
        fd = -1; /* the front end owns it now, on failure too */
        rc = kc__wh_tls_start(&to, &srv->tls, err);
    }
    if (rc == 0 && srv->health_listen)
        rc = start_health(srv, err);
    if (rc) {
        if (fd >= 0)
            close(fd);
        stop_all(srv);
        srv->url[0] = '\0';
        return rc;
    }
    pthread_mutex_lock(&srv->mu);
    srv->serving = true;
    pthread_cond_broadcast(&srv->cond);
    pthread_mutex_unlock(&srv->mu);
    return 0;
}

int kc_webhook_server_port(const kc_webhook_server *srv)
{
    return srv && srv->url[0] ? srv->port : KC_EINVAL;
}

const char *kc_webhook_server_url(const kc_webhook_server *srv)
{
    return srv && srv->url[0] ? srv->url : NULL;
}

const char *kc_webhook_server_health_url(const kc_webhook_server *srv)
{
    return srv && srv->health_url[0] ? srv->health_url : NULL;
}

bool kc_webhook_server_ready(kc_webhook_server *srv)
{
    if (!srv)
        return false;
    pthread_mutex_lock(&srv->mu);
    bool serving = srv->serving;
    pthread_mutex_unlock(&srv->mu);
    return serving && (!srv->cache || kc_cache_ready(srv->cache));
}

bool kc__wh_wait_ready(kc_webhook_server *srv, int64_t timeout_ms)
{
    if (!srv)
        return true; /* unit tests of the reviews: no server, the cache counts as ready */
    uint64_t deadline = kc__deadline_after_ms(timeout_ms > 0 ? timeout_ms : 0);
    for (;;) {
        if (kc_webhook_server_ready(srv))
            return true;
        uint64_t left = kc__deadline_left_ns(deadline);
        if (left == 0)
            return false;
        pthread_mutex_lock(&srv->mu);
        bool serving = srv->serving, stopped = srv->stopped;
        if (!serving && !stopped)
            kc__cond_wait_until(&srv->cond, &srv->mu, deadline);
        pthread_mutex_unlock(&srv->mu);
        if (stopped)
            return false;
        if (!serving)
            continue;
        if (!kc_cache_has_synced(srv->cache)) {
            struct pollfd p = {kc_cache_sync_fd(srv->cache), POLLIN, 0};
            poll(&p, 1, (int)((left + KC__NS_PER_MS - 1) / KC__NS_PER_MS));
        } else {
            /* synced but stale: freshness has no event to wait on */
            uint64_t step = 20 * KC__NS_PER_MS;
            kc__sleep_ns(left < step ? left : step);
        }
    }
}

int kc_webhook_server_reload_certs(kc_webhook_server *srv, kc_error *err)
{
    if (!srv)
        return kc_error_set(err, KC_EINVAL, "webhook: server is NULL");
    return kc__wh_certs_reload(srv->certs, err);
}

char *kc_webhook_server_metrics_text(void *srv_)
{
    kc_webhook_server *srv = srv_;
    if (!srv)
        return NULL;
    uint64_t reads, errors;
    kc__wh_certs_counts(srv->certs, &reads, &errors);
    kc__buf b = KC__BUF_INIT(16 * 1024 * 1024);
    kc__wh_metrics_render(srv->metrics, reads, errors, &b);
    return kc__buf_steal(&b, NULL);
}

static void stop_all(kc_webhook_server *srv)
{
    kc__wh_tls_stop_accepting(srv->tls);
    pthread_mutex_lock(&srv->mu);
    srv->serving = false;
    srv->stopped = true;
    pthread_cond_broadcast(&srv->cond);
    uint64_t deadline = kc__deadline_after_ms(srv->request_timeout_ms);
    while (srv->active > 0 && kc__cond_wait_until(&srv->cond, &srv->mu, deadline) == 0)
        ;
    pthread_mutex_unlock(&srv->mu);
    if (srv->mhd)
        MHD_stop_daemon(srv->mhd);
    srv->mhd = NULL;
    kc__wh_tls_free(srv->tls);
    srv->tls = NULL;
    kc__wh_pool_free(srv->pool);
    srv->pool = NULL;
    if (srv->health_mhd)
        MHD_stop_daemon(srv->health_mhd);
    srv->health_mhd = NULL;
}

int kc_webhook_server_stop(kc_webhook_server *srv)
{
    if (!srv)
        return KC_EINVAL;
    pthread_mutex_lock(&srv->mu);
    bool run = srv->started && !srv->stopped;
    srv->stopped = true; /* idempotent: the first caller stops */
    pthread_mutex_unlock(&srv->mu);
    if (run)
        stop_all(srv);
    return 0;
}

void kc_webhook_server_free(kc_webhook_server *srv)
{
    if (!srv)
        return;
    kc_webhook_server_stop(srv);
    kc__wh_certs_free(srv->certs);
    for (size_t i = 0; i < srv->n_routes; i++) {
        free(srv->routes[i].path);
        free(srv->routes[i].name);
    }
    free(srv->routes);
    free(srv->route_metric);
    kc__wh_metrics_free(srv->metrics);
    free_strings(srv);
    pthread_cond_destroy(&srv->cond);
    pthread_mutex_destroy(&srv->mu);
    free(srv);
}
