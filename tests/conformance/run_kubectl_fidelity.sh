#!/usr/bin/env bash
# run_kubectl_fidelity.sh KCACHE — Issue 33 point 7: the kubectl behaviours of a real API server,
# each a small check with an id (F01…) against `kcache serve`, and a comment saying what a real
# server prints or does (from kubectl's and the API server's sources: kubectl/pkg/cmd/*,
# pkg/printers/internalversion/printers.go, pkg/registry/core/pod/strategy.go,
# staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go). The differences that remain
# are listed in docs/server.md ("Differences from a real API server"), each with the check that
# shows it.
#
# Checks that depend on work merged separately are listed in KC_FIDELITY_PENDING (id, then why);
# they print "SKIP: Fnn … (pending: …)" and do not count. Set KC_FIDELITY_PENDING= (empty) to run
# them all. Exit 77 when kubectl is missing.
set -u
BIN=${1:?usage: run_kubectl_fidelity.sh path/to/kcache}
command -v kubectl >/dev/null || { echo "SKIP: kubectl not found"; exit 77; }
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
kc_setup

# id:reason, one per line. The lead removes a line once the work it waits for is merged.
KC_FIDELITY_PENDING=${KC_FIDELITY_PENDING-"
"}
SKIPPED=0

k() { timeout 40 kubectl --kubeconfig "$KC_KUBECONFIG" --cache-dir "$KC_TMP/cache" \
    --request-timeout=20s "$@"; }
eq() { [ "$1" = "$2" ] || { echo "got '$1', want '$2'"; return 1; }; }
# has TEXT PATTERN — grep -E on TEXT, showing TEXT when it fails
has() { echo "$1" | grep -Eq -- "$2" || { echo "no /$2/ in:"; echo "$1"; return 1; }; }
# header KIND WANT [ARGS…] — the header line kubectl prints (its columns, single-spaced)
header() {
    local kind=$1 want=$2
    shift 2
    local got
    got=$(k get "$kind" "$@" | head -1 | sed -E 's/ {2,}/|/g; s/ +$//')
    eq "$got" "$want"
}

# fcheck ID NAME FN — check unless ID is pending
fcheck() {
    local id=$1 name=$2 fn=$3 why
    why=$(echo "$KC_FIDELITY_PENDING" | sed -n "s/^$id:\(.*\)/\1/p")
    if [ -n "$why" ]; then
        SKIPPED=$((SKIPPED + 1))
        echo "SKIP: $id $name (pending: $why)"
        return
    fi
    check "$id $name" "$fn"
}

# ---- fixtures --------------------------------------------------------------------------------
cat >"$KC_TMP/deploy.yaml" <<'Y'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: web, tier: front}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: "nginx:1.25"}
      - {name: sidecar, image: "busybox:1.36"}
Y
cat >"$KC_TMP/objects.json" <<'J'
{"apiVersion":"v1","kind":"List","items":[
 {"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a","labels":{"node-role.kubernetes.io/control-plane":""}}},
 {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"reader","namespace":"default"},
  "rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]}]},
 {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"read-pods","namespace":"default"},
  "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"reader"},
  "subjects":[{"kind":"User","name":"jane","apiGroup":"rbac.authorization.k8s.io"},
              {"kind":"ServiceAccount","name":"robot","namespace":"default"}]},
 {"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"lock","namespace":"default"},
  "spec":{"holderIdentity":"pod-x"}},
 {"apiVersion":"v1","kind":"Event","metadata":{"name":"web-1.a","namespace":"default"},
  "involvedObject":{"apiVersion":"v1","kind":"Pod","namespace":"default","name":"web-1"},
  "type":"Warning","reason":"BackOff","message":"Back-off restarting failed container",
  "source":{"component":"kubelet","host":"node-a"},
  "firstTimestamp":"2026-01-01T00:00:00Z","lastTimestamp":"2026-01-01T00:05:00Z","count":3},
 {"apiVersion":"v1","kind":"Event","metadata":{"name":"web-1.b","namespace":"default"},
  "involvedObject":{"apiVersion":"v1","kind":"Pod","namespace":"default","name":"web-1"},
  "type":"Normal","reason":"Pulled","message":"Container image pulled",
  "source":{"component":"kubelet","host":"node-a"},
  "firstTimestamp":"2025-12-31T00:00:00Z","lastTimestamp":"2025-12-31T00:00:00Z","count":1}
]}
J
# the node's status, as its kubelet reports it
cat >"$KC_TMP/node-status.json" <<'J'
{"status":{"nodeInfo":{"kubeletVersion":"v1.34.0","osImage":"Debian GNU/Linux 13","kernelVersion":"6.1.0","containerRuntimeVersion":"containerd://2.0.0"},
 "addresses":[{"type":"InternalIP","address":"10.0.0.5"}],"conditions":[{"type":"Ready","status":"True"}]}}
J

