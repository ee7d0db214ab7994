/*
 * test_server_api_fidelity.c — what kubectl sees of a real API server, at the HTTP level (Issue 33
 * point 7; the kubectl side is tests/conformance/run_kubectl_fidelity.sh): Table rows'
 * ?includeObject= (Object, None, Metadata, unknown → 400), ObjectMeta's empty fields omitted as
 * Go's omitempty does, the kubelet subresources of pods answered as a server without a kubelet,
 * /readyz?verbose, /openapi/v2 in protobuf, and the printers of table_more.c and
 * table_storage.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

#define TABLE    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
#define POD_PATH "/api/v1/namespaces/default/pods"

static void test_table_include_object(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    /* Object: the whole object in each row (kubectl get --sort-by asks for it) */
    ts_req(s, "GET", CM_PATH "?includeObject=Object", NULL, NULL, TABLE, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "rows.0.object.kind"), "ConfigMap");
    assert_string_equal(ts_s(r.json, "rows.0.object.data.k"), "v");
    ts_resp_free(&r);
    ts_req(s, "GET", CM_PATH "/t1?includeObject=Object", NULL, NULL, TABLE, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "rows.0.object.apiVersion"), "v1");
    assert_string_equal(ts_s(r.json, "rows.0.object.data.k"), "v");
    ts_resp_free(&r);
    /* None: "object": null; Metadata (and the default): PartialObjectMetadata */
    ts_req(s, "GET", CM_PATH "?includeObject=None", NULL, NULL, TABLE, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(ts_j(r.json, "rows")), 1);
    assert_true(json_is_null(ts_j(r.json, "rows.0.object")));
    ts_resp_free(&r);
    ts_req(s, "GET", CM_PATH "?includeObject=Metadata", NULL, NULL, TABLE, &r);
    assert_string_equal(ts_s(r.json, "rows.0.object.kind"), "PartialObjectMetadata");
    assert_null(ts_j(r.json, "rows.0.object.data"));
    ts_resp_free(&r);
    /* upstream asTable: unrecognized includeObject value → 400 */
    ts_req(s, "GET", CM_PATH "?includeObject=Everything", NULL, NULL, TABLE, &r);
    assert_int_equal(r.status, 400);
    assert_string_equal(ts_s(r.json, "message"),
                        "unrecognized includeObject value: \"Everything\"");
    ts_resp_free(&r);
    /* without a Table the parameter is ignored */
    ts_req(s, "GET", CM_PATH "/t1?includeObject=Everything", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
}

static void test_table_include_object_watch(void **state)
{
    /* the watch ends after timeoutSeconds, so the plain request helper reads all its events */
    ts_resp body;
    ts_req(*state, "GET",
           CM_PATH "?watch=1&resourceVersion=0&timeoutSeconds=1&includeObject=Object", NULL, NULL,
           TABLE, &body);
    assert_int_equal(body.status, 200);
    char *nl = body.body ? strchr(body.body, '\n') : NULL;
    assert_non_null(nl);
    json_t *ev = json_loadb(body.body, (size_t)(nl - body.body), 0, NULL);
    assert_string_equal(ts_s(ev, "object.kind"), "Table");
    assert_string_equal(ts_s(ev, "object.rows.0.object.kind"), "ConfigMap");
    json_decref(ev);
    ts_resp_free(&body);
}

static void assert_meta_lacks(json_t *obj, const char *const *keys)
{
    json_t *m = json_object_get(obj, "metadata");
    assert_non_null(m);
    for (; *keys; keys++)
        if (json_object_get(m, *keys)) {
            fail_msg("metadata.%s kept: %s", *keys, json_dumps(m, JSON_COMPACT));
        }
}

