/*
 * webhook_migration — admission and conversion webhooks for the example Migration CRD
 * (migrations.example.kcache.io, as examples/migration_operator.c), served by kc_webhook_server.
 *
 *   mutating   /mutate-migration    defaults spec.retries to 3 when absent (kc_doc, then
 *                                   kc_admission_response_set_object: the library makes the patch)
 *   validating /validate-migration  denies a Migration whose Secret (spec.secretName; v1alpha1:
 *                                   spec.secret) does not exist, read from the cache — so the
 *                                   answer is only right once the Secret informer has synced: the
 *                                   server holds early requests until then (/readyz 503 before)
 *   conversion /convert             v1alpha1 (spec.secret) <-> v1 (spec.secretName); the CRD
 *                                   serves both, stores v1, conversion strategy Webhook
 *
 * By default it starts the embedded API server in-process (2,000 Secrets, each page of their LIST
 * delayed 200 ms, so the sync takes a moment), generates a CA and a serving certificate for
 * 127.0.0.1 in a temporary directory (kc_webhook_cert_generate), starts the webhook server,
 * installs the CRD and both webhook configurations pointing at https://127.0.0.1:PORT/… with the CA
 * as caBundle, and shows a denial, a defaulted admission and conversions, with the API server's own
 * words.
 *
 *   webhook_migration                         the demonstration on the embedded server
 *   webhook_migration --kubeconfig FILE       the same against that server (its API server must
 *                                             reach 127.0.0.1: `kcache serve`, or a local cluster)
 *   --serve                                   afterwards keep serving until SIGINT/SIGTERM
 */
#include <kcache/cached_client.h>
#include <kcache/server.h>
#include <kcache/webhook.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const kc_gvr migrations = {"example.kcache.io", "v1", "migrations"};
static const kc_gvr migrations_alpha = {"example.kcache.io", "v1alpha1", "migrations"};
static const kc_gvr secrets = {"", "v1", "secrets"};
static const kc_gvr crds = {"apiextensions.k8s.io", "v1", "customresourcedefinitions"};
static const kc_gvr mwcs = {"admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations"};
static const kc_gvr vwcs = {"admissionregistration.k8s.io", "v1",
                            "validatingwebhookconfigurations"};

/* The Secret informer the validating webhook reads (set before the server starts). */
static kc_informer *g_secrets;

/* ---- the three handlers -------------------------------------------------------------------- */

/* Defaulting: spec.retries = 3 when absent. */
static int mutate(void *ud, const kc_admission_request *req, kc_admission_response *resp)
{
    (void)ud;
    kc_doc *d = NULL;
    kc_error e = KC_ERROR_INIT;
    int rc = kc_doc_from_obj(req->object, &d, &e);
    if (rc == 0 && !kc_doc_has(d, "/spec/retries") &&
        (rc = kc_doc_set_int(d, "/spec/retries", 3, &e)) == 0)
        rc = kc_admission_response_set_object(resp, d);
    kc_doc_free(d);
    kc_error_clear(&e);
    return rc;
}

/* The Secret a Migration names: spec.secretName (v1) or spec.secret (v1alpha1). */
static char *secret_of(const kc_obj *mig)
{
    char *s = NULL;
    if (kc_obj_get_string(mig, "/spec/secretName", &s, NULL, NULL) < 0)
        kc_obj_get_string(mig, "/spec/secret", &s, NULL, NULL);
    return s;
}

/* Validation from the cache: the named Secret must exist. Runs only once the cache is ready. */
static int validate(void *ud, const kc_admission_request *req, kc_admission_response *resp)
{
    (void)ud;
    char *name = req->object ? secret_of(req->object) : NULL;
    char msg[512];
    int rc = 0;
    if (!req->object) {
        rc = 0;
    } else if (!name) {
        rc = kc_admission_response_deny(resp, 422, "Invalid", "spec.secretName is required");
    } else {
        kc_obj *s = kc_store_get(kc_informer_store(g_secrets), req->ns, name);
        snprintf(msg, sizeof msg, "Secret \"%s\" not found in namespace \"%s\"", name, req->ns);
        if (!s)
            rc = kc_admission_response_deny(resp, 0, NULL, msg);
        kc_obj_unref(s);
    }
    free(name);
    return rc;
}

/* Rename a string field (from → to) when present. */
static int move_field(kc_doc *d, const char *from, const char *to, kc_error *err)
{
    const char *v = NULL;
    if (kc_doc_get_string(d, from, &v, NULL, NULL) < 0)
        return 0;
    char *copy = strdup(v);
    int rc = copy ? kc_doc_set_string(d, to, copy, err) : kc_error_set(err, KC_ENOMEM, "oom");
    free(copy);
    return rc < 0 ? rc : kc_doc_remove(d, from, err);
}

