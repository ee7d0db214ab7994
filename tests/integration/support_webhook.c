/*
 * support_webhook.c — the test admission webhook of kc_twh.h: libmicrohttpd with TLS (one thread
 * per connection, so a delayed reply never holds another), a certificate from the server
 * library's generator (server/http/tls.h), replies per path, every received review recorded.
 */
#include "kc_twh.h"

#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcache/doc.h"
#include "server/http/tls.h"

#define TWH_PATHS   32
#define TWH_REVIEWS 256

typedef struct twh_path {
    char *path;
    kc_twh_reply r;  /* strings owned */
    json_t *reviews; /* array */
} twh_path;

struct kc_twh {
    struct MHD_Daemon *mhd;
    kc__tls_material tls;
    char *ca_bundle;
    int port;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    bool stopping;
    size_t connections;
    twh_path paths[TWH_PATHS];
    size_t n_paths;
};

typedef struct twh_body {
    char *p;
    size_t n;
} twh_body;

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void reply_free(kc_twh_reply *r)
{
    free((char *)r->message);
    free((char *)r->reason);
    free((char *)r->patch);
    free((char *)r->patch_type);
    free((char *)r->warnings);
    free((char *)r->uid);
    free((char *)r->api_version);
    free((char *)r->raw);
    memset(r, 0, sizeof(*r));
}

/* mu held */
static twh_path *find_path(kc_twh *w, const char *path, bool create)
{
    for (size_t i = 0; i < w->n_paths; i++)
        if (!strcmp(w->paths[i].path, path))
            return &w->paths[i];
    if (!create || w->n_paths == TWH_PATHS)
        return NULL;
    twh_path *p = &w->paths[w->n_paths++];
    p->path = strdup(path);
    p->reviews = json_array();
    return p;
}

void kc_twh_set(kc_twh *w, const char *path, const kc_twh_reply *reply)
{
    pthread_mutex_lock(&w->mu);
    twh_path *p = find_path(w, path, true);
    if (p) {
        reply_free(&p->r);
        p->r = *reply;
        p->r.message = dup_or_null(reply->message);
        p->r.reason = dup_or_null(reply->reason);
        p->r.patch = dup_or_null(reply->patch);
        p->r.patch_type = dup_or_null(reply->patch_type);
        p->r.warnings = dup_or_null(reply->warnings);
        p->r.uid = dup_or_null(reply->uid);
        p->r.api_version = dup_or_null(reply->api_version);
        p->r.raw = dup_or_null(reply->raw);
    }
    pthread_mutex_unlock(&w->mu);
}

size_t kc_twh_count(kc_twh *w, const char *path)
{
    pthread_mutex_lock(&w->mu);
    twh_path *p = find_path(w, path, false);
    size_t n = p ? json_array_size(p->reviews) : 0;
    pthread_mutex_unlock(&w->mu);
    return n;
}

json_t *kc_twh_review(kc_twh *w, const char *path, size_t i)
{
    pthread_mutex_lock(&w->mu);
    twh_path *p = find_path(w, path, false);
    json_t *r = p ? json_incref(json_array_get(p->reviews, i)) : NULL;
    pthread_mutex_unlock(&w->mu);
    return r;
}

bool kc_twh_wait(kc_twh *w, const char *path, size_t n, int timeout_ms)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += timeout_ms / 1000;
    dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->mu);
    twh_path *p;
    while (!((p = find_path(w, path, false)) && json_array_size(p->reviews) >= n))
        if (pthread_cond_timedwait(&w->cond, &w->mu, &dl) != 0)
            break;
    bool ok = (p = find_path(w, path, false)) && json_array_size(p->reviews) >= n;
    pthread_mutex_unlock(&w->mu);
    return ok;
}

void kc_twh_clear(kc_twh *w)
{
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < w->n_paths; i++)
        json_array_clear(w->paths[i].reviews);
    pthread_mutex_unlock(&w->mu);
}

