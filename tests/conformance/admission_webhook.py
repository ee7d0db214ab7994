#!/usr/bin/env python3
"""admission_webhook.py CERT KEY PORTFILE — the admission webhook of run_kubectl_webhooks.sh.

HTTPS on 127.0.0.1:0 (the port is written to PORTFILE once listening), AdmissionReview v1:
  /deny    denies a ConfigMap whose data has a "color" key ("no colors allowed"), allows others
  /mutate  defaults the label tier=default (JSON Patch), unless the object has one
  /fail    answers HTTP 500
  /warn    allows, with the warning "WARN_TEXT" (AR13: the API server passes it on)
"""
import base64
import http.server
import json
import ssl
import sys

WARN_TEXT = "tier label defaulted by the webhook"


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        review = json.loads(self.rfile.read(n))
        req = review["request"]
        obj = req.get("object") or {}
        resp = {"uid": req["uid"], "allowed": True}
        path = self.path.split("?")[0]
        if path == "/fail":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"broken")
            return
        if path == "/deny" and "color" in (obj.get("data") or {}):
            resp["allowed"] = False
            resp["status"] = {"code": 400, "message": "no colors allowed"}
        if path == "/warn":
            resp["warnings"] = [WARN_TEXT]
        if path == "/mutate":
            labels = (obj.get("metadata") or {}).get("labels")
            if labels is None:
                patch = [{"op": "add", "path": "/metadata/labels", "value": {"tier": "default"}}]
            elif "tier" not in labels:
                patch = [{"op": "add", "path": "/metadata/labels/tier", "value": "default"}]
            else:
                patch = []
            resp["patchType"] = "JSONPatch"
            resp["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                           "response": resp}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main():
    cert, key, portfile = sys.argv[1:4]
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(portfile + ".tmp", portfile)
    srv.serve_forever()


if __name__ == "__main__":
    main()
