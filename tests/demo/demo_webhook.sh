#!/usr/bin/env bash
# `kcache demo`'s webhook section (6), small: 300 admissions per run to a validating webhook that
# reads a Secret cache still being listed. Asserts: with the readiness gating off some answers are
# wrong (denied "not found" for a Secret that exists: the partial store of RD3), with it on none
# is (every early request waited for the sync or got the not-ready policy's 503, RD4), and a
# serving certificate rotated mid-run fails no admission (TLS6); no other failure.
# Usage: demo_webhook.sh KCACHE_BINARY
set -euo pipefail
out=$("$1" demo --n 5 --pv 5 --controller 0 --shards 0 --webhook 300 --json --no-progress)
python3 - "$out" <<'PY'
import json, sys
w = json.loads(sys.argv[1])["webhook"]
assert w["n"] == 300, w
assert w["wrong_ungated"] > 0, f"gating off gave no wrong answer: {w}"
assert w["wrong_gated"] == 0, f"gating on gave wrong answers: {w}"
assert w["failed_during_rotation"] == 0 and w["rotated"], f"rotation: {w}"
assert w["failed_ungated"] == 0 and w["failed_gated"] == 0, f"failures: {w}"
assert w["admission_p99_ms"] > 0, w
print(f"demo webhook: wrong ungated {w['wrong_ungated']}/{w['n']}, gated {w['wrong_gated']} "
      f"(not ready {w['not_ready_gated']}), failed during rotation {w['failed_during_rotation']}, "
      f"admission p99 {w['admission_p99_ms']:.1f} ms")
PY
