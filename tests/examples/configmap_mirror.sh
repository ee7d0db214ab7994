#!/usr/bin/env bash
# configmap_mirror.sh KCACHE EXAMPLE — examples/configmap_mirror.c driven by kubectl against
# `kcache serve`. Checks, in order:
#   label      a ConfigMap labelled mirror=true gets the finalizer and a Secret <name>-mirror with
#              its data base64-encoded, controlled by the ConfigMap (blockOwnerDeletion)
#   change     a data change reaches the Secret
#   hand edit  a hand edit of the Secret is undone
#   foreign    a Secret <name>-mirror the ConfigMap does not control is left alone, and so is an
#              unrelated Secret through every step
#   unlabel    removing the label deletes the Secret and releases the finalizer
#   delete     deleting a labelled ConfigMap runs the finalizer's cleanup (Secret deleted), then
#              the ConfigMap is gone
# wait_for polls kubectl (0.1 s) for states the example reaches asynchronously. Exit 77 when
# kubectl is missing.
set -u
BIN=${1:?usage: configmap_mirror.sh path/to/kcache path/to/example_configmap_mirror}
EX=${2:?usage: configmap_mirror.sh path/to/kcache path/to/example_configmap_mirror}
command -v kubectl >/dev/null || { echo "SKIP: kubectl not found"; exit 77; }
. "$(dirname "$0")/../conformance/lib.sh"
kc_setup
kc_start "$BIN" || exit 1

k() { timeout 40 kubectl --kubeconfig "$KC_KUBECONFIG" --cache-dir "$KC_TMP/cache" \
    --request-timeout=20s "$@"; }
jp() { k get "$1" "$2" -o "jsonpath=$3" 2>/dev/null; }
b64() { printf %s "$1" | base64 -w0; }
gone() { ! k get "$1" "$2" >/dev/null 2>&1; }
is() { [ "$(jp "$1" "$2" "$3")" = "$4" ]; }

"$EX" "$KC_KUBECONFIG" >"$KC_TMP/ex.out" 2>&1 &
EXPID=$!
KC_PIDS="$EXPID $KC_PIDS"
wait_for 20 grep -q '^configmap_mirror: running' "$KC_TMP/ex.out" || { cat "$KC_TMP/ex.out"; exit 1; }

k create secret generic unrelated --from-literal=k=v >/dev/null
k create configmap app --from-literal=color=blue --from-literal=size=L >/dev/null
k label configmap app mirror=true >/dev/null
check "label: Secret app-mirror created" wait_for 10 k get secret app-mirror
check "label: data base64-encoded" is secret app-mirror '{.data.color}' "$(b64 blue)"
check "label: second key" is secret app-mirror '{.data.size}' "$(b64 L)"
check "label: controlled by the ConfigMap" is secret app-mirror \
    '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].controller}/{.metadata.ownerReferences[0].blockOwnerDeletion}' \
    "ConfigMap/app/true/true"
check "label: owner uid" is secret app-mirror '{.metadata.ownerReferences[0].uid}' \
    "$(jp configmap app '{.metadata.uid}')"
check "label: finalizer on the ConfigMap" wait_for 10 is configmap app \
    '{.metadata.finalizers[0]}' mirror.kcache.io/cleanup

k patch configmap app --type merge -p '{"data":{"color":"red"}}' >/dev/null
check "change: reaches the Secret" wait_for 10 is secret app-mirror '{.data.color}' "$(b64 red)"

k patch secret app-mirror --type merge -p "{\"data\":{\"color\":\"$(b64 green)\",\"x\":\"eA==\"}}" >/dev/null
check "hand edit: value restored" wait_for 10 is secret app-mirror '{.data.color}' "$(b64 red)"
check "hand edit: extra key removed" wait_for 10 is secret app-mirror '{.data.x}' ""

k create secret generic other-mirror --from-literal=mine=yes >/dev/null
rv=$(jp secret other-mirror '{.metadata.resourceVersion}')
k create configmap other --from-literal=a=b >/dev/null
k label configmap other mirror=true >/dev/null
check "foreign: finalizer still managed" wait_for 10 is configmap other \
    '{.metadata.finalizers[0]}' mirror.kcache.io/cleanup
k label configmap app probe=1 >/dev/null # one more reconcile of app after other's
check "foreign: probe reconciled" wait_for 10 is secret app-mirror '{.data.color}' "$(b64 red)"
check "foreign: Secret untouched" is secret other-mirror '{.metadata.resourceVersion}' "$rv"
check "foreign: no owner added" is secret other-mirror '{.metadata.ownerReferences}' ""

k label configmap app mirror- >/dev/null
check "unlabel: Secret deleted" wait_for 10 gone secret app-mirror
check "unlabel: finalizer released" wait_for 10 is configmap app '{.metadata.finalizers[0]}' ""

k label configmap app mirror=true >/dev/null
check "relabel: Secret back" wait_for 10 k get secret app-mirror
check "relabel: finalizer back" wait_for 10 is configmap app '{.metadata.finalizers[0]}' \
    mirror.kcache.io/cleanup
k delete configmap app --wait=false >/dev/null
check "delete: Secret deleted by the cleanup" wait_for 10 gone secret app-mirror
check "delete: ConfigMap gone" wait_for 10 gone configmap app
check "unrelated Secret left alone" is secret unrelated '{.data.k}' "$(b64 v)"
k delete configmap other --wait=false >/dev/null
check "foreign: ConfigMap other deleted" wait_for 10 gone configmap other
check "foreign: Secret other-mirror still there" k get secret other-mirror

kill -TERM "$EXPID"
wait "$EXPID"
check "example exits 0 on SIGTERM" test $? -eq 0
grep -v '^configmap_mirror: running' "$KC_TMP/ex.out" && fail "example printed errors"
kc_summary
