/*
 * test_server_api_defaults.c — what the embedded server stores for the common built-in kinds:
 * each test creates a typical object and compares the stored object (GET) with the document a
 * Kubernetes 1.33 API server stores for the same request (server-chosen uid, timestamps and
 * resourceVersion aside). The expected documents follow the upstream code named in each test:
 * k8s.io/kubernetes pkg/apis/{apps,batch,core}/v1/defaults.go (+ zz_generated.defaults.go),
 * the registry strategies (pkg/registry/...) and the pod admission plugins. Services are
 * test_server_api_services.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_defaults_util.h"

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

/* The PodSpec a template gets from SetDefaults_PodSpec and SetDefaults_Container: one
 * container "c" of image IMG with pull policy PULL. */
#define TPL_SPEC(IMG, PULL)                                                                        \
    "'spec':{'containers':[{'name':'c','image':'" IMG "','imagePullPolicy':'" PULL "',"            \
    "'resources':{},'terminationMessagePath':'/dev/termination-log',"                              \
    "'terminationMessagePolicy':'File'}],'dnsPolicy':'ClusterFirst','restartPolicy':'Always',"     \
    "'schedulerName':'default-scheduler','securityContext':{},'terminationGracePeriodSeconds':30}"
#define TPL(IMG, PULL)                                                                             \
    "'template':{'metadata':{'creationTimestamp':null,'labels':{'app':'w'}}," TPL_SPEC(IMG,        \
                                                                                       PULL) "}"
#define IN_TPL(IMG)                                                                                \
    "'selector':{'matchLabels':{'app':'w'}},'template':{'metadata':{'labels':{'app':'w'}},"        \
    "'spec':{'containers':[{'name':'c','image':'" IMG "'}]}}"

/* apps/v1 SetDefaults_Deployment: replicas 1, RollingUpdate 25%/25%, revisionHistoryLimit 10,
 * progressDeadlineSeconds 600; pod template defaults; DeploymentStatus encodes as {}. */
static void test_server_defaults_deployment(void **state)
{
    json_t *got = td_create_get(*state, "/apis/apps/v1/namespaces/default/deployments",
                                "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':"
                                "'web'},'spec':{" IN_TPL("nginx:1.25") "}}");
    td_expect(got, "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'web',"
                   "'namespace':'default','generation':1},'spec':{'replicas':1,'selector':{"
                   "'matchLabels':{'app':'w'}},'strategy':{'type':'RollingUpdate',"
                   "'rollingUpdate':{'maxUnavailable':'25%','maxSurge':'25%'}},"
                   "'revisionHistoryLimit':10,'progressDeadlineSeconds':600," TPL(
                       "nginx:1.25", "IfNotPresent") "},'status':{}}");
    json_decref(got);
}

/* Recreate: no rollingUpdate. An image without a tag pulls Always (SetDefaults_Container). */
static void test_server_defaults_deployment_recreate(void **state)
{
    json_t *got =
        td_create_get(*state, "/apis/apps/v1/namespaces/default/deployments",
                      "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':"
                      "'rec'},'spec':{'replicas':0,'strategy':{'type':'Recreate'}," IN_TPL(
                          "registry.local:5000/app") "}}");
    td_expect(got, "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'rec',"
                   "'namespace':'default','generation':1},'spec':{'replicas':0,'selector':{"
                   "'matchLabels':{'app':'w'}},'strategy':{'type':'Recreate'},"
                   "'revisionHistoryLimit':10,'progressDeadlineSeconds':600," TPL(
                       "registry.local:5000/app", "Always") "},'status':{}}");
    json_decref(got);
}

/* SetDefaults_ReplicaSet: replicas 1; ReplicaSetStatus always encodes "replicas". */
static void test_server_defaults_replicaset(void **state)
{
    json_t *got = td_create_get(*state, "/apis/apps/v1/namespaces/default/replicasets",
                                "{'apiVersion':'apps/v1','kind':'ReplicaSet','metadata':{'name':"
                                "'rs'},'spec':{" IN_TPL("nginx:latest") "}}");
    td_expect(got, "{'apiVersion':'apps/v1','kind':'ReplicaSet','metadata':{'name':'rs',"
                   "'namespace':'default','generation':1},'spec':{'replicas':1,'selector':{"
                   "'matchLabels':{'app':'w'}}," TPL("nginx:latest",
                                                     "Always") "},"
                                                               "'status':{'replicas':0}}");
    json_decref(got);
}

