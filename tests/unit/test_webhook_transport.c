/*
 * The webhook server's transport with libcurl as the client: TLS 1.2 and 1.3 accepted, 1.1
 * refused; keep-alive; client certificates when client_ca_file is set; 413 over the size bound
 * (declared and chunked), 404, 405, 504 for a handler past request_timeout_ms; at most `workers`
 * handlers at once; /healthz, /readyz, /metrics (MT1, MT2); certificate rotation under load with
 * no failed request and the new leaf within the poll interval, corrupt files keeping the old pair
 * and counting certwatcher_read_certificate_errors_total (TLS2, TLS3, TLS6); plain HTTP to the
 * TLS port. The reviews are not linked here: kc__wh_review below is this test's echo.
 */
#include "core/internal.h"
#include "kcache/webhook.h"
#include "webhook/internal.h"
#include "webhook/transport.h"

#include <curl/curl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

/* ---- the test's review: echo, or sleep first ("sleep:MS") ------------------------------------ */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_running, g_max_running;

int kc__wh_review(kc_webhook_server *srv, const kc__wh_route *route, const char *content_type,
                  const char *body, size_t len, int *status, char **resp, size_t *resp_len,
                  const char **ctype)
{
    (void)srv;
    (void)route;
    (void)content_type;
    pthread_mutex_lock(&g_mu);
    if (++g_running > g_max_running)
        g_max_running = g_running;
    pthread_mutex_unlock(&g_mu);
    if (len > 6 && strncmp(body, "sleep:", 6) == 0)
        kc__sleep_ns((uint64_t)atoi(body + 6) * KC__NS_PER_MS);
    *status = 200;
    *resp = kc__strdup_n(body, len);
    *resp_len = len;
    *ctype = "application/json";
    pthread_mutex_lock(&g_mu);
    g_running--;
    pthread_mutex_unlock(&g_mu);
    return 0;
}

/* ---- fixture -------------------------------------------------------------------------------- */

typedef struct fx {
    char dir[256], ca[300], crt[300], key[300];
    kc_webhook_server *srv;
} fx;

static void gen(fx *f, bool reuse)
{
    const char *dns[] = {"localhost"}, *ips[] = {"127.0.0.1"};
    kc_webhook_cert_opts co = {.dir = f->dir,
                               .dns_names = dns,
                               .n_dns_names = 1,
                               .ip_addresses = ips,
                               .n_ip_addresses = 1,
                               .reuse_ca = reuse};
    kc_error e = KC_ERROR_INIT;
    char *bundle = NULL;
    int rc = kc_webhook_cert_generate(&co, &bundle, &e);
    if (rc)
        fprintf(stderr, "cert: %s\n", e.message);
    assert_int_equal(rc, 0);
    assert_non_null(bundle);
    assert_true(strlen(bundle) > 100);
    free(bundle);
    kc_error_clear(&e);
}

static void up(fx *f, kc_webhook_server_opts *o)
{
    memset(f->dir, 0, sizeof f->dir);
    strcpy(f->dir, "/tmp/kc_wh_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->ca, sizeof f->ca, "%s/ca.crt", f->dir);
    snprintf(f->crt, sizeof f->crt, "%s/tls.crt", f->dir);
    snprintf(f->key, sizeof f->key, "%s/tls.key", f->dir);
    gen(f, false);
    kc_webhook_server_opts d = {0};
    if (!o)
        o = &d;
    o->listen = "127.0.0.1:0";
    o->cert_file = f->crt;
    o->key_file = f->key;
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_webhook_server_new(o, &f->srv, &e), 0);
    assert_int_equal(
        kc_webhook_server_add_validating(f->srv, "/validate", (kc_admission_fn)1, NULL, NULL, &e),
        0);
    assert_int_equal(kc_webhook_server_start(f->srv, &e), 0);
    assert_true(kc_webhook_server_port(f->srv) > 0);
    assert_true(kc_webhook_server_ready(f->srv));
}

static void down(fx *f)
{
    kc_webhook_server_free(f->srv);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
}

typedef struct resp {
    long status;
    kc__buf body;
    long connects;
    char serial[128];
} resp;

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    kc__buf_append(&((resp *)ud)->body, p, sz * n);
    return sz * n;
}

static CURL *client(fx *f)
{
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_CAINFO, f->ca);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    return c;
}

