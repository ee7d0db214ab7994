/*
 * coordinator/shard_gate.c — per-range admission for a sharded controller (spec A11, A12).
 *
 * For each of K ranges: whether this replica holds it, whether it is draining, the fence deadline
 * valid_until (monotonic ms: the send time of the last successful renew + RD, L12 a) and the
 * number of reconciles in flight. A worker calls enter(r, now) before a reconcile of a key in
 * range r and leave(r) after: enter admits only a held, not draining range before its fence, so
 * a key whose range is not held, is draining or is fenced is never reconciled. A drain marks the
 * range draining (no new admissions) and waits for the in-flight count to reach 0 before the
 * Lease is released: no reconcile of the range runs on two replicas at once (P4).
 *
 * A key refused only because the fence passed (held, not draining: a renew came late, e.g. on
 * an overloaded machine) marks the range; the hold that extends the fence again returns true
 * once, so the coordinator can have the range's keys re-enqueued (P6). Without it such a key
 * would be lost: the range never moved, so no gain re-enqueues it. The mark is set and taken
 * under the mutex, so a refusal is either before the hold (reported) or after it (admitted).
 *
 * Each range also has a kc_fence with the same deadline (closed when not held), which a reconcile
 * passes to its writes (kc_reconcile_request.fence → kc_cached_call_opts.fence): a write checked
 * after the deadline is refused even when the process was paused between admission and send.
 *
 * One mutex and one monotonic condition variable (in-flight reached 0); never held while calling
 * out. K is a power of two, so the range of hash h is its top log2(K) bits (S15).
 */
#include "coordinator/shard_internal.h"

#include <stdlib.h>

typedef struct gate_range {
    bool held, draining;
    bool refused; /* held, not draining, and a key refused as fenced since the last hold */
    uint64_t valid_until;
    unsigned inflight;
    kc_fence *fence; /* valid_until as a kc_fence (ns; closed when not held), for writes */
} gate_range;

struct kc__shard_gate {
    uint32_t k;
    unsigned shift; /* 64 - log2(k); 64 when k == 1 */
    pthread_mutex_t mu;
    pthread_cond_t idle;
    gate_range *r;
};

kc__shard_gate *kc__shard_gate_new(uint32_t k)
{
    if (k == 0 || k > KC__SHARD_MAX_RANGES || (k & (k - 1)) != 0)
        return NULL;
    kc__shard_gate *g = calloc(1, sizeof(*g));
    if (!g)
        return NULL;
    g->r = calloc(k, sizeof(*g->r));
    bool ok = g->r != NULL;
    for (uint32_t i = 0; ok && i < k; i++)
        ok = kc_fence_new(&g->r[i].fence, NULL) == 0;
    if (!ok || kc__cond_init_monotonic(&g->idle) != 0) {
        for (uint32_t i = 0; g->r && i < k; i++)
            kc_fence_free(g->r[i].fence);
        free(g->r);
        free(g);
        return NULL;
    }
    pthread_mutex_init(&g->mu, NULL);
    g->k = k;
    unsigned bits = 0;
    while ((1u << bits) < k)
        bits++;
    g->shift = 64 - bits;
    return g;
}

void kc__shard_gate_free(kc__shard_gate *g)
{
    if (!g)
        return;
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->idle);
    for (uint32_t i = 0; i < g->k; i++)
        kc_fence_free(g->r[i].fence);
    free(g->r);
    free(g);
}

uint32_t kc__shard_gate_k(const kc__shard_gate *g)
{
    return g ? g->k : 0;
}

uint32_t kc__shard_gate_range_of(const kc__shard_gate *g, uint64_t h)
{
    return g->shift >= 64 ? 0 : (uint32_t)(h >> g->shift);
}