/* SetDefaults_StatefulSet: OrderedReady, RollingUpdate partition 0, PVC retention Retain/Retain,
 * replicas 1, revisionHistoryLimit 10; volumeClaimTemplates get SetDefaults_PersistentVolumeClaim
 * (status.phase Pending) and volumeMode Filesystem; StatefulSetStatus encodes replicas and
 * availableReplicas. */
static void test_server_defaults_statefulset(void **state)
{
    json_t *got = td_create_get(
        *state, "/apis/apps/v1/namespaces/default/statefulsets",
        "{'apiVersion':'apps/v1','kind':'StatefulSet','metadata':{'name':'db'},'spec':{"
        "'serviceName':'db'," IN_TPL("postgres:16") ",'volumeClaimTemplates':[{'metadata':{"
                                                    "'name':'data'},'spec':{'accessModes':['"
                                                    "ReadWriteOnce'],'resources':{'requests':{"
                                                    "'storage':'1Gi'}}}}]}}");
    td_expect(
        got,
        "{'apiVersion':'apps/v1','kind':'StatefulSet','metadata':{'name':'db',"
        "'namespace':'default','generation':1},'spec':{'replicas':1,'selector':{"
        "'matchLabels':{'app':'w'}},'serviceName':'db'," TPL(
            "postgres:16",
            "IfNotPresent") ","
                            "'volumeClaimTemplates':[{'metadata':{'name':'data','creationTimestamp'"
                            ":null},"
                            "'spec':{'accessModes':['ReadWriteOnce'],'resources':{'requests':{'"
                            "storage':"
                            "'1Gi'}},'volumeMode':'Filesystem'},'status':{'phase':'Pending'}}],"
                            "'podManagementPolicy':'OrderedReady','updateStrategy':{'type':"
                            "'RollingUpdate','rollingUpdate':{'partition':0}},'"
                            "revisionHistoryLimit':10,"
                            "'persistentVolumeClaimRetentionPolicy':{'whenDeleted':'Retain','"
                            "whenScaled':"
                            "'Retain'}},'status':{'replicas':0,'availableReplicas':0}}");
    json_decref(got);
}

/* SetDefaults_DaemonSet: RollingUpdate maxUnavailable 1 / maxSurge 0 (integers),
 * revisionHistoryLimit 10; DaemonSetStatus encodes its four counters. */
static void test_server_defaults_daemonset(void **state)
{
    json_t *got = td_create_get(*state, "/apis/apps/v1/namespaces/default/daemonsets",
                                "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':"
                                "'agent'},'spec':{" IN_TPL("fluent-bit:3") "}}");
    td_expect(
        got,
        "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'agent',"
        "'namespace':'default','generation':1},'spec':{'selector':{'matchLabels':{"
        "'app':'w'}}," TPL(
            "fluent-bit:3",
            "IfNotPresent") ",'updateStrategy':{"
                            "'type':'RollingUpdate','rollingUpdate':{'maxUnavailable':1,'maxSurge':"
                            "0}},"
                            "'revisionHistoryLimit':10},'status':{'currentNumberScheduled':0,"
                            "'numberMisscheduled':0,'desiredNumberScheduled':0,'numberReady':0}}");
    json_decref(got);
}

/* batch/v1 SetDefaults_Job (completions/parallelism 1, backoffLimit 6, NonIndexed, suspend
 * false, podReplacementPolicy TerminatingOrFailed, manualSelector false) and
 * jobStrategy.generateSelector: the template gets job-name and controller-uid labels (legacy and
 * batch.kubernetes.io/), the selector the uid; the Job's own labels default to the template's
 * (read back after the selector was generated, so they carry the generated ones too). */
