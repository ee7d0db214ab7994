/*
 * The health endpoint against the embedded API server: /readyz flips to 200 exactly when the
 * cache syncs, lists each informer with ?verbose, fails again when the watch has been down longer
 * than max_staleness_ms and recovers; /healthz, /livez, /metrics (Prometheus text), 404.
 * /readyz?verbose says why an informer is not synced (its last error; issue 16 point 11), and
 * informers of one resource that differ in selectors or metadata mode have distinct names, so no
 * two Prometheus series share a label set (point 12). Metrics sources of other layers (a work
 * queue's, spec §1.5 M1) appear on /metrics after the cache's, and stop when removed. An informer
 * outside the cache (kc_health_add_informer: what kc_podmeta runs; issue 34 point 7) counts in
 * /readyz and /metrics like the cache's until removed.
 */
#include "test_informer_fixture.h"
#include "kcache/workqueue.h"

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

/* The embedded server with every LIST failing 503, a cache retrying fast, and its endpoint. */
static void up_failing_lists(ifx *f, kc_cache **c, kc_health **h)
{
    ifx_up(f, "configmaps=5:ns=default");
    kc_server_faults fl = {0};
    fl.rate_503[KC_SERVER_VERB_LIST] = 1.0;
    ifx_faults(f, &fl);
    kc_error e = KC_ERROR_INIT;
    kc_informer_opts defaults = {.backoff_initial_ms = 20, .backoff_max_ms = 50};
    kc_cache_opts co = {.defaults = &defaults, .defaults_size = sizeof defaults};
    IFX_RC(kc_cache_new(f->client, &co, c, &e), 0, &e);
    IFX_RC(kc_health_new(*c, "127.0.0.1:0", NULL, h, &e), 0, &e);
}

static void test_health_endpoint_readyz_flips_at_sync(void **st)
{
    ifx f;
    kc_cache *c = NULL;
    kc_health *h = NULL;
    kc_error e = KC_ERROR_INIT;
    up_failing_lists(&f, &c, &h);
    kc_server_faults fl;
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
    assert_int_equal(kc_cache_wait_synced(c, 20000, NULL), 0);
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
    kc_health_free(h);
    kc_cache_free(c);
    ifx_down(&f);
}

/* Poll /readyz?verbose until its body contains text (bounded; as readyz_until). */
static bool readyz_contains(kc_health *h, const char *text, int64_t timeout_ms, resp *r)
{
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    for (;;) {
        http_get(h, "/readyz?verbose", r);
        if (r->body.data && strstr(r->body.data, text))
            return true;
        if (kc__now_ns() >= deadline)
            return false;
        kc__sleep_ns(20 * KC__NS_PER_MS);
    }
}

static void test_health_endpoint_readyz_says_why(void **st)
{
    ifx f;
    kc_cache *c = NULL;
    kc_health *h = NULL;
    kc_error e = KC_ERROR_INIT;
    up_failing_lists(&f, &c, &h);
    kc_server_faults fl;
    kc_informer *inf = NULL;
    kc_informer_opts o = {.ns = "default", .list_mode = KC_INFORMER_LIST_PAGED};
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &o, &inf, &e), 0, &e);
    resp r = {0, KC__BUF_INIT(0)};
    assert_true(readyz_contains(h, "last error", 10000, &r));
    assert_int_equal(r.status, 503);
    assert_non_null(strstr(r.body.data, "[-]informer default/configmaps failed: not synced: last "
                                        "error "));
    assert_non_null(strstr(r.body.data, "in a row): KC_ESERVER (HTTP 503 ServiceUnavailable): "
                                        "injected fault"));
    memset(&fl, 0, sizeof(fl));
    ifx_faults(&f, &fl);
    assert_int_equal(kc_cache_wait_synced(c, 20000, NULL), 0);
    assert_int_equal(http_get(h, "/readyz?verbose", &r), 200);
    assert_null(strstr(r.body.data, "last error")); /* recovered: the streak is over */
    kc__buf_free(&r.body);
    kc_health_free(h);
    kc_cache_free(c);
    ifx_down(&f);
}

