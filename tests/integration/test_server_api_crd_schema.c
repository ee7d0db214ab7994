/*
 * test_server_api_crd_schema.c — custom resources against their CRD's openAPIV3Schema (spec §3.1
 * "Invalid object", "Unknown or duplicate fields"; checklist #20): validation fails a create or
 * an update with 422 Invalid worded as the API server words it
 * (`Widget.example.com "w" is invalid: spec.replicas: Invalid value: 0: spec.replicas in body
 * should be greater than or equal to 1`), unknown fields are pruned (Warn: a warning, Strict: a
 * 400) except below x-kubernetes-preserve-unknown-fields, the schema's defaults are applied on
 * create and update, and Tables carry the version's additionalPrinterColumns.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

#define CRD_PATH     "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
#define W_PATH       "/apis/example.com/v1/namespaces/default/widgets"
#define TABLE_ACCEPT "application/json;as=Table;v=v1;g=meta.k8s.io"

static const char *crd =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
    "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","
    "\"kind\":\"Widget\",\"listKind\":\"WidgetList\"},\"versions\":[{\"name\":\"v1\","
    "\"served\":true,\"storage\":true,\"subresources\":{\"status\":{}},"
    "\"additionalPrinterColumns\":["
    "{\"name\":\"Replicas\",\"type\":\"integer\",\"jsonPath\":\".spec.replicas\"},"
    "{\"name\":\"Mode\",\"type\":\"string\",\"jsonPath\":\".spec.mode\",\"priority\":1,"
    "\"description\":\"the mode\"},"
    "{\"name\":\"Ready\",\"type\":\"string\",\"jsonPath\":"
    "\".status.conditions[?(@.type==\\\"Ready\\\")].status\"}],"
    "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"properties\":{"
    "\"spec\":{\"type\":\"object\",\"required\":[\"image\"],\"properties\":{"
    "\"image\":{\"type\":\"string\",\"maxLength\":20},"
    "\"replicas\":{\"type\":\"integer\",\"minimum\":1,\"default\":1},"
    "\"mode\":{\"type\":\"string\",\"enum\":[\"fast\",\"slow\"],\"default\":\"fast\"},"
    "\"ports\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
    "\"port\":{\"type\":\"integer\"},\"protocol\":{\"type\":\"string\",\"default\":\"TCP\"}}}},"
    "\"extra\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}},"
    "\"status\":{\"type\":\"object\",\"properties\":{\"conditions\":{\"type\":\"array\","
    "\"items\":{\"type\":\"object\",\"properties\":{\"type\":{\"type\":\"string\"},"
    "\"status\":{\"type\":\"string\"}}}}}}}}}}]}}";

static int setup(void **state)
{
    kc_server *s = ts_start();
    ts_resp r;
    if (!s || ts_post(s, CRD_PATH, crd, &r) != 201) {
        fprintf(stderr, "CRD: %ld %s\n", r.status, r.body ? r.body : "");
        ts_resp_free(&r);
        kc_server_free(s);
        return -1;
    }
    ts_resp_free(&r);
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    kc_server_free(*state);
    return 0;
}

static void expect_message(ts_resp *r, long status, const char *reason, const char *msg)
{
    if (r->status != status || strcmp(ts_s(r->json, "message"), msg) != 0)
        fail_msg("got %ld %s\nwant %ld %s", r->status, r->body ? r->body : "", status, msg);
    assert_string_equal(ts_s(r->json, "reason"), reason);
}

#define WIDGET(name, spec)                                                                         \
    "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"" name        \
    "\"},\"spec\":" spec "}"

/* openAPIV3Schema validation: one error as is, several in brackets, one cause each; nothing is
 * stored; an update is validated too. */