# ---- get, describe, columns ----------------------------------------------------------------------
KINDS="pods deployments replicasets statefulsets daemonsets jobs cronjobs services configmaps
secrets namespaces nodes events serviceaccounts roles rolebindings ingresses
persistentvolumeclaims leases"
# F01 real server: `kubectl get KIND` of every built-in kind lists (or prints "No resources
# found"), exit 0.
f01() {
    local kd
    for kd in $KINDS; do k get "$kd" >/dev/null || { echo "get $kd failed"; return 1; }; done
}
# F02 real server: `kubectl describe` of each common kind prints "Name:" blocks (describe reads
# the object and its events; it must not error on anything the server returns).
f02() {
    local kd out
    for kd in pods deployments services configmaps secrets namespaces nodes events \
        serviceaccounts roles rolebindings leases; do
        out=$(k describe "$kd" 2>&1) || { echo "describe $kd: $out"; return 1; }
        case $kd in events) ;; *) has "$out" '^Name:' || return 1 ;; esac
    done
    out=$(k describe deploy web) && has "$out" '^Replicas: +2 desired' &&
        has "$out" '^Selector: +app=web' && has "$out" 'Image: +nginx:1.25'
}
# F03 real server (printers.go): -o wide adds the priority-1 columns of the workload kinds.
f03() {
    header pods 'NAME|READY|STATUS|RESTARTS|AGE|IP|NODE|NOMINATED NODE|READINESS GATES' -o wide &&
        header deployments 'NAME|READY|UP-TO-DATE|AVAILABLE|AGE|CONTAINERS|IMAGES|SELECTOR' -o wide &&
        header services 'NAME|TYPE|CLUSTER-IP|EXTERNAL-IP|PORT(S)|AGE|SELECTOR' -o wide &&
        header jobs 'NAME|STATUS|COMPLETIONS|DURATION|AGE|CONTAINERS|IMAGES|SELECTOR' -o wide &&
        header nodes 'NAME|STATUS|ROLES|AGE|VERSION|INTERNAL-IP|EXTERNAL-IP|OS-IMAGE|KERNEL-VERSION|CONTAINER-RUNTIME' -o wide &&
        eq "$(k get nodes --no-headers | awk '{print $1, $2, $3, $5}')" \
            "node-a Ready control-plane v1.34.0"
}
# F04 real server (printers.go): the columns of the config and RBAC kinds: ConfigMap DATA,
# Secret TYPE DATA, Namespace STATUS, ServiceAccount SECRETS, Role CREATED AT, RoleBinding
# ROLE (Kind/name) and -o wide USERS GROUPS SERVICEACCOUNTS (namespace:name), Lease HOLDER.
f04() {
    header configmaps 'NAME|DATA|AGE' && header secrets 'NAME|TYPE|DATA|AGE' &&
        header namespaces 'NAME|STATUS|AGE' && header serviceaccounts 'NAME|SECRETS|AGE' &&
        header roles 'NAME|CREATED AT' &&
        header rolebindings 'NAME|ROLE|AGE|USERS|GROUPS|SERVICEACCOUNTS' -o wide &&
        has "$(k get rolebinding read-pods -o wide --no-headers)" \
            '^read-pods +Role/reader +[0-9a-z]+ +jane +default:robot$' &&
        header leases 'NAME|HOLDER|AGE' &&
        eq "$(k get lease lock --no-headers | awk '{print $2}')" pod-x
}
# F05 real server: `kubectl get --sort-by` asks for a Table with includeObject=Object and sorts
# the rows by the field of each row's object (response.go asTable: IncludeObject → the whole
# object; the default Metadata → PartialObjectMetadata; None → null).
# (sort-b sorts first by its data, last by its name)
f05() {
    k create cm sort-a --from-literal=n=2 >/dev/null && k create cm sort-b --from-literal=n=1 >/dev/null &&
        k label cm sort-a sort-b sorted=yes >/dev/null &&
        eq "$(k get cm -l sorted --sort-by=.data.n --no-headers | awk '{print $1}' | tr '\n' ' ')" \
            "sort-b sort-a " &&
        eq "$(k get cm -l sorted --sort-by='{.metadata.name}' --no-headers | awk '{print $1}' | tr '\n' ' ')" \
            "sort-a sort-b "
}
# F06 real server: `kubectl explain pod.spec.containers` reads the OpenAPI v3 document of
# api/v1: KIND, VERSION, FIELD: containers <[]Container>, then its FIELDS with types and
# -required- (name is required).
f06() {
    local out
    out=$(k explain pod.spec.containers) && has "$out" '^KIND: +Pod$' &&
        has "$out" '^VERSION: +v1$' && has "$out" '^FIELD: containers <\[\]Container>$' &&
        has "$out" $'^  image\t<string>$' && has "$out" $'^  name\t<string> -required-$'
}
# F07 real server: `kubectl explain deployment --recursive` prints the whole field tree,
# nested by two spaces per level, GROUP apps.
f07() {
    local out
    out=$(k explain deployment --recursive) && has "$out" '^GROUP: +apps$' &&
        has "$out" $'^  spec\t<DeploymentSpec>$' &&
        has "$out" $'^    template\t<PodTemplateSpec> -required-$' &&
        has "$out" $'^        containers\t<\\[\\]Container> -required-$'
}
# F08 real server: `kubectl events` (kubectl ≥ 1.26) lists Events oldest first with LAST SEEN
# ("340d (x3 over 340d)"), TYPE, REASON, OBJECT (Kind/name), MESSAGE; --types filters, --for
# selects the involved object.
f08() {
    local out
    out=$(k events) && has "$(echo "$out" | head -1)" '^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE$' &&
        eq "$(echo "$out" | sed 1d | grep -Eo 'Pulled|BackOff' | tr '\n' ' ')" "Pulled BackOff " &&
        eq "$(k events --types=Warning | sed 1d | grep -Eo 'Pulled|BackOff')" BackOff &&
        has "$out" 'Warning +BackOff +Pod/web-1 +Back-off restarting failed container$' &&
        has "$(k events --for pod/web-1)" 'Pod/web-1 +Back-off restarting failed container'
}
# F09 real server: `kubectl get events --sort-by=.lastTimestamp` orders rows by that field of
# the full objects (Table with includeObject=Object).
f09() {
    eq "$(k get events --sort-by=.lastTimestamp --no-headers | awk '{print $3}' | tr '\n' ' ')" \
        "Pulled BackOff " &&
        eq "$(k get events --sort-by=.count -o name | tr '\n' ' ')" "event/web-1.b event/web-1.a "
}

