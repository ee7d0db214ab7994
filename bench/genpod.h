/*
 * bench/genpod.h — header-only generator of realistic Pods, for benchmarks and tests.
 *
 * The benchmarks' reference workload (every decoding figure in docs/BENCHMARKS.md is measured on
 * it): compact JSON as Python's json.dumps with separators=(',',':') writes it, a ~6 KB Pod of
 * which ~40 % is metadata.managedFields. Pod i differs from
 * pod j only in name (web-7d9f8c6b5-%05u), namespace (ns-<i%100>), uid (…-%012u),
 * resourceVersion (1000000+i) and spec.nodeName (node-<i%5000>).
 *
 *   size_t kc_genpod_one(char *buf, size_t cap, unsigned i)
 *       Writes pod i (compact JSON, NUL-terminated) into buf; returns its length without the NUL.
 *       Like snprintf: when cap is too small the output is truncated and the needed length is
 *       returned. KC_GENPOD_MAX bytes always suffice.
 *   char *kc_genpod_list(unsigned n, size_t *ret_len)
 *       {"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"2000000"},"items":[…]}
 *       with pods 0..n-1. malloc'd, NUL-terminated; caller frees. NULL on OOM.
 *   char *kc_genpod_watch(unsigned n, const char *type, size_t *ret_len)
 *       n lines {"type":<type>,"object":<pod i>}\n, i = 0..n-1.
 *       malloc'd, NUL-terminated; caller frees. NULL on OOM.
 *
 * All functions are static (include the header where you use it) and thread-safe.
 */
#ifndef KC_BENCH_GENPOD_H
#define KC_BENCH_GENPOD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KC_GENPOD_MAX 8192

