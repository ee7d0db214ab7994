/*
 * coordinator/coord_poll.c — one poll of the shard coordinator (spec A9–A12, L3–L5, L9, L12 a).
 *
 *   1. Renew the member Lease (one tryAcquireOrRenew attempt, A9).
 *   2. Observe, members first and then ranges (a graceful leaver releases its ranges before its
 *      member Lease, so a poll that sees the member gone also sees its ranges free), from the
 *      coordinator's informer on the namespace's Leases. For a range, the newer (by RV) of the
 *      informer's object and the range lock's own last response is used, so our own writes are
 *      never hidden by a lagging watch. A changed RV moves the local observed time (L5); a range
 *      we do not hold is also fed to its lock (kc__lease_lock_observe), so a later acquire judges
 *      expiry from the watch's first sight of the record, not from its own first Get.
 *   3. Step the assignment machine (shard_assign.c) and apply its acts through the range locks:
 *      ACQUIRE / RENEW = one tryAcquireOrRenew (RV precondition, L4), after which the gate holds
 *      the range until valid_until = t_send + RD (L12 a); a renew answered "someone else holds
 *      it" loses the range at once; DRAIN = renew, mark draining in the gate, and release at once
 *      when nothing is in flight; RELEASE (A12): gate drop, on_lost (the caller stops its
 *      informer), then the Lease release (L9); LOSE: gate drop, on_lost. A RENEW that lifts a
 *      fence which had passed while the gate refused keys of the range (a late renew: the
 *      machine or the API server was slow) calls the internal listeners' resumed, which
 *      re-enqueue the range's keys: the range did not move, so no gain would (P6).
 */
#include "coordinator/internal.h"
#include "json/decode_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t obj_rv(kc_obj *o)
{
    return o ? kc_obj_rv_int(o) : 0;
}

/* Fill ob from obj (the Lease) when its RV differs from the last one seen. */
static void observe_obj(kc__coord_obs *ob, kc_obj *obj, uint64_t now)
{
    if (!obj) {
        if (ob->exists || !ob->seen)
            ob->observed_ms = now;
        ob->exists = false;
        ob->seen = true;
        ob->holder[0] = '\0';
        return;
    }
    uint64_t rv = obj_rv(obj);
    if (ob->seen && ob->exists && ob->rv == rv)
        return;
    ob->seen = ob->exists = true;
    ob->rv = rv;
    ob->observed_ms = now;
    char *h = NULL;
    ob->holder[0] = '\0';
    if (kc__obj_get_cstring(obj, "/spec/holderIdentity", &h, true, NULL) == 0 && h)
        snprintf(ob->holder, sizeof ob->holder, "%s", h);
    free(h);
    char *kv = NULL;
    ob->k = 0;
    if (kc__obj_get_cstring(obj, "/metadata/annotations/kcache.io~1shard-ranges", &kv, false,
                            NULL) == 0 &&
        kv)
        ob->k = (uint32_t)strtoul(kv, NULL, 10);
    free(kv);
}

static kc__coord_obs *member_slot(kc_shard_coordinator *c, const char *name)
{
    for (size_t i = 0; i < c->n_mobs; i++)
        if (!strcmp(c->mobs[i].name, name))
            return &c->mobs[i];
    if (c->n_mobs >= KC__COORD_MAX_MEMBERS)
        return NULL;
    kc__coord_obs *m = &c->mobs[c->n_mobs];
    memset(m, 0, sizeof(*m));
    m->name = kc__strdup(name);
    if (!m->name)
        return NULL;
    c->n_mobs++;
    return m;
}

