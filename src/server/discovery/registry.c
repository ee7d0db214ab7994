/*
 * registry.c — the resource registry of the embedded API server and its discovery documents.
 *
 * Built-in resources come from a static table (group, version, plural, kind, scope, short names,
 * status subresource, generation rule, extra field selectors). CRDs add resources through crd.c.
 * Discovery (/api, /apis, /apis/{g}, /api/v1, /apis/{g}/{v}) is built with jansson on each request
 * from the live registry (small documents). Only legacy discovery is served: an aggregated
 * discovery Accept gets the legacy body under plain application/json (#4).
 * All functions run with srv->mu held except kc__rsrc_free.
 */
#include "server/storage/srv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const pod_fields[] = {"spec.nodeName",
                                         "spec.restartPolicy",
                                         "spec.schedulerName",
                                         "spec.serviceAccountName",
                                         "spec.hostNetwork",
                                         "status.phase",
                                         "status.podIP",
                                         "status.nominatedNodeName",
                                         NULL};
static const char *const event_fields[] = {"involvedObject.kind",
                                           "involvedObject.namespace",
                                           "involvedObject.name",
                                           "involvedObject.uid",
                                           "involvedObject.apiVersion",
                                           "involvedObject.resourceVersion",
                                           "involvedObject.fieldPath",
                                           "reason",
                                           "source",
                                           "type",
                                           "reportingComponent",
                                           NULL};
static const char *const secret_fields[] = {"type", NULL};
static const char *const ns_fields[] = {"status.phase", NULL};
static const char *const node_fields[] = {"spec.unschedulable", NULL};
static const char *const job_fields[] = {"status.successful", NULL};

typedef struct builtin {
    const char *group, *version, *plural, *singular, *kind, *shorts, *cats;
    bool namespaced, has_status, return_deleted, graceful;
    kc__name_rule rule;
    enum kc__gen_rule gen;
    const char *const *fields;
} builtin;

#define SUB KC__NAME_DNS1123_SUBDOMAIN
#define LBL KC__NAME_DNS1123_LABEL
static const builtin builtins[] = {
    {"", "v1", "namespaces", "namespace", "Namespace", "ns", NULL, false, true, false, false, LBL,
     KC__GEN_NONE, ns_fields},
    {"", "v1", "pods", "pod", "Pod", "po", "all", true, true, true, true, SUB, KC__GEN_SPEC,
     pod_fields},
    {"", "v1", "services", "service", "Service", "svc", "all", true, true, false, false, LBL,
     KC__GEN_NONE, NULL},
    {"", "v1", "configmaps", "configmap", "ConfigMap", "cm", NULL, true, false, false, false, SUB,
     KC__GEN_NONE, NULL},
    {"", "v1", "secrets", "secret", "Secret", NULL, NULL, true, false, false, false, SUB,
     KC__GEN_NONE, secret_fields},
    {"", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", "sa", NULL, true, false, true,
     false, SUB, KC__GEN_NONE, NULL},
    {"", "v1", "events", "event", "Event", "ev", NULL, true, false, false, false, SUB, KC__GEN_NONE,
     event_fields},
    {"", "v1", "nodes", "node", "Node", "no", NULL, false, true, false, false, SUB, KC__GEN_NONE,
     node_fields},
    {"", "v1", "persistentvolumes", "persistentvolume", "PersistentVolume", "pv", NULL, false, true,
     false, false, SUB, KC__GEN_NONE, NULL},
    {"", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", "pvc",
     NULL, true, true, false, false, SUB, KC__GEN_NONE, NULL},
    {"", "v1", "endpoints", "endpoints", "Endpoints", "ep", NULL, true, false, false, false, SUB,
     KC__GEN_NONE, NULL},
    {"apps", "v1", "deployments", "deployment", "Deployment", "deploy", "all", true, true, false,
     false, SUB, KC__GEN_SPEC_ANNOT, NULL},
    {"apps", "v1", "replicasets", "replicaset", "ReplicaSet", "rs", "all", true, true, false, false,
     SUB, KC__GEN_SPEC, NULL},
    {"apps", "v1", "statefulsets", "statefulset", "StatefulSet", "sts", "all", true, true, false,
     false, SUB, KC__GEN_SPEC, NULL},
    {"apps", "v1", "daemonsets", "daemonset", "DaemonSet", "ds", "all", true, true, false, false,
     SUB, KC__GEN_SPEC, NULL},
    {"batch", "v1", "jobs", "job", "Job", NULL, "all", true, true, false, false, SUB, KC__GEN_SPEC,
     job_fields},
    {"coordination.k8s.io", "v1", "leases", "lease", "Lease", NULL, NULL, true, false, false, false,
     SUB, KC__GEN_NONE, NULL},
    {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
     "CustomResourceDefinition", "crd,crds", NULL, false, true, false, false, SUB, KC__GEN_SPEC,
     NULL},
};

