/*
 * controller/leader_internal.h — the leader elector's state (leader.c, leader_run.c) and what the
 * controller uses of it: gates (controllers switched on while leading, off at once on loss) and a
 * test hook that pauses the elector's thread as SIGSTOP would.
 *
 * Locks: mu guards the run state, the last observed holder and the pause flag; gate_mu guards the
 * gate list and is held while the gates are switched, so a controller that removes itself never
 * sees a call after removal. Order: gate_mu, then a controller's own mutex (inside
 * kc_controller_set_active); mu is never held with either.
 */
#ifndef KC_CONTROLLER_LEADER_INTERNAL_H
#define KC_CONTROLLER_LEADER_INTERNAL_H

#include "controller/lease_lock.h"
#include "core/internal.h"
#include "kcache/controller.h"
#include "kcache/leader.h"

#include <pthread.h>
#include <stdatomic.h>

#define KC__LEADER_GATES_MAX 32

/* RUNNING → ENDING once the run's end is decided (callbacks still to run) → ENDED. */
typedef enum { KC__LE_IDLE, KC__LE_RUNNING, KC__LE_ENDING, KC__LE_ENDED } kc__le_state;

struct kc_leader_elector {
    kc_client *client;
    char *ns, *name, *identity;
    uint64_t ld_ns, rd_ns, rp_ns;
    kc_leader_elector_opts o; /* callbacks and flags (strings not used from here) */
    kc__lease_lock *lock;     /* driven by the run thread only */
    kc_fence *fence;
    kc__rng rng; /* run thread only */

    pthread_mutex_t mu;
    pthread_cond_t cv; /* stopping or pause changed */
    kc__le_state state;
    bool thread_live; /* a thread to join */
    bool stopping, paused;
    char *holder; /* last reported holder ("" = none) */
    pthread_t thread;

    atomic_bool leading;
    _Atomic uint64_t slowpath;

    pthread_mutex_t gate_mu;
    kc_controller *gates[KC__LEADER_GATES_MAX];
    size_t n_gates;
};

/* The run thread (leader_run.c). */
void *kc__leader_run(void *arg);
/* Switch every gate (leader.c): under gate_mu. */
void kc__leader_gates_set(kc_leader_elector *el, bool active);

/* Gate ctrl on el's leadership: set active now iff leading, then on every gain and loss. 0,
 * KC_EINVAL, KC_ETOOLARGE (KC__LEADER_GATES_MAX gates). Thread-safe. */
int kc__leader_elector_add_gate(kc_leader_elector *el, kc_controller *ctrl);
/* Remove ctrl's gate; after return el never calls it again. Thread-safe. */
void kc__leader_elector_remove_gate(kc_leader_elector *el, kc_controller *ctrl);
/* Test hook: while paused, the run thread makes no request and takes no decision, as if the
 * process were stopped (the fence still expires on time). Thread-safe. */
void kc__leader_elector_test_pause(kc_leader_elector *el, bool paused);

#endif
