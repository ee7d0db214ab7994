/*
 * test_server_admission_match.c — which webhooks `kcache serve` calls: rules (operations, groups,
 * versions, resources with subresources and wildcards), scope, namespaceSelector,
 * objectSelector, the configurations' own exemption, matchConditions (no CEL: refused by
 * policy). Rule ids: the admission semantics spec (MW*), checklist §11.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_admission_fixture.h"

#define POD_PATH "/api/v1/namespaces/default/pods"
#define POD_BODY                                                                                   \
    "{\"metadata\":{\"name\":\"p1\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"         \
    "\"busybox\"}]}}"

static char *rule(const char *ops, const char *groups, const char *versions, const char *res,
                  const char *scope)
{
    static __thread char b[8][1024];
    static __thread int k;
    char *o = b[k++ % 8];
    snprintf(o, 1024,
             "\"rules\":[{\"operations\":%s,\"apiGroups\":%s,\"apiVersions\":%s,\"resources\":%s"
             "%s%s%s}]",
             ops, groups, versions, res, scope ? ",\"scope\":\"" : "", scope ? scope : "",
             scope ? "\"" : "");
    return o;
}

/* §11.11 — MW2, MW3: "*" is no subresource; "*\u002F*" and "pods/status" match the status
 * subresource; "pods/\u002A" does not match pods; operations, groups and versions filter. */
static void test_admission_match_rules(void **state)
{
    adm_fx *f = *state;
    const char *all = "[\"*\"]";
    assert_int_equal(
        adm_config(
            f, "Validating", "v",
            adm_hook(f, "star.example.com", "/star", rule(all, all, all, "[\"*\"]", NULL)),
            adm_hook(f, "all.example.com", "/all", rule(all, all, all, "[\"*/*\"]", NULL)),
            adm_hook(f, "st.example.com", "/st",
                     rule(all, "[\"\"]", "[\"v1\"]", "[\"pods/status\"]", NULL)),
            adm_hook(f, "sub.example.com", "/sub", rule(all, all, all, "[\"pods/*\"]", NULL)),
            adm_hook(f, "del.example.com", "/del",
                     rule("[\"DELETE\"]", all, all, "[\"pods\"]", NULL)),
            adm_hook(f, "apps.example.com", "/apps", rule(all, "[\"apps\"]", all, "[\"*\"]", NULL)),
            adm_hook(f, "v2.example.com", "/v2", rule(all, all, "[\"v2\"]", "[\"*\"]", NULL)),
            NULL),
        201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, POD_PATH, POD_BODY, &r), 201);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/star"), 1);
    assert_int_equal(kc_twh_count(f->wh, "/all"), 1);
    assert_int_equal(kc_twh_count(f->wh, "/st"), 0);
    assert_int_equal(kc_twh_count(f->wh, "/sub"), 0);
    ts_req(f->srv, "PATCH", POD_PATH "/p1/status", "application/merge-patch+json",
           "{\"status\":{\"phase\":\"Running\"}}", NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/star"), 1); /* "*" matches no subresource */
    assert_int_equal(kc_twh_count(f->wh, "/all"), 2);
    assert_int_equal(kc_twh_count(f->wh, "/st"), 1);
    assert_int_equal(kc_twh_count(f->wh, "/sub"), 1);
    json_t *q, *rev = adm_review(f, "/st", 0, &q);
    assert_string_equal(ts_s(q, "subResource"), "status");
    assert_string_equal(ts_s(q, "requestSubResource"), "status");
    assert_string_equal(ts_s(q, "operation"), "UPDATE");
    json_decref(rev);
    assert_int_equal(kc_twh_count(f->wh, "/del"), 0);
    assert_int_equal(kc_twh_count(f->wh, "/apps"), 0);
    assert_int_equal(kc_twh_count(f->wh, "/v2"), 0);
    ts_req(f->srv, "DELETE", POD_PATH "/p1?gracePeriodSeconds=0", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/del"), 1);
}

/* §11.12 — MW4, AR3: Namespaced skips Namespaces and cluster-scoped kinds; Cluster matches them
 * and not namespaced ones; a Namespace's review carries its own name as namespace. */
static void test_admission_match_scope(void **state)
{
    adm_fx *f = *state;
    const char *all = "[\"*\"]";
    assert_int_equal(adm_config(f, "Validating", "v",
                                adm_hook(f, "nsd.example.com", "/nsd",
                                         rule("[\"CREATE\"]", all, all, all, "Namespaced")),
                                adm_hook(f, "cl.example.com", "/cl",
                                         rule("[\"CREATE\"]", all, all, all, "Cluster")),
                                NULL),
                     201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, "/api/v1/namespaces", "{\"metadata\":{\"name\":\"s1\"}}", &r),
                     201);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/nsd"), 0);
    assert_int_equal(kc_twh_count(f->wh, "/cl"), 1);
    json_t *q, *rev = adm_review(f, "/cl", 0, &q);
    assert_string_equal(ts_s(q, "namespace"), "s1");
    json_decref(rev);
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("c1", NULL), &r), 201);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/nsd"), 1);
    assert_int_equal(kc_twh_count(f->wh, "/cl"), 1);
    assert_int_equal(ts_post(f->srv, "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                             "{\"metadata\":{\"name\":\"cr1\"},\"rules\":[]}", &r),
                     201);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/nsd"), 1);
    assert_int_equal(kc_twh_count(f->wh, "/cl"), 2);
}

