#!/usr/bin/env bash
# README's list of Debian packages ("Debian packages used (`scripts/install-deps`): …", up to the
# first ';') names exactly the packages scripts/install-deps installs (its PKGS array).
#   usage: check_readme_deps.sh SOURCE_DIR
set -euo pipefail
root=${1:?usage: check_readme_deps.sh SOURCE_DIR}
want=$(sed -n '/^PKGS=(/,/^)/p' "$root/scripts/install-deps" | sed '1d;$d' | sed 's/#.*//' |
  tr -s ' \t' '\n' | grep -v '^$' | sort -u)
have=$(tr '\n' ' ' <"$root/README.md" | grep -o 'Debian packages used (`scripts/install-deps`):[^;]*' |
  sed 's/^[^:]*://' | tr -s ' ' '\n' | grep -v '^$' | sort -u)
[ -n "$have" ] || { echo "check_readme_deps: README has no 'Debian packages used' list" >&2; exit 1; }
if [ "$want" != "$have" ]; then
  echo "check_readme_deps: README's package list differs from scripts/install-deps:" >&2
  diff <(echo "$want") <(echo "$have") | sed 's/^</  install-deps only:/; s/^>/  README only:/' >&2
  exit 1
fi
echo "check_readme_deps: README lists the $(echo "$want" | wc -l) packages of scripts/install-deps"
