/*
 * test_server_authz_reviews.c — the review resources of the embedded API server (docs/server.md
 * "Authorization"): SelfSubjectAccessReview, SubjectAccessReview, LocalSubjectAccessReview,
 * SelfSubjectRulesReview (authorization.k8s.io/v1), SelfSubjectReview and TokenReview
 * (authentication.k8s.io/v1), TokenRequest; their discovery and OpenAPI (create only, spec
 * apiserver-semantics §1.3), their protobuf bodies, and errors as Status (§3.7: 400, 404, 405,
 * 422).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "server/authz/authz.h"
#include "test_server_authz_util.h"

#define AUTHZ "/apis/authorization.k8s.io/v1"
#define AUTHN "/apis/authentication.k8s.io/v1"

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

/* SSAR: the requester's decision, with RBAC's reason when allowed. */
static void test_review_self_access(void **state)
{
    kc_server *s = *state;
    const char *body = "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":"
                       "\"SelfSubjectAccessReview\",\"spec\":{\"resourceAttributes\":{"
                       "\"namespace\":\"default\",\"verb\":\"list\",\"resource\":\"pods\"}}}";
    ts_resp r;
    assert_int_equal(az_req(s, AZ_ALICE, "POST", AUTHZ "/selfsubjectaccessreviews", body, &r), 201);
    assert_string_equal(ts_s(r.json, "kind"), "SelfSubjectAccessReview");
    assert_string_equal(ts_s(r.json, "spec.resourceAttributes.verb"), "list");
    assert_true(json_is_false(ts_j(r.json, "status.allowed")));
    ts_resp_free(&r);
    az_role(s, "default", "pod-reader", AZ_RULE("\"\"", "\"pods\"", "\"list\""));
    az_bind(s, "default", "alice-reads", "Role", "pod-reader", "User alice");
    assert_int_equal(az_req(s, AZ_ALICE, "POST", AUTHZ "/selfsubjectaccessreviews", body, &r), 201);
    assert_true(json_is_true(ts_j(r.json, "status.allowed")));
    assert_string_equal(ts_s(r.json, "status.reason"),
                        "RBAC: allowed by RoleBinding \"alice-reads/default\" of Role "
                        "\"pod-reader\" to User \"alice\"");
    ts_resp_free(&r);
    /* non-resource: discovery is allowed to every authenticated user */
    assert_int_equal(az_req(s, AZ_ALICE, "POST", AUTHZ "/selfsubjectaccessreviews",
                            "{\"spec\":{\"nonResourceAttributes\":{\"path\":\"/apis\","
                            "\"verb\":\"get\"}}}",
                            &r),
                     201);
    assert_true(json_is_true(ts_j(r.json, "status.allowed")));
    ts_resp_free(&r);
    /* anonymous may not even ask (system:basic-user is for system:authenticated) */
    assert_int_equal(az_status(s, NULL, "POST", AUTHZ "/selfsubjectaccessreviews", body), 403);
}

