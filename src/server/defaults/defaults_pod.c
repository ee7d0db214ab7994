/*
 * defaults_pod.c — defaulting of a PodSpec (of a Pod or of any pod template) and a Pod's status
 * on create.
 *
 * Reference: k8s.io/kubernetes pkg/apis/core/v1/defaults.go (SetDefaults_PodSpec, _Pod,
 * _Container, _Probe, _HTTPGetAction, _Volume and the volume sources, _ObjectFieldSelector,
 * _ServiceAccountTokenProjection, _PersistentVolumeClaimSpec), the generated walk
 * zz_generated.defaults.go (container ports' protocol TCP, gRPC probe service ""), the v1
 * conversion (spec.serviceAccount mirrors spec.serviceAccountName) and
 * pkg/apis/core/helper/qos (ComputePodQOS). Pod-level resources (a feature off by default) and
 * the rounding of quantities to milli units are not done. Thread-safe: pure functions.
 */
#include "server/defaults/defaults_internal.h"

#include "core/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The tag of an image reference the way parsers.ParseImageName sees it: "latest" when there is
 * neither a tag nor a digest. */
static bool image_is_latest(const char *image)
{
    if (!*image)
        return false; /* does not parse: no tag */
    const char *at = strchr(image, '@');
    size_t n = at ? (size_t)(at - image) : strlen(image);
    const char *colon = NULL; /* a ':' after the last '/' starts the tag */
    for (size_t i = 0; i < n; i++) {
        if (image[i] == '/')
            colon = NULL;
        else if (image[i] == ':')
            colon = image + i;
    }
    if (colon)
        return (size_t)(image + n - colon - 1) == 6 && !strncmp(colon + 1, "latest", 6);
    return !at;
}

static void http_get(kc__dctx *c, json_t *h)
{
    if (!json_is_object(h))
        return;
    kc__dj_str(c, h, "path", "/");
    kc__dj_str(c, h, "scheme", "HTTP");
}

static void probe(kc__dctx *c, json_t *p)
{
    if (!json_is_object(p))
        return;
    kc__dj_int(c, p, "timeoutSeconds", 1);
    kc__dj_int(c, p, "periodSeconds", 10);
    kc__dj_int(c, p, "successThreshold", 1);
    kc__dj_int(c, p, "failureThreshold", 3);
    http_get(c, json_object_get(p, "httpGet"));
    json_t *grpc = kc__dj_get_obj(p, "grpc");
    if (grpc)
        kc__dj_ptr_str(c, grpc, "service", "");
}

static void field_ref(kc__dctx *c, json_t *holder)
{
    json_t *fr = kc__dj_get_obj(holder, "fieldRef");
    if (fr)
        kc__dj_str(c, fr, "apiVersion", "v1");
}

/* SetDefaults_Pod's "requests default to limits" for one container (Pods only). */
static void requests_from_limits(kc__dctx *c, json_t *res)
{
    json_t *lim = kc__dj_get_obj(res, "limits");
    if (!lim)
        return;
    json_t *req = kc__dj_obj(c, res, "requests");
    const char *k;
    json_t *v;
    json_object_foreach(lim, k, v)
    {
        if (req && !json_object_get(req, k))
            kc__dj_set(c, req, k, json_deep_copy(v));
    }
}

static void container(kc__dctx *c, json_t *ct, bool pod, bool host_network)
{
    if (!json_is_object(ct))
        return;
    if (kc__dj_unset(ct, "imagePullPolicy") || !*kc__dj_s(ct, "imagePullPolicy"))
        kc__dj_set(c, ct, "imagePullPolicy",
                   json_string(image_is_latest(kc__dj_s(ct, "image")) ? "Always" : "IfNotPresent"));
    kc__dj_str(c, ct, "terminationMessagePath", "/dev/termination-log");
    kc__dj_str(c, ct, "terminationMessagePolicy", "File");
    size_t i;
    json_t *p, *e;
    json_array_foreach(json_object_get(ct, "ports"), i, p)
    {
        kc__dj_str(c, p, "protocol", "TCP");
        if (pod && host_network && json_integer_value(json_object_get(p, "hostPort")) == 0 &&
            json_is_object(p))
            kc__dj_set(c, p, "hostPort",
                       json_integer(json_integer_value(json_object_get(p, "containerPort"))));
    }
    json_array_foreach(json_object_get(ct, "env"), i, e)
        field_ref(c, kc__dj_get_obj(e, "valueFrom"));
    json_t *res = kc__dj_obj(c, ct, "resources");
    if (pod && res)
        requests_from_limits(c, res);
    probe(c, json_object_get(ct, "livenessProbe"));
    probe(c, json_object_get(ct, "readinessProbe"));
    probe(c, json_object_get(ct, "startupProbe"));
    json_t *lc = kc__dj_get_obj(ct, "lifecycle");
    http_get(c, json_object_get(kc__dj_get_obj(lc, "postStart"), "httpGet"));
    http_get(c, json_object_get(kc__dj_get_obj(lc, "preStop"), "httpGet"));
}

