#!/usr/bin/python3
"""python_webhooks.py KUBECONFIG CA_BASE64 — python3-kubernetes through `kcache serve`'s admission
chain (issue 32 points 6 and 8), the webhook being admission_webhook.py behind the Service
wh.default:443. Rule ids are those of the admission semantics the server follows:
  - a denial (CH7) raises ApiException with the webhook's code (400) and the Status message
    `admission webhook "deny.example.com" denied the request: no colors allowed`, through
    CoreV1Api (ConfigMap) and CustomObjectsApi (a CRD's object); the object is not stored
  - the mutating webhook's default label (CH1, JP4) is on the object the create returns and on a
    later read, for both APIs
  - a webhook's warning (AR13) reaches the client as a Warning header (`299 - "TEXT"`)
  - failurePolicy Fail: a webhook answering 500 and an unreachable one give 500 with the
    `failed calling webhook` text (CH9, CH10); failurePolicy Ignore lets the create through (CH11)
Prints one PASS/FAIL line per check; exit 1 if any failed.
"""
import json
import sys
import time

from kubernetes import client, config
from kubernetes.client.rest import ApiException

from conformance_check import check, results

KCFG, CA = sys.argv[1], sys.argv[2]
NS = "default"
WARN_TEXT = "tier label defaulted by the webhook"  # admission_webhook.py's /warn
DENY = 'admission webhook "deny.example.com" denied the request: no colors allowed'


config.load_kube_config(config_file=KCFG)
v1 = client.CoreV1Api()
co = client.CustomObjectsApi()
adm = client.AdmissionregistrationV1Api()
ext = client.ApiextensionsV1Api()

RULES = [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
          "resources": ["configmaps"]},
         {"operations": ["CREATE", "UPDATE"], "apiGroups": ["example.com"], "apiVersions": ["v1"],
          "resources": ["widgets"]}]


def hook(name, path, policy, url=None, rules=RULES):
    cc = {"url": url} if url else {
        "service": {"name": "wh", "namespace": "default", "path": path, "port": 443},
        "caBundle": CA}
    return {"name": name, "clientConfig": cc, "rules": rules, "failurePolicy": policy,
            "sideEffects": "None", "admissionReviewVersions": ["v1"], "timeoutSeconds": 5}


def vwc(name, *hooks):
    return {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration", "metadata": {"name": name},
            "webhooks": list(hooks)}


def cm(name, key):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data={key: "1"})


def widget(name, key):
    return {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": NS}, "data": {key: "1"}}


def create_widget(body):
    return co.create_namespaced_custom_object("example.com", "v1", NS, "widgets", body)


def denied(fn, code, message, reason=None):
    try:
        fn()
    except ApiException as e:
        st = json.loads(e.body)
        assert e.status == code, (e.status, e.body)
        assert st["kind"] == "Status" and st["code"] == code, st
        assert st["message"] == message, st["message"]
        assert st["status"] == "Failure" and st.get("reason") == reason, st
        return st
    raise AssertionError("the create was not refused")


# The CRD first (no webhook yet), until its objects can be listed (bounded).
ext.create_custom_resource_definition({
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                       "listKind": "WidgetList"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                 "openAPIV3Schema": {"type": "object",
                                     "x-kubernetes-preserve-unknown-fields": True}}}]}})
deadline = time.monotonic() + 20
while True:
    try:
        co.list_namespaced_custom_object("example.com", "v1", NS, "widgets")
        break
    except ApiException:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.1)

adm.create_validating_webhook_configuration(vwc("deny", hook("deny.example.com", "/deny", "Fail")))
adm.create_mutating_webhook_configuration({
    "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
    "metadata": {"name": "mutate"},
    "webhooks": [dict(hook("mutate.example.com", "/mutate", "Fail"), reinvocationPolicy="Never")]})


@check("CoreV1Api: denial is ApiException 400 with the webhook's message (CH7)")
def _():
    denied(lambda: v1.create_namespaced_config_map(NS, cm("bad", "color")), 400, DENY)
    try:
        v1.read_namespaced_config_map("bad", NS)
        raise AssertionError("denied ConfigMap stored")
    except ApiException as e:
        assert e.status == 404, e.status


