/*
 * The health endpoint against the embedded API server: /readyz flips to 200 exactly when the
 * cache syncs, lists each informer with ?verbose, fails again when the watch has been down longer
 * than max_staleness_ms and recovers; /healthz, /livez, /metrics (Prometheus text), 404.
 */
#include "test_informer_fixture.h"

#include <curl/curl.h>

typedef struct resp {
    long status;
    kc__buf body;
} resp;

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    resp *r = ud;
    kc__buf_append(&r->body, p, sz * n);
    return sz * n;
}

static long http_get(kc_health *h, const char *path, resp *r)
{
    char url[256];
    snprintf(url, sizeof(url), "%s%s", kc_health_url(h), path);
    kc__buf_free(&r->body);
    kc__buf_init(&r->body, 1 << 20);
    kc__buf_append_str(&r->body, "");
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
    r->status = curl_easy_perform(c) == CURLE_OK ? 0 : -1;
    if (r->status == 0)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_cleanup(c);
    return r->status;
}

/* Poll /readyz until it answers want (bounded). The flip to "stale" is time-based, so there is no
 * event to wait on: this is the one place where polling with a deadline is unavoidable. */
static long readyz_until(kc_health *h, long want, int64_t timeout_ms, resp *r)
{
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    long s;
    while ((s = http_get(h, "/readyz?verbose", r)) != want && kc__now_ns() < deadline)
        kc__sleep_ns(20 * KC__NS_PER_MS);
    return s;
}

static void test_health_endpoint_readyz_flips_at_sync(void **st)
{
    ifx f;
    ifx_up(&f, "configmaps=5:ns=default");
    kc_server_faults fl = {0};
    fl.rate_503[KC_VERB_LIST] = 1.0;
    ifx_faults(&f, &fl);
    kc_cache *c = NULL;
    kc_error e = KC_ERROR_INIT;
    kc_cache_opts co = {.defaults = {.backoff_initial_ms = 20, .backoff_max_ms = 50}};
    IFX_RC(kc_cache_new(f.client, &co, &c, &e), 0, &e);
    kc_health *h = NULL;
    IFX_RC(kc_health_start(c, "127.0.0.1:0", NULL, &h, &e), 0, &e);
    assert_true(kc_health_port(h) > 0);
    resp r = {0, KC__BUF_INIT(0)};
    /* No informer yet: vacuously ready. */
    assert_int_equal(http_get(h, "/readyz", &r), 200);
    kc_informer *inf = NULL;
    kc_informer_opts o = {.ns = "default", .list_mode = KC_INFORMER_LIST_PAGED};
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &o, &inf, &e), 0, &e);
    assert_int_equal(http_get(h, "/readyz", &r), 503);
    assert_non_null(strstr(r.body.data, "[-]informer default/configmaps failed: not synced"));
    assert_non_null(strstr(r.body.data, "readyz check failed"));
    memset(&fl, 0, sizeof(fl));
    ifx_faults(&f, &fl);
    assert_int_equal(kc_cache_wait_synced(c, 20000), 0);
    assert_int_equal(http_get(h, "/readyz", &r), 200);
    assert_string_equal(r.body.data, "ok");
    assert_int_equal(http_get(h, "/readyz?verbose", &r), 200);
    assert_non_null(strstr(r.body.data, "[+]informer default/configmaps ok\n"));
    assert_non_null(strstr(r.body.data, "readyz check passed"));
    assert_int_equal(http_get(h, "/healthz", &r), 200);
    assert_string_equal(r.body.data, "ok");
    assert_int_equal(http_get(h, "/livez?verbose", &r), 200);
    assert_int_equal(http_get(h, "/nope", &r), 404);
    kc__buf_free(&r.body);
    kc_health_stop(h);
    kc_cache_free(c);
    ifx_down(&f);
}

static void test_health_endpoint_readyz_fails_when_stale(void **st)
{
    ifx f;
    ifx_up(&f, "configmaps=5:ns=default");
    kc_cache *c = NULL;
    kc_error e = KC_ERROR_INIT;
    kc_cache_opts co = {.defaults = {.backoff_initial_ms = 20, .backoff_max_ms = 50}};
    IFX_RC(kc_cache_new(f.client, &co, &c, &e), 0, &e);
    kc_health *h = NULL;
    IFX_RC(kc_health_start(c, NULL, NULL, &h, &e), 0, &e);
    kc_informer *inf = NULL;
    kc_informer_opts o = {.ns = "default", .max_staleness_ms = 300};
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &o, &inf, &e), 0, &e);
    assert_int_equal(kc_cache_wait_synced(c, 20000), 0);
    resp r = {0, KC__BUF_INIT(0)};
    assert_int_equal(readyz_until(h, 200, 5000, &r), 200);
    /* Break the watch: every watch/list fails and the open stream is closed. */
    kc_server_faults fl = {0};
    fl.rate_503[KC_VERB_LIST] = fl.rate_503[KC_VERB_WATCH] = 1.0;
    fl.watch_close_prob = 1.0;
    ifx_faults(&f, &fl);
    assert_int_equal(ifx_cm_create(&f, "default", "poke", "1", NULL), 0); /* an event closes it */
    assert_int_equal(readyz_until(h, 503, 10000, &r), 503);
    assert_non_null(strstr(r.body.data, "failed: stale"));
    assert_true(kc_informer_has_synced(inf)); /* still synced: only freshness failed */
    memset(&fl, 0, sizeof(fl));
    ifx_faults(&f, &fl);
    assert_int_equal(readyz_until(h, 200, 10000, &r), 200);
    kc__buf_free(&r.body);
    kc_health_stop(h);
    kc_cache_free(c);
    ifx_down(&f);
}

static void test_health_endpoint_metrics(void **st)
{
    ifx f;
    ifx_up(&f, "configmaps=5:ns=default");
    kc_cache *c = NULL;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_cache_new(f.client, NULL, &c, &e), 0, &e);
    kc_health *h = NULL;
    IFX_RC(kc_health_start(c, "127.0.0.1:0", NULL, &h, &e), 0, &e);
    kc_informer *inf = NULL;
    kc_informer_opts o = {.ns = "default"};
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &o, &inf, &e), 0, &e);
    assert_int_equal(kc_cache_wait_synced(c, 20000), 0);
    resp r = {0, KC__BUF_INIT(0)};
    assert_int_equal(http_get(h, "/metrics", &r), 200);
    const char *m = r.body.data;
    assert_non_null(strstr(m, "# TYPE kcache_informer_objects gauge\n"));
    assert_non_null(strstr(m, "# HELP kcache_informer_objects "));
    assert_non_null(strstr(m, "kcache_informer_objects{informer=\"default/configmaps\"} 5\n"));
    assert_non_null(strstr(m, "kcache_informer_synced{informer=\"default/configmaps\"} 1\n"));
    assert_non_null(strstr(m, "kcache_informer_ready{informer=\"default/configmaps\"} 1\n"));
    assert_non_null(strstr(m, "# TYPE kcache_informer_relists_total counter\n"));
    assert_non_null(strstr(m, "kcache_informer_watermark{informer=\"default/configmaps\"} "));
    assert_non_null(strstr(m, "kcache_informer_last_sync_duration_seconds{"));
    assert_non_null(strstr(m, "kcache_cache_ready 1\n"));
    kc__buf_free(&r.body);
    kc_health_stop(h);
    kc_cache_free(c);
    ifx_down(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_health_endpoint_readyz_flips_at_sync),
        cmocka_unit_test(test_health_endpoint_readyz_fails_when_stale),
        cmocka_unit_test(test_health_endpoint_metrics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
