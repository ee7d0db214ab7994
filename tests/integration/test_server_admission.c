/*
 * test_server_admission.c — `kcache serve` calling admission webhooks: what a review carries,
 * denials, the mutating chain (order, patches, reinvocation), validating webhooks after mutation
 * and defaulting, warnings. The webhook is the test webhook (support_webhook.c) behind the Service
 * wh.default:443. Rule ids: the admission semantics spec (AR*, CH*, JP*), checklist §11.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_admission_fixture.h"

/* §11.1 — AR1–AR7: a CREATE's review; two webhooks get two uids. */
static void test_admission_create_review(void **state)
{
    adm_fx *f = *state;
    assert_int_equal(adm_config(f, "Validating", "v", adm_hook(f, "a.example.com", "/a", NULL),
                                adm_hook(f, "b.example.com", "/b", NULL), NULL),
                     201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("c1", NULL), &r), 201);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/a"), 1);
    json_t *q, *q2;
    json_t *rev = adm_review(f, "/a", 0, &q), *rev2 = adm_review(f, "/b", 0, &q2);
    assert_string_equal(ts_s(rev, "apiVersion"), "admission.k8s.io/v1");
    assert_string_equal(ts_s(rev, "kind"), "AdmissionReview");
    assert_string_equal(ts_s(q, "operation"), "CREATE");
    assert_string_equal(ts_s(q, "kind.kind"), "ConfigMap");
    assert_string_equal(ts_s(q, "resource.resource"), "configmaps");
    assert_string_equal(ts_s(q, "requestResource.version"), "v1");
    assert_string_equal(ts_s(q, "namespace"), "default");
    assert_string_equal(ts_s(q, "name"), "c1");
    assert_string_equal(ts_s(q, "object.metadata.name"), "c1");
    assert_true(json_is_null(ts_j(q, "oldObject")));
    assert_true(json_is_false(ts_j(q, "dryRun")));
    assert_string_equal(ts_s(q, "options.kind"), "CreateOptions");
    assert_string_equal(ts_s(q, "options.apiVersion"), "meta.k8s.io/v1");
    assert_int_equal(strlen(ts_s(q, "uid")), 36);
    assert_string_not_equal(ts_s(q, "uid"), ts_s(q2, "uid")); /* AR1: per call */
    json_decref(rev);
    json_decref(rev2);
    /* the configuration reads back with the scheme's defaults, as from a cluster */
    assert_int_equal(
        ts_get(f->srv, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/v",
               &r),
        200);
    assert_string_equal(ts_s(r.json, "webhooks.0.failurePolicy"), "Fail");
    assert_string_equal(ts_s(r.json, "webhooks.0.matchPolicy"), "Equivalent");
    assert_int_equal(json_integer_value(ts_j(r.json, "webhooks.0.timeoutSeconds")), 10);
    assert_true(json_is_object(ts_j(r.json, "webhooks.0.namespaceSelector")));
    assert_true(json_is_object(ts_j(r.json, "webhooks.0.objectSelector")));
    assert_string_equal(ts_s(r.json, "webhooks.0.rules.0.scope"), "*");
    assert_int_equal(json_integer_value(ts_j(r.json, "webhooks.0.clientConfig.service.port")), 443);
    assert_null(ts_j(r.json, "webhooks.0.reinvocationPolicy")); /* mutating only */
    ts_resp_free(&r);
    /* AR3: a generated name; the validating webhook sees the name that is stored */
    assert_int_equal(ts_post(f->srv, CM_PATH, "{\"metadata\":{\"generateName\":\"g-\"}}", &r), 201);
    rev = adm_review(f, "/a", 1, &q);
    assert_string_equal(ts_s(q, "name"), ts_s(r.json, "metadata.name"));
    assert_string_equal(ts_s(q, "object.metadata.name"), ts_s(r.json, "metadata.name"));
    ts_resp_free(&r);
    json_decref(rev);
}

