/*
 * server.c — lifecycle of the embedded API server (include/kcache/server.h):
 * new (options copied, store and registry built, built-in namespaces created, seeds loaded) →
 * start (TLS material, MHD daemon on the listen address, URL known, the `kubernetes` Service
 * created: kubernetes_svc.c) → stop (watches closed,
 * daemon stopped, threads joined) → free. Also the run-time controls: faults, compaction,
 * restart (wipe: all state lost; restore: objects kept, RVs renumbered from 1 — both reset the RV
 * counter, empty the history so that every older RV gets 410 or 504, and close every watch),
 * current RV, kubeconfig.
 * Thread-safety: as documented in server.h; all store state is under srv->mu.
 */
#include "server/http/http.h"
#include "server/admission/admission.h"
#include "server/authz/authz.h"
#include "server/storage/write.h"
#include "server/discovery/discovery.h"

#include "server/controllers/controllers.h"
#include "server/controllers/sim.h"
#include "server/defaults/service_alloc.h"
#include "server/http/kubeconfig_out.h"
#include "server/http/tls.h"
#include "server/testbed/seed.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libmicrohttpd worker threads (each an epoll loop over its share of the connections). */
#ifndef KC__SERVER_THREADS
#define KC__SERVER_THREADS 2
#endif

/* A busy watch stream — one whose last batch had >= KC__WATCH_COALESCE_MIN events — is woken at
 * most once per KC__WATCH_COALESCE_US (hub.h): one batch, one send. A stream that takes events
 * one at a time (a client writing and waiting for its own event) is woken at once. */
#ifndef KC__WATCH_COALESCE_US
#define KC__WATCH_COALESCE_US 10000
#endif
#ifndef KC__WATCH_COALESCE_MIN
#define KC__WATCH_COALESCE_MIN 4
#endif

static const char *const builtin_ns[] = {"default", "kube-system", "kube-public",
                                         "kube-node-lease"};

static int create_builtin_namespaces(kc_server *srv, bool have_lock)
{
    for (size_t i = 0; i < KC__ARRAY_LEN(builtin_ns); i++) {
        char json[256];
        int n = snprintf(json, sizeof(json),
                         "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
                         "\"%s\"},\"spec\":{\"finalizers\":[\"kubernetes\"]},\"status\":{"
                         "\"phase\":\"Active\"}}",
                         builtin_ns[i]);
        kc_error err = KC_ERROR_INIT;
        int rc = kc__create_json_ex(srv, json, (size_t)n, have_lock, false, &err);
        kc_error_clear(&err);
        if (rc)
            return rc;
    }
    return 0;
}

typedef struct seed_ctx {
    kc_server *srv;
    bool generated;    /* --seed-objects: objects already shaped as the server stores them */
    kc_error rejected; /* why the last object was refused */
} seed_ctx;

/* Create one fixture or generated object. An object that already exists is skipped (fixtures
 * may repeat the built-in namespaces); any other refusal stops the start: the loader names the
 * file, kc_server_new adds this reason. */
static int seed_cb(void *ud, const char *json, size_t len)
{
    seed_ctx *x = ud;
    kc_error err = KC_ERROR_INIT;
    int rc = kc__create_json(x->srv, json, len, x->generated, &err);
    if (rc && rc != KC_EEXISTS) {
        kc_obj *o = NULL;
        kc_obj_parse(json, len, NULL, &o, NULL);
        kc_error_set(&x->rejected, rc, "%s \"%s\": %s", o && *kc_obj_kind(o) ? kc_obj_kind(o) : "?",
                     o ? kc_obj_name(o) : "", err.message ? err.message : kc_strerror(rc));
        kc_obj_unref(o);
    }
    kc_error_clear(&err);
    return rc == KC_EEXISTS ? 0 : rc;
}

/* Fixtures, then generated objects. On a refused object err says which file (or the spec)
 * and why. */
static int seed(kc_server *srv, kc_error *err)
{
    seed_ctx x = {.srv = srv, .rejected = KC_ERROR_INIT};
    int rc = 0;
    if (srv->seed_dir)
        rc = kc__seed_load_dir(srv->seed_dir, seed_cb, &x, err);
    x.generated = true;
    if (!rc && srv->seed_spec)
        rc = kc__seed_generate(srv->seed_spec, seed_cb, &x, err);
    if (rc && x.rejected.code && err) {
        char *where = err->message;
        err->message = NULL;
        kc_error_set(err, rc, "%s: %s", where ? where : "seed", x.rejected.message);
        free(where);
    }
    kc_error_clear(&x.rejected);
    return rc;
}

