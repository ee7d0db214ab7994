/*
 * authz_internal.h — what the files of the authz room share: the authz state (identities by
 * token, the RBAC rule cache), compiled policy rules and their matching. Not installed.
 */
#ifndef KC_SERVER_AUTHZ_INTERNAL_H
#define KC_SERVER_AUTHZ_INTERNAL_H

#include "server/authz/authz.h"

#define KC__AUTHZ_CACHE      128  /* identities whose rules are cached */
#define KC__AUTHZ_SA_TOKENS  4096 /* ServiceAccount tokens kept (the oldest go first) */
#define KC__AUTHZ_ADMIN_USER "kubernetes-admin"

typedef struct kc__token {
    char *token;
    kc__user user;
} kc__token;

/* One PolicyRule, its lists as NULL-terminated string arrays (one allocation each). */
typedef struct kc__rule {
    char *ns;  /* the RoleBinding's namespace; NULL: a ClusterRoleBinding's (everywhere) */
    char *via; /* `RBAC: allowed by …` (the binding, role, subject); NULL when compiled alone */
    char **verbs, **groups, **resources, **names, **urls;
} kc__rule;

/* The rules that apply to one identity, as of gen (kc__authz_gen). */
typedef struct kc__ruleset {
    char *key; /* name \x1f group \x1f group … */
    uint64_t gen;
    bool masters; /* system:masters: everything, as upstream's privileged-group authorizer */
    kc__rule *rules;
    size_t n;
} kc__ruleset;

struct kc__authz {
    bool rbac;
    pthread_mutex_t mu; /* toks past n_static, the cache; never held while taking srv->mu */
    kc__token *toks;    /* the configured identities: read-only after kc__authz_new */
    size_t n_toks, cap_toks;
    kc__token *sa_toks; /* minted ServiceAccount tokens, under mu */
    size_t n_sa, cap_sa, sa_next;
    kc__ruleset *cache[KC__AUTHZ_CACHE];
    size_t cache_next;
    kc__rsrc *crb, *rb, *cr, *role; /* the RBAC resources (built-ins: never freed) */
    kc__rsrc *sa;                   /* serviceaccounts */
    _Atomic uint64_t agg_seen;      /* ClusterRole changes the aggregation last saw */
    pthread_mutex_t agg_mu;         /* one aggregation pass at a time */
};

/* The RBAC generation: grows whenever a Role, ClusterRole or binding changes. */
uint64_t kc__authz_gen(const struct kc__authz *az);

/* rbac.c: a rule from a PolicyRule object (ns copied; NULL ok); 0 or KC_ENOMEM. */
int kc__rule_compile(const json_t *pr, const char *ns, kc__rule *ret);
void kc__rule_free(kc__rule *r);
bool kc__rule_allows(const kc__rule *r, const kc__attrs *a);
/* The rules of u (a new ruleset, caller frees with kc__ruleset_free); mu (srv) taken inside. */
kc__ruleset *kc__ruleset_build(kc_server *srv, const kc__user *u);
void kc__ruleset_free(kc__ruleset *s);
/* The PolicyRules of the role a roleRef names (ns for a Role), borrowed from the new doc *ret_doc
 * (caller decrefs); NULL when absent. mu held. */
const json_t *kc__role_rules_locked(kc_server *srv, const char *kind, const char *ns,
                                    const char *name, json_t **ret_doc);
/* Run f with the cached ruleset of u (built when stale) under az->mu; f's result. */
typedef bool (*kc__ruleset_fn)(const kc__ruleset *s, void *ud);
bool kc__ruleset_with(kc_server *srv, const kc__user *u, kc__ruleset_fn f, void *ud);
/* A JSON array of the strings of a NULL-terminated list. */
json_t *kc__strv_json(char *const *v);

/* bootstrap.c: the ServiceAccount groups of ns into u. */
void kc__user_add_group(kc__user *u, const char *g);

#endif
