/*
 * coordinator/shard_internal.h — shard assignment across replicas (spec §5.3, A8–A16): the pure
 * assignment state machine (shard_assign.c) and the per-range gate the controller consults
 * before every reconcile (shard_gate.c).
 *
 * The state machine knows nothing of Leases, threads or clocks: its input is what a replica last
 * observed of the member Leases and the K range Leases (holder, and the local monotonic time the
 * record last changed, L5), its own identity and `now`; its output is one action per range
 * (acquire, renew, drain, release, lose) and the time it wants to run again. The runtime performs
 * the actions (Lease writes with resourceVersion preconditions, L4) and reports their outcome.
 * Being pure, it is unit-tested with a fake clock and scripted Lease histories
 * (tests/unit/test_coordinator_shard_assign.c: P1, P2, P3 through joins, leaves, crashes, pauses).
 */
#ifndef KC_COORDINATOR_SHARD_INTERNAL_H
#define KC_COORDINATOR_SHARD_INTERNAL_H

#include "core/internal.h"
#include "kcache/shard.h"
#include "kcache/fence.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* The annotation on every range Lease that records K (A8). */
#define KC__SHARD_K_ANNOTATION "kcache.io/shard-ranges"
/* The label on every member and range Lease of one coordinator group (value: the prefix). */
#define KC__SHARD_GROUP_LABEL "kcache.io/shard-group"
/* Most ranges (K) and longest identity the library accepts. */
#define KC__SHARD_MAX_RANGES 4096u
#define KC__SHARD_ID_MAX     128

/* ---- observations (input) -------------------------------------------------------------------- */

/* One member Lease as last observed. */
typedef struct kc__shard_member_obs {
    const char *identity; /* the holder ("" or NULL: released) */
    uint64_t observed_ms; /* local monotonic time its record last changed (L5) */
} kc__shard_member_obs;

/* One range Lease as last observed. */
typedef struct kc__shard_range_obs {
    bool exists;          /* false: no Lease yet (free) */
    const char *holder;   /* "" or NULL: free */
    uint64_t observed_ms; /* local monotonic time its record last changed (L5) */
    uint32_t k;           /* the K annotation; 0 when absent */
} kc__shard_range_obs;

typedef struct kc__shard_view {
    const kc__shard_member_obs *members;
    size_t n_members;
    const kc__shard_range_obs *ranges; /* exactly K entries */
    const bool *idle;                  /* per range: no reconcile in flight (NULL: all idle) */
} kc__shard_view;

/* ---- actions (output) ------------------------------------------------------------------------ */

typedef enum kc__shard_act {
    KC__SHARD_ACT_NONE = 0,
    KC__SHARD_ACT_ACQUIRE = 1, /* free (or ours from before): try to take it (L3/L4) */
    KC__SHARD_ACT_RENEW = 2,   /* held (or draining, still busy): renew */
    KC__SHARD_ACT_DRAIN = 3,   /* held, above target: begin draining (A12 step 1) */
    KC__SHARD_ACT_RELEASE = 4, /* draining and idle: release the Lease (A12 step 3, L9) */
    KC__SHARD_ACT_LOSE = 5,    /* we thought we held it, the record names another: stop now */
} kc__shard_act;

/* Local state of a range on this replica. */
typedef enum kc__shard_mine {
    KC__SHARD_NOT_HELD = 0,
    KC__SHARD_HELD = 1,
    KC__SHARD_DRAINING = 2,
} kc__shard_mine;

typedef struct kc__shard_assign kc__shard_assign;

/* New state machine for k ranges (a power of two, 1..KC__SHARD_MAX_RANGES) as identity
 * (copied). ld_ms, rp_ms > 0. Returns NULL on bad arguments or out of memory. */
kc__shard_assign *kc__shard_assign_new(uint32_t k, const char *identity, uint64_t ld_ms,
                                       uint64_t rp_ms);
void kc__shard_assign_free(kc__shard_assign *a);

/*
 * One step at now (monotonic ms): fills acts[0..K) and returns the monotonic ms at which the
 * runtime should step again (≤ now + rp_ms; earlier when a lease expires or a stability window
 * ends first). The runtime then performs the acts and reports each ACQUIRE / RELEASE / RENEW
 * outcome with kc__shard_assign_report. A range Lease recording another K makes the machine
 * refuse (A8): every act is NONE, kc__shard_assign_refused turns true, held ranges are LOSE.
 */
