#!/usr/bin/env bash
# run_enrich.sh KCACHE — `kcache enrich` as rsyslog runs it (spec enrich-semantics.md §9).
#
# Part A, the binary alone (no cache): with an EMPTY environment (env -i, as rsyslog execs
# mmexternal helpers) nothing reaches stderr, one reply line per input line, malformed lines
# counted in --log-file, bad arguments exit 2 (silently under --mmexternal, naming the argument
# otherwise), EOF → exit 0 within 1 s, SIGTERM → prompt exit 0, a missing daemon → file-derived
# replies at once (§9 items 3, 12, 15, 20).
#
# Part B, against `kcache serve` (skipped, and said so, without kubectl):
# one `enrich --daemon` and four `enrich --mmexternal --socket` helpers driven line by line as
# rsyslog does (enrich_check.py): one pod watch for all four (21), a label patched on a running
# pod in the records read after the watch event (16), a same-name re-creation told apart by the
# file's container id (18), a pod over 64 KiB enriched whole with no GET of it (19), a deleted pod
# enriched within --deleted-grace and file-derived after (17), a pod of another node not
# enriched (RB2), the daemon killed → file-derived replies, restarted → enriched again, and the
# API server stopped → replies still flow (20); the API server unreachable from the start: a
# prompt file-derived reply and /readyz 503 (14); a pod missing after sync (another node's, or
# none) fetched by one background GET, a 404 remembered, a 70 KiB pod fetched whole once, 429s
# pacing the GETs while replies flow, the API server hung (SIGSTOP) while replies flow (CA5, 13,
# 19, 20); /readyz 503 until the informers listed, then 200 (issue point 7).
#
# Part C, `kcache serve --authorization rbac`: get/list/watch suffice; without watch the daemon
# exits 1 at start naming the verb and resources (22).
set -u
BIN=${1:?usage: run_enrich.sh path/to/kcache}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
. "$(dirname "$0")/lib.sh"
kc_setup
HERE=$(cd "$(dirname "$0")" && pwd)
ID=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
line() { printf '{"msg":"%s","$!":{"metadata":{"filename":"/var/log/containers/%s_%s_%s-%s.log"}}}\n' "$@"; }

