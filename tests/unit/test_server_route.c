/*
 * test_server_route.c — URL routing, boolean query parameters, Accept negotiation and protobuf
 * request bodies of the embedded server (pure functions; no sockets). Spec §1.1, §1.2, §6.2;
 * #4, #23–#25, #71.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "server/api/api_internal.h"
#include "server/http/http.h"

#include <string.h>

static void test_server_route_core_namespaced_object(void **state)
{
    kc__route r;
    assert_int_equal(kc__route_parse("/api/v1/namespaces/default/pods/p1", &r), 0);
    assert_int_equal(r.kind, KC__R_RESOURCE);
    assert_string_equal(r.group, "");
    assert_string_equal(r.version, "v1");
    assert_string_equal(r.ns, "default");
    assert_string_equal(r.plural, "pods");
    assert_string_equal(r.name, "p1");
    assert_true(r.has_ns && r.has_name && !r.has_sub);
}

static void test_server_route_group_status_subresource(void **state)
{
    kc__route r;
    assert_int_equal(kc__route_parse("/apis/apps/v1/namespaces/x/deployments/d/status", &r), 0);
    assert_string_equal(r.group, "apps");
    assert_string_equal(r.sub, "status");
    assert_true(r.has_sub);
}

static void test_server_route_namespace_objects_are_cluster_scoped(void **state)
{
    kc__route r;
    assert_int_equal(kc__route_parse("/api/v1/namespaces/foo", &r), 0);
    assert_false(r.has_ns);
    assert_string_equal(r.plural, "namespaces");
    assert_string_equal(r.name, "foo");
    assert_int_equal(kc__route_parse("/api/v1/namespaces/foo/status", &r), 0);
    assert_false(r.has_ns);
    assert_string_equal(r.sub, "status");
    assert_int_equal(kc__route_parse("/api/v1/namespaces/foo/configmaps", &r), 0);
    assert_true(r.has_ns);
    assert_string_equal(r.plural, "configmaps");
    assert_false(r.has_name);
}

static void test_server_route_discovery_and_watch_paths(void **state)
{
    kc__route r;
    assert_int_equal(kc__route_parse("/api", &r), 0);
    assert_int_equal(r.kind, KC__R_API);
    assert_int_equal(kc__route_parse("/apis", &r), 0);
    assert_int_equal(r.kind, KC__R_APIS);
    assert_int_equal(kc__route_parse("/apis/apps", &r), 0);
    assert_int_equal(r.kind, KC__R_GROUP);
    assert_int_equal(kc__route_parse("/apis/apps/v1/", &r), 0);
    assert_int_equal(r.kind, KC__R_GV);
    assert_int_equal(kc__route_parse("/api/v1/watch/namespaces/a/pods", &r), 0);
    assert_true(r.watch_path);
    assert_string_equal(r.plural, "pods");
}

static void test_server_route_rejects_bad_paths(void **state)
{
    kc__route r;
    assert_int_equal(kc__route_parse("/foo/v1/pods", &r), KC_ENOTFOUND);
    assert_int_equal(kc__route_parse("/api/v1/a/b/c/d", &r), KC_ENOTFOUND);
    assert_int_equal(kc__route_parse("/api/v1/a/b/c/d/e/f/g/h/i/j/k", &r), KC_ENOTFOUND);
    char longp[600];
    memset(longp, 'a', sizeof(longp));
    memcpy(longp, "/api/v1/", 8);
    longp[599] = 0;
    assert_int_equal(kc__route_parse(longp, &r), KC_ENOTFOUND);
}

static void test_server_param_bool_rule_71(void **state)
{
    assert_true(kc__param_bool("1"));
    assert_true(kc__param_bool("true"));
    assert_true(kc__param_bool("True"));
    assert_true(kc__param_bool(""));
    assert_true(kc__param_bool(NULL));
    assert_false(kc__param_bool("0"));
    assert_false(kc__param_bool("false"));
    assert_false(kc__param_bool("FALSE"));
}

static void test_server_negotiate_table_and_partial_23(void **state)
{
    enum kc__fmt f;
    assert_int_equal(
        kc__negotiate("application/json;as=Table;v=v1;g=meta.k8s.io,application/json", &f, NULL),
        0);
    assert_int_equal(f, KC__FMT_TABLE);
    assert_int_equal(
        kc__negotiate("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", &f, NULL),
        0);
    assert_int_equal(f, KC__FMT_PARTIAL);
    assert_int_equal(kc__negotiate(NULL, &f, NULL), 0);
    assert_int_equal(f, KC__FMT_JSON);
    assert_int_equal(kc__negotiate("*/*", &f, NULL), 0);
    assert_int_equal(f, KC__FMT_JSON);
}