# ---- writes ------------------------------------------------------------------------------------
# F10 real server: `kubectl create … --dry-run=server` runs the whole create (defaults, uid,
# creationTimestamp) and stores nothing; the returned object has no resourceVersion.
f10() {
    local out
    out=$(k create cm dry --from-literal=a=b --dry-run=server -o json) &&
        eq "$(echo "$out" | /usr/bin/python3 -c 'import json,sys; m=json.load(sys.stdin)["metadata"]
print(bool(m.get("uid")), bool(m.get("creationTimestamp")), "resourceVersion" in m)')" \
            "True True False" &&
        ! k get cm dry 2>/dev/null &&
        k create deploy dry --image=nginx --dry-run=server -o jsonpath='{.spec.strategy.type}' |
        grep -qx RollingUpdate
}
# F11 real server: `kubectl diff` (server-side dry-run) exits 1 and prints a unified diff of the
# live and merged objects when they differ (generation bumped too), 0 when they do not.
f11() {
    k apply -f "$KC_TMP/deploy.yaml" >/dev/null || return 1
    k diff -f "$KC_TMP/deploy.yaml" || { echo "diff of the applied file is not empty"; return 1; }
    sed 's/replicas: 2/replicas: 3/' "$KC_TMP/deploy.yaml" >"$KC_TMP/deploy3.yaml"
    local out rc
    out=$(k diff -f "$KC_TMP/deploy3.yaml")
    rc=$?
    eq "$rc" 1 && has "$out" '^-  replicas: 2$' && has "$out" '^\+  replicas: 3$' &&
        has "$out" '^-  generation: 1$' && has "$out" '^\+  generation: 2$'
}
# F12 real server: client-side `kubectl apply` keeps the applied configuration in the
# kubectl.kubernetes.io/last-applied-configuration annotation and removes, on the next apply,
# a field dropped from the file (three-way merge).
f12() {
    local last
    last=$(k get deploy web -o jsonpath='{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}') &&
        has "$last" '"labels":\{"app":"web","tier":"front"\}' &&
        sed 's/, tier: front//' "$KC_TMP/deploy.yaml" >"$KC_TMP/deploy-notier.yaml" &&
        k apply -f "$KC_TMP/deploy-notier.yaml" >/dev/null &&
        eq "$(k get deploy web -o jsonpath='{.metadata.labels}')" '{"app":"web"}'
}
# F13 real server: `kubectl apply --prune -l` deletes the objects with the label that the
# applied set no longer contains.
f13() {
    local d=$KC_TMP/prune
    mkdir -p "$d"
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p1, labels: {set: s}}\n' >"$d/p1.yaml"
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p2, labels: {set: s}}\n' >"$d/p2.yaml"
    k apply -f "$d" >/dev/null && rm "$d/p2.yaml" &&
        has "$(k apply -f "$d" --prune -l set=s --prune-allowlist=core/v1/ConfigMap)" \
            '^configmap/p2 pruned$' &&
        ! k get cm p2 2>/dev/null && k get cm p1 >/dev/null
}
# F14 real server: `kubectl apply --server-side` conflicts with the client-side manager's field
# (409, "Apply failed with 1 conflict"); --force-conflicts takes it, and kubectl migrates the
# client-side entries so the manager is "kubectl".
f14() {
    local out
    out=$(k apply --server-side -f "$KC_TMP/deploy3.yaml" 2>&1) && return 1
    has "$out" 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply".*\.spec\.replicas' &&
        k apply --server-side --force-conflicts -f "$KC_TMP/deploy3.yaml" >/dev/null &&
        eq "$(k get deploy web -o jsonpath='{.spec.replicas}')" 3 &&
        has "$(k get deploy web -o jsonpath='{.metadata.managedFields[*].manager}')" '(^| )kubectl( |$)'
}
# F15 real server: `kubectl edit` GETs, runs $EDITOR on the YAML, and sends the change back.
f15() {
    k create cm ed --from-literal=color=blue >/dev/null &&
        EDITOR="sed -i s/color:\ blue/color:\ red/" k edit cm ed 2>&1 | grep -q '^configmap/ed edited$' &&
        eq "$(k get cm ed -o jsonpath='{.data.color}')" red &&
        EDITOR=true k edit cm ed 2>&1 | grep -q "Edit cancelled, no changes made"
}
# F16 real server: `kubectl patch` with --type merge, json and strategic (containers merged by
# name) on a Deployment; a patch that changes nothing prints "(no change)".
f16() {
    k patch deploy web --type merge -p '{"spec":{"minReadySeconds":5}}' >/dev/null &&
        k patch deploy web --type json -p '[{"op":"replace","path":"/spec/revisionHistoryLimit","value":4}]' >/dev/null &&
        k patch deploy web -p '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}}}' >/dev/null &&
        eq "$(k get deploy web -o jsonpath='{.spec.minReadySeconds}/{.spec.revisionHistoryLimit}/{.spec.template.spec.containers[*].image}')" \
            "5/4/nginx:1.27 busybox:1.36" &&
        has "$(k patch deploy web --type merge -p '{"spec":{"minReadySeconds":5}}')" '\(no change\)$'
}
# F17 real server: `kubectl label` refuses to change a value without --overwrite ("already has
# a value"), changes it with, removes with "key-"; `kubectl annotate` likewise.
f17() {
    k label cm ed env=a >/dev/null && ! k label cm ed env=b 2>"$KC_TMP/l.err" &&
        grep -q "'env' already has a value (a), and --overwrite is false" "$KC_TMP/l.err" &&
        k label cm ed env=b --overwrite >/dev/null && eq "$(k get cm ed -o jsonpath='{.metadata.labels.env}')" b &&
        k annotate cm ed note=x >/dev/null && k annotate cm ed note=y --overwrite >/dev/null &&
        eq "$(k get cm ed -o jsonpath='{.metadata.annotations.note}')" y &&
        k label cm ed env- >/dev/null && eq "$(k get cm ed -o jsonpath='{.metadata.labels}')" ""
}
# F18 real server: `kubectl delete --wait` returns once the object is gone; with a finalizer it
# waits (and times out), the object Terminating; removing the finalizer deletes it. An empty
# finalizers list is never shown (ObjectMeta fields are omitempty).
f18() {
    k create cm fin >/dev/null &&
        k patch cm fin --type merge -p '{"metadata":{"finalizers":["example.com/hold"]}}' >/dev/null &&
        ! k delete cm fin --wait --timeout=1s >/dev/null 2>&1 &&
        k get cm fin -o jsonpath='{.metadata.deletionTimestamp}' | grep -q . &&
        k patch cm fin --type json -p '[{"op":"remove","path":"/metadata/finalizers/0"}]' >/dev/null &&
        ! k get cm fin 2>/dev/null &&
        k create cm fin2 >/dev/null &&
        k patch cm fin2 --type merge -p '{"metadata":{"finalizers":["example.com/x"],"labels":{"a":"b"}}}' >/dev/null &&
        k patch cm fin2 --type merge -p '{"metadata":{"finalizers":null,"labels":{"a":null}}}' >/dev/null &&
        k get cm fin2 -o json | /usr/bin/python3 -c 'import json,sys; m=json.load(sys.stdin)["metadata"]
assert "finalizers" not in m and "labels" not in m, m' &&
        k delete cm fin2 --wait --timeout=20s >/dev/null && ! k get cm fin2 2>/dev/null
}
# F19 real server: `kubectl wait --for=delete` times out while a finalizer holds the object
# Terminating ("timed out waiting for the condition"), and returns 0 once it is deleted.
f19() {
    k create cm gone >/dev/null &&
        k patch cm gone --type merge -p '{"metadata":{"finalizers":["example.com/hold"]}}' >/dev/null &&
        k delete cm gone --wait=false >/dev/null || return 1
    ! k wait --for=delete cm/gone --timeout=1s 2>"$KC_TMP/wait.err" &&
        grep -q 'timed out waiting for the condition on configmaps/gone' "$KC_TMP/wait.err" || return 1
    k wait --for=delete cm/gone --timeout=20s >"$KC_TMP/wait.out" 2>&1 &
    local w=$!
    k patch cm gone --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null
    wait $w && ! k get cm gone 2>/dev/null || { cat "$KC_TMP/wait.out"; return 1; }
}
WO=0
wo_seen() { # create one more ConfigMap until the watch (started concurrently) reports one
    WO=$((WO + 1))
    k create cm "wo-$WO" >/dev/null && grep -q 'configmap/wo-' "$1"
}
f20() {
    local log=$KC_TMP/wo.log
    k get cm --watch-only -o name >"$log" 2>&1 &
    local wp=$!
    wait_for 15 wo_seen "$log"
    local ok=$?
    kill $wp 2>/dev/null
    wait $wp 2>/dev/null
    [ $ok -eq 0 ] && ! grep -q 'configmap/sort-a' "$log" || { cat "$log"; return 1; }
}
# F21 real server: -o jsonpath with range/filters, -o custom-columns, -o go-template read the
# JSON objects of a list.
f21() {
    eq "$(k get cm sort-a sort-b -o jsonpath='{range .items[*]}{.metadata.name}={.data.n};{end}')" \
        "sort-a=2;sort-b=1;" &&
        eq "$(k get cm -o jsonpath='{.items[?(@.data.n=="2")].metadata.name}')" sort-a &&
        eq "$(k get cm sort-a -o custom-columns=N:.metadata.name,V:.data.n --no-headers | tr -s ' ')" "sort-a 2" &&
        eq "$(k get cm sort-a -o go-template='{{.metadata.name}}')" sort-a
}
# F22 real server: managedFields are hidden by kubectl unless --show-managed-fields; the
# imperative create's manager is "kubectl-create", Update operation.
f22() {
    ! k get cm sort-a -o yaml | grep -q managedFields &&
        k get cm sort-a -o yaml --show-managed-fields | grep -q '^  managedFields:$' &&
        eq "$(k get cm sort-a --show-managed-fields -o jsonpath='{.metadata.managedFields[0].manager}/{.metadata.managedFields[0].operation}')" \
            kubectl-create/Update
}
# F23 real server: `kubectl api-resources` (aggregated discovery) and `kubectl api-versions`.
f23() {
    local res ver
    res=$(k api-resources -o name) && ver=$(k api-versions) &&
        has "$res" '^pods$' && has "$res" '^deployments\.apps$' && has "$res" '^leases\.coordination\.k8s\.io$' &&
        has "$ver" '^v1$' && has "$ver" '^apps/v1$' && has "$ver" '^rbac\.authorization\.k8s\.io/v1$' &&
        eq "$(k api-resources --api-group=apps --namespaced=true -o name | sort | tr '\n' ' ')" \
            "controllerrevisions.apps daemonsets.apps deployments.apps replicasets.apps statefulsets.apps "
}
# F24 real server: /readyz?verbose lists the checks ("[+]ping ok" …) and ends "readyz check
# passed"; /livez?verbose "livez check passed"; /readyz/ping "ok".
f24() {
    local out
    out=$(k get --raw '/readyz?verbose') && has "$out" '^\[\+\]ping ok$' &&
        has "$out" '^readyz check passed$' &&
        has "$(k get --raw '/livez?verbose')" '^livez check passed$' &&
        eq "$(k get --raw /readyz/ping)" ok && eq "$(k get --raw /healthz)" ok
}
# F25 real server: `kubectl cluster-info` prints "Kubernetes control plane is running at URL".
f25() { has "$(k cluster-info)" "^Kubernetes control plane is running at $KC_URL"; }
# F26 real server: `kubectl version -o json` has serverVersion (major, minor, gitVersion v1.x.y,
# platform).
f26() {
    k version -o json | /usr/bin/python3 -c 'import json,re,sys
s=json.load(sys.stdin)["serverVersion"]
assert s["major"]=="1" and s["minor"].isdigit() and re.match(r"v1\.\d+\.\d+", s["gitVersion"]), s
assert s["platform"] and s["goVersion"], s'
}
# F27 real server without metrics-server (no metrics.k8s.io APIService): `kubectl top` fails
# with "error: Metrics API not available".
f27() {
    ! k top pods 2>"$KC_TMP/top.err" && grep -qx 'error: Metrics API not available' "$KC_TMP/top.err"
}
# F28 real server (pod/strategy.go LogLocation, streamLocation): for a pod without a node the
# log is empty and exec/attach fail 400 "pod P does not have a host assigned"; an unknown
# container → 400 "container C is not valid for pod P"; an unknown pod → 404. For a scheduled
# pod a real server dials the kubelet: kcache serve has none and answers 503 naming the node
# (a difference: docs/server.md).
f28() {
    k run lonely --image=busybox >/dev/null &&
        eq "$(k logs lonely)" "" &&
        ! k exec lonely -- true 2>"$KC_TMP/x.err" &&
        grep -q 'Error from server (BadRequest): pod lonely does not have a host assigned' "$KC_TMP/x.err" &&
        ! k logs nobody 2>"$KC_TMP/n.err" && grep -q 'pods "nobody" not found' "$KC_TMP/n.err" &&
        k create -f - >/dev/null <<'P' &&
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"placed"},
 "spec":{"nodeName":"node-a","containers":[{"name":"c","image":"busybox"}]}}