/* One request on c; body NULL = GET. */
static CURLcode req(fx *f, CURL *c, const char *path, const char *body, resp *r)
{
    char url[256];
    snprintf(url, sizeof url, "%s%s", kc_webhook_server_url(f->srv), path);
    kc__buf_free(&r->body);
    kc__buf_init(&r->body, 1 << 24);
    r->status = 0;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    } else {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    }
    CURLcode rc = curl_easy_perform(c);
    curl_slist_free_all(h);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &r->connects);
    kc__buf_append_char(&r->body, '\0');
    r->body.len--;
    return rc;
}

/* ---- tests ---------------------------------------------------------------------------------- */

/* TLS 1.2 and 1.3 accepted, 1.1 refused (SV1, the server's TLS floor); echo through the pool. */
static void test_webhook_tls_versions(void **st)
{
    (void)st;
    fx f;
    up(&f, NULL);
    resp r = {0};
    long vers[] = {CURL_SSLVERSION_TLSv1_2 | CURL_SSLVERSION_MAX_TLSv1_2,
                   CURL_SSLVERSION_TLSv1_3 | CURL_SSLVERSION_MAX_TLSv1_3};
    for (int i = 0; i < 2; i++) {
        CURL *c = client(&f);
        curl_easy_setopt(c, CURLOPT_SSLVERSION, vers[i]);
        assert_int_equal(req(&f, c, "/validate", "{\"a\":1}", &r), CURLE_OK);
        assert_int_equal(r.status, 200);
        assert_string_equal(r.body.data, "{\"a\":1}");
        curl_easy_cleanup(c);
    }
    CURL *c = client(&f);
    curl_easy_setopt(c, CURLOPT_SSLVERSION, CURL_SSLVERSION_TLSv1_0 | CURL_SSLVERSION_MAX_TLSv1_1);
    assert_int_not_equal(req(&f, c, "/validate", "{}", &r), CURLE_OK);
    curl_easy_cleanup(c);
    kc__buf_free(&r.body);
    down(&f);
}

/* SV7: two requests, one connection. */
static void test_webhook_keepalive(void **st)
{
    (void)st;
    fx f;
    up(&f, NULL);
    resp r = {0};
    CURL *c = client(&f);
    assert_int_equal(req(&f, c, "/validate", "{}", &r), CURLE_OK);
    assert_int_equal(r.connects, 1);
    assert_int_equal(req(&f, c, "/validate", "{\"b\":2}", &r), CURLE_OK);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.connects, 0); /* reused */
    /* throughput over keep-alive (reported, not asserted) */
    uint64_t t0 = kc__now_ns();
    int n = 2000;
    for (int i = 0; i < n; i++)
        assert_int_equal(req(&f, c, "/validate", "{}", &r), CURLE_OK);
    double s = (double)(kc__now_ns() - t0) / 1e9;
    fprintf(stderr, "keep-alive: %d requests in %.3f s = %.0f req/s\n", n, s, n / s);
    curl_easy_cleanup(c);
    kc__buf_free(&r.body);
    down(&f);
}

/* client_ca_file: no client certificate → handshake refused; one signed by the CA → accepted. */
static void test_webhook_client_cert(void **st)
{
    (void)st;
    fx f;
    char ca_copy[320];
    kc_webhook_server_opts o = {0};
    /* the client CA is the same CA that signed the serving pair: its leaf is a valid client */
    up(&f, NULL);
    snprintf(ca_copy, sizeof ca_copy, "%s/client-ca.crt", f.dir);
    char cmd[800];
    snprintf(cmd, sizeof cmd, "cp %s %s", f.ca, ca_copy);
    assert_int_equal(system(cmd), 0);
    kc_webhook_server_free(f.srv);
    o.listen = "127.0.0.1:0";
    o.cert_file = f.crt;
    o.key_file = f.key;
    o.client_ca_file = ca_copy;
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_webhook_server_new(&o, &f.srv, &e), 0);
    assert_int_equal(
        kc_webhook_server_add_validating(f.srv, "/validate", (kc_admission_fn)1, NULL, NULL, &e),
        0);
    assert_int_equal(kc_webhook_server_start(f.srv, &e), 0);
    resp r = {0};
    CURL *c = client(&f);
    assert_int_not_equal(req(&f, c, "/validate", "{}", &r), CURLE_OK);
    curl_easy_cleanup(c);
    c = client(&f);
    curl_easy_setopt(c, CURLOPT_SSLCERT, f.crt);
    curl_easy_setopt(c, CURLOPT_SSLKEY, f.key);
    /* the development leaf carries clientAuth too, so it serves as a client certificate here */
    assert_int_equal(req(&f, c, "/validate", "{}", &r), CURLE_OK);
    assert_int_equal(r.status, 200);
    curl_easy_cleanup(c);
    kc__buf_free(&r.body);
    down(&f);
}

