/*
 * test_client_auth.c — authentication and transport errors end to end against the embedded TLS
 * server: kubeconfig written by the server, missing token → 401, exec plugin (401 → refresh once,
 * expiry → refresh, failure → error with its stderr), token file re-read after a 401, wrong CA →
 * KC_ETLS naming the verification failure, DNS and timeout errors, and credentials refused over
 * plain http to a remote host.
 */
#include "kcache/client.h"
#include "kcache/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define TOKEN  "auth-test-token"
#define PLUGIN KC_SOURCE_DIR "/tests/fixtures/exec/plugin.sh"

static kc_server *srv;
static char dir[256];
static char counter[300];
static const kc_gvr NS = {"", "v1", "namespaces"};

static int group_setup(void **state)
{
    kc_server_opts so = {.listen = "127.0.0.1:0", .tls = true, .token = TOKEN, .quiet = true};
    kc_error err = KC_ERROR_INIT;
    if (kc_server_new(&so, &srv, &err) || kc_server_start(srv, &err)) {
        fprintf(stderr, "server: %s\n", err.message);
        return -1;
    }
    snprintf(dir, sizeof dir, "/tmp/kc_client_auth.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(counter, sizeof counter, "%s/counter", dir);
    return 0;
}

static int group_teardown(void **state)
{
    kc_server_free(srv);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int reset_env(void **state)
{
    unlink(counter);
    setenv("KC_EXEC_COUNTER", counter, 1);
    unsetenv("KC_EXEC_MODE");
    unsetenv("KC_EXEC_TOKENS");
    return 0;
}

static int runs(void)
{
    FILE *f = fopen(counter, "r");
    int n = 0;
    if (f) {
        if (fscanf(f, "%d", &n) != 1)
            n = -1;
        fclose(f);
    }
    return n;
}

/* Write a kubeconfig whose user section is user_yaml (indented under "user:") and whose cluster
 * gets the extra lines cluster_extra. */
static void write_kubeconfig_x(const char *path, const char *user_yaml, const char *cluster_extra)
{
    const char *ca = kc_server_ca_pem(srv);
    size_t n = strlen(ca);
    char *b64 = malloc(4 * ((n + 2) / 3) + 1);
    EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)ca, (int)n);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters:\n- name: t\n  cluster:\n"
            "    server: %s\n    certificate-authority-data: %s\n%susers:\n- name: t\n  user:\n%s"
            "contexts:\n- name: t\n  context:\n    cluster: t\n    user: t\n",
            kc_server_url(srv), b64, cluster_extra, user_yaml);
    fclose(f);
    free(b64);
}

static void write_kubeconfig(const char *path, const char *user_yaml)
{
    write_kubeconfig_x(path, user_yaml, "");
}

static kc_client *client_from_kubeconfig(const char *path)
{
    kc_config_opts o = {.kubeconfig = path};
    kc_config *cfg = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_config_load(&o, &cfg, &err);
    if (rc)
        fail_msg("load %s: %s", path, err.message);
    kc_client *c = NULL;
    assert_int_equal(kc_client_new(cfg, NULL, &c, NULL), 0);
    kc_config_unref(cfg);
    return c;
}

static int get_default_ns(kc_client *c, kc_error *err)
{
    kc_obj *o = NULL;
    int rc = kc_client_get(c, &NS, NULL, "default", &o, err);
    kc_obj_unref(o);
    return rc;
}

static void test_client_auth_server_written_kubeconfig(void **state)
{
    char path[300];
    snprintf(path, sizeof path, "%s/server.kubeconfig", dir);
    assert_int_equal(kc_server_write_kubeconfig(srv, path, NULL), 0);
    kc_client *c = client_from_kubeconfig(path);
    assert_int_equal(get_default_ns(c, NULL), 0);
    kc_client_free(c);
}

static void test_client_auth_missing_token_is_unauthorized(void **state)
{
    kc_config *cfg = NULL;
    assert_int_equal(
        kc_config_from_url(kc_server_url(srv), kc_server_ca_pem(srv), NULL, &cfg, NULL), 0);
    kc_client *c = NULL;
    assert_int_equal(kc_client_new(cfg, NULL, &c, NULL), 0);
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(get_default_ns(c, &err), KC_EUNAUTHORIZED);
    assert_int_equal(err.http_status, 401);
    kc_error_clear(&err);
    kc_client_free(c);
    kc_config_unref(cfg);
}

static const char *exec_user(void)
{
    static char u[512];
    snprintf(u, sizeof u,
             "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: %s\n"
             "      interactiveMode: Never\n",
             PLUGIN);
    return u;
}

static void test_client_auth_exec_401_refreshes_once(void **state)
{
    setenv("KC_EXEC_TOKENS", "stale-token," TOKEN, 1);
    char path[300];
    snprintf(path, sizeof path, "%s/exec.kubeconfig", dir);
    write_kubeconfig(path, exec_user());
    kc_client *c = client_from_kubeconfig(path);
    kc_error err = KC_ERROR_INIT;
    int rc = get_default_ns(c, &err);
    if (rc)
        fail_msg("GET: %s %s", kc_errno_name(rc), err.message);
    assert_int_equal(runs(), 2); /* stale token → 401 → plugin again → good token */
    assert_int_equal(get_default_ns(c, NULL), 0);
    assert_int_equal(runs(), 2); /* cached until expiry */
    kc_client_free(c);
}

