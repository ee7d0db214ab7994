#!/usr/bin/env bash
# run_node.sh KCACHE — @kubernetes/client-node 1.4.0 makeInformer against `kcache serve
# --watch-close-every 2` (see node/informer.mjs). Exit 77 when node or the npm package is missing
# (scripts/install-deps runs `npm install` in tests/conformance/node).
set -u
BIN=${1:?usage: run_node.sh path/to/kcache}
DIR=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null || { echo "SKIP: node not found"; exit 77; }
if [ ! -d "$DIR/node/node_modules/@kubernetes/client-node" ]; then
    echo "SKIP: @kubernetes/client-node not installed (cd tests/conformance/node && npm install)"
    exit 77
fi
. "$DIR/lib.sh"
kc_setup
kc_start "$BIN" --watch-close-every 2 || { fail "server start"; kc_summary; }
if timeout 120 node "$DIR/node/informer.mjs" "$KC_KUBECONFIG" "$KC_URL"; then
    pass "client-node informer suite"
else
    fail "client-node informer suite"
fi
kc_stop && pass "server stops cleanly on SIGTERM" || fail "server exit status on SIGTERM"
kc_summary
