/*
 * pod.c — the PodSpec rules of pkg/apis/core/validation users hit most, in upstream's order:
 * containers (at least one; per container: name required and a DNS-1123 label, unique among the
 * containers and init containers; image required; ports: names (IANA_SVC_NAME, unique), container
 * port required and in 1..65535, host port in range, protocol TCP/UDP/SCTP; resources), init
 * containers (the same), restartPolicy (Always / OnFailure / Never), dnsPolicy, nodeSelector
 * labels; and ValidatePodTemplateSpec (a template's labels and annotations, then its spec).
 * Volumes, probes, security contexts and the rest of the spec are not checked here.
 * Cost: linear in the spec (name uniqueness: quadratic in the number of containers, which is
 * small).
 */
#include "server/validation/validation_internal.h"

#include <stdio.h>
#include <string.h>

static void ports(kc__vlist *l, const char *base, const json_t *list)
{
    static const char *const protocols[] = {"SCTP", "TCP", "UDP", NULL};
    char f[KC__VPATH];
    size_t i;
    json_t *p;
    json_array_foreach(list, i, p)
    {
        const char *name = json_string_value(json_object_get(p, "name"));
        if (name && *name) {
            size_t before = l->n;
            snprintf(f, sizeof f, "%s[%zu].name", base, i);
            kc__v_port_name(l, f, name);
            bool dup = false;
            for (size_t j = 0; j < i && l->n == before && !dup; j++) {
                const char *o = json_string_value(json_object_get(json_array_get(list, j), "name"));
                dup = o && !strcmp(o, name);
            }
            if (dup)
                kc__v_duplicate_s(l, f, name);
        }
        json_int_t cp = json_integer_value(json_object_get(p, "containerPort"));
        snprintf(f, sizeof f, "%s[%zu].containerPort", base, i);
        if (cp == 0)
            kc__v_required(l, f, "");
        else if (cp < 1 || cp > 65535)
            kc__v_invalid_i(l, f, cp, "must be between 1 and 65535, inclusive");
        json_int_t hp = json_integer_value(json_object_get(p, "hostPort"));
        snprintf(f, sizeof f, "%s[%zu].hostPort", base, i);
        if (hp != 0 && (hp < 1 || hp > 65535))
            kc__v_invalid_i(l, f, hp, "must be between 1 and 65535, inclusive");
        const char *proto = json_string_value(json_object_get(p, "protocol"));
        snprintf(f, sizeof f, "%s[%zu].protocol", base, i);
        if (!proto || !*proto)
            kc__v_required(l, f, "");
        else if (strcmp(proto, "TCP") && strcmp(proto, "UDP") && strcmp(proto, "SCTP"))
            kc__v_unsupported_s(l, f, proto, protocols);
    }
}

/* validateContainerCommon: name, image, ports, resources. */
static void container(kc__vlist *l, const char *base, const json_t *c)
{
    char f[KC__VPATH];
    const char *name = json_string_value(json_object_get(c, "name"));
    snprintf(f, sizeof f, "%s.name", base);
    if (!name || !*name)
        kc__v_required(l, f, "");
    else
        kc__v_dns1123_label(l, f, name);
    const char *image = json_string_value(json_object_get(c, "image"));
    snprintf(f, sizeof f, "%s.image", base);
    if (!image || !*image)
        kc__v_required(l, f, "");
    snprintf(f, sizeof f, "%s.ports", base);
    ports(l, f, json_object_get(c, "ports"));
    static const char *const pulls[] = {"Always", "IfNotPresent", "Never", NULL};
    const char *pull = json_string_value(json_object_get(c, "imagePullPolicy"));
    snprintf(f, sizeof f, "%s.imagePullPolicy", base);
    if (pull && *pull && strcmp(pull, "Always") && strcmp(pull, "IfNotPresent") &&
        strcmp(pull, "Never"))
        kc__v_unsupported_s(l, f, pull, pulls);
    snprintf(f, sizeof f, "%s.resources", base);
    kc__v_resources(l, f, json_object_get(c, "resources"));
}

/* Is name the name of an earlier container of list (before index end), or of any in other? */
static bool name_taken(const json_t *list, size_t end, const json_t *other, const char *name)
{
    for (size_t j = 0; j < end; j++) {
        const char *o = json_string_value(json_object_get(json_array_get(list, j), "name"));
        if (o && !strcmp(o, name))
            return true;
    }
    for (size_t j = 0; j < json_array_size(other); j++) {
        const char *o = json_string_value(json_object_get(json_array_get(other, j), "name"));
        if (o && !strcmp(o, name))
            return true;
    }
    return false;
}

static void containers(kc__vlist *l, const char *base, const json_t *list, const json_t *regular)
{
    char f[KC__VPATH];
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c)
    {
        snprintf(f, sizeof f, "%s[%zu]", base, i);
        container(l, f, c);
        const char *name = json_string_value(json_object_get(c, "name"));
        if (name && *name && name_taken(list, i, regular, name)) {
            snprintf(f, sizeof f, "%s[%zu].name", base, i);
            kc__v_duplicate_s(l, f, name);
        }
    }
}

void kc__v_pod_spec(kc__vlist *l, const char *field, const json_t *spec)
{
    char f[KC__VPATH];
    const json_t *cs = json_object_get(spec, "containers");
    snprintf(f, sizeof f, "%s.containers", field);
    if (json_array_size(cs) == 0)
        kc__v_required(l, f, "");
    else
        containers(l, f, cs, NULL);
    snprintf(f, sizeof f, "%s.initContainers", field);
    containers(l, f, json_object_get(spec, "initContainers"), cs);

    static const char *const policies[] = {"Always", "OnFailure", "Never", NULL};
    const char *rp = json_string_value(json_object_get(spec, "restartPolicy"));
    snprintf(f, sizeof f, "%s.restartPolicy", field);
    if (!rp || !*rp)
        kc__v_required(l, f, "");
    else if (strcmp(rp, "Always") && strcmp(rp, "OnFailure") && strcmp(rp, "Never"))
        kc__v_unsupported_s(l, f, rp, policies);

    static const char *const dns[] = {"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None",
                                      NULL};
    const char *dp = json_string_value(json_object_get(spec, "dnsPolicy"));
    snprintf(f, sizeof f, "%s.dnsPolicy", field);
    if (!dp || !*dp)
        kc__v_required(l, f, "");
    else if (strcmp(dp, "ClusterFirstWithHostNet") && strcmp(dp, "ClusterFirst") &&
             strcmp(dp, "Default") && strcmp(dp, "None"))
        kc__v_unsupported_s(l, f, dp, dns);

    const json_t *ns = json_object_get(spec, "nodeSelector");
    if (json_object_size(ns)) {
        snprintf(f, sizeof f, "%s.nodeSelector", field);
        kc__v_labels(l, f, ns);
    }
}

void kc__v_pod_template(kc__vlist *l, const char *field, const json_t *tmpl)
{
    char f[KC__VPATH];
    kc__v_labels_annotations(l, field, json_object_get(tmpl, "metadata"));
    snprintf(f, sizeof f, "%s.spec", field);
    kc__v_pod_spec(l, f, json_object_get(tmpl, "spec"));
}
