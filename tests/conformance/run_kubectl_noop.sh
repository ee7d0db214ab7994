#!/usr/bin/env bash
# run_kubectl_noop.sh KCACHE — unmodified kubectl repeating writes that change nothing: each must
# keep the resourceVersion, metadata.generation and managedFields times, as a real API server
# (spec §2 resourceVersion: a no-op write is not persisted, "changes that only touch managedFields
# timestamps are ignored"; checklist #29, #82). Between the repeats the server's clock moves on
# (POST /admin/clock?advance=2, no sleeping), so a restamped managedFields entry would show.
# Verbs: apply --server-side (a Deployment, then 300 ConfigMaps: the server's RV counter must not
# move), client-side apply, replace, label --overwrite, annotate --overwrite, patch (merge, json, strategic), scale.
# A real labels-only change still bumps the RV and not the generation (#34).
# Exit 77 when kubectl is missing.
set -u
BIN=${1:?usage: run_kubectl_noop.sh path/to/kcache}
command -v kubectl >/dev/null || { echo "SKIP: kubectl not found"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl not found"; exit 77; }
. "$(dirname "$0")/lib.sh"
kc_setup

k() { timeout 60 kubectl --kubeconfig "$KC_KUBECONFIG" --cache-dir "$KC_TMP/cache" \
    --request-timeout=30s "$@"; }
later() { curl -sf -X POST "$KC_URL/admin/clock?advance=2" >/dev/null; }
server_rv() { curl -sf "$KC_URL/admin/rv" | sed 's/.*"resourceVersion":"\([0-9]*\)".*/\1/'; }
# the Deployment's RV, generation and managedFields (times included), one line
state() { k get deploy web -o jsonpath='{.metadata.resourceVersion} {.metadata.generation} {.metadata.managedFields}'; }

cat >"$KC_TMP/deploy.yaml" <<'Y'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: c
        image: nginx:1.27
Y
N=300
for i in $(seq 1 $N); do
    printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: default\ndata:\n  k: "%d"\n' "$i" "$i"
done >"$KC_TMP/cms.yaml"

kc_start "$BIN" || exit 1

# same: run the write ($@) after the clock moved on; the Deployment must be exactly as before
same() {
    local before after
    before=$(state) || return 1
    later || return 1
    "$@" >/dev/null || return 1
    after=$(state) || return 1
    [ "$before" = "$after" ] || { printf 'before: %s\nafter:  %s\n' "$before" "$after"; return 1; }
}
t_apply3() {
    k apply --server-side --field-manager=t -f "$KC_TMP/deploy.yaml" >/dev/null || return 1
    same k apply --server-side --field-manager=t -f "$KC_TMP/deploy.yaml" &&
        same k apply --server-side --field-manager=t -f "$KC_TMP/deploy.yaml"
}
check "apply --server-side ×3 (clock moved on between): same RV, generation, managedFields" t_apply3
t_client_apply() {
    sed 's/name: web/name: web2/' "$KC_TMP/deploy.yaml" >"$KC_TMP/web2.yaml"
    k apply -f "$KC_TMP/web2.yaml" >/dev/null || return 1
    local a b
    a=$(k get deploy web2 -o jsonpath='{.metadata.resourceVersion} {.metadata.generation} {.metadata.managedFields}')
    later && k apply -f "$KC_TMP/web2.yaml" >/dev/null || return 1
    b=$(k get deploy web2 -o jsonpath='{.metadata.resourceVersion} {.metadata.generation} {.metadata.managedFields}')
    [ "$a" = "$b" ] || { printf 'before: %s\nafter:  %s\n' "$a" "$b"; return 1; }
}
check "client-side apply repeated (create-or-update) changes nothing" t_client_apply
t_replace() { k get deploy web -o json >"$KC_TMP/web.json" && same k replace -f "$KC_TMP/web.json"; }
check "replace with the stored object changes nothing" t_replace
check "label --overwrite with the same value changes nothing" same k label --overwrite deploy web app=web
t_annotate() { k annotate deploy web note=x >/dev/null && same k annotate --overwrite deploy web note=x; }
check "annotate --overwrite with the same value changes nothing" t_annotate
check "patch --type merge with the current value changes nothing" \
    same k patch deploy web --type merge -p '{"spec":{"replicas":2}}'
check "patch --type json with the current value changes nothing" \
    same k patch deploy web --type json -p '[{"op":"replace","path":"/spec/replicas","value":2}]'
check "patch (strategic) of a container with its own image changes nothing" \
    same k patch deploy web -p '{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}}}'
check "scale to the current replicas changes nothing" same k scale deploy web --replicas=2
t_label_change() {
    local rv0 g0 rv1 g1
    read -r rv0 g0 _ <<<"$(state)"
    k label --overwrite deploy web tier=web >/dev/null || return 1
    read -r rv1 g1 _ <<<"$(state)"
    [ "$rv1" -gt "$rv0" ] && [ "$g1" = "$g0" ] || { echo "rv $rv0→$rv1 generation $g0→$g1"; return 1; }
}
check "a real labels-only change bumps the RV, not the generation" t_label_change

t_many() {
    k apply --server-side --field-manager=t -f "$KC_TMP/cms.yaml" >/dev/null || return 1
    local rv0 rv1
    rv0=$(server_rv)
    later || return 1
    k apply --server-side --field-manager=t -f "$KC_TMP/cms.yaml" >/dev/null || return 1
    rv1=$(server_rv)
    echo "server RV before $rv0, after the repeated apply of $N ConfigMaps $rv1 ($((rv1 - rv0)) writes)"
    [ "$rv1" = "$rv0" ]
}
check "apply --server-side of $N ConfigMaps repeated: no write at all" t_many
sed 's/^/    /' "$KC_TMP/check.out"

kc_stop || fail "server exit status $?"
kc_summary
