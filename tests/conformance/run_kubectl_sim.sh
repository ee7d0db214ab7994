#!/usr/bin/env bash
# run_kubectl_sim.sh KCACHE — unmodified kubectl against `kcache serve --simulate-nodes 3`
# (issue 33 point 6, docs/server.md "Simulated nodes and workload controllers"):
#   - `kubectl get nodes` lists kcache-node-0..2 Ready;
#   - `kubectl create deployment web --image=nginx --replicas=3`, then `kubectl rollout status`
#     and `kubectl wait --for=condition=Available` return;
#   - `kubectl get pods -o wide` shows 3 Running pods with node names and pod IPs;
#   - `kubectl set image` rolls out a new ReplicaSet (rollout status again; revision 2), a
#     deleted pod is replaced, `kubectl rollout undo` goes back to the first one (revision 3);
#   - `kubectl delete deployment` (garbage collector on) leaves no pod behind;
#   - a StatefulSet and a DaemonSet pass `kubectl rollout status`, a Job `kubectl wait
#     --for=condition=Complete`.
#   - the flags' usage errors (--simulate-nodes 10001, --simulate-lease-period 0).
# Without kubectl only the usage errors are checked.
set -u
BIN=${1:?usage: run_kubectl_sim.sh path/to/kcache}
. "$(dirname "$0")/lib.sh"
kc_setup

# the flags' usage errors (exit 2, the flag named), kubectl or not
usage_err() { # EXPECTED-TEXT ARGS…
    local want=$1
    shift
    "$BIN" serve --listen 127.0.0.1:0 "$@" >"$KC_TMP/u.out" 2>&1
    [ $? = 2 ] && grep -q -- "$want" "$KC_TMP/u.out"
}
check "--simulate-nodes 10001: usage error" usage_err "--simulate-nodes" --simulate-nodes 10001
check "--simulate-lease-period 0: usage error" usage_err "--simulate-lease-period" --simulate-lease-period 0
command -v kubectl >/dev/null || { echo "SKIP: kubectl not found"; kc_summary; }

k() { timeout 70 kubectl --kubeconfig "$KC_KUBECONFIG" --cache-dir "$KC_TMP/cache" \
    --request-timeout=20s "$@"; }

kc_start "$BIN" --simulate-nodes 3 --controllers garbagecollector || { fail "server start"; kc_summary; }

nodes_ready() { [ "$(k get nodes --no-headers | grep -c ' Ready ')" = 3 ]; }
check "get nodes: 3 Ready" wait_for 10 nodes_ready
node_names() { [ "$(k get nodes -o name | tr '\n' ' ')" = "node/kcache-node-0 node/kcache-node-1 node/kcache-node-2 " ]; }
check "node names" node_names
leases() { [ "$(k get leases -n kube-node-lease -o jsonpath='{.items[*].spec.holderIdentity}')" = "kcache-node-0 kcache-node-1 kcache-node-2" ]; }
check "node Leases in kube-node-lease" wait_for 10 leases

check "create deployment" k create deployment web --image=nginx --replicas=3
check "rollout status" k rollout status deployment/web --timeout=60s
check "wait Available" k wait --for=condition=Available deployment/web --timeout=60s

k get pods -o wide >"$KC_TMP/pods" 2>&1
wide_ok() {
    [ "$(grep -c ' Running ' "$KC_TMP/pods")" = 3 ] &&
        [ "$(grep -c 'kcache-node-' "$KC_TMP/pods")" = 3 ] &&
        grep -q ' 1/1 ' "$KC_TMP/pods" && grep -Eq ' 10\.[0-9]+\.[0-9]+\.[0-9]+ ' "$KC_TMP/pods"
}
if wide_ok; then pass "get pods -o wide: Running, node names, pod IPs"; else
    fail "get pods -o wide"; sed 's/^/    /' "$KC_TMP/pods"; fi

victim=$(k get pods -o jsonpath='{.items[0].metadata.name}')
check "delete pod (graceful: the kubelet removes it)" k delete pod "$victim" --timeout=30s
replaced() { [ "$(k get pods --no-headers | grep -c ' Running ')" = 3 ] && ! k get pod "$victim" >/dev/null 2>&1; }
check "ReplicaSet replaces the deleted pod" wait_for 20 replaced
check "set image" k set image deployment/web nginx=nginx:1.27
check "rollout status after set image" k rollout status deployment/web --timeout=60s
rev2() {
    [ "$(k get deployment web -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}')" = 2 ] &&
        [ "$(k get rs --no-headers | wc -l)" = 2 ] &&
        [ "$(k get pods -o jsonpath='{.items[*].spec.containers[0].image}' | tr ' ' '\n' | sort -u)" = nginx:1.27 ]
}
check "revision 2, two ReplicaSets, new image on every pod" wait_for 20 rev2
check "wait Available after update" k wait --for=condition=Available deployment/web --timeout=60s

check "rollout undo" k rollout undo deployment/web
check "rollout status after undo" k rollout status deployment/web --timeout=60s
undone() {
    [ "$(k get deployment web -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}')" = 3 ] &&
        [ "$(k get pods -o jsonpath='{.items[*].spec.containers[0].image}' | tr ' ' '\n' | sort -u)" = nginx ] &&
        [ "$(k get rs --no-headers | wc -l)" = 2 ]
}
check "undo: revision 3, the first ReplicaSet again, image nginx" wait_for 20 undone

check "delete deployment" k delete deployment web
no_pods() { [ -z "$(k get pods --no-headers 2>/dev/null)" ] && [ -z "$(k get rs --no-headers 2>/dev/null)" ]; }
check "pods and ReplicaSets garbage-collected" wait_for 20 no_pods

cat >"$KC_TMP/work.yaml" <<'Y'
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: postgres}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: c, image: busybox}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
Y
check "apply StatefulSet, DaemonSet, Job" k apply -f "$KC_TMP/work.yaml"
check "rollout status statefulset" k rollout status statefulset/db --timeout=60s
check "rollout status daemonset" k rollout status daemonset/agent --timeout=60s
check "wait Job Complete" k wait --for=condition=Complete job/once --timeout=60s
sts_pods() { [ "$(k get pods -l app=db -o jsonpath='{.items[*].metadata.name}')" = "db-0 db-1" ]; }
check "StatefulSet pods db-0 db-1" sts_pods

kc_stop || fail "server exit status"
kc_summary
