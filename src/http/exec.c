/*
 * exec.c — exec credential plugins (client.authentication.k8s.io v1 / v1beta1), as kubectl runs
 * them for GKE, EKS, AKS and friends.
 *
 * The plugin is spawned (posix_spawnp: PATH lookup unless the command holds a '/', already made
 * absolute against the kubeconfig's directory) with the parent environment plus the configured
 * env entries and KUBERNETES_EXEC_INFO (apiVersion, kind, spec.interactive and, with
 * provideClusterInfo, spec.cluster). stdin is the terminal only when interactiveMode allows it
 * and stdin is a terminal; otherwise /dev/null. stdout and stderr are collected through pipes with
 * poll() under a deadline (60 s, or kc_config_opts.exec_timeout_ms) and a size limit; a plugin that
 * overruns is killed. stdout is an ExecCredential parsed by the json layer (kc_obj_parse): token
 * or client certificate/key, and expirationTimestamp. On failure err carries the exit status and
 * the plugin's stderr (and installHint when the command is missing). Tokens are never logged.
 */
#include "http/internal.h"

#include "kcache/obj.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void kc__exec_result_clear(kc__exec_result *r)
{
    if (!r)
        return;
    if (r->token) {
        explicit_bzero(r->token, strlen(r->token));
        free(r->token);
    }
    free(r->cert_pem);
    if (r->key_pem) {
        explicit_bzero(r->key_pem, r->key_len);
        free(r->key_pem);
    }
    memset(r, 0, sizeof *r);
}

static int kc__exec_info(const kc_config *cfg, bool interactive, kc__buf *b)
{
    const kc__exec_config *x = cfg->exec;
    int rc = kc__buf_append_str(b, "KUBERNETES_EXEC_INFO={\"apiVersion\":");
    rc = rc ? rc : kc__json_append_string(b, x->api_version);
    rc = rc ? rc : kc__buf_append_str(b, ",\"kind\":\"ExecCredential\",\"spec\":{\"interactive\":");
    rc = rc ? rc : kc__buf_append_str(b, interactive ? "true" : "false");
    if (!rc && x->provide_cluster_info) {
        rc = kc__buf_append_str(b, ",\"cluster\":{\"server\":");
        rc = rc ? rc : kc__json_append_string(b, cfg->server);
        if (!rc && cfg->tls_server_name) {
            rc = kc__buf_append_str(b, ",\"tls-server-name\":");
            rc = rc ? rc : kc__json_append_string(b, cfg->tls_server_name);
        }
        if (!rc && cfg->insecure)
            rc = kc__buf_append_str(b, ",\"insecure-skip-tls-verify\":true");
        if (!rc && cfg->proxy_url) {
            rc = kc__buf_append_str(b, ",\"proxy-url\":");
            rc = rc ? rc : kc__json_append_string(b, cfg->proxy_url);
        }
        if (!rc && cfg->ca_pem && cfg->ca_len < INT32_MAX / 2) {
            char *enc = malloc(4 * ((cfg->ca_len + 2) / 3) + 1);
            if (!enc)
                return KC_ENOMEM;
            EVP_EncodeBlock((unsigned char *)enc, (const unsigned char *)cfg->ca_pem,
                            (int)cfg->ca_len);
            rc = kc__buf_append_str(b, ",\"certificate-authority-data\":");
            rc = rc ? rc : kc__json_append_string(b, enc);
            free(enc);
        }
        rc = rc ? rc : kc__buf_append_char(b, '}');
    }
    return rc ? rc : kc__buf_append_str(b, "}}");
}

static bool kc__env_overridden(const char *entry, char *const *extra, size_t n)
{
    const char *eq = strchr(entry, '=');
    size_t len = eq ? (size_t)(eq - entry) : strlen(entry);
    for (size_t i = 0; i < n; i++)
        if (strncmp(extra[i], entry, len) == 0 && extra[i][len] == '=')
            return true;
    return false;
}

