/*
 * match.c — should a webhook be called (kube-apiserver's ShouldCallHook): namespaceSelector
 * (MW5), objectSelector (MW6), rules (MW2–MW4: operations, apiGroups, apiVersions, resources
 * with subresources and wildcards, scope), in that order; a selector's error (a namespace that
 * does not exist) only counts when a rule matched (MW1). matchPolicy Equivalent (MW8) is the
 * server's versions of the same custom resource (conversion None: the same object under another
 * apiVersion; chain.c converts). matchConditions need CEL, which this server does not have: a
 * webhook carrying them fails its evaluation (MW9), so Fail refuses the request and Ignore skips
 * the webhook; it is never called as if they held.
 */
#include "server/admission/admission_internal.h"
#include "server/validation/validation.h"

#include <string.h>

static bool list_has(const json_t *list, const char *v)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        const char *s = json_string_value(e);
        if (s && (!strcmp(s, "*") || !strcmp(s, v)))
            return true;
    }
    return false;
}

/* MW3: "pods", "pods/status", "*" (no subresources), "pods" slash star (its subresources only),
 * star slash "scale", and star slash star (everything). */
static bool resource_match(const json_t *list, const char *plural, const char *sub)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        const char *s = json_string_value(e);
        if (!s)
            continue;
        const char *slash = strchr(s, '/');
        size_t rl = slash ? (size_t)(slash - s) : strlen(s);
        bool res = (rl == 1 && s[0] == '*') || (strlen(plural) == rl && !strncmp(s, plural, rl));
        if (!res)
            continue;
        if (!slash) {
            if (!*sub)
                return true;
        } else if (!strcmp(slash + 1, "*")) {
            if (*sub || (rl == 1 && s[0] == '*'))
                return true;
        } else if (!strcmp(slash + 1, sub)) {
            return true;
        }
    }
    return false;
}

static bool is_namespaces(const kc__rsrc *r)
{
    return !r->group[0] && !strcmp(r->plural, "namespaces");
}

/* MW4 */
static bool scope_match(const char *scope, const kc__rsrc *r)
{
    if (!scope || !strcmp(scope, "*"))
        return true;
    bool cluster = !r->namespaced || is_namespaces(r);
    if (!strcmp(scope, "Cluster"))
        return cluster;
    if (!strcmp(scope, "Namespaced"))
        return !cluster;
    return false;
}

/* MW2: does some rule match the request at version? */
static bool rules_match(const kc__adm_chain *c, const json_t *rules, const char *version)
{
    const kc__adm_attrs *a = &c->a;
    const char *sub = a->sub ? a->sub : "";
    size_t i;
    json_t *rule;
    json_array_foreach(rules, i, rule)
    {
        if (list_has(json_object_get(rule, "operations"), a->op) &&
            list_has(json_object_get(rule, "apiGroups"), a->r->group) &&
            list_has(json_object_get(rule, "apiVersions"), version) &&
            resource_match(json_object_get(rule, "resources"), a->r->plural, sub) &&
            scope_match(json_string_value(json_object_get(rule, "scope")), a->r))
            return true;
    }
    return false;
}

bool kc__adm_selector_match(const json_t *sel, const json_t *labels)
{
    if (!json_is_object(sel))
        return true; /* no selector: every object */
    bool empty, bad;
    bool m = kc__v_selector_matches(sel, labels, &empty, &bad);
    return empty || m; /* {} selects everything; an invalid selector nothing */
}

static const json_t *labels_of(const json_t *obj)
{
    return obj ? json_object_get(json_object_get(obj, "metadata"), "labels") : NULL;
}

/* MW5: the namespace selector; *missing when the namespace does not exist. */
static bool ns_match(const kc__adm_chain *c, const kc__adm_hook *h, const json_t *obj,
                     bool *missing)
{
    const json_t *sel = json_object_get(h->def, "namespaceSelector");
    *missing = false;
    if (is_namespaces(c->a.r)) /* (b) the incoming object, (c) DELETE: the stored one */
        return kc__adm_selector_match(sel, labels_of(obj ? obj : c->a.old));
    if (!c->a.r->namespaced || !c->a.ns || !*c->a.ns) /* (a) */
        return true;
    if (c->ns_missing) {
        *missing = true;
        return true;
    }
    return kc__adm_selector_match(sel, c->ns_labels);
}

int kc__adm_match(const kc__adm_chain *c, const kc__adm_hook *h, const json_t *obj, bool *ret,
                  kc_error *err)
{
    *ret = false;
    bool missing;
    if (!ns_match(c, h, obj, &missing))
        return 0;
    const json_t *osel = json_object_get(h->def, "objectSelector"); /* MW6: new or old labels */
    if (json_is_object(osel) && !((obj && kc__adm_selector_match(osel, labels_of(obj))) ||
                                  (c->a.old && kc__adm_selector_match(osel, labels_of(c->a.old)))))
        return 0;
    const json_t *rules = json_object_get(h->def, "rules");
    bool matched = rules_match(c, rules, c->a.version);
    if (!matched && c->a.r->is_crd) { /* MW8: another served version of the same resource */
        const char *mp = json_string_value(json_object_get(h->def, "matchPolicy"));
        for (size_t i = 0; !matched && (!mp || strcmp(mp, "Exact")) && i < c->a.r->n_versions; i++)
            matched = rules_match(c, rules, c->a.r->versions[i]);
    }
    if (!matched)
        return 0;
    if (missing) /* MW5 d */
        return kc__fail(err, 404, "NotFound", "namespaces \"%s\" not found", c->a.ns);
    if (json_array_size(json_object_get(h->def, "matchConditions"))) { /* MW9: no CEL here */
        if (h->ignore)
            return 0;
        const char *name = c->a.name && *c->a.name ? c->a.name : "";
        return kc__fail(err, 403, "Forbidden",
                        "%s%s%s \"%s\" is forbidden: webhook \"%s\": matchConditions cannot be "
                        "evaluated: CEL expressions are not supported by this server",
                        c->a.r->plural, c->a.r->group[0] ? "." : "", c->a.r->group, name, h->name);
    }
    *ret = true;
    return 0;
}