/* SV3: 413 above max_request_bytes, declared or chunked; 404 unknown path; 405 wrong method. */
static void test_webhook_bounds(void **st)
{
    (void)st;
    fx f;
    kc_webhook_server_opts o = {.max_request_bytes = 1024};
    up(&f, &o);
    resp r = {0};
    char *big = malloc(4097);
    memset(big, 'x', 4096);
    big[4096] = '\0';
    CURL *c = client(&f);
    assert_int_equal(req(&f, c, "/validate", big, &r), CURLE_OK);
    assert_int_equal(r.status, 413);
    curl_easy_cleanup(c);
    /* chunked: no Content-Length, the body is discarded as it arrives */
    c = client(&f);
    struct curl_slist *h = curl_slist_append(NULL, "Transfer-Encoding: chunked");
    char url[256];
    snprintf(url, sizeof url, "%s/validate", kc_webhook_server_url(f.srv));
    kc__buf_free(&r.body); /* the 413 answer above */
    kc__buf_init(&r.body, 1 << 20);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, big);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    assert_int_equal(r.status, 413);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    c = client(&f);
    assert_int_equal(req(&f, c, "/validate", "{\"small\":1}", &r), CURLE_OK);
    assert_int_equal(r.status, 200);
    assert_int_equal(req(&f, c, "/nope", "{}", &r), CURLE_OK);
    assert_int_equal(r.status, 404);
    assert_int_equal(req(&f, c, "/validate", NULL, &r), CURLE_OK);
    assert_int_equal(r.status, 405);
    assert_int_equal(req(&f, c, "/metrics", NULL, &r), CURLE_OK);
    assert_non_null(strstr(r.body.data, "controller_runtime_webhook_requests_total{code=\"413\","
                                        "webhook=\"/validate\"} 2"));
    assert_non_null(strstr(r.body.data, "controller_runtime_webhook_requests_total{code=\"405\","
                                        "webhook=\"/validate\"} 1"));
    curl_easy_cleanup(c);
    free(big);
    kc__buf_free(&r.body);
    down(&f);
}

typedef struct load {
    fx *f;
    const char *body;
    int n, failed, new_conn; /* n < 0: until stop */
    atomic_bool *stop;
    int done;
} load;

static void *load_main(void *arg)
{
    load *l = arg;
    resp r = {0};
    CURL *c = client(l->f);
    for (int i = 0; l->n < 0 ? !atomic_load(l->stop) : i < l->n; i++) {
        l->done++;
        if (l->new_conn && i % 2) {
            curl_easy_cleanup(c);
            c = client(l->f);
        }
        if (req(l->f, c, "/validate", l->body, &r) != CURLE_OK || r.status != 200)
            l->failed++;
    }
    curl_easy_cleanup(c);
    kc__buf_free(&r.body);
    return NULL;
}

