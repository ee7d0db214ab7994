/*
 * http.c — libmicrohttpd glue of the embedded API server: request body accumulation with the body
 * limit (413 once the whole body has been read and discarded, so the client reads the answer;
 * at once when the client waits for "100 Continue"), authentication and authorization through the
 * hook of authorize.c (401, 403, the review resources), non-resource endpoints
 * (/version, /healthz, /readyz, /livez, /openapi/v2 and /openapi/v3 (openapi.c), /admin/...),
 * routing to discovery or to the verbs of the api room (405 for wrong methods, 404 for unknown
 * resources), injected faults. Replies are made with api/reply.c; every error body is a Status.
 *
 * Threads: MHD runs a small pool of epoll threads shared by every connection (server.c), so a
 * handler must not block it: watch streams suspend their connection while idle (api/watch.c), and
 * requests that may take long — collection LISTs, DELETECOLLECTION, namespace deletion, any Table
 * request — are offloaded: the connection is suspended (MHD_suspend_connection), a detached
 * helper thread runs the handler and resumes it, and MHD's next call queues the reply made there.
 * Single-object reads and writes and watches run inline (short, under srv->mu only briefly).
 * The listDelay fault is applied on that helper thread: a collection LIST waits there, in slices
 * of at most 10 ms that end early once the server is stopping, before it runs.
 * kc_server_stop waits for offloaded requests (srv->offloaded, under its own srv->off_mu) before
 * stopping the daemon, since MHD must not be stopped with suspended connections. A request takes
 * srv->mu only inside the verbs (briefly to resolve the resource here).
 */
#include "server/http/http.h"
#include "server/admission/admission.h"
#include "server/discovery/discovery.h"
#include "server/schema/version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct conn_ctx {
    kc__buf body;
    bool too_large;
    bool offloaded;    /* the request runs (ran) on a helper thread; req holds its reply */
    uint64_t delay_ns; /* listDelay fault: the helper thread waits this long before running it */
    kc__req req;
} conn_ctx;

/* ---- non-resource endpoints ----------------------------------------------------------------- */

static int reply_version(kc__req *req)
{
    json_t *v = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "major", KC__KUBE_MAJOR, "minor",
                          KC__KUBE_MINOR, "gitVersion",
                          KC__KUBE_VERSION "-kcache." KC_VERSION_STRING, "gitCommit", "kcache",
                          "gitTreeState", "clean", "buildDate", "2026-01-01T00:00:00Z", "goVersion",
                          "c11", "compiler", "gcc", "platform", "linux/amd64");
    /* upstream writes /version with json.MarshalIndent: two-space indent, no final newline */
    char *s = v ? json_dumps(v, JSON_INDENT(2)) : NULL;
    json_decref(v);
    return s ? kc__reply_raw(req, 200, s, strlen(s)) : KC_ENOMEM;
}

static kc_server_verb verb_of(const kc__req *req)
{
    const kc__route *rt = &req->route;
    switch (req->method) {
    case KC__M_GET:
        if (rt->has_name)
            return rt->watch_path ? KC_SERVER_VERB_WATCH : KC_SERVER_VERB_GET;
        return req->q.watch || rt->watch_path ? KC_SERVER_VERB_WATCH : KC_SERVER_VERB_LIST;
    case KC__M_POST:
        return KC_SERVER_VERB_CREATE;
    case KC__M_PUT:
        return KC_SERVER_VERB_UPDATE;
    case KC__M_PATCH:
        return KC_SERVER_VERB_PATCH;
    default:
        return rt->has_name ? KC_SERVER_VERB_DELETE : KC_SERVER_VERB_DELETECOLLECTION;
    }
}

static int method_not_allowed(kc__req *req)
{
    return kc__fail_generic(&req->err, 405);
}

static int discovery(kc__req *req)
{
    kc_server *srv = req->srv;
    const kc__route *rt = &req->route;
    if (req->method != KC__M_GET)
        return method_not_allowed(req);
    size_t len = 0;
    char *s = NULL;
    pthread_mutex_lock(&srv->mu);
    switch (rt->kind) {
    case KC__R_API:
        s = kc__discovery_api(srv, &len);
        break;
    case KC__R_APIS:
        s = kc__discovery_apis(srv, &len);
        break;
    case KC__R_GROUP:
        s = kc__discovery_group(srv, rt->group, &len);
        break;
    default:
        s = kc__discovery_resources(srv, rt->group, rt->version, &len);
        break;
    }
    pthread_mutex_unlock(&srv->mu);
    if (!s)
        return kc__fail_generic(&req->err, 404);
    return kc__reply(req, 200, s, len);
}