P
        ! k logs placed 2>"$KC_TMP/l.err" &&
        grep -q 'Error from server (ServiceUnavailable): no kubelet behind kcache serve: pods/log of pod placed cannot reach node node-a' "$KC_TMP/l.err" &&
        ! k exec placed -- true 2>"$KC_TMP/e.err" &&
        grep -q 'ServiceUnavailable.*pods/exec of pod placed' "$KC_TMP/e.err"
}
# F29 real server: `kubectl port-forward` needs a Running pod, then the kubelet's portforward
# stream; kcache serve has no kubelet: the stream is refused with its 503 (a difference).
f29() {
    k patch pod placed --subresource=status --type merge -p '{"status":{"phase":"Running"}}' >/dev/null &&
        ! k port-forward pod/placed 0:80 >"$KC_TMP/pf.out" 2>&1 &&
        grep -Eq 'no kubelet|ServiceUnavailable|503' "$KC_TMP/pf.out" || { cat "$KC_TMP/pf.out"; return 1; }
}
# F30 real server: `kubectl proxy` serves the API on a local port ("Starting to serve on
# 127.0.0.1:PORT") with kubectl's credentials.
f30() {
    local log=$KC_TMP/proxy.log port
    k proxy --port=0 >"$log" 2>&1 &
    local pp=$!
    wait_for 15 grep -q 'Starting to serve on' "$log"
    port=$(sed -n 's/^Starting to serve on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log")
    local body
    body=$(curl -s "http://127.0.0.1:$port/api/v1/namespaces/default/configmaps/sort-a")
    kill $pp 2>/dev/null
    wait $pp 2>/dev/null
    has "$body" '"name":"sort-a"'
}
# F31 real server: `kubectl get all` lists pods, services, deployments, replicasets, … with
# their kind prefixes; `kubectl get pods,deployments -o name` mixes kinds.
f31() {
    local out
    out=$(k get all) && has "$out" '^deployment\.apps/web ' && has "$out" '^pod/placed ' &&
        has "$(k get pods,deployments -o name)" '^deployment\.apps/web$'
}
# F32 real server: `kubectl scale` and `kubectl set image` / `kubectl annotate --all`.
f32() {
    k scale deploy web --replicas=1 >/dev/null && eq "$(k get deploy web -o jsonpath='{.spec.replicas}')" 1 &&
        k set image deploy/web sidecar=busybox:1.37 >/dev/null &&
        eq "$(k get deploy web -o jsonpath='{.spec.template.spec.containers[1].image}')" busybox:1.37
}

# F40 real server (printers.go): storage and policy kinds' columns: PVC (wide VOLUMEMODE), PV
# (CLAIM namespace/name, access modes RWO,RWX), StorageClass "(default)", PDB (N/A when unset),
# ControllerRevision CONTROLLER kind.group/name; v1 Endpoints answers with the deprecation warning
# a 1.33+ server sends ("Warning: v1 Endpoints is deprecated in v1.33+; …").
f40() {
    k create -f - >/dev/null <<'E' || return 1
{"apiVersion":"v1","kind":"List","items":[
{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"storageClassName":"fast"}},
{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv1"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteMany","ReadWriteOnce"],"persistentVolumeReclaimPolicy":"Retain","claimRef":{"namespace":"default","name":"data"},"hostPath":{"path":"/x"},"storageClassName":"fast"}},
{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"fast","annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"example.com/p"},
{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"pdb"},"spec":{"minAvailable":"50%","selector":{"matchLabels":{"app":"web"}}}},
{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"web-1","ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web","uid":"u1","controller":true}]},"revision":3,"data":{}}
]}
E
    header pvc 'NAME|STATUS|VOLUME|CAPACITY|ACCESS MODES|STORAGECLASS|VOLUMEATTRIBUTESCLASS|AGE|VOLUMEMODE' -o wide &&
        header pv 'NAME|CAPACITY|ACCESS MODES|RECLAIM POLICY|STATUS|CLAIM|STORAGECLASS|VOLUMEATTRIBUTESCLASS|REASON|AGE' &&
        has "$(k get pv pv1 --no-headers)" '^pv1 +1Gi +RWO,RWX +Retain +[A-Za-z]+ +default/data +fast +<unset> ' &&
        has "$(k get sc --no-headers)" '^fast \(default\) +example\.com/p +Delete +Immediate +false ' &&
        header pdb 'NAME|MIN AVAILABLE|MAX UNAVAILABLE|ALLOWED DISRUPTIONS|AGE' &&
        has "$(k get pdb pdb --no-headers)" '^pdb +50% +N/A +0 ' &&
        has "$(k get controllerrevisions --no-headers)" '^web-1 +statefulset\.apps/web +3 ' &&
        has "$(k get endpoints 2>&1)" '^Warning: v1 Endpoints is deprecated in v1\.33\+; use discovery\.k8s\.io/v1 EndpointSlice$'
}

