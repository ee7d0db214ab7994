/*
 * bench_webhook.c — admission throughput and latency of kc_webhook_server against a floor on the
 * same TLS stack (issue 32 point 11).
 *
 * Set-up (one process): the in-process API server seeded with 1,000 Secrets in "default"; a
 * kc_cache with a Secret informer over it, synced; one kc_webhook_server (TLS on 127.0.0.1:0, a
 * certificate from kc_webhook_cert_generate, 4 workers) with three routes:
 *   validate — a validating handler that reads spec.secretRef.name of the object and looks the
 *              Secret up in the cache's store (kc_store_get; denies when absent), as a webhook
 *              that "denies a Migration naming a Secret that does not exist" does;
 *   mutate   — a mutating handler that edits the object through kc_doc (defaults spec.mode, adds
 *              a label) and returns it: the library computes the JSONPatch;
 *   raw      — the floor: the same server and transport (OpenSSL front end, libmicrohttpd, bounds,
 *              handler pool, metrics), but its review step (kc__wh_server_add_raw, internal and
 *              used only here) returns a fixed allowed AdmissionReview without decoding anything.
 * The floor shares every byte of the transport with the measured path, so the ratio is the cost
 * of decoding the review, the handler and encoding the answer — not of a different TLS stack.
 * Request body: one AdmissionReview (CREATE) of a ~3 KB Migration object (metadata with labels,
 * annotations and managedFields; a spec of 12 steps).
 *
 * Clients: libcurl easy handles (OpenSSL), one keep-alive connection each, C = 1 and C = 4
 * concurrent connections, each on its own thread sending requests back to back. Per run: N
 * requests in all (N/C per connection); every answer must be HTTP 200 (checked). Per request the
 * client's wall time (curl_easy_perform) is kept; per run: throughput (N / wall time), p50 and
 * p99 of the latencies, and CPU: the process's (getrusage RUSAGE_SELF, user + system) and the
 * server side's = the process's minus the client threads' own (RUSAGE_THREAD), divided by N.
 * "Requests/s per core" is N / server-side CPU seconds.
 *
 * Method: warm-up (every connection opened, 200 requests on each route), then R rounds; in each
 * round, for each C, the routes run in the order raw, validate, mutate, alternating A B A B over
 * the rounds (the first route of a round rotates, so none always follows the same neighbour).
 * Figures: medians over the rounds; ratios are the median of the per-round ratios (time per
 * request of a route ÷ the floor's in the same round). The machine is a shared 2-vCPU VM: client
 * and server share the two cores, so wall-clock figures move with the neighbours' load; the
 * per-round ratios and CPU per request are the steadier figures.
 *
 * Usage: bench_webhook [N (default 4000)] [R (default 5)]
 * Prints human text and `BENCH <metric> <value> <unit>` lines.
 */
#include "core/internal.h"
#include "kcache/cache.h"
#include "kcache/server.h"
#include "kcache/webhook.h"
#include "webhook/internal.h"

#include "proc_usage.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONN   4
#define MAX_ROUNDS 15
#define N_ROUTES   3

static const char *const ROUTES[N_ROUTES] = {"raw", "validate", "mutate"};
static const unsigned CONNS[] = {1, 4};
#define N_CONNS (sizeof CONNS / sizeof CONNS[0])

static const kc_gvr SECRETS = {"", "v1", "secrets"};

static void die(const char *what, int rc, const kc_error *e)
{
    fprintf(stderr, "bench_webhook: %s: %s%s%s\n", what, kc_strerror(rc),
            e && e->message ? ": " : "", e && e->message ? e->message : "");
    exit(1);
}

static double now_s(void)
{
    return (double)kc__now_ns() / 1e9;
}

static double thread_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* ---- the request body ------------------------------------------------------------------------ */

