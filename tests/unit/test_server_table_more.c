/* test_server_table_more.c — kubectl's printers of the rarer built-in kinds (table_extra.c,
 * table_cluster.c, table_hpa.c): one row per kind, cells exact as upstream's printers.go builds
 * them (#23, #94: server-side Tables carry kubectl's columns). JSON below is written with single
 * quotes, turned into double quotes before parsing. */
#include "server/discovery/table.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* 2026-11-29T15:00:00Z; objects are created 5 minutes before */
#define NOW     1795964400
#define CREATED "'creationTimestamp':'2026-11-29T14:55:00Z'"

static char *dq(const char *s)
{
    char *d = strdup(s);
    assert_non_null(d);
    for (char *p = d; *p; p++)
        if (*p == '\'')
            *p = '"';
    return d;
}

static kc_obj *obj(const char *json)
{
    char *s = dq(json);
    kc_obj *o = NULL;
    kc_error err = KC_ERROR_INIT;
    if (kc_obj_parse(s, strlen(s), NULL, &o, &err) < 0)
        fail_msg("kc_obj_parse: %s: %s", err.message ? err.message : "?", s);
    free(s);
    return o;
}

static void json_is(const json_t *got, const char *want_sq)
{
    char *w = dq(want_sq);
    json_t *want = json_loads(w, JSON_DECODE_ANY, NULL);
    if (!want)
        fail_msg("bad expectation %s", w);
    char *g = got ? json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    if (!got || !json_equal((json_t *)got, want))
        fail_msg("got %s, want %s", g ? g : "(null)", w);
    free(g);
    free(w);
    json_decref(want);
}

/* The Table of one object of group/resource: its column names ("A|B|…", a "*" after a priority-1
 * column) and its row's cells. */
static void row_is(const char *group, const char *resource, const char *json, const char *cols,
                   const char *cells)
{
    kc_obj *o = obj(json);
    json_t *t = kc__table_build_at(group, resource, &o, 1, NULL, NULL, true, NOW);
    assert_non_null(t);
    char names[1024] = "";
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(t, "columnDefinitions"), i, c)
    {
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s%s", i ? "|" : "",
                 json_string_value(json_object_get(c, "name")),
                 json_integer_value(json_object_get(c, "priority")) ? "*" : "");
    }
    if (strcmp(names, cols) != 0)
        fail_msg("%s columns: got %s, want %s", resource, names, cols);
    json_is(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "cells"), cells);
    json_decref(t);
    kc_obj_unref(o);
}

#define META(name) "'metadata':{'name':'" name "'," CREATED "}"

static void test_server_table_more_core_kinds(void **state)
{
    row_is("", "replicationcontrollers",
           "{'apiVersion':'v1','kind':'ReplicationController'," META(
               "rc") ",'spec':{'replicas':3,"
                     "'selector':{'tier':'fe','app':'web'},'template':{'spec':{'containers':[{'"
                     "name':'a',"
                     "'image':'nginx'},{'name':'b','image':'busybox'}]}}},'status':{'replicas':2,"
                     "'readyReplicas':1}}",
           "Name|Desired|Current|Ready|Age|Containers*|Images*|Selector*",
           "['rc',3,2,1,'5m','a,b','nginx,busybox','app=web,tier=fe']");
    row_is("", "podtemplates",
           "{'apiVersion':'v1','kind':'PodTemplate'," META(
               "pt") ",'template':{'metadata':{"
                     "'labels':{'app':'web'}},'spec':{'containers':[{'name':'c','image':'img'}]}}}",
           "Name|Containers|Images|Pod Labels", "['pt','c','img','app=web']");
    row_is("", "podtemplates", "{'apiVersion':'v1','kind':'PodTemplate'," META("e") "}",
           "Name|Containers|Images|Pod Labels", "['e','','','<none>']");
    row_is("node.k8s.io", "runtimeclasses",
           "{'apiVersion':'node.k8s.io/v1','kind':'RuntimeClass'," META("gvisor") ",'handler':"
                                                                                  "'runsc'}",
           "Name|Handler|Age", "['gvisor','runsc','5m']");
}

