/*
 * cached/write.c — the write verbs of kc_cached_client and their read-your-writes bookkeeping.
 *
 * Every write runs the same three steps (docs/read-your-writes.md):
 *   1. before sending: find (or start) the type's informer and read the store sequence seq0, so
 *      "any later event on the key" is well defined even when RVs are not comparable; a delete
 *      also learns what it is deleting — the UID (precondition, else the cached object, else this
 *      client's last write to the key) and an RV the object had — and, in block-on-read mode,
 *      registers it as a pending delete now: the DELETED event can be applied before the response
 *      arrives;
 *   2. send the request through kc_client (a failure ends the call with that error; a pending
 *      delete is forgotten again); a delete's response may name the UID (Status details.uid, or
 *      the returned object) and its deletion RV (a returned object);
 *   3. block-on-write: wait on the store — kc__cc_written_cond (store watermark >= the returned
 *      RV with the key agreeing; when not comparable, that exact RV or any later event on the key)
 *      for create/update/status/patch/apply and for deletes whose response shows the object still
 *      there (deletionTimestamp set: finalizers, graceful pod deletion); kc__cc_deleted_cond (the
 *      store has observed the deletion of that UID — "key absent" alone proves nothing) for other
 *      deletes.
 * Block-on-read: remember the RV / pending delete for later reads instead. The deadline starts when
 * the call starts. A timeout returns KC_ENOT_CAUGHT_UP with the server's object; a stopped cache
 * KC_ESTOPPED with the object: the write succeeded either way. A write to a namespace the client
 * has no cache of (opts.ns set, another namespace) is sent and never waits: no cached read can see
 * that namespace. With fail_on_missing_informer, a write of a type the cache has no informer for is
 * sent and never waits, and starts no informer (reads of the type fail with KC_ENOTFOUND).
 */
#include "cached/internal.h"
#include "rest/internal.h"

#include <stdlib.h>
#include <string.h>

#define TYPE_KEY_MAX 512

typedef enum { OP_CREATE, OP_UPDATE, OP_STATUS, OP_PATCH } op_kind;

/* State of one write between its steps. */
typedef struct wstate {
    char type[TYPE_KEY_MAX];
    bool waiting;      /* read-your-writes applies to this call */
    kc_store *store;   /* the type's store (NULL when not waiting or stopped) */
    uint64_t seq0;     /* store sequence before sending */
    int pending_rc;    /* KC_ESTOPPED when the cache was stopped before the write */
    uint64_t deadline; /* absolute, from the call's start */
} wstate;

/* Step 1, common part. A dry run persists nothing, so there is nothing to wait for. */
static int prepare(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                   const kc_cached_call_opts *call, bool dry_run, wstate *w, kc_error *err)
{
    memset(w, 0, sizeof(*w));
    /* A stale leader does not write (spec L12a): checked before anything is sent. */
    const kc_fence *fence = atomic_load_explicit(&cc->fence, memory_order_acquire);
    if (fence && kc_fence_check(fence, err) < 0)
        return KC_EFENCED;
    if (call && call->fence && kc_fence_check(call->fence, err) < 0) /* the call's own */
        return KC_EFENCED;
    w->deadline = kc__cc_deadline(cc, call);
    int rc = kc__cc_type_key(gvr, w->type, sizeof(w->type), err);
    if (rc < 0)
        return rc;
    if (dry_run || !kc__cc_wait_enabled(cc, call) || kc__cc_uncached(cc, gvr) ||
        kc__cc_foreign_ns(cc, ns))
        return 0;
    w->waiting = true;
    kc_error e = KC_ERROR_INIT; /* fail_on_missing: "no informer" is not the write's error */
    kc_error *ep = cc->fail_on_missing ? &e : err;
    rc = kc__cc_store(cc, gvr, ns, false, call, &w->deadline, &w->store, ep);
    if (ep == &e) {
        if (rc == KC_ENOTFOUND) { /* no informer: nothing could observe the write */
            w->waiting = false;
            rc = 0;
        } else if (rc < 0 && rc != KC_ESTOPPED) {
            kc_error_set(err, rc, "%s", e.message ? e.message : kc_strerror(rc));
        }
        kc_error_clear(&e);
        if (!w->waiting)
            return 0;
    }
    if (rc == KC_ESTOPPED) {
        w->pending_rc = KC_ESTOPPED; /* still write; report that the cache cannot catch up */
        w->store = NULL;
        return 0;
    }
    if (rc < 0)
        return rc;
    w->seq0 = kc_store_seq(w->store);
    return 0;
}

/* Bounded memory for block-on-read: drop the type's entries the store has already observed.
 * Entries are copied out under the lock and checked without it (never two locks at once). */
