/*
 * An informer that cannot sync says why, and one that never can fails fast (issue 16 points 7 and
 * 11). Against the embedded API server, a fake server answering 403, and a closed port:
 *   - a resource the server does not serve: waits (informer, cache, cached client) return
 *     KC_ENOTFOUND at once, not KC_ETIMEOUT; the informer still syncs once the CRD exists;
 *   - a field selector the server rejects (400): KC_EBADREQUEST at once, the server's reason in
 * err;
 *   - wrong token (401), 403, a closed port: the wait times out, and its kc_error and
 *     kc_informer_status carry the last error (code, HTTP status, reason, message, time, count);
 *   - a timed-out kc_cache_wait_synced names every pending informer and its last error;
 *   - repeated failures are logged at warning level, without the token.
 * Waits are bounded by their own timeouts: "fails fast" is proven by getting the failure code from
 * a wait whose timeout is far away, not by measuring time.
 */
#include "test_informer_fixture.h"

#include "kcache/cached_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

static const kc_gvr widgets = {"example.com", "v1", "widgets"};

/* Fast retries so that several failures happen within a test. */
static const kc_informer_opts FAST = {.backoff_initial_ms = 10, .backoff_max_ms = 40};

static kc_informer *start(kc_client *client, const kc_gvr *gvr, kc_informer_opts o)
{
    kc_informer *inf = NULL;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_informer_new(client, gvr, &o, &inf, &e), 0, &e);
    IFX_RC(kc_informer_start(inf, &e), 0, &e);
    return inf;
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!hay || !strstr(hay, needle))
        fprintf(stderr, "expected \"%s\" in: %s\n", needle, hay ? hay : "(null)");
    assert_non_null(hay);
    assert_non_null(strstr(hay, needle));
}

static void create_widget_crd(ifx *f)
{
    const kc_gvr crd = {"apiextensions.k8s.io", "v1", "customresourcedefinitions"};
    const char *body =
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
        "\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
        "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","
        "\"kind\":\"Widget\"},\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
        "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
        "\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_client_create(f->client, &crd, NULL, body, strlen(body), NULL, NULL, &e), 0, &e);
}

/* ---- point 7: resources the server does not serve ----------------------------------------- */

static void test_informer_errors_unknown_resource_fails_fast(void **st)
{
    ifx f;
    ifx_up(&f, NULL);
    kc_informer *inf = start(f.client, &widgets, FAST);
    kc_error e = KC_ERROR_INIT;
    /* 60 s away: a KC_ETIMEOUT would be the old behaviour (and would take a minute). */
    IFX_RC(kc_informer_wait_synced(inf, 60000, &e), KC_ENOTFOUND, &e);
    assert_contains(e.message, "informer widgets.v1.example.com: the server does not serve");
    assert_contains(e.message, "KC_ENOTFOUND (HTTP 404 NotFound)");
    assert_int_equal(e.http_status, 404);
    assert_string_equal(e.reason, "NotFound");
    kc_error_clear(&e);
    kc_informer_status s;
    kc_informer_get_status(inf, &s);
    assert_false(s.synced);
    assert_int_equal(s.last_error_code, KC_ENOTFOUND);
    assert_int_equal(s.last_error_http_status, 404);
    assert_true(s.consecutive_errors >= 1);
    /* A second wait does not wait either. */
    IFX_RC(kc_informer_wait_synced(inf, 60000, NULL), KC_ENOTFOUND, NULL);
    kc_informer_free(inf);
    ifx_down(&f);
}

