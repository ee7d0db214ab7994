#!/usr/bin/env bash
# examples/webhook_migration.c end to end. Part 1, on the embedded server (no kubectl): /readyz
# 503 before the Secret informer synced and 200 after (RD4: never answer from a partial cache), a
# Migration naming a missing Secret denied with the API server's own text, one naming an existing
# Secret admitted with spec.retries defaulted by the mutating webhook (a JSONPatch the server
# applied), a v1alpha1 read of a v1 object and a v1alpha1 create converted by the conversion
# webhook (CV2 reads, CV7 writes). Part 2, when kubectl is installed: `kcache serve`, the example
# against it with --serve, and kubectl's own view of a denial, a defaulted field and a conversion.
# Usage: webhook_migration.sh EXAMPLE_BINARY [KCACHE_BINARY]
set -uo pipefail
EX=${1:?usage: webhook_migration.sh EXAMPLE [KCACHE]}
BIN=${2:-}
rc=0
expect() { # expect NAME REGEX: a line of $out matches
    if grep -Eq -- "$2" <<<"$out"; then echo "PASS: $1"; else echo "FAIL: $1 (no line matching '$2')"; rc=1; fi
}
out=$(timeout 60 "$EX" 2>&1) || { echo "webhook_migration exited $?:"; echo "$out"; exit 1; }
echo "$out"
expect "readyz 503 before sync" '^before sync: ready=false, /readyz 503$'
expect "readyz 200 after sync" '^after sync: ready=true, /readyz 200 \(2000 Secrets in the cache\)$'
expect "denial with the API server's text" \
    '^denied \(HTTP 403\): admission webhook "validate\.migrations\.example\.kcache\.io" denied the request: Secret "no-such-secret" not found in namespace "default"$'
expect "admitted with the field defaulted" '^admitted: Migration m-ok .*spec\.retries=3 defaulted'
expect "v1alpha1 read converted" \
    '^converted: v1alpha1 read of m-ok \(stored v1\): apiVersion example\.kcache\.io/v1alpha1, spec\.secret db-credentials$'
expect "v1alpha1 create converted" '^converted: v1alpha1 create of m-alpha, read as v1: spec\.secretName db-credentials$'
expect "finished" '^webhook_migration: done$'

if [ -z "$BIN" ] || ! command -v kubectl >/dev/null; then
    echo "kubectl part skipped (no kubectl or no kcache binary)"
    exit $rc
fi
. "$(dirname "$0")/../conformance/lib.sh"
kc_setup
kc_start "$BIN" || exit 1
k() { timeout 40 kubectl --kubeconfig "$KC_KUBECONFIG" --cache-dir "$KC_TMP/cache" \
    --request-timeout=20s "$@"; }
"$EX" --kubeconfig "$KC_KUBECONFIG" --serve >"$KC_TMP/ex.out" 2>&1 &
KC_PIDS="$! $KC_PIDS"
wait_for 30 grep -q '^webhook_migration: serving' "$KC_TMP/ex.out" || { cat "$KC_TMP/ex.out"; exit 1; }
cat >"$KC_TMP/bad.yaml" <<'Y'
apiVersion: example.kcache.io/v1
kind: Migration
metadata: {name: from-kubectl}
spec: {secretName: absent}
Y
msg=$(k apply -f "$KC_TMP/bad.yaml" 2>&1)
check "kubectl: denial shown" grep -q 'admission webhook "validate.migrations.example.kcache.io" denied the request: Secret "absent" not found' <<<"$msg"
echo "  kubectl said: $msg"
k create secret generic present --from-literal=p=x >/dev/null
sed 's/absent/present/' "$KC_TMP/bad.yaml" >"$KC_TMP/good.yaml"
# the Secret reaches the webhook's cache through its watch: retry the apply for a bounded time
check "kubectl: admitted once the Secret exists" wait_for 10 k apply -f "$KC_TMP/good.yaml"
check "kubectl: spec.retries defaulted" \
    test "$(k get migrations.v1.example.kcache.io from-kubectl -o 'jsonpath={.spec.retries}')" = 3
check "kubectl: v1alpha1 view converted" \
    test "$(k get migrations.v1alpha1.example.kcache.io from-kubectl -o 'jsonpath={.spec.secret}')" = present
[ "$rc" = 0 ] || FAILED=$((FAILED + 1))
kc_summary
