/*
 * test_server_api_resources.c — the built-in resource table as discovery shows it (spec §1.3,
 * checklist #3, #4): every resource a Kubernetes 1.34 server's discovery lists and that can be
 * stored without a controller, with scope, short names, categories, verbs and subresources; the
 * aggregated (apidiscovery.k8s.io/v2) documents; each resource storable (create, get, list,
 * delete); RBAC names with ':'; the scale subresource of replicationcontrollers.
 *
 * The expected rows below are a real kube-apiserver 1.34's discovery (its /api/v1 and
 * /apis/{g}/{v} documents, written from the upstream resource registrations: pkg/registry and
 * the REST storage providers of each group), less what nothing can store: bindings and
 * componentstatuses. The review resources of authentication.k8s.io and authorization.k8s.io are
 * served create-only (test_server_authz_reviews.c answers them) and skipped by the storable test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

static int setup(void **state)
{
    *state = ts_start();
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    kc_server_free(*state);
    return 0;
}

#define A  "create,delete,deletecollection,get,list,patch,update,watch"
#define AE "api-extensions"

/* groupVersion plural shortNames(,) namespaced kind categories(,) verbs subresources(,) */
static const struct row {
    const char *gv, *plural, *shorts;
    bool ns;
    const char *kind, *cats, *verbs, *subs;
} rows[] = {
    {"v1", "configmaps", "cm", true, "ConfigMap", "", A, ""},
    {"v1", "endpoints", "ep", true, "Endpoints", "", A, ""},
    {"v1", "events", "ev", true, "Event", "", A, ""},
    {"v1", "limitranges", "limits", true, "LimitRange", "", A, ""},
    {"v1", "namespaces", "ns", false, "Namespace", "", "create,delete,get,list,patch,update,watch",
     "finalize,status"},
    {"v1", "nodes", "no", false, "Node", "", A, "proxy,status"},
    {"v1", "persistentvolumeclaims", "pvc", true, "PersistentVolumeClaim", "", A, "status"},
    {"v1", "persistentvolumes", "pv", false, "PersistentVolume", "", A, "status"},
    {"v1", "pods", "po", true, "Pod", "all", A,
     "attach,binding,ephemeralcontainers,eviction,exec,log,portforward,proxy,resize,status"},
    {"v1", "podtemplates", "", true, "PodTemplate", "", A, ""},
    {"v1", "replicationcontrollers", "rc", true, "ReplicationController", "all", A, "scale,status"},
    {"v1", "resourcequotas", "quota", true, "ResourceQuota", "", A, "status"},
    {"v1", "secrets", "", true, "Secret", "", A, ""},
    {"v1", "serviceaccounts", "sa", true, "ServiceAccount", "", A, "token"},
    {"v1", "services", "svc", true, "Service", "all", A, "proxy,status"},
    {"admissionregistration.k8s.io/v1", "mutatingwebhookconfigurations", "", false,
     "MutatingWebhookConfiguration", AE, A, ""},
    {"admissionregistration.k8s.io/v1", "validatingadmissionpolicies", "", false,
     "ValidatingAdmissionPolicy", AE, A, "status"},
    {"admissionregistration.k8s.io/v1", "validatingadmissionpolicybindings", "", false,
     "ValidatingAdmissionPolicyBinding", AE, A, ""},
    {"admissionregistration.k8s.io/v1", "validatingwebhookconfigurations", "", false,
     "ValidatingWebhookConfiguration", AE, A, ""},
    {"apiextensions.k8s.io/v1", "customresourcedefinitions", "crd,crds", false,
     "CustomResourceDefinition", AE, A, "status"},
    {"apiregistration.k8s.io/v1", "apiservices", "", false, "APIService", AE, A, "status"},
    {"apps/v1", "controllerrevisions", "", true, "ControllerRevision", "", A, ""},
    {"apps/v1", "daemonsets", "ds", true, "DaemonSet", "all", A, "status"},
    {"apps/v1", "deployments", "deploy", true, "Deployment", "all", A, "scale,status"},
    {"apps/v1", "replicasets", "rs", true, "ReplicaSet", "all", A, "scale,status"},
    {"apps/v1", "statefulsets", "sts", true, "StatefulSet", "all", A, "scale,status"},
    {"autoscaling/v2", "horizontalpodautoscalers", "hpa", true, "HorizontalPodAutoscaler", "all", A,
     "status"},
    {"autoscaling/v1", "horizontalpodautoscalers", "hpa", true, "HorizontalPodAutoscaler", "all", A,
     "status"},
    {"batch/v1", "cronjobs", "cj", true, "CronJob", "all", A, "status"},
    {"batch/v1", "jobs", "", true, "Job", "all", A, "status"},
    {"certificates.k8s.io/v1", "certificatesigningrequests", "csr", false,
     "CertificateSigningRequest", "", A, "approval,status"},
    {"coordination.k8s.io/v1", "leases", "", true, "Lease", "", A, ""},
    {"discovery.k8s.io/v1", "endpointslices", "", true, "EndpointSlice", "", A, ""},
    {"events.k8s.io/v1", "events", "ev", true, "Event", "", A, ""},
    {"authentication.k8s.io/v1", "selfsubjectreviews", "", false, "SelfSubjectReview", "", "create",
     ""},
    {"authentication.k8s.io/v1", "tokenreviews", "", false, "TokenReview", "", "create", ""},
    {"authorization.k8s.io/v1", "localsubjectaccessreviews", "", true, "LocalSubjectAccessReview",
     "", "create", ""},
    {"authorization.k8s.io/v1", "selfsubjectaccessreviews", "", false, "SelfSubjectAccessReview",
     "", "create", ""},
    {"authorization.k8s.io/v1", "selfsubjectrulesreviews", "", false, "SelfSubjectRulesReview", "",
     "create", ""},
    {"authorization.k8s.io/v1", "subjectaccessreviews", "", false, "SubjectAccessReview", "",
     "create", ""},
    {"flowcontrol.apiserver.k8s.io/v1", "flowschemas", "", false, "FlowSchema", "", A, "status"},
    {"flowcontrol.apiserver.k8s.io/v1", "prioritylevelconfigurations", "", false,
     "PriorityLevelConfiguration", "", A, "status"},
    {"networking.k8s.io/v1", "ingressclasses", "", false, "IngressClass", "", A, ""},
    {"networking.k8s.io/v1", "ingresses", "ing", true, "Ingress", "", A, "status"},
    {"networking.k8s.io/v1", "ipaddresses", "ip", false, "IPAddress", "", A, ""},
    {"networking.k8s.io/v1", "networkpolicies", "netpol", true, "NetworkPolicy", "", A, ""},
    {"networking.k8s.io/v1", "servicecidrs", "", false, "ServiceCIDR", "", A, "status"},
    {"node.k8s.io/v1", "runtimeclasses", "", false, "RuntimeClass", "", A, ""},
    {"policy/v1", "poddisruptionbudgets", "pdb", true, "PodDisruptionBudget", "", A, "status"},
    {"rbac.authorization.k8s.io/v1", "clusterrolebindings", "", false, "ClusterRoleBinding", "", A,
     ""},
    {"rbac.authorization.k8s.io/v1", "clusterroles", "", false, "ClusterRole", "", A, ""},
    {"rbac.authorization.k8s.io/v1", "rolebindings", "", true, "RoleBinding", "", A, ""},
    {"rbac.authorization.k8s.io/v1", "roles", "", true, "Role", "", A, ""},
    {"resource.k8s.io/v1", "deviceclasses", "", false, "DeviceClass", "", A, ""},
    {"resource.k8s.io/v1", "resourceclaims", "", true, "ResourceClaim", "", A, "status"},
    {"resource.k8s.io/v1", "resourceclaimtemplates", "", true, "ResourceClaimTemplate", "", A, ""},
    {"resource.k8s.io/v1", "resourceslices", "", false, "ResourceSlice", "", A, ""},
    {"scheduling.k8s.io/v1", "priorityclasses", "pc", false, "PriorityClass", "", A, ""},
    {"storage.k8s.io/v1", "csidrivers", "", false, "CSIDriver", "", A, ""},
    {"storage.k8s.io/v1", "csinodes", "", false, "CSINode", "", A, ""},
    {"storage.k8s.io/v1", "csistoragecapacities", "", true, "CSIStorageCapacity", "", A, ""},
    {"storage.k8s.io/v1", "storageclasses", "sc", false, "StorageClass", "", A, ""},
    {"storage.k8s.io/v1", "volumeattachments", "", false, "VolumeAttachment", "", A, "status"},
    {"storage.k8s.io/v1", "volumeattributesclasses", "vac", false, "VolumeAttributesClass", "", A,
     ""},
};

