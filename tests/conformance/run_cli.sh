#!/usr/bin/env bash
# run_cli.sh KCACHE — the `kcache serve` command-line contract, checked with curl: exactly one
# "listening on" line, --help documents every flag and the admin endpoint without secrets, bad
# arguments exit 2 naming the flag, fault flags (429 + Retry-After, #96), seeding flags, the admin
# endpoint (faults GET/PUT, compact → 410 #83, restart resets the RV #101) behind --token, and a
# clean exit 0 on SIGINT. Then what every command shares (issue 16 point 15): one error format
# for bad flags, -h everywhere, `kcache help CMD`, the request log naming the HTTP method, the
# system's reason when the address is taken or the token file unreadable, and a rejected fixture
# naming its file. (`kcache get` and `kcache watch` against kubectl: run_cli_get.sh.)
# Exit 77 when curl is missing.
set -u
BIN=${1:?usage: run_cli.sh path/to/kcache}
command -v curl >/dev/null || { echo "SKIP: curl not found"; exit 77; }
. "$(dirname "$0")/lib.sh"
kc_setup

t_help() {
    local h
    h=$("$BIN" serve --help) || return 1
    for f in --listen --kubeconfig-out --tls --token --history --bookmark-interval --max-watch \
        --max-body --watch-queue --watch-delay --list-delay --fail-429 --fail-500 --fail-503 --retry-after \
        --watch-close-every --watch-close-prob --seed-objects --fixtures --seed --quiet \
        --service-cluster-ip-range --service-node-port-range --controllers --shard-selector \
        /admin/faults /admin/compact /admin/restart /admin/sharding /admin/clock; do
        echo "$h" | grep -q -- "$f" || { echo "--help lacks $f"; return 1; }
    done
}
t_bad_args() {
    local a rc
    for a in "--bogus" "--listen nope" "--history x" "--watch-delay 5xs" "--list-delay 9-1s" \
        "--fail-429 2" "--fail-503 0.1:fly" "--seed-objects widgets=1" "--max-body 3Q" "stray" \
        "--controllers gc" "--service-cluster-ip-range 10.0.0.0/8" "--shard-selector off"; do
        # shellcheck disable=SC2086
        timeout 10 "$BIN" serve $a >/dev/null 2>"$KC_TMP/bad.err"
        rc=$?
        [ $rc -eq 2 ] || { echo "'$a' exited $rc, want 2"; return 1; }
        grep -q -- "${a%% *}" "$KC_TMP/bad.err" || { echo "'$a': error does not name the flag"; return 1; }
    done
}
c() { curl -s --max-time 10 "$@"; }

check "--help documents every flag and the admin endpoint" t_help
check "bad arguments exit 2 with an error naming the flag" t_bad_args