static void test_server_defaults_job(void **state)
{
    json_t *got = td_create_get(
        *state, "/apis/batch/v1/namespaces/default/jobs",
        "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'pi'},'spec':{'template':{"
        "'spec':{'containers':[{'name':'c','image':'perl:5.34'}],'restartPolicy':'Never'}}}}");
    const char *labels = "{'batch.kubernetes.io/controller-uid':'UID','batch.kubernetes.io/"
                         "job-name':'pi','controller-uid':'UID','job-name':'pi'}";
    char want[4096];
    snprintf(want, sizeof(want),
             "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'pi','namespace':"
             "'default','generation':1,'labels':%s},'spec':{'parallelism':1,'completions':1,"
             "'backoffLimit':6,'selector':{'matchLabels':{'batch.kubernetes.io/controller-uid':"
             "'UID'}},'manualSelector':false,'template':{'metadata':{'creationTimestamp':null,"
             "'labels':%s},'spec':{'containers':[{'name':'c','image':'perl:5.34',"
             "'imagePullPolicy':'IfNotPresent','resources':{},'terminationMessagePath':"
             "'/dev/termination-log','terminationMessagePolicy':'File'}],'restartPolicy':'Never',"
             "'dnsPolicy':'ClusterFirst','schedulerName':'default-scheduler','securityContext':{},"
             "'terminationGracePeriodSeconds':30}},'completionMode':'NonIndexed','suspend':false,"
             "'podReplacementPolicy':'TerminatingOrFailed'},'status':{}}",
             labels, labels);
    td_expect(got, want);
    json_decref(got);
}

/* manualSelector: true keeps the user's selector and labels (no generated ones); a
 * podFailurePolicy makes podReplacementPolicy Failed and its onPodConditions status True. */
static void test_server_defaults_job_manual_selector(void **state)
{
    json_t *got = td_create_get(
        *state, "/apis/batch/v1/namespaces/default/jobs",
        "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'man','labels':{'x':'y'}},"
        "'spec':{'manualSelector':true,'parallelism':3,'selector':{'matchLabels':{'app':'w'}},"
        "'podFailurePolicy':{'rules':[{'action':'Ignore','onPodConditions':[{'type':"
        "'DisruptionTarget'}]}]},'template':{'metadata':{'labels':{'app':'w'}},'spec':{"
        "'containers':[{'name':'c','image':'x:1'}],'restartPolicy':'Never'}}}}");
    td_expect(got, "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'man','namespace':"
                   "'default','generation':1,'labels':{'x':'y'}},'spec':{'parallelism':3,"
                   "'backoffLimit':6,'selector':{'matchLabels':{'app':'w'}},'manualSelector':true,"
                   "'podFailurePolicy':{'rules':[{'action':'Ignore','onPodConditions':[{'type':"
                   "'DisruptionTarget','status':'True'}]}]},'template':{'metadata':{"
                   "'creationTimestamp':null,'labels':{'app':'w'}},'spec':{'containers':[{'name':"
                   "'c','image':'x:1','imagePullPolicy':'IfNotPresent','resources':{},"
                   "'terminationMessagePath':'/dev/termination-log','terminationMessagePolicy':"
                   "'File'}],'restartPolicy':'Never','dnsPolicy':'ClusterFirst','schedulerName':"
                   "'default-scheduler','securityContext':{},'terminationGracePeriodSeconds':30}},"
                   "'completionMode':'NonIndexed','suspend':false,'podReplacementPolicy':"
                   "'Failed'},'status':{}}");
    json_decref(got);
}

/* batch/v1 SetDefaults_CronJob: concurrencyPolicy Allow, suspend false, history limits 3 and 1;
 * the job template's pod template gets the PodSpec defaults (its JobSpec does not: the scheme
 * defaults a JobSpec only inside a Job); CronJobStatus encodes as {}. */
