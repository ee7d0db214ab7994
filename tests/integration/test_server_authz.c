/*
 * test_server_authz.c — RBAC evaluation of the embedded API server (`kcache serve --authorization
 * rbac`; docs/server.md "Authorization"): 401 and 403 with kube-apiserver's Status (spec
 * apiserver-semantics §3.7: reason Forbidden, code 403, details.kind the resource plural), Role
 * and ClusterRole bindings to users, groups and ServiceAccounts, resourceNames, `*`,
 * subresources, non-resource URLs, watch vs list, the rule cache following RBAC changes,
 * ClusterRole aggregation, escalation prevention and impersonation; AlwaysAllow stays allow-all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_authz_util.h"

#include <unistd.h>

static int setup(void **state)
{
    *state = az_start();
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    kc_server_free(*state);
    return 0;
}

/* 401 for an unknown token; 403 wording of upstream's forbiddenMessage for every scope (§3.7). */
static void test_authz_forbidden_messages(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(az_req(s, "nope", "GET", "/api/v1/namespaces/default/pods", NULL, &r), 401);
    assert_string_equal(ts_s(r.json, "reason"), "Unauthorized");
    ts_resp_free(&r);
    az_req(s, AZ_ALICE, "GET", "/api/v1/namespaces/default/pods", NULL, &r);
    az_assert_forbidden(&r,
                        "pods is forbidden: User \"alice\" cannot list resource \"pods\" in API "
                        "group \"\" in the namespace \"default\"");
    assert_string_equal(ts_s(r.json, "details.kind"), "pods");
    assert_null(ts_j(r.json, "details.name"));
    assert_int_equal(json_integer_value(ts_j(r.json, "code")), 403);
    ts_resp_free(&r);
    az_req(s, AZ_ALICE, "GET", "/api/v1/nodes", NULL, &r);
    az_assert_forbidden(&r, "nodes is forbidden: User \"alice\" cannot list resource \"nodes\" in "
                            "API group \"\" at the cluster scope");
    ts_resp_free(&r);
    az_req(s, AZ_ALICE, "GET", "/api/v1/namespaces/default/pods/web", NULL, &r);
    az_assert_forbidden(&r,
                        "pods \"web\" is forbidden: User \"alice\" cannot get resource \"pods\" "
                        "in API group \"\" in the namespace \"default\"");
    assert_string_equal(ts_s(r.json, "details.name"), "web");
    ts_resp_free(&r);
    az_req(s, AZ_ALICE, "GET", "/api/v1/namespaces/default/pods/web/log", NULL, &r);
    az_assert_forbidden(&r, "pods \"web\" is forbidden: User \"alice\" cannot get resource "
                            "\"pods/log\" in API group \"\" in the namespace \"default\"");
    ts_resp_free(&r);
    az_req(s, AZ_ALICE, "DELETE", "/apis/apps/v1/namespaces/default/deployments", NULL, &r);
    az_assert_forbidden(&r, "deployments.apps is forbidden: User \"alice\" cannot deletecollection "
                            "resource \"deployments\" in API group \"apps\" in the namespace "
                            "\"default\"");
    assert_string_equal(ts_s(r.json, "details.group"), "apps");
    ts_resp_free(&r);
    az_req(s, AZ_ALICE, "GET", "/api/v1/namespaces/default/configmaps?watch=1", NULL, &r);
    az_assert_forbidden(&r, "configmaps is forbidden: User \"alice\" cannot watch resource "
                            "\"configmaps\" in API group \"\" in the namespace \"default\"");
    ts_resp_free(&r);
    az_req(s, AZ_ALICE, "GET", "/api/v1/namespaces/kube-system", NULL, &r);
    az_assert_forbidden(&r, "namespaces \"kube-system\" is forbidden: User \"alice\" cannot get "
                            "resource \"namespaces\" in API group \"\" in the namespace "
                            "\"kube-system\"");
    ts_resp_free(&r);
    /* non-resource: anonymous is only a public-info viewer; alice (authenticated) discovers */
    az_req(s, NULL, "GET", "/apis", NULL, &r);
    az_assert_forbidden(&r, "forbidden: User \"system:anonymous\" cannot get path \"/apis\"");
    ts_resp_free(&r);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", "/apis", NULL), 200);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", "/api/v1", NULL), 200);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", "/openapi/v2", NULL), 200);
    az_req(s, AZ_ALICE, "GET", "/admin/rv", NULL, &r);
    az_assert_forbidden(&r, "forbidden: User \"alice\" cannot get path \"/admin/rv\"");
    ts_resp_free(&r);
    assert_int_equal(az_status(s, AZ_ADMIN, "GET", "/admin/rv", NULL), 200);
    assert_int_equal(az_status(s, NULL, "GET", "/version", NULL), 200);
}

