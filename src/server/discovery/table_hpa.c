/*
 * table_hpa.c — kubectl's HorizontalPodAutoscaler printer for the Table renderer, as upstream's
 * printHorizontalPodAutoscaler writes it: Name, Reference ("Kind/name" of spec.scaleTargetRef),
 * Targets, MinPods ("<unset>" when absent), MaxPods, Replicas (status.currentReplicas), Age.
 * Targets is formatHPAMetrics: one entry per spec metric, paired with the status metric at the
 * same index — Resource "cpu: 50%/80%" (utilization; "<unknown>" current, "<auto>" target) or
 * "cpu: 250m/500m" (average value), ContainerResource alike, Pods "current/target", Object and
 * External "current/target" or "current/target (avg)" for an average value, "<unknown type>"
 * otherwise; ", "-joined, at most 2 then " + N more...", "<none>" without metrics. Quantities are
 * canonical (resource.Quantity String(); "<nil>" for an absent one, as Go prints a nil pointer).
 * An autoscaling/v1 object (objects keep the version they were written at) is read as upstream
 * converts it: targetCPUUtilizationPercentage is a cpu Resource metric and
 * currentCPUUtilizationPercentage its status. Thread-safe: pure functions.
 */
#include "server/discovery/table_internal.h"

#include "core/internal.h"

#include <stdio.h>
#include <string.h>

/* The quantity at key of obj, canonical; "<nil>" when absent. */
static const char *qty(const json_t *obj, const char *key, char out[80])
{
    kc__table_quantity(json_object_get(obj, key), "<nil>", out, 80);
    return out;
}

static bool has(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return v && !json_is_null(v);
}

/* Object and External: "cur/target (avg)" with an average value target, else "cur/target". */
static void value_metric(const json_t *src, const json_t *st, kc__buf *b)
{
    const json_t *target = json_object_get(src, "target");
    const json_t *cur = json_object_get(st, "current");
    char c[80] = "<unknown>", t[80];
    if (has(target, "averageValue")) {
        if (st && has(cur, "averageValue"))
            qty(cur, "averageValue", c);
        kc__buf_printf(b, "%s/%s (avg)", c, qty(target, "averageValue", t));
    } else {
        if (st)
            qty(cur, "value", c);
        kc__buf_printf(b, "%s/%s", c, qty(target, "value", t));
    }
}

/* Resource and ContainerResource: "name: cur/target" by average value or utilization. */
static void resource_metric(const json_t *src, const json_t *st, kc__buf *b)
{
    const json_t *target = json_object_get(src, "target");
    const json_t *cur = json_object_get(st, "current");
    const char *name = json_string_value(json_object_get(src, "name")) ?: "";
    char c[80] = "<unknown>", t[80] = "<auto>";
    if (has(target, "averageValue")) {
        if (st)
            qty(cur, "averageValue", c);
        kc__buf_printf(b, "%s: %s/%s", name, c, qty(target, "averageValue", t));
        return;
    }
    if (st && has(cur, "averageUtilization"))
        snprintf(c, sizeof c, "%lld%%",
                 (long long)json_integer_value(json_object_get(cur, "averageUtilization")));
    if (has(target, "averageUtilization"))
        snprintf(t, sizeof t, "%lld%%",
                 (long long)json_integer_value(json_object_get(target, "averageUtilization")));
    kc__buf_printf(b, "%s: %s/%s", name, c, t);
}

/* One metric of formatHPAMetrics; st is the status metric's source of the same type, or NULL. */
static void metric(const json_t *spec, const json_t *status, kc__buf *b)
{
    static const struct {
        const char *type, *key;
        bool resource;
    } kinds[] = {{"External", "external", false},
                 {"Pods", "pods", false},
                 {"Object", "object", false},
                 {"Resource", "resource", true},
                 {"ContainerResource", "containerResource", true}};
    const char *type = json_string_value(json_object_get(spec, "type"));
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        if (!kc__streq(type, kinds[k].type))
            continue;
        const json_t *src = json_object_get(spec, kinds[k].key);
        const json_t *st = json_object_get(status, kinds[k].key);
        if (!json_is_object(st))
            st = NULL;
        if (kinds[k].resource) {
            resource_metric(src, st, b);
        } else if (k == 1) { /* Pods: the average value, always */
            char c[80] = "<unknown>", t[80];
            if (st)
                qty(json_object_get(st, "current"), "averageValue", c);
            kc__buf_printf(b, "%s/%s", c, qty(json_object_get(src, "target"), "averageValue", t));
        } else {
            value_metric(src, st, b);
        }
        return;
    }
    kc__buf_append_str(b, "<unknown type>");
}

