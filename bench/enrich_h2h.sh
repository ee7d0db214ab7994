#!/usr/bin/env bash
# bench/enrich_h2h.sh — rsyslog + mmkubernetes against rsyslog + mmexternal + `kcache enrich`, head
# to head on the same `kcache serve` and the same CRI-named log files (Issue 34 point 8).
#
# Method. For each pod count N in PODS (default "200 2000"), one fresh `kcache serve` (loopback,
# plain HTTP, no token, request log on) holds namespace kcbench and N Pods (node n1, label gen=1);
# one `kcache enrich --daemon` (Pod watch for node n1, Namespace watch) serves the helpers. Files
# /var/log/containers/kcbench-<i>_kcbench_app-<64hex>.log carry the kubelet's link names (removed
# afterwards). Each rsyslogd has its own work directory, reads the files with imfile
# (addmetadata="on") and writes `{"msg":…,"now":$now-unixtimestamp,"v":$!}` per message to a file:
#   mmk     action(type="mmkubernetes" kubernetesurl=<server>) with rsyslog's defaults (its own
#           cache, never expired: cacheexpireinterval=-1; one Namespace and one Pod GET per pod on
#           a miss; busyretryinterval 5 s after a 429);
#   kcache  action(type="mmexternal" interface.input="fulljson" binary="kcache enrich --mmexternal
#           --socket S --master-url <server>"), one helper per worker, all asking the daemon;
#   floor   the same mmexternal action running build/bin/bench_mmx_echo, which answers {} to every
#           line without reading it: the cost of rsyslog's external-process pipe itself;
#   floorf  the same, answering every line with one reply kcache gave (bench_mmx_echo -r): the pipe
#           plus rsyslog's own cost of parsing and merging replies of that size — the best any
#           mmexternal helper adding these fields can do on this input.
# Phase A, throughput (the two pipelines one after the other, on the same static files): LINES
# lines per pod (default 100,000 / N, so 500 lines per pod at 200 pods and 50 at 2,000, to keep the
# default run under ~5 min on 2 cores), read from the start. Figures: (a) wall seconds from
# rsyslogd's start to the last output line, records/s, CPU seconds split into rsyslogd itself, its
# mmexternal helpers and the daemon (/proc/<pid>/stat before the stop); then the same records
# without rsyslog ("helper_pipe"): one `kcache enrich --mmexternal` helper, its stdin a file of the
# same records in rsyslog's fulljson form (pods interleaved line by line) and its stdout a file, so
# nothing waits for a reply (pipelined: what the helper and the daemon cost, without rsyslog's
# pipe), the daemon answering; and one helper's reply latency driven line by line as rsyslog does
# (p50/p99 over REPLIES exchanges, spec §9.13); (f) RSS (VmRSS, /proc) of rsyslogd, its helpers and
# the daemon at the end of the run; whether both runs gave every file the same $!kubernetes and
# $!docker.
# Phase B, freshness (both pipelines at once, each its own rsyslogd, on new files): every second
# one line per pod file, each line carrying its write time. After a warm-up line per pod (both
# outputs have all of them): (c) 10% of the pods get gen=2 (merge patch), and (d) 5% others are
# deleted; lines keep coming for RELABEL_WAIT (default 30) + 2 s. Then (e) BURST new pods (5% of N,
# at least 10) are created, known to the API, 1 s later every GET gets 429 (PUT /admin/faults
# {"rate429":"1:get","retryAfterSeconds":1}) for BURST_SECONDS (default 5) while their files get
# lines too; then the faults are cleared. Counted from each output: of the relabelled pods'
# records written >= 2 s and >= RELABEL_WAIT s after their patch, the fraction with gen=2; of the
# deleted pods' records written >= 2 s after the delete, how many still carry pod metadata
# (pod_id); of the new pods' records written during the burst, and of those written out (rsyslog's
# $now-unixtimestamp, whole seconds) inside it, how many carry none (bare); and the lag from a
# line's write to its output (an upper bound: the output second + 1 s).
# (b) API requests from the server's request log over both phases: single-object GETs (mmk's) and
# LIST/WATCH of collections (the daemon's), in total and per pod; 429 answers.
#
# rsyslog and rsyslog-kubernetes are installed with apt-get when missing (this script only; never
# a test dependency). Needs root (it writes /var/log/containers), python3.
#
# REPEAT runs of phase A's four pipelines and the pipe run alternate (mmk, kcache, floor, floorf,
# pipe, mmk, …); the summary lines (enrich_h2h_<N>_summary_*) give each one's median records/s and
# the ratios kcache/mmk, kcache/floor, kcache/floorf, floor/mmk, floorf/mmk and pipe/mmk.
# PHASE_B=0 skips phase B.
#
# Usage: bench/enrich_h2h.sh   (PODS="200 2000" LINES=100000/N RELABEL_WAIT=30 BURST_SECONDS=5
#                               REPLIES=20000 WORKERS=1 REPEAT=1 PHASE_B=1; KCACHE=build/bin/kcache
#                               ECHO=build/bin/bench_mmx_echo)
# WORKERS > 1 gives both rulesets a LinkedList queue with that many worker threads (so that many
# mmexternal helpers).
# Output: progress on stderr; `BENCH enrich_h2h_<N>_<run>_<metric> <value> <unit>` lines on stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
KCACHE=${KCACHE:-$root/build/bin/kcache}
KCACHE=$(cd "$(dirname "$KCACHE")" && pwd)/$(basename "$KCACHE") # rsyslogd runs helpers from /
ECHO=${ECHO:-$(dirname "$KCACHE")/bench_mmx_echo}
[ -x "$ECHO" ] || { echo "enrich_h2h: $ECHO missing (cmake --build build --target bench_mmx_echo)" >&2; exit 1; }
REPEAT=${REPEAT:-1}
PHASE_B=${PHASE_B:-1}
PODS=${PODS:-200 2000}
RELABEL_WAIT=${RELABEL_WAIT:-30}
BURST_SECONDS=${BURST_SECONDS:-5}
REPLIES=${REPLIES:-20000}
WORKERS=${WORKERS:-1}
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
    [ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p /var/log/containers
echo "BENCH enrich_h2h_loadavg_start $(cut -d' ' -f1 /proc/loadavg) load"

proc_cpu() { # utime+stime seconds of a live pid (0 when gone)
    awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f\n", ($14 + $15) / hz }' "/proc/$1/stat" 2>/dev/null ||
        echo 0
}
proc_rss() { # VmRSS KiB of live pids
    local s=0 p
    for p in "$@"; do s=$((s + $(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0))); done
    echo "$s"
}
children() { pgrep -P "$1" | tr '\n' ' ' || true; }

count_requests() { # single-object GETs, LIST/WATCH of collections, 429 answers in the server log
    local g l t
    g=$(grep -cE 'GET /api/v1/namespaces/[^/ ]+(/pods/[^/ ]+)? ' "$1" || true)
    l=$(grep -cE 'GET /api/v1/(pods|namespaces) ' "$1" || true)
    t=$(grep -cE ' 429$' "$1" || true)
    echo "$g $l $t"
}

# conf DIR ACTION GLOB — an rsyslogd configuration writing {"msg":…,"v":$!} lines to DIR/out.json
conf() {
    local rsq=""
    [ "$WORKERS" -gt 1 ] && rsq=" queue.type=\"LinkedList\" queue.workerThreads=\"$WORKERS\""
    mkdir -p "$1"
    cat >"$1/rsyslog.conf" <<CONF
global(workDirectory="$1" maxMessageSize="64k")
module(load="imfile" mode="inotify")
module(load="mmkubernetes")
module(load="mmexternal")
template(name="j" type="string" string="{\"msg\":\"%msg:::json%\",\"now\":%\$now-unixtimestamp%,\"v\":%\$!%}\n")
input(type="imfile" file="$3" tag="k8s" addmetadata="on" ruleset="r" freshStartTail="off")
ruleset(name="r"$rsq) {
  $2
  action(type="omfile" file="$1/out.json" template="j")
}
CONF
}

# run_a N NAME ACTION TOTAL [DAEMON_PID] — phase A: one rsyslogd over the static files
run_a() {
    local n=$1 name=$2 wd=$tmp/$1/$2 total=$4 dpid=${5:-} t0 t1 got=0 rp kids
    rm -rf "$wd" # imfile's offsets and the output of an earlier repeat
    conf "$wd" "$3" "/var/log/containers/kcbench-*_kcbench_app-a*.log"
    local d0=0; [ -n "$dpid" ] && d0=$(proc_cpu "$dpid")
    t0=$(date +%s.%N)
    "$RSYSLOGD" -n -f "$wd/rsyslog.conf" -i "$wd/pid" >"$wd/rsyslogd.log" 2>&1 &
    rp=$!
    pids="$pids $rp"
    for _ in $(seq 1 12000); do
        got=0; [ -f "$wd/out.json" ] && got=$(wc -l <"$wd/out.json")
        [ "$got" -ge "$total" ] && break
        sleep 0.02
    done
    t1=$(date +%s.%N)
    kids=$(children "$rp")
    local crs ch=0 k dd=0 rr rh rd=0
    crs=$(proc_cpu "$rp")
    for k in $kids; do ch=$(awk -v a="$ch" -v b="$(proc_cpu "$k")" 'BEGIN { printf "%.3f", a + b }'); done
    [ -n "$dpid" ] && dd=$(awk -v a="$(proc_cpu "$dpid")" -v b="$d0" 'BEGIN { printf "%.3f", a - b }')
    rr=$(proc_rss "$rp"); rh=$(proc_rss $kids); [ -n "$dpid" ] && rd=$(proc_rss "$dpid")
    kill -TERM "$rp" 2>/dev/null || true
    wait "$rp" || true
    [ "$got" -ge "$total" ] || { say "$name: only $got of $total lines"; sed 's/^/  /' "$wd/rsyslogd.log" >&2; }
    local p="BENCH enrich_h2h_${n}_${name}"
    awk -v a="$t0" -v b="$t1" -v t="$total" -v p="$p" 'BEGIN {
        printf "%s_seconds %.3f s\n%s_records_per_second %.0f records/s\n", p, b - a, p, t / (b - a) }'
    awk -v a="$t0" -v b="$t1" -v t="$total" 'BEGIN { printf "%.0f\n", t / (b - a) }' >>"$tmp/$n/rps.$name"
    echo "${p}_cpu_rsyslogd $crs s"
    echo "${p}_cpu_helpers $ch s ($(echo $kids | wc -w) helpers)"
    echo "${p}_cpu_daemon $dd s"
    echo "${p}_rss_rsyslogd $rr KiB"
    echo "${p}_rss_helpers $rh KiB"
    echo "${p}_rss_daemon $rd KiB"
    echo "${p}_rss_total $((rr + rh + rd)) KiB"
}