# F41 real server (printers.go): the rarer kinds' columns: HPA TARGETS "cpu: <unknown>/80%" before
# any status, EndpointSlice ENDPOINTS "a,b,c + N more...", IngressClass PARAMETERS <none>,
# ResourceQuota REQUEST/LIMIT "resource: used/hard" (limits.* under LIMIT, a missing used 0).
f41() {
    k create -f - >/dev/null <<'E' || return 1
{"apiVersion":"v1","kind":"List","items":[
{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"web"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":5,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}}]}},
{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"web-abc"},"addressType":"IPv4","ports":[{"name":"http","port":80,"protocol":"TCP"}],"endpoints":[{"addresses":["10.0.0.1"]},{"addresses":["10.0.0.2"]},{"addresses":["10.0.0.3"]},{"addresses":["10.0.0.4"]}]},
{"apiVersion":"networking.k8s.io/v1","kind":"IngressClass","metadata":{"name":"nginx"},"spec":{"controller":"k8s.io/ingress-nginx"}},
{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"pods":"10","limits.cpu":"2"}}}
]}
E
    k patch quota q --subresource=status --type=merge \
        -p '{"status":{"hard":{"pods":"10","limits.cpu":"2000m"},"used":{"pods":"3"}}}' >/dev/null &&
        header hpa 'NAME|REFERENCE|TARGETS|MINPODS|MAXPODS|REPLICAS|AGE' &&
        has "$(k get hpa web --no-headers)" '^web +Deployment/web +cpu: <unknown>/80% +1 +5 +0 ' &&
        has "$(k get endpointslice web-abc)" '^NAME +ADDRESSTYPE +PORTS +ENDPOINTS +AGE$' &&
        has "$(k get endpointslice web-abc --no-headers)" '^web-abc +IPv4 +80 +10\.0\.0\.1,10\.0\.0\.2,10\.0\.0\.3 \+ 1 more\.\.\. ' &&
        has "$(k get ingressclass nginx)" '^nginx +k8s\.io/ingress-nginx +<none> ' &&
        has "$(k get quota q)" '^NAME +REQUEST +LIMIT +AGE$' &&
        has "$(k get quota q --no-headers)" '^q +pods: 3/10 +limits\.cpu: 0/2 '
}

