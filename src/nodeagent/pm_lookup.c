/*
 * pm_lookup.c — kc_podmeta_lookup, the hot path, and the stats and metrics that count it.
 *
 * The lock-free part (try_lookup) is: claim a hazard slot and protect the current snapshots
 * (pm_hazard.c), hash the query's key and probe one table (pm_index.c), take a reference on the
 * pod entry and on its namespace entry, count the outcome in the slot, release the slot. No
 * allocation, no JSON, no lock, no system call (enrich-semantics CA4).
 *
 * Only a miss (or a cache that is not ready yet) waits, up to the query's bound: the lookup reads
 * the change generation under pm->mu, retries lock-free, and sleeps on pm->cond until the next
 * change (any pod or namespace event, a sync) or the deadline. The writer broadcasts after
 * publishing, so a pod created during the wait is returned as soon as its watch event is applied.
 */
#include "nodeagent/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum outcome { O_HIT, O_TOMB, O_MISS };

static enum outcome try_lookup(kc_podmeta *pm, const kc_podmeta_query *q, kc_podmeta_result *res,
                               bool waited)
{
    kc__pm_psnap *ps;
    kc__pm_nsnap *ns;
    kc__pm_slot *slot = kc__pm_enter(&pm->dom, &ps, &ns);
    int cont = -1;
    kc_podmeta_pod *p = kc__pm_psnap_find(ps, q, &cont);
    enum outcome o = O_MISS;
    if (p) {
        res->pod = kc_podmeta_pod_ref(p);
        res->ns = kc_podmeta_ns_ref(kc__pm_nsnap_find(ns, kc_obj_namespace(p->obj)));
        res->container = cont;
        o = p->deleted ? O_TOMB : O_HIT;
    }
    if (!waited) /* a lookup counts once, at its first try */
        atomic_fetch_add_explicit(&slot->lookups, 1, memory_order_relaxed);
    if (o == O_HIT)
        atomic_fetch_add_explicit(&slot->hits, 1, memory_order_relaxed);
    else if (o == O_TOMB)
        atomic_fetch_add_explicit(&slot->tombstone_hits, 1, memory_order_relaxed);
    kc__pm_leave(slot);
    return o;
}

static bool has_key(const kc_podmeta_query *q)
{
    return (q->container_id && *q->container_id) || (q->uid && *q->uid) ||
           (q->ns && *q->ns && q->name && *q->name);
}

int(kc_podmeta_lookup)(kc_podmeta *pm, const kc_podmeta_query *q, size_t q_size,
                       kc_podmeta_result *ret, size_t ret_size, kc_error *err)
{
    if (ret && ret_size == sizeof *ret)
        *ret = (kc_podmeta_result){NULL, NULL, -1};
    if (!pm || !q || !ret)
        return kc_error_set(err, KC_EINVAL, "kc_podmeta_lookup: NULL argument");
    if (ret_size != sizeof *ret) {
        if (ret_size > sizeof *ret)
            memset(ret, 0, ret_size);
        return kc_error_set(err, KC_EUNSUPPORTED, "kc_podmeta_lookup: result of another header");
    }
    kc_podmeta_query qc;
    if (kc__opts_copy(&qc, sizeof qc, q, q_size, "kc_podmeta_query", err))
        return KC_EUNSUPPORTED;
    bool ns_only = qc.ns && *qc.ns && !(qc.name && *qc.name);
    bool name_only = qc.name && *qc.name && !(qc.ns && *qc.ns);
    if (ns_only || name_only || !has_key(&qc))
        return kc_error_set(err, KC_EINVAL,
                            "kc_podmeta_lookup: no key (container_id, uid, or ns with name)");
    kc_podmeta_result res = {NULL, NULL, -1};
    enum outcome o = try_lookup(pm, &qc, &res, false);
    int64_t wait = qc.wait_ms == 0 ? pm->o.not_seen_wait_ms : qc.wait_ms < 0 ? 0 : qc.wait_ms;
    if (o == O_MISS && wait > 0) {
        atomic_fetch_add(&pm->fb_waits, 1);
        uint64_t deadline = kc__deadline_after_ms(wait);
        pthread_mutex_lock(&pm->mu);
        for (;;) {
            uint64_t g = pm->gen;
            pthread_mutex_unlock(&pm->mu);
            o = try_lookup(pm, &qc, &res, true);
            pthread_mutex_lock(&pm->mu);
            if (o != O_MISS)
                break;
            if (pm->gen == g && kc__cond_wait_until(&pm->cond, &pm->mu, deadline) == KC_ETIMEOUT)
                break;
        }
        pthread_mutex_unlock(&pm->mu);
    }
    if (o == O_MISS) {
        atomic_fetch_add(&pm->fb_misses, 1);
        return kc_error_set(err, KC_ENOTFOUND,
                            "podmeta: no pod with container_id \"%.80s\" uid \"%.64s\" "
                            "ns/name \"%.64s/%.64s\" (waited %lld ms)",
                            qc.container_id ? qc.container_id : "", qc.uid ? qc.uid : "",
                            qc.ns ? qc.ns : "", qc.name ? qc.name : "", (long long)wait);
    }
    *ret = res;
    return 0;
}