/* Four keep-alive clients at once: no failure; throughput reported (docs/webhooks.md). */
static void test_webhook_parallel_keepalive(void **st)
{
    (void)st;
    fx f;
    up(&f, NULL);
    load l[4];
    pthread_t th[4];
    uint64_t t0 = kc__now_ns();
    for (int i = 0; i < 4; i++) {
        l[i] = (load){&f, "{}", 1000, 0, 0, NULL, 0};
        pthread_create(&th[i], NULL, load_main, &l[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    double s = (double)(kc__now_ns() - t0) / 1e9;
    fprintf(stderr, "4 keep-alive clients: 4000 requests in %.3f s = %.0f req/s\n", s, 4000 / s);
    for (int i = 0; i < 4; i++)
        assert_int_equal(l[i].failed, 0);
    down(&f);
}

/* At most `workers` handlers at once; a handler past request_timeout_ms gets 504. */
static void test_webhook_pool_bounds(void **st)
{
    (void)st;
    fx f;
    kc_webhook_server_opts o = {.workers = 2, .request_timeout_ms = 300};
    up(&f, &o);
    g_max_running = 0;
    load l[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        l[i] = (load){&f, "sleep:50", 3, 0, 0, NULL, 0};
        pthread_create(&th[i], NULL, load_main, &l[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_lock(&g_mu);
    assert_true(g_max_running >= 1 && g_max_running <= 2);
    pthread_mutex_unlock(&g_mu);
    resp r = {0};
    CURL *c = client(&f);
    assert_int_equal(req(&f, c, "/validate", "sleep:800", &r), CURLE_OK);
    assert_int_equal(r.status, 504);
    curl_easy_cleanup(c);
    kc__buf_free(&r.body);
    down(&f); /* stop waits for the abandoned handler */
}

/* /healthz, /livez, /readyz (no cache: ready once serving, RD4), /readyz?verbose, /metrics. */
static void test_webhook_probes(void **st)
{
    (void)st;
    fx f;
    kc_webhook_server_opts o = {.health_listen = "127.0.0.1:0"};
    up(&f, &o);
    resp r = {0};
    CURL *c = client(&f);
    assert_int_equal(req(&f, c, "/healthz", NULL, &r), CURLE_OK);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body.data, "ok");
    assert_int_equal(req(&f, c, "/livez", NULL, &r), CURLE_OK);
    assert_int_equal(r.status, 200);
    assert_int_equal(req(&f, c, "/readyz?verbose", NULL, &r), CURLE_OK);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body.data, "[+]serving ok"));
    assert_int_equal(req(&f, c, "/validate", "{}", &r), CURLE_OK);
    assert_int_equal(req(&f, c, "/metrics", NULL, &r), CURLE_OK);
    assert_non_null(strstr(r.body.data, "controller_runtime_webhook_requests_total{code=\"200\","
                                        "webhook=\"/validate\"} 1"));
    assert_non_null(strstr(r.body.data, "controller_runtime_webhook_requests_total{code=\"500\","
                                        "webhook=\"/validate\"} 0"));
    assert_non_null(strstr(r.body.data, "controller_runtime_webhook_latency_seconds_bucket{"
                                        "webhook=\"/validate\",le=\"1e-08\"}"));
    assert_non_null(strstr(r.body.data, "le=\"1000\"} 1"));
    assert_non_null(strstr(r.body.data, "controller_runtime_webhook_latency_seconds_count{"
                                        "webhook=\"/validate\"} 1"));
    assert_non_null(strstr(r.body.data, "controller_runtime_webhook_requests_in_flight{"
                                        "webhook=\"/validate\"} 0"));
    assert_non_null(strstr(r.body.data, "certwatcher_read_certificate_total 1"));
    curl_easy_cleanup(c);
    /* the plain health listener: same probes, no routes */
    const char *hu = kc_webhook_server_health_url(f.srv);
    assert_non_null(hu);
    char url[256];
    snprintf(url, sizeof url, "%s/readyz", hu);
    c = curl_easy_init();
    kc__buf_free(&r.body); /* the /metrics answer */
    kc__buf_init(&r.body, 1 << 20);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    assert_int_equal(r.status, 200);
    snprintf(url, sizeof url, "%s/validate", hu);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, "{}");
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    assert_int_equal(r.status, 404);
    curl_easy_cleanup(c);
    kc__buf_free(&r.body);
    kc_webhook_server_stop(f.srv);
    assert_false(kc_webhook_server_ready(f.srv));
    down(&f);
}

/* The serial of the leaf a new connection is shown (CURLINFO_CERTINFO). */
static void leaf_serial(fx *f, char *out, size_t cap)
{
    resp r = {0};
    CURL *c = client(f);
    curl_easy_setopt(c, CURLOPT_CERTINFO, 1L);
    out[0] = '\0';
    if (req(f, c, "/healthz", NULL, &r) == CURLE_OK) {
        struct curl_certinfo *ci = NULL;
        curl_easy_getinfo(c, CURLINFO_CERTINFO, &ci);
        for (struct curl_slist *s = ci && ci->num_of_certs ? ci->certinfo[0] : NULL; s; s = s->next)
            if (strncmp(s->data, "Serial Number:", 14) == 0)
                snprintf(out, cap, "%s", s->data + 14);
    }
    curl_easy_cleanup(c);
    kc__buf_free(&r.body);
}

/* TLS2, TLS3, TLS6: rotation under load (same CA, new leaf) fails no request and new handshakes
 * show the new leaf within the poll interval; corrupt files keep the old pair and count an error;
 * kc_webhook_server_reload_certs reports KC_ECONFIG for them. */
static void test_webhook_cert_rotation(void **st)
{
    (void)st;
    fx f;
    kc_webhook_server_opts o = {.cert_poll_ms = 100};
    up(&f, &o);
    char s0[128], s1[128];
    leaf_serial(&f, s0, sizeof s0);
    assert_true(s0[0] != '\0');
    atomic_bool stop = false;
    load l[2] = {{&f, "{}", -1, 0, 0, &stop, 0}, {&f, "{}", -1, 0, 1, &stop, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, load_main, &l[i]);
    /* five rotations, each seen by a new handshake within the poll interval (+ slack) */
    for (int k = 0; k < 5; k++) {
        gen(&f, true);
        uint64_t t0 = kc__now_ns(), deadline = kc__deadline_after_ms(2000);
        do {
            leaf_serial(&f, s1, sizeof s1);
        } while (strcmp(s0, s1) == 0 && kc__now_ns() < deadline);
        assert_string_not_equal(s0, s1);
        fprintf(stderr, "rotation %d: new leaf after %.0f ms\n", k,
                (double)(kc__now_ns() - t0) / 1e6);
        strcpy(s0, s1);
    }
    atomic_store(&stop, true);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    fprintf(stderr, "rotation under load: %d + %d requests, %d + %d failed\n", l[0].done, l[1].done,
            l[0].failed, l[1].failed);
    assert_true(l[0].done > 10 && l[1].done > 10);
    assert_int_equal(l[0].failed, 0);
    assert_int_equal(l[1].failed, 0);
    /* corrupt: both files garbage → the pair stays, errors counted */
    char *m0 = kc_webhook_server_metrics_text(f.srv);
    const char *p0 = strstr(m0, "\ncertwatcher_read_certificate_errors_total ");
    long long e0 = atoll(p0 + strlen("\ncertwatcher_read_certificate_errors_total "));
    free(m0);
    FILE *fp = fopen(f.crt, "w");
    fputs("-----BEGIN CERTIFICATE-----\ngarbage\n", fp);
    fclose(fp);
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_webhook_server_reload_certs(f.srv, &e), KC_ECONFIG);
    assert_non_null(strstr(e.message, "tls.crt"));
    kc_error_clear(&e);
    char s2[128];
    leaf_serial(&f, s2, sizeof s2);
    assert_string_equal(s1, s2);
    char *m1 = kc_webhook_server_metrics_text(f.srv);
    const char *p1 = strstr(m1, "\ncertwatcher_read_certificate_errors_total ");
    assert_true(atoll(p1 + strlen("\ncertwatcher_read_certificate_errors_total ")) > e0);
    free(m1);
    down(&f);
}

/* Plain HTTP and garbage to the TLS port: refused, no crash, no connection left behind. */
static void test_webhook_malformed_tls(void **st)
{
    (void)st;
    fx f;
    up(&f, NULL);
    for (int i = 0; i < 20; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)kc_webhook_server_port(f.srv)),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
        const char *m = i % 2 ? "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" : "\x16\x03\x01\xff\xff";
        assert_true(write(fd, m, strlen(m)) > 0);
        char buf[256];
        while (read(fd, buf, sizeof buf) > 0)
            ;
        close(fd);
    }
    /* every refused connection's relay ended: no thread or descriptor left behind */
    uint64_t deadline = kc__deadline_after_ms(5000);
    while (kc__wh_tls_connections(f.srv->tls) > 0 && kc__now_ns() < deadline)
        kc__sleep_ns(5 * KC__NS_PER_MS);
    assert_int_equal(kc__wh_tls_connections(f.srv->tls), 0);
    resp r = {0};
    CURL *c = client(&f);
    assert_int_equal(req(&f, c, "/healthz", NULL, &r), CURLE_OK);
    assert_int_equal(r.status, 200);
    curl_easy_cleanup(c);
    kc__buf_free(&r.body);
    down(&f);
}

