/*
 * test_server_seed.c — server seeding (src/server/testbed/seed.c, seed_gen.c): the spec generator
 * (order, namespaces, spreading, genpod-shaped 6 KB pods, errors, callback stop) and the fixtures
 * loader (multi-document YAML, List expansion, scalar typing, file order, errors with file and
 * line).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kcache/server.h"
#include "server/testbed/seed.h"

#define MAX_OBJS 400

typedef struct got {
    json_t *o[MAX_OBJS];
    size_t n;
    size_t max_len, min_len;
    int stop_after; /* 0 = never */
} got;

static int collect(void *ud, const char *json, size_t len)
{
    got *g = ud;
    if (g->stop_after && (int)g->n == g->stop_after)
        return KC_ECANCELED;
    json_error_t je;
    json_t *o = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!o)
        fail_msg("invalid JSON from seed: %s", je.text);
    assert_true(g->n < MAX_OBJS);
    g->o[g->n++] = o;
    if (len > g->max_len)
        g->max_len = len;
    if (!g->min_len || len < g->min_len)
        g->min_len = len;
    return 0;
}

static void got_free(got *g)
{
    for (size_t i = 0; i < g->n; i++)
        json_decref(g->o[i]);
    memset(g, 0, sizeof *g);
}

static const char *str_at(json_t *o, const char *a, const char *b)
{
    json_t *x = json_object_get(o, a);
    return json_string_value(b ? json_object_get(x, b) : x);
}

static void test_server_seed_pods_spread_over_namespaces(void **state)
{
    got g = {0};
    assert_int_equal(kc__seed_generate("pods=10,namespaces=3", collect, &g, NULL), 0);
    assert_int_equal(g.n, 13);
    for (size_t i = 0; i < 3; i++) { /* namespaces first */
        char want[16];
        snprintf(want, sizeof want, "ns-%zu", i);
        assert_string_equal(str_at(g.o[i], "kind", NULL), "Namespace");
        assert_string_equal(str_at(g.o[i], "metadata", "name"), want);
    }
    for (size_t i = 3; i < 13; i++) {
        char want[16];
        snprintf(want, sizeof want, "ns-%zu", (i - 3) % 3);
        assert_string_equal(str_at(g.o[i], "kind", NULL), "Pod");
        assert_string_equal(str_at(g.o[i], "metadata", "namespace"), want);
        assert_null(str_at(g.o[i], "metadata", "resourceVersion")); /* the server assigns it */
        assert_null(str_at(g.o[i], "metadata", "uid"));
    }
    assert_string_equal(str_at(g.o[3], "metadata", "name"), "web-7d9f8c6b5-00000");
    assert_string_equal(str_at(g.o[12], "metadata", "name"), "web-7d9f8c6b5-00009");
    got_free(&g);
}

/* Pods have the size and shape of bench/genpod.h's: ≈6 KB, 40 % of it managedFields. */
static void test_server_seed_pod_shape_matches_genpod(void **state)
{
    got g = {0};
    assert_int_equal(kc__seed_generate("pods=3:ns=default", collect, &g, NULL), 0);
    assert_int_equal(g.n, 3); /* default is built in: no Namespace object */
    assert_in_range(g.min_len, 5500, 6500);
    json_t *p = g.o[2];
    assert_string_equal(str_at(json_object_get(p, "spec"), "nodeName", NULL), "node-2");
    json_t *mf = json_object_get(json_object_get(p, "metadata"), "managedFields");
    assert_int_equal(json_array_size(mf), 2);
    char *mfs = json_dumps(mf, JSON_COMPACT);
    assert_in_range(strlen(mfs) * 100 / g.max_len, 35, 45);
    free(mfs);
    json_t *c0 = json_array_get(json_object_get(json_object_get(p, "spec"), "containers"), 0);
    assert_string_equal(str_at(c0, "image", NULL), "registry.example.com/team/web:v1.2.3");
    assert_string_equal(str_at(json_object_get(p, "status"), "phase", NULL), "Running");
    got_free(&g);
}