static void items_field_refs(kc__dctx *c, json_t *holder)
{
    size_t i;
    json_t *it;
    json_array_foreach(json_object_get(holder, "items"), i, it) field_ref(c, it);
}

static void projected(kc__dctx *c, json_t *pj)
{
    kc__dj_ptr_int(c, pj, "defaultMode", 420);
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(pj, "sources"), i, s)
    {
        items_field_refs(c, kc__dj_get_obj(s, "downwardAPI"));
        json_t *tok = kc__dj_get_obj(s, "serviceAccountToken");
        if (tok)
            kc__dj_ptr_int(c, tok, "expirationSeconds", 3600);
    }
}

/* The defaults of one volume source, by key. */
static void volume_source(kc__dctx *c, const char *key, json_t *src)
{
    if (!strcmp(key, "hostPath")) {
        kc__dj_ptr_str(c, src, "type", "");
    } else if (!strcmp(key, "secret") || !strcmp(key, "configMap")) {
        kc__dj_ptr_int(c, src, "defaultMode", 420);
    } else if (!strcmp(key, "downwardAPI")) {
        kc__dj_ptr_int(c, src, "defaultMode", 420);
        items_field_refs(c, src);
    } else if (!strcmp(key, "projected")) {
        projected(c, src);
    } else if (!strcmp(key, "iscsi")) {
        kc__dj_str(c, src, "iscsiInterface", "default");
    } else if (!strcmp(key, "rbd")) {
        kc__dj_str(c, src, "pool", "rbd");
        kc__dj_str(c, src, "user", "admin");
        kc__dj_str(c, src, "keyring", "/etc/ceph/keyring");
    } else if (!strcmp(key, "azureDisk")) {
        kc__dj_ptr_str(c, src, "cachingMode", "ReadWrite");
        kc__dj_ptr_str(c, src, "fsType", "ext4");
        kc__dj_ptr_bool(c, src, "readOnly", false);
        kc__dj_ptr_str(c, src, "kind", "Shared");
    } else if (!strcmp(key, "scaleIO")) {
        kc__dj_str(c, src, "storageMode", "ThinProvisioned");
        kc__dj_str(c, src, "fsType", "xfs");
    } else if (!strcmp(key, "ephemeral")) {
        json_t *t = kc__dj_get_obj(src, "volumeClaimTemplate");
        if (t) {
            kc__dj_template_meta(c, t);
            kc__defaults_pvc_spec(c, kc__dj_get_obj(t, "spec"));
        }
    } else if (!strcmp(key, "image")) {
        kc__dj_str(c, src, "pullPolicy",
                   image_is_latest(kc__dj_s(src, "reference")) ? "Always" : "IfNotPresent");
    }
}

static void volume(kc__dctx *c, json_t *v)
{
    if (!json_is_object(v))
        return;
    bool any = false;
    const char *k;
    json_t *src;
    json_object_foreach(v, k, src)
    {
        if (!strcmp(k, "name") || json_is_null(src))
            continue;
        any = true;
        if (json_is_object(src))
            volume_source(c, k, src);
    }
    if (!any)
        kc__dj_set(c, v, "emptyDir", json_object());
}

void kc__defaults_pod_spec(kc__dctx *c, json_t *spec, bool pod)
{
    if (!json_is_object(spec))
        return;
    kc__dj_str(c, spec, "dnsPolicy", "ClusterFirst");
    kc__dj_str(c, spec, "restartPolicy", "Always");
    kc__dj_str(c, spec, "schedulerName", "default-scheduler");
    kc__dj_struct(c, spec, "securityContext");
    kc__dj_ptr_int(c, spec, "terminationGracePeriodSeconds", 30);
    if (pod)
        kc__dj_ptr_bool(c, spec, "enableServiceLinks", true);
    bool hn = json_is_true(json_object_get(spec, "hostNetwork"));
    static const char *const lists[] = {"initContainers", "containers", "ephemeralContainers"};
    size_t i;
    json_t *x;
    for (size_t l = 0; l < KC__ARRAY_LEN(lists); l++)
        json_array_foreach(json_object_get(spec, lists[l]), i, x) container(c, x, pod && l < 2, hn);
    json_array_foreach(json_object_get(spec, "volumes"), i, x) volume(c, x);
    /* v1 conversion: the deprecated serviceAccount follows serviceAccountName */
    const char *san = kc__dj_s(spec, "serviceAccountName");
    if (!*san && *kc__dj_s(spec, "serviceAccount"))
        kc__dj_set(c, spec, "serviceAccountName", json_string(kc__dj_s(spec, "serviceAccount")));
    san = kc__dj_s(spec, "serviceAccountName");
    if (*san)
        kc__dj_set(c, spec, "serviceAccount", json_string(san));
}

