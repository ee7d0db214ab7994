#!/usr/bin/env bash
# run_cli_kubectl_flags.sh KCACHE — the CLI behaves as a kubectl user expects (issue 30 point 8),
# against `kcache serve`, one check per behaviour; compared with kubectl's own output on the same
# server when kubectl is installed (those comparisons are skipped otherwise; the rest always runs):
#   global flags before or after the command; --request-timeout against a server that never
#   answers; -o jsonpath= / jsonpath-file= (ranges, filters, slices, recursion, literals; parse
#   errors naming the offset); -o custom-columns= / custom-columns-file= (<none> for missing);
#   --sort-by (strings bytewise as kubectl 1.32, numbers numerically); --show-labels; -L; get all;
#   get -w and --watch-only; watch TYPE NAME; a watch the server closes or breaks is told in
#   words (not libcurl's); --help lists the flags.
# Exit 77 when /usr/bin/python3 is missing.
set -u
BIN=${1:?usage: run_cli_kubectl_flags.sh path/to/kcache}
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "SKIP: /usr/bin/python3 not found"; exit 77; }
. "$(dirname "$0")/lib.sh"
kc_setup
. "$(dirname "$0")/cli_lib.sh"

mkdir -p "$KC_TMP/fx"
cli_widget_crd "$KC_TMP/fx/10-crd.yaml"
cat >"$KC_TMP/fx/20-objects.yaml" <<'Y'
apiVersion: example.com/v1
kind: Widget
metadata: {name: w-10, namespace: default, labels: {tier: gold, app.kubernetes.io/name: shop}}
spec: {size: 10, ratio: 0.25, big: 1.5e300, tiny: 1.0e-9, on: true}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w-9, namespace: default, labels: {tier: silver}}
spec: {size: 100, ratio: 1000000.0}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w-100, namespace: default}
spec: {size: 9}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.25"}, {name: side, image: "busybox"}]}
Y
kc_start "$BIN" --fixtures "$KC_TMP/fx" --seed-objects "pods=3:ns=default,configmaps=3:ns=default" ||
    { fail "server start"; kc_summary; }

ages() { sed -E 's/ [0-9]+[smhd]([0-9]+[smh])? +/ AGE /'; } # AGE anywhere (--show-labels puts it before LABELS)
has() { grep -qF -- "$2" "$1"; }

usage_err() { # WANT ARGS… — `kcache ARGS` exits 2 with WANT in the error
    local want=$1 rc
    shift
    timeout 30 "$BIN" "$@" >/dev/null 2>"$KC_TMP/e"
    rc=$?
    [ $rc -eq 2 ] && grep -qF -- "$want" "$KC_TMP/e" || { echo "$*: exit $rc:"; cat "$KC_TMP/e"; return 1; }
}

# ---- global flags ------------------------------------------------------------------------------
t_globals_before() {
    local want
    want=$(kg cm -o name) && [ -n "$want" ] &&
        [ "$("$BIN" --kubeconfig "$KC_KUBECONFIG" get cm -o name)" = "$want" ] &&
        [ "$("$BIN" --kubeconfig="$KC_KUBECONFIG" -n default get cm -o name)" = "$want" ] &&
        [ "$("$BIN" --request-timeout 5s --kubeconfig "$KC_KUBECONFIG" get cm -o name)" = "$want" ] &&
        [ "$("$BIN" -n kube-system --kubeconfig "$KC_KUBECONFIG" get cm -o name -n default)" = "$want" ] &&
        [ "$("$BIN" --kubeconfig "$KC_KUBECONFIG" watch --help | head -1)" = "Usage: kcache watch TYPE [NAME] [options]" ]
}
t_globals_bad() {
    usage_err "kcache: --bogus: unknown flag before the command" --bogus get cm &&
        usage_err "kcache: --kubeconfig: missing value" --kubeconfig &&
        usage_err "--request-timeout: invalid value 'soon'" get cm --request-timeout soon &&
        usage_err "--request-timeout: invalid value '-1s'" --request-timeout -1s get cm
}
check "global flags before the command (--kubeconfig, -n, --request-timeout) as after it" t_globals_before
check "a bad flag before the command, a bad --request-timeout: clear errors (exit 2)" t_globals_bad

