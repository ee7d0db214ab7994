#!/usr/bin/python3
"""python_conformance.py KUBECONFIG URL — python3-kubernetes against `kcache serve`.

Checks (spec §9 numbers): CRUD (#9, #26, #38, #48), paginated list with continue (#67), watch from
a list RV with ordered events (#75, #77, #78), resume from the last RV, resume after server-side
watch closes (#99), 410 after POST /admin/compact (#83, #100), conflict on a stale update (#27),
404 Status parsing (#21). Prints one PASS/FAIL line per check; exit 1 if any failed.
"""
import json
import sys
import threading
import urllib.request

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from conformance_check import check, results

KCFG, URL = sys.argv[1], sys.argv[2]
NS = "pyconf"


def admin(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else b""
    req = urllib.request.Request(URL + path, data=data if method != "GET" else None, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read()


config.load_kube_config(config_file=KCFG)
v1 = client.CoreV1Api()


def cm(name, suite="py", **data):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels={"suite": suite}),
                              data=data or {"k": "v"})


def bounded_stream(w, fn, limit_s=20, **kw):
    """Iterate a watch with a watchdog that stops it after limit_s seconds."""
    t = threading.Timer(limit_s, w.stop)
    t.start()
    try:
        for ev in w.stream(fn, **kw):
            yield ev
    finally:
        t.cancel()


v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))


@check("CRUD: create 201 with uid/RV, read, replace bumps RV, patch, delete (#9 #26 #38 #48)")
def _():
    c = v1.create_namespaced_config_map(NS, cm("crud"))
    assert c.metadata.uid and int(c.metadata.resource_version) > 0
    assert c.metadata.creation_timestamp is not None
    r = v1.read_namespaced_config_map("crud", NS)
    assert r.metadata.resource_version == c.metadata.resource_version
    r.data["k"] = "v2"
    u = v1.replace_namespaced_config_map("crud", NS, r)
    assert int(u.metadata.resource_version) > int(c.metadata.resource_version)
    p = v1.patch_namespaced_config_map("crud", NS, {"data": {"extra": "x"}})
    assert p.data == {"k": "v2", "extra": "x"}, p.data
    v1.delete_namespaced_config_map("crud", NS)
    try:
        v1.read_namespaced_config_map("crud", NS)
        raise AssertionError("still there after delete")
    except ApiException as e:
        assert e.status == 404


@check("paginated list: limit + continue yields every item once, one RV for all pages (#67)")
def _():
    for i in range(25):
        v1.create_namespaced_config_map(NS, cm("page-%02d" % i, suite="page"))
    names, rvs, pages, cont = [], set(), 0, None
    while True:
        lst = v1.list_namespaced_config_map(NS, limit=10, _continue=cont, label_selector="suite=page")
        pages += 1
        names += [o.metadata.name for o in lst.items]
        rvs.add(lst.metadata.resource_version)
        cont = lst.metadata._continue
        if not cont:
            break
        assert len(lst.items) <= 10
    assert pages == 3, pages
    assert names == ["page-%02d" % i for i in range(25)], names
    assert len(rvs) == 1, rvs


@check("watch from a list RV: only later changes, in order, ADDED/MODIFIED/DELETED (#75 #77 #78)")
def _():
    lst = v1.list_namespaced_config_map(NS)
    rv = lst.metadata.resource_version
    a = v1.create_namespaced_config_map(NS, cm("w1"))
    b = v1.patch_namespaced_config_map("w1", NS, {"data": {"k": "changed"}})
    v1.delete_namespaced_config_map("w1", NS)
    w = watch.Watch()
    got = []
    for ev in bounded_stream(w, v1.list_namespaced_config_map, namespace=NS, resource_version=rv,
                             timeout_seconds=15):
        got.append((ev["type"], ev["object"].metadata.name, int(ev["object"].metadata.resource_version)))
        if len(got) == 3:
            w.stop()
    assert [g[:2] for g in got] == [("ADDED", "w1"), ("MODIFIED", "w1"), ("DELETED", "w1")], got
    assert got[0][2] == int(a.metadata.resource_version)
    assert got[1][2] == int(b.metadata.resource_version)
    assert got[0][2] < got[1][2] < got[2][2], got


