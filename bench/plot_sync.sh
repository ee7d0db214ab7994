#!/usr/bin/env bash
# bench/plot_sync.sh — sync time vs object count: runs build/bin/bench_sync for each N (paged
# mode: kcache cold in a fresh process, kcache warm, the raw download of the same pages, and one
# @kubernetes/client-node makeInformer sync of the same server; streaming-list mode: kcache cold
# and the raw download of the same watch stream), keeps the BENCH lines in
# build/sync-plot.txt and draws docs/img/sync.png with gnuplot (Debian: gnuplot-nox,
# scripts/install-deps).
# Usage: bench/plot_sync.sh [N…]  (default 5000 20000 50000 100000; REPS=3 by default;
# KC_NODE_MODULES=…/node_modules when this checkout has none; NODE=0 skips client-node;
# PLOT_ONLY=1 redraws from build/sync-plot.txt without running anything)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${BENCH_SYNC:-$root/build/bin/bench_sync}
ns=("$@")
[ ${#ns[@]} -gt 0 ] || ns=(5000 20000 50000 100000)
out=$root/build/sync-plot.txt
dat=$root/build/sync-plot.dat
if [ "${PLOT_ONLY:-0}" != 1 ]; then
  : >"$out"
  node_flag=--node
  [ "${NODE:-1}" = 0 ] && node_flag=
  for n in "${ns[@]}"; do
    echo "plot_sync: N=$n" >&2
    "$bin" "$n" --reps "${REPS:-3}" $node_flag | grep '^BENCH' | sed "s/^/$n /" >>"$out"
  done
fi
# columns: N cold warm raw node floor stream-cold stream-raw (seconds; node "?" when not measured;
# floor = the paged cold sync's client + server CPU over the machine's CPUs, the least wall time
# any overlap allows)
awk '{ v[$1" "$3] = $4; n[$1] = 1 }
     END { for (k in n) {
             p = k" sync_paged_"k; f = p"_cpu_floor_vs_raw"; nd = k" sync_node_"k"_s"
             s = k" sync_stream_"k
             fl = (f in v) ? v[f] * v[p"_raw_s"] : "?"
             printf "%s %s %s %s %s %s %s %s\n", k, v[p"_cold_s"], v[p"_warm_s"], v[p"_raw_s"],
                    (nd in v) ? v[nd] : "?", fl, (s"_cold_s" in v) ? v[s"_cold_s"] : "?",
                    (s"_raw_s" in v) ? v[s"_raw_s"] : "?" } }' "$out" |
  sort -n >"$dat"
mkdir -p "$root/docs/img"
gnuplot <<EOF
set terminal pngcairo size 900,560
set output "$root/docs/img/sync.png"
set title "Initial sync of N genpod Pods from kcache serve (pages of 500 or one streaming list, one 2-vCPU VM)"
set xlabel "Pods"
set ylabel "seconds (log)"
set logscale y
set key top left Left reverse
set grid
set datafile missing "?"
plot "$dat" using 1:5 with linespoints lw 2 title "client-node 1.4 makeInformer", \
     "$dat" using 1:2 with linespoints lw 2 title "kcache cold, paged LIST (fresh process)", \
     "$dat" using 1:3 with linespoints lw 2 title "kcache warm, paged LIST (same process)", \
     "$dat" using 1:4 with linespoints lw 2 title "raw download of the pages, no parsing (libcurl)", \
     "$dat" using 1:6 with lines dt 2 lw 2 lc rgb "black" title "CPU floor of the paged cold sync (client + server CPU / 2)", \
     "$dat" using 1:7 with linespoints dashtype 2 lw 2 title "kcache cold, streaming list (fresh process)", \
     "$dat" using 1:8 with linespoints dashtype 2 lw 2 title "raw download of the streaming list"
EOF
echo "plot_sync: wrote docs/img/sync.png from $dat" >&2
