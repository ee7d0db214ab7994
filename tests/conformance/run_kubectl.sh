#!/usr/bin/env bash
# run_kubectl.sh KCACHE — unmodified kubectl against `kcache serve` (plain HTTP, then --tls --token).
# Checks: version (#5), get namespaces, create/apply with default validation (#7), get -o json/yaml,
# label, annotate, patch merge/json/strategic (#38–#40), get -w (#73/#75/#88), delete --wait (#55),
# CRD then custom resource round trip, get events (its columns, -o wide), TLS + bearer token (and
# 401 with a wrong token), a body over
# --max-body read as 413 RequestEntityTooLarge every time (never "broken pipe" / "reset by peer").
# Exit 77 when kubectl is missing.
set -u
BIN=${1:?usage: run_kubectl.sh path/to/kcache}
command -v kubectl >/dev/null || { echo "SKIP: kubectl not found"; exit 77; }
. "$(dirname "$0")/lib.sh"
kc_setup

k() { timeout 40 kubectl --kubeconfig "$KC_KUBECONFIG" --cache-dir "$KC_TMP/cache" \
    --request-timeout=20s "$@"; }

cat >"$KC_TMP/cm.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm1
  namespace: default
data:
  color: blue
Y
cat >"$KC_TMP/deploy.yaml" <<'Y'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        ports:
        - containerPort: 80
      - name: sidecar
        image: busybox:1.36
Y
cat >"$KC_TMP/crd.yaml" <<'Y'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
Y
cat >"$KC_TMP/widget.yaml" <<'Y'
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
  namespace: default
spec:
  size: 3
Y

cat >"$KC_TMP/event.yaml" <<'Y'
apiVersion: v1
kind: Event
metadata:
  name: web-1.18ed43e07caee144
  namespace: default
involvedObject: {apiVersion: v1, kind: Pod, namespace: default, name: web-1, fieldPath: "spec.containers{web}"}
type: Warning
reason: BackOff
message: Back-off restarting failed container
source: {component: kcache-test, host: node-1}
firstTimestamp: "2026-01-01T00:00:00Z"
lastTimestamp: "2026-01-01T00:05:00Z"
count: 7
Y

jp() { k get "$@"; }
eq() { [ "$1" = "$2" ] || { echo "got '$1', want '$2'"; return 1; }; }