static void test_client_auth_exec_401_twice_surfaces(void **state)
{
    setenv("KC_EXEC_TOKENS", "bad-1,bad-2,bad-3", 1);
    char path[300];
    snprintf(path, sizeof path, "%s/exec-bad.kubeconfig", dir);
    write_kubeconfig(path, exec_user());
    kc_client *c = client_from_kubeconfig(path);
    assert_int_equal(get_default_ns(c, NULL), KC_EUNAUTHORIZED);
    assert_int_equal(runs(), 2); /* refreshed once, not in a loop */
    kc_client_free(c);
}

static void test_client_auth_exec_expiry_refreshes(void **state)
{
    setenv("KC_EXEC_TOKENS", TOKEN, 1);
    setenv("KC_EXEC_MODE", "expired", 1);
    char path[300];
    snprintf(path, sizeof path, "%s/exec-exp.kubeconfig", dir);
    write_kubeconfig(path, exec_user());
    kc_client *c = client_from_kubeconfig(path);
    assert_int_equal(get_default_ns(c, NULL), 0);
    assert_int_equal(get_default_ns(c, NULL), 0);
    assert_int_equal(runs(), 2);
    kc_client_free(c);
}

static void test_client_auth_exec_failure_has_stderr(void **state)
{
    setenv("KC_EXEC_MODE", "fail", 1);
    char path[300];
    snprintf(path, sizeof path, "%s/exec-fail.kubeconfig", dir);
    write_kubeconfig(path, exec_user());
    kc_client *c = client_from_kubeconfig(path);
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(get_default_ns(c, &err), KC_EAUTH);
    assert_non_null(strstr(err.message, "boom: plugin failed on purpose"));
    kc_error_clear(&err);
    kc_client_free(c);
}

static void test_client_auth_token_file_reread_after_401(void **state)
{
    char tok[300], path[300];
    snprintf(tok, sizeof tok, "%s/token", dir);
    snprintf(path, sizeof path, "%s/tokenfile.kubeconfig", dir);
    FILE *f = fopen(tok, "w");
    fputs("old-rotated-away\n", f);
    fclose(f);
    write_kubeconfig(path, "    tokenFile: token\n"); /* relative to the kubeconfig */
    kc_client *c = client_from_kubeconfig(path);
    assert_int_equal(get_default_ns(c, NULL), KC_EUNAUTHORIZED);
    f = fopen(tok, "w");
    fputs(TOKEN "\n", f);
    fclose(f);
    kc_error err = KC_ERROR_INIT;
    int rc = get_default_ns(c, &err);
    if (rc)
        fail_msg("after rotation: %s %s", kc_errno_name(rc), err.message);
    kc_client_free(c);
}

static void test_client_auth_wrong_ca_is_tls_error(void **state)
{
    kc_server_opts so = {.listen = "127.0.0.1:0", .tls = true, .quiet = true};
    kc_server *other = NULL;
    assert_int_equal(kc_server_new(&so, &other, NULL), 0);
    assert_int_equal(kc_server_start(other, NULL), 0);
    kc_config *cfg = NULL;
    assert_int_equal(
        kc_config_from_url(kc_server_url(srv), kc_server_ca_pem(other), TOKEN, &cfg, NULL), 0);
    kc_client *c = NULL;
    assert_int_equal(kc_client_new(cfg, NULL, &c, NULL), 0);
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(get_default_ns(c, &err), KC_ETLS);
    if (!strstr(err.message, "certificate"))
        fail_msg("TLS error does not name the cause: %s", err.message);
    assert_non_null(strstr(err.message, "verify"));
    kc_error_clear(&err);
    kc_client_free(c);
    kc_config_unref(cfg);
    kc_server_free(other);
}

static void test_client_auth_dns_error(void **state)
{
    kc_config *cfg = NULL;
    assert_int_equal(
        kc_config_from_url("https://no-such-host.invalid:6443", NULL, NULL, &cfg, NULL), 0);
    kc_client *c = NULL;
    assert_int_equal(kc_client_new(cfg, NULL, &c, NULL), 0);
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(get_default_ns(c, &err), KC_EDNS);
    assert_non_null(strstr(err.message, "no-such-host.invalid"));
    kc_error_clear(&err);
    kc_client_free(c);
    kc_config_unref(cfg);
}

