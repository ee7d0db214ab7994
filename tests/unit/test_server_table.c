/* test_server_table.c — Table rendering for kubectl (#23, #94, #95) and PartialObjectMetadata. */
#include "server/discovery/table.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* 2026-11-29T15:00:00Z */
#define NOW 1795964400

static kc_obj *obj(const char *json)
{
    kc_obj *o = NULL;
    kc_error err = KC_ERROR_INIT;
    if (kc_obj_parse(json, strlen(json), NULL, &o, &err) < 0)
        fail_msg("kc_obj_parse: %s", err.message ? err.message : "?");
    return o;
}

static void assert_json_eq(const json_t *got, const char *want_json)
{
    json_t *want = json_loads(want_json, JSON_DECODE_ANY, NULL);
    assert_non_null(want);
    char *g = got ? json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    if (!got || !json_equal((json_t *)got, want))
        fail_msg("got %s, want %s", g ? g : "(null)", want_json);
    free(g);
    json_decref(want);
}

static const json_t *cells(const json_t *table, size_t row)
{
    return json_object_get(json_array_get(json_object_get(table, "rows"), row), "cells");
}

static void test_server_table_human_duration_matches_upstream(void **state)
{
    static const struct {
        int64_t s;
        const char *want;
    } cases[] = {
        {-5, "<invalid>"},
        {-1, "0s"},
        {0, "0s"},
        {119, "119s"},
        {120, "2m"},
        {303, "5m3s"},
        {600, "10m"},
        {3 * 3600 - 1, "179m"},
        {3 * 3600, "3h"},
        {11580, "3h13m"},
        {8 * 3600, "8h"},
        {47 * 3600, "47h"},
        {49 * 3600, "2d1h"},
        {8 * 86400, "8d"},
        {800 * 86400, "2y70d"},
        {3000 * 86400, "8y"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[32];
        kc__human_duration(cases[i].s, out);
        if (strcmp(out, cases[i].want) != 0)
            fail_msg("%lld s: got %s, want %s", (long long)cases[i].s, out, cases[i].want);
    }
}

static void test_server_table_pod_columns_and_cells(void **state)
{
    kc_obj *p =
        obj("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\","
            "\"namespace\":\"default\",\"labels\":{\"app\":\"web\"},\"creationTimestamp\":"
            "\"2026-11-29T14:55:00Z\"},\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":"
            "\"b\"}]},\"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":"
            "\"a\",\"ready\":true,\"restartCount\":2},{\"name\":\"b\",\"ready\":false,"
            "\"restartCount\":1}]}}");
    json_t *t = kc__table_build_at("", "pods", &p, 1, "42", NULL, true, NOW);
    assert_non_null(t);
    assert_json_eq(json_object_get(t, "kind"), "\"Table\"");
    assert_json_eq(json_object_get(t, "apiVersion"), "\"meta.k8s.io/v1\"");
    assert_json_eq(json_object_get(t, "metadata"), "{\"resourceVersion\":\"42\"}");
    const json_t *cols = json_object_get(t, "columnDefinitions");
    assert_int_equal(json_array_size(cols), 9); /* 5 + 4 shown by kubectl -o wide */
    assert_json_eq(json_object_get(json_array_get(cols, 0), "name"), "\"Name\"");
    assert_json_eq(json_object_get(json_array_get(cols, 0), "format"), "\"name\"");
    assert_json_eq(json_object_get(json_array_get(cols, 0), "priority"), "0");
    assert_json_eq(json_object_get(json_array_get(cols, 4), "name"), "\"Age\"");
    assert_json_eq(json_object_get(json_array_get(cols, 4), "priority"), "0");
    assert_json_eq(json_object_get(json_array_get(cols, 5), "name"), "\"IP\"");
    assert_json_eq(json_object_get(json_array_get(cols, 5), "priority"), "1");
    assert_json_eq(json_object_get(json_array_get(cols, 8), "name"), "\"Readiness Gates\"");
    assert_json_eq(cells(t, 0), "[\"web-1\",\"1/2\",\"Running\",\"3\",\"5m\",\"<none>\","
                                "\"<none>\",\"<none>\",\"<none>\"]");
    json_decref(t);
    kc_obj_unref(p);
}

static void test_server_table_pod_status_uses_container_reasons(void **state)
{
    kc_obj *p = obj("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
                    "\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]},\"status\":{"
                    "\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"a\",\"ready\":false,"
                    "\"restartCount\":4,\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}}},"
                    "{\"name\":\"b\",\"ready\":true,\"state\":{\"running\":{}}}]}}");
    json_t *t = kc__table_build_at("", "pods", &p, 1, NULL, NULL, true, NOW);
    assert_json_eq(cells(t, 0), "[\"p\",\"1/2\",\"CrashLoopBackOff\",\"4\",\"<unknown>\","
                                "\"<none>\",\"<none>\",\"<none>\",\"<none>\"]");
    json_decref(t);
    kc_obj_unref(p);
}

static void test_server_table_row_object_is_partial_metadata(void **state)
{
    kc_obj *p = obj("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
                    "\"namespace\":\"ns\",\"labels\":{\"a\":\"b\"}},\"data\":{\"x\":\"1\"}}");
    json_t *t = kc__table_build_at("", "configmaps", &p, 1, NULL, NULL, true, NOW);
    const json_t *o = json_object_get(json_array_get(json_object_get(t, "rows"), 0), "object");
    assert_json_eq(o,
                   "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\","
                   "\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"labels\":{\"a\":\"b\"}}}");
    assert_json_eq(cells(t, 0), "[\"c\",1,\"<unknown>\"]");
    json_decref(t);
    kc_obj_unref(p);
}

static void test_server_table_without_columns_for_later_watch_events(void **state)
{
    kc_obj *p = obj("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"}}");
    json_t *t = kc__table_build_at("", "pods", &p, 1, NULL, NULL, false, NOW);
    assert_null(json_object_get(t, "columnDefinitions"));
    assert_int_equal(json_array_size(json_object_get(t, "rows")), 1);
    json_decref(t);
    kc_obj_unref(p);
}

