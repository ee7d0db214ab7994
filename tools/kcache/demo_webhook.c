/*
 * demo_webhook.c — section 6 of `kcache demo`: a validating admission webhook that must not answer
 * from a cache that has not synced, and a certificate rotation under load.
 *
 * Its own embedded API server holds S Secrets (seeded) whose paged LIST is slow (each page delayed
 * by the server's listDelay fault), and a kc_webhook_server whose validating handler answers "does
 * the Secret named by this ConfigMap (data.secret) exist?" from a kc_cache with a Secret informer.
 * Every ConfigMap created names a Secret that exists, so every denial "not found" is a wrong
 * answer. Three runs of N creates through the API server (which calls the webhook, as
 * kube-apiserver does), 32 client threads each:
 *
 *   ungated   a fresh cache, the handler registered with no_cache_wait: requests arriving while
 *             the Secrets are still being listed are answered from a partial cache — wrong
 *             denials (expected > 0);
 *   gated     a fresh cache, the handler with the defaults: an early request waits for the sync
 *             (at most ready_wait_ms) or is answered by the not-ready policy (a 503 denial, counted
 *             apart: an honest "not now", not a wrong answer) — wrong answers expected 0;
 *   rotation  the gated server, synced: the request that reaches N/2 regenerates the serving
 *             certificate with the same CA (kc_webhook_cert_generate reuse_ca) and reloads it
 *             while the other threads go on — failed admissions expected 0.
 * Each run registers its own ValidatingWebhookConfiguration (clientConfig.url to the run's server,
 * the CA as caBundle), replacing the previous one.
 */
#include "cli.h"
#include "demo_common.h"

#include "kcache/server.h"
#include "kcache/webhook.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WH_NS            "kcache-demo-webhook"
#define WH_SECRETS       3000u
#define WH_LIST_DELAY_MS 100u
#define WH_THREADS       32u

static const kc_gvr cms = {"", "v1", "configmaps"};
static const kc_gvr vwcs = {"admissionregistration.k8s.io", "v1",
                            "validatingwebhookconfigurations"};

typedef struct wh_ctx {
    kc_client *client;
    char dir[64], crt[96], key[96];
    char *ca; /* caBundle */
    kc_informer *secrets;
    kc_webhook_server *wh;
    unsigned n;
} wh_ctx;

/* The handler: the named Secret must be in the cache. */
static int validate(void *ud, const kc_admission_request *req, kc_admission_response *resp)
{
    wh_ctx *c = ud;
    char *name = NULL, msg[256];
    if (!req->object || kc_obj_get_string(req->object, "/data/secret", &name, NULL, NULL) < 0)
        return kc_admission_response_deny(resp, 422, "Invalid", "data.secret is required");
    kc_obj *s = kc_store_get(kc_informer_store(c->secrets), req->ns, name);
    snprintf(msg, sizeof msg, "Secret \"%s\" not found", name);
    int rc = s ? 0 : kc_admission_response_deny(resp, 0, NULL, msg);
    kc_obj_unref(s);
    free(name);
    return rc;
}

/* One run's counts. */
typedef struct wh_run {
    wh_ctx *c;
    const char *prefix;
    bool rotate;
    atomic_uint next, ok, wrong, policy, failed;
    double *ms;
    pthread_mutex_t mu;
    char first_err[256];
    int rotate_rc;
    double rotate_ms;
} wh_run;

static void rotate_now(wh_run *r)
{
    const char *ips[] = {"127.0.0.1"};
    kc_webhook_cert_opts co = {
        .dir = r->c->dir, .ip_addresses = ips, .n_ip_addresses = 1, .reuse_ca = true};
    kc_error e = KC_ERROR_INIT;
    uint64_t t0 = kc__cli_now_ns();
    r->rotate_rc = kc_webhook_cert_generate(&co, NULL, &e);
    if (r->rotate_rc == 0)
        r->rotate_rc = kc_webhook_server_reload_certs(r->c->wh, &e);
    r->rotate_ms = (double)(kc__cli_now_ns() - t0) / 1e6;
    kc_error_clear(&e);
}