void kc__rsrc_free(kc__rsrc *r)
{
    if (!r)
        return;
    kc__store_clear_rsrc(r);
    free(r->buckets);
    free(r->sorted);
    free(r->group);
    for (size_t i = 0; i < r->n_versions; i++)
        free(r->versions[i]);
    for (size_t i = 0; i < r->n_short; i++)
        free(r->short_names[i]);
    for (size_t i = 0; i < r->n_categories; i++)
        free(r->categories[i]);
    free(r->plural);
    free(r->singular);
    free(r->kind);
    free(r->list_kind);
    free(r->crd_name);
    for (char **f = r->crd_fields; f && *f; f++)
        free(*f);
    free(r->crd_fields);
    free(r);
}

static int split_csv(const char *s, char **out, size_t *n)
{
    *n = 0;
    while (s && *s && *n < KC__MAX_NAMES) {
        const char *c = strchr(s, ',');
        size_t l = c ? (size_t)(c - s) : strlen(s);
        if (!(out[(*n)++] = kc__strdup_n(s, l)))
            return KC_ENOMEM;
        s = c ? c + 1 : NULL;
    }
    return 0;
}

int kc__registry_add(kc_server *srv, kc__rsrc *r)
{
    if (srv->n_rsrcs == srv->cap_rsrcs) {
        size_t cap = srv->cap_rsrcs ? srv->cap_rsrcs * 2 : 32;
        kc__rsrc **a = realloc(srv->rsrcs, cap * sizeof(*a));
        if (!a)
            return KC_ENOMEM;
        srv->rsrcs = a;
        srv->cap_rsrcs = cap;
    }
    srv->rsrcs[srv->n_rsrcs++] = r;
    return 0;
}

void kc__registry_remove(kc_server *srv, kc__rsrc *r)
{
    for (size_t i = 0; i < srv->n_rsrcs; i++) {
        if (srv->rsrcs[i] != r)
            continue;
        memmove(&srv->rsrcs[i], &srv->rsrcs[i + 1], (srv->n_rsrcs - i - 1) * sizeof(r));
        srv->n_rsrcs--;
        r->removed = true;
        kc__store_clear_rsrc(r);
        if (srv->n_retired == srv->cap_retired) {
            size_t cap = srv->cap_retired ? srv->cap_retired * 2 : 8;
            kc__rsrc **a = realloc(srv->retired, cap * sizeof(*a));
            if (!a)
                return; /* leaks r until exit rather than freeing under watchers */
            srv->retired = a;
            srv->cap_retired = cap;
        }
        srv->retired[srv->n_retired++] = r;
        return;
    }
}

int kc__registry_init_builtins(kc_server *srv)
{
    for (size_t i = 0; i < KC__ARRAY_LEN(builtins); i++) {
        const builtin *b = &builtins[i];
        kc__rsrc *r = calloc(1, sizeof(*r));
        if (!r)
            return KC_ENOMEM;
        char lk[128];
        snprintf(lk, sizeof(lk), "%sList", b->kind);
        r->group = kc__strdup(b->group);
        r->versions[0] = kc__strdup(b->version);
        r->n_versions = 1;
        r->plural = kc__strdup(b->plural);
        r->singular = kc__strdup(b->singular);
        r->kind = kc__strdup(b->kind);
        r->list_kind = kc__strdup(lk);
        r->namespaced = b->namespaced;
        r->has_status = b->has_status;
        r->return_deleted = b->return_deleted;
        r->graceful = b->graceful;
        r->name_rule = b->rule;
        r->gen_rule = b->gen;
        r->fields = b->fields;
        if (!r->group || !r->versions[0] || !r->plural || !r->singular || !r->kind ||
            !r->list_kind || split_csv(b->shorts, r->short_names, &r->n_short) != 0 ||
            split_csv(b->cats, r->categories, &r->n_categories) != 0 ||
            kc__registry_add(srv, r) != 0) {
            kc__rsrc_free(r);
            return KC_ENOMEM;
        }
    }
    return 0;
}

