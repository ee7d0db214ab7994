/*
 * controller/internal.h — internals of kc_controller shared by the files of src/controller/
 * (named as every layer's internal header; until the split this name held the work queue's,
 * now workqueue/internal.h). The controller is the top of the client stack: it uses the cached
 * client, the work queue (src/workqueue/), the leader elector (src/leader/) and the shard
 * coordinator (src/coordinator/), each through its own headers; none of them calls it back.
 *
 *   controller.c  struct, new/free, options, getters, stats, enqueue, the gate
 *   sources.c     watched types: handlers, predicates, owner mapping (spec C7, C8)
 *   run.c         start (readiness gate, C9), worker loop and result handling (C3, C4), stop
 *   shard_ctrl.c  running sharded under a kc_shard_coordinator (A11, A12, A15): key → range,
 *                 admission through the coordinator's gate, re-enqueue on a gained range
 *   shard_keys.c  the key → shard hash map of a sharded controller
 *   metrics.c     controller-runtime's reconcile metrics on /metrics (controller_runtime_*)
 *   finalizer.c   the finalizer registry (kube-runtime's finalizer()): add / cleanup / remove
 *
 * Locking: one mutex (mu) guards the lifecycle state (state, active, running) and is never held
 * while calling out (queue, cache, informer, reconcile). Counters are atomics. Handlers run on
 * informer dispatcher threads and only touch the queue (thread-safe) and the atomics.
 */
#ifndef KC_CONTROLLER_INTERNAL_H
#define KC_CONTROLLER_INTERNAL_H

#include "core/internal.h"
#include "kcache/controller.h"
#include "kcache/coordinator.h"
#include "kcache/health.h"

#include <pthread.h>
#include <stdatomic.h>

/* Longest key: a namespace (63) + '/' + a name (253) + NUL, rounded up. */
#define KC__CTRL_KEY_MAX 320

typedef struct kc__ctrl_keymap kc__ctrl_keymap;
typedef struct kc__ctrl_metrics kc__ctrl_metrics;
typedef struct kc__ctrl_finalizer kc__ctrl_finalizer;

typedef enum kc__ctrl_role {
    KC__CTRL_PRIMARY = 0,
    KC__CTRL_OWNED = 1,
    KC__CTRL_WATCH = 2,
} kc__ctrl_role;

/* One watched type: owned copies of the caller's strings and informer options. */
typedef struct kc__ctrl_source {
    kc_controller *ctrl;
    kc__ctrl_role role;
    char *group, *version, *resource, *kind;
    kc_informer_opts iopts; /* strings and decode below */
    kc_decode_opts decode;
    char *ns, *label_selector, *field_selector, *iname;
    kc_shard_range *shard_ranges; /* iopts.shard_ranges points here (copied) */
    bool has_iopts;
    bool follow_ranges; /* sharded primary: the informer's ranges follow the coordinator (A14) */
    kc_predicate pred;
    kc_controller_map_fn map;
    void *map_ud;
    kc_informer *inf;     /* borrowed from the cache, set at start */
    kc_informer_reg *reg; /* our registration, removed at stop */
} kc__ctrl_source;

typedef enum kc__ctrl_state {
    KC__CTRL_NEW = 0,
    KC__CTRL_STARTING = 1,
    KC__CTRL_RUNNING = 2,
    KC__CTRL_STOPPED = 3,
} kc__ctrl_state;

struct kc_controller {
    char *name;
    kc_client *client; /* borrowed */
    kc_cache *cache;
    bool own_cache;
    kc_cached_client *cc;
    kc_workqueue *q;
    kc_health *health;
    char *health_listen;
    kc_reconcile_fn reconcile;
    void *ud;
    unsigned workers;
    int64_t sync_timeout_ms, stop_timeout_ms;
    bool primary_cluster_scoped;

    kc__ctrl_source **sources; /* [0] is the primary type */
    size_t n_sources;

    pthread_t *threads;
    size_t n_threads;

    pthread_mutex_t mu;
    pthread_cond_t cv; /* state, active or running changed */
    kc__ctrl_state state;
    bool stopping;      /* stop has begun: take no more keys */
    bool start_waiting; /* a start is inside the sync wait */
    bool active;
    unsigned running;
    int stop_rc;

    kc_shard_coordinator *coord; /* borrowed; NULL = not sharded */
    kc__ctrl_keymap *keymap;     /* sharded: key → hash of its uid (A15) */
    bool coord_listening;