/* §11.13 — MW5: a Namespace's CREATE uses its new labels; an object in a labelled namespace
 * matches, one in another does not; a cluster-scoped object always matches. */
static void test_admission_match_namespace_selector(void **state)
{
    adm_fx *f = *state;
    char extra[1024];
    snprintf(extra, sizeof(extra), "%s,\"namespaceSelector\":{\"matchLabels\":{\"team\":\"a\"}}",
             rule("[\"CREATE\"]", "[\"\",\"rbac.authorization.k8s.io\"]", "[\"v1\"]",
                  "[\"namespaces\",\"configmaps\",\"clusterroles\"]", NULL));
    assert_int_equal(
        adm_config(f, "Validating", "v", adm_hook(f, "ns.example.com", "/ns", extra), NULL), 201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, "/api/v1/namespaces",
                             "{\"metadata\":{\"name\":\"na\",\"labels\":{\"team\":\"a\"}}}", &r),
                     201);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/ns"), 1); /* (b) the incoming labels */
    assert_int_equal(ts_post(f->srv, "/api/v1/namespaces", "{\"metadata\":{\"name\":\"nb\"}}", &r),
                     201);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/ns"), 1);
    assert_int_equal(ts_post(f->srv, "/api/v1/namespaces/na/configmaps", ts_cm("c", NULL), &r),
                     201);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/ns"), 2); /* (c) the stored namespace's labels */
    assert_int_equal(ts_post(f->srv, "/api/v1/namespaces/nb/configmaps", ts_cm("c", NULL), &r),
                     201);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/ns"), 2);
    assert_int_equal(ts_post(f->srv, "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                             "{\"metadata\":{\"name\":\"cr\"},\"rules\":[]}", &r),
                     201);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/ns"), 3); /* (a) cluster-scoped */
    assert_int_equal(ts_post(f->srv, "/api/v1/namespaces/gone/configmaps", ts_cm("c", NULL), &r),
                     404); /* (d) */
    assert_string_equal(ts_s(r.json, "reason"), "NotFound");
    ts_resp_free(&r);
}

