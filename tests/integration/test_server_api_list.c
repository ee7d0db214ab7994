/*
 * test_server_api_list.c — LIST semantics of the embedded API server (spec §9 #59–#70):
 * envelope, list RV, ordering, selectors, resourceVersion rules, paging and its errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

static int setup(void **state)
{
    kc_server *s = ts_start();
    if (!s)
        return -1;
    ts_resp r;
    ts_post(s, "/api/v1/namespaces", "{\"metadata\":{\"name\":\"aaa\"}}", &r);
    ts_resp_free(&r);
    const char *items[][2] = {{"c", "{\"app\":\"web\",\"tier\":\"fe\"}"},
                              {"a", "{\"app\":\"db\"}"},
                              {"b", "{\"app\":\"web\"}"},
                              {"d", NULL},
                              {"e", "{\"app\":\"cache\"}"}};
    for (size_t i = 0; i < 5; i++) {
        ts_post(s, CM_PATH, ts_cm(items[i][0], items[i][1]), &r);
        ts_resp_free(&r);
    }
    ts_post(s, "/api/v1/namespaces/aaa/configmaps", ts_cm("z", NULL), &r);
    ts_resp_free(&r);
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    kc_server_free(*state);
    return 0;
}

static size_t names(json_t *list, char *out, size_t cap)
{
    size_t i, n = 0;
    json_t *it;
    out[0] = 0;
    json_array_foreach(ts_j(list, "items"), i, it)
    {
        n += (size_t)snprintf(out + n, cap - n, "%s%s/%s", i ? "," : "",
                              ts_s(it, "metadata.namespace"), ts_s(it, "metadata.name"));
    }
    return json_array_size(ts_j(list, "items"));
}

static void test_server_list_envelope_59(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, "/api/v1/secrets", &r), 200);
    assert_string_equal(ts_s(r.json, "kind"), "SecretList");
    assert_string_equal(ts_s(r.json, "apiVersion"), "v1");
    assert_true(json_is_array(ts_j(r.json, "items")));
    assert_int_equal(json_array_size(ts_j(r.json, "items")), 0);
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, "/apis/apps/v1/deployments", &r), 200);
    assert_string_equal(ts_s(r.json, "kind"), "DeploymentList");
    assert_string_equal(ts_s(r.json, "apiVersion"), "apps/v1");
    ts_resp_free(&r);
}

static void test_server_list_rv_is_global_60(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, "/api/v1/secrets", &r), 200);
    assert_int_equal(ts_rv(r.json), kc_server_current_rv(*state));
    ts_resp_free(&r);
}

static void test_server_list_all_namespaces_sorted_61(void **state)
{
    ts_resp r;
    char buf[512];
    assert_int_equal(ts_get(*state, "/api/v1/configmaps", &r), 200);
    assert_int_equal(names(r.json, buf, sizeof(buf)), 6);
    assert_string_equal(buf, "aaa/z,default/a,default/b,default/c,default/d,default/e");
    ts_resp_free(&r);
}

static void check_sel(kc_server *s, const char *sel, const char *want)
{
    char path[512], buf[512];
    snprintf(path, sizeof(path), CM_PATH "?labelSelector=%s", sel);
    ts_resp r;
    assert_int_equal(ts_get(s, path, &r), 200);
    names(r.json, buf, sizeof(buf));
    assert_string_equal(buf, want);
    ts_resp_free(&r);
}

static void test_server_list_label_selectors_62(void **state)
{
    kc_server *s = *state;
    check_sel(s, "app%3Dweb", "default/b,default/c");
    check_sel(s, "app%3D%3Dweb", "default/b,default/c");
    check_sel(s, "app!%3Dweb", "default/a,default/d,default/e");
    check_sel(s, "app%20in%20(db,cache)", "default/a,default/e");
    check_sel(s, "app%20notin%20(db,cache)", "default/b,default/c,default/d");
    check_sel(s, "tier", "default/c");
    check_sel(s, "!app", "default/d");
    ts_resp r;
    assert_int_equal(ts_get(s, CM_PATH "?labelSelector=a%20in%20(", &r), 400);
    ts_resp_free(&r);
}

static void test_server_list_field_selectors_63(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    char buf[256];
    assert_int_equal(ts_get(s, "/api/v1/configmaps?fieldSelector=metadata.name%3Dz", &r), 200);
    names(r.json, buf, sizeof(buf));
    assert_string_equal(buf, "aaa/z");
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/api/v1/configmaps?fieldSelector=metadata.namespace%3Daaa", &r),
                     200);
    assert_int_equal(json_array_size(ts_j(r.json, "items")), 1);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/api/v1/configmaps?fieldSelector=spec.bogus%3Dx", &r), 400);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1", &r), 200);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/api/v1/secrets?fieldSelector=type%3DOpaque", &r), 200);
    ts_resp_free(&r);
}

static void test_server_list_rv_match_rules_64(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(ts_get(s, CM_PATH "?resourceVersionMatch=NotOlderThan", &r), 422);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, CM_PATH "?resourceVersionMatch=Exact&resourceVersion=0", &r), 422);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, CM_PATH "?resourceVersionMatch=Bogus&resourceVersion=1", &r), 422);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, CM_PATH "?resourceVersion=abc", &r), 400);
    ts_resp_free(&r);
}

static void test_server_list_exact_past_and_compacted_65(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    /* at the RV of "b"'s creation, only a (and c) existed before it */
    assert_int_equal(ts_get(s, CM_PATH "?fieldSelector=metadata.name%3Db", &r), 200);
    unsigned long long rvb = ts_rv(ts_j(r.json, "items.0"));
    ts_resp_free(&r);
    char path[256];
    snprintf(path, sizeof(path), CM_PATH "?resourceVersion=%llu&resourceVersionMatch=Exact", rvb);
    assert_int_equal(ts_get(s, path, &r), 200);
    char buf[256];
    names(r.json, buf, sizeof(buf));
    assert_string_equal(buf, "default/a,default/b,default/c");
    assert_int_equal(ts_rv(r.json), rvb);
    ts_resp_free(&r);
    kc_server_compact(s);
    assert_int_equal(ts_get(s, path, &r), 410);
    assert_string_equal(ts_s(r.json, "reason"), "Expired");
    ts_resp_free(&r);
}

