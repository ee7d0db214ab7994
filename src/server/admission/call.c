/*
 * call.c — one webhook call as kube-apiserver makes it: the AdmissionReview request (AR1–AR8,
 * a fresh uid per call), the address (clientConfig url, or service → https://NAME.NAMESPACE.svc
 * with the --webhook-service mapping used to dial: MW11, MW12), POST with libcurl under the
 * webhook's deadline (timeoutSeconds, also sent as ?timeout=Ns: CH13), TLS verified against the
 * caBundle held in memory (CURLOPT_CAINFO_BLOB; the system roots without one) and the host name,
 * never skipped; then the reply: HTTP 200–206, a decodable AdmissionReview of the version sent
 * whose uid matches, patch fields as the webhook's kind allows (AR9–AR12, AR16). Every failure is
 * worded as Go's client and kube-apiserver word it (CH9), for the chain to apply failurePolicy.
 *
 * Design: the call runs without srv->mu (the chain never holds it). The reply body is bounded
 * (KC__ADM_MAX_REPLY); curl's own handle per call keeps validating calls independent (they run
 * on threads, CH6).
 */
#include "server/admission/admission_internal.h"

#include "kcache/doc.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KC__ADM_MAX_REPLY (16u << 20) /* bytes of a webhook's reply */

/* One connection cache for every call of the process (kept-alive connections to webhooks, as
 * kube-apiserver keeps them). libcurl reuses a connection only for the same host, port,
 * CONNECT_TO target and TLS settings (CA blob included). TLS sessions are not shared: a resumed
 * session skips the certificate check a caBundle change must not skip. */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLSH *curl_share;
static pthread_mutex_t curl_share_mu = PTHREAD_MUTEX_INITIALIZER;

static void share_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *u)
{
    (void)h;
    (void)d;
    (void)a;
    (void)u;
    pthread_mutex_lock(&curl_share_mu);
}

static void share_unlock(CURL *h, curl_lock_data d, void *u)
{
    (void)h;
    (void)d;
    (void)u;
    pthread_mutex_unlock(&curl_share_mu);
}

static void curl_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURLSH *sh = curl_share_init();
    if (sh && curl_share_setopt(sh, CURLSHOPT_LOCKFUNC, share_lock) == CURLSHE_OK &&
        curl_share_setopt(sh, CURLSHOPT_UNLOCKFUNC, share_unlock) == CURLSHE_OK &&
        curl_share_setopt(sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT) == CURLSHE_OK)
        curl_share = sh;
    else if (sh)
        curl_share_cleanup(sh);
}

