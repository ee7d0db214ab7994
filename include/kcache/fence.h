/*
 * kcache/fence.h — kc_fence: a self-fence deadline (spec L12a). Whoever holds a lease sets the
 * fence's valid-until to t_send(last successful renew) + renew deadline, on CLOCK_MONOTONIC and
 * read before the renew was sent; guarded work checks the fence before each write and stops once
 * the deadline has passed, even when the thread that renews is stuck or paused — the fence
 * depends on the clock only, not on anyone noticing the loss.
 *
 * kc_leader_elector (kcache/leader.h) owns one and keeps it up to date; kc_cached_client refuses
 * every write with KC_EFENCED once an attached fence has passed (kcache/cached_client.h), and
 * kc_controller reconciles nothing then (kcache/controller.h). A fence is one atomic 64-bit
 * value: every function is thread-safe and lock-free.
 */
#ifndef KCACHE_FENCE_H
#define KCACHE_FENCE_H

#include "error.h"

KC_BEGIN_DECLS

typedef struct kc_fence kc_fence;

/* New fence, closed (valid-until 0). Errors: KC_EINVAL (ret NULL), KC_ENOMEM. *ret is new —
 * caller frees with kc_fence_free. Thread-safe. Since 0.1. */
KC_API int kc_fence_new(kc_fence **ret, kc_error *err);

/* Free (fence is consumed). Nothing may use the fence any more (whoever it is attached to must be
 * gone or detached). Accepts NULL. Not thread-safe: must not race with any other use of the
 * fence. Never fails. Since 0.1. */
KC_API void kc_fence_free(kc_fence *fence);

/* The fence's clock: CLOCK_MONOTONIC in ns. Thread-safe. Never fails. Since 0.1. */
KC_API uint64_t kc_fence_now_ns(void);

/* Set valid-until (kc_fence_now_ns time; 0 closes the fence). fence is borrowed for the call.
 * Thread-safe. NULL: nothing. Never fails. Since 0.1. */
KC_API void kc_fence_set_valid_until(kc_fence *fence, uint64_t valid_until_ns);

/* The current valid-until (0 = closed; 0 for NULL). fence is borrowed for the call. Thread-safe.
 * Never fails. Since 0.1. */
KC_API uint64_t kc_fence_valid_until(const kc_fence *fence);

/* Whether kc_fence_now_ns() < valid-until. false for NULL. fence is borrowed for the call.
 * Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_fence_valid(const kc_fence *fence);

/* 0 while valid; fence is borrowed for the call. Errors: KC_EFENCED (err says by how much the
 * deadline passed, or that it was never open) once not valid; KC_EINVAL for NULL. Thread-safe.
 * Since 0.1. */
KC_API int kc_fence_check(const kc_fence *fence, kc_error *err);

KC_END_DECLS

#endif