/* SAR and LSAR: any subject, asked by one allowed to create them; validation. */
static void test_review_subject_access(void **state)
{
    kc_server *s = *state;
    az_role(s, NULL, "node-reader", AZ_RULE("\"\"", "\"nodes\"", "\"get\""));
    az_bind(s, NULL, "devs-nodes", "ClusterRole", "node-reader", "Group devs");
    ts_resp r;
    assert_int_equal(az_req(s, AZ_ADMIN, "POST", AUTHZ "/subjectaccessreviews",
                            "{\"spec\":{\"user\":\"zed\",\"groups\":[\"devs\"],"
                            "\"resourceAttributes\":{\"verb\":\"get\",\"resource\":\"nodes\","
                            "\"name\":\"n1\"}}}",
                            &r),
                     201);
    assert_true(json_is_true(ts_j(r.json, "status.allowed")));
    assert_string_equal(ts_s(r.json, "status.reason"),
                        "RBAC: allowed by ClusterRoleBinding \"devs-nodes\" of ClusterRole "
                        "\"node-reader\" to Group \"devs\"");
    ts_resp_free(&r);
    assert_int_equal(az_req(s, AZ_ADMIN, "POST", AUTHZ "/subjectaccessreviews",
                            "{\"spec\":{\"user\":\"zed\",\"resourceAttributes\":{\"verb\":\"get\","
                            "\"resource\":\"nodes\"}}}",
                            &r),
                     201);
    assert_true(json_is_false(ts_j(r.json, "status.allowed")));
    ts_resp_free(&r);
    assert_int_equal(az_req(s, AZ_ADMIN, "POST", AUTHZ "/subjectaccessreviews",
                            "{\"spec\":{\"resourceAttributes\":{\"verb\":\"get\"}}}", &r),
                     422);
    assert_string_equal(ts_s(r.json, "reason"), "Invalid");
    ts_resp_free(&r);
    assert_int_equal(az_req(s, AZ_ADMIN, "POST", AUTHZ "/subjectaccessreviews",
                            "{\"spec\":{\"user\":\"zed\"}}", &r),
                     422);
    ts_resp_free(&r);
    assert_int_equal(az_req(s, AZ_ADMIN, "POST",
                            AUTHZ "/namespaces/default/localsubjectaccessreviews",
                            "{\"spec\":{\"user\":\"zed\",\"resourceAttributes\":{\"namespace\":"
                            "\"other\",\"verb\":\"get\",\"resource\":\"pods\"}}}",
                            &r),
                     400);
    assert_string_equal(ts_s(r.json, "message"),
                        "spec.resourceAttributes.namespace must match namespace: default");
    ts_resp_free(&r);
    assert_int_equal(az_req(s, AZ_ADMIN, "POST",
                            AUTHZ "/namespaces/default/localsubjectaccessreviews",
                            "{\"spec\":{\"user\":\"zed\",\"resourceAttributes\":{\"namespace\":"
                            "\"default\",\"verb\":\"get\",\"resource\":\"pods\"}}}",
                            &r),
                     201);
    assert_string_equal(ts_s(r.json, "metadata.namespace"), "default");
    assert_true(json_is_false(ts_j(r.json, "status.allowed")));
    ts_resp_free(&r);
    /* alice may not ask about others */
    assert_int_equal(az_status(s, AZ_ALICE, "POST", AUTHZ "/subjectaccessreviews",
                               "{\"spec\":{\"user\":\"zed\",\"resourceAttributes\":{}}}"),
                     403);
    assert_int_equal(az_status(s, AZ_ADMIN, "POST", AUTHZ "/subjectaccessreviews", "not json"),
                     400);
}

