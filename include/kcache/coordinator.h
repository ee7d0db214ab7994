/*
 * kcache/coordinator.h — kc_shard_coordinator: hash ranges shared among the replicas of a
 * controller through coordination.k8s.io/v1 Leases, so every object is reconciled by exactly one
 * replica and replicas can come and go (docs/scale-out.md).
 *
 * The 64-bit hash space (FNV-1a of an object's uid, kcache/shard.h) is split into K even ranges
 * (K a power of two, default 64). Range i is guarded by the Lease "<prefix>-range-<i>", which
 * records K in the annotation kcache.io/shard-ranges (a replica that sees another K refuses to
 * act). Each replica renews its member Lease "<prefix>-member-<identity>"; a member is live while
 * its Lease record keeps changing (judged on the local monotonic clock). Each replica aims at
 * floor(K/N) or ceil(K/N) of the ranges (N live members), acquires free or expired ranges while
 * below that, and drains the excess once membership has been stable for one retry period: it
 * stops admitting new keys of the range, waits for the range's reconciles in flight, calls
 * on_lost, and releases the Lease. A range is acted on only while held and before its fence
 * (the send time of the last successful renew + renew deadline).
 *
 * A controller runs sharded by naming the coordinator in kc_controller_opts.coordinator: a key
 * whose range is not held, is draining or is fenced is dropped, not reconciled; a gained range
 * re-enqueues the keys of the controller's cache in it.
 *
 * Lifecycle: kc_shard_coordinator_new → kc_shard_coordinator_start → … → kc_shard_coordinator_stop
 * (graceful: drain and release every range, then the member Lease) → kc_shard_coordinator_free.
 * Thread-safety: stated per function; callbacks run on the coordinator's thread.
 */
#ifndef KCACHE_COORDINATOR_H
#define KCACHE_COORDINATOR_H

#include "client.h"
#include "fence.h"
#include "shard.h"

KC_BEGIN_DECLS

typedef struct kc_shard_coordinator kc_shard_coordinator;

/* Range gained or lost: index (0..K-1) and its hash bounds (borrowed for the call). Runs on the
 * coordinator's thread; must not block for long (every Lease renew waits for it) and must not
 * call kc_shard_coordinator_stop or _free. */
typedef void (*kc_shard_range_fn)(void *ud, uint32_t range, const kc_shard_range *bounds);

/*
 * Options. Zero-initialised means the defaults; strings are copied. Timings follow client-go's
 * leader election (spec L6, L7): lease_duration_ms > renew_deadline_ms > 1.2 · retry_period_ms.
 * A Lease stores whole seconds, so the lease duration in effect is lease_duration_ms rounded up
 * to a whole second.
 */
typedef struct kc_shard_coordinator_opts {
    const char *ns;            /* namespace of the Leases; required */
    const char *prefix;        /* Lease name prefix (a DNS label); required */
    const char *identity;      /* unique per replica (e.g. the pod name); required */
    uint32_t ranges;           /* K: a power of two up to 4096; 0 = 64 */
    int64_t lease_duration_ms; /* LD; 0 = 15000 */
    int64_t renew_deadline_ms; /* RD; 0 = 10000 */
    int64_t retry_period_ms;   /* RP; 0 = 2000; each poll waits RP plus a jitter up to 0.2·RP */
    int64_t drain_timeout_ms;  /* stop's bound on reconciles in flight; 0 = 30000 */
    kc_shard_range_fn on_gained, on_lost; /* may be NULL */
    void *ud;                             /* passed to the callbacks (borrowed) */
} kc_shard_coordinator_opts;

/*
 * New coordinator over client (borrowed: must outlive it). Checks the options; sends nothing.
 * Errors: KC_EINVAL (NULL client/opts/ret, a required field missing, K not a power of two or too
 * large, timings not LD > RD > 1.2·RP > 0), KC_EUNSUPPORTED (a field this library does not
 * know is set), KC_ENOMEM. opts are copied (ud borrowed). *ret is new — caller frees with
 * kc_shard_coordinator_free. Thread-safe. The macro passes sizeof(kc_shard_coordinator_opts).
 * Since 0.1.
 */
KC_API int(kc_shard_coordinator_new)(kc_client *client, const kc_shard_coordinator_opts *opts,
                                     size_t opts_size, kc_shard_coordinator **ret, kc_error *err);