static void one(wh_run *r, unsigned i)
{
    char body[512];
    int len = snprintf(body, sizeof body,
                       "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                       "\"%s-%05u\"},\"data\":{\"secret\":\"secret-%05u\"}}",
                       r->prefix, i, (i * 7919u) % WH_SECRETS);
    kc_error e = KC_ERROR_INIT;
    uint64_t t0 = kc__cli_now_ns();
    int rc = kc_client_create(r->c->client, &cms, WH_NS, body, (size_t)len, NULL, NULL, &e);
    r->ms[i] = (double)(kc__cli_now_ns() - t0) / 1e6;
    if (rc == 0)
        atomic_fetch_add(&r->ok, 1);
    else if (e.http_status == 503) /* the not-ready policy's answer */
        atomic_fetch_add(&r->policy, 1);
    else if (e.http_status == 403 && e.message && strstr(e.message, "not found"))
        atomic_fetch_add(&r->wrong, 1); /* the Secret exists: the cache did not have it yet */
    else {
        atomic_fetch_add(&r->failed, 1);
        pthread_mutex_lock(&r->mu);
        if (!r->first_err[0])
            snprintf(r->first_err, sizeof r->first_err, "%s",
                     e.message ? e.message : kc_strerror(rc));
        pthread_mutex_unlock(&r->mu);
    }
    kc_error_clear(&e);
}

static void *worker(void *arg)
{
    wh_run *r = arg;
    for (unsigned i; (i = atomic_fetch_add(&r->next, 1)) < r->c->n;) {
        if (r->rotate && i == r->c->n / 2)
            rotate_now(r); /* the others keep sending meanwhile */
        one(r, i);
    }
    return NULL;
}

/* N creates from WH_THREADS threads. */
static void send_all(wh_run *r)
{
    pthread_t th[WH_THREADS];
    unsigned started = 0;
    for (; started < WH_THREADS; started++)
        if (pthread_create(&th[started], NULL, worker, r) != 0)
            break;
    if (!started)
        worker(r);
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (r->first_err[0])
        fprintf(stderr, "kcache demo: webhook run %s: %u failed, first: %s\n", r->prefix,
                atomic_load(&r->failed), r->first_err);
}

/* A fresh cache (its Secret LIST starts now) and webhook server; the configuration points at it. */
static int start_webhook(wh_ctx *c, bool gated, kc_cache **ret_cache, kc_error *e)
{
    kc_informer_opts io = {.ns = WH_NS, .list_mode = KC_INFORMER_LIST_PAGED};
    kc_webhook_server_opts wo = {
        .listen = "127.0.0.1:0", .cert_file = c->crt, .key_file = c->key, .workers = 8};
    kc_webhook_handler_opts ho = {.name = gated ? "gated" : "ungated", .no_cache_wait = !gated};
    int rc;
    if ((rc = kc_cache_new(c->client, NULL, ret_cache, e)) < 0 ||
        (rc = kc_cache_get_informer(*ret_cache, &demo_secrets, &io, &c->secrets, e)) < 0)
        return rc;
    wo.cache = *ret_cache;
    if ((rc = kc_webhook_server_new(&wo, &c->wh, e)) < 0 ||
        (rc = kc_webhook_server_add_validating(c->wh, "/validate", validate, c, &ho, e)) < 0 ||
        (rc = kc_webhook_server_start(c->wh, e)) < 0)
        return rc;
    rc = kc_client_delete(c->client, &vwcs, NULL, "kcache-demo", NULL, NULL, e);
    if (rc < 0 && rc != KC_ENOTFOUND)
        return rc;
    char cfg[4096];
    int len = snprintf(
        cfg, sizeof cfg,
        "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
        "\"ValidatingWebhookConfiguration\",\"metadata\":{\"name\":\"kcache-demo\"},\"webhooks\":"
        "[{\"name\":\"secret-exists.kcache.io\",\"admissionReviewVersions\":[\"v1\"],"
        "\"sideEffects\":\"None\",\"timeoutSeconds\":10,\"clientConfig\":{\"url\":\"%s/validate\","
        "\"caBundle\":\"%s\"},\"rules\":[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"\"],"
        "\"apiVersions\":[\"v1\"],\"resources\":[\"configmaps\"]}]}]}",
        kc_webhook_server_url(c->wh), c->ca);
    if (len < 0 || (size_t)len >= sizeof cfg)
        return kc_error_set(e, KC_EINVAL, "webhook configuration too long");
    kc_error_clear(e);
    return kc_client_create(c->client, &vwcs, NULL, cfg, (size_t)len, NULL, NULL, e);
}

static void stop_webhook(wh_ctx *c, kc_cache *cache)
{
    kc_webhook_server_free(c->wh);
    c->wh = NULL;
    kc_cache_free(cache);
}

static int run_one(wh_ctx *c, wh_run *r, const char *prefix, bool rotate)
{
    r->c = c;
    r->prefix = prefix;
    r->rotate = rotate;
    r->ms = calloc(c->n, sizeof(double));
    if (!r->ms)
        return KC_ENOMEM;
    pthread_mutex_init(&r->mu, NULL);
    send_all(r);
    pthread_mutex_destroy(&r->mu);
    return 0;
}

