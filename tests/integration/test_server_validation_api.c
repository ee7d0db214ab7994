/*
 * test_server_validation_api.c — the validation of built-in types through every write verb of the
 * embedded server (docs/server.md, "Validation of built-in types"): POST, PUT, merge PATCH,
 * server-side apply (create and update) and dry runs answer 422 with the real server's Status
 * (`Deployment.apps "x" is invalid: …`, details {name, group, kind, causes[]}) and store
 * nothing; names follow the kind's rule (a Service's is a DNS-1035 label); valid writes pass.
 * Unit tests of each rule: tests/unit/test_server_validation.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

#define DEPLOYS "/apis/apps/v1/namespaces/default/deployments"
#define APPLY   "application/apply-patch+yaml"
#define MERGE   "application/merge-patch+json"

static int setup(void **state)
{
    *state = ts_start();
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    kc_server_free(*state);
    return 0;
}

static char *deploy(const char *name, const char *sel, const char *tmpl_label)
{
    char *s = NULL;
    if (asprintf(&s,
                 "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":"
                 "\"%s\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"%s\"}},\"template\":"
                 "{\"metadata\":{\"labels\":{\"app\":\"%s\"}},\"spec\":{\"containers\":[{\"name\":"
                 "\"web\",\"image\":\"nginx\"}]}}}}",
                 name, sel, tmpl_label) < 0)
        return NULL;
    return s;
}

#define MISMATCH_MSG                                                                               \
    "Deployment.apps \"x\" is invalid: spec.template.metadata.labels: Invalid value: "             \
    "map[string]string{\"app\":\"y\"}: `selector` does not match template `labels`"

static void expect_status(ts_resp *r, const char *msg)
{
    assert_int_equal(r->status, 422);
    assert_non_null(r->json);
    assert_string_equal(ts_s(r->json, "kind"), "Status");
    assert_string_equal(ts_s(r->json, "reason"), "Invalid");
    assert_int_equal(json_integer_value(ts_j(r->json, "code")), 422);
    if (msg)
        assert_string_equal(ts_s(r->json, "message"), msg);
}

/* POST (and a dry run) of a Deployment whose selector does not match: 422, nothing stored. */
static void test_server_validation_create(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    char *body = deploy("x", "x", "y");
    ts_post(s, DEPLOYS "?dryRun=All", body, &r);
    expect_status(&r, MISMATCH_MSG);
    ts_resp_free(&r);
    ts_post(s, DEPLOYS, body, &r);
    expect_status(&r, MISMATCH_MSG);
    assert_string_equal(ts_s(r.json, "details.name"), "x");
    assert_string_equal(ts_s(r.json, "details.group"), "apps");
    assert_string_equal(ts_s(r.json, "details.kind"), "Deployment");
    assert_string_equal(ts_s(r.json, "details.causes.0.reason"), "FieldValueInvalid");
    assert_string_equal(ts_s(r.json, "details.causes.0.field"), "spec.template.metadata.labels");
    assert_string_equal(ts_s(r.json, "details.causes.0.message"),
                        "Invalid value: map[string]string{\"app\":\"y\"}: `selector` does not "
                        "match template `labels`");
    ts_resp_free(&r);
    free(body);
    assert_int_equal(ts_get(s, DEPLOYS "/x", &r), 404);
    ts_resp_free(&r);
}

/* PUT and merge PATCH that change the selector: field is immutable; apply of a mismatching
 * object: the same 422 as POST. */