/* Every series line "name{labels} value" of a metrics text: no "name{labels}" twice. */
static void assert_unique_series(const char *m)
{
    size_t n = 0, cap = 256;
    char **seen = calloc(cap, sizeof(char *));
    for (const char *line = m; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *sp = memchr(line, ' ', len);
        if (line[0] != '#' && sp) {
            char *key = strndup(line, (size_t)(sp - line));
            for (size_t i = 0; i < n; i++) {
                if (strcmp(seen[i], key) == 0)
                    fprintf(stderr, "duplicate series: %s\n", key);
                assert_string_not_equal(seen[i], key);
            }
            if (n == cap)
                seen = realloc(seen, (cap *= 2) * sizeof(char *));
            seen[n++] = key;
        }
        line += len + (end ? 1 : 0);
    }
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++)
        free(seen[i]);
    free(seen);
}

static void test_health_endpoint_distinct_names(void **st)
{
    ifx f;
    ifx_up(&f, "configmaps=5:ns=default");
    kc_cache *c = NULL;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_cache_new(f.client, NULL, &c, &e), 0, &e);
    kc_health *h = NULL;
    IFX_RC(kc_health_new(c, NULL, NULL, &h, &e), 0, &e);
    kc_informer_opts plain = {.ns = "default"};
    kc_informer_opts fielded = {.ns = "default", .field_selector = "metadata.name=x"};
    kc_informer_opts meta = {.ns = "default", .metadata_only = true};
    kc_informer *a = NULL, *b = NULL, *m = NULL;
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &plain, &a, &e), 0, &e);
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &fielded, &b, &e), 0, &e);
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &meta, &m, &e), 0, &e);
    assert_int_equal(kc_cache_wait_synced(c, 20000, NULL), 0);
    resp r = {0, KC__BUF_INIT(0)};
    assert_int_equal(http_get(h, "/metrics", &r), 200);
    assert_unique_series(r.body.data); /* all three were informer="default/configmaps" */
    assert_string_equal(kc_informer_name(a), "default/configmaps");
    assert_string_equal(kc_informer_name(b), "default/configmaps[metadata.name=x]");
    assert_string_equal(kc_informer_name(m), "default/configmaps(metadata-only)");
    assert_int_equal(http_get(h, "/readyz?verbose", &r), 200);
    assert_non_null(strstr(r.body.data, "[+]informer default/configmaps ok\n"));
    assert_non_null(strstr(r.body.data, "[+]informer default/configmaps[metadata.name=x] ok\n"));
    assert_non_null(strstr(r.body.data, "[+]informer default/configmaps(metadata-only) ok\n"));
    assert_int_equal(http_get(h, "/metrics", &r), 200);
    assert_non_null(strstr(r.body.data, "kcache_informer_objects{informer=\"default/configmaps("
                                        "metadata-only)\",group=\"\",version=\"v1\",resource=\""
                                        "configmaps\",namespace=\"default\"} 5\n"));
    /* A name given in the options must not be another informer's. */
    kc_informer_opts taken = {.ns = "kube-system", .name = "default/configmaps"};
    kc_informer *x = NULL;
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &taken, &x, &e), KC_EINVAL, &e);
    assert_non_null(strstr(e.message, "\"default/configmaps\" is already used"));
    kc_error_clear(&e);
    kc_informer_opts mine = {.ns = "kube-system", .name = "mine"};
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &mine, &x, &e), 0, &e);
    assert_string_equal(kc_informer_name(x), "mine");
    kc_informer_opts mine2 = {.label_selector = "a=b", .name = "mine"};
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &mine2, &x, &e), KC_EINVAL, &e);
    kc_error_clear(&e);
    assert_int_equal(kc_cache_informer_count(c), 4);
    kc__buf_free(&r.body);
    kc_health_free(h);
    kc_cache_free(c);
    ifx_down(&f);
}

