/*
 * test_server_admission_failures.c — webhook call failures as kube-apiserver reports them, under
 * failurePolicy Fail (500 InternalError, `failed calling webhook "W": …`) and Ignore (skipped):
 * wrong uid, wrong apiVersion, HTTP 500/404, undecodable body, bad patchType, timeout, an
 * unreachable address, TLS with the wrong CA or a certificate without the Service's name, an
 * unmapped Service. Rule ids: the admission semantics spec (AR*, CH*, MW*), checklist §11.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_admission_fixture.h"

#define FAIL_PREFIX "Internal error occurred: failed calling webhook \"w.example.com\": "

/* One webhook w.example.com on path with reply; a ConfigMap create under Fail must give 500 with
 * the message want (prefix match when prefix), and under Ignore succeed. */
static void fail_both(adm_fx *f, const char *path, const kc_twh_reply *reply, const char *want,
                      bool prefix)
{
    kc_twh_set(f->wh, path, reply);
    assert_int_equal(
        adm_config(f, "Validating", "fail", adm_hook(f, "w.example.com", path, NULL), NULL), 201);
    ts_resp r;
    static int k;
    char name[32];
    snprintf(name, sizeof(name), "f%d", k++);
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm(name, NULL), &r), 500);
    assert_string_equal(ts_s(r.json, "reason"), "InternalError");
    if (prefix) {
        if (strncmp(ts_s(r.json, "message"), want, strlen(want)) != 0)
            fail_msg("message %s does not start with %s", ts_s(r.json, "message"), want);
    } else {
        assert_string_equal(ts_s(r.json, "message"), want);
    }
    ts_resp_free(&r);
    ts_req(f->srv, "DELETE",
           "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/fail", NULL, NULL,
           NULL, &r);
    ts_resp_free(&r);
    char ign[1024];
    snprintf(ign, sizeof(ign), "%s,\"failurePolicy\":\"Ignore\"", ADM_CM_RULES);
    assert_int_equal(
        adm_config(f, "Validating", "ignore", adm_hook(f, "w.example.com", path, ign), NULL), 201);
    snprintf(name, sizeof(name), "f%d", k++);
    size_t before = kc_twh_count(f->wh, path);
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm(name, NULL), &r), 201);
    ts_resp_free(&r);
    assert_true(kc_twh_count(f->wh, path) > before || reply == NULL); /* it was called */
    ts_req(f->srv, "DELETE",
           "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/ignore", NULL,
           NULL, NULL, &r);
    ts_resp_free(&r);
}

/* §11.3 — AR9, CH10: a reply with another uid. */
static void test_admission_fail_wrong_uid(void **state)
{
    adm_fx *f = *state;
    kc_twh_reply r = {.uid = "not-the-uid"};
    fail_both(f, "/uid", &r,
              FAIL_PREFIX "received invalid webhook response: expected response.uid=\"", true);
}

/* §11.4 — AR9: a v1beta1 reply to a v1 request. */
static void test_admission_fail_wrong_version(void **state)
{
    adm_fx *f = *state;
    kc_twh_reply r = {.api_version = "admission.k8s.io/v1beta1"};
    fail_both(f, "/ver", &r,
              FAIL_PREFIX "received invalid webhook response: expected webhook response of "
                          "admission.k8s.io/v1, Kind=AdmissionReview, got "
                          "admission.k8s.io/v1beta1, Kind=AdmissionReview",
              false);
}

/* §11.7 — CH9: HTTP 500 and 404 from the webhook. */
static void test_admission_fail_http_status(void **state)
{
    adm_fx *f = *state;
    kc_twh_reply r500 = {.http_status = 500, .raw = "boom"};
    fail_both(f, "/500", &r500,
              FAIL_PREFIX "failed to call webhook: an error on the server (\"boom\") has "
                          "prevented the request from succeeding",
              false);
    kc_twh_reply r404 = {.http_status = 404, .raw = "nope"};
    fail_both(f, "/404", &r404,
              FAIL_PREFIX "failed to call webhook: the server could not find the requested "
                          "resource",
              false);
}

/* CH9: an undecodable body, a response missing, an unknown patchType. */
static void test_admission_fail_invalid_body(void **state)
{
    adm_fx *f = *state;
    kc_twh_reply garbage = {.raw = "garbage"};
    fail_both(
        f, "/garbage", &garbage,
        FAIL_PREFIX "failed to call webhook: couldn't get version/kind; json parse error: ", true);
    kc_twh_reply absent = {.raw = "{\"apiVersion\":\"admission.k8s.io/v1\","
                                  "\"kind\":\"AdmissionReview\"}"};
    fail_both(f, "/absent", &absent,
              FAIL_PREFIX "received invalid webhook response: webhook response was absent", false);
    kc_twh_reply pt = {.patch = "[]", .patch_type = "MergePatch"};
    kc_twh_set(f->wh, "/pt", &pt);
    assert_int_equal(
        adm_config(f, "Mutating", "m", adm_hook(f, "w.example.com", "/pt", NULL), NULL), 201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("pt1", NULL), &r), 500);
    assert_string_equal(ts_s(r.json, "message"),
                        FAIL_PREFIX "received invalid webhook response: webhook returned invalid "
                                    "response.patchType of \"MergePatch\"");
    ts_resp_free(&r);
}

