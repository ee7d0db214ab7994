/*
 * workqueue/workqueue.c — kc_workqueue: client-go's work queue (spec §1.1, rules W1–W11).
 *
 * State: one record per key (wq_table.c) whose flags are the dirty / processing / queued /
 * waiting sets; a FIFO of queued records per priority level, linked through the records
 * (wq_prio.c; priority 0 unless a *_with_priority call says otherwise); all behind q->mu with three
 * condition variables (workers, shutdown_drain, the timer thread). Invariant (W1): a QUEUED record
 * is DIRTY and not PROCESSING, and every DIRTY record that is not PROCESSING is QUEUED.
 *
 *   add (W3/W4)   dirty already → no-op, except that a higher priority raises the key's (C12:
 *                 a queued key moves to the tail of its new level); else mark dirty (counted in
 *                 adds_total and depth) with the add's priority, and unless processing push it
 *                 and signal one waiter.
 *   get (W5)      wait while the FIFO is empty and not shutting down; pop the head of the highest
 *                 level, clear dirty, set processing. Empty and shutting down → KC_ESTOPPED.
 *   done (W6)     clear processing; if dirty (re-added meanwhile) push it again. A key that is
 *                 not processing is KC_EINVAL and changes nothing (W10).
 *   shutdown (W8) idempotent: drop adds from now on, drop delayed keys (D4), wake everyone; get
 *                 still drains the FIFO. shutdown_drain (W9) also waits until nothing processes.
 *
 * Delayed and rate-limited adds are in wq_delay.c and wq_limit.c, metrics in wq_metrics.c.
 */
#include "workqueue/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mono_now(void *ud)
{
    (void)ud;
    return kc__now_ns();
}

int kc__wq_lock_key(kc_workqueue *q, const char *key, int mode, kc__wq_ent **e, uint32_t *hash)
{
    if (!q || !key)
        return KC_EINVAL;
    size_t klen = strnlen(key, KC_WORKQUEUE_KEY_MAX + 1);
    if (klen > KC_WORKQUEUE_KEY_MAX)
        return KC_EINVAL;
    *hash = kc__wq_hash(key, klen);
    pthread_mutex_lock(&q->mu);
    if (mode != KC__WQ_ADDING) {
        *e = kc__wq_find(q, key, *hash);
        return 0;
    }
    int rc = 0;
    if (q->shutting_down)
        rc = KC_ESTOPPED;
    else if (!(*e = kc__wq_intern(q, key, klen, *hash)))
        rc = KC_ENOMEM;
    if (rc < 0)
        pthread_mutex_unlock(&q->mu);
    return rc;
}

static int check_opts(const kc_workqueue_opts *o, kc_error *err)
{
    if (!o)
        return 0;
    if (o->name && strlen(o->name) > KC_WORKQUEUE_KEY_MAX)
        return kc_error_set(err, KC_EINVAL, "workqueue: name longer than %d bytes",
                            KC_WORKQUEUE_KEY_MAX);
    if (isnan(o->bucket_qps) || isinf(o->bucket_qps))
        return kc_error_set(err, KC_EINVAL, "workqueue: bucket_qps must be finite");
    uint64_t base = o->base_delay_ms ? o->base_delay_ms : 5;
    uint64_t max = o->max_delay_ms ? o->max_delay_ms : 1000000;
    if (base > max)
        return kc_error_set(err, KC_EINVAL,
                            "workqueue: base_delay_ms %llu is above max_delay_ms %llu",
                            (unsigned long long)base, (unsigned long long)max);
    if (max > UINT64_MAX / KC__NS_PER_MS)
        return kc_error_set(err, KC_EINVAL, "workqueue: max_delay_ms too large");
    return 0;
}

static void apply_opts(kc_workqueue *q, const kc_workqueue_opts *o)
{
    kc_workqueue_opts d = {0};
    if (!o)
        o = &d;
    q->base_ns = (o->base_delay_ms ? o->base_delay_ms : 5) * KC__NS_PER_MS;
    q->max_ns = (o->max_delay_ms ? o->max_delay_ms : 1000000) * KC__NS_PER_MS;
    q->qps = o->bucket_qps == 0 ? 10.0 : o->bucket_qps;
    q->burst = o->bucket_burst ? (double)o->bucket_burst : 100.0;
    q->tokens = q->burst;
}