/* Does the Accept header ask for apidiscovery.k8s.io/v2 APIGroupDiscoveryList (client-go and
 * kubectl list it first)? v2beta1 alone gets legacy discovery. */
static bool wants_aggregated(const char *accept)
{
    for (const char *p = accept; p && *p;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        char t[256];
        snprintf(t, sizeof(t), "%.*s", (int)(l < sizeof(t) ? l : sizeof(t) - 1), p);
        if (strstr(t, "g=apidiscovery.k8s.io") && strstr(t, "as=APIGroupDiscoveryList") &&
            (strstr(t, "v=v2;") || (strlen(t) >= 4 && !strcmp(t + strlen(t) - 4, "v=v2"))))
            return true;
        p = c ? c + 1 : NULL;
    }
    return false;
}

static int aggregated_discovery(kc__req *req)
{
    if (req->method != KC__M_GET)
        return method_not_allowed(req);
    size_t len = 0;
    pthread_mutex_lock(&req->srv->mu);
    char *s = kc__discovery_aggregated(req->srv, req->route.kind == KC__R_API, &len);
    pthread_mutex_unlock(&req->srv->mu);
    if (!s)
        return kc_error_set(&req->err, KC_ENOMEM, "out of memory");
    int rc = kc__reply(req, 200, s, len);
    if (rc == 0) {
        MHD_del_response_header(req->resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
        MHD_add_response_header(req->resp, MHD_HTTP_HEADER_CONTENT_TYPE, KC__AGGREGATED_CTYPE);
    }
    return rc;
}

static int resource(kc__req *req)
{
    kc_server *srv = req->srv;
    kc__route *rt = &req->route;
    pthread_mutex_lock(&srv->mu);
    kc__rsrc *r = kc__registry_find(srv, rt->group, rt->version, rt->plural);
    pthread_mutex_unlock(&srv->mu);
    if (!r || (rt->has_ns && !r->namespaced))
        return kc__fail_generic(&req->err, 404);
    if (rt->has_sub && kc__pod_connect_sub(r, rt->sub))
        return kc__pod_connect(req, r);
    bool scale = rt->has_sub && !strcmp(rt->sub, "scale") && kc__rsrc_has_scale(r);
    bool binding = rt->has_sub && kc__pod_binding_sub(r, rt->sub);
    if (rt->has_sub && !scale && !binding && (strcmp(rt->sub, "status") != 0 || !r->has_status))
        return kc__fail_generic(&req->err, 404);
    int rc = kc__query_parse(req->conn, &req->q, &req->err);
    if (rc)
        return rc;
    if (binding)
        return kc__pod_binding(req, r);
    /* the API server's deprecation warning on every request of a deprecated API (1.33+) */
    if (!r->is_crd && !r->group[0] && !strcmp(r->plural, "endpoints"))
        snprintf(req->warnings[req->n_warnings++], KC__WARNING_MAX, "%s",
                 "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice");
    if (req->fmt == KC__FMT_TABLE && kc__table_obj_parse(req->q.include_object, &req->table_obj))
        return kc__fail(&req->err, 400, "BadRequest", "unrecognized includeObject value: \"%s\"",
                        req->q.include_object);
    if (rt->watch_path) {
        req->q.watch = true;
        req->q.watch_set = true;
    }
    switch (req->method) {
    case KC__M_GET:
    case KC__M_DELETE:
        break;
    case KC__M_POST:
        if (rt->has_name)
            return method_not_allowed(req);
        break;
    case KC__M_PUT:
    case KC__M_PATCH:
        if (!rt->has_name)
            return method_not_allowed(req);
        break;
    default:
        return method_not_allowed(req);
    }
    if (rt->has_sub && req->method != KC__M_GET && req->method != KC__M_PUT &&
        req->method != KC__M_PATCH)
        return method_not_allowed(req);
    kc_server_verb verb = verb_of(req);
    unsigned retry_after = 0;
    int inject = kc__faults_inject(srv->faults, verb, &retry_after);
    if (inject) {
        const char *reason = inject == 429   ? "TooManyRequests"
                             : inject == 503 ? "ServiceUnavailable"
                                             : "InternalError";
        kc__fail(&req->err, inject, reason, "injected fault: %d", inject);
        req->err.retry_after_s = retry_after ? (int)retry_after : -1;
        return req->err.code;
    }
    if (scale)
        return req->method == KC__M_GET ? kc__scale_get(req, r)
                                        : kc__scale_write(req, r, req->method == KC__M_PATCH);
    switch (verb) {
    case KC_SERVER_VERB_GET:
        return kc__verb_get(req, r);
    case KC_SERVER_VERB_LIST:
        return kc__verb_list(req, r);
    case KC_SERVER_VERB_WATCH:
        return kc__verb_watch(req, r);
    case KC_SERVER_VERB_CREATE:
        return kc__verb_create(req, r);
    case KC_SERVER_VERB_UPDATE:
        return kc__verb_update(req, r);
    case KC_SERVER_VERB_PATCH:
        return kc__verb_patch(req, r);
    case KC_SERVER_VERB_DELETE:
        return kc__verb_delete(req, r);
    default:
        return kc__verb_deletecollection(req, r);
    }
}

static enum MHD_Result find_verbose(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind;
    (void)value;
    if (strcmp(key, "verbose") == 0)
        *(bool *)cls = true;
    return MHD_YES;
}

/* /healthz, /readyz, /livez (and /<x>/<check>): "ok"; with ?verbose the list of checks and
 * "<x> check passed", as the API server prints it (`kubectl get --raw '/readyz?verbose'`). */
static int health(kc__req *req, const char *p)
{
    bool verbose = false;
    MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, find_verbose, &verbose);
    const char *slash = strchr(p + 1, '/');
    if (!verbose || (slash && slash[1]))
        return kc__reply_text(req, 200, "ok");
    char what[16], text[160];
    snprintf(what, sizeof(what), "%.*s", (int)(slash ? slash - p - 1 : (long)strlen(p + 1)), p + 1);
    snprintf(text, sizeof(text), "[+]ping ok\n[+]log ok\n%s%s check passed\n",
             strcmp(what, "readyz") == 0 ? "[+]shutdown ok\n" : "", what);
    return kc__reply_text(req, 200, text);
}