/* AR5: request.userInfo names who sent the request — the token's user and groups (and
 * system:authenticated), not a fixed admin — once the server authenticates (tokens configured). */
static void test_admission_user_info(void **state)
{
    adm_fx *f = *state;
    char map[128];
    snprintf(map, sizeof(map), "wh.default:443=127.0.0.1:%d", kc_twh_port(f->wh));
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.webhook_services = map;
    o.users = "bob=bobtok:devs,ops";
    kc_server *s = ts_start_opts(&o);
    assert_non_null(s);
    kc_server *keep = f->srv;
    f->srv = s; /* adm_config writes through f->srv (no token: bob writes it) */
    const char *hs[] = {"Authorization: Bearer bobtok", NULL};
    ts_resp r;
    char cfg[8192];
    snprintf(cfg, sizeof cfg,
             "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
             "\"ValidatingWebhookConfiguration\",\"metadata\":{\"name\":\"u\"},\"webhooks\":[%s]}",
             adm_hook(f, "u.example.com", "/u", NULL));
    ts_req_h(s, "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
             "application/json", cfg, NULL, hs, &r);
    assert_int_equal(r.status, 201);
    ts_resp_free(&r);
    ts_req_h(s, "POST", CM_PATH, "application/json", ts_cm("who", NULL), NULL, hs, &r);
    assert_int_equal(r.status, 201);
    ts_resp_free(&r);
    json_t *q;
    json_t *rev = adm_review(f, "/u", 0, &q);
    assert_string_equal(ts_s(q, "userInfo.username"), "bob");
    json_t *g = ts_j(q, "userInfo.groups");
    assert_true(json_is_array(g));
    bool devs = false, authed = false;
    for (size_t i = 0; i < json_array_size(g); i++) {
        const char *x = json_string_value(json_array_get(g, i));
        devs |= x && !strcmp(x, "devs");
        authed |= x && !strcmp(x, "system:authenticated");
    }
    assert_true(devs && authed);
    json_decref(rev);
    f->srv = keep;
    kc_server_free(s);
}

/* §11.2 — AR6, CH12: DELETE sends oldObject; a mutating patch on DELETE is a 500. */
static void test_admission_delete(void **state)
{
    adm_fx *f = *state;
    ts_resp r;
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("d1", "{\"k\":\"v\"}"), &r), 201);
    ts_resp_free(&r);
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("d2", NULL), &r), 201);
    ts_resp_free(&r);
    assert_int_equal(
        adm_config(f, "Validating", "v", adm_hook(f, "v.example.com", "/v", NULL), NULL), 201);
    ts_req(f->srv, "DELETE", CM_PATH "/d1", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    json_t *q, *rev = adm_review(f, "/v", 0, &q);
    assert_string_equal(ts_s(q, "operation"), "DELETE");
    assert_true(json_is_null(ts_j(q, "object")));
    assert_string_equal(ts_s(q, "oldObject.metadata.name"), "d1");
    assert_string_equal(ts_s(q, "options.kind"), "DeleteOptions");
    json_decref(rev);
    kc_twh_reply p = {.patch = "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{}}]"};
    kc_twh_set(f->wh, "/m", &p);
    assert_int_equal(adm_config(f, "Mutating", "m", adm_hook(f, "m.example.com", "/m", NULL), NULL),
                     201);
    ts_req(f->srv, "DELETE", CM_PATH "/d2", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 500);
    assert_string_equal(ts_s(r.json, "message"),
                        "Internal error occurred: admission webhook \"m.example.com\" attempted to "
                        "modify the object, which is not supported for this operation");
    ts_resp_free(&r);
    assert_int_equal(ts_get(f->srv, CM_PATH "/d2", &r), 200); /* still there */
    ts_resp_free(&r);
}