/* Arguments, in order: name index, namespace index, uid index, resourceVersion, node index. */
static const char kc__genpod_fmt[] =
    "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-7d9f8c6b5-%05u\",\"gene"
    "rateName\":\"web-7d9f8c6b5-\",\"namespace\":\"ns-%u\",\"uid\":\"3f2b1c9e-8a7d-4e6f-9b0a-%012"
    "u\",\"resourceVersion\":\"%u\",\"creationTimestamp\":\"2024-05-01T12:00:00Z\",\"labels\":{\""
    "app\":\"web\",\"pod-template-hash\":\"7d9f8c6b5\",\"tier\":\"frontend\",\"version\":\"v1.2.3"
    "\"},\"annotations\":{\"kubectl.kubernetes.io/restartedAt\":\"2024-05-01T11:59:00Z\",\"promet"
    "heus.io/scrape\":\"true\",\"prometheus.io/port\":\"9090\"},\"ownerReferences\":[{\"apiVersio"
    "n\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web-7d9f8c6b5\",\"uid\":\"aa11bb22-cc33-d"
    "d44-ee55-ff6677889900\",\"controller\":true,\"blockOwnerDeletion\":true}],\"managedFields\":"
    "[{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"t"
    "ime\":\"2024-05-01T12:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f"
    ":annotations\":{\".\":{},\"f:kubectl.kubernetes.io/restartedAt\":{},\"f:prometheus.io/port\""
    ":{},\"f:prometheus.io/scrape\":{}},\"f:generateName\":{},\"f:labels\":{\".\":{},\"f:app\":{}"
    ",\"f:pod-template-hash\":{},\"f:tier\":{},\"f:version\":{}},\"f:ownerReferences\":{\".\":{},"
    "\"k:{\\\"uid\\\":\\\"aa11bb22-cc33-dd44-ee55-ff6677889900\\\"}\":{}}},\"f:spec\":{\"f:contai"
    "ners\":{\"k:{\\\"name\\\":\\\"web\\\"}\":{\".\":{},\"f:env\":{\".\":{},\"k:{\\\"name\\\":\\\""
    "POD_NAME\\\"}\":{\".\":{},\"f:name\":{},\"f:valueFrom\":{\".\":{},\"f:fieldRef\":{}}},\"k:{\\\""
    "name\\\":\\\"LOG_LEVEL\\\"}\":{\".\":{},\"f:name\":{},\"f:value\":{}}},\"f:image\":{},\"f:im"
    "agePullPolicy\":{},\"f:name\":{},\"f:ports\":{\".\":{},\"k:{\\\"containerPort\\\":8080,\\\"p"
    "rotocol\\\":\\\"TCP\\\"}\":{\".\":{},\"f:containerPort\":{},\"f:name\":{},\"f:protocol\":{}}"
    "},\"f:readinessProbe\":{\".\":{},\"f:failureThreshold\":{},\"f:httpGet\":{\".\":{},\"f:path\""
    ":{},\"f:port\":{},\"f:scheme\":{}},\"f:periodSeconds\":{},\"f:successThreshold\":{},\"f:time"
    "outSeconds\":{}},\"f:resources\":{\".\":{},\"f:limits\":{\".\":{},\"f:cpu\":{},\"f:memory\":"
    "{}},\"f:requests\":{\".\":{},\"f:cpu\":{},\"f:memory\":{}}},\"f:terminationMessagePath\":{},"
    "\"f:terminationMessagePolicy\":{},\"f:volumeMounts\":{\".\":{},\"k:{\\\"mountPath\\\":\\\"/e"
    "tc/config\\\"}\":{\".\":{},\"f:mountPath\":{},\"f:name\":{}}}}},\"f:dnsPolicy\":{},\"f:enabl"
    "eServiceLinks\":{},\"f:restartPolicy\":{},\"f:schedulerName\":{},\"f:securityContext\":{},\""
    "f:terminationGracePeriodSeconds\":{},\"f:volumes\":{\".\":{},\"k:{\\\"name\\\":\\\"config\\\""
    "}\":{\".\":{},\"f:configMap\":{\".\":{},\"f:defaultMode\":{},\"f:name\":{}},\"f:name\":{}}}}"
    "}},{\"manager\":\"kubelet\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2024-0"
    "5-01T12:00:10Z\",\"fieldsType\":\"FieldsV1\",\"subresource\":\"status\",\"fieldsV1\":{\"f:st"
    "atus\":{\"f:conditions\":{\"k:{\\\"type\\\":\\\"ContainersReady\\\"}\":{\".\":{},\"f:lastPro"
    "beTime\":{},\"f:lastTransitionTime\":{},\"f:status\":{},\"f:type\":{}},\"k:{\\\"type\\\":\\\""
    "Initialized\\\"}\":{\".\":{},\"f:lastProbeTime\":{},\"f:lastTransitionTime\":{},\"f:status\""
    ":{},\"f:type\":{}},\"k:{\\\"type\\\":\\\"PodReadyToStartContainers\\\"}\":{\".\":{},\"f:last"
    "ProbeTime\":{},\"f:lastTransitionTime\":{},\"f:status\":{},\"f:type\":{}},\"k:{\\\"type\\\":"
    "\\\"Ready\\\"}\":{\".\":{},\"f:lastProbeTime\":{},\"f:lastTransitionTime\":{},\"f:status\":{"
    "},\"f:type\":{}}},\"f:containerStatuses\":{},\"f:hostIP\":{},\"f:hostIPs\":{},\"f:phase\":{}"
    ",\"f:podIP\":{},\"f:podIPs\":{\".\":{},\"k:{\\\"ip\\\":\\\"10.244.1.23\\\"}\":{\".\":{},\"f:"
    "ip\":{}}},\"f:startTime\":{}}}}]},\"spec\":{\"volumes\":[{\"name\":\"config\",\"configMap\":"
    "{\"name\":\"web-config\",\"defaultMode\":420}},{\"name\":\"kube-api-access-abcde\",\"project"
    "ed\":{\"sources\":[{\"serviceAccountToken\":{\"expirationSeconds\":3607,\"path\":\"token\"}}"
    ",{\"configMap\":{\"name\":\"kube-root-ca.crt\",\"items\":[{\"key\":\"ca.crt\",\"path\":\"ca."
    "crt\"}]}},{\"downwardAPI\":{\"items\":[{\"path\":\"namespace\",\"fieldRef\":{\"apiVersion\":"
    "\"v1\",\"fieldPath\":\"metadata.namespace\"}}]}}],\"defaultMode\":420}}],\"containers\":[{\""
    "name\":\"web\",\"image\":\"registry.example.com/team/web:v1.2.3\",\"ports\":[{\"name\":\"htt"
    "p\",\"containerPort\":8080,\"protocol\":\"TCP\"}],\"env\":[{\"name\":\"POD_NAME\",\"valueFro"
    "m\":{\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":\"metadata.name\"}}},{\"name\":\"LOG_"
    "LEVEL\",\"value\":\"info\"}],\"resources\":{\"limits\":{\"cpu\":\"500m\",\"memory\":\"512Mi\""
    "},\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}},\"volumeMounts\":[{\"name\":\"config"
    "\",\"mountPath\":\"/etc/config\"},{\"name\":\"kube-api-access-abcde\",\"readOnly\":true,\"mo"
    "untPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\"}],\"readinessProbe\":{\"httpGet\""
    ":{\"path\":\"/healthz\",\"port\":8080,\"scheme\":\"HTTP\"},\"timeoutSeconds\":1,\"periodSeco"
    "nds\":10,\"successThreshold\":1,\"failureThreshold\":3},\"terminationMessagePath\":\"/dev/te"
    "rmination-log\",\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":\"IfNotPresent\"}]"
    ",\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFi"
    "rst\",\"serviceAccountName\":\"default\",\"serviceAccount\":\"default\",\"nodeName\":\"node-"
    "%u\",\"securityContext\":{},\"schedulerName\":\"default-scheduler\",\"tolerations\":[{\"key\""
    ":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerat"
    "ionSeconds\":300},{\"key\":\"node.kubernetes.io/unreachable\",\"operator\":\"Exists\",\"effe"
    "ct\":\"NoExecute\",\"tolerationSeconds\":300}],\"priority\":0,\"enableServiceLinks\":true,\""
    "preemptionPolicy\":\"PreemptLowerPriority\"},\"status\":{\"phase\":\"Running\",\"conditions\""
    ":[{\"type\":\"PodReadyToStartContainers\",\"status\":\"True\",\"lastProbeTime\":null,\"lastT"
    "ransitionTime\":\"2024-05-01T12:00:08Z\"},{\"type\":\"Initialized\",\"status\":\"True\",\"la"
    "stProbeTime\":null,\"lastTransitionTime\":\"2024-05-01T12:00:08Z\"},{\"type\":\"Ready\",\"st"
    "atus\":\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":\"2024-05-01T12:00:08Z\"},{\"t"
    "ype\":\"ContainersReady\",\"status\":\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":"
    "\"2024-05-01T12:00:08Z\"},{\"type\":\"PodScheduled\",\"status\":\"True\",\"lastProbeTime\":n"
    "ull,\"lastTransitionTime\":\"2024-05-01T12:00:08Z\"}],\"hostIP\":\"10.0.0.5\",\"hostIPs\":[{"
    "\"ip\":\"10.0.0.5\"}],\"podIP\":\"10.244.1.23\",\"podIPs\":[{\"ip\":\"10.244.1.23\"}],\"star"
    "tTime\":\"2024-05-01T12:00:00Z\",\"containerStatuses\":[{\"name\":\"web\",\"state\":{\"runni"
    "ng\":{\"startedAt\":\"2024-05-01T12:00:05Z\"}},\"lastState\":{},\"ready\":true,\"restartCoun"
    "t\":0,\"image\":\"registry.example.com/team/web:v1.2.3\",\"imageID\":\"registry.example.com/"
    "team/web@sha256:abababababababababababababababababababababababababababababababab\",\"contain"
    "erID\":\"containerd://cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd\",\"s"
    "tarted\":true}],\"qosClass\":\"Burstable\"}}";

