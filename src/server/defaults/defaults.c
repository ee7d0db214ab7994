/*
 * defaults.c — entry points of the defaulting room (defaults.h) and the defaulters of the core
 * kinds that are not workloads: Namespace, Secret, Service (the scheme part; allocation is
 * service_alloc.c), PersistentVolume, PersistentVolumeClaim, Endpoints, Pod (its spec is
 * defaults_pod.c). Also the set-if-unset helpers of defaults_internal.h.
 *
 * Reference: k8s.io/kubernetes pkg/apis/core/v1/defaults.go (SetDefaults_Service, _Namespace,
 * _Secret, _PersistentVolume, _PersistentVolumeClaim, _Endpoints) and the registry strategies'
 * PrepareForCreate (pkg/registry/core/{namespace,pod,service,persistentvolume}/strategy.go),
 * plus the pod admission plugins that set fields on create (plugin/pkg/admission/priority,
 * serviceaccount, defaulttolerationseconds). Thread-safe: pure functions.
 */
#include "server/defaults/defaults_internal.h"

#include "core/internal.h"

#include <string.h>

/* ---- helpers ----------------------------------------------------------------------------------
 */

static void oom(kc__dctx *c)
{
    c->rc = KC_ENOMEM;
}

void kc__dj_set(kc__dctx *c, json_t *o, const char *key, json_t *v)
{
    if (!v || json_object_set_new(o, key, v) < 0)
        oom(c);
}

bool kc__dj_unset(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return !v || json_is_null(v);
}

const char *kc__dj_s(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

json_t *kc__dj_get_obj(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_object(v) ? v : NULL;
}

json_t *kc__dj_obj(kc__dctx *c, json_t *o, const char *key)
{
    if (!json_is_object(o))
        return NULL;
    json_t *v = json_object_get(o, key);
    if (json_is_object(v))
        return v;
    if (v && !json_is_null(v))
        return NULL;
    v = json_object();
    if (!v || json_object_set_new(o, key, v) < 0) {
        oom(c);
        return NULL;
    }
    return v;
}

void kc__dj_str(kc__dctx *c, json_t *o, const char *key, const char *val)
{
    if (!json_is_object(o))
        return;
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v) || (json_is_string(v) && !*json_string_value(v)))
        kc__dj_set(c, o, key, json_string(val));
}

void kc__dj_ptr_str(kc__dctx *c, json_t *o, const char *key, const char *val)
{
    if (json_is_object(o) && kc__dj_unset(o, key))
        kc__dj_set(c, o, key, json_string(val));
}

void kc__dj_int(kc__dctx *c, json_t *o, const char *key, json_int_t val)
{
    if (!json_is_object(o))
        return;
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v) || (json_is_integer(v) && json_integer_value(v) == 0))
        kc__dj_set(c, o, key, json_integer(val));
}

void kc__dj_ptr_int(kc__dctx *c, json_t *o, const char *key, json_int_t val)
{
    if (json_is_object(o) && kc__dj_unset(o, key))
        kc__dj_set(c, o, key, json_integer(val));
}

void kc__dj_ptr_bool(kc__dctx *c, json_t *o, const char *key, bool val)
{
    if (json_is_object(o) && kc__dj_unset(o, key))
        kc__dj_set(c, o, key, json_boolean(val));
}

void kc__dj_struct(kc__dctx *c, json_t *o, const char *key)
{
    kc__dj_obj(c, o, key);
}

void kc__dj_template_meta(kc__dctx *c, json_t *holder)
{
    json_t *m = kc__dj_obj(c, holder, "metadata");
    if (m && !json_object_get(m, "creationTimestamp"))
        kc__dj_set(c, m, "creationTimestamp", json_null());
}

/* ---- core kinds (step 1) ----------------------------------------------------------------------
 */