/* Calls reuse their kept-alive connection to the webhook, as kube-apiserver's client does. */
static void test_admission_connection_reuse(void **state)
{
    adm_fx *f = *state;
    assert_int_equal(
        adm_config(f, "Validating", "v", adm_hook(f, "v.example.com", "/v", NULL), NULL), 201);
    ts_resp r;
    const char *names[] = {"k0", "k1", "k2", "k3"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm(names[i], NULL), &r), 201);
        ts_resp_free(&r);
    }
    assert_int_equal(kc_twh_count(f->wh, "/v"), 4);
    assert_int_equal(kc_twh_connections(f->wh), 1);
}

/* §11.5 — CH7: the denial texts and codes. */
static void test_admission_denials(void **state)
{
    adm_fx *f = *state;
    kc_twh_reply no = {.deny = true, .message = "no"};
    kc_twh_set(f->wh, "/v", &no);
    assert_int_equal(
        adm_config(f, "Validating", "v", adm_hook(f, "x.example.com", "/v", NULL), NULL), 201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("n1", NULL), &r), 400);
    assert_string_equal(ts_s(r.json, "message"),
                        "admission webhook \"x.example.com\" denied the request: no");
    assert_string_equal(ts_s(r.json, "status"), "Failure");
    ts_resp_free(&r);
    kc_twh_reply forbidden = {
        .deny = true, .code = 403, .message = "not you", .reason = "Forbidden"};
    kc_twh_set(f->wh, "/v", &forbidden);
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("n2", NULL), &r), 403);
    assert_string_equal(ts_s(r.json, "reason"), "Forbidden");
    assert_string_equal(ts_s(r.json, "message"),
                        "admission webhook \"x.example.com\" denied the request: not you");
    ts_resp_free(&r);
    kc_twh_reply bare = {.deny = true};
    kc_twh_set(f->wh, "/v", &bare);
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("n3", NULL), &r), 400);
    assert_string_equal(ts_s(r.json, "message"),
                        "admission webhook \"x.example.com\" denied the request without "
                        "explanation");
    ts_resp_free(&r);
    kc_twh_reply reason_only = {.deny = true, .reason = "Because"};
    kc_twh_set(f->wh, "/v", &reason_only);
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("n4", NULL), &r), 400);
    assert_string_equal(ts_s(r.json, "message"),
                        "admission webhook \"x.example.com\" denied the request: Because");
    ts_resp_free(&r);
    assert_int_equal(ts_get(f->srv, CM_PATH "/n1", &r), 404); /* nothing stored */
    ts_resp_free(&r);
}

/* CH8: a mutating webhook's denial ends the chain at once, whatever the failurePolicy; CH11: a
 * mutating webhook that fails under Ignore is skipped and the chain goes on. */
static void test_admission_mutating_denial_ends_chain(void **state)
{
    adm_fx *f = *state;
    char ign[1024];
    snprintf(ign, sizeof(ign), "%s,\"failurePolicy\":\"Ignore\"", ADM_CM_RULES);
    kc_twh_reply broken = {.http_status = 500, .raw = "x"};
    kc_twh_reply no = {.deny = true, .message = "stop"};
    kc_twh_reply add = {.patch = "[{\"op\":\"add\",\"path\":\"/metadata/labels/z\",\"value\":"
                                 "\"1\"}]"};
    kc_twh_set(f->wh, "/broken", &broken);
    kc_twh_set(f->wh, "/no", &no);
    kc_twh_set(f->wh, "/add", &add);
    assert_int_equal(adm_config(f, "Mutating", "m", adm_hook(f, "b.example.com", "/broken", ign),
                                adm_hook(f, "a.example.com", "/add", NULL),
                                adm_hook(f, "n.example.com", "/no", ign),
                                adm_hook(f, "l.example.com", "/last", NULL), NULL),
                     201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("e1", "{}"), &r), 400);
    assert_string_equal(ts_s(r.json, "message"),
                        "admission webhook \"n.example.com\" denied the request: stop");
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/broken"), 1); /* failed, skipped (Ignore) */
    assert_int_equal(kc_twh_count(f->wh, "/add"), 1);    /* the chain went on */
    assert_int_equal(kc_twh_count(f->wh, "/last"), 0);   /* ended by the denial */
}