one_size() {
    local n=$1 lines=${LINES:-$((100000 / $1))} d=$tmp/$1
    local total=$((n * lines))
    mkdir -p "$d"
    rm -f /var/log/containers/kcbench-*_kcbench_app-*.log
    "$KCACHE" serve --listen 127.0.0.1:0 --kubeconfig-out "$d/kc" >"$d/serve.out" 2>"$d/serve.log" &
    local spid=$!
    pids="$pids $spid"
    for _ in $(seq 1 200); do grep -q "listening on" "$d/serve.out" 2>/dev/null && break; sleep 0.1; done
    local url
    url=$(sed -n 's/^kcache serve: listening on //p' "$d/serve.out")
    [ -n "$url" ] || { say "server did not start"; cat "$d/serve.log" >&2; exit 1; }
    say "$n pods: server $url; phase A: $n pods × $lines lines"
    python3 - "$url" "$n" "$lines" <<'PY'
import json, sys, urllib.request
url, n, lines = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def post(path, obj):
    req = urllib.request.Request(url + path, data=json.dumps(obj).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).read()
post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
     "metadata": {"name": "kcbench", "labels": {"team": "bench", "app.kubernetes.io/part-of": "h2h"}}})
for i in range(n):
    post("/api/v1/namespaces/kcbench/pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "kcbench-%d" % i, "labels": {"app.kubernetes.io/name": "bench", "i": str(i), "gen": "1"},
        "annotations": {"note": "x"}},
        "spec": {"nodeName": "n1", "containers": [{"name": "app", "image": "nginx"}]}})