static void test_server_validation_update_patch_apply(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    char *ok = deploy("u", "a", "a");
    assert_int_equal(ts_post(s, DEPLOYS, ok, &r), 201);
    ts_resp_free(&r);
    char *moved = deploy("u", "b", "b");
    ts_req(s, "PUT", DEPLOYS "/u", "application/json", moved, NULL, &r);
    expect_status(&r, "Deployment.apps \"u\" is invalid: spec.selector: Invalid value: "
                      "&LabelSelector{MatchLabels:map[string]string{app: b,},MatchExpressions:"
                      "[]LabelSelectorRequirement{},}: field is immutable");
    ts_resp_free(&r);
    ts_req(s, "PATCH", DEPLOYS "/u", MERGE,
           "{\"spec\":{\"template\":{\"metadata\":{\"labels\":{\"app\":\"z\"}}}}}", NULL, &r);
    expect_status(&r, "Deployment.apps \"u\" is invalid: spec.template.metadata.labels: Invalid "
                      "value: map[string]string{\"app\":\"z\"}: `selector` does not match "
                      "template `labels`");
    ts_resp_free(&r);
    /* a valid patch passes */
    ts_req(s, "PATCH", DEPLOYS "/u", MERGE, "{\"spec\":{\"replicas\":3}}", NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    char *bad = deploy("x", "x", "y");
    ts_req(s, "PATCH", DEPLOYS "/x?fieldManager=t", APPLY, bad, NULL, &r);
    expect_status(&r, MISMATCH_MSG);
    ts_resp_free(&r);
    free(bad);
    free(ok);
    free(moved);
}

/* Several errors: "[e1, e2]" and one cause each, with their field paths. */
static void test_server_validation_pod_errors(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    ts_post(s, "/api/v1/namespaces/default/pods",
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{"
            "\"bad key\":\"v\"}},\"spec\":{\"containers\":[{\"name\":\"C\",\"image\":\"\"}]}}",
            &r);
    expect_status(&r, NULL);
    const char *msg = ts_s(r.json, "message");
    assert_non_null(strstr(msg, "Pod \"p\" is invalid: [metadata.labels: Invalid value: \"bad "
                                "key\": name part must consist of"));
    assert_non_null(strstr(msg, ", spec.containers[0].name: Invalid value: \"C\": a lowercase "
                                "RFC 1123 label must consist of"));
    assert_non_null(strstr(msg, ", spec.containers[0].image: Required value]"));
    assert_string_equal(ts_s(r.json, "details.causes.0.field"), "metadata.labels");
    assert_string_equal(ts_s(r.json, "details.causes.1.field"), "spec.containers[0].name");
    assert_string_equal(ts_s(r.json, "details.causes.2.field"), "spec.containers[0].image");
    assert_string_equal(ts_s(r.json, "details.causes.2.reason"), "FieldValueRequired");
    assert_string_equal(ts_s(r.json, "details.causes.2.message"), "Required value");
    assert_null(ts_j(r.json, "details.group"));
    ts_resp_free(&r);
    /* a valid pod; then an update of anything but its images is forbidden */
    const char *pod = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"q\"},"
                      "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx:1\"}]}}";
    assert_int_equal(ts_post(s, "/api/v1/namespaces/default/pods", pod, &r), 201);
    ts_resp_free(&r);
    ts_req(s, "PATCH", "/api/v1/namespaces/default/pods/q", MERGE,
           "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx:2\"}]}}", NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    ts_req(s, "PATCH", "/api/v1/namespaces/default/pods/q", MERGE,
           "{\"spec\":{\"hostname\":\"h\"}}", NULL, &r);
    expect_status(&r, NULL);
    assert_non_null(strstr(ts_s(r.json, "message"),
                           "Pod \"q\" is invalid: spec: Forbidden: pod updates may not change "
                           "fields other than `spec.containers[*].image`"));
    ts_resp_free(&r);
}

/* Names: the group-qualified kind in the message; a Service's name is a DNS-1035 label. */
static void test_server_validation_names(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    char *bad = deploy("Bad_Name", "a", "a");
    ts_post(s, DEPLOYS, bad, &r);
    expect_status(&r, NULL);
    assert_non_null(strstr(ts_s(r.json, "message"), "Deployment.apps \"Bad_Name\" is invalid: "
                                                    "metadata.name: Invalid value: \"Bad_Name\": "
                                                    "a lowercase RFC 1123 subdomain must consist"));
    assert_string_equal(ts_s(r.json, "details.kind"), "Deployment");
    assert_string_equal(ts_s(r.json, "details.group"), "apps");
    ts_resp_free(&r);
    free(bad);
    /* a bad generateName: its error and the generated name's, as one list */
    ts_post(s, "/api/v1/namespaces/default/configmaps",
            "{\"metadata\":{\"generateName\":\"Bad_\"}}", &r);
    expect_status(&r, NULL);
    assert_string_equal(ts_s(r.json, "details.causes.0.field"), "metadata.generateName");
    assert_string_equal(ts_s(r.json, "details.causes.1.field"), "metadata.name");
    assert_non_null(strstr(ts_s(r.json, "message"), "is invalid: [metadata.generateName: Invalid "
                                                    "value: \"Bad_\": a lowercase RFC 1123"));
    ts_resp_free(&r);
    ts_post(s, "/api/v1/namespaces/default/services",
            "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"1svc\"},"
            "\"spec\":{\"ports\":[{\"port\":80}]}}",
            &r);
    expect_status(&r, "Service \"1svc\" is invalid: metadata.name: Invalid value: \"1svc\": a "
                      "DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                      "start with an alphabetic character, and end with an alphanumeric "
                      "character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
                      "'[a-z]([-a-z0-9]*[a-z0-9])?')");
    ts_resp_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_validation_create),
        cmocka_unit_test(test_server_validation_update_patch_apply),
        cmocka_unit_test(test_server_validation_pod_errors),
        cmocka_unit_test(test_server_validation_names),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