# ---- -o jsonpath -------------------------------------------------------------------------------
t_jsonpath_fixed() {
    [ "$(kg cm -o jsonpath='{.items[*].metadata.name}')" = "cm-00000 cm-00001 cm-00002" ] &&
        [ "$(kg cm -o jsonpath='{range .items[*]}{.metadata.name}{"\t"}{.kind}{"\n"}{end}' | head -1)" = "$(printf 'cm-00000\tConfigMap')" ] &&
        [ "$(kg cm -o jsonpath='{.kind} {.items[-1].metadata.name} {.items[0:2].metadata.name}')" = "List cm-00002 cm-00000 cm-00001" ] &&
        [ "$(kg wd -o jsonpath='{.items[?(@.spec.size>9)].metadata.name}')" = "w-10 w-9" ] &&
        [ "$(kg wd -o jsonpath='{.items[?(@.metadata.labels.tier=="gold")].metadata.name}')" = "w-10" ] &&
        [ "$(kg wd -o jsonpath='{.items[?(@.spec.on)].metadata.name}')" = "w-10" ] &&
        [ "$(kg wd w-10 -o jsonpath='{.spec.ratio} {.spec.big} {.spec.tiny} {.spec.on} {.metadata.labels.app\.kubernetes\.io/name}')" = "0.25 1.5e+300 1e-09 true shop" ] &&
        [ "$(kg deploy web -o jsonpath="{..containers[*].name} {.spec.template.spec.containers[1]['image']}")" = "web side busybox" ] &&
        [ "$(kg wd w-9 -o jsonpath='{.spec.ratio}')" = "1e+06" ] && # kubectl: a List's integral reals are integers
        [ "$(kg wd -o jsonpath='{.items[?(@.metadata.name=="w-9")].spec.ratio}')" = "1000000" ]
}
t_jsonpath_kubectl() {
    local t
    for t in '{.items[*].metadata.name}' '{range .items[*]}{.metadata.name}{"\t"}{.status.phase}{"\n"}{end}' \
        '{.items[0].metadata.labels}' '{.items[-1:].metadata.name} {.items[::2].metadata.name}' \
        '{..image}' '{.items[?(@.status.phase=="Running")].metadata.name}' "{.items[*].metadata.labels['pod-template-hash']}" \
        '{.items[?(@.metadata.name!="web-7d9f8c6b5-00000")].spec.nodeName}' '{.kind}{"\n"}' '{$.items[0].spec.containers[0].ports}'; do
        like_kubectl cat pods -o "jsonpath=$t" || return 1
    done
    like_kubectl cat wd -o 'jsonpath={range .items[*]}{.metadata.name}={.spec.size},{.spec.ratio}|{.spec.big} {.spec.tiny}{"\n"}{end}' &&
        like_kubectl cat wd w-10 -o 'jsonpath={.spec}' && like_kubectl cat deploy web -o 'jsonpath={.metadata.name}' &&
        like_kubectl cat wd w-9 -o 'jsonpath={.spec.ratio} {.spec}'
}
t_jsonpath_file() {
    printf '{range .items[*]}{.metadata.name}{"\\n"}{end}\n' >"$KC_TMP/tmpl"
    [ "$(kg cm -o jsonpath-file="$KC_TMP/tmpl")" = "$(printf 'cm-00000\ncm-00001\ncm-00002')" ]
}
t_jsonpath_errors() {
    usage_err "unterminated '{' at offset 0" get cm -o 'jsonpath={.metadata.name' &&
        usage_err "{range} without {end} at offset 0" get cm -o 'jsonpath={range .items[*]}{.x}' &&
        usage_err "unterminated quoted string at offset 1" get cm -o 'jsonpath={"abc}' &&
        usage_err "{end} without {range} at offset 3" get cm -o 'jsonpath=ab {end}' &&
        usage_err "template format specified but no template given" get cm -o jsonpath= &&
        usage_err "expected ')' to close the filter at offset 18" get cm -o 'jsonpath={.items[?(@.a=="x"}'
}
check "-o jsonpath: names, ranges, literals, indexes, slices, filters, recursion, numbers as Go prints them" t_jsonpath_fixed
kcheck "-o jsonpath: kubectl's output for the same templates" t_jsonpath_kubectl
check "-o jsonpath-file= reads the template from a file" t_jsonpath_file
check "-o jsonpath: parse errors name what and the offset (exit 2)" t_jsonpath_errors