static void test_meta_omitempty(void **state)
{
    kc_server *s = *state;
    static const char *const empty[] = {"labels",          "annotations",  "finalizers",
                                        "ownerReferences", "generateName", NULL};
    ts_resp r;
    /* a real server decodes into ObjectMeta and encodes with omitempty: no "labels": {} */
    assert_int_equal(ts_post(s, CM_PATH,
                             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
                             "\"name\":\"oe\",\"labels\":{},\"annotations\":null,"
                             "\"finalizers\":[],\"ownerReferences\":[],\"generateName\":\"\"}}",
                             &r),
                     201);
    assert_meta_lacks(r.json, empty);
    ts_resp_free(&r);
    /* the last finalizer and label removed by a patch leave no empty list or map behind */
    ts_req(s, "PATCH", CM_PATH "/oe", "application/merge-patch+json",
           "{\"metadata\":{\"finalizers\":[\"example.com/x\"],\"labels\":{\"a\":\"b\"}}}", NULL,
           &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "metadata.finalizers.0"), "example.com/x");
    ts_resp_free(&r);
    ts_req(s, "PATCH", CM_PATH "/oe", "application/json-patch+json",
           "[{\"op\":\"remove\",\"path\":\"/metadata/finalizers/0\"},"
           "{\"op\":\"remove\",\"path\":\"/metadata/labels/a\"}]",
           NULL, &r);
    assert_int_equal(r.status, 200);
    assert_meta_lacks(r.json, empty);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, CM_PATH "/oe", &r), 200);
    assert_meta_lacks(r.json, empty);
    ts_resp_free(&r);
}

static void post_pod(kc_server *s, const char *name, const char *node)
{
    char body[512];
    snprintf(
        body, sizeof(body),
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},\"spec\":{%s%s%s"
        "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}",
        name, node ? "\"nodeName\":\"" : "", node ? node : "", node ? "\"," : "");
    ts_resp r;
    assert_int_equal(ts_post(s, POD_PATH, body, &r), 201);
    ts_resp_free(&r);
}

static void expect(kc_server *s, const char *method, const char *path, long status,
                   const char *message)
{
    ts_resp r;
    ts_req(s, method, path, NULL, NULL, NULL, &r);
    assert_int_equal(r.status, status);
    if (message)
        assert_string_equal(ts_s(r.json, "message"), message);
    ts_resp_free(&r);
}

/* pod/strategy.go LogLocation and streamLocation before they dial the kubelet; kcache serve has
 * none: a scheduled pod gets 503. */
static void test_pod_kubelet_subresources(void **state)
{
    kc_server *s = *state;
    post_pod(s, "floating", NULL);
    post_pod(s, "placed", "node-a");
    expect(s, "GET", POD_PATH "/nobody/log", 404, "pods \"nobody\" not found");
    ts_resp r;
    ts_req(s, "GET", POD_PATH "/floating/log", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200); /* no host: an empty log, as upstream's nil location */
    assert_int_equal(r.len, 0);
    ts_resp_free(&r);
    expect(s, "GET", POD_PATH "/floating/log?container=other", 400,
           "container other is not valid for pod floating");
    expect(s, "POST", POD_PATH "/floating/exec?command=true&container=c", 400,
           "pod floating does not have a host assigned");
    expect(s, "POST", POD_PATH "/floating/log", 405, NULL);
    expect(s, "GET", POD_PATH "/placed/log", 503,
           "no kubelet behind kcache serve: pods/log of pod placed cannot reach node node-a");
    expect(s, "GET", POD_PATH "/placed/exec?command=true", 503,
           "no kubelet behind kcache serve: pods/exec of pod placed cannot reach node node-a");
    expect(s, "POST", POD_PATH "/placed/attach", 503, NULL);
    expect(s, "POST", POD_PATH "/placed/portforward", 503, NULL);
    expect(s, "GET", POD_PATH "/placed/proxy", 503, NULL);
    /* other subresources stay unknown */
    expect(s, "GET", POD_PATH "/placed/nothing", 404, NULL);
}