# ---- pending: behaviours built separately (KC_FIDELITY_PENDING) --------------------------------
# F33 real server: kubectl's generators send protobuf for every built-in kind: create role,
# rolebinding, clusterrole, cronjob, ingress, poddisruptionbudget, priorityclass, quota.
f33() {
    k create role r1 --verb=get --resource=pods >/dev/null &&
        k create rolebinding rb1 --role=r1 --user=jane >/dev/null &&
        k create clusterrole cr1 --verb=list --resource=nodes >/dev/null &&
        k create cronjob cj1 --image=busybox --schedule='*/5 * * * *' >/dev/null &&
        k create ingress ing1 --rule='foo.com/bar=svc1:8080' >/dev/null &&
        k create pdb pdb1 --selector=app=web --min-available=1 >/dev/null &&
        k create priorityclass pc1 --value=100 >/dev/null &&
        k create quota q1 --hard=pods=10 >/dev/null &&
        eq "$(k get cronjob cj1 -o jsonpath='{.spec.schedule}')" '*/5 * * * *'
}
# F34 real server: `kubectl auth can-i` (SelfSubjectAccessReview) answers yes for an admin.
f34() { eq "$(k auth can-i create pods)" yes && eq "$(k auth can-i '*' '*')" yes; }
# F35 real server: a Deployment whose selector does not match its template labels → 422
# "The Deployment "bad" is invalid: spec.template.metadata.labels: Invalid value: …".
f35() {
    ! k create -f - 2>"$KC_TMP/inv.err" >/dev/null <<'D' &&
{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"bad"},
 "spec":{"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"y"}},
 "spec":{"containers":[{"name":"c","image":"busybox"}]}}}}