# ---- -o custom-columns -------------------------------------------------------------------------
t_columns() {
    kg wd -o custom-columns='NAME:.metadata.name,SIZE:.spec.size,TIER:{.metadata.labels.tier}' >"$KC_TMP/cc" || return 1
    [ "$(cat "$KC_TMP/cc")" = "$(printf 'NAME    SIZE   TIER\nw-10    10     gold\nw-100   9      <none>\nw-9     100    silver')" ] ||
        { cat "$KC_TMP/cc"; return 1; }
    printf 'NAME  CONTAINERS\n.metadata.name .spec.template.spec.containers[*].name\n' >"$KC_TMP/ccf"
    [ "$(kg deploy -o custom-columns-file="$KC_TMP/ccf")" = "$(printf 'NAME   CONTAINERS\nweb    web,side')" ]
}
t_columns_errors() {
    usage_err "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>" get cm -o custom-columns=NAME &&
        usage_err "custom-columns format specified but no custom columns given" get cm -o custom-columns=
}
t_columns_kubectl() {
    like_kubectl cat pods -o custom-columns='NAME:.metadata.name,RV:.metadata.resourceVersion,NODE:.spec.nodeName,NOPE:.spec.nope' &&
        like_kubectl cat pods -o custom-columns='C:.spec.containers[*].name,L:.metadata.labels,P:.spec.containers[0].ports' &&
        like_kubectl cat wd -o custom-columns='N:metadata.name,R:.spec.ratio,B:.spec.big,T:.spec.tiny' &&
        like_kubectl cat wd w-9 -o custom-columns='N:metadata.name,R:.spec.ratio,S:.spec'
}
check "-o custom-columns / custom-columns-file: the columns, aligned, <none> for missing" t_columns
check "-o custom-columns: bad specs are kubectl's errors (exit 2)" t_columns_errors
kcheck "-o custom-columns: kubectl's output" t_columns_kubectl

# ---- --sort-by, --show-labels, -L, get all ------------------------------------------------------
t_sort() {
    [ "$(kg wd --sort-by=.metadata.name -o name | tr '\n' ' ')" = "widget.example.com/w-10 widget.example.com/w-100 widget.example.com/w-9 " ] &&
        [ "$(kg wd --sort-by='{.spec.size}' -o jsonpath='{.items[*].spec.size}')" = "9 10 100" ] &&
        [ "$(kg wd --sort-by=.spec.size | awk 'NR>1{print $1}' | tr '\n' ' ')" = "w-100 w-10 w-9 " ] &&
        [ "$(kg wd --sort-by=.spec.ratio -o custom-columns=N:.metadata.name --no-headers | tr '\n' ' ')" = "w-100 w-10 w-9 " ]
}
# (not the table: kubectl asks for it with includeObject=Object, which `kcache serve` answers with
# no rows today)
t_sort_kubectl() {
    like_kubectl cat wd --sort-by=.metadata.name -o name && like_kubectl cat wd --sort-by=.spec.size -o name &&
        like_kubectl cat pods --sort-by=.metadata.resourceVersion -o name &&
        like_kubectl cat wd --sort-by=.spec.size -o json
}
t_labels() {
    [ "$(kg wd w-10 --show-labels | awk 'NR==1{print $NF} NR==2{print $NF}' | tr '\n' ' ')" = "LABELS app.kubernetes.io/name=shop,tier=gold " ] &&
        [ "$(kg wd w-100 --show-labels | awk 'NR==2{print $NF}')" = "<none>" ] &&
        [ "$(kg wd -L tier -L app.kubernetes.io/name | head -1 | tr -s ' ')" = "NAME AGE TIER NAME" ] &&
        [ "$(kg wd w-9 -L tier,nope | awk 'NR==2{print $3}')" = "silver" ] &&
        usage_err "--show-labels: only with table output" get wd --show-labels -o name
}
t_labels_kubectl() {
    like_kubectl ages pods --show-labels && like_kubectl ages wd -L tier,app.kubernetes.io/name -o wide --no-headers &&
        like_kubectl ages wd --show-labels -L tier
}
t_all() {
    kg all >"$KC_TMP/all" || return 1
    has "$KC_TMP/all" "pod/web-7d9f8c6b5-00000" && has "$KC_TMP/all" "deployment.apps/web" &&
        ! has "$KC_TMP/all" "configmap/" && ! has "$KC_TMP/all" "widget"
}
t_all_kubectl() { like_kubectl noage all && like_kubectl cat all -o name; }
check "--sort-by: strings bytewise, numbers numerically (9 10 100), every output form" t_sort
kcheck "--sort-by: kubectl's order" t_sort_kubectl
check "--show-labels (LABELS last, <none>) and -L (a column per key, repeatable)" t_labels
kcheck "--show-labels and -L: kubectl's tables" t_labels_kubectl
check "get all: the resources of the \"all\" category, names with their kind" t_all
kcheck "get all: kubectl's tables" t_all_kubectl

