/*
 * controller/run.c — the controller's life: start gated on readiness (spec C9), the worker loop
 * and what each reconcile result does to the queue (C3, C4), and stop.
 *
 * Start: handlers are registered (kc_cache_get_informer starts each informer, and the
 * registration first receives what the store holds as adds, which only fill the queue), the
 * health endpoint is served if asked, then kc_cache_wait_synced bounds the wait by
 * sync_timeout_ms. Workers are created only after it returns 0, so no reconcile can run against a
 * cache without its initial list. Failure stops the controller and returns the wait's code and
 * kc_error (which names the informer that did not sync and its last error).
 *
 * Worker: get (blocking) → if stopping: done, next (stop takes no more keys; W8 would otherwise
 * hand out what is queued) → if the gate is closed: put the key back (add, then done: W6 queues it
 * again) and wait on the condition variable until the gate opens → sharded: admit the key through
 * the coordinator's gate or drop it (shard_ctrl.c) → reconcile → result → done.
 * Results (C3): DONE → forget; REQUEUE_AFTER → forget + add_after; ERROR → add_rate_limited (no
 * forget, so the backoff grows); TERMINAL → nothing (not requeued, not forgotten); any other
 * code → as ERROR, counted as unknown and logged. A requeue (and a key put back) keeps the
 * priority the key was taken at (C12, as controller-runtime's reconcileHandler).
 * Each reconcile is timed for controller_runtime_reconcile_time_seconds (metrics.c).
 *
 * Stop: stopping + queue shutdown (workers take no more keys; idle workers return from get),
 * shutdown_drain bounded by stop_timeout_ms for the reconciles in flight, handlers removed, the
 * cache stopped when owned (wakes a reconcile blocked in a read-your-writes wait), workers joined.
 */
#include "controller/internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- worker ---------------------------------------------------------------------------------- */

static void apply_result(kc_controller *c, const char *key, kc_reconcile_result r, int prio)
{
    /* queue action first, counters after: whoever sees a counter move sees the action done */
    atomic_uint_fast64_t *counter;
    switch (r.code) {
    case KC_RECONCILE_DONE:
        kc_workqueue_forget(c->q, key);
        counter = &c->n_done;
        break;
    case KC_RECONCILE_REQUEUE_AFTER:
        kc_workqueue_forget(c->q, key);
        kc_workqueue_add_after_with_priority(c->q, key, r.requeue_after_ms, prio);
        counter = &c->n_requeue_after;
        break;
    case KC_RECONCILE_TERMINAL:
        counter = &c->n_terminal; /* not requeued, not forgotten */
        break;
    case KC_RECONCILE_ERROR:
        kc_workqueue_add_rate_limited_with_priority(c->q, key, prio);
        counter = &c->n_errors;
        break;
    default:
        KC__LOG_ERR("controller",
                    "controller %s: reconcile of %s returned unknown code %d: treated as an "
                    "error (rate-limited requeue)",
                    c->name, key, r.code);
        kc_workqueue_add_rate_limited_with_priority(c->q, key, prio);
        atomic_fetch_add(&c->n_unknown, 1);
        counter = &c->n_errors;
        break;
    }
    atomic_fetch_add(counter, 1);
    atomic_fetch_add(&c->n_reconciles, 1);
}

static void run_one(kc_controller *c, const char *key, const kc_fence *fence, int prio)
{
    char ns[KC__CTRL_KEY_MAX];
    const char *slash = strchr(key, '/');
    const char *name = key;
    ns[0] = '\0';
    if (slash && (size_t)(slash - key) < sizeof(ns)) {
        memcpy(ns, key, (size_t)(slash - key));
        ns[slash - key] = '\0';
        name = slash + 1;
    }
    kc_reconcile_request req = {.key = key, .ns = ns, .name = name, .fence = fence};
    uint64_t t0 = kc__now_ns();
    kc_reconcile_result r =
        c->fin ? kc__ctrl_finalize(c, &req) : c->reconcile(c->ud, &req, c->cc); /* finalizer.c */
    kc__ctrl_metrics_observe(c, r, kc__now_ns() - t0);                        /* metrics.c */
    apply_result(c, key, r, prio);
}

