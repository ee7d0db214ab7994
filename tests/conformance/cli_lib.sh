# cli_lib.sh — helpers of the CLI's conformance scripts (run_cli_get.sh, run_cli_kubectl_flags.sh),
# sourced after lib.sh's kc_setup; BIN is the kcache binary, KC_KUBECONFIG set by kc_start.
#
# cli_widget_crd FILE  write the Widget CRD (widgets.example.com, short name wd) both use
# kg ARGS… / kw ARGS…  kcache get / watch against the server; k ARGS…: kubectl against it
# noage / lines_ge     a table without its AGE values (they tick); a file has ≥ N lines
# like_kubectl FILTER ARGS…  `kcache get ARGS` prints what `kubectl get ARGS` prints, through FILTER
# kcheck NAME CMD…     check, but only when kubectl is installed (HAVE_KUBECTL)
HAVE_KUBECTL=0
command -v kubectl >/dev/null && HAVE_KUBECTL=1

cli_widget_crd() {
    cat >"$1" <<'Y'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
Y
}

kg() { timeout 30 "$BIN" get --kubeconfig "$KC_KUBECONFIG" "$@"; }
kw() { timeout 30 "$BIN" watch --kubeconfig "$KC_KUBECONFIG" "$@"; }
k() { timeout 40 kubectl --kubeconfig "$KC_KUBECONFIG" --cache-dir "$KC_TMP/cache" "$@"; }
# A table without its last column (AGE in the default tables) and without an age-like value
# elsewhere (-o wide puts AGE before its extra columns): ages tick between the two commands.
noage() { sed -E 's/ +[^ ]+$//; s/ +[0-9]+[smhdy]([0-9]+[smh])?( {2,})/\2/'; }
lines_ge() { [ "$(wc -l <"$1")" -ge "$2" ]; }

like_kubectl() {
    local filter=$1
    shift
    [ $HAVE_KUBECTL = 1 ] || return 0
    kg "$@" 2>/dev/null | $filter >"$KC_TMP/ours" || true
    k get "$@" 2>/dev/null | $filter >"$KC_TMP/theirs" || true
    cmp -s "$KC_TMP/ours" "$KC_TMP/theirs" && [ -s "$KC_TMP/ours" ] ||
        { echo "kcache get $* differs from kubectl:"; diff "$KC_TMP/ours" "$KC_TMP/theirs" | head -20; return 1; }
}
kcheck() {
    if [ $HAVE_KUBECTL = 1 ]; then check "$@"; else echo "SKIP: $1 (kubectl not found)"; fi
}