/* A RoleBinding grants in its namespace only; list does not grant watch; the rule cache follows
 * the binding's creation and deletion. */
static void test_authz_rolebinding_namespace(void **state)
{
    kc_server *s = *state;
    const char *pods = "/api/v1/namespaces/default/pods";
    assert_int_equal(az_status(s, AZ_ALICE, "GET", pods, NULL), 403);
    az_role(s, "default", "pod-reader", AZ_RULE("\"\"", "\"pods\"", "\"get\",\"list\""));
    az_bind(s, "default", "alice-reads", "Role", "pod-reader", "User alice");
    assert_int_equal(az_status(s, AZ_ALICE, "GET", pods, NULL), 200);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", "/api/v1/namespaces/kube-system/pods", NULL),
                     403);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", "/api/v1/namespaces/default/pods?watch=1", NULL),
                     403);
    assert_int_equal(az_status(s, AZ_ALICE, "POST", pods, "{\"metadata\":{\"name\":\"p\"}}"), 403);
    assert_int_equal(az_status(s, AZ_BOB, "GET", pods, NULL), 403);
    assert_int_equal(az_status(s, AZ_ADMIN, "DELETE", AZ_RBS("default") "/alice-reads", NULL), 200);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", pods, NULL), 403);
}

/* A ClusterRoleBinding to a group applies everywhere, to members only; a RoleBinding may refer to
 * a ClusterRole (granted in its namespace). */
static void test_authz_group_and_clusterrole(void **state)
{
    kc_server *s = *state;
    az_role(s, NULL, "node-reader", AZ_RULE("\"\"", "\"nodes\"", "\"get\",\"list\",\"watch\""));
    az_bind(s, NULL, "devs-nodes", "ClusterRole", "node-reader", "Group devs");
    assert_int_equal(az_status(s, AZ_BOB, "GET", "/api/v1/nodes", NULL), 200);
    assert_int_equal(az_status(s, AZ_BOB, "GET", "/api/v1/nodes?watch=1&timeoutSeconds=1", NULL),
                     200);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", "/api/v1/nodes", NULL), 403);
    /* the bootstrap "view" ClusterRole through a RoleBinding: read in default only */
    az_bind(s, "default", "alice-view", "ClusterRole", "view", "User alice");
    assert_int_equal(
        az_status(s, AZ_ALICE, "GET", "/apis/apps/v1/namespaces/default/deployments", NULL), 200);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", "/apis/apps/v1/deployments", NULL), 403);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", "/api/v1/namespaces/default/secrets", NULL),
                     403);
    assert_int_equal(az_status(s, AZ_ALICE, "POST", "/api/v1/namespaces/default/configmaps",
                               "{\"metadata\":{\"name\":\"c\"}}"),
                     403);
}