static void maybe_sweep(kc_cached_client *cc, const char *type, kc_store *s)
{
    kc__ryw_want *wants = NULL;
    pthread_mutex_lock(&cc->lock);
    if (!kc__ryw_should_sweep(&cc->ryw)) {
        pthread_mutex_unlock(&cc->lock);
        return;
    }
    int n = kc__ryw_collect(&cc->ryw, type, NULL, NULL, &wants);
    kc__ryw_swept(&cc->ryw); /* one sweeper at a time: the threshold moved up */
    pthread_mutex_unlock(&cc->lock);
    if (n <= 0)
        return;
    bool *seen = calloc((size_t)n, sizeof(*seen));
    for (int i = 0; seen && i < n; i++) {
        kc_store_cond c = kc__ryw_want_cond(&wants[i]);
        seen[i] = kc_store_check(s, &c, NULL) == 1;
    }
    pthread_mutex_lock(&cc->lock);
    for (int i = 0; seen && i < n; i++)
        if (seen[i])
            kc__ryw_forget(&cc->ryw, type, wants[i].ns, wants[i].name, wants[i].gen);
    kc__ryw_swept(&cc->ryw);
    pthread_mutex_unlock(&cc->lock);
    for (int i = 0; i < n; i++)
        kc__ryw_want_clear(&wants[i]);
    free(wants);
    free(seen);
}

static void note_write(kc_cached_client *cc, const wstate *w, const char *ns, const char *name,
                       const char *rv, const char *uid)
{
    pthread_mutex_lock(&cc->lock);
    int rc = kc__ryw_note_write(&cc->ryw, w->type, ns, name, rv, uid, w->seq0);
    pthread_mutex_unlock(&cc->lock);
    if (rc < 0)
        KC__LOG_WARN("cached", "cached client: cannot remember write of %s %s/%s: %s", w->type, ns,
                     name, kc_strerror(rc));
    maybe_sweep(cc, w->type, w->store);
}

/* Step 3 for a write whose result is obj at obj's RV. */
static int finish_rv(kc_cached_client *cc, const wstate *w, const kc_obj *obj, kc_error *err)
{
    if (!w->waiting)
        return 0;
    if (w->pending_rc < 0)
        return kc_error_set(err, w->pending_rc, "write succeeded; the cache is stopped");
    const char *rv = kc_obj_resource_version(obj);
    if (!*rv || !*kc_obj_name(obj))
        return 0; /* nothing to wait for (a server that returns no RV) */
    if (cc->mode == KC_RYW_BLOCK_ON_READ) {
        note_write(cc, w, kc_obj_namespace(obj), kc_obj_name(obj), rv, kc_obj_uid(obj));
        return 0;
    }
    kc_store_cond c = kc__cc_written_cond(kc_obj_namespace(obj), kc_obj_name(obj), rv, w->seq0);
    return kc__cc_wait(cc, w->store, &c, w->deadline, err);
}

/* Hand obj to the caller when the write succeeded (rc 0, KC_ENOT_CAUGHT_UP, KC_ESTOPPED). */
static int deliver(int rc, kc_obj *obj, kc_obj **ret_obj)
{
    if (ret_obj)
        *ret_obj = obj;
    else
        kc_obj_unref(obj);
    return rc;
}

static int do_write(kc_cached_client *cc, op_kind op, const kc_gvr *gvr, const char *ns,
                    const char *name, kc_patch_type ptype, const char *body, size_t len,
                    const kc_write_opts *wo, size_t wo_size, const kc_patch_opts *po,
                    size_t po_size, const kc_cached_call_opts *call, size_t call_size,
                    kc_obj **ret_obj, kc_error *err)
{
    KC__OPTS_TAKE(call, kc_cached_call_opts, err);
    KC__OPTS_TAKE(wo, kc_write_opts, err); /* wo for create/update/status, po for patch */
    KC__OPTS_TAKE(po, kc_patch_opts, err);
    if (!cc || !body)
        return kc_error_set(err, KC_EINVAL, "cached client: NULL argument");
    wstate w;
    bool dry = (wo && wo->dry_run) || (po && po->dry_run);
    int rc = prepare(cc, gvr, ns, call, dry, &w, err);
    if (rc < 0)
        return rc;
    kc_obj *obj = NULL;
    switch (op) {
    case OP_CREATE:
        rc = kc_client_create(cc->client, gvr, ns, body, len, wo, &obj, err);
        break;
    case OP_UPDATE:
        rc = kc_client_update(cc->client, gvr, ns, body, len, wo, &obj, err);
        break;
    case OP_STATUS:
        rc = kc_client_update_status(cc->client, gvr, ns, body, len, wo, &obj, err);
        break;
    case OP_PATCH:
        rc = kc_client_patch(cc->client, gvr, ns, name, ptype, body, len, po, &obj, err);
        break;
    }
    if (rc < 0)
        return rc;
    if (!obj)
        return 0;
    return deliver(finish_rv(cc, &w, obj, err), obj, ret_obj);
}