/* A JSON array of strings joined with ',' ("" for none or absent). */
static void joined(json_t *a, char *out, size_t cap)
{
    size_t i, n = 0;
    json_t *v;
    out[0] = 0;
    json_array_foreach(a, i, v) n +=
        (size_t)snprintf(out + n, cap - n, "%s%s", i ? "," : "", json_string_value(v));
}

static void discovery_path(const char *gv, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s", strchr(gv, '/') ? "/apis/" : "/api/", gv);
}

/* #3: each row's resource and subresource entries, and no resource beyond the rows. */
static void test_server_api_resource_table_matches_a_real_server_3(void **state)
{
    for (size_t i = 0; i < (sizeof(rows) / sizeof(rows[0])); i++) {
        const struct row *w = &rows[i];
        char path[256], got[512];
        discovery_path(w->gv, path, sizeof(path));
        ts_resp r;
        assert_int_equal(ts_get(*state, path, &r), 200);
        json_t *res = ts_j(r.json, "resources"), *x, *main = NULL;
        size_t k;
        char subs[512] = "";
        json_array_foreach(res, k, x)
        {
            const char *n = ts_s(x, "name");
            if (!strcmp(n, w->plural))
                main = x;
            else if (!strncmp(n, w->plural, strlen(w->plural)) && n[strlen(w->plural)] == '/')
                snprintf(subs + strlen(subs), sizeof(subs) - strlen(subs), "%s%s",
                         subs[0] ? "," : "", n + strlen(w->plural) + 1);
        }
        if (!main)
            fail_msg("%s %s: not in discovery", w->gv, w->plural);
        assert_string_equal(ts_s(main, "kind"), w->kind);
        assert_int_equal(json_is_true(ts_j(main, "namespaced")), w->ns);
        joined(ts_j(main, "shortNames"), got, sizeof(got));
        assert_string_equal(got, w->shorts);
        joined(ts_j(main, "categories"), got, sizeof(got));
        assert_string_equal(got, w->cats);
        joined(ts_j(main, "verbs"), got, sizeof(got));
        assert_string_equal(got, w->verbs);
        assert_string_equal(subs, w->subs);
        ts_resp_free(&r);
    }
    /* nothing more: every resource of every group-version is a row */
    ts_resp g;
    assert_int_equal(ts_get(*state, "/apis", &g), 200);
    size_t total = 0, gi, vi;
    json_t *grp, *ver;
    char gvs[64][128];
    size_t ngv = 0;
    snprintf(gvs[ngv++], sizeof(gvs[0]), "v1");
    json_array_foreach(ts_j(g.json, "groups"), gi, grp)
    {
        json_array_foreach(ts_j(grp, "versions"), vi, ver)
            snprintf(gvs[ngv++], sizeof(gvs[0]), "%s", ts_s(ver, "groupVersion"));
    }
    ts_resp_free(&g);
    for (size_t i = 0; i < ngv; i++) {
        char path[256];
        discovery_path(gvs[i], path, sizeof(path));
        ts_resp r;
        assert_int_equal(ts_get(*state, path, &r), 200);
        json_t *x;
        size_t k;
        json_array_foreach(ts_j(r.json, "resources"), k, x) total += !strchr(ts_s(x, "name"), '/');
        ts_resp_free(&r);
    }
    assert_int_equal(total, (sizeof(rows) / sizeof(rows[0])));
}

