/*
 * test_server_api_patch.c — PATCH wiring of the embedded API server (spec §9 #38–#47): merge,
 * JSON and strategic patches, media types, RV preconditions, server-side apply.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "test_server_util.h"

#define DEP_PATH "/apis/apps/v1/namespaces/default/deployments"
#define MERGE    "application/merge-patch+json"
#define JSONP    "application/json-patch+json"
#define SMP      "application/strategic-merge-patch+json"
#define APPLY    "application/apply-patch+yaml"

static int setup(void **state)
{
    kc_server *s = ts_start();
    if (!s)
        return -1;
    ts_resp r;
    ts_post(s, CM_PATH, "{\"metadata\":{\"name\":\"p\"},\"data\":{\"a\":\"1\",\"b\":\"2\"}}", &r);
    ts_resp_free(&r);
    ts_post(
        s, DEP_PATH,
        "{\"metadata\":{\"name\":\"d\"},\"spec\":{\"replicas\":1,\"selector\":{\"matchLabels\":"
        "{\"app\":\"d\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"d\"}},\"spec\":{"
        "\"containers\":[{\"name\":\"a\",\"image\":\"x\"},{\"name\":\"b\",\"image\":\"y\"}]}}}}",
        &r);
    ts_resp_free(&r);
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    kc_server_free(*state);
    return 0;
}

static long patch(kc_server *s, const char *path, const char *ctype, const char *body, ts_resp *r)
{
    ts_req(s, "PATCH", path, ctype, body, NULL, r);
    return r->status;
}

static void test_server_patch_merge_38(void **state)
{
    ts_resp r;
    assert_int_equal(patch(*state, CM_PATH "/p", MERGE, "{\"data\":{\"a\":null,\"c\":\"3\"}}", &r),
                     200);
    assert_null(ts_j(r.json, "data.a"));
    assert_string_equal(ts_s(r.json, "data.b"), "2");
    assert_string_equal(ts_s(r.json, "data.c"), "3");
    ts_resp_free(&r);
}

static void test_server_patch_json_test_fail_422_malformed_400_39(void **state)
{
    ts_resp r;
    assert_int_equal(patch(*state, CM_PATH "/p", JSONP,
                           "[{\"op\":\"test\",\"path\":\"/data/b\",\"value\":\"nope\"}]", &r),
                     422);
    ts_resp_free(&r);
    assert_int_equal(patch(*state, CM_PATH "/p", JSONP, "[{\"op\":", &r), 400);
    ts_resp_free(&r);
    assert_int_equal(patch(*state, CM_PATH "/p", JSONP,
                           "[{\"op\":\"replace\",\"path\":\"/data/b\",\"value\":\"9\"}]", &r),
                     200);
    assert_string_equal(ts_s(r.json, "data.b"), "9");
    ts_resp_free(&r);
}

static void test_server_patch_strategic_builtin_merges_by_key_40(void **state)
{
    ts_resp r;
    assert_int_equal(patch(*state, DEP_PATH "/d", SMP,
                           "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"b\","
                           "\"image\":\"z\"}]}}}}",
                           &r),
                     200);
    assert_string_equal(ts_s(r.json, "spec.template.spec.containers.0.name"), "a");
    assert_string_equal(ts_s(r.json, "spec.template.spec.containers.0.image"), "x");
    assert_string_equal(ts_s(r.json, "spec.template.spec.containers.1.image"), "z");
    assert_int_equal(json_integer_value(ts_j(r.json, "metadata.generation")), 2);
    ts_resp_free(&r);
}

static void test_server_patch_strategic_cr_415_40(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    ts_post(s, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            "{\"metadata\":{\"name\":\"gizmos.ex.io\"},\"spec\":{\"group\":\"ex.io\",\"scope\":"
            "\"Namespaced\",\"names\":{\"plural\":\"gizmos\",\"kind\":\"Gizmo\"},\"versions\":[{"
            "\"name\":\"v1\",\"served\":true,\"storage\":true}]}}",
            &r);
    ts_resp_free(&r);
    assert_int_equal(ts_post(s, "/apis/ex.io/v1/namespaces/default/gizmos",
                             "{\"apiVersion\":\"ex.io/v1\",\"kind\":\"Gizmo\",\"metadata\":{"
                             "\"name\":\"g\"}}",
                             &r),
                     201);
    ts_resp_free(&r);
    assert_int_equal(patch(s, "/apis/ex.io/v1/namespaces/default/gizmos/g", SMP, "{}", &r), 415);
    ts_resp_free(&r);
    assert_int_equal(
        patch(s, "/apis/ex.io/v1/namespaces/default/gizmos/g", MERGE, "{\"spec\":{\"x\":1}}", &r),
        200);
    assert_int_equal(json_integer_value(ts_j(r.json, "metadata.generation")), 2);
    ts_resp_free(&r);
}

static void test_server_patch_unsupported_content_type_415_41(void **state)
{
    ts_resp r;
    assert_int_equal(patch(*state, CM_PATH "/p", "text/plain", "{}", &r), 415);
    assert_string_equal(ts_s(r.json, "kind"), "Status");
    ts_resp_free(&r);
}

static void test_server_patch_stale_rv_409_42(void **state)
{
    ts_resp r;
    assert_int_equal(patch(*state, CM_PATH "/p", MERGE,
                           "{\"metadata\":{\"resourceVersion\":\"1\"},\"data\":{\"q\":\"1\"}}", &r),
                     409);
    assert_string_equal(ts_s(r.json, "reason"), "Conflict");
    ts_resp_free(&r);
}

static void test_server_patch_missing_404_43(void **state)
{
    ts_resp r;
    assert_int_equal(patch(*state, CM_PATH "/none", MERGE, "{}", &r), 404);
    ts_resp_free(&r);
}

static void test_server_apply_without_manager_422_44(void **state)
{
    ts_resp r;
    assert_int_equal(patch(*state, CM_PATH "/ap", APPLY,
                           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                           "\"ap\"}}",
                           &r),
                     422);
    ts_resp_free(&r);
}

static void test_server_apply_creates_with_managed_fields_45(void **state)
{
    ts_resp r;
    assert_int_equal(patch(*state, CM_PATH "/ap?fieldManager=me", APPLY,
                           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ap\ndata:\n  x: "
                           "\"1\"\n",
                           &r),
                     201);
    assert_string_equal(ts_s(r.json, "metadata.managedFields.0.manager"), "me");
    assert_string_equal(ts_s(r.json, "metadata.managedFields.0.operation"), "Apply");
    assert_string_equal(ts_s(r.json, "data.x"), "1");
    ts_resp_free(&r);
}

static void test_server_apply_conflict_and_force_46(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    const char *a = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"ac\"},"
                    "\"data\":{\"x\":\"1\"}}";
    const char *b = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"ac\"},"
                    "\"data\":{\"x\":\"2\"}}";
    assert_int_equal(patch(s, CM_PATH "/ac?fieldManager=one", APPLY, a, &r), 201);
    ts_resp_free(&r);
    assert_int_equal(patch(s, CM_PATH "/ac?fieldManager=two", APPLY, b, &r), 409);
    assert_string_equal(ts_s(r.json, "details.causes.0.reason"), "FieldManagerConflict");
    ts_resp_free(&r);
    assert_int_equal(patch(s, CM_PATH "/ac?fieldManager=two&force=true", APPLY, b, &r), 200);
    assert_string_equal(ts_s(r.json, "data.x"), "2");
    ts_resp_free(&r);
}

static void test_server_patch_force_non_apply_422_47(void **state)
{
    ts_resp r;
    assert_int_equal(patch(*state, CM_PATH "/p?force=true", MERGE, "{}", &r), 422);
    ts_resp_free(&r);
}

/* A patch or apply whose result names another object than the URL is 400 (patch_check_name),
 * for a stored object and for an apply that would create one (nothing is created). */
