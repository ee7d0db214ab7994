/*
 * defaults_workloads.c — defaulting of the workload kinds: apps/v1 Deployment, ReplicaSet,
 * StatefulSet, DaemonSet; batch/v1 Job, CronJob; core/v1 ReplicationController, PodTemplate.
 *
 * Reference: k8s.io/kubernetes pkg/apis/apps/v1/defaults.go (SetDefaults_Deployment,
 * _DaemonSet, _StatefulSet, _ReplicaSet), pkg/apis/batch/v1/defaults.go (SetDefaults_Job,
 * _CronJob), pkg/apis/core/v1/defaults.go (SetDefaults_ReplicationController; replicas 1), the
 * generated walks (pod templates, a StatefulSet's volumeClaimTemplates), and
 * pkg/registry/batch/job/strategy.go (generateSelector on create). Status structs are written
 * with the fields Go's encoder never omits (a ReplicaSet's "replicas", a DaemonSet's four
 * counters, a StatefulSet's "replicas" and "availableReplicas"). Thread-safe: pure functions.
 */
#include "server/defaults/defaults_internal.h"

#include <string.h>

static void zero_ints(kc__dctx *c, json_t *doc, const char *const *keys, size_t n)
{
    json_t *st = kc__dj_obj(c, doc, "status");
    for (size_t i = 0; i < n; i++)
        kc__dj_ptr_int(c, st, keys[i], 0);
}

static void deployment(kc__dctx *c, json_t *doc, json_t *spec)
{
    kc__dj_ptr_int(c, spec, "replicas", 1);
    json_t *st = kc__dj_obj(c, spec, "strategy");
    kc__dj_str(c, st, "type", "RollingUpdate");
    if (!strcmp(kc__dj_s(st, "type"), "RollingUpdate")) {
        json_t *ru = kc__dj_obj(c, st, "rollingUpdate");
        kc__dj_ptr_str(c, ru, "maxUnavailable", "25%");
        kc__dj_ptr_str(c, ru, "maxSurge", "25%");
    }
    kc__dj_ptr_int(c, spec, "revisionHistoryLimit", 10);
    kc__dj_ptr_int(c, spec, "progressDeadlineSeconds", 600);
    kc__defaults_pod_template(c, spec, "template");
    kc__dj_struct(c, doc, "status");
}

static void daemonset(kc__dctx *c, json_t *doc, json_t *spec)
{
    json_t *us = kc__dj_obj(c, spec, "updateStrategy");
    kc__dj_str(c, us, "type", "RollingUpdate");
    if (!strcmp(kc__dj_s(us, "type"), "RollingUpdate")) {
        json_t *ru = kc__dj_obj(c, us, "rollingUpdate");
        kc__dj_ptr_int(c, ru, "maxUnavailable", 1);
        kc__dj_ptr_int(c, ru, "maxSurge", 0);
    }
    kc__dj_ptr_int(c, spec, "revisionHistoryLimit", 10);
    kc__defaults_pod_template(c, spec, "template");
    static const char *const st[] = {"currentNumberScheduled", "numberMisscheduled",
                                     "desiredNumberScheduled", "numberReady"};
    zero_ints(c, doc, st, 4);
}