/* One AdmissionReview of a Migration naming secret-00042 (exists in the cache). ~3 KB object. */
static char *make_review(size_t *ret_len)
{
    kc__buf b = KC__BUF_INIT(0);
    kc__buf_printf(
        &b,
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
        "\"uid\":\"705ab4f5-6393-11e8-b7cc-42010a800002\",\"kind\":{\"group\":\"example.kcache."
        "io\",\"version\":\"v1\",\"kind\":\"Migration\"},\"resource\":{\"group\":\"example.kcache."
        "io\",\"version\":\"v1\",\"resource\":\"migrations\"},\"requestKind\":{\"group\":"
        "\"example.kcache.io\",\"version\":\"v1\",\"kind\":\"Migration\"},\"requestResource\":{"
        "\"group\":\"example.kcache.io\",\"version\":\"v1\",\"resource\":\"migrations\"},"
        "\"name\":\"orders-db-7f3c\",\"namespace\":\"default\",\"operation\":\"CREATE\","
        "\"userInfo\":{\"username\":\"system:serviceaccount:ops:migrator\",\"uid\":\"8c3e1f7a-"
        "2b44-4c1d-9d55-0a6e1f2b3c4d\",\"groups\":[\"system:serviceaccounts\",\"system:"
        "serviceaccounts:ops\",\"system:authenticated\"]},\"object\":{\"apiVersion\":\"example."
        "kcache.io/v1\",\"kind\":\"Migration\",\"metadata\":{\"name\":\"orders-db-7f3c\","
        "\"namespace\":\"default\",\"uid\":\"3f9d5e2a-8b71-4c6e-a0d4-5b7c9e1f2a3b\","
        "\"generation\":1,\"creationTimestamp\":\"2026-12-07T16:00:00Z\",\"labels\":{\"app\":"
        "\"orders\",\"tier\":\"db\",\"team\":\"payments\",\"env\":\"production\"},"
        "\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":\"{\\\"apiVersion"
        "\\\":\\\"example.kcache.io/v1\\\",\\\"kind\\\":\\\"Migration\\\",\\\"metadata\\\":{"
        "\\\"name\\\":\\\"orders-db-7f3c\\\",\\\"namespace\\\":\\\"default\\\"},\\\"spec\\\":{"
        "\\\"database\\\":\\\"orders\\\",\\\"secretRef\\\":{\\\"name\\\":\\\"secret-00042\\\"}}}"
        "\\n\",\"example.kcache.io/owner\":\"payments-platform\"},\"managedFields\":[{"
        "\"manager\":\"kubectl-client-side-apply\",\"operation\":\"Update\",\"apiVersion\":"
        "\"example.kcache.io/v1\",\"time\":\"2026-12-07T16:00:00Z\",\"fieldsType\":\"FieldsV1\","
        "\"fieldsV1\":{\"f:metadata\":{\"f:annotations\":{\".\":{},\"f:kubectl.kubernetes.io/"
        "last-applied-configuration\":{},\"f:example.kcache.io/owner\":{}},\"f:labels\":{\".\":{},"
        "\"f:app\":{},\"f:tier\":{},\"f:team\":{},\"f:env\":{}}},\"f:spec\":{\".\":{},"
        "\"f:database\":{},\"f:secretRef\":{\".\":{},\"f:name\":{}},\"f:steps\":{},"
        "\"f:timeoutSeconds\":{}}}}]},\"spec\":{\"database\":\"orders\",\"secretRef\":{\"name\":"
        "\"secret-00042\"},\"timeoutSeconds\":600,\"steps\":[");
    for (int i = 0; i < 12; i++)
        kc__buf_printf(&b,
                       "%s{\"name\":\"step-%02d\",\"sql\":\"ALTER TABLE orders_%02d ADD COLUMN "
                       "note_%02d text NULL\",\"retries\":%d,\"online\":%s}",
                       i ? "," : "", i, i, i, i % 3, i % 2 ? "true" : "false");
    kc__buf_printf(&b, "]}},\"oldObject\":null,\"dryRun\":false,\"options\":{\"apiVersion\":"
                       "\"meta.k8s.io/v1\",\"kind\":\"CreateOptions\"}}}");
    return kc__buf_steal(&b, ret_len);
}

/* ---- the handlers ---------------------------------------------------------------------------- */