/* §11.8 — CH2, CH3: configurations by name, webhooks in list order, each seeing the last patch. */
static void test_admission_mutating_order(void **state)
{
    adm_fx *f = *state;
    kc_twh_reply a = {.patch =
                          "[{\"op\":\"add\",\"path\":\"/metadata/labels/a\",\"value\":\"1\"}]"};
    kc_twh_reply b = {.patch =
                          "[{\"op\":\"add\",\"path\":\"/metadata/labels/b\",\"value\":\"1\"}]"};
    kc_twh_reply c = {.patch =
                          "[{\"op\":\"add\",\"path\":\"/metadata/labels/c\",\"value\":\"1\"}]"};
    kc_twh_set(f->wh, "/a", &a);
    kc_twh_set(f->wh, "/b", &b);
    kc_twh_set(f->wh, "/c", &c);
    /* b-cfg stored first, a-cfg second: a-cfg still runs first; in b-cfg, /c before /b */
    assert_int_equal(adm_config(f, "Mutating", "b-cfg", adm_hook(f, "c.example.com", "/c", NULL),
                                adm_hook(f, "b.example.com", "/b", NULL), NULL),
                     201);
    assert_int_equal(
        adm_config(f, "Mutating", "a-cfg", adm_hook(f, "a.example.com", "/a", NULL), NULL), 201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("o1", "{}"), &r), 201);
    assert_string_equal(ts_s(r.json, "metadata.labels.a"), "1");
    assert_string_equal(ts_s(r.json, "metadata.labels.b"), "1");
    assert_string_equal(ts_s(r.json, "metadata.labels.c"), "1");
    ts_resp_free(&r);
    json_t *q;
    json_t *rev = adm_review(f, "/a", 0, &q);
    assert_null(ts_j(q, "object.metadata.labels.c")); /* a ran first */
    json_decref(rev);
    rev = adm_review(f, "/c", 0, &q);
    assert_string_equal(ts_s(q, "object.metadata.labels.a"), "1");
    assert_null(ts_j(q, "object.metadata.labels.b")); /* c before b in b-cfg */
    json_decref(rev);
    rev = adm_review(f, "/b", 0, &q);
    assert_string_equal(ts_s(q, "object.metadata.labels.c"), "1");
    json_decref(rev);
}

/* §11.9 — CH5: IfNeeded re-runs once after a later change; Never does not. */
static void test_admission_reinvocation(void **state)
{
    adm_fx *f = *state;
    kc_twh_reply x = {.patch =
                          "[{\"op\":\"add\",\"path\":\"/metadata/labels/x\",\"value\":\"1\"}]"};
    kc_twh_reply y = {.patch =
                          "[{\"op\":\"add\",\"path\":\"/metadata/labels/y\",\"value\":\"1\"}]"};
    kc_twh_set(f->wh, "/x", &x);
    kc_twh_set(f->wh, "/y", &y);
    kc_twh_set(f->wh, "/x2", &x);
    kc_twh_set(f->wh, "/y2", &y);
    char w1[1024];
    snprintf(w1, sizeof(w1), "%s,\"reinvocationPolicy\":\"IfNeeded\"", ADM_CM_RULES);
    assert_int_equal(adm_config(f, "Mutating", "m", adm_hook(f, "w1.example.com", "/x", w1),
                                adm_hook(f, "w2.example.com", "/y", NULL), NULL),
                     201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("r1", "{}"), &r), 201);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/x"), 2);
    assert_int_equal(kc_twh_count(f->wh, "/y"), 1);
    json_t *q, *rev = adm_review(f, "/x", 1, &q);
    assert_string_equal(ts_s(q, "object.metadata.labels.y"), "1"); /* round 1 sees W2's change */
    json_decref(rev);
    /* the same with W1 Never: once each */
    ts_req(f->srv, "DELETE",
           "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/m", NULL, NULL,
           NULL, &r);
    ts_resp_free(&r);
    assert_int_equal(adm_config(f, "Mutating", "m2", adm_hook(f, "w1.example.com", "/x2", NULL),
                                adm_hook(f, "w2.example.com", "/y2", NULL), NULL),
                     201);
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("r2", "{}"), &r), 201);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/x2"), 1);
    assert_int_equal(kc_twh_count(f->wh, "/y2"), 1);
}

