/*
 * test_server_api_scale.c — the scale subresource of the embedded server.
 * (Split from the former test_server_api_misc.c, one concept per file.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

#include <unistd.h>

static void test_server_scale_subresource(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    const char *dep = "/apis/apps/v1/namespaces/default/deployments";
    assert_int_equal(ts_post(s, dep,
                             "{\"metadata\":{\"name\":\"sc\"},\"spec\":{\"replicas\":1,"
                             "\"selector\":{\"matchLabels\":{\"app\":\"sc\"}},\"template\":{"
                             "\"metadata\":{\"labels\":{\"app\":\"sc\"}},\"spec\":{" TS_CONTAINERS
                             "}}}}",
                             &r),
                     201);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/apis/apps/v1/namespaces/default/deployments/sc/scale", &r), 200);
    assert_string_equal(ts_s(r.json, "kind"), "Scale");
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.replicas")), 1);
    assert_string_equal(ts_s(r.json, "status.selector"), "app=sc");
    ts_resp_free(&r);
    ts_req(s, "PATCH", "/apis/apps/v1/namespaces/default/deployments/sc/scale",
           "application/merge-patch+json", "{\"spec\":{\"replicas\":4}}", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.replicas")), 4);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/apis/apps/v1/namespaces/default/deployments/sc", &r), 200);
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.replicas")), 4);
    assert_int_equal(json_integer_value(ts_j(r.json, "metadata.generation")), 2);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, CM_PATH "/t1/scale", &r), 404);
    ts_resp_free(&r);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_scale_subresource),
    };
    int rc = cmocka_run_group_tests(tests, ts_group_setup_t1, ts_group_teardown);
    curl_global_cleanup();
    return rc;
}