# One format for bad arguments, whatever the command: exit 2, "kcache CMD: WHAT: problem", then
# "Run 'kcache CMD --help' for usage." and nothing else (no getopt message, no usage dump).
bad_format() { # CMD ARGS… (the first ARG word is named in the error)
    local cmd=$1 rc
    shift
    timeout 10 "$BIN" "$cmd" "$@" >"$KC_TMP/fmt.out" 2>"$KC_TMP/fmt.err"
    rc=$?
    [ $rc -eq 2 ] || { echo "kcache $cmd $*: exit $rc, want 2"; return 1; }
    [ ! -s "$KC_TMP/fmt.out" ] || { echo "kcache $cmd $*: wrote to stdout"; return 1; }
    [ "$(wc -l <"$KC_TMP/fmt.err")" -eq 2 ] || { echo "kcache $cmd $*: stderr:"; cat "$KC_TMP/fmt.err"; return 1; }
    local first=$(head -1 "$KC_TMP/fmt.err") second=$(tail -1 "$KC_TMP/fmt.err") what=${1%%=*}
    case "$first" in
    "kcache $cmd: $what: "*) ;;
    *) echo "kcache $cmd $*: first line '$first' is not 'kcache $cmd: $what: …'"; return 1 ;;
    esac
    [ "$second" = "Run 'kcache $cmd --help' for usage." ] ||
        { echo "kcache $cmd $*: second line '$second'"; return 1; }
}
t_one_format() {
    bad_format serve --bogus && bad_format serve --listen nope && bad_format serve stray &&
        bad_format serve --tls=1 && bad_format serve --history &&
        bad_format get --bogus pods && bad_format get -x pods && bad_format get --limit=0 pods &&
        bad_format get -o && bad_format get --all-namespaces=1 pods &&
        bad_format watch --bogus pods && bad_format watch --rv && bad_format watch -q pods &&
        bad_format watch --bookmarks=yes pods && bad_format demo --bogus &&
        bad_format demo --n x && bad_format demo --json=1 && bad_format version extra &&
        bad_format help nosuchcmd || return 1
    # the top level: "kcache: nosuchcmd: unknown command"
    timeout 10 "$BIN" nosuchcmd >/dev/null 2>"$KC_TMP/top.err"
    [ $? -eq 2 ] && [ "$(head -1 "$KC_TMP/top.err")" = "kcache: nosuchcmd: unknown command" ] &&
        [ "$(tail -1 "$KC_TMP/top.err")" = "Run 'kcache --help' for usage." ]
}
check "bad flags: one error format in every command (exit 2, 'kcache CMD: FLAG: …')" t_one_format
t_dash_h() {
    local cmd out
    for cmd in serve get watch demo version; do
        out=$(timeout 10 "$BIN" "$cmd" -h) || { echo "kcache $cmd -h failed"; return 1; }
        [ "${out#Usage: kcache $cmd}" != "$out" ] || { echo "kcache $cmd -h: $out"; return 1; }
        [ "$out" = "$(timeout 10 "$BIN" help "$cmd")" ] ||
            { echo "kcache help $cmd differs from kcache $cmd -h"; return 1; }
        [ "$out" = "$(timeout 10 "$BIN" "$cmd" --help)" ] || { echo "$cmd: -h != --help"; return 1; }
    done
    "$BIN" help | grep -q '^  help ' && "$BIN" -h | grep -q '^  get '
}
check "-h everywhere, and kcache help CMD prints the command's help" t_dash_h

# --token-file and a taken address fail with the system's reason.
t_token_file_reason() {
    : >"$KC_TMP/empty.tok"
    timeout 10 "$BIN" serve --token-file "$KC_TMP/none.tok" 2>"$KC_TMP/tf.err" >/dev/null
    [ $? -eq 2 ] && grep -q "none.tok.*No such file or directory" "$KC_TMP/tf.err" || { cat "$KC_TMP/tf.err"; return 1; }
    timeout 10 "$BIN" serve --token-file "$KC_TMP" 2>"$KC_TMP/tf.err" >/dev/null
    [ $? -eq 2 ] && grep -q "Is a directory" "$KC_TMP/tf.err" || { cat "$KC_TMP/tf.err"; return 1; }
    timeout 10 "$BIN" serve --token-file "$KC_TMP/empty.tok" 2>"$KC_TMP/tf.err" >/dev/null
    [ $? -eq 2 ] && grep -q "empty.tok.*empty" "$KC_TMP/tf.err" || { cat "$KC_TMP/tf.err"; return 1; }
}
check "--token-file errors name the file and the system's reason" t_token_file_reason

kc_start "$BIN" --fail-429 1:list --retry-after 2 --seed-objects configmaps=3 --seed 7 ||
    { fail "server start"; kc_summary; }
