#!/usr/bin/env bash
# run_kubectl_api.sh KCACHE — unmodified kubectl against `kcache serve`: the API surface a real
# 1.34 server shows it. Checks: `kubectl api-resources -o wide` equals a real server's list
# (api-resources-1.34.txt, minus the rows marked as not served), `kubectl explain` from the
# served OpenAPI v3 documents (fields, types, -required-, a CRD's schema), type checking of
# built-in objects (`data: {a: 1}` in a ConfigMap → the API server's BadRequest), custom
# resources' schema defaults, pruning and printer columns, ReplicationController scale, RBAC
# names with ':'. Exit 77 when kubectl is missing.
set -u
BIN=${1:?usage: run_kubectl_api.sh path/to/kcache}
command -v kubectl >/dev/null || { echo "SKIP: kubectl not found"; exit 77; }
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
kc_setup

k() { timeout 40 kubectl --kubeconfig "$KC_KUBECONFIG" --cache-dir "$KC_TMP/cache" \
    --request-timeout=20s "$@"; }
eq() { [ "$1" = "$2" ] || { echo "got '$1', want '$2'"; return 1; }; }

# kubectl's fixed-width table as name|shortnames|apiVersion|namespaced|kind|verbs|categories
columns() {
    /usr/bin/python3 -c '
import sys
lines = sys.stdin.read().splitlines()
head = lines[0]
starts = [head.index(c) for c in ("NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND",
                                   "VERBS", "CATEGORIES")]
for l in lines[1:]:
    ends = starts[1:] + [len(l)]
    print("|".join(l[s:e].strip() for s, e in zip(starts, ends)))'
}

t_api_resources() {
    grep -v '^[#!]' "$HERE/api-resources-1.34.txt" >"$KC_TMP/want.txt"
    k api-resources -o wide | columns >"$KC_TMP/got.txt" &&
        diff -u "$KC_TMP/want.txt" "$KC_TMP/got.txt"
}
t_explain_deployment() {
    k explain deployment.spec >"$KC_TMP/explain.out" &&
        grep -q '^FIELD: spec <DeploymentSpec>' "$KC_TMP/explain.out" &&
        grep -qP '^  replicas\t<integer>$' "$KC_TMP/explain.out" &&
        grep -qP '^  template\t<PodTemplateSpec> -required-$' "$KC_TMP/explain.out" ||
        { cat "$KC_TMP/explain.out"; return 1; }
}
t_explain_nested() {
    k explain pods.spec.containers.ports >"$KC_TMP/e2.out" &&
        grep -q '^FIELD: ports <\[\]ContainerPort>' "$KC_TMP/e2.out" &&
        grep -qP '^  containerPort\t<integer> -required-$' "$KC_TMP/e2.out" &&
        k explain svc.spec.ports.targetPort | grep -q '^FIELD: targetPort <IntOrString>' &&
        k explain hpa.spec | grep -q '^VERSION:    v2' ||
        { cat "$KC_TMP/e2.out"; return 1; }
}
t_configmap_type_error() {
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: typed, namespace: default}\ndata: {a: 1}\n' \
        >"$KC_TMP/bad.yaml"
    ! k create -f "$KC_TMP/bad.yaml" 2>"$KC_TMP/bad.err" &&
        grep -qF 'Error from server (BadRequest): error when creating "'"$KC_TMP/bad.yaml"'": ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string' \
            "$KC_TMP/bad.err" &&
        ! k get cm typed 2>/dev/null || { cat "$KC_TMP/bad.err"; return 1; }
}
cat >"$KC_TMP/crd.yaml" <<'Y'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, shortNames: [gd]}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1}
              color: {type: string, default: blue}
Y
t_crd_schema() {
    k apply -f "$KC_TMP/crd.yaml" >/dev/null && wait_for 15 k get gadgets || return 1
    printf 'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g1, namespace: default}\nspec: {size: 3, bogus: 1}\n' \
        >"$KC_TMP/g1.yaml"
    # default validation (Strict): the unknown field is an error, as on a real server
    ! k apply -f "$KC_TMP/g1.yaml" 2>"$KC_TMP/g1.err" &&
        grep -qF 'strict decoding error: unknown field "spec.bogus"' "$KC_TMP/g1.err" ||
        { cat "$KC_TMP/g1.err"; return 1; }
    # --validate=false: pruned; the schema default filled in
    k apply --validate=false -f "$KC_TMP/g1.yaml" >/dev/null &&
        eq "$(k get gadget g1 -o jsonpath='{.spec}')" '{"color":"blue","size":3}' || return 1
    # minimum: 1
    ! k patch gd g1 --type merge -p '{"spec":{"size":0}}' 2>"$KC_TMP/g2.err" &&
        grep -qF 'The Gadget "g1" is invalid: spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1' \
            "$KC_TMP/g2.err" || { cat "$KC_TMP/g2.err"; return 1; }
    # printer columns
    k get gadgets >"$KC_TMP/g.out" && grep -qE '^NAME +SIZE +COLOR$' "$KC_TMP/g.out" &&
        grep -qE '^g1 +3 +blue$' "$KC_TMP/g.out" || { cat "$KC_TMP/g.out"; return 1; }
    k explain gadget.spec >"$KC_TMP/ge.out" && grep -qP '^  size\t<integer> -required-$' "$KC_TMP/ge.out" ||
        { cat "$KC_TMP/ge.out"; return 1; }
}
t_rc_scale() {
    k create -f - >/dev/null <<'Y' || return 1
apiVersion: v1
kind: ReplicationController
metadata: {name: rc1, namespace: default}
spec:
  replicas: 1
  selector: {app: rc1}
  template:
    metadata: {labels: {app: rc1}}
    spec: {containers: [{name: c, image: busybox}]}
Y
    k scale rc rc1 --replicas=3 >/dev/null &&
        eq "$(k get rc rc1 -o jsonpath='{.spec.replicas}')" 3 &&
        k get all 2>&1 | grep -q 'replicationcontroller/rc1'
}
t_rbac_colon() {
    # from YAML: kubectl's imperative `create clusterrole` sends protobuf, which the server
    # decodes for a few kinds only (docs/server.md)
    k apply -f - >/dev/null <<'Y' || return 1
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:kcache:reader"}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:kcache:reader"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:kcache:reader"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}]
Y
    eq "$(k get clusterrolebinding system:kcache:reader -o jsonpath='{.roleRef.name}')" \
        system:kcache:reader && k get clusterrole system:kcache:reader >/dev/null
}

kc_start "$BIN" || { fail "server start"; kc_summary; }
check "kubectl api-resources -o wide matches a 1.34 server's list" t_api_resources
check "kubectl explain deployment.spec lists fields, types and -required-" t_explain_deployment
check "kubectl explain nested fields, IntOrString, autoscaling/v2" t_explain_nested
check "kubectl create ConfigMap data {a: 1}: BadRequest worded as the API server" t_configmap_type_error
check "CRD: strict unknown field, pruning, defaults, validation, printer columns, explain" t_crd_schema
check "ReplicationController: create, scale, in kubectl get all" t_rc_scale
check "RBAC names with ':' (clusterrole, clusterrolebinding)" t_rbac_colon
kc_stop && pass "server stops cleanly on SIGTERM (exit 0)" || fail "server exit status on SIGTERM"
kc_summary
