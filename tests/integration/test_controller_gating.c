/*
 * Start gated on readiness (spec C9) against the embedded API server with faults: no reconcile
 * runs before every cache the controller reads has synced (the recorder checks the cache in every
 * reconcile and a single one before sync fails the test), a sync that does not come within the
 * timeout fails the start with the reason of the informer that did not sync, a resource the
 * server does not serve fails it at once, /readyz answers 503 while starting and 200 once
 * started, and the activity gate (wave 2.4's hook) holds keys while closed.
 */
#include "test_controller_fixture.h"

#include <curl/curl.h>

/* Whether GET base+path answers 200 with a body containing want. */
static bool http_body_has(const char *base, const char *path, const char *want)
{
    long st;
    char *body = cfx_http_get(base, path, &st);
    bool ok = st == 200 && body && strstr(body, want) != NULL;
    if (!ok)
        fprintf(stderr, "GET %s: %ld, no \"%s\" in:\n%s\n", path, st, want, body ? body : "");
    free(body);
    return ok;
}

typedef struct starter {
    kc_controller *c;
    int rc;
} starter;

static void *start_main(void *arg)
{
    starter *s = arg;
    s->rc = kc_controller_start(s->c, NULL);
    return NULL;
}

/* Bounded poll of an informer's status (the failures counted are the reflector's, with no event
 * to wait on). */
static bool wait_errors(kc_informer *inf, uint64_t n, int64_t timeout_ms)
{
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    kc_informer_status is;
    kc_informer_get_status(inf, &is);
    while (is.consecutive_errors < n && kc__now_ns() < deadline) {
        kc__sleep_ns(KC__NS_PER_MS);
        kc_informer_get_status(inf, &is);
    }
    return is.consecutive_errors >= n;
}

/* C9: every cache, not only the primary one. 200 ConfigMaps (primary, streaming list, initial
 * events delayed 50–150 ms by the watch lag) sync first and fill the queue; the owned Secrets'
 * informer (paged LIST) keeps failing 503 until it has failed 5 times in a row — a window in
 * which a controller gated on the primary cache alone would reconcile all 200 — then the faults
 * clear. Every reconcile checks the cache: none ran before it had synced. */
static void test_controller_no_reconcile_before_sync(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, "configmaps=200:ns=default,secrets=50:ns=default", NULL);
    kc_server_faults fl = {0};
    fl.watch_delay_min_ms = 50;
    fl.watch_delay_max_ms = 150;
    fl.rate_503[KC_SERVER_VERB_LIST] = 1.0;
    ifx_faults(&x.f, &fl);
    x.o.max_concurrent_reconciles = 4;
    kc_controller *c = cfx_make(&x);
    kc_informer_opts paged = {
        .list_mode = KC_INFORMER_LIST_PAGED, .backoff_initial_ms = 20, .backoff_max_ms = 50};
    kc_controller_type owned = {
        .gvr = cfx_secrets, .informer = &paged, .informer_size = sizeof paged};
    assert_int_equal(kc_controller_own(c, &owned, NULL), 0);
    starter s = {c, 1};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, start_main, &s), 0);
    kc_cache *cache = kc_controller_cache(c);
    uint64_t deadline = kc__deadline_after_ms(10000);
    while (kc_cache_informer_count(cache) < 2 && kc__now_ns() < deadline)
        kc__sleep_ns(KC__NS_PER_MS); /* bounded poll: start registers the informers */
    assert_int_equal(kc_cache_informer_count(cache), 2);
    kc_informer *cms = kc_cache_informer_at(cache, 0), *secs = kc_cache_informer_at(cache, 1);
    assert_int_equal(kc_informer_wait_synced(cms, 20000, NULL), 0);
    assert_true(wait_errors(secs, 5, 20000));
    assert_false(kc_informer_has_synced(secs));
    fl.rate_503[KC_SERVER_VERB_LIST] = 0;
    ifx_faults(&x.f, &fl);
    pthread_join(t, NULL);
    assert_int_equal(s.rc, 0);
    assert_true(kc_cache_has_synced(cache));
    char key[64];
    for (int i = 0; i < 200; i++) {
        /* the seed names ConfigMaps cm-00000, cm-00001, … */
        snprintf(key, sizeof(key), "default/cm-%05d", i);
        if (!crec_wait_key(&x.r, key, 1, 20000))
            fail_msg("%s never reconciled", key);
    }
    pthread_mutex_lock(&x.r.mu);
    unsigned before = x.r.before_sync;
    pthread_mutex_unlock(&x.r.mu);
    if (before)
        fail_msg("%u reconciles ran before the caches synced", before);
    cfx_down(&x);
}

/* C9: a sync that does not come within sync_timeout_ms fails the start with KC_ETIMEOUT and the
 * reason: the informer's name and its last error (HTTP 503 from the faults). Nothing was
 * reconciled; the controller is stopped. */
