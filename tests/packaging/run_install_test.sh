#!/usr/bin/env bash
# Install test: `cmake --install` a finished build into a temporary prefix, check the layout, then
# build and run the consumers, each four ways: find_package (shared and static) and pkg-config
# (shared, and the static archives with the dependencies' --libs).
#   consumer/         libkcache alone: find_package(kcache), pkg-config kcache. Checked not to
#                     link libkcache-server (link lines, NEEDED entries); it edits a kc_doc, so
#                     the static links prove the package files carry jansson.
#   consumer_server/  both libraries: find_package(kcache COMPONENTS server), pkg-config
#                     kcache-server; starts the server and reads from it with the client.
# MODE "no-server" (a -DKC_BUILD_SERVER=OFF build) also checks that nothing of the server was
# installed, and runs consumer/ only. Registered in ctest as packaging.install.
#   usage: run_install_test.sh BUILD_DIR [C_COMPILER] [server|no-server]
set -euo pipefail
build=$(cd "${1:?usage: run_install_test.sh BUILD_DIR [CC] [server|no-server]}" && pwd)
cc=${2:-cc}
mode=${3:-server}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "install test: FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }

libdir=""
for d in lib lib64 lib/x86_64-linux-gnu; do [ -f "$prefix/$d/pkgconfig/kcache.pc" ] && libdir=$prefix/$d; done
[ -n "$libdir" ] || fail "no kcache.pc under $prefix"
for f in include/kcache.h include/kcache/common.h include/kcache/error.h include/kcache/rv.h \
         include/kcache/selector.h include/kcache/obj.h include/kcache/client.h; do
  [ -f "$prefix/$f" ] || fail "missing $f"
done
for f in libkcache.so libkcache.a pkgconfig/kcache.pc cmake/kcache/kcacheConfig.cmake \
         cmake/kcache/kcacheConfigVersion.cmake cmake/kcache/kcacheTargets.cmake; do
  [ -e "$libdir/$f" ] || fail "missing ${libdir#$prefix/}/$f"
