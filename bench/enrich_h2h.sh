#!/usr/bin/env bash
# bench/enrich_h2h.sh — rsyslog + mmkubernetes against rsyslog + mmexternal + `kcache enrich`, head
# to head on the same `kcache serve` and the same CRI-named log files (Issue 34 point 8).
#
# Method. One `kcache serve` (loopback, plain HTTP, no token, request log on) holds namespace
# kcbench and PODS Pods (node n1). PODS files /var/log/containers/kcbench-<i>_kcbench_app-<64hex>.log
# (the kubelet's link names; removed afterwards) hold LINES CRI lines each. Two rsyslogd runs, one
# after the other, each with its own work directory, read every file from the start with imfile
# (addmetadata="on") and write `$!` of each message as JSON to a file:
#   mmk     action(type="mmkubernetes" kubernetesurl=<server>): one Namespace and one Pod GET per
#           pod on a cache miss (its own cache);
#   kcache  action(type="mmexternal" interface.input="fulljson" binary="kcache enrich --mmexternal
#           --socket S --master-url <server>"), one helper per worker, all asking one
#           `kcache enrich --daemon` (Pod watch for node n1, Namespace watch) started beforehand.
# Figures: wall seconds from rsyslogd's start to the last output line, lines/s, CPU seconds of
# rsyslogd with its helpers (GNU time; for kcache plus the daemon's, from /proc), GETs of single
# Pods/Namespaces and LIST/WATCH requests in the server's log during the run, and whether both
# runs gave every file the same $!kubernetes and $!docker after JSON normalisation (the default
# mmkubernetes output of kcache is meant to compare equal). Then the reply latency of one helper on
# a warm cache, driven line by line as rsyslog does (p50/p99 over REPLIES exchanges, spec §9.13).
#
# rsyslog and rsyslog-kubernetes are installed with apt-get when missing (this script only; never
# a test dependency). Needs root (it writes /var/log/containers), python3.
#
# Usage: bench/enrich_h2h.sh        (PODS=50 LINES=2000 REPLIES=20000; KCACHE=build/bin/kcache)
# Output: progress on stderr; `BENCH enrich_h2h_<run>_<metric> <value> <unit>` lines on stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
KCACHE=${KCACHE:-$root/build/bin/kcache}
PODS=${PODS:-50}
LINES=${LINES:-2000}
REPLIES=${REPLIES:-20000}
TOTAL=$((PODS * LINES))
say() { echo "enrich_h2h: $*" >&2; }