D
        grep -q 'The Deployment "bad" is invalid: spec.template.metadata.labels: Invalid value' "$KC_TMP/inv.err"
}
# F36 real server: `kubectl rollout status deploy/web` ends "successfully rolled out".
f36() { has "$(k rollout status deploy/web --timeout=20s)" 'deployment "web" successfully rolled out'; }
# F37 real server: `kubectl wait --for=condition=Available deploy/web` → "condition met".
f37() { has "$(k wait --for=condition=Available deploy/web --timeout=20s)" 'condition met'; }
# F38 real server: Service default/kubernetes, ClusterIP the first address of the range, 443/TCP.
f38() {
    eq "$(k get svc kubernetes -n default -o jsonpath='{.spec.clusterIP}/{.spec.ports[0].port}')" 10.96.0.1/443
}
# F39 real server: /version names the release whose API it serves (1.34, api-resources-1.34.txt).
f39() { eq "$(k version -o json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["minor"])')" 34; }

kc_start "$BIN" || { fail "server start"; kc_summary; }
k create -f "$KC_TMP/objects.json" >/dev/null &&
    k patch node node-a --subresource=status --type merge --patch-file "$KC_TMP/node-status.json" >/dev/null ||
    fail "fixtures"
k apply -f "$KC_TMP/deploy.yaml" >/dev/null && k create cm c1 --from-literal=a=b >/dev/null &&
    k create secret generic s1 --from-literal=a=b >/dev/null && k create sa robot >/dev/null &&
    k create svc clusterip web --tcp=80:8080 >/dev/null && k create job j1 --image=busybox >/dev/null &&
    k run web-1 --image=busybox >/dev/null ||
    fail "fixtures (imperative)"

