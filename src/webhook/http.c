/*
 * webhook/http.c — routing and bounds: libmicrohttpd's access handler for the webhook server.
 *
 * Two daemons share this handler: the TLS listener's (tls.c relays plaintext into it; cls is the
 * server) and the optional plain-HTTP health listener's (cls is the server's address with its low
 * bit set — a struct's address is even — meaning probes and metrics only, no routes).
 *
 *   POST <registered path>   the body is collected into a buffer that grows with what arrives,
 *                            capped at max_request_bytes: a Content-Length above the cap is
 *                            answered 413 before any body byte is read (MHD then closes the
 *                            connection); a chunked body past the cap is discarded as it arrives
 *                            (memory stays bounded) and answered 413. A body still arriving after
 *                            request_timeout_ms drops the connection. The complete body goes to the
 *                            handler pool (pool.c: at most `workers` handlers at once) and the
 *                            answer is kc__wh_review's status, body and content type; a handler
 *                            past the deadline gets 504 (it finishes into the void).
 *   other method on a path   405 (with Allow: POST)
 *   GET /healthz, /livez     200 "ok" while serving — never depends on the cache (RD5)
 *   GET /readyz              200 only when serving and every required informer is ready (RD4);
 *                            ?verbose lists the checks: "[+]serving ok", then one per informer
 *   GET /metrics             Prometheus text: the webhook series, then the cache's
 *   anything else            404
 * Every answer to a registered path is counted in the route's metrics (metrics.c).
 */
#include "informer/internal.h"
#include "kcache/health.h"
#include "webhook/transport.h"

#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

typedef struct req {
    size_t route;
    kc__buf body;
    bool too_large, answered;
    uint64_t start_ns, deadline_ns;
} req;

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *ctype,
                             char *body, size_t len)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(body ? len : 0, body ? body : (char *)"",
                                        body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", ctype);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(resp, "Allow", "POST");
    enum MHD_Result r = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return r;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned status, const char *text)
{
    return reply(conn, status, "text/plain; charset=utf-8", kc__strdup(text), strlen(text));
}

unsigned kc__wh_readyz(kc_webhook_server *srv, bool verbose, kc__buf *b)
{
    kc__buf lines = KC__BUF_INIT(1024 * 1024);
    pthread_mutex_lock(&srv->mu);
    bool serving = srv->serving;
    pthread_mutex_unlock(&srv->mu);
    kc__buf_append_str(&lines, serving ? "[+]serving ok\n" : "[-]serving failed: not serving\n");
    bool ok = serving;
    if (srv->cache && !kc__health_readyz_checks(srv->cache, &lines))
        ok = false;
    if (ok && !verbose) {
        kc__buf_append_str(b, "ok");
    } else {
        kc__buf_append(b, lines.data, lines.len);
        kc__buf_append_str(b, ok ? "readyz check passed\n" : "readyz check failed\n");
    }
    kc__buf_free(&lines);
    return ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE;
}

static enum MHD_Result find_verbose(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind;
    (void)value;
    if (strcmp(key, "verbose") == 0) {
        *(bool *)cls = true;
        return MHD_NO;
    }
    return MHD_YES;
}

/* The probe and metrics endpoints, on both listeners. */
static enum MHD_Result endpoint(kc_webhook_server *srv, struct MHD_Connection *conn,
                                const char *url, const char *method)
{
    bool known = !strcmp(url, "/readyz") || !strcmp(url, "/healthz") || !strcmp(url, "/livez") ||
                 !strcmp(url, "/metrics");
    if (!known)
        return reply_text(conn, MHD_HTTP_NOT_FOUND, "404 page not found\n");
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
    bool verbose = false;
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, find_verbose, &verbose);
    kc__buf b = KC__BUF_INIT(16 * 1024 * 1024);
    unsigned status = MHD_HTTP_OK;
    const char *ctype = "text/plain; charset=utf-8";
    if (!strcmp(url, "/readyz")) {
        status = kc__wh_readyz(srv, verbose, &b);
    } else if (!strcmp(url, "/metrics")) {
        char *m = kc_webhook_server_metrics_text(srv);
        char *c = srv->cache ? kc_health_metrics_text(srv->cache) : NULL;
        if (!m || (srv->cache && !c))
            status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        kc__buf_append_str(&b, m ? m : "");
        kc__buf_append_str(&b, c ? c : "");
        free(m);
        free(c);
        ctype = "text/plain; version=0.0.4; charset=utf-8";
    } else {
        kc__buf_append_str(&b, verbose ? "[+]ping ok\nhealthz check passed\n" : "ok");
    }
    size_t len = 0;
    char *body = kc__buf_steal(&b, &len);
    return reply(conn, status, ctype, body, len);
}

static enum MHD_Result answer(kc_webhook_server *srv, struct MHD_Connection *conn, req *r,
                              unsigned status, const char *ctype, char *body, size_t len)
{
    r->answered = true;
    double secs = (double)(kc__now_ns() - r->start_ns) / 1e9;
    kc__wh_metrics_end(srv->metrics, srv->route_metric[r->route], status, secs);
    return reply(conn, status, ctype, body, len);
}

