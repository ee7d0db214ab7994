/*
 * test_server_api_seed.c — seeding the embedded server: a seed spec creates its objects; a refused
 * fixture names its file. (Split from the former test_server_api_misc.c, one concept per file.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

#include <unistd.h>

static void test_server_seed_spec(void **state)
{
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.seed_spec = "configmaps=25";
    kc_server *s = ts_start_opts(&o);
    assert_non_null(s);
    ts_resp r;
    assert_int_equal(ts_get(s, "/api/v1/configmaps", &r), 200);
    assert_int_equal(json_array_size(ts_j(r.json, "items")), 25);
    ts_resp_free(&r);
    kc_server_free(s);
}

/* A fixture the create path refuses stops kc_server_new, naming the file, the object and why
 * (issue 16 #15); one that already exists (the built-in "default") is skipped. */
static void test_server_seed_refused_fixture_names_file(void **state)
{
    char dir[] = "/tmp/kc_fx_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], ok[256];
    snprintf(ok, sizeof ok, "%s/10-ok.yaml", dir);
    snprintf(path, sizeof path, "%s/20-bad.yaml", dir);
    FILE *f = fopen(ok, "w");
    assert_non_null(f);
    fputs("apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n", f);
    fclose(f);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lost, namespace: nowhere}\n", f);
    fclose(f);
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.listen = "127.0.0.1:0";
    o.quiet = true;
    o.seed_dir = dir;
    kc_server *s = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_server_new(&o, &s, &err), KC_ENOTFOUND);
    assert_null(s);
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, "ConfigMap \"lost\""));
    assert_non_null(strstr(err.message, "namespaces \"nowhere\" not found"));
    kc_error_clear(&err);
    unlink(path);
    o.seed_dir = dir; /* only the existing namespace left: the start goes on */
    assert_int_equal(kc_server_new(&o, &s, &err), 0);
    kc_server_free(s);
    unlink(ok);
    rmdir(dir);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_seed_spec),
        cmocka_unit_test(test_server_seed_refused_fixture_names_file),
    };
    int rc = cmocka_run_group_tests(tests, ts_group_setup_t1, ts_group_teardown);
    curl_global_cleanup();
    return rc;
}