static void test_server_api_crd_validation_422(void **state)
{
    ts_resp r;
    ts_post(*state, W_PATH, WIDGET("w1", "{\"image\":\"i\",\"replicas\":0}"), &r);
    expect_message(&r, 422, "Invalid",
                   "Widget.example.com \"w1\" is invalid: spec.replicas: Invalid value: 0: "
                   "spec.replicas in body should be greater than or equal to 1");
    assert_string_equal(ts_s(r.json, "details.causes.0.field"), "spec.replicas");
    assert_string_equal(ts_s(r.json, "details.causes.0.reason"), "FieldValueInvalid");
    assert_string_equal(ts_s(r.json, "details.kind"), "Widget");
    assert_string_equal(ts_s(r.json, "details.group"), "example.com");
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, W_PATH "/w1", &r), 404);
    ts_resp_free(&r);

    ts_post(*state, W_PATH, WIDGET("w1", "{\"mode\":\"medium\",\"replicas\":\"two\"}"), &r);
    expect_message(&r, 422, "Invalid",
                   "Widget.example.com \"w1\" is invalid: [spec.mode: Unsupported value: "
                   "\"medium\": supported values: \"fast\", \"slow\", spec.replicas: Invalid "
                   "value: \"string\": spec.replicas in body must be of type integer: \"string\", "
                   "spec.image: Required value]");
    assert_int_equal(json_array_size(ts_j(r.json, "details.causes")), 3);
    ts_resp_free(&r);

    assert_int_equal(ts_post(*state, W_PATH, WIDGET("w2", "{\"image\":\"i\"}"), &r), 201);
    ts_resp_free(&r);
    ts_req(*state, "PATCH", W_PATH "/w2", "application/merge-patch+json",
           "{\"spec\":{\"image\":\"abcdefghijklmnopqrstuvwxyz\"}}", NULL, &r);
    expect_message(&r, 422, "Invalid",
                   "Widget.example.com \"w2\" is invalid: spec.image: Too long: may not be more "
                   "than 20 bytes");
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, W_PATH "/w2", &r), 200);
    assert_string_equal(ts_s(r.json, "spec.image"), "i");
    ts_resp_free(&r);
}

/* Pruning: unknown fields are dropped (Warn names them), kept below
 * x-kubernetes-preserve-unknown-fields; Strict rejects them. */
static void test_server_api_crd_pruning_20(void **state)
{
    ts_resp r;
    const char *w = WIDGET("p1", "{\"image\":\"i\",\"bogus\":1,\"extra\":{\"any\":{\"x\":[1]}}}");
    assert_int_equal(ts_post(*state, W_PATH, w, &r), 201);
    assert_string_equal(r.warnings, "299 - \"unknown field \\\"spec.bogus\\\"\"\n");
    assert_null(ts_j(r.json, "spec.bogus"));
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.extra.any.x.0")), 1);
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, W_PATH "/p1", &r), 200);
    assert_null(ts_j(r.json, "spec.bogus"));
    assert_non_null(ts_j(r.json, "spec.extra.any"));
    ts_resp_free(&r);

    ts_req(*state, "POST", W_PATH "?fieldValidation=Strict", "application/json",
           WIDGET("p2", "{\"image\":\"i\",\"bogus\":1}"), NULL, &r);
    assert_int_equal(r.status, 400);
    assert_string_equal(ts_s(r.json, "reason"), "BadRequest");
    assert_non_null(
        strstr(ts_s(r.json, "message"), "strict decoding error: unknown field \"spec.bogus\""));
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, W_PATH "/p2", &r), 404);
    ts_resp_free(&r);
}

/* Schema defaults on create (also in array items) and on update (a removed defaulted field comes
 * back); a value given is kept. */
static void test_server_api_crd_defaults(void **state)
{
    ts_resp r;
    assert_int_equal(ts_post(*state, W_PATH,
                             WIDGET("d1", "{\"image\":\"i\",\"ports\":[{\"port\":80},{\"port\":53,"
                                          "\"protocol\":\"UDP\"}]}"),
                             &r),
                     201);
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.replicas")), 1);
    assert_string_equal(ts_s(r.json, "spec.mode"), "fast");
    assert_string_equal(ts_s(r.json, "spec.ports.0.protocol"), "TCP");
    assert_string_equal(ts_s(r.json, "spec.ports.1.protocol"), "UDP");
    char put[512];
    snprintf(put, sizeof(put),
             "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":"
             "\"d1\",\"resourceVersion\":\"%s\"},\"spec\":{\"image\":\"j\",\"mode\":\"slow\"}}",
             ts_s(r.json, "metadata.resourceVersion"));
    ts_resp_free(&r);
    ts_req(*state, "PUT", W_PATH "/d1", "application/json", put, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "spec.mode"), "slow");
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.replicas")), 1);
    ts_resp_free(&r);
}