#define kc_shard_coordinator_new(client, opts, ret, err)                                           \
    (kc_shard_coordinator_new)((client), (opts), sizeof(kc_shard_coordinator_opts), (ret), (err))

/* Start: watch the Leases of the namespace (waits for the first list, bounded by 10 · LD), create
 * or renew the member Lease and start the coordinator's thread. Errors: KC_EINVAL (NULL),
 * KC_EBUSY (started already), KC_ESTOPPED, the informer's or the API's error. No ownership
 * transfer. Thread-safe. Since 0.1. */
KC_API int kc_shard_coordinator_start(kc_shard_coordinator *c, kc_error *err);

/*
 * Graceful stop (spec A12): no more acquisitions; every held range is drained (new keys dropped,
 * reconciles in flight awaited up to drain_timeout_ms), on_lost is called and its Lease released;
 * then the member Lease is released and the thread joined (a release that conflicts is retried
 * for up to RD, so an unreachable server adds up to RD per held range). Returns 0, KC_ETIMEOUT
 * when a drain
 * hit its bound (that range was released anyway: guarded work past the bound is the caller's
 * risk), KC_EINVAL (NULL). Errors: KC_ETIMEOUT, KC_EINVAL. Idempotent. Must not be called from a
 * callback. No ownership transfer. Thread-safe. Since 0.1.
 */
KC_API int kc_shard_coordinator_stop(kc_shard_coordinator *c);

/* Stop if needed and free (c is consumed, its fences with it). Accepts NULL. A controller using
 * it must be freed first. Not thread-safe: no other call on c may be in flight. Never fails.
 * Since 0.1. */
KC_API void kc_shard_coordinator_free(kc_shard_coordinator *c);

/* K, the number of ranges. 0 for NULL. No ownership transfer. Thread-safe. Never fails.
 * Since 0.1. */
KC_API uint32_t kc_shard_coordinator_ranges(const kc_shard_coordinator *c);
/* The range of hash h (its top log2 K bits). 0 for NULL. No ownership transfer. Thread-safe.
 * Never fails. Since 0.1. */
KC_API uint32_t kc_shard_coordinator_range_of(const kc_shard_coordinator *c, uint64_t h);

/* Whether this replica may act on range r now (spec A11): held, not draining, before its fence.
 * Check before each write of a long reconcile. false for NULL. No ownership transfer.
 * Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_shard_coordinator_holds(kc_shard_coordinator *c, uint32_t r);

/* Range r's write fence (kcache/fence.h): valid until the range's deadline (the send time of its
 * Lease's last successful renew + renew deadline, L12a) while this replica holds it, closed
 * otherwise. Pass it to the writes acting on the range (kc_cached_call_opts.fence; a sharded
 * controller hands it to each reconcile as kc_reconcile_request.fence), so that a replica
 * paused between its check and its write cannot write after losing the range. Borrowed: lives as
 * long as the coordinator. NULL for c NULL or r >= the range count. Thread-safe. Never fails.
 * Since 0.1. */
KC_API const kc_fence *kc_shard_coordinator_fence(kc_shard_coordinator *c, uint32_t r);

/* Counters and state. */
typedef struct kc_shard_coordinator_stats {
    uint32_t ranges;       /* K */
    uint32_t held;         /* ranges held (not draining) */
    uint32_t draining;     /* ranges draining */
    uint32_t target;       /* floor or ceil of K / live members, for this replica */
    uint32_t live_members; /* at the last poll, self included */
    bool refused;          /* a range Lease records another K (A8): acting on nothing */
    uint64_t polls, acquired, released, lost, write_errors;
} kc_shard_coordinator_stats;

/* Counters into *ret (at most ret_size bytes; docs/abi.md). c NULL: zeroed; ret NULL: nothing.
 * Copied into the caller's *ret. Thread-safe. Never fails. The macro passes
 * sizeof(kc_shard_coordinator_stats). Since 0.1. */
KC_API void(kc_shard_coordinator_get_stats)(kc_shard_coordinator *c,
                                            kc_shard_coordinator_stats *ret, size_t ret_size);
#define kc_shard_coordinator_get_stats(c, ret)                                                     \
    (kc_shard_coordinator_get_stats)((c), (ret), sizeof(kc_shard_coordinator_stats))

KC_END_DECLS

#endif
