#!/usr/bin/env bash
# The libraries never print and never stop the process: neither shared library may import a
# function that writes to stdout/stderr on its own or ends the process, nor the stdio streams
# themselves (nm -D --undefined-only). Their messages go through the log sink (kcache/log.h);
# their failures are returned as KC_E… codes. No allowlist: each shared library must be clean.
# (The C++ runtime's std::terminate, reachable only through a noexcept violation, is not listed:
# it is how the compiler implements noexcept, not a call the code makes.)
# Registered in ctest as packaging.no_print; exits 1 naming every offending import.
#   usage: check_no_print.sh LIB.so...
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: check_no_print.sh LIB.so..." >&2; exit 2; }
forbidden='abort|exit|_exit|_Exit|quick_exit|printf|vprintf|fprintf|vfprintf|dprintf|vdprintf|'
forbidden+='__printf_chk|__fprintf_chk|__vfprintf_chk|__vprintf_chk|__dprintf_chk|puts|fputs|'
forbidden+='putchar|perror|err|errx|warn|warnx|error|stdout|stderr'
bad=0
for lib in "$@"; do
  found=$(nm -D --undefined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' |
          grep -xE "($forbidden)" | sort -u | tr '\n' ' ' || true)
  if [ -n "$found" ]; then
    echo "no_print: FAIL: $(basename "$lib") imports: $found" >&2
    bad=1
  else
    echo "no_print: $(basename "$lib"): no printing or process-ending imports"
  fi
done
[ "$bad" = 0 ] && echo "no_print: PASS"
exit "$bad"
