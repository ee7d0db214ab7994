/*
 * coordinator/internal.h — the shard coordinator's state, shared by coordinator.c
 * (lifecycle, thread, public API) and coord_poll.c (one poll: observe the Leases, step the
 * assignment machine, act through the Lease locks).
 *
 * Locking: mu guards the lifecycle flags, the stats snapshot and the wait of the thread; cb_mu is
 * held while listeners are called and while they are added or removed (so removing one waits for
 * a call in progress). Neither is held while talking to the API server. The assignment machine,
 * the Lease locks and the observation tables belong to the coordinator's thread alone (and to
 * start, before the thread exists). The gate has its own mutex (shard_gate.c).
 *
 * Layer: src/coordinator/ sits above src/leader/, whose Lease lock (leader/lease_lock.h) it drives
 * once per range and member Lease, and above the informer it watches the Leases with; it never
 * uses the elector itself. The controller (src/controller/) is its only user in the library.
 */
#ifndef KC_COORDINATOR_INTERNAL_H
#define KC_COORDINATOR_INTERNAL_H

#include "leader/lease_lock.h"
#include "coordinator/shard_internal.h"
#include "kcache/coordinator.h"
#include "kcache/informer.h"
#include "kcache/store.h"

#include <stdatomic.h>

#define KC__COORD_MAX_LISTENERS 8
#define KC__COORD_MAX_MEMBERS   1024

typedef struct kc__coord_listener {
    kc_shard_range_fn gained, lost;
    kc_shard_range_fn resumed; /* fence extended after it refused keys (internal listeners) */
    void *ud;
} kc__coord_listener;

/* What this replica last observed of one Lease (L5: observed_ms moves when the RV changes). */
typedef struct kc__coord_obs {
    char *name; /* members only */
    uint64_t rv;
    uint64_t observed_ms;
    char holder[KC__SHARD_ID_MAX];
    uint32_t k;
    bool exists, seen;
} kc__coord_obs;

typedef enum kc__coord_state {
    KC__COORD_NEW = 0,
    KC__COORD_RUNNING = 1,
    KC__COORD_STOPPED = 2,
} kc__coord_state;

struct kc_shard_coordinator {
    kc_client *client; /* borrowed */
    char *ns, *prefix, *identity, *member_prefix;
    uint32_t k;
    uint64_t ld_ms, rd_ms, rp_ms; /* ld_ms: rounded up to whole seconds (what a Lease stores) */
    int64_t drain_timeout_ms;

    kc__shard_assign *a;
    kc__shard_gate *g;
    kc__lease_lock *member;
    kc__lease_lock **rl; /* K range locks */
    kc_informer *inf;    /* every Lease of the namespace */
    kc__coord_obs *robs; /* K */
    kc__coord_obs *mobs; /* members */
    size_t n_mobs;
    kc__shard_act *acts; /* K, scratch */
    kc__rng rng;
    bool leaving;
    uint64_t leave_deadline_ms;

    pthread_mutex_t cb_mu;
    kc__coord_listener lis[KC__COORD_MAX_LISTENERS];
    size_t n_lis;

    pthread_mutex_t mu;
    pthread_cond_t cv; /* stop requested, or the thread ended */
    kc__coord_state state;
    bool stop_req, kill_req, thread_started, thread_done;
    pthread_t th;
    int stop_rc;
    uint32_t st_held, st_draining, st_target, st_live;
    bool st_refused;

    atomic_uint_fast64_t n_polls, n_acquired, n_released, n_lost, n_write_errors;
    atomic_uint_fast64_t n_resumed; /* renews that lifted a fence which had refused keys */
};

/* coord_poll.c: one poll at now; returns the next poll's time (jitter not included). */
uint64_t kc__coord_poll(kc_shard_coordinator *c, uint64_t now);
/* Release every range still held or draining (the stop's last resort past its drain bound). */
void kc__coord_release_all(kc_shard_coordinator *c);
/* What happened to range r, for the listeners. */
typedef enum { KC__COORD_GAINED, KC__COORD_LOST, KC__COORD_RESUMED } kc__coord_event;
/* Call the listeners' gained, lost or resumed for range r. */
void kc__coord_notify(kc_shard_coordinator *c, uint32_t r, kc__coord_event ev);

/* For the controller (controller.c, run.c) and tests. */
/* resumed: a held range's fence was extended by a renew after the gate refused keys of it as
 * fenced (the renew came late); the range did not move, so no gained follows: the listener
 * re-enqueues its keys (P6). May be NULL. */
int kc__shard_coordinator_listen(kc_shard_coordinator *c, kc_shard_range_fn gained,
                                 kc_shard_range_fn lost, kc_shard_range_fn resumed, void *ud);
void kc__shard_coordinator_unlisten(kc_shard_coordinator *c, void *ud);
kc__shard_gate *kc__shard_coordinator_gate(kc_shard_coordinator *c);
/* Tests: end the thread without releasing anything, as a killed process (P5); the gate drops
 * every range (a dead process reconciles nothing). */
void kc__shard_coordinator_kill(kc_shard_coordinator *c);

#endif