/* Denies a Migration whose spec.secretRef.name is not a Secret in the cache (its namespace). */
static int validate(void *ud, const kc_admission_request *req, kc_admission_response *resp)
{
    kc_store *secrets = ud;
    char *name = NULL;
    int rc = kc_obj_get_string(req->object, "/spec/secretRef/name", &name, NULL, NULL);
    if (rc == KC_ENOTFOUND)
        return kc_admission_response_deny(resp, 422, "Invalid", "spec.secretRef.name is required");
    if (rc)
        return rc;
    kc_obj *s = kc_store_get(secrets, req->ns, name);
    if (!s) {
        char msg[300];
        snprintf(msg, sizeof msg, "Secret %s/%s does not exist", req->ns, name);
        rc = kc_admission_response_deny(resp, 422, "Invalid", msg);
    }
    kc_obj_unref(s);
    free(name);
    return rc;
}

/* Defaults spec.mode and labels the object; the library computes the JSONPatch. */
static int mutate(void *ud, const kc_admission_request *req, kc_admission_response *resp)
{
    (void)ud;
    kc_doc *d = NULL;
    int rc = kc_doc_from_obj(req->object, &d, NULL);
    if (rc == 0 && !kc_doc_has(d, "/spec/mode"))
        rc = kc_doc_set_string(d, "/spec/mode", "online", NULL);
    if (rc == 0)
        rc = kc_doc_set_string(d, "/metadata/labels/example.kcache.io~1defaulted", "true", NULL);
    if (rc == 0)
        rc = kc_admission_response_set_object(resp, d);
    kc_doc_free(d);
    return rc;
}

static const char FIXED[] = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                            "\"response\":{\"uid\":\"705ab4f5-6393-11e8-b7cc-42010a800002\","
                            "\"allowed\":true}}";

/* The floor: a fixed allowed review, nothing decoded. */
static int raw(void *ud, const char *body, size_t len, char **resp, size_t *resp_len)
{
    (void)ud, (void)body, (void)len;
    *resp = malloc(sizeof FIXED);
    if (!*resp)
        return KC_ENOMEM;
    memcpy(*resp, FIXED, sizeof FIXED);
    *resp_len = sizeof FIXED - 1;
    return 0;
}

/* ---- the clients ----------------------------------------------------------------------------- */

typedef struct conn {
    CURL *h;
    struct curl_slist *hdrs;
    char last[4096]; /* the last answer (checked once per route after the warm-up) */
    size_t last_len;
    /* one run */
    const char *url;
    unsigned n;
    double *lat; /* n latencies, seconds */
    double cpu;  /* this thread's CPU over the run */
    int failed;  /* answers other than 200 */
} conn;

static size_t on_body(char *p, size_t sz, size_t nm, void *ud)
{
    conn *c = ud;
    size_t n = sz * nm, room = sizeof c->last - 1 - c->last_len;
    memcpy(c->last + c->last_len, p, n < room ? n : room);
    c->last_len += n < room ? n : room;
    c->last[c->last_len] = '\0';
    return n;
}

static void conn_init(conn *c, const char *ca, const char *body, size_t len)
{
    c->h = curl_easy_init();
    c->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    if (!c->h || !c->hdrs) {
        fprintf(stderr, "bench_webhook: curl set-up failed\n");
        exit(1);
    }
    curl_easy_setopt(c->h, CURLOPT_CAINFO, ca);
    curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, c->hdrs);
    curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c->h, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c->h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(c->h, CURLOPT_MAXCONNECTS, 1L);
}

static void *conn_run(void *arg)
{
    conn *c = arg;
    curl_easy_setopt(c->h, CURLOPT_URL, c->url);
    double cpu0 = thread_cpu();
    for (unsigned i = 0; i < c->n; i++) {
        c->last_len = 0;
        double t0 = now_s();
        CURLcode cc = curl_easy_perform(c->h);
        long code = 0;
        curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &code);
        if (c->lat)
            c->lat[i] = now_s() - t0;
        if (cc != CURLE_OK || code != 200)
            c->failed++;
    }
    c->cpu = thread_cpu() - cpu0;
    return NULL;
}

typedef struct run_res {
    double rps, p50_us, p99_us, proc_cpu_us, srv_cpu_us;
} run_res;

