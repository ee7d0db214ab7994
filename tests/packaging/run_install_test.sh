#!/usr/bin/env bash
# Install test: `cmake --install` a finished build into a temporary prefix, check the layout, then
# build and run tests/packaging/consumer four ways: find_package (shared and static) and
# pkg-config (shared, and the static archive with the dependencies' --libs). Registered in ctest as packaging.install.
#   usage: run_install_test.sh BUILD_DIR [C_COMPILER]
set -euo pipefail
build=$(cd "${1:?usage: run_install_test.sh BUILD_DIR [CC]}" && pwd)
cc=${2:-cc}
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
         include/kcache/selector.h include/kcache/obj.h; do
  [ -f "$prefix/$f" ] || fail "missing $f"
done
for f in libkcache.so libkcache.a pkgconfig/kcache.pc cmake/kcache/kcacheConfig.cmake \
         cmake/kcache/kcacheConfigVersion.cmake cmake/kcache/kcacheTargets.cmake; do
  [ -e "$libdir/$f" ] || fail "missing ${libdir#$prefix/}/$f"
done
[ -z "$(find "$prefix/include" -name '*.h' -path '*/src/*')" ] || fail "internal headers installed"
echo "install test: layout ok (${libdir#$prefix/})"

run() { # name, executable
  out=$(LD_LIBRARY_PATH="$libdir" "$2") || fail "$1: consumer exited $?: $out"
  echo "install test: $1: $out"
}

# find_package(kcache), shared and static
for mode in OFF ON; do
  b=$tmp/cmake-$mode
  CC=$cc cmake -S "$here/consumer" -B "$b" -DCMAKE_PREFIX_PATH="$prefix" -DKCACHE_STATIC=$mode \
    >"$b.log" 2>&1 || { cat "$b.log"; fail "find_package configure (static=$mode)"; }
  cmake --build "$b" >>"$b.log" 2>&1 || { cat "$b.log"; fail "find_package build (static=$mode)"; }
  run "find_package static=$mode" "$b/consumer"
done

# pkg-config, shared and static
export PKG_CONFIG_PATH="$libdir/pkgconfig"
pkg-config --exists kcache || fail "pkg-config cannot find kcache"
[ "$(pkg-config --modversion kcache)" = "$(sed -n 's/^#define KC_VERSION_STRING "\(.*\)"/\1/p' "$prefix/include/kcache/common.h")" ] \
  || fail "pkg-config version differs from the header"
# shellcheck disable=SC2046
"$cc" -o "$tmp/pc-shared" "$here/consumer/consumer.c" $(pkg-config --cflags --libs kcache) \
  || fail "pkg-config shared link"
run "pkg-config shared" "$tmp/pc-shared"
# Static archive with the dependencies' shared libraries (`pkg-config --static` would ask for the
# static archives of every transitive dependency of libcurl, which distributions do not ship).
# shellcheck disable=SC2046
"$cc" -o "$tmp/pc-static" "$here/consumer/consumer.c" $(pkg-config --cflags kcache) \
  "$libdir/libkcache.a" $(pkg-config --libs $(pkg-config --print-requires-private kcache)) \
  -lpthread -lm -lstdc++ || fail "pkg-config static link"
ldd "$tmp/pc-static" | grep -q libkcache && fail "static consumer depends on libkcache.so"
run "pkg-config static" "$tmp/pc-static"
echo "install test: PASS"