int(kc_cached_client_create)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                             const char *json, size_t len, const kc_write_opts *wo, size_t wo_size,
                             const kc_cached_call_opts *call, size_t call_size, kc_obj **ret_obj,
                             kc_error *err)
{
    return do_write(cc, OP_CREATE, gvr, ns, NULL, KC_PATCH_MERGE, json, len, wo, wo_size, NULL, 0,
                    call, call_size, ret_obj, err);
}

int(kc_cached_client_update)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                             const char *json, size_t len, const kc_write_opts *wo, size_t wo_size,
                             const kc_cached_call_opts *call, size_t call_size, kc_obj **ret_obj,
                             kc_error *err)
{
    return do_write(cc, OP_UPDATE, gvr, ns, NULL, KC_PATCH_MERGE, json, len, wo, wo_size, NULL, 0,
                    call, call_size, ret_obj, err);
}

int(kc_cached_client_update_status)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                                    const char *json, size_t len, const kc_write_opts *wo,
                                    size_t wo_size, const kc_cached_call_opts *call,
                                    size_t call_size, kc_obj **ret_obj, kc_error *err)
{
    return do_write(cc, OP_STATUS, gvr, ns, NULL, KC_PATCH_MERGE, json, len, wo, wo_size, NULL, 0,
                    call, call_size, ret_obj, err);
}

int(kc_cached_client_patch)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                            const char *name, kc_patch_type type, const char *body, size_t len,
                            const kc_patch_opts *po, size_t po_size,
                            const kc_cached_call_opts *call, size_t call_size, kc_obj **ret_obj,
                            kc_error *err)
{
    if (!name || !*name)
        return kc_error_set(err, KC_EINVAL, "cached client: patch needs a name");
    return do_write(cc, OP_PATCH, gvr, ns, name, type, body, len, NULL, 0, po, po_size, call,
                    call_size, ret_obj, err);
}

int(kc_cached_client_apply)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                            const char *name, const char *body, size_t len, const kc_patch_opts *po,
                            size_t po_size, const kc_cached_call_opts *call, size_t call_size,
                            kc_obj **ret_obj, kc_error *err)
{
    KC__OPTS_TAKE(po, kc_patch_opts, err);
    if (!cc)
        return kc_error_set(err, KC_EINVAL, "cached client: NULL argument");
    kc_patch_opts o = *po;
    if (!o.field_manager || !*o.field_manager)
        o.field_manager = cc->field_manager;
    return (kc_cached_client_patch)(cc, gvr, ns, name, KC_PATCH_APPLY, body, len, &o, sizeof o,
                                    call, call_size, ret_obj, err);
}

/* ---- delete ---------------------------------------------------------------------------------- */

static void register_delete(kc_cached_client *cc, const wstate *w, const char *ns, const char *name,
                            const char *uid, const char *rv, uint64_t *ret_gen)
{
    pthread_mutex_lock(&cc->lock);
    int rc = kc__ryw_note_delete(&cc->ryw, w->type, ns, name, uid, rv, w->seq0, ret_gen);
    pthread_mutex_unlock(&cc->lock);
    if (rc < 0)
        KC__LOG_WARN("cached", "cached client: cannot remember delete of %s %s/%s: %s", w->type, ns,
                     name, kc_strerror(rc));
}

static void forget_delete(kc_cached_client *cc, const wstate *w, const char *ns, const char *name,
                          uint64_t gen)
{
    pthread_mutex_lock(&cc->lock);
    kc__ryw_forget(&cc->ryw, w->type, ns, name, gen);
    pthread_mutex_unlock(&cc->lock);
}

/* What a delete removes. Strings owned; NULL when unknown. */
typedef struct target {
    char *uid; /* the object's UID */
    char *rv;  /* an RV the object with that UID had, or its deletion RV */
} target;

static void target_set(target *t, const char *uid, const char *rv)
{
    free(t->uid);
    free(t->rv);
    t->uid = uid && *uid ? kc__strdup(uid) : NULL;
    t->rv = t->uid && rv && *rv ? kc__strdup(rv) : NULL; /* ENOMEM: unknown, which is safe */
}

/*
 * Step 1 of a delete: the target known before the request is sent — the precondition UID, else the
 * cached object, else (block-on-read) this client's last write to the key: the cache may not hold
 * the object yet (an own create whose ADDED event is still on its way). An RV only with its UID.
 */