/* N requests to url over k connections at once. */
static run_res run(conn *cs, unsigned k, const char *url, unsigned n, double *lat)
{
    pthread_t th[MAX_CONN];
    unsigned per = n / k;
    for (unsigned i = 0; i < k; i++) {
        cs[i].url = url;
        cs[i].n = per;
        cs[i].lat = lat ? lat + (size_t)i * per : NULL;
        cs[i].failed = 0;
    }
    double cpu0 = self_cpu(), t0 = now_s();
    for (unsigned i = 0; i < k; i++)
        pthread_create(&th[i], NULL, conn_run, &cs[i]);
    double ccpu = 0;
    int failed = 0;
    for (unsigned i = 0; i < k; i++) {
        pthread_join(th[i], NULL);
        ccpu += cs[i].cpu;
        failed += cs[i].failed;
    }
    double wall = now_s() - t0, cpu = self_cpu() - cpu0;
    if (failed) {
        fprintf(stderr, "bench_webhook: %s: %d of %u requests failed (last: %s)\n", url, failed,
                per * k, cs[0].last);
        exit(1);
    }
    run_res r = {.rps = per * k / wall,
                 .proc_cpu_us = cpu * 1e6 / (per * k),
                 .srv_cpu_us = (cpu - ccpu) * 1e6 / (per * k)};
    if (lat) {
        size_t m = (size_t)per * k;
        qsort(lat, m, sizeof *lat, cmp_d);
        r.p50_us = lat[(m - 1) / 2] * 1e6;
        r.p99_us = lat[(size_t)((double)(m - 1) * 0.99)] * 1e6;
    }
    return r;
}

/* One request on route i, then its answer must say what the handler decided. */
static void check_answer(conn *c, const char *base, int i)
{
    char url[256];
    snprintf(url, sizeof url, "%s/%s", base, ROUTES[i]);
    run(c, 1, url, 1, NULL);
    bool ok = strstr(c->last, "\"allowed\":true") &&
              strstr(c->last, "705ab4f5-6393-11e8-b7cc-42010a800002") &&
              (i != 2 || strstr(c->last, "\"patchType\":\"JSONPatch\""));
    if (!ok) {
        fprintf(stderr, "bench_webhook: /%s answered %s\n", ROUTES[i], c->last);
        exit(1);
    }
}

/* ---- set-up ---------------------------------------------------------------------------------- */

typedef struct env {
    kc_server *api;
    kc_config *cfg;
    kc_client *client;
    kc_cache *cache;
    kc_webhook_server *wh;
    char dir[64], ca[96];
} env;

static void env_start(env *v)
{
    kc_error e = KC_ERROR_INIT;
    int rc;
    kc_server_opts so = {
        .listen = "127.0.0.1:0", .quiet = true, .seed_spec = "secrets=1000:ns=default"};
    if ((rc = kc_server_new(&so, &v->api, &e)) < 0 || (rc = kc_server_start(v->api, &e)) < 0)
        die("API server", rc, &e);
    kc_client_opts co = {.qps = -1};
    kc_informer *inf = NULL;
    if ((rc = kc_config_from_url(kc_server_url(v->api), NULL, NULL, &v->cfg, &e)) < 0 ||
        (rc = kc_client_new(v->cfg, &co, &v->client, &e)) < 0 ||
        (rc = kc_cache_new(v->client, NULL, &v->cache, &e)) < 0 ||
        (rc = kc_cache_get_informer(v->cache, &SECRETS, NULL, &inf, &e)) < 0 ||
        (rc = kc_cache_wait_synced(v->cache, 60000, &e)) < 0)
        die("cache", rc, &e);
    kc_store *secrets = kc_informer_store(inf);
    if (kc_store_len(secrets) != 1000)
        die("cache: not 1,000 Secrets", KC_EINVAL, NULL);
    snprintf(v->dir, sizeof v->dir, "/tmp/bench_webhook.XXXXXX");
    if (!mkdtemp(v->dir))
        die("mkdtemp", KC_EIO, NULL);
    snprintf(v->ca, sizeof v->ca, "%s/ca.crt", v->dir);
    const char *ips[] = {"127.0.0.1"};
    kc_webhook_cert_opts certo = {.dir = v->dir, .ip_addresses = ips, .n_ip_addresses = 1};
    if ((rc = kc_webhook_cert_generate(&certo, NULL, &e)) < 0)
        die("certificates", rc, &e);
    char crt[96], key[96];
    snprintf(crt, sizeof crt, "%s/tls.crt", v->dir);
    snprintf(key, sizeof key, "%s/tls.key", v->dir);
    kc_webhook_server_opts wo = {
        .listen = "127.0.0.1:0", .cert_file = crt, .key_file = key, .cache = v->cache};
    if ((rc = kc_webhook_server_new(&wo, &v->wh, &e)) < 0 ||
        (rc = kc_webhook_server_add_validating(v->wh, "/validate", validate, secrets, NULL, &e)) <
            0 ||
        (rc = kc_webhook_server_add_mutating(v->wh, "/mutate", mutate, NULL, NULL, &e)) < 0 ||
        (rc = kc__wh_server_add_raw(v->wh, "/raw", raw, NULL, &e)) < 0 ||
        (rc = kc_webhook_server_start(v->wh, &e)) < 0)
        die("webhook server", rc, &e);
    if (!kc_webhook_server_ready(v->wh))
        die("webhook server not ready", KC_EINVAL, NULL);
}

