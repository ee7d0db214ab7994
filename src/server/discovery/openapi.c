/*
 * openapi.c — a minimal OpenAPI v3 surface so `kubectl apply -f` works with its default
 * validation (#7): kubectl only asks whether the PATCH operation of a GVK declares the
 * `fieldValidation` query parameter; when it does, it leaves validation to the server
 * (fieldValidation=Strict, see verbs_write.c) and never needs schemas.
 *   GET /openapi/v3                  {"paths":{"api/v1":{"serverRelativeURL":...},...}} for the
 *                                    built-in group-versions (CRD kinds fall back to Namespace's)
 *   GET /openapi/v3/api/v1, /openapi/v3/apis/{g}/{v}
 *                                    one PATCH path per resource with
 * x-kubernetes-group-version-kind and the fieldValidation parameter; no request body schema, so
 *                                    kubectl computes client-side apply patches from compiled-in
 * types /openapi/v2 and anything else    404 Runs with srv->mu held by the caller.
 */
#include "server/storage/srv.h"

#include <stdio.h>
#include <string.h>

static json_t *gv_doc(kc_server *srv, const char *group, const char *version)
{
    json_t *paths = json_object();
    bool any = false;
    for (size_t i = 0; i < srv->n_rsrcs; i++) {
        kc__rsrc *r = srv->rsrcs[i];
        if (r->is_crd || strcmp(r->group, group) != 0 || !kc__rsrc_serves(r, version))
            continue;
        any = true;
        char p[512];
        if (r->group[0])
            snprintf(p, sizeof(p), "/apis/%s/%s/%s%s/{name}", r->group, version,
                     r->namespaced ? "namespaces/{namespace}/" : "", r->plural);
        else
            snprintf(p, sizeof(p), "/api/%s/%s%s/{name}", version,
                     r->namespaced ? "namespaces/{namespace}/" : "", r->plural);
        json_t *op = json_pack(
            "{s:{s:s,s:s,s:s},s:s,s:[{s:s,s:s,s:{s:s}},{s:s,s:s,s:{s:s}},{s:s,s:s,s:{s:s}}],"
            "s:{s:{s:s}}}",
            "x-kubernetes-group-version-kind", "group", r->group, "version", version, "kind",
            r->kind, "x-kubernetes-action", "patch", "parameters", "name", "fieldValidation", "in",
            "query", "schema", "type", "string", "name", "fieldManager", "in", "query", "schema",
            "type", "string", "name", "dryRun", "in", "query", "schema", "type", "string",
            "responses", "200", "description", "OK");
        json_object_set_new(paths, p, json_pack("{s:o}", "patch", op));
    }
    if (!any) {
        json_decref(paths);
        return NULL;
    }
    return json_pack("{s:s,s:{s:s,s:s},s:o,s:{s:{}}}", "openapi", "3.0.0", "info", "title",
                     "Kubernetes", "version", "v1.33.0", "paths", paths, "components", "schemas");
}

char *kc__openapi_v3(kc_server *srv, const char *path, size_t *ret_len)
{
    json_t *doc = NULL;
    if (!strcmp(path, "/openapi/v3") || !strcmp(path, "/openapi/v3/")) {
        json_t *paths = json_object();
        for (size_t i = 0; i < srv->n_rsrcs; i++) {
            kc__rsrc *r = srv->rsrcs[i];
            if (r->is_crd)
                continue;
            char key[256], url[300];
            if (r->group[0])
                snprintf(key, sizeof(key), "apis/%s/%s", r->group, r->versions[0]);
            else
                snprintf(key, sizeof(key), "api/%s", r->versions[0]);
            snprintf(url, sizeof(url), "/openapi/v3/%s?hash=kcache", key);
            json_object_set_new(paths, key, json_pack("{s:s}", "serverRelativeURL", url));
        }
        doc = json_pack("{s:o}", "paths", paths);
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
    }
    if (!doc)
        return NULL;
    char *out = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (out && ret_len)
        *ret_len = strlen(out);
    return out;
}