static void statefulset(kc__dctx *c, json_t *doc, json_t *spec)
{
    kc__dj_str(c, spec, "podManagementPolicy", "OrderedReady");
    json_t *us = kc__dj_obj(c, spec, "updateStrategy");
    if (us && !*kc__dj_s(us, "type")) {
        kc__dj_set(c, us, "type", json_string("RollingUpdate"));
        kc__dj_obj(c, us, "rollingUpdate");
    }
    json_t *ru = kc__dj_get_obj(us, "rollingUpdate");
    if (ru && !strcmp(kc__dj_s(us, "type"), "RollingUpdate"))
        kc__dj_ptr_int(c, ru, "partition", 0);
    json_t *rp = kc__dj_obj(c, spec, "persistentVolumeClaimRetentionPolicy");
    kc__dj_str(c, rp, "whenDeleted", "Retain");
    kc__dj_str(c, rp, "whenScaled", "Retain");
    kc__dj_ptr_int(c, spec, "replicas", 1);
    kc__dj_ptr_int(c, spec, "revisionHistoryLimit", 10);
    kc__defaults_pod_template(c, spec, "template");
    size_t i;
    json_t *pvc;
    json_array_foreach(json_object_get(spec, "volumeClaimTemplates"), i, pvc)
    {
        if (!json_is_object(pvc))
            continue;
        kc__dj_template_meta(c, pvc);
        kc__defaults_pvc_spec(c, kc__dj_obj(c, pvc, "spec"));
        kc__dj_str(c, kc__dj_obj(c, pvc, "status"), "phase", "Pending");
    }
    static const char *const st[] = {"replicas", "availableReplicas"};
    zero_ints(c, doc, st, 2);
}

static void replicaset(kc__dctx *c, json_t *doc, json_t *spec)
{
    kc__dj_ptr_int(c, spec, "replicas", 1);
    kc__defaults_pod_template(c, spec, "template");
    static const char *const st[] = {"replicas"};
    zero_ints(c, doc, st, 1);
}

/* SetDefaults_ReplicationController: selector and labels from the template's labels. */
static void replication_controller(kc__dctx *c, json_t *doc, json_t *spec)
{
    json_t *tpl = kc__dj_get_obj(spec, "template");
    json_t *labels = kc__dj_get_obj(kc__dj_get_obj(tpl, "metadata"), "labels");
    if (labels) {
        if (json_object_size(kc__dj_get_obj(spec, "selector")) == 0)
            kc__dj_set(c, spec, "selector", json_deep_copy(labels));
        json_t *m = kc__dj_obj(c, doc, "metadata");
        if (m && json_object_size(kc__dj_get_obj(m, "labels")) == 0)
            kc__dj_set(c, m, "labels", json_deep_copy(labels));
    }
    kc__dj_ptr_int(c, spec, "replicas", 1);
    if (tpl)
        kc__defaults_pod_template(c, spec, "template");
    static const char *const st[] = {"replicas"};
    zero_ints(c, doc, st, 1);
}

/* SetDefaults_Job (recent: podReplacementPolicy, manualSelector, backoffLimitPerIndex). */
static void job(kc__dctx *c, json_t *doc, json_t *spec)
{
    if (kc__dj_unset(spec, "completions") && kc__dj_unset(spec, "parallelism"))
        kc__dj_set(c, spec, "completions", json_integer(1));
    kc__dj_ptr_int(c, spec, "parallelism", 1);
    kc__dj_ptr_int(c, spec, "backoffLimit",
                   kc__dj_unset(spec, "backoffLimitPerIndex") ? 6 : 2147483647);
    json_t *tl =
        kc__dj_get_obj(kc__dj_get_obj(kc__dj_get_obj(spec, "template"), "metadata"), "labels");
    json_t *m = kc__dj_obj(c, doc, "metadata");
    if (json_object_size(tl) && m && json_object_size(kc__dj_get_obj(m, "labels")) == 0)
        kc__dj_set(c, m, "labels", json_deep_copy(tl));
    kc__dj_ptr_str(c, spec, "completionMode", "NonIndexed");
    kc__dj_ptr_bool(c, spec, "suspend", false);
    json_t *pfp = kc__dj_get_obj(spec, "podFailurePolicy");
    size_t i, j;
    json_t *rule, *pat;
    json_array_foreach(json_object_get(pfp, "rules"), i, rule)
    {
        json_array_foreach(json_object_get(rule, "onPodConditions"), j, pat)
            kc__dj_str(c, pat, "status", "True");
    }
    kc__dj_ptr_str(c, spec, "podReplacementPolicy", pfp ? "Failed" : "TerminatingOrFailed");
    kc__dj_ptr_bool(c, spec, "manualSelector", false);
    kc__defaults_pod_template(c, spec, "template");
    kc__dj_struct(c, doc, "status");
}