/* autoscaling/v1 as upstream converts it to the internal type: the cpu utilization target and
 * its current value as a Resource metric (new references in *specs / *statuses). */
static void v1_metrics(const kc_obj *o, json_t **specs, json_t **statuses)
{
    int64_t target, cur;
    *specs = json_array();
    *statuses = json_array();
    if (kc_obj_get_int(o, "/spec/targetCPUUtilizationPercentage", &target, NULL) == 0)
        json_array_append_new(*specs,
                              json_pack("{s:s,s:{s:s,s:{s:s,s:I}}}", "type", "Resource", "resource",
                                        "name", "cpu", "target", "type", "Utilization",
                                        "averageUtilization", (json_int_t)target));
    if (kc_obj_get_int(o, "/status/currentCPUUtilizationPercentage", &cur, NULL) == 0)
        json_array_append_new(*statuses, json_pack("{s:s,s:{s:s,s:{s:I}}}", "type", "Resource",
                                                   "resource", "name", "cpu", "current",
                                                   "averageUtilization", (json_int_t)cur));
}

static json_t *targets(const kc_obj *o)
{
    json_t *specs, *statuses;
    if (kc__streq(kc_obj_api_version(o), "autoscaling/v1")) {
        v1_metrics(o, &specs, &statuses);
    } else {
        specs = kc__table_json(o, "/spec/metrics");
        statuses = kc__table_json(o, "/status/currentMetrics");
    }
    size_t n = json_array_size(specs);
    kc__buf b = KC__BUF_INIT(0);
    if (!n)
        kc__buf_append_str(&b, "<none>");
    for (size_t i = 0; i < n && i < 2; i++) {
        if (i)
            kc__buf_append_str(&b, ", ");
        metric(json_array_get(specs, i), json_array_get(statuses, i), &b);
    }
    if (n > 2)
        kc__buf_printf(&b, " + %zu more...", n - 2);
    json_t *out = json_string(b.data ? b.data : "");
    kc__buf_free(&b);
    json_decref(specs);
    json_decref(statuses);
    return out;
}

static json_t *row_hpa(const kc_obj *o, int64_t now)
{
    char ref[600], minp[32] = "<unset>";
    json_t *tr = kc__table_json(o, "/spec/scaleTargetRef");
    snprintf(ref, sizeof ref, "%s/%s", json_string_value(json_object_get(tr, "kind")) ?: "",
             json_string_value(json_object_get(tr, "name")) ?: "");
    json_decref(tr);
    int64_t v;
    if (kc_obj_get_int(o, "/spec/minReplicas", &v, NULL) == 0)
        snprintf(minp, sizeof minp, "%lld", (long long)v);
    return json_pack("[s,s,o,s,I,I,o]", kc_obj_name(o), ref, targets(o), minp,
                     (json_int_t)kc__table_int(o, "/spec/maxReplicas"),
                     (json_int_t)kc__table_int(o, "/status/currentReplicas"),
                     kc__table_age(o, now));
}

const kc__printer kc__printer_hpa = {
    "autoscaling",
    "horizontalpodautoscalers",
    {COL_NAME,
     {"Reference", "string", "",
      "scaleTargetRef points to the target resource to scale, and is used to the pods for which "
      "metrics should be collected, as well as to actually change the replica count."},
     {"Targets", "string", "",
      "metrics contains the specifications for which to use to calculate the desired replica "
      "count (the maximum replica count across all metrics will be used).  The desired replica "
      "count is calculated multiplying the ratio between the target value and the current value "
      "by the current number of pods.  Ergo, metrics used must decrease as the pod count is "
      "increased, and vice-versa.  See the individual metric source types for more information "
      "about how each type of metric must respond."},
     {"MinPods", "string", "",
      "minReplicas is the lower limit for the number of replicas to which the autoscaler can "
      "scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature "
      "gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  "
      "Scaling is active as long as at least one metric value is available."},
     {"MaxPods", "string", "",
      "maxReplicas is the upper limit for the number of replicas to which the autoscaler can "
      "scale up. It cannot be less that minReplicas."},
     {"Replicas", "string", "",
      "currentReplicas is current number of replicas of pods managed by this autoscaler, as last "
      "seen by the autoscaler."},
     COL_AGE},
    7,
    row_hpa,
    0};
