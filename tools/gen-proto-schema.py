#!/usr/bin/env python3
"""gen-proto-schema.py — emit src/server/api/proto_schema_data.c from upstream Kubernetes sources.

The field NUMBERS and wire types come from the upstream generated.proto files (go-to-protobuf
output) of k8s.io/api, k8s.io/apimachinery, k8s.io/apiextensions-apiserver and
k8s.io/kube-aggregator; the JSON side of each field (JSON name, omitempty, ",inline", Go pointer)
comes from the Go struct tags in the same package's .go files, joined to the proto field by its
number (the `protobuf:"…,N,…"` tag). The proto field name is NOT the JSON name in general
(JSONSchemaProps: ref ↔ "$ref", xKubernetesPreserveUnknownFields ↔
"x-kubernetes-preserve-unknown-fields"), which is why the Go tags are read.

Usage (the checkouts are git directories; REV a tag or commit; see tools/proto/SOURCE):
  tools/gen-proto-schema.py --api DIR --apimachinery DIR --apiextensions DIR --aggregator DIR \
      --rev v0.34.0 > src/server/api/proto_schema_data.c
Reads with `git -C DIR show REV:path`, so no work tree is needed.
"""
import argparse
import re
import subprocess
import sys

# (repo key, package dir, API group) — the served group versions (src/server/storage/resources.c)
PACKAGES = [
    ("apimachinery", "pkg/apis/meta/v1", "meta.k8s.io"),
    ("apimachinery", "pkg/runtime", None),
    ("apimachinery", "pkg/util/intstr", None),
    ("apimachinery", "pkg/api/resource", None),
    ("api", "core/v1", ""),
    ("api", "admissionregistration/v1", "admissionregistration.k8s.io"),
    ("apiextensions", "pkg/apis/apiextensions/v1", "apiextensions.k8s.io"),
    ("aggregator", "pkg/apis/apiregistration/v1", "apiregistration.k8s.io"),
    ("api", "apps/v1", "apps"),
    ("api", "autoscaling/v1", "autoscaling"),
    ("api", "autoscaling/v2", "autoscaling"),
    ("api", "batch/v1", "batch"),
    ("api", "certificates/v1", "certificates.k8s.io"),
    ("api", "coordination/v1", "coordination.k8s.io"),
    ("api", "discovery/v1", "discovery.k8s.io"),
    ("api", "events/v1", "events.k8s.io"),
    ("api", "flowcontrol/v1", "flowcontrol.apiserver.k8s.io"),
    ("api", "networking/v1", "networking.k8s.io"),
    ("api", "node/v1", "node.k8s.io"),
    ("api", "policy/v1", "policy"),
    ("api", "rbac/v1", "rbac.authorization.k8s.io"),
    ("api", "resource/v1", "resource.k8s.io"),
    ("api", "scheduling/v1", "scheduling.k8s.io"),
    ("api", "storage/v1", "storage.k8s.io"),
    ("api", "authentication/v1", "authentication.k8s.io"),
    ("api", "authorization/v1", "authorization.k8s.io"),
]

# Messages whose JSON form is not an object of their fields (Go MarshalJSON methods).
SPECIAL = {
    "k8s.io.apimachinery.pkg.apis.meta.v1.Time": "TIME",
    "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime": "MICROTIME",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Duration": "DURATION",
    "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1": "RAW",
    "k8s.io.apimachinery.pkg.runtime.RawExtension": "RAW",
    "k8s.io.apimachinery.pkg.api.resource.Quantity": "QUANTITY",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": "INTSTR",
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON": "RAW",
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray": "OR_ARRAY",
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool": "OR_BOOL",
    "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray":
        "OR_STRARRAY",
}
SCALARS = {"string": "STRING", "bytes": "BYTES", "bool": "BOOL", "int32": "INT32",
           "int64": "INT64", "uint32": "UINT32", "uint64": "UINT64", "double": "DOUBLE",
           "float": "FLOAT"}


