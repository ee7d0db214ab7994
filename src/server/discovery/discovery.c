/*
 * discovery.c — the discovery documents of the embedded API server, built with jansson on each
 * request from the live registry (small documents): legacy discovery (/api APIVersions, /apis
 * APIGroupList, /apis/{g} APIGroup, /api/v1 and /apis/{g}/{v} APIResourceList) and aggregated
 * discovery (apidiscovery.k8s.io/v2 APIGroupDiscoveryList at /api and /apis, which kubectl and
 * client-go ask for first and which answers them in two requests, #4). Each resource lists the
 * verbs, short names, categories and subresources of its row in the resource table
 * (storage/resources.c; custom resources: all verbs, status when the CRD turns it on). All
 * functions run with srv->mu held.
 */
#include "server/discovery/discovery.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A comma-separated list as a JSON array of strings. */
static json_t *csv_array(const char *s)
{
    json_t *a = json_array();
    for (const char *p = s; a && p && *p;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        json_array_append_new(a, json_stringn(p, l));
        p = c ? c + 1 : NULL;
    }
    return a;
}

#define ALL_VERBS "create,delete,deletecollection,get,list,patch,update,watch"

static const char *verbs_of(const kc__rsrc *r)
{
    return r->def ? r->def->verbs : ALL_VERBS;
}

/* The subresources r lists in version, described (kind, group, version resolved); their count. */
typedef struct sub_desc {
    const char *name, *kind, *group, *version, *verbs;
} sub_desc;

static size_t subs_of(const kc__rsrc *r, const char *version, sub_desc *out, size_t cap)
{
    const char *list = r->def ? r->def->subresources : (r->has_status ? "status" : NULL);
    size_t n = 0;
    for (const char *p = list; p && *p && n < cap;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        char name[64];
        snprintf(name, sizeof(name), "%.*s", (int)l, p);
        const kc__subresource *d = kc__subresource_find(r->plural, name);
        if (d)
            out[n++] =
                (sub_desc){d->name, d->kind ? d->kind : r->kind, d->group ? d->group : r->group,
                           d->version ? d->version : version, d->verbs};
        p = c ? c + 1 : NULL;
    }
    return n;
}

static void names_and_categories(json_t *o, const kc__rsrc *r)
{
    if (r->n_short)
        json_object_set_new(o, "shortNames", str_array(r->short_names, r->n_short));
    if (r->n_categories)
        json_object_set_new(o, "categories", str_array(r->categories, r->n_categories));
}

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
        json_t *o = json_pack("{s:s,s:s,s:b,s:s,s:o}", "name", r->plural, "singularName",
                              r->singular, "namespaced", r->namespaced, "kind", r->kind, "verbs",
                              csv_array(verbs_of(r)));
        names_and_categories(o, r);
        json_array_append_new(res, o);
        sub_desc subs[16];
        size_t n = subs_of(r, version, subs, 16);
        for (size_t s = 0; s < n; s++) {
            char sn[300];
            snprintf(sn, sizeof(sn), "%s/%s", r->plural, subs[s].name);
            json_t *so = json_pack("{s:s,s:s,s:b}", "name", sn, "singularName", "", "namespaced",
                                   r->namespaced);
            if (strcmp(subs[s].group, r->group) || strcmp(subs[s].version, version)) {
                json_object_set_new(so, "group", json_string(subs[s].group));
                json_object_set_new(so, "version", json_string(subs[s].version));
            }
            json_object_set_new(so, "kind", json_string(subs[s].kind));
            json_object_set_new(so, "verbs", csv_array(subs[s].verbs));
            json_array_append_new(res, so);
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

/* ---- aggregated discovery (apidiscovery.k8s.io/v2) ------------------------------------------ */

static json_t *response_kind(const char *group, const char *version, const char *kind)
{
    return json_pack("{s:s,s:s,s:s}", "group", group, "version", version, "kind", kind);
}

static json_t *agg_resource(const kc__rsrc *r, const char *version)
{
    json_t *o = json_pack("{s:s,s:o,s:s,s:s,s:o}", "resource", r->plural, "responseKind",
                          response_kind(r->group, version, r->kind), "scope",
                          r->namespaced ? "Namespaced" : "Cluster", "singularResource", r->singular,
                          "verbs", csv_array(verbs_of(r)));
    names_and_categories(o, r);
    sub_desc subs[16];
    size_t n = subs_of(r, version, subs, 16);
    if (n) {
        json_t *sa = json_array();
        for (size_t s = 0; s < n; s++)
            json_array_append_new(
                sa, json_pack("{s:s,s:o,s:o}", "subresource", subs[s].name, "responseKind",
                              response_kind(subs[s].group, subs[s].version, subs[s].kind), "verbs",
                              csv_array(subs[s].verbs)));
        json_object_set_new(o, "subresources", sa);
    }
    return o;
}

/* One APIGroupDiscovery: the group's versions (preferred first), each with its resources. */
static json_t *agg_group(kc_server *srv, const char *group)
{
    json_t *versions = json_array();
    for (size_t i = 0; i < srv->n_rsrcs; i++) {
        kc__rsrc *r = srv->rsrcs[i];
        if (strcmp(r->group, group) != 0)
            continue;
        for (size_t v = 0; v < r->n_versions; v++) {
            json_t *ver = NULL, *it;
            size_t k;
            json_array_foreach(versions, k, it)
            {
                if (!strcmp(json_string_value(json_object_get(it, "version")), r->versions[v]))
                    ver = it;
            }
            if (!ver) {
                ver = json_pack("{s:s,s:[],s:s}", "version", r->versions[v], "resources",
                                "freshness", "Current");
                json_array_append_new(versions, ver);
            }
            json_array_append_new(json_object_get(ver, "resources"),
                                  agg_resource(r, r->versions[v]));
        }
    }
    json_t *md = json_pack("{s:n}", "creationTimestamp");
    if (group[0])
        json_object_set_new(md, "name", json_string(group));
    return json_pack("{s:o,s:o}", "metadata", md, "versions", versions);
}

char *kc__discovery_aggregated(kc_server *srv, bool core, size_t *ret_len)
{
    json_t *items = json_array();
    for (size_t i = 0; i < srv->n_rsrcs; i++) {
        kc__rsrc *r = srv->rsrcs[i];
        if (core != !r->group[0])
            continue;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(srv->rsrcs[j]->group, r->group);
        if (!seen)
            json_array_append_new(items, agg_group(srv, r->group));
    }
    return dump(json_pack("{s:s,s:s,s:{},s:o}", "kind", "APIGroupDiscoveryList", "apiVersion",
                          "apidiscovery.k8s.io/v2", "metadata", "items", items),
                ret_len);
}
