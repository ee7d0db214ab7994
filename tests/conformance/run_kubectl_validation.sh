#!/usr/bin/env bash
# run_kubectl_validation.sh KCACHE — unmodified kubectl against `kcache serve`: the validation of
# built-in types (docs/server.md, "Validation of built-in types") reaches kubectl as a real
# 1.34 API server's 422 Invalid does. Checks: `kubectl apply` of a Deployment whose selector
# does not match its template's labels prints the API server's text and stores nothing;
# `kubectl create deployment` with an invalid name; `kubectl label` with a bad key; `kubectl
# apply` changing a Deployment's selector (field is immutable) and a StatefulSet's
# volumeClaimTemplates (Forbidden); a Job without restartPolicy. Exit 77 when kubectl is missing.
set -u
BIN=${1:?usage: run_kubectl_validation.sh path/to/kcache}
command -v kubectl >/dev/null || { echo "SKIP: kubectl not found"; exit 77; }
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
kc_setup

k() { timeout 40 kubectl --kubeconfig "$KC_KUBECONFIG" --cache-dir "$KC_TMP/cache" \
    --request-timeout=20s "$@"; }
# has FILE TEXT — FILE contains TEXT (fixed string), else show FILE
has() { grep -qF -- "$2" "$1" || { echo "no '$2' in:"; cat "$1"; return 1; }; }

deployment() { # name selector-app template-app
    cat <<Y
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1}
spec:
  selector: {matchLabels: {app: $2}}
  template:
    metadata: {labels: {app: $3}}
    spec: {containers: [{name: web, image: nginx}]}
Y
}

t_apply_selector_mismatch() {
    ! deployment x front back | k apply -f - >"$KC_TMP/o" 2>&1 &&
        has "$KC_TMP/o" 'Deployment' && has "$KC_TMP/o" '"x" is invalid' &&
        has "$KC_TMP/o" 'spec.template.metadata.labels: Invalid value: map[string]string{"app":"back"}: `selector` does not match template `labels`' &&
        ! k get deployment x >/dev/null 2>&1
}
t_create_bad_name() {
    ! k create deployment Bad_Name --image=nginx >"$KC_TMP/o" 2>&1 &&
        has "$KC_TMP/o" '"Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters'
}
t_label_bad_key() {
    k create configmap c --from-literal=a=b >/dev/null &&
        ! k label configmap c 'a/b/c=v' >"$KC_TMP/o" 2>&1 &&
        has "$KC_TMP/o" 'metadata.labels: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters' &&
        [ -z "$(k get configmap c -o jsonpath='{.metadata.labels}')" ]
}
t_selector_immutable() {
    deployment d a a | k apply -f - >/dev/null &&
        ! deployment d b b | k apply -f - >"$KC_TMP/o" 2>&1 &&
        has "$KC_TMP/o" 'spec.selector: Invalid value: &LabelSelector{MatchLabels:map[string]string{app: b,},MatchExpressions:[]LabelSelectorRequirement{},}: field is immutable'
}
statefulset() { # extra spec line
    cat <<Y
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s}
spec:
  serviceName: s
  selector: {matchLabels: {app: s}}
  template:
    metadata: {labels: {app: s}}
    spec: {containers: [{name: db, image: postgres}]}
  $1
Y
}
t_statefulset_forbidden() {
    statefulset 'replicas: 1' | k apply -f - >/dev/null &&
        statefulset 'replicas: 2' | k apply -f - >/dev/null &&
        ! statefulset 'podManagementPolicy: Parallel' | k apply -f - >"$KC_TMP/o" 2>&1 &&
        has "$KC_TMP/o" "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
}
t_job_restart_policy() {
    ! k apply -f - >"$KC_TMP/o" 2>&1 <<'Y' ||
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec: {containers: [{name: c, image: busybox}]}
Y
        ! has "$KC_TMP/o" 'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
}

kc_start "$BIN" || { fail "server start"; kc_summary; }
check "kubectl apply: selector does not match template labels (the API server's text)" t_apply_selector_mismatch
check "kubectl create deployment Bad_Name: metadata.name is not a DNS-1123 subdomain" t_create_bad_name
check "kubectl label with a bad key: metadata.labels Invalid, nothing stored" t_label_bad_key
check "kubectl apply changing a Deployment's selector: field is immutable" t_selector_immutable
check "kubectl apply changing a StatefulSet's other fields: Forbidden" t_statefulset_forbidden
check "kubectl apply of a Job without restartPolicy: Required value" t_job_restart_policy
kc_stop && pass "server stops cleanly on SIGTERM (exit 0)" || fail "server exit status on SIGTERM"
kc_summary
