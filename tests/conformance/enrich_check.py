#!/usr/bin/env python3
"""enrich_check.py — part B of run_enrich.sh: `kcache enrich --daemon` plus four
`kcache enrich --mmexternal --socket` helpers, driven line by line as rsyslog's mmexternal does
(one fulljson line in, one reply line out, half-duplex), against `kcache serve`.

Environment (set by run_enrich.sh): KC_BIN, KC_TMP, KC_KUBECONFIG, KC_ERR (the server's request
log), KC_PID (the server). Prints PASS:/FAIL: lines; spec enrich-semantics.md §9 item numbers in
each name.
"""
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

BIN, TMP = os.environ["KC_BIN"], os.environ["KC_TMP"]
KC, SERVER_LOG, SERVER_PID = os.environ["KC_KUBECONFIG"], os.environ["KC_ERR"], int(os.environ["KC_PID"])
SOCK = os.path.join(TMP, "enrich.sock")
GRACE_S = 8
IDS = {k: (c * 64) for k, c in (("A", "a"), ("B1", "b"), ("B2", "c"), ("BIG", "d"), ("FAR", "e"))}
FAILED = 0


def result(ok, name, detail=""):
    global FAILED
    print(("PASS: " if ok else "FAIL: ") + name + ("" if ok else "  " + str(detail)[:600]), flush=True)
    FAILED += 0 if ok else 1
    return ok


def kubectl(*args, stdin=None):
    r = subprocess.run(["kubectl", "--kubeconfig", KC, "--cache-dir", os.path.join(TMP, "kcache-kubectl"), *args],
                       input=stdin, capture_output=True, text=True, timeout=40)
    if r.returncode:
        raise RuntimeError("kubectl %s: %s" % (" ".join(args), r.stderr))
    return r.stdout


def create_pod(name, node, cid, annotations=None, labels=None):
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "shop", "labels": labels or {"app.kubernetes.io/name": name},
                        "annotations": annotations or {}},
           "spec": {"nodeName": node, "containers": [{"name": "app", "image": "nginx:1.27"}]}}
    kubectl("create", "-f", "-", stdin=json.dumps(pod))
    status = {"status": {"podIP": "10.0.0.9", "containerStatuses": [
        {"name": "app", "image": "nginx:1.27", "imageID": "docker.io/nginx@sha256:ab", "containerID": "containerd://" + cid,
         "ready": True, "restartCount": 0, "started": True, "state": {"running": {}}, "lastState": {}}]}}
    kubectl("patch", "pod", name, "-n", "shop", "--subresource=status", "--type=merge", "-p", json.dumps(status))
    return json.loads(kubectl("get", "pod", name, "-n", "shop", "-o", "json"))["metadata"]["uid"]


def record(pod, cid, msg="m"):
    return {"msg": msg, "$!": {"metadata": {"filename": "/var/log/containers/%s_shop_app-%s.log" % (pod, cid)}}}


class Helper:
    def __init__(self, *extra, standalone=False, sock=SOCK):
        where = ["--standalone", "--server", os.environ["KC_URL"], "--node", "n1"] if standalone else \
            ["--socket", sock, "--socket-timeout", "2s"]
        self.p = subprocess.Popen([BIN, "enrich", "--mmexternal", *where, *extra],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={})

    def ask(self, rec, timeout=5.0):
        """One exchange; returns (reply dict or None, seconds)."""
        t0 = time.monotonic()
        self.p.stdin.write((json.dumps(rec) + "\n").encode())
        self.p.stdin.flush()
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            return None, time.monotonic() - t0
        line = self.p.stdout.readline()
        return json.loads(line), time.monotonic() - t0

    def k8s(self, rec):
        rep, _ = self.ask(rec)
        return ((rep or {}).get("$!") or {}).get("kubernetes") or {}

    def close(self):
        self.p.stdin.close()
        t0 = time.monotonic()
        try:
            rc = self.p.wait(timeout=1.5)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = -9
        return rc, time.monotonic() - t0, self.p.stderr.read()


def until(fn, secs):
    end = time.monotonic() + secs
    while True:
        v = fn()
        if v or time.monotonic() > end:
            return v
        time.sleep(0.05)