/* Whether the worker may reconcile key now; false: key was finished (done) without a reconcile.
 * Waits while the gate is closed. On true, running was incremented under the lock. */
static bool admit(kc_controller *c, const char *key, int prio)
{
    pthread_mutex_lock(&c->mu);
    if (c->stopping) {
        pthread_mutex_unlock(&c->mu);
        kc_workqueue_done(c->q, key);
        return false;
    }
    bool fenced = c->active && c->fence && !kc_fence_valid(c->fence);
    if (fenced) { /* L12a: a stale leader reconciles nothing; the elector reopens the gate */
        c->active = false;
        atomic_fetch_add(&c->n_fenced, 1);
    }
    if (!c->active) {
        pthread_mutex_unlock(&c->mu);
        atomic_fetch_add(&c->n_put_back, 1);
        kc_workqueue_add_with_priority(c->q, key, prio); /* dirty while processing: again (W6) */
        kc_workqueue_done(c->q, key);
        pthread_mutex_lock(&c->mu);
        while (!c->active && !c->stopping)
            pthread_cond_wait(&c->cv, &c->mu);
        pthread_mutex_unlock(&c->mu);
        return false;
    }
    c->running++;
    pthread_mutex_unlock(&c->mu);
    return true;
}

static void *worker_main(void *arg)
{
    kc_controller *c = arg;
    for (;;) {
        const char *key = NULL;
        int prio = 0; /* a requeue keeps it (C12) */
        int rc = kc_workqueue_get_with_priority(c->q, -1, &key, &prio);
        if (rc == KC_ESTOPPED || rc == KC_EINVAL)
            break;
        if (rc < 0)
            continue;
        if (!admit(c, key, prio))
            continue;
        uint32_t range = 0;
        if (c->coord && !kc__ctrl_shard_admit(c, key, &range)) {
            kc_workqueue_forget(c->q, key); /* dropped, not requeued: not ours (A11) */
            kc_workqueue_done(c->q, key);
        } else {
            /* the key's range fence when sharded, else the leader's (NULL when neither) */
            const kc_fence *f = c->coord ? kc_shard_coordinator_fence(c->coord, range) : c->fence;
            run_one(c, key, f, prio);
            kc__ctrl_shard_leave(c, key, range);
            kc_workqueue_done(c->q, key);
        }
        pthread_mutex_lock(&c->mu);
        c->running--;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
    }
    return NULL;
}

/* ---- start ----------------------------------------------------------------------------------- */

static int begin_start(kc_controller *c, kc_error *err)
{
    pthread_mutex_lock(&c->mu);
    int rc = 0;
    if (c->state != KC__CTRL_NEW)
        rc = kc_error_set(err, c->state == KC__CTRL_STOPPED ? KC_ESTOPPED : KC_EBUSY,
                          "controller %s: already %s", c->name,
                          c->state == KC__CTRL_STOPPED ? "stopped" : "started");
    else
        c->state = KC__CTRL_STARTING;
    c->start_waiting = rc == 0;
    pthread_mutex_unlock(&c->mu);
    return rc;
}

static int start_sources(kc_controller *c, kc_error *err)
{
    for (size_t i = 0; i < c->n_sources; i++) {
        int rc = kc__ctrl_source_start(c->sources[i], err);
        if (rc < 0)
            return rc;
    }
    if (c->health_listen) {
        kc_health *h = NULL;
        int rc = kc_health_new(c->cache, c->health_listen, NULL, &h, err);
        if (rc < 0)
            return rc;
        /* the queue's metrics (M1) after the cache's on /metrics; the endpoint is freed before
         * the queue (controller.c) */
        rc = kc_health_add_metrics_source(h, kc_workqueue_metrics_render, c->q);
        if (rc == 0) /* controller_runtime_* (metrics.c) */
            rc = kc_health_add_metrics_source(h, kc__ctrl_metrics_render, c);
        if (rc == 0 && c->elector) /* L11 */
            rc = kc_health_add_metrics_source(h, kc_leader_elector_metrics_render, c->elector);
        if (rc < 0) {
            kc_health_free(h);
            return kc_error_set(err, rc, "controller %s: cannot serve the queue's metrics",
                                c->name);
        }
        pthread_mutex_lock(&c->mu);
        c->health = h;
        pthread_mutex_unlock(&c->mu);
    }
    return 0;
}