static int raw_connect(fx *f)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)kc_webhook_server_port(f->srv)),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    return fd;
}

/* max_connections: a connection beyond it is closed at once (no TLS byte); a slot freed is
 * usable again. */
static void test_webhook_max_connections(void **st)
{
    (void)st;
    fx f;
    kc_webhook_server_opts o = {.max_connections = 2};
    up(&f, &o);
    int a = raw_connect(&f), b = raw_connect(&f); /* two idle handshakes hold both slots */
    uint64_t deadline = kc__deadline_after_ms(5000);
    while (kc__wh_tls_connections(f.srv->tls) < 2 && kc__now_ns() < deadline)
        kc__sleep_ns(5 * KC__NS_PER_MS);
    assert_int_equal(kc__wh_tls_connections(f.srv->tls), 2);
    int c3 = raw_connect(&f);
    char buf[16];
    assert_int_equal(read(c3, buf, sizeof buf), 0); /* closed, nothing sent */
    close(c3);
    close(a);
    close(b);
    while (kc__wh_tls_connections(f.srv->tls) > 0 && kc__now_ns() < deadline)
        kc__sleep_ns(5 * KC__NS_PER_MS);
    resp r = {0};
    CURL *c = client(&f);
    assert_int_equal(req(&f, c, "/healthz", NULL, &r), CURLE_OK);
    assert_int_equal(r.status, 200);
    curl_easy_cleanup(c);
    kc__buf_free(&r.body);
    down(&f);
}

