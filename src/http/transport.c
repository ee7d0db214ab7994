/*
 * transport.c — one HTTP request over libcurl, with connection reuse and prompt cancellation.
 *
 * Design:
 *   - A pool of "slots" (an easy handle plus its own multi handle). A request takes an idle slot
 *     (or makes one), runs, and puts it back, so the slot's connection cache — and with it the
 *     keep-alive connection to the server — survives between requests. Slots are never used by
 *     two threads at once. libcurl documents that sharing the connection cache through CURLSH
 *     between concurrent threads is unsafe, so only DNS results and TLS sessions are shared (a
 *     CURLSH with one mutex per lock_data, never nested by us).
 *   - Every transfer runs through its slot's multi handle: curl_multi_poll() sleeps until the
 *     socket is ready, the timeout passes, or kc_cancel_fire() calls curl_multi_wakeup(); so a
 *     watch stops at once when cancelled. The xferinfo callback checks the token too.
 *   - Streaming (watch): 2xx body chunks go to req->on_data as they arrive; a non-2xx body is
 *     collected so the caller can parse the Status. req->on_idle runs after each receive step
 *     (curl_multi_perform: one read of up to the 256 KiB buffer, delivered as one on_data call per
 *     HTTP chunk in it), so a consumer can batch per read rather than per chunk.
 *   - A collected body grows with the bytes that arrive, not with what Content-Length announces
 *     (issue 29 point 5: a 27-byte reply announcing 1 GB held ~970 MiB for its whole timeout).
 *     The first reservation is min(Content-Length, 8 MiB) + the decoder's padding — a LIST page
 *     (~3 MB) still gets its one populated buffer at once —, and each later one
 *     min(Content-Length, 2 × what arrived): a truthful big body is reached in a few doublings
 *     (a huge buffer moves its pages with mremap, core/buf.c, so nothing is copied), and a lying
 *     one costs at most twice what really came. A Content-Length over the body cap
 *     (kc_client_opts.max_response_bytes) fails at once, before any byte is stored.
 *   - Errors: CURLcode → KC_EDNS / KC_ETLS / KC_ETIMEOUT / KC_ECANCELED / KC_ETOOLARGE / KC_EIO
 *     (curl_result.c, which also reads Retry-After). Credentials travel in headers only; nothing
 * here logs headers, so secrets never reach the log.
 */
#include "http/internal.h"
#include "kcache/obj.h" /* KC_DECODE_PADDING */

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#define KC__POOL_MAX_IDLE      32
#define KC__CONNECT_TIMEOUT_MS 15000
#define KC__BODY_FIRST_RESERVE ((size_t)8 << 20) /* Content-Length trusted up to this at first */

typedef struct kc__slot {
    CURL *easy;
    CURLM *multi;
    struct kc__slot *next;
} kc__slot;

struct kc__http {
    kc_config *cfg;
    char *user_agent;
    char *base;       /* URL prefix (scheme://host:port[/path]) requests are sent to */
    char *connect_to; /* CURLOPT_CONNECT_TO entry for tls-server-name, or NULL */
    CURLSH *share;
    pthread_mutex_t share_mu[CURL_LOCK_DATA_LAST];
    pthread_mutex_t pool_mu; /* guards idle, n_idle */
    kc__slot *idle;
    size_t n_idle;
    _Atomic uint64_t n_conns;
    _Atomic uint64_t n_body_bytes; /* response body bytes received (kc__http_bytes_received) */
};

static pthread_once_t kc__curl_once = PTHREAD_ONCE_INIT;
static CURLcode kc__curl_init_rc = CURLE_OK;

static void kc__curl_global_init(void)
{
    kc__curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void kc__share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *ud)
{
    kc__http *http = ud;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_lock(&http->share_mu[data]);
}

static void kc__share_unlock(CURL *h, curl_lock_data data, void *ud)
{
    kc__http *http = ud;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_unlock(&http->share_mu[data]);
}

void kc__http_resp_init(kc__http_resp *r)
{
    r->status = 0;
    r->retry_after_s = -1;
    kc__buf_init(&r->body, 0);
}

void kc__http_resp_free(kc__http_resp *r)
{
    if (!r)
        return;
    kc__buf_free(&r->body);
    r->status = 0;
    r->retry_after_s = -1;
}