/* printResourceQuota: status.hard by name; "limits.*" under Limit; used "0" when missing;
 * quantities in canonical form ("2000m" → "2", "2048Mi" → "2Gi"). */
static void test_server_table_more_resourcequota(void **state)
{
    row_is("", "resourcequotas",
           "{'apiVersion':'v1','kind':'ResourceQuota'," META(
               "q") ",'status':{'hard':{'pods':"
                    "'10','requests.cpu':'1','limits.memory':'2048Mi','requests.memory':'1Gi',"
                    "'limits.cpu':'2000m'},'used':{'pods':3,'requests.cpu':'500m','limits.memory':"
                    "'1Gi'}}}",
           "Name|Request|Limit|Age",
           "['q','pods: 3/10, requests.cpu: 500m/1, requests.memory: 0/1Gi',"
           "'limits.cpu: 0/2, limits.memory: 1Gi/2Gi','5m']");
    row_is("", "resourcequotas", "{'apiVersion':'v1','kind':'ResourceQuota'," META("e") "}",
           "Name|Request|Limit|Age", "['e','','','5m']");
}

#define HPA_COLS "Name|Reference|Targets|MinPods|MaxPods|Replicas|Age"
#define HPA(name, body)                                                                            \
    "{'apiVersion':'autoscaling/v2','kind':'HorizontalPodAutoscaler'," META(name) "," body "}"
#define CPU80                                                                                      \
    "{'type':'Resource','resource':{'name':'cpu','target':{'type':'Utilization',"                  \
    "'averageUtilization':80}}}"

/* formatHPAMetrics: "<unknown>" before the first status, "name: cur/target" for resources, at
 * most 2 then " + N more..."; MinPods "<unset>"; autoscaling/v1 as upstream converts it. */
static void test_server_table_more_hpa_targets(void **state)
{
    row_is("autoscaling", "horizontalpodautoscalers",
           HPA("web", "'spec':{'scaleTargetRef':{'apiVersion':'apps/v1','kind':'Deployment',"
                      "'name':'web'},'minReplicas':1,'maxReplicas':5,'metrics':[" CPU80 "]}"),
           HPA_COLS, "['web','Deployment/web','cpu: <unknown>/80%','1',5,0,'5m']");
    row_is("autoscaling", "horizontalpodautoscalers",
           HPA("web", "'spec':{'scaleTargetRef':{'kind':'Deployment','name':'web'},"
                      "'maxReplicas':5,'metrics':[" CPU80 "]},'status':{'currentReplicas':2,"
                      "'currentMetrics':[{'type':'Resource','resource':{'name':'cpu','current':{"
                      "'averageUtilization':50,'averageValue':'100m'}}}]}"),
           HPA_COLS, "['web','Deployment/web','cpu: 50%/80%','<unset>',5,2,'5m']");
    row_is("autoscaling", "horizontalpodautoscalers",
           HPA("m", "'spec':{'scaleTargetRef':{'kind':'StatefulSet','name':'db'},'maxReplicas':3,"
                    "'metrics':[{'type':'Resource','resource':{'name':'memory','target':{'type':"
                    "'AverageValue','averageValue':'500Mi'}}},{'type':'Pods','pods':{'metric':{"
                    "'name':'qps'},'target':{'type':'AverageValue','averageValue':'1000'}}},{"
                    "'type':'External','external':{'metric':{'name':'q'},'target':{'type':"
                    "'Value','value':'10'}}}]},'status':{'currentMetrics':[{'type':'Resource',"
                    "'resource':{'name':'memory','current':{'averageValue':'262144Ki'}}},{'type':"
                    "'Pods','pods':{'metric':{'name':'qps'},'current':{'averageValue':'0.5'}}}]}"),
           HPA_COLS,
           "['m','StatefulSet/db','memory: 256Mi/500Mi, 500m/1k + 1 more...','<unset>',3,"
           "0,'5m']");
    row_is("autoscaling", "horizontalpodautoscalers",
           HPA("x", "'spec':{'scaleTargetRef':{'kind':'Deployment','name':'x'},'maxReplicas':2,"
                    "'metrics':[{'type':'Object','object':{'target':{'type':'AverageValue',"
                    "'averageValue':'2'}}},{'type':'External','external':{'target':{'type':"
                    "'Value','value':'3'}}}]},'status':{'currentMetrics':[{'type':'Object',"
                    "'object':{'current':{'value':'1'}}},{'type':'External','external':{"
                    "'current':{'value':'4'}}}]}"),
           HPA_COLS, "['x','Deployment/x','<unknown>/2 (avg), 4/3','<unset>',2,0,'5m']");
    row_is(
        "autoscaling", "horizontalpodautoscalers",
        HPA("none", "'spec':{'scaleTargetRef':{'kind':'Deployment','name':'n'},'maxReplicas':2}"),
        HPA_COLS, "['none','Deployment/n','<none>','<unset>',2,0,'5m']");
    row_is("autoscaling", "horizontalpodautoscalers",
           "{'apiVersion':'autoscaling/v1','kind':'HorizontalPodAutoscaler'," META(
               "v1") ",'spec':{"
                     "'scaleTargetRef':{'kind':'Deployment','name':'web'},'minReplicas':2,'"
                     "maxReplicas':4,"
                     "'targetCPUUtilizationPercentage':70},'status':{'currentReplicas':3,"
                     "'currentCPUUtilizationPercentage':30}}",
           HPA_COLS, "['v1','Deployment/web','cpu: 30%/70%','2',4,3,'5m']");
}