/* SSRR: the rules in a namespace (kubectl auth can-i --list). */
static void test_review_rules(void **state)
{
    kc_server *s = *state;
    az_role(s, "default", "cm",
            "{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],\"resourceNames\":[\"a\"],"
            "\"verbs\":[\"get\"]}");
    az_bind(s, "default", "alice-cm", "Role", "cm", "User alice");
    ts_resp r;
    assert_int_equal(az_req(s, AZ_ALICE, "POST", AUTHZ "/selfsubjectrulesreviews",
                            "{\"spec\":{\"namespace\":\"default\"}}", &r),
                     201);
    assert_true(json_is_false(ts_j(r.json, "status.incomplete")));
    char *txt = json_dumps(ts_j(r.json, "status.resourceRules"), JSON_COMPACT);
    assert_non_null(strstr(txt, "{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":["
                                "\"configmaps\"],\"resourceNames\":[\"a\"]}"));
    assert_non_null(strstr(txt, "selfsubjectaccessreviews"));
    free(txt);
    txt = json_dumps(ts_j(r.json, "status.nonResourceRules"), JSON_COMPACT);
    assert_non_null(strstr(txt, "\"/apis/*\""));
    free(txt);
    ts_resp_free(&r);
    assert_int_equal(az_req(s, AZ_ALICE, "POST", AUTHZ "/selfsubjectrulesreviews",
                            "{\"spec\":{\"namespace\":\"kube-system\"}}", &r),
                     201);
    txt = json_dumps(ts_j(r.json, "status.resourceRules"), JSON_COMPACT);
    assert_null(strstr(txt, "configmaps"));
    free(txt);
    ts_resp_free(&r);
}

/* SelfSubjectReview (whoami), TokenRequest for a ServiceAccount, TokenReview of its token. */
static void test_review_whoami_and_tokens(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(az_req(s, AZ_BOB, "POST", AUTHN "/selfsubjectreviews", "{}", &r), 201);
    assert_string_equal(ts_s(r.json, "status.userInfo.username"), "bob");
    assert_string_equal(ts_s(r.json, "status.userInfo.groups.0"), "devs");
    assert_string_equal(ts_s(r.json, "status.userInfo.groups.1"), "system:authenticated");
    ts_resp_free(&r);
    const char *sa = "/api/v1/namespaces/default/serviceaccounts";
    assert_int_equal(az_status(s, AZ_ADMIN, "POST",
                               "/api/v1/namespaces/default/serviceaccounts/"
                               "nobody/token",
                               "{}"),
                     404);
    az_admin_create(s, sa, "{\"metadata\":{\"name\":\"bot\"}}");
    assert_int_equal(
        az_req(s, AZ_ADMIN, "POST", "/api/v1/namespaces/default/serviceaccounts/bot/token",
               "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenRequest\","
               "\"spec\":{\"expirationSeconds\":600}}",
               &r),
        201);
    assert_string_equal(ts_s(r.json, "kind"), "TokenRequest");
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.expirationSeconds")), 600);
    char tok[128];
    snprintf(tok, sizeof tok, "%s", ts_s(r.json, "status.token"));
    assert_true(strlen(tok) > 20);
    ts_resp_free(&r);
    assert_int_equal(az_req(s, tok, "POST", AUTHN "/selfsubjectreviews", "{}", &r), 201);
    assert_string_equal(ts_s(r.json, "status.userInfo.username"),
                        "system:serviceaccount:default:bot");
    assert_string_equal(ts_s(r.json, "status.userInfo.groups.1"), "system:serviceaccounts:default");
    assert_true(strlen(ts_s(r.json, "status.userInfo.uid")) == 36);
    ts_resp_free(&r);
    char body[256];
    snprintf(body, sizeof body, "{\"spec\":{\"token\":\"%s\"}}", tok);
    assert_int_equal(az_req(s, AZ_ADMIN, "POST", AUTHN "/tokenreviews", body, &r), 201);
    assert_true(json_is_true(ts_j(r.json, "status.authenticated")));
    assert_string_equal(ts_s(r.json, "status.user.username"), "system:serviceaccount:default:bot");
    ts_resp_free(&r);
    assert_int_equal(
        az_req(s, AZ_ADMIN, "POST", AUTHN "/tokenreviews", "{\"spec\":{\"token\":\"wrong\"}}", &r),
        201);
    assert_null(ts_j(r.json, "status.authenticated"));
    ts_resp_free(&r);
    /* the token needs create on serviceaccounts/token */
    assert_int_equal(az_req(s, AZ_ALICE, "POST",
                            "/api/v1/namespaces/default/serviceaccounts/bot/token", "{}", &r),
                     403);
    assert_string_equal(ts_s(r.json, "message"),
                        "serviceaccounts \"bot\" is forbidden: User \"alice\" cannot create "
                        "resource \"serviceaccounts/token\" in API group \"\" in the namespace "
                        "\"default\"");
    ts_resp_free(&r);
}

static json_t *find_res(json_t *list, const char *name)
{
    size_t i;
    json_t *x;
    json_array_foreach(ts_j(list, "resources"), i, x)
    {
        if (!strcmp(ts_s(x, "name"), name))
            return x;
    }
    return NULL;
}

/* Discovery and OpenAPI list the reviews create-only; other verbs 405, names 404. */
static void test_review_discovery(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(az_req(s, AZ_ALICE, "GET", AUTHZ, NULL, &r), 200);
    json_t *ssar = find_res(r.json, "selfsubjectaccessreviews");
    assert_non_null(ssar);
    assert_string_equal(ts_s(ssar, "kind"), "SelfSubjectAccessReview");
    assert_int_equal(json_array_size(ts_j(ssar, "verbs")), 1);
    assert_string_equal(ts_s(ssar, "verbs.0"), "create");
    assert_true(json_is_true(ts_j(find_res(r.json, "localsubjectaccessreviews"), "namespaced")));
    assert_non_null(find_res(r.json, "subjectaccessreviews"));
    assert_non_null(find_res(r.json, "selfsubjectrulesreviews"));
    ts_resp_free(&r);
    assert_int_equal(az_req(s, AZ_ALICE, "GET", AUTHN, NULL, &r), 200);
    assert_non_null(find_res(r.json, "selfsubjectreviews"));
    assert_non_null(find_res(r.json, "tokenreviews"));
    ts_resp_free(&r);
    assert_int_equal(
        az_req(s, AZ_ADMIN, "GET", "/openapi/v3/apis/authorization.k8s.io/v1", NULL, &r), 200);
    assert_non_null(ts_j(json_object_get(ts_j(r.json, "paths"),
                                         "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"),
                         "post"));
    assert_non_null(
        json_object_get(ts_j(r.json, "components.schemas"), "v1.SelfSubjectAccessReview"));
    ts_resp_free(&r);
    assert_int_equal(az_status(s, AZ_ADMIN, "GET", AUTHZ "/selfsubjectaccessreviews", NULL), 405);
    assert_int_equal(az_status(s, AZ_ADMIN, "GET", AUTHZ "/selfsubjectaccessreviews/x", NULL), 404);
    assert_int_equal(
        az_status(s, AZ_ADMIN, "POST", AUTHZ "/namespaces/default/subjectaccessreviews", "{}"),
        404);
    assert_int_equal(az_status(s, AZ_ADMIN, "POST", AUTHZ "/localsubjectaccessreviews", "{}"), 405);
}

/* The protobuf body kubectl's typed client sends ("k8s\0" + runtime.Unknown). */
static void test_review_protobuf_body(void **state)
{
    (void)state;
    /* Unknown{typeMeta{apiVersion, kind}, raw: SSAR{spec{resourceAttributes{ns, verb, res}}}} */
    static const char tm[] = "\x0a\x17"
                             "authorization.k8s.io/v1"
                             "\x12\x17"
                             "SelfSubjectAccessReview";
    static const char ra[] = "\x0a\x07"
                             "default"
                             "\x12\x04"
                             "list"
                             "\x2a\x04"
                             "pods";
    char raw[64], msg[128];
    size_t rl = 0, ml = 0;
    raw[rl++] = 0x12; /* spec */
    raw[rl++] = (char)(sizeof ra - 1 + 2);
    raw[rl++] = 0x0a; /* resourceAttributes */
    raw[rl++] = (char)(sizeof ra - 1);
    memcpy(raw + rl, ra, sizeof ra - 1);
    rl += sizeof ra - 1;
    memcpy(msg, "k8s\0", 4);
    ml = 4;
    msg[ml++] = 0x0a;
    msg[ml++] = (char)(sizeof tm - 1);
    memcpy(msg + ml, tm, sizeof tm - 1);
    ml += sizeof tm - 1;
    msg[ml++] = 0x12;
    msg[ml++] = (char)rl;
    memcpy(msg + ml, raw, rl);
    ml += rl;
    json_t *doc = kc__authz_proto_doc(msg, ml);
    assert_non_null(doc);
    assert_string_equal(ts_s(doc, "spec.resourceAttributes.namespace"), "default");
    assert_string_equal(ts_s(doc, "spec.resourceAttributes.verb"), "list");
    assert_string_equal(ts_s(doc, "spec.resourceAttributes.resource"), "pods");
    json_decref(doc);
    assert_null(kc__authz_proto_doc(msg, ml - 3)); /* truncated */
    assert_null(kc__authz_proto_doc("{}", 2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_review_self_access, setup, teardown),
        cmocka_unit_test_setup_teardown(test_review_subject_access, setup, teardown),
        cmocka_unit_test_setup_teardown(test_review_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_review_whoami_and_tokens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_review_discovery, setup, teardown),
        cmocka_unit_test(test_review_protobuf_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
