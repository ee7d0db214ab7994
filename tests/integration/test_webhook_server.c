/*
 * The webhook server with a cache of the embedded API server whose LIST is delayed: the listener
 * serves first and /healthz is 200 at once, /readyz is 503 (verbose: "[+]serving ok" and the
 * informer not synced) until the cache syncs, then 200 (RD4, RD5); an admission request to a
 * handler that reads the cache is answered by the not-ready policy before the sync and by the
 * handler after it, never from a partial cache (RD4); kc__wh_wait_ready wakes on the cache's sync
 * (no polling); a conversion route never waits (RD1); /metrics carries controller-runtime's series
 * (MT1, MT2) and the cache's; the plain health listener says the same as the TLS one.
 */
#include "test_informer_fixture.h"
#include "kcache/webhook.h"
#include "webhook/internal.h"

#include <curl/curl.h>
#include <stdatomic.h>

typedef struct wfx {
    ifx f;
    char dir[64], ca[128], crt[128], key[128];
    kc_cache *cache;
    kc_webhook_server *srv;
} wfx;

static atomic_int g_calls;
static atomic_size_t g_seen_objects;

/* Reads the cache: how many ConfigMaps it holds (must be all 5 when called). */
static int count_cms(void *ud, const kc_admission_request *req, kc_admission_response *resp)
{
    (void)req;
    (void)resp;
    wfx *w = ud;
    atomic_fetch_add(&g_calls, 1);
    size_t n = 0;
    for (size_t i = 0; i < kc_cache_informer_count(w->cache); i++) {
        kc_informer_status st;
        kc_informer_get_status(kc_cache_informer_at(w->cache, i), &st);
        n += st.objects;
    }
    atomic_store(&g_seen_objects, n);
    return 0;
}

static int convert(void *ud, const char *desired, kc_doc *obj, kc_error *err)
{
    (void)ud;
    (void)desired;
    (void)obj;
    (void)err;
    return 0;
}

typedef struct resp {
    long status;
    kc__buf body;
} resp;

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    kc__buf_append(&((resp *)ud)->body, p, sz * n);
    return sz * n;
}

static long call(wfx *w, const char *base, const char *path, const char *body, resp *r)
{
    char url[256];
    snprintf(url, sizeof url, "%s%s", base, path);
    kc__buf_free(&r->body);
    kc__buf_init(&r->body, 1 << 24);
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CAINFO, w->ca);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    r->status = curl_easy_perform(c) == CURLE_OK ? 0 : -1;
    if (r->status == 0)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    kc__buf_append_char(&r->body, '\0');
    return r->status;
}

static const char REVIEW[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":"
    "\"u-1\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"ConfigMap\"},\"resource\":{"
    "\"group\":\"\",\"version\":\"v1\",\"resource\":\"configmaps\"},\"name\":\"x\",\"namespace\":"
    "\"default\",\"operation\":\"CREATE\",\"userInfo\":{\"username\":\"alice\"},\"object\":{"
    "\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\",\"namespace\":"
    "\"default\"}},\"oldObject\":null,\"dryRun\":false}}";

static const char CONVERSION[] =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\",\"request\":{"
    "\"uid\":\"c-1\",\"desiredAPIVersion\":\"example.com/v2\",\"objects\":[{\"apiVersion\":"
    "\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w\",\"namespace\":\"d\","
    "\"uid\":\"1\"}}]}}";

static void up(wfx *w)
{
    memset(w, 0, sizeof(*w));
    ifx_up(&w->f, "configmaps=5:ns=default");
    /* every LIST waits 1.5 s before its first byte: the cache cannot sync before that */
    kc_server_faults fl = {.list_delay_min_ms = 1500, .list_delay_max_ms = 1500};
    ifx_faults(&w->f, &fl);
    strcpy(w->dir, "/tmp/kc_whi_XXXXXX");
    assert_non_null(mkdtemp(w->dir));
    snprintf(w->ca, sizeof w->ca, "%s/ca.crt", w->dir);
    snprintf(w->crt, sizeof w->crt, "%s/tls.crt", w->dir);
    snprintf(w->key, sizeof w->key, "%s/tls.key", w->dir);
    const char *ips[] = {"127.0.0.1"};
    kc_webhook_cert_opts co = {.dir = w->dir, .ip_addresses = ips, .n_ip_addresses = 1};
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_webhook_cert_generate(&co, NULL, &e), 0, &e);
    IFX_RC(kc_cache_new(w->f.client, NULL, &w->cache, &e), 0, &e);
    kc_webhook_server_opts o = {.listen = "127.0.0.1:0",
                                .cert_file = w->crt,
                                .key_file = w->key,
                                .cache = w->cache,
                                .ready_wait_ms = 100,
                                .health_listen = "127.0.0.1:0"};
    IFX_RC(kc_webhook_server_new(&o, &w->srv, &e), 0, &e);
    IFX_RC(kc_webhook_server_add_validating(w->srv, "/validate", count_cms, w, NULL, &e), 0, &e);
    IFX_RC(kc_webhook_server_add_conversion(w->srv, "/convert", convert, NULL, NULL, &e), 0, &e);
    /* RD5: the listener first, then the caches */
    IFX_RC(kc_webhook_server_start(w->srv, &e), 0, &e);
    kc_informer *inf = NULL;
    kc_informer_opts io = {.list_mode = KC_INFORMER_LIST_PAGED}; /* a LIST: the delayed call */
    IFX_RC(kc_cache_get_informer(w->cache, &ifx_cm, &io, &inf, &e), 0, &e);
}