static void test_health_endpoint_readyz_fails_when_stale(void **st)
{
    ifx f;
    ifx_up(&f, "configmaps=5:ns=default");
    kc_cache *c = NULL;
    kc_error e = KC_ERROR_INIT;
    kc_informer_opts defaults = {.backoff_initial_ms = 20, .backoff_max_ms = 50};
    kc_cache_opts co = {.defaults = &defaults, .defaults_size = sizeof defaults};
    IFX_RC(kc_cache_new(f.client, &co, &c, &e), 0, &e);
    kc_health *h = NULL;
    IFX_RC(kc_health_new(c, NULL, NULL, &h, &e), 0, &e);
    kc_informer *inf = NULL;
    kc_informer_opts o = {.ns = "default", .max_staleness_ms = 300};
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &o, &inf, &e), 0, &e);
    assert_int_equal(kc_cache_wait_synced(c, 20000, NULL), 0);
    resp r = {0, KC__BUF_INIT(0)};
    assert_int_equal(readyz_until(h, 200, 5000, &r), 200);
    /* Break the watch: every watch/list fails and the open stream is closed. */
    kc_server_faults fl = {0};
    fl.rate_503[KC_SERVER_VERB_LIST] = fl.rate_503[KC_SERVER_VERB_WATCH] = 1.0;
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
    kc_health_free(h);
    kc_cache_free(c);
    ifx_down(&f);
}

/* The labels of the series of the "default/configmaps" informer. */
#define CM_LABELS                                                                                  \
    "{informer=\"default/configmaps\",group=\"\",version=\"v1\",resource=\"configmaps\","          \
    "namespace=\"default\"}"

/* The embedded server with 5 configmaps, a cache, and its endpoint. */
static void up_endpoint(ifx *f, kc_cache **c, kc_health **h)
{
    ifx_up(f, "configmaps=5:ns=default");
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_cache_new(f->client, NULL, c, &e), 0, &e);
    IFX_RC(kc_health_new(*c, "127.0.0.1:0", NULL, h, &e), 0, &e);
}

static void test_health_endpoint_metrics(void **st)
{
    ifx f;
    kc_cache *c = NULL;
    kc_health *h = NULL;
    kc_error e = KC_ERROR_INIT;
    up_endpoint(&f, &c, &h);
    kc_informer *inf = NULL;
    kc_informer_opts o = {.ns = "default"};
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &o, &inf, &e), 0, &e);
    assert_int_equal(kc_cache_wait_synced(c, 20000, NULL), 0);
    resp r = {0, KC__BUF_INIT(0)};
    assert_int_equal(http_get(h, "/metrics", &r), 200);
    const char *m = r.body.data;
    assert_non_null(strstr(m, "# TYPE kcache_informer_objects gauge\n"));
    assert_non_null(strstr(m, "# HELP kcache_informer_objects "));
    assert_non_null(strstr(m, "kcache_informer_objects" CM_LABELS " 5\n"));
    assert_non_null(strstr(m, "kcache_informer_synced" CM_LABELS " 1\n"));
    assert_non_null(strstr(m, "kcache_informer_ready" CM_LABELS " 1\n"));
    assert_non_null(strstr(m, "kcache_informer_consecutive_errors" CM_LABELS " 0\n"));
    assert_non_null(strstr(m, "# TYPE kcache_informer_relists_total counter\n"));
    assert_non_null(strstr(m, "kcache_informer_watermark" CM_LABELS " "));
    assert_non_null(strstr(m, "kcache_informer_last_sync_duration_seconds{"));
    assert_non_null(strstr(m, "kcache_cache_ready 1\n"));
    kc__buf_free(&r.body);
    kc_health_free(h);
    kc_cache_free(c);
    ifx_down(&f);
}