/* A ConversionReview's reply (kc_twh_reply.convert). */
static char *convert_body(const kc_twh_reply *r, json_t *rev)
{
    json_t *q = json_object_get(rev, "request");
    const char *want = json_string_value(json_object_get(q, "desiredAPIVersion"));
    const char *slash = want ? strchr(want, '/') : NULL;
    json_t *out = json_array();
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(q, "objects"), i, o)
    {
        json_t *c = json_deep_copy(o);
        json_t *m = json_object_get(c, "metadata");
        json_object_set_new(c, "apiVersion", json_string(want ? want : ""));
        if (!json_is_object(json_object_get(m, "labels")))
            json_object_set_new(m, "labels", json_object());
        json_object_set_new(json_object_get(m, "labels"), "converted",
                            json_string(slash ? slash + 1 : ""));
        json_object_set_new(m, "resourceVersion", json_string("999"));
        if (r->convert == KC_TWH_CONVERT_RENAME)
            json_object_set_new(m, "name", json_string("renamed"));
        json_array_append_new(out, c);
    }
    if (r->convert == KC_TWH_CONVERT_FEWER && json_array_size(out))
        json_array_remove(out, json_array_size(out) - 1);
    json_t *result = r->convert == KC_TWH_CONVERT_FAIL
                         ? json_pack("{s:s, s:s}", "status", "Failed", "message",
                                     r->message ? r->message : "conversion failed")
                         : json_pack("{s:s}", "status", "Success");
    json_t *doc = json_pack("{s:s, s:s, s:{s:s, s:o, s:o}}", "apiVersion",
                            "apiextensions.k8s.io/v1", "kind", "ConversionReview", "response",
                            "uid", json_string_value(json_object_get(q, "uid")) ?: "",
                            "convertedObjects", out, "result", result);
    char *s = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return s;
}

/* The reply body for review rev under r (mu NOT held; r a copy of the path's reply). */
static char *reply_body(const kc_twh_reply *r, json_t *rev)
{
    if (r->raw)
        return strdup(r->raw);
    if (r->convert)
        return convert_body(r, rev);
    const char *uid = json_string_value(json_object_get(json_object_get(rev, "request"), "uid"));
    json_t *resp = json_object();
    json_object_set_new(resp, "uid", json_string(r->uid ? r->uid : uid ? uid : ""));
    json_object_set_new(resp, "allowed", json_boolean(!r->deny));
    if (r->deny && (r->code || r->message || r->reason)) {
        json_t *st = json_object();
        if (r->code)
            json_object_set_new(st, "code", json_integer(r->code));
        if (r->message)
            json_object_set_new(st, "message", json_string(r->message));
        if (r->reason)
            json_object_set_new(st, "reason", json_string(r->reason));
        json_object_set_new(resp, "status", st);
    }
    if (r->patch) {
        char *b64 = NULL;
        kc_base64_encode(r->patch, strlen(r->patch), &b64, NULL, NULL);
        json_object_set_new(resp, "patch", json_string(b64 ? b64 : ""));
        free(b64);
    }
    if (r->patch_type ? *r->patch_type : r->patch != NULL)
        json_object_set_new(resp, "patchType",
                            json_string(r->patch_type ? r->patch_type : "JSONPatch"));
    if (r->warnings)
        json_object_set_new(resp, "warnings", json_loads(r->warnings, 0, NULL));
    json_t *doc = json_pack("{s:s, s:s, s:o}", "apiVersion",
                            r->api_version ? r->api_version : "admission.k8s.io/v1", "kind",
                            "AdmissionReview", "response", resp);
    char *s = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return s;
}

/* Wait ms unless the webhook stops first. */
static void delay(kc_twh *w, int ms)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += ms / 1000;
    dl.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->mu);
    while (!w->stopping)
        if (pthread_cond_timedwait(&w->cond, &w->mu, &dl) != 0)
            break;
    pthread_mutex_unlock(&w->mu);
}