/* base URL and, for tls-server-name, the CONNECT_TO entry: the URL names the TLS server name
 * (so SNI and verification use it) and CONNECT_TO sends the connection to the real host. */
static int kc__http_make_base(kc__http *h, kc_error *err)
{
    const kc_config *cfg = h->cfg;
    if (!cfg->tls_server_name || !*cfg->tls_server_name ||
        !kc__starts_with(cfg->server, "https://")) {
        h->base = kc__strdup(cfg->server);
        return h->base ? 0 : kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    CURLU *u = curl_url();
    if (!u)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    char *host = NULL, *port = NULL;
    int rc = 0;
    if (curl_url_set(u, CURLUPART_URL, cfg->server, 0) ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) ||
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT)) {
        rc = kc_error_set(err, KC_ECONFIG, "bad server URL %s", cfg->server);
        goto out;
    }
    if (curl_url_set(u, CURLUPART_HOST, cfg->tls_server_name, 0)) {
        rc = kc_error_set(err, KC_ECONFIG, "bad tls-server-name %s", cfg->tls_server_name);
        goto out;
    }
    char *url = NULL;
    if (curl_url_get(u, CURLUPART_URL, &url, 0)) {
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
        goto out;
    }
    size_t n = strlen(url);
    while (n > 0 && url[n - 1] == '/')
        n--;
    h->base = kc__strdup_n(url, n);
    curl_free(url);
    if (!h->base ||
        asprintf(&h->connect_to, "%s:%s:%s:%s", cfg->tls_server_name, port, host, port) < 0) {
        h->connect_to = NULL;
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
    }
out:
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return rc;
}

int kc__http_new(const kc_config *cfg, const char *user_agent, kc__http **ret, kc_error *err)
{
    pthread_once(&kc__curl_once, kc__curl_global_init);
    if (kc__curl_init_rc != CURLE_OK)
        return kc_error_set(err, KC_EIO, "curl_global_init failed: %s",
                            curl_easy_strerror(kc__curl_init_rc));
    kc__http *h = calloc(1, sizeof *h);
    if (!h)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&h->share_mu[i], NULL);
    pthread_mutex_init(&h->pool_mu, NULL);
    h->cfg = kc_config_ref(cfg);
    h->user_agent = kc__strdup(user_agent ? user_agent : "kcache/" KC_VERSION_STRING);
    int rc = kc__http_make_base(h, err);
    if (rc)
        goto fail;
    h->share = curl_share_init();
    if (!h->user_agent || !h->share) {
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
        goto fail;
    }
    curl_share_setopt(h->share, CURLSHOPT_LOCKFUNC, kc__share_lock);
    curl_share_setopt(h->share, CURLSHOPT_UNLOCKFUNC, kc__share_unlock);
    curl_share_setopt(h->share, CURLSHOPT_USERDATA, h);
    curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    *ret = h;
    return 0;
fail:
    kc__http_free(h);
    return rc;
}

static void kc__slot_free(kc__slot *s)
{
    if (!s)
        return;
    if (s->easy)
        curl_easy_cleanup(s->easy);
    if (s->multi)
        curl_multi_cleanup(s->multi);
    free(s);
}

void kc__http_free(kc__http *h)
{
    if (!h)
        return;
    while (h->idle) {
        kc__slot *s = h->idle;
        h->idle = s->next;
        kc__slot_free(s);
    }
    if (h->share)
        curl_share_cleanup(h->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&h->share_mu[i]);
    pthread_mutex_destroy(&h->pool_mu);
    kc_config_unref(h->cfg);
    free(h->user_agent);
    free(h->base);
    free(h->connect_to);
    free(h);
}

uint64_t kc__http_connections(kc__http *h)
{
    return atomic_load(&h->n_conns);
}

uint64_t kc__http_bytes_received(kc__http *h)
{
    return atomic_load_explicit(&h->n_body_bytes, memory_order_relaxed);
}

static kc__slot *kc__slot_get(kc__http *h)
{
    pthread_mutex_lock(&h->pool_mu);
    kc__slot *s = h->idle;
    if (s) {
        h->idle = s->next;
        h->n_idle--;
    }
    pthread_mutex_unlock(&h->pool_mu);
    if (s)
        return s;
    s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->easy = curl_easy_init();
    s->multi = curl_multi_init();
    if (!s->easy || !s->multi) {
        kc__slot_free(s);
        return NULL;
    }
    return s;
}