int(kc_workqueue_new)(const kc_workqueue_opts *opts, size_t opts_size, kc_workqueue **ret,
                      kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_workqueue_opts, err);
    if (!ret)
        return kc_error_set(err, KC_EINVAL, "workqueue: ret is required");
    int rc = check_opts(opts, err);
    if (rc < 0)
        return rc;
    kc_workqueue *q = calloc(1, sizeof(*q));
    if (!q)
        return kc_error_set(err, KC_ENOMEM, "workqueue: out of memory");
    apply_opts(q, opts);
    q->now_ns = mono_now;
    if (opts && opts->name && opts->name[0] && !(q->name = kc__strdup(opts->name))) {
        free(q);
        return kc_error_set(err, KC_ENOMEM, "workqueue: out of memory");
    }
    pthread_mutex_init(&q->mu, NULL);
    if (kc__cond_init_monotonic(&q->cond) < 0 || kc__cond_init_monotonic(&q->drain_cond) < 0 ||
        kc__cond_init_monotonic(&q->timer_cond) < 0 || kc__wq_levels_init(q) < 0 ||
        kc__wq_delay_start(q) < 0) {
        kc_workqueue_free(q);
        return kc_error_set(err, KC_ENOMEM, "workqueue: cannot start the timer thread");
    }
    *ret = q;
    return 0;
}

/* ---- add / get / done --------------------------------------------------------------------------
 */

void kc__wq_add_locked(kc_workqueue *q, kc__wq_ent *e, uint64_t now, int priority)
{
    if (e->flags & KC__WQ_DIRTY) { /* W3; the Touch hook: a higher priority raises it (C12) */
        if (priority <= e->priority)
            return;
        kc__wq_depth_add(q, e->priority, -1);
        kc__wq_depth_add(q, priority, 1);
        bool queued = e->flags & KC__WQ_QUEUED;
        if (queued)
            kc__wq_unlink(q, e);
        e->priority = priority;
        if (queued) /* to the tail of its new level */
            kc__wq_push(q, e);
        return;
    }
    e->flags |= KC__WQ_DIRTY; /* W4 */
    e->priority = priority;
    if (q->name) {
        q->adds_total++;
        q->depth++;
        kc__wq_depth_add(q, priority, 1);
        kc__wq_t_add_set(e, now);
    }
    if (!(e->flags & KC__WQ_PROCESSING))
        kc__wq_push(q, e);
}

int kc_workqueue_add_with_priority(kc_workqueue *q, const char *key, int priority)
{
    kc__wq_ent *e;
    uint32_t h;
    int rc = kc__wq_lock_key(q, key, KC__WQ_ADDING, &e, &h);
    if (rc < 0)
        return rc;
    kc__wq_add_locked(q, e, q->name ? kc__wq_now(q) : 0, priority);
    pthread_mutex_unlock(&q->mu);
    return 0;
}

int kc_workqueue_add(kc_workqueue *q, const char *key)
{
    return kc_workqueue_add_with_priority(q, key, 0);
}

int kc_workqueue_get_with_priority(kc_workqueue *q, int64_t timeout_ms, const char **key,
                                   int *priority)
{
    if (!q || !key)
        return KC_EINVAL;
    pthread_mutex_lock(&q->mu);
    if (!q->qlen && !q->shutting_down && timeout_ms != 0) {
        uint64_t deadline = kc__deadline_after_ms(timeout_ms);
        q->waiters++;
        while (!q->qlen && !q->shutting_down)
            if (kc__cond_wait_until(&q->cond, &q->mu, deadline) == KC_ETIMEOUT)
                break;
        q->waiters--;
    }
    if (!q->qlen) {
        int rc = q->shutting_down ? KC_ESTOPPED : KC_ETIMEOUT; /* W5, W8 */
        pthread_mutex_unlock(&q->mu);
        return rc;
    }
    kc__wq_ent *e = kc__wq_pop(q);
    e->flags = (e->flags & ~KC__WQ_DIRTY) | KC__WQ_PROCESSING;
    q->n_processing++;
    if (priority)
        *priority = e->priority;
    if (q->name) {
        uint64_t now = kc__wq_now(q);
        q->depth--;
        kc__wq_depth_add(q, e->priority, -1);
        kc__wq_hist_observe(&q->queue_hist, (double)(now - kc__wq_t_add_get(e)) / 1e9);
        e->u.t_start = now;
    }
    *key = e->key;
    pthread_mutex_unlock(&q->mu);
    return 0;
}