/* ServiceAccount subjects and the ServiceAccount groups (system:serviceaccounts:<ns>). */
static void test_authz_serviceaccount(void **state)
{
    kc_server *s = *state;
    az_admin_create(s, "/api/v1/namespaces", "{\"metadata\":{\"name\":\"ns1\"}}");
    const char *cms = "/api/v1/namespaces/ns1/configmaps";
    assert_int_equal(az_status(s, AZ_ROBOT, "GET", cms, NULL), 403);
    az_role(s, "ns1", "cm-all", AZ_RULE("\"\"", "\"configmaps\"", "\"*\""));
    az_bind(s, "ns1", "robot-cm", "Role", "cm-all", "ServiceAccount ns1/robot");
    assert_int_equal(az_status(s, AZ_ROBOT, "GET", cms, NULL), 200);
    assert_int_equal(az_status(s, AZ_ROBOT, "POST", cms, "{\"metadata\":{\"name\":\"c1\"}}"), 201);
    assert_int_equal(az_status(s, AZ_ROBOT, "DELETE", cms, NULL), 200); /* deletecollection */
    az_role(s, "ns1", "secret-list", AZ_RULE("\"\"", "\"secrets\"", "\"list\""));
    az_bind(s, "ns1", "sas-secrets", "Role", "secret-list", "Group system:serviceaccounts:ns1");
    assert_int_equal(az_status(s, AZ_ROBOT, "GET", "/api/v1/namespaces/ns1/secrets", NULL), 200);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", "/api/v1/namespaces/ns1/secrets", NULL), 403);
}

/* resourceNames, `*` resources in a group, subresources and `*\/status`. */
static void test_authz_names_wildcards_subresources(void **state)
{
    kc_server *s = *state;
    az_admin_create(s, "/api/v1/namespaces/default/configmaps", "{\"metadata\":{\"name\":\"a\"}}");
    az_admin_create(s, "/api/v1/namespaces/default/configmaps", "{\"metadata\":{\"name\":\"b\"}}");
    az_role(s, "default", "mixed",
            "{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],\"resourceNames\":[\"a\"],"
            "\"verbs\":[\"get\",\"update\"]}," AZ_RULE(
                "\"apps\"", "\"*\"",
                "\"get\",\"list\"") "," AZ_RULE("\"\"", "\"*/status\"",
                                                "\"get\"") "," AZ_RULE("\"\"", "\"pods/log\"",
                                                                       "\"get\""));
    az_bind(s, "default", "alice-mixed", "Role", "mixed", "User alice");
    const char *cm = "/api/v1/namespaces/default/configmaps/";
    char p[256];
    snprintf(p, sizeof p, "%sa", cm);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", p, NULL), 200);
    snprintf(p, sizeof p, "%sb", cm);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", p, NULL), 403);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", "/api/v1/namespaces/default/configmaps", NULL),
                     403); /* resourceNames never grant a list of everything */
    /* … but a list or watch of that one name by fieldSelector, as upstream's RequestInfo */
    az_role(s, "default", "one-secret",
            "{\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],\"resourceNames\":[\"a\"],"
            "\"verbs\":[\"list\",\"watch\"]}");
    az_bind(s, "default", "alice-one-secret", "Role", "one-secret", "User alice");
    const char *sec = "/api/v1/namespaces/default/secrets";
    char q[256];
    snprintf(q, sizeof q, "%s?fieldSelector=metadata.name%%3Da", sec);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", q, NULL), 200);
    snprintf(q, sizeof q, "%s?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%%3D%%3Da", sec);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", q, NULL), 200);
    snprintf(q, sizeof q, "%s?fieldSelector=metadata.name%%3Db", sec);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", q, NULL), 403);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", sec, NULL), 403);
    assert_int_equal(
        az_status(s, AZ_ALICE, "GET", "/apis/apps/v1/namespaces/default/replicasets", NULL), 200);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", "/apis/batch/v1/namespaces/default/jobs", NULL),
                     403);
    /* pods/status via */
    ts_resp r;
    az_req(s, AZ_ALICE, "GET", "/api/v1/namespaces/default/pods/x/status", NULL, &r);
    assert_int_equal(r.status, 404); /* allowed: the pod does not exist */
    ts_resp_free(&r);
    az_req(s, AZ_ALICE, "GET", "/api/v1/namespaces/default/pods/x", NULL, &r);
    assert_int_equal(r.status, 403);
    ts_resp_free(&r);
    az_req(s, AZ_ALICE, "GET", "/api/v1/namespaces/default/pods/x/log", NULL, &r);
    assert_int_not_equal(r.status, 403);
    ts_resp_free(&r);
}

/* The bootstrap admin/edit/view are aggregated; a labelled ClusterRole joins them, its change and
 * removal follow (the clusterrole-aggregation controller). */
