/*
 * controller/shard_ctrl.c — a controller running sharded under a kc_shard_coordinator (spec A11,
 * A12, A14, A15).
 *
 * Key → range: the handlers record, for every key they enqueue, FNV-1a of the uid that places it
 * (the primary object's own uid; for an owned object its controller ownerReference's uid, which
 * is the owner's, A15) in the key map (shard_keys.c). A key without a record (kc_controller_enqueue
 * from a map function or the caller) takes the uid of the primary object in the cache; a key with
 * neither is dropped: no replica could prove it owns it.
 *
 * Admission: before each reconcile the worker enters the range in the coordinator's gate, which
 * admits only a held, not draining range before its fence (A11) and counts it in flight, so a
 * drain waits for it (A12). A key that is not admitted is dropped (forget + done), never requeued:
 * the replica that holds its range reconciles it, and a range gained later re-enqueues every key
 * of the cache in it; a key refused only because its held range's fence passed (a late renew)
 * is re-enqueued by the renew that lifts the fence (the coordinator's resumed callback, P6).
 *
 * Informers (A14, A15): the primary informer is sharded on uid and follows the held ranges (one
 * selector over their union: a gained or lost range relists the primary type, the spec's
 * alternative to one informer per range; none held = an empty, synced informer sending nothing).
 * Owned and watched types stay unsharded — an owned object's range is its owner's, which the
 * server cannot filter by (A15 option 1) — and their keys are filtered at admission.
 */
#include "coordinator/internal.h"
#include "controller/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t uid_hash(const char *uid)
{
    return kc_shard_hash(uid, strlen(uid));
}

void kc__ctrl_enqueue_sharded(kc_controller *ctrl, const char *ns, const char *name,
                              const char *uid)
{
    if (ctrl->coord && uid && *uid) {
        char key[KC__CTRL_KEY_MAX];
        int n = ns && *ns ? snprintf(key, sizeof(key), "%s/%s", ns, name)
                          : snprintf(key, sizeof(key), "%s", name);
        if (n > 0 && (size_t)n < sizeof(key))
            kc__ctrl_keymap_put(ctrl->keymap, key, uid_hash(uid));
    }
    kc_controller_enqueue(ctrl, ns, name);
}

static kc_store *primary_store(kc_controller *ctrl)
{
    kc_informer *inf = ctrl->sources[0]->inf;
    return inf ? kc_informer_store(inf) : NULL;
}

bool kc__ctrl_shard_admit(kc_controller *ctrl, const char *key, uint32_t *ret_range)
{
    uint64_t h = 0;
    bool known = kc__ctrl_keymap_get(ctrl->keymap, key, &h);
    if (!known) {
        kc_store *st = primary_store(ctrl);
        kc_obj *o = st ? kc_store_get_key(st, key) : NULL;
        const char *uid = o ? kc_obj_uid(o) : NULL;
        if (uid && *uid) {
            h = uid_hash(uid);
            known = true;
        }
        kc_obj_unref(o);
    }
    kc__shard_gate *g = kc__shard_coordinator_gate(ctrl->coord);
    uint32_t r = kc__shard_gate_range_of(g, h);
    if (!known || !kc__shard_gate_enter(g, r, kc__now_ms())) {
        atomic_fetch_add(&ctrl->n_shard_dropped, 1);
        return false;
    }
    *ret_range = r;
    return true;
}

void kc__ctrl_shard_leave(kc_controller *ctrl, const char *key, uint32_t range)
{
    if (!ctrl->coord)
        return;
    kc__shard_gate_leave(kc__shard_coordinator_gate(ctrl->coord), range);
    kc_store *st = primary_store(ctrl);
    kc_obj *o = st ? kc_store_get_key(st, key) : NULL;
    if (!o) /* gone: forget its hash (the map stays the size of the cache) */
        kc__ctrl_keymap_del(ctrl->keymap, key);
    kc_obj_unref(o);
}