static void test_informer_errors_unknown_resource_cache_and_cached_client(void **st)
{
    ifx f;
    ifx_up(&f, NULL);
    kc_cache_opts co = {.defaults = &FAST, .defaults_size = sizeof FAST};
    kc_cache *c = NULL;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_cache_new(f.client, &co, &c, &e), 0, &e);
    kc_cached_client *cc = NULL;
    IFX_RC(kc_cached_client_new(f.client, c, NULL, &cc, &e), 0, &e);
    kc_cached_call_opts call = {.timeout_ms =
                                    60000}; /* far away: KC_ETIMEOUT would be the old result */
    kc_obj *o = NULL;
    IFX_RC(kc_cached_client_get(cc, &widgets, "default", "w1", &call, &o, &e), KC_ENOTFOUND, &e);
    assert_contains(e.message, "widgets.v1.example.com");
    assert_contains(e.message, "does not serve");
    kc_error_clear(&e);
    kc_obj **items = NULL;
    size_t n = 0;
    IFX_RC(kc_cached_client_list(cc, &widgets, NULL, NULL, NULL, &call, &items, &n, &e),
           KC_ENOTFOUND, &e);
    kc_error_clear(&e);
    /* The default 3 s bound: still KC_ENOTFOUND, not KC_ETIMEOUT. */
    IFX_RC(kc_cached_client_get(cc, &widgets, "default", "w1", NULL, &o, &e), KC_ENOTFOUND, &e);
    kc_error_clear(&e);
    IFX_RC(kc_cache_wait_synced(c, 60000, &e), KC_ENOTFOUND, &e);
    assert_contains(e.message, "informer widgets.v1.example.com");
    kc_error_clear(&e);
    kc_cache_stop(c);
    kc_cached_client_free(cc);
    kc_cache_free(c);
    ifx_down(&f);
}

/* Fail fast is for waiters only: the reflector keeps retrying, so a CRD created later syncs. */
static void test_informer_errors_crd_created_later_syncs(void **st)
{
    ifx f;
    ifx_up(&f, NULL);
    kc_informer *inf = start(f.client, &widgets, FAST);
    IFX_RC(kc_informer_wait_synced(inf, 60000, NULL), KC_ENOTFOUND, NULL);
    create_widget_crd(&f);
    struct pollfd p = {kc_informer_sync_fd(inf), POLLIN, 0};
    assert_int_equal(poll(&p, 1, 20000), 1); /* event-driven: readable exactly when synced */
    IFX_RC(kc_informer_wait_synced(inf, 0, NULL), 0, NULL);
    kc_informer_status s;
    kc_informer_get_status(inf, &s);
    assert_int_equal(s.consecutive_errors, 0);
    assert_int_equal(s.last_error_code, KC_ENOTFOUND); /* kept after recovery */
    kc_informer_free(inf);
    ifx_down(&f);
}

/* ---- point 6 / 11: a request the server rejects ------------------------------------------- */

static void test_informer_errors_rejected_field_selector_fails_fast(void **st)
{
    ifx f;
    ifx_up(&f, NULL);
    kc_informer_opts o = FAST;
    o.field_selector = "spec.foo=x"; /* well-formed, but configmaps have no such field label */
    kc_informer *inf = start(f.client, &ifx_cm, o);
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_informer_wait_synced(inf, 60000, &e), KC_EBADREQUEST, &e);
    assert_contains(e.message, "configmaps[spec.foo=x]: the server rejected the initial list");
    assert_contains(e.message, "HTTP 400 BadRequest");
    assert_contains(e.message, "spec.foo");
    kc_error_clear(&e);
    kc_informer_free(inf);
    ifx_down(&f);
}

/* ---- point 11: say why ---------------------------------------------------------------------- */

/* Wait until the informer has failed at least n times in a row (bounded; the failures are the
 * observable condition, the sync wait is woken by each). */
static void wait_failures(kc_informer *inf, uint64_t n)
{
    uint64_t deadline = kc__deadline_after_ms(20000);
    kc_informer_status s;
    for (;;) {
        kc_informer_get_status(inf, &s);
        if (s.consecutive_errors >= n || kc__now_ns() >= deadline)
            break;
        kc_informer_wait_synced(inf, 50, NULL); /* woken by a failure or the sync */
    }
    assert_true(s.consecutive_errors >= n);
}

/* The embedded server requiring a token, and a client sending another one. */
static void up_with_wrong_token(ifx *f, const char *client_token)
{
    memset(f, 0, sizeof(*f));
    kc_server_opts so = {.listen = "127.0.0.1:0", .quiet = true, .token = "right-token"};
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_server_new(&so, &f->srv, &e), 0, &e);
    IFX_RC(kc_server_start(f->srv, &e), 0, &e);
    IFX_RC(kc_config_from_url(kc_server_url(f->srv), NULL, client_token, &f->cfg, &e), 0, &e);
    kc_client_opts cop = {.qps = -1, .max_retries = -1};
    IFX_RC(kc_client_new(f->cfg, &cop, &f->client, &e), 0, &e);
}