static void test_client_auth_timeout(void **state)
{
    /* A listener that never answers: the connection completes in the backlog, nothing replies. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 8), 0);
    socklen_t al = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &al);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", ntohs(a.sin_port));
    kc_config *cfg = NULL;
    assert_int_equal(kc_config_from_url(url, NULL, NULL, &cfg, NULL), 0);
    kc_client_opts o = {.request_timeout_ms = 300};
    kc_client *c = NULL;
    assert_int_equal(kc_client_new(cfg, &o, &c, NULL), 0);
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(get_default_ns(c, &err), KC_ETIMEOUT);
    kc_error_clear(&err);
    kc_client_free(c);
    kc_config_unref(cfg);
    close(fd);
}

static void test_client_auth_refuses_credentials_over_http(void **state)
{
    kc_config *cfg = NULL;
    assert_int_equal(kc_config_from_url("http://10.255.255.1:8080", NULL, "secret", &cfg, NULL), 0);
    kc_client *c = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_client_new(cfg, NULL, &c, &err), KC_ECONFIG);
    assert_null(c);
    assert_null(strstr(err.message, "secret")); /* never echo the credential */
    kc_error_clear(&err);
    kc_client_opts o = {.allow_insecure_credentials = true};
    assert_int_equal(kc_client_new(cfg, &o, &c, NULL), 0);
    kc_client_free(c);
    kc_config_unref(cfg);
    /* loopback over http is fine */
    assert_int_equal(kc_config_from_url("http://127.0.0.1:8080", NULL, "secret", &cfg, NULL), 0);
    assert_int_equal(kc_client_new(cfg, NULL, &c, NULL), 0);
    kc_client_free(c);
    kc_config_unref(cfg);
}

static void test_client_auth_tls_server_name(void **state)
{
    char path[300];
    snprintf(path, sizeof path, "%s/sni.kubeconfig", dir);
    /* the serving certificate names localhost: verified through tls-server-name */
    write_kubeconfig_x(path, "    token: " TOKEN "\n", "    tls-server-name: localhost\n");
    kc_client *c = client_from_kubeconfig(path);
    kc_error err = KC_ERROR_INIT;
    int rc = get_default_ns(c, &err);
    if (rc)
        fail_msg("tls-server-name localhost: %s %s", kc_errno_name(rc), err.message);
    kc_client_free(c);
    write_kubeconfig_x(path, "    token: " TOKEN "\n", "    tls-server-name: wrong.example\n");
    c = client_from_kubeconfig(path);
    assert_int_equal(get_default_ns(c, &err), KC_ETLS);
    kc_error_clear(&err);
    kc_client_free(c);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_client_auth_in_cluster(void **state)
{
    char sa[300], p[340], port[16];
    snprintf(sa, sizeof sa, "%s/sa", dir);
    assert_int_equal(mkdir(sa, 0700), 0);
    snprintf(p, sizeof p, "%s/ca.crt", sa);
    write_file(p, kc_server_ca_pem(srv));
    snprintf(p, sizeof p, "%s/namespace", sa);
    write_file(p, "kube-system\n");
    snprintf(p, sizeof p, "%s/token", sa);
    write_file(p, "expired-projected-token\n");
    const char *url = kc_server_url(srv); /* https://127.0.0.1:PORT */
    snprintf(port, sizeof port, "%s", strrchr(url, ':') + 1);
    setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", port, 1);
    kc_config_opts o = {.in_cluster = true, .service_account_dir = sa};
    kc_config *cfg = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_config_load(&o, &cfg, &err);
    if (rc)
        fail_msg("in-cluster: %s", err.message);
    assert_string_equal(kc_config_namespace(cfg), "kube-system");
    kc_client *c = NULL;
    assert_int_equal(kc_client_new(cfg, NULL, &c, NULL), 0);
    kc_config_unref(cfg);
    assert_int_equal(get_default_ns(c, NULL), KC_EUNAUTHORIZED);
    write_file(p, TOKEN "\n"); /* the kubelet rotates the projected token */
    rc = get_default_ns(c, &err);
    if (rc)
        fail_msg("after rotation: %s %s", kc_errno_name(rc), err.message);
    kc_client_free(c);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_client_auth_server_written_kubeconfig, reset_env),
        cmocka_unit_test_setup(test_client_auth_missing_token_is_unauthorized, reset_env),
        cmocka_unit_test_setup(test_client_auth_exec_401_refreshes_once, reset_env),
        cmocka_unit_test_setup(test_client_auth_exec_401_twice_surfaces, reset_env),
        cmocka_unit_test_setup(test_client_auth_exec_expiry_refreshes, reset_env),
        cmocka_unit_test_setup(test_client_auth_exec_failure_has_stderr, reset_env),
        cmocka_unit_test_setup(test_client_auth_token_file_reread_after_401, reset_env),
        cmocka_unit_test_setup(test_client_auth_wrong_ca_is_tls_error, reset_env),
        cmocka_unit_test_setup(test_client_auth_tls_server_name, reset_env),
        cmocka_unit_test_setup(test_client_auth_in_cluster, reset_env),
        cmocka_unit_test_setup(test_client_auth_dns_error, reset_env),
        cmocka_unit_test_setup(test_client_auth_timeout, reset_env),
        cmocka_unit_test_setup(test_client_auth_refuses_credentials_over_http, reset_env),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
