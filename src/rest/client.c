/*
 * rest/client.c — kc_client lifecycle and the request core every verb goes through:
 *
 *   for each attempt:
 *     wait for the token bucket (watches too: a watch that a server ends at once must not
 *       restart faster than qps; the wait ends early when the request is cancelled)
 *     take the current credential (exec plugin / token file refresh happens here)
 *     send (transport.c)
 *     401 and the credential can be refreshed → refresh once, re-send
 *     429 or 5xx with an integer Retry-After, attempts left, budget left, and the verb is
 *       idempotent (or the status is 429: the server did not process the request) → sleep
 *       min(Retry-After, retry_after_max_ms), re-send (a hostile "Retry-After: 999999" costs at
 *       most the cap per attempt, never the call's whole budget; issue 29 point 3)
 *     otherwise map the status: 2xx → 0; Status body → kc_status_parse; other body → code from
 *       the HTTP status with the start of the body as message
 *
 * No lock is held across the network; the only shared mutable state is inside kc__auth,
 * kc__ratelimit, the transport's handle pool, and the discovery pointer (each with its own lock).
 */
#include "rest/internal.h"

#include <stdlib.h>
#include <string.h>

#define KC__DEFAULT_QPS        50.0
#define KC__DEFAULT_BURST      100
#define KC__DEFAULT_RETRIES    5
#define KC__DEFAULT_TIMEOUT_MS 30000
#define KC__DEFAULT_RA_MAX_MS  10000

static bool kc__config_has_credentials(const kc_config *c)
{
    return c->token || c->token_file || c->username || c->exec;
}

int(kc_client_new)(const kc_config *cfg, const kc_client_opts *opts, size_t opts_size,
                   kc_client **ret, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_client_opts, err);
    kc_client_opts none = {0};
    if (!cfg || !ret)
        return kc_error_set(err, KC_EINVAL, "kc_client_new: cfg and ret are required");
    if (!opts)
        opts = &none;
    if (kc__starts_with(cfg->server, "http://") && kc__config_has_credentials(cfg) &&
        !opts->allow_insecure_credentials && !kc__url_is_loopback(cfg->server))
        return kc_error_set(err, KC_ECONFIG,
                            "refusing to send credentials over plain http to %s (use https, or "
                            "set allow_insecure_credentials)",
                            cfg->server);
    kc_client *c = calloc(1, sizeof *c);
    if (!c)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    pthread_mutex_init(&c->disc_mu, NULL);
    c->cfg = kc_config_ref(cfg);
    double qps = opts->qps == 0 ? KC__DEFAULT_QPS : opts->qps;
    int burst = opts->burst == 0 ? KC__DEFAULT_BURST : opts->burst;
    c->max_retries = opts->max_retries == 0 ? KC__DEFAULT_RETRIES
                                            : (opts->max_retries < 0 ? 0 : opts->max_retries);
    c->timeout_ms =
        opts->request_timeout_ms == 0 ? KC__DEFAULT_TIMEOUT_MS : opts->request_timeout_ms;
    c->retry_after_max_ms =
        opts->retry_after_max_ms <= 0 ? KC__DEFAULT_RA_MAX_MS : opts->retry_after_max_ms;
    if (c->retry_after_max_ms > KC__RETRY_BUDGET_MS)
        c->retry_after_max_ms = KC__RETRY_BUDGET_MS;
    c->max_response = opts->max_response_bytes ? opts->max_response_bytes : KC__RESPONSE_MAX_BYTES;
    int rc = kc__ratelimit_init(&c->rl, qps, burst);
    if (rc) {
        pthread_mutex_destroy(&c->disc_mu);
        kc_config_unref(c->cfg);
        free(c);
        return kc_error_set(err, rc, "out of memory");
    }
    c->auth = kc__auth_new(cfg);
    if (!c->auth) {
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
        goto fail;
    }
    rc = kc__http_new(cfg, opts->user_agent, &c->http, err);
    if (rc)
        goto fail;
    *ret = c;
    return 0;
fail:
    kc_client_free(c);
    return rc;
}

void(kc_client_get_stats)(kc_client *c, kc_client_stats *ret, size_t ret_size)
{
    kc_client_stats st = {0};
    if (c) {
        st.bytes_received = kc__http_bytes_received(c->http);
        st.connections = kc__http_connections(c->http);
    }
    kc__result_copy(ret, ret_size, &st, sizeof st);
}

void kc_client_free(kc_client *c)
{
    if (!c)
        return;
    kc__http_free(c->http);
    kc__auth_free(c->auth);
    kc__ratelimit_destroy(&c->rl);
    kc__disc_free(c->disc);
    pthread_mutex_destroy(&c->disc_mu);
    kc_config_unref(c->cfg);
    free(c);
}

const char *kc_client_namespace(const kc_client *c)
{
    return c ? c->cfg->ns : NULL;
}

