#!/usr/bin/env bash
# `kcache demo shards` end to end, small (issue: scale-out demo; spec P2, P4, P5, L12a): 3 replica
# processes over 600 Pods, a SIGKILL and a SIGSTOP past the lease, with and without the server's
# sharding. Asserts the verdict fields are 0, every pass ran, the server-sharded ingest share is
# well below 1 and the fallback's is about 1. Usage: demo_shards.sh KCACHE_BINARY
set -euo pipefail
kcache=$1
out=$("$kcache" demo shards --replicas 3 --objects 600 --json)
python3 - "$out" <<'PY'
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
print("demo shards: 0 violations; share", on["ingest_share_max"], "fallback", off["ingest_share_max"])
PY
