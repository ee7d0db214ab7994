#!/usr/bin/env bash
# run_cli_get.sh KCACHE — `kcache get` and `kcache watch` behave like the tools people know
# (issue 16 points 13 and 14), against `kcache serve`, compared with kubectl's own output when
# kubectl is installed (those comparisons are skipped otherwise; the rest always runs).
#   get: -o json is one List document (byte for byte what kubectl prints), the object alone for
#        one TYPE NAME; -o yaml reads back (PyYAML) as the same data, also for strings YAML
#        would mistype, and as kubectl's; unknown -o / bad --limit are clear errors (exit 2);
#        TYPE/NAME, TYPE,TYPE and several names; NAME with -A gives kubectl's error; -o name is
#        kind.group/name; the table has the server's Table columns (kubectl's table, AGE values
#        aside: they tick); missing names are reported and the rest printed (exit 1).
#   watch: an ERROR event (410 Expired, too-large resourceVersion) and a stream the server ends
#        exit 1 saying why; -o json prints the ERROR event with its Status; SIGINT exits 0.
# Exit 77 when /usr/bin/python3 with PyYAML is missing.
set -u
BIN=${1:?usage: run_cli_get.sh path/to/kcache}
PY=/usr/bin/python3
[ -x "$PY" ] && "$PY" -c 'import yaml' 2>/dev/null ||
    { echo "SKIP: /usr/bin/python3 with PyYAML not found"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl not found"; exit 77; }
. "$(dirname "$0")/lib.sh"
kc_setup
. "$(dirname "$0")/cli_lib.sh"

mkdir -p "$KC_TMP/fx"
cli_widget_crd "$KC_TMP/fx/10-crd.yaml"
cat >"$KC_TMP/fx/20-objects.yaml" <<'Y'
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, namespace: default}
spec: {size: 3, ratio: 0.25, big: 1.5e300, tiny: 1.0e-9}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.25"}]}
Y
# Strings a YAML emitter must quote (or block) to keep them strings; kubectl prints them too.
"$PY" - "$KC_TMP/fx/30-tricky.json" <<'PYEOF'
import json, sys
vals = ["true", "yes", "NO", "on", "Off", "y", "n", "null", "~", "", "123", "1.5", "1e3", "0x1F",
        "0o17", "017", "1_000", "+1", "-1", ".inf", "-.Inf", ".NaN", "1:20", "2024-05-01",
        "2024-05-01T11:59:00Z", "2001-12-14 21:59:43.10 -5", "a: b", "a #b", " x", "x ", "- x",
        "*x", "&x", "!x", "%x", "@x", "`x", "{x}", "[x]", "'x'", '"x"', "?x", "|x", ">x", "---",
        "...", "a,b", "line1\nline2\n", "no trailing\nnewline", "\n", "a\n\n", "tab\there",
        "h\u00e9llo \U0001F600", "\u2028", "<x>&", "10.0.0.1", "1st", "=", "<<", "x" * 130 + " y"]
data = {"k%02d" % i: v for i, v in enumerate(vals)}
data.update({k: "a key a YAML reader would mistype" for k in ("yes", "on", "123", "1.5", "null")})
json.dump({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "tricky", "namespace": "default",
                        "labels": {"flag": "true", "n": "1"}},
           "data": data}, open(sys.argv[1], "w"))
PYEOF
# Control characters: kubectl's YAML printer refuses them; the JSON must still match.
printf '%s' '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ctrl","namespace":"default"},"data":{"c":"a\u0001b\u001fc\u007f"}}' \
    >"$KC_TMP/fx/40-ctrl.json"

kc_start "$BIN" --fixtures "$KC_TMP/fx" --seed-objects "pods=3:ns=default,configmaps=3:ns=default" ||
    { fail "server start"; kc_summary; }

c() { curl -s --max-time 10 "$@"; }

