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

# TLS + token: the generated CA and the token in the kubeconfig are enough for the client.
kc_start "$BIN" --tls --token node-t0ken || { fail "server start with --tls --token"; kc_summary; }
t_tls() {
    (cd "$DIR/node" && timeout 60 node --input-type=module - "$KC_KUBECONFIG" <<'JSEOF'
import * as k8s from '@kubernetes/client-node';
const kc = new k8s.KubeConfig();
kc.loadFromFile(process.argv[2]);
const list = await kc.makeApiClient(k8s.CoreV1Api).listNamespace();
if (!list.items.some((n) => n.metadata.name === 'default')) throw new Error('no default namespace');
JSEOF
    )
}
check "TLS + token: client-node verifies the generated CA and lists namespaces" t_tls
kc_stop && pass "TLS server stops cleanly" || fail "TLS server exit status"
kc_summary