#define CSR_COLS "Name|Age|SignerName|Requestor|RequestedDuration|Condition"

/* printCertificateSigningRequest: Denied over Approved over Pending, then Failed, Issued. */
static void test_server_table_more_csr(void **state)
{
    row_is(
        "certificates.k8s.io", "certificatesigningrequests",
        "{'apiVersion':'certificates.k8s.io/v1','kind':'CertificateSigningRequest'," META(
            "c1") ",'spec':{'signerName':'kubernetes.io/kube-apiserver-client','username':'alice',"
                  "'expirationSeconds':86400,'request':'eA=='},'status':{'conditions':[{'type':"
                  "'Approved','status':'True'}],'certificate':'Zm9v'}}",
        CSR_COLS,
        "['c1','5m','kubernetes.io/kube-apiserver-client','alice','24h',"
        "'Approved,Issued']");
    row_is("certificates.k8s.io", "certificatesigningrequests",
           "{'apiVersion':'certificates.k8s.io/v1','kind':'CertificateSigningRequest'," META(
               "c2") ",'spec':{'username':'bob'},'status':{'conditions':[{'type':'Failed'},{'type':"
                     "'Approved'},{'type':'Denied'}]}}",
           CSR_COLS, "['c2','5m','<none>','bob','<none>','Denied,Failed']");
    row_is("certificates.k8s.io", "certificatesigningrequests",
           "{'apiVersion':'certificates.k8s.io/v1','kind':'CertificateSigningRequest'," META(
               "c3") ",'spec':{'signerName':'x/y','username':'u','expirationSeconds':600}}",
           CSR_COLS, "['c3','5m','x/y','u','10m','Pending']");
}

/* printEndpointSlice: ports by number, else name, else "*"; up to 3 addresses then
 * " + N more..."; "<unset>" for an empty list. */