static int dispatch(kc__req *req)
{
    const char *p = req->path;
    if (strcmp(p, "/version") == 0 || strcmp(p, "/version/") == 0)
        return reply_version(req);
    if (strcmp(p, "/healthz") == 0 || strcmp(p, "/readyz") == 0 || strcmp(p, "/livez") == 0 ||
        kc__starts_with(p, "/healthz/") || kc__starts_with(p, "/readyz/") ||
        kc__starts_with(p, "/livez/"))
        return health(req, p);
    bool answered = false; /* authentication and authorization (authorize.c): 401, 403, reviews */
    int rc = kc__http_authorize(req, &answered);
    if (rc || answered)
        return rc;
    if (kc__starts_with(p, "/admin/"))
        return kc__admin_handle(req);
    if (!strcmp(p, "/openapi/v2") && req->method == KC__M_GET) {
        size_t len = 0;
        char *pb = kc__openapi_v2_pb(req->accept, &len);
        if (pb) {
            rc = kc__reply_raw(req, 200, pb, len);
            if (rc == 0) {
                MHD_del_response_header(req->resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                        "application/json");
                MHD_add_response_header(req->resp, MHD_HTTP_HEADER_CONTENT_TYPE, KC__OPENAPI_V2_PB);
            }
            return rc;
        }
    }
    if ((kc__starts_with(p, "/openapi/v3") || !strcmp(p, "/openapi/v2")) &&
        req->method == KC__M_GET) {
        size_t len = 0;
        pthread_mutex_lock(&req->srv->mu);
        char *doc = kc__openapi_doc(req->srv, p, req->accept, &len);
        pthread_mutex_unlock(&req->srv->mu);
        if (doc)
            return kc__reply(req, 200, doc, len);
    }
    if (kc__route_parse(p, &req->route) != 0)
        return kc__fail_generic(&req->err, 404);
    if (req->route.kind == KC__R_API || req->route.kind == KC__R_APIS) {
        req->fmt = KC__FMT_JSON; /* aggregated discovery when asked for, else legacy (#4) */
        return wants_aggregated(req->accept) ? aggregated_discovery(req) : discovery(req);
    }
    rc = kc__negotiate(req->accept, &req->fmt, &req->err);
    if (rc)
        return rc;
    if (req->route.kind != KC__R_RESOURCE)
        return discovery(req);
    return resource(req);
}

/* ---- MHD callbacks -------------------------------------------------------------------------- */

