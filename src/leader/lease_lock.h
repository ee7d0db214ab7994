/*
 * leader/lease_lock.h — one coordination.k8s.io/v1 Lease as a lock (internal, prefix kc__):
 * one attempt of client-go's tryAcquireOrRenew per call (spec L3), optimistic concurrency by
 * resourceVersion (L4), expiry judged from the local monotonic time a change of the record was
 * observed (L5), strategy / preferredHolder kept on every update (L2), release (L9) and the
 * self-fence deadline valid_until = t_send(last successful write) + RD (L12a).
 *
 * Reused by the leader elector (leader.c) and, one layer up, the shard coordinator
 * (src/coordinator/: one lock per range Lease, A8–A12), which also reads and writes annotations on
 * the Lease (A8 stores K in one).
 *
 * Thread-safety: none — one thread drives a lock (the elector's or the coordinator's); every
 * accessor reads state the last call left. The kc_client is borrowed and shared as usual.
 * Times are in ns of the lock's clock (opts.clock; default CLOCK_MONOTONIC, kc__now_ns), which
 * tests replace with a fake one; MicroTimes written to the Lease (acquireTime, renewTime) come
 * from the wall clock and only signal change to other replicas (L5).
 */
#ifndef KC_LEADER_LEASE_LOCK_H
#define KC_LEADER_LEASE_LOCK_H

#include "kcache/client.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct kc__lease_lock kc__lease_lock;

/* A monotonic clock in ns (ud: kc__lease_lock_opts.clock_ud). */
typedef uint64_t (*kc__lease_clock_fn)(void *ud);

/* Annotations a lock writes on each create and update (at most this many keys). */
#define KC__LEASE_ANN_MAX 8

typedef struct kc__lease_lock_opts {
    kc_client *client;          /* required; borrowed: must outlive the lock */
    const char *ns, *name;      /* the Lease; required; copied */
    const char *identity;       /* holderIdentity written; required; copied */
    uint64_t lease_duration_ns; /* LD: written as leaseDurationSeconds, rounded up to >= 1 s */
    uint64_t renew_deadline_ns; /* RD: valid_until = t_send + RD */
    kc__lease_clock_fn clock;   /* NULL = kc__now_ns (CLOCK_MONOTONIC) */
    void *clock_ud;
    /* Coordinated leader election (L2, KEP-4355): never acquire; renew only while holder, and
     * not once preferredHolder names someone else. */
    bool coordinated;
} kc__lease_lock_opts;

/* What the last Get / Create / Update returned, parsed (strings owned by the lock). */
typedef struct kc__lease_record {
    char *holder;           /* "" = none */
    int64_t duration_s;     /* leaseDurationSeconds (0 when absent) */
    char *acquire_time;     /* MicroTime text, NULL when absent */
    char *renew_time;       /* NULL when absent */
    int64_t transitions;    /* leaseTransitions */
    char *strategy;         /* NULL when absent (L2) */
    char *preferred_holder; /* NULL when absent (L2) */
} kc__lease_record;

/* New lock (nothing sent). Errors: KC_EINVAL (a required field missing, LD or RD 0), KC_ENOMEM. */
int kc__lease_lock_new(const kc__lease_lock_opts *opts, kc__lease_lock **ret, kc_error *err);
void kc__lease_lock_free(kc__lease_lock *l);

/*
 * One attempt of tryAcquireOrRenew (L3). Returns 1 when we hold the Lease after the attempt
 * (acquired or renewed: valid_until moved to t_send + RD), 0 when someone else holds it and it has
 * not expired by local observation (or coordinated mode forbids acquiring), or a negative code:
 * KC_ECONFLICT / KC_EEXISTS when another writer won the resourceVersion (L4: the next attempt
 * re-Gets), transport and API errors. A failed fast-path renew falls back to Get as client-go.
 */
int kc__lease_lock_try(kc__lease_lock *l, kc_error *err);

/*
 * Release (L9): while we are the holder, Update with holder "", leaseDurationSeconds 1, acquire
 * and renew = now, transitions kept; on conflict re-Get and retry, for at most RD. Returns 0
 * (released, or we were not the holder: nothing to do), or the last error. valid_until becomes 0
 * first, so guarded work must have stopped already.
 */
int kc__lease_lock_release(kc__lease_lock *l, kc_error *err);

/* Whether the last observed record names us as holder. */
bool kc__lease_lock_is_holder(const kc__lease_lock *l);
/* Fence deadline (lock clock, ns): t_send of the last successful acquire/renew + RD; 0 when not
 * holding. */
uint64_t kc__lease_lock_valid_until(const kc__lease_lock *l);
/* The last observed record (borrowed: valid until the next call on the lock), NULL before any. */
const kc__lease_record *kc__lease_lock_record(const kc__lease_lock *l);
/* Lock-clock time the raw record last changed (L5), 0 before any observation. */
uint64_t kc__lease_lock_observed_time(const kc__lease_lock *l);
/* The last observed Lease object (borrowed: valid until the next call), NULL before any. */
kc_obj *kc__lease_lock_object(const kc__lease_lock *l);
/* Renewals that went through the slow path (Get then Update while holder; L3 step 5, L11). */
uint64_t kc__lease_lock_slowpath(const kc__lease_lock *l);
/* The lock's identity (borrowed). */
const char *kc__lease_lock_identity(const kc__lease_lock *l);

/*
 * Set (value non-NULL) an annotation the lock writes on every later create and update, replacing
 * that key's value on the Lease; other annotations on the Lease are kept as they are. key and
 * value copied. Errors: KC_EINVAL (NULL key), KC_ENOMEM, KC_ETOOLARGE (more than
 * KC__LEASE_ANN_MAX keys).
 */
int kc__lease_lock_set_annotation(kc__lease_lock *l, const char *key, const char *value);
/* An annotation of the last observed Lease: *ret new malloc'd (caller frees). KC_ENOTFOUND when
 * absent or nothing observed yet. */
int kc__lease_lock_annotation(const kc__lease_lock *l, const char *key, char **ret);

/*
 * Take obj (borrowed; a reference is kept) as the lock's latest observation of the Lease, as if a
 * Get had returned it (L3 step 3: a changed record moves observed_time to now). For a watcher of
 * many Leases (the shard coordinator watches all of them through one informer) so that a later
 * try on a Lease it never Got judges expiry from when the watch first saw the record, not from
 * that try. Ignored (0) while we hold the Lease. Errors: KC_EINVAL (NULL), KC_ENOMEM, KC_EPARSE.
 */
int kc__lease_lock_observe(kc__lease_lock *l, kc_obj *obj, kc_error *err);

#endif