KC_API int(kc_server_new)(const kc_server_opts *opts, size_t opts_size, kc_server **ret_srv,
                          kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_server_opts, err);
    kc_server_faults faults = {0};
    KC__OPTS_TAKE_NESTED(opts__copy, faults, &faults, "kc_server_opts.faults", err);
    if (!ret_srv)
        return kc_error_set(err, KC_EINVAL, "kc_server_new: ret_srv is required");
    kc_server_opts o = *opts;
    o.faults = NULL; /* kept in srv->faults; opts keeps no pointer to the caller's struct */
    o.faults_size = 0;
    kc_server *srv = calloc(1, sizeof(*srv));
    if (!srv)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    srv->opts = o;
    srv->listen = kc__strdup(o.listen ? o.listen : "127.0.0.1:6443");
    srv->token = o.token && *o.token ? kc__strdup(o.token) : NULL;
    srv->seed_dir = kc__strdup(o.seed_dir);
    srv->seed_spec = kc__strdup(o.seed_spec);
    srv->opts.listen = srv->listen;
    srv->opts.token = srv->token;
    srv->opts.seed_dir = srv->seed_dir;
    srv->opts.seed_spec = srv->seed_spec;
    srv->service_cidr = kc__strdup(o.service_cidr);
    srv->node_port_range = kc__strdup(o.node_port_range);
    srv->opts.service_cidr = srv->service_cidr;
    srv->opts.node_port_range = srv->node_port_range;
    srv->webhook_services = kc__strdup(o.webhook_services);
    srv->opts.webhook_services = srv->webhook_services;
    srv->shard_ignored = o.ignore_shard_selector;
    int rc = KC_ENOMEM;
    pthread_mutex_init(&srv->mu, NULL);
    pthread_mutex_init(&srv->off_mu, NULL);
    if (kc__cond_init_monotonic(&srv->cond) != 0 || kc__cond_init_monotonic(&srv->off_cond) != 0)
        goto fail;
    srv->rng = o.random_seed ? o.random_seed : (kc__now_ns() ^ (uintptr_t)srv);
    if (!srv->listen)
        goto fail;
    /* Parse the listen address now so a typo fails early. */
    const char *colon = strrchr(srv->listen, ':');
    if (!colon || colon == srv->listen || (size_t)(colon - srv->listen) >= sizeof(srv->host)) {
        rc = kc_error_set(err, KC_EINVAL, "listen address \"%s\" is not ADDR:PORT", srv->listen);
        goto fail_set;
    }
    memcpy(srv->host, srv->listen, (size_t)(colon - srv->listen));
    char *end;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (*end || port > 65535 || !colon[1]) {
        rc = kc_error_set(err, KC_EINVAL, "bad port in listen address \"%s\"", srv->listen);
        goto fail_set;
    }
    srv->port = (unsigned)port;
    if (o.controllers &
        ~(unsigned)(KC_SERVER_CONTROLLER_NAMESPACE | KC_SERVER_CONTROLLER_GARBAGE_COLLECTOR |
                    KC_SERVER_CONTROLLER_SERVICE_ACCOUNT | KC_SERVER_CONTROLLER_NONE)) {
        rc = kc_error_set(err, KC_EINVAL, "unknown bits in controllers (0x%x)", o.controllers);
        goto fail_set;
    }
    /* 0 = the default set; NONE only keeps a set of no other bit from meaning 0 */
    srv->opts.controllers = o.controllers ? o.controllers & ~(unsigned)KC_SERVER_CONTROLLER_NONE
                                          : (unsigned)KC_SERVER_CONTROLLERS_DEFAULT;
    if (o.simulate_nodes > 10000) {
        rc = kc_error_set(err, KC_EINVAL, "simulate_nodes %u is more than 10000", o.simulate_nodes);
        goto fail_set;
    }
    if ((rc = kc__adm_services_check(o.webhook_services, err)) != 0)
        goto fail_set;
    if ((rc = kc__svc_alloc_new(o.service_cidr, o.node_port_range, srv->rng ^ 0x5e41ce,
                                &srv->svc_alloc, err)) != 0)
        goto fail_set;
    rc = KC_ENOMEM;
    srv->faults = kc__faults_new(&faults, o.random_seed);
    srv->hub = kc__hub_new(srv->faults, o.watch_queue);
    if (srv->hub)
        kc__hub_set_coalesce(srv->hub, (uint64_t)KC__WATCH_COALESCE_US * 1000,
                             KC__WATCH_COALESCE_MIN);
    if (!srv->faults || !srv->hub || kc__store_init(srv) != 0 ||
        kc__registry_init_builtins(srv) != 0)
        goto fail;
    kc__crd_install(srv);                /* discovery's CRD hooks, before any write */
    srv->ctl = kc__controllers_ops(srv); /* before the built-in namespaces: their accounts */
    if ((rc = kc__authz_new(srv, &o, err)) != 0)
        goto fail_set;
    srv->opts.users = srv->opts.token_auth_file = NULL; /* read; no pointer kept */
    if ((rc = create_builtin_namespaces(srv, false)) != 0 ||
        (rc = kc__authz_bootstrap(srv, false, err)) != 0)
        goto fail_set;
    if ((rc = seed(srv, err)) != 0)
        goto fail_set;
    *ret_srv = srv;
    return 0;