if ! command -v rsyslogd >/dev/null || ! ls /usr/lib/*/rsyslog/mmkubernetes.so >/dev/null 2>&1; then
    say "installing rsyslog rsyslog-kubernetes (apt-get)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q rsyslog rsyslog-kubernetes >&2
fi
RSYSLOGD=$(command -v rsyslogd)

tmp=$(mktemp -d /tmp/kc-enrich-h2h.XXXXXX)
pids=""
cleanup() {
    for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
    sleep 0.3
    for p in $pids; do kill -KILL "$p" 2>/dev/null || true; done
    rm -f /var/log/containers/kcbench-*_kcbench_app-*.log
    rm -rf "$tmp"
}
trap cleanup EXIT

# ---- the server and its objects ---------------------------------------------------------------
"$KCACHE" serve --listen 127.0.0.1:0 --kubeconfig-out "$tmp/kc" >"$tmp/serve.out" 2>"$tmp/serve.log" &
pids="$pids $!"
for _ in $(seq 1 200); do grep -q "listening on" "$tmp/serve.out" 2>/dev/null && break; sleep 0.1; done
URL=$(sed -n 's/^kcache serve: listening on //p' "$tmp/serve.out")
[ -n "$URL" ] || { say "server did not start"; cat "$tmp/serve.log" >&2; exit 1; }
say "server $URL; $PODS pods × $LINES lines"
python3 - "$URL" "$PODS" <<'PY'
import json, sys, urllib.request
url, n = sys.argv[1], int(sys.argv[2])
def post(path, obj):
    req = urllib.request.Request(url + path, data=json.dumps(obj).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).read()
post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
     "metadata": {"name": "kcbench", "labels": {"team": "bench", "app.kubernetes.io/part-of": "h2h"}}})
for i in range(n):
    post("/api/v1/namespaces/kcbench/pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "kcbench-%d" % i, "labels": {"app.kubernetes.io/name": "bench", "i": str(i)},
        "annotations": {"note": "x"}},
        "spec": {"nodeName": "n1", "containers": [{"name": "app", "image": "nginx"}]}})
PY

mkdir -p /var/log/containers
python3 - "$PODS" "$LINES" <<'PY'
import sys
pods, lines = int(sys.argv[1]), int(sys.argv[2])
for i in range(pods):
    cid = ("%064x" % (0xbe9c000 + i))
    with open("/var/log/containers/kcbench-%d_kcbench_app-%s.log" % (i, cid), "w") as f:
        for j in range(lines):
            f.write("2026-12-07T19:00:00.%09dZ stdout F pod %d line %d some payload text\n" % (j, i, j))
PY

count_requests() { # single-object GETs, and LIST/WATCH of collections, in the server log so far
    local gets lists
    gets=$(grep -cE 'GET /api/v1/namespaces/[^/ ]+(/pods/[^/ ]+)? ' "$tmp/serve.log" || true)
    lists=$(grep -cE 'GET /api/v1/(pods|namespaces) ' "$tmp/serve.log" || true)
    echo "$gets $lists"
}

# run NAME ACTION — one rsyslogd over every file; prints "seconds cpu_seconds"
run() {
    local name=$1 action=$2 wd=$tmp/$1
    mkdir -p "$wd"
    cat >"$wd/rsyslog.conf" <<EOF
global(workDirectory="$wd" maxMessageSize="64k")
module(load="imfile" mode="inotify")
module(load="mmkubernetes")
module(load="mmexternal")
template(name="j" type="string" string="%\$!%\n")
input(type="imfile" file="/var/log/containers/kcbench-*.log" tag="k8s" addmetadata="on"
      ruleset="r" freshStartTail="off")
ruleset(name="r") {
  $action
  action(type="omfile" file="$wd/out.json" template="j")
}
EOF
    local t0 t1
    t0=$(date +%s.%N)
    /usr/bin/time -f "%U %S" -o "$wd/time" "$RSYSLOGD" -n -f "$wd/rsyslog.conf" -i "$wd/pid" \
        >"$wd/rsyslogd.log" 2>&1 &
    local tp=$!
    pids="$pids $tp"
    local n=0
    for _ in $(seq 1 6000); do
        n=0; [ -f "$wd/out.json" ] && n=$(wc -l <"$wd/out.json")
        [ "$n" -ge "$TOTAL" ] && break
        sleep 0.05
    done
    t1=$(date +%s.%N)
    kill -TERM "$(cat "$wd/pid")" 2>/dev/null || true
    wait "$tp" || true
    [ "$n" -ge "$TOTAL" ] || { say "$name: only $n of $TOTAL lines"; sed 's/^/  /' "$wd/rsyslogd.log" >&2; }
    awk -v a="$t0" -v b="$t1" -v c="$(cat "$wd/time" | tail -1)" \
        'BEGIN { split(c, x, " "); printf "%.3f %.3f\n", b - a, x[1] + x[2] }'
}

proc_cpu() { # utime+stime seconds of a live pid
    awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f\n", ($14 + $15) / hz }' "/proc/$1/stat"
}

report() { # NAME "seconds cpu" "gets lists" "gets0 lists0" [extra_cpu]
    local name=$1 sec cpu g l g0 l0
    read -r sec cpu <<<"$2"
    read -r g l <<<"$3"
    read -r g0 l0 <<<"$4"
    cpu=$(awk -v a="$cpu" -v b="${5:-0}" 'BEGIN { printf "%.3f", a + b }')
    echo "BENCH enrich_h2h_${name}_seconds $sec s"
    echo "BENCH enrich_h2h_${name}_lines_per_second $(awk -v t="$TOTAL" -v s="$sec" 'BEGIN { printf "%.0f", t / s }') lines/s"
    echo "BENCH enrich_h2h_${name}_cpu_seconds $cpu s"
    echo "BENCH enrich_h2h_${name}_api_gets $((g - g0)) requests"
    echo "BENCH enrich_h2h_${name}_api_lists_watches $((l - l0)) requests"
}

# ---- rsyslog + mmkubernetes ---------------------------------------------------------------------
say "run 1: mmkubernetes"
before=$(count_requests)
r=$(run mmk "action(type=\"mmkubernetes\" kubernetesurl=\"$URL\" token=\"unused\")")
report mmk "$r" "$(count_requests)" "$before"

# ---- rsyslog + mmexternal + kcache enrich ------------------------------------------------------
say "run 2: mmexternal + kcache enrich"
sock=$tmp/enrich.sock
before=$(count_requests)
"$KCACHE" enrich --daemon --socket "$sock" --node n1 --kubeconfig "$tmp/kc" >"$tmp/daemon.out" \
    2>"$tmp/daemon.err" &
dpid=$!
pids="$pids $dpid"
for _ in $(seq 1 200); do grep -q "serving on" "$tmp/daemon.out" 2>/dev/null && break; sleep 0.1; done
r=$(run kcache "action(type=\"mmexternal\" interface.input=\"fulljson\" binary=\"$KCACHE enrich --mmexternal --socket $sock --master-url $URL\")")
report kcache "$r" "$(count_requests)" "$before" "$(proc_cpu $dpid)"

# ---- same fields? --------------------------------------------------------------------------------
python3 - "$tmp/mmk/out.json" "$tmp/kcache/out.json" "$PODS" <<'PY'
import json, sys
def load(p):
    per = {}
    for line in open(p):
        d = json.loads(line)
        f = d.get("metadata", {}).get("filename")
        per.setdefault(f, set()).add(json.dumps({"kubernetes": d.get("kubernetes"), "docker": d.get("docker")},
                                                sort_keys=True))
    return per
a, b = load(sys.argv[1]), load(sys.argv[2])
same = sum(1 for f in a if a[f] == b.get(f) and len(a[f]) == 1)
print("BENCH enrich_h2h_files_identical_fields %d of %s files" % (same, sys.argv[3]))
if same < int(sys.argv[3]):
    f = next(f for f in a if a[f] != b.get(f))
    print("enrich_h2h: first difference, %s:\n  mmk    %s\n  kcache %s" % (f, sorted(a[f])[:1], sorted(b.get(f, []))[:1]),
          file=sys.stderr)
PY

# ---- one helper's reply latency on a warm cache (§9.13) ------------------------------------------
python3 - "$KCACHE" "$sock" "$REPLIES" "$PODS" <<'PY'
import json, subprocess, sys, time
kcache, sock, n, pods = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
p = subprocess.Popen([kcache, "enrich", "--mmexternal", "--socket", sock], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, env={})
lat = []
for i in range(n):
    rec = {"msg": "x", "$!": {"metadata": {"filename": "/var/log/containers/kcbench-%d_kcbench_app-%064x.log"
                                           % (i % pods, 0xbe9c000 + i % pods)}}}
    t0 = time.perf_counter()
    p.stdin.write((json.dumps(rec) + "\n").encode())
    p.stdin.flush()
    line = p.stdout.readline()
    lat.append(time.perf_counter() - t0)
    if i == 0 and b"pod_id" not in line:
        print("enrich_h2h: the helper's first reply is not enriched: %r" % line[:200], file=sys.stderr)
p.stdin.close()
p.wait()
lat = sorted(lat[n // 10:])  # the first tenth warms up
print("BENCH enrich_reply_p50 %.1f us" % (lat[len(lat) // 2] * 1e6))
print("BENCH enrich_reply_p99 %.1f us" % (lat[int(len(lat) * 0.99)] * 1e6))
PY
