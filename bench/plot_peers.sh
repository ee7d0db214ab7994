#!/usr/bin/env bash
# bench/plot_peers.sh — sync time and memory vs N, kcache and its peers, on one page: runs
# bench/peers.sh for each N (its BENCH lines appended to build/peers-plot.txt, N in the metric
# name; a later run of the same N and client replaces the earlier figure) and draws
# docs/img/peers.png with gnuplot (Debian: gnuplot-nox, scripts/install-deps): top, the initial
# sync's seconds; bottom, the peak RSS of each client process and the server's RSS, both log-log,
# with the drawing machine's memory (MemTotal) as a line.
# Usage: bench/plot_peers.sh [N…]   (default 5000 20000 100000; REPS and PEERS as for peers.sh,
#        e.g. PEERS="raw kcache" REPS=1 bench/plot_peers.sh 200000 500000 for the large N;
#        PLOT_ONLY=1 redraws from build/peers-plot.txt without running anything; FRESH=1 empties
#        it first)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ns=("$@")
[ ${#ns[@]} -gt 0 ] || ns=(5000 20000 100000)
out=$root/build/peers-plot.txt
dat=$root/build/peers-plot.dat
mkdir -p "$root/build"
[ "${FRESH:-0}" = 1 ] && : >"$out"
touch "$out"
if [ "${PLOT_ONLY:-0}" != 1 ]; then
  for n in "${ns[@]}"; do
    echo "plot_peers: N=$n" >&2
    "$root/bench/peers.sh" "$n" | grep '^BENCH' >>"$out"
  done
fi
# columns: N, then sync s and peak RSS MiB of raw kcache node python kubectl, then the server's
# RSS MiB ("?" when not measured)
awk '{ m = $2; n = m; sub(/.*_/, "", n); sub(/_[0-9]+$/, "", m); v[n" "m] = $3; seen[n] = 1 }
     END { split("raw kcache node python kubectl", p, " ")
           for (n in seen) {
             line = n
             for (i = 1; i <= 5; i++) {
               s = n" peers_"p[i]"_sync"; r = n" peers_"p[i]"_peak_rss"
               line = line" "((s in v) ? v[s] : "?")" "((r in v) ? v[r] : "?")
             }
             r = n" peers_server_rss"
             print line" "((r in v) ? v[r] : "?")
           } }' "$out" | sort -n >"$dat"
mkdir -p "$root/docs/img"
gnuplot <<EOF
set terminal pngcairo noenhanced size 900,1150
set output "$root/docs/img/peers.png"
set multiplot layout 2,1 title "Initial sync of N ~6 KB Pods from one kcache serve, pages of 500 (2-vCPU VM, loopback)"
set logscale xy
set grid
set key below Left reverse maxrows 3
set datafile missing "?"
set xlabel "Pods (N)"
set format x "%.0s%c"
set ylabel "sync, seconds (log)"
plot "$dat" using 1:10 with linespoints lw 2 title "kubectl get -A --chunk-size=500 -o json", \
     "$dat" using 1:8 with linespoints lw 2 title "python-kubernetes list (V1Pod models)", \
     "$dat" using 1:6 with linespoints lw 2 title "@kubernetes/client-node 1.4.0 informer", \
     "$dat" using 1:4 with linespoints lw 3 title "kcache informer (fresh process)", \
     "$dat" using 1:2 with linespoints dashtype 2 lw 2 lc rgb "black" title "raw download, no parsing (curl, one LIST)"
set ylabel "peak RSS, MiB (log)"
plot "$dat" using 1:11 with linespoints lw 2 title "kubectl", \
     "$dat" using 1:9 with linespoints lw 2 title "python-kubernetes", \
     "$dat" using 1:7 with linespoints lw 2 title "client-node", \
     "$dat" using 1:5 with linespoints lw 3 title "kcache informer", \
     "$dat" using 1:12 with linespoints dashtype 2 lw 2 lc rgb "black" title "the server (kcache serve, all N Pods)", \
     $(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo) with lines dashtype 3 lw 2 lc rgb "gray40" title "this machine's memory"
unset multiplot
EOF
echo "plot_peers: wrote docs/img/peers.png from $dat" >&2