t_version() { k version -o json | grep -q '"serverVersion"'; }
t_get_ns() {
    local out
    out=$(k get namespaces) && echo "$out" | grep -q '^default ' && echo "$out" | grep -q '^kube-system '
}
t_create() { k create -f "$KC_TMP/cm.yaml" && eq "$(jp cm cm1 -o jsonpath='{.data.color}')" blue; }
t_apply() {
    k apply -f "$KC_TMP/deploy.yaml" &&
        sed 's/replicas: 2/replicas: 3/' "$KC_TMP/deploy.yaml" >"$KC_TMP/deploy3.yaml" &&
        k apply -f "$KC_TMP/deploy3.yaml" &&
        eq "$(jp deploy web -o jsonpath='{.spec.replicas}')" 3
}
t_get_json() {
    k get cm cm1 -o json | /usr/bin/python3 -c \
        'import json,sys; o=json.load(sys.stdin); assert o["kind"]=="ConfigMap" and o["metadata"]["uid"] and int(o["metadata"]["resourceVersion"])>0, o'
}
t_get_yaml() { k get deploy web -o yaml | grep -q '^kind: Deployment'; }
t_label() { k label cm cm1 env=test && eq "$(jp cm cm1 -o jsonpath='{.metadata.labels.env}')" test; }
t_annotate() {
    k annotate cm cm1 note=hello && eq "$(jp cm cm1 -o jsonpath='{.metadata.annotations.note}')" hello
}
t_patch_merge() {
    k patch cm cm1 --type merge -p '{"data":{"size":"L","color":null}}' &&
        eq "$(jp cm cm1 -o jsonpath='{.data.size}/{.data.color}')" "L/"
}
t_patch_json() {
    k patch cm cm1 --type json -p '[{"op":"add","path":"/data/shape","value":"round"}]' &&
        eq "$(jp cm cm1 -o jsonpath='{.data.shape}')" round
}
t_patch_strategic() {
    # Merges the containers list by name: web's image changes, sidecar stays.
    k patch deploy web --type strategic \
        -p '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}}}' &&
        eq "$(jp deploy web -o jsonpath='{.spec.template.spec.containers[*].name}')" "web sidecar" &&
        eq "$(jp deploy web -o jsonpath='{.spec.template.spec.containers[0].image}')" nginx:1.27
}
t_watch() {
    local log=$KC_TMP/watch.log
    k get cm -w --output-watch-events -o name >"$log" 2>&1 &
    local wpid=$!
    wait_for 15 grep -q 'configmap/cm1' "$log" || { kill $wpid; cat "$log"; return 1; }
    sed 's/name: cm1/name: cm-watched/' "$KC_TMP/cm.yaml" >"$KC_TMP/cmw.yaml"
    k apply -f "$KC_TMP/cmw.yaml" >/dev/null || { kill $wpid; return 1; }
    local ok=0
    wait_for 15 grep -q 'configmap/cm-watched' "$log" || ok=1
    kill $wpid 2>/dev/null
    wait $wpid 2>/dev/null
    [ $ok -eq 0 ] || cat "$log"
    return $ok
}
t_create_imperative() {
    # kubectl sends built-in kinds from generators as protobuf (spec §6.2).
    k create configmap cm-imperative --from-literal=a=b &&
        eq "$(jp cm cm-imperative -o jsonpath='{.data.a}')" b
}
t_create_service_job() {
    # Services (int and named target ports) and Jobs from kubectl's generators, protobuf bodies.
    k create service clusterip svc-pb --tcp=5678:8080 &&
        eq "$(jp svc svc-pb -o jsonpath='{.spec.type}/{.spec.ports[0].port}/{.spec.ports[0].targetPort}')" ClusterIP/5678/8080 &&
        k create service nodeport svc-np --tcp=80:http &&
        eq "$(jp svc svc-np -o jsonpath='{.spec.ports[0].targetPort}')" http &&
        k create job job-pb --image=busybox -- echo hi &&
        eq "$(jp job job-pb -o jsonpath='{.spec.template.spec.restartPolicy}/{.spec.template.spec.containers[0].command[1]}')" Never/hi
}
t_delete_wait() {
    k delete cm cm1 --wait=true --timeout=20s &&
        ! k get cm cm1 2>"$KC_TMP/nf.err" && grep -q NotFound "$KC_TMP/nf.err"
}
# The Events the event recorder writes (docs/events.md), as `kubectl get events` shows them: the
# server's Table has upstream's columns, the -o wide ones at priority 1.
t_events() {
    k create -f "$KC_TMP/event.yaml" >/dev/null || return 1
    local out wide
    out=$(k get events) && wide=$(k get events -o wide) || return 1
    echo "$out" | head -1 | grep -Eq '^LAST SEEN +TYPE +REASON +OBJECT +MESSAGE$' &&
        echo "$out" | grep -Eq '^[0-9dhmsy]+ +Warning +BackOff +pod/web-1 +Back-off restarting failed container$' &&
        echo "$wide" | head -1 | grep -Eq 'SUBOBJECT +SOURCE +MESSAGE +FIRST SEEN +COUNT +NAME$' &&
        echo "$wide" | grep -Eq 'spec.containers\{web\} +kcache-test, node-1 .* 7 +web-1.18ed43e07caee144$' ||
        { echo "$out"; echo "$wide"; return 1; }
}
t_crd() {
    k apply -f "$KC_TMP/crd.yaml" &&
        wait_for 15 k get widgets &&
        k create -f "$KC_TMP/widget.yaml" &&
        eq "$(jp widget w1 -o jsonpath='{.spec.size}')" 3 &&
        k patch wd w1 --type merge -p '{"spec":{"size":4}}' &&
        eq "$(jp widgets.example.com w1 -o jsonpath='{.spec.size}/{.metadata.generation}')" 4/2 &&
        k delete widget w1 --wait=true --timeout=20s &&
        k delete crd widgets.example.com
}

t_get_wide() {
    # -o wide: the priority-1 columns of the server's Table (deployment web from t_apply)
    local out
    out=$(k get deploy web -o wide) || return 1
    echo "$out" | head -1 | grep -Eq 'NAME +READY +UP-TO-DATE +AVAILABLE +AGE +CONTAINERS +IMAGES +SELECTOR' &&
        echo "$out" | grep -Eq '^web .* web,sidecar +nginx:1.27,busybox:1.36 +app=web$' || { echo "$out"; return 1; }
    k create -f - >/dev/null <<'P' || return 1
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"wide-pod"},
 "spec":{"nodeName":"node-a","containers":[{"name":"c","image":"busybox"}]}}