static void test_informer_errors_wrong_token_says_why(void **st)
{
    ifx f;
    up_with_wrong_token(&f, "wrong-token");
    kc_error e = KC_ERROR_INIT;
    kc_informer *inf = start(f.client, &ifx_cm, FAST);
    wait_failures(inf, 1);
    IFX_RC(kc_informer_wait_synced(inf, 200, &e), KC_ETIMEOUT, &e);
    assert_contains(e.message, "informer configmaps: not synced after");
    assert_contains(e.message, "last error (");
    assert_contains(e.message, "KC_EUNAUTHORIZED (HTTP 401");
    assert_int_equal(e.http_status, 401);
    assert_null(strstr(e.message, "wrong-token"));
    kc_error_clear(&e);
    kc_informer_status s;
    kc_informer_get_status(inf, &s);
    assert_int_equal(s.last_error_code, KC_EUNAUTHORIZED);
    assert_int_equal(s.last_error_http_status, 401);
    assert_true(s.last_error_message[0] != '\0');
    assert_true(s.last_error_unix_ms > 1600000000000LL); /* wall clock, ms */
    assert_true(s.last_error_age_ms >= 0);
    kc_informer_free(inf);
    ifx_down(&f);
}

/* A server that answers every request with one Status (403 here). */
static enum MHD_Result forbid(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    static const char body[] =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
        "\"configmaps is forbidden: User \\\"system:anonymous\\\" cannot list resource "
        "\\\"configmaps\\\"\",\"reason\":\"Forbidden\",\"code\":403}";
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, 403, r);
    MHD_destroy_response(r);
    return ret;
}

static void test_informer_errors_forbidden_says_why(void **st)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *d =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, forbid, NULL,
                         MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_END);
    assert_non_null(d);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d",
             MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port);
    ifx f;
    memset(&f, 0, sizeof(f));
    ifx_client_for(&f, url);
    kc_informer *inf = start(f.client, &ifx_cm, FAST);
    wait_failures(inf, 1);
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_informer_wait_synced(inf, 200, &e), KC_ETIMEOUT, &e); /* 403 is not permanent */
    assert_contains(e.message, "KC_EFORBIDDEN (HTTP 403 Forbidden): configmaps is forbidden");
    assert_int_equal(e.http_status, 403);
    assert_string_equal(e.reason, "Forbidden");
    kc_error_clear(&e);
    kc_informer_status s;
    kc_informer_get_status(inf, &s);
    assert_int_equal(s.last_error_code, KC_EFORBIDDEN);
    assert_string_equal(s.last_error_reason, "Forbidden");
    kc_informer_free(inf);
    ifx_down(&f);
    MHD_stop_daemon(d);
}

static void test_informer_errors_closed_port_says_why(void **st)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof(sa);
    assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
    close(s); /* nothing listens there now: connection refused */
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(sa.sin_port));
    ifx f;
    memset(&f, 0, sizeof(f));
    ifx_client_for(&f, url);
    kc_informer *inf = start(f.client, &ifx_cm, FAST);
    wait_failures(inf, 1);
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_informer_wait_synced(inf, 200, &e), KC_ETIMEOUT, &e);
    assert_contains(e.message, "informer configmaps: not synced after");
    assert_contains(e.message, "KC_EIO: ");
    assert_int_equal(e.http_status, 0);
    kc_error_clear(&e);
    kc_informer_status st2;
    kc_informer_get_status(inf, &st2);
    assert_int_equal(st2.last_error_code, KC_EIO);
    assert_int_equal(st2.last_error_http_status, 0);
    kc_informer_free(inf);
    ifx_down(&f);
}

static void test_informer_errors_cache_timeout_names_each_informer(void **st)
{
    ifx f;
    ifx_up(&f, NULL);
    kc_server_faults fl = {0};
    fl.rate_503[KC_SERVER_VERB_LIST] = 1.0;
    ifx_faults(&f, &fl);
    kc_informer_opts defaults = FAST;
    defaults.list_mode = KC_INFORMER_LIST_PAGED;
    kc_cache_opts co = {.defaults = &defaults, .defaults_size = sizeof defaults};
    kc_cache *c = NULL;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_cache_new(f.client, &co, &c, &e), 0, &e);
    kc_informer *a = NULL, *b = NULL;
    kc_informer_opts oa = {.ns = "default"}, ob = {.metadata_only = true};
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &oa, &a, &e), 0, &e);
    IFX_RC(kc_cache_get_informer(c, &ifx_pods, &ob, &b, &e), 0, &e);
    wait_failures(a, 1);
    wait_failures(b, 1);
    IFX_RC(kc_cache_wait_synced(c, 100, &e), KC_ETIMEOUT, &e);
    assert_contains(e.message, "cache: 2 required informers not synced after");
    assert_contains(e.message, "default/configmaps (last error");
    assert_contains(e.message, "pods(metadata-only) (last error");
    assert_contains(e.message, "KC_ESERVER (HTTP 503");
    kc_error_clear(&e);
    kc_cache_free(c);
    ifx_down(&f);
}