static void cronjob(kc__dctx *c, json_t *doc, json_t *spec)
{
    kc__dj_str(c, spec, "concurrencyPolicy", "Allow");
    kc__dj_ptr_bool(c, spec, "suspend", false);
    kc__dj_ptr_int(c, spec, "successfulJobsHistoryLimit", 3);
    kc__dj_ptr_int(c, spec, "failedJobsHistoryLimit", 1);
    json_t *jt = kc__dj_obj(c, spec, "jobTemplate");
    kc__dj_template_meta(c, jt);
    kc__defaults_pod_template(c, kc__dj_obj(c, jt, "spec"), "template");
    kc__dj_struct(c, doc, "status");
}

bool kc__defaults_workload(kc__dctx *c, const char *group, const char *kind, json_t *doc)
{
    static const struct {
        const char *group, *kind;
        void (*fn)(kc__dctx *, json_t *, json_t *);
    } table[] = {
        {"apps", "Deployment", deployment},
        {"apps", "ReplicaSet", replicaset},
        {"apps", "StatefulSet", statefulset},
        {"apps", "DaemonSet", daemonset},
        {"batch", "Job", job},
        {"batch", "CronJob", cronjob},
        {"", "ReplicationController", replication_controller},
    };
    if (!*group && !strcmp(kind, "PodTemplate")) {
        kc__defaults_pod_template(c, doc, "template");
        return true;
    }
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (!strcmp(group, table[i].group) && !strcmp(kind, table[i].kind)) {
            json_t *spec = kc__dj_obj(c, doc, "spec");
            if (spec)
                table[i].fn(c, doc, spec);
            return true;
        }
    }
    return false;
}

/* jobStrategy.generateSelector: the template gets job-name and controller-uid labels (legacy
 * and batch.kubernetes.io/ forms, unless set), the selector matches the uid. Job labels that
 * were defaulted from the template's (the same map in Go) get the new labels too. */
static void job_selector(kc__dctx *c, json_t *doc)
{
    json_t *spec = kc__dj_get_obj(doc, "spec");
    if (!spec || json_is_true(json_object_get(spec, "manualSelector")))
        return;
    json_t *m = kc__dj_get_obj(doc, "metadata");
    const char *name = kc__dj_s(m, "name"), *uid = kc__dj_s(m, "uid");
    json_t *tm = kc__dj_obj(c, kc__dj_obj(c, spec, "template"), "metadata");
    json_t *tl = kc__dj_obj(c, tm, "labels");
    if (!tl)
        return;
    json_t *jl = kc__dj_get_obj(m, "labels");
    bool aliased = jl && json_object_size(tl) && json_equal(jl, tl);
    const char *keys[] = {"job-name", "batch.kubernetes.io/job-name", "controller-uid",
                          "batch.kubernetes.io/controller-uid"};
    for (size_t i = 0; i < 4; i++) {
        const char *v = i < 2 ? name : uid;
        if (!json_object_get(tl, keys[i])) {
            kc__dj_set(c, tl, keys[i], json_string(v));
            if (aliased)
                kc__dj_set(c, jl, keys[i], json_string(v));
        }
    }
    json_t *ml = kc__dj_obj(c, kc__dj_obj(c, spec, "selector"), "matchLabels");
    if (ml && !json_object_get(ml, keys[3]))
        kc__dj_set(c, ml, keys[3], json_string(uid));
}

bool kc__defaults_workload_create(kc__dctx *c, const char *group, const char *kind, json_t *doc)
{
    if (!strcmp(group, "batch") && !strcmp(kind, "Job")) {
        job_selector(c, doc);
        return true;
    }
    return (!strcmp(group, "apps") || !strcmp(group, "batch") ||
            (!*group && (!strcmp(kind, "ReplicationController") || !strcmp(kind, "PodTemplate"))));
}
