/*
 * kubeconfig.c — kubeconfig files (one or a merged KUBECONFIG list) → kc_config, by kubectl's
 * rules (clientcmd):
 *   - maps (clusters, users, contexts, by name): the first file to set an entry wins;
 *   - current-context: from the first file that sets it; opts->context overrides it;
 *   - relative paths resolve against the directory of the file that holds the entry;
 *   - files named explicitly must exist; missing files in a KUBECONFIG list are skipped.
 * Every error is KC_ECONFIG (KC_EUNSUPPORTED for auth-provider) and names the file and the entry.
 * Certificate and key material is read into memory here and never written anywhere.
 */
#include "http/internal.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KC__KC_MAX_ENTRIES 4096

typedef struct kc__kentry {
    const char *name;
    const kc__ynode *node; /* the inner cluster/user/context map */
    const char *file;
    const char *dir;
} kc__kentry;

typedef struct kc__kmerge {
    kc__ynode *trees[KC__KUBECONFIG_MAX_FILES];
    char *dirs[KC__KUBECONFIG_MAX_FILES];
    size_t n_trees;
    kc__kentry clusters[KC__KC_MAX_ENTRIES], users[KC__KC_MAX_ENTRIES],
        contexts[KC__KC_MAX_ENTRIES];
    size_t n_clusters, n_users, n_contexts;
    const char *current;
    const char *current_file;
    const char *first_file;
} kc__kmerge;

static const kc__kentry *kc__kfind(const kc__kentry *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return &v[i];
    return NULL;
}

static int kc__kcollect(kc__kmerge *m, const kc__ynode *root, const char *list, const char *inner,
                        kc__kentry *v, size_t *n, const char *file, const char *dir, kc_error *err)
{
    const kc__ynode *seq = kc__ynode_get(root, list);
    if (!seq || (seq->type == KC__Y_SCALAR &&
                 (!*seq->scalar || !strcmp(seq->scalar, "null") || !strcmp(seq->scalar, "~"))))
        return 0;
    if (seq->type != KC__Y_SEQ)
        return kc_error_set(err, KC_ECONFIG, "kubeconfig %s: '%s' must be a list (line %d)", file,
                            list, seq->line);
    for (size_t i = 0; i < seq->n; i++) {
        const kc__ynode *it = seq->items[i];
        const char *name = kc__ynode_str(it, "name");
        if (!name || !*name)
            return kc_error_set(err, KC_ECONFIG,
                                "kubeconfig %s: entry of '%s' without a name "
                                "(line %d)",
                                file, list, it->line);
        const kc__ynode *body = kc__ynode_get(it, inner);
        if (body && body->type != KC__Y_MAP && body->type != KC__Y_SCALAR)
            return kc_error_set(err, KC_ECONFIG, "kubeconfig %s: %s '%s': '%s' must be a map", file,
                                list, name, inner);
        if (body && body->type == KC__Y_SCALAR)
            body = NULL; /* "user: {}" written as null */
        if (kc__kfind(v, *n, name))
            continue; /* first file wins */
        if (*n == KC__KC_MAX_ENTRIES)
            return kc_error_set(err, KC_ECONFIG, "kubeconfig %s: more than %d %s", file,
                                KC__KC_MAX_ENTRIES, list);
        v[*n] = (kc__kentry){name, body, file, dir};
        (*n)++;
    }
    return 0;
}