static void kc__slot_put(kc__http *h, kc__slot *s, bool reusable)
{
    if (reusable) {
        pthread_mutex_lock(&h->pool_mu);
        if (h->n_idle < KC__POOL_MAX_IDLE) {
            s->next = h->idle;
            h->idle = s;
            h->n_idle++;
            s = NULL;
        }
        pthread_mutex_unlock(&h->pool_mu);
    }
    kc__slot_free(s);
}

/* ---- one transfer ---------------------------------------------------------------------------- */

typedef struct kc__xfer {
    kc__http *h;
    const kc__http_req *req;
    kc__http_resp *resp;
    CURL *easy;
    int status_known;  /* 0 unknown, 1 stream to on_data, 2 collect */
    bool ok;           /* the status is 2xx */
    int fail_code;     /* set by the write callback */
    int64_t announced; /* Content-Length of a collected body; -1 when none */
} kc__xfer;

/* Room for n more bytes of a collected body (and the decoder's padding after them), populated
 * when new: up to what Content-Length announced, but never more than 2 × what arrived (or the
 * first 8 MiB). Best effort: kc__buf_append grows the buffer when this could not. */
static void body_grow(kc__xfer *x, size_t n)
{
    kc__buf *b = &x->resp->body;
    size_t in = b->len + n, need = in + KC_DECODE_PADDING;
    if (x->announced < 0 || need < b->cap || (uint64_t)x->announced < in)
        return;
    size_t target = (size_t)x->announced + KC_DECODE_PADDING;
    size_t bound = in < KC__BODY_FIRST_RESERVE / 2 ? KC__BODY_FIRST_RESERVE : 2 * in;
    if (target > bound)
        target = bound;
    if (target < need)
        target = need;
    (void)kc__buf_reserve_populated(b, target - b->len);
}

/* The status is known (the first body bytes): stream them or collect them. Content-Length over
 * the body's cap: KC_ETOOLARGE now, before anything is stored. */
static int on_first_write(kc__xfer *x)
{
    long code = 0;
    curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
    x->ok = code >= 200 && code < 300;
    x->status_known = (x->req->stream && x->ok) ? 1 : 2;
    curl_off_t cl = -1;
    if (x->status_known == 2 &&
        curl_easy_getinfo(x->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK && cl > 0) {
        x->announced = (int64_t)cl;
        if ((uint64_t)cl > x->resp->body.max)
            return KC_ETOOLARGE;
    }
    return 0;
}

static size_t kc__on_write(char *p, size_t size, size_t nmemb, void *ud)
{
    kc__xfer *x = ud;
    size_t n = size * nmemb;
    atomic_fetch_add_explicit(&x->h->n_body_bytes, n, memory_order_relaxed);
    if (!x->status_known && (x->fail_code = on_first_write(x)))
        return 0;
    if (x->status_known == 1) {
        size_t got = x->req->on_data(x->req->ud, p, n);
        if (got != n)
            x->fail_code = KC_ECANCELED;
        return got;
    }
    body_grow(x, n);
    int rc = kc__buf_append(&x->resp->body, p, n);
    if (rc) {
        x->fail_code = rc;
        return 0;
    }
    if (x->req->on_body && x->ok)
        x->req->on_body(x->req->body_ud, &x->resp->body);
    return n;
}

static int kc__on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    kc__xfer *x = ud;
    return (x->req->cancel && kc_cancel_fired(x->req->cancel)) ? 1 : 0;
}

static struct curl_slist *kc__headers(const kc__http_req *req, int *rc)
{
    struct curl_slist *l = NULL, *t;
    char line[256];
    *rc = 0;
    snprintf(line, sizeof line, "Accept: %s", req->accept ? req->accept : "application/json");
    if (!(t = curl_slist_append(l, line)))
        goto nomem;
    l = t;
    if (req->body) {
        snprintf(line, sizeof line, "Content-Type: %s",
                 req->content_type ? req->content_type : "application/json");
        if (!(t = curl_slist_append(l, line)))
            goto nomem;
        l = t;
    }
    if (!(t = curl_slist_append(l, "Expect:")))
        goto nomem;
    l = t;
    if (req->cred && req->cred->bearer) {
        char *a = NULL;
        if (asprintf(&a, "Authorization: Bearer %s", req->cred->bearer) < 0)
            goto nomem;
        t = curl_slist_append(l, a);
        explicit_bzero(a, strlen(a));
        free(a);
        if (!t)
            goto nomem;
        l = t;
    }
    return l;
nomem:
    curl_slist_free_all(l);
    *rc = KC_ENOMEM;
    return NULL;
}