/* §11.10 — CH1: the validating webhook sees the mutated object with the server's defaulting and
 * system fields; AR12: a validating webhook's patch is a call failure. */
static void test_admission_validating_after_mutation(void **state)
{
    adm_fx *f = *state;
    kc_twh_reply m = {.patch =
                          "[{\"op\":\"add\",\"path\":\"/metadata/labels/m\",\"value\":\"1\"}]"};
    kc_twh_set(f->wh, "/m", &m);
    const char *svc_rules = "\"rules\":[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"\"],"
                            "\"apiVersions\":[\"v1\"],\"resources\":[\"services\"]}]";
    assert_int_equal(
        adm_config(f, "Mutating", "m", adm_hook(f, "m.example.com", "/m", svc_rules), NULL), 201);
    assert_int_equal(
        adm_config(f, "Validating", "v", adm_hook(f, "v.example.com", "/v", svc_rules), NULL), 201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, "/api/v1/namespaces/default/services",
                             "{\"metadata\":{\"name\":\"s1\",\"labels\":{}},\"spec\":{\"ports\":"
                             "[{\"port\":80}]}}",
                             &r),
                     201);
    ts_resp_free(&r);
    json_t *q, *rev = adm_review(f, "/m", 0, &q);
    assert_null(ts_j(q, "object.spec.type")); /* before defaulting */
    json_decref(rev);
    rev = adm_review(f, "/v", 0, &q);
    assert_string_equal(ts_s(q, "object.metadata.labels.m"), "1");
    assert_string_equal(ts_s(q, "object.spec.type"), "ClusterIP"); /* defaulted */
    assert_string_equal(ts_s(q, "object.spec.ports.0.protocol"), "TCP");
    assert_int_equal(strlen(ts_s(q, "object.metadata.uid")), 36);
    json_decref(rev);
    kc_twh_reply vp = {.patch = "[]"};
    kc_twh_set(f->wh, "/v", &vp);
    assert_int_equal(ts_post(f->srv, "/api/v1/namespaces/default/services",
                             "{\"metadata\":{\"name\":\"s2\",\"labels\":{}},\"spec\":{\"ports\":"
                             "[{\"port\":80}]}}",
                             &r),
                     500);
    assert_string_equal(ts_s(r.json, "message"),
                        "Internal error occurred: failed calling webhook \"v.example.com\": "
                        "received invalid webhook response: validating webhook may not return "
                        "response.patch");
    ts_resp_free(&r);
}

/* §11.18 — JP2, JP3: escaped keys; a patch that does not apply is a 500 whatever the policy. */
static void test_admission_json_patch(void **state)
{
    adm_fx *f = *state;
    kc_twh_reply esc = {.patch = "[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":"
                                 "{}},{\"op\":\"add\",\"path\":\"/metadata/annotations/"
                                 "example.com~1x\",\"value\":\"y\"}]"};
    kc_twh_set(f->wh, "/m", &esc);
    char ign[1024];
    snprintf(ign, sizeof(ign), "%s,\"failurePolicy\":\"Ignore\"", ADM_CM_RULES);
    assert_int_equal(adm_config(f, "Mutating", "m", adm_hook(f, "m.example.com", "/m", ign), NULL),
                     201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("j1", NULL), &r), 201);
    json_t *ann = ts_j(r.json, "metadata.annotations");
    assert_string_equal(json_string_value(json_object_get(ann, "example.com/x")), "y");
    ts_resp_free(&r);
    kc_twh_reply bad = {.patch = "[{\"op\":\"add\",\"path\":\"/metadata/labels/a\",\"value\":"
                                 "\"b\"}]"};
    kc_twh_set(f->wh, "/m", &bad);
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("j2", NULL), &r), 500); /* no labels map */
    assert_string_equal(ts_s(r.json, "reason"), "InternalError");
    ts_resp_free(&r);
    kc_twh_reply test = {.patch = "[{\"op\":\"test\",\"path\":\"/data/k\",\"value\":\"other\"}]"};
    kc_twh_set(f->wh, "/m", &test);
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("j3", NULL), &r), 500);
    ts_resp_free(&r);
    assert_int_equal(ts_get(f->srv, CM_PATH "/j3", &r), 404);
    ts_resp_free(&r);
}

