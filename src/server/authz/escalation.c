/*
 * escalation.c — RBAC escalation prevention, as upstream's policy-based Role and binding storage:
 *   - a create or update of a Role or ClusterRole is allowed when the user may `escalate` that
 *     role (verb escalate on roles / clusterroles, its name, its namespace), or when every rule it
 *     grants is already held by the user (in the Role's namespace; cluster-wide for a
 *     ClusterRole): each rule is broken down into single verb × group × resource × name (or verb ×
 *     URL) pieces and each piece must be allowed by one rule the user holds (`*` covered by `*`
 *     only). A ClusterRole with an aggregationRule needs escalate (or system:masters).
 *   - a create or update of a RoleBinding or ClusterRoleBinding is allowed when the user may
 *     `bind` the role it refers to (verb bind on roles / clusterroles, the role's name), or holds
 *     every rule of that role in the binding's scope.
 * A PATCH is checked on the object it would produce: the stored object with the patch applied
 * (merge, JSON, strategic; for server-side apply the applied configuration's rules / roleRef,
 * which replace the stored ones). The refusal is 403 Forbidden naming the permissions not held,
 * worded after upstream's ConfirmNoEscalation.
 */
#include "server/authz/authz_internal.h"
#include "server/patch/patch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cover_ctx {
    const kc__user *u;
    const char *ns;
    const json_t *rules;
    char missing[1024]; /* the first piece not held */
} cover_ctx;

static bool held(const kc__ruleset *s, const kc__attrs *a)
{
    for (size_t i = 0; i < s->n; i++)
        if (kc__rule_allows(&s->rules[i], a))
            return true;
    return false;
}

/* One rule's pieces, each held? false with x->missing set otherwise. */
static bool rule_covered(const kc__ruleset *s, cover_ctx *x, const json_t *pr)
{
    kc__rule r;
    if (kc__rule_compile(pr, NULL, &r) != 0)
        return false;
    bool ok = true;
    for (char **v = r.verbs; ok && *v; v++) {
        for (char **url = r.urls; ok && *url; url++) {
            kc__attrs a = {.user = x->u, .verb = *v, .path = *url};
            if (!(ok = held(s, &a)))
                snprintf(x->missing, sizeof x->missing,
                         "{NonResourceURLs:[\"%s\"], Verbs:[\"%s\"]}", *url, *v);
        }
        for (char **g = r.groups; ok && *g; g++)
            for (char **res = r.resources; ok && *res; res++)
                for (char **n = r.names[0] ? r.names : (char *[]){"", NULL}; ok && *n; n++) {
                    kc__attrs a = {.user = x->u,
                                   .resource_request = true,
                                   .verb = *v,
                                   .group = *g,
                                   .version = "",
                                   .resource = *res,
                                   .sub = "",
                                   .ns = x->ns,
                                   .name = *n};
                    if (!(ok = held(s, &a)))
                        snprintf(x->missing, sizeof x->missing,
                                 "{APIGroups:[\"%s\"], Resources:[\"%s\"]%s%s%s, Verbs:[\"%s\"]}",
                                 *g, *res, **n ? ", ResourceNames:[\"" : "", *n, **n ? "\"]" : "",
                                 *v);
                }
    }
    kc__rule_free(&r);
    return ok;
}

static bool covers(const kc__ruleset *s, void *ud)
{
    cover_ctx *x = ud;
    if (s->masters)
        return true;
    size_t i;
    json_t *pr;
    json_array_foreach(x->rules, i, pr)
    {
        if (!rule_covered(s, x, pr))
            return false;
    }
    return true;
}

static int refuse(kc_error *err, const char *resource, const char *name, const kc__user *u,
                  const char *what)
{
    char groups[1024] = "";
    size_t n = 0;
    for (size_t i = 0; i < u->n_groups && n < sizeof groups; i++)
        n +=
            (size_t)snprintf(groups + n, sizeof groups - n, "%s\"%s\"", i ? " " : "", u->groups[i]);
    int rc = kc__fail(err, 403, "Forbidden",
                      "%s.rbac.authorization.k8s.io \"%s\" is forbidden: user \"%s\" (groups=[%s]) "
                      "is attempting to grant RBAC permissions not currently held:\n%s",
                      resource, name, u->name, groups, what);
    kc__fail_details(err, name, "rbac.authorization.k8s.io", resource);
    return rc;
}

/* May u take the shortcut verb (escalate, bind) on resource/name in ns? */
static bool may(kc_server *srv, const kc__user *u, const char *verb, const char *resource,
                const char *ns, const char *name)
{
    kc__attrs a = {.user = u,
                   .resource_request = true,
                   .verb = verb,
                   .group = "rbac.authorization.k8s.io",
                   .version = "",
                   .resource = resource,
                   .sub = "",
                   .ns = ns,
                   .name = name};
    return kc__authz_allowed(srv, &a);
}