/* Errors of new, add_* and cert_generate as the header states them. */
static void test_webhook_errors(void **st)
{
    (void)st;
    kc_error e = KC_ERROR_INIT;
    kc_webhook_server *s = NULL;
    kc_webhook_server_opts o = {.cert_file = "/nonexistent/tls.crt", .key_file = "/x"};
    assert_int_equal(kc_webhook_server_new(&o, &s, &e), KC_ECONFIG);
    assert_non_null(strstr(e.message, "/nonexistent/tls.crt"));
    o.cert_file = NULL;
    assert_int_equal(kc_webhook_server_new(&o, &s, &e), KC_EINVAL);
    kc_webhook_cert_opts co = {.dir = "/tmp"};
    assert_int_equal(kc_webhook_cert_generate(&co, NULL, &e), KC_EINVAL);
    const char *bad[] = {"1.2.3"};
    co.ip_addresses = bad;
    co.n_ip_addresses = 1;
    assert_int_equal(kc_webhook_cert_generate(&co, NULL, &e), KC_EINVAL);
    fx f;
    up(&f, NULL);
    assert_int_equal(
        kc_webhook_server_add_validating(f.srv, "/x", (kc_admission_fn)1, NULL, NULL, &e),
        KC_EBUSY);
    assert_int_equal(kc_webhook_server_start(f.srv, &e), KC_EBUSY);
    kc_webhook_server *s2 = NULL;
    o.cert_file = f.crt;
    o.key_file = f.key;
    assert_int_equal(kc_webhook_server_new(&o, &s2, &e), 0);
    assert_int_equal(
        kc_webhook_server_add_mutating(s2, "/readyz", (kc_admission_fn)1, NULL, NULL, &e),
        KC_EINVAL);
    assert_int_equal(kc_webhook_server_add_mutating(s2, "m", (kc_admission_fn)1, NULL, NULL, &e),
                     KC_EINVAL);
    assert_int_equal(kc_webhook_server_add_mutating(s2, "/m", (kc_admission_fn)1, NULL, NULL, &e),
                     0);
    assert_int_equal(
        kc_webhook_server_add_conversion(s2, "/m", (kc_conversion_fn)1, NULL, NULL, &e),
        KC_EEXISTS);
    assert_null(kc_webhook_server_url(s2));
    assert_int_equal(kc_webhook_server_port(s2), KC_EINVAL);
    assert_false(kc_webhook_server_ready(s2));
    kc_webhook_server_free(s2);
    /* a key that does not match the certificate */
    o.key_file = f.crt;
    assert_int_equal(kc_webhook_server_new(&o, &s2, &e), KC_ECONFIG);
    kc_error_clear(&e);
    down(&f);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_webhook_tls_versions),
        cmocka_unit_test(test_webhook_keepalive),
        cmocka_unit_test(test_webhook_client_cert),
        cmocka_unit_test(test_webhook_bounds),
        cmocka_unit_test(test_webhook_pool_bounds),
        cmocka_unit_test(test_webhook_parallel_keepalive),
        cmocka_unit_test(test_webhook_probes),
        cmocka_unit_test(test_webhook_cert_rotation),
        cmocka_unit_test(test_webhook_malformed_tls),
        cmocka_unit_test(test_webhook_max_connections),
        cmocka_unit_test(test_webhook_errors),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