P
    out=$(k get pod wide-pod -o wide) || return 1
    echo "$out" | head -1 | grep -Eq 'NAME +READY +STATUS +RESTARTS +AGE +IP +NODE +NOMINATED NODE +READINESS GATES' &&
        echo "$out" | grep -Eq '^wide-pod +0/1 +Pending +0 +[0-9a-z]+ +<none> +node-a +<none> +<none>$' &&
        ! k get pod wide-pod | head -1 | grep -q NODE || { echo "$out"; return 1; }
    out=$(k get job job-pb -o wide) || return 1
    echo "$out" | head -1 | grep -Eq 'NAME +STATUS +COMPLETIONS +DURATION +AGE +CONTAINERS +IMAGES +SELECTOR' &&
        echo "$out" | grep -Eq '^job-pb +Running +0/1 +[0-9a-z]+ +job-pb +busybox +batch\.kubernetes\.io/controller-uid=' ||
        { echo "$out"; return 1; }
    out=$(k get svc svc-pb -o wide) || return 1
    echo "$out" | head -1 | grep -Eq 'NAME +TYPE +CLUSTER-IP +EXTERNAL-IP +PORT\(S\) +AGE +SELECTOR' &&
        echo "$out" | grep -Eq '^svc-pb +ClusterIP +10\.(9[6-9]|10[0-9]|11[01])\.[0-9.]+ +<none> +5678/TCP +[0-9a-z]+ +app=svc-pb$' ||
        { echo "$out"; return 1; }
}

kc_start "$BIN" || { fail "server start"; kc_summary; }
check "kubectl version shows the server version (#5)" t_version
check "kubectl get namespaces lists default and kube-system" t_get_ns
check "kubectl create -f ConfigMap with default validation (#7)" t_create
check "kubectl apply Deployment, then re-apply a change" t_apply
check "kubectl get -o json" t_get_json
check "kubectl get -o yaml" t_get_yaml
check "kubectl label" t_label
check "kubectl annotate" t_annotate
check "kubectl patch --type merge, null removes a key (#38)" t_patch_merge
check "kubectl patch --type json (#39)" t_patch_json
check "kubectl patch --type strategic merges containers by name (#40)" t_patch_strategic
check "kubectl get -w prints existing objects, then a change (#73/#88)" t_watch
check "kubectl create configmap (imperative, protobuf request body)" t_create_imperative
check "kubectl create service clusterip|nodeport, create job (protobuf request bodies)" t_create_service_job
check "kubectl get -o wide: deployment, pod, job and service wide columns" t_get_wide
check "kubectl delete --wait (#55)" t_delete_wait
check "CRD then custom resource create/get/patch/delete" t_crd
check "kubectl get events [-o wide]: upstream's event columns (count, first/last seen)" t_events
kc_stop && pass "server stops cleanly on SIGTERM (exit 0)" || fail "server exit status on SIGTERM"

KC_QUIET=0 kc_start "$BIN" --tls --token s3cr3t-t0ken || { fail "server start with --tls --token"; kc_summary; }
check "TLS + token: kubectl get namespaces" t_get_ns
check "TLS + token: kubectl create/get" t_create
sed 's/s3cr3t-t0ken/wrong-token/' "$KC_KUBECONFIG" >"$KC_TMP/kc.bad"
t_bad_token() {
    ! timeout 30 kubectl --kubeconfig "$KC_TMP/kc.bad" --cache-dir "$KC_TMP/cache2" get ns \
        2>"$KC_TMP/401.err" && grep -qi 'unauthorized\|must be logged in' "$KC_TMP/401.err"
}
check "TLS + wrong token: kubectl gets 401 Unauthorized" t_bad_token
t_no_secret_in_log() { [ -s "$KC_ERR" ] && ! grep -q s3cr3t-t0ken "$KC_ERR"; }
check "the token never appears in the server's request log" t_no_secret_in_log
kc_stop && pass "TLS server stops cleanly" || fail "TLS server exit status"

kc_start "$BIN" --max-body 64Ki || { fail "server start with --max-body"; kc_summary; }
{ printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"k":"'
  head -c 3000000 /dev/zero | tr '\0' x
  printf '"}}'; } >"$KC_TMP/big.json"
t_body_too_large() {
    # Before the server drained such bodies, about half of these failed with a write error.
    local i
    for i in $(seq 1 20); do
        k create -f "$KC_TMP/big.json" --validate=false >"$KC_TMP/413.out" 2>&1
        grep -q 'Error from server (RequestEntityTooLarge)' "$KC_TMP/413.out" ||
            { echo "round $i:"; cat "$KC_TMP/413.out"; return 1; }
    done
}
check "a 3 MB body over --max-body 64Ki: kubectl reads 413 RequestEntityTooLarge, 20 of 20" \
    t_body_too_large
kc_stop && pass "--max-body server stops cleanly" || fail "--max-body server exit status"
kc_summary