t_one_line() { ! read -r -t 1 -u 3 extra; } # nothing after the listening line
t_429() {
    c -i "$KC_URL/api/v1/namespaces/default/configmaps" >"$KC_TMP/429.txt"
    grep -q '^HTTP/1.1 429' "$KC_TMP/429.txt" && grep -qi '^Retry-After: 2' "$KC_TMP/429.txt" &&
        grep -q '"reason":"TooManyRequests"' "$KC_TMP/429.txt"
}
t_get_unaffected() { c -f "$KC_URL/api/v1/namespaces/default/configmaps/cm-00002" | grep -q '"cm-00002"'; }
t_faults_put() {
    c -f -X PUT --data '{"rate429":0}' "$KC_URL/admin/faults" >/dev/null &&
        c -f "$KC_URL/admin/faults" | grep -q '"retryAfterSeconds":2' &&
        c -f "$KC_URL/api/v1/namespaces/default/configmaps" | grep -q '"cm-00000"'
}
t_faults_bad() { [ "$(c -o /dev/null -w '%{http_code}' -X PUT --data '{"nope":1}' "$KC_URL/admin/faults")" = 400 ]; }
t_compact_410() {
    local rv
    rv=$(c "$KC_URL/api/v1/namespaces/default/configmaps" | /usr/bin/python3 -c \
        'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])') || return 1
    c -f -X POST -H 'Content-Type: application/json' --data \
        '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"after"}}' \
        "$KC_URL/api/v1/namespaces/default/configmaps" >/dev/null || return 1
    c -f -X POST "$KC_URL/admin/compact" >/dev/null || return 1
    c "$KC_URL/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$rv&timeoutSeconds=5" |
        grep -q '"code":410'
}
t_restart() {
    local before after
    before=$(c "$KC_URL/api/v1/namespaces" | grep -o '"resourceVersion":"[0-9]*"' | head -1 | tr -dc 0-9)
    c -f -X POST "$KC_URL/admin/restart" >/dev/null || return 1
    after=$(c "$KC_URL/api/v1/namespaces" | grep -o '"resourceVersion":"[0-9]*"' | head -1 | tr -dc 0-9)
    [ -n "$before" ] && [ -n "$after" ] && [ "$after" -lt "$before" ] &&
        [ "$(c -o /dev/null -w '%{http_code}' "$KC_URL/api/v1/namespaces/default/configmaps/cm-00000")" = 404 ]
}
t_listen_reason() {
    local port=${KC_URL##*:}
    timeout 10 "$BIN" serve --listen "127.0.0.1:$port" >/dev/null 2>"$KC_TMP/listen.err"
    [ $? -eq 1 ] && grep -q "cannot listen on 127.0.0.1:$port: Address already in use" "$KC_TMP/listen.err" ||
        { cat "$KC_TMP/listen.err"; return 1; }
}
check "exactly one line on stdout" t_one_line
check "an address in use: 'cannot listen on ADDR: Address already in use', exit 1" t_listen_reason
check "--fail-429 1:list --retry-after 2: LIST gets 429 with Retry-After: 2 (#96)" t_429
check "--fail-429 1:list leaves GET alone; --seed-objects created the objects" t_get_unaffected
check "PUT /admin/faults changes one field and keeps the others" t_faults_put
check "PUT /admin/faults with an unknown field → 400" t_faults_bad
check "POST /admin/compact: watch from an older RV gets ERROR 410 (#83)" t_compact_410
check "POST /admin/restart drops objects and resets the RV (#101)" t_restart
kill -INT "$KC_PID"
t_sigint() { wait "$KC_PID"; }
check "SIGINT stops the server with exit 0" t_sigint

mkdir -p "$KC_TMP/fixtures"
cat >"$KC_TMP/fixtures/10-apps.yaml" <<'Y'
apiVersion: v1
kind: Namespace
metadata: {name: fx}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: fx}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.25"}]}
Y
cat >"$KC_TMP/fixtures/20-list.json" <<'Y'
{"apiVersion":"v1","kind":"List","items":[
 {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"fx"},"data":{"n":"1"}},
 {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"fx"},"data":{"n":"2"}}]}
Y
kc_start "$BIN" --fixtures "$KC_TMP/fixtures" --seed-objects pods=3:ns=fx,persistentvolumes=2 ||
    { fail "server start with --fixtures"; kc_summary; }