/* §11.19 — AR13: warnings become Warning headers, a duplicate once. */
static void test_admission_warnings(void **state)
{
    adm_fx *f = *state;
    kc_twh_reply w = {.warnings = "[\"one\",\"two\",\"three\",\"two\"]"};
    kc_twh_set(f->wh, "/v", &w);
    assert_int_equal(
        adm_config(f, "Validating", "v", adm_hook(f, "v.example.com", "/v", NULL), NULL), 201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("w1", NULL), &r), 201);
    assert_string_equal(r.warnings, "299 - \"one\"\n299 - \"two\"\n299 - \"three\"\n");
    ts_resp_free(&r);
}

/* §11.16 — CH15: a dry run reaches sideEffects None with dryRun true; Some refuses (400) even
 * under Ignore, and nothing is stored by a dry run. */
static void test_admission_dry_run(void **state)
{
    adm_fx *f = *state;
    assert_int_equal(
        adm_config(f, "Validating", "v", adm_hook(f, "v.example.com", "/v", NULL), NULL), 201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, CM_PATH "?dryRun=All", ts_cm("dr1", NULL), &r), 201);
    ts_resp_free(&r);
    json_t *q, *rev = adm_review(f, "/v", 0, &q);
    assert_true(json_is_true(ts_j(q, "dryRun")));
    assert_string_equal(ts_s(q, "options.dryRun.0"), "All");
    json_decref(rev);
    assert_int_equal(ts_get(f->srv, CM_PATH "/dr1", &r), 404);
    ts_resp_free(&r);
    char some[1024];
    snprintf(some, sizeof(some), "%s,\"failurePolicy\":\"Ignore\"", ADM_CM_RULES);
    char *h = adm_hook(f, "s.example.com", "/s", some);
    char *p = strstr(h, "\"None\"");
    memcpy(p, "\"Some\"", 6);
    assert_int_equal(adm_config(f, "Validating", "s", h, NULL), 201);
    assert_int_equal(ts_post(f->srv, CM_PATH "?dryRun=All", ts_cm("dr2", NULL), &r), 400);
    assert_string_equal(ts_s(r.json, "message"),
                        "admission webhook \"s.example.com\" does not support dry run");
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/s"), 0);
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("dr3", NULL), &r), 201); /* not a dry run */
    ts_resp_free(&r);
    /* CH15: no sideEffects at all is a call failure (failurePolicy Fail here) */
    ts_req(f->srv, "DELETE",
           "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/s", NULL, NULL,
           NULL, &r);
    ts_resp_free(&r);
    char nil[4096];
    h = adm_hook(f, "nil.example.com", "/nil", NULL);
    p = strstr(h, "\"sideEffects\":\"None\",");
    snprintf(nil, sizeof(nil), "%.*s%s", (int)(p - h), h, p + strlen("\"sideEffects\":\"None\","));
    assert_int_equal(adm_config(f, "Validating", "nil", nil, NULL), 201);
    assert_int_equal(ts_post(f->srv, CM_PATH "?dryRun=All", ts_cm("dr4", NULL), &r), 500);
    assert_string_equal(ts_s(r.json, "message"),
                        "Internal error occurred: failed calling webhook \"nil.example.com\": "
                        "Webhook SideEffects is nil");
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/nil"), 0);
}