static void test_server_list_rv_too_large_504_66(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, CM_PATH "?resourceVersion=9999999", &r), 504);
    assert_string_equal(ts_s(r.json, "details.causes.0.reason"), "ResourceVersionTooLarge");
    ts_resp_free(&r);
}

static void test_server_list_paging_snapshot_67(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(ts_get(s, "/api/v1/configmaps?limit=2", &r), 200);
    unsigned long long rv = ts_rv(r.json);
    char seen[1024] = "", buf[256];
    names(r.json, buf, sizeof(buf));
    strcat(seen, buf);
    assert_int_equal(json_integer_value(ts_j(r.json, "metadata.remainingItemCount")), 4);
    char cont[512];
    snprintf(cont, sizeof(cont), "%s", ts_s(r.json, "metadata.continue"));
    ts_resp_free(&r);
    /* a write between pages is not visible in later pages */
    ts_post(s, CM_PATH, ts_cm("bb", NULL), &r);
    ts_resp_free(&r);
    while (cont[0]) {
        char path[700];
        snprintf(path, sizeof(path), "/api/v1/configmaps?limit=2&continue=%s", cont);
        assert_int_equal(ts_get(s, path, &r), 200);
        assert_int_equal(ts_rv(r.json), rv);
        assert_true(json_array_size(ts_j(r.json, "items")) <= 2);
        names(r.json, buf, sizeof(buf));
        strcat(seen, ",");
        strcat(seen, buf);
        snprintf(cont, sizeof(cont), "%s", ts_s(r.json, "metadata.continue"));
        ts_resp_free(&r);
    }
    assert_string_equal(seen, "aaa/z,default/a,default/b,default/c,default/d,default/e");
    ts_req(s, "DELETE", CM_PATH "/bb", NULL, NULL, NULL, &r);
    ts_resp_free(&r);
}