static void test_server_defaults_cronjob(void **state)
{
    json_t *got = td_create_get(
        *state, "/apis/batch/v1/namespaces/default/cronjobs",
        "{'apiVersion':'batch/v1','kind':'CronJob','metadata':{'name':'tick'},'spec':{"
        "'schedule':'*/5 * * * *','jobTemplate':{'spec':{'template':{'spec':{'containers':[{"
        "'name':'c','image':'busybox:1.36'}],'restartPolicy':'OnFailure'}}}}}}");
    td_expect(got, "{'apiVersion':'batch/v1','kind':'CronJob','metadata':{'name':'tick',"
                   "'namespace':'default','generation':1},'spec':{'schedule':'*/5 * * * *',"
                   "'concurrencyPolicy':'Allow','suspend':false,'successfulJobsHistoryLimit':3,"
                   "'failedJobsHistoryLimit':1,'jobTemplate':{'metadata':{'creationTimestamp':"
                   "null},'spec':{'template':{'metadata':{'creationTimestamp':null},'spec':{"
                   "'containers':[{'name':'c','image':'busybox:1.36','imagePullPolicy':"
                   "'IfNotPresent','resources':{},'terminationMessagePath':'/dev/termination-log',"
                   "'terminationMessagePolicy':'File'}],'restartPolicy':'OnFailure','dnsPolicy':"
                   "'ClusterFirst','schedulerName':'default-scheduler','securityContext':{},"
                   "'terminationGracePeriodSeconds':30}}}}},'status':{}}");
    json_decref(got);
}

/* core/v1 SetDefaults_ReplicationController: selector and labels from the template's labels,
 * replicas 1; ReplicationControllerStatus always encodes "replicas". */
static void test_server_defaults_replicationcontroller(void **state)
{
    json_t *got =
        td_create_get(*state, "/api/v1/namespaces/default/replicationcontrollers",
                      "{'apiVersion':'v1','kind':'ReplicationController','metadata':{"
                      "'name':'rc'},'spec':{'template':{'metadata':{'labels':{'app':"
                      "'w'}},'spec':{'containers':[{'name':'c','image':'nginx:1.25'}]}}}}");
    td_expect(got,
              "{'apiVersion':'v1','kind':'ReplicationController','metadata':{'name':'rc',"
              "'namespace':'default','labels':{'app':'w'},'generation':1},'spec':{'replicas':1,"
              "'selector':{'app':'w'}," TPL("nginx:1.25", "IfNotPresent") "},'status':{"
                                                                          "'replicas':0}}");
    json_decref(got);
}

#define POD_TOLERATIONS                                                                            \
    "'tolerations':[{'key':'node.kubernetes.io/not-ready','operator':'Exists','effect':"           \
    "'NoExecute','tolerationSeconds':300},{'key':'node.kubernetes.io/unreachable','operator':"     \
    "'Exists','effect':'NoExecute','tolerationSeconds':300}]"

/* A Pod: SetDefaults_PodSpec + SetDefaults_Pod (requests from limits, enableServiceLinks),
 * containers (pull policy, termination message, ports TCP, env fieldRef v1, probes, gRPC
 * service ""), volumes (configMap/projected defaultMode 420, token expiry 3600, emptyDir for a
 * volume without a source); admission: priority 0 / PreemptLowerPriority (Priority),
 * serviceAccountName default (ServiceAccount; no token volume here), the two NoExecute
 * tolerations (DefaultTolerationSeconds); status Pending with its QoS class (the init container
 * has no limits: Burstable). Pods carry generation 1 here (kcache's registry). */
