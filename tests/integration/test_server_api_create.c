/*
 * test_server_api_create.c — POST semantics of the embedded API server (spec §9 #9–#20).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

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

static void test_server_create_sets_system_fields_9(void **state)
{
    ts_resp r;
    assert_int_equal(ts_post(*state, CM_PATH, ts_cm("a9", NULL), &r), 201);
    assert_int_equal(strlen(ts_s(r.json, "metadata.uid")), 36);
    const char *ts = ts_s(r.json, "metadata.creationTimestamp");
    assert_int_equal(strlen(ts), 20);
    assert_int_equal(ts[19], 'Z');
    assert_int_equal(ts[10], 'T');
    assert_true(ts_rv(r.json) > 0);
    assert_string_equal(ts_s(r.json, "metadata.namespace"), "default");
    ts_resp_free(&r);
}

static void test_server_create_duplicate_409_10(void **state)
{
    ts_resp r;
    assert_int_equal(ts_post(*state, CM_PATH, ts_cm("a10", NULL), &r), 201);
    ts_resp_free(&r);
    assert_int_equal(ts_post(*state, CM_PATH, ts_cm("a10", NULL), &r), 409);
    assert_string_equal(ts_s(r.json, "reason"), "AlreadyExists");
    assert_string_equal(ts_s(r.json, "details.kind"), "configmaps");
    assert_string_equal(ts_s(r.json, "details.name"), "a10");
    assert_string_equal(ts_s(r.json, "message"), "configmaps \"a10\" already exists");
    ts_resp_free(&r);
}

static void test_server_create_generate_name_11(void **state)
{
    ts_resp r;
    assert_int_equal(ts_post(*state, CM_PATH, "{\"metadata\":{\"generateName\":\"gen-\"}}", &r),
                     201);
    const char *n = ts_s(r.json, "metadata.name");
    assert_int_equal(strlen(n), 9);
    assert_memory_equal(n, "gen-", 4);
    for (int i = 4; i < 9; i++)
        assert_non_null(strchr("bcdfghjklmnpqrstvwxz2456789", n[i]));
    ts_resp_free(&r);
}

static void test_server_create_namespace_mismatch_400_12(void **state)
{
    ts_resp r;
    assert_int_equal(
        ts_post(*state, CM_PATH, "{\"metadata\":{\"name\":\"a12\",\"namespace\":\"other\"}}", &r),
        400);
    assert_string_equal(ts_s(r.json, "reason"), "BadRequest");
    ts_resp_free(&r);
}

static void test_server_create_missing_namespace_404_13(void **state)
{
    ts_resp r;
    assert_int_equal(ts_post(*state, "/api/v1/namespaces/nope/configmaps", ts_cm("a13", NULL), &r),
                     404);
    assert_string_equal(ts_s(r.json, "reason"), "NotFound");
    assert_string_equal(ts_s(r.json, "details.kind"), "namespaces");
    ts_resp_free(&r);
}

static void test_server_create_invalid_name_422_14(void **state)
{
    ts_resp r;
    assert_int_equal(ts_post(*state, CM_PATH, ts_cm("Bad_Name", NULL), &r), 422);
    assert_string_equal(ts_s(r.json, "reason"), "Invalid");
    assert_string_equal(ts_s(r.json, "details.kind"), "ConfigMap");
    assert_string_equal(ts_s(r.json, "details.causes.0.field"), "metadata.name");
    ts_resp_free(&r);
}

static void test_server_create_with_rv_fails_15(void **state)
{
    ts_resp r;
    long st =
        ts_post(*state, CM_PATH, "{\"metadata\":{\"name\":\"a15\",\"resourceVersion\":\"5\"}}", &r);
    assert_true(st >= 400);
    ts_resp_free(&r);
}

static void test_server_create_drops_status_16(void **state)
{
    ts_resp r;
    assert_int_equal(
        ts_post(*state, "/apis/apps/v1/namespaces/default/deployments",
                "{\"metadata\":{\"name\":\"d16\"},\"spec\":{\"replicas\":1," TS_DEP_SPEC
                "},\"status\":{"
                "\"replicas\":7}}",
                &r),
        201);
    assert_null(ts_j(r.json, "status.replicas"));
    assert_int_equal(json_integer_value(ts_j(r.json, "metadata.generation")), 1);
    ts_resp_free(&r);
}

static const char *crd =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
    "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","
    "\"kind\":\"Widget\"},\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
    "\"subresources\":{\"status\":{}}}]}}";

static void test_server_create_cr_generation_1_17(void **state)
{
    ts_resp r;
    assert_int_equal(
        ts_post(*state, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd, &r), 201);
    ts_resp_free(&r);
    assert_int_equal(ts_post(*state, "/apis/example.com/v1/namespaces/default/widgets",
                             "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":"
                             "{\"name\":\"w\"},\"spec\":{\"a\":1},\"status\":{\"b\":2}}",
                             &r),
                     201);
    assert_int_equal(json_integer_value(ts_j(r.json, "metadata.generation")), 1);
    assert_null(ts_j(r.json, "status"));
    ts_resp_free(&r);
}

static void test_server_create_dry_run_18(void **state)
{
    kc_server *s = *state;
    ts_watch *w =
        ts_watch_start(s, CM_PATH "?watch=1&resourceVersion=1&fieldSelector=metadata.name%3Da18");
    ts_resp r;
    unsigned long long before = kc_server_current_rv(s);
    assert_int_equal(ts_post(s, CM_PATH "?dryRun=All", ts_cm("a18", NULL), &r), 201);
    assert_string_equal(ts_s(r.json, "metadata.resourceVersion"), "");
    assert_int_equal(strlen(ts_s(r.json, "metadata.uid")), 36);
    ts_resp_free(&r);
    assert_int_equal(kc_server_current_rv(s), before);
    assert_int_equal(ts_get(s, CM_PATH "/a18", &r), 404);
    ts_resp_free(&r);
    json_t *ev = ts_watch_next_nb(w, 300);
    assert_null(ev);
    ts_watch_free(w);
}

static void test_server_create_dry_run_bogus_422_19(void **state)
{
    ts_resp r;
    assert_int_equal(ts_post(*state, CM_PATH "?dryRun=Bogus", ts_cm("a19", NULL), &r), 422);
    assert_string_equal(ts_s(r.json, "reason"), "Invalid");
    ts_resp_free(&r);
}

static void test_server_create_strict_unknown_field_400_20(void **state)
{
    ts_resp r;
    assert_int_equal(ts_post(*state, CM_PATH "?fieldValidation=Strict",
                             "{\"metadata\":{\"name\":\"a20\"},\"bogus\":1}", &r),
                     400);
    assert_non_null(strstr(ts_s(r.json, "message"), "unknown field"));
    ts_resp_free(&r);
    assert_int_equal(ts_post(*state, CM_PATH "?fieldValidation=Ignore",
                             "{\"metadata\":{\"name\":\"a20\"},"
                             "\"bogus\":1}",
                             &r),
                     201);
    ts_resp_free(&r);
}

/* fieldValidation=Warn, the default (spec §3.1, checklist #7/#8): 201, one `Warning: 299 - "…"`
 * header per unknown field, and the unknown fields dropped from what is stored; Ignore drops them
 * without a warning. A key that could break the header line is neutralised. */