def pod_gets(pattern):
    with open(SERVER_LOG, errors="replace") as f:
        return len(re.findall(pattern, f.read()))


def start_daemon(*where, sock=SOCK):
    where = where or ("--kubeconfig", KC)
    d = subprocess.Popen([BIN, "enrich", "--daemon", "--socket", sock, "--node", "n1", *where,
                          "--deleted-grace", "%ds" % GRACE_S, "--health-listen", "127.0.0.1:0"],
                         stdout=subprocess.PIPE, stderr=open(os.path.join(TMP, "daemon.err"), "a"), env={})
    r, _, _ = select.select([d.stdout], [], [], 20)
    line = d.stdout.readline().decode() if r else ""
    if "serving on" not in line:
        raise RuntimeError("daemon did not start: %r %s" % (line, open(os.path.join(TMP, "daemon.err")).read()))
    m = re.search(r"health on (\S+)", line)
    return d, (m.group(1) if m else None)


def http(url, method="GET", body=None):
    """(status, text) of one request; urllib's HTTPError is an answer too."""
    req = urllib.request.Request(url, method=method, data=json.dumps(body).encode() if body is not None else None)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def metric(health, name):
    """The value of one series of the daemon's /metrics (name with its labels), or None."""
    _, text = http(health + "/metrics")
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


def faults(body):
    status, text = http(os.environ["KC_URL"] + "/admin/faults", "PUT", body)
    if status != 200:
        raise RuntimeError("PUT /admin/faults %s: %s %s" % (body, status, text))