void kc__defaults_pod_template(kc__dctx *c, json_t *holder, const char *key)
{
    json_t *t = kc__dj_obj(c, holder, key);
    if (!t)
        return;
    kc__dj_template_meta(c, t);
    kc__defaults_pod_spec(c, kc__dj_obj(c, t, "spec"), false);
}

/* ---- quantities and QoS -----------------------------------------------------------------------
 */

bool kc__quantity_value(const char *s, long double *ret)
{
    static const struct {
        const char *sfx;
        long double mul;
    } sfx[] = {{"Ki", 1024.0L},
               {"Mi", 1048576.0L},
               {"Gi", 1073741824.0L},
               {"Ti", 1099511627776.0L},
               {"Pi", 1125899906842624.0L},
               {"Ei", 1152921504606846976.0L},
               {"n", 1e-9L},
               {"u", 1e-6L},
               {"m", 1e-3L},
               {"k", 1e3L},
               {"M", 1e6L},
               {"G", 1e9L},
               {"T", 1e12L},
               {"P", 1e15L},
               {"E", 1e18L},
               {"", 1.0L}};
    if (!s || !*s)
        return false;
    char *end;
    long double v = strtold(s, &end);
    if (end == s || isnan(v) || isinf(v))
        return false;
    for (size_t i = 0; i < KC__ARRAY_LEN(sfx); i++) {
        if (!strcmp(end, sfx[i].sfx)) {
            *ret = v * sfx[i].mul;
            return true;
        }
    }
    return false;
}

static long double quantity_of(const json_t *v)
{
    long double q = 0;
    if (json_is_string(v) && kc__quantity_value(json_string_value(v), &q))
        return q;
    return json_is_number(v) ? (long double)json_number_value(v) : 0;
}

/* Sum the positive cpu/memory values of list into sums[0..1]; found[k] when present > 0. */
static void qos_add(const json_t *list, long double sums[2], bool have[2], bool found[2])
{
    static const char *const names[] = {"cpu", "memory"};
    for (int k = 0; k < 2; k++) {
        long double q = quantity_of(json_object_get(list, names[k]));
        found[k] = q > 0;
        if (q > 0) {
            sums[k] += q;
            have[k] = true;
        }
    }
}

static const char *qos_class(const json_t *spec)
{
    long double req[2] = {0, 0}, lim[2] = {0, 0};
    bool have_req[2] = {false, false}, have_lim[2] = {false, false};
    bool guaranteed = true;
    static const char *const lists[] = {"containers", "initContainers"};
    for (size_t l = 0; l < 2; l++) {
        size_t i;
        json_t *ct;
        json_array_foreach(json_object_get(spec, lists[l]), i, ct)
        {
            const json_t *res = json_object_get(ct, "resources");
            bool f[2], lf[2];
            qos_add(json_object_get(res, "requests"), req, have_req, f);
            qos_add(json_object_get(res, "limits"), lim, have_lim, lf);
            guaranteed &= lf[0] && lf[1];
        }
    }
    if (!have_req[0] && !have_req[1] && !have_lim[0] && !have_lim[1])
        return "BestEffort";
    for (int k = 0; k < 2 && guaranteed; k++) {
        if (have_req[k] && (!have_lim[k] || fabsl(lim[k] - req[k]) > 1e-12L * lim[k]))
            guaranteed = false;
        if (have_req[k] != have_lim[k])
            guaranteed = false;
    }
    return guaranteed ? "Guaranteed" : "Burstable";
}

void kc__defaults_pod_status(kc__dctx *c, json_t *pod)
{
    kc__dj_set(c, pod, "status",
               json_pack("{s:s,s:s}", "phase", "Pending", "qosClass",
                         qos_class(json_object_get(pod, "spec"))));
}