static void test_server_negotiate_skips_unsupported_4_24_25(void **state)
{
    enum kc__fmt f = KC__FMT_TABLE;
    assert_int_equal(
        kc__negotiate("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
                      "application/json",
                      &f, NULL),
        0);
    assert_int_equal(f, KC__FMT_JSON);
    /* protobuf is served for built-in kinds now (#24 holds for custom resources: JSON) */
    assert_int_equal(
        kc__negotiate("application/vnd.kubernetes.protobuf, application/json", &f, NULL), 0);
    assert_int_equal(f, KC__FMT_PROTO_JSON);
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc__negotiate("application/yaml, application/cbor", &f, &e), KC_EMEDIATYPE);
    assert_int_equal(e.http_status, 406);
    kc_error_clear(&e);
}

static void test_server_proto_configmap(void **state)
{
    /* k8s\0 + Unknown{typeMeta{apiVersion:"v1",kind:"ConfigMap"},
     *                 raw=ConfigMap{metadata{name:"c"},data{"a":"b"}}} */
    unsigned char b[64];
    size_t n = 0;
    memcpy(b, "k8s\0", 4);
    n = 4;
    const unsigned char tm[] = {0x0a, 0x0f, 0x0a, 0x02, 'v', '1', 0x12, 0x09, 'C',
                                'o',  'n',  'f',  'i',  'g', 'M', 'a',  'p'};
    memcpy(b + n, tm, sizeof(tm));
    n += sizeof(tm);
    const unsigned char raw[] = {0x12, 0x0d,                                    /* raw, 13 bytes */
                                 0x0a, 0x03, 0x0a, 0x01, 'c',                   /* metadata.name */
                                 0x12, 0x06, 0x0a, 0x01, 'a', 0x12, 0x01, 'b'}; /* data a=b */
    memcpy(b + n, raw, sizeof(raw));
    n += sizeof(raw);
    json_t *doc = NULL;
    assert_int_equal(kc__proto_to_json((const char *)b, n, &doc, NULL), 0);
    assert_string_equal(json_string_value(json_object_get(doc, "kind")), "ConfigMap");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(doc, "metadata"), "name")), "c");
    assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "data"), "a")), "b");
    json_decref(doc);
}

/* A Service as `kubectl create service nodeport np --tcp=80:http` (kubectl 1.33) sends it,
 * captured verbatim: a named target port, and every zero field gogo-protobuf writes. */
static const unsigned char svc_nodeport[] = {
    0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0d, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x07, 0x53, 0x65, 0x72,
    0x76, 0x69, 0x63, 0x65, 0x12, 0x68, 0x0a, 0x1d, 0x0a, 0x02, 0x6e, 0x70, 0x12, 0x00, 0x1a,
    0x00, 0x22, 0x00, 0x2a, 0x00, 0x32, 0x00, 0x38, 0x00, 0x42, 0x00, 0x5a, 0x09, 0x0a, 0x03,
    0x61, 0x70, 0x70, 0x12, 0x02, 0x6e, 0x70, 0x12, 0x43, 0x0a, 0x1e, 0x0a, 0x07, 0x38, 0x30,
    0x2d, 0x68, 0x74, 0x74, 0x70, 0x12, 0x03, 0x54, 0x43, 0x50, 0x18, 0x50, 0x22, 0x0a, 0x08,
    0x01, 0x10, 0x00, 0x1a, 0x04, 0x68, 0x74, 0x74, 0x70, 0x28, 0x00, 0x12, 0x09, 0x0a, 0x03,
    0x61, 0x70, 0x70, 0x12, 0x02, 0x6e, 0x70, 0x1a, 0x00, 0x22, 0x08, 0x4e, 0x6f, 0x64, 0x65,
    0x50, 0x6f, 0x72, 0x74, 0x3a, 0x00, 0x42, 0x00, 0x52, 0x00, 0x5a, 0x00, 0x60, 0x00, 0x68,
    0x00, 0x1a, 0x02, 0x0a, 0x00, 0x1a, 0x00, 0x22, 0x00};

