#!/usr/bin/env bash
# run_python_webhooks.sh KCACHE — python3-kubernetes (Debian package, system /usr/bin/python3)
# creating objects through `kcache serve`'s admission chain (issue 32 points 6 and 8): the
# webhook of run_kubectl_webhooks.sh (admission_webhook.py behind the Service wh.default:443,
# mapped with --webhook-service); the checks are in python_webhooks.py. Exit 77 when the client
# or openssl is missing.
set -u
BIN=${1:?usage: run_python_webhooks.sh path/to/kcache}
PY=/usr/bin/python3
[ -x "$PY" ] && "$PY" -c 'import kubernetes' 2>/dev/null ||
    { echo "SKIP: /usr/bin/python3 with the kubernetes package not found"; exit 77; }
command -v openssl >/dev/null || { echo "SKIP: openssl not found"; exit 77; }
. "$(dirname "$0")/lib.sh"
kc_setup
. "$(dirname "$0")/webhook_lib.sh"
kc_webhook_start || exit 1
kc_start "$BIN" --webhook-service "wh.default:443=127.0.0.1:$WH_PORT" ||
    { fail "server start"; kc_summary; }
if timeout 120 "$PY" "$(dirname "$0")/python_webhooks.py" "$KC_KUBECONFIG" "$WH_CA"; then
    pass "python3-kubernetes through the admission chain"
else
    fail "python3-kubernetes through the admission chain"
fi
kc_stop && pass "server stops cleanly on SIGTERM" || fail "server exit status on SIGTERM"
kc_summary