static void test_server_patch_name_mismatch_400(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(patch(s, CM_PATH "/p", MERGE, "{\"metadata\":{\"name\":\"other\"}}", &r), 400);
    assert_string_equal(ts_s(r.json, "reason"), "BadRequest");
    assert_non_null(strstr(ts_s(r.json, "message"), "does not match the name on the URL (p)"));
    ts_resp_free(&r);
    assert_int_equal(patch(s, CM_PATH "/an?fieldManager=me", APPLY,
                           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                           "\"other\"}}",
                           &r),
                     400);
    assert_non_null(strstr(ts_s(r.json, "message"), "does not match the name on the URL (an)"));
    ts_resp_free(&r);
    ts_req(s, "GET", CM_PATH "/an", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 404);
    ts_resp_free(&r);
    ts_req(s, "GET", CM_PATH "/other", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 404);
    ts_resp_free(&r);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_patch_merge_38),
        cmocka_unit_test(test_server_patch_json_test_fail_422_malformed_400_39),
        cmocka_unit_test(test_server_patch_strategic_builtin_merges_by_key_40),
        cmocka_unit_test(test_server_patch_strategic_cr_415_40),
        cmocka_unit_test(test_server_patch_unsupported_content_type_415_41),
        cmocka_unit_test(test_server_patch_stale_rv_409_42),
        cmocka_unit_test(test_server_patch_missing_404_43),
        cmocka_unit_test(test_server_apply_without_manager_422_44),
        cmocka_unit_test(test_server_apply_creates_with_managed_fields_45),
        cmocka_unit_test(test_server_apply_conflict_and_force_46),
        cmocka_unit_test(test_server_patch_force_non_apply_422_47),
        cmocka_unit_test(test_server_patch_name_mismatch_400),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    curl_global_cleanup();
    return rc;
}