/* ---- warnings in the log ------------------------------------------------------------------- */

/* What the library logged while capturing: every message, as "<level> <subsystem>: <message>\n",
 * through a sink installed with kc_log_set (the library writes nothing on its own). */
typedef struct capture {
    pthread_mutex_t mu;
    kc__buf text;
} capture;

static void capture_sink(void *ud, kc_log_level level, const char *sub, const char *msg)
{
    capture *c = ud;
    pthread_mutex_lock(&c->mu);
    kc__buf_printf(&c->text, "%s %s: %s\n", kc_log_level_name(level), sub, msg);
    pthread_mutex_unlock(&c->mu);
}

static void capture_start(capture *c)
{
    pthread_mutex_init(&c->mu, NULL);
    kc__buf_init(&c->text, 0);
    assert_int_equal(kc_log_set(capture_sink, c, KC_LOG_LEVEL_WARN), 0);
}

/* Remove the sink; returns what was logged (malloc'd). */
static char *capture_end(capture *c)
{
    assert_int_equal(kc_log_set(NULL, NULL, KC_LOG_LEVEL_WARN), 0);
    char *s = c->text.data ? kc__buf_steal(&c->text, NULL) : strdup("");
    pthread_mutex_destroy(&c->mu);
    return s;
}

static void test_informer_errors_repeated_failures_warn(void **st)
{
    ifx f;
    up_with_wrong_token(&f, "s3cr3t-wrong-token");
    capture cap;
    capture_start(&cap);
    kc_informer_opts o = FAST;
    o.ns = "default";
    kc_informer *inf = start(f.client, &ifx_cm, o);
    wait_failures(inf, 4);
    kc_informer_stop(inf); /* nothing logs after this */
    char *log = capture_end(&cap);
    assert_contains(log, "warn informer: informer default/configmaps: list failed (3 in a row): "
                         "KC_EUNAUTHORIZED (HTTP 401");
    assert_null(strstr(log, "(1 in a row)")); /* a lone failure is not a warning */
    assert_null(strstr(log, "s3cr3t"));
    free(log);
    kc_informer_free(inf);
    ifx_down(&f);
}

static void test_informer_errors_permanent_failure_warns_at_once(void **st)
{
    ifx f;
    ifx_up(&f, NULL);
    capture cap;
    capture_start(&cap);
    kc_informer *inf = start(f.client, &widgets, FAST);
    IFX_RC(kc_informer_wait_synced(inf, 60000, NULL), KC_ENOTFOUND, NULL);
    kc_informer_stop(inf);
    char *log = capture_end(&cap);
    assert_contains(log, "warn informer: informer widgets.v1.example.com: list failed permanently");
    assert_contains(log, "(1 in a row): KC_ENOTFOUND (HTTP 404 NotFound)");
    free(log);
    kc_informer_free(inf);
    ifx_down(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_informer_errors_unknown_resource_fails_fast),
        cmocka_unit_test(test_informer_errors_unknown_resource_cache_and_cached_client),
        cmocka_unit_test(test_informer_errors_crd_created_later_syncs),
        cmocka_unit_test(test_informer_errors_rejected_field_selector_fails_fast),
        cmocka_unit_test(test_informer_errors_wrong_token_says_why),
        cmocka_unit_test(test_informer_errors_forbidden_says_why),
        cmocka_unit_test(test_informer_errors_closed_port_says_why),
        cmocka_unit_test(test_informer_errors_cache_timeout_names_each_informer),
        cmocka_unit_test(test_informer_errors_repeated_failures_warn),
        cmocka_unit_test(test_informer_errors_permanent_failure_warns_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