/* A work queue's metrics (client-go's names) are served on /metrics through a metrics source. */
static void test_health_endpoint_metrics_sources(void **st)
{
    ifx f;
    kc_cache *c = NULL;
    kc_health *h = NULL;
    kc_error e = KC_ERROR_INIT;
    up_endpoint(&f, &c, &h);
    kc_workqueue *q = NULL;
    kc_workqueue_opts qo = {.name = "migrations"};
    IFX_RC(kc_workqueue_new(&qo, &q, &e), 0, &e);
    assert_int_equal(kc_workqueue_add(q, "default/m1"), 0);
    assert_int_equal(kc_workqueue_add(q, "default/m2"), 0);
    assert_int_equal(kc_health_add_metrics_source(h, kc_workqueue_metrics_render, q), 0);
    resp r = {0, KC__BUF_INIT(0)};
    assert_int_equal(http_get(h, "/metrics", &r), 200);
    const char *m = r.body.data;
    assert_non_null(strstr(m, "kcache_cache_ready ")); /* the cache's metrics are still there */
    assert_non_null(strstr(m, "# TYPE workqueue_depth gauge\n"));
    assert_non_null(strstr(m, "workqueue_depth{name=\"migrations\"} 2\n"));
    assert_non_null(strstr(m, "workqueue_adds_total{name=\"migrations\"} 2\n"));
    assert_non_null(strstr(m, "workqueue_queue_duration_seconds_bucket{name=\"migrations\","));
    assert_non_null(strstr(m, "workqueue_retries_total{name=\"migrations\"} 0\n"));
    assert_true(strstr(m, "kcache_cache_ready ") < strstr(m, "workqueue_depth"));
    assert_int_equal(kc_health_remove_metrics_source(h, kc_workqueue_metrics_render, q), 0);
    assert_int_equal(kc_health_remove_metrics_source(h, kc_workqueue_metrics_render, q),
                     KC_ENOTFOUND);
    kc_workqueue_free(q); /* safe: the endpoint no longer calls it */
    assert_int_equal(http_get(h, "/metrics", &r), 200);
    assert_null(strstr(r.body.data, "workqueue_"));
    assert_int_equal(kc_health_add_metrics_source(h, NULL, NULL), KC_EINVAL);
    kc__buf_free(&r.body);
    kc_health_free(h);
    kc_cache_free(c);
    ifx_down(&f);
}

/* An informer the cache does not own: /readyz 503 naming it until it syncs, then 200; its
 * series on /metrics; removed, it is no longer read (and may be freed). */
static void test_health_endpoint_outside_informer(void **st)
{
    ifx f;
    kc_cache *c = NULL;
    kc_health *h = NULL;
    kc_error e = KC_ERROR_INIT;
    up_failing_lists(&f, &c, &h);
    kc_informer *inf = NULL;
    kc_informer_opts o = {.ns = "default",
                          .name = "outside-cms",
                          .list_mode = KC_INFORMER_LIST_PAGED,
                          .backoff_initial_ms = 20,
                          .backoff_max_ms = 50};
    IFX_RC(kc_informer_new(f.client, &ifx_cm, &o, &inf, &e), 0, &e);
    IFX_RC(kc_informer_start(inf, &e), 0, &e);
    assert_int_equal(kc_health_add_informer(h, inf, true), 0);
    assert_int_equal(kc_health_add_informer(h, inf, true), KC_EEXISTS);
    resp r = {0, KC__BUF_INIT(0)};
    assert_int_equal(http_get(h, "/readyz?verbose", &r), 503);
    assert_non_null(strstr(r.body.data, "[-]informer outside-cms failed: not synced"));
    kc_server_faults fl;
    memset(&fl, 0, sizeof(fl));
    ifx_faults(&f, &fl);
    assert_int_equal(kc_informer_wait_synced(inf, 20000, NULL), 0);
    assert_int_equal(readyz_until(h, 200, 10000, &r), 200);
    assert_non_null(strstr(r.body.data, "[+]informer outside-cms ok\n"));
    assert_int_equal(http_get(h, "/metrics", &r), 200);
    assert_non_null(strstr(r.body.data, "kcache_informer_objects{informer=\"outside-cms\","));
    assert_int_equal(kc_health_remove_informer(h, inf), 0);
    assert_int_equal(kc_health_remove_informer(h, inf), KC_ENOTFOUND);
    kc_informer_free(inf); /* safe: the endpoint no longer reads it */
    assert_int_equal(http_get(h, "/readyz?verbose", &r), 200);
    assert_null(strstr(r.body.data, "outside-cms"));
    assert_int_equal(kc_health_add_informer(h, NULL, true), KC_EINVAL);
    kc__buf_free(&r.body);
    kc_health_free(h);
    kc_cache_free(c);
    ifx_down(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_health_endpoint_readyz_flips_at_sync),
        cmocka_unit_test(test_health_endpoint_readyz_fails_when_stale),
        cmocka_unit_test(test_health_endpoint_metrics),
        cmocka_unit_test(test_health_endpoint_metrics_sources),
        cmocka_unit_test(test_health_endpoint_readyz_says_why),
        cmocka_unit_test(test_health_endpoint_distinct_names),
        cmocka_unit_test(test_health_endpoint_outside_informer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