bool kc__rsrc_serves(const kc__rsrc *r, const char *version)
{
    for (size_t i = 0; i < r->n_versions; i++)
        if (strcmp(r->versions[i], version) == 0)
            return true;
    return false;
}

kc__rsrc *kc__registry_find(kc_server *srv, const char *group, const char *version,
                            const char *plural)
{
    for (size_t i = 0; i < srv->n_rsrcs; i++) {
        kc__rsrc *r = srv->rsrcs[i];
        if (strcmp(r->group, group) == 0 && strcmp(r->plural, plural) == 0 &&
            kc__rsrc_serves(r, version))
            return r;
    }
    return NULL;
}

kc__rsrc *kc__registry_find_kind(kc_server *srv, const char *api_version, const char *kind)
{
    const char *slash = strchr(api_version, '/');
    char group[128] = "";
    const char *version = api_version;
    if (slash) {
        size_t gl = (size_t)(slash - api_version);
        if (gl >= sizeof(group))
            return NULL;
        memcpy(group, api_version, gl);
        group[gl] = 0;
        version = slash + 1;
    }
    for (size_t i = 0; i < srv->n_rsrcs; i++) {
        kc__rsrc *r = srv->rsrcs[i];
        if (strcmp(r->group, group) == 0 && strcmp(r->kind, kind) == 0 &&
            kc__rsrc_serves(r, version))
            return r;
    }
    return NULL;
}

kc__rsrc *kc__rsrc_namespaces(kc_server *srv)
{
    return kc__registry_find(srv, "", "v1", "namespaces");
}

void kc__rsrc_qualified(const kc__rsrc *r, char *out, size_t cap)
{
    if (r->group[0])
        snprintf(out, cap, "%s.%s", r->plural, r->group);
    else
        snprintf(out, cap, "%s", r->plural);
}

void kc__rsrc_api_version(const kc__rsrc *r, const char *version, char *out, size_t cap)
{
    if (!version)
        version = r->versions[0];
    if (r->group[0])
        snprintf(out, cap, "%s/%s", r->group, version);
    else
        snprintf(out, cap, "%s", version);
}

const char *kc__rsrc_bad_field(const kc__rsrc *r, const kc_field_selector *sel)
{
    size_t n = kc_field_selector_count(sel);
    for (size_t i = 0; i < n; i++) {
        const char *f = kc_field_selector_field(sel, i);
        if (!f || strcmp(f, "metadata.name") == 0 || strcmp(f, "metadata.namespace") == 0)
            continue;
        bool ok = false;
        for (const char *const *p = r->fields; p && *p && !ok; p++)
            ok = strcmp(*p, f) == 0;
        if (!ok)
            return f;
    }
    return NULL;
}

/* ---- discovery ------------------------------------------------------------------------------ */

static char *dump(json_t *doc, size_t *ret_len)
{
    if (!doc)
        return NULL;
    char *s = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (s && ret_len)
        *ret_len = strlen(s);
    return s;
}