# ---- watching ----------------------------------------------------------------------------------
post_cm() {
    curl -s --max-time 10 -f -X POST -H 'Content-Type: application/json' --data \
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$1\"},\"data\":{\"a\":\"$2\"}}" \
        "$KC_URL/api/v1/namespaces/default/configmaps" >/dev/null
}
put_cm() {
    curl -s --max-time 10 -f -X PATCH -H 'Content-Type: application/merge-patch+json' --data \
        "{\"data\":{\"a\":\"$2\"}}" "$KC_URL/api/v1/namespaces/default/configmaps/$1" >/dev/null
}
t_get_watch() {
    "$BIN" get --kubeconfig "$KC_KUBECONFIG" cm -w >"$KC_TMP/gw.out" 2>"$KC_TMP/gw.err" &
    local p=$!
    "$BIN" get --kubeconfig "$KC_KUBECONFIG" cm --watch-only -o name >"$KC_TMP/go.out" 2>&1 &
    local q=$!
    wait_for 20 lines_ge "$KC_TMP/gw.out" 4 || { kill $p $q; return 1; }
    sleep 0.5
    post_cm watched-1 x || { kill $p $q; return 1; }
    wait_for 20 lines_ge "$KC_TMP/gw.out" 5 && wait_for 20 lines_ge "$KC_TMP/go.out" 1
    kill -INT $p $q
    wait $p
    local rc=$?
    wait $q
    [ $rc -eq 0 ] && [ "$(head -4 "$KC_TMP/gw.out" | awk '{print $1}' | tr '\n' ' ')" = "NAME cm-00000 cm-00001 cm-00002 " ] &&
        [ "$(sed -n 5p "$KC_TMP/gw.out" | awk '{print $1, $2}')" = "watched-1 1" ] &&
        [ "$(cat "$KC_TMP/go.out")" = "configmap/watched-1" ] ||
        { echo "exit $rc"; cat "$KC_TMP/gw.out" "$KC_TMP/gw.err" "$KC_TMP/go.out"; return 1; }
}
t_watch_name() {
    "$BIN" watch --kubeconfig "$KC_KUBECONFIG" cm watched-1 >"$KC_TMP/wn.out" 2>&1 &
    local p=$!
    "$BIN" watch --kubeconfig "$KC_KUBECONFIG" cm/watched-1 >"$KC_TMP/ws.out" 2>&1 &
    local q=$!
    wait_for 20 lines_ge "$KC_TMP/wn.out" 1 && wait_for 20 lines_ge "$KC_TMP/ws.out" 1 || { kill $p $q; return 1; }
    post_cm other-1 y && put_cm watched-1 z || { kill $p $q; return 1; }
    wait_for 20 lines_ge "$KC_TMP/wn.out" 2 && wait_for 20 lines_ge "$KC_TMP/ws.out" 2
    sleep 0.3
    kill -INT $p $q
    wait $p
    local rc=$?
    wait $q
    [ $rc -eq 0 ] && [ "$(awk '{print $1, $2}' "$KC_TMP/wn.out" | tr '\n' ' ')" = "ADDED default/watched-1 MODIFIED default/watched-1 " ] &&
        cmp -s "$KC_TMP/wn.out" "$KC_TMP/ws.out" && usage_err "a resource cannot be retrieved by name across all namespaces" watch cm x -A ||
        { echo "exit $rc"; cat "$KC_TMP/wn.out" "$KC_TMP/ws.out"; return 1; }
}
check "get -w prints the table then each change; --watch-only only the changes; Ctrl-C exits 0" t_get_watch
check "watch TYPE NAME and TYPE/NAME: the events of that one object only" t_watch_name

t_help() {
    "$BIN" get --help >"$KC_TMP/h" && "$BIN" --help >"$KC_TMP/hm" && "$BIN" watch --help >"$KC_TMP/hw" || return 1
    local f
    for f in --watch --watch-only jsonpath= jsonpath-file= custom-columns= custom-columns-file= --sort-by \
        --show-labels --label-columns --request-timeout "kcache get all"; do
        has "$KC_TMP/h" "$f" || { echo "get --help lacks $f"; return 1; }
    done
    has "$KC_TMP/hm" "--request-timeout" && has "$KC_TMP/hw" "kcache watch TYPE [NAME]" && has "$KC_TMP/hw" "--request-timeout"
}
check "--help lists the new flags" t_help
kc_stop || fail "server exit status"

