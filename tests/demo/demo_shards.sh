#!/usr/bin/env bash
# `kcache demo shards` end to end, small (issue: scale-out demo; spec P2, P4, P5, L12a): 3 replica
# processes over 600 Pods, a SIGKILL and a SIGSTOP past the lease, with and without the server's
# sharding. Asserts the verdict fields are 0, every pass ran, the server-sharded ingest share is
# well below 1 and the fallback's is about 1. Where network namespaces can be made (root, iproute2)
# it adds --netns: the last replica is cut off by its veth past its lease, and its ranges must be
# taken only after its write fence passed, then it must rejoin. Usage: demo_shards.sh KCACHE_BINARY
set -euo pipefail
kcache=$1
netns=()
probe=kcache-probe-$$
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null && ip netns add "$probe" 2>/dev/null; then
  # the whole set-up the demo does: a veth pair with one end in the namespace, both up
  if ip link add "kcp$$a" type veth peer name "kcp$$b" 2>/dev/null &&
     ip link set "kcp$$b" netns "$probe" 2>/dev/null && ip link set "kcp$$a" up 2>/dev/null &&
     ip netns exec "$probe" ip link set "kcp$$b" up 2>/dev/null; then
    netns=(--netns)
  fi
  ip link del "kcp$$a" 2>/dev/null || true
  ip netns del "$probe"
fi
out=$("$kcache" demo shards --replicas 3 --objects 600 --json "${netns[@]}")
python3 - "$out" "${#netns[@]}" <<'PY'
import json, sys
d = json.loads(sys.argv[1])["shards"]
bad = [k for k in ("stale_leader_writes", "overlap_violations", "unowned_after_converge") if d[k] != 0]
assert not bad, f"violations: {bad}: {d}"
on, off = d["server_sharding"], d["fallback"]
assert d["replicas"] == 3 and d["objects"] == 600, d
assert 0 < on["ingest_share_max"] < 0.75, f"server-sharded share {on['ingest_share_max']}"
assert 0.9 < off["ingest_share_max"] < 1.1, f"fallback share {off['ingest_share_max']}"
assert on["failover_ms"] > 0 and off["failover_ms"] > 0, d
assert 0 < d["fallback_decode_cpu_ratio"] < 1, d
cut = "netns_cut" in on
if sys.argv[2] == "1":
    for p in (on, off):
        c = p["netns_cut"]
        assert c["late_takeovers"] == 0 and c["margin_ms"] > 0 and c["rejoin_ms"] > 0, c
print("demo shards: 0 violations; share", on["ingest_share_max"], "fallback", off["ingest_share_max"],
      "; network cut:", f"margin {on['netns_cut']['margin_ms']} ms" if cut else "not run (needs root)")
PY
