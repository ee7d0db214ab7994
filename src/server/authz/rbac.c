/*
 * rbac.c — the decision: AlwaysAllow, or RBAC as upstream's RBACAuthorizer evaluates it. The
 * rules that apply to an identity are those of the roles its ClusterRoleBindings (everywhere) and
 * RoleBindings (in their namespace) grant, a binding applying when one of its subjects is the
 * user (kind User), one of its groups (kind Group) or, for a ServiceAccount subject, the user
 * system:serviceaccount:NS:NAME. A rule allows a resource request when its verbs, apiGroups and
 * resources (`*`, `resource/subresource`, `*\/subresource`) match and its resourceNames are empty
 * or hold the name; a non-resource request when its verbs and nonResourceURLs (`*`, exact, or a
 * `prefix*`) match. system:masters is allowed everything (upstream's privileged group).
 *
 * Cost per request: the rules of each identity (key: name and groups) are compiled once and kept
 * in a small cache (KC__AUTHZ_CACHE identities, replaced round-robin) with the RBAC generation
 * they were built at — the sum of the change counters (kc__rsrc.changes) of the four RBAC
 * resources, which every commit bumps — so a request costs four atomic loads, a key comparison
 * and a walk over that identity's rules; any change to a Role, ClusterRole or binding makes every
 * cached entry stale, and the next request of each identity compiles its rules again from the
 * store (one pass over the bindings, under srv->mu).
 * Locking: az->mu guards the cache and is never held while taking srv->mu.
 */
#include "server/authz/authz_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t kc__authz_gen(const struct kc__authz *az)
{
    return az->crb->changes + az->rb->changes + az->cr->changes + az->role->changes;
}

/* A NULL-terminated copy of the strings of array a (one allocation); NULL on ENOMEM. */
static char **strv(const json_t *a)
{
    size_t n = json_array_size(a), bytes = (n + 1) * sizeof(char *);
    for (size_t i = 0; i < n; i++)
        bytes += strlen(json_string_value(json_array_get(a, i)) ?: "") + 1;
    char **v = malloc(bytes);
    if (!v)
        return NULL;
    char *p = (char *)(v + n + 1);
    for (size_t i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(a, i)) ?: "";
        size_t l = strlen(s) + 1;
        memcpy(p, s, l);
        v[i] = p;
        p += l;
    }
    v[n] = NULL;
    return v;
}

json_t *kc__strv_json(char *const *v)
{
    json_t *a = json_array();
    for (; v && *v; v++)
        json_array_append_new(a, json_string(*v));
    return a;
}

int kc__rule_compile(const json_t *pr, const char *ns, kc__rule *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->verbs = strv(json_object_get(pr, "verbs"));
    ret->groups = strv(json_object_get(pr, "apiGroups"));
    ret->resources = strv(json_object_get(pr, "resources"));
    ret->names = strv(json_object_get(pr, "resourceNames"));
    ret->urls = strv(json_object_get(pr, "nonResourceURLs"));
    ret->ns = ns ? kc__strdup(ns) : NULL;
    if (!ret->verbs || !ret->groups || !ret->resources || !ret->names || !ret->urls ||
        (ns && !ret->ns)) {
        kc__rule_free(ret);
        return KC_ENOMEM;
    }
    return 0;
}

void kc__rule_free(kc__rule *r)
{
    free(r->verbs);
    free(r->groups);
    free(r->resources);
    free(r->names);
    free(r->urls);
    free(r->ns);
    free(r->via);
    memset(r, 0, sizeof(*r));
}

static bool has(char *const *v, const char *s)
{
    for (; *v; v++)
        if (!strcmp(*v, s))
            return true;
    return false;
}

static bool has_or_all(char *const *v, const char *s)
{
    for (; *v; v++)
        if (!strcmp(*v, "*") || !strcmp(*v, s))
            return true;
    return false;
}

/* upstream's ResourceMatches */
static bool resource_matches(char *const *v, const char *res, const char *sub)
{
    char combined[300];
    snprintf(combined, sizeof combined, "%s%s%s", res, *sub ? "/" : "", sub);
    size_t sl = strlen(sub);
    for (; *v; v++) {
        if (!strcmp(*v, "*") || !strcmp(*v, combined))
            return true;
        if (sl && strlen(*v) == sl + 2 && !strncmp(*v, "*/", 2) && !strcmp(*v + 2, sub))
            return true;
    }
    return false;
}

/* upstream's NonResourceURLMatches */
static bool url_matches(char *const *v, const char *path)
{
    for (; *v; v++) {
        size_t l = strlen(*v);
        if (!strcmp(*v, "*") || !strcmp(*v, path) ||
            (l && (*v)[l - 1] == '*' && !strncmp(*v, path, l - 1)))
            return true;
    }
    return false;
}

