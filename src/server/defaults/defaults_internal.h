/*
 * defaults_internal.h — helpers shared by the defaulters (defaults.c, defaults_pod.c,
 * defaults_workloads.c): set-if-unset primitives with Go's notion of "unset" for each field
 * shape, and the per-kind entry points. A kc__dctx carries the first KC_ENOMEM so the walks need
 * no error plumbing. Thread-safe: pure functions.
 *
 * Go semantics mirrored: a string field is unset when absent, null or ""; a pointer field when
 * absent or null (an explicit "" or 0 is kept); a plain integer when absent, null or 0. A value
 * of the wrong JSON type is left alone (validation's business, not defaulting's).
 */
#ifndef KC_SERVER_DEFAULTS_INTERNAL_H
#define KC_SERVER_DEFAULTS_INTERNAL_H

#include "server/defaults/defaults.h"

typedef struct kc__dctx {
    int rc; /* 0, or KC_ENOMEM once an allocation failed */
} kc__dctx;

/* The object at key of o, created ({}) when absent or null; NULL when o is not an object, the
 * value is of another type, or out of memory (c->rc set). */
json_t *kc__dj_obj(kc__dctx *c, json_t *o, const char *key);
/* key of o when it is an object (else NULL); never creates. */
json_t *kc__dj_get_obj(json_t *o, const char *key);
/* Setters: set key of object o to the value when the field is unset (see above). */
void kc__dj_str(kc__dctx *c, json_t *o, const char *key, const char *val);     /* string */
void kc__dj_ptr_str(kc__dctx *c, json_t *o, const char *key, const char *val); /* *string */
void kc__dj_int(kc__dctx *c, json_t *o, const char *key, json_int_t val);      /* int */
void kc__dj_ptr_int(kc__dctx *c, json_t *o, const char *key, json_int_t val);  /* *int */
void kc__dj_ptr_bool(kc__dctx *c, json_t *o, const char *key, bool val);       /* *bool */
/* A struct Go always encodes: {} when absent or null. */
void kc__dj_struct(kc__dctx *c, json_t *o, const char *key);
/* Set key to a new value (takes v; NULL v = out of memory). */
void kc__dj_set(kc__dctx *c, json_t *o, const char *key, json_t *v);
/* true when key of o is absent or null. */
bool kc__dj_unset(const json_t *o, const char *key);
/* The string at key ("" when absent or not a string). */
const char *kc__dj_s(const json_t *o, const char *key);
/* ObjectMeta of an embedded template (non-pointer in Go): `"creationTimestamp":null` as the
 * encoder writes a zero metav1.Time. Creates the metadata object when absent. */
void kc__dj_template_meta(kc__dctx *c, json_t *holder);

/* ---- per-kind defaulters (step 1) ----------------------------------------------------------- */

/* PodSpec of a pod template (SetDefaults_PodSpec and the generated walk: containers, volumes,
 * probes, …) or of a Pod (pod = true adds SetDefaults_Pod: requests from limits,
 * enableServiceLinks, host network ports). Also the v1 conversion's serviceAccount mirror. */
void kc__defaults_pod_spec(kc__dctx *c, json_t *spec, bool pod);
/* A PodTemplateSpec held at key of holder: metadata + spec. */
void kc__defaults_pod_template(kc__dctx *c, json_t *holder, const char *key);
/* PersistentVolumeClaimSpec (volumeMode Filesystem). */
void kc__defaults_pvc_spec(kc__dctx *c, json_t *spec);
/* Workloads: apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet; batch/v1 Job, CronJob;
 * core ReplicationController, PodTemplate. false when kind is none of them. */
bool kc__defaults_workload(kc__dctx *c, const char *group, const char *kind, json_t *doc);
/* admissionregistration.k8s.io/v1 webhook configurations (defaults_admission.c). false when kind
 * is neither. */
bool kc__defaults_admission(kc__dctx *c, const char *group, const char *kind, json_t *doc);
/* Prepare-for-create of workloads (status, Job selector). false when kind is none of them. */
bool kc__defaults_workload_create(kc__dctx *c, const char *group, const char *kind, json_t *doc);
/* A Pod's status on create: phase Pending and its QoS class (qos.ComputePodQOS). */
void kc__defaults_pod_status(kc__dctx *c, json_t *pod);

/* A Kubernetes quantity ("100m", "1Gi", "2.5e3") as a number; false when it does not parse. */
bool kc__quantity_value(const char *s, long double *ret);

#endif
