/*
 * openapi.c — the OpenAPI documents of the served resources, from the generated built-in
 * schemas (server/schema: names, types, formats, required; no descriptions) and the CRDs'
 * openAPIV3Schema, so `kubectl explain deployment.spec` lists fields and types and kubectl's
 * default validation (#7) finds what it asks for:
 *   GET /openapi/v3 {"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=H"}, …}} for
 * every served group-version (built-in and custom); H changes when a document's content can (data,
 * resources, a CRD's schema), as kubectl caches documents by it GET /openapi/v3/api/v1,
 * /openapi/v3/apis/{g}/{v} paths: one PATCH operation per resource with
 *                              x-kubernetes-group-version-kind and the fieldValidation parameter
 *                              (what kubectl checks before leaving validation to the server);
 *                              no request body, so kubectl's client-side apply keeps computing
 *                              patches from its compiled-in types;
 *                              components.schemas: each kind's definition (with
 *                              x-kubernetes-group-version-kind) and every definition it
 *                              references; a custom resource's is its version's openAPIV3Schema
 *                              with metadata referring to ObjectMeta
 *   GET /openapi/v2            the same as one Swagger 2.0 JSON document (definitions, paths),
 *                              to clients that accept JSON; a protobuf-only Accept (kubectl's
 *                              v2 fetch) gets kc__openapi_v2_pb: a gnostic openapi_v2.Document
 *                              with swagger and info only (no definitions), so kubectl's
 *                              client-side validation (used for `kind: List` files) finds no
 *                              model and leaves the checking to the server's fieldValidation
 * Runs with srv->mu held by the caller.
 */
#include "server/discovery/discovery_internal.h"

#include "server/schema/schema.h"
#include "server/schema/version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void gv_key(const char *group, const char *version, char *out, size_t cap)
{
    if (group[0])
        snprintf(out, cap, "apis/%s/%s", group, version);
    else
        snprintf(out, cap, "api/%s", version);
}

static json_t *gvk(const kc__rsrc *r, const char *version)
{
    return json_pack("[{s:s,s:s,s:s}]", "group", r->group, "version", version, "kind", r->kind);
}

/* One PATCH operation of r at version (v2: parameters typed inline). */
static json_t *patch_op(const kc__rsrc *r, const char *version, bool v3)
{
    json_t *params = json_array();
    const char *names[] = {"fieldValidation", "fieldManager", "dryRun"};
    for (size_t i = 0; i < 3; i++)
        json_array_append_new(params, v3 ? json_pack("{s:s,s:s,s:{s:s}}", "name", names[i], "in",
                                                     "query", "schema", "type", "string")
                                         : json_pack("{s:s,s:s,s:s}", "name", names[i], "in",
                                                     "query", "type", "string"));
    json_t *g = gvk(r, version);
    json_t *op = json_pack("{s:O,s:s,s:o,s:{s:{s:s}}}", "x-kubernetes-group-version-kind",
                           json_array_get(g, 0), "x-kubernetes-action", "patch", "parameters",
                           params, "responses", "200", "description", "OK");
    json_decref(g);
    return op;
}

static void add_path(json_t *paths, const kc__rsrc *r, const char *version, bool v3)
{
    char p[512];
    if (r->def && (r->def->flags & KC__BI_VIRTUAL)) { /* a review: POST to the collection only */
        snprintf(p, sizeof(p), "/apis/%s/%s/%s%s", r->group, version,
                 r->namespaced ? "namespaces/{namespace}/" : "", r->plural);
        json_t *op = patch_op(r, version, v3);
        json_object_set_new(op, "x-kubernetes-action", json_string("post"));
        json_object_set_new(paths, p, json_pack("{s:o}", "post", op));
        return;
    }
    if (r->group[0])
        snprintf(p, sizeof(p), "/apis/%s/%s/%s%s/{name}", r->group, version,
                 r->namespaced ? "namespaces/{namespace}/" : "", r->plural);
    else
        snprintf(p, sizeof(p), "/api/%s/%s%s/{name}", version,
                 r->namespaced ? "namespaces/{namespace}/" : "", r->plural);
    json_object_set_new(paths, p, json_pack("{s:o}", "patch", patch_op(r, version, v3)));
}