/* The complete body of a POST to a route: run the review on the pool. */
static enum MHD_Result run_review(kc_webhook_server *srv, struct MHD_Connection *conn, req *r)
{
    if (r->too_large)
        return answer(srv, conn, r, 413, "text/plain; charset=utf-8",
                      kc__strdup("request body too large\n"), 23);
    const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    char *ct_copy = ct ? kc__strdup(ct) : NULL;
    size_t len = 0;
    char *body = kc__buf_steal(&r->body, &len);
    if (!body || (ct && !ct_copy)) {
        free(body);
        free(ct_copy);
        return answer(srv, conn, r, 500, "text/plain; charset=utf-8", kc__strdup("out of memory\n"),
                      14);
    }
    int status = 500;
    char *resp = NULL;
    size_t resp_len = 0;
    const char *ctype = "text/plain; charset=utf-8";
    int rc = kc__wh_pool_run(srv->pool, &srv->routes[r->route], ct_copy, body, len, r->deadline_ns,
                             &status, &resp, &resp_len, &ctype);
    if (rc == KC_ETIMEOUT) {
        free(resp);
        char msg[128];
        int n = snprintf(msg, sizeof msg, "webhook handler timed out after %lld ms\n",
                         (long long)srv->request_timeout_ms);
        return answer(srv, conn, r, MHD_HTTP_GATEWAY_TIMEOUT, "text/plain; charset=utf-8",
                      kc__strdup(msg), (size_t)n);
    }
    if (rc < 0 || !resp) {
        free(resp);
        return answer(srv, conn, r, 500, "text/plain; charset=utf-8",
                      kc__strdup("internal error\n"), 15);
    }
    return answer(srv, conn, r, (unsigned)status, ctype, resp, resp_len);
}

/* First call for a route: method and declared size, then the request's context. */
static enum MHD_Result begin_route(kc_webhook_server *srv, struct MHD_Connection *conn,
                                   size_t route, const char *method, void **con_cls)
{
    req *r = calloc(1, sizeof(*r));
    if (!r)
        return MHD_NO;
    r->route = route;
    r->start_ns = kc__now_ns();
    r->deadline_ns = r->start_ns + (uint64_t)srv->request_timeout_ms * KC__NS_PER_MS;
    kc__buf_init(&r->body, srv->max_request_bytes);
    kc__wh_metrics_begin(srv->metrics, srv->route_metric[route]);
    pthread_mutex_lock(&srv->mu);
    srv->active++;
    pthread_mutex_unlock(&srv->mu);
    *con_cls = r;
    if (strcmp(method, "POST") != 0)
        return answer(srv, conn, r, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
                      kc__strdup("method not allowed: POST only\n"), 30);
    const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    if (cl) {
        char *end;
        unsigned long long n = strtoull(cl, &end, 10);
        if (*end == '\0' && n > srv->max_request_bytes)
            return answer(srv, conn, r, 413, "text/plain; charset=utf-8",
                          kc__strdup("request body too large\n"), 23);
    }
    return MHD_YES;
}

enum MHD_Result kc__wh_http_access(void *cls, struct MHD_Connection *conn, const char *url,
                                   const char *method, const char *version, const char *upload,
                                   size_t *upload_size, void **con_cls)
{
    (void)version;
    bool health = ((uintptr_t)cls & 1) != 0;
    kc_webhook_server *srv = (kc_webhook_server *)((uintptr_t)cls & ~(uintptr_t)1);
    req *r = *con_cls;
    if (!r) {
        for (size_t i = 0; !health && i < srv->n_routes; i++) {
            if (strcmp(url, srv->routes[i].path) == 0)
                return begin_route(srv, conn, i, method, con_cls);
        }
        if (*upload_size)
            *upload_size = 0;
        return endpoint(srv, conn, url, method);
    }
    if (r->answered) { /* answered early (405, 413): drop what still arrives */
        *upload_size = 0;
        return MHD_YES;
    }
    if (*upload_size) {
        if (!r->too_large && kc__buf_append(&r->body, upload, *upload_size) < 0) {
            r->too_large = true; /* past the cap (or out of memory): discard from now on */
            kc__buf_free(&r->body);
        }
        *upload_size = 0;
        return kc__now_ns() > r->deadline_ns ? MHD_NO : MHD_YES;
    }
    return run_review(srv, conn, r);
}

void kc__wh_http_completed(void *cls, struct MHD_Connection *conn, void **con_cls, int toe)
{
    (void)conn;
    (void)toe;
    kc_webhook_server *srv = (kc_webhook_server *)((uintptr_t)cls & ~(uintptr_t)1);
    req *r = *con_cls;
    if (!r)
        return;
    *con_cls = NULL;
    if (!r->answered)
        kc__wh_metrics_end(srv->metrics, srv->route_metric[r->route], 0, 0);
    kc__buf_free(&r->body);
    free(r);
    pthread_mutex_lock(&srv->mu);
    srv->active--;
    pthread_cond_broadcast(&srv->cond);
    pthread_mutex_unlock(&srv->mu);
}