t_fixtures() {
    c -f "$KC_URL/apis/apps/v1/namespaces/fx/deployments/web" | grep -q '"replicas":2' &&
        c -f "$KC_URL/api/v1/namespaces/fx/configmaps/b" | grep -q '"n":"2"' &&
        [ "$(c -f "$KC_URL/api/v1/namespaces/fx/pods" | grep -o '"web-7d9f8c6b5-0000[0-9]"' | sort -u | wc -l)" = 3 ] &&
        c -f "$KC_URL/api/v1/persistentvolumes/pv-00001" | grep -q '"PersistentVolume"'
}
check "--fixtures (multi-doc YAML, JSON List) and --seed-objects with :ns= and cluster-scoped PVs" t_fixtures
kc_stop || fail "server exit status"

t_fixture_rejected() {
    mkdir -p "$KC_TMP/badfx"
    cp "$KC_TMP/fixtures/10-apps.yaml" "$KC_TMP/badfx/"
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lost, namespace: nowhere}\n' \
        >"$KC_TMP/badfx/30-bad.yaml"
    timeout 20 "$BIN" serve --listen 127.0.0.1:0 --fixtures "$KC_TMP/badfx" >"$KC_TMP/fx.out" 2>"$KC_TMP/fx.err"
    local rc=$?
    [ $rc -eq 1 ] || { echo "exit $rc, want 1"; cat "$KC_TMP/fx.err"; return 1; }
    [ ! -s "$KC_TMP/fx.out" ] || { echo "it started anyway"; return 1; }
    grep -q "$KC_TMP/badfx/30-bad.yaml: .*ConfigMap \"lost\": namespaces \"nowhere\" not found" "$KC_TMP/fx.err" ||
        { cat "$KC_TMP/fx.err"; return 1; }
}
check "a rejected fixture stops the start, naming its file, the object and why" t_fixture_rejected

kc_start "$BIN" --service-cluster-ip-range 10.123.0.0/16 --service-node-port-range 31000-31099 \
    --controllers namespace,garbagecollector,serviceaccount ||
    { fail "server start with --controllers and the Service ranges"; kc_summary; }
t_cluster_flags() {
    local svc
    svc=$(c -f -X POST -H 'Content-Type: application/json' --data '{"apiVersion":"v1","kind":"Service",
        "metadata":{"name":"s"},"spec":{"type":"NodePort","ports":[{"port":80}]}}' \
        "$KC_URL/api/v1/namespaces/default/services") || return 1
    echo "$svc" | grep -q '"clusterIP":"10\.123\.' && echo "$svc" | grep -q '"nodePort":310[0-9][0-9]' &&
        c -f "$KC_URL/api/v1/namespaces/kube-system/serviceaccounts/default" >/dev/null ||
        { echo "$svc"; return 1; }
}
check "--service-cluster-ip-range, --service-node-port-range and --controllers take effect" t_cluster_flags
kc_stop || fail "server exit status"

kc_start "$BIN" --shard-selector=ignore --seed-objects configmaps=20 ||
    { fail "server start with --shard-selector=ignore"; kc_summary; }
SHARD_SEL="shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000')"
shard_list() { c -f -G --data-urlencode "shardSelector=$SHARD_SEL" "$KC_URL/api/v1/configmaps"; }
t_shard_ignore() { # KEP-5866 S12: ignored → no shardInfo; PUT /admin/sharding honours it again
    shard_list | grep -q shardInfo && { echo "shardInfo while ignored"; return 1; }
    c -f -X PUT --data '{"ignoreShardSelector":false}' "$KC_URL/admin/sharding" >/dev/null &&
        shard_list | grep -qF "\"shardInfo\":{\"selector\":\"$SHARD_SEL\"}" ||
        { echo "no shardInfo once honoured"; return 1; }
}
check "--shard-selector=ignore, and PUT /admin/sharding switches it at run time" t_shard_ignore
kc_stop || fail "server exit status"