static enum MHD_Result answer(kc_twh *w, struct MHD_Connection *conn, const char *url, twh_body *b)
{
    json_t *rev = json_loadb(b->p ? b->p : "", b->n, 0, NULL);
    kc_twh_reply r = {0};
    pthread_mutex_lock(&w->mu);
    twh_path *p = find_path(w, url, true);
    if (p) {
        if (rev && json_array_size(p->reviews) < TWH_REVIEWS)
            json_array_append(p->reviews, rev);
        r = p->r; /* strings stay valid: kc_twh_set is not called while requests run */
    }
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->mu);
    if (r.delay_ms)
        delay(w, r.delay_ms);
    char *body = reply_body(&r, rev);
    json_decref(rev);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(body ? strlen(body) : 0, body ? body : (char *)"",
                                        body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    enum MHD_Result ret =
        MHD_queue_response(conn, r.http_status ? (unsigned)r.http_status : 200, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **con_cls)
{
    (void)method;
    (void)version;
    twh_body *b = *con_cls;
    if (!b) {
        *con_cls = calloc(1, sizeof(twh_body));
        return *con_cls ? MHD_YES : MHD_NO;
    }
    if (*size) {
        char *np = realloc(b->p, b->n + *size + 1);
        if (!np)
            return MHD_NO;
        memcpy(np + b->n, data, *size);
        b->p = np;
        b->n += *size;
        b->p[b->n] = 0;
        *size = 0;
        return MHD_YES;
    }
    return answer(cls, conn, url, b);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    twh_body *b = *con_cls;
    if (b) {
        free(b->p);
        free(b);
    }
    *con_cls = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    (void)conn;
    (void)socket_context;
    kc_twh *w = cls;
    if (toe != MHD_CONNECTION_NOTIFY_STARTED)
        return;
    pthread_mutex_lock(&w->mu);
    w->connections++;
    pthread_mutex_unlock(&w->mu);
}

size_t kc_twh_connections(kc_twh *w)
{
    pthread_mutex_lock(&w->mu);
    size_t n = w->connections;
    pthread_mutex_unlock(&w->mu);
    return n;
}

kc_twh *kc_twh_start(const char *dns_name)
{
    kc_twh *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cond, NULL);
    if (kc__tls_generate(dns_name, &w->tls, NULL) != 0 ||
        kc_base64_encode(w->tls.ca_pem, strlen(w->tls.ca_pem), &w->ca_bundle, NULL, NULL) != 0) {
        kc_twh_stop(w);
        return NULL;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    w->mhd = MHD_start_daemon(
        MHD_USE_TLS | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL,
        NULL, on_request, w, MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
        w, MHD_OPTION_NOTIFY_CONNECTION, on_connection, w, MHD_OPTION_HTTPS_MEM_KEY, w->tls.key_pem,
        MHD_OPTION_HTTPS_MEM_CERT, w->tls.cert_pem, MHD_OPTION_END);
    const union MHD_DaemonInfo *info =
        w->mhd ? MHD_get_daemon_info(w->mhd, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    if (!info) {
        kc_twh_stop(w);
        return NULL;
    }
    w->port = info->port;
    return w;
}

void kc_twh_stop(kc_twh *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stopping = true;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->mu);
    if (w->mhd)
        MHD_stop_daemon(w->mhd);
    for (size_t i = 0; i < w->n_paths; i++) {
        free(w->paths[i].path);
        reply_free(&w->paths[i].r);
        json_decref(w->paths[i].reviews);
    }
    kc__tls_material_clear(&w->tls);
    free(w->ca_bundle);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cond);
    free(w);
}

int kc_twh_port(const kc_twh *w)
{
    return w->port;
}

const char *kc_twh_ca_pem(const kc_twh *w)
{
    return w->tls.ca_pem;
}

const char *kc_twh_ca_bundle(const kc_twh *w)
{
    return w->ca_bundle;
}
