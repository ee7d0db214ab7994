/*
 * test_server_admission_binding.c — `kcache serve` calling admission webhooks for the
 * pods/binding subresource as kube-apiserver does: a CREATE of pods/binding whose object is the
 * v1 Binding (AR2, AR4, AR6, AR7; MW3: rules "pods/binding" and "pods/<any>" match it, "pods" does
 * not), mutated by the mutating chain before the pod is assigned (CH1, CH3: the patched target is
 * the node bound), seen mutated by the validating webhooks (CH6), a denial (CH7) or a dry run
 * (CH15) leaving the pod unbound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_admission_fixture.h"

#define POD_PATH "/api/v1/namespaces/default/pods"

#define RULES(res)                                                                                 \
    "\"rules\":[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"       \
    "\"resources\":[\"" res "\"]}]"

static void create_pod(adm_fx *f, const char *name)
{
    ts_resp r;
    assert_int_equal(ts_post(f->srv, POD_PATH, ts_pod(name, NULL), &r), 201);
    ts_resp_free(&r);
}

/* The pod's spec.nodeName ("" when unbound). */
static void expect_node(adm_fx *f, const char *name, const char *node)
{
    char path[256];
    snprintf(path, sizeof path, POD_PATH "/%s", name);
    ts_resp r;
    assert_int_equal(ts_get(f->srv, path, &r), 200);
    assert_string_equal(ts_s(r.json, "spec.nodeName"), node);
    ts_resp_free(&r);
}

static void test_admission_binding_review_and_mutation(void **state)
{
    adm_fx *f = *state;
    create_pod(f, "p1");
    kc_twh_reply retarget = {.patch = "[{\"op\":\"replace\",\"path\":\"/target/name\","
                                      "\"value\":\"n9\"},{\"op\":\"add\",\"path\":"
                                      "\"/metadata/annotations\",\"value\":{\"by\":\"hook\"}}]"};
    kc_twh_set(f->wh, "/m", &retarget);
    assert_int_equal(adm_config(f, "Mutating", "m",
                                adm_hook(f, "m.example.com", "/m", RULES("pods/binding")), NULL),
                     201);
    assert_int_equal(adm_config(f, "Validating", "v",
                                adm_hook(f, "v.example.com", "/v", RULES("pods/*")),
                                adm_hook(f, "pods.example.com", "/pods", RULES("pods")), NULL),
                     201);
    create_pod(f, "p0"); /* a CREATE of pods: "pods" matches, "pods/<any>" does not */
    assert_int_equal(ts_bind(f->srv, "p1", "n1", ""), 201);
    expect_node(f, "p1", "n9"); /* the mutated target (CH1) */
    ts_resp r;
    assert_int_equal(ts_get(f->srv, POD_PATH "/p1", &r), 200);
    assert_string_equal(ts_s(r.json, "metadata.annotations.by"), "hook");
    ts_resp_free(&r);

    json_t *q, *rev = adm_review(f, "/m", 0, &q);
    assert_non_null(rev);
    assert_string_equal(ts_s(q, "operation"), "CREATE"); /* AR4 */
    assert_string_equal(ts_s(q, "kind.group"), "");      /* AR2 */
    assert_string_equal(ts_s(q, "kind.version"), "v1");
    assert_string_equal(ts_s(q, "kind.kind"), "Binding");
    assert_string_equal(ts_s(q, "resource.resource"), "pods");
    assert_string_equal(ts_s(q, "subResource"), "binding");
    assert_string_equal(ts_s(q, "requestSubResource"), "binding");
    assert_string_equal(ts_s(q, "name"), "p1");
    assert_string_equal(ts_s(q, "namespace"), "default");
    assert_string_equal(ts_s(q, "object.kind"), "Binding"); /* AR6 */
    assert_string_equal(ts_s(q, "object.metadata.namespace"), "default");
    assert_string_equal(ts_s(q, "object.target.name"), "n1");
    assert_true(json_is_null(json_object_get(q, "oldObject")));
    assert_string_equal(ts_s(q, "options.kind"), "CreateOptions"); /* AR7 */
    assert_true(json_is_false(json_object_get(q, "dryRun")));
    json_decref(rev);
    rev = adm_review(f, "/v", 0, &q); /* CH6: after mutation */
    assert_non_null(rev);
    assert_string_equal(ts_s(q, "object.target.name"), "n9");
    assert_string_equal(ts_s(q, "object.metadata.annotations.by"), "hook");
    json_decref(rev);
    /* MW3: "pods" is the main resource only — called for the pod's create, not its binding */
    assert_int_equal(kc_twh_count(f->wh, "/pods"), 1);
    assert_int_equal(kc_twh_count(f->wh, "/v"), 1);
}

static void test_admission_binding_denied_and_dry_run(void **state)
{
    adm_fx *f = *state;
    create_pod(f, "p2");
    kc_twh_reply no = {.deny = true, .code = 403, .message = "no nodes today"};
    kc_twh_set(f->wh, "/v", &no);
    assert_int_equal(adm_config(f, "Validating", "v",
                                adm_hook(f, "v.example.com", "/v", RULES("pods/binding")), NULL),
                     201);
    assert_int_equal(ts_bind(f->srv, "p2", "n1", ""), 403); /* CH7 */
    expect_node(f, "p2", "");
    char path[256];
    snprintf(path, sizeof path, POD_PATH "/p2/binding");
    ts_resp r;
    ts_req(f->srv, "POST", path, "application/json",
           "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p2\"},"
           "\"target\":{\"name\":\"n1\"}}",
           NULL, &r);
    assert_string_equal(ts_s(r.json, "message"),
                        "admission webhook \"v.example.com\" denied the request: no nodes today");
    ts_resp_free(&r);
    /* a dry run is reviewed with dryRun true and binds nothing (CH15: sideEffects None) */
    kc_twh_reply yes = {0};
    kc_twh_set(f->wh, "/v", &yes);
    size_t before = kc_twh_count(f->wh, "/v");
    assert_int_equal(ts_bind(f->srv, "p2", "n1", "?dryRun=All"), 201);
    expect_node(f, "p2", "");
    json_t *q, *rev = adm_review(f, "/v", before, &q);
    assert_non_null(rev);
    assert_true(json_is_true(json_object_get(q, "dryRun")));
    json_decref(rev);
    /* and a real one binds */
    assert_int_equal(ts_bind(f->srv, "p2", "n1", ""), 201);
    expect_node(f, "p2", "n1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_admission_binding_review_and_mutation, adm_setup,
                                        adm_teardown),
        cmocka_unit_test_setup_teardown(test_admission_binding_denied_and_dry_run, adm_setup,
                                        adm_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