static void delete_target(kc_cached_client *cc, const wstate *w, const char *ns, const char *name,
                          const kc_delete_opts *dopts, target *ret)
{
    const char *pre = dopts && dopts->precondition_uid && *dopts->precondition_uid
                          ? dopts->precondition_uid
                          : NULL;
    memset(ret, 0, sizeof(*ret));
    kc_obj *cur = w->store ? kc_store_get(w->store, ns, name) : NULL;
    if (cur && (!pre || strcmp(kc_obj_uid(cur), pre) == 0)) {
        target_set(ret, kc_obj_uid(cur), kc_obj_resource_version(cur));
    } else if (w->store && cc->mode == KC_RYW_BLOCK_ON_READ) {
        kc__ryw_want e = {0};
        pthread_mutex_lock(&cc->lock);
        int found = kc__ryw_lookup(&cc->ryw, w->type, ns, name, &e);
        pthread_mutex_unlock(&cc->lock);
        if (found == 1 && !e.delete_uid && e.uid && (!pre || strcmp(e.uid, pre) == 0))
            target_set(ret, e.uid, e.rv);
        kc__ryw_want_clear(&e);
    }
    kc_obj_unref(cur);
    if (!ret->uid && pre)
        target_set(ret, pre, NULL);
}

/* After a successful DELETE: what the response says was removed — a returned object (its UID and
 * its RV: the deletion RV) or a Status naming the UID — refines the target. */
static void delete_result(target *t, const kc_obj *obj, const char *status_uid)
{
    const char *uid = obj ? kc_obj_uid(obj) : status_uid;
    if (obj && *kc_obj_uid(obj) && *kc_obj_resource_version(obj))
        target_set(t, kc_obj_uid(obj), kc_obj_resource_version(obj));
    else if (uid && *uid && (!t->uid || strcmp(uid, t->uid) != 0))
        target_set(t, uid, NULL); /* another object than the one we knew: its RVs are unknown */
}

int(kc_cached_client_delete)(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                             const char *name, const kc_delete_opts *dopts, size_t dopts_size,
                             const kc_cached_call_opts *call, size_t call_size, kc_obj **ret_obj,
                             kc_error *err)
{
    KC__OPTS_TAKE(dopts, kc_delete_opts, err);
    KC__OPTS_TAKE(call, kc_cached_call_opts, err);
    if (!cc || !name || !*name)
        return kc_error_set(err, KC_EINVAL, "cached client: delete needs a name");
    ns = ns ? ns : "";
    wstate w;
    int rc = prepare(cc, gvr, ns, call, dopts && dopts->dry_run, &w, err);
    if (rc < 0)
        return rc;

    /* Step 1: the target, known before the request is sent. */
    target t;
    delete_target(cc, &w, ns, name, dopts, &t);
    uint64_t gen = 0;
    bool bor = w.waiting && w.store && cc->mode == KC_RYW_BLOCK_ON_READ;
    if (bor)
        register_delete(cc, &w, ns, name, t.uid ? t.uid : "", t.rv, &gen);

    /* Step 2. */
    kc_obj *obj = NULL;
    char *status_uid = NULL;
    rc = kc__client_delete_ex(cc->client, gvr, ns, name, dopts, &obj, &status_uid, err);
    if (rc < 0) {
        if (bor)
            forget_delete(cc, &w, ns, name, gen);
        target_set(&t, NULL, NULL);
        return rc;
    }

    /* Step 3. */
    if (!w.waiting) {
        rc = 0;
    } else if (w.pending_rc < 0) {
        rc = kc_error_set(err, w.pending_rc, "delete succeeded; the cache is stopped");
    } else if (obj && kc_obj_deleting(obj) && *kc_obj_resource_version(obj)) {
        /* The object survives (finalizers, or a graceful pod deletion): the delete was an update
         * that set deletionTimestamp; wait for its RV. If it is in fact gone, the DELETED event
         * (RV >= the returned one) satisfies the same condition. */
        rc = finish_rv(cc, &w, obj, err); /* block-on-read: replaces the pending delete */
    } else {
        delete_result(&t, obj, status_uid);
        if (bor) {
            pthread_mutex_lock(&cc->lock);
            kc__ryw_refine(&cc->ryw, w.type, ns, name, gen, t.uid, t.rv);
            pthread_mutex_unlock(&cc->lock);
            rc = 0;
        } else {
            kc_store_cond c = kc__cc_deleted_cond(ns, name, t.uid ? t.uid : "", t.rv, w.seq0);
            rc = kc__cc_wait(cc, w.store, &c, w.deadline, err);
        }
    }
    free(status_uid);
    target_set(&t, NULL, NULL);
    if (ret_obj)
        *ret_obj = obj;
    else
        kc_obj_unref(obj);
    return rc;
}