fail:
    kc_error_set(err, rc, "cannot create server: %s", kc_strerror(rc));
fail_set:
    kc_server_free(srv);
    return rc;
}

KC_API int kc_server_start(kc_server *srv, kc_error *err)
{
    if (!srv)
        return kc_error_set(err, KC_EINVAL, "server is NULL");
    if (srv->started)
        return kc_error_set(err, KC_EBUSY, "server already started");
    struct sockaddr_in6 a6;
    struct sockaddr_in a4;
    struct sockaddr *sa;
    /* A small pool of epoll threads serves every connection; watch streams park with
     * MHD_suspend_connection while they have nothing to send (api/watch.c), so 50 open watches are
     * not 50 threads. */
    unsigned flags =
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
    char host[64];
    snprintf(host, sizeof(host), "%s", srv->host);
    size_t hl = strlen(host);
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = 0;
    }
    if (!host[0])
        snprintf(host, sizeof(host), "0.0.0.0");
    if (!strcmp(host, "localhost"))
        snprintf(host, sizeof(host), "127.0.0.1");
    memset(&a4, 0, sizeof(a4));
    memset(&a6, 0, sizeof(a6));
    if (inet_pton(AF_INET, host, &a4.sin_addr) == 1) {
        a4.sin_family = AF_INET;
        a4.sin_port = htons((uint16_t)srv->port);
        sa = (struct sockaddr *)&a4;
    } else if (inet_pton(AF_INET6, host, &a6.sin6_addr) == 1) {
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons((uint16_t)srv->port);
        sa = (struct sockaddr *)&a6;
        flags |= MHD_USE_IPv6;
    } else {
        return kc_error_set(err, KC_EINVAL, "listen host \"%s\" is not an IP address", host);
    }
    if (srv->opts.tls) {
        if (!MHD_is_feature_supported(MHD_FEATURE_TLS))
            return kc_error_set(err, KC_ETLS, "libmicrohttpd was built without TLS support");
        if (!srv->tls && !(srv->tls = calloc(1, sizeof *srv->tls)))
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        int rc = kc__tls_generate(host, srv->tls, err);
        if (rc)
            return rc;
        srv->have_tls = true;
        flags |= MHD_USE_TLS;
    }
    errno = 0;
    if (srv->have_tls)
        srv->mhd = MHD_start_daemon(
            flags, 0, NULL, NULL, kc__http_on_request, srv, MHD_OPTION_SOCK_ADDR, sa,
            MHD_OPTION_NOTIFY_COMPLETED, kc__http_on_completed, srv, MHD_OPTION_CONNECTION_TIMEOUT,
            (unsigned)0, MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)512, MHD_OPTION_THREAD_POOL_SIZE,
            (unsigned)KC__SERVER_THREADS, MHD_OPTION_HTTPS_MEM_KEY, srv->tls->key_pem,
            MHD_OPTION_HTTPS_MEM_CERT, srv->tls->cert_pem, MHD_OPTION_END);
    else
        srv->mhd = MHD_start_daemon(
            flags, 0, NULL, NULL, kc__http_on_request, srv, MHD_OPTION_SOCK_ADDR, sa,
            MHD_OPTION_NOTIFY_COMPLETED, kc__http_on_completed, srv, MHD_OPTION_CONNECTION_TIMEOUT,
            (unsigned)0, MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)512, MHD_OPTION_THREAD_POOL_SIZE,
            (unsigned)KC__SERVER_THREADS, MHD_OPTION_END);
    if (!srv->mhd) /* errno is bind()'s or listen()'s: MHD does not overwrite it on the way out */
        return kc_error_set(err, KC_EIO, "cannot listen on %s: %s", srv->listen,
                            errno ? strerror(errno) : "unknown reason");
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->mhd, MHD_DAEMON_INFO_BIND_PORT);
    unsigned port = info ? info->port : srv->port;
    if (!strcmp(host, "0.0.0.0"))
        snprintf(host, sizeof(host), "127.0.0.1");
    else if (!strcmp(host, "::"))
        snprintf(host, sizeof(host), "::1");
    char url[128];
    bool v6 = strchr(host, ':') != NULL;
    snprintf(url, sizeof(url), "%s://%s%s%s:%u", srv->have_tls ? "https" : "http", v6 ? "[" : "",
             host, v6 ? "]" : "", port);
    free(srv->url);
    srv->url = kc__strdup(url);
    snprintf(srv->adv_host, sizeof(srv->adv_host), "%s", host);
    srv->adv_port = port;
    pthread_mutex_lock(&srv->mu);
    int krc = srv->url ? kc__kubernetes_service_create(srv) : KC_ENOMEM;
    pthread_mutex_unlock(&srv->mu);
    if (krc) {
        MHD_stop_daemon(srv->mhd);
        srv->mhd = NULL;
        return kc_error_set(err, krc, "cannot create the kubernetes Service: %s", kc_strerror(krc));
    }
    int rc = kc__sim_start(srv, err); /* simulated nodes and workload controllers (sim.c) */
    if (rc) {
        MHD_stop_daemon(srv->mhd);
        srv->mhd = NULL;
        return rc;
    }
    srv->started = true;
    return 0;
}