char *kc__adm_fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = NULL;
    if (vasprintf(&s, f, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

/* A v4 uuid from a per-call seed (AR1: fresh per call, never reused). */
void kc__adm_uid(char out[37])
{
    static _Atomic uint64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t st = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^
                  (++counter * 0x9e3779b97f4a7c15ull) ^ (uintptr_t)out;
    kc__uuid_v4(&st, out);
}

static json_t *gvk(const char *g, const char *v, const char *key, const char *val)
{
    return json_pack("{s:s, s:s, s:s}", "group", g, "version", v, key, val);
}

/* AR1–AR8: the request stanza for obj at the request's version. */
static json_t *review(const kc__adm_chain *c, const char *api_version, const json_t *obj,
                      const char *uid)
{
    const kc__adm_attrs *a = &c->a;
    const kc__rsrc *r = a->r;
    json_t *q = json_object();
    json_object_set_new(q, "uid", json_string(uid));
    const char *kg = c->kind ? c->kind_group : r->group,
               *kv = c->kind ? c->kind_version : a->version;
    const char *kk = c->kind ? c->kind : r->kind;
    json_object_set_new(q, "kind", gvk(kg, kv, "kind", kk));
    json_object_set_new(q, "resource", gvk(r->group, a->version, "resource", r->plural));
    if (a->sub && *a->sub)
        json_object_set_new(q, "subResource", json_string(a->sub));
    json_object_set_new(q, "requestKind", gvk(kg, kv, "kind", kk));
    json_object_set_new(q, "requestResource", gvk(r->group, a->version, "resource", r->plural));
    if (a->sub && *a->sub)
        json_object_set_new(q, "requestSubResource", json_string(a->sub));
    const char *name = a->name;
    const json_t *named = obj ? obj : a->old; /* a generated name is known after defaulting */
    if ((!name || !*name) && named)
        name = json_string_value(json_object_get(json_object_get(named, "metadata"), "name"));
    if (name && *name)
        json_object_set_new(q, "name", json_string(name));
    bool is_ns = !r->group[0] && !strcmp(r->plural, "namespaces");
    const char *ns = is_ns ? name : a->ns; /* AR3 */
    if (ns && *ns)
        json_object_set_new(q, "namespace", json_string(ns));
    json_object_set_new(q, "operation", json_string(a->op));
    json_object_set_new(q, "userInfo",
                        a->user_info
                            ? json_deep_copy(a->user_info)
                            : json_pack("{s:s, s:[s, s]}", "username", "kcache-admin", "groups",
                                        "system:masters", "system:authenticated"));
    json_object_set_new(q, "object", obj ? json_deep_copy(obj) : json_null());
    json_object_set_new(q, "oldObject", a->old ? json_deep_copy(a->old) : json_null());
    json_object_set_new(q, "dryRun", json_boolean(a->dry_run));
    json_object_set_new(q, "options", a->options ? json_deep_copy(a->options) : json_null());
    return json_pack("{s:s, s:s, s:o}", "kind", "AdmissionReview", "apiVersion", api_version,
                     "request", q);
}

char *kc__adm_target(const char *services, const json_t *cc, int timeout_s, char *connect_to,
                     size_t cap, char **reason)
{
    const char *url = json_string_value(json_object_get(cc, "url"));
    const json_t *svc = json_object_get(cc, "service");
    connect_to[0] = 0;
    if (url) {
        if (strncmp(url, "https://", 8) != 0 || strchr(url, '?') || strchr(url, '#')) {
            *reason =
                kc__adm_fmt("failed to call webhook: invalid webhook URL \"%s\": must be https "
                            "without query or fragment",
                            url);
            return NULL;
        }
        return timeout_s ? kc__adm_fmt("%s?timeout=%ds", url, timeout_s) : kc__adm_fmt("%s", url);
    }
    const char *name = json_string_value(json_object_get(svc, "name"));
    const char *ns = json_string_value(json_object_get(svc, "namespace"));
    const char *path = json_string_value(json_object_get(svc, "path"));
    json_t *p = json_object_get(svc, "port");
    int port = json_is_integer(p) ? (int)json_integer_value(p) : 443;
    if (!name || !ns) {
        *reason = kc__adm_fmt("failed to call webhook: clientConfig has neither url nor service");
        return NULL;
    }
    char *u = timeout_s ? kc__adm_fmt("https://%s.%s.svc:%d%s?timeout=%ds", name, ns, port,
                                      path ? path : "", timeout_s)
                        : kc__adm_fmt("https://%s.%s.svc:%d%s", name, ns, port, path ? path : "/");
    char addr[300];
    if (!kc__adm_service_lookup(services, name, ns, port, addr, sizeof(addr))) {
        *reason =
            kc__adm_fmt("failed to call webhook: Post \"%s\": service \"%s/%s:%d\" has no address "
                        "(kcache serve --webhook-service)",
                        u ? u : "", ns, name, port);
        free(u);
        return NULL;
    }
    snprintf(connect_to, cap, "%s.%s.svc:%d:%s", name, ns, port, addr);
    return u;
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
    kc__adm_buf *b = ud;
    size_t n = size * nmemb;
    if (b->n + n > KC__ADM_MAX_REPLY) {
        b->over = true;
        return 0;
    }
    char *np = realloc(b->p, b->n + n + 1);
    if (!np)
        return 0;
    memcpy(np + b->n, ptr, n);
    b->p = np;
    b->n += n;
    b->p[b->n] = 0;
    return n;
}

/* CH9: curl's failure as Go's client words it. */
static char *transport_reason(CURLcode cc, const char *errbuf, const char *url, const char *host,
                              const kc__adm_buf *b)
{
    const char *why = errbuf[0] ? errbuf : curl_easy_strerror(cc);
    char tmp[512];
    if (cc == CURLE_OPERATION_TIMEDOUT)
        why = "context deadline exceeded";
    else if (cc == CURLE_COULDNT_CONNECT)
        why = "dial tcp: connect: connection refused";
    else if (b->over)
        why = "the webhook's response is larger than 16 MiB";
    else if (cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CONNECT_ERROR) {
        if (strstr(why, "subject name") || strstr(why, "does not match"))
            snprintf(tmp, sizeof(tmp),
                     "tls: failed to verify certificate: x509: certificate is not valid for %s",
                     host);
        else if (strstr(why, "certificate") || strstr(why, "issuer"))
            snprintf(tmp, sizeof(tmp),
                     "tls: failed to verify certificate: x509: certificate signed by unknown "
                     "authority");
        else
            snprintf(tmp, sizeof(tmp), "remote error: tls: %s", why);
        why = tmp;
    }
    return kc__adm_fmt("failed to call webhook: Post \"%s\": %s", url, why);
}

/* CH9: an HTTP status outside 200–206 as client-go's error for an unstructured reply. */
static char *status_reason(long code, const kc__adm_buf *b)
{
    if (code == 404)
        return kc__adm_fmt(
            "failed to call webhook: the server could not find the requested resource");
    if (code == 400)
        return kc__adm_fmt("failed to call webhook: the server rejected our request for an unknown "
                           "reason");
    if (code >= 500)
        return kc__adm_fmt(
            "failed to call webhook: an error on the server (\"%.*s\") has prevented the "
            "request from succeeding",
            (int)(b->n > 256 ? 256 : b->n), b->p ? b->p : "");
    return kc__adm_fmt(
        "failed to call webhook: the server responded with the status code %ld but did not "
        "return more information",
        code);
}

int kc__adm_post(const json_t *cc, const char *url, const char *connect_to, int timeout_s,
                 const char *body, kc__adm_buf *b, char **reason)
{
    pthread_once(&curl_once, curl_init);
    CURL *h = curl_easy_init();
    if (!h) {
        *reason = kc__adm_fmt("failed to call webhook: out of memory");
        return -1;
    }
    char errbuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    hdr = curl_slist_append(hdr, "Accept: application/json, */*");
    struct curl_slist *ct = connect_to[0] ? curl_slist_append(NULL, connect_to) : NULL;
    unsigned char *ca = NULL;
    size_t ca_len = 0;
    const char *cab = json_string_value(json_object_get(cc, "caBundle"));
    if (cab && *cab && kc_base64_decode(cab, strlen(cab), &ca, &ca_len, NULL) == 0) {
        struct curl_blob blob = {.data = ca, .len = ca_len, .flags = CURL_BLOB_COPY};
        curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
    }
    if (curl_share)
        curl_easy_setopt(h, CURLOPT_SHARE, curl_share);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    if (ct)
        curl_easy_setopt(h, CURLOPT_CONNECT_TO, ct);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_s * 1000L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    CURLcode rc = curl_easy_perform(h);
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (rc != CURLE_OK) {
        char *host = NULL;
        CURLU *u = curl_url();
        if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK)
            curl_url_get(u, CURLUPART_HOST, &host, 0);
        *reason = transport_reason(rc, errbuf, url, host ? host : "", b);
        curl_free(host);
        curl_url_cleanup(u);
    } else if (code < 200 || code > 206) {
        *reason = status_reason(code, b);
    }
    curl_easy_cleanup(h);
    curl_slist_free_all(hdr);
    curl_slist_free_all(ct);
    free(ca);
    return *reason ? -1 : 0;
}

/* AR9–AR12, AR16: the reply checked; 0 with *ret_resp, else *reason. */
static int verify(const kc__adm_hook *h, const char *api_version, const char *uid,
                  const kc__adm_buf *b, json_t **ret_resp, char **reason)
{
    json_error_t je;
    json_t *doc = json_loadb(b->p ? b->p : "", b->n, 0, &je);
    if (!json_is_object(doc)) {
        json_decref(doc);
        *reason = kc__adm_fmt(
            "failed to call webhook: couldn't get version/kind; json parse error: %s", je.text);
        return -1;
    }
    bool v1 = !strcmp(api_version, "admission.k8s.io/v1");
    const char *av = json_string_value(json_object_get(doc, "apiVersion"));
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    json_t *resp = json_object_get(doc, "response");
    const char *ruid = json_string_value(json_object_get(resp, "uid"));
    const char *pt = json_string_value(json_object_get(resp, "patchType"));
    json_t *patch = json_object_get(resp, "patch");
    bool has_patch = json_string_value(patch) && *json_string_value(patch);
    if (v1 && (!av || !kind || strcmp(av, api_version) || strcmp(kind, "AdmissionReview"))) {
        *reason = kc__adm_fmt("received invalid webhook response: expected webhook response of "
                              "admission.k8s.io/v1, Kind=AdmissionReview, got %s, Kind=%s",
                              av ? av : "", kind ? kind : "");
    } else if (!json_is_object(resp)) {
        *reason = kc__adm_fmt("received invalid webhook response: webhook response was absent");
    } else if (v1 && (!ruid || strcmp(ruid, uid))) {
        *reason =
            kc__adm_fmt("received invalid webhook response: expected response.uid=\"%s\", got "
                        "\"%s\"",
                        uid, ruid ? ruid : "");
    } else if (!h->mutating && has_patch) {
        *reason =
            kc__adm_fmt("received invalid webhook response: validating webhook may not return "
                        "response.patch");
    } else if (!h->mutating && pt) {
        *reason =
            kc__adm_fmt("received invalid webhook response: validating webhook may not return "
                        "response.patchType");
    } else if (v1 && has_patch && !pt) {
        *reason =
            kc__adm_fmt("received invalid webhook response: webhook returned response.patch but "
                        "not response.patchType");
    } else if (v1 && pt && !has_patch) {
        *reason =
            kc__adm_fmt("received invalid webhook response: webhook returned response.patchType "
                        "but not response.patch");
    } else if (v1 && pt && strcmp(pt, "JSONPatch")) {
        *reason = kc__adm_fmt("received invalid webhook response: webhook returned invalid "
                              "response.patchType of \"%s\"",
                              pt);
    } else {
        *ret_resp = json_incref(resp);
    }
    json_decref(doc);
    return *reason ? -1 : 0;
}

/* MW10: the AdmissionReview version to send, NULL when the webhook knows none of ours. */
static const char *review_version(const json_t *def)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(def, "admissionReviewVersions"), i, v)
    {
        if (json_string_value(v) && !strcmp(json_string_value(v), "v1"))
            return "admission.k8s.io/v1";
        if (json_string_value(v) && !strcmp(json_string_value(v), "v1beta1"))
            return "admission.k8s.io/v1beta1";
    }
    return NULL;
}

