/*
 * authorize.c — the http room's hook into authentication and authorization (authz/), called by
 * dispatch (http.c) for every request past /version and the health endpoints, before routing:
 * the bearer token → an identity (401 when unknown), the impersonation headers (Impersonate-User,
 * Impersonate-Group (repeated), Impersonate-Uid), the request's attributes as upstream's
 * RequestInfoFactory derives them (a resource request: verb from the method — get, list, watch
 * (?watch= or /watch/), create, update, patch, delete, deletecollection — group, resource,
 * subresource, namespace (a namespace's own name for /namespaces/NAME), name (of a list or watch:
 * its fieldSelector's metadata.name); anything else a
 * non-resource request: the lower-case method and the path), the decision (403 Forbidden when
 * denied), then what authz answers itself: the review resources (POST only, 201), TokenRequest
 * (POST serviceaccounts/NAME/token) and RBAC escalation prevention of Role/binding writes.
 * With AlwaysAllow and no token configured, requests other than those pass at the cost of one
 * atomic compare (the ClusterRole aggregation's) and a prefix test.
 */
#include "server/authz/authz.h"
#include "server/http/http.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

typedef struct imp {
    const char *user, *uid;
    const char *groups[KC__AUTHZ_MAX_GROUPS];
    size_t n_groups;
    bool any;
} imp;

static enum MHD_Result imp_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
    (void)kind;
    imp *x = cls;
    if (!key || !value || strncasecmp(key, "Impersonate-", 12) != 0)
        return MHD_YES;
    x->any = true;
    if (!strcasecmp(key + 12, "User"))
        x->user = value;
    else if (!strcasecmp(key + 12, "Uid"))
        x->uid = value;
    else if (!strcasecmp(key + 12, "Group") && x->n_groups < KC__AUTHZ_MAX_GROUPS)
        x->groups[x->n_groups++] = value;
    return MHD_YES;
}

static const char *resource_verb(const kc__req *req, const kc__route *rt)
{
    switch (req->method) {
    case KC__M_GET: {
        if (rt->watch_path)
            return "watch";
        if (rt->has_name)
            return "get";
        const char *w = MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, "watch");
        return w && kc__param_bool(w) ? "watch" : "list";
    }
    case KC__M_POST:
        return "create";
    case KC__M_PUT:
        return "update";
    case KC__M_PATCH:
        return "patch";
    default:
        return rt->has_name ? "delete" : "deletecollection";
    }
}

/* The name a list or watch selects by fieldSelector metadata.name=X (or ==X), as upstream's
 * RequestInfoFactory takes it (so resourceNames rules allow a single-object watch), into out;
 * "" when none. */
static void selected_name(const kc__req *req, char *out, size_t cap)
{
    out[0] = 0;
    const char *fs = MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, "fieldSelector");
    for (const char *p = fs; p && *p;) {
        size_t l = strcspn(p, ",");
        const char *v = !strncmp(p, "metadata.name==", 15)  ? p + 15
                        : !strncmp(p, "metadata.name=", 14) ? p + 14
                                                            : NULL;
        if (v && v < p + l) {
            snprintf(out, cap, "%.*s", (int)(p + l - v), v);
            return;
        }
        p += l + (p[l] == ',');
    }
}

/* Does path need authz even with AlwaysAllow and no token (reviews, TokenRequest)? */
static bool served_by_authz(const char *p)
{
    size_t l = strlen(p);
    return kc__starts_with(p, "/apis/authorization.k8s.io/") ||
           kc__starts_with(p, "/apis/authentication.k8s.io/") ||
           (l > 6 && !strcmp(p + l - 6, "/token"));
}