KC_API const char *kc_server_url(const kc_server *srv)
{
    return srv && srv->started ? srv->url : NULL;
}

KC_API const char *kc_server_ca_pem(const kc_server *srv)
{
    return srv && srv->have_tls ? srv->tls->ca_pem : NULL;
}

KC_API int kc_server_write_kubeconfig(const kc_server *srv, const char *path, kc_error *err)
{
    if (!srv || !srv->url)
        return kc_error_set(err, KC_EINVAL, "server not started");
    return kc__kubeconfig_write(path, srv->url, kc_server_ca_pem(srv), srv->token, err);
}

KC_API int kc_server_write_kubeconfig_as(const kc_server *srv, const char *user, const char *path,
                                         kc_error *err)
{
    if (!srv || !user || !path)
        return kc_error_set(err, KC_EINVAL, "kc_server_write_kubeconfig_as: NULL argument");
    if (!srv->url)
        return kc_error_set(err, KC_EINVAL, "server not started");
    const char *tok = kc__authz_token_of(srv, user);
    if (!tok)
        return kc_error_set(err, KC_ENOTFOUND, "no token is configured for user \"%s\"", user);
    return kc__kubeconfig_write(path, srv->url, kc_server_ca_pem(srv), tok, err);
}

KC_API int(kc_server_set_faults)(kc_server *srv, const kc_server_faults *faults, size_t faults_size)
{
    if (!srv || !faults)
        return KC_EINVAL;
    KC__OPTS_TAKE(faults, kc_server_faults, NULL);
    kc__faults_set(srv->faults, faults);
    return 0;
}

KC_API void(kc_server_get_faults)(const kc_server *srv, kc_server_faults *ret, size_t ret_size)
{
    kc_server_faults f;
    memset(&f, 0, sizeof f);
    if (srv)
        kc__faults_get(srv->faults, &f);
    kc__result_copy(ret, ret_size, &f, sizeof f);
}

KC_API int kc_server_compact(kc_server *srv)
{
    if (!srv)
        return KC_EINVAL;
    pthread_mutex_lock(&srv->mu);
    kc__store_compact_locked(srv);
    pthread_mutex_unlock(&srv->mu);
    return 0;
}

