/*
 * workloads.c — the spec rules of the workload kinds (pkg/apis/apps/validation,
 * pkg/apis/batch/validation, core's ReplicationController), on create and update, with upstream's
 * messages and order:
 *   Deployment, ReplicaSet: replicas >= 0, selector required and not empty, valid, matching the
 *     template's labels ("`selector` does not match template `labels`"), the pod template,
 *     restartPolicy Always, no activeDeadlineSeconds; Deployment also its strategy (rollingUpdate
 *     values ints >= 0 or percents, not both 0, maxUnavailable <= 100%), minReadySeconds,
 *     revisionHistoryLimit, progressDeadlineSeconds (> minReadySeconds);
 *   StatefulSet: podManagementPolicy, updateStrategy, replicas, selector, template labels and
 *     annotations (upstream does not validate a StatefulSet's pod spec), restartPolicy Always;
 *   DaemonSet: selector valid, not empty, matching; the pod template; restartPolicy Always;
 *   ReplicationController: selector required and matching, replicas, the pod template;
 *   Job: parallelism, completions, activeDeadlineSeconds, backoffLimit >= 0, the pod template,
 *     restartPolicy OnFailure or Never, selector required and matching; CronJob: its job template;
 *   updates: the selector is immutable (Deployment, ReplicaSet, DaemonSet, Job), a StatefulSet's
 *     spec may change only in replicas, ordinals, template, updateStrategy, revisionHistoryLimit,
 *     persistentVolumeClaimRetentionPolicy and minReadySeconds, a Job's template and completions
 *     are immutable (the template's scheduling fields and metadata may change while the Job is
 *     suspended and never started).
 * Cost: linear in the object (plus one copy of a StatefulSet's or Job's spec on update).
 */
#include "server/validation/validation_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMMUTABLE "field is immutable"
#define MISMATCH  "`selector` does not match template `labels`"

static const char *const ALWAYS[] = {"Always", NULL};

static void nonneg(kc__vlist *l, const json_t *spec, const char *key)
{
    const json_t *v = json_object_get(spec, key);
    char f[KC__VPATH];
    if (json_is_integer(v) && json_integer_value(v) < 0) {
        snprintf(f, sizeof f, "spec.%s", key);
        kc__v_invalid_i(l, f, json_integer_value(v), "must be greater than or equal to 0");
    }
}

static void invalid_selector(kc__vlist *l, const char *field, const json_t *sel, const char *d)
{
    kc__buf b = KC__BUF_INIT(0);
    kc__v_go_selector(&b, sel);
    kc__v_invalid_v(l, field, b.data ? b.data : "nil", d);
    kc__buf_free(&b);
}

/* spec.selector: required (when required), valid, not empty ("empty selector is invalid for
 * <what>"). */
static void selector(kc__vlist *l, const json_t *spec, bool required, const char *what)
{
    const json_t *sel = json_object_get(spec, "selector");
    if (!json_is_object(sel)) {
        if (required)
            kc__v_required(l, "spec.selector", "");
        return;
    }
    kc__v_label_selector(l, "spec.selector", sel);
    if (json_object_size(json_object_get(sel, "matchLabels")) +
            json_array_size(json_object_get(sel, "matchExpressions")) ==
        0) {
        char d[64];
        snprintf(d, sizeof d, "empty selector is invalid for %s", what);
        invalid_selector(l, "spec.selector", sel, d);
    }
}

/* The template's labels against spec.selector (a metav1 selector; a NULL one selects nothing).
 * Returns false when the selector is not a valid one (LabelSelectorAsSelector's error). */
static bool selector_matches(kc__vlist *l, const json_t *spec, bool check_empty)
{
    const json_t *sel = json_object_get(spec, "selector");
    const json_t *labels =
        json_object_get(json_object_get(json_object_get(spec, "template"), "metadata"), "labels");
    bool empty, bad;
    bool ok = kc__v_selector_matches(sel, labels, &empty, &bad);
    if (bad)
        return false;
    if (!ok && !(check_empty && empty)) {
        kc__buf b = KC__BUF_INIT(0);
        kc__v_go_strmap(&b, labels);
        kc__v_invalid_v(l, "spec.template.metadata.labels", b.data, MISMATCH);
        kc__buf_free(&b);
    }
    return true;
}