/* SetDefaults_Service. The Service's status struct is always encoded: status.loadBalancer {}. */
static void service(kc__dctx *c, json_t *doc)
{
    json_t *spec = kc__dj_obj(c, doc, "spec");
    if (!spec)
        return;
    kc__dj_str(c, spec, "sessionAffinity", "None");
    const char *aff = kc__dj_s(spec, "sessionAffinity");
    if (!strcmp(aff, "None")) {
        json_object_del(spec, "sessionAffinityConfig");
    } else if (!strcmp(aff, "ClientIP")) {
        json_t *ip = json_object_get(kc__dj_get_obj(spec, "sessionAffinityConfig"), "clientIP");
        if (!json_is_object(ip) || kc__dj_unset(ip, "timeoutSeconds"))
            kc__dj_set(c, spec, "sessionAffinityConfig",
                       json_pack("{s:{s:i}}", "clientIP", "timeoutSeconds", 10800));
    }
    kc__dj_str(c, spec, "type", "ClusterIP");
    const char *type = kc__dj_s(spec, "type");
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(spec, "ports"), i, p)
    {
        if (!json_is_object(p))
            continue;
        kc__dj_str(c, p, "protocol", "TCP");
        json_t *tp = json_object_get(p, "targetPort");
        if (!tp || json_is_null(tp) || (json_is_integer(tp) && json_integer_value(tp) == 0) ||
            (json_is_string(tp) && !*json_string_value(tp))) {
            json_t *port = json_object_get(p, "port");
            kc__dj_set(c, p, "targetPort", json_integer(json_integer_value(port)));
        }
    }
    bool lb = !strcmp(type, "LoadBalancer"), np = !strcmp(type, "NodePort");
    bool cip = !strcmp(type, "ClusterIP");
    if (lb || np || (cip && json_array_size(json_object_get(spec, "externalIPs")) > 0))
        kc__dj_str(c, spec, "externalTrafficPolicy", "Cluster");
    if (lb || np || cip)
        kc__dj_ptr_str(c, spec, "internalTrafficPolicy", "Cluster");
    if (lb)
        kc__dj_ptr_bool(c, spec, "allocateLoadBalancerNodePorts", true);
    json_t *st = kc__dj_obj(c, doc, "status");
    json_t *lbs = kc__dj_obj(c, st, "loadBalancer");
    json_t *ing;
    json_array_foreach(lb ? json_object_get(lbs, "ingress") : NULL, i, ing)
    {
        if (*kc__dj_s(ing, "ip"))
            kc__dj_ptr_str(c, ing, "ipMode", "VIP");
    }
}

/* SetDefaults_Namespace, SetDefaults_NamespaceStatus. */
static void namespace(kc__dctx *c, json_t *doc)
{
    json_t *m = kc__dj_get_obj(doc, "metadata");
    const char *name = kc__dj_s(m, "name");
    if (*name) {
        json_t *labels = kc__dj_obj(c, m, "labels");
        if (labels)
            kc__dj_set(c, labels, "kubernetes.io/metadata.name", json_string(name));
    }
    kc__dj_str(c, kc__dj_obj(c, doc, "status"), "phase", "Active");
}

void kc__defaults_pvc_spec(kc__dctx *c, json_t *spec)
{
    kc__dj_ptr_str(c, spec, "volumeMode", "Filesystem");
}

/* SetDefaults_PersistentVolume (+ the generated walk's hostPath type). */
static void persistent_volume(kc__dctx *c, json_t *doc)
{
    json_t *spec = kc__dj_obj(c, doc, "spec");
    kc__dj_str(c, spec, "persistentVolumeReclaimPolicy", "Retain");
    kc__dj_ptr_str(c, spec, "volumeMode", "Filesystem");
    json_t *hp = kc__dj_get_obj(spec, "hostPath");
    if (hp)
        kc__dj_ptr_str(c, hp, "type", "");
    kc__dj_str(c, kc__dj_obj(c, doc, "status"), "phase", "Pending");
}

static void endpoints(kc__dctx *c, json_t *doc)
{
    size_t i, j;
    json_t *ss, *p;
    json_array_foreach(json_object_get(doc, "subsets"), i, ss)
    {
        json_array_foreach(json_object_get(ss, "ports"), j, p) kc__dj_str(c, p, "protocol", "TCP");
    }
}

