#!/usr/bin/env bash
# run_python.sh KCACHE — python3-kubernetes (Debian package, system /usr/bin/python3) against
# `kcache serve`: see python_conformance.py for the checks. Exit 77 when the client is missing.
set -u
BIN=${1:?usage: run_python.sh path/to/kcache}
PY=/usr/bin/python3
[ -x "$PY" ] && "$PY" -c 'import kubernetes' 2>/dev/null ||
    { echo "SKIP: /usr/bin/python3 with the kubernetes package not found"; exit 77; }
. "$(dirname "$0")/lib.sh"
kc_setup
kc_start "$BIN" --history 1000 || { fail "server start"; kc_summary; }
if timeout 240 "$PY" "$(dirname "$0")/python_conformance.py" "$KC_KUBECONFIG" "$KC_URL"; then
    pass "python3-kubernetes suite"
else
    fail "python3-kubernetes suite"
fi
kc_stop && pass "server stops cleanly on SIGTERM" || fail "server exit status on SIGTERM"

# TLS + token: the generated CA and the token in the kubeconfig are enough for the client.
kc_start "$BIN" --tls --token py-t0ken || { fail "server start with --tls --token"; kc_summary; }
t_tls() {
    timeout 60 "$PY" - "$KC_KUBECONFIG" <<'PYEOF'
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
names = [n.metadata.name for n in client.CoreV1Api().list_namespace().items]
assert "default" in names, names
PYEOF
}
check "TLS + token: python verifies the generated CA and lists namespaces" t_tls
kc_stop && pass "TLS server stops cleanly" || fail "TLS server exit status"
kc_summary