static const char *restart_policy(const json_t *spec)
{
    const char *rp = json_string_value(json_object_get(
        json_object_get(json_object_get(spec, "template"), "spec"), "restartPolicy"));
    return rp ? rp : "";
}

/* ValidatePodTemplateSpecForReplicaSet (and the RC's): match, template, Always, no deadline. */
static void rs_template(kc__vlist *l, const json_t *spec, const char *kind, bool meta_selector)
{
    if (meta_selector && !selector_matches(l, spec, true)) {
        invalid_selector(l, "spec.selector", json_object_get(spec, "selector"),
                         "invalid label selector");
        return;
    }
    const json_t *tmpl = json_object_get(spec, "template");
    if (!json_is_object(tmpl)) {
        kc__v_required(l, "spec.template", "");
        return;
    }
    kc__v_pod_template(l, "spec.template", tmpl);
    const char *rp = restart_policy(spec);
    if (strcmp(rp, "Always") != 0)
        kc__v_unsupported_s(l, "spec.template.spec.restartPolicy", rp, ALWAYS);
    if (json_object_get(json_object_get(tmpl, "spec"), "activeDeadlineSeconds")) {
        char d[80];
        snprintf(d, sizeof d, "activeDeadlineSeconds in %s is not Supported", kind);
        kc__v_forbidden(l, "spec.template.spec.activeDeadlineSeconds", d);
    }
}

#define PERCENT_MSG                                                                                \
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or "   \
    "'93%', regex used for validation is '[0-9]+%')"

/* An IntOrString as getIntOrPercentValue reads it; *percent when it is a valid "N%". */
static long int_or_percent(const json_t *v, bool *percent, bool *valid)
{
    *percent = false;
    *valid = true;
    if (json_is_integer(v))
        return (long)json_integer_value(v);
    const char *s = json_string_value(v);
    if (!s)
        return 0;
    size_t n = strlen(s), d = strspn(s, "0123456789");
    *valid = *percent = n >= 2 && d == n - 1 && s[n - 1] == '%';
    return atol(s); /* Atoi of a non-number: 0 */
}

/* ValidateRollingUpdateDeployment: each value an int >= 0 or a valid percent, not both 0,
 * maxUnavailable at most 100%. Values are printed through IntOrString's String(). */
static void rolling_update(kc__vlist *l, const json_t *ru)
{
    static const char *const keys[] = {"maxUnavailable", "maxSurge"};
    long val[2];
    char f[KC__VPATH], shown[2][64];
    for (int i = 0; i < 2; i++) {
        const json_t *v = json_object_get(ru, keys[i]);
        bool pct, valid;
        val[i] = int_or_percent(v, &pct, &valid);
        snprintf(f, sizeof f, "spec.strategy.rollingUpdate.%s", keys[i]);
        if (json_is_string(v))
            snprintf(shown[i], sizeof shown[i], "%s", json_string_value(v));
        else
            snprintf(shown[i], sizeof shown[i], "%ld", val[i]);
        if (json_is_string(v) && !valid)
            kc__v_invalid_v(l, f, shown[i], PERCENT_MSG);
        else if (json_is_integer(v) && val[i] < 0)
            kc__v_invalid_i(l, f, val[i], "must be greater than or equal to 0");
    }
    if (val[0] == 0 && val[1] == 0)
        kc__v_invalid_v(l, "spec.strategy.rollingUpdate.maxUnavailable", shown[0],
                        "may not be 0 when `maxSurge` is 0");
    bool pct, valid;
    long mu = int_or_percent(json_object_get(ru, "maxUnavailable"), &pct, &valid);
    if (pct && mu > 100)
        kc__v_invalid_v(l, "spec.strategy.rollingUpdate.maxUnavailable", shown[0],
                        "must not be greater than 100%");
}