void(kc_podmeta_result_clear)(kc_podmeta_result *res, size_t res_size)
{
    if (!res || res_size < sizeof *res)
        return;
    kc_podmeta_pod_unref(res->pod);
    kc_podmeta_ns_unref(res->ns);
    *res = (kc_podmeta_result){NULL, NULL, -1};
}

/* ---- stats and metrics -------------------------------------------------------------------- */

void(kc_podmeta_get_stats)(kc_podmeta *pm, kc_podmeta_stats *ret, size_t ret_size)
{
    kc_podmeta_stats s = {0};
    if (pm) {
        s.pods = atomic_load(&pm->st_pods);
        s.namespaces = atomic_load(&pm->st_ns);
        s.tombstones = atomic_load(&pm->st_tombs);
        s.tombstones_evicted = atomic_load(&pm->st_evicted);
        s.heap_bytes = atomic_load(&pm->st_heap);
        for (int i = 0; i < KC__PM_SLOTS; i++) {
            const kc__pm_slot *sl = &pm->dom.slots[i];
            s.lookups += atomic_load_explicit(&sl->lookups, memory_order_relaxed);
            s.hits += atomic_load_explicit(&sl->hits, memory_order_relaxed);
            s.tombstone_hits += atomic_load_explicit(&sl->tombstone_hits, memory_order_relaxed);
        }
        s.misses = atomic_load(&pm->fb_misses);
        s.waits = atomic_load(&pm->fb_waits);
    }
    kc__result_copy(ret, ret_size, &s, sizeof s);
}

char *kc_podmeta_metrics_render(void *ud)
{
    kc_podmeta *pm = ud;
    if (!pm)
        return NULL;
    kc_podmeta_stats s;
    kc_podmeta_get_stats(pm, &s);
    kc__buf b;
    kc__buf_init(&b, 0);
    int r = kc__buf_printf(
        &b,
        "# HELP kcache_podmeta_pods Live pods in the node agent cache.\n"
        "# TYPE kcache_podmeta_pods gauge\nkcache_podmeta_pods %zu\n"
        "# HELP kcache_podmeta_namespaces Namespaces in the node agent cache.\n"
        "# TYPE kcache_podmeta_namespaces gauge\nkcache_podmeta_namespaces %zu\n"
        "# HELP kcache_podmeta_tombstones Deleted pods kept for their grace period.\n"
        "# TYPE kcache_podmeta_tombstones gauge\nkcache_podmeta_tombstones %zu\n"
        "# HELP kcache_podmeta_tombstones_evicted_total Tombstones evicted by the count bound.\n"
        "# TYPE kcache_podmeta_tombstones_evicted_total counter\n"
        "kcache_podmeta_tombstones_evicted_total %zu\n"
        "# HELP kcache_podmeta_heap_bytes Heap held by entries, objects and indexes.\n"
        "# TYPE kcache_podmeta_heap_bytes gauge\nkcache_podmeta_heap_bytes %zu\n"
        "# HELP kcache_podmeta_lookups_total Lookups by result.\n"
        "# TYPE kcache_podmeta_lookups_total counter\n"
        "kcache_podmeta_lookups_total{result=\"hit\"} %llu\n"
        "kcache_podmeta_lookups_total{result=\"tombstone\"} %llu\n"
        "kcache_podmeta_lookups_total{result=\"miss\"} %llu\n"
        "# HELP kcache_podmeta_lookup_waits_total Lookups that waited for a pod not yet seen.\n"
        "# TYPE kcache_podmeta_lookup_waits_total counter\nkcache_podmeta_lookup_waits_total "
        "%llu\n"
        "# HELP kcache_podmeta_ready Whether both informers are synced and fresh.\n"
        "# TYPE kcache_podmeta_ready gauge\nkcache_podmeta_ready %d\n",
        s.pods, s.namespaces, s.tombstones, s.tombstones_evicted, s.heap_bytes,
        (unsigned long long)s.hits, (unsigned long long)s.tombstone_hits,
        (unsigned long long)s.misses, (unsigned long long)s.waits, kc_podmeta_ready(pm) ? 1 : 0);
    if (r) {
        kc__buf_free(&b);
        return NULL;
    }
    return kc__buf_steal(&b, NULL);
}
