/*
 * check.c — snapshots of the server, the stores and the shadows; the barrier; check (a).
 *
 * A snapshot is the sorted (key, uid, RV) list of every ConfigMap: from a live LIST of the server
 * (all namespaces), from an informer's store, or from a handler shadow. Two snapshots are equal
 * when they hold the same keys with the same UIDs and RVs.
 *
 * The barrier is one ConfigMap (soak/soak-barrier) written through the plain client: once a
 * store holds it at the RV the write returned, the store has applied every event before it —
 * watch events arrive in RV order, and a relist is a consistent read at or after it. Waiting for
 * it is event-driven: the shadow handler of the store's informer signals every change. The
 * barrier compares UID and RV for equality, never with "≥", so a store still holding RVs of an
 * earlier numbering (before a restore) does not pass it early.
 *
 * Final checks, after the writers stopped: faults off; barrier; (a) each store equals a live
 * LIST taken then (nothing writes any more); (d) once each handler registration has been handed
 * everything the store shows, its shadow equals the store.
 */
#include "soak.h"

#include <stdlib.h>
#include <string.h>

typedef struct vec {
    soak_item *v;
    size_t n, cap;
} vec;

static int vec_add(vec *x, const kc_obj *o)
{
    if (x->n == x->cap) {
        size_t nc = x->cap ? x->cap * 2 : 256;
        soak_item *g = realloc(x->v, nc * sizeof(*g));
        if (!g)
            return KC_ENOMEM;
        x->v = g;
        x->cap = nc;
    }
    soak_item *it = &x->v[x->n++];
    snprintf(it->key, sizeof(it->key), "%s/%s", kc_obj_namespace(o), kc_obj_name(o));
    snprintf(it->uid, sizeof(it->uid), "%s", kc_obj_uid(o));
    snprintf(it->rv, sizeof(it->rv), "%s", kc_obj_resource_version(o));
    return 0;
}

static int cmp_item(const void *a, const void *b)
{
    return strcmp(((const soak_item *)a)->key, ((const soak_item *)b)->key);
}

void soak_snap_sort(soak_snap *sn)
{
    if (sn->n > 1)
        qsort(sn->items, sn->n, sizeof(*sn->items), cmp_item);
}

void soak_snap_free(soak_snap *sn)
{
    free(sn->items);
    sn->items = NULL;
    sn->n = 0;
}

static int on_item(void *ud, kc_obj *item)
{
    int rc = vec_add(ud, item);
    kc_obj_unref(item);
    return rc;
}

int soak_snap_server(soak *s, soak_snap *ret)
{
    int rc = KC_EIO;
    for (int tries = 0; tries < 100; tries++) {
        vec x = {0};
        kc_list_opts lo = {.limit = 100};
        rc = kc_client_list_all(s->client, &soak_cm, NULL, &lo, NULL, on_item, &x, NULL);
        if (rc == 0) {
            ret->items = x.v;
            ret->n = x.n;
            soak_snap_sort(ret);
            return 0;
        }
        free(x.v);
    }
    return rc;
}

int soak_snap_store(kc_store *st, soak_snap *ret)
{
    kc_obj **objs = NULL;
    size_t n = 0;
    int rc = kc_store_list(st, &objs, &n, NULL);
    if (rc < 0)
        return rc;
    vec x = {0};
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = vec_add(&x, objs[i]);
    kc_obj_array_free(objs, n);
    if (rc < 0) {
        free(x.v);
        return rc;
    }
    ret->items = x.v;
    ret->n = x.n;
    soak_snap_sort(ret);
    return 0;
}

const soak_item *soak_snap_find(const soak_snap *sn, const char *key)
{
    soak_item k;
    snprintf(k.key, sizeof(k.key), "%s", key);
    return sn->n ? bsearch(&k, sn->items, sn->n, sizeof(k), cmp_item) : NULL;
}

size_t soak_snap_diff(soak *s, const char *check, const soak_snap *a, const char *la,
                      const soak_snap *b, const char *lb)
{
    size_t i = 0, j = 0, d = 0;
    while (i < a->n || j < b->n) {
        int c = i == a->n ? 1 : j == b->n ? -1 : strcmp(a->items[i].key, b->items[j].key);
        if (c < 0) {
            soak_violation(s, check, "%s has %s (uid %s rv %s), %s does not", la, a->items[i].key,
                           a->items[i].uid, a->items[i].rv, lb);
            i++;
        } else if (c > 0) {
            soak_violation(s, check, "%s has %s (uid %s rv %s), %s does not", lb, b->items[j].key,
                           b->items[j].uid, b->items[j].rv, la);
            j++;
        } else {
            const soak_item *x = &a->items[i++], *y = &b->items[j++];
            if (!strcmp(x->uid, y->uid) && !strcmp(x->rv, y->rv))
                continue;
            soak_violation(s, check, "%s: %s has uid %s rv %s, %s has uid %s rv %s", x->key, la,
                           x->uid, x->rv, lb, y->uid, y->rv);
        }
        d++;
    }
    return d;
}

/* ---- barrier --------------------------------------------------------------------------------- */