done
server_files="include/kcache/server.h ${libdir#$prefix/}/libkcache-server.so
  ${libdir#$prefix/}/libkcache-server.a ${libdir#$prefix/}/pkgconfig/kcache-server.pc
  ${libdir#$prefix/}/cmake/kcache/kcacheServerTargets.cmake bin/kcache"
for f in $server_files; do
  if [ "$mode" = server ]; then
    [ -e "$prefix/$f" ] || fail "missing $f"
  else
    [ ! -e "$prefix/$f" ] || fail "$f installed by a build without the server"
  fi
done
[ -z "$(find "$prefix/include" -name '*.h' -path '*/src/*')" ] || fail "internal headers installed"
echo "install test: layout ok (${libdir#$prefix/}, $mode)"

# No LD_LIBRARY_PATH: an installed program finds the libraries by its RPATH (CMake's for
# find_package, the .pc files' -Wl,-rpath for pkg-config).
run() { # name, executable
  out=$(env -u LD_LIBRARY_PATH "$2") || fail "$1: consumer exited $?: $out"
  echo "install test: $1: $out"
}
# The consumer of libkcache alone must not link the server: $1 names it, $2 is its link command
# line or binary (checked for NEEDED entries when it is a file).
no_server() {
  if [ -f "$2" ]; then
    ! readelf -d "$2" | grep -E 'NEEDED.*kcache-server' || fail "$1 needs the server"
  else
    ! grep -Eq 'kcache-server' <<<"$2" || fail "$1 links the server: $2"
  fi
}
export PKG_CONFIG_PATH="$libdir/pkgconfig"
no_server "the installed libkcache.so" "$libdir/libkcache.so"

# ---- libkcache alone -------------------------------------------------------------------------
for static in OFF ON; do
  b=$tmp/cmake-$static
  CC=$cc cmake -S "$here/consumer" -B "$b" -DCMAKE_PREFIX_PATH="$prefix" -DKCACHE_STATIC=$static \
    >"$b.log" 2>&1 || { cat "$b.log"; fail "find_package configure (static=$static)"; }
  cmake --build "$b" >>"$b.log" 2>&1 || { cat "$b.log"; fail "find_package build (static=$static)"; }
  no_server "find_package static=$static" "$(cat "$b/CMakeFiles/consumer.dir/link.txt")"
  no_server "find_package static=$static" "$b/consumer"
  run "find_package static=$static" "$b/consumer"
done

pkg-config --exists kcache || fail "pkg-config cannot find kcache"
# Consumers get our include path and nothing else (no dependency's flags leak).
for pc in kcache $([ "$mode" = server ] && echo kcache-server); do
  cf=$(pkg-config --cflags "$pc" | xargs)
  [[ "$cf" == -I* && "$cf" != *" "* && "$(realpath "${cf#-I}")" = "$(realpath "$prefix/include")" ]] \
    || fail "pkg-config --cflags $pc is '$cf', want only -I$prefix/include"
done
# The dependencies of the static archives, without the archives' own -l.
deps_of() { pkg-config --static --libs-only-l "$@" | tr ' ' '\n' | grep -Ev '^-lkcache(-server)?$' | xargs; }
[ "$(pkg-config --modversion kcache)" = "$(sed -n 's/^#define KC_VERSION_STRING "\(.*\)"/\1/p' "$prefix/include/kcache/common.h")" ] \
  || fail "pkg-config version differs from the header"
no_server "pkg-config kcache" "$(pkg-config --static --libs kcache) $(pkg-config --print-requires kcache) $(pkg-config --print-requires-private kcache)"
# shellcheck disable=SC2046
"$cc" -o "$tmp/pc-shared" "$here/consumer/consumer.c" $(pkg-config --cflags --libs kcache) \
  || fail "pkg-config shared link"
no_server "pkg-config shared" "$tmp/pc-shared"
run "pkg-config shared" "$tmp/pc-shared"
# Static archive with the dependencies' shared libraries (`pkg-config --static` would ask for the
# static archives of every transitive dependency of libcurl, which distributions do not ship).
# jansson (kc_doc's) comes from kcache.pc's Libs.private: without it the link would fail.
# shellcheck disable=SC2046
"$cc" -o "$tmp/pc-static" "$here/consumer/consumer.c" $(pkg-config --cflags kcache) \
  "$libdir/libkcache.a" $(deps_of kcache) \
  -lpthread -lm -lstdc++ || fail "pkg-config static link"
ldd "$tmp/pc-static" | grep -q libkcache && fail "static consumer depends on libkcache.so"
no_server "pkg-config static" "$tmp/pc-static"
run "pkg-config static" "$tmp/pc-static"

# ---- libkcache and libkcache-server ----------------------------------------------------------
if [ "$mode" = server ]; then
  for static in OFF ON; do
    b=$tmp/cmake-server-$static
    CC=$cc cmake -S "$here/consumer_server" -B "$b" -DCMAKE_PREFIX_PATH="$prefix" \
      -DKCACHE_STATIC=$static >"$b.log" 2>&1 || { cat "$b.log"; fail "find_package server configure (static=$static)"; }
    cmake --build "$b" >>"$b.log" 2>&1 || { cat "$b.log"; fail "find_package server build (static=$static)"; }
    run "find_package server static=$static" "$b/consumer_server"
  done
  readelf -d "$tmp/cmake-server-OFF/consumer_server" | grep -q 'NEEDED.*libkcache-server' \
    || fail "the shared server consumer does not link libkcache-server.so"
  pkg-config --exists kcache-server || fail "pkg-config cannot find kcache-server"
  # shellcheck disable=SC2046
  "$cc" -o "$tmp/pcs-shared" "$here/consumer_server/consumer_server.c" \
    $(pkg-config --cflags --libs kcache-server) || fail "pkg-config server shared link"
  run "pkg-config server shared" "$tmp/pcs-shared"
  # shellcheck disable=SC2046
  "$cc" -o "$tmp/pcs-static" "$here/consumer_server/consumer_server.c" \
    $(pkg-config --cflags kcache-server) "$libdir/libkcache-server.a" "$libdir/libkcache.a" \
    $(deps_of kcache-server kcache) \
    -lpthread -lm -lstdc++ || fail "pkg-config server static link"
  ldd "$tmp/pcs-static" | grep -q libkcache && fail "static server consumer depends on a libkcache .so"
  run "pkg-config server static" "$tmp/pcs-static"
fi
echo "install test: PASS"