# ---- point 14: -o json / yaml -----------------------------------------------------------------
t_json_list() {
    kg cm -o json | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert list(d) == ["apiVersion", "items", "kind", "metadata"], list(d)
assert d["apiVersion"] == "v1" and d["kind"] == "List", d["kind"]
assert d["metadata"] == {"resourceVersion": ""}, d["metadata"]
names = sorted(i["metadata"]["name"] for i in d["items"])
assert names == ["cm-00000", "cm-00001", "cm-00002", "ctrl", "tricky"], names
assert all(i["kind"] == "ConfigMap" and i["apiVersion"] == "v1" for i in d["items"])'
}
t_json_single() {
    kg cm cm-00001 -o json | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert d["kind"] == "ConfigMap" and d["metadata"]["name"] == "cm-00001", d' &&
        kg deploy/web -o json | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert d["kind"] == "Deployment" and d["spec"]["replicas"] == 2, d'
}
t_json_empty() {
    kg cm -l nothing=here -o json | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert d == {"apiVersion": "v1", "items": [], "kind": "List", "metadata": {"resourceVersion": ""}}, d'
}
t_json_kubectl() {
    like_kubectl cat cm -o json && like_kubectl cat cm tricky -o json &&
        like_kubectl cat cm ctrl -o json && like_kubectl cat cm,deploy -o json &&
        like_kubectl cat deploy/web -o json && like_kubectl cat widgets -o json &&
        like_kubectl cat cm cm-00000 cm-00002 -o json && like_kubectl cat pods -A -o json
}
check "-o json: one List document (apiVersion, items, kind List, metadata.resourceVersion \"\")" t_json_list
check "-o json: TYPE NAME and TYPE/NAME print the object itself" t_json_single
check "-o json: an empty list is still one List document" t_json_empty
kcheck "-o json: byte for byte what kubectl prints (lists, objects, tricky strings, numbers)" t_json_kubectl

