#!/usr/bin/env bash
# The programs shipped or shown with kcache use the public API only: every `#include "…"` in
# tools/*/ and examples/ names kcache.h, a header under include/kcache/, or a header of the
# program's own folder — never the library's internals under src/. (Their build targets do not
# see src/ either; this check names the offending line.) Registered in ctest as
# packaging.public_includes; exits 1 listing every violation.
#   usage: check_public_includes.sh SOURCE_DIR
set -euo pipefail
src=$(cd "${1:?usage: check_public_includes.sh SOURCE_DIR}" && pwd)
bad=0
while IFS= read -r -d '' f; do
  dir=$(dirname "$f")
  while IFS= read -r line; do
    n=${line%%:*}
    inc=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' <<<"${line#*:}")
    [ -n "$inc" ] || continue
    case $inc in
      kcache.h) [ -f "$src/include/kcache.h" ] && continue ;;
      kcache/*.h) [ -f "$src/include/$inc" ] && continue ;;
      */*) ;;
      *) [ -f "$dir/$inc" ] && continue ;;
    esac
    echo "${f#$src/}:$n: #include \"$inc\" is not a public header (include/kcache/) nor one of ${dir#$src/}/" >&2
    bad=1
  done < <(grep -n '#[[:space:]]*include[[:space:]]*"' "$f" || true)
done < <(find "$src/tools" "$src/examples" -name '*.[ch]' -print0)
[ "$bad" = 0 ] || exit 1
echo "public includes: ok ($(find "$src/tools" "$src/examples" -name '*.[ch]' | wc -l) files)"