uint64_t kc__shard_assign_step(kc__shard_assign *a, const kc__shard_view *v, uint64_t now,
                               kc__shard_act *acts);

/* Shut down (A12): from the next step on the target is 0, every held range drains at once (no
 * stability wait) and nothing is acquired. none_held: nothing held or draining any more (then
 * release the member Lease). */
void kc__shard_assign_leave(kc__shard_assign *a);
bool kc__shard_assign_none_held(const kc__shard_assign *a);

/* The outcome of an act on range r: ACQUIRE ok → held; RELEASE (either way; also right after a
 * DRAIN when the range was already idle) → not held (a failed
 * release expires after LD, A12); RENEW not ok past the fence → call with LOSE. LOSE → not held. */
void kc__shard_assign_report(kc__shard_assign *a, uint32_t r, kc__shard_act act, bool ok);

/* Local state of range r; the number of ranges held (not draining); the target (floor or ceil
 * of K/live by rank); live members at the last step; whether K mismatched. */
kc__shard_mine kc__shard_assign_mine(const kc__shard_assign *a, uint32_t r);
uint32_t kc__shard_assign_held(const kc__shard_assign *a);
uint32_t kc__shard_assign_target(const kc__shard_assign *a);
uint32_t kc__shard_assign_live(const kc__shard_assign *a);
bool kc__shard_assign_refused(const kc__shard_assign *a);

/* ---- range gate (shard_gate.c) --------------------------------------------------------------- */

/* Per-range admission for the controller (A11, A12): a key of range r is reconciled only while r
 * is held (not draining, not lost) and now_mono < valid_until(r); in-flight reconciles per range
 * are counted so a drain can wait for 0. One mutex; never held while calling out. */
typedef struct kc__shard_gate kc__shard_gate;

kc__shard_gate *kc__shard_gate_new(uint32_t k);
void kc__shard_gate_free(kc__shard_gate *g);
uint32_t kc__shard_gate_k(const kc__shard_gate *g);
/* The range of hash h: h >> (64 - log2 K) (S15, K a power of two). */
uint32_t kc__shard_gate_range_of(const kc__shard_gate *g, uint64_t h);
/* Hold r until valid_until_ms (monotonic; a renew extends it). Returns true when r was held
 * already and enter refused a key of it since the previous hold because its fence had passed (a
 * late renew): those keys were dropped, and only a re-enqueue of the range brings them back. */
bool kc__shard_gate_hold(kc__shard_gate *g, uint32_t r, uint64_t valid_until_ms);
/* Mark r draining: new keys are refused; in-flight ones finish. */
void kc__shard_gate_drain(kc__shard_gate *g, uint32_t r);
/* r no longer held (released or lost). */
void kc__shard_gate_drop(kc__shard_gate *g, uint32_t r);
/* Admit one reconcile of range r at now_ms: true (and in-flight++) iff held, not draining and
 * now_ms < valid_until; a refusal of a held, not draining range is remembered for hold. */
bool kc__shard_gate_enter(kc__shard_gate *g, uint32_t r, uint64_t now_ms);
/* A reconcile admitted by enter finished (in-flight--; wakes a waiter). */
void kc__shard_gate_leave(kc__shard_gate *g, uint32_t r);
/* r held and not draining, whether or not its fence passed (the Lease is still ours to renew). */
bool kc__shard_gate_held(kc__shard_gate *g, uint32_t r);
/* Reconciles of r in flight now. */
unsigned kc__shard_gate_inflight(kc__shard_gate *g, uint32_t r);
/* Whether range r may be acted on at now_ms (held, not draining, before its fence). */
bool kc__shard_gate_valid(kc__shard_gate *g, uint32_t r, uint64_t now_ms);
/* Range r's write fence (borrowed, lives with the gate; NULL for r out of range). */
const kc_fence *kc__shard_gate_fence(const kc__shard_gate *g, uint32_t r);
/* Wait until r's in-flight count is 0 or timeout_ms passes (< 0: no bound). 0 or KC_ETIMEOUT. */
int kc__shard_gate_wait_idle(kc__shard_gate *g, uint32_t r, int64_t timeout_ms);

#endif
