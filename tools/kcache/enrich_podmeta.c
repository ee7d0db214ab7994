/*
 * enrich_podmeta.c — the metadata view backed by the node cache kc_podmeta
 * (include/kcache/podmeta.h): what `kcache enrich --daemon` and `--standalone` look pods up in.
 *
 * Design: one kc_podmeta (a Pod watch limited to spec.nodeName=--node, a Namespace watch; CA1),
 * tombstones kept --deleted-grace (DP4). A lookup hands the record's file-derived key to
 * kc_podmeta_lookup — container id first (it tells a recreated pod of the same name from the old
 * one, CA6/DP5), the pod UID when the file name gave one (FN13), then namespace/name; when the id
 * names no container known yet (a container just started), the pod is looked up again by its UID
 * when known, else by name.
 * It never sends a request (CA4). Before the first sync it waits at most what is left of
 * --sync-wait counted from the start (--unsynced=buffer), or not at all (bare), then answers what
 * the cache holds. The entry's JSON (kc_podmeta_pod_json, rendered from the pod's record) is
 * handed to the formatter as a jansson tree. --health-listen serves /healthz, /readyz and /metrics
 * (kc_health, with kc_podmeta_metrics_render as a metrics source). The daemon asks with the version
 * a helper holds (enrich_proto.c): while it is current the answer is "same" and no JSON is made. A
 * thread bumps the view's generation counter (a page the daemon shares with its helpers) after each
 * change the cache signals (gen_main), so helpers reuse what they hold until then. A miss after the
 * sync goes to the background GET's side table (enrich_fetch.c, CA5), which answers from memory or
 * queues a GET, on a client of its own (no retries, no limiter of the client's: the fetcher paces
 * and backs off); a stored result bumps the same generation. The daemon checks its RBAC at start
 * (enrich_rbac.c) and /readyz reports both informers (kc_health_add_informer).
 */
#include "enrich.h"
#include "enrich_api.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "kcache/error.h"

#include "kcache/health.h"
#include "kcache/podmeta.h"

