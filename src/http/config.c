/*
 * config.c — kc_config: allocation, reference counting, accessors, kc_config_from_url, and the
 * kubectl loading order of kc_config_load (explicit path → $KUBECONFIG list → ~/.kube/config →
 * in-cluster). Parsing lives in kubeconfig.c and in_cluster.c.
 */
#include "http/internal.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

kc_config *kc__config_alloc(void)
{
    kc_config *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    atomic_init(&c->refs, 1);
    c->ns = kc__strdup("default");
    if (!c->ns) {
        free(c);
        return NULL;
    }
    return c;
}

kc_config *kc_config_ref(const kc_config *cfg)
{
    kc_config *c = (kc_config *)cfg;
    if (c)
        atomic_fetch_add(&c->refs, 1);
    return c;
}

void kc__exec_config_free(kc__exec_config *e)
{
    if (!e)
        return;
    free(e->api_version);
    free(e->command);
    for (size_t i = 0; i < e->n_args; i++)
        free(e->args[i]);
    free(e->args);
    for (size_t i = 0; i < e->n_env; i++)
        free(e->env[i]);
    free(e->env);
    free(e->install_hint);
    free(e);
}

static void kc__free_secret(char *s, size_t len)
{
    if (!s)
        return;
    explicit_bzero(s, len ? len : strlen(s));
    free(s);
}

void kc_config_unref(kc_config *c)
{
    if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    free(c->server);
    free(c->ns);
    free(c->context);
    free(c->source);
    free(c->ca_pem);
    free(c->tls_server_name);
    free(c->proxy_url);
    free(c->cert_pem);
    kc__free_secret(c->key_pem, c->key_len);
    kc__free_secret(c->token, 0);
    free(c->token_file);
    free(c->username);
    kc__free_secret(c->password, 0);
    kc__exec_config_free(c->exec);
    free(c);
}

const char *kc_config_server(const kc_config *cfg)
{
    return cfg ? cfg->server : NULL;
}

const char *kc_config_namespace(const kc_config *cfg)
{
    return cfg ? cfg->ns : NULL;
}

const char *kc_config_context(const kc_config *cfg)
{
    return cfg ? cfg->context : NULL;
}

bool kc__url_is_loopback(const char *url)
{
    CURLU *u = curl_url();
    char *host = NULL;
    bool r = false;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
        struct in_addr a4;
        r = strcasecmp(host, "localhost") == 0 || strcmp(host, "[::1]") == 0 ||
            (inet_pton(AF_INET, host, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127);
    }
    curl_free(host);
    curl_url_cleanup(u);
    return r;
}

/* Normalise and check a server URL: http(s)://host[:port][/path], no trailing '/'. */
static int kc__set_server(kc_config *c, const char *url, kc_error *err)
{
    if (!url || (!kc__starts_with(url, "https://") && !kc__starts_with(url, "http://")))
        return kc_error_set(err, KC_EINVAL, "server URL must start with http:// or https://: %s",
                            url ? url : "(null)");
    CURLU *u = curl_url();
    if (!u)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    CURLUcode uc = curl_url_set(u, CURLUPART_URL, url, 0);
    curl_url_cleanup(u);
    if (uc != CURLUE_OK)
        return kc_error_set(err, KC_EINVAL, "bad server URL %s: %s", url, curl_url_strerror(uc));
    size_t n = strlen(url);
    while (n > 0 && url[n - 1] == '/')
        n--;
    free(c->server);
    c->server = kc__strdup_n(url, n);
    return c->server ? 0 : kc_error_set(err, KC_ENOMEM, "out of memory");
}

int kc__config_set_server(kc_config *c, const char *url, kc_error *err)
{
    return kc__set_server(c, url, err);
}

int kc_config_from_url(const char *url, const char *ca_pem, const char *token, kc_config **ret_cfg,
                       kc_error *err)
{
    if (!url || !ret_cfg)
        return kc_error_set(err, KC_EINVAL, "kc_config_from_url: url and ret_cfg are required");
    kc_config *c = kc__config_alloc();
    if (!c)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    int rc = kc__set_server(c, url, err);
    if (rc)
        goto fail;
    c->source = kc__strdup("url");
    if (ca_pem) {
        c->ca_pem = kc__strdup(ca_pem);
        c->ca_len = strlen(ca_pem);
    }
    if (token)
        c->token = kc__strdup(token);
    if (!c->source || (ca_pem && !c->ca_pem) || (token && !c->token)) {
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
        goto fail;
    }
    *ret_cfg = c;
    return 0;
fail:
    kc_config_unref(c);
    return rc;
}

static bool kc__file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int load(const kc_config_opts *opts, kc_config **ret_cfg, kc_error *err)
{
    if (opts->in_cluster)
        return kc__config_in_cluster(opts->namespace_override, opts->service_account_dir, ret_cfg,
                                     err);
    if (opts->kubeconfig) {
        const char *p = opts->kubeconfig;
        return kc__config_from_kubeconfigs(&p, 1, true, opts, ret_cfg, err);
    }
    const char *env = getenv("KUBECONFIG");
    if (env && *env) {
        char *copy = kc__strdup(env);
        if (!copy)
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        const char *paths[KC__KUBECONFIG_MAX_FILES];
        size_t n = 0;
        char *save = NULL;
        for (char *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
            if (n == KC__KUBECONFIG_MAX_FILES) {
                free(copy);
                return kc_error_set(err, KC_ECONFIG, "KUBECONFIG lists more than %d files",
                                    KC__KUBECONFIG_MAX_FILES);
            }
            if (*t)
                paths[n++] = t;
        }
        int rc = kc__config_from_kubeconfigs(paths, n, false, opts, ret_cfg, err);
        free(copy);
        return rc;
    }
    const char *home = getenv("HOME");
    if (home && *home) {
        char *p = NULL;
        if (asprintf(&p, "%s/.kube/config", home) < 0)
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        if (kc__file_exists(p)) {
            const char *pp = p;
            int rc = kc__config_from_kubeconfigs(&pp, 1, true, opts, ret_cfg, err);
            free(p);
            return rc;
        }
        free(p);
    }
    int rc =
        kc__config_in_cluster(opts->namespace_override, opts->service_account_dir, ret_cfg, err);
    if (rc == KC_ECONFIG && !getenv("KUBERNETES_SERVICE_HOST"))
        return kc_error_set(err, KC_ECONFIG,
                            "no configuration found: pass a kubeconfig, set KUBECONFIG, create "
                            "~/.kube/config, or run in a cluster");
    return rc;
}

int(kc_config_load)(const kc_config_opts *opts, size_t opts_size, kc_config **ret_cfg,
                    kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_config_opts, err);
    if (!ret_cfg)
        return kc_error_set(err, KC_EINVAL, "kc_config_load: ret_cfg is required");
    if (opts->exec_timeout_ms < 0)
        return kc_error_set(err, KC_EINVAL, "kc_config_load: exec_timeout_ms %lld is negative",
                            (long long)opts->exec_timeout_ms);
    int rc = load(opts, ret_cfg, err);
    if (rc == 0) /* not yet shared: still ours to fill */
        (*ret_cfg)->exec_timeout_ms = opts->exec_timeout_ms;
    return rc;
}
