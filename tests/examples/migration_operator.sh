#!/usr/bin/env bash
# Smoke test of examples/migration_operator.c on the embedded API server: it exits 0, every
# Migration is Ready, and it recorded its Events — per Migration one Normal SecretCreated and one
# Normal Ready, all created on the server (none dropped, none failed).
# Usage: migration_operator.sh EXAMPLE_BINARY
set -euo pipefail
out=$("$1" --count 3) || { echo "migration_operator exited $?:"; echo "$out"; exit 1; }
echo "$out"
grep -q '^3 Migrations Ready; ' <<<"$out" || { echo "FAIL: not every Migration Ready"; exit 1; }
line=$(grep '^events: ' <<<"$out") || { echo "FAIL: no events line"; exit 1; }
want='events: recorded=6 created=6 patched=0 aggregated=0 spam_filtered=0 dropped=0 errors=0'
[ "$line" = "$want" ] || { echo "FAIL: events line"; echo "  got:  $line"; echo "  want: $want"; exit 1; }
echo "PASS"