static enum kc__method method_of(const char *m)
{
    if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0)
        return KC__M_GET;
    if (strcmp(m, "POST") == 0)
        return KC__M_POST;
    if (strcmp(m, "PUT") == 0)
        return KC__M_PUT;
    if (strcmp(m, "PATCH") == 0)
        return KC__M_PATCH;
    if (strcmp(m, "DELETE") == 0)
        return KC__M_DELETE;
    return KC__M_OTHER;
}

static enum MHD_Result queue(struct MHD_Connection *conn, kc__req *req)
{
    if (!req->resp) {
        if (!req->err.code)
            kc__fail(&req->err, 500, "InternalError", "no response produced");
        if (kc__reply_error(req, &req->err) != 0)
            return MHD_NO;
    }
    enum MHD_Result r = MHD_queue_response(conn, req->status, req->resp);
    if (!req->srv->opts.quiet && kc_log_enabled(KC_LOG_LEVEL_INFO)) {
        /* Through libkcache's sink (kcache/log.h), never to stderr directly. */
        char line[2048];
        snprintf(line, sizeof line, "%s %s %u", req->method_name, req->path, req->status);
        kc_log_write(KC_LOG_LEVEL_INFO, "server.request", line);
    }
    MHD_destroy_response(req->resp);
    req->resp = NULL;
    return r;
}

/* May this request take long (large collections, cascades, Table rendering)? *ret_list: it is
 * a collection LIST (a GET of a collection, not a watch), which the listDelay fault holds back. */
static bool may_be_slow(const kc__req *req, bool *ret_list)
{
    kc__route rt;
    *ret_list = false;
    if (req->method == KC__M_OTHER || kc__route_parse(req->path, &rt) != 0 ||
        rt.kind != KC__R_RESOURCE)
        return false;
    if (req->method == KC__M_GET && !rt.has_name && !rt.watch_path) {
        const char *w = MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, "watch");
        *ret_list = !w || !kc__param_bool(w);
    }
    if (*ret_list || (req->accept && strstr(req->accept, "as=Table")))
        return true;
    const char *w = MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, "watch");
    bool watch = rt.watch_path || (req->method == KC__M_GET && w && kc__param_bool(w));
    size_t gl = strlen(rt.group);
    /* a read converts only custom resources, whose groups have a dot and are not *.k8s.io */
    bool builtin = !strchr(rt.group, '.') || (gl > 7 && !strcmp(rt.group + gl - 7, ".k8s.io"));
    /* a watch of a custom resource too: its initial events may be converted (CV7) */
    if ((!watch || !builtin) && (req->method != KC__M_GET || !builtin) &&
        kc__adm_may_call(req->srv, req->method != KC__M_GET, rt.group, rt.version, rt.plural))
        return true; /* admission or conversion webhooks: a call may take seconds */
    if (rt.has_name)
        return req->method == KC__M_DELETE && !rt.has_ns && !strcmp(rt.plural, "namespaces");
    return req->method == KC__M_DELETE;
}

static void run(kc__req *req)
{
    if (dispatch(req) != 0 && !req->resp && !req->err.code)
        kc__fail(&req->err, 500, "InternalError", "out of memory");
}

/* The listDelay fault, on a helper thread: wait ns, in slices of at most 10 ms under off_mu, so
 * kc_server_stop (which waits for offloaded requests) is held up by no more than one slice. */
static void list_delay(kc_server *srv, uint64_t ns)
{
    uint64_t deadline = kc__now_ns() + ns, now;
    pthread_mutex_lock(&srv->off_mu);
    while (!srv->stopping && (now = kc__now_ns()) < deadline) {
        uint64_t slice = now + 10 * KC__NS_PER_MS;
        kc__cond_wait_until(&srv->off_cond, &srv->off_mu, slice < deadline ? slice : deadline);
    }
    pthread_mutex_unlock(&srv->off_mu);
}

static void *offload_main(void *arg)
{
    conn_ctx *cc = arg;
    kc_server *srv = cc->req.srv;
    if (cc->delay_ns)
        list_delay(srv, cc->delay_ns);
    run(&cc->req);
    MHD_resume_connection(cc->req.conn); /* MHD calls on_request again: it queues the reply */
    pthread_mutex_lock(&srv->off_mu);
    srv->offloaded--;
    pthread_cond_broadcast(&srv->off_cond);
    pthread_mutex_unlock(&srv->off_mu);
    return NULL;
}