/* Member Leases of the namespace: <prefix>-member-*; one that disappeared is dropped. */
static void observe_members(kc_shard_coordinator *c, kc_store *st, uint64_t now)
{
    kc_obj **objs = NULL;
    size_t n = 0;
    if (kc_store_list_by_namespace(st, c->ns, &objs, &n, NULL) < 0)
        return;
    size_t plen = strlen(c->member_prefix);
    for (size_t i = 0; i < c->n_mobs; i++)
        c->mobs[i].exists = false;
    for (size_t i = 0; i < n; i++) {
        const char *name = kc_obj_name(objs[i]);
        if (strncmp(name, c->member_prefix, plen) != 0)
            continue;
        kc__coord_obs *m = member_slot(c, name);
        if (!m)
            continue;
        m->exists = true; /* observe_obj keeps the time when the RV did not move */
        observe_obj(m, objs[i], now);
    }
    kc_obj_array_free(objs, n);
    size_t w = 0;
    for (size_t i = 0; i < c->n_mobs; i++) {
        if (c->mobs[i].exists)
            c->mobs[w++] = c->mobs[i];
        else
            free(c->mobs[i].name);
    }
    c->n_mobs = w;
}

static void observe_ranges(kc_shard_coordinator *c, kc_store *st, uint64_t now)
{
    for (uint32_t r = 0; r < c->k; r++) {
        char name[300];
        snprintf(name, sizeof name, "%s-range-%u", c->prefix, r);
        kc_obj *w = kc_store_get(st, c->ns, name); /* new reference or NULL */
        if (w && kc__shard_assign_mine(c->a, r) == KC__SHARD_NOT_HELD)
            (void)kc__lease_lock_observe(c->rl[r], w, NULL);
        kc_obj *own = kc__lease_lock_object(c->rl[r]); /* after observe: it may replace it */
        kc_obj *use = own && obj_rv(own) >= obj_rv(w) ? own : w;
        observe_obj(&c->robs[r], use, now);
        kc_obj_unref(w);
    }
}

void kc__coord_notify(kc_shard_coordinator *c, uint32_t r, kc__coord_event ev)
{
    kc_shard_range b;
    kc_shard_range_split(c->k, r, &b);
    pthread_mutex_lock(&c->cb_mu);
    for (size_t i = 0; i < c->n_lis; i++) {
        kc_shard_range_fn fn = ev == KC__COORD_GAINED ? c->lis[i].gained
                               : ev == KC__COORD_LOST ? c->lis[i].lost
                                                      : c->lis[i].resumed;
        if (fn)
            fn(c->lis[i].ud, r, &b);
    }
    pthread_mutex_unlock(&c->cb_mu);
}

static void lose(kc_shard_coordinator *c, uint32_t r)
{
    kc__shard_gate_drop(c->g, r);
    kc__coord_notify(c, r, KC__COORD_LOST);
    kc__shard_assign_report(c->a, r, KC__SHARD_ACT_LOSE, true);
    atomic_fetch_add(&c->n_lost, 1);
    KC__LOG_WARN("controller", "shard coordinator %s: lost range %u", c->identity, r);
}

static void release(kc_shard_coordinator *c, uint32_t r)
{
    kc__shard_gate_drop(c->g, r);
    kc__coord_notify(c, r, KC__COORD_LOST); /* the caller stops the range's informer (A12 step 2) */
    kc_error err = KC_ERROR_INIT;
    if (kc__lease_lock_release(c->rl[r], &err) < 0) { /* it expires after LD anyway (A12) */
        atomic_fetch_add(&c->n_write_errors, 1);
        KC__LOG_WARN("controller", "shard coordinator %s: release of range %u failed: %s",
                     c->identity, r, err.message ? err.message : "");
    }
    kc_error_clear(&err);
    kc__shard_assign_report(c->a, r, KC__SHARD_ACT_RELEASE, true);
    atomic_fetch_add(&c->n_released, 1);
}

/* One tryAcquireOrRenew of range r: 1 held (gate extended), 0 someone else holds it, < 0 error.
 * *resumed: the extended fence had passed and the gate refused keys of r meanwhile. */
static int try_range(kc_shard_coordinator *c, uint32_t r, bool *resumed)
{
    int rc = kc__lease_lock_try(c->rl[r], NULL);
    *resumed = false;
    if (rc == 1)
        *resumed =
            kc__shard_gate_hold(c->g, r, kc__lease_lock_valid_until(c->rl[r]) / KC__NS_PER_MS);
    else if (rc < 0)
        atomic_fetch_add(&c->n_write_errors, 1);
    return rc;
}