@check("CustomObjectsApi: denial is ApiException 400 with the webhook's message (CH7)")
def _():
    denied(lambda: create_widget(widget("bad", "color")), 400, DENY)


@check("CoreV1Api: mutating default on the created object and on a read (CH1, JP4)")
def _():
    c = v1.create_namespaced_config_map(NS, cm("ok", "size"))
    assert c.metadata.labels == {"tier": "default"}, c.metadata.labels
    r = v1.read_namespaced_config_map("ok", NS)
    assert r.metadata.labels == {"tier": "default"}, r.metadata.labels


@check("CustomObjectsApi: mutating default on the created object and on a read (CH1, JP4)")
def _():
    c = create_widget(widget("ok", "size"))
    assert c["metadata"]["labels"] == {"tier": "default"}, c["metadata"]
    r = co.get_namespaced_custom_object("example.com", "v1", NS, "widgets", "ok")
    assert r["metadata"]["labels"] == {"tier": "default"}, r["metadata"]
    assert r["data"] == {"size": "1"}, r


@check("a webhook's warning reaches the client as a Warning header (AR13)")
def _():
    adm.create_validating_webhook_configuration(vwc("warn", hook("warn.example.com", "/warn",
                                                                 "Fail")))
    try:
        _, status, headers = v1.create_namespaced_config_map_with_http_info(NS, cm("w", "size"))
        assert status == 201, status
        assert headers.get("Warning") == '299 - "%s"' % WARN_TEXT, headers.get("Warning")
    finally:
        adm.delete_validating_webhook_configuration("warn")


@check("failurePolicy Fail, webhook answering 500: the server's text (CH9, CH10)")
def _():
    adm.create_validating_webhook_configuration(vwc("broken", hook("fail.example.com", "/fail",
                                                                   "Fail")))
    try:
        denied(lambda: v1.create_namespaced_config_map(NS, cm("f1", "size")), 500,
               'Internal error occurred: failed calling webhook "fail.example.com": failed to '
               'call webhook: an error on the server ("broken") has prevented the request from '
               'succeeding', "InternalError")
    finally:
        adm.delete_validating_webhook_configuration("broken")


UNREACHABLE = "https://127.0.0.1:1/unreachable"


@check("failurePolicy Fail, unreachable webhook: 500 failed calling webhook (CH9, CH10)")
def _():
    adm.create_validating_webhook_configuration(vwc("gone", hook("gone.example.com", None, "Fail",
                                                                 url=UNREACHABLE)))
    try:
        for fn in (lambda: v1.create_namespaced_config_map(NS, cm("u1", "size")),
                   lambda: create_widget(widget("u1", "size"))):
            try:
                fn()
                raise AssertionError("the create went through")
            except ApiException as e:
                st = json.loads(e.body)
                assert e.status == 500 and st["code"] == 500, e.body
                assert st["reason"] == "InternalError", st
                want = ('Internal error occurred: failed calling webhook "gone.example.com": '
                        'failed to call webhook: Post "%s?timeout=5s": ' % UNREACHABLE)
                assert st["message"].startswith(want), st["message"]
    finally:
        adm.delete_validating_webhook_configuration("gone")


@check("failurePolicy Ignore, unreachable webhook: the create goes through (CH11)")
def _():
    adm.create_validating_webhook_configuration(vwc("gone", hook("gone.example.com", None,
                                                                 "Ignore", url=UNREACHABLE)))
    try:
        c = v1.create_namespaced_config_map(NS, cm("u2", "size"))
        assert c.metadata.labels == {"tier": "default"}, c.metadata.labels
        w = create_widget(widget("u2", "size"))
        assert w["metadata"]["name"] == "u2", w
    finally:
        adm.delete_validating_webhook_configuration("gone")


print("== %d passed, %d failed" % (results.count(True), results.count(False)), flush=True)
sys.exit(0 if all(results) else 1)
