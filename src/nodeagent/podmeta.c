/*
 * podmeta.c — kc_podmeta, the node-scoped pod metadata cache (kcache/podmeta.h): its life cycle,
 * readiness, the event-loop fd, lookups, stats and metrics.
 *
 * What it is made of: a Pod informer limited to one node (fieldSelector spec.nodeName=<node>,
 * enrich-semantics CA1, RB2) and a Namespace informer, both decoding with a field projection
 * (kc_decode_opts.keep: kc__pm_pod_keep / NS_KEEP below); the Pod informer's transform turns each
 * projected Pod into its identity object carrying the pod's record (pm_rec.c), so the informer's
 * store and our entries share one small object per pod; a handler registration on each feeds the
 * writer (pm_writer.c), which publishes immutable snapshots (pm_index.c) to lock-free readers
 * (pm_hazard.c); and a keeper thread (pm_writer.c) that expires tombstones and reports readiness.
 *
 * A lookup (CA4: never network I/O) enters a hazard slot, finds the entry in the current
 * snapshot, takes references, leaves. Only when nothing is found (or the cache is not ready) does
 * it wait: on pm->cond, which every change broadcasts (kc__pm_signal), up to the query's bound —
 * never polling and never a GET (docs/node-agents.md says why: the watch event arrives within a
 * few milliseconds of the pod's creation).
 */