static void test_server_table_more_endpointslice_ingressclass(void **state)
{
    row_is("discovery.k8s.io", "endpointslices",
           "{'apiVersion':'discovery.k8s.io/v1','kind':'EndpointSlice'," META(
               "web-abc") ",'addressType':'IPv4','ports':[{'port':80},{'name':'https'},{}],'"
                          "endpoints':[{"
                          "'addresses':['10.0.0.1']},{'addresses':['10.0.0.2','10.0.0.3']},{'"
                          "addresses':["
                          "'10.0.0.4','10.0.0.5']}]}",
           "Name|AddressType|Ports|Endpoints|Age",
           "['web-abc','IPv4','80,https,*','10.0.0.1,10.0.0.2,10.0.0.3 + 2 more...','5m']");
    row_is("discovery.k8s.io", "endpointslices",
           "{'apiVersion':'discovery.k8s.io/v1','kind':'EndpointSlice'," META(
               "e") ",'addressType':'IPv6'}",
           "Name|AddressType|Ports|Endpoints|Age", "['e','IPv6','<unset>','<unset>','5m']");
    row_is("networking.k8s.io", "ingressclasses",
           "{'apiVersion':'networking.k8s.io/v1','kind':'IngressClass'," META(
               "nginx") ",'spec':{'controller':'k8s.io/ingress-nginx','parameters':{'apiGroup':"
                        "'k8s.example.com','kind':'IngressParameters','name':'lb'}}}",
           "Name|Controller|Parameters|Age",
           "['nginx','k8s.io/ingress-nginx','IngressParameters.k8s.example.com/lb','5m']");
    row_is("networking.k8s.io", "ingressclasses",
           "{'apiVersion':'networking.k8s.io/v1','kind':'IngressClass'," META(
               "plain") ",'spec':{'controller':'c'}}",
           "Name|Controller|Parameters|Age", "['plain','c','<none>','5m']");
}

static void test_server_table_more_networking_aggregation(void **state)
{
    row_is("networking.k8s.io", "servicecidrs",
           "{'apiVersion':'networking.k8s.io/v1','kind':'ServiceCIDR'," META(
               "k") ",'spec':{'cidrs':['10.96.0.0/12','fd00::/108']}}",
           "Name|CIDRs|Age", "['k','10.96.0.0/12,fd00::/108','5m']");
    /* upstream's IPAddress columns are Name and ParentRef, its cells Name, ParentRef and Age */
    row_is("networking.k8s.io", "ipaddresses",
           "{'apiVersion':'networking.k8s.io/v1','kind':'IPAddress'," META(
               "10.96.0.1") ",'spec':{'parentRef':{'group':'','resource':'Services','namespace':'"
                            "default',"
                            "'name':'kubernetes'}}}",
           "Name|ParentRef", "['10.96.0.1','services/default/kubernetes','5m']");
    row_is("apiregistration.k8s.io", "apiservices",
           "{'apiVersion':'apiregistration.k8s.io/v1','kind':'APIService'," META("v1.apps") "}",
           "Name|Service|Available|Age", "['v1.apps','Local','Unknown','5m']");
    row_is("apiregistration.k8s.io", "apiservices",
           "{'apiVersion':'apiregistration.k8s.io/v1','kind':'APIService'," META(
               "v1beta1.m") ",'spec':{'service':{'namespace':'kube-system','name':'metrics-server'}"
                            "},'status':{"
                            "'conditions':[{'type':'Available','status':'False','reason':'"
                            "MissingEndpoints'}]}}",
           "Name|Service|Available|Age",
           "['v1beta1.m','kube-system/metrics-server','False (MissingEndpoints)','5m']");
}

#define ADM "admissionregistration.k8s.io"