static int start_workers(kc_controller *c, kc_error *err)
{
    c->threads = calloc(c->workers, sizeof(*c->threads));
    if (!c->threads)
        return kc_error_set(err, KC_ENOMEM, "controller %s: out of memory", c->name);
    for (unsigned i = 0; i < c->workers; i++) {
        if (pthread_create(&c->threads[i], NULL, worker_main, c) != 0)
            return kc_error_set(err, KC_ENOMEM, "controller %s: cannot create worker %u", c->name,
                                i);
        c->n_threads++;
    }
    return 0;
}

int kc__ctrl_start(kc_controller *c, kc_error *err)
{
    int rc = begin_start(c, err);
    if (rc < 0)
        return rc;
    rc = start_sources(c, err);
    if (rc == 0) /* after the sources: the gained callback reads their stores */
        rc = kc__ctrl_shard_attach(c, err);
    if (rc == 0) {
        rc = kc_cache_wait_synced(c->cache, c->sync_timeout_ms, err);
        if (rc < 0)
            KC__LOG_ERR("controller", "controller %s: caches did not sync: %s%s%s", c->name,
                        kc_errno_name(rc), err && err->message ? ": " : "",
                        err && err->message ? err->message : "");
    }
    pthread_mutex_lock(&c->mu);
    c->start_waiting = false;
    if (rc == 0 && c->stopping)
        rc = kc_error_set(err, KC_ESTOPPED, "controller %s: stopped while starting", c->name);
    if (rc == 0)
        rc = start_workers(c, err);
    if (rc == 0)
        c->state = KC__CTRL_RUNNING;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (rc < 0) {
        kc__ctrl_stop(c);
        return rc;
    }
    KC__LOG_INFO("controller", "controller %s: caches synced, %u worker(s) started", c->name,
                 c->workers);
    return 0;
}

/* ---- stop ------------------------------------------------------------------------------------ */

int kc__ctrl_stop(kc_controller *c)
{
    pthread_mutex_lock(&c->mu);
    if (c->stopping) {
        /* another stop ran or is running: wait for it */
        while (c->state != KC__CTRL_STOPPED)
            pthread_cond_wait(&c->cv, &c->mu);
        int rc = c->stop_rc;
        pthread_mutex_unlock(&c->mu);
        return rc;
    }
    c->stopping = true;
    bool waiting = c->start_waiting;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);

    kc_workqueue_shutdown(c->q); /* idle workers return from get; start's adds are dropped */
    if (waiting && c->own_cache)
        kc_cache_stop(c->cache); /* wakes a start waiting for the sync */
    pthread_mutex_lock(&c->mu);
    while (c->start_waiting)
        pthread_cond_wait(&c->cv, &c->mu);
    pthread_mutex_unlock(&c->mu);

    int rc = kc_workqueue_shutdown_drain(c->q, c->stop_timeout_ms);
    if (rc == KC_ETIMEOUT)
        KC__LOG_WARN("controller",
                     "controller %s: reconciles still running after %lld ms; stopping the cache "
                     "under them",
                     c->name, (long long)c->stop_timeout_ms);
    for (size_t i = 0; i < c->n_sources; i++)
        kc__ctrl_source_stop(c->sources[i]);
    kc__ctrl_shard_detach(c);
    if (c->own_cache)
        kc_cache_stop(c->cache);
    for (size_t i = 0; i < c->n_threads; i++)
        pthread_join(c->threads[i], NULL);
    c->n_threads = 0;

    pthread_mutex_lock(&c->mu);
    c->stop_rc = rc == KC_ETIMEOUT ? KC_ETIMEOUT : 0;
    c->state = KC__CTRL_STOPPED;
    pthread_cond_broadcast(&c->cv);
    rc = c->stop_rc;
    pthread_mutex_unlock(&c->mu);
    return rc;
}