int kc_workqueue_get(kc_workqueue *q, int64_t timeout_ms, const char **key)
{
    return kc_workqueue_get_with_priority(q, timeout_ms, key, NULL);
}

int kc_workqueue_done(kc_workqueue *q, const char *key)
{
    kc__wq_ent *e;
    uint32_t h;
    if (kc__wq_lock_key(q, key, 0, &e, &h) < 0)
        return KC_EINVAL;
    if (!e || !(e->flags & KC__WQ_PROCESSING)) { /* W10: a caller bug; nothing changes */
        pthread_mutex_unlock(&q->mu);
        return KC_EINVAL;
    }
    if (q->name)
        kc__wq_hist_observe(&q->work_hist, (double)(kc__wq_now(q) - e->u.t_start) / 1e9);
    e->flags &= ~KC__WQ_PROCESSING;
    if (--q->n_processing == 0 && q->draining)
        pthread_cond_broadcast(&q->drain_cond);
    if (e->flags & KC__WQ_DIRTY) /* W6: re-added while processing: once more */
        kc__wq_push(q, e);
    else
        kc__wq_release_if_idle(q, e, h);
    pthread_mutex_unlock(&q->mu);
    return 0;
}

int kc_workqueue_len(kc_workqueue *q)
{
    if (!q)
        return KC_EINVAL;
    pthread_mutex_lock(&q->mu);
    size_t n = q->qlen; /* W7 */
    pthread_mutex_unlock(&q->mu);
    return n > INT32_MAX ? INT32_MAX : (int)n;
}

/* ---- shutdown ----------------------------------------------------------------------------------
 */

static void shutdown_locked(kc_workqueue *q)
{
    if (!q->shutting_down) {
        q->shutting_down = true;
        kc__wq_delay_clear_locked(q); /* D4 */
    }
    pthread_cond_broadcast(&q->cond);
    pthread_cond_broadcast(&q->timer_cond);
}

void kc_workqueue_shutdown(kc_workqueue *q)
{
    if (!q)
        return;
    pthread_mutex_lock(&q->mu);
    shutdown_locked(q);
    q->draining = false; /* W9: a later shutdown releases a drain */
    pthread_cond_broadcast(&q->drain_cond);
    pthread_mutex_unlock(&q->mu);
}

int kc_workqueue_shutdown_drain(kc_workqueue *q, int64_t timeout_ms)
{
    if (!q)
        return KC_EINVAL;
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    pthread_mutex_lock(&q->mu);
    shutdown_locked(q);
    q->draining = true;
    int rc = 0;
    while (q->n_processing > 0 && q->draining)
        if (kc__cond_wait_until(&q->drain_cond, &q->mu, deadline) == KC_ETIMEOUT) {
            rc = q->n_processing > 0 ? KC_ETIMEOUT : 0;
            break;
        }
    if (rc == 0 && q->n_processing > 0)
        rc = KC_ECANCELED; /* released by kc_workqueue_shutdown */
    pthread_mutex_unlock(&q->mu);
    return rc;
}

void kc_workqueue_free(kc_workqueue *q)
{
    if (!q)
        return;
    kc_workqueue_shutdown(q);
    kc__wq_delay_join(q);
    kc__wq_table_free(q);
    free(q->heap);
    free(q->levels);
    free(q->name);
    free(q->controller);
    pthread_cond_destroy(&q->cond);
    pthread_cond_destroy(&q->drain_cond);
    pthread_cond_destroy(&q->timer_cond);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

/* ---- test hooks --------------------------------------------------------------------------------
 */

void kc__workqueue_set_clock(kc_workqueue *q, uint64_t (*now_ns)(void *ud), void *ud)
{
    pthread_mutex_lock(&q->mu);
    q->now_ns = now_ns ? now_ns : mono_now;
    q->clock_ud = ud;
    q->manual_pump = now_ns != NULL;
    pthread_cond_signal(&q->timer_cond);
    q->tokens_at_ns = kc__wq_now(q);
    pthread_mutex_unlock(&q->mu);
}

size_t kc__workqueue_records(kc_workqueue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->n;
    pthread_mutex_unlock(&q->mu);
    return n;
}