static void test_server_table_empty_list_has_empty_rows_and_continue(void **state)
{
    json_t *t = kc__table_build_at("", "pods", NULL, 0, "7", "tok", true, NOW);
    assert_json_eq(json_object_get(t, "rows"), "[]");
    assert_json_eq(json_object_get(t, "metadata"),
                   "{\"resourceVersion\":\"7\",\"continue\":\"tok\"}");
    json_decref(t);
}

static void test_server_table_deployment_cells(void **state)
{
    kc_obj *d = obj("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":"
                    "\"web\",\"creationTimestamp\":\"2026-11-27T15:00:00Z\"},\"spec\":{"
                    "\"replicas\":3},\"status\":{\"readyReplicas\":2,\"updatedReplicas\":3,"
                    "\"availableReplicas\":2}}");
    json_t *t = kc__table_build_at("apps", "deployments", &d, 1, NULL, NULL, true, NOW);
    assert_json_eq(cells(t, 0), "[\"web\",\"2/3\",3,2,\"2d\",\"\",\"\",\"<none>\"]");
    json_decref(t);
    kc_obj_unref(d);
}

static void test_server_table_service_cells(void **state)
{
    kc_obj *s[2];
    s[0] =
        obj("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"a\"},\"spec\":{"
            "\"type\":\"ClusterIP\",\"clusterIP\":\"10.0.0.1\",\"ports\":[{\"port\":80,"
            "\"protocol\":\"TCP\"},{\"port\":53,\"protocol\":\"UDP\"}]}}");
    s[1] =
        obj("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"b\"},\"spec\":{"
            "\"type\":\"LoadBalancer\",\"clusterIP\":\"10.0.0.2\",\"ports\":[{\"port\":443,"
            "\"nodePort\":30443}]}}");
    json_t *t = kc__table_build_at("", "services", s, 2, NULL, NULL, true, NOW);
    assert_json_eq(cells(t, 0),
                   "[\"a\",\"ClusterIP\",\"10.0.0.1\",\"<none>\",\"80/TCP,53/UDP\",\"<unknown>\","
                   "\"<none>\"]");
    assert_json_eq(cells(t, 1), "[\"b\",\"LoadBalancer\",\"10.0.0.2\",\"<pending>\","
                                "\"443:30443/TCP\",\"<unknown>\",\"<none>\"]");
    json_decref(t);
    kc_obj_unref(s[0]);
    kc_obj_unref(s[1]);
}