# The YAML reads back as exactly the JSON's data.
yaml_is_json() { # ARGS…
    kg "$@" -o yaml >"$KC_TMP/y" && kg "$@" -o json >"$KC_TMP/j" || return 1
    "$PY" - "$KC_TMP/y" "$KC_TMP/j" <<'PYEOF'
import json, sys, yaml
y = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
j = json.load(open(sys.argv[2], encoding="utf-8"))
if y != j:
    for k in j.get("data", {}):
        if y.get("data", {}).get(k) != j["data"][k]:
            print("key", k, "json", repr(j["data"][k]), "yaml", repr(y.get("data", {}).get(k)))
    sys.exit("the YAML does not read back as the JSON")
PYEOF
}
t_yaml_roundtrip() {
    yaml_is_json cm tricky && yaml_is_json cm ctrl && yaml_is_json cm && yaml_is_json widgets w1 &&
        yaml_is_json cm,deploy,pods && yaml_is_json cm -l nothing=here
}
t_yaml_shape() {
    kg cm -l nothing=here -o yaml >"$KC_TMP/ey" || return 1
    [ "$(cat "$KC_TMP/ey")" = "$(printf 'apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: ""')" ] ||
        { cat "$KC_TMP/ey"; return 1; }
    kg cm cm-00000 -o yaml | head -2 | grep -q '^data:$' &&
        ! kg cm tricky -o yaml | grep -q '^\.\.\.$' # one document, no end marker
}
t_yaml_kubectl() {
    [ $HAVE_KUBECTL = 1 ] || return 0
    local args
    for args in "cm tricky" "cm/tricky deploy/web" "cm cm-00000 cm-00001" "deploy web" "pods" "widgets"; do
        # shellcheck disable=SC2086
        kg $args -o yaml >"$KC_TMP/oy" && k get $args -o yaml >"$KC_TMP/ky" || return 1
        # kubectl leaves "=", "<<" and timestamps plain and writes 1e-09 without a '.', which
        # PyYAML (YAML 1.1) reads as a value tag, a merge key, a datetime and a string: read both
        # with a loader that takes them as YAML 1.2 does.
        "$PY" -c 'import re, sys, yaml
class L(yaml.SafeLoader):
    pass
L.yaml_implicit_resolvers = {k: [r for r in v if not r[0].endswith((":value", ":merge", ":timestamp"))]
                             for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
L.add_implicit_resolver("tag:yaml.org,2002:float",
                        re.compile(r"^[-+]?[0-9]+(\.[0-9]*)?[eE][-+]?[0-9]+$"), list("-+0123456789"))
a, b = (yaml.load(open(f, encoding="utf-8"), Loader=L) for f in sys.argv[1:3])
sys.exit(0 if a == b else "differs from kubectl: %s" % sys.argv[3])' "$KC_TMP/oy" "$KC_TMP/ky" "$args" ||
            return 1
    done
    kg pods -o yaml | cmp -s - <(k get pods -o yaml) || { echo "pods -o yaml not byte-identical"; return 1; }
}
check "-o yaml reads back as the JSON (quoted YAML look-alikes, control characters, lists)" t_yaml_roundtrip
check "-o yaml: one document; an empty List as kubectl prints it" t_yaml_shape
kcheck "-o yaml: the same data as kubectl's (and the same bytes for pods)" t_yaml_kubectl

# ---- point 14: arguments ----------------------------------------------------------------------
usage_err() { # WANT ARGS… — exit 2 and WANT in the error
    local want=$1 rc
    shift
    kg "$@" >/dev/null 2>"$KC_TMP/e"
    rc=$?
    [ $rc -eq 2 ] && grep -qF -- "$want" "$KC_TMP/e" || { echo "get $*: exit $rc:"; cat "$KC_TMP/e"; return 1; }
}
t_bad_output_limit() {
    usage_err 'kcache get: -o: unknown output format "bogus"' cm -o bogus &&
        usage_err "kcache get: --limit: expected a positive integer, got 'x'" cm --limit x &&
        usage_err "kcache get: --limit: expected a positive integer, got '0'" cm --limit 0 &&
        usage_err "kcache get: --limit: expected a positive integer, got '-5'" cm --limit=-5 &&
        usage_err "kcache get: --limit: expected a positive integer, got '10k'" cm --limit 10k
}
t_name_all_ns() {
    usage_err "a resource cannot be retrieved by name across all namespaces" cm cm-00000 -A &&
        usage_err "a resource cannot be retrieved by name across all namespaces" cm/cm-00000 -A || return 1
    [ $HAVE_KUBECTL = 1 ] || return 0
    k get cm cm-00000 -A 2>&1 | grep -qF "a resource cannot be retrieved by name across all namespaces"
}
t_bad_forms() {
    usage_err "there is no need to specify a resource type as a separate argument" cm cm/cm-00000 &&
        usage_err "arguments in resource/name form must have a single resource and name" cm/ &&
        usage_err "TYPE: missing" &&
        usage_err "an empty resource type" cm, &&
        usage_err "name cannot be provided when a selector is specified" cm cm-00000 -l a=b &&
        usage_err "name cannot be provided when a selector is specified" cm/cm-00000 --field-selector a=b
}
check "an unknown -o and a bad --limit are clear errors (exit 2)" t_bad_output_limit
check "NAME with -A: kubectl's error" t_name_all_ns
check "mixed TYPE NAME and TYPE/NAME, an empty TYPE, NAME with a selector: kubectl's errors" t_bad_forms

t_forms() {
    kg deploy/web | noage | grep -q '^web ' &&
        [ "$(kg cm cm-00000 cm-00002 | noage | awk 'NR>1{print $1}' | tr '\n' ' ')" = "cm-00000 cm-00002 " ] &&
        [ "$(kg cm/cm-00001 deploy/web -o name | tr '\n' ' ')" = "configmap/cm-00001 deployment.apps/web " ] &&
        [ "$(kg cm,deploy -o name | wc -l)" = 6 ] &&
        [ "$(kg deploy,cm cm-00000 -o name 2>/dev/null | tr '\n' ' ')" = "configmap/cm-00000 " ]
}
t_forms_kubectl() {
    like_kubectl noage deploy/web && like_kubectl noage cm cm-00000 cm-00002 &&
        like_kubectl noage cm/cm-00001 deploy/web && like_kubectl noage cm,deploy &&
        like_kubectl noage cm/cm-00001 deploy/web cm/cm-00002 && like_kubectl noage deploy,cm cm-00000
}
check "TYPE/NAME, TYPE,TYPE and several names" t_forms
kcheck "TYPE/NAME, TYPE,TYPE and several names: the same tables as kubectl" t_forms_kubectl

t_o_name() {
    [ "$(kg pods,deploy,widgets -o name | tr '\n' ' ')" = \
        "pod/web-7d9f8c6b5-00000 pod/web-7d9f8c6b5-00001 pod/web-7d9f8c6b5-00002 deployment.apps/web widget.example.com/w1 " ] ||
        { kg pods,deploy,widgets -o name; return 1; }
    like_kubectl cat pods,deploy,widgets -o name && like_kubectl cat ns -o name &&
        like_kubectl cat cm -A -o name
}
check "-o name prints kind.group/name (pod/x, deployment.apps/x, widget.example.com/x)" t_o_name

t_table_columns() {
    [ "$(kg pods | head -1 | tr -s ' ')" = "NAME READY STATUS RESTARTS AGE" ] &&
        [ "$(kg deploy | head -1 | tr -s ' ')" = "NAME READY UP-TO-DATE AVAILABLE AGE" ] &&
        [ "$(kg pods -A | head -1 | tr -s ' ')" = "NAMESPACE NAME READY STATUS RESTARTS AGE" ] &&
        [ "$(kg cm | awk '$1=="tricky"{print $2}')" = "$(kg cm tricky -o json | "$PY" -c \
            'import json,sys; print(len(json.load(sys.stdin)["data"]))')" ]
}
t_table_kubectl() {
    like_kubectl noage pods && like_kubectl noage pods -A && like_kubectl noage deploy -o wide &&
        like_kubectl noage ns && like_kubectl noage cm,pods,deploy && like_kubectl noage widgets &&
        like_kubectl noage cm -A
}
t_table_pages() {
    [ "$(kg cm --limit 1 | noage)" = "$(kg cm | noage)" ] &&
        [ "$(kg cm --limit 2 -o json | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')" = 5 ]
}
check "the table shows the server's Table columns (NAMESPACE first with -A)" t_table_columns
kcheck "the tables are kubectl's (AGE values aside)" t_table_kubectl
check "--limit pages through the list (table and json)" t_table_pages

t_missing() {
    kg cm cm-00000 nope1 cm-00001 >"$KC_TMP/m.out" 2>"$KC_TMP/m.err"
    local rc=$?
    [ $rc -eq 1 ] && [ "$(awk 'NR>1{print $1}' "$KC_TMP/m.out" | tr '\n' ' ')" = "cm-00000 cm-00001 " ] &&
        grep -qF 'kcache get: error from server (NotFound): configmaps "nope1" not found' "$KC_TMP/m.err" ||
        { echo "exit $rc"; cat "$KC_TMP/m.out" "$KC_TMP/m.err"; return 1; }
    kg nosuchthings >/dev/null 2>"$KC_TMP/m.err"
    [ $? -eq 1 ] && grep -qF "the server doesn't have a resource type \"nosuchthings\"" "$KC_TMP/m.err"
}
t_none_found() {
    [ -z "$(kg cm -l nothing=here 2>"$KC_TMP/n.err")" ] &&
        [ "$(cat "$KC_TMP/n.err")" = "No resources found in default namespace." ]
}
check "missing names are reported (exit 1), the others printed; an unknown type" t_missing
check "an empty list: kubectl's 'No resources found in default namespace.'" t_none_found

# ---- point 13: watch --------------------------------------------------------------------------
cm_rv() { kg cm "$1" -o json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])'; }
t_watch_410() {
    local rv
    rv=$(cm_rv cm-00000) || return 1
    c -f -X POST -H 'Content-Type: application/json' --data \
        '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"after-rv"}}' \
        "$KC_URL/api/v1/namespaces/default/configmaps" >/dev/null &&
        c -f -X POST "$KC_URL/admin/compact" >/dev/null || return 1
    kw cm --rv "$rv" >"$KC_TMP/w.out" 2>"$KC_TMP/w.err"
    local rc=$?
    [ $rc -eq 1 ] && grep -q '^ERROR  *410 Expired: ' "$KC_TMP/w.out" &&
        grep -q '^kcache watch: stopped by an ERROR event (410 Expired): ' "$KC_TMP/w.err" ||
        { echo "exit $rc"; cat "$KC_TMP/w.out" "$KC_TMP/w.err"; return 1; }
    kw cm --rv "$rv" -o json >"$KC_TMP/w.out" 2>/dev/null
    rc=$?
    [ $rc -eq 1 ] && "$PY" -c '
import json, sys
ev = json.loads(open(sys.argv[1]).read())
o = ev["object"]
assert ev["type"] == "ERROR" and o["kind"] == "Status" and o["status"] == "Failure", ev
assert o["code"] == 410 and o["reason"] == "Expired" and "too old" in o["message"], ev' "$KC_TMP/w.out"
}
t_watch_too_large() {
    kw cm --rv 999999999 -o json >"$KC_TMP/w.out" 2>"$KC_TMP/w.err"
    local rc=$?
    [ $rc -eq 1 ] && "$PY" -c '
import json, sys
o = json.loads(open(sys.argv[1]).read())["object"]
assert o["code"] == 504 and o["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge", o' \
        "$KC_TMP/w.out" && grep -q "stopped by an ERROR event (504 " "$KC_TMP/w.err" ||
        { echo "exit $rc"; cat "$KC_TMP/w.out" "$KC_TMP/w.err"; return 1; }
}
t_watch_sigint() {
    "$BIN" watch --kubeconfig "$KC_KUBECONFIG" ns >"$KC_TMP/wi.out" 2>"$KC_TMP/wi.err" &
    local wp=$!
    wait_for 20 lines_ge "$KC_TMP/wi.out" 4 || { kill $wp; return 1; }
    kill -INT $wp
    wait $wp
    local rc=$?
    [ $rc -eq 0 ] && [ ! -s "$KC_TMP/wi.err" ] || { echo "exit $rc"; cat "$KC_TMP/wi.err"; return 1; }
}
check "watch: an ERROR 410 Expired exits 1 saying why; -o json prints the ERROR with its Status" t_watch_410
check "watch: a too-large resourceVersion (ERROR 504 ResourceVersionTooLarge) exits 1" t_watch_too_large
check "watch: SIGINT exits 0 quietly" t_watch_sigint
kc_stop || fail "server exit status"

# A stream the server ends (here: --max-watch) is a failure, with where to resume.
kc_start "$BIN" --max-watch 1s || { fail "server start"; kc_summary; }
t_watch_closed() {
    kw ns >"$KC_TMP/w.out" 2>"$KC_TMP/w.err"
    local rc=$?
    [ $rc -eq 1 ] && [ "$(wc -l <"$KC_TMP/w.out")" = 4 ] &&
        grep -q '^kcache watch: the server closed the watch stream after 4 events, last resourceVersion [0-9]*; resume with --rv [0-9]*$' "$KC_TMP/w.err" ||
        { echo "exit $rc"; cat "$KC_TMP/w.out" "$KC_TMP/w.err"; return 1; }
}
check "watch: a stream the server ends exits 1 with the last resourceVersion to resume from" t_watch_closed
kc_stop || fail "server exit status"

# A connection that breaks (the server dies) is a failure with its reason.
kc_start "$BIN" || { fail "server start"; kc_summary; }
t_watch_broken() {
    "$BIN" watch --kubeconfig "$KC_KUBECONFIG" ns >"$KC_TMP/wb.out" 2>"$KC_TMP/wb.err" &
    local wp=$!
    wait_for 20 lines_ge "$KC_TMP/wb.out" 4 || { kill $wp; return 1; }
    kill -KILL "$KC_PID"
    wait "$KC_PID" 2>/dev/null
    timeout 20 tail --pid=$wp -f /dev/null
    wait $wp
    local rc=$?
    [ $rc -eq 1 ] && grep -q '^kcache watch: .*(after 4 events, last resourceVersion [0-9]*)$' "$KC_TMP/wb.err" ||
        { echo "exit $rc"; cat "$KC_TMP/wb.err"; return 1; }
}
check "watch: a broken connection exits 1 with the reason" t_watch_broken
kc_summary
