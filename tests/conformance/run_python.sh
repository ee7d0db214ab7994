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
kc_summary
