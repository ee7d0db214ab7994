/*
 * test_http_auth.c — credential state without a server: exec plugin (cache until expiry, early
 * refresh, refresh after a 401, failure with stderr, timeout, KUBERNETES_EXEC_INFO, bad output)
 * and token files re-read when they change. Uses tests/fixtures/exec/plugin.sh.
 */
#include "http/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define FX KC_SOURCE_DIR "/tests/fixtures/kubeconfig/"

static char counter_path[256];

static int setup(void **state)
{
    snprintf(counter_path, sizeof counter_path, "/tmp/kc_test_exec_counter.%d", (int)getpid());
    unlink(counter_path);
    setenv("KC_EXEC_COUNTER", counter_path, 1);
    unsetenv("KC_EXEC_MODE");
    unsetenv("KC_EXEC_TOKENS");
    unsetenv("KC_EXEC_API");
    unsetenv("KC_EXEC_INFO_OUT");
    return 0;
}

static int teardown(void **state)
{
    unlink(counter_path);
    return 0;
}

static int runs(void)
{
    FILE *f = fopen(counter_path, "r");
    int n = 0;
    if (f) {
        if (fscanf(f, "%d", &n) != 1)
            n = -1;
        fclose(f);
    }
    return n;
}

static kc__auth *exec_auth_opts(kc_config **ret_cfg, int64_t timeout_ms)
{
    kc_config_opts o = {.kubeconfig = FX "exec.yaml", .exec_timeout_ms = timeout_ms};
    kc_config *c = NULL;
    assert_int_equal(kc_config_load(&o, &c, NULL), 0);
    kc__auth *a = kc__auth_new(c);
    assert_non_null(a);
    *ret_cfg = c;
    return a;
}

static kc__auth *exec_auth(kc_config **ret_cfg)
{
    return exec_auth_opts(ret_cfg, 0);
}

static void test_http_auth_exec_token_cached_until_expiry(void **state)
{
    kc_config *c;
    kc__auth *a = exec_auth(&c);
    kc__cred cr = {0};
    assert_int_equal(kc__auth_get(a, &cr, NULL), 0);
    assert_string_equal(cr.bearer, "exec-token-1");
    kc__cred_clear(&cr);
    assert_int_equal(kc__auth_get(a, &cr, NULL), 0);
    assert_string_equal(cr.bearer, "exec-token-1");
    assert_int_equal(runs(), 1);
    kc__cred_clear(&cr);
    kc__auth_free(a);
    kc_config_unref(c);
}

static void test_http_auth_exec_expired_credential_refreshed(void **state)
{
    setenv("KC_EXEC_MODE", "expired", 1);
    kc_config *c;
    kc__auth *a = exec_auth(&c);
    kc__cred cr = {0};
    assert_int_equal(kc__auth_get(a, &cr, NULL), 0);
    assert_string_equal(cr.bearer, "exec-token-1");
    kc__cred_clear(&cr);
    assert_int_equal(kc__auth_get(a, &cr, NULL), 0);
    assert_string_equal(cr.bearer, "exec-token-2");
    assert_int_equal(runs(), 2);
    kc__cred_clear(&cr);
    kc__auth_free(a);
    kc_config_unref(c);
}

static void test_http_auth_exec_refresh_after_401(void **state)
{
    kc_config *c;
    kc__auth *a = exec_auth(&c);
    kc__cred cr = {0};
    assert_int_equal(kc__auth_get(a, &cr, NULL), 0);
    uint64_t gen = cr.generation;
    kc__cred_clear(&cr);
    assert_true(kc__auth_invalidate(a, gen));
    assert_true(kc__auth_invalidate(a, gen)); /* a second 401 of the same generation: no-op */
    assert_int_equal(kc__auth_get(a, &cr, NULL), 0);
    assert_string_equal(cr.bearer, "exec-token-2");
    assert_int_equal(runs(), 2);
    kc__cred_clear(&cr);
    kc__auth_free(a);
    kc_config_unref(c);
}

static void test_http_auth_exec_failure_carries_stderr(void **state)
{
    setenv("KC_EXEC_MODE", "fail", 1);
    kc_config *c;
    kc__auth *a = exec_auth(&c);
    kc__cred cr = {0};
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__auth_get(a, &cr, &err), KC_EAUTH);
    assert_non_null(strstr(err.message, "boom: plugin failed on purpose"));
    assert_non_null(strstr(err.message, "exit status 3"));
    kc_error_clear(&err);
    kc__auth_free(a);
    kc_config_unref(c);
}

static void test_http_auth_exec_timeout(void **state)
{
    setenv("KC_EXEC_MODE", "sleep", 1);
    kc_config *c;
    kc__auth *a = exec_auth_opts(&c, 300);
    kc__cred cr = {0};
    kc_error err = KC_ERROR_INIT;
    uint64_t t0 = kc__now_ms();
    assert_int_equal(kc__auth_get(a, &cr, &err), KC_EAUTH);
    assert_non_null(strstr(err.message, "timed out"));
    /* killed at its 300 ms timeout, not waited out (the plugin sleeps 30 s); the 5 s bound leaves
     * load slack of seconds while staying far below the 30 s a missing timeout would take */
    assert_true(kc__now_ms() - t0 < 5000);
    kc_error_clear(&err);
    kc__auth_free(a);
    kc_config_unref(c);
}