static void test_server_seed_default_hundred_namespaces_for_pods(void **state)
{
    got g = {0};
    assert_int_equal(kc__seed_generate("pods=2", collect, &g, NULL), 0);
    assert_int_equal(g.n, 102);
    assert_string_equal(str_at(g.o[99], "metadata", "name"), "ns-99");
    assert_string_equal(str_at(g.o[101], "metadata", "namespace"), "ns-1");
    got_free(&g);
}

static void test_server_seed_other_kinds(void **state)
{
    got g = {0};
    assert_int_equal(kc__seed_generate("configmaps=2,secrets=1:ns=team-a,persistentvolumes=2",
                                       collect, &g, NULL),
                     0);
    assert_int_equal(g.n, 6);
    assert_string_equal(str_at(g.o[0], "metadata", "name"), "team-a"); /* the :ns= namespace */
    assert_string_equal(str_at(g.o[1], "kind", NULL), "ConfigMap");
    assert_string_equal(str_at(g.o[1], "metadata", "namespace"), "default");
    assert_string_equal(str_at(g.o[3], "kind", NULL), "Secret");
    assert_string_equal(str_at(g.o[3], "metadata", "namespace"), "team-a");
    assert_string_equal(str_at(g.o[4], "kind", NULL), "PersistentVolume");
    assert_null(str_at(g.o[4], "metadata", "namespace")); /* cluster-scoped */
    assert_string_equal(str_at(g.o[5], "metadata", "name"), "pv-00001");
    got_free(&g);
}

static void test_server_seed_spec_errors_name_the_part(void **state)
{
    const char *bad[] = {"",
                         "pods",
                         "pods=abc",
                         "widgets=3",
                         "pods=1:zone=a",
                         "pvs=1:ns=x",
                         "pods=99999999999",
                         "pods=-1",
                         "pods=1:ns=Bad_Name"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        got g = {0};
        kc_error err = KC_ERROR_INIT;
        assert_int_equal(kc__seed_generate(bad[i], collect, &g, &err), KC_EINVAL);
        assert_int_equal(g.n, 0); /* nothing generated before the spec is fully parsed */
        assert_non_null(err.message);
        char *generate_msg = strdup(err.message);
        kc_error_clear(&err);
        /* the public check gives the same answer, without a callback */
        assert_int_equal(kc_server_seed_spec_check(bad[i], &err), KC_EINVAL);
        assert_string_equal(err.message, generate_msg);
        free(generate_msg);
        kc_error_clear(&err);
    }
    assert_int_equal(kc_server_seed_spec_check(NULL, NULL), KC_EINVAL);
    kc_error err = KC_ERROR_INIT;
    const char *good[] = {"pods=100000",
                          "pods=1000:ns=default,configmaps=50,persistentvolumes=1000",
                          "ns=3,secrets=0", "pvs=1,"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        if (kc_server_seed_spec_check(good[i], &err))
            fail_msg("'%s' refused: %s", good[i], err.message);
    }
    kc__seed_generate("widgets=3", collect, &(got){0}, &err);
    assert_non_null(strstr(err.message, "widgets"));
    kc_error_clear(&err);
}

static void test_server_seed_callback_stops_generation(void **state)
{
    got g = {.stop_after = 4};
    assert_int_equal(kc__seed_generate("configmaps=100", collect, &g, NULL), KC_ECANCELED);
    assert_int_equal(g.n, 4);
    got_free(&g);
}

/* ---- fixtures -------------------------------------------------------------------------------- */

static char dir[256];