#include "nodeagent/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* The Pod projection: what an enricher reads (CA2, CI1) — of the metadata, what the formats emit
 * (uid, labels, annotations, ownerReferences) and the keys (name, namespace); spec.nodeName,
 * status.podIP and hostIP, and the containers' four strings. The informer's transform
 * (kc__pm_transform) then keeps them as the pod's record (pm_rec.c). Not kept: the rest of the
 * metadata (resourceVersion is the decoder's extracted field anyway) and status.podIPs. */
const char *const kc__pm_pod_keep[] = {"/metadata/name",
                                       "/metadata/namespace",
                                       "/metadata/uid",
                                       "/metadata/labels",
                                       "/metadata/annotations",
                                       "/metadata/ownerReferences",
                                       "/metadata/deletionTimestamp",
                                       "/spec/nodeName",
                                       "/status/podIP",
                                       "/status/hostIP",
                                       "/status/containerStatuses/*/name",
                                       "/status/containerStatuses/*/image",
                                       "/status/containerStatuses/*/imageID",
                                       "/status/containerStatuses/*/containerID",
                                       "/status/initContainerStatuses/*/name",
                                       "/status/initContainerStatuses/*/image",
                                       "/status/initContainerStatuses/*/imageID",
                                       "/status/initContainerStatuses/*/containerID",
                                       "/status/ephemeralContainerStatuses/*/name",
                                       "/status/ephemeralContainerStatuses/*/image",
                                       "/status/ephemeralContainerStatuses/*/imageID",
                                       "/status/ephemeralContainerStatuses/*/containerID",
                                       NULL};
static const char *const NS_KEEP[] = {"/metadata", NULL};
static const kc_gvr GVR_PODS = {"", "v1", "pods"};
static const kc_gvr GVR_NS = {"", "v1", "namespaces"};

static char *cat(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s", a, b);
    return s;
}

static int new_informers(kc_podmeta *pm, kc_error *err)
{
    kc_decode_opts pd = {.keep = kc__pm_pod_keep}, nd = {.keep = NS_KEEP};
    kc_informer_opts po = {.decode = &pd,
                           .decode_size = sizeof pd,
                           .name = pm->pod_inf_name,
                           .field_selector = pm->field_selector,
                           .max_staleness_ms = pm->o.max_staleness_ms,
                           .transform = kc__pm_transform,
                           .transform_ud = pm};
    int r = kc_informer_new(pm->client, &GVR_PODS, &po, &pm->pods, err);
    if (r)
        return r;
    kc_informer_handlers ph = kc__pm_pod_handlers, nh = kc__pm_ns_handlers;
    ph.ud = nh.ud = pm;
    r = kc_informer_add_handler(pm->pods, &ph, NULL, &pm->pods_reg, err);
    if (r || pm->o.no_namespaces)
        return r;
    kc_informer_opts no = {.decode = &nd,
                           .decode_size = sizeof nd,
                           .name = pm->ns_inf_name,
                           .max_staleness_ms = pm->o.max_staleness_ms};
    r = kc_informer_new(pm->client, &GVR_NS, &no, &pm->nsi, err);
    if (!r)
        r = kc_informer_add_handler(pm->nsi, &nh, NULL, &pm->ns_reg, err);
    return r;
}

/* Options: defaults, node name, copies. */
static int take_opts(kc_podmeta *pm, const kc_podmeta_opts *o, kc_error *err)
{
    pm->o = *o;
    const char *node = o->node_name && *o->node_name ? o->node_name : getenv("NODE_NAME");
    if (!o->all_nodes) {
        if (!node || !*node)
            return kc_error_set(err, KC_EINVAL,
                                "kc_podmeta_new: no node name (opts.node_name, $NODE_NAME)");
        if (!kc__is_dns1123_subdomain(node, strlen(node)))
            return kc_error_set(err, KC_EINVAL,
                                "kc_podmeta_new: node name \"%.64s\" is not a DNS subdomain", node);
        pm->node = kc__strdup(node);
        pm->field_selector = cat("spec.nodeName=", node);
        if (!pm->node || !pm->field_selector)
            return kc_error_set(err, KC_ENOMEM, "kc_podmeta_new: out of memory");
    }
    pm->prefix = kc__strdup(o->name_prefix ? o->name_prefix : "podmeta-");
    pm->pod_inf_name = pm->prefix ? cat(pm->prefix, "pods") : NULL;
    pm->ns_inf_name = pm->prefix ? cat(pm->prefix, "namespaces") : NULL;
    if (!pm->pod_inf_name || !pm->ns_inf_name)
        return kc_error_set(err, KC_ENOMEM, "kc_podmeta_new: out of memory");
    pm->o.node_name = pm->node;
    pm->o.name_prefix = pm->prefix;
    if (pm->o.deleted_grace_ms == 0)
        pm->o.deleted_grace_ms = 600000;
    if (pm->o.max_tombstones == 0)
        pm->o.max_tombstones = 4096;
    if (pm->o.not_seen_wait_ms == 0)
        pm->o.not_seen_wait_ms = 100;
    else if (pm->o.not_seen_wait_ms < 0)
        pm->o.not_seen_wait_ms = 0;
    if (pm->o.max_staleness_ms < 0)
        pm->o.max_staleness_ms = 0;
    return 0;
}

int(kc_podmeta_new)(kc_client *client, const kc_podmeta_opts *opts, size_t opts_size,
                    kc_podmeta **ret, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_podmeta_opts, err);
    if (!client || !ret)
        return kc_error_set(err, KC_EINVAL, "kc_podmeta_new: NULL argument");
    *ret = NULL;
    kc_podmeta *pm = calloc(1, sizeof *pm);
    if (!pm)
        return kc_error_set(err, KC_ENOMEM, "kc_podmeta_new: out of memory");
    pm->client = client;
    pm->efd = pm->wake = -1;
    pthread_mutex_init(&pm->wmu, NULL);
    pthread_mutex_init(&pm->mu, NULL);
    kc__cond_init_monotonic(&pm->cond);
    int r = take_opts(pm, opts, err);
    if (!r && !(pm->dict = kc__pm_dict_new()))
        r = kc_error_set(err, KC_ENOMEM, "kc_podmeta_new: out of memory");
    if (!r && kc__pm_publish_empty(pm))
        r = kc_error_set(err, KC_ENOMEM, "kc_podmeta_new: out of memory");
    if (!r) {
        pm->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        pm->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (pm->efd < 0 || pm->wake < 0)
            r = kc_error_set(err, KC_EIO, "kc_podmeta_new: eventfd failed");
    }
    if (!r)
        r = new_informers(pm, err);
    if (r) {
        kc_podmeta_free(pm);
        return r;
    }
    *ret = pm;
    return 0;
}