/* v1alpha1 spec.secret <-> v1 spec.secretName. */
static int convert(void *ud, const char *desired, kc_doc *obj, kc_error *err)
{
    (void)ud;
    if (!strcmp(desired, "example.kcache.io/v1"))
        return move_field(obj, "/spec/secret", "/spec/secretName", err);
    if (!strcmp(desired, "example.kcache.io/v1alpha1"))
        return move_field(obj, "/spec/secretName", "/spec/secret", err);
    return kc_error_set(err, KC_EINVAL, "cannot convert to %s", desired);
}

/* ---- set-up ------------------------------------------------------------------------------- */

static int fail(const char *what, int rc, const kc_error *e)
{
    fprintf(stderr, "webhook_migration: %s: %s: %s\n", what, kc_errno_name(rc),
            e->message ? e->message : kc_strerror(rc));
    return 1;
}

/* Create an object from printf-style JSON. */
static int create_fmt(kc_client *c, const kc_gvr *gvr, const char *ns, kc_obj **ret, kc_error *e,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int create_fmt(kc_client *c, const kc_gvr *gvr, const char *ns, kc_obj **ret, kc_error *e,
                      const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf)
        return kc_error_set(e, KC_EINVAL, "object too long");
    return kc_client_create(c, gvr, ns, buf, (size_t)n, NULL, ret, e);
}

/* The CRD with both versions and its conversion webhook, then both webhook configurations. */
static int install(kc_client *c, const char *url, const char *ca, kc_error *e)
{
    static const char schema[] = "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
                                 "\"x-kubernetes-preserve-unknown-fields\":true}}";
    int rc = create_fmt(
        c, &crds, NULL, NULL, e,
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
        "\"metadata\":{\"name\":\"migrations.example.kcache.io\"},\"spec\":{\"group\":"
        "\"example.kcache.io\",\"scope\":\"Namespaced\",\"names\":{\"plural\":\"migrations\","
        "\"singular\":\"migration\",\"kind\":\"Migration\"},\"versions\":["
        "{\"name\":\"v1alpha1\",\"served\":true,\"storage\":false,%s},"
        "{\"name\":\"v1\",\"served\":true,\"storage\":true,%s}],\"conversion\":{\"strategy\":"
        "\"Webhook\",\"webhook\":{\"clientConfig\":{\"url\":\"%s/convert\",\"caBundle\":\"%s\"},"
        "\"conversionReviewVersions\":[\"v1\"]}}}}",
        schema, schema, url, ca);
    static const char cfg[] =
        "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":\"%s\",\"metadata\":{"
        "\"name\":\"%s.example.kcache.io\"},\"webhooks\":[{\"name\":\"%s.migrations.example."
        "kcache.io\",\"admissionReviewVersions\":[\"v1\"],\"sideEffects\":\"None\","
        "\"failurePolicy\":\"Fail\",\"timeoutSeconds\":10,\"clientConfig\":{\"url\":\"%s/%s\","
        "\"caBundle\":\"%s\"},\"rules\":[{\"operations\":[\"CREATE\",\"UPDATE\"],\"apiGroups\":"
        "[\"example.kcache.io\"],\"apiVersions\":[\"*\"],\"resources\":[\"migrations\"]}]}]}";
    if (rc == 0)
        rc = create_fmt(c, &mwcs, NULL, NULL, e, cfg, "MutatingWebhookConfiguration",
                        "migration-defaults", "default", url, "mutate-migration", ca);
    if (rc == 0)
        rc = create_fmt(c, &vwcs, NULL, NULL, e, cfg, "ValidatingWebhookConfiguration",
                        "migration-secrets", "validate", url, "validate-migration", ca);
    return rc;
}

/* HTTP status of GET /readyz on the plain health listener ("http://127.0.0.1:PORT"). */
static int readyz(const char *health_url)
{
    int port = 0, code = 0;
    if (!health_url || sscanf(health_url, "http://127.0.0.1:%d", &port) != 1)
        return 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    char buf[256] = "GET /readyz HTTP/1.0\r\n\r\n";
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        write(fd, buf, strlen(buf)) == (ssize_t)strlen(buf)) {
        ssize_t n = read(fd, buf, sizeof buf - 1);
        buf[n > 0 ? n : 0] = '\0';
        if (sscanf(buf, "HTTP/%*s %d", &code) != 1)
            code = 0;
    }
    if (fd >= 0)
        close(fd);
    return code;
}

/* ---- the demonstration -------------------------------------------------------------------- */

typedef struct env {
    kc_client *client;
    kc_cached_client *cc; /* block-on-write over the webhook's cache: a Secret it creates is in
                             the cache when the create returns */
    const char *ns;
} env;