static void env_stop(env *v)
{
    kc_webhook_server_free(v->wh);
    kc_cache_stop(v->cache);
    kc_cache_free(v->cache);
    kc_client_free(v->client);
    kc_config_unref(v->cfg);
    kc_server_free(v->api);
    const char *files[] = {"ca.crt", "ca.key", "tls.crt", "tls.key"};
    char p[128];
    for (size_t i = 0; i < KC__ARRAY_LEN(files); i++) {
        snprintf(p, sizeof p, "%s/%s", v->dir, files[i]);
        unlink(p);
    }
    rmdir(v->dir);
}

/* The review step alone (kc__wh_review on this thread, no transport): CPU µs per request. */
static double review_alone(kc__wh_kind kind, kc_admission_fn fn, void *ud, const char *body,
                           size_t len, unsigned n)
{
    kc__wh_route r = {.kind = kind, .admit = fn, .ud = ud};
    double v[5];
    for (int k = 0; k < 5; k++) {
        double c0 = thread_cpu();
        for (unsigned i = 0; i < n; i++) {
            int status = 0;
            char *resp = NULL;
            size_t rl = 0;
            const char *ct = NULL;
            if (kc__wh_review(NULL, &r, "application/json", body, len, &status, &resp, &rl, &ct) ||
                status != 200)
                die("review", KC_EINVAL, NULL);
            free(resp);
        }
        v[k] = (thread_cpu() - c0) * 1e6 / n;
    }
    return med(v, 5);
}

/* ---- main ------------------------------------------------------------------------------------ */

static double fig(run_res (*r)[N_ROUTES], int rounds, int route, size_t off, bool ratio)
{
    double v[MAX_ROUNDS];
    for (int k = 0; k < rounds; k++) {
        double x = *(const double *)((const char *)&r[k][route] + off);
        /* time per request of the route ÷ the floor's, same round */
        v[k] = ratio ? r[k][0].rps / r[k][route].rps : x;
    }
    return med(v, rounds);
}