static void core_kind(kc__dctx *c, const char *kind, json_t *doc)
{
    if (!strcmp(kind, "Service")) {
        service(c, doc);
    } else if (!strcmp(kind, "Pod")) {
        kc__defaults_pod_spec(c, kc__dj_obj(c, doc, "spec"), true);
        kc__dj_struct(c, doc, "status");
    } else if (!strcmp(kind, "Namespace")) {
        namespace(c, doc);
    } else if (!strcmp(kind, "Secret")) {
        kc__dj_str(c, doc, "type", "Opaque");
    } else if (!strcmp(kind, "PersistentVolume")) {
        persistent_volume(c, doc);
    } else if (!strcmp(kind, "PersistentVolumeClaim")) {
        kc__defaults_pvc_spec(c, kc__dj_obj(c, doc, "spec"));
        kc__dj_str(c, kc__dj_obj(c, doc, "status"), "phase", "Pending");
    } else if (!strcmp(kind, "Endpoints")) {
        endpoints(c, doc);
    }
}

static const char *const core_kinds[] = {"Service",          "Pod",
                                         "Namespace",        "Secret",
                                         "PersistentVolume", "PersistentVolumeClaim",
                                         "Endpoints",        "ReplicationController",
                                         "PodTemplate"};
static const char *const apps_kinds[] = {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"};
static const char *const batch_kinds[] = {"Job", "CronJob"};

static bool in(const char *kind, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(kind, list[i]))
            return true;
    return false;
}

bool kc__defaults_known(const char *group, const char *kind)
{
    if (!group || !kind)
        return false;
    if (!*group)
        return in(kind, core_kinds, KC__ARRAY_LEN(core_kinds));
    if (!strcmp(group, "apps"))
        return in(kind, apps_kinds, KC__ARRAY_LEN(apps_kinds));
    if (!strcmp(group, "batch"))
        return in(kind, batch_kinds, KC__ARRAY_LEN(batch_kinds));
    if (!strcmp(group, "admissionregistration.k8s.io"))
        return !strcmp(kind, "MutatingWebhookConfiguration") ||
               !strcmp(kind, "ValidatingWebhookConfiguration");
    return false;
}

int kc__defaults_apply(const char *group, const char *kind, json_t *doc)
{
    if (!kc__defaults_known(group, kind) || !json_is_object(doc))
        return 0;
    kc__dctx c = {0};
    if (!kc__defaults_workload(&c, group, kind, doc) &&
        !kc__defaults_admission(&c, group, kind, doc) && !*group)
        core_kind(&c, kind, doc);
    return c.rc;
}

/* ---- prepare for create / update (step 2) -----------------------------------------------------
 */

/* DefaultTolerationSeconds admission: tolerate the not-ready and unreachable NoExecute taints
 * for 300 s unless the pod already tolerates them. */
static void default_tolerations(kc__dctx *c, json_t *spec)
{
    static const char *const taints[] = {"node.kubernetes.io/not-ready",
                                         "node.kubernetes.io/unreachable"};
    json_t *tol = json_object_get(spec, "tolerations");
    if (tol && !json_is_array(tol) && !json_is_null(tol))
        return;
    bool has[2] = {false, false};
    size_t i;
    json_t *t;
    json_array_foreach(tol, i, t)
    {
        const char *key = kc__dj_s(t, "key"), *eff = kc__dj_s(t, "effect");
        bool effect_ok = !*eff || !strcmp(eff, "NoExecute");
        for (int k = 0; k < 2; k++)
            has[k] |= effect_ok && (!*key || !strcmp(key, taints[k]));
    }
    if (has[0] && has[1])
        return;
    if (!json_is_array(tol)) {
        tol = json_array();
        kc__dj_set(c, spec, "tolerations", tol);
        if (c->rc)
            return;
    }
    for (int k = 0; k < 2; k++)
        if (!has[k] &&
            json_array_append_new(tol, json_pack("{s:s,s:s,s:s,s:i}", "key", taints[k], "operator",
                                                 "Exists", "effect", "NoExecute",
                                                 "tolerationSeconds", 300)) < 0)
            oom(c);
}

