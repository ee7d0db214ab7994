#!/usr/bin/env bash
# No hidden environment knobs in the libraries: every getenv() in src/ must read one of the
# documented variables — KUBECONFIG and HOME (kcache/config.h, kubectl's loading rules),
# KUBERNETES_SERVICE_HOST/_PORT (in-cluster), KCACHE_LOG (kcache/log.h), KCACHE_OBJ_ARENA (the
# object arena off: docs/building.md, src/core/slab.c), NODE_NAME (kcache/podmeta.h: the node agent's
# node, from the downward API, when kc_podmeta_opts.node_name is not set). Anything a test needs to
# change is an option (kc_config_opts.service_account_dir, .exec_timeout_ms, …), not a variable.
# Registered in ctest as packaging.getenv; exits 1 naming each other read.
#   usage: check_getenv.sh SOURCE_DIR
set -euo pipefail
src=${1:?usage: check_getenv.sh SOURCE_DIR}/src
allowed='KUBECONFIG|HOME|KUBERNETES_SERVICE_HOST|KUBERNETES_SERVICE_PORT|KCACHE_LOG|KCACHE_OBJ_ARENA|NODE_NAME'
bad=0
n=0
while IFS= read -r hit; do
  n=$((n + 1))
  name=$(sed -n 's/.*getenv("\([A-Za-z0-9_]*\)").*/\1/p' <<<"$hit")
  if [ -z "$name" ] || ! grep -qxE "($allowed)" <<<"$name"; then
    echo "getenv: FAIL: undocumented or computed environment read: $hit" >&2
    bad=1
  fi
done < <(grep -rnE '\bgetenv[[:space:]]*\(' "$src" --include='*.c' --include='*.cpp' --include='*.h' |
         grep -vE ':[0-9]+:[[:space:]]*(\*|/\*|//)')
[ "$bad" = 0 ] && echo "getenv: PASS ($n reads, all documented)"
exit "$bad"