static void report(unsigned k, run_res (*r)[N_ROUTES], int rounds)
{
    printf("C = %u keep-alive connection%s (medians of %d rounds)\n", k, k > 1 ? "s" : "", rounds);
    printf("  %-9s %10s %9s %9s %14s %14s %12s %7s\n", "route", "req/s", "p50 µs", "p99 µs",
           "proc CPU µs/rq", "srv CPU µs/rq", "req/s/core", "× raw");
    for (int i = 0; i < N_ROUTES; i++) {
        double rps = fig(r, rounds, i, offsetof(run_res, rps), false);
        double p50 = fig(r, rounds, i, offsetof(run_res, p50_us), false);
        double p99 = fig(r, rounds, i, offsetof(run_res, p99_us), false);
        double pc = fig(r, rounds, i, offsetof(run_res, proc_cpu_us), false);
        double sc = fig(r, rounds, i, offsetof(run_res, srv_cpu_us), false);
        double ratio = fig(r, rounds, i, 0, true);
        printf("  %-9s %10.0f %9.0f %9.0f %14.1f %14.1f %12.0f %7.2f\n", ROUTES[i], rps, p50, p99,
               pc, sc, 1e6 / sc, ratio);
        printf("BENCH webhook_c%u_%s_rps %.0f req/s\n", k, ROUTES[i], rps);
        printf("BENCH webhook_c%u_%s_p50 %.0f us\n", k, ROUTES[i], p50);
        printf("BENCH webhook_c%u_%s_p99 %.0f us\n", k, ROUTES[i], p99);
        printf("BENCH webhook_c%u_%s_proc_cpu_per_req %.1f us\n", k, ROUTES[i], pc);
        printf("BENCH webhook_c%u_%s_server_cpu_per_req %.1f us\n", k, ROUTES[i], sc);
        printf("BENCH webhook_c%u_%s_rps_per_core %.0f req/s\n", k, ROUTES[i], 1e6 / sc);
        printf("BENCH webhook_c%u_%s_proc_rps_per_core %.0f req/s\n", k, ROUTES[i], 1e6 / pc);
        if (i)
            printf("BENCH webhook_c%u_%s_vs_raw %.2f x\n", k, ROUTES[i], ratio);
    }
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 4000;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (n < 8 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: bench_webhook [N ≥ 8] [ROUNDS 1..%d]\n", MAX_ROUNDS);
        return 2;
    }
    curl_global_init(CURL_GLOBAL_ALL);
    env v = {0};
    env_start(&v);
    size_t blen = 0;
    char *body = make_review(&blen);
    size_t olen = strstr(body, ",\"oldObject\"") - strstr(body, "\"object\":{");
    printf("AdmissionReview %zu bytes (object %zu bytes), 1,000 Secrets in the cache, %s\n", blen,
           olen - 9, kc_webhook_server_url(v.wh));
    printf("BENCH webhook_review_bytes %zu B\n", blen);
    kc_informer *inf = kc_cache_informer_at(v.cache, 0);
    double rv = review_alone(KC__WH_VALIDATING, validate, kc_informer_store(inf), body, blen, n);
    double rm = review_alone(KC__WH_MUTATING, mutate, NULL, body, blen, n);
    printf("review step alone (kc__wh_review, no transport): validate %.1f µs, mutate %.1f µs of "
           "CPU per request\n",
           rv, rm);
    printf("BENCH webhook_review_only_validate %.1f us\n", rv);
    printf("BENCH webhook_review_only_mutate %.1f us\n", rm);
    conn cs[MAX_CONN] = {0};
    for (int i = 0; i < MAX_CONN; i++)
        conn_init(&cs[i], v.ca, body, blen);
    const char *base = kc_webhook_server_url(v.wh);
    char urls[N_ROUTES][256];
    for (int i = 0; i < N_ROUTES; i++)
        snprintf(urls[i], sizeof urls[i], "%s/%s", base, ROUTES[i]);
    for (int i = 0; i < N_ROUTES; i++) { /* warm-up: every connection, every route */
        run(cs, MAX_CONN, urls[i], 200 * MAX_CONN, NULL);
        check_answer(cs, base, i);
    }
    double *lat = malloc(n * sizeof *lat);
    static run_res res[N_CONNS][MAX_ROUNDS][N_ROUTES];
    for (int k = 0; k < rounds; k++) {
        for (size_t c = 0; c < N_CONNS; c++) {
            for (int j = 0; j < N_ROUTES; j++) { /* rotate the first route each round */
                int i = (j + k) % N_ROUTES;
                res[c][k][i] = run(cs, CONNS[c], urls[i], n, lat);
            }
        }
        fprintf(stderr, "round %d/%d done\n", k + 1, rounds);
    }
    for (size_t c = 0; c < N_CONNS; c++)
        report(CONNS[c], res[c], rounds);
    for (int i = 0; i < MAX_CONN; i++) {
        curl_easy_cleanup(cs[i].h);
        curl_slist_free_all(cs[i].hdrs);
    }
    free(lat);
    free(body);
    env_stop(&v);
    curl_global_cleanup();
    return 0;
}