static void test_controller_sync_timeout_fails_start(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, "configmaps=5:ns=default", NULL);
    cfx_fail_lists(&x);
    x.o.sync_timeout_ms = 1500;
    kc_controller *c = cfx_make(&x);
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_controller_start(c, &e), KC_ETIMEOUT);
    assert_non_null(e.message);
    if (!strstr(e.message, "configmaps") || !strstr(e.message, "503"))
        fail_msg("reason does not name the informer and its error: %s", e.message);
    kc_error_clear(&e);
    assert_int_equal(kc_controller_start(c, NULL), KC_ESTOPPED);
    assert_int_equal(kc_controller_enqueue(c, "default", "x"), KC_ESTOPPED);
    pthread_mutex_lock(&x.r.mu);
    assert_int_equal(x.r.n, 0);
    pthread_mutex_unlock(&x.r.mu);
    cfx_down(&x);
}

/* C9: a resource the server does not serve fails the start at once (not after the 2 min). */
static void test_controller_unserved_resource_fails_fast(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, NULL, NULL);
    x.o.sync_timeout_ms = 0; /* default: 2 min; the test's own timeout is shorter */
    x.primary.gvr = (kc_gvr){"example.com", "v1", "nopes"};
    x.primary.kind = "Nope";
    kc_controller *c = cfx_make(&x);
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_controller_start(c, &e), KC_ENOTFOUND);
    assert_non_null(e.message);
    assert_non_null(strstr(e.message, "nopes"));
    kc_error_clear(&e);
    cfx_down(&x);
}

static long http_status(const char *base, const char *path)
{
    char url[256];
    snprintf(url, sizeof(url), "%s%s", base, path);
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
    long st = -1;
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st);
    curl_easy_cleanup(h);
    return st;
}

/* C9: /readyz is served while starting: 503 while the watch stalls the initial events, 200 once
 * the start has returned. */
static void test_controller_readyz_while_starting(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, "configmaps=5:ns=default", NULL);
    cfx_fail_lists(&x);
    x.o.health_listen = "127.0.0.1:0";
    kc_controller *c = cfx_make(&x);
    starter s = {c, 1};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, start_main, &s), 0);
    uint64_t deadline = kc__deadline_after_ms(10000);
    while (!kc_controller_health_url(c) && kc__now_ns() < deadline)
        kc__sleep_ns(KC__NS_PER_MS); /* bounded poll: the endpoint comes up on the start thread */
    const char *url = kc_controller_health_url(c);
    assert_non_null(url);
    assert_int_equal(http_status(url, "/readyz"), 503);
    assert_int_equal(http_status(url, "/healthz"), 200);
    kc_server_faults none = {0};
    ifx_faults(&x.f, &none);
    pthread_join(t, NULL);
    assert_int_equal(s.rc, 0);
    assert_int_equal(http_status(url, "/readyz"), 200);
    /* the controller's queue metrics (M1) beside the cache's */
    assert_true(
        http_body_has(url, "/metrics", "workqueue_adds_total{controller=\"test\",name=\"test\"}"));
    cfx_down(&x);
}

/* The gate: started inactive, keys are put back, not reconciled; opening it reconciles them;
 * closing it again holds the next key. */
static void test_controller_gate_toggle(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, NULL, NULL);
    x.o.start_inactive = true;
    kc_controller *c = cfx_make(&x);
    assert_false(kc_controller_active(c));
    cfx_start(c);
    cfx_create_cm(&x.f, "g1");
    kc_controller_stats s;
    assert_true(CFX_WAIT_STATS(c, s, s.put_back >= 1, 10000));
    assert_int_equal(crec_count(&x.r, "default/g1"), 0);
    assert_int_equal(kc_controller_set_active(c, true), 0);
    assert_true(kc_controller_active(c));
    assert_true(crec_wait_key(&x.r, "default/g1", 1, 10000));
    assert_int_equal(kc_controller_set_active(c, false), 0);
    kc_controller_get_stats(c, &s);
    uint64_t pb = s.put_back;
    kc_controller_enqueue(c, "default", "g2");
    assert_true(CFX_WAIT_STATS(c, s, s.put_back > pb, 10000));
    assert_int_equal(crec_count(&x.r, "default/g2"), 0);
    kc_controller_set_active(c, true);
    assert_true(crec_wait_key(&x.r, "default/g2", 1, 10000));
    assert_int_equal(kc_controller_set_active(NULL, true), KC_EINVAL);
    cfx_down(&x);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_controller_no_reconcile_before_sync),
        cmocka_unit_test(test_controller_sync_timeout_fails_start),
        cmocka_unit_test(test_controller_unserved_resource_fails_fast),
        cmocka_unit_test(test_controller_readyz_while_starting),
        cmocka_unit_test(test_controller_gate_toggle),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
