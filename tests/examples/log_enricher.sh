#!/usr/bin/env bash
# log_enricher.sh KCACHE EXAMPLE — examples/log_enricher.c against `kcache serve`, pods created
# and their container statuses set with kubectl. Checks (enrich-semantics CA2, CI1, CI2, RB2):
#   name       "<ns> <pod> <container>" gets the pod's uid, labels, image and container id
#   cri        a /var/log/containers/<pod>_<ns>_<container>-<id>.log name is matched by its id
#   node       a pod scheduled on another node is not known (file-derived fields only)
#   unknown    a pod that does not exist is not known (after the 100 ms not-yet-seen wait)
# Exit 77 when kubectl is missing.
set -u
BIN=${1:?usage: log_enricher.sh path/to/kcache path/to/example_log_enricher}
EX=${2:?usage: log_enricher.sh path/to/kcache path/to/example_log_enricher}
command -v kubectl >/dev/null || { echo "SKIP: kubectl not found"; exit 77; }
. "$(dirname "$0")/../conformance/lib.sh"
kc_setup
kc_start "$BIN" || exit 1

k() { timeout 40 kubectl --kubeconfig "$KC_KUBECONFIG" --cache-dir "$KC_TMP/cache" \
    --request-timeout=20s "$@"; }
ID=0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9

k create namespace team >/dev/null
for p in web-0:n1 other-0:n2; do
  k -n team apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: ${p%%:*}, labels: {app: ${p%%:*}, tier: front}}
spec: {nodeName: ${p##*:}, containers: [{name: app, image: nginx}]}
YAML
done
k -n team patch pod web-0 --subresource=status --type merge -p "{\"status\":{\"containerStatuses\":[{\"name\":\"app\",\"image\":\"nginx:1.27\",\"imageID\":\"docker.io/library/nginx@sha256:aa\",\"containerID\":\"containerd://$ID\",\"ready\":true,\"restartCount\":0,\"state\":{\"running\":{}}}]}}" >/dev/null
UID_WEB=$(k -n team get pod web-0 -o 'jsonpath={.metadata.uid}')

printf '%s\n' "team web-0 app" "/var/log/containers/web-0_team_app-$ID.log" \
    "team other-0 app" "team nope-0 app" |
    timeout 60 "$EX" "$KC_KUBECONFIG" n1 >"$KC_TMP/out" 2>"$KC_TMP/err"
rc=$?
cat "$KC_TMP/out"
line() { sed -n "${1}p" "$KC_TMP/out"; }
has() { line "$1" | grep -qF -- "$2"; }
check "exit status 0" test "$rc" = 0
check "ready before reading" grep -q '^log_enricher: ready' "$KC_TMP/err"
check "four lines out" test "$(wc -l <"$KC_TMP/out")" = 4
check "name: uid" has 1 "\"pod_uid\":\"$UID_WEB\""
check "name: labels" has 1 '"tier":"front"'
check "name: image from the status" has 1 '"image":"nginx:1.27"'
check "name: container id" has 1 "\"container_id\":\"containerd://$ID\""
check "name: live" has 1 '"deleted":false'
check "cri: matched by id" has 2 "\"pod_uid\":\"$UID_WEB\""
check "cri: container" has 2 '"container":"app"'
check "node: pod on n2 unknown" has 3 '"unknown_pod":true'
check "unknown pod" has 4 '"unknown_pod":true'
kc_summary