static void test_authz_aggregation(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(az_req(s, AZ_ADMIN, "GET", AZ_CROLES "/view", NULL, &r), 200);
    char *txt = json_dumps(ts_j(r.json, "rules"), JSON_COMPACT);
    assert_non_null(strstr(txt, "\"pods\""));
    assert_null(strstr(txt, "\"create\"")); /* view reads only */
    free(txt);
    ts_resp_free(&r);
    assert_int_equal(az_req(s, AZ_ADMIN, "GET", AZ_CROLES "/admin", NULL, &r), 200);
    txt = json_dumps(ts_j(r.json, "rules"), JSON_COMPACT);
    assert_non_null(strstr(txt, "\"rolebindings\"")); /* admin ⊇ edit ⊇ view */
    assert_non_null(strstr(txt, "\"deletecollection\""));
    assert_non_null(strstr(txt, "\"pods/log\""));
    free(txt);
    ts_resp_free(&r);
    az_admin_create(
        s, AZ_CROLES,
        "{\"metadata\":{\"name\":\"agg\"},\"aggregationRule\":{\"clusterRoleSelectors\":["
        "{\"matchExpressions\":[{\"key\":\"team\",\"operator\":\"In\",\"values\":["
        "\"a\",\"b\"]}]}]},\"rules\":[]}");
    az_admin_create(
        s, AZ_CROLES,
        "{\"metadata\":{\"name\":\"part\",\"labels\":{\"team\":\"a\"}},\"rules\":[" AZ_RULE(
            "\"example.com\"", "\"widgets\"", "\"get\"") "]}");
    assert_int_equal(az_req(s, AZ_ADMIN, "GET", AZ_CROLES "/agg", NULL, &r), 200);
    assert_string_equal(ts_s(r.json, "rules.0.resources.0"), "widgets");
    ts_resp_free(&r);
    az_bind(s, NULL, "alice-agg", "ClusterRole", "agg", "User alice");
    assert_int_equal(az_status(s, AZ_ALICE, "GET", "/api/v1/nodes", NULL), 403);
    assert_int_equal(az_status(s, AZ_ADMIN, "PUT", AZ_CROLES "/part",
                               "{\"metadata\":{\"name\":\"part\",\"labels\":{\"team\":\"b\"}},"
                               "\"rules\":[" AZ_RULE("\"\"", "\"nodes\"", "\"list\"") "]}"),
                     200);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", "/api/v1/nodes", NULL), 200);
    assert_int_equal(az_status(s, AZ_ADMIN, "DELETE", AZ_CROLES "/part", NULL), 200);
    assert_int_equal(az_req(s, AZ_ADMIN, "GET", AZ_CROLES "/agg", NULL, &r), 200);
    assert_int_equal(json_array_size(ts_j(r.json, "rules")), 0);
    ts_resp_free(&r);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", "/api/v1/nodes", NULL), 403);
    /* a wipe restart is a new cluster: its bootstrap policy, aggregated again */
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_server_restart(s, KC_SERVER_RESTART_WIPE, &e), 0);
    assert_int_equal(az_req(s, AZ_ADMIN, "GET", AZ_CROLES "/edit", NULL, &r), 200);
    txt = json_dumps(ts_j(r.json, "rules"), JSON_COMPACT);
    assert_non_null(strstr(txt, "\"pods/exec\""));
    free(txt);
    ts_resp_free(&r);
    assert_int_equal(az_status(s, AZ_ADMIN, "GET", AZ_CROLES "/agg", NULL), 404);
    assert_int_equal(az_status(s, AZ_ALICE, "GET", "/apis", NULL), 200);
}

/* Escalation prevention: a Role granting more than its author holds is refused, so is a binding
 * to such a role, unless the author may escalate / bind. */
