/*
 * sim_internal.h — what the simulation's files share (controllers/sim*.c only).
 *
 * One thread (sim.c) takes the store's changes from hub watchers of the workload resources,
 * turns them into keys of a work queue (deduplicated, FIFO) and timers (a min-heap of keys due
 * later), and reconciles one key at a time with srv->mu held, writing through storage's write
 * path. Everything in struct kc__sim except the wake fields (wmu, wcond, kicked) is the thread's
 * own. The pod table (sim_pods in sim_kubelet.c) is the simulation's view of every pod — node,
 * requests, owner, readiness — refreshed from every pod event and every write of its own, so
 * controllers count pods without scanning the store.
 */
#ifndef KC_SERVER_SIM_INTERNAL_H
#define KC_SERVER_SIM_INTERNAL_H

#include "server/controllers/sim.h"

enum kc__sim_kind {
    SIM_POD,
    SIM_RS,
    SIM_DEPLOY,
    SIM_STS,
    SIM_DS,
    SIM_JOB,
    SIM_LEASES, /* renew every node's Lease (and the NodeReady heartbeat now and then) */
    SIM_NODES,  /* create the simulated nodes that are missing */
    SIM_KINDS
};

/* The simulation's record of one pod (the pod table, keyed "ns\0name"). */
typedef struct kc__sim_pod {
    kc__hent h;
    char uid[40], owner_uid[40];
    char rev[64];       /* pod-template-hash or controller-revision-hash label */
    int node;           /* simulated node index, -1 when unbound or elsewhere */
    int64_t cpu_m, mem; /* requests (millicores, bytes) */
    bool counted;       /* counted in its node's usage */
    bool ready, deleting, succeeded, failed, exists;
    uint64_t due;    /* monotonic ns of the kubelet's next step (0 = none planned) */
    uint64_t rv;     /* resourceVersion of the state observed */
    int64_t ordinal; /* StatefulSet ordinal (-1) */
    char key[];
} kc__sim_pod;

typedef struct kc__sim_node {
    char name[64];
    int64_t cpu_m, mem, pods_cap;
    int64_t used_cpu, used_mem, used_pods;
    unsigned next_ip;
    uint64_t last_heartbeat_ns;
} kc__sim_node;

typedef struct kc__sim_timer {
    uint64_t due;
    int kind;
    char *ns, *name;
} kc__sim_timer;

typedef struct kc__sim_item {
    kc__hent h;
    struct kc__sim_item *next;
    int kind;
    const char *ns, *name; /* into key */
    char key[];            /* kind byte, ns NUL name NUL */
} kc__sim_item;

typedef struct kc__sim {
    kc_server *srv;
    pthread_t thread;
    bool running;
    /* wake: the watchers' callbacks and stop */
    pthread_mutex_t wmu;
    pthread_cond_t wcond;
    bool kicked, stop;
    kc__rsrc *r[SIM_KINDS]; /* pods, replicasets, … (NULL for the timer-only kinds) */
    kc__rsrc *nodes_r, *leases_r;
    kc__watcher *w[SIM_KINDS];
    /* work queue */
    kc__htab queued;
    kc__sim_item *head, *tail;
    /* timers (min-heap on due) */
    kc__sim_timer *timers;
    size_t n_timers, cap_timers;
    /* pods and nodes */
    kc__htab pods;
    kc__sim_node *nodes;
    size_t n_nodes;
    kc__rng rng;
    /* settings (ms) */
    uint64_t lease_ms, heartbeat_ms, start_ms, run_ms, stop_ms;
} kc__sim;

/* ---- sim.c: queue, timers, writes ---- */
void kc__sim_enqueue(kc__sim *s, int kind, const char *ns, const char *name);
void kc__sim_after(kc__sim *s, uint64_t due_ns, int kind, const char *ns, const char *name);
/* Writes (mu held). doc borrowed. how: SIM_MAIN, SIM_BINDING (spec.nodeName of a pod, as the
 * pods/binding subresource), SIM_STATUS (the status subresource) or
 * SIM_STATUS_ANNOT (status and metadata.annotations). *ret (may be NULL) gets the stored object
 * (new reference). Errors are returned (the caller logs nothing). */
