/*
 * test_server_authz_util.h — helpers of the authorization tests (header-only, static): an RBAC
 * server with known identities, requests as one of them (bearer token, optional impersonation
 * headers), and RBAC objects created by the admin.
 */
#ifndef KC_TEST_SERVER_AUTHZ_UTIL_H
#define KC_TEST_SERVER_AUTHZ_UTIL_H

#include "test_server_util.h"

#define AZ_ADMIN "admintok"
#define AZ_ALICE "alicetok"
#define AZ_BOB   "bobtok"
#define AZ_ROBOT "robottok"

/* RBAC mode; admin (system:masters), alice (no group), bob (group devs), and the ServiceAccount
 * ns1/robot by a --user entry. */
TS_UNUSED static kc_server *az_start(void)
{
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.authorization = KC_SERVER_AUTHZ_RBAC;
    o.token = AZ_ADMIN;
    o.users = "alice=" AZ_ALICE "\nbob=" AZ_BOB ":devs;system:serviceaccount:ns1:robot=" AZ_ROBOT;
    return ts_start_opts(&o);
}

/* One request as token (NULL = anonymous) with up to two extra headers (NULL = none). */
TS_UNUSED static long az_req_h(kc_server *s, const char *token, const char *method,
                               const char *path, const char *body, const char *h1, const char *h2,
                               ts_resp *r)
{
    char auth[256];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token ? token : "");
    const char *hs[4] = {0};
    size_t n = 0;
    if (token)
        hs[n++] = auth;
    if (h1)
        hs[n++] = h1;
    if (h2)
        hs[n++] = h2;
    ts_req_h(s, method, path, body ? "application/json" : NULL, body, NULL, hs, r);
    return r->status;
}

TS_UNUSED static long az_req(kc_server *s, const char *token, const char *method, const char *path,
                             const char *body, ts_resp *r)
{
    return az_req_h(s, token, method, path, body, NULL, NULL, r);
}

/* The status of one request as token, the reply dropped. */
TS_UNUSED static long az_status(kc_server *s, const char *token, const char *method,
                                const char *path, const char *body)
{
    ts_resp r;
    long st = az_req(s, token, method, path, body, &r);
    ts_resp_free(&r);
    return st;
}

/* Create an object as the admin at path (201 expected). */
TS_UNUSED static void az_admin_create(kc_server *s, const char *path, const char *body)
{
    ts_resp r;
    long st = az_req(s, AZ_ADMIN, "POST", path, body, &r);
    if (st != 201)
        fprintf(stderr, "create %s: %ld %s\n", path, st, r.body ? r.body : "");
    assert_int_equal(st, 201);
    ts_resp_free(&r);
}

#define AZ_RBAC          "/apis/rbac.authorization.k8s.io/v1"
#define AZ_ROLES(ns)     AZ_RBAC "/namespaces/" ns "/roles"
#define AZ_RBS(ns)       AZ_RBAC "/namespaces/" ns "/rolebindings"
#define AZ_CROLES        AZ_RBAC "/clusterroles"
#define AZ_CRBS          AZ_RBAC "/clusterrolebindings"
#define AZ_RULE(g, r, v) "{\"apiGroups\":[" g "],\"resources\":[" r "],\"verbs\":[" v "]}"

/* A Role or ClusterRole body; ns NULL = ClusterRole. rules is the JSON array's inside. */
TS_UNUSED static void az_role(kc_server *s, const char *ns, const char *name, const char *rules)
{
    char path[256], body[4096];
    if (ns)
        snprintf(path, sizeof path, AZ_RBAC "/namespaces/%s/roles", ns);
    else
        snprintf(path, sizeof path, "%s", AZ_CROLES);
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"%s\",\"metadata\":{"
             "\"name\":\"%s\"},\"rules\":[%s]}",
             ns ? "Role" : "ClusterRole", name, rules);
    az_admin_create(s, path, body);
}

/* A binding of role (kind "Role"/"ClusterRole") to one subject ("User alice", "Group devs",
 * "ServiceAccount ns1/robot"); ns NULL = ClusterRoleBinding. */
TS_UNUSED static void az_bind(kc_server *s, const char *ns, const char *name, const char *kind,
                              const char *role, const char *subject)
{
    char path[256], body[4096], skind[32], sname[128], sns[128] = "";
    sscanf(subject, "%31s %127s", skind, sname);
    char *slash = strchr(sname, '/');
    if (slash) {
        *slash = 0;
        snprintf(sns, sizeof sns, ",\"namespace\":\"%s\"", sname);
        memmove(sname, slash + 1, strlen(slash + 1) + 1);
    }
    if (ns)
        snprintf(path, sizeof path, AZ_RBAC "/namespaces/%s/rolebindings", ns);
    else
        snprintf(path, sizeof path, "%s", AZ_CRBS);
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"%s\",\"metadata\":{"
             "\"name\":\"%s\"},\"subjects\":[{\"kind\":\"%s\",\"name\":\"%s\"%s}],\"roleRef\":{"
             "\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"%s\",\"name\":\"%s\"}}",
             ns ? "RoleBinding" : "ClusterRoleBinding", name, skind, sname, sns, kind, role);
    az_admin_create(s, path, body);
}

/* Assert a 403 whose Status message is exactly msg. */
TS_UNUSED static void az_assert_forbidden(ts_resp *r, const char *msg)
{
    assert_int_equal(r->status, 403);
    assert_string_equal(ts_s(r->json, "reason"), "Forbidden");
    assert_string_equal(ts_s(r->json, "message"), msg);
}

#endif