KC_API int kc_server_restart(kc_server *srv, kc_server_restart_mode mode, kc_error *err)
{
    if (!srv)
        return kc_error_set(err, KC_EINVAL, "kc_server_restart: srv is NULL");
    if (mode != KC_SERVER_RESTART_WIPE && mode != KC_SERVER_RESTART_RESTORE)
        return kc_error_set(err, KC_EINVAL, "kc_server_restart: unknown mode %d", (int)mode);
    int rc = 0;
    pthread_mutex_lock(&srv->mu);
    if (mode == KC_SERVER_RESTART_RESTORE) {
        uint64_t n = 0;
        if ((rc = kc__store_renumber_locked(srv, &n)) != 0) {
            pthread_mutex_unlock(&srv->mu);
            return kc_error_set(err, rc,
                                "restart (restore): renumbering the objects: %s; nothing "
                                "changed",
                                kc_strerror(rc));
        }
        srv->rv = n;
    } else {
        for (size_t i = srv->n_rsrcs; i-- > 0;) {
            kc__rsrc *r = srv->rsrcs[i];
            if (r->is_crd)
                kc__registry_remove(srv, r);
            else
                kc__store_clear_rsrc(r);
        }
        kc__svc_alloc_reset(srv->svc_alloc);
        srv->rv = 0;
    }
    kc__store_compact_locked(srv);
    srv->epoch++;
    kc__hub_close_all(srv->hub);
    kc__hub_reset_rv(srv->hub, srv->rv);
    if (mode == KC_SERVER_RESTART_WIPE) {
        /* recreate the built-in namespaces (and, once listening, the kubernetes Service) before
         * anyone can see the empty state */
        rc = create_builtin_namespaces(srv, true);
        if (rc == 0 && srv->adv_port)
            rc = kc__kubernetes_service_create(srv);
        if (rc == 0)
            rc = kc__authz_bootstrap(srv, true, NULL); /* a new cluster's RBAC policy */
        /* the new history starts after them: no older RV resumes silently (#101) */
        kc__store_compact_locked(srv);
    }
    pthread_cond_broadcast(&srv->cond);
    pthread_mutex_unlock(&srv->mu);
    if (rc)
        return kc_error_set(err, rc, "restart (wipe): recreating the built-in namespaces: %s",
                            kc_strerror(rc));
    return 0;
}

KC_API uint64_t kc_server_current_rv(const kc_server *srv)
{
    return srv ? srv->rv : 0;
}

KC_API void kc_server_stop(kc_server *srv)
{
    if (!srv || !srv->mhd)
        return;
    kc__sim_stop(srv); /* joins the simulation's thread (it holds mu only per key) */
    srv->stopping = true;
    pthread_mutex_lock(&srv->mu);
    kc__hub_close_all(srv->hub); /* resumes every suspended watch stream */
    pthread_cond_broadcast(&srv->cond);
    pthread_mutex_unlock(&srv->mu);
    /* libmicrohttpd must not be stopped with suspended connections: let offloaded requests
     * finish and resume theirs (new ones run inline once stopping is set). */
    kc__http_wait_offloaded(srv);
    MHD_stop_daemon(srv->mhd);
    srv->mhd = NULL;
}

KC_API void kc_server_free(kc_server *srv)
{
    if (!srv)
        return;
    kc_server_stop(srv);
    pthread_mutex_lock(&srv->mu);
    kc__store_destroy(srv);
    kc__controllers_free(srv);
    pthread_mutex_unlock(&srv->mu);
    kc__hub_free(srv->hub);
    kc__faults_free(srv->faults);
    if (srv->have_tls)
        kc__tls_material_clear(srv->tls);
    free(srv->tls);
    pthread_mutex_destroy(&srv->mu);
    pthread_cond_destroy(&srv->cond);
    pthread_mutex_destroy(&srv->off_mu);
    pthread_cond_destroy(&srv->off_cond);
    free(srv->listen);
    free(srv->token);
    free(srv->seed_dir);
    free(srv->seed_spec);
    free(srv->service_cidr);
    free(srv->node_port_range);
    free(srv->webhook_services);
    kc__svc_alloc_free(srv->svc_alloc);
    kc__authz_free(srv);
    free(srv->url);
    free(srv);
}