static json_t *str_array(char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

char *kc__discovery_api(kc_server *srv, size_t *ret_len)
{
    return dump(
        json_pack("{s:s,s:[s],s:[{s:s,s:s}]}", "kind", "APIVersions", "versions", "v1",
                  "serverAddressByClientCIDRs", "clientCIDR", "0.0.0.0/0", "serverAddress",
                  srv->url && strstr(srv->url, "://") ? strstr(srv->url, "://") + 3 : srv->listen),
        ret_len);
}

/* Unique groups in registry order; each with its versions (preferred first). */
static json_t *group_json(kc_server *srv, const char *group)
{
    json_t *versions = json_array();
    const char *pref = NULL;
    for (size_t i = 0; i < srv->n_rsrcs; i++) {
        kc__rsrc *r = srv->rsrcs[i];
        if (strcmp(r->group, group) != 0)
            continue;
        for (size_t v = 0; v < r->n_versions; v++) {
            bool seen = false;
            size_t k;
            json_t *it;
            json_array_foreach(versions, k, it)
            {
                seen |=
                    strcmp(json_string_value(json_object_get(it, "version")), r->versions[v]) == 0;
            }
            if (seen)
                continue;
            char gv[256];
            kc__rsrc_api_version(r, r->versions[v], gv, sizeof(gv));
            json_array_append_new(
                versions, json_pack("{s:s,s:s}", "groupVersion", gv, "version", r->versions[v]));
            if (!pref)
                pref = r->versions[v];
        }
    }
    if (!pref) {
        json_decref(versions);
        return NULL;
    }
    json_t *first = json_deep_copy(json_array_get(versions, 0));
    return json_pack("{s:s,s:s,s:s,s:o,s:o}", "kind", "APIGroup", "apiVersion", "v1", "name", group,
                     "versions", versions, "preferredVersion", first);
}

char *kc__discovery_apis(kc_server *srv, size_t *ret_len)
{
    json_t *groups = json_array();
    for (size_t i = 0; i < srv->n_rsrcs; i++) {
        kc__rsrc *r = srv->rsrcs[i];
        if (!r->group[0])
            continue;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(srv->rsrcs[j]->group, r->group) == 0;
        if (seen)
            continue;
        json_t *g = group_json(srv, r->group);
        if (g) {
            json_object_del(g, "kind");
            json_object_del(g, "apiVersion");
            json_array_append_new(groups, g);
        }
    }
    return dump(
        json_pack("{s:s,s:s,s:o}", "kind", "APIGroupList", "apiVersion", "v1", "groups", groups),
        ret_len);
}

char *kc__discovery_group(kc_server *srv, const char *group, size_t *ret_len)
{
    return dump(group_json(srv, group), ret_len);
}

static const char *const all_verbs[] = {"create", "delete", "deletecollection", "get",
                                        "list",   "patch",  "update",           "watch"};

char *kc__discovery_resources(kc_server *srv, const char *group, const char *version,
                              size_t *ret_len)
{
    json_t *res = json_array();
    bool any = false;
    for (size_t i = 0; i < srv->n_rsrcs; i++) {
        kc__rsrc *r = srv->rsrcs[i];
        if (strcmp(r->group, group) != 0 || !kc__rsrc_serves(r, version))
            continue;
        any = true;
        json_t *verbs = json_array();
        for (size_t v = 0; v < KC__ARRAY_LEN(all_verbs); v++)
            json_array_append_new(verbs, json_string(all_verbs[v]));
        json_t *o =
            json_pack("{s:s,s:s,s:b,s:s,s:o}", "name", r->plural, "singularName", r->singular,
                      "namespaced", r->namespaced, "kind", r->kind, "verbs", verbs);
        if (r->n_short)
            json_object_set_new(o, "shortNames", str_array(r->short_names, r->n_short));
        if (r->n_categories)
            json_object_set_new(o, "categories", str_array(r->categories, r->n_categories));
        json_array_append_new(res, o);
        if (kc__rsrc_has_scale(r)) {
            char sn[300];
            snprintf(sn, sizeof(sn), "%s/scale", r->plural);
            json_array_append_new(res, json_pack("{s:s,s:s,s:b,s:s,s:s,s:s,s:[sss]}", "name", sn,
                                                 "singularName", "", "namespaced", r->namespaced,
                                                 "group", "autoscaling", "version", "v1", "kind",
                                                 "Scale", "verbs", "get", "patch", "update"));
        }
        if (r->has_status) {
            char sn[300];
            snprintf(sn, sizeof(sn), "%s/status", r->plural);
            json_array_append_new(res,
                                  json_pack("{s:s,s:s,s:b,s:s,s:[sss]}", "name", sn, "singularName",
                                            "", "namespaced", r->namespaced, "kind", r->kind,
                                            "verbs", "get", "patch", "update"));
        }
    }
    if (!any) {
        json_decref(res);
        return NULL;
    }
    char gv[256];
    if (group[0])
        snprintf(gv, sizeof(gv), "%s/%s", group, version);
    else
        snprintf(gv, sizeof(gv), "%s", version);
    return dump(json_pack("{s:s,s:s,s:s,s:o}", "kind", "APIResourceList", "apiVersion", "v1",
                          "groupVersion", gv, "resources", res),
                ret_len);
}