static void kc__set_tls(kc__http *h, CURL *e, const kc__http_req *req)
{
    const kc_config *cfg = h->cfg;
    if (cfg->ca_pem) {
        struct curl_blob b = {cfg->ca_pem, cfg->ca_len, CURL_BLOB_NOCOPY};
        curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
    }
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, cfg->insecure ? 0L : 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, cfg->insecure ? 0L : 2L);
    const char *cert = cfg->cert_pem, *key = cfg->key_pem;
    size_t cert_len = cfg->cert_len, key_len = cfg->key_len;
    if (req->cred && req->cred->cert_pem && req->cred->key_pem) {
        cert = req->cred->cert_pem;
        key = req->cred->key_pem;
        cert_len = req->cred->cert_len;
        key_len = req->cred->key_len;
    }
    if (cert && key) {
        struct curl_blob cb = {(void *)cert, cert_len, CURL_BLOB_COPY};
        struct curl_blob kb = {(void *)key, key_len, CURL_BLOB_COPY};
        curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cb);
        curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &kb);
        curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
    }
}

/* Every option of one transfer on the (reset) easy handle. */
static void setup_easy(kc__http *h, CURL *e, const kc__http_req *req, const char *url,
                       struct curl_slist *hdrs, struct curl_slist *cto, char *errbuf, kc__xfer *x)
{
    curl_easy_reset(e);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_SHARE, h->share);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(e, CURLOPT_USERAGENT, h->user_agent);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 10L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)KC__CONNECT_TIMEOUT_MS);
    if (!req->stream && req->timeout_ms > 0)
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)req->timeout_ms);
    /* Fewer, larger reads for big LIST bodies and for watch streams alike: recv() returns what
     * is queued without waiting to fill the buffer, so a watch event's latency is unchanged, but a
     * burst of events arrives in one read + one write callback instead of one per 16 KiB (the
     * default), which cut syscalls and partial-line copies in the watch decoder. */
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 256L * 1024);
    if (cto)
        curl_easy_setopt(e, CURLOPT_CONNECT_TO, cto);
    if (h->cfg->proxy_url)
        curl_easy_setopt(e, CURLOPT_PROXY, h->cfg->proxy_url);
    kc__set_tls(h, e, req);
    if (req->cred && req->cred->username) {
        curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(e, CURLOPT_USERNAME, req->cred->username);
        curl_easy_setopt(e, CURLOPT_PASSWORD, req->cred->password ? req->cred->password : "");
    }
    if (strcmp(req->method, "GET") == 0) {
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, req->method);
        if (req->body) {
            curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body);
            curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        }
    }
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, kc__on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, kc__on_progress);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, x);
}

/* Drive the added transfer to its end (or a cancel). *cc: curl's result; *reusable cleared when
 * the connection must not be kept. Returns true when cancelled. */
static bool run_transfer(kc__slot *s, const kc__http_req *req, const kc__xfer *x, CURLcode *cc,
                         bool *reusable)
{
    kc__cancel_reg reg;
    if (req->cancel)
        kc__cancel_attach(req->cancel, &reg, s->multi);
    int running = 1;
    bool cancelled = false;
    for (;;) {
        CURLMcode mc = curl_multi_perform(s->multi, &running);
        if (mc != CURLM_OK) {
            *cc = CURLE_RECV_ERROR;
            *reusable = false;
            break;
        }
        if (req->on_idle && x->status_known == 1)
            req->on_idle(req->idle_ud); /* what one read delivered is decoded: flush it */
        if (!running)
            break;
        if (req->cancel && kc_cancel_fired(req->cancel)) {
            cancelled = true;
            break;
        }
        mc = curl_multi_poll(s->multi, NULL, 0, 1000, NULL);
        if (mc != CURLM_OK) {
            *cc = CURLE_RECV_ERROR;
            *reusable = false;
            break;
        }
    }
    if (!cancelled && !running) {
        int left = 0;
        CURLMsg *m;
        while ((m = curl_multi_info_read(s->multi, &left)))
            if (m->msg == CURLMSG_DONE)
                *cc = m->data.result;
    }
    if (req->cancel)
        kc__cancel_detach(req->cancel, &reg);
    return cancelled;
}