/* §11.6 — CH10, CH11, CH13: past timeoutSeconds (1 s) → context deadline exceeded, the URL with
 * ?timeout=1s; Ignore lets the request through. */
static void test_admission_fail_timeout(void **state)
{
    adm_fx *f = *state;
    kc_twh_reply slow = {.delay_ms = 2500};
    kc_twh_set(f->wh, "/slow", &slow);
    char rules[1024];
    snprintf(rules, sizeof(rules), "%s,\"timeoutSeconds\":1", ADM_CM_RULES);
    assert_int_equal(
        adm_config(f, "Validating", "v", adm_hook(f, "w.example.com", "/slow", rules), NULL), 201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("t1", NULL), &r), 500);
    assert_string_equal(ts_s(r.json, "message"),
                        FAIL_PREFIX "failed to call webhook: Post "
                                    "\"https://wh.default.svc:443/slow?timeout=1s\": context "
                                    "deadline exceeded");
    ts_resp_free(&r);
    ts_req(f->srv, "DELETE",
           "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/v", NULL, NULL,
           NULL, &r);
    ts_resp_free(&r);
    snprintf(rules, sizeof(rules), "%s,\"timeoutSeconds\":1,\"failurePolicy\":\"Ignore\"",
             ADM_CM_RULES);
    assert_int_equal(
        adm_config(f, "Validating", "v2", adm_hook(f, "w.example.com", "/slow", rules), NULL), 201);
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("t2", NULL), &r), 201);
    ts_resp_free(&r);
}

/* CH9: nothing listens at the url → connection refused; Ignore passes. */
static void test_admission_fail_unreachable(void **state)
{
    adm_fx *f = *state;
    char body[4096];
    const char *pols[] = {"Fail", "Ignore"};
    for (int i = 0; i < 2; i++) {
        snprintf(body, sizeof(body),
                 "{\"name\":\"w.example.com\",\"clientConfig\":{\"url\":\"https://127.0.0.1:1/x\","
                 "\"caBundle\":\"%s\"},\"sideEffects\":\"None\",\"admissionReviewVersions\":"
                 "[\"v1\"],\"failurePolicy\":\"%s\",%s}",
                 kc_twh_ca_bundle(f->wh), pols[i], ADM_CM_RULES);
        char name[8];
        snprintf(name, sizeof(name), "u%d", i);
        assert_int_equal(adm_config(f, "Validating", name, body, NULL), 201);
        ts_resp r;
        long st = ts_post(f->srv, CM_PATH, ts_cm(name, NULL), &r);
        if (i == 0) {
            assert_int_equal(st, 500);
            assert_string_equal(ts_s(r.json, "message"),
                                FAIL_PREFIX "failed to call webhook: Post "
                                            "\"https://127.0.0.1:1/x?timeout=10s\": dial tcp: "
                                            "connect: connection refused");
        }
        ts_resp_free(&r);
        char path[256];
        snprintf(path, sizeof(path),
                 "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/%s", name);
        ts_req(f->srv, "DELETE", path, NULL, NULL, NULL, &r);
        ts_resp_free(&r);
        if (i == 1)
            assert_int_equal(st, 201);
    }
}

/* §11.17 — MW12: a caBundle of another CA fails TLS verification; so does a certificate that
 * does not name NAME.NAMESPACE.svc; both under failurePolicy. */
static void test_admission_fail_tls(void **state)
{
    adm_fx *f = *state;
    kc_twh *other = kc_twh_start("other.default.svc");
    assert_non_null(other);
    /* first a call with the right CA: its kept-alive connection must not serve the wrong CA */
    ts_resp r;
    assert_int_equal(
        adm_config(f, "Validating", "good", adm_hook(f, "g.example.com", "/good", NULL), NULL),
        201);
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("tls0", NULL), &r), 201);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/good"), 1);
    ts_req(f->srv, "DELETE",
           "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/good", NULL, NULL,
           NULL, &r);
    ts_resp_free(&r);
    /* wrong CA: the bundle of another webhook's CA */
    char *h = adm_hook_full("w.example.com", "wh", "/tls", kc_twh_ca_bundle(other), NULL);
    assert_int_equal(adm_config(f, "Validating", "ca", h, NULL), 201);
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("tls1", NULL), &r), 500);
    assert_string_equal(ts_s(r.json, "message"),
                        FAIL_PREFIX "failed to call webhook: Post "
                                    "\"https://wh.default.svc:443/tls?timeout=10s\": tls: failed "
                                    "to verify certificate: x509: certificate signed by unknown "
                                    "authority");
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/tls"), 0); /* never reached the handler */
    ts_req(f->srv, "DELETE",
           "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/ca", NULL, NULL,
           NULL, &r);
    ts_resp_free(&r);
    kc_twh_stop(other);

    /* right CA, but the Service wh2.default is mapped to a webhook whose cert names
     * wh.default.svc only */
    kc_server_free(f->srv);
    char map[160];
    snprintf(map, sizeof(map), "wh2.default:443=127.0.0.1:%d", kc_twh_port(f->wh));
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.webhook_services = map;
    assert_non_null(f->srv = ts_start_opts(&o));
    h = adm_hook_full("w.example.com", "wh2", "/tls", kc_twh_ca_bundle(f->wh), NULL);
    assert_int_equal(adm_config(f, "Validating", "san", h, NULL), 201);
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("tls2", NULL), &r), 500);
    assert_string_equal(ts_s(r.json, "message"),
                        FAIL_PREFIX "failed to call webhook: Post "
                                    "\"https://wh2.default.svc:443/tls?timeout=10s\": tls: failed "
                                    "to verify certificate: x509: certificate is not valid for "
                                    "wh2.default.svc");
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/tls"), 0);
}