static void apply(kc_shard_coordinator *c, uint32_t r, kc__shard_act act)
{
    int rc;
    bool resumed;
    switch (act) {
    case KC__SHARD_ACT_ACQUIRE:
        rc = try_range(c, r, &resumed); /* a new hold: gained re-enqueues anyway */
        kc__shard_assign_report(c->a, r, act, rc == 1);
        if (rc == 1) {
            atomic_fetch_add(&c->n_acquired, 1);
            kc__coord_notify(c, r, KC__COORD_GAINED);
        }
        break;
    case KC__SHARD_ACT_RENEW:
    case KC__SHARD_ACT_DRAIN:
        rc = try_range(c, r, &resumed);
        if (rc == 0) {
            lose(c, r);
            break;
        }
        if (resumed && act == KC__SHARD_ACT_RENEW) { /* a draining range hands its keys over */
            atomic_fetch_add(&c->n_resumed, 1);
            kc__coord_notify(c, r, KC__COORD_RESUMED);
        }
        if (act == KC__SHARD_ACT_DRAIN) {
            kc__shard_gate_drain(c->g, r);
            if (kc__shard_gate_inflight(c->g, r) == 0)
                release(c, r);
        }
        break;
    case KC__SHARD_ACT_RELEASE:
        release(c, r);
        break;
    case KC__SHARD_ACT_LOSE:
        lose(c, r);
        break;
    default:
        break;
    }
}

void kc__coord_release_all(kc_shard_coordinator *c)
{
    for (uint32_t r = 0; r < c->k; r++)
        if (kc__shard_assign_mine(c->a, r) != KC__SHARD_NOT_HELD)
            release(c, r);
}

static void snapshot(kc_shard_coordinator *c)
{
    uint32_t held = 0, draining = 0;
    for (uint32_t r = 0; r < c->k; r++) {
        kc__shard_mine m = kc__shard_assign_mine(c->a, r);
        held += m == KC__SHARD_HELD;
        draining += m == KC__SHARD_DRAINING;
    }
    pthread_mutex_lock(&c->mu);
    c->st_held = held;
    c->st_draining = draining;
    c->st_target = kc__shard_assign_target(c->a);
    c->st_live = kc__shard_assign_live(c->a);
    c->st_refused = kc__shard_assign_refused(c->a);
    pthread_mutex_unlock(&c->mu);
}

uint64_t kc__coord_poll(kc_shard_coordinator *c, uint64_t now)
{
    atomic_fetch_add(&c->n_polls, 1);
    /* a refused replica (A8) stops renewing its member Lease, so it drops out of the count */
    if ((!c->leaving || !kc__shard_assign_none_held(c->a)) && !kc__shard_assign_refused(c->a))
        if (kc__lease_lock_try(c->member, NULL) < 0)
            atomic_fetch_add(&c->n_write_errors, 1);
    kc_store *st = kc_informer_store(c->inf);
    observe_members(c, st, now);
    observe_ranges(c, st, now);

    kc__shard_member_obs mo[KC__COORD_MAX_MEMBERS];
    kc__shard_range_obs *ro = calloc(c->k, sizeof(*ro));
    bool *idle = calloc(c->k, sizeof(*idle));
    if (!ro || !idle) {
        free(ro);
        free(idle);
        return now + c->rp_ms;
    }
    for (size_t i = 0; i < c->n_mobs; i++)
        mo[i] = (kc__shard_member_obs){c->mobs[i].holder, c->mobs[i].observed_ms};
    for (uint32_t r = 0; r < c->k; r++) {
        const kc__coord_obs *o = &c->robs[r];
        ro[r] = (kc__shard_range_obs){o->exists, o->holder, o->observed_ms, o->k};
        idle[r] = kc__shard_gate_inflight(c->g, r) == 0;
    }
    kc__shard_view v = {mo, c->n_mobs, ro, idle};
    uint64_t wake = kc__shard_assign_step(c->a, &v, now, c->acts);
    free(ro);
    free(idle);
    for (uint32_t r = 0; r < c->k; r++)
        apply(c, r, c->acts[r]);
    snapshot(c);
    return wake;
}
