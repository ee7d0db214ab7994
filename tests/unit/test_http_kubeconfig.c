/*
 * test_http_kubeconfig.c — kubeconfig loading by kubectl's rules, against the fixtures in
 * tests/fixtures/kubeconfig: merging of KUBECONFIG lists, data vs file fields, relative paths,
 * overrides, in-cluster files, and clear errors for missing files and unsupported entries.
 */
#include "http/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define FX KC_SOURCE_DIR "/tests/fixtures/kubeconfig/"

static int setup(void **state)
{
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    return 0;
}

static kc_config *load_env(const char *kubeconfig_env, const char *context)
{
    setenv("KUBECONFIG", kubeconfig_env, 1);
    kc_config_opts o = {.context = context};
    kc_config *c = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_config_load(&o, &c, &err);
    if (rc)
        fail_msg("load %s: %s: %s", kubeconfig_env, kc_errno_name(rc), err.message);
    kc_error_clear(&err);
    return c;
}

static void test_http_kubeconfig_merge_first_file_wins(void **state)
{
    kc_config *c = load_env(FX "a.yaml:" FX "b.yaml", NULL);
    assert_string_equal(kc_config_context(c), "ctx-a"); /* current-context of a.yaml */
    assert_string_equal(kc_config_server(c), "https://a.example:6443"); /* a's c1, not b's */
    assert_string_equal(kc_config_namespace(c), "ns-a");
    assert_string_equal(c->token, "token-a");
    assert_string_equal(c->tls_server_name, "api.a.example");
    kc_config_unref(c);
}

static void test_http_kubeconfig_merge_entries_from_second_file(void **state)
{
    kc_config *c = load_env(FX "a.yaml:" FX "b.yaml", "ctx-b");
    assert_string_equal(kc_config_server(c), "https://b2.example:443");
    assert_string_equal(kc_config_namespace(c), "default");
    assert_non_null(c->ca_pem);
    assert_int_equal(c->ca_len, strlen("CA-FROM-DATA"));
    assert_memory_equal(c->ca_pem, "CA-FROM-DATA", c->ca_len);
    assert_memory_equal(c->cert_pem, "CERT-FROM-DATA", c->cert_len);
    assert_memory_equal(c->key_pem, "KEY-FROM-DATA", c->key_len);
    kc_config_unref(c);
}

static void test_http_kubeconfig_merge_order_matters(void **state)
{
    kc_config *c = load_env(FX "b.yaml:" FX "a.yaml", "ctx-a");
    assert_string_equal(kc_config_server(c), "https://b.example:6443"); /* b's c1 wins now */
    kc_config_unref(c);
    c = load_env(FX "b.yaml:" FX "a.yaml", NULL);
    assert_string_equal(kc_config_context(c), "ctx-b");
    kc_config_unref(c);
}

static void test_http_kubeconfig_current_context_from_first_setter(void **state)
{
    kc_config *c = load_env(FX "no-current.yaml:" FX "b.yaml", NULL);
    assert_string_equal(kc_config_context(c), "ctx-b");
    kc_config_unref(c);
}

static void test_http_kubeconfig_missing_list_entries_skipped(void **state)
{
    kc_config *c = load_env(FX "does-not-exist.yaml::" FX "a.yaml", NULL);
    assert_string_equal(kc_config_context(c), "ctx-a");
    kc_config_unref(c);
}

static void test_http_kubeconfig_relative_file_fields(void **state)
{
    kc_config *c = load_env(FX "a.yaml", "ctx-a");
    char *want = NULL;
    size_t len = 0;
    assert_int_equal(kc__read_file(FX "certs/ca.pem", 4096, &want, &len, NULL), 0);
    assert_int_equal(c->ca_len, len);
    assert_memory_equal(c->ca_pem, want, len);
    free(want);
    kc_config_unref(c);

    c = load_env(FX "a.yaml", "ctx-files");
    assert_non_null(strstr(c->cert_pem, "CLIENT-CERT-FROM-FILE"));
    assert_non_null(strstr(c->key_pem, "CLIENT-KEY-FROM-FILE"));
    assert_true(c->insecure);
    assert_string_equal(c->proxy_url, "http://proxy.example:3128");
    kc_config_unref(c);

    c = load_env(FX "a.yaml", "ctx-tokenfile");
    assert_non_null(c->token_file);
    assert_non_null(strstr(c->token_file, "fixtures/kubeconfig/certs/token.txt"));
    assert_true(c->token_file[0] == '/');
    kc_config_unref(c);
}

static void test_http_kubeconfig_basic_auth(void **state)
{
    kc_config *c = load_env(FX "a.yaml", "ctx-basic");
    assert_string_equal(c->username, "alice");
    assert_string_equal(c->password, "secret-pw");
    kc_config_unref(c);
}

static void test_http_kubeconfig_namespace_override(void **state)
{
    kc_config_opts o = {.kubeconfig = FX "a.yaml", .namespace_override = "other"};
    kc_config *c = NULL;
    assert_int_equal(kc_config_load(&o, &c, NULL), 0);
    assert_string_equal(kc_config_namespace(c), "other");
    kc_config_unref(c);
}