static void test_authz_escalation(void **state)
{
    kc_server *s = *state;
    az_role(s, "default", "rbac-manager",
            AZ_RULE("\"rbac.authorization.k8s.io\"", "\"roles\",\"rolebindings\"",
                    "\"create\",\"get\",\"patch\"") "," AZ_RULE("\"\"", "\"pods\"",
                                                                "\"get\",\"list\""));
    az_bind(s, "default", "alice-rbac", "Role", "rbac-manager", "User alice");
    const char *roles = AZ_ROLES("default");
    assert_int_equal(az_status(s, AZ_ALICE, "POST", roles,
                               "{\"metadata\":{\"name\":\"ok\"},\"rules\":[" AZ_RULE(
                                   "\"\"", "\"pods\"", "\"get\"") "]}"),
                     201);
    ts_resp r;
    az_req(s, AZ_ALICE, "POST", roles,
           "{\"metadata\":{\"name\":\"more\"},\"rules\":[" AZ_RULE("\"\"", "\"secrets\"",
                                                                   "\"get\"") "]}",
           &r);
    assert_int_equal(r.status, 403);
    assert_non_null(strstr(ts_s(r.json, "message"),
                           "roles.rbac.authorization.k8s.io \"more\" is forbidden: user \"alice\" "
                           "(groups=[\"system:authenticated\"]) is attempting to grant RBAC "
                           "permissions not currently held:\n{APIGroups:[\"\"], "
                           "Resources:[\"secrets\"], Verbs:[\"get\"]}"));
    ts_resp_free(&r);
    const char *bind_admin = "{\"metadata\":{\"name\":\"b\"},\"subjects\":[{\"kind\":\"User\","
                             "\"name\":\"alice\"}],\"roleRef\":{\"apiGroup\":\"rbac.authorization."
                             "k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"cluster-admin\"}}";
    assert_int_equal(az_status(s, AZ_ALICE, "POST", AZ_RBS("default"), bind_admin), 403);
    /* a PATCH is checked on the object it produces: merge, JSON patch and apply */
    char ok_path[256];
    snprintf(ok_path, sizeof ok_path, "%s/ok", roles);
    const char *more = "{\"rules\":[" AZ_RULE("\"\"", "\"secrets\"", "\"get\"") "]}";
    const char *mt[] = {"application/merge-patch+json", "application/strategic-merge-patch+json"};
    for (size_t i = 0; i < 2; i++) {
        char auth[64] = "Authorization: Bearer " AZ_ALICE;
        const char *hs[] = {auth, NULL};
        ts_req_h(s, "PATCH", ok_path, mt[i], more, NULL, hs, &r);
        assert_int_equal(r.status, 403);
        assert_non_null(strstr(ts_s(r.json, "message"), "not currently held"));
        ts_resp_free(&r);
    }
    {
        char auth[64] = "Authorization: Bearer " AZ_ALICE;
        const char *hs[] = {auth, NULL};
        char apply_path[300];
        snprintf(apply_path, sizeof apply_path, "%s?fieldManager=alice", ok_path);
        ts_req_h(s, "PATCH", apply_path, "application/apply-patch+yaml",
                 "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"Role\","
                 "\"metadata\":{\"name\":\"ok\"},\"rules\":[" AZ_RULE("\"\"", "\"secrets\"",
                                                                      "\"get\"") "]}",
                 NULL, hs, &r);
        assert_int_equal(r.status, 403);
        ts_resp_free(&r);
        ts_req_h(s, "PATCH", ok_path, "application/json-patch+json",
                 "[{\"op\":\"replace\",\"path\":\"/rules/0/verbs\",\"value\":[\"delete\"]}]", NULL,
                 hs, &r);
        assert_int_equal(r.status, 403);
        ts_resp_free(&r);
        ts_req_h(s, "PATCH", ok_path, "application/merge-patch+json",
                 "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}", NULL, hs, &r);
        assert_int_equal(r.status, 200); /* the rules stay what she holds */
        ts_resp_free(&r);
    }
    /* bind on exactly that ClusterRole lets her */
    az_role(s, NULL, "binder",
            "{\"apiGroups\":[\"rbac.authorization.k8s.io\"],\"resources\":[\"clusterroles\"],"
            "\"resourceNames\":[\"cluster-admin\"],\"verbs\":[\"bind\"]}");
    az_bind(s, "default", "alice-binder", "ClusterRole", "binder", "User alice");
    assert_int_equal(az_status(s, AZ_ALICE, "POST", AZ_RBS("default"), bind_admin), 201);
    /* now holding cluster-admin in default, she may create the Role she could not */
    assert_int_equal(az_status(s, AZ_ALICE, "POST", roles,
                               "{\"metadata\":{\"name\":\"more\"},\"rules\":[" AZ_RULE(
                                   "\"\"", "\"secrets\"", "\"get\"") "]}"),
                     201);
}