/* The transfer's outcome as a code (0 when it completed; the HTTP status is the caller's). */
static int transfer_result(kc__http *h, CURL *e, const kc__xfer *x, const kc__http_resp *resp,
                           bool cancelled, CURLcode cc, const char *errbuf, bool *reusable,
                           kc_error *err)
{
    if (cancelled) {
        *reusable = false; /* a half-read response cannot be reused */
        return kc_error_set(err, KC_ECANCELED, "request cancelled");
    }
    if (x->fail_code) {
        *reusable = false;
        if (x->fail_code != KC_ETOOLARGE)
            return kc_error_set(err, x->fail_code, "transfer stopped by the receiver");
        if (x->announced > 0 && (uint64_t)x->announced > resp->body.max)
            return kc_error_set(err, KC_ETOOLARGE,
                                "%s %s: response body of %lld bytes (Content-Length) over the "
                                "limit of %zu bytes (kc_client_opts.max_response_bytes)",
                                x->req->method, x->req->path, (long long)x->announced,
                                resp->body.max);
        return kc_error_set(err, KC_ETOOLARGE,
                            "%s %s: response body over the limit of %zu bytes "
                            "(kc_client_opts.max_response_bytes)",
                            x->req->method, x->req->path, resp->body.max);
    }
    if (cc != CURLE_OK) {
        *reusable = false;
        return kc__curl_error(h->cfg->server, e, cc, errbuf, x->status_known != 0, err);
    }
    return 0;
}

int kc__http_do(kc__http *h, const kc__http_req *req, kc__http_resp *resp, kc_error *err)
{
    if (req->cancel && kc_cancel_fired(req->cancel))
        return kc_error_set(err, KC_ECANCELED, "request cancelled");
    kc__slot *s = kc__slot_get(h);
    if (!s)
        return kc_error_set(err, KC_ENOMEM, "out of memory (curl handle)");
    CURL *e = s->easy;
    char errbuf[CURL_ERROR_SIZE] = "";
    char *url = NULL;
    struct curl_slist *hdrs = NULL, *cto = NULL;
    int rc = 0;
    bool reusable = true;
    kc__xfer x = {.h = h, .req = req, .resp = resp, .easy = e, .announced = -1};
    resp->status = 0;
    resp->retry_after_s = -1;
    kc__buf_reset(&resp->body);
    resp->body.max = req->max_body ? req->max_body : KC__RESPONSE_MAX_BYTES;

    if (asprintf(&url, "%s%s", h->base, req->path) < 0) {
        url = NULL;
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
        goto out;
    }
    hdrs = kc__headers(req, &rc);
    if (rc) {
        rc = kc_error_set(err, rc, "out of memory");
        goto out;
    }
    if (h->connect_to && !(cto = curl_slist_append(NULL, h->connect_to))) {
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
        goto out;
    }
    setup_easy(h, e, req, url, hdrs, cto, errbuf, &x);
    if (curl_multi_add_handle(s->multi, e) != CURLM_OK) {
        rc = kc_error_set(err, KC_EIO, "curl_multi_add_handle failed");
        reusable = false;
        goto out;
    }
    CURLcode cc = CURLE_OK;
    bool cancelled = run_transfer(s, req, &x, &cc, &reusable);
    long nconn = 0;
    curl_easy_getinfo(e, CURLINFO_NUM_CONNECTS, &nconn);
    atomic_fetch_add(&h->n_conns, (uint64_t)nconn);
    long code = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
    resp->status = (int)code;
    resp->retry_after_s = kc__curl_retry_after(e);
    curl_multi_remove_handle(s->multi, e);
    rc = transfer_result(h, e, &x, resp, cancelled, cc, errbuf, &reusable, err);
    KC__LOG_DEBUG("http", "%s %s -> %d (%s)", req->method, req->path, resp->status,
                  rc ? kc_errno_name(rc) : "ok");
    curl_easy_reset(e); /* drop pointers to this frame (errbuf, x) and the credentials */
out:
    curl_slist_free_all(hdrs);
    curl_slist_free_all(cto);
    free(url);
    kc__slot_put(h, s, reusable);
    return rc;
}
