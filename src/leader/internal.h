/*
 * leader/internal.h — the leader elector's state (leader.c, leader_run.c) and what the
 * controller uses of it: gates (switched on while leading, off at once on loss) and a test hook
 * that pauses the elector's thread as SIGSTOP would.
 *
 * A gate is a callback the elector is handed (kc__leader_gate_fn and its ud): the controller
 * registers one that opens and closes its own activity gate (kc_controller_opts.leader_elector),
 * so the elector knows no controller and calls none by name: src/leader/ sits below
 * src/controller/ (scripts/check-layers), and no call runs from it back into the controller.
 *
 * Locks: mu guards the run state, the last observed holder and the pause flag; gate_mu guards the
 * gate list and is held while the gates are switched, so a gate that is removed never sees a call
 * after removal. Order: gate_mu, then whatever the gate takes (the controller's own mutex); mu is
 * never held with either.
 */
#ifndef KC_LEADER_INTERNAL_H
#define KC_LEADER_INTERNAL_H

#include "leader/lease_lock.h"
#include "core/internal.h"
#include "kcache/leader.h"

#include <pthread.h>
#include <stdatomic.h>

#define KC__LEADER_GATES_MAX 32

/* A gate: set(ud, true) when leadership is gained (and at once when added while leading),
 * set(ud, false) on loss or stop, before on_stopped_leading. Called with gate_mu held, on the
 * elector's thread or the caller's of add: it must be quick and must not call the elector. */
typedef void (*kc__leader_gate_fn)(void *ud, bool active);
typedef struct {
    kc__leader_gate_fn set;
    void *ud;
} kc__leader_gate;

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
    kc__leader_gate gates[KC__LEADER_GATES_MAX];
    size_t n_gates;
};

/* The run thread (leader_run.c). */
void *kc__leader_run(void *arg);
/* Switch every gate (leader.c): under gate_mu. */
void kc__leader_gates_set(kc_leader_elector *el, bool active);

/* Add a gate on el's leadership: set(ud, leading) now, then set(ud, …) on every gain and loss
 * until removed. ud is borrowed. 0, KC_EINVAL (NULL el or set), KC_ETOOLARGE
 * (KC__LEADER_GATES_MAX gates). Thread-safe. */
int kc__leader_elector_add_gate(kc_leader_elector *el, kc__leader_gate_fn set, void *ud);
/* Remove the gate (set, ud); after return el never calls it again. NULL el: nothing.
 * Thread-safe. */
void kc__leader_elector_remove_gate(kc_leader_elector *el, kc__leader_gate_fn set, void *ud);
/* Test hook: while paused, the run thread makes no request and takes no decision, as if the
 * process were stopped (the fence still expires on time). Thread-safe. */
void kc__leader_elector_test_pause(kc_leader_elector *el, bool paused);

#endif
