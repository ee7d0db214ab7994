/*
 * workqueue/wq_limit.c — rate-limited adds (spec §1.3, rules R1–R5).
 *
 * The limiter is client-go's default controller limiter, MaxOf(ItemExponential(base, max),
 * Bucket(qps, burst)) (R5), with both halves configurable (kc_workqueue_opts):
 *   - per key (R2): the n-th consecutive failure (n counted before the call) waits base·2^n,
 *     capped at max (an overflow gives max too); the count lives in the key's record, which
 *     therefore stays while the count is > 0; forget resets it; num_requeues reads it.
 *   - overall (R3): a token bucket refilled at qps up to burst; every call reserves one token,
 *     the balance may go negative, and the wait is the time until the reserved token exists
 *     (golang.org/x/time/rate's Reserve): after a burst of `burst` adds they are spaced 1/qps.
 *   - the delay is the larger of the two, and the bucket spends its token even when the per-key
 *     delay wins (R4). qps < 0 turns the bucket off.
 * add_rate_limited(key) ≡ add_after(key, When(key)) (R1), so it counts a retry too (D1).
 */
#include "workqueue/internal.h"

#include <math.h>

static uint64_t exponential(const kc_workqueue *q, uint32_t n)
{
    if (n >= 64 || q->base_ns > (q->max_ns >> n))
        return q->max_ns; /* capped, overflow included (R2) */
    return q->base_ns << n;
}

static uint64_t bucket(kc_workqueue *q, uint64_t now)
{
    if (q->qps <= 0)
        return 0;
    if (now > q->tokens_at_ns) {
        q->tokens += (double)(now - q->tokens_at_ns) / 1e9 * q->qps;
        if (q->tokens > q->burst)
            q->tokens = q->burst;
        q->tokens_at_ns = now;
    }
    q->tokens -= 1.0;
    if (q->tokens >= 0)
        return 0;
    double wait_ns = ceil(-q->tokens / q->qps * 1e9);
    return wait_ns >= 1.8e19 ? UINT64_MAX : (uint64_t)wait_ns;
}

uint64_t kc__wq_limiter_when_locked(kc_workqueue *q, kc__wq_ent *e, uint64_t now)
{
    uint64_t a = exponential(q, e->failures);
    if (e->failures < KC__WQ_FAILURES_MAX)
        e->failures++;
    uint64_t b = bucket(q, now);
    return a > b ? a : b;
}

int kc_workqueue_add_rate_limited_with_priority(kc_workqueue *q, const char *key, int priority)
{
    kc__wq_ent *e;
    uint32_t h;
    int rc = kc__wq_lock_key(q, key, KC__WQ_ADDING, &e, &h);
    if (rc < 0)
        return rc;
    uint64_t now = kc__wq_now(q);
    uint32_t failures = e->failures;
    uint64_t delay = kc__wq_limiter_when_locked(q, e, now);
    if (q->name)
        q->retries_total++;
    rc = kc__wq_add_after_locked(q, e, now, delay, priority);
    if (rc < 0) {
        e->failures = failures; /* nothing happened */
        kc__wq_release_if_idle(q, e, h);
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

int kc_workqueue_add_rate_limited(kc_workqueue *q, const char *key)
{
    return kc_workqueue_add_rate_limited_with_priority(q, key, 0);
}

int kc_workqueue_forget(kc_workqueue *q, const char *key)
{
    kc__wq_ent *e;
    uint32_t h;
    if (kc__wq_lock_key(q, key, 0, &e, &h) < 0)
        return KC_EINVAL;
    if (e) {
        e->failures = 0; /* R1: only the limiter's memory; done is still required */
        kc__wq_release_if_idle(q, e, h);
    }
    pthread_mutex_unlock(&q->mu);
    return 0;
}

int kc_workqueue_num_requeues(kc_workqueue *q, const char *key)
{
    kc__wq_ent *e;
    uint32_t h;
    if (kc__wq_lock_key(q, key, 0, &e, &h) < 0)
        return KC_EINVAL;
    uint32_t n = e ? e->failures : 0;
    pthread_mutex_unlock(&q->mu);
    return (int)n; /* at most KC__WQ_FAILURES_MAX */
}