/* ValidateDeploymentStrategy (an unknown type is left to the schema's decoding). */
static void strategy(kc__vlist *l, const json_t *st)
{
    const char *type = json_string_value(json_object_get(st, "type"));
    const json_t *ru = json_object_get(st, "rollingUpdate");
    if (type && !strcmp(type, "Recreate") && json_is_object(ru))
        kc__v_forbidden(l, "spec.strategy.rollingUpdate",
                        "may not be specified when strategy `type` is 'Recreate'");
    else if (type && !strcmp(type, "RollingUpdate") && !json_is_object(ru))
        kc__v_required(l, "spec.strategy.rollingUpdate",
                       "this should be defaulted and never be nil");
    else if (type && !strcmp(type, "RollingUpdate"))
        rolling_update(l, ru);
}

static void deployment(kc__vlist *l, const json_t *spec)
{
    nonneg(l, spec, "replicas");
    selector(l, spec, true, "deployment");
    rs_template(l, spec, "ReplicaSet", true);
    strategy(l, json_object_get(spec, "strategy"));
    nonneg(l, spec, "minReadySeconds");
    nonneg(l, spec, "revisionHistoryLimit");
    const json_t *pd = json_object_get(spec, "progressDeadlineSeconds");
    if (json_is_integer(pd)) {
        nonneg(l, spec, "progressDeadlineSeconds");
        if (json_integer_value(pd) <= json_integer_value(json_object_get(spec, "minReadySeconds")))
            kc__v_invalid_i(l, "spec.progressDeadlineSeconds", json_integer_value(pd),
                            "must be greater than minReadySeconds");
    }
}

static void replicaset(kc__vlist *l, const json_t *spec)
{
    nonneg(l, spec, "replicas");
    nonneg(l, spec, "minReadySeconds");
    selector(l, spec, true, "deployment"); /* sic: upstream's ReplicaSet message */
    rs_template(l, spec, "ReplicaSet", true);
}

static void statefulset(kc__vlist *l, const json_t *spec)
{
    const char *pmp = json_string_value(json_object_get(spec, "podManagementPolicy"));
    if (!pmp || !*pmp)
        kc__v_required(l, "spec.podManagementPolicy", "");
    else if (strcmp(pmp, "OrderedReady") && strcmp(pmp, "Parallel"))
        kc__v_invalid_s(l, "spec.podManagementPolicy", pmp, "must be 'OrderedReady' or 'Parallel'");
    const json_t *us = json_object_get(spec, "updateStrategy");
    const char *ut = json_string_value(json_object_get(us, "type"));
    if (!ut || !*ut)
        kc__v_required(l, "spec.updateStrategy", "");
    nonneg(l, spec, "replicas");
    nonneg(l, spec, "minReadySeconds");
    selector(l, spec, true, "statefulset");
    if (!selector_matches(l, spec, true)) {
        invalid_selector(l, "spec.selector", json_object_get(spec, "selector"), "");
    } else {
        kc__v_labels_annotations(l, "spec.template",
                                 json_object_get(json_object_get(spec, "template"), "metadata"));
    }
    const char *rp = restart_policy(spec);
    if (strcmp(rp, "Always") != 0)
        kc__v_unsupported_s(l, "spec.template.spec.restartPolicy", rp, ALWAYS);
    if (json_object_get(json_object_get(json_object_get(spec, "template"), "spec"),
                        "activeDeadlineSeconds"))
        kc__v_forbidden(l, "spec.template.spec.activeDeadlineSeconds",
                        "activeDeadlineSeconds in StatefulSet is not Supported");
}

static void daemonset(kc__vlist *l, const json_t *spec)
{
    const json_t *sel = json_object_get(spec, "selector");
    kc__v_label_selector(l, "spec.selector", sel);
    selector_matches(l, spec, false);
    if (json_is_object(sel) && json_object_size(json_object_get(sel, "matchLabels")) +
                                       json_array_size(json_object_get(sel, "matchExpressions")) ==
                                   0)
        invalid_selector(l, "spec.selector", sel, "empty selector is invalid for daemonset");
    kc__v_pod_template(l, "spec.template", json_object_get(spec, "template"));
    const char *rp = restart_policy(spec);
    if (strcmp(rp, "Always") != 0)
        kc__v_unsupported_s(l, "spec.template.spec.restartPolicy", rp, ALWAYS);
    nonneg(l, spec, "minReadySeconds");
    nonneg(l, spec, "revisionHistoryLimit");
}

