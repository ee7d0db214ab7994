/*
 * leader_run.c — one run of a kc_leader_elector, on its own thread (spec L3–L10, L12a):
 *
 *   campaign: an attempt (kc__lease_lock_try), then a wait of JitterUntil(RP, 1.2) — uniform in
 *             [RP, 2.2·RP] (L7) — until an attempt wins or stop;
 *   lead:     fence = the lock's valid_until (t_send + RD), gates on, on_started_leading;
 *   renew:    wait RP (capped at the fence), attempt; a success moves the fence; a failure retries
 *             every RP; the fence passing, or an attempt that finds another holder, is a loss;
 *   end:      on loss or stop while leading: fence closed and gates off first (L10: guarded work
 *             stops at once), then the release on stop when asked (L9), then on_stopped_leading —
 *             once per run, led or not (L8) — then, on loss, exit_on_loss when set.
 *
 * The fence is a clock deadline: when this thread is stuck in a request or paused, writes behind
 * the fence still stop at t_send + RD; the callbacks follow when the thread notices. Waits are on
 * a CLOCK_MONOTONIC condition variable that stop (and the test pause) signal — never a sleep.
 * Every newly observed holder is reported once through on_new_leader (L8), as client-go's
 * reportedLeader: the first non-empty one included. With opts.events, the lock's "became leader"
 * and "stopped leading" Events are recorded about the Lease (L8; asynchronous: the recorder's
 * sender sends them).
 */
#include "leader/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Wait until deadline (KC__DEADLINE_NEVER: forever) or stop; a pause holds the thread past the
 * deadline until it is lifted. true when stopping. */
static bool wait_until(kc_leader_elector *el, uint64_t deadline)
{
    pthread_mutex_lock(&el->mu);
    while (!el->stopping && (el->paused || kc__now_ns() < deadline))
        kc__cond_wait_until(&el->cv, &el->mu, el->paused ? KC__DEADLINE_NEVER : deadline);
    bool stop = el->stopping;
    pthread_mutex_unlock(&el->mu);
    return stop;
}

/* Report the observed holder when it changed (L8). */
static void note_holder(kc_leader_elector *el)
{
    const kc__lease_record *r = kc__lease_lock_record(el->lock);
    atomic_store(&el->slowpath, kc__lease_lock_slowpath(el->lock));
    if (!r)
        return;
    pthread_mutex_lock(&el->mu);
    bool changed = strcmp(el->holder, r->holder) != 0;
    char *copy = changed ? kc__strdup(r->holder) : NULL;
    if (copy) {
        free(el->holder);
        el->holder = copy;
    }
    pthread_mutex_unlock(&el->mu);
    if (copy && el->o.on_new_leader)
        el->o.on_new_leader(el->o.ud, el, r->holder);
}

static int attempt(kc_leader_elector *el)
{
    kc_error e = KC_ERROR_INIT;
    int rc = kc__lease_lock_try(el->lock, &e);
    if (rc < 0)
        KC__LOG_DEBUG("leader", "lease %s/%s: attempt failed: %s (%s)", el->ns, el->name,
                      kc_errno_name(rc), e.message ? e.message : kc_strerror(rc));
    kc_error_clear(&e);
    if (rc == 1) {
        bool reopen = atomic_load(&el->leading) && !kc_fence_valid(el->fence);
        kc_fence_set_valid_until(el->fence, kc__lease_lock_valid_until(el->lock));
        if (reopen) /* a renew that landed after the fence passed: a fenced worker closed its
                       gate (run.c), and no one else can have taken the Lease (L4) */
            kc__leader_gates_set(el, true);
    }
    note_holder(el);
    return rc;
}

/* true once we hold the Lease; false when stopped first. */
static bool campaign(kc_leader_elector *el)
{
    for (;;) {
        if (wait_until(el, 0))
            return false;
        if (attempt(el) == 1)
            return true;
        uint64_t wait = kc__rng_jitter(&el->rng, el->rp_ns, 1.2);
        if (wait_until(el, kc__now_ns() + wait))
            return false;
    }
}

/* L8: the lock's Event about the Lease ("<identity> became leader" / "… stopped leading"). */
static void record(kc_leader_elector *el, const char *what)
{
    kc_obj *lease = kc__lease_lock_object(el->lock); /* borrowed: this thread owns the lock */
    if (el->o.events && lease &&
        kc_event_recorder_record_obj(el->o.events, lease, KC_EVENT_NORMAL, "LeaderElection",
                                     "%s %s", el->identity, what) < 0)
        KC__LOG_DEBUG("leader", "lease %s/%s: the \"%s\" Event was not recorded", el->ns, el->name,
                      what);
}

static void lead(kc_leader_elector *el)
{
    KC__LOG_INFO("leader", "lease %s/%s: %s became leader", el->ns, el->name, el->identity);
    record(el, "became leader");
    atomic_store(&el->leading, true);
    kc__leader_gates_set(el, true);
    if (el->o.on_started_leading)
        el->o.on_started_leading(el->o.ud, el);
}

/* true when stopped, false when leadership was lost. */
static bool renew(kc_leader_elector *el)
{
    for (;;) {
        uint64_t until = kc_fence_valid_until(el->fence);
        uint64_t next = kc__now_ns() + el->rp_ns;
        if (wait_until(el, next < until ? next : until))
            return true;
        if (kc__now_ns() >= kc_fence_valid_until(el->fence))
            return false; /* no successful renew within RD of the last one's send */
        int rc = attempt(el);
        if (rc == 0)
            return false; /* another holder (or coordinated mode stepped down) */
    }
}

/* Stop guarded work at once (L10): the fence first, then the gates. */
static void unlead(kc_leader_elector *el, bool lost)
{
    kc_fence_set_valid_until(el->fence, 0);
    atomic_store(&el->leading, false);
    kc__leader_gates_set(el, false);
    if (lost)
        KC__LOG_WARN("leader", "lease %s/%s: %s lost leadership", el->ns, el->name, el->identity);
    else
        KC__LOG_INFO("leader", "lease %s/%s: %s stopped leading", el->ns, el->name, el->identity);
    record(el, "stopped leading");
}

static void release(kc_leader_elector *el)
{
    kc_error e = KC_ERROR_INIT;
    int rc = kc__lease_lock_release(el->lock, &e);
    if (rc < 0)
        KC__LOG_WARN("leader", "lease %s/%s: release failed: %s (%s); it expires after LD", el->ns,
                     el->name, kc_errno_name(rc), e.message ? e.message : "");
    kc_error_clear(&e);
    note_holder(el);
}

void *kc__leader_run(void *arg)
{
    kc_leader_elector *el = arg;
    bool led = campaign(el), stopped = true;
    if (led) {
        lead(el);
        stopped = renew(el);
        unlead(el, !stopped);
        if (stopped && el->o.release_on_stop)
            release(el);
    }
    pthread_mutex_lock(&el->mu); /* from here a start joins this run instead of refusing */
    el->state = KC__LE_ENDING;
    pthread_mutex_unlock(&el->mu);
    if (el->o.on_stopped_leading)
        el->o.on_stopped_leading(el->o.ud, el);
    if (led && !stopped && el->o.exit_on_loss) {
        KC__LOG_ERR("leader", "lease %s/%s: leadership lost: exiting (exit_on_loss)", el->ns,
                    el->name);
        fflush(NULL);
        el->o.exit_on_loss(el->o.exit_code ? el->o.exit_code : 1);
    }
    pthread_mutex_lock(&el->mu);
    el->state = KC__LE_ENDED;
    pthread_mutex_unlock(&el->mu);
    return NULL;
}