static void show_denial(env *x)
{
    kc_error e = KC_ERROR_INIT;
    int rc = create_fmt(x->client, &migrations, x->ns, NULL, &e,
                        "{\"apiVersion\":\"example.kcache.io/v1\",\"kind\":\"Migration\","
                        "\"metadata\":{\"name\":\"m-missing\"},\"spec\":{\"secretName\":"
                        "\"no-such-secret\"}}");
    if (rc < 0)
        printf("denied (HTTP %d): %s\n", e.http_status, e.message ? e.message : kc_strerror(rc));
    else
        printf("NOT denied: a Migration naming a missing Secret was admitted\n");
    kc_error_clear(&e);
}

static int show_admission(env *x, kc_error *e)
{
    static const char sec[] = "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":"
                              "\"db-credentials\"},\"stringData\":{\"password\":\"example\"}}";
    kc_obj *m = NULL;
    int64_t retries = 0;
    int rc = kc_cached_client_create(x->cc, &secrets, x->ns, sec, strlen(sec), NULL, NULL, NULL, e);
    if (rc == 0)
        rc = create_fmt(x->client, &migrations, x->ns, &m, e,
                        "{\"apiVersion\":\"example.kcache.io/v1\",\"kind\":\"Migration\","
                        "\"metadata\":{\"name\":\"m-ok\"},\"spec\":{\"secretName\":"
                        "\"db-credentials\"}}");
    if (rc == 0 && (rc = kc_obj_get_int(m, "/spec/retries", &retries, e)) == 0)
        printf("admitted: Migration m-ok (Secret db-credentials exists), spec.retries=%lld "
               "defaulted by the mutating webhook\n",
               (long long)retries);
    kc_obj_unref(m);
    return rc;
}

static int show_conversion(env *x, kc_error *e)
{
    kc_obj *a = NULL, *b = NULL;
    char *av = NULL, *secret = NULL, *sn = NULL;
    int rc = kc_client_get(x->client, &migrations_alpha, x->ns, "m-ok", &a, e);
    if (rc == 0 && (rc = kc_obj_get_string(a, "/apiVersion", &av, NULL, e)) == 0 &&
        (rc = kc_obj_get_string(a, "/spec/secret", &secret, NULL, e)) == 0)
        printf("converted: v1alpha1 read of m-ok (stored v1): apiVersion %s, spec.secret %s\n", av,
               secret);
    if (rc == 0)
        rc = create_fmt(x->client, &migrations_alpha, x->ns, NULL, e,
                        "{\"apiVersion\":\"example.kcache.io/v1alpha1\",\"kind\":\"Migration\","
                        "\"metadata\":{\"name\":\"m-alpha\"},\"spec\":{\"secret\":"
                        "\"db-credentials\"}}");
    if (rc == 0 && (rc = kc_client_get(x->client, &migrations, x->ns, "m-alpha", &b, e)) == 0 &&
        (rc = kc_obj_get_string(b, "/spec/secretName", &sn, NULL, e)) == 0)
        printf("converted: v1alpha1 create of m-alpha, read as v1: spec.secretName %s\n", sn);
    free(av);
    free(secret);
    free(sn);
    kc_obj_unref(a);
    kc_obj_unref(b);
    return rc;
}

static volatile sig_atomic_t g_stop;
static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

