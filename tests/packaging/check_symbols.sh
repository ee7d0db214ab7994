#!/usr/bin/env bash
# What each shared library exports and needs, from the built files (nm -D, readelf -d, ldd):
#   libkcache.so         exports public kc_* names only: no internal kc__* and no kc_server_*;
#                        needs jansson (kc_doc) but not libkcache-server;
#   libkcache-server.so  exports kc_server_* only (its private copies of core helpers stay
#                        local, and none has state: no copy of core/log.c); needs libkcache.so,
#                        and every kc_ symbol it leaves undefined is one libkcache.so exports;
#                        no kc_ symbol is exported by both.
# Registered in ctest as packaging.symbols; exits 1 naming every problem.
#   usage: check_symbols.sh LIBKCACHE_SO [LIBKCACHE_SERVER_SO]
set -euo pipefail
lib=${1:?usage: check_symbols.sh LIBKCACHE_SO [LIBKCACHE_SERVER_SO]}
srv=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
problem() { echo "symbols: FAIL: $*" >&2; bad=1; }
defined() { nm -D --defined-only "$1" | awk '{print $NF}' | sed 's/@.*//' | sort -u; }

defined "$lib" >"$tmp/lib"
[ "$(grep -c '^kc_' "$tmp/lib")" -gt 100 ] || problem "libkcache.so exports too few kc_ symbols"
grep -v '^kc_' "$tmp/lib" >"$tmp/x" && problem "libkcache.so exports non-kc_ symbols: $(tr '\n' ' ' <"$tmp/x")"
grep '^kc__' "$tmp/lib" >"$tmp/x" && problem "libkcache.so exports internal symbols: $(tr '\n' ' ' <"$tmp/x")"
grep '^kc_server_' "$tmp/lib" >"$tmp/x" && problem "libkcache.so exports server symbols: $(tr '\n' ' ' <"$tmp/x")"
readelf -d "$lib" | grep -E 'NEEDED.*kcache-server' && problem "libkcache.so needs the server"
ldd "$lib" | grep -E 'kcache-server' && problem "libkcache.so loads the server (ldd)"
echo "symbols: libkcache.so exports $(wc -l <"$tmp/lib") kc_ symbols; needs $(readelf -d "$lib" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')"

if [ -n "$srv" ]; then
  defined "$srv" >"$tmp/srv"
  [ "$(grep -c '^kc_server_' "$tmp/srv")" -gt 10 ] || problem "libkcache-server.so exports too few kc_server_ symbols"
  grep -v '^kc_server_' "$tmp/srv" >"$tmp/x" && problem "libkcache-server.so exports more than kc_server_*: $(tr '\n' ' ' <"$tmp/x")"
  comm -12 "$tmp/lib" "$tmp/srv" >"$tmp/x"
  [ -s "$tmp/x" ] && problem "exported by both libraries: $(tr '\n' ' ' <"$tmp/x")"
  readelf -d "$srv" | grep -q 'NEEDED.*libkcache\.so' || problem "libkcache-server.so does not need libkcache.so"
  # Its private core copies must be stateless code: a copy of core/log.c would have a log level
  # (and callback) of its own, apart from the one the application sets through libkcache.
  nm "$srv" | grep -E ' [tTdDbB] kc__log' >"$tmp/x" && problem "libkcache-server.so carries its own copy of core/log.c: $(awk '{print $3}' "$tmp/x" | tr '\n' ' ')"
  nm -D --undefined-only "$srv" | awk '{print $NF}' | sed 's/@.*//' | grep '^kc_' | sort -u >"$tmp/und"
  comm -23 "$tmp/und" "$tmp/lib" >"$tmp/x"
  [ -s "$tmp/x" ] && problem "libkcache-server.so needs kc_ symbols libkcache.so does not export: $(tr '\n' ' ' <"$tmp/x")"
  echo "symbols: libkcache-server.so exports $(wc -l <"$tmp/srv") kc_server_ symbols, takes $(wc -l <"$tmp/und") kc_ symbols from libkcache.so; needs $(readelf -d "$srv" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
fi
[ "$bad" = 0 ] && echo "symbols: PASS"
exit "$bad"
