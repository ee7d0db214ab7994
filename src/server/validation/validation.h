/*
 * validation.h — the validation of built-in objects as kube-apiserver's registry strategies run
 * it (Validate on create, ValidateUpdate on update: pkg/apis/<group>/validation and
 * apimachinery's ObjectMeta rules), as pure functions on jansson documents; what the storage
 * room's write path calls after defaulting and before storing (docs/server.md, "Validation of
 * built-in types"). Not installed.
 *
 * Kinds with rules: Pod, PodTemplate, ReplicationController, Service (name only), Deployment,
 * ReplicaSet, StatefulSet, DaemonSet, Job, CronJob (its job template); every other built-in kind
 * gets the ObjectMeta rules (labels, annotations, finalizers). Custom resources are not for this
 * room (their schemas validate them).
 * Thread-safety: pure functions; documents are the caller's and are only read.
 */
#ifndef KC_SERVER_VALIDATION_H
#define KC_SERVER_VALIDATION_H

#include <jansson.h>
#include <stdbool.h>

#include "kcache/error.h"

/* Validate doc, an object of group ("" core) / kind after defaulting, as a create (old NULL) or
 * as an update of old (the stored object). 0 when valid; else KC_EUNPROCESSABLE with err filled
 * as the API server's 422 Invalid Status: message `<Kind>[.<group>] "<name>" is invalid: <errs>`
 * (one error, or "[e1, e2, …]" without repeats), details {name, group, kind} and one cause
 * {reason FieldValue…, message, field} per error; KC_ENOMEM. err may be NULL. */
int kc__validate_object(const char *group, const char *kind, const json_t *doc, const json_t *old,
                        kc_error *err);

/* Does the metav1.LabelSelector sel match labels (a metadata.labels object, may be NULL)?
 * matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist) all hold, as upstream's
 * LabelSelectorAsSelector. A sel that is not an object matches nothing (labels.Nothing()).
 * *empty: sel names no requirement (the callers decide what that means: everything for webhooks'
 * selectors, nothing for ClusterRole aggregation); *bad: an unknown operator or values not fitting
 * it, and then false. The one selector matcher of the server rooms (validation, admission, authz).
 * Thread-safe (pure). */
bool kc__v_selector_matches(const json_t *sel, const json_t *labels, bool *empty, bool *bad);

#endif