static void test_server_defaults_pod(void **state)
{
    json_t *got = td_create_get(
        *state, "/api/v1/namespaces/default/pods",
        "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p1'},'spec':{'containers':[{'name':"
        "'app','image':'registry.local:5000/app','ports':[{'containerPort':8080}],'env':[{'name':"
        "'NODE','valueFrom':{'fieldRef':{'fieldPath':'spec.nodeName'}}}],'resources':{'limits':{"
        "'cpu':'500m','memory':'128Mi'}},'livenessProbe':{'httpGet':{'port':8080}},"
        "'readinessProbe':{'grpc':{'port':9090}}}],'initContainers':[{'name':'init','image':"
        "'busybox@sha256:8d0d1d0e9e9b0c41d9dc2f4d5b4e2a0e1f0d8d7c6b5a4f3e2d1c0b9a8f7e6d5c'}],"
        "'volumes':[{'name':'cfg','configMap':{'name':'c'}},{'name':'scratch'},{'name':'tok',"
        "'projected':{'sources':[{'serviceAccountToken':{'path':'t'}}]}}]}}");
    td_expect(
        got,
        "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p1','namespace':'default',"
        "'generation':1},'spec':{'containers':[{'name':'app','image':'registry.local:5000/app',"
        "'imagePullPolicy':'Always','ports':[{'containerPort':8080,'protocol':'TCP'}],'env':[{"
        "'name':'NODE','valueFrom':{'fieldRef':{'apiVersion':'v1','fieldPath':'spec.nodeName'}}}],"
        "'resources':{'limits':{'cpu':'500m','memory':'128Mi'},'requests':{'cpu':'500m','memory':"
        "'128Mi'}},'livenessProbe':{'httpGet':{'port':8080,'path':'/','scheme':'HTTP'},"
        "'timeoutSeconds':1,'periodSeconds':10,'successThreshold':1,'failureThreshold':3},"
        "'readinessProbe':{'grpc':{'port':9090,'service':''},'timeoutSeconds':1,'periodSeconds':"
        "10,'successThreshold':1,'failureThreshold':3},'terminationMessagePath':"
        "'/dev/termination-log','terminationMessagePolicy':'File'}],'initContainers':[{'name':"
        "'init','image':'busybox@sha256:8d0d1d0e9e9b0c41d9dc2f4d5b4e2a0e1f0d8d7c6b5a4f3e2d1c0b9a8"
        "f7e6d5c','imagePullPolicy':'IfNotPresent','resources':{},'terminationMessagePath':"
        "'/dev/termination-log','terminationMessagePolicy':'File'}],'volumes':[{'name':'cfg',"
        "'configMap':{'name':'c','defaultMode':420}},{'name':'scratch','emptyDir':{}},{'name':"
        "'tok','projected':{'sources':[{'serviceAccountToken':{'path':'t','expirationSeconds':"
        "3600}}],'defaultMode':420}}],'restartPolicy':'Always','terminationGracePeriodSeconds':30,"
        "'dnsPolicy':'ClusterFirst','serviceAccountName':'default','serviceAccount':'default',"
        "'securityContext':{},'schedulerName':'default-scheduler'," POD_TOLERATIONS ","
        "'priority':0,'enableServiceLinks':true,'preemptionPolicy':'PreemptLowerPriority'},"
        "'status':{'phase':'Pending','qosClass':'Burstable'}}");
    json_decref(got);
}

/* QoS (ComputePodQOS): limits only → requests default to them → Guaranteed; nothing →
 * BestEffort. A toleration of every NoExecute taint adds no default tolerations; a system
 * priority class gets its value. */
static void test_server_defaults_pod_qos_priority(void **state)
{
    json_t *g = td_create_get(
        *state, "/api/v1/namespaces/default/pods",
        "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'gq'},'spec':{'priorityClassName':"
        "'system-node-critical','tolerations':[{'operator':'Exists'}],'containers':[{'name':'a',"
        "'image':'x:1','resources':{'limits':{'cpu':'1','memory':'1Gi'}}}]}}");
    assert_string_equal(ts_s(g, "status.qosClass"), "Guaranteed");
    assert_int_equal(json_integer_value(ts_j(g, "spec.priority")), 2000001000);
    assert_int_equal(json_array_size(ts_j(g, "spec.tolerations")), 1);
    json_decref(g);
    json_t *b = td_create_get(*state, "/api/v1/namespaces/default/pods",
                              "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'be'},'spec':{"
                              "'containers':[{'name':'a','image':'x:1'}]}}");
    assert_string_equal(ts_s(b, "status.qosClass"), "BestEffort");
    json_decref(b);
}

/* Priority admission: an unknown priority class is 403 Forbidden, as upstream words it. */
static void test_server_defaults_pod_unknown_priority_class_403(void **state)
{
    ts_resp r;
    ts_post(*state, "/api/v1/namespaces/default/pods",
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"pc\"},\"spec\":{"
            "\"priorityClassName\":\"gold\",\"containers\":[{\"name\":\"a\",\"image\":\"x\"}]}}",
            &r);
    assert_int_equal(r.status, 403);
    assert_string_equal(ts_s(r.json, "reason"), "Forbidden");
    assert_string_equal(ts_s(r.json, "message"),
                        "pods \"pc\" is forbidden: no PriorityClass with name gold was found");
    ts_resp_free(&r);
}