KC_QUIET=0 kc_start "$BIN" || { fail "server start with the request log"; kc_summary; }
t_log_method() {
    c -f "$KC_URL/api/v1/namespaces" >/dev/null &&
        c -f -X POST -H 'Content-Type: application/json' \
            --data '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"logged"}}' \
            "$KC_URL/api/v1/namespaces/default/configmaps" >/dev/null &&
        c -f -X DELETE "$KC_URL/api/v1/namespaces/default/configmaps/logged" >/dev/null || return 1
    grep -q '^kcache serve: GET /api/v1/namespaces 200$' "$KC_ERR" &&
        grep -q '^kcache serve: POST /api/v1/namespaces/default/configmaps 201$' "$KC_ERR" &&
        grep -q '^kcache serve: DELETE /api/v1/namespaces/default/configmaps/logged 200$' "$KC_ERR" ||
        { cat "$KC_ERR"; return 1; }
}
check "the request log names the HTTP method: 'kcache serve: GET /path 200'" t_log_method
kc_stop || fail "server exit status"

kc_start "$BIN" --watch-delay 20ms-200ms --seed 3 || { fail "server start with --watch-delay"; kc_summary; }
mk() {
    c -f -X POST -H 'Content-Type: application/json' --data \
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$1\"}}" \
        "$KC_URL/api/v1/namespaces/default/configmaps" >/dev/null
}
list_rv() {
    c "$KC_URL/api/v1/namespaces/default/configmaps" | /usr/bin/python3 -c \
        'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])'
}
watch_names() { # RV SECS → the names of the events, one per line
    c --max-time $(($2 + 5)) \
        "$KC_URL/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$1&timeoutSeconds=$2" |
        /usr/bin/python3 -c 'import json,sys
for l in sys.stdin: print(json.loads(l)["object"]["metadata"]["name"])'
}
t_delay_order() {
    local rv got
    rv=$(list_rv) || return 1
    for i in 0 1 2 3 4 5 6 7 8 9; do mk "d$i" || return 1; done
    got=$(watch_names "$rv" 3 | tr '\n' ' ')
    [ "$got" = "d0 d1 d2 d3 d4 d5 d6 d7 d8 d9 " ] || { echo "got: $got"; return 1; }
}
t_stall() {
    # A watch that is already open (as an informer's is) sees nothing while stalled.
    local rv log=$KC_TMP/stall.log
    rv=$(list_rv) || return 1
    c -f -X PUT --data '{"watchStall":true}' "$KC_URL/admin/faults" >/dev/null || return 1
    c -N --max-time 20 -D "$KC_TMP/stall.hdr" \
        "$KC_URL/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$rv&timeoutSeconds=15" \
        >"$log" &
    local wpid=$!
    wait_for 10 grep -q '^HTTP/1.1 200' "$KC_TMP/stall.hdr" || { kill $wpid; return 1; }
    mk s0 || { kill $wpid; return 1; }
    sleep 1 # proving an absence: nothing may arrive in this second
    local held=$(wc -c <"$log")
    c -f -X PUT --data '{"watchStall":false}' "$KC_URL/admin/faults" >/dev/null
    wait_for 10 grep -q '"s0"' "$log"
    local ok=$?
    kill $wpid 2>/dev/null
    wait $wpid 2>/dev/null
    [ "$held" -eq 0 ] || { echo "events while stalled: $(cat "$log")"; return 1; }
    [ $ok -eq 0 ] || { echo "nothing after the stall was lifted"; return 1; }
}
check "--watch-delay 20ms-200ms: a watch delivers every event, in order" t_delay_order
check "watchStall holds an open watch's events back; lifting it delivers them" t_stall
kc_stop || fail "server exit status"

kc_start "$BIN" --token adm1n-t0k || { fail "server start with --token"; kc_summary; }
t_admin_auth() {
    [ "$(c -o /dev/null -w '%{http_code}' "$KC_URL/admin/faults")" = 401 ] &&
        [ "$(c -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer adm1n-t0k' "$KC_URL/admin/faults")" = 200 ] &&
        [ "$(c -o /dev/null -w '%{http_code}' "$KC_URL/api/v1/namespaces")" = 401 ]
}
check "--token guards the API and the admin endpoint (401 without it)" t_admin_auth
kc_stop && pass "server stops cleanly on SIGTERM" || fail "server exit status on SIGTERM"
kc_summary