int kc__client_status_error(const kc__http_resp *resp, const char *method, const char *path,
                            kc_error *err)
{
    const char *body = resp->body.data ? resp->body.data : "";
    size_t len = resp->body.len;
    int code = kc_errno_from_http(resp->status, NULL);
    if (len > 0 && body[0] == '{') {
        kc_error tmp = KC_ERROR_INIT;
        int sc = kc_status_parse(body, len, &tmp);
        if (sc < 0 && sc != KC_EPARSE) {
            if (err) {
                kc_error_clear(err);
                *err = tmp;
                err->http_status = resp->status;
                if (err->retry_after_s < 0)
                    err->retry_after_s = resp->retry_after_s;
            } else {
                kc_error_clear(&tmp);
            }
            return sc;
        }
        kc_error_clear(&tmp);
    }
    /* Not a Status (e.g. APF's plain-text 429): code from the HTTP status. */
    size_t show = len;
    while (show > 0 && (body[show - 1] == '\n' || body[show - 1] == '\r'))
        show--;
    if (show > 200)
        show = 200;
    kc_error_set(err, code, "%s %s: HTTP %d%s%.*s", method, path, resp->status, show ? ": " : "",
                 (int)show, body);
    if (err) {
        err->http_status = resp->status;
        err->retry_after_s = resp->retry_after_s;
    }
    return code;
}

/* Sleep ns in slices, so a cancelled request (a watch being stopped) does not wait it out; false
 * when cancelled. */
static bool sleep_unless_cancelled(const kc_cancel *cancel, uint64_t ns)
{
    uint64_t until = kc__now_ns() + ns;
    while (!(cancel && kc_cancel_fired(cancel))) {
        uint64_t now = kc__now_ns();
        if (now >= until)
            return true;
        uint64_t left = until - now;
        kc__sleep_ns(left < 50 * KC__NS_PER_MS ? left : 50 * KC__NS_PER_MS);
    }
    return false;
}

int kc__client_call(kc_client *c, kc__http_req *req, bool idempotent, kc__http_resp *resp,
                    kc_error *err)
{
    uint64_t start = kc__now_ms();
    int attempts = 0;
    bool refreshed = false;
    for (;;) {
        if (!sleep_unless_cancelled(req->cancel, kc__ratelimit_reserve(&c->rl)))
            return kc_error_set(err, KC_ECANCELED, "request cancelled");
        kc__cred cred = {0};
        int rc = kc__auth_get(c->auth, &cred, err);
        if (rc)
            return rc;
        req->cred = &cred;
        req->timeout_ms = req->stream ? 0 : c->timeout_ms;
        if (!req->max_body)
            req->max_body = c->max_response;
        rc = kc__http_do(c->http, req, resp, err);
        req->cred = NULL;
        uint64_t gen = cred.generation;
        kc__cred_clear(&cred);
        if (rc)
            return rc;
        int st = resp->status;
        if (st >= 200 && st < 300)
            return 0;
        if (st == 401 && !refreshed && kc__auth_invalidate(c->auth, gen)) {
            refreshed = true;
            continue;
        }
        bool retryable = (st == 429 || (st >= 500 && st <= 599)) && resp->retry_after_s >= 0 &&
                         (idempotent || st == 429) && attempts < c->max_retries;
        if (retryable) {
            uint64_t wait_ms = (uint64_t)resp->retry_after_s * 1000;
            if (wait_ms > (uint64_t)c->retry_after_max_ms)
                wait_ms = (uint64_t)c->retry_after_max_ms; /* honoured, but bounded */
            if (kc__now_ms() - start + wait_ms <= KC__RETRY_BUDGET_MS &&
                !(req->cancel && kc_cancel_fired(req->cancel))) {
                attempts++;
                KC__LOG_DEBUG("rest", "%s %s: HTTP %d, retry %d after %llu ms (Retry-After: %d)",
                              req->method, req->path, st, attempts, (unsigned long long)wait_ms,
                              resp->retry_after_s);
                if (!sleep_unless_cancelled(req->cancel, wait_ms * KC__NS_PER_MS))
                    return kc_error_set(err, KC_ECANCELED, "request cancelled");
                continue;
            }
        }
        return kc__client_status_error(resp, req->method, req->path, err);
    }
}

int kc_client_raw(kc_client *c, const char *method, const char *path_and_query,
                  const char *content_type, const char *body, size_t len, int *ret_status,
                  char **ret_body, size_t *ret_len, kc_error *err)
{
    if (!c || !method || !path_and_query || path_and_query[0] != '/')
        return kc_error_set(err, KC_EINVAL,
                            "kc_client_raw: method and a path starting with '/' "
                            "are required");
    kc__http_req req = {.method = method,
                        .path = path_and_query,
                        .content_type = content_type,
                        .body = body,
                        .body_len = body ? len : 0};
    kc__http_resp resp;
    kc__http_resp_init(&resp);
    bool idem = strcmp(method, "POST") != 0 && strcmp(method, "PATCH") != 0;
    int rc = kc__client_call(c, &req, idem, &resp, err);
    if (rc && resp.status == 0) {
        kc__http_resp_free(&resp);
        return rc;
    }
    if (rc)
        kc_error_clear(err); /* an HTTP answer: the caller reads the status */
    if (ret_body) {
        char *b = kc__buf_steal(&resp.body, ret_len);
        if (!b) {
            kc__http_resp_free(&resp);
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        }
        *ret_body = b;
    }
    if (ret_status)
        *ret_status = resp.status;
    kc__http_resp_free(&resp);
    return 0;
}