/* PATCH and PUT (incl. the status subresource) go through the chain as UPDATE (AR4), with the
 * stored object as oldObject; a patch that creates (apply) is a CREATE with CreateOptions (AR7). */
static void test_admission_update_and_patch(void **state)
{
    adm_fx *f = *state;
    ts_resp r;
    /* a non-empty label map: an empty one is not stored (ObjectMeta omitempty), and the
     * webhook's patch adds under /metadata/labels */
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("u1", "{\"keep\":\"1\"}"), &r), 201);
    ts_resp_free(&r);
    kc_twh_reply m = {.patch =
                          "[{\"op\":\"add\",\"path\":\"/metadata/labels/m\",\"value\":\"1\"}]"};
    kc_twh_set(f->wh, "/m", &m);
    assert_int_equal(adm_config(f, "Mutating", "m", adm_hook(f, "m.example.com", "/m", NULL), NULL),
                     201);
    ts_req(f->srv, "PATCH", CM_PATH "/u1", "application/merge-patch+json",
           "{\"data\":{\"k\":\"w\"}}", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "metadata.labels.m"), "1");
    assert_string_equal(ts_s(r.json, "data.k"), "w");
    ts_resp_free(&r);
    json_t *q, *rev = adm_review(f, "/m", 0, &q);
    assert_string_equal(ts_s(q, "operation"), "UPDATE");
    assert_string_equal(ts_s(q, "oldObject.data.k"), "v");
    assert_string_equal(ts_s(q, "object.data.k"), "w");
    assert_string_equal(ts_s(q, "options.kind"), "UpdateOptions");
    json_decref(rev);
    ts_req(f->srv, "PATCH", CM_PATH "/u2?fieldManager=t", "application/apply-patch+yaml",
           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"u2\","
           "\"labels\":{}}}",
           NULL, &r);
    assert_int_equal(r.status, 201);
    assert_string_equal(ts_s(r.json, "metadata.labels.m"), "1");
    ts_resp_free(&r);
    rev = adm_review(f, "/m", 1, &q);
    assert_string_equal(ts_s(q, "operation"), "CREATE");
    assert_string_equal(ts_s(q, "options.kind"), "CreateOptions");
    json_decref(rev);
}

#define DEPLOY_PATH "/apis/apps/v1/namespaces/default/deployments"

/* AR2, MW3: the scale subresource's review carries an autoscaling/v1 Scale (object and
 * oldObject); a mutating webhook's patch of the Scale reaches the object; a denial keeps it. */
