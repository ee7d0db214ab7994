/*
 * test_server_api_services.c — Services as a Kubernetes 1.33 API server stores them: the scheme's
 * defaults (pkg/apis/core/v1/defaults.go SetDefaults_Service), the registry's allocations and IP
 * family fields (pkg/registry/core/service/storage: alloc.go initIPFamilyFields,
 * allocClusterIPs, initNodePorts; storage.go patchAllocatedValues, dropTypeDependentFields) with
 * upstream's messages, the configurable ranges (kc_server_opts.service_cidr, node_port_range),
 * and the release of allocations on delete, type change, dry run and restart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_defaults_util.h"

#include <arpa/inet.h>

#define SVC "/api/v1/namespaces/default/services"

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

/* IPv4 text within base/prefix. */
static bool in_cidr(const char *ip, const char *base, int prefix)
{
    struct in_addr a, b;
    if (inet_pton(AF_INET, ip, &a) != 1 || inet_pton(AF_INET, base, &b) != 1)
        return false;
    uint32_t m = prefix ? ~0u << (32 - prefix) : 0;
    return (ntohl(a.s_addr) & m) == (ntohl(b.s_addr) & m);
}

/* The cluster IP of svc checked against the default range, then replaced by "IP"; node ports
 * checked against 30000-32767 and replaced by 1. */
static void mask_allocations(json_t *svc)
{
    json_t *spec = json_object_get(svc, "spec");
    const char *ip = json_string_value(json_object_get(spec, "clusterIP"));
    if (ip && strcmp(ip, "None") != 0) {
        assert_true(in_cidr(ip, "10.96.0.0", 12));
        assert_string_equal(ts_s(spec, "clusterIPs.0"), ip);
        char copy[64];
        snprintf(copy, sizeof(copy), "%s", ip);
        td_replace(svc, copy, "IP");
    }
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(spec, "ports"), i, p)
    {
        json_int_t np = json_integer_value(json_object_get(p, "nodePort"));
        if (np) {
            assert_in_range(np, 30000, 32767);
            json_object_set_new(p, "nodePort", json_integer(1));
        }
    }
    json_int_t hc = json_integer_value(json_object_get(spec, "healthCheckNodePort"));
    if (hc) {
        assert_in_range(hc, 30000, 32767);
        json_object_set_new(spec, "healthCheckNodePort", json_integer(1));
    }
}

/* ClusterIP: sessionAffinity None, ports TCP with targetPort = port, internalTrafficPolicy
 * Cluster, a cluster IP from 10.96.0.0/12, SingleStack IPv4, status.loadBalancer {}. */
static void test_server_service_clusterip(void **state)
{
    json_t *got = td_create_get(*state, SVC,
                                "{'apiVersion':'v1','kind':'Service','metadata':{'name':'web'},"
                                "'spec':{'selector':{'app':'w'},'ports':[{'port':80}]}}");
    mask_allocations(got);
    td_expect(got,
              "{'apiVersion':'v1','kind':'Service','metadata':{'name':'web','namespace':"
              "'default'},'spec':{'ports':[{'protocol':'TCP','port':80,'targetPort':80}],"
              "'selector':{'app':'w'},'clusterIP':'IP','clusterIPs':['IP'],'type':"
              "'ClusterIP','sessionAffinity':'None','ipFamilies':['IPv4'],'ipFamilyPolicy':"
              "'SingleStack','internalTrafficPolicy':'Cluster'},'status':{'loadBalancer':{}}}");
    json_decref(got);
}

/* NodePort: a node port per port, externalTrafficPolicy Cluster; a named targetPort is kept. */
static void test_server_service_nodeport(void **state)
{
    json_t *got = td_create_get(*state, SVC,
                                "{'apiVersion':'v1','kind':'Service','metadata':{'name':'np'},"
                                "'spec':{'type':'NodePort','selector':{'app':'w'},'ports':[{"
                                "'name':'http','port':80,'targetPort':'web'},{'name':'dns',"
                                "'port':53,'protocol':'UDP'}]}}");
    mask_allocations(got);
    td_expect(got,
              "{'apiVersion':'v1','kind':'Service','metadata':{'name':'np','namespace':"
              "'default'},'spec':{'ports':[{'name':'http','protocol':'TCP','port':80,"
              "'targetPort':'web','nodePort':1},{'name':'dns','protocol':'UDP','port':53,"
              "'targetPort':53,'nodePort':1}],'selector':{'app':'w'},'clusterIP':'IP',"
              "'clusterIPs':['IP'],'type':'NodePort','sessionAffinity':'None',"
              "'externalTrafficPolicy':'Cluster','ipFamilies':['IPv4'],'ipFamilyPolicy':"
              "'SingleStack','internalTrafficPolicy':'Cluster'},'status':{'loadBalancer':{}}}");
    json_decref(got);
}