/* Certificates, the webhook server and its cache, the objects, the three demonstrations. */
static int run(kc_client *client, const char *ns, bool serve, const char *dir)
{
    kc_error e = KC_ERROR_INIT;
    kc_cache *cache = NULL;
    kc_webhook_server *wh = NULL;
    env x = {.client = client, .ns = ns};
    char *ca = NULL, crt[300], key[300];
    const char *ips[] = {"127.0.0.1"};
    kc_webhook_cert_opts co = {.dir = dir, .ip_addresses = ips, .n_ip_addresses = 1};
    kc_informer_opts io = {.ns = ns, .list_mode = KC_INFORMER_LIST_PAGED};
    kc_cached_client_opts cco = {.mode = KC_RYW_BLOCK_ON_WRITE, .ns = ns};
    snprintf(crt, sizeof crt, "%s/tls.crt", dir);
    snprintf(key, sizeof key, "%s/tls.key", dir);
    kc_webhook_server_opts wo = {
        .listen = "127.0.0.1:0", .health_listen = "127.0.0.1:0", .cert_file = crt, .key_file = key};
    int rc, status = 1;
    const char *step = "certificates";
    if ((rc = kc_webhook_cert_generate(&co, &ca, &e)) < 0)
        goto out;
    /* The Secret informer starts before the webhook listener: it needs no conversion webhook.
     * A cache of a CRD that this server converts must start after kc_webhook_server_start (its
     * LIST calls the conversion webhook: docs/webhooks.md). */
    step = "cache";
    if ((rc = kc_cache_new(client, NULL, &cache, &e)) < 0 ||
        (rc = kc_cache_get_informer(cache, &secrets, &io, &g_secrets, &e)) < 0 ||
        (rc = kc_cached_client_new(client, cache, &cco, &x.cc, &e)) < 0)
        goto out;
    step = "webhook server";
    wo.cache = cache; /* readiness and the early requests' wait follow its Secret informer */
    if ((rc = kc_webhook_server_new(&wo, &wh, &e)) < 0 ||
        (rc = kc_webhook_server_add_mutating(wh, "/mutate-migration", mutate, NULL, NULL, &e)) <
            0 ||
        (rc = kc_webhook_server_add_validating(wh, "/validate-migration", validate, NULL, NULL,
                                               &e)) < 0 ||
        (rc = kc_webhook_server_add_conversion(wh, "/convert", convert, NULL, NULL, &e)) < 0 ||
        (rc = kc_webhook_server_start(wh, &e)) < 0)
        goto out;
    printf("webhook server %s, probes %s\n", kc_webhook_server_url(wh),
           kc_webhook_server_health_url(wh));
    printf("before sync: ready=%s, /readyz %d\n", kc_webhook_server_ready(wh) ? "true" : "false",
           readyz(kc_webhook_server_health_url(wh)));
    step = "installing the CRD and the webhook configurations";
    if ((rc = install(client, kc_webhook_server_url(wh), ca, &e)) < 0)
        goto out;
    step = "waiting for the cache";
    if ((rc = kc_cache_wait_synced(cache, 60000, &e)) < 0)
        goto out;
    printf("after sync: ready=%s, /readyz %d (%zu Secrets in the cache)\n",
           kc_webhook_server_ready(wh) ? "true" : "false", readyz(kc_webhook_server_health_url(wh)),
           kc_store_len(kc_informer_store(g_secrets)));
    show_denial(&x);
    step = "admission";
    if ((rc = show_admission(&x, &e)) < 0)
        goto out;
    step = "conversion";
    if ((rc = show_conversion(&x, &e)) < 0)
        goto out;
    if (serve) {
        printf("webhook_migration: serving (SIGINT or SIGTERM stops)\n");
        fflush(stdout);
        while (!g_stop)
            pause();
    }
    printf("webhook_migration: done\n");
    status = 0;
out:
    if (status)
        fail(step, rc, &e);
    kc_error_clear(&e);
    kc_webhook_server_free(wh);
    kc_cached_client_free(x.cc);
    kc_cache_free(cache);
    free(ca);
    return status;
}

int main(int argc, char **argv)
{
    const char *kubeconfig = NULL;
    bool serve = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--kubeconfig") && i + 1 < argc)
            kubeconfig = argv[++i];
        else if (!strcmp(argv[i], "--serve"))
            serve = true;
        else {
            fprintf(stderr, "usage: %s [--kubeconfig FILE] [--serve]\n", argv[0]);
            return 2;
        }
    }
    if (signal(SIGINT, on_signal) == SIG_ERR || signal(SIGTERM, on_signal) == SIG_ERR)
        return 1;
    char dir[] = "/tmp/webhook_migration.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    kc_server *srv = NULL;
    kc_config *cfg = NULL;
    kc_client *client = NULL;
    kc_error e = KC_ERROR_INIT;
    int rc;
    if (kubeconfig) {
        kc_config_opts co = {.kubeconfig = kubeconfig};
        rc = kc_config_load(&co, &cfg, &e);
    } else {
        /* 2,000 Secrets listed in 4 pages of 500, each delayed 200 ms: /readyz is 503
         * meanwhile. */
        kc_server_faults f = {.list_delay_min_ms = 200, .list_delay_max_ms = 200};
        kc_server_opts so = {.listen = "127.0.0.1:0",
                             .quiet = true,
                             .seed_spec = "secrets=2000:ns=default",
                             .faults = &f,
                             .faults_size = sizeof f};
        rc = kc_server_new(&so, &srv, &e);
        if (rc == 0)
            rc = kc_server_start(srv, &e);
        if (rc == 0)
            rc = kc_config_from_url(kc_server_url(srv), NULL, NULL, &cfg, &e);
    }
    if (rc == 0)
        rc = kc_client_new(cfg, NULL, &client, &e);
    int status = 1;
    if (rc < 0)
        fail(kubeconfig ? kubeconfig : "embedded server", rc, &e);
    else
        status = run(client, kubeconfig ? kc_config_namespace(cfg) : "default", serve, dir);
    kc_error_clear(&e);
    kc_client_free(client);
    kc_config_unref(cfg);
    kc_server_free(srv);
    static const char *const files[] = {"ca.crt", "ca.key", "tls.crt", "tls.key"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[300];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
    return status;
}