/* #3: subresource entries carry their own kind, and group/version when not the parent's. */
static void test_server_api_subresource_kinds_3(void **state)
{
    ts_resp r;
    assert_int_equal(ts_get(*state, "/api/v1", &r), 200);
    size_t k;
    json_t *x;
    int seen = 0;
    json_array_foreach(ts_j(r.json, "resources"), k, x)
    {
        const char *n = ts_s(x, "name");
        if (!strcmp(n, "pods/exec")) {
            assert_string_equal(ts_s(x, "kind"), "PodExecOptions");
            assert_string_equal(ts_s(x, "verbs.0"), "create");
            seen++;
        } else if (!strcmp(n, "pods/eviction")) {
            assert_string_equal(ts_s(x, "group"), "policy");
            assert_string_equal(ts_s(x, "kind"), "Eviction");
            seen++;
        } else if (!strcmp(n, "replicationcontrollers/scale")) {
            assert_string_equal(ts_s(x, "group"), "autoscaling");
            assert_string_equal(ts_s(x, "version"), "v1");
            assert_string_equal(ts_s(x, "kind"), "Scale");
            seen++;
        } else if (!strcmp(n, "namespaces/finalize")) {
            assert_string_equal(ts_s(x, "verbs.0"), "update");
            assert_null(ts_j(x, "group"));
            seen++;
        }
    }
    assert_int_equal(seen, 4);
    ts_resp_free(&r);
}

