/*
 * test_rest_path.c — REST paths and query strings: core vs named groups, namespaced vs
 * cluster-scoped, subresources, and percent-escaping of every caller-supplied component (a name or
 * selector can never add a path segment or a query parameter).
 */
#include "rest/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

static void expect_path(const kc_gvr *g, const char *ns, const char *name, const char *sub,
                        const char *want)
{
    kc__buf b = KC__BUF_INIT(0);
    assert_int_equal(kc__path(&b, g, ns, name, sub), 0);
    assert_string_equal(b.data, want);
    kc__buf_free(&b);
}

static void test_rest_path_core_and_groups(void **state)
{
    const kc_gvr pods = {"", "v1", "pods"}, deps = {"apps", "v1", "deployments"};
    const kc_gvr nodes = {NULL, "v1", "nodes"};
    expect_path(&pods, "default", NULL, NULL, "/api/v1/namespaces/default/pods");
    expect_path(&pods, NULL, NULL, NULL, "/api/v1/pods");
    expect_path(&pods, "ns", "p1", "status", "/api/v1/namespaces/ns/pods/p1/status");
    expect_path(&deps, "ns", "d", NULL, "/apis/apps/v1/namespaces/ns/deployments/d");
    expect_path(&nodes, "", "n1", NULL, "/api/v1/nodes/n1");
}

static void test_rest_path_escapes_components(void **state)
{
    const kc_gvr cm = {"", "v1", "configmaps"};
    expect_path(&cm, "a/b", "x?y=1&z", NULL, "/api/v1/namespaces/a%2Fb/configmaps/x%3Fy%3D1%26z");
}

static void test_rest_path_rejects_incomplete_gvr(void **state)
{
    kc__buf b = KC__BUF_INIT(0);
    const kc_gvr nores = {"", "v1", ""}, nover = {"", NULL, "pods"}, pods = {"", "v1", "pods"};
    assert_int_equal(kc__path(&b, &nores, NULL, NULL, NULL), KC_EINVAL);
    assert_int_equal(kc__path(&b, &nover, NULL, NULL, NULL), KC_EINVAL);
    kc__buf_reset(&b);
    assert_int_equal(kc__path(&b, &pods, NULL, "", NULL), KC_EINVAL);
    kc__buf_free(&b);
}

static void test_rest_path_query_escaping(void **state)
{
    kc__buf b = KC__BUF_INIT(0);
    assert_int_equal(kc__buf_append_str(&b, "/api/v1/pods"), 0);
    assert_int_equal(kc__query(&b, "labelSelector", "app in (a,b),!x"), 0);
    assert_int_equal(kc__query(&b, "fieldSelector", ""), 0); /* empty: omitted */
    assert_int_equal(kc__query(&b, "continue", NULL), 0);
    assert_int_equal(kc__query_int(&b, "limit", 500), 0);
    assert_string_equal(b.data,
                        "/api/v1/pods?labelSelector=app%20in%20%28a%2Cb%29%2C%21x&limit=500");
    kc__buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rest_path_core_and_groups),
        cmocka_unit_test(test_rest_path_escapes_components),
        cmocka_unit_test(test_rest_path_rejects_incomplete_gvr),
        cmocka_unit_test(test_rest_path_query_escaping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