static int kc__kload_file(kc__kmerge *m, const char *path, bool must_exist, kc_error *err)
{
    char *text = NULL;
    size_t len = 0;
    if (access(path, F_OK) != 0 && !must_exist)
        return 0;
    int rc = kc__read_file(path, KC__KUBECONFIG_MAX_BYTES, &text, &len, err);
    if (rc) {
        char *why = kc__strdup(err && err->message ? err->message : "cannot read");
        rc = kc_error_set(err, KC_ECONFIG, "kubeconfig %s: %s", path, why ? why : "cannot read");
        free(why);
        return rc;
    }
    kc__ynode *root = NULL;
    rc = kc__yaml_parse(text, len, &root, err);
    free(text);
    if (rc) {
        char *why = kc__strdup(err && err->message ? err->message : "bad YAML");
        rc = kc_error_set(err, KC_ECONFIG, "kubeconfig %s: %s", path, why ? why : "bad YAML");
        free(why);
        return rc;
    }
    if (!root)
        return 0; /* empty file */
    if (root->type != KC__Y_MAP) {
        kc__ynode_free(root);
        return kc_error_set(err, KC_ECONFIG, "kubeconfig %s: not a YAML map", path);
    }
    char *pcopy = kc__strdup(path);
    char *dir = pcopy ? kc__strdup(dirname(pcopy)) : NULL;
    free(pcopy);
    if (!dir) {
        kc__ynode_free(root);
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    size_t k = m->n_trees++;
    m->trees[k] = root;
    m->dirs[k] = dir;
    if (!m->first_file)
        m->first_file = path;
    rc = kc__kcollect(m, root, "clusters", "cluster", m->clusters, &m->n_clusters, path, dir, err);
    if (!rc)
        rc = kc__kcollect(m, root, "users", "user", m->users, &m->n_users, path, dir, err);
    if (!rc)
        rc = kc__kcollect(m, root, "contexts", "context", m->contexts, &m->n_contexts, path, dir,
                          err);
    const char *cur = kc__ynode_str(root, "current-context");
    if (!rc && !m->current && cur && *cur) {
        m->current = cur;
        m->current_file = path;
    }
    return rc;
}

/* data field (base64) or file field (path relative to the entry's file) → bytes in memory. */
static int kc__kmaterial(const kc__kentry *e, const char *data_key, const char *file_key,
                         char **ret, size_t *ret_len, kc_error *err)
{
    const char *data = kc__ynode_str(e->node, data_key);
    if (data && *data) {
        int rc = kc__base64_decode(data, strlen(data), ret, ret_len);
        if (rc == KC_ENOMEM)
            return kc_error_set(err, rc, "out of memory");
        if (rc)
            return kc_error_set(err, KC_ECONFIG, "kubeconfig %s: '%s' of '%s' is not valid base64",
                                e->file, data_key, e->name);
        return 0;
    }
    const char *file = kc__ynode_str(e->node, file_key);
    if (!file || !*file)
        return 0;
    char *path = kc__path_resolve(e->dir, file);
    if (!path)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    int rc = kc__read_file(path, KC__CRED_FILE_MAX_BYTES, ret, ret_len, err);
    if (rc) {
        char *why = kc__strdup(err && err->message ? err->message : "cannot read");
        rc = kc_error_set(err, KC_ECONFIG, "kubeconfig %s: '%s' of '%s': %s", e->file, file_key,
                          e->name, why ? why : "cannot read");
        free(why);
    }
    free(path);
    return rc;
}

static bool kc__ytrue(const char *s)
{
    return s && (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"));
}

static int kc__kcluster(kc_config *c, const kc__kentry *e, kc_error *err)
{
    const char *server = kc__ynode_str(e->node, "server");
    if (!server || !*server)
        return kc_error_set(err, KC_ECONFIG, "kubeconfig %s: cluster '%s' has no server", e->file,
                            e->name);
    int rc = kc__config_set_server(c, server, err);
    if (rc) {
        char *why = kc__strdup(err && err->message ? err->message : "bad server");
        rc = kc_error_set(err, KC_ECONFIG, "kubeconfig %s: cluster '%s': %s", e->file, e->name,
                          why ? why : "bad server");
        free(why);
        return rc;
    }
    rc = kc__kmaterial(e, "certificate-authority-data", "certificate-authority", &c->ca_pem,
                       &c->ca_len, err);
    if (rc)
        return rc;
    c->insecure = kc__ytrue(kc__ynode_str(e->node, "insecure-skip-tls-verify"));
    const char *sni = kc__ynode_str(e->node, "tls-server-name");
    const char *proxy = kc__ynode_str(e->node, "proxy-url");
    if ((sni && *sni && !(c->tls_server_name = kc__strdup(sni))) ||
        (proxy && *proxy && !(c->proxy_url = kc__strdup(proxy))))
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    return 0;
}

static int kc__kexec(kc_config *c, const kc__kentry *e, const kc__ynode *x, kc_error *err)
{
    const char *api = kc__ynode_str(x, "apiVersion");
    const char *cmd = kc__ynode_str(x, "command");
    if (!api || (strcmp(api, "client.authentication.k8s.io/v1") != 0 &&
                 strcmp(api, "client.authentication.k8s.io/v1beta1") != 0))
        return kc_error_set(err, KC_EUNSUPPORTED,
                            "kubeconfig %s: user '%s': exec apiVersion '%s' is not supported "
                            "(use client.authentication.k8s.io/v1 or v1beta1)",
                            e->file, e->name, api ? api : "");
    if (!cmd || !*cmd)
        return kc_error_set(err, KC_ECONFIG, "kubeconfig %s: user '%s': exec has no command",
                            e->file, e->name);
    kc__exec_config *ex = calloc(1, sizeof *ex);
    if (!ex)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    c->exec = ex;
    ex->api_version = kc__strdup(api);
    /* kubectl: a command with a path separator is relative to the kubeconfig's directory */
    ex->command = strchr(cmd, '/') ? kc__path_resolve(e->dir, cmd) : kc__strdup(cmd);
    const char *hint = kc__ynode_str(x, "installHint");
    ex->install_hint = hint ? kc__strdup(hint) : NULL;
    if (!ex->api_version || !ex->command || (hint && !ex->install_hint))
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    ex->provide_cluster_info = kc__ytrue(kc__ynode_str(x, "provideClusterInfo"));
    const char *im = kc__ynode_str(x, "interactiveMode");
    if (!im || !*im || !strcmp(im, "IfAvailable"))
        ex->interactive = KC__INTERACTIVE_IF_AVAILABLE;
    else if (!strcmp(im, "Never"))
        ex->interactive = KC__INTERACTIVE_NEVER;
    else if (!strcmp(im, "Always"))
        ex->interactive = KC__INTERACTIVE_ALWAYS;
    else
        return kc_error_set(err, KC_ECONFIG, "kubeconfig %s: user '%s': bad interactiveMode '%s'",
                            e->file, e->name, im);
    const kc__ynode *args = kc__ynode_get(x, "args");
    if (args && args->type == KC__Y_SEQ && args->n) {
        ex->args = calloc(args->n, sizeof *ex->args);
        if (!ex->args)
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        for (size_t i = 0; i < args->n; i++) {
            if (args->items[i]->type != KC__Y_SCALAR)
                return kc_error_set(err, KC_ECONFIG,
                                    "kubeconfig %s: user '%s': exec args must "
                                    "be strings",
                                    e->file, e->name);
            if (!(ex->args[ex->n_args++] = kc__strdup(args->items[i]->scalar)))
                return kc_error_set(err, KC_ENOMEM, "out of memory");
        }
    }
    const kc__ynode *env = kc__ynode_get(x, "env");
    if (env && env->type == KC__Y_SEQ && env->n) {
        ex->env = calloc(env->n, sizeof *ex->env);
        if (!ex->env)
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        for (size_t i = 0; i < env->n; i++) {
            const char *n = kc__ynode_str(env->items[i], "name");
            const char *v = kc__ynode_str(env->items[i], "value");
            if (!n || !*n || strchr(n, '='))
                return kc_error_set(err, KC_ECONFIG,
                                    "kubeconfig %s: user '%s': exec env entry "
                                    "without a valid name",
                                    e->file, e->name);
            if (asprintf(&ex->env[ex->n_env], "%s=%s", n, v ? v : "") < 0)
                return kc_error_set(err, KC_ENOMEM, "out of memory");
            ex->n_env++;
        }
    }
    return 0;
}

static int kc__kuser(kc_config *c, const kc__kentry *e, kc_error *err)
{
    if (!e->node)
        return 0;
    const kc__ynode *ap = kc__ynode_get(e->node, "auth-provider");
    if (ap) {
        const char *name = kc__ynode_str(ap, "name");
        return kc_error_set(err, KC_EUNSUPPORTED,
                            "kubeconfig %s: user '%s': auth-provider %s is not supported; use an "
                            "exec plugin",
                            e->file, e->name, name ? name : "(unnamed)");
    }
    const char *tok = kc__ynode_str(e->node, "token");
    const char *tf = kc__ynode_str(e->node, "tokenFile");
    const char *user = kc__ynode_str(e->node, "username");
    const char *pw = kc__ynode_str(e->node, "password");
    if ((tok && *tok && !(c->token = kc__strdup(tok))) ||
        (user && *user && !(c->username = kc__strdup(user))) ||
        (pw && *pw && !(c->password = kc__strdup(pw))))
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    if (tf && *tf && !(tok && *tok)) {
        if (!(c->token_file = kc__path_resolve(e->dir, tf)))
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        if (access(c->token_file, R_OK) != 0)
            return kc_error_set(err, KC_ECONFIG, "kubeconfig %s: user '%s': tokenFile %s: %s",
                                e->file, e->name, c->token_file, strerror(errno));
    }
    int rc = kc__kmaterial(e, "client-certificate-data", "client-certificate", &c->cert_pem,
                           &c->cert_len, err);
    if (!rc)
        rc = kc__kmaterial(e, "client-key-data", "client-key", &c->key_pem, &c->key_len, err);
    if (rc)
        return rc;
    if ((c->cert_pem != NULL) != (c->key_pem != NULL))
        return kc_error_set(err, KC_ECONFIG,
                            "kubeconfig %s: user '%s': client certificate and "
                            "key must both be set",
                            e->file, e->name);
    const kc__ynode *x = kc__ynode_get(e->node, "exec");
    if (x && x->type == KC__Y_MAP)
        return kc__kexec(c, e, x, err);
    return 0;
}

int kc__config_from_kubeconfigs(const char *const *paths, size_t n, bool explicit_path,
                                const kc_config_opts *opts, kc_config **ret, kc_error *err)
{
    kc__kmerge *m = calloc(1, sizeof *m);
    kc_config *c = NULL;
    if (!m)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0 && i < KC__KUBECONFIG_MAX_FILES; i++)
        rc = kc__kload_file(m, paths[i], explicit_path, err);
    if (rc)
        goto out;
    const char *where = m->first_file ? m->first_file : (n ? paths[0] : "(none)");
    if (m->n_trees == 0) {
        rc = kc_error_set(err, KC_ECONFIG, "kubeconfig %s: no such file or empty", where);
        goto out;
    }
    const char *ctx_name = opts && opts->context && *opts->context ? opts->context : m->current;
    if (!ctx_name) {
        rc = kc_error_set(err, KC_ECONFIG,
                          "kubeconfig %s: no current-context set and no context "
                          "given",
                          where);
        goto out;
    }
    const kc__kentry *ctx = kc__kfind(m->contexts, m->n_contexts, ctx_name);
    if (!ctx) {
        rc = kc_error_set(err, KC_ECONFIG, "kubeconfig %s: context '%s' not found",
                          m->current_file && !(opts && opts->context) ? m->current_file : where,
                          ctx_name);
        goto out;
    }
    const char *cl_name = kc__ynode_str(ctx->node, "cluster");
    const char *us_name = kc__ynode_str(ctx->node, "user");
    const char *ns = kc__ynode_str(ctx->node, "namespace");
    const kc__kentry *cl = cl_name ? kc__kfind(m->clusters, m->n_clusters, cl_name) : NULL;
    if (!cl || !cl->node) {
        rc = kc_error_set(err, KC_ECONFIG,
                          "kubeconfig %s: context '%s' names cluster '%s', "
                          "which is not defined",
                          ctx->file, ctx_name, cl_name ? cl_name : "");
        goto out;
    }
    const kc__kentry *us = NULL;
    if (us_name && *us_name) {
        us = kc__kfind(m->users, m->n_users, us_name);
        if (!us) {
            rc = kc_error_set(err, KC_ECONFIG,
                              "kubeconfig %s: context '%s' names user '%s', "
                              "which is not defined",
                              ctx->file, ctx_name, us_name);
            goto out;
        }
    }
    c = kc__config_alloc();
    if (!c) {
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
        goto out;
    }
    if (asprintf(&c->source, "kubeconfig %s", where) < 0) {
        c->source = NULL;
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
        goto out;
    }
    c->context = kc__strdup(ctx_name);
    const char *use_ns = opts && opts->namespace_override && *opts->namespace_override
                             ? opts->namespace_override
                             : (ns && *ns ? ns : "default");
    free(c->ns);
    c->ns = kc__strdup(use_ns);
    if (!c->context || !c->ns) {
        rc = kc_error_set(err, KC_ENOMEM, "out of memory");
        goto out;
    }
    rc = kc__kcluster(c, cl, err);
    if (!rc && us)
        rc = kc__kuser(c, us, err);
out:
    for (size_t i = 0; i < m->n_trees; i++) {
        kc__ynode_free(m->trees[i]);
        free(m->dirs[i]);
    }
    free(m);
    if (rc) {
        kc_config_unref(c);
        return rc;
    }
    *ret = c;
    return 0;
}