static void replicationcontroller(kc__vlist *l, const json_t *spec)
{
    nonneg(l, spec, "minReadySeconds");
    const json_t *sel = json_object_get(spec, "selector");
    if (json_object_size(sel) == 0)
        kc__v_required(l, "spec.selector", "");
    nonneg(l, spec, "replicas");
    const json_t *labels =
        json_object_get(json_object_get(json_object_get(spec, "template"), "metadata"), "labels");
    const char *k;
    json_t *v;
    bool match = true;
    json_object_foreach((json_t *)sel, k, v)
    {
        const char *have = json_string_value(json_object_get(labels, k));
        match &= have && json_is_string(v) && !strcmp(have, json_string_value(v));
    }
    if (json_object_size(sel) && !match && json_object_get(spec, "template")) {
        kc__buf b = KC__BUF_INIT(0);
        kc__v_go_strmap(&b, labels);
        kc__v_invalid_v(l, "spec.template.metadata.labels", b.data, MISMATCH);
        kc__buf_free(&b);
    }
    rs_template(l, spec, "ReplicationController", false);
}

/* validateJobSpec's template part at base ("spec" of a Job, "spec.jobTemplate.spec"). */
static void job_template(kc__vlist *l, const char *base, const json_t *spec)
{
    char f[KC__VPATH];
    snprintf(f, sizeof f, "%s.template", base);
    kc__v_pod_template(l, f, json_object_get(spec, "template"));
    const char *rp = restart_policy(spec);
    snprintf(f, sizeof f, "%s.template.spec.restartPolicy", base);
    static const char *const job_policies[] = {"OnFailure", "Never", NULL};
    if (!*rp || !strcmp(rp, "Always"))
        kc__v_required(l, f, "valid values: \"OnFailure\", \"Never\"");
    else if (strcmp(rp, "OnFailure") && strcmp(rp, "Never"))
        kc__v_unsupported_s(l, f, rp, job_policies);
}

static void job(kc__vlist *l, const json_t *spec)
{
    nonneg(l, spec, "parallelism");
    nonneg(l, spec, "completions");
    nonneg(l, spec, "activeDeadlineSeconds");
    nonneg(l, spec, "backoffLimit");
    nonneg(l, spec, "ttlSecondsAfterFinished");
    job_template(l, "spec", spec);
    selector(l, spec, true, "job");
    /* the generated selector is never empty; a manual empty one selects everything */
    if (json_is_object(json_object_get(spec, "selector")))
        selector_matches(l, spec, true);
}

/* ValidateImmutableField of spec.selector. */
static void selector_immutable(kc__vlist *l, const json_t *doc, const json_t *spec,
                               const json_t *old_spec)
{
    (void)doc;
    const json_t *sel = json_object_get(spec, "selector");
    const json_t *old = json_object_get(old_spec, "selector");
    if (!(sel == old || (sel && old && json_equal((json_t *)sel, (json_t *)old))))
        invalid_selector(l, "spec.selector", sel, IMMUTABLE);
}

static void statefulset_update(kc__vlist *l, const json_t *doc, const json_t *spec,
                               const json_t *old_spec)
{
    (void)doc;
    static const char *const mutable_keys[] = {"replicas",
                                               "ordinals",
                                               "template",
                                               "updateStrategy",
                                               "revisionHistoryLimit",
                                               "persistentVolumeClaimRetentionPolicy",
                                               "minReadySeconds",
                                               NULL};
    json_t *a = json_deep_copy(spec), *b = json_deep_copy(old_spec);
    if ((spec && !a) || (old_spec && !b)) {
        l->oom = true;
    } else {
        for (size_t i = 0; mutable_keys[i]; i++) {
            json_object_del(a, mutable_keys[i]);
            json_object_del(b, mutable_keys[i]);
        }
        if (!(a == b || (a && b && json_equal(a, b))))
            kc__v_forbidden(l, "spec",
                            "updates to statefulset spec for fields other than 'replicas', "
                            "'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
                            "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
                            "forbidden");
    }
    json_decref(a);
    json_decref(b);
}