/* What the admission plugins set on a new Pod: priority (Priority), serviceAccountName
 * (ServiceAccount; the token volume is not injected: nothing here issues tokens) and the
 * default tolerations (DefaultTolerationSeconds). */
static void pod_admission(kc__dctx *c, json_t *doc, const kc__create_env *env)
{
    json_t *spec = kc__dj_obj(c, doc, "spec");
    if (!spec)
        return;
    if (env && env->priority_class) {
        if (*env->priority_class)
            kc__dj_set(c, spec, "priorityClassName", json_string(env->priority_class));
        kc__dj_set(c, spec, "priority", json_integer(env->priority));
        if (env->preemption_policy)
            kc__dj_set(c, spec, "preemptionPolicy", json_string(env->preemption_policy));
    }
    const char *sa = kc__dj_s(spec, "serviceAccountName");
    if (!*sa)
        sa = kc__dj_s(spec, "serviceAccount");
    kc__dj_set(c, spec, "serviceAccountName", json_string(*sa ? sa : "default"));
    default_tolerations(c, spec);
}

int kc__defaults_prepare_create(const char *group, const char *kind, json_t *doc,
                                const kc__create_env *env)
{
    if (!kc__defaults_known(group, kind) || !json_is_object(doc))
        return 0;
    kc__dctx c = {0};
    if (kc__defaults_workload_create(&c, group, kind, doc) || *group)
        return c.rc;
    bool fresh = env && env->reset_status;
    if (!strcmp(kind, "Pod")) {
        pod_admission(&c, doc, env);
        if (fresh)
            kc__defaults_pod_status(&c, doc);
    } else if (!strcmp(kind, "Namespace")) {
        json_t *fin = json_object_get(kc__dj_obj(&c, doc, "spec"), "finalizers");
        bool found = false;
        size_t i;
        json_t *f;
        json_array_foreach(fin, i, f) found |=
            !strcmp(json_string_value(f) ? json_string_value(f) : "", "kubernetes");
        if (!found && json_is_array(fin))
            c.rc = json_array_append_new(fin, json_string("kubernetes")) < 0 ? KC_ENOMEM : c.rc;
        else if (!found)
            kc__dj_set(&c, json_object_get(doc, "spec"), "finalizers",
                       json_pack("[s]", "kubernetes"));
    } else if (!strcmp(kind, "PersistentVolume") && fresh && env->now) {
        kc__dj_set(&c, doc, "status",
                   json_pack("{s:s,s:s}", "phase", "Pending", "lastPhaseTransitionTime", env->now));
    }
    return c.rc;
}

int kc__defaults_prepare_update(const char *group, const char *kind, json_t *doc, const json_t *old)
{
    if (!group || *group || !kind || strcmp(kind, "Namespace") != 0 || !json_is_object(doc))
        return 0;
    /* namespaceStrategy.PrepareForUpdate: spec.finalizers change only through /finalize */
    kc__dctx c = {0};
    json_t *ofin = json_object_get(json_object_get(old, "spec"), "finalizers");
    json_t *spec = kc__dj_obj(&c, doc, "spec");
    if (spec && ofin)
        kc__dj_set(&c, spec, "finalizers", json_deep_copy(ofin));
    else if (spec)
        json_object_del(spec, "finalizers");
    return c.rc;
}

const char *kc__defaults_pod_priority_class(const json_t *pod)
{
    return kc__dj_s(json_object_get(pod, "spec"), "priorityClassName");
}

bool kc__defaults_system_priority(const char *name, int64_t *ret_value)
{
    if (name && !strcmp(name, "system-node-critical")) {
        *ret_value = 2000001000;
        return true;
    }
    if (name && !strcmp(name, "system-cluster-critical")) {
        *ret_value = 2000000000;
        return true;
    }
    return false;
}
