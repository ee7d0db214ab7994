/*
 * review.c — the review resources, create-only and stored nowhere, as kube-apiserver answers
 * them: the posted object comes back with its status filled.
 *   authorization.k8s.io/v1 SubjectAccessReview (spec.user/groups/uid), LocalSubjectAccessReview
 *   (the same, its namespace the URL's), SelfSubjectAccessReview (the requester): spec.
 *   resourceAttributes {namespace, verb, group, version, resource, subresource, name} or
 *   nonResourceAttributes {path, verb} → status {allowed, denied?, reason?, evaluationError?};
 *   SelfSubjectRulesReview spec.namespace → status {resourceRules, nonResourceRules, incomplete}
 *   (`kubectl auth can-i --list`): the rules of the requester's ClusterRoleBindings and of its
 *   RoleBindings in that namespace, or `*` in AlwaysAllow mode.
 *   authentication.k8s.io/v1 SelfSubjectReview (`kubectl auth whoami`) → status.userInfo;
 *   TokenReview spec.token → status {authenticated, user}.
 * A body that is not JSON is 400; a SubjectAccessReview without exactly one of the attribute sets
 * or without a user or group is 422 Invalid, as upstream's validation.
 */
#include "server/authz/authz_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static json_t *user_info(const kc__user *u)
{
    json_t *g = json_array();
    for (size_t i = 0; i < u->n_groups; i++)
        json_array_append_new(g, json_string(u->groups[i]));
    json_t *o = json_pack("{s:s}", "username", u->name);
    if (u->uid[0])
        json_object_set_new(o, "uid", json_string(u->uid));
    json_object_set_new(o, "groups", g);
    return o;
}

typedef struct why {
    const kc__attrs *a;
    char *reason; /* the allowing rule's `RBAC: allowed by …`, copied under the cache lock */
    size_t cap;
} why;

static bool allows_why(const kc__ruleset *s, void *ud)
{
    why *w = ud;
    if (s->masters)
        return true; /* upstream's privileged-group authorizer gives no reason */
    for (size_t i = 0; i < s->n; i++)
        if (kc__rule_allows(&s->rules[i], w->a)) {
            snprintf(w->reason, w->cap, "%s", s->rules[i].via ? s->rules[i].via : "");
            return true;
        }
    return false;
}

/* The decision for a, with the reason RBAC gives when it allows (into reason, "" when none). */
static bool decide(kc_server *srv, const kc__attrs *a, char *reason, size_t cap)
{
    reason[0] = 0;
    if (!kc__authz_rbac(srv))
        return true;
    kc__authz_aggregate(srv);
    why w = {.a = a, .reason = reason, .cap = cap};
    return kc__ruleset_with(srv, a->user, allows_why, &w);
}

/* spec.{user,groups,uid} (SubjectAccessReview) into *u. */
static void spec_user(const json_t *spec, kc__user *u)
{
    memset(u, 0, sizeof(*u));
    snprintf(u->name, sizeof u->name, "%s", str(spec, "user"));
    snprintf(u->uid, sizeof u->uid, "%s", str(spec, "uid"));
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(spec, "groups"), i, g)
    {
        if (json_string_value(g))
            kc__user_add_group(u, json_string_value(g));
    }
}

static int access_review(kc_server *srv, const kc__user *self, const kc__rsrc *r, const char *ns,
                         json_t *doc, kc_error *err)
{
    json_t *spec = json_object_get(doc, "spec");
    json_t *ra = json_object_get(spec, "resourceAttributes");
    json_t *nra = json_object_get(spec, "nonResourceAttributes");
    if (!json_is_object(spec) || (!ra) == (!nra)) {
        int rc = kc__fail(err, 422, "Invalid",
                          "%s.authorization.k8s.io \"\" is invalid: spec.resourceAttributes: "
                          "Invalid value: \"null\": exactly one of nonResourceAttributes or "
                          "resourceAttributes must be specified",
                          r->kind);
        kc__fail_details(err, "", "authorization.k8s.io", r->kind);
        return rc;
    }
    bool self_review = !strcmp(r->plural, "selfsubjectaccessreviews");
    kc__user u;
    if (self_review)
        u = *self;
    else
        spec_user(spec, &u);
    if (!self_review && !u.name[0] && !u.n_groups) {
        int rc = kc__fail(err, 422, "Invalid",
                          "%s.authorization.k8s.io \"\" is invalid: spec.user: Invalid value: "
                          "\"\": at least one of user or group must be specified",
                          r->kind);
        kc__fail_details(err, "", "authorization.k8s.io", r->kind);
        return rc;
    }
    if (ns && ra && strcmp(str(ra, "namespace"), ns) != 0)
        return kc__fail(err, 400, "BadRequest",
                        "spec.resourceAttributes.namespace must match namespace: %s", ns);
    kc__attrs a = {.user = &u, .resource_request = ra != NULL};
    if (ra) {
        a.verb = str(ra, "verb");
        a.group = str(ra, "group");
        a.version = str(ra, "version");
        a.resource = str(ra, "resource");
        a.sub = str(ra, "subresource");
        a.ns = str(ra, "namespace");
        a.name = str(ra, "name");
    } else {
        a.verb = str(nra, "verb");
        a.path = str(nra, "path");
    }
    char reason[1024];
    bool ok = decide(srv, &a, reason, sizeof reason);
    json_t *st = json_pack("{s:b}", "allowed", ok);
    if (reason[0])
        json_object_set_new(st, "reason", json_string(reason));
    json_object_set_new(doc, "status", st);
    return 0;
}

