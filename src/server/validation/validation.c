/*
 * validation.c — the entry of the validation room: which rules a built-in kind gets, in
 * upstream's order (ObjectMeta first, then the spec, then the update rules), and the 422 the
 * errors become (errlist.c). Pods: the PodSpec and, on update, ValidatePodUpdate's spec rule;
 * PodTemplates: their template; workloads: workloads.c; every kind: labels, annotations,
 * finalizers. Runs on every write of a built-in object (storage/write.c) after defaulting;
 * cost proportional to the object, no allocation when it is valid but for Pod, StatefulSet and
 * Job updates (one copy of the spec).
 */
#include "server/validation/validation_internal.h"

#include <string.h>

int kc__validate_object(const char *group, const char *kind, const json_t *doc, const json_t *old,
                        kc_error *err)
{
    kc__vlist l = {0};
    const json_t *meta = json_object_get(doc, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    group = group ? group : "";
    kc__v_object_meta(&l, "metadata", meta);
    if (!*group && !strcmp(kind, "Pod")) {
        kc__v_pod_spec(&l, "spec", json_object_get(doc, "spec"));
        if (old)
            kc__v_pod_update(&l, json_object_get(doc, "spec"), json_object_get(old, "spec"));
    } else if (!*group && !strcmp(kind, "PodTemplate")) {
        kc__v_pod_template(&l, "template", json_object_get(doc, "template"));
    } else {
        kc__v_workload(&l, group, kind, doc, old);
    }
    return kc__v_finish(&l, group, kind, name ? name : "", err);
}