# ---- part A -----------------------------------------------------------------------------------
t_empty_env_quiet() { # §9.12 (MX2), §9.3, §9.20 (no daemon: file-derived at once)
    {
        line 'a\nb' web-0 shop app "$ID"
        echo 'not json'
        echo '{"$!":{"metadata":{"filename":"/var/log/syslog"}}}'
        line x web-0 shop my-app "$ID"
    } >"$KC_TMP/in"
    env -i "$BIN" enrich --mmexternal --socket "$KC_TMP/none.sock" --log-file "$KC_TMP/a.log" \
        <"$KC_TMP/in" >"$KC_TMP/out" 2>"$KC_TMP/err" || { echo "exit $?"; return 1; }
    [ ! -s "$KC_TMP/err" ] || { echo "stderr:"; cat "$KC_TMP/err"; return 1; }
    [ "$(wc -l <"$KC_TMP/out")" = 4 ] || { cat "$KC_TMP/out"; return 1; }
    sed -n 2,3p "$KC_TMP/out" | grep -vxq '{}' && { echo "non-match not {}"; return 1; }
    sed -n 1p "$KC_TMP/out" | grep -q '"pod_name":"web-0"' || return 1
    sed -n 4p "$KC_TMP/out" | grep -q '"container_name":"my-app"' || return 1
    grep -q "1 malformed" "$KC_TMP/a.log" || { cat "$KC_TMP/a.log"; return 1; }
}
t_bad_args() {
    local rc
    env -i "$BIN" enrich --mmexternal --standalone --format=nope >"$KC_TMP/o" 2>"$KC_TMP/e"
    rc=$?
    [ $rc = 2 ] && [ ! -s "$KC_TMP/e" ] && [ ! -s "$KC_TMP/o" ] || { echo "mmx rc=$rc"; return 1; }
    env -i "$BIN" enrich --mmexternal --standalone --format=nope --log-file "$KC_TMP/b.log" 2>"$KC_TMP/e"
    [ $? = 2 ] && [ ! -s "$KC_TMP/e" ] && grep -q -- "--format" "$KC_TMP/b.log" || return 1
    "$BIN" enrich --deleted-grace forever 2>"$KC_TMP/e"
    [ $? = 2 ] && grep -q -- "--deleted-grace" "$KC_TMP/e" || { cat "$KC_TMP/e"; return 1; }
    "$BIN" enrich --mmexternal 2>"$KC_TMP/e" # neither --socket nor --standalone: silent, 2
    [ $? = 2 ] && [ ! -s "$KC_TMP/e" ] || return 1
    "$BIN" enrich --daemon 2>"$KC_TMP/e"
    [ $? = 2 ] && grep -q -- "--socket" "$KC_TMP/e" || return 1
    "$BIN" enrich --fetch-rate fast 2>"$KC_TMP/e"
    [ $? = 2 ] && grep -q -- "--fetch-rate" "$KC_TMP/e" || return 1
}
t_help() {
    local h f
    h=$("$BIN" enrich --help) || return 1
    for f in --mmexternal --daemon --socket --standalone --node --kubeconfig --deleted-grace \
        --not-seen-wait --sync-wait --unsynced --health-listen --format --annotation-match \
        --de-dot --de-dot-separator --config --log-file --max-line interface.output \
        --fetch-rate --fetch-burst --fetch-ttl; do
        echo "$h" | grep -q -- "$f" || { echo "--help lacks $f"; return 1; }
    done
}
t_config_file() { # settings from a file (MX2: no environment)
    printf '# enrich\nformat=fluentbit\norphans = keep\nsocket=%s\n' "$KC_TMP/none.sock" >"$KC_TMP/conf"
    line m web-0 shop app "$ID" | env -i "$BIN" enrich --mmexternal --config "$KC_TMP/conf" \
        >"$KC_TMP/out" 2>"$KC_TMP/err" || return 1
    grep -q '"docker_id":"'"$ID"'"' "$KC_TMP/out" && [ ! -s "$KC_TMP/err" ]
}
t_eof_exit() { # §9.15 (MX11): EOF → exit 0 within 1 s
    mkfifo "$KC_TMP/fifo"
    env -i "$BIN" enrich --mmexternal --socket "$KC_TMP/none.sock" <"$KC_TMP/fifo" \
        >"$KC_TMP/out" 2>"$KC_TMP/err" &
    local pid=$! t0
    exec 5>"$KC_TMP/fifo"
    line m web-0 shop app "$ID" >&5
    wait_for 5 grep -q pod_name "$KC_TMP/out" || return 1
    t0=$(date +%s%N)
    exec 5>&-
    wait $pid || return 1
    [ $((($(date +%s%N) - t0) / 1000000)) -lt 1000 ] && [ ! -s "$KC_TMP/err" ]
}
t_sigterm_exit() { # §9.15 (MX10): SIGTERM while waiting for input → prompt exit
    mkfifo "$KC_TMP/fifo2"
    env -i "$BIN" enrich --mmexternal --socket "$KC_TMP/none.sock" <"$KC_TMP/fifo2" \
        >"$KC_TMP/out" 2>"$KC_TMP/err" &
    local pid=$!
    exec 6>"$KC_TMP/fifo2"
    line m web-0 shop app "$ID" >&6
    wait_for 5 grep -q pod_name "$KC_TMP/out" || return 1
    kill -TERM $pid
    wait_for 1 bash -c "! kill -0 $pid" || { kill -KILL $pid; return 1; }
    wait $pid
    local rc=$?
    exec 6>&-
    [ $rc = 0 ] && [ ! -s "$KC_TMP/err" ]
}
check "help documents every option" t_help
check "empty environment: nothing on stderr, one reply per line, errors counted (9.12, 9.3)" t_empty_env_quiet
check "bad arguments exit 2, silent under --mmexternal" t_bad_args
check "settings from --config FILE with an empty environment" t_config_file
check "EOF exits 0 within 1 s (9.15)" t_eof_exit
check "SIGTERM exits promptly (9.15)" t_sigterm_exit