/* Add the definition of r's kind at version to schemas. */
static int add_kind(json_t *schemas, kc__rsrc *r, const char *version, bool v3)
{
    char key[300];
    if (!r->is_crd) {
        int vi = kc__rsrc_version_index(r, version);
        int m = vi >= 0 ? r->model[vi] : -1;
        if (m < 0)
            return 0;
        int rc = kc__schema_openapi_add(schemas, m, v3);
        kc__schema_openapi_key(m, key, sizeof(key));
        json_t *def = json_object_get(schemas, key);
        if (!rc && def && !json_object_get(def, "x-kubernetes-group-version-kind"))
            json_object_set_new(def, "x-kubernetes-group-version-kind", gvk(r, version));
        return rc;
    }
    json_t *versions = kc__crd_versions_ref(r);
    const json_t *s = kc__crd_schema_of(versions, version);
    json_t *def = json_is_object(s) ? json_deep_copy(s) : json_pack("{s:s}", "type", "object");
    json_decref(versions);
    int meta = kc__schema_model("V1ObjectMeta");
    char mkey[200], ref[300];
    kc__schema_openapi_key(meta, mkey, sizeof(mkey));
    snprintf(ref, sizeof(ref), "%s%s", v3 ? "#/components/schemas/" : "#/definitions/", mkey);
    json_t *props = json_object_get(def, "properties");
    if (!props) {
        props = json_object();
        json_object_set_new(def, "properties", props);
    }
    json_object_set_new(props, "metadata",
                        v3 ? json_pack("{s:[{s:s}]}", "allOf", "$ref", ref)
                           : json_pack("{s:s}", "$ref", ref));
    json_object_set_new(def, "x-kubernetes-group-version-kind", gvk(r, version));
    /* "com.example.v1.Widget": the group reversed, as the API server names CRD definitions */
    char rev[256] = "";
    const char *g = r->group;
    for (const char *end = g + strlen(g); end > g;) {
        const char *dot = end;
        while (dot > g && dot[-1] != '.')
            dot--;
        size_t have = strlen(rev);
        snprintf(rev + have, sizeof(rev) - have, "%s%.*s", have ? "." : "", (int)(end - dot), dot);
        end = dot > g ? dot - 1 : g;
    }
    snprintf(key, sizeof(key), "%s.%s.%s", rev, version, r->kind);
    if (json_object_set_new(schemas, key, def) < 0)
        return KC_ENOMEM;
    return kc__schema_openapi_add(schemas, meta, v3);
}

/* paths and schemas of every resource served at group/version (all of them when group is
 * NULL, for v2); false when none is. */
static bool fill(kc_server *srv, const char *group, const char *version, json_t *paths,
                 json_t *schemas, bool v3)
{
    bool any = false;
    for (size_t i = 0; i < srv->n_rsrcs; i++) {
        kc__rsrc *r = srv->rsrcs[i];
        for (size_t v = 0; v < r->n_versions; v++) {
            const char *ver = r->versions[v];
            if (group && (strcmp(r->group, group) != 0 || strcmp(ver, version) != 0))
                continue;
            if (!kc__rsrc_serves(r, ver))
                continue;
            any = true;
            add_path(paths, r, ver, v3);
            if (add_kind(schemas, r, ver, v3) != 0)
                return false;
        }
    }
    return any;
}

static json_t *gv_doc(kc_server *srv, const char *group, const char *version)
{
    json_t *paths = json_object(), *schemas = json_object();
    if (!fill(srv, group, version, paths, schemas, true)) {
        json_decref(paths);
        json_decref(schemas);
        return NULL;
    }
    return json_pack("{s:s,s:{s:s,s:s},s:o,s:{s:o}}", "openapi", "3.0.0", "info", "title",
                     "Kubernetes", "version", KC__KUBE_VERSION, "paths", paths, "components",
                     "schemas", schemas);
}