# ---- a server that never answers, a watch the server ends or breaks -----------------------------
t_request_timeout() {
    "$PY" -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
print(s.getsockname()[1], flush=True)
held = []
end = time.time() + 60
s.settimeout(1)
while time.time() < end:
    try:
        held.append(s.accept()[0])
    except socket.timeout:
        pass' >"$KC_TMP/port" &
    local sp=$!
    wait_for 10 test -s "$KC_TMP/port" || { kill $sp; return 1; }
    sed -E "s#(server: \"?http://127\.0\.0\.1:)[0-9]+#\1$(cat "$KC_TMP/port")#" "$KC_KUBECONFIG" >"$KC_TMP/kc.silent"
    local t0 t1 rc rc2
    t0=$(date +%s%N)
    timeout 60 "$BIN" --kubeconfig "$KC_TMP/kc.silent" --request-timeout 1s get pods >/dev/null 2>"$KC_TMP/rt.err"
    rc=$?
    t1=$(date +%s%N)
    timeout 60 "$BIN" get pods --kubeconfig "$KC_TMP/kc.silent" --request-timeout=1 >/dev/null 2>"$KC_TMP/rt2.err"
    rc2=$?
    kill $sp
    local ms=$(((t1 - t0) / 1000000))
    echo "get with --request-timeout 1s against a silent server: exit $rc after $ms ms"
    [ $rc -eq 1 ] && [ $rc2 -eq 1 ] && [ $ms -lt 15000 ] &&
        has "$KC_TMP/rt.err" "kcache get: the server did not answer within the request timeout (1s)" &&
        has "$KC_TMP/rt2.err" "within the request timeout (1s)" ||
        { cat "$KC_TMP/rt.err" "$KC_TMP/rt2.err"; return 1; }
}
check "--request-timeout 1s: a server that never answers fails in about 1 s, saying so" t_request_timeout

kc_start "$BIN" --max-watch 1s || { fail "server start"; kc_summary; }
t_watch_closed_clean() {
    timeout 30 "$BIN" get --kubeconfig "$KC_KUBECONFIG" ns -w >"$KC_TMP/gc.out" 2>"$KC_TMP/gc.err"
    local rc=$?
    timeout 30 "$BIN" watch --kubeconfig "$KC_KUBECONFIG" ns >/dev/null 2>"$KC_TMP/wc.err"
    local rc2=$?
    # get -w: kubectl exits 0 when the server ends the watch; kcache says so on stderr
    [ $rc -eq 0 ] && [ $rc2 -eq 1 ] && [ "$(wc -l <"$KC_TMP/gc.out")" = 5 ] &&
        grep -q '^kcache get: the server closed the watch stream after 0 events$' "$KC_TMP/gc.err" &&
        grep -q '^kcache watch: the server closed the watch stream after 4 events' "$KC_TMP/wc.err" ||
        { echo "exit $rc $rc2"; cat "$KC_TMP/gc.out" "$KC_TMP/gc.err" "$KC_TMP/wc.err"; return 1; }
}
check "a watch the server closes: a clean message (get -w exits 0 as kubectl, watch 1)" t_watch_closed_clean
kc_stop || fail "server exit status"

kc_start "$BIN" || { fail "server start"; kc_summary; }
t_watch_broken_words() {
    "$BIN" get -w --kubeconfig "$KC_KUBECONFIG" ns >"$KC_TMP/gb.out" 2>"$KC_TMP/gb.err" &
    local p=$!
    wait_for 20 lines_ge "$KC_TMP/gb.out" 5 || { kill $p; return 1; }
    kill -KILL "$KC_PID"
    wait "$KC_PID" 2>/dev/null
    timeout 20 tail --pid=$p -f /dev/null
    wait $p
    local rc=$?
    [ $rc -eq 1 ] && [ "$(cat "$KC_TMP/gb.err")" = "kcache get: the connection to the server broke (after 0 events)" ] ||
        { echo "exit $rc"; cat "$KC_TMP/gb.err"; return 1; }
}
check "a watch whose connection breaks: said in words, not libcurl's text" t_watch_broken_words
kc_summary