/* LoadBalancer, externalTrafficPolicy Local: allocateLoadBalancerNodePorts true, a health check
 * node port; ClientIP affinity gets sessionAffinityConfig.clientIP.timeoutSeconds 10800. */
static void test_server_service_loadbalancer_local(void **state)
{
    json_t *got = td_create_get(*state, SVC,
                                "{'apiVersion':'v1','kind':'Service','metadata':{'name':'lb'},"
                                "'spec':{'type':'LoadBalancer','externalTrafficPolicy':'Local',"
                                "'sessionAffinity':'ClientIP','ports':[{'port':443}]}}");
    mask_allocations(got);
    td_expect(got, "{'apiVersion':'v1','kind':'Service','metadata':{'name':'lb','namespace':"
                   "'default'},'spec':{'ports':[{'protocol':'TCP','port':443,'targetPort':443,"
                   "'nodePort':1}],'clusterIP':'IP','clusterIPs':['IP'],'type':'LoadBalancer',"
                   "'sessionAffinity':'ClientIP','externalTrafficPolicy':'Local',"
                   "'healthCheckNodePort':1,'sessionAffinityConfig':{'clientIP':{"
                   "'timeoutSeconds':10800}},'ipFamilies':['IPv4'],'ipFamilyPolicy':"
                   "'SingleStack','allocateLoadBalancerNodePorts':true,'internalTrafficPolicy':"
                   "'Cluster'},'status':{'loadBalancer':{}}}");
    json_decref(got);
}

/* Headless without a selector: RequireDualStack and both families listed (upstream's special
 * case); ExternalName: no cluster IP, no family fields, no internalTrafficPolicy. */
static void test_server_service_headless_externalname(void **state)
{
    json_t *h = td_create_get(*state, SVC,
                              "{'apiVersion':'v1','kind':'Service','metadata':{'name':'hl'},"
                              "'spec':{'clusterIP':'None','ports':[{'port':5432}]}}");
    td_expect(h, "{'apiVersion':'v1','kind':'Service','metadata':{'name':'hl','namespace':"
                 "'default'},'spec':{'ports':[{'protocol':'TCP','port':5432,'targetPort':5432}],"
                 "'clusterIP':'None','clusterIPs':['None'],'type':'ClusterIP','sessionAffinity':"
                 "'None','ipFamilies':['IPv4','IPv6'],'ipFamilyPolicy':'RequireDualStack',"
                 "'internalTrafficPolicy':'Cluster'},'status':{'loadBalancer':{}}}");
    json_decref(h);
    json_t *e = td_create_get(*state, SVC,
                              "{'apiVersion':'v1','kind':'Service','metadata':{'name':'ext'},"
                              "'spec':{'type':'ExternalName','externalName':'db.example.com'}}");
    td_expect(e, "{'apiVersion':'v1','kind':'Service','metadata':{'name':'ext','namespace':"
                 "'default'},'spec':{'type':'ExternalName','externalName':'db.example.com',"
                 "'sessionAffinity':'None'},'status':{'loadBalancer':{}}}");
    json_decref(e);
}

static void post_expect(kc_server *s, const char *body, long status, const char *message)
{
    ts_resp r;
    ts_post(s, SVC, body, &r);
    if (r.status != status)
        fail_msg("HTTP %ld: %s", r.status, r.body ? r.body : "");
    if (message) {
        assert_string_equal(ts_s(r.json, "message"), message);
        assert_string_equal(ts_s(r.json, "reason"), status == 422 ? "Invalid" : "InternalError");
    }
    ts_resp_free(&r);
}