enum { SIM_MAIN = 0, SIM_STATUS = 1, SIM_STATUS_ANNOT = 2, SIM_BINDING = 3 };
int kc__sim_update(kc__sim *s, kc__rsrc *r, kc__entry *e, json_t *doc, int how, kc_obj **ret);
int kc__sim_create(kc__sim *s, kc__rsrc *r, const char *ns, json_t *doc, bool keep_status,
                   kc_obj **ret);
/* Delete e as a DELETE with the default grace period would (graceful pods stay, being deleted). */
int kc__sim_delete(kc__sim *s, kc__rsrc *r, kc__entry *e);
/* Now as RFC 3339 (seconds) / MicroTime. */
void kc__sim_now(char out[32]);
void kc__sim_now_micro(char out[40]);
/* Set condition type in doc's status.conditions (created when missing): lastTransitionTime kept
 * unless status changes; lastUpdateTime (when upd) and lastProbeTime (when probe) handled too. */
void kc__sim_set_condition(json_t *status, const char *type, const char *st, const char *reason,
                           const char *msg, bool upd, bool probe);
/* The condition's status string, NULL when absent. */
const char *kc__sim_condition(const json_t *status, const char *type);
/* FNV-32a of the template's canonical JSON (plus collision count) in upstream's safe alphabet. */
void kc__sim_template_hash(const json_t *tmpl, int64_t collisions, char out[16]);
/* A pod of template tmpl (borrowed) owned by owner: generateName or name, labels extended by
 * extra (may be NULL), ownerReferences controller. New reference or NULL. */
json_t *kc__sim_pod_from_template(const json_t *tmpl, const json_t *owner, const char *api_version,
                                  const char *kind, const char *name, const char *gen_name,
                                  const json_t *extra_labels);
/* An integer field of doc at a dotted path's pieces (def when missing). */
int64_t kc__sim_int(const json_t *obj, const char *key, int64_t def);

/* ---- sim_kubelet.c: pod table, kubelet ---- */
kc__sim_pod *kc__sim_pod_find(kc__sim *s, const char *ns, const char *name);
/* Refresh the pod table from a stored pod (or its removal: obj NULL). */
void kc__sim_pod_observe(kc__sim *s, const char *ns, const char *name, const kc_obj *obj);
/* Empty the pod table (and the nodes' usage). */
void kc__sim_pods_free(kc__sim *s);
void kc__sim_reconcile_pod(kc__sim *s, const char *ns, const char *name);
/* Counts of the pods controlled by owner uid (not being deleted, not terminal unless said). */
typedef struct kc__sim_count {
    int64_t active, ready, succeeded, failed, updated, updated_ready;
    int64_t terminating; /* being deleted, not finished: their containers still run */
} kc__sim_count;
void kc__sim_count_pods(kc__sim *s, const char *ns, const char *owner_uid, const char *rev,
                        kc__sim_count *c);

/* ---- sim_sched.c ---- */
/* Bind the pending pod e (mu held) or mark it Unschedulable. */
void kc__sim_schedule(kc__sim *s, kc__entry *e, kc__sim_pod *p);
/* Parse a quantity ("100m", "1Gi") scaled by mult (1000 for cpu millis). */
int64_t kc__sim_quantity(const char *q, int64_t mult);

/* ---- sim_nodes.c ---- */
int kc__sim_nodes_init(kc__sim *s);
void kc__sim_reconcile_nodes(kc__sim *s);
void kc__sim_renew_leases(kc__sim *s);
int kc__sim_node_index(kc__sim *s, const char *name);
/* Node i's InternalIP and a new pod IP from its pod CIDR. */
void kc__sim_node_ip(kc__sim *s, int i, char out[32]);
void kc__sim_pod_ip(kc__sim *s, int i, char out[32]);
/* Do node i's labels satisfy the nodeSelector sel (NULL = any)? */
bool kc__sim_node_matches(kc__sim *s, int i, const json_t *sel);

/* ---- workload controllers ---- */
void kc__sim_reconcile_rs(kc__sim *s, const char *ns, const char *name);
void kc__sim_reconcile_deploy(kc__sim *s, const char *ns, const char *name);
void kc__sim_reconcile_sts(kc__sim *s, const char *ns, const char *name);
void kc__sim_reconcile_ds(kc__sim *s, const char *ns, const char *name);
void kc__sim_reconcile_job(kc__sim *s, const char *ns, const char *name);

#endif