def git_show(repo, rev, path):
    return subprocess.run(["git", "-C", repo, "show", f"{rev}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def git_ls(repo, rev, path):
    out = subprocess.run(["git", "-C", repo, "ls-tree", "--name-only", f"{rev}:{path}"],
                         check=True, capture_output=True, text=True).stdout
    return out.split()


FIELD_RE = re.compile(r"^\s*(optional|repeated|required)?\s*([\w.]+|map<\s*\w+\s*,\s*[\w.]+\s*>)"
                      r"\s+(\w+)\s*=\s*(\d+)\s*;")


def parse_proto(text):
    """→ (package, {message: {"fields": [(label, type, name, num)], "comment": str}})."""
    pkg = re.search(r"^package\s+([\w.]+);", text, re.M).group(1)
    msgs, cur, comment = {}, None, []
    for line in text.splitlines():
        s = line.strip()
        if cur is None:
            if s.startswith("//"):
                comment.append(s)
                continue
            m = re.match(r"message\s+(\w+)\s*{", s)
            if m:
                cur = m.group(1)
                msgs[cur] = {"fields": [], "comment": "\n".join(comment)}
            comment = []
            continue
        if s == "}":
            cur = None
            continue
        m = FIELD_RE.match(line)
        if m:
            msgs[cur]["fields"].append((m.group(1) or "optional", m.group(2).replace(" ", ""),
                                        m.group(3), int(m.group(4))))
        elif s and not s.startswith("//"):
            sys.exit(f"gen-proto-schema: unparsed line in {pkg}.{cur}: {s}")
    return pkg, msgs


TAG_RE = re.compile(r"`([^`]*)`")


def parse_go(texts):
    """→ {struct: {num: (json_name, omitempty, inline, pointer)}} from the Go struct tags."""
    structs, cur = {}, None
    for text in texts:
        for line in text.splitlines():
            m = re.match(r"^type\s+(\w+)\s+struct\s*{", line)
            if m:
                cur = m.group(1)
                structs.setdefault(cur, {})
                continue
            if cur and line.startswith("}"):
                cur = None
                continue
            if not cur:
                continue
            code = line.split("//")[0] if "`" not in line.split("//")[0] else line
            t = TAG_RE.search(code)
            if not t:
                continue
            tag = t.group(1)
            pb = re.search(r'protobuf:"[a-z0-9]+,(\d+),', tag)
            if not pb:
                continue
            js = re.search(r'json:"([^"]*)"', tag)
            jname, opts = "", []
            if js:
                parts = js.group(1).split(",")
                jname, opts = parts[0], parts[1:]
            decl = code[:t.start()].split()
            gotype = decl[-1] if decl else ""
            inline = "inline" in opts
            if not js:  # JSONSchemaPropsOr*: no json tag, custom MarshalJSON
                jname = None
            structs[cur][int(pb.group(1))] = (jname, "omitempty" in opts, inline,
                                              gotype.startswith("*"))
    return structs


def load(args):
    repos = {"api": args.api, "apimachinery": args.apimachinery,
             "apiextensions": args.apiextensions, "aggregator": args.aggregator}
    messages = {}  # full name → dict
    types = []     # (apiVersion, kind, full message name)
    for key, d, group in PACKAGES:
        repo = repos[key]
        pkg, msgs = parse_proto(git_show(repo, args.rev, f"{d}/generated.proto"))
        gofiles = [f for f in git_ls(repo, args.rev, d)
                   if f.endswith(".go") and not f.endswith("_test.go")
                   and not f.startswith("zz_generated") and f != "generated.pb.go"]
        go = parse_go(git_show(repo, args.rev, f"{d}/{f}") for f in gofiles)
        version = d.rsplit("/", 1)[1]
        for name, m in msgs.items():
            full = f"{pkg}.{name}"
            tags = go.get(name)
            if tags is None and full not in SPECIAL and "+protobuf.nullable=true" not in m["comment"]:
                print(f"gen-proto-schema: note: no Go struct for {full}; proto names used",
                      file=sys.stderr)
            m["full"], m["pkg"], m["tags"] = full, pkg, tags or {}
            messages[full] = m
            f0 = m["fields"][0] if m["fields"] else None
            if (group is not None and group != "meta.k8s.io" and f0 and f0[2] == "metadata"
                    and f0[1].endswith(("meta.v1.ObjectMeta", "meta.v1.ListMeta"))):
                av = f"{group}/{version}" if group else version
                types.append((av, name, full))
    return messages, types


def resolve(messages, pkg, t):
    if t.startswith("."):
        full = t[1:]
    else:
        full = f"{pkg}.{t}"
    if full not in messages:
        sys.exit(f"gen-proto-schema: unknown message type {t} in {pkg}")
    return full


def build(messages, types):
    order = sorted(messages)  # deterministic
    index = {n: i for i, n in enumerate(order)}
    out_msgs, out_fields, entries = [], [], []

    def listwrap(m):
        return ("+protobuf.nullable=true" in m["comment"] and len(m["fields"]) == 1
                and m["fields"][0][2] == "items")

    for full in order:
        m = messages[full]
        special = SPECIAL.get(full) or ("LISTWRAP" if listwrap(m) else "NONE")
        first = len(out_fields)
        for label, typ, name, num in sorted(m["fields"], key=lambda f: f[3]):
            if m["tags"] and num not in m["tags"]:
                print(f"gen-proto-schema: note: {full} field {num} has no Go tag",
                      file=sys.stderr)
            jname, omit, inline, ptr = m["tags"].get(num, (name, True, False, False))
            if jname is None:
                jname = name
            if jname == "-":
                jname = name
            flags = []
            if omit:
                flags.append("OMIT")
            if inline:
                flags.append("INLINE")
            if ptr:
                flags.append("PTR")
            mm = re.match(r"map<(\w+),([\w.]+)>", typ)
            if mm:
                if mm.group(1) != "string":
                    sys.exit(f"gen-proto-schema: map key {mm.group(1)} in {full}")
                v = mm.group(2)
                if v in SCALARS:
                    vk, vm = SCALARS[v], -1
                else:
                    vk, vm = "MSG", ("ref", resolve(messages, m["pkg"], v))
                out_fields.append([jname, num, "MAP", flags, ("entry", len(entries))])
                entries.append((vk, vm))
                continue
            if label == "repeated":
                flags.append("REP")
            if typ in SCALARS:
                out_fields.append([jname, num, SCALARS[typ], flags, -1])
            else:
                out_fields.append([jname, num, "MSG", flags,
                                   ("ref", resolve(messages, m["pkg"], typ))])
        out_msgs.append([full, first, len(out_fields) - first, special])
    # map entries become messages {1: key string, 2: value} after the named ones
    nmsg = len(out_msgs)
    for i, (vk, vm) in enumerate(entries):
        first = len(out_fields)
        out_fields.append(["key", 1, "STRING", [], -1])
        out_fields.append(["value", 2, vk, [], vm])
        out_msgs.append([f"(map entry {i})", first, 2, "MAPENTRY"])
    for f in out_fields:
        r = f[4]
        if isinstance(r, tuple):
            f[4] = index[r[1]] if r[0] == "ref" else nmsg + r[1]
    return out_msgs, out_fields, sorted(types), index


def emit(args, msgs, fields, types, index):
    w = sys.stdout.write
    w("/*\n * proto_schema_data.c — GENERATED by tools/gen-proto-schema.py from the upstream\n"
      f" * generated.proto files and Go struct tags at {args.rev} (tools/proto/SOURCE names the\n"
      " * commits); do not edit. "
      f"{len(msgs)} messages, {len(fields)} fields, {len(types)} top-level types.\n */\n")
    w('#include "server/api/proto_schema.h"\n\n// clang-format off\n')
    w("const kc__pbmsg kc__pb_msgs[] = {\n")
    for full, first, n, special in msgs:
        w(f'    {{"{full.rsplit(".", 1)[-1]}", {first}, {n}, KC__PBS_{special}}},\n')
    w("};\nconst size_t kc__pb_nmsgs = sizeof(kc__pb_msgs) / sizeof(kc__pb_msgs[0]);\n\n")
    w("const kc__pbfield kc__pb_fields[] = {\n")
    for jname, num, kind, flags, ref in fields:
        fl = "|".join(f"KC__PBF_{x}" for x in flags) or "0"
        w(f'    {{"{jname}", {num}, KC__PBK_{kind}, {fl}, {ref}}},\n')
    w("};\nconst size_t kc__pb_nfields = sizeof(kc__pb_fields) / sizeof(kc__pb_fields[0]);\n\n")
    w("/* apiVersion, kind → message; sorted by apiVersion then kind */\n")
    w("const kc__pbtype kc__pb_types[] = {\n")
    for av, kind, full in types:
        w(f'    {{"{av}", "{kind}", {index[full]}}},\n')
    w("};\nconst size_t kc__pb_ntypes = sizeof(kc__pb_types) / sizeof(kc__pb_types[0]);\n")
    for name in ("k8s.io.apimachinery.pkg.runtime.Unknown",
                 "k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent",
                 "k8s.io.apimachinery.pkg.apis.meta.v1.Status"):
        w(f"const int kc__pb_msg_{name.rsplit('.', 1)[1]} = {index[name]};\n")
    w("// clang-format on\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for k in ("api", "apimachinery", "apiextensions", "aggregator"):
        ap.add_argument(f"--{k}", required=True)
    ap.add_argument("--rev", default="v0.34.0")
    args = ap.parse_args()
    messages, types = load(args)
    msgs, fields, types, index = build(messages, types)
    emit(args, msgs, fields, types, index)


if __name__ == "__main__":
    main()
