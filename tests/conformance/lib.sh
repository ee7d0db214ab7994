# lib.sh — shared helpers of the conformance scripts (sourced, not run).
#
# kc_setup            temp dir in $KC_TMP, cleanup trap (stops every server started, removes it)
# kc_start BIN ARGS…  start `BIN serve --listen 127.0.0.1:0 --kubeconfig-out $KC_TMP/kc ARGS…`
#                     (plus --quiet unless KC_QUIET=0), wait (≤ 20 s) for its "listening on"
#                     line; sets KC_URL, KC_PID, KC_KUBECONFIG, KC_ERR (its stderr)
# kc_stop             SIGTERM the server, wait ≤ 10 s for a clean exit (then SIGKILL); returns
#                     the server's exit status
# pass/fail/skip      record and print one check; kc_summary prints the totals and exits
# wait_for SECS CMD…  run CMD every 0.1 s until it succeeds or SECS pass (for conditions the
#                     client offers no event for, e.g. text appearing in a `kubectl get -w` log)
set -u

PASSED=0
FAILED=0
KC_PIDS=""
KC_N=0

kc_cleanup() {
    for p in $KC_PIDS; do
        kill -TERM "$p" 2>/dev/null
    done
    for p in $KC_PIDS; do
        for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
    done
    [ -n "${KC_TMP:-}" ] && rm -rf "$KC_TMP"
}

kc_setup() {
    KC_TMP=$(mktemp -d /tmp/kc-conformance.XXXXXX)
    trap kc_cleanup EXIT
    trap 'exit 130' INT TERM
}

kc_start() {
    local bin=$1
    shift
    KC_N=$((KC_N + 1))
    local fifo=$KC_TMP/serve.$KC_N.out
    KC_ERR=$KC_TMP/serve.$KC_N.err
    KC_KUBECONFIG=$KC_TMP/kc.$KC_N
    mkfifo "$fifo"
    local quiet=--quiet
    [ "${KC_QUIET:-1}" = 0 ] && quiet=
    "$bin" serve --listen 127.0.0.1:0 --kubeconfig-out "$KC_KUBECONFIG" $quiet "$@" \
        >"$fifo" 2>"$KC_ERR" &
    KC_PID=$!
    KC_PIDS="$KC_PIDS $KC_PID"
    exec 3<"$fifo"
    local line=""
    if ! read -r -t 20 -u 3 line || [ "${line#kcache serve: listening on }" = "$line" ]; then
        echo "server did not start (line: '$line'):"
        cat "$KC_ERR"
        return 1
    fi
    KC_URL=${line#kcache serve: listening on }
    echo "server: $KC_URL"
}

kc_stop() {
    kill -TERM "$KC_PID" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$KC_PID" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$KC_PID" 2>/dev/null; then
        kill -KILL "$KC_PID"
        wait "$KC_PID" 2>/dev/null
        exec 3<&-
        return 124
    fi
    wait "$KC_PID"
    local rc=$?
    exec 3<&-
    return $rc
}

pass() { PASSED=$((PASSED + 1)); echo "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*"; }

# check NAME CMD… — pass when CMD succeeds.
check() {
    local name=$1
    shift
    if "$@" >"$KC_TMP/check.out" 2>&1; then
        pass "$name"
    else
        fail "$name"
        sed 's/^/    /' "$KC_TMP/check.out" | head -20
    fi
}

wait_for() {
    local secs=$1
    shift
    local n=$((secs * 10))
    for _ in $(seq 1 "$n"); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}

kc_summary() {
    echo "== $PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
    exit $?
}