# ---- part B -----------------------------------------------------------------------------------
if ! command -v kubectl >/dev/null; then
    echo "SKIP: part B (kubectl not found)"
    kc_summary
fi
KC_QUIET=0 kc_start "$BIN" || { fail "server start"; kc_summary; }
KC_BIN=$BIN KC_TMP=$KC_TMP KC_URL=$KC_URL KC_KUBECONFIG=$KC_KUBECONFIG KC_ERR=$KC_ERR KC_PID=$KC_PID \
    timeout 240 "$PY" "$HERE/enrich_check.py" >"$KC_TMP/py.out" 2>&1
rc=$?
cat "$KC_TMP/py.out"
PASSED=$((PASSED + $(grep -c '^PASS' "$KC_TMP/py.out")))
FAILED=$((FAILED + $(grep -c '^FAIL' "$KC_TMP/py.out")))
[ $rc = 0 ] || [ "$(grep -c '^FAIL' "$KC_TMP/py.out")" -gt 0 ] || fail "enrich_check.py exited $rc"

# ---- part C: RBAC (9.22, RB1) -----------------------------------------------------------------
# `kcache serve --tls --authorization rbac` (client-go sends tokens over HTTPS only): "agent" may get/list/watch pods and namespaces, "nowatch"
# only get/list. The daemon as agent serves and gets ready; as nowatch it exits 1 at start-up with
# a message naming the verb and the resources (its start-up SelfSubjectAccessReviews).
KC_QUIET=1 kc_start "$BIN" --tls --authorization rbac --user agent=agent-token --user nowatch=nowatch-token \
    --kubeconfig-out-as "agent=$KC_TMP/agent.kc" --kubeconfig-out-as "nowatch=$KC_TMP/nowatch.kc" ||
    { fail "rbac server start"; kc_summary; }
k() { timeout 40 kubectl --kubeconfig "$KC_KUBECONFIG" --cache-dir "$KC_TMP/rcache" "$@" >/dev/null; }
k create clusterrole enricher --verb=get,list,watch --resource=pods,namespaces &&
    k create clusterrole enricher-nowatch --verb=get,list --resource=pods,namespaces &&
    k create clusterrolebinding enricher --clusterrole=enricher --user=agent &&
    k create clusterrolebinding enricher-nowatch --clusterrole=enricher-nowatch --user=nowatch ||
    fail "rbac setup"
t_rbac_enough() { # 9.22: get/list/watch on pods and namespaces suffice
    "$BIN" enrich --daemon --socket "$KC_TMP/r.sock" --node n1 --kubeconfig "$KC_TMP/agent.kc" \
        --health-listen 127.0.0.1:0 >"$KC_TMP/r.out" 2>"$KC_TMP/r.err" &
    local pid=$! url ok=1
    wait_for 10 grep -q "serving on" "$KC_TMP/r.out" || { kill $pid; cat "$KC_TMP/r.err"; return 1; }
    url=$(grep -o 'http://[0-9.:]*' "$KC_TMP/r.out")
    wait_for 10 "$PY" -c "import urllib.request,sys; urllib.request.urlopen('$url/readyz', timeout=2)" || ok=0
    kill -TERM $pid
    wait $pid || ok=0
    [ $ok = 1 ] && ! grep -q RBAC "$KC_TMP/r.err"
}
t_rbac_nowatch() { # 9.22: a missing watch verb is reported at start-up: exit 1, verb and resource named
    timeout 20 "$BIN" enrich --daemon --socket "$KC_TMP/r2.sock" --node n1 \
        --kubeconfig "$KC_TMP/nowatch.kc" >"$KC_TMP/r2.out" 2>"$KC_TMP/r2.err"
    local rc=$?
    [ $rc = 1 ] && grep -q "watch pods, watch namespaces" "$KC_TMP/r2.err" &&
        ! grep -q "serving on" "$KC_TMP/r2.out" || { echo "rc=$rc"; cat "$KC_TMP/r2.err"; return 1; }
}
check "RBAC get/list/watch on pods and namespaces suffices; /readyz 200 (9.22)" t_rbac_enough
check "RBAC without watch: exit 1 at start-up naming the verb and resources (9.22)" t_rbac_nowatch
kc_summary