/* The reviews, TokenRequest and escalation checks of an allowed resource request. */
static int answer(kc__req *req, const kc__user *u, const kc__route *rt, bool *ret_answered)
{
    kc_server *srv = req->srv;
    kc__rsrc *r = NULL;
    if (!strcmp(rt->group, "authorization.k8s.io") || !strcmp(rt->group, "authentication.k8s.io")) {
        pthread_mutex_lock(&srv->mu); /* only for these groups: most requests skip the lock */
        r = kc__registry_find(srv, rt->group, rt->version, rt->plural);
        pthread_mutex_unlock(&srv->mu);
    }
    char *out = NULL;
    size_t len = 0;
    int rc;
    if (r && r->def && (r->def->flags & KC__BI_VIRTUAL)) {
        *ret_answered = true;
        if (rt->has_name || rt->has_sub || (rt->has_ns && !r->namespaced))
            return kc__fail_generic(&req->err, 404);
        if (req->method != KC__M_POST || (r->namespaced && !rt->has_ns))
            return kc__fail_generic(&req->err, 405); /* create only, in a namespace if scoped */
        rc = kc__authz_review(srv, u, r, rt->ns, req->body, req->body_len, &out, &len, &req->err);
    } else if (rt->has_sub && !strcmp(rt->sub, "token") && !strcmp(rt->plural, "serviceaccounts") &&
               !rt->group[0] && rt->has_ns) {
        *ret_answered = true;
        if (req->method != KC__M_POST)
            return kc__fail_generic(&req->err, 405);
        rc = kc__authz_token_request(srv, rt->ns, rt->name, req->body, req->body_len, &out, &len,
                                     &req->err);
    } else {
        bool write =
            req->method == KC__M_POST || req->method == KC__M_PUT || req->method == KC__M_PATCH;
        if (write && !strcmp(rt->group, "rbac.authorization.k8s.io") && !rt->has_sub)
            return kc__authz_escalation_check(
                srv, u, rt->plural, rt->ns, rt->has_name ? rt->name : "", req->content_type,
                req->method == KC__M_PATCH, req->body, req->body_len, &req->err);
        return 0;
    }
    return rc ? rc : kc__reply(req, 201, out, len);
}

/* u as an admission review's request.userInfo (username, uid when set, groups); NULL on out of
 * memory (the review then names the default admin). */
static json_t *user_info(const kc__user *u)
{
    json_t *groups = json_array(), *o = json_pack("{s:s}", "username", u->name);
    for (size_t i = 0; groups && i < u->n_groups; i++)
        json_array_append_new(groups, json_string(u->groups[i]));
    if (o && u->uid[0])
        json_object_set_new(o, "uid", json_string(u->uid));
    if (o && groups && u->n_groups) {
        json_object_set_new(o, "groups", groups);
        groups = NULL;
    }
    json_decref(groups);
    return o;
}

int kc__http_authorize(kc__req *req, bool *ret_answered)
{
    kc_server *srv = req->srv;
    *ret_answered = false;
    kc__authz_aggregate(srv);
    if (!kc__authz_rbac(srv) && !kc__authz_has_tokens(srv) && !served_by_authz(req->path))
        return 0;
    kc__user u;
    const char *h =
        MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (kc__authz_authenticate(srv, h, &u) != 0)
        return kc__fail(&req->err, 401, "Unauthorized", "Unauthorized");
    imp x = {0};
    MHD_get_connection_values(req->conn, MHD_HEADER_KIND, imp_header, &x);
    int rc;
    if (x.any &&
        (rc = kc__authz_impersonate(srv, &u, x.user, x.groups, x.n_groups, x.uid, &req->err)) != 0)
        return rc;
    req->user_info = user_info(&u);
    kc__route rt;
    bool resource = kc__route_parse(req->path, &rt) == 0 && rt.kind == KC__R_RESOURCE;
    char verb[16];
    snprintf(verb, sizeof verb, "%s", req->method_name ? req->method_name : "");
    for (char *p = verb; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    kc__attrs a = {.user = &u, .resource_request = resource, .verb = verb, .path = req->path};
    if (resource) {
        a.verb = resource_verb(req, &rt);
        a.group = rt.group;
        a.version = rt.version;
        a.resource = rt.plural;
        a.sub = rt.has_sub ? rt.sub : "";
        a.name = rt.has_name ? rt.name : "";
        a.ns = rt.has_ns ? rt.ns : "";
        if (!rt.group[0] && !strcmp(rt.plural, "namespaces") && rt.has_name)
            a.ns = rt.name; /* upstream: /api/v1/namespaces/NAME is in namespace NAME */
    }
    char selected[256];
    if (resource && !rt.has_name && req->method == KC__M_GET) {
        selected_name(req, selected, sizeof selected);
        a.name = selected;
    }
    if (!kc__authz_allowed(srv, &a))
        return kc__authz_forbidden(&req->err, &a);
    return resource ? answer(req, &u, &rt, ret_answered) : 0;
}