fcheck F01 "kubectl get of every common kind" f01
fcheck F02 "kubectl describe of every common kind" f02
fcheck F03 "kubectl get -o wide: workload and node columns" f03
fcheck F04 "kubectl get: config and RBAC kinds' columns (serviceaccounts, rolebindings, leases)" f04
fcheck F05 "kubectl get --sort-by (Table includeObject=Object)" f05
fcheck F06 "kubectl explain pod.spec.containers" f06
fcheck F07 "kubectl explain deployment --recursive" f07
fcheck F08 "kubectl events [--types, --for]" f08
fcheck F09 "kubectl get events --sort-by" f09
fcheck F10 "kubectl create --dry-run=server" f10
fcheck F11 "kubectl diff" f11
fcheck F12 "kubectl apply: last-applied annotation, three-way merge" f12
fcheck F13 "kubectl apply --prune -l" f13
fcheck F14 "kubectl apply --server-side: conflict, --force-conflicts" f14
fcheck F15 "kubectl edit (EDITOR)" f15
fcheck F16 "kubectl patch merge/json/strategic, (no change)" f16
fcheck F17 "kubectl label/annotate --overwrite, key-" f17
fcheck F18 "kubectl delete --wait with a finalizer; empty metadata fields omitted" f18
fcheck F19 "kubectl wait --for=delete" f19
fcheck F20 "kubectl get --watch-only" f20
fcheck F21 "kubectl get -o jsonpath/custom-columns/go-template" f21
fcheck F22 "kubectl get --show-managed-fields" f22
fcheck F23 "kubectl api-resources / api-versions" f23
fcheck F24 "kubectl get --raw /readyz?verbose, /livez?verbose" f24
fcheck F25 "kubectl cluster-info" f25
fcheck F26 "kubectl version -o json: serverVersion" f26
fcheck F27 "kubectl top: Metrics API not available (no metrics-server)" f27
fcheck F28 "kubectl logs/exec: a real server's errors, no kubelet (503)" f28
fcheck F29 "kubectl port-forward: no kubelet (503)" f29
fcheck F30 "kubectl proxy" f30
fcheck F31 "kubectl get all, several kinds" f31
fcheck F32 "kubectl scale, set image" f32
fcheck F40 "kubectl get: storage and policy kinds' columns (pvc, pv, storageclass, pdb, controllerrevision)" f40
fcheck F41 "kubectl get: hpa, endpointslice, ingressclass, quota columns" f41
fcheck F33 "kubectl create role/rolebinding/clusterrole/cronjob/ingress/pdb/priorityclass/quota" f33
fcheck F34 "kubectl auth can-i" f34
fcheck F35 "kubectl create: workload validation error (422)" f35
fcheck F38 "kubectl get svc kubernetes" f38
fcheck F39 "kubectl version: the served release" f39
kc_stop && pass "server stops cleanly" || fail "server exit status"
# F36, F37: a Deployment only rolls out where pods run — a second server with simulated nodes (a
# cluster's kubelets), the same Deployment
kc_start "$BIN" --simulate-nodes 2 || { fail "server start (--simulate-nodes 2)"; kc_summary; }
k apply -f "$KC_TMP/deploy.yaml" >/dev/null || fail "fixtures (simulated nodes)"
fcheck F36 "kubectl rollout status" f36
fcheck F37 "kubectl wait --for=condition=Available" f37
kc_stop && pass "server with simulated nodes stops cleanly" || fail "server exit status"
echo "== $SKIPPED pending (KC_FIDELITY_PENDING)"
kc_summary