static void test_server_table_more_admission(void **state)
{
    row_is(ADM, "validatingwebhookconfigurations",
           "{'apiVersion':'admissionregistration.k8s.io/v1','kind':"
           "'ValidatingWebhookConfiguration'," META("v") ",'webhooks':[{'name':'a.x.io'},{'name':"
                                                         "'b.x.io'}]}",
           "Name|Webhooks|Age", "['v',2,'5m']");
    row_is(ADM, "mutatingwebhookconfigurations",
           "{'apiVersion':'admissionregistration.k8s.io/v1','kind':"
           "'MutatingWebhookConfiguration'," META("m") "}",
           "Name|Webhooks|Age", "['m',0,'5m']");
    row_is(
        ADM, "validatingadmissionpolicies",
        "{'apiVersion':'admissionregistration.k8s.io/v1','kind':'ValidatingAdmissionPolicy'," META(
            "p") ",'spec':{'paramKind':{'apiVersion':'v1','kind':'ConfigMap'},'validations':"
                 "[{'expression':'true'},{'expression':'1 == 1'}]}}",
        "Name|Validations|ParamKind|Age", "['p',2,'v1/ConfigMap','5m']");
    static const char *const refs[][2] = {
        {"{'name':'cfg','namespace':'ns'}", "ns/cfg"},
        {"{'name':'cfg'}", "*/cfg"},
        {"{'selector':{'matchLabels':{'b':'2','a':'1'},'matchExpressions':[{'key':'k',"
         "'operator':'In','values':['x','y']}]}}",
         "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]"
         "LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}"},
        {"{}", "<unset>"},
    };
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        char json[1024], cells[512];
        snprintf(json, sizeof json,
                 "{'apiVersion':'admissionregistration.k8s.io/v1','kind':"
                 "'ValidatingAdmissionPolicyBinding'," META("b") ",'spec':{'policyName':'p',"
                                                                 "'paramRef':%s}}",
                 refs[i][0]);
        snprintf(cells, sizeof cells, "['b','p','%s','5m']", refs[i][1]);
        row_is(ADM, "validatingadmissionpolicybindings", json, "Name|PolicyName|ParamRef|Age",
               cells);
    }
}

#define FC "flowcontrol.apiserver.k8s.io"

/* printFlowSchemaList sorts by matching precedence, then name; includeObject=Object follows. */
static void test_server_table_more_flowcontrol(void **state)
{
    row_is(FC, "flowschemas",
           "{'apiVersion':'flowcontrol.apiserver.k8s.io/v1','kind':'FlowSchema'," META(
               "fs") ",'spec':{'priorityLevelConfiguration':{'name':'global'},'matchingPrecedence':"
                     "100,"
                     "'distinguisherMethod':{'type':'ByUser'}},'status':{'conditions':[{'type':"
                     "'Dangling','status':'False'}]}}",
           "Name|PriorityLevel|MatchingPrecedence|DistinguisherMethod|Age|MissingPL",
           "['fs','global',100,'ByUser','5m','False']");
    kc_obj *fs[3] = {
        obj("{'kind':'FlowSchema','metadata':{'name':'a'},'spec':{'matchingPrecedence':500}}"),
        obj("{'kind':'FlowSchema','metadata':{'name':'c'},'spec':{'matchingPrecedence':100}}"),
        obj("{'kind':'FlowSchema','metadata':{'name':'b'},'spec':{'matchingPrecedence':100}}")};
    json_t *t = kc__table_build_at(FC, "flowschemas", fs, 3, NULL, NULL, true, NOW);
    assert_int_equal(kc__table_set_objects(t, fs, 3, KC__TOBJ_OBJECT), 0);
    json_t *rows = json_object_get(t, "rows");
    json_is(json_object_get(json_array_get(rows, 0), "cells"),
            "['b','',100,'<none>','<unknown>','?']");
    static const char *const order[] = {"b", "c", "a"};
    for (size_t i = 0; i < 3; i++) {
        const json_t *row = json_array_get(rows, i);
        const char *cell = json_string_value(json_array_get(json_object_get(row, "cells"), 0));
        const json_t *md = json_object_get(json_object_get(row, "object"), "metadata");
        assert_string_equal(cell, order[i]);
        assert_string_equal(json_string_value(json_object_get(md, "name")), order[i]);
    }
    json_decref(t);
    for (size_t i = 0; i < 3; i++)
        kc_obj_unref(fs[i]);
    row_is(FC, "prioritylevelconfigurations",
           "{'apiVersion':'flowcontrol.apiserver.k8s.io/v1','kind':"
           "'PriorityLevelConfiguration'," META(
               "workload") ",'spec':{'type':'Limited',"
                           "'limited':{'nominalConcurrencyShares':30,'limitResponse':{'type':'"
                           "Queue','queuing':"
                           "{'queues':64,'handSize':6,'queueLengthLimit':50}}}}}",
           "Name|Type|NominalConcurrencyShares|Queues|HandSize|QueueLengthLimit|Age",
           "['workload','Limited',30,64,6,50,'5m']");
    row_is(FC, "prioritylevelconfigurations",
           "{'apiVersion':'flowcontrol.apiserver.k8s.io/v1','kind':"
           "'PriorityLevelConfiguration'," META("exempt") ",'spec':{'type':'Exempt'}}",
           "Name|Type|NominalConcurrencyShares|Queues|HandSize|QueueLengthLimit|Age",
           "['exempt','Exempt','<none>','<none>','<none>','<none>','5m']");
}