/* §11.14 — MW6: the object's or the old object's labels; DELETE by the old object. */
static void test_admission_match_object_selector(void **state)
{
    adm_fx *f = *state;
    char extra[1024];
    snprintf(extra, sizeof(extra),
             "%s,\"objectSelector\":{\"matchExpressions\":[{\"key\":"
             "\"pick\",\"operator\":\"In\",\"values\":[\"y\"]}]}",
             ADM_CM_RULES);
    assert_int_equal(
        adm_config(f, "Validating", "v", adm_hook(f, "o.example.com", "/o", extra), NULL), 201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("o1", "{\"pick\":\"y\"}"), &r), 201);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/o"), 1);
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("o2", NULL), &r), 201);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/o"), 1);
    ts_req(f->srv, "PATCH", CM_PATH "/o1", "application/json-patch+json",
           "[{\"op\":\"remove\",\"path\":\"/metadata/labels/pick\"}]", NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/o"), 2); /* only the old object had it */
    ts_req(f->srv, "PATCH", CM_PATH "/o2", "application/merge-patch+json",
           "{\"metadata\":{\"labels\":{\"pick\":\"y\"}}}", NULL, &r);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/o"), 3); /* only the new one has it */
    ts_req(f->srv, "DELETE", CM_PATH "/o2", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/o"), 4);
    json_t *q, *rev = adm_review(f, "/o", 3, &q);
    assert_string_equal(ts_s(q, "operation"), "DELETE");
    json_decref(rev);
}

/* §11.15 — MW7: a webhook matching everything is never called for the configurations. */
static void test_admission_match_exempt_configurations(void **state)
{
    adm_fx *f = *state;
    const char *all = "[\"*\"]";
    assert_int_equal(
        adm_config(f, "Validating", "v",
                   adm_hook(f, "all.example.com", "/all", rule(all, all, all, "[\"*/*\"]", NULL)),
                   NULL),
        201);
    kc_twh_reply deny = {.deny = true, .message = "no"};
    kc_twh_set(f->wh, "/all", &deny);
    assert_int_equal(adm_config(f, "Mutating", "m", adm_hook(f, "x.example.com", "/x", NULL), NULL),
                     201);
    assert_int_equal(
        adm_config(f, "Validating", "v2", adm_hook(f, "x.example.com", "/x", NULL), NULL), 201);
    ts_resp r;
    ts_req(f->srv, "DELETE",
           "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/v", NULL, NULL,
           NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/all"), 0);
}

/* MW9: matchConditions need CEL, which the server has not: Fail refuses (403), Ignore skips; the
 * webhook is never called as if they held. */
static void test_admission_match_conditions_refused(void **state)
{
    adm_fx *f = *state;
    char extra[1024];
    snprintf(extra, sizeof(extra),
             "%s,\"matchConditions\":[{\"name\":\"c\",\"expression\":\"true\"}]", ADM_CM_RULES);
    assert_int_equal(
        adm_config(f, "Validating", "v", adm_hook(f, "mc.example.com", "/mc", extra), NULL), 201);
    ts_resp r;
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("mc1", NULL), &r), 403);
    assert_string_equal(ts_s(r.json, "reason"), "Forbidden");
    assert_non_null(strstr(ts_s(r.json, "message"), "matchConditions"));
    ts_resp_free(&r);
    snprintf(extra, sizeof(extra),
             "%s,\"failurePolicy\":\"Ignore\",\"matchConditions\":[{\"name\":\"c\","
             "\"expression\":\"true\"}]",
             ADM_CM_RULES);
    ts_req(f->srv, "DELETE",
           "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/v", NULL, NULL,
           NULL, &r);
    ts_resp_free(&r);
    assert_int_equal(
        adm_config(f, "Validating", "v2", adm_hook(f, "mc.example.com", "/mc", extra), NULL), 201);
    assert_int_equal(ts_post(f->srv, CM_PATH, ts_cm("mc2", NULL), &r), 201);
    ts_resp_free(&r);
    assert_int_equal(kc_twh_count(f->wh, "/mc"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_admission_match_rules, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_match_scope, adm_setup, adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_match_namespace_selector, adm_setup,
                                        adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_match_object_selector, adm_setup,
                                        adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_match_exempt_configurations, adm_setup,
                                        adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_match_conditions_refused, adm_setup,
                                        adm_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