static void test_server_proto_service(void **state)
{
    json_t *doc = NULL;
    assert_int_equal(kc__proto_to_json((const char *)svc_nodeport, sizeof svc_nodeport, &doc, NULL),
                     0);
    json_t *spec = json_object_get(doc, "spec"),
           *port = json_array_get(json_object_get(spec, "ports"), 0);
    assert_string_equal(json_string_value(json_object_get(doc, "kind")), "Service");
    assert_string_equal(json_string_value(json_object_get(spec, "type")), "NodePort");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(spec, "selector"), "app")), "np");
    assert_int_equal(json_integer_value(json_object_get(port, "port")), 80);
    assert_string_equal(json_string_value(json_object_get(port, "targetPort")), "http");
    assert_null(json_object_get(port, "nodePort")); /* 0 on the wire: unset, as in Go's JSON */
    assert_null(json_object_get(spec, "clusterIP"));
    json_decref(doc);

    /* A numeric target port (IntOrString type 0, intVal 8080) in a hand-made Service. */
    const unsigned char num[] = {'k',  '8',  's',  0,    0x0a, 0x0d, 0x0a, 0x02, 'v',  '1',
                                 0x12, 0x07, 'S',  'e',  'r',  'v',  'i',  'c',  'e',  0x12,
                                 0x10, 0x0a, 0x03, 0x0a, 0x01, 's',  0x12, 0x09, 0x0a, 0x07,
                                 0x18, 0x51, 0x22, 0x03, 0x10, 0x90, 0x3f};
    assert_int_equal(kc__proto_to_json((const char *)num, sizeof num, &doc, NULL), 0);
    port = json_array_get(json_object_get(json_object_get(doc, "spec"), "ports"), 0);
    assert_int_equal(json_integer_value(json_object_get(port, "port")), 81);
    assert_true(json_is_integer(json_object_get(port, "targetPort")));
    assert_int_equal(json_integer_value(json_object_get(port, "targetPort")), 8080);
    json_decref(doc);
}

static void test_server_proto_rejects_garbage(void **state)
{
    json_t *doc = NULL;
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc__proto_to_json("k8s\0\x0a\xff\xff", 7, &doc, &e), KC_EBADREQUEST);
    kc_error_clear(&e);
    assert_int_equal(kc__proto_to_json("nope", 4, &doc, &e), KC_EBADREQUEST);
    kc_error_clear(&e);
    /* a kind without a table → 415 */
    const unsigned char b[] = {'k', '8', 's', 0,   0x0a, 0x0f, 0x0a, 0x07, 'a', 'p', 'p',
                               's', '/', 'v', '1', 0x12, 0x04, 'N',  'o',  'd', 'e'};
    assert_int_equal(kc__proto_to_json((const char *)b, sizeof(b), &doc, &e), KC_EMEDIATYPE);
    kc_error_clear(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_route_core_namespaced_object),
        cmocka_unit_test(test_server_route_group_status_subresource),
        cmocka_unit_test(test_server_route_namespace_objects_are_cluster_scoped),
        cmocka_unit_test(test_server_route_discovery_and_watch_paths),
        cmocka_unit_test(test_server_route_rejects_bad_paths),
        cmocka_unit_test(test_server_param_bool_rule_71),
        cmocka_unit_test(test_server_negotiate_table_and_partial_23),
        cmocka_unit_test(test_server_negotiate_skips_unsupported_4_24_25),
        cmocka_unit_test(test_server_proto_configmap),
        cmocka_unit_test(test_server_proto_service),
        cmocka_unit_test(test_server_proto_rejects_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