/* Impersonation: allowed by the impersonate verb (system:masters has it), the impersonated
 * identity is what is authorized; a ServiceAccount gets its groups. */
static void test_authz_impersonation(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    az_req_h(s, AZ_ADMIN, "GET", "/api/v1/namespaces/default/pods", NULL, "Impersonate-User: alice",
             NULL, &r);
    az_assert_forbidden(&r,
                        "pods is forbidden: User \"alice\" cannot list resource \"pods\" in API "
                        "group \"\" in the namespace \"default\"");
    ts_resp_free(&r);
    az_req_h(s, AZ_ALICE, "GET", "/api/v1/namespaces/default/pods", NULL, "Impersonate-User: bob",
             NULL, &r);
    az_assert_forbidden(&r,
                        "users \"bob\" is forbidden: User \"alice\" cannot impersonate resource "
                        "\"users\" in API group \"\" at the cluster scope");
    ts_resp_free(&r);
    az_role(s, NULL, "node-lister", AZ_RULE("\"\"", "\"nodes\"", "\"list\""));
    az_bind(s, NULL, "sas-nodes", "ClusterRole", "node-lister", "Group system:serviceaccounts");
    assert_int_equal(az_req_h(s, AZ_ADMIN, "GET", "/api/v1/nodes", NULL,
                              "Impersonate-User: system:serviceaccount:x:y", NULL, &r),
                     200);
    ts_resp_free(&r);
    assert_int_equal(az_req_h(s, AZ_ADMIN, "GET", "/api/v1/nodes", NULL, "Impersonate-User: carol",
                              "Impersonate-Group: system:serviceaccounts", &r),
                     200);
    ts_resp_free(&r);
    assert_int_equal(az_req_h(s, AZ_ADMIN, "GET", "/api/v1/nodes", NULL,
                              "Impersonate-Group: system:masters", NULL, &r),
                     400); /* a group without a user */
    ts_resp_free(&r);
}

typedef struct reader {
    kc_server *s;
    pthread_t th;
    int other; /* answers neither 200 nor 403 */
} reader;

static void *read_loop(void *arg)
{
    reader *x = arg;
    for (int i = 0; i < 150; i++) {
        long st = az_status(x->s, AZ_ALICE, "GET", "/api/v1/namespaces/default/pods", NULL);
        x->other += st != 200 && st != 403;
    }
    return NULL;
}

/* Requests racing RBAC changes: every answer is a decision (200 or 403), never an error, and
 * the last state wins (the cache is rebuilt from a consistent store). */
static void test_authz_concurrent_changes(void **state)
{
    kc_server *s = *state;
    az_role(s, "default", "pod-reader", AZ_RULE("\"\"", "\"pods\"", "\"list\""));
    reader rs[2] = {{.s = s}, {.s = s}};
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&rs[i].th, NULL, read_loop, &rs[i]), 0);
    for (int i = 0; i < 15; i++) {
        az_bind(s, "default", "alice-reads", "Role", "pod-reader", "User alice");
        assert_int_equal(az_status(s, AZ_ADMIN, "DELETE", AZ_RBS("default") "/alice-reads", NULL),
                         200);
    }
    az_bind(s, "default", "alice-reads", "Role", "pod-reader", "User alice");
    for (int i = 0; i < 2; i++) {
        pthread_join(rs[i].th, NULL);
        assert_int_equal(rs[i].other, 0);
    }
    assert_int_equal(az_status(s, AZ_ALICE, "GET", "/api/v1/namespaces/default/pods", NULL), 200);
}

/* Identities from a token auth file (kube-apiserver's CSV), the kubeconfig of one identity, and
 * refused configurations. */