static void test_server_table_node_namespace_secret_cells(void **state)
{
    kc_obj *n = obj("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\","
                    "\"labels\":{\"node-role.kubernetes.io/control-plane\":\"\"}},\"spec\":{"
                    "\"unschedulable\":true},\"status\":{\"conditions\":[{\"type\":\"Ready\","
                    "\"status\":\"True\"}],\"nodeInfo\":{\"kubeletVersion\":\"v1.31.0\"}}}");
    json_t *t = kc__table_build_at("", "nodes", &n, 1, NULL, NULL, true, NOW);
    assert_json_eq(cells(t, 0), "[\"n1\",\"Ready,SchedulingDisabled\",\"control-plane\","
                                "\"<unknown>\",\"v1.31.0\",\"<none>\",\"<none>\",\"<unknown>\","
                                "\"<unknown>\",\"<unknown>\"]");
    json_decref(t);
    kc_obj_unref(n);
    kc_obj *ns =
        obj("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"d\"}}");
    t = kc__table_build_at("", "namespaces", &ns, 1, NULL, NULL, true, NOW);
    assert_json_eq(cells(t, 0), "[\"d\",\"Active\",\"<unknown>\"]");
    json_decref(t);
    kc_obj_unref(ns);
    kc_obj *sec = obj("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\"},"
                      "\"type\":\"kubernetes.io/tls\",\"data\":{\"a\":\"\",\"b\":\"\"}}");
    t = kc__table_build_at("", "secrets", &sec, 1, NULL, NULL, true, NOW);
    assert_json_eq(cells(t, 0), "[\"s\",\"kubernetes.io/tls\",2,\"<unknown>\"]");
    json_decref(t);
    kc_obj_unref(sec);
}

static void test_server_table_default_columns_name_created_at(void **state)
{
    kc_obj *w = obj("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":"
                    "\"CustomResourceDefinition\",\"metadata\":{\"name\":\"widgets.example.com\","
                    "\"creationTimestamp\":\"2026-01-01T00:00:00Z\"}}");
    json_t *t = kc__table_build_at("apiextensions.k8s.io", "customresourcedefinitions", &w, 1, NULL,
                                   NULL, true, NOW);
    const json_t *cols = json_object_get(t, "columnDefinitions");
    assert_int_equal(json_array_size(cols), 2);
    assert_json_eq(json_object_get(json_array_get(cols, 1), "name"), "\"Created At\"");
    assert_json_eq(json_object_get(json_array_get(cols, 1), "type"), "\"date\"");
    assert_json_eq(cells(t, 0), "[\"widgets.example.com\",\"2026-01-01T00:00:00Z\"]");
    json_decref(t);
    kc_obj_unref(w);
}

/* events: upstream's printEvent — Last Seen (lastTimestamp, else First Seen), Type, Reason, Object
 * ("<kind lowercased>/<name>"), Message trimmed; Subobject, Source, First Seen, Count and Name only
 * with -o wide (priority 1); a series overrides count and last time; count 0 shows 1. */
static void test_server_table_event_columns_and_cells(void **state)
{
    kc_obj *e[2];
    e[0] = obj("{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"web.1\"},"
               "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"web\",\"fieldPath\":"
               "\"spec.containers{app}\"},\"type\":\"Warning\",\"reason\":\"BackOff\","
               "\"message\":\"  back-off \\n\",\"source\":{\"component\":\"kubelet\",\"host\":"
               "\"n1\"},\"firstTimestamp\":\"2026-11-29T14:00:00Z\",\"lastTimestamp\":"
               "\"2026-11-29T14:59:00Z\",\"count\":7}");
    e[1] = obj("{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"n.2\"},"
               "\"involvedObject\":{\"kind\":\"Node\",\"name\":\"\"},\"type\":\"Normal\","
               "\"reason\":\"Up\",\"message\":\"m\",\"reportingComponent\":\"ctl\","
               "\"eventTime\":\"2026-11-29T14:58:00.000000Z\",\"series\":{\"count\":4,"
               "\"lastObservedTime\":\"2026-11-29T14:59:30.000000Z\"}}");
    json_t *t = kc__table_build_at("", "events", e, 2, NULL, NULL, true, NOW);
    const json_t *cols = json_object_get(t, "columnDefinitions");
    assert_int_equal(json_array_size(cols), 10);
    static const char *const names[] = {"Last Seen", "Type",    "Reason",     "Object", "Subobject",
                                        "Source",    "Message", "First Seen", "Count",  "Name"};
    static const int prio[] = {0, 0, 0, 0, 1, 1, 0, 1, 1, 1};
    for (size_t i = 0; i < 10; i++) {
        const json_t *c = json_array_get(cols, i);
        assert_string_equal(json_string_value(json_object_get(c, "name")), names[i]);
        assert_int_equal(json_integer_value(json_object_get(c, "priority")), prio[i]);
    }
    assert_json_eq(cells(t, 0),
                   "[\"60s\",\"Warning\",\"BackOff\",\"pod/web\",\"spec.containers{app}\","
                   "\"kubelet, n1\",\"back-off\",\"60m\",7,\"web.1\"]");
    assert_json_eq(cells(t, 1), "[\"30s\",\"Normal\",\"Up\",\"node\",\"\",\"ctl\",\"m\",\"2m\",4,"
                                "\"n.2\"]");
    json_decref(t);
    kc_obj_unref(e[0]);
    kc_obj_unref(e[1]);
}

