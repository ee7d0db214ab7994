/*
 * kcache/config.h — where the API server is and how to authenticate: kubeconfig (kubectl rules)
 * or in-cluster service-account configuration, resolved into an immutable kc_config.
 *
 * Loading order (kc_config_load), as kubectl does:
 *   1. opts->kubeconfig (an explicit path; must exist);
 *   2. else $KUBECONFIG, a ':'-separated list of files merged in order: for every map entry
 *      (cluster, user, context by name) the first file that sets it wins; current-context comes
 *      from the first file that sets it; missing files in the list are skipped;
 *   3. else ~/.kube/config when it exists;
 *   4. else in-cluster (or first, when opts->in_cluster): KUBERNETES_SERVICE_HOST/_PORT, the
 *      service-account directory (opts->service_account_dir, default
 *      /var/run/secrets/kubernetes.io/serviceaccount) with `token` (re-read when it changes, at
 * most once a second and at least once a minute), `ca.crt` and `namespace`. Relative paths inside a
 * kubeconfig (certificate-authority, client-certificate, client-key, tokenFile, exec command
 * containing a '/') resolve against the directory of the file that holds them. Certificate and key
 * files are read at load time and kept in memory (never written out). Supported cluster fields:
 * server, certificate-authority(-data), insecure-skip-tls-verify, tls-server-name, proxy-url. User
 * fields: token, tokenFile, client-certificate(-data), client-key(-data), username/password, exec
 * (client.authentication.k8s.io/v1 and v1beta1). auth-provider entries fail with KC_EUNSUPPORTED
 * naming the provider.
 *
 * Thread-safety: a kc_config is immutable after load and may be shared by any number of threads
 * and clients. It is reference-counted internally: kc_client_new keeps its own reference, so the
 * caller may kc_config_unref() its handle at any time after creating clients.
 */
#ifndef KCACHE_CONFIG_H
#define KCACHE_CONFIG_H

#include "error.h"

KC_BEGIN_DECLS

typedef struct kc_config kc_config;

/* Options for kc_config_load. Zero-initialised (or NULL) means the defaults. Strings borrowed for
 * the duration of the call. */
typedef struct kc_config_opts {
    const char *kubeconfig;         /* explicit path, or NULL → $KUBECONFIG → ~/.kube/config →
                                       in-cluster */
    const char *context;            /* context name overriding current-context; NULL = current */
    const char *namespace_override; /* namespace overriding the context's; NULL = context's */
    bool in_cluster;                /* force in-cluster configuration (ignore kubeconfig files) */
    /* In-cluster: the service-account directory (token, ca.crt, namespace); NULL = the standard
     * /var/run/secrets/kubernetes.io/serviceaccount. */
    const char *service_account_dir;
    /* Exec credential plugins: how long one run may take before it is killed (KC_EAUTH "timed
     * out"); 0 = 60 s. */
    int64_t exec_timeout_ms;
} kc_config_opts;

/*
 * Load a configuration by the rules above. opts may be NULL.
 * Errors: KC_ECONFIG (bad or missing kubeconfig, unknown context/cluster/user, no configuration
 * found at all; err->message names the file and what is wrong), KC_EUNSUPPORTED (auth-provider,
 * unknown exec apiVersion), KC_EIO (a referenced file cannot be read: err names it), KC_ENOMEM.
 * On success *ret_cfg is new — caller frees with kc_config_unref(). Thread-safe (reads the
 * environment: KUBECONFIG, HOME, KUBERNETES_SERVICE_HOST/_PORT — no other variable). opts are
 * borrowed for the call (what is kept is copied). Since 0.1.
 */
KC_API int(kc_config_load)(const kc_config_opts *opts, size_t opts_size, kc_config **ret_cfg,
                           kc_error *err);
#define kc_config_load(opts, ret_cfg, err)                                                         \
    (kc_config_load)((opts), sizeof(kc_config_opts), (ret_cfg), (err))

/*
 * A configuration for a fixed server URL (tests and the embedded server): url like
 * "https://127.0.0.1:41234"; ca_pem the PEM of the CA that signs the server certificate (NULL:
 * system CAs); token a bearer token (NULL: none). Strings are copied. Namespace is "default".
 * Errors: KC_EINVAL (bad URL), KC_ENOMEM. On success *ret_cfg is new — caller unrefs with
 * kc_config_unref(). Thread-safe. Since 0.1.
 */
KC_API int kc_config_from_url(const char *url, const char *ca_pem, const char *token,
                              kc_config **ret_cfg, kc_error *err);

/* Server base URL without a trailing '/'. Borrowed: valid until the config is freed. NULL for
 * NULL. Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_config_server(const kc_config *cfg);

/* Default namespace ("default" unless the context, the namespace file or the override set one).
 * Borrowed: valid until the config is freed. NULL for NULL. Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_config_namespace(const kc_config *cfg);

/* Name of the kubeconfig context in use; NULL for in-cluster and kc_config_from_url configs.
 * Borrowed: valid until the config is freed. Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_config_context(const kc_config *cfg);

/* Take one more reference (the configuration is immutable: share it freely). Returns cfg, a new
 * reference — caller unrefs. Accepts NULL. Thread-safe. Never fails. Since 0.1. */
KC_API kc_config *kc_config_ref(const kc_config *cfg);

/* Drop one reference (clients keep their own); the last one frees the configuration. Accepts
 * NULL. The caller's reference is consumed. Thread-safe. Never fails. Since 0.1. */
KC_API void kc_config_unref(kc_config *cfg);

KC_END_DECLS

#endif