int soak_barrier_write(soak *s, char *ret_uid, char *ret_rv)
{
    static const char create[] = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
                                 "\"name\":\"" SOAK_BARRIER "\",\"namespace\":\"" SOAK_NS "\"},"
                                 "\"data\":{\"n\":\"0\"}}";
    int rc = KC_EIO;
    for (int tries = 0; tries < 100; tries++) {
        char patch[64];
        int len = snprintf(patch, sizeof(patch), "{\"data\":{\"n\":\"%llu\"}}",
                           (unsigned long long)soak_now_ns());
        kc_obj *obj = NULL;
        rc = kc_client_patch(s->client, &soak_cm, SOAK_NS, SOAK_BARRIER, KC_PATCH_MERGE, patch,
                             (size_t)len, NULL, &obj, NULL);
        if (rc == KC_ENOTFOUND)
            rc = kc_client_create(s->client, &soak_cm, SOAK_NS, create, sizeof(create) - 1, NULL,
                                  &obj, NULL);
        if (rc == 0) {
            snprintf(ret_uid, SOAK_UID_MAX, "%s", kc_obj_uid(obj));
            snprintf(ret_rv, SOAK_RV_MAX, "%s", kc_obj_resource_version(obj));
            kc_obj_unref(obj);
            return 0;
        }
    }
    return rc;
}

static bool barrier_seen(soak_side *sd, const char *uid, const char *rv)
{
    kc_obj *o = kc_store_get(sd->store, SOAK_NS, SOAK_BARRIER);
    bool ok = o && !strcmp(kc_obj_uid(o), uid) && !strcmp(kc_obj_resource_version(o), rv);
    kc_obj_unref(o);
    return ok;
}

int soak_barrier_wait(soak *s, soak_side *sd, const char *uid, const char *rv, int64_t timeout_ms)
{
    uint64_t deadline = soak_now_ns() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        uint64_t seen = soak_shadow_changes(sd->shadow); /* before looking: no lost wake-up */
        if (barrier_seen(sd, uid, rv))
            return 0;
        if (soak_shadow_wait_change(sd->shadow, seen, deadline) < 0)
            return barrier_seen(sd, uid, rv) ? 0 : KC_ETIMEOUT;
    }
}

/* ---- final checks ---------------------------------------------------------------------------- */

static void final_side(soak *s, soak_side *sd, const soak_snap *server)
{
    soak_snap st = {0}, sh = {0};
    char label[32];
    snprintf(label, sizeof(label), "%s cache", sd->name);
    if (soak_snap_store(sd->store, &st) < 0) {
        soak_violation(s, "a-cache", "%s: cannot list the store", sd->name);
        atomic_fetch_add(&s->c.v_cache, 1);
        return;
    }
    atomic_fetch_add(&s->c.v_cache, soak_snap_diff(s, "a-cache", server, "server", &st, label));
    int rc = kc_informer_reg_wait_idle(sd->reg, 30000, NULL);
    if (rc < 0) {
        soak_violation(s, "d-handler", "%s: handler not idle after 30 s: %s", sd->name,
                       kc_errno_name(rc));
        atomic_fetch_add(&s->c.v_handler, 1);
    } else if (soak_shadow_snap(sd->shadow, &sh) == 0) {
        char shl[32];
        snprintf(shl, sizeof(shl), "%s handler", sd->name);
        atomic_fetch_add(&s->c.v_handler, soak_snap_diff(s, "d-handler", &st, label, &sh, shl));
    }
    soak_snap_free(&sh);
    soak_snap_free(&st);
}

void soak_final_checks(soak *s)
{
    kc_server_faults none = {0};
    if (s->o.plant == PLANT_NO_QUIESCE) { /* planted: compare while events are still in flight */
        none.watch_delay_min_ms = 1000;
        none.watch_delay_max_ms = 1100;
    }
    kc_server_set_faults(s->srv, &none);
    char uid[SOAK_UID_MAX], rv[SOAK_RV_MAX];
    int rc = soak_barrier_write(s, uid, rv);
    if (rc < 0) {
        soak_violation(s, "setup", "final barrier write failed: %s", kc_errno_name(rc));
        atomic_fetch_add(&s->c.v_catch_up, 1);
        return;
    }
    for (int i = 0; i < SOAK_SIDES && s->o.plant != PLANT_NO_QUIESCE; i++) {
        soak_side *sd = &s->side[i];
        if (soak_barrier_wait(s, sd, uid, rv, 60000) < 0 ||
            kc_informer_wait_synced(sd->inf, 10000, NULL) < 0) {
            atomic_fetch_add(&s->c.v_catch_up, 1);
            soak_violation(s, "a-cache",
                           "%s: the cache did not observe the final write (rv %s) "
                           "within 60 s",
                           sd->name, rv);
        }
    }
    soak_snap server = {0};
    if ((rc = soak_snap_server(s, &server)) < 0) {
        soak_violation(s, "setup", "final LIST failed: %s", kc_errno_name(rc));
        atomic_fetch_add(&s->c.v_cache, 1);
        return;
    }
    for (int i = 0; i < SOAK_SIDES; i++)
        final_side(s, &s->side[i], &server);
    soak_snap_free(&server);
}