for i in range(n):
    with open("/var/log/containers/kcbench-%d_kcbench_app-a%063x.log" % (i, i), "w") as f:
        for j in range(lines):
            f.write("2026-12-07T19:00:00.%09dZ stdout F pod %d line %d some payload text\n" % (j, i, j))
PY
    local sock=$d/enrich.sock dpid
    "$KCACHE" enrich --daemon --socket "$sock" --node n1 --kubeconfig "$d/kc" >"$d/daemon.out" \
        2>"$d/daemon.err" &
    dpid=$!
    pids="$pids $dpid"
    for _ in $(seq 1 200); do grep -q "serving on" "$d/daemon.out" 2>/dev/null && break; sleep 0.1; done
    local mmk_action="action(type=\"mmkubernetes\" kubernetesurl=\"$url\" token=\"unused\")"
    local kc_action="action(type=\"mmexternal\" interface.input=\"fulljson\" binary=\"$KCACHE enrich --mmexternal --socket $sock --master-url $url\")"

    phase_a
    [ "$PHASE_B" = 0 ] || phase_b
    requests
}

# phase_a — throughput, one pipeline after the other (reads one_size's locals: n d url sock dpid
# total lines mmk_action kc_action)
phase_a() {
    local floor_action="action(type=\"mmexternal\" interface.input=\"fulljson\" binary=\"$ECHO\")" r
    # the records as rsyslog hands them to mmexternal: captured once (untimed) by the echo helper
    say "$n pods: phase A, capturing rsyslog's fulljson lines"
    rm -f "$d/fulljson.in"
    run_a "$n" capture "action(type=\"mmexternal\" interface.input=\"fulljson\" binary=\"$ECHO $d/fulljson.in\")" \
        "$total" >/dev/null
    rm -f "$tmp/$n/rps.capture"
    head -1 "$d/fulljson.in" | env -i "$KCACHE" enrich --mmexternal --socket "$sock" --master-url "$url" \
        >"$d/reply.sample"
    grep -q pod_id "$d/reply.sample" || say "the sample reply is not enriched: $(cat "$d/reply.sample")"
    local floorf_action="action(type=\"mmexternal\" interface.input=\"fulljson\" binary=\"$ECHO -r $d/reply.sample\")"
    for r in $(seq 1 "$REPEAT"); do
        say "$n pods: phase A ($r of $REPEAT), mmkubernetes"
        run_a "$n" mmk "$mmk_action" "$total"
        say "$n pods: phase A ($r of $REPEAT), mmexternal + kcache enrich"
        run_a "$n" kcache "$kc_action" "$total" "$dpid"
        say "$n pods: phase A ($r of $REPEAT), mmexternal + echo (the pipe's floor)"
        run_a "$n" floor "$floor_action" "$total"
        say "$n pods: phase A ($r of $REPEAT), mmexternal + echo of a kcache reply (floor with fields)"
        run_a "$n" floorf "$floorf_action" "$total"
        say "$n pods: phase A ($r of $REPEAT), kcache enrich without rsyslog"
        run_pipe
    done
    summary
    python3 - "$d/mmk/out.json" "$d/kcache/out.json" "$n" <<'PY'
import json, sys
def load(p):
    per = {}
    for line in open(p):
        d = json.loads(line)["v"]
        f = d.get("metadata", {}).get("filename")
        per.setdefault(f, set()).add(json.dumps({"kubernetes": d.get("kubernetes"), "docker": d.get("docker")},
                                                sort_keys=True))
    return per
a, b = load(sys.argv[1]), load(sys.argv[2])
same = sum(1 for f in a if a[f] == b.get(f) and len(a[f]) == 1)
print("BENCH enrich_h2h_%s_files_identical_fields %d of %s files" % (sys.argv[3], same, sys.argv[3]))
if same < int(sys.argv[3]):
    f = next(f for f in a if a[f] != b.get(f))
    print("enrich_h2h: first difference, %s:\n  mmk    %s\n  kcache %s" % (f, sorted(a[f])[:1], sorted(b.get(f, []))[:1]),
          file=sys.stderr)
PY

    python3 - "$KCACHE" "$sock" "$REPLIES" "$n" <<'PY'
import json, subprocess, sys, time
kcache, sock, n, pods = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
p = subprocess.Popen([kcache, "enrich", "--mmexternal", "--socket", sock], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, env={})
lat = []
for i in range(n):
    rec = {"msg": "x", "$!": {"metadata": {"filename": "/var/log/containers/kcbench-%d_kcbench_app-a%063x.log"
                                           % (i % pods, i % pods)}}}
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
print("BENCH enrich_h2h_%d_reply_p50 %.1f us" % (pods, lat[len(lat) // 2] * 1e6))
print("BENCH enrich_h2h_%d_reply_p99 %.1f us" % (pods, lat[int(len(lat) * 0.99)] * 1e6))
PY
    [ -n "${KEEP:-}" ] || rm -f "$d/fulljson.in" "$d/pipe.out"
    rm -f /var/log/containers/kcbench-*_kcbench_app-a*.log
}

# run_pipe — the same records without rsyslog: one helper, stdin the captured fulljson lines (a
# file), stdout a file: pipelined, nothing waits for a reply (one_size's locals, as phase_a)
run_pipe() {
    local c0 t0 t1 c1 ok
    c0=$(proc_cpu "$dpid")
    t0=$(date +%s.%N)
    /usr/bin/time -f "%U %S" -o "$d/pipe.time" env -i "$KCACHE" enrich --mmexternal --socket "$sock" \
        --master-url "$url" <"$d/fulljson.in" >"$d/pipe.out"
    t1=$(date +%s.%N)
    c1=$(proc_cpu "$dpid")
    ok=$(grep -c '"pod_id"' "$d/pipe.out" || true)
    awk -v a="$t0" -v b="$t1" -v t="$total" 'BEGIN { printf "%.0f\n", t / (b - a) }' >>"$d/rps.pipe"
    awk -v a="$t0" -v b="$t1" -v t="$total" -v ok="$ok" -v c="$(cat "$d/pipe.time")" -v d0="$c0" -v d1="$c1" -v n="$n" 'BEGIN {
        split(c, x, " ")
        printf "BENCH enrich_h2h_%s_helper_pipe_seconds %.3f s\n", n, b - a
        printf "BENCH enrich_h2h_%s_helper_pipe_records_per_second %.0f records/s (%d of %d enriched)\n", n, t / (b - a), ok, t
        printf "BENCH enrich_h2h_%s_helper_pipe_cpu_helper %.3f s\n", n, x[1] + x[2]
        printf "BENCH enrich_h2h_%s_helper_pipe_cpu_daemon %.3f s\n", n, d1 - d0 }'
}

# summary — medians of the repeats and the ratios (one_size's locals)
summary() {
    local k
    med() { sort -n "$d/rps.$1" | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
    local m kc fl pp
    m=$(med mmk); kc=$(med kcache); fl=$(med floor); ff=$(med floorf); pp=$(med pipe)
    for k in mmk kcache floor floorf pipe; do
        echo "BENCH enrich_h2h_${n}_summary_${k}_records_per_second $(med $k) records/s (median of $REPEAT: $(tr '\n' ' ' <"$d/rps.$k"))"
    done
    awk -v m="$m" -v k="$kc" -v f="$fl" -v ff="$ff" -v p="$pp" -v n="$n" -v w="$WORKERS" 'BEGIN {
        printf "BENCH enrich_h2h_%s_summary_kcache_over_mmk %.2f ratio (workers %s)\n", n, k / m, w
        printf "BENCH enrich_h2h_%s_summary_kcache_over_floor %.2f ratio\n", n, k / f
        printf "BENCH enrich_h2h_%s_summary_kcache_over_floorf %.2f ratio\n", n, k / ff
        printf "BENCH enrich_h2h_%s_summary_floor_over_mmk %.2f ratio\n", n, f / m
        printf "BENCH enrich_h2h_%s_summary_floorf_over_mmk %.2f ratio\n", n, ff / m
        printf "BENCH enrich_h2h_%s_summary_pipe_over_mmk %.2f ratio (kcache without rsyslog / mmk end to end)\n", n, p / m }'
}

# phase_b — freshness, both pipelines at once on new files (one_size's locals, as phase_a)
phase_b() {
    say "$n pods: phase B, relabel/delete/429 burst (RELABEL_WAIT=$RELABEL_WAIT s)"
    local glob="/var/log/containers/kcbench-*_kcbench_app-b*.log" bm bk
    python3 - "$n" <<'PY'
import sys
for i in range(int(sys.argv[1])):
    open("/var/log/containers/kcbench-%d_kcbench_app-b%063x.log" % (i, i), "w").close()
PY
    conf "$d/bmmk" "$mmk_action" "$glob"
    conf "$d/bkc" "$kc_action" "$glob"
    "$RSYSLOGD" -n -f "$d/bmmk/rsyslog.conf" -i "$d/bmmk/pid" >"$d/bmmk/rsyslogd.log" 2>&1 &
    bm=$!
    "$RSYSLOGD" -n -f "$d/bkc/rsyslog.conf" -i "$d/bkc/pid" >"$d/bkc/rsyslogd.log" 2>&1 &
    bk=$!
    pids="$pids $bm $bk"
    sleep 1
    python3 - "$url" "$n" "$RELABEL_WAIT" "$BURST_SECONDS" "$d/events.json" "$d/bmmk/out.json" \
        "$d/bkc/out.json" <<'PY'
import json, os, sys, time, urllib.request
url, n, wait, burst_s, events = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
outs = sys.argv[6:]
def req(method, path, obj=None, ctype="application/json"):
    data = json.dumps(obj).encode() if obj is not None else None
    r = urllib.request.Request(url + path, data=data, method=method, headers={"Content-Type": ctype})
    urllib.request.urlopen(r, timeout=10).read()
def fname(i):
    return "/var/log/containers/kcbench-%d_kcbench_app-b%063x.log" % (i, i)
live = list(range(n))
seq = [0]
def round_(idx):
    now = time.time()
    for i in idx:
        with open(fname(i), "a") as f:
            f.write("2026-12-07T19:00:00.000000000Z stdout F pod %d seq %d t=%.3f payload\n" % (i, seq[0], time.time()))
    seq[0] += 1
    return now
def lines(p):
    try:
        with open(p, "rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return 0
round_(live)
deadline = time.time() + 60
while time.time() < deadline and min(lines(p) for p in outs) < n:
    time.sleep(0.2)
warm = [lines(p) for p in outs]
if min(warm) < n:
    print("enrich_h2h: warm-up incomplete: %s of %d" % (warm, n), file=sys.stderr)
ev = {"relabel": {}, "delete": {}, "burst_pods": [], "burst": [0, 0]}
relabel = [i for i in range(n) if i % 10 == 0]          # 10%
delete = [i for i in range(n) if i % 20 == 5]           # 5%, disjoint from the relabelled ones
for i in relabel:
    req("PATCH", "/api/v1/namespaces/kcbench/pods/kcbench-%d" % i, {"metadata": {"labels": {"gen": "2"}}},
        "application/merge-patch+json")
    ev["relabel"][i] = time.time()
for i in delete:
    req("DELETE", "/api/v1/namespaces/kcbench/pods/kcbench-%d" % i)
    ev["delete"][i] = time.time()
t = time.time()
while time.time() < t + wait + 2:
    t1 = time.time()
    round_(live)
    time.sleep(max(0, 1 - (time.time() - t1)))
nb = max(10, n // 20)
burst = list(range(n, n + nb))
for i in burst:
    req("POST", "/api/v1/namespaces/kcbench/pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "kcbench-%d" % i, "labels": {"app.kubernetes.io/name": "bench", "i": str(i), "gen": "1"}},
        "spec": {"nodeName": "n1", "containers": [{"name": "app", "image": "nginx"}]}})
ev["burst_pods"] = burst
time.sleep(1)
req("PUT", "/admin/faults", {"rate429": "1:get", "retryAfterSeconds": 1})
ev["burst"][0] = time.time()
t = time.time()
while time.time() < t + burst_s:
    t1 = time.time()
    round_(live + burst)
    time.sleep(max(0, 1 - (time.time() - t1)))
ev["burst"][1] = time.time()
req("PUT", "/admin/faults", {"rate429": 0})
# settle: both outputs stop growing for 2 s (at most 30 s)
last, still, deadline = None, 0, time.time() + 30
while time.time() < deadline and still < 10:
    cur = [lines(p) for p in outs]
    still = still + 1 if cur == last else 0
    last = cur
    time.sleep(0.2)
json.dump(ev, open(events, "w"))
PY
    local rm_ rk kk
    rm_=$(proc_rss "$bm"); kk=$(children "$bk"); rk=$(( $(proc_rss "$bk") + $(proc_rss $kk) + $(proc_rss "$dpid") ))
    echo "BENCH enrich_h2h_${n}_phaseB_mmk_rss_total $rm_ KiB"
    echo "BENCH enrich_h2h_${n}_phaseB_kcache_rss_total $rk KiB (rsyslogd + helpers + daemon)"
    kill -TERM "$bm" "$bk" 2>/dev/null || true
    wait "$bm" "$bk" || true
    python3 - "$d/events.json" "$RELABEL_WAIT" "$n" "$d/bmmk/out.json" "$d/bkc/out.json" <<'PY'
import json, re, sys
ev, wait, n = json.load(open(sys.argv[1])), float(sys.argv[2]), sys.argv[3]
rel = {int(k): v for k, v in ev["relabel"].items()}
dele = {int(k): v for k, v in ev["delete"].items()}
burst, (b0, b1) = set(ev["burst_pods"]), ev["burst"]
pat = re.compile(r"pod (\d+) seq \d+ t=([0-9.]+)")
for name, path in (("mmk", sys.argv[4]), ("kcache", sys.argv[5])):
    c = {"r2": [0, 0], "rw": [0, 0], "d2": [0, 0], "b": [0, 0], "bp": [0, 0]}
    lag = []
    for line in open(path):
        d = json.loads(line)
        m = pat.search(d["msg"])
        if not m:
            continue
        i, t = int(m.group(1)), float(m.group(2))
        k = d["v"].get("kubernetes") or {}
        lag.append(d["now"] + 1 - t)
        if i in rel:
            cur = (k.get("labels") or {}).get("gen") == "2"
            if t >= rel[i] + 2:
                c["r2"][0] += cur; c["r2"][1] += 1
            if t >= rel[i] + wait:
                c["rw"][0] += cur; c["rw"][1] += 1
        if i in dele and t >= dele[i] + 2:
            c["d2"][0] += "pod_id" in k; c["d2"][1] += 1
        if i in burst and b0 <= t <= b1:
            c["b"][0] += "pod_id" not in k; c["b"][1] += 1
        if i in burst and int(b0) + 1 <= d["now"] <= int(b1) - 1:   # written out within the burst
            c["bp"][0] += "pod_id" not in k; c["bp"][1] += 1
    p = "BENCH enrich_h2h_%s_%s" % (n, name)
    pct = lambda a: 100.0 * a[0] / a[1] if a[1] else 0.0
    print("%s_current_labels_2s %.1f %% (%d of %d records)" % (p, pct(c["r2"]), *c["r2"]))
    print("%s_current_labels_%gs %.1f %% (%d of %d records)" % (p, wait, pct(c["rw"]), *c["rw"]))
    print("%s_enriched_after_delete %d records (of %d written >= 2 s after the delete)" % (p, *c["d2"]))
    print("%s_bare_during_429_burst %d records (of %d written in it, for %d pods known to the API)"
          % (p, *c["b"], len(burst)))
    print("%s_bare_output_during_429_burst %d records (of %d written out in it)" % (p, *c["bp"]))
    lag.sort()
    print("%s_phaseB_lag_p50 %.1f s (at most: output second + 1 s - write time; p99 %.1f s)"
          % (p, lag[len(lag) // 2], lag[int(len(lag) * 0.99)]))
PY
}

# requests — API requests over both phases, then the daemon and the server stop
requests() {
    local g l t4
    read -r g l t4 <<<"$(count_requests "$d/serve.log")"
    echo "BENCH enrich_h2h_${n}_mmk_api_gets $g requests ($(awk -v a="$g" -v n="$n" 'BEGIN { printf "%.2f", a / n }') per pod; $t4 answered 429)"
    echo "BENCH enrich_h2h_${n}_kcache_api_lists_watches $l requests ($(awk -v a="$l" -v n="$n" 'BEGIN { printf "%.4f", a / n }') per pod)"
    kill -TERM "$dpid" "$spid" 2>/dev/null || true
    wait "$dpid" "$spid" 2>/dev/null || true
    rm -f /var/log/containers/kcbench-*_kcbench_app-*.log
}

for n in $PODS; do one_size "$n"; done
echo "BENCH enrich_h2h_loadavg_end $(cut -d' ' -f1 /proc/loadavg) load"