def cold_start():
    """9.14 (CA4, MX9): the API server unreachable from the start — the daemon serves anyway, a
    reply carries the file-derived fields well within responseTimeout=2000 (the 2 s bound is
    rsyslog's timeout, a correctness bound), and /readyz says 503 naming the pod informer."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    dead = "http://127.0.0.1:%d" % s.getsockname()[1]  # bound, never listening: refused
    sock = os.path.join(TMP, "cold.sock")
    d, health = start_daemon("--server", dead, sock=sock)
    x = Helper(sock=sock)
    rep, dt = x.ask(record("web-0", IDS["A"]))
    k = ((rep or {}).get("$!") or {}).get("kubernetes") or {}
    result(dt < 2.0 and k.get("pod_name") == "web-0" and k.get("namespace_name") == "shop" and "pod_id" not in k,
           "9.14: cold start, API server unreachable: file-derived reply in %.2fs" % dt, rep)
    until(lambda: "last error" in http(health + "/readyz?verbose")[1], 5)
    status, text = http(health + "/readyz?verbose")
    result(status == 503 and "[-]informer enrich-pods failed: not synced" in text and "last error" in text,
           "/readyz: 503 before the first sync, naming the informer and its last error", (status, text))
    s.close()  # an API server comes up at that address: the daemon lists, /readyz turns 200
    srv = subprocess.Popen([BIN, "serve", "--listen", dead[7:], "--quiet"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        synced = until(lambda: http(health + "/readyz")[0] == 200, 15)
        status, text = http(health + "/readyz?verbose")
        result(synced and "[+]informer enrich-pods ok" in text and "[+]informer enrich-namespaces ok" in text,
               "/readyz: 200 once the informers have listed, naming both", text)
    finally:
        x.close()
        d.send_signal(signal.SIGTERM)
        d.wait(timeout=10)
        srv.terminate()
        srv.wait(timeout=10)


def ca5(h, health):
    """CA5: a miss after sync — a pod of another node, or none at all — is answered at once with
    the file-derived fields and fetched by one rate-limited background GET; later records get the
    fetched pod (its node named), a 404 is remembered (one GET however often it is asked)."""
    far_get = r"GET /api/v1/namespaces/shop/pods/far "
    base = pod_gets(far_get)  # the test's own kubectl get
    first, dt = h[0].ask(record("far", IDS["FAR"]))
    k = ((first or {}).get("$!") or {}).get("kubernetes") or {}
    result(k.get("pod_name") == "far" and "pod_id" not in k and dt < 1.0,
           "CA4/CA5: a pod of another node: the first reply file-derived, not waiting (%.3fs)" % dt, first)
    ok = until(lambda: h[1].k8s(record("far", IDS["FAR"])).get("host") == "n2", 10)
    for _ in range(20):
        h[2].k8s(record("far", IDS["FAR"]))
    result(ok and pod_gets(far_get) - base == 1, "CA5: then enriched from one background GET (host n2; GETs: %d)"
           % (pod_gets(far_get) - base))
    # a new container id per record: the helper's answer cache (keyed by it) does not answer,
    # every record reaches the daemon
    for i in range(30):
        rep = h[3].k8s(record("ghost", "%064x" % i))
    until(lambda: pod_gets(r"GET /api/v1/namespaces/shop/pods/ghost 404") >= 1, 5)
    for i in range(30):
        rep = h[3].k8s(record("ghost", "%064x" % (100 + i)))
    neg = metric(health, "kcache_enrich_fetch_lookups_total{result=\"negative\"}")
    result(pod_gets(r"GET /api/v1/namespaces/shop/pods/ghost ") == 1 and neg and neg >= 1 and
           rep.get("pod_name") == "ghost" and "pod_id" not in rep,
           "CA5: a 404 is remembered (60 lookups, 1 GET, %s negative hits)" % neg, rep)
    # 9.19 through the GET path: a pod over 64 KiB on another node, fetched whole, once
    create_pod("bigfar", "n2", IDS["FAR"], annotations={"blob": "y" * 70000})
    base = pod_gets(r"GET /api/v1/namespaces/shop/pods/bigfar 200")
    flb = Helper("--format=fluentbit")
    ok = until(lambda: len(flb.k8s(record("bigfar", IDS["FAR"])).get("annotations", {}).get("blob", "")) == 70000, 10)
    for _ in range(10):
        flb.k8s(record("bigfar", IDS["FAR"]))
    n = pod_gets(r"GET /api/v1/namespaces/shop/pods/bigfar 200") - base
    result(ok and n == 1, "9.19 (AN11): a 70 KiB pod fetched by GET is served whole, one GET for 11 records (%d)" % n)
    flb.close()
    # 9.20 (AN5): every GET 429 with Retry-After 1 s: replies flow file-derived; GETs paced
    faults({"rate429": "1:get", "retryAfterSeconds": 1})
    t0, slow, bare = time.monotonic(), 0.0, True
    while time.monotonic() - t0 < 3.0:
        for i in range(10):
            rep, dt = h[0].ask(record("busy-%d" % i, IDS["FAR"]))
            slow = max(slow, dt)
            k = ((rep or {}).get("$!") or {}).get("kubernetes") or {}
            bare = bare and k.get("pod_name") == "busy-%d" % i and "pod_id" not in k
    window = time.monotonic() - t0
    faults({"rate429": "0"})
    n429 = pod_gets(r"GET /api/v1/namespaces/shop/pods/busy-\d+ 429")
    # one GET, then one per Retry-After (1 s) pause: at most 1 + window/1 s, plus one in flight
    result(bare and slow < 1.0 and 1 <= n429 <= 2 + int(window),
           "9.20: 429s: replies file-derived and prompt (max %.3fs); %d GETs in %.1fs (Retry-After 1s)"
           % (slow, n429, window))
    thr = "kcache_enrich_fetch_responses_total{result=\"throttled\"}"
    result(until(lambda: metric(health, thr) == n429, 5),
           "CA5 metrics: throttled responses counted (%s)" % metric(health, thr))
    # 9.13 (CA4, MX7): the API server hung (SIGSTOP): replies still come at once
    os.kill(SERVER_PID, signal.SIGSTOP)
    try:
        slow, got = 0.0, []
        for i in range(20):
            rep, dt = h[1].ask(record("web-0" if i % 2 else "hung-%d" % i, IDS["A"]))
            slow = max(slow, dt)
            got.append((((rep or {}).get("$!") or {}).get("kubernetes") or {}).get("pod_id"))
    finally:
        os.kill(SERVER_PID, signal.SIGCONT)
    result(slow < 0.5 and all(g for g in got[1::2]) and not any(got[0::2]),
           "9.13: API server hung: no reply waits on it (max %.3fs; cached pods enriched)" % slow)


def main():
    cold_start()
    kubectl("create", "namespace", "shop")
    kubectl("label", "namespace", "shop", "team=a")
    uid_a = create_pod("web-0", "n1", IDS["A"])
    uid_b1 = create_pod("web-1", "n1", IDS["B1"])
    create_pod("far", "n2", IDS["FAR"])
    uid_big = create_pod("big", "n1", IDS["BIG"], annotations={"blob": "x" * 70000})
    ns = json.loads(kubectl("get", "namespace", "shop", "-o", "json"))["metadata"]

    daemon, health = start_daemon()
    h = [Helper() for _ in range(4)]
    ok = until(lambda: h[0].k8s(record("web-0", IDS["A"])).get("pod_id") == uid_a, 20)
    result(ok, "daemon synced: web-0 enriched through the socket")
    before = pod_gets(r"GET /api/v1/pods ")
    answers = [x.k8s(record("web-0", IDS["A"])) for x in h for _ in range(25)]
    good = all(a.get("pod_id") == uid_a and a.get("namespace_id") == ns["uid"] and
               a.get("creation_timestamp") == ns["creationTimestamp"] and
               a.get("labels", {}).get("app_kubernetes_io/name") == "web-0" for a in answers)
    result(good, "9.5: four helpers enriched in mmkubernetes shape (namespace creation_timestamp)", answers[-1])
    after = pod_gets(r"GET /api/v1/pods ")
    result(after == before and 1 <= before <= 3,
           "9.21: one pod list+watch for four helpers (GET /api/v1/pods lines: %d, then %d)" % (before, after))
    if health:
        metrics = http(health + "/metrics")[1]
        result("kcache_podmeta_" in metrics and "kcache_enrich_requests_total" in metrics and
               "kcache_enrich_fetch_requests_total" in metrics and
               'kcache_informer_ready{informer="enrich-pods"' in metrics,
               "--health-listen serves /metrics with the podmeta, enrich, fetch and informer series")

    kubectl("label", "pod", "web-0", "-n", "shop", "tier=gold")
    ok = until(lambda: h[1].k8s(record("web-0", IDS["A"])).get("labels", {}).get("tier") == "gold", 10)
    result(ok and h[2].k8s(record("web-0", IDS["A"])).get("labels", {}).get("tier") == "gold",
           "9.16: a label patched on a running pod shows in records read after the watch event")

    # MX2, CA8's fallback: --standalone with --server, an empty environment, no kubeconfig
    sa = Helper(standalone=True)
    ok = until(lambda: sa.k8s(record("web-0", IDS["A"])).get("labels", {}).get("tier") == "gold", 15)
    rc, _, err = sa.close()
    result(ok and rc == 0 and not err, "--standalone --server: own cache, empty environment, silent", err[:200])

    ca5(h, health)

    flb = Helper("--format=fluentbit")
    gets = pod_gets(r"GET /api/v1/namespaces/shop/pods/big ")  # the test's own kubectl get
    big = [flb.k8s(record("big", IDS["BIG"])) for _ in range(5)][-1]
    result(big.get("pod_id") == uid_big and len(big.get("annotations", {}).get("blob", "")) == 70000 and
           pod_gets(r"GET /api/v1/namespaces/shop/pods/big ") == gets,
           "9.19: a pod over 64 KiB enriched whole, never fetched by GET", {k: str(v)[:80] for k, v in big.items()})

    # 9.18: StatefulSet-style re-creation under the same name
    old = h[3].k8s(record("web-1", IDS["B1"]))
    kubectl("delete", "pod", "web-1", "-n", "shop", "--grace-period=0", "--force", "--wait=false")
    uid_b2 = create_pod("web-1", "n1", IDS["B2"], labels={"gen": "2"})
    ok = until(lambda: h[3].k8s(record("web-1", IDS["B2"])).get("pod_id") == uid_b2, 10)
    again = h[3].k8s(record("web-1", IDS["B1"]))
    result(old.get("pod_id") == uid_b1 and ok and again.get("pod_id") == uid_b1 and uid_b1 != uid_b2,
           "9.18: same-name re-creation: the old file's lines get the old UID, the new file's the new",
           (old.get("pod_id"), again.get("pod_id"), uid_b1, uid_b2))

    # 9.17: deleted pod within --deleted-grace, then file-derived
    kubectl("delete", "pod", "web-0", "-n", "shop", "--grace-period=0", "--force", "--wait=false")
    t_del = time.monotonic()
    gone = until(lambda: subprocess.run(["kubectl", "--kubeconfig", KC, "get", "pod", "web-0", "-n", "shop"],
                                        capture_output=True).returncode != 0, 10)
    time.sleep(0.5)  # the watch event has reached the daemon by then (its lag is milliseconds)
    within = h[0].k8s(record("web-0", IDS["A"]))
    ok_after = until(lambda: "pod_id" not in h[0].k8s(record("web-0", IDS["A"])), GRACE_S + 15)
    waited = time.monotonic() - t_del
    after = h[0].k8s(record("web-0", IDS["A"]))
    result(gone and within.get("pod_id") == uid_a and ok_after and waited >= GRACE_S - 1 and
           after.get("pod_name") == "web-0" and after.get("master_url"),
           "9.17: a deleted pod keeps full metadata within --deleted-grace, file-derived after (%.1fs)" % waited,
           (within.get("pod_id"), after))

    # 9.20: the daemon dies → file-derived replies at once; it comes back → enriched again
    daemon.send_signal(signal.SIGTERM)
    result(daemon.wait(timeout=10) == 0, "daemon exits 0 on SIGTERM")
    slow, fields = 0.0, []
    for _ in range(50):
        rep, dt = h[1].ask(record("web-1", IDS["B2"]))
        slow = max(slow, dt)
        fields.append(((rep or {}).get("$!") or {}).get("kubernetes", {}))
    result(slow < 1.0 and all(f.get("pod_name") == "web-1" and "pod_id" not in f for f in fields),
           "9.20: daemon down → every reply file-derived, none slow (max %.3fs)" % slow, fields[-1])
    daemon, health = start_daemon()
    ok = until(lambda: h[1].k8s(record("web-1", IDS["B2"])).get("pod_id") == uid_b2, 15)
    result(ok, "9.20: daemon back → the helper reconnects (backoff) and enriches again")

    # 9.20: the API server goes away → replies still flow from the daemon's cache
    os.kill(SERVER_PID, signal.SIGTERM)
    time.sleep(0.5)
    slow, got = 0.0, []
    for _ in range(20):  # h[1]: reconnected to the restarted daemon above
        rep, dt = h[1].ask(record("web-1", IDS["B2"]))
        slow = max(slow, dt)
        got.append(((rep or {}).get("$!") or {}).get("kubernetes", {}).get("pod_id"))
    result(slow < 1.0 and all(g == uid_b2 for g in got),
           "9.20: API server down → replies still flow, enriched from the cache (max %.3fs)" % slow)
    # ... and misses of unknown pods do not hammer it: a transport failure pauses every GET
    # (backoff 1 s doubling, jittered ×0.5–1.5: the pauses end 0.5, 1.5, 3.5, 7.5 s after the
    # first GET at the earliest), so the GETs are one plus the pauses ended within the window
    sent = "kcache_enrich_fetch_requests_total"
    n0, t0, bare = metric(health, sent), time.monotonic(), True
    for i in range(20):
        k = h[1].k8s(record("dead-%d" % i, IDS["FAR"]))
        bare = bare and k.get("pod_name") == "dead-%d" % i and "pod_id" not in k
    n1, window = metric(health, sent), time.monotonic() - t0
    most = 1 + sum(1 for end in (0.5, 1.5, 3.5, 7.5, 15.5) if end <= window)
    result(bare and 1 <= n1 - n0 <= most,
           "9.20: API server down → misses file-derived, %d GETs attempted in %.1fs" % (n1 - n0, window))

    # 9.12 / 9.15: helpers exit 0 on EOF within 1 s and wrote nothing to stderr
    for x in h + [flb]:
        rc, dt, err = x.close()
        result(rc == 0 and dt < 1.0 and not err, "9.12/9.15: helper exit %d in %.2fs, stderr %r" % (rc, dt, err[:80]))
    daemon.send_signal(signal.SIGTERM)
    daemon.wait(timeout=10)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a setup step failed: one FAIL line saying which
        result(False, "enrich_check.py", repr(e))
    sys.exit(1 if FAILED else 0)