static void test_authz_identity_config(void **state)
{
    (void)state;
    char path[] = "/tmp/kc-authz-tokens.XXXXXX", kc[] = "/tmp/kc-authz-kc.XXXXXX";
    int fd = mkstemp(path), kfd = mkstemp(kc);
    assert_true(fd >= 0 && kfd >= 0);
    close(kfd);
    const char *csv = "# token,user,uid,groups\ncarol-token,carol,u-1,\"ops,devs\"\n"
                      "dave-token,dave,u-2\n";
    assert_int_equal(write(fd, csv, strlen(csv)), (ssize_t)strlen(csv));
    close(fd);
    kc_server_opts o;
    memset(&o, 0, sizeof o);
    o.authorization = KC_SERVER_AUTHZ_RBAC;
    o.token_auth_file = path;
    kc_server *s = ts_start_opts(&o);
    assert_non_null(s);
    ts_resp r;
    assert_int_equal(az_req(s, "carol-token", "POST",
                            "/apis/authentication.k8s.io/v1/"
                            "selfsubjectreviews",
                            "{}", &r),
                     201);
    assert_string_equal(ts_s(r.json, "status.userInfo.username"), "carol");
    assert_string_equal(ts_s(r.json, "status.userInfo.uid"), "u-1");
    assert_string_equal(ts_s(r.json, "status.userInfo.groups.1"), "devs");
    ts_resp_free(&r);
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_server_write_kubeconfig_as(s, "dave", kc, &e), 0);
    FILE *f = fopen(kc, "r");
    char buf[8192] = "";
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    assert_non_null(strstr(buf, "dave-token"));
    assert_int_equal(kc_server_write_kubeconfig_as(s, "nobody", kc, &e), KC_ENOTFOUND);
    kc_error_clear(&e);
    /* the admin kubeconfig of RBAC mode carries a generated system:masters token */
    assert_int_equal(kc_server_write_kubeconfig(s, kc, &e), 0);
    kc_server_free(s);
    unlink(path);
    unlink(kc);
    /* refused: a bad --user entry, a missing token file, an unknown mode */
    kc_server *bad = NULL;
    memset(&o, 0, sizeof o);
    o.users = "no-token-here";
    assert_int_equal(kc_server_new(&o, &bad, &e), KC_EINVAL);
    assert_non_null(strstr(e.message, "NAME=TOKEN"));
    kc_error_clear(&e);
    memset(&o, 0, sizeof o);
    o.token_auth_file = "/nonexistent/tokens.csv";
    assert_int_equal(kc_server_new(&o, &bad, &e), KC_EIO);
    kc_error_clear(&e);
    memset(&o, 0, sizeof o);
    o.authorization = 7;
    assert_int_equal(kc_server_new(&o, &bad, &e), KC_EINVAL);
    kc_error_clear(&e);
    assert_null(bad);
}

/* AlwaysAllow (the default) allows everything and answers the reviews with allowed. */
static void test_authz_always_allow(void **state)
{
    (void)state;
    kc_server *s = ts_start();
    assert_non_null(s);
    ts_resp r;
    assert_int_equal(ts_get(s, "/api/v1/nodes", &r), 200);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, AZ_CROLES, &r), 200);
    assert_int_equal(json_array_size(ts_j(r.json, "items")), 0); /* no bootstrap policy */
    ts_resp_free(&r);
    assert_int_equal(ts_post(s, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                             "{\"spec\":{\"resourceAttributes\":{\"verb\":\"delete\",\"resource\":"
                             "\"nodes\"}}}",
                             &r),
                     201);
    assert_true(json_is_true(ts_j(r.json, "status.allowed")));
    ts_resp_free(&r);
    kc_server_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_authz_forbidden_messages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_authz_rolebinding_namespace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_authz_group_and_clusterrole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_authz_serviceaccount, setup, teardown),
        cmocka_unit_test_setup_teardown(test_authz_names_wildcards_subresources, setup, teardown),
        cmocka_unit_test_setup_teardown(test_authz_aggregation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_authz_escalation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_authz_impersonation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_authz_concurrent_changes, setup, teardown),
        cmocka_unit_test(test_authz_identity_config),
        cmocka_unit_test(test_authz_always_allow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