static void test_health_verbose(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(ts_get(s, "/readyz?verbose", &r), 200);
    assert_string_equal(r.body, "[+]ping ok\n[+]log ok\n[+]shutdown ok\nreadyz check passed\n");
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/livez?verbose=1", &r), 200);
    assert_string_equal(r.body, "[+]ping ok\n[+]log ok\nlivez check passed\n");
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/readyz", &r), 200);
    assert_string_equal(r.body, "ok");
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/readyz/ping?verbose", &r), 200);
    assert_string_equal(r.body, "ok");
    ts_resp_free(&r);
}

/* kubectl fetches /openapi/v2 in protobuf only (client-side validation of `kind: List` files):
 * an openapi_v2.Document with swagger "2.0" and info, no definitions. */
static void test_openapi_v2_protobuf(void **state)
{
    static const char want[] = "\x0a\x03"
                               "2.0"
                               "\x12\x15\x0a\x0a"
                               "Kubernetes"
                               "\x12\x07"
                               "v1.34.0";
    ts_resp r;
    ts_req(*state, "GET", "/openapi/v2", NULL, NULL,
           "application/com.github.proto-openapi.spec.v2@v1.0+protobuf", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.ctype, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
    assert_int_equal(r.len, sizeof want - 1);
    assert_memory_equal(r.body, want, sizeof want - 1);
    ts_resp_free(&r);
}

/* The cells of the first row of GET path as a Table, "|"-joined, and the column names. */
static void table_row(kc_server *s, const char *path, char *cells, size_t cap, char *cols,
                      size_t ccap)
{
    ts_resp r;
    ts_req(s, "GET", path, NULL, NULL, TABLE, &r);
    assert_int_equal(r.status, 200);
    size_t i, at = 0, cat = 0;
    json_t *v;
    json_array_foreach(ts_j(r.json, "rows.0.cells"), i, v)
    {
        char *t = json_is_string(v) ? strdup(json_string_value(v))
                                    : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        at += (size_t)snprintf(cells + at, cap - at, "%s%s", i ? "|" : "", t);
        free(t);
    }
    json_array_foreach(ts_j(r.json, "columnDefinitions"), i, v)
    {
        cat += (size_t)snprintf(cols + cat, ccap - cat, "%s%s%s", i ? "|" : "",
                                json_string_value(json_object_get(v, "name")),
                                json_integer_value(json_object_get(v, "priority")) ? "*" : "");
    }
    ts_resp_free(&r);
}

/* The Table of GET path has the columns cols ("Name|Age*": * marks priority 1) and its first row
 * starts with the cells prefix ("a|b|"); cells gets the whole row. */
static void row_is(kc_server *s, const char *path, const char *want_cols, const char *prefix,
                   char cells[512])
{
    char cols[512];
    table_row(s, path, cells, 512, cols, sizeof cols);
    assert_string_equal(cols, want_cols);
    if (strncmp(cells, prefix, strlen(prefix)) != 0)
        fail_msg("row of %s: %s, want %s…", path, cells, prefix);
}

static void post_ok(kc_server *s, const char *path, const char *body)
{
    ts_resp r;
    long st = ts_post(s, path, body, &r);
    if (st != 201)
        fail_msg("POST %s: %ld %s", path, st, r.body ? r.body : "");
    ts_resp_free(&r);
}

/* printers.go's columns and cells (the Age cells are cut off: "…|<age>"). */
static void test_more_printers(void **state)
{
    kc_server *s = *state;
    char cells[512];
    post_ok(s, "/api/v1/namespaces/default/serviceaccounts",
            "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"sa\"},"
            "\"secrets\":[{\"name\":\"x\"},{\"name\":\"y\"}]}");
    row_is(s, "/api/v1/namespaces/default/serviceaccounts/sa", "Name|Secrets|Age", "sa|2|", cells);
    post_ok(
        s, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\","
        "\"metadata\":{\"name\":\"rb\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\","
        "\"kind\":\"ClusterRole\",\"name\":\"view\"},\"subjects\":["
        "{\"kind\":\"User\",\"name\":\"u1\"},{\"kind\":\"User\",\"name\":\"u2\"},"
        "{\"kind\":\"Group\",\"name\":\"g\"},"
        "{\"kind\":\"ServiceAccount\",\"name\":\"sa\",\"namespace\":\"ns\"}]}");
    row_is(s, "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/rb",
           "Name|Role|Age|Users*|Groups*|ServiceAccounts*", "rb|ClusterRole/view|", cells);
    assert_non_null(strstr(cells, "|u1, u2|g|ns:sa"));
    post_ok(s, "/apis/coordination.k8s.io/v1/namespaces/default/leases",
            "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":"
            "\"l\"},\"spec\":{\"holderIdentity\":\"me\"}}");
    row_is(s, "/apis/coordination.k8s.io/v1/namespaces/default/leases/l", "Name|Holder|Age",
           "l|me|", cells);
    post_ok(s, "/apis/networking.k8s.io/v1/namespaces/default/ingresses",
            "{\"apiVersion\":\"networking.k8s.io/v1\",\"kind\":\"Ingress\",\"metadata\":{\"name\":"
            "\"ing\"},\"spec\":{\"tls\":[{\"hosts\":[\"a.io\"]}],\"rules\":[{\"host\":\"a.io\"},"
            "{\"host\":\"b.io\"},{},{\"host\":\"c.io\"},{\"host\":\"d.io\"}]}}");
    row_is(s, "/apis/networking.k8s.io/v1/namespaces/default/ingresses/ing",
           "Name|Class|Hosts|Address|Ports|Age", "ing|<none>|a.io,b.io,c.io + 2 more...||80, 443|",
           cells);
    post_ok(s, "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
            "{\"apiVersion\":\"networking.k8s.io/v1\",\"kind\":\"NetworkPolicy\",\"metadata\":{"
            "\"name\":\"np\"},\"spec\":{\"podSelector\":{\"matchLabels\":{\"app\":\"web\"}}}}");
    row_is(s, "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies/np",
           "Name|Pod-Selector|Age", "np|app=web|", cells);
    post_ok(
        s, "/apis/scheduling.k8s.io/v1/priorityclasses",
        "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"metadata\":{"
        "\"name\":\"pc\"},\"value\":1000,\"globalDefault\":false,\"preemptionPolicy\":\"Never\"}");
    row_is(s, "/apis/scheduling.k8s.io/v1/priorityclasses/pc",
           "Name|Value|Global-Default|Age|PreemptionPolicy", "pc|1000|false|", cells);
    assert_non_null(strstr(cells, "|Never"));
}

static void test_storage_printers(void **state)
{
    kc_server *s = *state;
    char cells[512], cols[512];
    post_ok(s, "/api/v1/namespaces/default/persistentvolumeclaims",
            "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\",\"metadata\":{\"name\":"
            "\"d\",\"annotations\":{\"volume.beta.kubernetes.io/storage-class\":\"old\"}},"
            "\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":{"
            "\"storage\":\"1Gi\"}},\"storageClassName\":\"fast\",\"volumeMode\":\"Block\"}}");
    table_row(s, "/api/v1/namespaces/default/persistentvolumeclaims/d", cells, sizeof cells, cols,
              sizeof cols);
    assert_string_equal(cols, "Name|Status|Volume|Capacity|Access Modes|StorageClass|"
                              "VolumeAttributesClass|Age|VolumeMode*");
    /* not bound: no capacity or modes; the beta annotation wins over storageClassName */
    assert_non_null(strstr(cells, "d|"));
    assert_non_null(strstr(cells, "|||old|<unset>|"));
    assert_non_null(strstr(cells, "|Block"));
    post_ok(s, "/api/v1/persistentvolumes",
            "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":"
            "\"pv\"},\"spec\":{\"capacity\":{\"storage\":\"2Gi\"},\"accessModes\":["
            "\"ReadWriteOncePod\",\"ReadOnlyMany\"],\"persistentVolumeReclaimPolicy\":\"Retain\","
            "\"claimRef\":{\"namespace\":\"default\",\"name\":\"d\"},\"hostPath\":{\"path\":"
            "\"/x\"}}}");
    table_row(s, "/api/v1/persistentvolumes/pv", cells, sizeof cells, cols, sizeof cols);
    assert_int_equal(strncmp(cells, "pv|2Gi|ROX,RWOP|Retain|", 23), 0);
    assert_non_null(strstr(cells, "|default/d||<unset>||"));
    post_ok(s, "/apis/storage.k8s.io/v1/storageclasses",
            "{\"apiVersion\":\"storage.k8s.io/v1\",\"kind\":\"StorageClass\",\"metadata\":{"
            "\"name\":\"sc\",\"annotations\":{\"storageclass.kubernetes.io/is-default-class\":"
            "\"true\"}},\"provisioner\":\"p.io\",\"allowVolumeExpansion\":true}");
    row_is(s, "/apis/storage.k8s.io/v1/storageclasses/sc",
           "Name|Provisioner|ReclaimPolicy|VolumeBindingMode|"
           "AllowVolumeExpansion|Age",
           "sc (default)|p.io|Delete|Immediate|true|", cells);
    post_ok(s, "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
            "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":{"
            "\"name\":\"pdb\"},\"spec\":{\"maxUnavailable\":1}}");
    row_is(s, "/apis/policy/v1/namespaces/default/poddisruptionbudgets/pdb",
           "Name|Min Available|Max Unavailable|Allowed Disruptions|Age", "pdb|N/A|1|0|", cells);
    post_ok(s, "/apis/apps/v1/namespaces/default/controllerrevisions",
            "{\"apiVersion\":\"apps/v1\",\"kind\":\"ControllerRevision\",\"metadata\":{"
            "\"name\":\"cr\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
            "\"DaemonSet\",\"name\":\"ds\",\"uid\":\"u\",\"controller\":true}]},\"revision\":7}");
    row_is(s, "/apis/apps/v1/namespaces/default/controllerrevisions/cr",
           "Name|Controller|Revision|Age", "cr|daemonset.apps/ds|7|", cells);
    /* formatEndpoints: every port × address, 3 listed, then "+ N more..." */
    post_ok(s, "/api/v1/namespaces/default/endpoints",
            "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":\"ep\"},"
            "\"subsets\":[{\"addresses\":[{\"ip\":\"10.0.0.1\"},{\"ip\":\"fd00::2\"}],"
            "\"ports\":[{\"port\":80},{\"port\":443}]}]}");
    table_row(s, "/api/v1/namespaces/default/endpoints/ep", cells, sizeof cells, cols, sizeof cols);
    assert_string_equal(cols, "Name|Endpoints|Age");
    ts_resp r;
    assert_int_equal(ts_get(s, "/api/v1/namespaces/default/endpoints", &r), 200);
    assert_string_equal(r.warnings, "299 - \"v1 Endpoints is deprecated in v1.33+; use "
                                    "discovery.k8s.io/v1 EndpointSlice\"\n");
    ts_resp_free(&r);
    assert_int_equal(strncmp(cells, "ep|10.0.0.1:80,[fd00::2]:80,10.0.0.1:443 + 1 more...|", 52),
                     0);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_include_object),
        cmocka_unit_test(test_table_include_object_watch),
        cmocka_unit_test(test_meta_omitempty),
        cmocka_unit_test(test_pod_kubelet_subresources),
        cmocka_unit_test(test_health_verbose),
        cmocka_unit_test(test_openapi_v2_protobuf),
        cmocka_unit_test(test_more_printers),
        cmocka_unit_test(test_storage_printers),
    };
    int rc = cmocka_run_group_tests(tests, ts_group_setup_t1, ts_group_teardown);
    curl_global_cleanup();
    return rc;
}