typedef struct rules_ctx {
    const char *ns;
    json_t *res, *nonres;
} rules_ctx;

static bool collect(const kc__ruleset *s, void *ud)
{
    rules_ctx *x = ud;
    for (size_t i = 0; i < s->n; i++) {
        const kc__rule *r = &s->rules[i];
        if (r->ns && strcmp(r->ns, x->ns) != 0)
            continue;
        if (r->urls[0] && !r->ns)
            json_array_append_new(x->nonres,
                                  json_pack("{s:o,s:o}", "verbs", kc__strv_json(r->verbs),
                                            "nonResourceURLs", kc__strv_json(r->urls)));
        if (r->resources[0]) {
            json_t *o =
                json_pack("{s:o,s:o,s:o}", "verbs", kc__strv_json(r->verbs), "apiGroups",
                          kc__strv_json(r->groups), "resources", kc__strv_json(r->resources));
            if (r->names[0])
                json_object_set_new(o, "resourceNames", kc__strv_json(r->names));
            json_array_append_new(x->res, o);
        }
    }
    return true;
}

static void rules_review(kc_server *srv, const kc__user *self, json_t *doc)
{
    rules_ctx x = {.ns = str(json_object_get(doc, "spec"), "namespace"),
                   .res = json_array(),
                   .nonres = json_array()};
    if (!kc__authz_rbac(srv)) {
        json_array_append_new(x.res, json_pack("{s:[s],s:[s],s:[s]}", "verbs", "*", "apiGroups",
                                               "*", "resources", "*"));
        json_array_append_new(x.nonres,
                              json_pack("{s:[s],s:[s]}", "verbs", "*", "nonResourceURLs", "*"));
    } else {
        kc__authz_aggregate(srv);
        kc__ruleset_with(srv, self, collect, &x);
    }
    json_object_set_new(doc, "status",
                        json_pack("{s:o,s:o,s:b}", "resourceRules", x.res, "nonResourceRules",
                                  x.nonres, "incomplete", 0));
}

int kc__authz_review(kc_server *srv, const kc__user *u, const kc__rsrc *r, const char *ns,
                     const char *body, size_t len, char **ret, size_t *ret_len, kc_error *err)
{
    json_error_t je = {.text = "not JSON"};
    json_t *doc = kc__authz_proto_doc(body, len);
    if (!doc)
        doc = json_loadb(body, len, 0, &je);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return kc__fail(err, 400, "BadRequest", "the body of the request is not a %s: %s", r->kind,
                        je.text);
    }
    char api[128];
    snprintf(api, sizeof api, "%s/v1", r->group);
    json_object_set_new(doc, "apiVersion", json_string(api));
    json_object_set_new(doc, "kind", json_string(r->kind));
    json_t *meta = json_object_get(doc, "metadata");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(doc, "metadata", meta);
    }
    if (!json_object_get(meta, "creationTimestamp"))
        json_object_set_new(meta, "creationTimestamp", json_null());
    if (r->namespaced)
        json_object_set_new(meta, "namespace", json_string(ns));
    int rc = 0;
    if (!strcmp(r->plural, "selfsubjectreviews")) {
        json_object_set_new(doc, "status", json_pack("{s:o}", "userInfo", user_info(u)));
    } else if (!strcmp(r->plural, "tokenreviews")) {
        char h[1100];
        snprintf(h, sizeof h, "Bearer %s", str(json_object_get(doc, "spec"), "token"));
        kc__user who;
        bool ok = kc__authz_authenticate(srv, h, &who) == 0;
        json_object_set_new(doc, "status",
                            ok ? json_pack("{s:b,s:o}", "authenticated", 1, "user", user_info(&who))
                               : json_pack("{s:o}", "user", json_object()));
    } else if (!strcmp(r->plural, "selfsubjectrulesreviews")) {
        rules_review(srv, u, doc);
    } else {
        rc = access_review(srv, u, r, r->namespaced ? ns : NULL, doc, err);
    }
    *ret = rc ? NULL : json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (rc)
        return rc;
    if (!*ret)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    *ret_len = strlen(*ret);
    return 0;
}