static void test_server_table_custom_resource_name_age(void **state)
{
    kc_obj *w = obj("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{"
                    "\"name\":\"w\",\"creationTimestamp\":\"2026-11-29T14:00:00Z\"}}");
    json_t *t = kc__table_build_at("example.com", "widgets", &w, 1, NULL, NULL, true, NOW);
    const json_t *cols = json_object_get(t, "columnDefinitions");
    assert_int_equal(json_array_size(cols), 2);
    assert_json_eq(json_object_get(json_array_get(cols, 1), "name"), "\"Age\"");
    assert_json_eq(cells(t, 0), "[\"w\",\"60m\"]");
    json_decref(t);
    kc_obj_unref(w);
}

static void test_server_table_workload_cells(void **state)
{
    kc_obj *rs = obj("{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{"
                     "\"name\":\"r\"},\"spec\":{\"replicas\":3},\"status\":{\"replicas\":2,"
                     "\"readyReplicas\":1}}");
    json_t *t = kc__table_build_at("apps", "replicasets", &rs, 1, NULL, NULL, true, NOW);
    assert_json_eq(cells(t, 0), "[\"r\",3,2,1,\"<unknown>\",\"\",\"\",\"<none>\"]");
    json_decref(t);
    kc_obj_unref(rs);
    kc_obj *ds = obj("{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"metadata\":{"
                     "\"name\":\"d\"},\"spec\":{\"template\":{\"spec\":{\"nodeSelector\":{"
                     "\"os\":\"linux\"}}}},\"status\":{\"desiredNumberScheduled\":2,"
                     "\"numberReady\":2}}");
    t = kc__table_build_at("apps", "daemonsets", &ds, 1, NULL, NULL, true, NOW);
    assert_int_equal(json_array_size(json_object_get(t, "columnDefinitions")), 11);
    assert_json_eq(cells(t, 0),
                   "[\"d\",2,0,2,0,0,\"os=linux\",\"<unknown>\",\"\",\"\",\"<none>\"]");
    json_decref(t);
    kc_obj_unref(ds);
    kc_obj *ss = obj("{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{"
                     "\"name\":\"s\"},\"spec\":{\"replicas\":2},\"status\":{\"readyReplicas\":2}}");
    t = kc__table_build_at("apps", "statefulsets", &ss, 1, NULL, NULL, true, NOW);
    assert_json_eq(cells(t, 0), "[\"s\",\"2/2\",\"<unknown>\",\"\",\"\"]");
    json_decref(t);
    kc_obj_unref(ss);
}

/* The priority-1 cells kubectl shows with -o wide, as upstream's printers write them: pod IP,
 * node, nominated node, readiness gates met; a workload's containers, images and
 * metav1.FormatLabelSelector (requirements by key, set values sorted, "!key", "key"); a
 * Service's labels.FormatLabels; a node's first InternalIP / ExternalIP and node info. */