#define SVC_IP(NAME, IP)                                                                           \
    "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"" NAME "\"},\"spec\":{"  \
    "\"clusterIP\":\"" IP "\",\"ports\":[{\"port\":80}]}}"
#define SVC_NP(NAME, NP)                                                                           \
    "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"" NAME "\"},\"spec\":{"  \
    "\"type\":\"NodePort\",\"ports\":[{\"port\":80,\"nodePort\":" NP "}]}}"

/* Requested values: taken or out of range → 422 in upstream's words; the first IP of the range
 * is the `kubernetes` Service's. */
static void test_server_service_requested_values_422(void **state)
{
    kc_server *s = *state;
    post_expect(s, SVC_IP("a1", "10.96.0.50"), 201, NULL);
    post_expect(s, SVC_IP("a2", "10.96.0.50"), 422,
                "Service \"a2\" is invalid: spec.clusterIPs: Invalid value: "
                "[]string{\"10.96.0.50\"}: failed to allocate IP 10.96.0.50: provided IP is "
                "already allocated");
    post_expect(s, SVC_IP("a3", "10.96.0.1"), 422,
                "Service \"a3\" is invalid: spec.clusterIPs: Invalid value: "
                "[]string{\"10.96.0.1\"}: failed to allocate IP 10.96.0.1: provided IP is "
                "already allocated");
    post_expect(s, SVC_IP("a4", "192.168.1.1"), 422,
                "Service \"a4\" is invalid: spec.clusterIPs: Invalid value: "
                "[]string{\"192.168.1.1\"}: failed to allocate IP 192.168.1.1: the provided IP "
                "(192.168.1.1) is not in the valid range. The range of valid IPs is "
                "10.96.0.0/12");
    post_expect(s, SVC_NP("n1", "30080"), 201, NULL);
    post_expect(s, SVC_NP("n2", "30080"), 422,
                "Service \"n2\" is invalid: spec.ports[0].nodePort: Invalid value: 30080: "
                "provided port is already allocated");
    post_expect(s, SVC_NP("n3", "80"), 422,
                "Service \"n3\" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided "
                "port is not in the valid range. The range of valid ports is 30000-32767");
    ts_resp r;
    assert_int_equal(ts_get(s, SVC "/a2", &r), 404); /* nothing stored, nothing kept */
    ts_resp_free(&r);
}

/* Update: a PUT without clusterIP keeps it (patchAllocatedValues: a no-op, same RV); changing it
 * is 422 "may not change once set". */
static void test_server_service_update_keeps_ip(void **state)
{
    kc_server *s = *state;
    const char *body = "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":"
                       "\"keep\"},\"spec\":{\"type\":\"NodePort\",\"ports\":[{\"port\":80}]}}";
    ts_resp r;
    assert_int_equal(ts_post(s, SVC, body, &r), 201);
    unsigned long long rv = ts_rv(r.json);
    char ip[64];
    snprintf(ip, sizeof(ip), "%s", ts_s(r.json, "spec.clusterIP"));
    json_int_t np = json_integer_value(ts_j(r.json, "spec.ports.0.nodePort"));
    ts_resp_free(&r);
    ts_req(s, "PUT", SVC "/keep", "application/json", body, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "spec.clusterIP"), ip);
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.ports.0.nodePort")), np);
    assert_int_equal(ts_rv(r.json), rv);
    ts_resp_free(&r);
    ts_req(s, "PUT", SVC "/keep", "application/json",
           "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"keep\"},"
           "\"spec\":{\"clusterIP\":\"10.96.0.99\",\"ports\":[{\"port\":80}]}}",
           NULL, &r);
    assert_int_equal(r.status, 422);
    assert_string_equal(ts_s(r.json, "message"),
                        "Service \"keep\" is invalid: spec.clusterIPs[0]: Invalid value: "
                        "[]string{\"10.96.0.99\"}: may not change once set");
    assert_string_equal(ts_s(r.json, "details.causes.0.field"), "spec.clusterIPs[0]");
    ts_resp_free(&r);
}

/* Allocations come back: on delete, on a change to a type that does not need them, and a dry
 * run keeps nothing. */
