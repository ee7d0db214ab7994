#!/usr/bin/env bash
# bench/peers.sh — kcache and its peers, side by side in one run: the initial sync of N Pods from
# one server.
#
# Method. One `kcache serve --seed-objects pods=N` (genpod-shaped ~6 KB Pods over 100 namespaces,
# loopback, plain HTTP, no token) serves every client. Each round runs the peers one after the
# other, in the same order (raw, kcache, client-node, python, kubectl), and the script repeats the
# round R times; the table gives each figure's median over the rounds. Every client is a fresh
# process that lists all Pods of all namespaces in pages of 500 (client-go's pager default),
# following `continue`:
#   raw         curl downloads one unpaged GET /api/v1/pods into /dev/null: the wire floor, no
#               parsing (curl's own time_total; one request, where the server's pages of 500
#               cost it a little more: bench_sync's raw figure is the paged one);
#   kcache      build/bin/bench_sync --child paged: a kc_informer in a fresh process until synced
#               (the "cold" sync of bench_sync; the same child then frees it and syncs a second
#               informer, not counted here);
#   client-node @kubernetes/client-node 1.4.0 makeInformer until start() resolves
#               (bench/node/informer_sync.mjs; NODE_PATH = $KC_NODE_MODULES or
#               tests/conformance/node/node_modules, installed by scripts/install-deps);
#   python      python-kubernetes (Debian python3-kubernetes, /usr/bin/python3):
#               CoreV1Api.list_pod_for_all_namespaces(limit=500, _continue=…) into a dict of V1Pod
#               models keyed by namespace/name (what its users hold; it has no informer);
#   kubectl     `kubectl get pods -A --chunk-size=500 -o json >/dev/null` (it also re-encodes the
#               list as JSON; its sync figure is the process's wall time, start-up included).
# Figures per client: sync s (in-process wall from the first request to a full cache for kcache,
# client-node and python; the transfer for raw; exec to exit for kubectl), × kcache (the median of
# the per-round ratios to kcache's sync of the same round), peak RSS of the whole process
# (GNU time's maximum resident set), peak above the process's RSS before its first request, per
# object (kubectl: above its peak when listing an empty namespace), and the RSS it still holds with
# every object cached, per object (kcache, client-node, python). A peer whose program is missing
# is skipped with a note. Each client run is bounded by PEER_TIMEOUT seconds (default 900).
#
# Usage: bench/peers.sh [N=20000]   (REPS=3; PEERS="raw kcache node python kubectl" picks and
#        orders them; KCACHE=… and BENCH_SYNC=… name the binaries, default build/bin/)
# Output: progress on stderr; on stdout `BENCH peers_<client>_<metric>_<N> <value> <unit>` lines
# (medians), the server's RSS after seeding, and a markdown table of the medians.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-20000}
reps=${REPS:-3}
peers=${PEERS:-raw kcache node python kubectl}
kcache=${KCACHE:-$root/build/bin/kcache}
bench_sync=${BENCH_SYNC:-$root/build/bin/bench_sync}
node_modules=${KC_NODE_MODULES:-$root/tests/conformance/node/node_modules}
py=${PYTHON_K8S:-/usr/bin/python3}
tmo=${PEER_TIMEOUT:-900}

tmp=$(mktemp -d /tmp/kc-peers.XXXXXX)
spid=''
cpid=''
cleanup() {
  if [ -n "$cpid" ]; then kill -TERM "$cpid" 2>/dev/null || true; fi
  if [ -n "$spid" ] && kill -0 "$spid" 2>/dev/null; then
    kill -TERM "$spid" 2>/dev/null || true
    wait "$spid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ -x "$kcache" ] || { echo "peers: $kcache not built (cmake --build build --target kcache_cli)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "peers: needs GNU time (/usr/bin/time)" >&2; exit 1; }

# ---- the server -----------------------------------------------------------------------------
echo "peers: N=$n, $reps rounds, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
t0=$(date +%s%N)
"$kcache" serve --listen 127.0.0.1:0 --quiet --seed-objects "pods=$n" \
  --kubeconfig-out "$tmp/kubeconfig" >"$tmp/serve.out" 2>"$tmp/serve.err" &