int kc__adm_call(const kc__adm_chain *c, const kc__adm_hook *h, const json_t *obj,
                 json_t **ret_resp, char **ret_reason)
{
    *ret_resp = NULL;
    *ret_reason = NULL;
    const char *av = review_version(h->def);
    if (!av) {
        *ret_reason =
            kc__adm_fmt("webhook does not accept known AdmissionReview versions (v1, v1beta1)");
        return -1;
    }
    char connect_to[600];
    char *url = kc__adm_target(c->services, json_object_get(h->def, "clientConfig"), h->timeout_s,
                               connect_to, sizeof(connect_to), ret_reason);
    if (!url) {
        if (!*ret_reason)
            *ret_reason = kc__adm_fmt("failed to call webhook: out of memory");
        return -1;
    }
    char uid[37];
    kc__adm_uid(uid);
    json_t *rev = review(c, av, obj, uid);
    char *body = rev ? json_dumps(rev, JSON_COMPACT) : NULL;
    json_decref(rev);
    kc__adm_buf b = {0};
    int rc = -1;
    if (!body)
        *ret_reason = kc__adm_fmt("failed to call webhook: out of memory");
    else if (kc__adm_post(json_object_get(h->def, "clientConfig"), url, connect_to, h->timeout_s,
                          body, &b, ret_reason) == 0)
        rc = verify(h, av, uid, &b, ret_resp, ret_reason);
    free(body);
    free(b.p);
    free(url);
    return rc;
}
