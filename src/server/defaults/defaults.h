/*
 * defaults.h — the defaulting a Kubernetes API server applies to built-in objects, as pure
 * functions on jansson documents (docs/server.md, "Defaulting"). Not installed.
 *
 * Three steps, in the order the API server runs them:
 *   1. kc__defaults_apply — the scheme's defaulters (k8s.io/kubernetes pkg/apis/<group>/v1
 *      defaults.go and the generated walks over nested types): every create, update, patch
 *      and apply result is decoded with them, so each step is idempotent. Also the fields Go's
 *      encoder always writes for these types (`"resources":{}` of a container,
 *      `"creationTimestamp":null` of a pod template, `status.replicas` of a ReplicaSet…).
 *   2. kc__defaults_prepare_create / _update — the registry strategies (PrepareForCreate /
 *      PrepareForUpdate: the status a new object starts with, a Job's generated selector, a
 *      Namespace's "kubernetes" finalizer) and, for Pods on create, the admission plugins that
 *      set fields (Priority, ServiceAccount, DefaultTolerationSeconds).
 *   3. Services only: cluster IP and node port allocation (service_alloc.h).
 * The room knows nothing of the store: the caller passes what the objects need (a Pod's
 * resolved priority class). Thread-safety: pure functions; documents are the caller's.
 * Errors: KC_ENOMEM only (defaulting never rejects an object).
 */
#ifndef KC_SERVER_DEFAULTS_H
#define KC_SERVER_DEFAULTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* true when group/kind ("" = core) has any defaulting here (the seeding fast path, which
 * stores objects as given, must not take such objects from fixtures). */
bool kc__defaults_known(const char *group, const char *kind);

/* Step 1 on doc (an object of group/kind; other kinds are left alone). 0 or KC_ENOMEM. */
int kc__defaults_apply(const char *group, const char *kind, json_t *doc);

/* What a create needs from outside the object. */
typedef struct kc__create_env {
    bool reset_status; /* the status is the server's (false: a seeded object keeps its own) */
    const char *now;   /* RFC 3339, the create time (PersistentVolume lastPhaseTransitionTime) */
    /* Pods: the resolved priority class (Priority admission): its name ("" = none), value and
     * preemption policy. */
    const char *priority_class;
    int64_t priority;
    const char *preemption_policy;
} kc__create_env;

/* Step 2 of a create, after step 1 and after name, uid and creationTimestamp are set (a Job's
 * selector uses them). With env->reset_status, sets the status the object starts with (a Pod's
 * phase and QoS class, a PersistentVolume's phase time). Run step 1 again afterwards (the API
 * server's read-back decode defaults what this step added). 0 or KC_ENOMEM. */
int kc__defaults_prepare_create(const char *group, const char *kind, json_t *doc,
                                const kc__create_env *env);

/* Step 2 of an update of the main resource (not /status): fields the strategy keeps from the
 * stored object old (a Namespace's spec.finalizers) and those a change of Service type drops.
 * 0 or KC_ENOMEM. */
int kc__defaults_prepare_update(const char *group, const char *kind, json_t *doc,
                                const json_t *old);

/* The name of a pod's priority class ("" when none; borrowed from doc). */
const char *kc__defaults_pod_priority_class(const json_t *pod);

/* Built-in priority classes every cluster has (system-cluster-critical, system-node-critical):
 * true with their value when name is one of them. */
bool kc__defaults_system_priority(const char *name, int64_t *ret_value);

#endif