bool kc__shard_gate_hold(kc__shard_gate *g, uint32_t r, uint64_t valid_until_ms)
{
    if (!g || r >= g->k)
        return false;
    pthread_mutex_lock(&g->mu);
    bool resumed = g->r[r].held && g->r[r].refused;
    g->r[r].refused = false;
    g->r[r].held = true;
    g->r[r].valid_until = valid_until_ms;
    kc_fence_set_valid_until(g->r[r].fence, valid_until_ms * KC__NS_PER_MS);
    pthread_mutex_unlock(&g->mu);
    return resumed;
}

void kc__shard_gate_drain(kc__shard_gate *g, uint32_t r)
{
    if (!g || r >= g->k)
        return;
    pthread_mutex_lock(&g->mu);
    g->r[r].draining = true;
    pthread_mutex_unlock(&g->mu);
}

void kc__shard_gate_drop(kc__shard_gate *g, uint32_t r)
{
    if (!g || r >= g->k)
        return;
    pthread_mutex_lock(&g->mu);
    g->r[r].held = false;
    g->r[r].draining = false;
    g->r[r].refused = false;
    g->r[r].valid_until = 0;
    kc_fence_set_valid_until(g->r[r].fence, 0);
    pthread_mutex_unlock(&g->mu);
}

const kc_fence *kc__shard_gate_fence(const kc__shard_gate *g, uint32_t r)
{
    return g && r < g->k ? g->r[r].fence : NULL;
}

static bool valid_locked(const gate_range *gr, uint64_t now_ms)
{
    return gr->held && !gr->draining && now_ms < gr->valid_until;
}

bool kc__shard_gate_enter(kc__shard_gate *g, uint32_t r, uint64_t now_ms)
{
    if (!g || r >= g->k)
        return false;
    pthread_mutex_lock(&g->mu);
    bool ok = valid_locked(&g->r[r], now_ms);
    if (ok)
        g->r[r].inflight++;
    else if (g->r[r].held && !g->r[r].draining)
        g->r[r].refused = true; /* fenced only: the renew that lifts it reports it */
    pthread_mutex_unlock(&g->mu);
    return ok;
}

void kc__shard_gate_leave(kc__shard_gate *g, uint32_t r)
{
    if (!g || r >= g->k)
        return;
    pthread_mutex_lock(&g->mu);
    if (g->r[r].inflight > 0 && --g->r[r].inflight == 0)
        pthread_cond_broadcast(&g->idle);
    pthread_mutex_unlock(&g->mu);
}

unsigned kc__shard_gate_inflight(kc__shard_gate *g, uint32_t r)
{
    if (!g || r >= g->k)
        return 0;
    pthread_mutex_lock(&g->mu);
    unsigned n = g->r[r].inflight;
    pthread_mutex_unlock(&g->mu);
    return n;
}

bool kc__shard_gate_held(kc__shard_gate *g, uint32_t r)
{
    if (!g || r >= g->k)
        return false;
    pthread_mutex_lock(&g->mu);
    bool ok = g->r[r].held && !g->r[r].draining;
    pthread_mutex_unlock(&g->mu);
    return ok;
}

bool kc__shard_gate_valid(kc__shard_gate *g, uint32_t r, uint64_t now_ms)
{
    if (!g || r >= g->k)
        return false;
    pthread_mutex_lock(&g->mu);
    bool ok = valid_locked(&g->r[r], now_ms);
    pthread_mutex_unlock(&g->mu);
    return ok;
}

int kc__shard_gate_wait_idle(kc__shard_gate *g, uint32_t r, int64_t timeout_ms)
{
    if (!g || r >= g->k)
        return KC_EINVAL;
    uint64_t deadline =
        timeout_ms < 0 ? KC__DEADLINE_NEVER : kc__now_ns() + (uint64_t)timeout_ms * KC__NS_PER_MS;
    int rc = 0;
    pthread_mutex_lock(&g->mu);
    while (g->r[r].inflight > 0 && rc == 0)
        rc = kc__cond_wait_until(&g->idle, &g->mu, deadline);
    if (g->r[r].inflight == 0)
        rc = 0;
    pthread_mutex_unlock(&g->mu);
    return rc;
}