struct kc__enrich_cache {
    kc_client *client;
    kc_client *fclient; /* the background GETs' and the RBAC check's */
    kc__enrich_fetch *fetch;
    atomic_bool synced; /* ready once: later misses may be fetched (CA5), watch down or not */
    kc_podmeta *pm;
    kc_cache *hcache; /* empty: kc_health needs one; the metrics are the podmeta's */
    kc_health *health;
    int64_t sync_deadline_ms;
    bool bare;
    _Atomic uint64_t *gen; /* the view's generation (a shared page), or NULL */
    int gen_fd, gen_stop[2];
    pthread_t gen_th;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static json_t *obj_json(const kc_obj *o)
{
    size_t len = 0;
    const char *s = o ? kc_obj_json(o, &len) : NULL;
    return s && len ? json_loadb(s, len, 0, NULL) : NULL;
}

/* The pod's JSON, rendered from its record (kc_podmeta_pod_json: nothing kept with the entry). */
static json_t *pod_json(const kc_podmeta_pod *p)
{
    size_t len = 0;
    char *s = kc_podmeta_pod_json(p, &len);
    json_t *j = s ? json_loadb(s, len, 0, NULL) : NULL;
    free(s);
    return j;
}

static int pm_lookup(void *ud, const kc__enrich_key *key, kc__enrich_meta *ret)
{
    kc__enrich_cache *c = ud;
    memset(ret, 0, sizeof *ret);
    if (!kc_podmeta_ready(c->pm) && !c->bare) {
        int64_t left = c->sync_deadline_ms - now_ms();
        if (left > 0)
            kc_podmeta_wait_ready(c->pm, left, NULL);
    }
    bool ready = kc_podmeta_ready(c->pm);
    if (ready && !atomic_load_explicit(&c->synced, memory_order_relaxed))
        atomic_store_explicit(&c->synced, true, memory_order_relaxed);
    kc_podmeta_query q = {.ns = key->ns,
                          .name = key->pod,
                          .uid = key->uid,
                          .container_id = key->container_id,
                          .wait_ms = ready ? 0 : -1};
    kc_podmeta_result res;
    int rc = kc_podmeta_lookup(c->pm, &q, &res, NULL);
    if (rc == KC_ENOTFOUND && key->container_id && (key->uid || (key->ns && key->pod))) {
        /* an id not in the cache (a container just started or restarted, an id cut short by
         * the 255-byte name limit): by the pod's UID when known, else by name (CA6) */
        q.container_id = NULL;
        q.wait_ms = -1;
        rc = kc_podmeta_lookup(c->pm, &q, &res, NULL);
    }
    if (rc == KC_ENOTFOUND && c->fetch && atomic_load_explicit(&c->synced, memory_order_relaxed))
        return kc__enrich_fetch_lookup(c->fetch, key, ret); /* CA5: never waits on the network */
    if (rc)
        return rc;
    const kc_obj *ns = kc_podmeta_ns_obj(res.ns);
    ret->deleted = kc_podmeta_pod_deleted(res.pod);
    /* changes whenever the answer does: a new pod, an update, a deletion, a namespace update */
    snprintf(ret->version, sizeof ret->version, "%s/%s/%d/%s/%s",
             kc_podmeta_pod_get(res.pod, KC_PODMETA_FIELD_UID, NULL),
             kc_podmeta_pod_get(res.pod, KC_PODMETA_FIELD_RESOURCE_VERSION, NULL), ret->deleted,
             kc_obj_uid(ns), kc_obj_resource_version(ns));
    if (key->have_version && !strcmp(key->have_version, ret->version)) {
        ret->same = true; /* the asker holds this answer: no JSON */
        kc_podmeta_result_clear(&res);
        return 0;
    }
    ret->pod = pod_json(res.pod);
    ret->ns = obj_json(ns);
    kc_podmeta_result_clear(&res);
    if (!ret->pod) {
        kc__enrich_meta_clear(ret);
        return KC_EPARSE;
    }
    return 0;
}

kc__enrich_view kc__enrich_cache_view(kc__enrich_cache *c)
{
    return (kc__enrich_view){
        .lookup = pm_lookup, .ud = c, .generation = c->gen, .generation_fd = c->gen_fd};
}

/* The generation (kc__enrich_view): this thread waits on kc_podmeta_fd, which the cache signals
 * after it applied a change (pod or namespace event, tombstone expired, readiness), drains it and
 * then increments the counter. CA3: the change is visible to lookups before the fd is signalled,
 * and the increment follows the drain, so a helper that reads the counter after the increment
 * and asks again gets the new answer; what it reused until then was read before the increment
 * (the window: this thread's wake-up, as for any record read while the event is being applied).
 * A change landing during the drain signals the fd again: the next round increments again. */
static void *gen_main(void *arg)
{
    kc__enrich_cache *c = arg;
    struct pollfd p[2] = {{.fd = kc_podmeta_fd(c->pm), .events = POLLIN},
                          {.fd = c->gen_stop[0], .events = POLLIN}};
    while (poll(p, 2, -1) >= 0 || errno == EINTR) {
        if (p[1].revents)
            break;
        if (p[0].revents & POLLIN) {
            kc_podmeta_fd_drain(c->pm);
            atomic_fetch_add_explicit(c->gen, 1, memory_order_release);
        }
    }
    return NULL;
}

/* Start gen_main (none: no generation, helpers always ask). */
static void start_generation(kc__enrich_cache *c)
{
    c->gen_fd = -1;
    c->gen = kc__enrich_genpage_new(&c->gen_fd);
    if (c->gen && !pipe2(c->gen_stop, O_CLOEXEC)) {
        if (!pthread_create(&c->gen_th, NULL, gen_main, c))
            return;
        close(c->gen_stop[0]);
        close(c->gen_stop[1]);
    }
    kc__enrich_genpage_free(c->gen, c->gen_fd);
    c->gen = NULL;
    c->gen_fd = -1;
}

static void stop_generation(kc__enrich_cache *c)
{
    if (!c->gen)
        return;
    (void)!write(c->gen_stop[1], "x", 1);
    pthread_join(c->gen_th, NULL);
    close(c->gen_stop[0]);
    close(c->gen_stop[1]);
    kc__enrich_genpage_free(c->gen, c->gen_fd);
    c->gen = NULL;
}

static int start_health(kc__enrich_cache *c, const char *listen, char *(*extra)(void *), void *ud,
                        kc_error *err)
{
    int rc = kc_cache_new(c->client, NULL, &c->hcache, err);
    if (!rc)
        rc = kc_health_new(c->hcache, listen, NULL, &c->health, err);
    if (!rc)
        rc = kc_health_add_metrics_source(c->health, kc_podmeta_metrics_render, c->pm);
    if (!rc && extra)
        rc = kc_health_add_metrics_source(c->health, extra, ud);
    if (!rc) /* /readyz: the cache's sync (the podmeta informers are in no kc_cache) */
        rc = kc_health_add_informer(c->health, kc_podmeta_pod_informer(c->pm), true);
    if (!rc && kc_podmeta_ns_informer(c->pm))
        rc = kc_health_add_informer(c->health, kc_podmeta_ns_informer(c->pm), true);
    return rc;
}

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount/"

/* A whole small file (token, CA) as a string (new malloc'd), trailing blanks cut; NULL when it
 * cannot be read (errno set). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    char *s = calloc(1, 1 << 20);
    size_t n = s ? fread(s, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    while (s && n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        s[--n] = '\0';
    return s;
}

/* --server URL [--token-file] [--certificate-authority]: no kubeconfig, no environment (MX2). */
static int url_config(const kc__enrich_opts *o, kc_config **cfg, char *msg, size_t n)
{
    const char *tf = o->token_file, *cf = o->ca_file;
    if (!tf && !access(SA_DIR "token", R_OK))
        tf = SA_DIR "token";
    if (!cf && !strncmp(o->server, "https:", 6) && !access(SA_DIR "ca.crt", R_OK))
        cf = SA_DIR "ca.crt";
    char *token = tf ? slurp(tf) : NULL, *ca = cf ? slurp(cf) : NULL;
    if ((tf && !token) || (cf && !ca)) {
        snprintf(msg, n, "%s %s: cannot read it",
                 tf && !token ? "--token-file" : "--certificate-authority", tf && !token ? tf : cf);
        free(token);
        free(ca);
        return -1;
    }
    kc_error err = KC_ERROR_INIT;
    int rc = kc_config_from_url(o->server, ca, token, cfg, &err);
    if (rc)
        snprintf(msg, n, "--server %s: %s", o->server, err.message ? err.message : kc_strerror(rc));
    kc_error_clear(&err);
    free(token);
    free(ca);
    return rc;
}

/* Two clients of one configuration (--server, else --kubeconfig/--context or in-cluster): the
 * watches' (the library's defaults) and the fetcher's (no retries, no limiter, 3 s timeout). */
static int connect_both(const kc__enrich_opts *o, kc__enrich_cache *c, char *msg, size_t n)
{
    kc_config *cfg = NULL;
    kc_error err = KC_ERROR_INIT;
    kc_config_opts co = {.kubeconfig = o->kubeconfig, .context = o->context};
    int rc = o->server ? url_config(o, &cfg, msg, n) : kc_config_load(&co, &cfg, &err);
    kc_client_opts fo = {.qps = -1, .max_retries = -1, .request_timeout_ms = 3000};
    if (!rc)
        rc = kc_client_new(cfg, NULL, &c->client, &err);
    if (!rc)
        rc = kc_client_new(cfg, &fo, &c->fclient, &err);
    if (rc && err.code)
        snprintf(msg, n, "cannot connect to the API server: %s",
                 err.message ? err.message : kc_strerror(rc));
    kc_config_unref(cfg);
    kc_error_clear(&err);
    return rc;
}

/* RB1 at start: a denial ends the daemon (exit 1, the verb and resource named); a helper with its
 * own cache only logs it (rsyslog would restart it per message). */
static int rbac_check(const kc__enrich_opts *o, kc__enrich_cache *c, char *msg, size_t n)
{
    char why[512];
    int rc = kc__enrich_rbac_check(c->fclient, why, sizeof why);
    if (rc > 0 && o->mode == KC_ENRICH_MODE_DAEMON) {
        snprintf(msg, n, "%s", why);
        return -1;
    }
    if (rc)
        fprintf(stderr, "kcache enrich: %s\n", why);
    return 0;
}

/* The background GET (CA5), last: it bumps the view's generation, which must exist by then. */
static int start_fetch(const kc__enrich_opts *o, kc__enrich_cache *c)
{
    if (o->fetch_rate <= 0)
        return 0;
    kc__enrich_fetch_opts fo = {.rate = o->fetch_rate,
                                .burst = o->fetch_burst,
                                .ttl_ms = o->fetch_ttl_ms,
                                .ns_store = kc_informer_store(kc_podmeta_ns_informer(c->pm)),
                                .generation = kc__enrich_cache_view(c).generation};
    if (!(c->fetch = kc__enrich_fetch_new(c->fclient, &fo)))
        return KC_ENOMEM;
    return c->health ? kc_health_add_metrics_source(c->health, kc__enrich_fetch_metrics, c->fetch)
                     : 0;
}

kc__enrich_cache *kc__enrich_cache_start(const kc__enrich_opts *o, char *(*extra_metrics)(void *),
                                         void *extra_ud, char *msg, size_t n)
{
    kc__enrich_cache *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(msg, n, "out of memory");
        return NULL;
    }
    if (connect_both(o, c, msg, n) || rbac_check(o, c, msg, n)) {
        kc__enrich_cache_free(c);
        return NULL;
    }
    kc_podmeta_opts po = {.node_name = o->node,
                          .all_nodes = o->all_nodes,
                          .deleted_grace_ms = o->deleted_grace_ms ? o->deleted_grace_ms : -1,
                          .not_seen_wait_ms = o->not_seen_wait_ms ? o->not_seen_wait_ms : -1,
                          .name_prefix = "enrich-"};
    kc_error err = KC_ERROR_INIT;
    int rc = kc_podmeta_new(c->client, &po, &c->pm, &err);
    if (!rc)
        rc = kc_podmeta_start(c->pm, &err);
    c->bare = o->unsynced_bare;
    c->sync_deadline_ms = now_ms() + o->sync_wait_ms;
    if (!rc)
        start_generation(c);
    if (!rc && o->health_listen)
        rc = start_health(c, o->health_listen, extra_metrics, extra_ud, &err);
    if (rc) {
        snprintf(msg, n, "%s", err.message ? err.message : kc_strerror(rc));
        kc_error_clear(&err);
        kc__enrich_cache_free(c);
        return NULL;
    }
    if (start_fetch(o, c)) {
        snprintf(msg, n, "background GET: out of memory");
        kc__enrich_cache_free(c);
        return NULL;
    }
    return c;
}

const char *kc__enrich_cache_health_url(kc__enrich_cache *c)
{
    return c && c->health ? kc_health_url(c->health) : NULL;
}

void kc__enrich_cache_stop_health(kc__enrich_cache *c)
{
    if (c) {
        kc_health_free(c->health);
        c->health = NULL;
    }
}

void kc__enrich_cache_free(kc__enrich_cache *c)
{
    if (!c)
        return;
    /* first the endpoint (it renders the fetcher's metrics), then the fetcher (its thread bumps
     * the view's generation and reads the namespace store), then the generation's thread and
     * page: each before what it uses */
    kc_health_free(c->health);
    c->health = NULL;
    kc__enrich_fetch_free(c->fetch);
    c->fetch = NULL;
    stop_generation(c);
    kc_podmeta_free(c->pm);
    if (c->hcache) {
        kc_cache_stop(c->hcache);
        kc_cache_free(c->hcache);
    }
    kc_client_free(c->client);
    kc_client_free(c->fclient);
    free(c);
}