/* MW12: a Service with no --webhook-service mapping cannot be dialled: a call failure. */
static void test_admission_fail_unmapped_service(void **state)
{
    adm_fx *f = *state;
    char *h = adm_hook(f, "w.example.com", "/x", NULL);
    char *p = strstr(h, "\"port\":443");
    memcpy(p, "\"port\":444", 10);
    assert_int_equal(adm_config(f, "Validating", "v", h, NULL), 201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("s1", NULL), &r), 500);
    assert_string_equal(ts_s(r.json, "message"),
                        FAIL_PREFIX "failed to call webhook: Post "
                                    "\"https://wh.default.svc:444/x?timeout=10s\": service "
                                    "\"default/wh:444\" has no address (kcache serve "
                                    "--webhook-service)");
    ts_resp_free(&r);
}

/* MW10: no AdmissionReview version the server knows → a call failure. */
static void test_admission_fail_review_versions(void **state)
{
    adm_fx *f = *state;
    char *h = adm_hook(f, "w.example.com", "/x", NULL);
    char *p = strstr(h, "[\"v1\"]");
    memcpy(p, "[\"v9\"]", 6);
    assert_int_equal(adm_config(f, "Validating", "v", h, NULL), 201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("rv1", NULL), &r), 500);
    assert_string_equal(ts_s(r.json, "message"),
                        FAIL_PREFIX "webhook does not accept known AdmissionReview versions (v1, "
                                    "v1beta1)");
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/x"), 0);
}

typedef struct slow_post {
    adm_fx *f;
    const char *name;
    long status;
    pthread_t th;
} slow_post;

static void *slow_post_main(void *arg)
{
    slow_post *p = arg;
    ts_resp r;
    p->status = ts_post(p->f->srv, CM_PATH, ts_cm(p->name, NULL), &r);
    ts_resp_free(&r);
    return NULL;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Writes waiting on a slow webhook (more of them than the server's epoll threads) do not hold up
 * other requests: they run on helper threads (docs/server.md, "Threads and locks"). */
static void test_admission_slow_webhook_blocks_nothing(void **state)
{
    adm_fx *f = *state;
    kc_twh_reply slow = {.delay_ms = 3000};
    kc_twh_set(f->wh, "/slow", &slow);
    assert_int_equal(
        adm_config(f, "Validating", "v", adm_hook(f, "w.example.com", "/slow", NULL), NULL), 201);
    enum { N = 8 };
    slow_post p[N];
    static const char *const names[N] = {"sl0", "sl1", "sl2", "sl3", "sl4", "sl5", "sl6", "sl7"};
    for (int i = 0; i < N; i++) {
        p[i] = (slow_post){.f = f, .name = names[i]};
        assert_int_equal(pthread_create(&p[i].th, NULL, slow_post_main, &p[i]), 0);
    }
    assert_true(kc_twh_wait(f->wh, "/slow", N, 10000)); /* all of them are in the webhook */
    double t0 = now_s();
    ts_resp r;
    assert_int_equal(ts_get(f->srv, "/api/v1/namespaces/default", &r), 200);
    ts_resp_free(&r);
    assert_true(now_s() - t0 < 1.5); /* answered while the writes still wait */
    assert_int_equal(kc_twh_count(f->wh, "/slow"), N);
    for (int i = 0; i < N; i++) {
        pthread_join(p[i].th, NULL);
        assert_int_equal(p[i].status, 201);
    }
}

/* kc_server_new refuses a malformed mapping. */
static void test_admission_bad_service_option(void **state)
{
    (void)state;
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.webhook_services = "wh.default=127.0.0.1:1";
    kc_server *s = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_server_new(&o, &s, &err), KC_EINVAL);
    assert_non_null(strstr(err.message, "wh.default=127.0.0.1:1"));
    kc_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_admission_fail_wrong_uid, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_fail_wrong_version, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_fail_http_status, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_fail_invalid_body, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_fail_timeout, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_fail_unreachable, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_fail_tls, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_fail_unmapped_service, adm_setup,
                                        adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_fail_review_versions, adm_setup,
                                        adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_slow_webhook_blocks_nothing, adm_setup,
                                        adm_teardown),
        cmocka_unit_test(test_admission_bad_service_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
