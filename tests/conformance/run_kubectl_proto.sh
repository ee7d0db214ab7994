#!/usr/bin/env bash
# run_kubectl_proto.sh KCACHE — kubectl's typed generators send protobuf request bodies
# (Content-Type: application/vnd.kubernetes.protobuf; spec §6.2) and read protobuf replies:
# each `kubectl create <generator>` below must succeed against `kcache serve`, and the object it
# stored must equal the one stored from the same object sent as JSON (its
# `--dry-run=client -o json` output, renamed, through `kubectl create -f`), but for the metadata
# the server assigns. Also: kubectl's -v=8 log shows the protobuf request and reply.
# Exit 77 when kubectl is missing.
set -u
BIN=${1:?usage: run_kubectl_proto.sh path/to/kcache}
command -v kubectl >/dev/null || { echo "SKIP: kubectl not found"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
. "$(dirname "$0")/lib.sh"
kc_setup

k() { timeout 40 kubectl --kubeconfig "$KC_KUBECONFIG" --cache-dir "$KC_TMP/cache" \
   --request-timeout=20s "$@"; }

kc_start "$BIN" || exit 1

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$KC_TMP/tls.key" -out "$KC_TMP/tls.crt" \
    -days 1 -subj /CN=kcache-test >/dev/null 2>&1

# compare RESOURCE NAME: the protobuf-created NAME and the JSON-created NAME-json agree.
cat >"$KC_TMP/cmp.py" <<'P'
import json, sys
def norm(o):
    md = o.get("metadata", {})
    for k in ("name", "uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"):
        md.pop(k, None)
    # what the server allocates or derives from the name
    md.get("labels", {}).pop("kubernetes.io/metadata.name", None)
    spec = o.get("spec", {})
    if o.get("kind") == "Service":
        spec.pop("clusterIP", None)
        spec.pop("clusterIPs", None)
        for p in spec.get("ports", []):
            p.pop("nodePort", None)
    if o.get("kind") == "Job":  # labels and selector hold the name and a generated uid
        md.pop("labels", None)
        spec.pop("selector", None)
        spec.get("template", {}).get("metadata", {}).pop("labels", None)
    return o
items = json.load(open(sys.argv[1]))["items"]
a, b = norm(items[0]), norm(items[1])
if a != b:
    print("protobuf:", json.dumps(a, sort_keys=True))
    print("json:    ", json.dumps(b, sort_keys=True))
    sys.exit(1)
P
cat >"$KC_TMP/rename.py" <<'P'
import json, sys
o = json.load(sys.stdin)
o["metadata"]["name"] += "-json"
json.dump(o, sys.stdout)
P

# with FLAGS… -- ARGS… — run `kubectl create ARGS…` with FLAGS before ARGS' own "--" (a
# command line of the container).
with() {
    local flags=() a
    while [ "$1" != -- ]; do flags+=("$1"); shift; done
    shift
    local pre=() post=()
    for a in "$@"; do
        if [ ${#post[@]} -gt 0 ] || [ "$a" = -- ]; then post+=("$a"); else pre+=("$a"); fi
    done
    k create "${pre[@]}" "${flags[@]}" "${post[@]}"
}

# gen RESOURCE NAME ARGS… — `kubectl create ARGS…` (protobuf), then the same object as JSON.
gen() {
    local res=$1 name=$2
    shift 2
    with --dry-run=client -o json -- "$@" >"$KC_TMP/$name.dry.json" || return 1
    with -v=8 -- "$@" >"$KC_TMP/$name.log" 2>&1 || { tail -5 "$KC_TMP/$name.log"; return 1; }
    grep -q 'Content-Type: application/vnd.kubernetes.protobuf' "$KC_TMP/$name.log" ||
        { echo "no protobuf request body:"; grep -i 'content-type' "$KC_TMP/$name.log"; return 1; }
    python3 "$KC_TMP/rename.py" <"$KC_TMP/$name.dry.json" >"$KC_TMP/$name.in.json" &&
        k create -f "$KC_TMP/$name.in.json" >/dev/null &&
        k get "$res" "$name" "$name-json" -o json >"$KC_TMP/$name.out" &&
        python3 "$KC_TMP/cmp.py" "$KC_TMP/$name.out"
}

# The generators run concurrently (kubectl's start-up dominates), each into its own files; the
# checks then read their results in order. bg NAME GEN-ARGS…, then result NAME.
BG_PIDS=()
bg() {
    local name=$1
    shift
    (gen "$@" >"$KC_TMP/$name.res" 2>&1; echo $? >"$KC_TMP/$name.rc") &
    BG_PIDS+=($!)
}
result() {
    wait "${BG_PIDS[@]}" # not the server's
    cat "$KC_TMP/$1.res"
    [ "$(cat "$KC_TMP/$1.rc")" = 0 ]
}

bg r1 role r1 role r1 --verb=get,list --resource=pods,deployments.apps
bg cr1 clusterrole cr1 clusterrole cr1 --verb=get --resource=nodes --resource-name=n1
bg cr3 clusterrole cr3 clusterrole cr3 --aggregation-rule=a=b
bg cr2 clusterrole cr2 clusterrole cr2 --verb=get '--non-resource-url=/logs/*'
bg rb1 rolebinding rb1 rolebinding rb1 --role=r1 --user=u --group=g --serviceaccount=default:sa
bg crb1 clusterrolebinding crb1 clusterrolebinding crb1 --clusterrole=cr1 --user=u
bg cj1 cronjob cj1 cronjob cj1 --image=busybox --schedule='*/5 * * * *' -- echo hi
bg ing1 ingress ing1 ingress ing1 --rule='a.example.com/path*=svc:8080,tls=sec' --class=nginx --annotation=x=y
bg pdb1 pdb pdb1 poddisruptionbudget pdb1 --selector=app=x --min-available=50%
bg pc1 priorityclass pc1 priorityclass pc1 --value=1000 --description=d --preemption-policy=Never
bg q1 quota q1 quota q1 --hard=cpu=1,memory=1G,pods=2 --scopes=BestEffort
bg s1 service s1 service clusterip s1 --tcp=80:8080
bg s2 service s2 service externalname s2 --external-name=example.com
bg s3 service s3 service loadbalancer s3 --tcp=80:http
bg tls1 secret tls1 secret tls tls1 --cert="$KC_TMP/tls.crt" --key="$KC_TMP/tls.key"
bg gen1 secret gen1 secret generic gen1 --from-literal=a=b --type=Opaque
bg dr1 secret dr1 secret docker-registry dr1 --docker-username=u --docker-password=p --docker-server=r.example.com
bg d1 deployment d1 deployment d1 --image=nginx --replicas=2 --port=80
bg cm1 configmap cm1 configmap cm1 --from-literal=a=b
bg sa serviceaccount sa serviceaccount sa
bg ns1 namespace ns1 namespace ns1
bg j1 job j1 job j1 --image=busybox -- echo hi
check "create role (protobuf)" result r1
check "create clusterrole (protobuf)" result cr1
check "create clusterrole --aggregation-rule (protobuf)" result cr3
check "create clusterrole --non-resource-url (protobuf)" result cr2
check "create rolebinding (protobuf)" result rb1
check "create clusterrolebinding (protobuf)" result crb1
check "create cronjob (protobuf)" result cj1
check "create ingress (protobuf)" result ing1
check "create poddisruptionbudget (protobuf)" result pdb1
check "create priorityclass (protobuf)" result pc1
check "create quota (protobuf)" result q1
check "create service clusterip (protobuf)" result s1
check "create service externalname (protobuf)" result s2
check "create service loadbalancer (protobuf)" result s3
check "create secret tls (protobuf)" result tls1
check "create secret generic (protobuf)" result gen1
check "create secret docker-registry (protobuf)" result dr1
check "create deployment (protobuf)" result d1
check "create configmap (protobuf)" result cm1
check "create serviceaccount (protobuf)" result sa
check "create namespace (protobuf)" result ns1
check "create job (protobuf)" result j1

t_job_from_cronjob() {
    # the Job carries an ownerReference to the CronJob (uid from a protobuf GET of the CronJob)
    k create job j2 --from=cronjob/cj1 -v=8 >"$KC_TMP/j2.log" 2>&1 || { tail -5 "$KC_TMP/j2.log"; return 1; }
    grep -q 'Content-Type: application/vnd.kubernetes.protobuf' "$KC_TMP/j2.log" &&
        [ "$(k get job j2 -o jsonpath='{.metadata.ownerReferences[0].uid}')" = \
          "$(k get cronjob cj1 -o jsonpath='{.metadata.uid}')" ] &&
        [ "$(k get job j2 -o jsonpath='{.spec.template.spec.containers[0].command[1]}')" = hi ]
}
check "create job --from=cronjob (protobuf)" t_job_from_cronjob

t_protobuf_replies() {
    # kubectl's typed create asks for "application/vnd.kubernetes.protobuf,application/json" and
    # reads the 201 reply in protobuf (it printed "created" from the decoded object)
    grep -q 'Accept: application/vnd.kubernetes.protobuf,application/json' "$KC_TMP/r1.log" &&
        sed -n '/"Response"\|Response Status/,$p' "$KC_TMP/r1.log" |
        grep -q 'Content-Type: application/vnd.kubernetes.protobuf' &&
        grep -q 'role.rbac.authorization.k8s.io/r1 created' "$KC_TMP/r1.log"
}
check "kubectl reads protobuf replies" t_protobuf_replies

kc_stop && pass "server stops cleanly" || fail "server exit status"
kc_summary