#define STG "storage.k8s.io"
#define CSI_COLS                                                                                   \
    "Name|AttachRequired|PodInfoOnMount|StorageCapacity|TokenRequests|RequiresRepublish|Modes|Age"

static void test_server_table_more_storage(void **state)
{
    row_is(
        STG, "csidrivers",
        "{'apiVersion':'storage.k8s.io/v1','kind':'CSIDriver'," META(
            "d") ",'spec':{"
                 "'attachRequired':false,'podInfoOnMount':true,'tokenRequests':[{'audience':'a'},{"
                 "'audience':'b'}],'volumeLifecycleModes':['Persistent','Ephemeral']}}",
        CSI_COLS, "['d',false,true,false,'a,b',false,'Persistent,Ephemeral','5m']");
    row_is(STG, "csidrivers",
           "{'apiVersion':'storage.k8s.io/v1','kind':'CSIDriver'," META("e") ",'spec':{}}",
           CSI_COLS, "['e',true,false,false,'<unset>',false,'<none>','5m']");
    row_is(STG, "csinodes",
           "{'apiVersion':'storage.k8s.io/v1','kind':'CSINode'," META(
               "n1") ",'spec':{'drivers':"
                     "[{'name':'a','nodeID':'n1'},{'name':'b','nodeID':'n1'}]}}",
           "Name|Drivers|Age", "['n1',2,'5m']");
    row_is(
        STG, "volumeattachments",
        "{'apiVersion':'storage.k8s.io/v1','kind':'VolumeAttachment'," META(
            "va") ",'spec':{"
                  "'attacher':'csi.x.io','nodeName':'n1','source':{'persistentVolumeName':'pv1'}},"
                  "'status':{'attached':true}}",
        "Name|Attacher|PV|Node|Attached|Age", "['va','csi.x.io','pv1','n1',true,'5m']");
    row_is(STG, "volumeattributesclasses",
           "{'apiVersion':'storage.k8s.io/v1','kind':'VolumeAttributesClass'," META(
               "gold") ",'driverName':'csi.x.io'}",
           "Name|DriverName|Age", "['gold','csi.x.io','5m']");
    row_is(STG, "volumeattributesclasses",
           "{'apiVersion':'storage.k8s.io/v1','kind':'VolumeAttributesClass','metadata':{'name':"
           "'std','annotations':{'volumeattributesclass.alpha.kubernetes.io/is-default-class':"
           "'true'}," CREATED "},'driverName':'csi.x.io'}",
           "Name|DriverName|Age", "['std (default)','csi.x.io','5m']");
}

#define RES "resource.k8s.io"

