#!/usr/bin/env bash
# run_kubectl_cluster.sh KCACHE — unmodified kubectl finds what every cluster has (issue 33 point
# 5): `kubectl version` reports the server version the docs state (docs/serve.md) and the OpenAPI
# document's info.version; `kubectl get svc kubernetes` (ClusterIP, 443/TCP) with its Endpoints;
# the garbage collector cascades ownerReferences for `kubectl delete --cascade=background|
# foreground|orphan`; `kubectl delete ns` waits for the namespace's contents (spec §6 item 9),
# an object with a finalizer keeping the namespace Terminating. `--controllers none`: the bare
# store (dependents stay, a namespace goes at once). Exit 77 when kubectl is missing.
set -u
BIN=${1:?usage: run_kubectl_cluster.sh path/to/kcache}
command -v kubectl >/dev/null || { echo "SKIP: kubectl not found"; exit 77; }
DOCS=$(cd "$(dirname "$0")/../.." && pwd)/docs/serve.md
. "$(dirname "$0")/lib.sh"
kc_setup

k() { timeout 60 kubectl --kubeconfig "$KC_KUBECONFIG" --cache-dir "$KC_TMP/cache" \
    --request-timeout=30s "$@"; }

# owner ConfigMap o in namespace $1 and ConfigMap d owned by it
owned() {
    local ns=$1 uid
    k -n "$ns" create configmap o >/dev/null || return 1
    uid=$(k -n "$ns" get cm o -o jsonpath='{.metadata.uid}') || return 1
    k -n "$ns" apply -f - >/dev/null <<Y
apiVersion: v1
kind: ConfigMap
metadata:
  name: d
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: o, uid: "$uid", blockOwnerDeletion: true}]
Y
}
gone() { ! k -n "$1" get cm "$2" >/dev/null 2>&1; }

kc_start "$BIN" || exit 1
t_version() {
    local sv info doc
    sv=$(k version -o json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])') || return 1
    info=$(k get --raw /openapi/v2 | python3 -c 'import json,sys; print(json.load(sys.stdin)["info"]["version"])') || return 1
    doc=$(grep -o 'Server Version: v[0-9.]*-kcache' "$DOCS" | head -1 | sed 's/Server Version: //; s/-kcache//')
    echo "server $sv, openapi $info, docs/serve.md $doc"
    [ -n "$doc" ] && [ "${sv%%-kcache.*}" = "$info" ] && [ "$info" = "$doc" ]
}
check "kubectl version = OpenAPI info.version = docs/serve.md" t_version
t_svc() {
    k get svc kubernetes -o jsonpath='{.spec.type} {.spec.clusterIP} {.spec.ports[0].port}/{.spec.ports[0].name}' |
        grep -qx 'ClusterIP 10.96.0.1 443/https' &&
        k get endpoints kubernetes -o jsonpath='{.subsets[0].addresses[0].ip}' | grep -qx '127.0.0.1'
}
check "kubectl get svc kubernetes / endpoints kubernetes" t_svc
t_cascade() {
    k create ns gc >/dev/null && owned gc || return 1
    k -n gc delete cm o --cascade=background >/dev/null && gone gc d || return 1
    owned gc && k -n gc delete cm o --cascade=foreground >/dev/null && gone gc d && gone gc o || return 1
    owned gc && k -n gc delete cm o --cascade=orphan >/dev/null &&
        [ -z "$(k -n gc get cm d -o jsonpath='{.metadata.ownerReferences}')" ]
}
check "kubectl delete --cascade=background|foreground|orphan (garbage collector on by default)" t_cascade
t_ns() {
    k create ns t >/dev/null && k -n t create configmap a >/dev/null || return 1
    k -n t apply -f - >/dev/null <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: {name: held, finalizers: [example.com/hold]}
Y
    k delete ns t --wait=false >/dev/null || return 1
    [ "$(k get ns t -o jsonpath='{.status.phase}')" = Terminating ] && gone t a || return 1
    k -n t patch cm held --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null &&
        k wait --for=delete ns/t --timeout=10s >/dev/null
}
check "kubectl delete ns: Terminating until its last object goes" t_ns
kc_stop || fail "server exit status $?"

kc_start "$BIN" --controllers none || exit 1
t_bare() {
    k create ns b >/dev/null && owned b && k -n b delete cm o >/dev/null || return 1
    ! gone b d && k delete ns b >/dev/null && ! k get ns b >/dev/null 2>&1
}
check "--controllers none: dependents stay, a namespace goes at once" t_bare
kc_stop || fail "server exit status $?"
kc_summary