static void test_server_create_warn_unknown_fields_default(void **state)
{
    ts_resp r;
    assert_int_equal(ts_post(*state, CM_PATH,
                             "{\"metadata\":{\"name\":\"w20\",\"colour\":\"red\"},"
                             "\"data\":{\"k\":\"v\"},\"bogus\":1,\"bad\\r\\nX-Evil: 1\\\"\":2}",
                             &r),
                     201);
    assert_non_null(strstr(r.warnings, "299 - \"unknown field \\\"metadata.colour\\\"\"\n"));
    assert_non_null(strstr(r.warnings, "299 - \"unknown field \\\"bogus\\\"\"\n"));
    assert_non_null(strstr(r.warnings, "299 - \"unknown field \\\"bad??X-Evil: 1\\\"\\\"\"\n"));
    assert_null(json_object_get(r.json, "bogus"));
    assert_null(json_object_get(json_object_get(r.json, "metadata"), "colour"));
    assert_string_equal(ts_s(r.json, "data.k"), "v");
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, CM_PATH "/w20", &r), 200);
    assert_null(json_object_get(r.json, "bogus"));
    assert_string_equal(r.warnings, ""); /* reads carry no warning */
    ts_resp_free(&r);

    assert_int_equal(ts_post(*state, CM_PATH "?fieldValidation=Ignore",
                             "{\"metadata\":{\"name\":\"w20b\"},\"bogus\":1}", &r),
                     201);
    assert_string_equal(r.warnings, "");
    assert_null(json_object_get(r.json, "bogus"));
    ts_resp_free(&r);
    assert_int_equal(ts_post(*state, CM_PATH "?fieldValidation=Warn",
                             "{\"metadata\":{\"name\":\"w20c\"},\"data\":{}}", &r),
                     201);
    assert_string_equal(r.warnings, ""); /* nothing unknown, nothing to say */
    ts_resp_free(&r);
}

static void test_server_create_cluster_scoped_clears_namespace(void **state)
{
    ts_resp r;
    assert_int_equal(ts_post(*state, "/api/v1/nodes",
                             "{\"metadata\":{\"name\":\"n1\",\"namespace\":\"x\"}}", &r),
                     201);
    assert_null(ts_j(r.json, "metadata.namespace"));
    ts_resp_free(&r);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_create_sets_system_fields_9),
        cmocka_unit_test(test_server_create_duplicate_409_10),
        cmocka_unit_test(test_server_create_generate_name_11),
        cmocka_unit_test(test_server_create_namespace_mismatch_400_12),
        cmocka_unit_test(test_server_create_missing_namespace_404_13),
        cmocka_unit_test(test_server_create_invalid_name_422_14),
        cmocka_unit_test(test_server_create_with_rv_fails_15),
        cmocka_unit_test(test_server_create_drops_status_16),
        cmocka_unit_test(test_server_create_cr_generation_1_17),
        cmocka_unit_test(test_server_create_dry_run_18),
        cmocka_unit_test(test_server_create_dry_run_bogus_422_19),
        cmocka_unit_test(test_server_create_strict_unknown_field_400_20),
        cmocka_unit_test(test_server_create_warn_unknown_fields_default),
        cmocka_unit_test(test_server_create_cluster_scoped_clears_namespace),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    curl_global_cleanup();
    return rc;
}