/* Collect stdout/stderr until both close or the deadline passes. */
static int kc__exec_collect(int out_fd, int err_fd, kc__buf *out, kc__buf *errb, uint64_t deadline)
{
    struct pollfd pf[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    kc__buf *bufs[2] = {out, errb};
    int open_n = 2;
    while (open_n > 0) {
        uint64_t left = kc__deadline_left_ns(deadline);
        if (left == 0)
            return KC_ETIMEOUT;
        int r = poll(pf, 2, (int)(left / KC__NS_PER_MS) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return KC_EIO;
        for (int i = 0; i < 2; i++) {
            if (pf[i].fd < 0 || !pf[i].revents)
                continue;
            char chunk[8192];
            ssize_t n = read(pf[i].fd, chunk, sizeof chunk);
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (n <= 0) {
                pf[i].fd = -1;
                open_n--;
                continue;
            }
            if (kc__buf_append(bufs[i], chunk, (size_t)n))
                return KC_ETOOLARGE;
        }
    }
    return 0;
}

static int kc__exec_parse(const kc_config *cfg, const char *out, size_t len, kc__exec_result *res,
                          kc_error *err)
{
    kc_obj *o = NULL;
    kc_error perr = KC_ERROR_INIT;
    if (kc_obj_parse(out, len, NULL, &o, &perr)) {
        int rc = kc_error_set(err, KC_EAUTH, "exec plugin %s: output is not an ExecCredential: %s",
                              cfg->exec->command, perr.message ? perr.message : "bad JSON");
        kc_error_clear(&perr);
        return rc;
    }
    int rc = 0;
    if (strcmp(kc_obj_api_version(o), cfg->exec->api_version) != 0 ||
        strcmp(kc_obj_kind(o), "ExecCredential") != 0) {
        rc = kc_error_set(err, KC_EAUTH, "exec plugin %s returned %s %s, want ExecCredential %s",
                          cfg->exec->command, kc_obj_api_version(o), kc_obj_kind(o),
                          cfg->exec->api_version);
        goto out;
    }
    char *exp = NULL;
    kc_obj_get_string(o, "/status/token", &res->token, NULL, NULL);
    kc_obj_get_string(o, "/status/clientCertificateData", &res->cert_pem, &res->cert_len, NULL);
    kc_obj_get_string(o, "/status/clientKeyData", &res->key_pem, &res->key_len, NULL);
    if (!res->token && !(res->cert_pem && res->key_pem)) {
        rc = kc_error_set(err, KC_EAUTH,
                          "exec plugin %s returned neither status.token nor "
                          "status.clientCertificateData/clientKeyData",
                          cfg->exec->command);
        goto out;
    }
    if (kc_obj_get_string(o, "/status/expirationTimestamp", &exp, NULL, NULL) == 0) {
        bool ok = kc__parse_rfc3339(exp, &res->expiry_ms);
        if (!ok)
            rc = kc_error_set(err, KC_EAUTH, "exec plugin %s: bad expirationTimestamp '%s'",
                              cfg->exec->command, exp);
        free(exp);
    }
out:
    kc_obj_unref(o);
    if (rc)
        kc__exec_result_clear(res);
    return rc;
}

static void kc__trim(kc__buf *b)
{
    while (b->len > 0 && (b->data[b->len - 1] == '\n' || b->data[b->len - 1] == '\r' ||
                          b->data[b->len - 1] == ' '))
        kc__buf_truncate(b, b->len - 1);
}

int kc__exec_run(const kc_config *cfg, kc__exec_result *ret, kc_error *err)
{
    const kc__exec_config *x = cfg->exec;
    bool tty = isatty(STDIN_FILENO) == 1;
    if (x->interactive == KC__INTERACTIVE_ALWAYS && !tty)
        return kc_error_set(err, KC_EAUTH,
                            "exec plugin %s needs an interactive terminal "
                            "(interactiveMode: Always) but stdin is not one",
                            x->command);
    bool interactive = tty && x->interactive != KC__INTERACTIVE_NEVER;
    kc__buf info = KC__BUF_INIT(0), out = KC__BUF_INIT(KC__EXEC_OUTPUT_MAX_BYTES),
            errb = KC__BUF_INIT(KC__EXEC_OUTPUT_MAX_BYTES);
    char **argv = NULL, **envp = NULL;
    int po[2] = {-1, -1}, pe[2] = {-1, -1};
    int rc = kc__exec_info(cfg, interactive, &info);
    if (rc)
        goto out;
    size_t n_environ = 0;
    while (environ && environ[n_environ])
        n_environ++;
    argv = calloc(x->n_args + 2, sizeof *argv);
    envp = calloc(n_environ + x->n_env + 2, sizeof *envp);
    if (!argv || !envp) {
        rc = KC_ENOMEM;
        goto out;
    }
    argv[0] = x->command;
    for (size_t i = 0; i < x->n_args; i++)
        argv[i + 1] = x->args[i];
    size_t k = 0;
    char *info_entry[1] = {info.data};
    for (size_t i = 0; i < n_environ; i++)
        if (!kc__env_overridden(environ[i], x->env, x->n_env) &&
            !kc__env_overridden(environ[i], info_entry, 1))
            envp[k++] = environ[i];
    for (size_t i = 0; i < x->n_env; i++)
        envp[k++] = x->env[i];
    envp[k++] = info.data;
    if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
        rc = kc_error_set(err, KC_EIO, "pipe: %s", strerror(errno));
        goto out;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (!interactive)
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, po[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, pe[1], STDERR_FILENO);
    pid_t pid;
    int se = posix_spawnp(&pid, x->command, &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    close(po[1]);
    close(pe[1]);
    po[1] = pe[1] = -1;
    if (se != 0) {
        rc = kc_error_set(err, KC_EAUTH, "exec plugin %s cannot be started: %s%s%s", x->command,
                          strerror(se), x->install_hint ? ". " : "",
                          x->install_hint ? x->install_hint : "");
        goto out;
    }
    long timeout_ms = cfg->exec_timeout_ms > 0 ? (long)cfg->exec_timeout_ms : KC__EXEC_TIMEOUT_MS;
    int crc = kc__exec_collect(po[0], pe[0], &out, &errb, kc__deadline_after_ms(timeout_ms));
    if (crc)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    kc__trim(&errb);
    if (crc == KC_ETIMEOUT) {
        rc = kc_error_set(err, KC_EAUTH, "exec plugin %s timed out after %ld ms; stderr: %s",
                          x->command, timeout_ms, errb.data ? errb.data : "");
    } else if (crc) {
        rc = kc_error_set(err, KC_EAUTH, "exec plugin %s: output over %zu bytes or unreadable",
                          x->command, (size_t)KC__EXEC_OUTPUT_MAX_BYTES);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        rc = kc_error_set(err, KC_EAUTH, "exec plugin %s failed (%s %d): %s", x->command,
                          WIFEXITED(status) ? "exit status" : "signal",
                          WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                          errb.data && *errb.data ? errb.data : "(no stderr)");
    } else {
        rc = kc__exec_parse(cfg, out.data ? out.data : "", out.len, ret, err);
    }
out:
    if (rc == KC_ENOMEM && err && err->code != KC_ENOMEM)
        kc_error_set(err, KC_ENOMEM, "out of memory");
    for (int i = 0; i < 2; i++) {
        if (po[i] >= 0)
            close(po[i]);
        if (pe[i] >= 0)
            close(pe[i]);
    }
    free(argv);
    free(envp);
    kc__buf_free(&info);
    if (out.data)
        explicit_bzero(out.data, out.len);
    kc__buf_free(&out);
    kc__buf_free(&errb);
    return rc;
}