static inline size_t kc_genpod_one(char *buf, size_t cap, unsigned i)
{
    int n = snprintf(buf, cap, kc__genpod_fmt, i, i % 100, i, 1000000 + i, i % 5000);
    return n < 0 ? 0 : (size_t)n;
}

static inline char *kc__genpod_many(unsigned n, const char *head, const char *sep,
                                    const char *tail, const char *pre, const char *post,
                                    size_t *ret_len)
{
    size_t hl = strlen(head), sl = strlen(sep), tl = strlen(tail), pl = strlen(pre),
           ql = strlen(post);
    size_t cap = hl + tl + 1 + (size_t)n * (KC_GENPOD_MAX + sl + pl + ql);
    char *b = (char *)malloc(cap);
    if (ret_len)
        *ret_len = 0;
    if (!b)
        return NULL;
    size_t len = 0;
    memcpy(b, head, hl);
    len += hl;
    for (unsigned i = 0; i < n; i++) {
        if (i) {
            memcpy(b + len, sep, sl);
            len += sl;
        }
        memcpy(b + len, pre, pl);
        len += pl;
        len += kc_genpod_one(b + len, cap - len, i);
        memcpy(b + len, post, ql);
        len += ql;
    }
    memcpy(b + len, tail, tl);
    len += tl;
    b[len] = '\0';
    if (ret_len)
        *ret_len = len;
    return b;
}

static inline char *kc_genpod_list(unsigned n, size_t *ret_len)
{
    return kc__genpod_many(
        n, "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"2000000\"},"
           "\"items\":[",
        ",", "]}", "", "", ret_len);
}

static inline char *kc_genpod_watch(unsigned n, const char *type, size_t *ret_len)
{
    char pre[64];
    snprintf(pre, sizeof pre, "{\"type\":\"%.32s\",\"object\":", type ? type : "ADDED");
    return kc__genpod_many(n, "", "", "", pre, "}\n", ret_len);
}

#endif