/* A14: the primary informer lists and watches the held ranges — one selector over their union
 * (adjacent ranges merged), so a change relists the primary type (the spec's alternative to one
 * informer per range). Read from the coordinator's gate on every change, so callbacks that race
 * an attach still end at the current set; the same set again is a no-op in the informer. Held
 * means the Lease is ours and not draining, whether or not its fence passed: a range whose renew
 * is late at that moment stays watched (its keys wait at admission until the renew, which
 * re-enqueues them), else it would stay unwatched until the next gain or loss. */
static void follow_ranges(kc_controller *ctrl)
{
    kc__ctrl_source *p = ctrl->sources[0];
    if (!p->follow_ranges || !p->inf)
        return;
    uint32_t k = kc_shard_coordinator_ranges(ctrl->coord);
    kc__shard_gate *g = kc__shard_coordinator_gate(ctrl->coord);
    kc_shard_range *v = k ? calloc(k, sizeof *v) : NULL;
    if (k && !v) {
        KC__LOG_ERR("controller", "controller %s: out of memory following the shard ranges",
                    ctrl->name);
        return;
    }
    size_t n = 0;
    for (uint32_t i = 0; i < k; i++) {
        kc_shard_range q;
        if (!kc__shard_gate_held(g, i) || kc_shard_range_split(k, i, &q) < 0)
            continue;
        if (n && !v[n - 1].end_max && v[n - 1].end == q.start)
            v[n - 1] = (kc_shard_range){v[n - 1].start, q.end, q.end_max};
        else
            v[n++] = q;
    }
    kc_error err = KC_ERROR_INIT;
    if (kc_informer_set_shard_ranges(p->inf, KC_SHARD_FIELD_UID, v, n, &err) < 0 &&
        err.code != KC_ESTOPPED)
        KC__LOG_ERR("controller", "controller %s: shard ranges: %s", ctrl->name,
                    err.message ? err.message : kc_strerror(err.code));
    kc_error_clear(&err);
    free(v);
}

static void on_lost(void *ud, uint32_t range, const kc_shard_range *bounds)
{
    (void)range, (void)bounds;
    follow_ranges(ud);
}

/* A range gained: the primary informer adds it; enqueue every primary object of the cache in it
 * (P6 liveness; with the informer following the ranges, its relist's adds enqueue them too).
 * Also the listener for a held range resumed by a late renew, whose keys admission refused as
 * fenced meanwhile (forgotten, not requeued): re-enqueued here, they are not lost (P6). */
static void on_gained(void *ud, uint32_t range, const kc_shard_range *bounds)
{
    (void)bounds;
    kc_controller *ctrl = ud;
    follow_ranges(ctrl);
    kc_store *st = primary_store(ctrl);
    kc_obj **objs = NULL;
    size_t n = 0;
    if (!st || kc_store_list(st, &objs, &n, NULL) < 0)
        return;
    kc__shard_gate *g = kc__shard_coordinator_gate(ctrl->coord);
    for (size_t i = 0; i < n; i++) {
        const char *uid = kc_obj_uid(objs[i]);
        if (!uid || !*uid || kc__shard_gate_range_of(g, uid_hash(uid)) != range)
            continue;
        kc__ctrl_enqueue_sharded(ctrl,
                                 ctrl->primary_cluster_scoped ? "" : kc_obj_namespace(objs[i]),
                                 kc_obj_name(objs[i]), uid);
    }
    kc_obj_array_free(objs, n);
}

int kc__ctrl_shard_attach(kc_controller *ctrl, kc_error *err)
{
    if (!ctrl->coord || ctrl->coord_listening)
        return 0;
    int rc = kc__shard_coordinator_listen(ctrl->coord, on_gained, on_lost, on_gained, ctrl);
    if (rc < 0)
        return kc_error_set(err, rc, "controller %s: cannot listen to the shard coordinator",
                            ctrl->name);
    ctrl->coord_listening = true;
    follow_ranges(ctrl); /* ranges gained before the listener was there */
    return 0;
}

void kc__ctrl_shard_detach(kc_controller *ctrl)
{
    if (ctrl->coord && ctrl->coord_listening)
        kc__shard_coordinator_unlisten(ctrl->coord, ctrl);
    ctrl->coord_listening = false;
}