static void test_server_list_bad_continue_400_68(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, CM_PATH "?continue=%21%21garbage", &r), 400);
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, CM_PATH "?limit=1", &r), 200);
    char path[700];
    snprintf(path, sizeof(path), CM_PATH "?continue=%s&resourceVersion=5",
             ts_s(r.json, "metadata.continue"));
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, path, &r), 400);
    ts_resp_free(&r);
}

static void test_server_list_expired_continue_410_69(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(ts_get(s, CM_PATH "?limit=1", &r), 200);
    char path[700];
    snprintf(path, sizeof(path), CM_PATH "?limit=1&continue=%s", ts_s(r.json, "metadata.continue"));
    ts_resp_free(&r);
    ts_post(s, CM_PATH, ts_cm("c69", NULL), &r);
    ts_resp_free(&r);
    kc_server_compact(s);
    assert_int_equal(ts_get(s, path, &r), 410);
    assert_string_equal(ts_s(r.json, "reason"), "Expired");
    ts_resp_free(&r);
}

static void test_server_list_send_initial_events_422_70(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, CM_PATH "?sendInitialEvents=true", &r), 422);
    ts_resp_free(&r);
}

static void test_server_list_rv0_ignores_limit(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, CM_PATH "?resourceVersion=0&limit=1", &r), 200);
    assert_true(json_array_size(ts_j(r.json, "items")) > 1);
    assert_null(ts_j(r.json, "metadata.continue"));
    ts_resp_free(&r);
}

static void test_server_list_crd_selectable_fields_63(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(
        ts_post(s, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                "{\"metadata\":{\"name\":\"paints.ex.io\"},\"spec\":{\"group\":\"ex.io\","
                "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"paints\",\"kind\":\"Paint\"},"
                "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
                "\"selectableFields\":[{\"jsonPath\":\".spec.color\"}]}]}}",
                &r),
        201);
    ts_resp_free(&r);
    const char *p = "/apis/ex.io/v1/namespaces/default/paints";
    ts_post(s, p,
            "{\"apiVersion\":\"ex.io/v1\",\"kind\":\"Paint\",\"metadata\":{\"name\":"
            "\"r\"},\"spec\":{\"color\":\"red\"}}",
            &r);
    ts_resp_free(&r);
    ts_post(s, p,
            "{\"apiVersion\":\"ex.io/v1\",\"kind\":\"Paint\",\"metadata\":{\"name\":"
            "\"b\"},\"spec\":{\"color\":\"blue\"}}",
            &r);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s,
                            "/apis/ex.io/v1/namespaces/default/paints?fieldSelector=spec.color"
                            "%3Dred",
                            &r),
                     200);
    assert_int_equal(json_array_size(ts_j(r.json, "items")), 1);
    assert_string_equal(ts_s(r.json, "items.0.metadata.name"), "r");
    ts_resp_free(&r);
    assert_int_equal(ts_get(s,
                            "/apis/ex.io/v1/namespaces/default/paints?fieldSelector=spec.size"
                            "%3D1",
                            &r),
                     400);
    ts_resp_free(&r);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_list_envelope_59),
        cmocka_unit_test(test_server_list_rv_is_global_60),
        cmocka_unit_test(test_server_list_all_namespaces_sorted_61),
        cmocka_unit_test(test_server_list_label_selectors_62),
        cmocka_unit_test(test_server_list_field_selectors_63),
        cmocka_unit_test(test_server_list_crd_selectable_fields_63),
        cmocka_unit_test(test_server_list_rv_match_rules_64),
        cmocka_unit_test(test_server_list_rv_too_large_504_66),
        cmocka_unit_test(test_server_list_paging_snapshot_67),
        cmocka_unit_test(test_server_list_bad_continue_400_68),
        cmocka_unit_test(test_server_list_send_initial_events_422_70),
        cmocka_unit_test(test_server_list_rv0_ignores_limit),
        cmocka_unit_test(test_server_list_exact_past_and_compacted_65),
        cmocka_unit_test(test_server_list_expired_continue_410_69),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    curl_global_cleanup();
    return rc;
}
