/*
 * demo_shard_watch.c — what `kcache demo shards`' parent sees: its own informers on the demo
 * namespace's Leases and Pods. Each range Lease's holder changes are kept as a history by
 * resourceVersion (the embedded server's resourceVersions are one counter over all resources), and
 * so is each Pod write that changed its owner annotation; a write by a replica that was not the
 * holder of the Pod's range at the write's resourceVersion is stale (shards_stale_writes). During a
 * network cut (--netns) it also notes each range's first acquisition by another replica, from the
 * Lease's acquireTime.
 */

#include "demo_shards_ctx.h"

#include "kcache/shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kc_gvr PODS = {"", "v1", "pods"};
static const kc_gvr LEASES = {"coordination.k8s.io", "v1", "leases"};

/* "p<pass>-replica-<i>" → i for this pass; -1 for "", -2 otherwise. */
int shards_who_of(const shards_ctx *c, const char *ident)
{
    if (!ident || !*ident)
        return -1;
    unsigned p, i;
    char tail;
    if (sscanf(ident, "p%u-replica-%u%c", &p, &i, &tail) == 2 && p == c->pass && i < c->o->replicas)
        return (int)i;
    return -2;
}

void shards_push(hist_ev **v, size_t *n, size_t *cap, hist_ev e)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 1024;
        hist_ev *nv = realloc(*v, nc * sizeof *nv);
        if (!nv)
            return; /* the check then sees fewer events: reported as such by the caller */
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = e;
}

static uint64_t rv_of(const kc_obj *o)
{
    const char *rv = kc_obj_resource_version(o);
    return rv ? strtoull(rv, NULL, 10) : 0;
}

/* ---- the parent's informers ---------------------------------------------------------------- */

/* A Lease's spec.acquireTime (MicroTime, wall clock) on CLOCK_MONOTONIC; now when absent. */
static uint64_t acquired_mono(const kc_obj *lease)
{
    char *t = NULL;
    uint64_t mono = now_ns();
    struct tm tm = {0};
    const char *rest;
    if (kc_obj_get_string(lease, "/spec/acquireTime", &t, NULL, NULL) == 0 && t &&
        (rest = strptime(t, "%Y-%m-%dT%H:%M:%S", &tm)) != NULL) {
        double frac = *rest == '.' ? strtod(rest, NULL) : 0;
        struct timespec rt;
        clock_gettime(CLOCK_REALTIME, &rt);
        double wall = (double)timegm(&tm) + frac;
        double ago = (double)rt.tv_sec + (double)rt.tv_nsec / 1e9 - wall; /* s; < 0: rounding */
        if (ago * 1e9 < (double)mono)
            mono = (uint64_t)((double)mono - ago * 1e9);
    }
    free(t);
    return mono;
}

static void lease_seen(void *ud, kc_obj *obj)
{
    shards_ctx *c = ud;
    const char *name = kc_obj_name(obj);
    unsigned r;
    char tail;
    if (sscanf(name, SHARDS_PREFIX "-range-%u%c", &r, &tail) != 1 || r >= c->o->ranges)
        return;
    char *holder = NULL;
    kc_obj_get_string(obj, "/spec/holderIdentity", &holder, NULL, NULL);
    int who = shards_who_of(c, holder);
    free(holder);
    pthread_mutex_lock(&c->mu);
    if (c->holder[r] != who)
        shards_push(&c->leases, &c->n_leases, &c->cap_leases, (hist_ev){rv_of(obj), r, who});
    if (c->cut_t && who >= 0 && who != c->cut_who && c->holder[r] != who && !c->first_acq[r])
        c->first_acq[r] = acquired_mono(obj); /* only then: renewals are most Lease events */
    c->holder[r] = who;
    pthread_mutex_unlock(&c->mu);
}

static void lease_add(void *ud, kc_obj *obj)
{
    lease_seen(ud, obj);
}

static void lease_update(void *ud, kc_obj *old_obj, kc_obj *new_obj)
{
    (void)old_obj;
    lease_seen(ud, new_obj);
}

char *shards_owner_of(const kc_obj *pod)
{
    char *s = NULL;
    kc_obj_get_string(pod, "/metadata/annotations/demo.kcache.io~1owner", &s, NULL, NULL);
    return s;
}

uint32_t shards_range_of(const shards_ctx *c, const kc_obj *pod)
{
    const char *uid = kc_obj_uid(pod);
    uint64_t h = kc_shard_hash(uid, uid ? strlen(uid) : 0);
    return (uint32_t)(((unsigned __int128)h * c->o->ranges) >> 64);
}

static void pod_update(void *ud, kc_obj *old_obj, kc_obj *new_obj)
{
    shards_ctx *c = ud;
    char *a = shards_owner_of(old_obj), *b = shards_owner_of(new_obj);
    if (b && (!a || strcmp(a, b) != 0)) {
        int who = shards_who_of(c, b);
        pthread_mutex_lock(&c->mu);
        shards_push(&c->writes, &c->n_writes, &c->cap_writes,
                    (hist_ev){rv_of(new_obj), shards_range_of(c, new_obj), who});
        pthread_mutex_unlock(&c->mu);
    }
    free(a);
    free(b);
}

int shards_watch_start(shards_ctx *c, kc_error *err)
{
    int rc = kc_cache_new(c->client, NULL, &c->watch, err);
    kc_informer *li = NULL;
    kc_informer_opts lo = {.ns = SHARDS_NS}, po = {.ns = SHARDS_NS};
    kc_informer_handlers lh = {.on_add = lease_add, .on_update = lease_update, .ud = c};
    kc_informer_handlers ph = {.on_update = pod_update, .ud = c};
    if (rc == 0)
        rc = kc_cache_get_informer(c->watch, &LEASES, &lo, &li, err);
    if (rc == 0)
        rc = kc_cache_get_informer(c->watch, &PODS, &po, &c->pods_inf, err);
    if (rc == 0)
        rc = kc_informer_add_handler(li, &lh, NULL, NULL, err);
    if (rc == 0)
        rc = kc_informer_add_handler(c->pods_inf, &ph, NULL, NULL, err);
    if (rc == 0)
        rc = kc_cache_wait_synced(c->watch, 120000, err);
    return rc;
}

/* Writes the server accepted from a replica that did not hold the Pod's range Lease then. */
unsigned shards_stale_writes(shards_ctx *c)
{
    unsigned bad = 0;
    pthread_mutex_lock(&c->mu);
    for (size_t w = 0; w < c->n_writes; w++) {
        const hist_ev *e = &c->writes[w];
        if (e->who < 0)
            continue; /* another pass's replica (the fallback pass starts from pass 1's owners) */
        int holder = -1;
        uint64_t best = 0;
        for (size_t l = 0; l < c->n_leases; l++)
            if (c->leases[l].range == e->range && c->leases[l].rv < e->rv &&
                c->leases[l].rv >= best) {
                best = c->leases[l].rv;
                holder = c->leases[l].who;
            }
        bad += holder != e->who;
    }
    pthread_mutex_unlock(&c->mu);
    return bad;
}