static void put(const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int mkdir_setup(void **state)
{
    snprintf(dir, sizeof dir, "/tmp/kc_seed_XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int rm_teardown(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_server_seed_fixtures_yaml_json_lists(void **state)
{
    put("b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm1\n  namespace: default\n"
                  "data:\n  port: \"8080\"\n  n: \"1\"\n---\n---\n"
                  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, labels: {app: "
                  "web}}\nspec:\n  replicas: 3\n  paused: false\n  ratio: 0.5\n  note: ~\n"
                  "  tag: v1.0\n  mode: '0644'\n  template:\n    spec:\n      containers:\n"
                  "      - name: c\n        image: nginx\n");
    put("a.json", "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[{\"kind\":\"Namespace\","
                  "\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\"}},{\"kind\":\"Namespace\","
                  "\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"y\"}}]}");
    put("c.yml", "kind: ConfigMapList\napiVersion: v1\nitems:\n- kind: ConfigMap\n  apiVersion: "
                 "v1\n  metadata: {name: z}\n");
    put("README.txt", "not a fixture");
    got g = {0};
    assert_int_equal(kc__seed_load_dir(dir, collect, &g, NULL), 0);
    assert_int_equal(g.n, 5);
    assert_string_equal(str_at(g.o[0], "metadata", "name"), "x"); /* a.json first */
    assert_string_equal(str_at(g.o[1], "metadata", "name"), "y");
    assert_string_equal(str_at(g.o[2], "metadata", "name"), "cm1");
    assert_string_equal(str_at(g.o[2], "data", "port"), "8080"); /* quoted stays a string */
    json_t *spec = json_object_get(g.o[3], "spec");
    assert_int_equal(json_integer_value(json_object_get(spec, "replicas")), 3);
    assert_true(json_is_false(json_object_get(spec, "paused")));
    assert_true(json_real_value(json_object_get(spec, "ratio")) == 0.5);
    assert_true(json_is_null(json_object_get(spec, "note")));
    assert_string_equal(str_at(spec, "tag", NULL), "v1.0");
    assert_string_equal(str_at(spec, "mode", NULL), "0644");
    assert_string_equal(str_at(g.o[3], "metadata", "name"), "web");
    assert_string_equal(str_at(g.o[4], "metadata", "name"), "z"); /* c.yml List expanded */
    got_free(&g);
}

static void test_server_seed_fixtures_bad_yaml_names_file_and_line(void **state)
{
    put("bad.yaml", "kind: ConfigMap\nmetadata:\n  name: [unclosed\n");
    got g = {0};
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__seed_load_dir(dir, collect, &g, &err), KC_EPARSE);
    assert_non_null(strstr(err.message, "bad.yaml:"));
    kc_error_clear(&err);
    got_free(&g);
}

static void test_server_seed_fixtures_bad_json_and_alias(void **state)
{
    put("x.json", "{\"kind\": ");
    got g = {0};
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__seed_load_dir(dir, collect, &g, &err), KC_EPARSE);
    assert_non_null(strstr(err.message, "x.json"));
    kc_error_clear(&err);
    unlink(strcat(strcat(strcpy((char[300]){0}, dir), "/"), "x.json"));
    put("y.yaml", "a: &x {b: 1}\nc: *x\n");
    assert_int_equal(kc__seed_load_dir(dir, collect, &g, &err), KC_EPARSE);
    assert_non_null(strstr(err.message, "alias"));
    kc_error_clear(&err);
    got_free(&g);
}

static void test_server_seed_fixtures_missing_dir(void **state)
{
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__seed_load_dir("/nonexistent/fixtures", collect, &(got){0}, &err), KC_EIO);
    assert_non_null(strstr(err.message, "/nonexistent/fixtures"));
    kc_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_seed_pods_spread_over_namespaces),
        cmocka_unit_test(test_server_seed_pod_shape_matches_genpod),
        cmocka_unit_test(test_server_seed_default_hundred_namespaces_for_pods),
        cmocka_unit_test(test_server_seed_other_kinds),
        cmocka_unit_test(test_server_seed_spec_errors_name_the_part),
        cmocka_unit_test(test_server_seed_callback_stops_generation),
        cmocka_unit_test_setup_teardown(test_server_seed_fixtures_yaml_json_lists, mkdir_setup,
                                        rm_teardown),
        cmocka_unit_test_setup_teardown(test_server_seed_fixtures_bad_yaml_names_file_and_line,
                                        mkdir_setup, rm_teardown),
        cmocka_unit_test_setup_teardown(test_server_seed_fixtures_bad_json_and_alias, mkdir_setup,
                                        rm_teardown),
        cmocka_unit_test(test_server_seed_fixtures_missing_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