/* Run cc->req on a detached helper thread with the connection suspended, after delay_ns (the
 * listDelay fault; 0 = none). false = not started (server stopping, no thread): run it inline. */
static bool offload(conn_ctx *cc, uint64_t delay_ns)
{
    kc_server *srv = cc->req.srv;
    pthread_mutex_lock(&srv->off_mu); /* not srv->mu: that may be held long */
    bool ok = !srv->stopping;
    if (ok) {
        srv->offloaded++;
        pthread_cond_broadcast(&srv->off_cond);
    }
    pthread_mutex_unlock(&srv->off_mu);
    if (!ok)
        return false;
    cc->offloaded = true;
    cc->delay_ns = delay_ns;
    MHD_suspend_connection(cc->req.conn);
    pthread_attr_t a;
    pthread_t th;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &a, offload_main, cc);
    pthread_attr_destroy(&a);
    if (rc != 0) {
        cc->delay_ns = 0; /* never wait on an MHD thread */
        offload_main(cc); /* runs it here and resumes: the reply is queued on the next call */
    }
    return true;
}

/* The request carries "Expect: 100-continue" (HTTP/1.1): its client waits before sending the
 * body. */
static bool expects_continue(struct MHD_Connection *conn)
{
    const char *e = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT);
    return e && strcasecmp(e, "100-continue") == 0;
}

void kc__http_wait_offloaded(kc_server *srv)
{
    pthread_mutex_lock(&srv->off_mu);
    while (srv->offloaded)
        pthread_cond_wait(&srv->off_cond, &srv->off_mu);
    pthread_mutex_unlock(&srv->off_mu);
}

enum MHD_Result kc__http_on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                    const char *method, const char *version,
                                    const char *upload_data, size_t *upload_data_size,
                                    void **con_cls)
{
    kc_server *srv = cls;
    size_t max = srv->opts.max_body ? srv->opts.max_body : (size_t)3 << 20;
    conn_ctx *cc = *con_cls;
    if (!cc) {
        cc = calloc(1, sizeof(*cc));
        if (!cc)
            return MHD_NO;
        kc__buf_init(&cc->body, max);
        *con_cls = cc;
        const char *cl =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (!cl || strtoull(cl, NULL, 10) <= max)
            return MHD_YES;
        cc->too_large = true;
        /* A client waiting for "100 Continue" has not sent the body: answer now (no 100 is
         * sent, nothing is left unread). Any other client is sending it: read and discard it
         * (below) and answer after it, as closing a socket with unread data makes the kernel
         * reset the connection and the client may lose the answer (or fail its write first). */
        if (!expects_continue(conn))
            return MHD_YES;
    }
    if (*upload_data_size) {
        if (!cc->too_large && kc__buf_append(&cc->body, upload_data, *upload_data_size) != 0)
            cc->too_large = true;
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (cc->offloaded) { /* resumed after the helper thread made the reply */
        enum MHD_Result r = queue(conn, &cc->req);
        kc_error_clear(&cc->req.err);
        return r;
    }
    kc__req *req = &cc->req;
    memset(req, 0, sizeof(*req));
    kc_error_init(&req->err);
    req->srv = srv;
    req->conn = conn;
    req->path = url;
    req->method = method_of(method);
    req->method_name = method;
    req->accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    req->content_type =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    req->body = cc->body.data ? cc->body.data : "";
    req->body_len = cc->body.len;
    bool list;
    if (cc->too_large) {
        kc__fail(&req->err, 413, "RequestEntityTooLarge",
                 "the request body is larger than the limit of %zu bytes", max);
    } else if (may_be_slow(req, &list) &&
               offload(cc, list ? kc__faults_list_delay_ns(srv->faults) : 0)) {
        return MHD_YES;
    } else {
        run(req);
    }
    enum MHD_Result r = queue(conn, req);
    kc_error_clear(&req->err);
    return r;
}

void kc__http_on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                           enum MHD_RequestTerminationCode toe)
{
    conn_ctx *cc = *con_cls;
    if (!cc)
        return;
    /* A reply built but never queued: the client went away while an offloaded request ran (an
     * informer cancelling its LIST on a range change, say); MHD does not call on_request again. */
    if (cc->req.resp)
        MHD_destroy_response(cc->req.resp);
    cc->req.resp = NULL;
    kc_error_clear(&cc->req.err);
    json_decref(cc->req.user_info);
    kc__buf_free(&cc->body);
    free(cc);
    *con_cls = NULL;
}