static void down(wfx *w)
{
    kc_webhook_server_free(w->srv);
    kc_cache_free(w->cache);
    ifx_down(&w->f);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", w->dir);
    assert_int_equal(system(cmd), 0);
}

/* RD4, RD5: serving before ready; /readyz 503 until the cache synced, then 200; the admission
 * handler is never called from a partial cache; conversion never waits. */
static void test_webhook_server_ready_follows_cache(void **st)
{
    (void)st;
    wfx w;
    up(&w);
    const char *u = kc_webhook_server_url(w.srv), *hu = kc_webhook_server_health_url(w.srv);
    resp r = {0, KC__BUF_INIT(0)};
    assert_int_equal(call(&w, u, "/healthz", NULL, &r), 200);
    assert_int_equal(call(&w, u, "/readyz", NULL, &r), 503);
    assert_int_equal(call(&w, u, "/readyz?verbose", NULL, &r), 503);
    assert_non_null(strstr(r.body.data, "[+]serving ok"));
    assert_non_null(strstr(r.body.data, "failed: not synced"));
    assert_int_equal(call(&w, hu, "/readyz", NULL, &r), 503);
    assert_int_equal(call(&w, hu, "/healthz", NULL, &r), 200);
    assert_false(kc_webhook_server_ready(w.srv));
    /* before the sync: answered by the policy (deny, 503), the handler not called */
    assert_int_equal(call(&w, u, "/validate", REVIEW, &r), 200);
    assert_non_null(strstr(r.body.data, "\"allowed\":false"));
    assert_non_null(strstr(r.body.data, "503"));
    assert_int_equal(atomic_load(&g_calls), 0);
    /* conversion does not wait for the cache (RD1) */
    uint64_t t0 = kc__now_ns();
    assert_int_equal(call(&w, u, "/convert", CONVERSION, &r), 200);
    assert_non_null(strstr(r.body.data, "\"Success\""));
    assert_true(kc__now_ns() - t0 < 1000 * KC__NS_PER_MS);
    assert_false(kc__wh_wait_ready(w.srv, 0));
    /* event-driven wait: wakes at the sync */
    assert_true(kc__wh_wait_ready(w.srv, 10000));
    assert_true(kc_webhook_server_ready(w.srv));
    assert_int_equal(call(&w, u, "/readyz", NULL, &r), 200);
    assert_string_equal(r.body.data, "ok");
    assert_int_equal(call(&w, hu, "/readyz?verbose", NULL, &r), 200);
    assert_non_null(strstr(r.body.data, "[+]informer"));
    /* after the sync: the handler runs and sees the whole list */
    assert_int_equal(call(&w, u, "/validate", REVIEW, &r), 200);
    assert_non_null(strstr(r.body.data, "\"allowed\":true"));
    assert_int_equal(atomic_load(&g_calls), 1);
    assert_int_equal(atomic_load(&g_seen_objects), 5);
    /* metrics: controller-runtime's series and the cache's */
    assert_int_equal(call(&w, u, "/metrics", NULL, &r), 200);
    assert_non_null(strstr(r.body.data, "controller_runtime_webhook_requests_total{code=\"200\","
                                        "webhook=\"/validate\"} 2"));
    assert_non_null(strstr(r.body.data, "controller_runtime_webhook_requests_total{code=\"200\","
                                        "webhook=\"/convert\"} 1"));
    assert_non_null(strstr(r.body.data, "controller_runtime_webhook_latency_seconds_count{"
                                        "webhook=\"/validate\"} 2"));
    assert_non_null(strstr(r.body.data, "kcache_cache_ready 1"));
    assert_int_equal(call(&w, hu, "/metrics", NULL, &r), 200);
    assert_non_null(strstr(r.body.data, "controller_runtime_webhook_requests_in_flight"));
    kc__buf_free(&r.body);
    /* stopped: neither serving nor ready */
    assert_int_equal(kc_webhook_server_stop(w.srv), 0);
    assert_false(kc_webhook_server_ready(w.srv));
    assert_int_equal(kc_webhook_server_stop(w.srv), 0);
    down(&w);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_webhook_server_ready_follows_cache),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