static void test_server_table_wide_cells(void **state)
{
    kc_obj *p =
        obj("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
            "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"a\"}],"
            "\"readinessGates\":[{\"conditionType\":\"x/ok\"},{\"conditionType\":\"x/lb\"}]},"
            "\"status\":{\"podIP\":\"10.244.0.7\",\"nominatedNodeName\":\"n2\","
            "\"conditions\":[{\"type\":\"x/ok\",\"status\":\"True\"},{\"type\":\"x/lb\","
            "\"status\":\"False\"}]}}");
    json_t *t = kc__table_build_at("", "pods", &p, 1, NULL, NULL, true, NOW);
    assert_json_eq(cells(t, 0), "[\"p\",\"0/1\",\"Pending\",\"0\",\"<unknown>\",\"10.244.0.7\","
                                "\"n1\",\"n2\",\"1/2\"]");
    json_decref(t);
    kc_obj_unref(p);
    kc_obj *d = obj("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":"
                    "\"web\"},\"spec\":{\"replicas\":1,\"selector\":{\"matchLabels\":{\"tier\":"
                    "\"fe\",\"app\":\"web\"},\"matchExpressions\":[{\"key\":\"env\",\"operator\":"
                    "\"In\",\"values\":[\"prod\",\"dev\"]},{\"key\":\"zz\",\"operator\":"
                    "\"DoesNotExist\"},{\"key\":\"b\",\"operator\":\"Exists\"},{\"key\":\"c\","
                    "\"operator\":\"NotIn\",\"values\":[\"x\"]}]},\"template\":{\"spec\":{"
                    "\"containers\":[{\"name\":\"web\",\"image\":\"nginx:1.25\"},{\"name\":"
                    "\"side\",\"image\":\"envoy:v1\"}]}}}}");
    t = kc__table_build_at("apps", "deployments", &d, 1, NULL, NULL, true, NOW);
    assert_json_eq(cells(t, 0), "[\"web\",\"0/1\",0,0,\"<unknown>\",\"web,side\","
                                "\"nginx:1.25,envoy:v1\",\"app=web,b,c notin (x),env in (dev,prod),"
                                "tier=fe,!zz\"]");
    const json_t *cols = json_object_get(t, "columnDefinitions");
    assert_json_eq(json_object_get(json_array_get(cols, 7), "name"), "\"Selector\"");
    assert_json_eq(json_object_get(json_array_get(cols, 7), "priority"), "1");
    json_decref(t);
    kc_obj_unref(d);
    kc_obj *s = obj("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"s\"},"
                    "\"spec\":{\"clusterIP\":\"10.96.0.9\",\"selector\":{\"tier\":\"fe\",\"app\":"
                    "\"web\"}}}");
    t = kc__table_build_at("", "services", &s, 1, NULL, NULL, true, NOW);
    assert_json_eq(cells(t, 0), "[\"s\",\"ClusterIP\",\"10.96.0.9\",\"<none>\",\"<none>\","
                                "\"<unknown>\",\"app=web,tier=fe\"]");
    json_decref(t);
    kc_obj_unref(s);
    kc_obj *n =
        obj("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"},"
            "\"status\":{\"addresses\":[{\"type\":\"Hostname\",\"address\":\"n\"},{"
            "\"type\":\"InternalIP\",\"address\":\"172.18.0.2\"}],\"nodeInfo\":{"
            "\"kubeletVersion\":\"v1.33.0\",\"osImage\":\"Debian GNU/Linux 12 (bookworm)\","
            "\"kernelVersion\":\"6.1.0\",\"containerRuntimeVersion\":\"containerd://1.7.24\"}}}");
    t = kc__table_build_at("", "nodes", &n, 1, NULL, NULL, true, NOW);
    assert_json_eq(cells(t, 0), "[\"n\",\"Unknown\",\"<none>\",\"<unknown>\",\"v1.33.0\","
                                "\"172.18.0.2\",\"<none>\",\"Debian GNU/Linux 12 (bookworm)\","
                                "\"6.1.0\",\"containerd://1.7.24\"]");
    json_decref(t);
    kc_obj_unref(n);
}

/* printJob / printCronJob: status by condition (first of Complete, Failed, Terminating,
 * Suspended, FailureTarget; else Running), completions "ok/want" | "ok/1 of par" | "ok/1",
 * duration from start to completion (or now; empty before start); a CronJob's schedule, time
 * zone, suspend, active count, last schedule; both with the wide trio. */