/* FNV-1a over what a group-version document is made of. */
static uint64_t fnv(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static json_t *index_doc(kc_server *srv)
{
    json_t *paths = json_object();
    uint64_t data_hash = kc__schema_openapi_hash();
    for (size_t i = 0; i < srv->n_rsrcs; i++) {
        kc__rsrc *r = srv->rsrcs[i];
        for (size_t v = 0; v < r->n_versions; v++) {
            char key[256], url[400];
            if (!kc__rsrc_serves(r, r->versions[v]))
                continue;
            gv_key(r->group, r->versions[v], key, sizeof(key));
            if (json_object_get(paths, key))
                continue;
            /* the hash: the model data, then every resource of the group-version */
            uint64_t h = data_hash;
            for (size_t j = 0; j < srv->n_rsrcs; j++) {
                kc__rsrc *o = srv->rsrcs[j];
                if (strcmp(o->group, r->group) != 0 || !kc__rsrc_serves(o, r->versions[v]))
                    continue;
                h = fnv(fnv(h, o->plural), o->kind);
                if (o->is_crd) {
                    json_t *vs = kc__crd_versions_ref(o);
                    char *d = json_dumps(vs, JSON_COMPACT | JSON_SORT_KEYS);
                    h = fnv(h, d);
                    free(d);
                    json_decref(vs);
                }
            }
            snprintf(url, sizeof(url), "/openapi/v3/%s?hash=%016llX", key, (unsigned long long)h);
            json_object_set_new(paths, key, json_pack("{s:s}", "serverRelativeURL", url));
        }
    }
    return json_pack("{s:o}", "paths", paths);
}

static json_t *v2_doc(kc_server *srv)
{
    json_t *paths = json_object(), *defs = json_object();
    fill(srv, NULL, NULL, paths, defs, false);
    return json_pack("{s:s,s:{s:s,s:s},s:o,s:o}", "swagger", "2.0", "info", "title", "Kubernetes",
                     "version", KC__KUBE_VERSION, "paths", paths, "definitions", defs);
}

static bool pb_only(const char *accept)
{
    return accept && strstr(accept, "protobuf") && !strstr(accept, "json") &&
           !strstr(accept, "*/*");
}

char *kc__openapi_v2_pb(const char *accept, size_t *ret_len)
{
    /* Document{swagger(1): "2.0", info(2): Info{title(1): "Kubernetes", version(2): "v1.34.0"}}
     * in protobuf wire format: tag (field << 3 | 2, length-delimited), length, bytes. */
    static const char doc[] = "\x0a\x03"
                              "2.0"
                              "\x12\x15"
                              "\x0a\x0a"
                              "Kubernetes"
                              "\x12\x07"
                              "v1.34.0";
    if (!pb_only(accept))
        return NULL;
    char *out = malloc(sizeof doc - 1);
    if (!out)
        return NULL;
    memcpy(out, doc, sizeof doc - 1);
    *ret_len = sizeof doc - 1;
    return out;
}

char *kc__openapi_doc(kc_server *srv, const char *path, const char *accept, size_t *ret_len)
{
    json_t *doc = NULL;
    if (!strcmp(path, "/openapi/v3") || !strcmp(path, "/openapi/v3/")) {
        doc = index_doc(srv);
    } else if (kc__starts_with(path, "/openapi/v3/api/")) {
        doc = gv_doc(srv, "", path + strlen("/openapi/v3/api/"));
    } else if (kc__starts_with(path, "/openapi/v3/apis/")) {
        char g[128], v[64];
        const char *s = path + strlen("/openapi/v3/apis/");
        const char *slash = strchr(s, '/');
        if (slash && (size_t)(slash - s) < sizeof(g) && strlen(slash + 1) < sizeof(v) &&
            !strchr(slash + 1, '/')) {
            memcpy(g, s, (size_t)(slash - s));
            g[slash - s] = 0;
            snprintf(v, sizeof(v), "%s", slash + 1);
            doc = gv_doc(srv, g, v);
        }
    } else if (!strcmp(path, "/openapi/v2")) {
        if (!pb_only(accept))
            doc = v2_doc(srv);
    }
    if (!doc)
        return NULL;
    char *out = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (out && ret_len)
        *ret_len = strlen(out);
    return out;
}