spid=$!
url=
for _ in $(seq 1 $((tmo * 10))); do
  url=$(sed -n 's/^kcache serve: listening on //p' "$tmp/serve.out")
  [ -n "$url" ] && break
  kill -0 "$spid" 2>/dev/null || { cat "$tmp/serve.err" >&2; echo "peers: kcache serve exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "peers: kcache serve did not start within ${tmo} s" >&2; exit 1; }
seed_s=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
srv_kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$spid/status")
echo "peers: server $url (pid $spid) up after ${seed_s} s, RSS $((srv_kb / 1024)) MiB" >&2
echo "BENCH peers_server_seed_$n $seed_s s"
echo "BENCH peers_server_rss_$n $((srv_kb / 1024)) MiB"

# ---- one client run: writes "sync_s peak_total_kb peak_above_kb held_kb" to $tmp/r ------------
# (held_kb "-" when the client keeps nothing after it exits)
timed() { # timed OUTFILE cmd… — GNU time's "wall maxrss" into $tmp/time
  local o=$1 rc=0
  shift
  # waited for in the background, so that a signal to this script stops the client at once:
  # cleanup signals timeout, which passes the signal on to its process group (time and client)
  timeout "$tmo" /usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >"$o.out" 2>"$o.err" &
  cpid=$!
  wait "$cpid" || rc=$?
  cpid=
  return $rc
}

cat >"$tmp/py_sync.py" <<'EOF'
import gc, sys, time
from kubernetes import client, config

def kb(field):
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith(field + ':'):
                return int(line.split()[1])
    return -1

config.load_kube_config(sys.argv[1])
n = int(sys.argv[2])
api = client.CoreV1Api()
gc.collect()
base = kb('VmRSS')
with open('/proc/self/clear_refs', 'w') as f:
    f.write('5')
t0 = time.monotonic()
store, cont = {}, None
while True:
    r = api.list_pod_for_all_namespaces(limit=500, _continue=cont)
    for p in r.items:
        store[(p.metadata.namespace, p.metadata.name)] = p
    cont = r.metadata._continue
    if not cont:
        break
wall = time.monotonic() - t0
peak = kb('VmHWM') - base
gc.collect()
held = kb('VmRSS') - base
if len(store) != n:
    sys.exit('python holds %d Pods, expected %d' % (len(store), n))
print('RESULT %.3f %d %d' % (wall, peak, held))
EOF

kubectl_base_kb=
run_peer() { # run_peer NAME → 0 and $tmp/r, or 1 (failed), 2 (not installed)
  local f=$tmp/run sync peak held t m
  case $1 in
  raw)
    command -v curl >/dev/null || return 2
    timed "$f" curl -sS -o /dev/null -w '%{time_total}\n' "$url/api/v1/pods" || return 1
    read -r t m <"$tmp/time"
    echo "$(cat "$f.out") $m - -" >"$tmp/r" ;;
  kcache)
    [ -x "$bench_sync" ] || return 2
    timed "$f" "$bench_sync" --child paged "$url" "$n" 500 0 "$spid" || return 1
    # RESULT cold warm peak steady … (KiB above the child's RSS before the informer)
    read -r _ sync _ peak held _ <<<"$(grep '^RESULT' "$f.out")"
    read -r t m <"$tmp/time"
    echo "$sync $m $peak $held" >"$tmp/r" ;;
  node)
    command -v node >/dev/null && [ -d "$node_modules/@kubernetes/client-node" ] || return 2
    NODE_PATH=$node_modules timed "$f" node --expose-gc "$root/bench/node/informer_sync.mjs" \
      "$tmp/kubeconfig" "$n" || return 1
    read -r _ sync peak held <<<"$(grep '^RESULT' "$f.out")"
    read -r t m <"$tmp/time"
    echo "$sync $m $peak $held" >"$tmp/r" ;;
  python)
    [ -x "$py" ] && "$py" -c 'import kubernetes' 2>/dev/null || return 2
    timed "$f" "$py" "$tmp/py_sync.py" "$tmp/kubeconfig" "$n" || return 1
    read -r _ sync peak held <<<"$(grep '^RESULT' "$f.out")"
    read -r t m <"$tmp/time"
    echo "$sync $m $peak $held" >"$tmp/r" ;;
  kubectl)
    command -v kubectl >/dev/null || return 2
    if [ -z "$kubectl_base_kb" ]; then # its RSS when the list is empty
      timed "$f" kubectl --kubeconfig "$tmp/kubeconfig" get pods -n kc-peers-empty \
        --chunk-size=500 -o json || return 1
      read -r _ kubectl_base_kb <"$tmp/time"
    fi
    timed "$f" kubectl --kubeconfig "$tmp/kubeconfig" get pods -A --chunk-size=500 -o json || return 1
    read -r t m <"$tmp/time"
    echo "$t $m $((m - kubectl_base_kb)) -" >"$tmp/r" ;;
  *) echo "peers: unknown peer $1" >&2; return 2 ;;
  esac
}