/* The object a PATCH of resource ns/name would store (new reference), NULL when there is none to
 * check (no such object, a bad patch: the verb answers). */
static json_t *patched(kc_server *srv, const char *resource, const char *ns, const char *name,
                       const char *ctype, const char *body, size_t len)
{
    struct kc__authz *az = srv->authz;
    kc__patch_type t;
    if (kc__patch_type_from_content_type(ctype, &t, NULL) != 0)
        return NULL;
    kc__rsrc *r = !strcmp(resource, "roles")          ? az->role
                  : !strcmp(resource, "clusterroles") ? az->cr
                  : !strcmp(resource, "rolebindings") ? az->rb
                                                      : az->crb;
    pthread_mutex_lock(&srv->mu);
    kc__entry *e = kc__store_find(r, r->namespaced ? ns : "", name);
    json_t *cur = e ? kc__doc_from_obj(e->obj) : NULL;
    pthread_mutex_unlock(&srv->mu);
    json_t *out = NULL;
    if (t == KC__PATCH_APPLY) {
        json_t *applied = NULL;
        if (kc__apply_decode(body, len, &applied, NULL) == 0) {
            out = cur ? json_deep_copy(cur) : json_object();
            const char *keys[] = {"metadata", "rules", "aggregationRule", "roleRef"};
            for (size_t i = 0; out && i < KC__ARRAY_LEN(keys); i++)
                if (json_object_get(applied, keys[i]))
                    json_object_set(out, keys[i], json_object_get(applied, keys[i]));
        }
        json_decref(applied);
    } else if (cur) {
        kc__patch_apply(t, cur, body, len, r->kind, true, &out, NULL);
    }
    json_decref(cur);
    return out;
}

int kc__authz_escalation_check(kc_server *srv, const kc__user *u, const char *resource,
                               const char *ns, const char *name, const char *ctype, bool patch,
                               const char *body, size_t len, kc_error *err)
{
    bool role = !strcmp(resource, "roles") || !strcmp(resource, "clusterroles");
    bool binding = !strcmp(resource, "rolebindings") || !strcmp(resource, "clusterrolebindings");
    if (!kc__authz_rbac(srv) || (!role && !binding))
        return 0;
    json_t *doc = patch ? patched(srv, resource, ns, name, ctype, body, len) : NULL;
    if (!patch)
        doc = kc__authz_proto_doc(body, len);
    if (!doc && !patch)
        doc = json_loadb(body, len, 0, NULL);
    if (!doc)
        return 0; /* the verb answers the bad body */
    if (!name || !*name)
        name = json_string_value(json_object_get(json_object_get(doc, "metadata"), "name"));
    name = name ? name : "";
    const char *scope = (!strcmp(resource, "roles") || !strcmp(resource, "rolebindings")) ? ns : "";
    cover_ctx x = {.u = u, .ns = scope};
    json_t *rd = NULL;
    int rc = 0;
    if (role) {
        if (may(srv, u, "escalate", resource, scope, name))
            goto done;
        x.rules = json_object_get(doc, "rules");
        cover_ctx all = {.u = u,
                         .ns = "",
                         .rules = rd = json_pack("[{s:[s],s:[s],s:[s]}]", "apiGroups", "*",
                                                 "resources", "*", "verbs", "*")};
        if (json_object_get(doc, "aggregationRule") && !kc__ruleset_with(srv, u, covers, &all)) {
            rc = kc__fail(err, 403, "Forbidden",
                          "clusterroles.rbac.authorization.k8s.io \"%s\" is forbidden: must have "
                          "cluster-admin privileges to use the aggregationRule",
                          name);
            kc__fail_details(err, name, "rbac.authorization.k8s.io", resource);
            goto done;
        }
    } else {
        json_t *ref = json_object_get(doc, "roleRef");
        const char *kind = json_string_value(json_object_get(ref, "kind"));
        const char *rn = json_string_value(json_object_get(ref, "name"));
        if (!kind || !rn)
            goto done; /* validation's (422) */
        const char *rres = !strcmp(kind, "ClusterRole") ? "clusterroles" : "roles";
        if (may(srv, u, "bind", rres, scope, rn))
            goto done;
        pthread_mutex_lock(&srv->mu);
        json_t *tmp = NULL;
        const json_t *rules = kc__role_rules_locked(srv, kind, scope, rn, &tmp);
        x.rules = rules ? json_deep_copy(rules) : json_array();
        pthread_mutex_unlock(&srv->mu);
        json_decref(tmp);
        rd = (json_t *)x.rules;
    }
    kc__authz_aggregate(srv);
    if (!kc__ruleset_with(srv, u, covers, &x))
        rc = refuse(err, resource, name, u, x.missing[0] ? x.missing : "(rules not readable)");
done:
    json_decref(rd);
    json_decref(doc);
    return rc;
}
