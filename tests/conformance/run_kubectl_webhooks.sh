#!/usr/bin/env bash
# run_kubectl_webhooks.sh KCACHE — unmodified kubectl against `kcache serve` calling admission
# webhooks (issue 32 points 6 and 8): a ValidatingWebhookConfiguration and a
# MutatingWebhookConfiguration whose webhooks are a Service (wh.default:443, mapped with
# --webhook-service to a loopback HTTPS webhook, admission_webhook.py) with their caBundle:
#   - `kubectl create -f` through the denying webhook fails with exactly what a cluster prints:
#     Error from server: error when creating "FILE": admission webhook "deny.example.com" denied
#     the request: no colors allowed
#   - the mutating webhook's default label is in `kubectl get -o yaml`
#   - a webhook answering 500 under failurePolicy Fail: Error from server (InternalError) …
#     failed calling webhook …; under Ignore the create goes through
# Exit 77 when kubectl, /usr/bin/python3 or openssl is missing.
set -u
BIN=${1:?usage: run_kubectl_webhooks.sh path/to/kcache}
command -v kubectl >/dev/null || { echo "SKIP: kubectl not found"; exit 77; }
command -v openssl >/dev/null || { echo "SKIP: openssl not found"; exit 77; }
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "SKIP: /usr/bin/python3 not found"; exit 77; }
. "$(dirname "$0")/lib.sh"
kc_setup

k() { timeout 40 kubectl --kubeconfig "$KC_KUBECONFIG" --cache-dir "$KC_TMP/cache" \
    --request-timeout=20s "$@"; }

. "$(dirname "$0")/webhook_lib.sh"
kc_webhook_start || exit 1
CA=$WH_CA

kc_start "$BIN" --webhook-service "wh.default:443=127.0.0.1:$WH_PORT" || { fail "server start"; kc_summary; }

hook() { # NAME PATH POLICY
    cat <<Y
- name: $1
  clientConfig:
    service: {name: wh, namespace: default, path: $2, port: 443}
    caBundle: $CA
  rules: [{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
  failurePolicy: $3
  sideEffects: None
  admissionReviewVersions: [v1]
  timeoutSeconds: 5
Y
}
{
    printf 'apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n'
    printf 'metadata: {name: deny}\nwebhooks:\n'
    hook deny.example.com /deny Fail
    printf -- '---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n'
    printf 'metadata: {name: mutate}\nwebhooks:\n'
    hook mutate.example.com /mutate Fail
} >"$KC_TMP/hooks.yaml"
check "kubectl apply webhook configurations" k apply -f "$KC_TMP/hooks.yaml"

cm() { # NAME KEY — a ConfigMap manifest (kubectl create -f prints server errors as kubectl does)
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: default}\ndata: {%s: "1"}\n' \
        "$1" "$2" >"$KC_TMP/$1.yaml"
    echo "$KC_TMP/$1.yaml"
}

# CH7: the denial, as a cluster prints it
k create -f "$(cm bad color)" >"$KC_TMP/out" 2>"$KC_TMP/err"
rc=$?
want="Error from server: error when creating \"$KC_TMP/bad.yaml\": admission webhook \"deny.example.com\" denied the request: no colors allowed"
if [ $rc -ne 0 ] && [ "$(cat "$KC_TMP/err")" = "$want" ]; then
    pass "denial text"
else
    fail "denial text (exit $rc): $(cat "$KC_TMP/err")"
fi
check "denied object not stored" bash -c "! timeout 40 kubectl --kubeconfig $KC_KUBECONFIG \
    --cache-dir $KC_TMP/cache get configmap bad 2>/dev/null"

# CH1, JP4: the mutating webhook's default, then the validating webhook allows it
check "create through the webhooks" k create -f "$(cm ok size)"
k get configmap ok -o yaml >"$KC_TMP/ok.yaml" 2>&1
if grep -q '^    tier: default$' "$KC_TMP/ok.yaml"; then
    pass "mutating default in get -o yaml"
else
    fail "mutating default in get -o yaml:"
    sed 's/^/    /' "$KC_TMP/ok.yaml"
fi

# CH9, CH10: a webhook answering 500 under Fail; CH11: under Ignore the create goes through
{
    printf 'apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n'
    printf 'metadata: {name: broken}\nwebhooks:\n'
    hook fail.example.com /fail Fail
} >"$KC_TMP/fail.yaml"
check "kubectl apply failing webhook" k apply -f "$KC_TMP/fail.yaml"
k create -f "$(cm f1 size)" >"$KC_TMP/out" 2>"$KC_TMP/err"
want="Error from server (InternalError): error when creating \"$KC_TMP/f1.yaml\": Internal error occurred: failed calling webhook \"fail.example.com\": failed to call webhook: an error on the server (\"broken\") has prevented the request from succeeding"
if [ "$(cat "$KC_TMP/err")" = "$want" ]; then
    pass "failurePolicy Fail text"
else
    fail "failurePolicy Fail text: $(cat "$KC_TMP/err")"
fi
sed 's/failurePolicy: Fail/failurePolicy: Ignore/' "$KC_TMP/fail.yaml" >"$KC_TMP/ignore.yaml"
check "kubectl apply failurePolicy Ignore" k apply -f "$KC_TMP/ignore.yaml"
check "failurePolicy Ignore lets the create through" k create -f "$(cm f2 size)"

kc_stop
kc_summary