declare -A skip
: >"$tmp/all"
for r in $(seq 1 "$reps"); do
  for p in $peers; do
    [ -n "${skip[$p]:-}" ] && continue
    rc=0
    run_peer "$p" || rc=$?
    if [ $rc = 2 ]; then
      echo "peers: $p not installed, skipped" >&2
      skip[$p]=1
      continue
    elif [ $rc != 0 ]; then
      echo "peers: $p failed in round $r (exit $rc): $(tail -c 400 "$tmp/run.err" 2>/dev/null)" >&2
      continue
    fi
    echo "$p $(cat "$tmp/r") $r" >>"$tmp/all"
    echo "peers: round $r $p: $(cat "$tmp/r") (sync s, peak KiB, peak above start KiB, held KiB)" >&2
  done
done
echo "peers: done, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# ---- medians ----------------------------------------------------------------------------------
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v p="$1" -v c="$2" '$1 == p && $c != "-" { print $c }' "$tmp/all" | median; }
declare -A label=([raw]="raw download (curl, one LIST, no parsing)" [kcache]="kcache informer (C)"
  [node]="@kubernetes/client-node 1.4.0 informer" [python]="python-kubernetes $("$py" -c 'import kubernetes; print(kubernetes.__version__)' 2>/dev/null || echo '?') list"
  [kubectl]="kubectl $(kubectl version --client 2>/dev/null | sed -n 's/^Client Version: //p' | head -1) get -A --chunk-size=500 -o json")
ratio() { # the median over rounds of this peer's sync ÷ kcache's sync in the same round
  awk -v p="$1" '$1 == "kcache" { k[$6] = $2 } $1 == p { s[$6] = $2 }
                 END { for (r in s) if (r in k && k[r] > 0) print s[r] / k[r] }' "$tmp/all" | median
}
{
  echo
  echo "| N = $n, medians of $reps rounds | sync s | × kcache (per round) | peak RSS MiB | peak above start KiB/object | held KiB/object |"
  echo "|---|---|---|---|---|---|"
} >"$tmp/table"
for p in $peers; do
  [ -n "${skip[$p]:-}" ] && continue
  s=$(col "$p" 2); m=$(col "$p" 3); a=$(col "$p" 4); h=$(col "$p" 5)
  [ "$s" = - ] && continue
  echo "BENCH peers_${p}_sync_$n $s s"
  echo "BENCH peers_${p}_peak_rss_$n $(awk -v m="$m" 'BEGIN { printf "%.1f", m / 1024 }') MiB"
  per() { if [ "$1" = - ]; then echo -; else awk -v k="$1" -v n="$n" 'BEGIN { printf "%.2f", k / n }'; fi; }
  pa=$(per "$a"); ph=$(per "$h")
  [ "$pa" != - ] && echo "BENCH peers_${p}_peak_per_obj_$n $pa KiB"
  [ "$ph" != - ] && echo "BENCH peers_${p}_held_per_obj_$n $ph KiB"
  x=1.00
  if [ "$p" != kcache ]; then
    x=$(ratio "$p")
    [ "$x" != - ] && x=$(awk -v x="$x" 'BEGIN { printf "%.2f", x }') && echo "BENCH peers_${p}_vs_kcache_$n $x x"
  fi
  s=$(awk -v s="$s" 'BEGIN { printf "%.3f", s }')
  echo "| ${label[$p]} | $s | $x | $(awk -v m="$m" 'BEGIN { printf "%.0f", m / 1024 }') | $pa | $ph |" >>"$tmp/table"
done
cat "$tmp/table"