/* #4: the aggregated Accept gets an APIGroupDiscoveryList under its own Content-Type. */
static void test_server_api_aggregated_discovery_4(void **state)
{
    const char *accept =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
        "application/json";
    ts_resp r;
    ts_req(*state, "GET", "/apis", NULL, NULL, accept, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.ctype, "application/json;g=apidiscovery.k8s.io;v=v2;as="
                                 "APIGroupDiscoveryList");
    assert_string_equal(ts_s(r.json, "kind"), "APIGroupDiscoveryList");
    assert_string_equal(ts_s(r.json, "apiVersion"), "apidiscovery.k8s.io/v2");
    json_t *apps = NULL, *as = NULL, *g, *v;
    size_t i;
    json_array_foreach(ts_j(r.json, "items"), i, g)
    {
        if (!strcmp(ts_s(g, "metadata.name"), "apps"))
            apps = g;
        if (!strcmp(ts_s(g, "metadata.name"), "autoscaling"))
            as = g;
    }
    assert_non_null(apps);
    assert_string_equal(ts_s(as, "versions.0.version"), "v2"); /* preferred first */
    assert_string_equal(ts_s(as, "versions.1.version"), "v1");
    json_array_foreach(ts_j(apps, "versions.0.resources"), i, v)
    {
        if (strcmp(ts_s(v, "resource"), "deployments"))
            continue;
        assert_string_equal(ts_s(v, "scope"), "Namespaced");
        assert_string_equal(ts_s(v, "singularResource"), "deployment");
        assert_string_equal(ts_s(v, "responseKind.kind"), "Deployment");
        assert_string_equal(ts_s(v, "categories.0"), "all");
        assert_string_equal(ts_s(v, "subresources.0.subresource"), "scale");
        assert_string_equal(ts_s(v, "subresources.0.responseKind.group"), "autoscaling");
        assert_string_equal(ts_s(v, "subresources.1.subresource"), "status");
        assert_string_equal(ts_s(v, "subresources.1.responseKind.kind"), "Deployment");
        as = NULL;
    }
    assert_null(as);
    ts_resp_free(&r);
    ts_req(*state, "GET", "/api", NULL, NULL, accept, &r);
    assert_string_equal(ts_s(r.json, "kind"), "APIGroupDiscoveryList");
    assert_null(ts_j(r.json, "items.0.metadata.name")); /* the core group has no name */
    assert_string_equal(ts_s(r.json, "items.0.versions.0.version"), "v1");
    ts_resp_free(&r);
    /* v2beta1 alone, or plain JSON: legacy discovery */
    ts_req(*state, "GET", "/apis", NULL, NULL,
           "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", &r);
    assert_string_equal(r.ctype, "application/json");
    assert_string_equal(ts_s(r.json, "kind"), "APIGroupList");
    ts_resp_free(&r);
}

