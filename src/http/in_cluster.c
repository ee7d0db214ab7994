/*
 * in_cluster.c — configuration for a pod: KUBERNETES_SERVICE_HOST/_PORT and the service-account
 * directory (token, ca.crt, namespace), as client-go's rest.InClusterConfig.
 *
 * The directory is /var/run/secrets/kubernetes.io/serviceaccount unless
 * kc_config_opts.service_account_dir names another one. The token is not copied into the config: it
 * is a token file, re-read by the client's credential state when the file changes (rotation),
 * checked at most once a second and re-read at least once a minute.
 */
#include "http/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KC__SA_DIR_DEFAULT "/var/run/secrets/kubernetes.io/serviceaccount"

int kc__config_in_cluster(const char *ns_override, const char *dir, kc_config **ret, kc_error *err)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host || !port || !*port)
        return kc_error_set(err, KC_ECONFIG,
                            "not running in a cluster: KUBERNETES_SERVICE_HOST and "
                            "KUBERNETES_SERVICE_PORT must be set");
    if (!dir || !*dir)
        dir = KC__SA_DIR_DEFAULT;
    kc_config *c = kc__config_alloc();
    if (!c)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    char *url = NULL, *tok = NULL, *ns = NULL;
    size_t len = 0;
    int rc;
    bool v6 = strchr(host, ':') != NULL;
    if (asprintf(&url, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port) < 0) {
        url = NULL;
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
        goto fail;
    }
    rc = kc__config_set_server(c, url, err);
    if (rc) {
        rc =
            kc_error_set(err, KC_ECONFIG, "in-cluster: bad KUBERNETES_SERVICE_HOST/PORT (%s)", url);
        goto fail;
    }
    c->source = kc__strdup("in-cluster");
    c->token_file = kc__path_resolve(dir, "token");
    char *ca_path = kc__path_resolve(dir, "ca.crt");
    char *ns_path = kc__path_resolve(dir, "namespace");
    if (!c->source || !c->token_file || !ca_path || !ns_path) {
        free(ca_path);
        free(ns_path);
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
        goto fail;
    }
    c->token_file_periodic = true;
    rc = kc__read_file(c->token_file, KC__CRED_FILE_MAX_BYTES, &tok, &len, err);
    if (rc == 0)
        rc = kc__read_file(ca_path, KC__CRED_FILE_MAX_BYTES, &c->ca_pem, &c->ca_len, err);
    free(ca_path);
    if (rc) {
        free(ns_path);
        rc = kc_error_set(err, KC_ECONFIG, "in-cluster: %s",
                          err && err->message ? err->message : "cannot read service account files");
        goto fail;
    }
    if (ns_override && *ns_override) {
        ns = kc__strdup(ns_override);
    } else if (kc__read_file(ns_path, 4096, &ns, &len, NULL) == 0) {
        while (len > 0 && (ns[len - 1] == '\n' || ns[len - 1] == ' ' || ns[len - 1] == '\r'))
            ns[--len] = '\0';
        if (len == 0) {
            free(ns);
            ns = NULL;
        }
    }
    free(ns_path);
    if (ns) {
        free(c->ns);
        c->ns = ns;
    }
    if (tok) {
        explicit_bzero(tok, strlen(tok));
        free(tok);
    }
    free(url);
    *ret = c;
    return 0;
fail:
    if (tok) {
        explicit_bzero(tok, strlen(tok));
        free(tok);
    }
    free(url);
    kc_config_unref(c);
    return rc;
}