/* A Job's template: immutable, but for its scheduling directives and metadata while the Job is
 * suspended and has never started (AllowMutableSchedulingDirectives). */
static void job_update(kc__vlist *l, const json_t *doc, const json_t *spec, const json_t *old_spec)
{
    const json_t *c = json_object_get(spec, "completions");
    const json_t *oc = json_object_get(old_spec, "completions");
    const char *mode = json_string_value(json_object_get(spec, "completionMode"));
    bool elastic = mode && !strcmp(mode, "Indexed") && c &&
                   json_equal((json_t *)c, json_object_get(spec, "parallelism"));
    if (!elastic && !(c == oc || (c && oc && json_equal((json_t *)c, (json_t *)oc)))) {
        if (json_is_integer(c))
            kc__v_invalid_i(l, "spec.completions", json_integer_value(c), IMMUTABLE);
        else
            kc__v_invalid_v(l, "spec.completions", "null", IMMUTABLE);
    }
    selector_immutable(l, doc, spec, old_spec);
    const json_t *t = json_object_get(spec, "template");
    const json_t *ot = json_object_get(old_spec, "template");
    if (t == ot || (t && ot && json_equal((json_t *)t, (json_t *)ot)))
        return;
    json_t *a = json_deep_copy(t), *b = json_deep_copy(ot);
    if ((t && !a) || (ot && !b)) {
        l->oom = true;
    } else {
        bool suspended = json_is_true(json_object_get(spec, "suspend")) &&
                         !json_object_get(json_object_get(doc, "status"), "startTime");
        static const char *const sched[] = {"nodeSelector", "tolerations", "affinity",
                                            "schedulingGates", NULL};
        for (size_t i = 0; suspended && sched[i]; i++) {
            json_object_del(json_object_get(a, "spec"), sched[i]);
            json_object_del(json_object_get(b, "spec"), sched[i]);
        }
        if (suspended) {
            json_object_del(a, "metadata");
            json_object_del(b, "metadata");
        }
        if (!(a == b || (a && b && json_equal(a, b))))
            kc__v_invalid_v(l, "spec.template", "core.PodTemplateSpec{…}", IMMUTABLE);
    }
    json_decref(a);
    json_decref(b);
}

static void cronjob(kc__vlist *l, const json_t *spec)
{
    job_template(l, "spec.jobTemplate.spec",
                 json_object_get(json_object_get(spec, "jobTemplate"), "spec"));
}

/* The rules of each kind: its spec on every write, the update rule against the stored object. */
static const struct {
    const char *group, *kind;
    void (*spec)(kc__vlist *l, const json_t *spec);
    void (*update)(kc__vlist *l, const json_t *doc, const json_t *spec, const json_t *old_spec);
} KINDS[] = {
    {"apps", "Deployment", deployment, selector_immutable},
    {"apps", "ReplicaSet", replicaset, selector_immutable},
    {"apps", "StatefulSet", statefulset, statefulset_update},
    {"apps", "DaemonSet", daemonset, selector_immutable},
    {"batch", "Job", job, job_update},
    {"batch", "CronJob", cronjob, NULL},
    {"", "ReplicationController", replicationcontroller, NULL},
};

void kc__v_workload(kc__vlist *l, const char *group, const char *kind, const json_t *doc,
                    const json_t *old)
{
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++) {
        if (strcmp(KINDS[i].group, group) != 0 || strcmp(KINDS[i].kind, kind) != 0)
            continue;
        const json_t *spec = json_object_get(doc, "spec");
        KINDS[i].spec(l, spec);
        if (old && KINDS[i].update)
            KINDS[i].update(l, doc, spec, json_object_get(old, "spec"));
        return;
    }
}