static void test_server_table_job_cronjob_cells(void **state)
{
    kc_obj *j[3];
    j[0] = obj("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"a\"},"
               "\"spec\":{\"completions\":3,\"selector\":{\"matchLabels\":{\"batch.kubernetes.io/"
               "controller-uid\":\"u\"}},\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
               "\"image\":\"perl:5\"}]}}},\"status\":{\"succeeded\":3,\"startTime\":"
               "\"2026-11-29T14:00:00Z\",\"completionTime\":\"2026-11-29T14:00:42Z\","
               "\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}]}}");
    j[1] = obj("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"b\"},"
               "\"spec\":{\"parallelism\":4},\"status\":{\"succeeded\":1,\"startTime\":"
               "\"2026-11-29T14:55:00Z\",\"conditions\":[{\"type\":\"Suspended\",\"status\":"
               "\"True\"},{\"type\":\"Complete\",\"status\":\"False\"}]}}");
    j[2] = obj("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"c\"}}");
    json_t *t = kc__table_build_at("batch", "jobs", j, 3, NULL, NULL, true, NOW);
    const json_t *cols = json_object_get(t, "columnDefinitions");
    assert_int_equal(json_array_size(cols), 8);
    assert_json_eq(json_object_get(json_array_get(cols, 1), "name"), "\"Status\"");
    assert_json_eq(json_object_get(json_array_get(cols, 4), "priority"), "0");
    assert_json_eq(json_object_get(json_array_get(cols, 5), "priority"), "1");
    assert_json_eq(cells(t, 0), "[\"a\",\"Complete\",\"3/3\",\"42s\",\"<unknown>\",\"c\","
                                "\"perl:5\",\"batch.kubernetes.io/controller-uid=u\"]");
    assert_json_eq(cells(t, 1), "[\"b\",\"Suspended\",\"1/1 of 4\",\"5m\",\"<unknown>\",\"\","
                                "\"\",\"<none>\"]");
    assert_json_eq(cells(t, 2),
                   "[\"c\",\"Running\",\"0/1\",\"\",\"<unknown>\",\"\",\"\",\"<none>\"]");
    json_decref(t);
    for (int i = 0; i < 3; i++)
        kc_obj_unref(j[i]);
    kc_obj *c = obj("{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\",\"metadata\":{\"name\":"
                    "\"tick\"},\"spec\":{\"schedule\":\"*/5 * * * *\",\"suspend\":false,"
                    "\"jobTemplate\":{\"spec\":{\"template\":{\"spec\":{\"containers\":[{"
                    "\"name\":\"c\",\"image\":\"busybox\"}]}}}}},\"status\":{\"active\":[{}],"
                    "\"lastScheduleTime\":\"2026-11-29T14:58:00Z\"}}");
    t = kc__table_build_at("batch", "cronjobs", &c, 1, NULL, NULL, true, NOW);
    assert_json_eq(cells(t, 0), "[\"tick\",\"*/5 * * * *\",\"<none>\",\"False\",1,\"2m\","
                                "\"<unknown>\",\"c\",\"busybox\",\"<none>\"]");
    json_decref(t);
    kc_obj_unref(c);
}

static void test_server_table_partial_metadata_json(void **state)
{
    kc_obj *p = obj("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\","
                    "\"namespace\":\"n\"},\"spec\":{\"big\":true}}");
    size_t len = 0;
    char *s = kc__partial_metadata_json(p, &len);
    assert_string_equal(s, "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\","
                           "\"metadata\":{\"name\":\"x\",\"namespace\":\"n\"}}");
    assert_int_equal(len, strlen(s));
    free(s);
    kc_obj_unref(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_table_human_duration_matches_upstream),
        cmocka_unit_test(test_server_table_pod_columns_and_cells),
        cmocka_unit_test(test_server_table_pod_status_uses_container_reasons),
        cmocka_unit_test(test_server_table_row_object_is_partial_metadata),
        cmocka_unit_test(test_server_table_without_columns_for_later_watch_events),
        cmocka_unit_test(test_server_table_empty_list_has_empty_rows_and_continue),
        cmocka_unit_test(test_server_table_deployment_cells),
        cmocka_unit_test(test_server_table_service_cells),
        cmocka_unit_test(test_server_table_node_namespace_secret_cells),
        cmocka_unit_test(test_server_table_default_columns_name_created_at),
        cmocka_unit_test(test_server_table_event_columns_and_cells),
        cmocka_unit_test(test_server_table_custom_resource_name_age),
        cmocka_unit_test(test_server_table_workload_cells),
        cmocka_unit_test(test_server_table_wide_cells),
        cmocka_unit_test(test_server_table_job_cronjob_cells),
        cmocka_unit_test(test_server_table_partial_metadata_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
