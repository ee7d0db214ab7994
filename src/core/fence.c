/*
 * fence.c — kc_fence (kcache/fence.h): one atomic valid-until on CLOCK_MONOTONIC (spec L12a).
 * Writers (the leader elector) store with release order, readers (every cached write, every
 * reconcile) load with acquire order; no lock, no allocation after new.
 */
#include "core/internal.h"
#include "kcache/fence.h"

#include <stdatomic.h>
#include <stdlib.h>

struct kc_fence {
    _Atomic uint64_t valid_until;
};

int kc_fence_new(kc_fence **ret, kc_error *err)
{
    if (!ret)
        return kc_error_set(err, KC_EINVAL, "kc_fence_new: ret is NULL");
    kc_fence *f = calloc(1, sizeof(*f));
    if (!f)
        return kc_error_set(err, KC_ENOMEM, "kc_fence_new: out of memory");
    atomic_init(&f->valid_until, 0);
    *ret = f;
    return 0;
}

void kc_fence_free(kc_fence *fence)
{
    free(fence);
}

uint64_t kc_fence_now_ns(void)
{
    return kc__now_ns();
}

void kc_fence_set_valid_until(kc_fence *fence, uint64_t valid_until_ns)
{
    if (fence)
        atomic_store_explicit(&fence->valid_until, valid_until_ns, memory_order_release);
}

uint64_t kc_fence_valid_until(const kc_fence *fence)
{
    return fence ? atomic_load_explicit(&((kc_fence *)fence)->valid_until, memory_order_acquire)
                 : 0;
}

bool kc_fence_valid(const kc_fence *fence)
{
    return fence && kc__now_ns() < kc_fence_valid_until(fence);
}

int kc_fence_check(const kc_fence *fence, kc_error *err)
{
    if (!fence)
        return kc_error_set(err, KC_EINVAL, "kc_fence_check: fence is NULL");
    uint64_t until = kc_fence_valid_until(fence), now = kc__now_ns();
    if (now < until)
        return 0;
    if (!until)
        return kc_error_set(err, KC_EFENCED, "fenced: no lease held");
    return kc_error_set(err, KC_EFENCED, "fenced: the local lease deadline passed %llu ms ago",
                        (unsigned long long)((now - until) / KC__NS_PER_MS));
}