bool kc__rule_allows(const kc__rule *r, const kc__attrs *a)
{
    if (r->ns && (!a->resource_request || strcmp(r->ns, a->ns) != 0))
        return false;
    if (!has_or_all(r->verbs, a->verb))
        return false;
    if (!a->resource_request)
        return url_matches(r->urls, a->path);
    return has_or_all(r->groups, a->group) && resource_matches(r->resources, a->resource, a->sub) &&
           (!r->names[0] || (*a->name && has(r->names, a->name)));
}

void kc__ruleset_free(kc__ruleset *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        kc__rule_free(&s->rules[i]);
    free(s->rules);
    free(s->key);
    free(s);
}

/* name \x1f group \x1f group … into out (false when it does not fit). */
static bool user_key(const kc__user *u, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s", u->name);
    for (size_t i = 0; i < u->n_groups && n >= 0 && (size_t)n < cap; i++)
        n += snprintf(out + n, cap - (size_t)n, "\x1f%s", u->groups[i]);
    return n >= 0 && (size_t)n < cap;
}

/* Is subject s of a binding in binding_ns (NULL: cluster) u? */
static bool subject_is(const json_t *s, const kc__user *u, const char *binding_ns)
{
    const char *kind = json_string_value(json_object_get(s, "kind"));
    const char *name = json_string_value(json_object_get(s, "name"));
    if (!kind || !name)
        return false;
    if (!strcmp(kind, "User"))
        return !strcmp(name, u->name);
    if (!strcmp(kind, "Group")) {
        for (size_t i = 0; i < u->n_groups; i++)
            if (!strcmp(u->groups[i], name))
                return true;
        return false;
    }
    if (!strcmp(kind, "ServiceAccount")) {
        const char *ns = json_string_value(json_object_get(s, "namespace"));
        if (!ns || !*ns)
            ns = binding_ns;
        char sa[600];
        snprintf(sa, sizeof sa, "system:serviceaccount:%s:%s", ns ? ns : "", name);
        return !strcmp(sa, u->name);
    }
    return false;
}

const json_t *kc__role_rules_locked(kc_server *srv, const char *kind, const char *ns,
                                    const char *name, json_t **ret_doc)
{
    struct kc__authz *az = srv->authz;
    *ret_doc = NULL;
    if (!kind || !name)
        return NULL;
    kc__entry *e = !strcmp(kind, "ClusterRole") ? kc__store_find(az->cr, "", name)
                   : !strcmp(kind, "Role")      ? kc__store_find(az->role, ns ? ns : "", name)
                                                : NULL;
    if (!e || !(*ret_doc = kc__doc_from_obj(e->obj)))
        return NULL;
    return json_object_get(*ret_doc, "rules");
}

static int add_rules(kc__ruleset *s, size_t *cap, const json_t *rules, const char *ns,
                     const char *via)
{
    size_t i;
    json_t *pr;
    json_array_foreach(rules, i, pr)
    {
        if (s->n == *cap) {
            size_t c = *cap ? *cap * 2 : 16;
            kc__rule *r = realloc(s->rules, c * sizeof(*r));
            if (!r)
                return KC_ENOMEM;
            s->rules = r;
            *cap = c;
        }
        if (kc__rule_compile(pr, ns, &s->rules[s->n]) != 0)
            return KC_ENOMEM;
        if (!(s->rules[s->n].via = kc__strdup(via))) {
            kc__rule_free(&s->rules[s->n]);
            return KC_ENOMEM;
        }
        s->n++;
    }
    return 0;
}

/* The rules the bindings of r (cluster: ClusterRoleBindings) grant u, into s (mu held). */
static int add_bindings(kc_server *srv, kc__ruleset *s, size_t *cap, kc__rsrc *r, bool cluster,
                        const kc__user *u)
{
    size_t n = 0;
    kc__entry **es = kc__store_sorted(r, &n);
    for (size_t i = 0; i < n; i++) {
        json_t *b = kc__doc_from_obj(es[i]->obj);
        const char *bns = cluster ? NULL : es[i]->ns;
        bool match = false;
        size_t k;
        json_t *sub;
        json_array_foreach(json_object_get(b, "subjects"), k, sub)
        {
            if ((match = subject_is(sub, u, bns)))
                break;
        }
        int rc = 0;
        if (match) {
            json_t *ref = json_object_get(b, "roleRef"), *rd = NULL;
            const char *kind = json_string_value(json_object_get(ref, "kind"));
            const char *name = json_string_value(json_object_get(ref, "name"));
            const json_t *rules = kc__role_rules_locked(srv, kind, bns, name, &rd);
            char via[1024]; /* upstream's describers: RoleBinding "NAME/NS" */
            snprintf(via, sizeof via, "RBAC: allowed by %s \"%s%s%s\" of %s \"%s\" to %s \"%s\"",
                     cluster ? "ClusterRoleBinding" : "RoleBinding", es[i]->name, bns ? "/" : "",
                     bns ? bns : "", kind ? kind : "", name ? name : "",
                     json_string_value(json_object_get(sub, "kind")),
                     json_string_value(json_object_get(sub, "name")));
            rc = add_rules(s, cap, rules, bns, via);
            json_decref(rd);
        }
        json_decref(b);
        if (rc)
            return rc;
    }
    return 0;
}