/* additionalPrinterColumns: Name, then each column of the version (priority and description
 * kept), cells by the column's jsonPath and type; a missing value is null. */
static void test_server_api_crd_printer_columns(void **state)
{
    ts_resp r;
    assert_int_equal(ts_post(*state, W_PATH,
                             WIDGET("t1", "{\"image\":\"i\",\"replicas\":3,\"mode\":\"slow\"}"),
                             &r),
                     201);
    ts_resp_free(&r);
    ts_req(*state, "PATCH", W_PATH "/t1/status", "application/merge-patch+json",
           "{\"status\":{\"conditions\":[{\"type\":\"Synced\",\"status\":\"False\"},"
           "{\"type\":\"Ready\",\"status\":\"True\"}]}}",
           NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    assert_int_equal(ts_post(*state, W_PATH, WIDGET("t2", "{\"image\":\"i\"}"), &r), 201);
    ts_resp_free(&r);

    ts_req(*state, "GET", W_PATH, NULL, NULL, TABLE_ACCEPT, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "kind"), "Table");
    json_t *cols = ts_j(r.json, "columnDefinitions");
    assert_int_equal(json_array_size(cols), 4);
    assert_string_equal(ts_s(cols, "0.name"), "Name");
    assert_string_equal(ts_s(cols, "1.name"), "Replicas");
    assert_string_equal(ts_s(cols, "1.type"), "integer");
    assert_string_equal(ts_s(cols, "2.name"), "Mode");
    assert_string_equal(ts_s(cols, "2.description"), "the mode");
    assert_int_equal(json_integer_value(ts_j(cols, "2.priority")), 1);
    assert_string_equal(ts_s(cols, "3.name"), "Ready");
    json_t *rows = ts_j(r.json, "rows");
    assert_int_equal(json_array_size(rows), 2);
    assert_string_equal(ts_s(rows, "0.cells.0"), "t1");
    assert_int_equal(json_integer_value(ts_j(rows, "0.cells.1")), 3);
    assert_string_equal(ts_s(rows, "0.cells.2"), "slow");
    assert_string_equal(ts_s(rows, "0.cells.3"), "True");
    assert_string_equal(ts_s(rows, "1.cells.0"), "t2");
    assert_int_equal(json_integer_value(ts_j(rows, "1.cells.1")), 1); /* the default */
    assert_true(json_is_null(ts_j(rows, "1.cells.3")));
    assert_string_equal(ts_s(rows, "0.object.kind"), "PartialObjectMetadata");
    ts_resp_free(&r);
}

/* A CRD update replaces the schema: a new bound applies to the next write. */
static void test_server_api_crd_schema_update(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, CRD_PATH "/widgets.example.com", &r), 200);
    json_t *doc = json_deep_copy(r.json);
    ts_resp_free(&r);
    json_t *rep = ts_j(doc, "spec.versions.0.schema.openAPIV3Schema.properties.spec.properties."
                            "replicas");
    json_object_set_new(rep, "maximum", json_integer(5));
    char *body = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    ts_req(*state, "PUT", CRD_PATH "/widgets.example.com", "application/json", body, NULL, &r);
    free(body);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    ts_post(*state, W_PATH, WIDGET("u1", "{\"image\":\"i\",\"replicas\":6}"), &r);
    expect_message(&r, 422, "Invalid",
                   "Widget.example.com \"u1\" is invalid: spec.replicas: Invalid value: 6: "
                   "spec.replicas in body should be less than or equal to 5");
    ts_resp_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_server_api_crd_validation_422, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_api_crd_pruning_20, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_api_crd_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_api_crd_printer_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_api_crd_schema_update, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