/* SetDefaults_Namespace (label kubernetes.io/metadata.name), namespaceStrategy.PrepareForCreate
 * (spec.finalizers [kubernetes], status Active); SetDefaults_Secret (type Opaque);
 * SetDefaults_PersistentVolumeClaim(+Spec) (volumeMode Filesystem, status Pending). */
static void test_server_defaults_namespace_secret_pvc(void **state)
{
    json_t *ns = td_create_get(*state, "/api/v1/namespaces",
                               "{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'team'}}");
    td_expect(ns, "{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'team','labels':{"
                  "'kubernetes.io/metadata.name':'team'}},'spec':{'finalizers':['kubernetes']},"
                  "'status':{'phase':'Active'}}");
    json_decref(ns);
    json_t *sec = td_create_get(*state, "/api/v1/namespaces/default/secrets",
                                "{'apiVersion':'v1','kind':'Secret','metadata':{'name':'s'},"
                                "'data':{'k':'dg=='}}");
    td_expect(sec, "{'apiVersion':'v1','kind':'Secret','metadata':{'name':'s','namespace':"
                   "'default'},'data':{'k':'dg=='},'type':'Opaque'}");
    json_decref(sec);
    json_t *pvc = td_create_get(*state, "/api/v1/namespaces/default/persistentvolumeclaims",
                                "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{"
                                "'name':'c'},'spec':{'accessModes':['ReadWriteOnce'],"
                                "'resources':{'requests':{'storage':'1Gi'}}}}");
    td_expect(pvc, "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':'c',"
                   "'namespace':'default'},'spec':{'accessModes':['ReadWriteOnce'],'resources':{"
                   "'requests':{'storage':'1Gi'}},'volumeMode':'Filesystem'},'status':{'phase':"
                   "'Pending'}}");
    json_decref(pvc);
}

/* Defaults apply to updates too: a PUT of the object as first sent (no defaults) is a no-op
 * (same resourceVersion), and the namespace's spec.finalizers cannot be dropped by a PUT
 * (they change only through /finalize). */
static void test_server_defaults_update_noop(void **state)
{
    kc_server *s = *state;
    const char *body = "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{"
                       "\"name\":\"up\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"w\"}},"
                       "\"template\":{\"metadata\":{\"labels\":{\"app\":\"w\"}},\"spec\":{"
                       "\"containers\":[{\"name\":\"c\",\"image\":\"x:1\"}]}}}}";
    ts_resp r;
    assert_int_equal(ts_post(s, "/apis/apps/v1/namespaces/default/deployments", body, &r), 201);
    unsigned long long rv = ts_rv(r.json);
    ts_resp_free(&r);
    ts_req(s, "PUT", "/apis/apps/v1/namespaces/default/deployments/up", "application/json", body,
           NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(ts_rv(r.json), rv);
    assert_int_equal(json_integer_value(ts_j(r.json, "metadata.generation")), 1);
    ts_resp_free(&r);
    ts_req(s, "PUT", "/api/v1/namespaces/default", "application/json",
           "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"default\"}}",
           NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "spec.finalizers.0"), "kubernetes");
    assert_string_equal(json_string_value(json_object_get(ts_j(r.json, "metadata.labels"),
                                                          "kubernetes.io/metadata.name")),
                        "default");
    ts_resp_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_defaults_deployment),
        cmocka_unit_test(test_server_defaults_deployment_recreate),
        cmocka_unit_test(test_server_defaults_replicaset),
        cmocka_unit_test(test_server_defaults_statefulset),
        cmocka_unit_test(test_server_defaults_daemonset),
        cmocka_unit_test(test_server_defaults_job),
        cmocka_unit_test(test_server_defaults_job_manual_selector),
        cmocka_unit_test(test_server_defaults_cronjob),
        cmocka_unit_test(test_server_defaults_replicationcontroller),
        cmocka_unit_test(test_server_defaults_pod),
        cmocka_unit_test(test_server_defaults_pod_qos_priority),
        cmocka_unit_test(test_server_defaults_pod_unknown_priority_class_403),
        cmocka_unit_test(test_server_defaults_namespace_secret_pvc),
        cmocka_unit_test(test_server_defaults_update_noop),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