static void test_server_service_release(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    post_expect(s, SVC_IP("r1", "10.96.1.1"), 201, NULL);
    ts_req(s, "DELETE", SVC "/r1", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    post_expect(s, SVC_IP("r2", "10.96.1.1"), 201, NULL);
    post_expect(s, SVC_NP("r3", "31000"), 201, NULL);
    ts_req(s, "PATCH", SVC "/r3", "application/merge-patch+json",
           "{\"spec\":{\"type\":\"ClusterIP\"}}", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_null(ts_j(r.json, "spec.ports.0.nodePort"));
    assert_null(ts_j(r.json, "spec.externalTrafficPolicy"));
    ts_resp_free(&r);
    post_expect(s, SVC_NP("r4", "31000"), 201, NULL);
    ts_req(s, "POST", SVC "?dryRun=All", "application/json", SVC_IP("r5", "10.96.2.2"), NULL, &r);
    assert_int_equal(r.status, 201);
    assert_string_equal(ts_s(r.json, "spec.clusterIP"), "10.96.2.2");
    ts_resp_free(&r);
    post_expect(s, SVC_IP("r6", "10.96.2.2"), 201, NULL);
    assert_int_equal(kc_server_restart(s, KC_SERVER_RESTART_WIPE, NULL), 0); /* storage lost: every allocation free again */
    post_expect(s, SVC_IP("r6", "10.96.2.2"), 201, NULL);
}

/* kc_server_opts.service_cidr / node_port_range: allocations come from them; a full range is a
 * 500 (upstream: an internal error); an IPv6 range serves IPv6; a bad value fails
 * kc_server_new. */
static void test_server_service_configured_ranges(void **state)
{
    (void)state;
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.service_cidr = "10.0.0.0/28";
    o.node_port_range = "40000-40015";
    kc_server *s = ts_start_opts(&o);
    assert_non_null(s);
    for (int i = 0; i < 13; i++) { /* 14 usable addresses, the first one reserved */
        char body[256];
        snprintf(body, sizeof(body),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"s%d\"},"
                 "\"spec\":{\"type\":\"NodePort\",\"ports\":[{\"port\":80}]}}",
                 i);
        ts_resp r;
        assert_int_equal(ts_post(s, SVC, body, &r), 201);
        assert_true(in_cidr(ts_s(r.json, "spec.clusterIP"), "10.0.0.0", 28));
        assert_in_range(json_integer_value(ts_j(r.json, "spec.ports.0.nodePort")), 40000, 40015);
        ts_resp_free(&r);
    }
    post_expect(s, SVC_IP("full", ""), 500,
                "Internal error occurred: failed to allocate a serviceIP: range is full");
    kc_server_free(s);
    o.service_cidr = "fd00:10:96::/112";
    o.node_port_range = NULL;
    s = ts_start_opts(&o);
    assert_non_null(s);
    json_t *v6 = td_create_get(s, SVC,
                               "{'apiVersion':'v1','kind':'Service','metadata':{'name':'v6'},"
                               "'spec':{'ports':[{'port':80}]}}");
    assert_string_equal(ts_s(v6, "spec.ipFamilies.0"), "IPv6");
    assert_non_null(strstr(ts_s(v6, "spec.clusterIP"), "fd00:10:96::"));
    json_decref(v6);
    kc_server_free(s);
    o.service_cidr = "10.0.0.0/8";
    kc_server *bad = NULL;
    kc_error e = KC_ERROR_INIT;
    o.listen = "127.0.0.1:0";
    assert_int_equal(kc_server_new(&o, &bad, &e), KC_EINVAL);
    assert_non_null(strstr(e.message, "10.0.0.0/8"));
    kc_error_clear(&e);
    o.service_cidr = NULL;
    o.node_port_range = "30000-30001";
    assert_int_equal(kc_server_new(&o, &bad, &e), KC_EINVAL);
    assert_non_null(strstr(e.message, "30000-30001"));
    kc_error_clear(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_service_clusterip),
        cmocka_unit_test(test_server_service_nodeport),
        cmocka_unit_test(test_server_service_loadbalancer_local),
        cmocka_unit_test(test_server_service_headless_externalname),
        cmocka_unit_test(test_server_service_requested_values_422),
        cmocka_unit_test(test_server_service_update_keeps_ip),
        cmocka_unit_test(test_server_service_release),
        cmocka_unit_test(test_server_service_configured_ranges),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