static void test_admission_scale(void **state)
{
    adm_fx *f = *state;
    ts_resp r;
    assert_int_equal(
        ts_post(f->srv, DEPLOY_PATH,
                "{\"metadata\":{\"name\":\"web\"},\"spec\":{\"replicas\":1,\"selector\":{"
                "\"matchLabels\":{\"app\":\"web\"}},\"template\":{\"metadata\":{\"labels\":{"
                "\"app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
                "\"nginx\"}]}}}}",
                &r),
        201);
    ts_resp_free(&r);
    const char *rules = "\"rules\":[{\"operations\":[\"UPDATE\"],\"apiGroups\":[\"apps\"],"
                        "\"apiVersions\":[\"v1\"],\"resources\":[\"deployments/scale\"]}]";
    kc_twh_reply five = {.patch = "[{\"op\":\"replace\",\"path\":\"/spec/replicas\","
                                  "\"value\":5}]"};
    kc_twh_set(f->wh, "/m", &five);
    assert_int_equal(
        adm_config(f, "Mutating", "m", adm_hook(f, "m.example.com", "/m", rules), NULL), 201);
    assert_int_equal(
        adm_config(f, "Validating", "v", adm_hook(f, "v.example.com", "/v", rules), NULL), 201);
    ts_req(f->srv, "PATCH", DEPLOY_PATH "/web/scale", "application/merge-patch+json",
           "{\"spec\":{\"replicas\":3}}", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.replicas")), 5);
    ts_resp_free(&r);
    json_t *q, *rev = adm_review(f, "/m", 0, &q);
    assert_string_equal(ts_s(q, "kind.group"), "autoscaling");
    assert_string_equal(ts_s(q, "kind.kind"), "Scale");
    assert_string_equal(ts_s(q, "resource.resource"), "deployments");
    assert_string_equal(ts_s(q, "subResource"), "scale");
    assert_int_equal(json_integer_value(ts_j(q, "object.spec.replicas")), 3);
    assert_int_equal(json_integer_value(ts_j(q, "oldObject.spec.replicas")), 1);
    json_decref(rev);
    rev = adm_review(f, "/v", 0, &q);
    assert_int_equal(json_integer_value(ts_j(q, "object.spec.replicas")), 5);
    json_decref(rev);
    assert_int_equal(ts_get(f->srv, DEPLOY_PATH "/web", &r), 200);
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.replicas")), 5);
    ts_resp_free(&r);
    kc_twh_reply no = {.deny = true, .message = "fixed size"};
    kc_twh_set(f->wh, "/v", &no);
    ts_req(f->srv, "PUT", DEPLOY_PATH "/web/scale", "application/json",
           "{\"apiVersion\":\"autoscaling/v1\",\"kind\":\"Scale\",\"metadata\":{\"name\":"
           "\"web\"},\"spec\":{\"replicas\":2}}",
           NULL, &r);
    assert_int_equal(r.status, 400);
    assert_string_equal(ts_s(r.json, "message"),
                        "admission webhook \"v.example.com\" denied the request: fixed size");
    ts_resp_free(&r);
    assert_int_equal(ts_get(f->srv, DEPLOY_PATH "/web", &r), 200);
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.replicas")), 5);
    ts_resp_free(&r);
}

/* AR6: DELETE of a collection is one DELETE per object; a denial stops it, the rest stays. */
static void test_admission_delete_collection(void **state)
{
    adm_fx *f = *state;
    ts_resp r;
    for (int i = 0; i < 3; i++) {
        char n[8];
        snprintf(n, sizeof(n), "dc%d", i);
        assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm(n, "{\"set\":\"x\"}"), &r), 201);
        ts_resp_free(&r);
    }
    kc_twh_reply no = {.deny = true, .code = 403, .message = "keep"};
    kc_twh_set(f->wh, "/v", &no);
    assert_int_equal(
        adm_config(f, "Validating", "v", adm_hook(f, "v.example.com", "/v", NULL), NULL), 201);
    ts_req(f->srv, "DELETE", CM_PATH "?labelSelector=set%3Dx", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 403);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/v"), 1);
    assert_int_equal(ts_get(f->srv, CM_PATH "/dc0", &r), 200);
    ts_resp_free(&r);
    kc_twh_reply yes = {0};
    kc_twh_set(f->wh, "/v", &yes);
    ts_req(f->srv, "DELETE", CM_PATH "?labelSelector=set%3Dx", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(ts_j(r.json, "items")), 3);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/v"), 4);
    json_t *q, *rev = adm_review(f, "/v", 3, &q);
    assert_string_equal(ts_s(q, "operation"), "DELETE");
    assert_string_equal(ts_s(q, "name"), "dc2");
    assert_string_equal(ts_s(q, "oldObject.metadata.name"), "dc2");
    json_decref(rev);
    assert_int_equal(ts_get(f->srv, CM_PATH "/dc2", &r), 404);
    ts_resp_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_admission_create_review, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_user_info, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_delete, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_denials, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_connection_reuse, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_mutating_denial_ends_chain, adm_setup,
                                        adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_mutating_order, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_reinvocation, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_validating_after_mutation, adm_setup,
                                        adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_json_patch, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_warnings, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_dry_run, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_update_and_patch, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_scale, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_delete_collection, adm_setup, adm_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