    atomic_uint_fast64_t n_shard_dropped;
    atomic_uint_fast64_t n_reconciles, n_done, n_requeue_after, n_errors, n_terminal, n_unknown,
        n_put_back, n_enqueued, n_filtered, n_fenced;
    kc_leader_elector *elector; /* borrowed; NULL = not leader-only */
    const kc_fence *fence;      /* the elector's; checked before each reconcile */
    bool priority;              /* the priority queue (not opts.no_priority_queue; C12) */
    kc__ctrl_metrics *metrics;  /* metrics.c */
    kc__ctrl_finalizer *fin;    /* kc_controller_add_finalizer; NULL = none (finalizer.c) */
};

/* The priority of the enqueues of the event being handled on this thread (sources.c sets it
 * around a handler's enqueues, map functions included; 0 otherwise): kc_controller_enqueue uses
 * it when the controller runs the priority queue. */
extern _Thread_local int kc__ctrl_event_priority;

/* sources.c */
kc__ctrl_source *kc__ctrl_source_new(kc_controller *ctrl, kc__ctrl_role role,
                                     const kc_controller_type *type, kc_error *err);
void kc__ctrl_source_free(kc__ctrl_source *s);
/* Get the informer from the cache and register the handlers. */
int kc__ctrl_source_start(kc__ctrl_source *s, kc_error *err);
/* Remove the registration (joins its dispatcher). */
void kc__ctrl_source_stop(kc__ctrl_source *s);
/* Whether pred passes the event (spec C8). */
bool kc__ctrl_predicate_pass(const kc_predicate *pred, kc_controller_event ev, kc_obj *old_obj,
                             kc_obj *new_obj);
/* Enqueue the controller owner of obj if it is of the primary type (spec C7). */
void kc__ctrl_enqueue_owner(kc_controller *ctrl, kc_obj *obj);

/* shard_keys.c */
kc__ctrl_keymap *kc__ctrl_keymap_new(void);
void kc__ctrl_keymap_free(kc__ctrl_keymap *m);
void kc__ctrl_keymap_put(kc__ctrl_keymap *m, const char *key, uint64_t h);
bool kc__ctrl_keymap_get(kc__ctrl_keymap *m, const char *key, uint64_t *ret);
void kc__ctrl_keymap_del(kc__ctrl_keymap *m, const char *key);

/* shard_ctrl.c (all no-ops when the controller is not sharded) */
/* Enqueue ns/name, recording the hash of uid (the object's, or its controller owner's) for it. */
void kc__ctrl_enqueue_sharded(kc_controller *ctrl, const char *ns, const char *name,
                              const char *uid);
/* Admit key (true: *ret_range set, its gate entered; call kc__ctrl_shard_leave after) or drop
 * it (false: not held, draining, fenced or of unknown range; counted). */
bool kc__ctrl_shard_admit(kc_controller *ctrl, const char *key, uint32_t *ret_range);
void kc__ctrl_shard_leave(kc_controller *ctrl, const char *key, uint32_t range);
/* Listen to the coordinator (start) / stop listening (stop, free). */
int kc__ctrl_shard_attach(kc_controller *ctrl, kc_error *err);
void kc__ctrl_shard_detach(kc_controller *ctrl);

/* metrics.c: controller-runtime's reconcile metrics (served with the queue's on /metrics) */
kc__ctrl_metrics *kc__ctrl_metrics_new(void);
void kc__ctrl_metrics_free(kc__ctrl_metrics *m);
/* One reconcile returned r after elapsed_ns (reconcile_time_seconds; requeue vs requeue_after). */
void kc__ctrl_metrics_observe(kc_controller *ctrl, kc_reconcile_result r, uint64_t elapsed_ns);
/* The Prometheus text of ctrl (a kc_controller *): a kc_health metrics source. */
char *kc__ctrl_metrics_render(void *ctrl);
/* finalizer.c: the reconcile of req through the finalizer registry (ctrl->fin set). */
kc_reconcile_result kc__ctrl_finalize(kc_controller *ctrl, const kc_reconcile_request *req);
void kc__ctrl_finalizer_free(kc__ctrl_finalizer *f);

/* run.c */
int kc__ctrl_start(kc_controller *ctrl, kc_error *err);
int kc__ctrl_stop(kc_controller *ctrl);

#endif