int kc_podmeta_start(kc_podmeta *pm, kc_error *err)
{
    if (!pm)
        return kc_error_set(err, KC_EINVAL, "kc_podmeta_start: NULL");
    bool was = false;
    if (!atomic_compare_exchange_strong(&pm->started, &was, true))
        return kc_error_set(err, KC_EINVAL, "kc_podmeta_start: already started");
    int r = kc_informer_start(pm->pods, err);
    if (!r && pm->nsi)
        r = kc_informer_start(pm->nsi, err);
    if (!r) {
        if (pthread_create(&pm->keeper, NULL, kc__pm_keeper, pm))
            r = kc_error_set(err, KC_ENOMEM, "kc_podmeta_start: no thread");
        else
            pm->keeper_running = true;
    }
    if (r)
        kc_podmeta_stop(pm);
    return r;
}

void kc_podmeta_stop(kc_podmeta *pm)
{
    if (!pm)
        return;
    kc_informer_stop(pm->pods);
    kc_informer_stop(pm->nsi);
    atomic_store(&pm->stopped, true);
    kc__pm_signal(pm);
}

void kc_podmeta_free(kc_podmeta *pm)
{
    if (!pm)
        return;
    kc_podmeta_stop(pm);
    if (pm->keeper_running) {
        atomic_store(&pm->quit, true);
        uint64_t one = 1;
        ssize_t w = write(pm->wake, &one, sizeof one);
        (void)w;
        pthread_join(pm->keeper, NULL);
    }
    kc_informer_free(pm->pods); /* joins the dispatchers: no writer after this */
    kc_informer_free(pm->nsi);
    kc__pm_writer_clear(pm);
    kc__pm_domain_clear(&pm->dom);
    kc__pm_dict_unref(pm->dict); /* entries readers hold keep it */
    if (pm->efd >= 0)
        close(pm->efd);
    if (pm->wake >= 0)
        close(pm->wake);
    pthread_mutex_destroy(&pm->wmu);
    pthread_mutex_destroy(&pm->mu);
    pthread_cond_destroy(&pm->cond);
    free(pm->node);
    free(pm->prefix);
    free(pm->pod_inf_name);
    free(pm->ns_inf_name);
    free(pm->field_selector);
    free(pm);
}

kc_informer *kc_podmeta_pod_informer(kc_podmeta *pm)
{
    return pm ? pm->pods : NULL;
}

kc_informer *kc_podmeta_ns_informer(kc_podmeta *pm)
{
    return pm ? pm->nsi : NULL;
}

/* ---- readiness and the fd ------------------------------------------------------------------- */

bool kc_podmeta_ready(kc_podmeta *pm)
{
    if (!pm || !atomic_load(&pm->pods_synced) || !kc_informer_ready(pm->pods))
        return false;
    return !pm->nsi || (atomic_load(&pm->ns_synced) && kc_informer_ready(pm->nsi));
}

int kc_podmeta_wait_ready(kc_podmeta *pm, int64_t timeout_ms, kc_error *err)
{
    if (!pm)
        return kc_error_set(err, KC_EINVAL, "kc_podmeta_wait_ready: NULL");
    uint64_t deadline = kc__deadline_after_ms(timeout_ms); /* < 0: never */
    pthread_mutex_lock(&pm->mu);
    int r = 0;
    while (!kc_podmeta_ready(pm)) {
        if (atomic_load(&pm->stopped)) {
            r = KC_ESTOPPED;
            break;
        }
        if (kc__cond_wait_until(&pm->cond, &pm->mu, deadline) == KC_ETIMEOUT &&
            !kc_podmeta_ready(pm)) {
            r = KC_ETIMEOUT;
            break;
        }
    }
    pthread_mutex_unlock(&pm->mu);
    if (r == KC_ESTOPPED)
        return kc_error_set(err, r, "podmeta: stopped before ready");
    if (r)
        return kc_error_set(err, r, "podmeta: not ready after %lld ms (pods %s, namespaces %s)",
                            (long long)timeout_ms,
                            atomic_load(&pm->pods_synced) ? "synced" : "not synced",
                            !pm->nsi                      ? "off"
                            : atomic_load(&pm->ns_synced) ? "synced"
                                                          : "not synced");
    return 0;
}

int kc_podmeta_fd(kc_podmeta *pm)
{
    return pm ? pm->efd : KC_EINVAL;
}

int64_t kc_podmeta_fd_drain(kc_podmeta *pm)
{
    if (!pm)
        return KC_EINVAL;
    uint64_t v = 0;
    if (read(pm->efd, &v, sizeof v) != (ssize_t)sizeof v)
        return 0;
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}