static void test_http_auth_exec_bad_output(void **state)
{
    setenv("KC_EXEC_MODE", "badjson", 1);
    kc_config *c;
    kc__auth *a = exec_auth(&c);
    kc__cred cr = {0};
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__auth_get(a, &cr, &err), KC_EAUTH);
    assert_non_null(strstr(err.message, "not an ExecCredential"));
    kc_error_clear(&err);
    kc__auth_free(a);
    kc_config_unref(c);
}

static void test_http_auth_exec_wrong_api_version(void **state)
{
    setenv("KC_EXEC_API", "client.authentication.k8s.io/v1beta1", 1);
    kc_config *c;
    kc__auth *a = exec_auth(&c);
    kc__cred cr = {0};
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__auth_get(a, &cr, &err), KC_EAUTH);
    assert_non_null(strstr(err.message, "v1beta1"));
    kc_error_clear(&err);
    kc__auth_free(a);
    kc_config_unref(c);
}

static void test_http_auth_exec_info_env(void **state)
{
    char out[256];
    snprintf(out, sizeof out, "/tmp/kc_test_exec_info.%d", (int)getpid());
    setenv("KC_EXEC_INFO_OUT", out, 1);
    kc_config *c;
    kc__auth *a = exec_auth(&c);
    kc__cred cr = {0};
    assert_int_equal(kc__auth_get(a, &cr, NULL), 0);
    kc__cred_clear(&cr);
    char *info = NULL;
    size_t len = 0;
    assert_int_equal(kc__read_file(out, 65536, &info, &len, NULL), 0);
    assert_non_null(strstr(info, "\"apiVersion\":\"client.authentication.k8s.io/v1\""));
    assert_non_null(strstr(info, "\"interactive\":false"));
    assert_non_null(strstr(info, "\"cluster\":{\"server\":\"https://x.example\""));
    free(info);
    unlink(out);
    kc__auth_free(a);
    kc_config_unref(c);
}

static void test_http_auth_token_file_reread_on_change(void **state)
{
    char path[256];
    snprintf(path, sizeof path, "/tmp/kc_test_token.%d", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("first-token\n", f);
    fclose(f);
    kc_config *c = kc__config_alloc();
    assert_non_null(c);
    c->server = kc__strdup("https://127.0.0.1:1");
    c->token_file = kc__strdup(path);
    kc__auth *a = kc__auth_new(c);
    kc__cred cr = {0};
    assert_int_equal(kc__auth_get(a, &cr, NULL), 0);
    assert_string_equal(cr.bearer, "first-token");
    uint64_t gen = cr.generation;
    kc__cred_clear(&cr);
    f = fopen(path, "w");
    fputs("second-token-rotated\n", f);
    fclose(f);
    assert_true(kc__auth_invalidate(a, gen)); /* a 401 forces the re-read */
    assert_int_equal(kc__auth_get(a, &cr, NULL), 0);
    assert_string_equal(cr.bearer, "second-token-rotated");
    assert_true(cr.generation != gen);
    kc__cred_clear(&cr);
    unlink(path);
    kc__auth_free(a);
    kc_config_unref(c);
}

/* An unreadable token file: the error names the file and the system's reason (issue 16 #15). */
static void test_http_auth_token_file_error_has_reason(void **state)
{
    char path[256];
    snprintf(path, sizeof path, "/tmp/kc_test_no_token.%d", (int)getpid());
    unlink(path);
    kc_config *c = kc__config_alloc();
    assert_non_null(c);
    c->server = kc__strdup("https://127.0.0.1:1");
    c->token_file = kc__strdup(path);
    kc__auth *a = kc__auth_new(c);
    kc__cred cr = {0};
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__auth_get(a, &cr, &err), KC_EAUTH);
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, "No such file or directory"));
    kc_error_clear(&err);
    /* a directory passes stat() but cannot be read */
    kc__auth_free(a);
    free(c->token_file);
    c->token_file = kc__strdup("/tmp");
    a = kc__auth_new(c);
    assert_int_equal(kc__auth_get(a, &cr, &err), KC_EAUTH);
    assert_non_null(strstr(err.message, "Is a directory"));
    kc_error_clear(&err);
    kc__auth_free(a);
    kc_config_unref(c);
}

static void test_http_auth_static_token_not_refreshable(void **state)
{
    kc_config *c = NULL;
    assert_int_equal(kc_config_from_url("https://127.0.0.1:1", NULL, "static", &c, NULL), 0);
    kc__auth *a = kc__auth_new(c);
    kc__cred cr = {0};
    assert_int_equal(kc__auth_get(a, &cr, NULL), 0);
    assert_string_equal(cr.bearer, "static");
    assert_false(kc__auth_invalidate(a, cr.generation));
    kc__cred_clear(&cr);
    kc__auth_free(a);
    kc_config_unref(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_http_auth_exec_token_cached_until_expiry, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_http_auth_exec_expired_credential_refreshed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_http_auth_exec_refresh_after_401, setup, teardown),
        cmocka_unit_test_setup_teardown(test_http_auth_exec_failure_carries_stderr, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_http_auth_exec_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_http_auth_exec_bad_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_http_auth_exec_wrong_api_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_http_auth_exec_info_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_http_auth_token_file_reread_on_change, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_http_auth_token_file_error_has_reason, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_http_auth_static_token_not_refreshable, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