@check("resume: a new watch from the last seen RV gets the remaining events only")
def _():
    rv = v1.list_namespaced_config_map(NS).metadata.resource_version
    for i in range(6):
        v1.create_namespaced_config_map(NS, cm("r%d" % i))
    w = watch.Watch()
    first = []
    for ev in bounded_stream(w, v1.list_namespaced_config_map, namespace=NS, resource_version=rv,
                             timeout_seconds=15):
        first.append(ev["object"].metadata)
        if len(first) == 3:
            w.stop()
    w2 = watch.Watch()
    rest = []
    for ev in bounded_stream(w2, v1.list_namespaced_config_map, namespace=NS,
                             resource_version=first[-1].resource_version, timeout_seconds=15):
        rest.append(ev["object"].metadata)
        if len(rest) == 3:
            w2.stop()
    assert [m.name for m in first + rest] == ["r%d" % i for i in range(6)], [m.name for m in first + rest]


@check("server closes the watch every 2 events: Watch.stream resumes with no loss or duplicate (#99)")
def _():
    rv = v1.list_namespaced_config_map(NS).metadata.resource_version
    admin("PUT", "/admin/faults", {"watchCloseEvery": 2})
    try:
        for i in range(7):
            v1.create_namespaced_config_map(NS, cm("c%d" % i))
        w = watch.Watch()
        got = []
        for ev in bounded_stream(w, v1.list_namespaced_config_map, namespace=NS, resource_version=rv):
            got.append(ev["object"].metadata.name)
            if len(got) == 7:
                w.stop()
        assert got == ["c%d" % i for i in range(7)], got
    finally:
        admin("PUT", "/admin/faults", {"watchCloseEvery": 0})


@check("after POST /admin/compact a watch from an old RV raises ApiException 410 Expired (#83 #100)")
def _():
    old = v1.list_namespaced_config_map(NS).metadata.resource_version
    v1.create_namespaced_config_map(NS, cm("compact-1"))
    v1.create_namespaced_config_map(NS, cm("compact-2"))
    admin("POST", "/admin/compact")
    w = watch.Watch()
    try:
        for _ev in bounded_stream(w, v1.list_namespaced_config_map, namespace=NS,
                                  resource_version=old, timeout_seconds=10):
            pass
        raise AssertionError("no 410 from an expired RV")
    except ApiException as e:
        assert e.status == 410, e
    # relist and watch again from the new RV works
    rv = v1.list_namespaced_config_map(NS).metadata.resource_version
    v1.create_namespaced_config_map(NS, cm("compact-3"))
    w = watch.Watch()
    for ev in bounded_stream(w, v1.list_namespaced_config_map, namespace=NS, resource_version=rv,
                             timeout_seconds=10):
        assert ev["object"].metadata.name == "compact-3"
        w.stop()


@check("stale update returns 409 Conflict (#27)")
def _():
    v1.create_namespaced_config_map(NS, cm("conf"))
    stale = v1.read_namespaced_config_map("conf", NS)
    fresh = v1.read_namespaced_config_map("conf", NS)
    fresh.data["k"] = "first"
    v1.replace_namespaced_config_map("conf", NS, fresh)
    stale.data["k"] = "second"
    try:
        v1.replace_namespaced_config_map("conf", NS, stale)
        raise AssertionError("stale update accepted")
    except ApiException as e:
        assert e.status == 409, e
        st = json.loads(e.body)
        assert st["reason"] == "Conflict", st
        assert "has been modified" in st["message"], st


@check("404 is a full metav1.Status (#21)")
def _():
    try:
        v1.read_namespaced_config_map("does-not-exist", NS)
        raise AssertionError("no 404")
    except ApiException as e:
        assert e.status == 404
        st = json.loads(e.body)
        assert st["kind"] == "Status" and st["apiVersion"] == "v1", st
        assert st["status"] == "Failure" and st["reason"] == "NotFound" and st["code"] == 404, st
        assert st["details"]["name"] == "does-not-exist" and st["details"]["kind"] == "configmaps", st
        assert "metadata" in st and st["message"], st


print("== %d passed, %d failed" % (results.count(True), results.count(False)), flush=True)
sys.exit(0 if all(results) else 1)
