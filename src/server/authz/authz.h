/*
 * authz.h — what the authz room (src/server/authz/: authentication and authorization) gives the
 * rooms above it (http): who a request is (bearer tokens: the admin token, --user and
 * --token-auth-file identities, ServiceAccount tokens minted by TokenRequest; impersonation), may
 * it do what it asks (AlwaysAllow, or RBAC over the stored Roles, ClusterRoles and bindings, with
 * a per-identity rule cache invalidated when an RBAC object changes), the 403 Forbidden worded as
 * kube-apiserver's, the review resources (SubjectAccessReview and its kin, SelfSubjectReview),
 * TokenRequest and RBAC escalation prevention. It reads storage and writes only the aggregated
 * ClusterRoles' rules (a controller's write). Not installed.
 */
#ifndef KC_SERVER_AUTHZ_H
#define KC_SERVER_AUTHZ_H

#include "server/storage/storage.h"

#define KC__AUTHZ_MAX_GROUPS 16

/* An identity (user.Info): name, uid, groups. Fixed size: lives on the request's stack. */
typedef struct kc__user {
    char name[256];
    char uid[128];
    char groups[KC__AUTHZ_MAX_GROUPS][160];
    size_t n_groups;
} kc__user;

/* What a request asks (authorizer.Attributes). Resource requests: verb (get, list, watch,
 * create, update, patch, delete, deletecollection, or impersonate, bind, escalate…), group,
 * resource, sub ("" none), ns ("" cluster scope), name ("" none). Non-resource: verb is the
 * lower-case HTTP method, path the URL path. Strings borrowed. */
typedef struct kc__attrs {
    const kc__user *user;
    bool resource_request;
    const char *verb, *group, *version, *resource, *sub, *ns, *name, *path;
} kc__attrs;

/* Set up srv->authz from the options (users, token file, mode): KC_EINVAL naming a bad entry. */
int kc__authz_new(kc_server *srv, const kc_server_opts *o, kc_error *err);
/* Create the bootstrap ClusterRoles and ClusterRoleBindings (RBAC mode only; mu not held, or
 * held when have_lock). Objects that exist are kept. */
int kc__authz_bootstrap(kc_server *srv, bool have_lock, kc_error *err);
void kc__authz_free(kc_server *srv);
/* Is RBAC on? Is any bearer token configured (else every request is anonymous-but-allowed)? */
bool kc__authz_rbac(const kc_server *srv);
bool kc__authz_has_tokens(const kc_server *srv);

/* Authenticate the value of an Authorization header (NULL = none) into *ret. 0, or KC_EUNAUTHORIZED
 * (401: unknown token, or a token required in AlwaysAllow mode and none given). */
int kc__authz_authenticate(kc_server *srv, const char *authorization, kc__user *ret);
/* Impersonation headers (Impersonate-User, -Group…, -Uid) applied to *inout, each authorized by
 * the `impersonate` verb for the original identity. 0, or a 403 in err naming what was refused
 * (or 400 for groups without a user). */
int kc__authz_impersonate(kc_server *srv, kc__user *inout, const char *user,
                          const char *const *groups, size_t n_groups, const char *uid,
                          kc_error *err);
/* The decision for a (AlwaysAllow: true). */
bool kc__authz_allowed(kc_server *srv, const kc__attrs *a);
/* 403 Forbidden for a, worded as kube-apiserver's responsewriters.Forbidden. Returns its code. */
int kc__authz_forbidden(kc_error *err, const kc__attrs *a);

/* Answer a POST to a review resource r (KC__BI_VIRTUAL) by u: *ret a new malloc'd JSON body
 * (201). 400/422 in err for a bad body. */
int kc__authz_review(kc_server *srv, const kc__user *u, const kc__rsrc *r, const char *ns,
                     const char *body, size_t len, char **ret, size_t *ret_len, kc_error *err);
/* The JSON document of a protobuf review or TokenRequest body ("k8s\0" + runtime.Unknown;
 * review_proto.c): new reference, NULL when the body is not one (or malformed). */
json_t *kc__authz_proto_doc(const char *body, size_t len);
/* TokenRequest: POST serviceaccounts/NAME/token in ns: a token for that ServiceAccount (404 when
 * it does not exist). *ret the TokenRequest reply (new malloc'd, 201). */
int kc__authz_token_request(kc_server *srv, const char *ns, const char *name, const char *body,
                            size_t len, char **ret, size_t *ret_len, kc_error *err);
/* RBAC escalation prevention for a create, update or patch of roles, clusterroles, rolebindings,
 * clusterrolebindings by u: 0, or a 403 in err. name: the URL's ("" for a create); ctype the
 * Content-Type (a PATCH's type). Other resources: 0. */
int kc__authz_escalation_check(kc_server *srv, const kc__user *u, const char *resource,
                               const char *ns, const char *name, const char *ctype, bool patch,
                               const char *body, size_t len, kc_error *err);
/* Keep the aggregated ClusterRoles' rules current (the clusterrole-aggregation controller; runs
 * when ClusterRoles changed since it last ran; mu not held). */
void kc__authz_aggregate(kc_server *srv);
/* The first token of user name (borrowed; NULL when none): kubeconfigs written for it. */
const char *kc__authz_token_of(const kc_server *srv, const char *user);

#endif