static void test_server_table_more_resource_kinds(void **state)
{
    row_is(RES, "deviceclasses",
           "{'apiVersion':'resource.k8s.io/v1','kind':'DeviceClass'," META("gpu") "}", "Name|Age",
           "['gpu','5m']");
    row_is(RES, "resourceclaimtemplates",
           "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceClaimTemplate'," META("t") "}",
           "Name|Age", "['t','5m']");
    row_is(RES, "resourceclaims",
           "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceClaim'," META("c") "}",
           "Name|State|Age", "['c','pending','5m']");
    row_is(RES, "resourceclaims",
           "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceClaim'," META(
               "c") ",'status':{"
                    "'allocation':{},'reservedFor':[{'resource':'pods','name':'p','uid':'u'}]}}",
           "Name|State|Age", "['c','allocated,reserved','5m']");
    row_is(RES, "resourceclaims",
           "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceClaim','metadata':{'name':'c',"
           "'deletionTimestamp':'2026-11-29T14:59:00Z'," CREATED "},'status':{'allocation':{}}}",
           "Name|State|Age", "['c','deleted,allocated','5m']");
    row_is(RES, "resourceslices",
           "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceSlice'," META(
               "s") ",'spec':{"
                    "'nodeName':'n1','driver':'gpu.x.io','pool':{'name':'p1','generation':1,"
                    "'resourceSliceCount':1}}}",
           "Name|Node|Driver|Pool|Age", "['s','n1','gpu.x.io','p1','5m']");
}

/* events.k8s.io Events print as core Events do (one internal type upstream), through the fields
 * their conversion maps: regarding, note, reportingController, eventTime, deprecated*. */
static void test_server_table_more_events_k8s_io(void **state)
{
    row_is(
        "events.k8s.io", "events",
        "{'apiVersion':'events.k8s.io/v1','kind':'Event'," META(
            "ev") ",'eventTime':"
                  "'2026-11-29T14:58:00.000000Z','type':'Normal','reason':'Started','action':'"
                  "Start',"
                  "'regarding':{'kind':'Pod','name':'web','fieldPath':'spec.containers{c}'},'note':"
                  "' Started container c "
                  "','reportingController':'kubelet','reportingInstance':'n1'}",
        "Last Seen|Type|Reason|Object|Subobject*|Source*|Message|First Seen*|Count*|Name*",
        "['2m','Normal','Started','pod/web','spec.containers{c}','kubelet, n1',"
        "'Started container c','2m',1,'ev']");
    row_is(
        "events.k8s.io", "events",
        "{'apiVersion':'events.k8s.io/v1','kind':'Event'," META(
            "old") ",'type':'Warning',"
                   "'reason':'BackOff','regarding':{'kind':'Node'},'deprecatedSource':{'component':"
                   "'kubelet','host':'n2'},'deprecatedFirstTimestamp':'2026-11-29T14:00:00Z',"
                   "'deprecatedLastTimestamp':'2026-11-29T14:50:00Z','deprecatedCount':7}",
        "Last Seen|Type|Reason|Object|Subobject*|Source*|Message|First Seen*|Count*|Name*",
        "['10m','Warning','BackOff','node','','kubelet, n2','','60m',7,'old']");
}

/* Kinds upstream serves through the default table convertor keep Name / Created At. */
static void test_server_table_more_default_convertor_kinds(void **state)
{
    static const char *const kinds[][2] = {{"", "limitranges"},
                                           {"rbac.authorization.k8s.io", "roles"},
                                           {"rbac.authorization.k8s.io", "clusterroles"},
                                           {STG, "csistoragecapacities"}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        row_is(kinds[i][0], kinds[i][1], "{'kind':'X'," META("x") "}", "Name|Created At",
               "['x','2026-11-29T14:55:00Z']");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_table_more_core_kinds),
        cmocka_unit_test(test_server_table_more_resourcequota),
        cmocka_unit_test(test_server_table_more_hpa_targets),
        cmocka_unit_test(test_server_table_more_csr),
        cmocka_unit_test(test_server_table_more_endpointslice_ingressclass),
        cmocka_unit_test(test_server_table_more_networking_aggregation),
        cmocka_unit_test(test_server_table_more_admission),
        cmocka_unit_test(test_server_table_more_flowcontrol),
        cmocka_unit_test(test_server_table_more_storage),
        cmocka_unit_test(test_server_table_more_resource_kinds),
        cmocka_unit_test(test_server_table_more_events_k8s_io),
        cmocka_unit_test(test_server_table_more_default_convertor_kinds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