/* The least a kind needs to be valid (docs/server.md, "Validation of built-in types"). */
static const char *minimal_fields(const char *kind)
{
    static const char *const k[][2] = {
        {"Pod", ",\"spec\":{" TS_CONTAINERS "}"},
        {"PodTemplate", ",\"template\":{\"spec\":{" TS_CONTAINERS "}}"},
        {"ReplicationController", ",\"spec\":{\"template\":{\"metadata\":{\"labels\":{"
                                  "\"app\":\"a\"}},\"spec\":{" TS_CONTAINERS "}}}"},
        {"Deployment", ",\"spec\":{" TS_DEP_SPEC "}"},
        {"ReplicaSet", ",\"spec\":{" TS_DEP_SPEC "}"},
        {"StatefulSet", ",\"spec\":{" TS_DEP_SPEC "}"},
        {"DaemonSet", ",\"spec\":{" TS_DEP_SPEC "}"},
        {"Job",
         ",\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":\"Never\"," TS_CONTAINERS "}}}"},
        {"CronJob", ",\"spec\":{\"schedule\":\"* * * * *\",\"jobTemplate\":{\"spec\":{"
                    "\"template\":{\"spec\":{\"restartPolicy\":\"Never\"," TS_CONTAINERS "}}}}}"},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (!strcmp(k[i][0], kind))
            return k[i][1];
    return "";
}

/* Every row is storable: create a minimal object, read it back, list it, delete it (a CRD needs
 * a valid spec: test_server_api_crd_schema.c). */
static void test_server_api_every_resource_storable(void **state)
{
    for (size_t i = 0; i < (sizeof(rows) / sizeof(rows[0])); i++) {
        const struct row *w = &rows[i];
        if (!strcmp(w->kind, "CustomResourceDefinition") || !strcmp(w->verbs, "create"))
            continue; /* a review stores nothing */
        char base[256], body[1024], obj[400];
        discovery_path(w->gv, base, sizeof(base));
        if (w->ns)
            snprintf(base + strlen(base), sizeof(base) - strlen(base), "/namespaces/default");
        snprintf(base + strlen(base), sizeof(base) - strlen(base), "/%s", w->plural);
        snprintf(body, sizeof(body),
                 "{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{\"name\":\"x%zu\"}%s}",
                 w->gv, w->kind, i, minimal_fields(w->kind));
        ts_resp r;
        if (ts_post(*state, base, body, &r) != 201)
            fail_msg("POST %s: %ld %s", base, r.status, r.body ? r.body : "");
        ts_resp_free(&r);
        snprintf(obj, sizeof(obj), "%s/x%zu", base, i);
        assert_int_equal(ts_get(*state, obj, &r), 200);
        assert_string_equal(ts_s(r.json, "kind"), w->kind);
        ts_resp_free(&r);
        assert_int_equal(ts_get(*state, base, &r), 200);
        assert_true(json_array_size(ts_j(r.json, "items")) >= 1);
        ts_resp_free(&r);
        ts_req(*state, "DELETE", obj, NULL, NULL, NULL, &r);
        assert_int_equal(r.status, 200);
        ts_resp_free(&r);
    }
}

/* RBAC names are path segments: ':' is allowed (system:controller:…), '/' is not. */
static void test_server_api_rbac_names_with_colons(void **state)
{
    ts_resp r;
    assert_int_equal(ts_post(*state, "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                             "{\"metadata\":{\"name\":\"system:controller:foo\"},\"rules\":[]}",
                             &r),
                     201);
    ts_resp_free(&r);
    assert_int_equal(
        ts_get(*state, "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:controller:foo", &r),
        200);
    assert_string_equal(ts_s(r.json, "metadata.name"), "system:controller:foo");
    ts_resp_free(&r);
    assert_int_equal(ts_post(*state, CM_PATH, "{\"metadata\":{\"name\":\"system:foo\"}}", &r), 422);
    ts_resp_free(&r);
}

/* replicationcontrollers/scale reads spec.replicas and the label-map selector. */
static void test_server_api_replicationcontroller_scale(void **state)
{
    ts_resp r;
    assert_int_equal(ts_post(*state, "/api/v1/namespaces/default/replicationcontrollers",
                             "{\"metadata\":{\"name\":\"rc1\"},\"spec\":{\"replicas\":2,"
                             "\"selector\":{\"app\":\"a\"},\"template\":{\"metadata\":{"
                             "\"labels\":{\"app\":\"a\"}},\"spec\":{" TS_CONTAINERS "}}}}",
                             &r),
                     201);
    ts_resp_free(&r);
    const char *sc = "/api/v1/namespaces/default/replicationcontrollers/rc1/scale";
    assert_int_equal(ts_get(*state, sc, &r), 200);
    assert_string_equal(ts_s(r.json, "kind"), "Scale");
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.replicas")), 2);
    assert_string_equal(ts_s(r.json, "status.selector"), "app=a");
    ts_resp_free(&r);
    ts_req(*state, "PATCH", sc, "application/merge-patch+json", "{\"spec\":{\"replicas\":5}}", NULL,
           &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    assert_int_equal(ts_get(*state, "/api/v1/namespaces/default/replicationcontrollers/rc1", &r),
                     200);
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.replicas")), 5);
    ts_resp_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_api_resource_table_matches_a_real_server_3),
        cmocka_unit_test(test_server_api_subresource_kinds_3),
        cmocka_unit_test(test_server_api_aggregated_discovery_4),
        cmocka_unit_test(test_server_api_every_resource_storable),
        cmocka_unit_test(test_server_api_rbac_names_with_colons),
        cmocka_unit_test(test_server_api_replicationcontroller_scale),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