kc__ruleset *kc__ruleset_build(kc_server *srv, const kc__user *u)
{
    struct kc__authz *az = srv->authz;
    char key[4096];
    kc__ruleset *s = calloc(1, sizeof(*s));
    if (!s || !user_key(u, key, sizeof key) || !(s->key = kc__strdup(key))) {
        kc__ruleset_free(s);
        return NULL;
    }
    for (size_t i = 0; i < u->n_groups; i++)
        s->masters |= !strcmp(u->groups[i], "system:masters");
    size_t cap = 0;
    pthread_mutex_lock(&srv->mu);
    s->gen = kc__authz_gen(az);
    int rc = add_bindings(srv, s, &cap, az->crb, true, u);
    if (!rc)
        rc = add_bindings(srv, s, &cap, az->rb, false, u);
    pthread_mutex_unlock(&srv->mu);
    if (rc) {
        kc__ruleset_free(s);
        return NULL;
    }
    return s;
}

bool kc__ruleset_with(kc_server *srv, const kc__user *u, kc__ruleset_fn f, void *ud)
{
    struct kc__authz *az = srv->authz;
    char key[4096];
    if (!user_key(u, key, sizeof key))
        return false;
    uint64_t gen = kc__authz_gen(az);
    pthread_mutex_lock(&az->mu);
    for (size_t i = 0; i < KC__AUTHZ_CACHE; i++) {
        kc__ruleset *s = az->cache[i];
        if (s && s->gen == gen && !strcmp(s->key, key)) {
            bool ok = f(s, ud);
            pthread_mutex_unlock(&az->mu);
            return ok;
        }
    }
    pthread_mutex_unlock(&az->mu);
    kc__ruleset *s = kc__ruleset_build(srv, u);
    if (!s)
        return false; /* out of memory: deny */
    pthread_mutex_lock(&az->mu);
    bool ok = f(s, ud);
    size_t slot = KC__AUTHZ_CACHE;
    for (size_t i = 0; i < KC__AUTHZ_CACHE && slot == KC__AUTHZ_CACHE; i++)
        if (az->cache[i] && !strcmp(az->cache[i]->key, key))
            slot = i; /* the stale entry of this identity */
    if (slot == KC__AUTHZ_CACHE)
        slot = az->cache_next++ % KC__AUTHZ_CACHE;
    kc__ruleset_free(az->cache[slot]);
    az->cache[slot] = s;
    pthread_mutex_unlock(&az->mu);
    return ok;
}

static bool allows(const kc__ruleset *s, void *ud)
{
    const kc__attrs *a = ud;
    if (s->masters)
        return true;
    for (size_t i = 0; i < s->n; i++)
        if (kc__rule_allows(&s->rules[i], a))
            return true;
    return false;
}

bool kc__authz_allowed(kc_server *srv, const kc__attrs *a)
{
    if (!srv->authz->rbac)
        return true;
    kc__authz_aggregate(srv);
    return kc__ruleset_with(srv, a->user, allows, (void *)a);
}

int kc__authz_forbidden(kc_error *err, const kc__attrs *a)
{
    const char *user = a->user ? a->user->name : "";
    if (!a->resource_request) {
        int rc = kc__fail(err, 403, "Forbidden", "forbidden: User \"%s\" cannot %s path \"%s\"",
                          user, a->verb, a->path);
        kc__fail_details(err, "", NULL, NULL);
        return rc;
    }
    char res[300], gr[300], scope[400];
    snprintf(res, sizeof res, "%s%s%s", a->resource, *a->sub ? "/" : "", a->sub);
    snprintf(gr, sizeof gr, "%s%s%s", a->resource, *a->group ? "." : "", a->group);
    if (*a->ns)
        snprintf(scope, sizeof scope, "in the namespace \"%s\"", a->ns);
    else
        snprintf(scope, sizeof scope, "at the cluster scope");
    char who[600];
    if (*a->name)
        snprintf(who, sizeof who, "%s \"%s\"", gr, a->name);
    else
        snprintf(who, sizeof who, "%s", gr);
    int rc =
        kc__fail(err, 403, "Forbidden",
                 "%s is forbidden: User \"%s\" cannot %s resource \"%s\" in API group \"%s\" %s",
                 who, user, a->verb, res, a->group, scope);
    kc__fail_details(err, a->name, a->group, a->resource);
    return rc;
}