/* The three runs over a started server. */
static int runs(wh_ctx *c, demo_wh_result *ret, kc_error *e)
{
    kc_cache *cache = NULL;
    wh_run u = {0}, g = {0}, rot = {0};
    int rc = start_webhook(c, false, &cache, e);
    uint64_t t0 = kc__cli_now_ns();
    if (rc == 0 && (rc = run_one(c, &u, "ungated", false)) == 0)
        ret->ungated_s = (double)(kc__cli_now_ns() - t0) / 1e9;
    stop_webhook(c, cache);
    cache = NULL;
    if (rc == 0)
        rc = start_webhook(c, true, &cache, e);
    t0 = kc__cli_now_ns();
    if (rc == 0 && (rc = run_one(c, &g, "gated", false)) == 0)
        ret->gated_s = (double)(kc__cli_now_ns() - t0) / 1e9;
    if (rc == 0 && (rc = kc_cache_wait_synced(cache, 60000, e)) == 0)
        rc = run_one(c, &rot, "rotation", true);
    stop_webhook(c, cache);
    ret->wrong_ungated = atomic_load(&u.wrong);
    ret->failed_ungated = atomic_load(&u.failed);
    ret->wrong_gated = atomic_load(&g.wrong);
    ret->not_ready_gated = atomic_load(&g.policy);
    ret->failed_gated = atomic_load(&g.failed);
    ret->failed_rotation =
        atomic_load(&rot.failed) + atomic_load(&rot.wrong) + atomic_load(&rot.policy);
    ret->rotated = rc == 0 && rot.rotate_rc == 0;
    ret->rotate_ms = rot.rotate_ms;
    if (rc == 0) {
        ret->gated_p99_ms = demo_percentile(g.ms, c->n, 99);
        ret->admission_p50_ms = demo_percentile(rot.ms, c->n, 50);
        ret->admission_p99_ms = demo_percentile(rot.ms, c->n, 99);
    }
    free(u.ms);
    free(g.ms);
    free(rot.ms);
    return rc < 0 && !e->code ? kc_error_set(e, rc, "webhook demo: %s", kc_strerror(rc)) : rc;
}

static void remove_certs(const char *dir)
{
    static const char *const files[] = {"ca.crt", "ca.key", "tls.crt", "tls.key"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
}

int demo_webhook(const demo_opts *o, demo_wh_result *ret, kc_error *err)
{
    memset(ret, 0, sizeof(*ret));
    ret->n = o->n_webhook;
    ret->secrets = WH_SECRETS;
    ret->list_delay_ms = WH_LIST_DELAY_MS;
    wh_ctx c = {.n = o->n_webhook};
    snprintf(c.dir, sizeof c.dir, "/tmp/kcache-demo-webhook.XXXXXX");
    if (!mkdtemp(c.dir))
        return kc_error_set(err, KC_EIO, "mkdtemp %s failed", c.dir);
    snprintf(c.crt, sizeof c.crt, "%s/tls.crt", c.dir);
    snprintf(c.key, sizeof c.key, "%s/tls.key", c.dir);
    char seed[64];
    snprintf(seed, sizeof seed, "secrets=%u:ns=" WH_NS, WH_SECRETS);
    kc_server_faults f = {.list_delay_min_ms = WH_LIST_DELAY_MS,
                          .list_delay_max_ms = WH_LIST_DELAY_MS};
    kc_server_opts so = {.listen = "127.0.0.1:0",
                         .quiet = true,
                         .seed_spec = seed,
                         .faults = &f,
                         .faults_size = sizeof f};
    const char *ips[] = {"127.0.0.1"};
    kc_webhook_cert_opts co = {.dir = c.dir, .ip_addresses = ips, .n_ip_addresses = 1};
    kc_client_opts clo = {.qps = -1};
    kc_server *srv = NULL;
    kc_config *cfg = NULL;
    int rc;
    if ((rc = kc_webhook_cert_generate(&co, &c.ca, err)) == 0 &&
        (rc = kc_server_new(&so, &srv, err)) == 0 && (rc = kc_server_start(srv, err)) == 0 &&
        (rc = kc_config_from_url(kc_server_url(srv), NULL, NULL, &cfg, err)) == 0 &&
        (rc = kc_client_new(cfg, &clo, &c.client, err)) == 0)
        rc = runs(&c, ret, err);
    kc_client_free(c.client);
    kc_config_unref(cfg);
    kc_server_free(srv);
    free(c.ca);
    remove_certs(c.dir);
    return rc;
}