static void expect_error(const char *path, const char *context, int code, const char *needle1,
                         const char *needle2)
{
    kc_config_opts o = {.kubeconfig = path, .context = context};
    kc_config *c = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_config_load(&o, &c, &err);
    if (rc != code)
        fail_msg("%s: want %s, got %s (%s)", path, kc_errno_name(code), kc_errno_name(rc),
                 err.message ? err.message : "");
    assert_null(c);
    assert_non_null(err.message);
    if (needle1 && !strstr(err.message, needle1))
        fail_msg("message '%s' lacks '%s'", err.message, needle1);
    if (needle2 && !strstr(err.message, needle2))
        fail_msg("message '%s' lacks '%s'", err.message, needle2);
    kc_error_clear(&err);
}

static void test_http_kubeconfig_missing_explicit_file(void **state)
{
    expect_error(FX "nope.yaml", NULL, KC_ECONFIG, "nope.yaml", "No such file");
}

static void test_http_kubeconfig_missing_referenced_file(void **state)
{
    expect_error(FX "missing-ca.yaml", NULL, KC_ECONFIG, "missing-ca.yaml", "certs/nope.pem");
}

static void test_http_kubeconfig_auth_provider_unsupported(void **state)
{
    expect_error(FX "auth-provider.yaml", NULL, KC_EUNSUPPORTED, "auth-provider gcp",
                 "use an exec plugin");
}

static void test_http_kubeconfig_bad_yaml(void **state)
{
    expect_error(FX "bad-yaml.yaml", NULL, KC_ECONFIG, "bad-yaml.yaml", "line");
}

static void test_http_kubeconfig_unknown_context(void **state)
{
    expect_error(FX "a.yaml", "ghost-ctx", KC_ECONFIG, "a.yaml", "ghost-ctx");
}

static void test_http_kubeconfig_unknown_user(void **state)
{
    expect_error(FX "unknown-user.yaml", NULL, KC_ECONFIG, "unknown-user.yaml", "ghost");
}

static void test_http_kubeconfig_exec_fields(void **state)
{
    kc_config_opts o = {.kubeconfig = FX "exec.yaml"};
    kc_config *c = NULL;
    assert_int_equal(kc_config_load(&o, &c, NULL), 0);
    assert_non_null(c->exec);
    assert_string_equal(c->exec->api_version, "client.authentication.k8s.io/v1");
    assert_true(c->exec->command[0] == '/'); /* relative to the kubeconfig's directory */
    assert_non_null(strstr(c->exec->command, "kubeconfig/../exec/plugin.sh"));
    assert_int_equal(c->exec->n_args, 2);
    assert_string_equal(c->exec->args[1], "value");
    assert_int_equal(c->exec->n_env, 1);
    assert_string_equal(c->exec->env[0], "PLUGIN_MODE=ok");
    assert_true(c->exec->provide_cluster_info);
    assert_int_equal(c->exec->interactive, KC__INTERACTIVE_NEVER);
    kc_config_unref(c);
}

static void test_http_kubeconfig_in_cluster(void **state)
{
    setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    kc_config_opts o = {.in_cluster = true, .service_account_dir = FX "sa"};
    kc_config *c = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_config_load(&o, &c, &err), 0);
    assert_string_equal(kc_config_server(c), "https://10.0.0.1:443");
    assert_string_equal(kc_config_namespace(c), "kube-system");
    assert_non_null(strstr(c->token_file, "sa/token"));
    assert_true(c->token_file_periodic);
    assert_non_null(strstr(c->ca_pem, "CA-FROM-FILE"));
    kc_config_unref(c);
    setup(NULL);
}

static void test_http_kubeconfig_in_cluster_missing_env(void **state)
{
    kc_config_opts o = {.in_cluster = true};
    kc_config *c = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_config_load(&o, &c, &err), KC_ECONFIG);
    assert_non_null(strstr(err.message, "KUBERNETES_SERVICE_HOST"));
    kc_error_clear(&err);
}

static void test_http_kubeconfig_from_url(void **state)
{
    kc_config *c = NULL;
    assert_int_equal(kc_config_from_url("https://127.0.0.1:1234/", "PEM", "tok", &c, NULL), 0);
    assert_string_equal(kc_config_server(c), "https://127.0.0.1:1234");
    assert_string_equal(kc_config_namespace(c), "default");
    assert_null(kc_config_context(c));
    kc_config_unref(c);
    assert_int_equal(kc_config_from_url("ftp://x", NULL, NULL, &c, NULL), KC_EINVAL);
}

static void test_http_kubeconfig_loopback_detection(void **state)
{
    assert_true(kc__url_is_loopback("http://127.0.0.1:80"));
    assert_true(kc__url_is_loopback("http://localhost"));
    assert_true(kc__url_is_loopback("http://[::1]:8080"));
    assert_false(kc__url_is_loopback("http://10.1.2.3"));
    assert_false(kc__url_is_loopback("http://127.example.com"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_http_kubeconfig_merge_first_file_wins, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_merge_entries_from_second_file, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_merge_order_matters, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_current_context_from_first_setter, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_missing_list_entries_skipped, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_relative_file_fields, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_basic_auth, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_namespace_override, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_missing_explicit_file, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_missing_referenced_file, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_auth_provider_unsupported, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_bad_yaml, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_unknown_context, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_unknown_user, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_exec_fields, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_in_cluster, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_in_cluster_missing_env, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_from_url, setup),
        cmocka_unit_test_setup(test_http_kubeconfig_loopback_detection, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
