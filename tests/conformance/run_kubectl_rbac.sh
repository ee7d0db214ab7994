#!/usr/bin/env bash
# run_kubectl_rbac.sh KCACHE — unmodified kubectl against `kcache serve --authorization rbac`
# (docs/server.md "Authorization"): an operator's RBAC manifest missing a verb fails with the
# 403 a cluster gives (apiserver-semantics §3.7: reason Forbidden, upstream's message), and works
# once the verb is added; `kubectl auth can-i` yes/no (SelfSubjectAccessReview), `--list`
# (SelfSubjectRulesReview), `--as` / `--as-group` impersonation, `auth whoami`
# (SelfSubjectReview), `create token` (TokenRequest) and a kubeconfig per identity
# (--kubeconfig-out-as). Exit 77 when kubectl is missing.
set -u
BIN=${1:?usage: run_kubectl_rbac.sh path/to/kcache}
command -v kubectl >/dev/null || { echo "SKIP: kubectl not found"; exit 77; }
. "$(dirname "$0")/lib.sh"
kc_setup

# client-go sends bearer tokens over HTTPS only: --tls
kc_start "$BIN" --tls --authorization rbac --user alice=alice-token \
    --user bob=bob-token:devs --kubeconfig-out-as "alice=$KC_TMP/alice.kc" ||
    { fail "server start"; kc_summary; }

k() { timeout 40 kubectl --kubeconfig "$KC_KUBECONFIG" --cache-dir "$KC_TMP/cache" \
    --request-timeout=20s "$@"; }
ka() { timeout 40 kubectl --kubeconfig "$KC_TMP/alice.kc" --cache-dir "$KC_TMP/cache-a" \
    --request-timeout=20s "$@"; }

# expect_out NAME WANT CMD… — pass when CMD's combined output contains WANT.
expect_out() {
    local name=$1 want=$2
    shift 2
    local out
    out=$("$@" 2>&1)
    if printf '%s' "$out" | grep -qF -- "$want"; then
        pass "$name"
    else
        fail "$name (want '$want')"
        printf '%s\n' "$out" | sed 's/^/    /' | head -10
    fi
}

# ---- the admin (system:masters) and the bootstrap policy
expect_out "admin can-i create pods: yes" yes k auth can-i create pods
expect_out "admin whoami" kubernetes-admin k auth whoami
expect_out "bootstrap ClusterRoles" system:discovery k get clusterroles
expect_out "view is aggregated (pods)" pods k get clusterrole view -o jsonpath='{.rules[*].resources}'

# ---- an identity without grants: 403 with upstream's message, can-i no
expect_out "alice whoami" alice ka auth whoami
expect_out "alice list pods: 403" \
    'Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"' \
    ka get pods
expect_out "alice list nodes: 403 cluster scope" \
    'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope' \
    ka get nodes
expect_out "alice can-i create pods: no" no ka auth can-i create pods
expect_out "alice can-i --list: self reviews" selfsubjectaccessreviews.authorization.k8s.io \
    ka auth can-i --list
expect_out "alice cannot impersonate" \
    'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope' \
    ka get pods --as=bob

# ---- an operator's manifest that forgot "watch" (and "create") on configmaps
cat >"$KC_TMP/operator.yaml" <<'Y'
apiVersion: v1
kind: Namespace
metadata: {name: ops}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: operator, namespace: ops}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: operator}
rules:
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list"]
- apiGroups: ["apps"]
  resources: ["deployments", "deployments/status"]
  verbs: ["get", "list", "watch", "update", "patch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: operator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: operator}
subjects:
- {kind: ServiceAccount, name: operator, namespace: ops}
Y
check "apply operator RBAC" k apply -f "$KC_TMP/operator.yaml"
TOKEN=$(k create token operator -n ops 2>&1)
check "create token (TokenRequest)" test -n "$TOKEN"
ko() { timeout 40 kubectl --kubeconfig "$KC_KUBECONFIG" --cache-dir "$KC_TMP/cache-o" \
    --request-timeout=20s --token "$TOKEN" "$@"; }
expect_out "operator whoami" system:serviceaccount:ops:operator ko auth whoami
check "operator lists configmaps" ko get configmaps -n ops
expect_out "operator watch configmaps: 403" \
    'configmaps is forbidden: User "system:serviceaccount:ops:operator" cannot watch resource "configmaps" in API group "" in the namespace "ops"' \
    ko get configmaps -n ops --watch --request-timeout=5s
expect_out "operator create configmap: 403" \
    'configmaps is forbidden: User "system:serviceaccount:ops:operator" cannot create resource "configmaps" in API group "" in the namespace "ops"' \
    ko create configmap state -n ops --from-literal=a=b
expect_out "can-i watch configmaps --as the operator: no" no \
    k auth can-i watch configmaps -n ops --as=system:serviceaccount:ops:operator
expect_out "can-i watch deployments --as the operator: yes" yes \
    k auth can-i watch deployments.apps -n ops --as=system:serviceaccount:ops:operator
# fix the manifest: add the verbs, re-apply; the same token now works (the rule cache follows)
sed -i 's/verbs: \["get", "list"\]/verbs: ["get", "list", "watch", "create"]/' "$KC_TMP/operator.yaml"
check "re-apply operator RBAC" k apply -f "$KC_TMP/operator.yaml"
expect_out "can-i watch configmaps --as the operator: yes" yes \
    k auth can-i watch configmaps -n ops --as=system:serviceaccount:ops:operator
check "operator creates configmap" ko create configmap state -n ops --from-literal=a=b
expect_out "operator cannot read secrets" \
    'secrets is forbidden: User "system:serviceaccount:ops:operator"' ko get secrets -n ops

# ---- groups and --as-group
cat >"$KC_TMP/devs.yaml" <<'Y'
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: devs-edit, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}
subjects:
- {kind: Group, name: devs, apiGroup: rbac.authorization.k8s.io}
Y
check "bind edit to group devs" k apply -f "$KC_TMP/devs.yaml"
expect_out "can-i create deployments --as bob: yes" yes \
    k auth can-i create deployments.apps --as=bob --as-group=devs
expect_out "can-i create deployments --as carol: no" no k auth can-i create deployments.apps --as=carol
expect_out "can-i create rolebindings --as bob (edit): no" no \
    k auth can-i create rolebindings.rbac.authorization.k8s.io --as=bob --as-group=devs
expect_out "bob in devs can-i --list shows deployments" deployments.apps \
    k auth can-i --list --as=bob --as-group=devs

kc_stop || fail "server stop"
kc_summary
