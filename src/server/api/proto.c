/*
 * proto.c — request bodies in the Kubernetes protobuf encoding (spec §6.2): kubectl's generators
 * (`kubectl create configmap|secret|namespace|serviceaccount|deployment|service|job`,
 * `kubectl run`) and typed client-go clients send built-in kinds as
 * `application/vnd.kubernetes.protobuf`. The body is the "k8s\0" magic followed by a
 * runtime.Unknown message {typeMeta{apiVersion, kind}, raw, contentEncoding, contentType}; raw is
 * the typed message. This file decodes the protobuf wire format (varint, 64-bit,
 * length-delimited, 32-bit) guided by small field tables for ObjectMeta and the kinds above —
 * Pods and Deployments: the fields those generators set (containers with name, image, command,
 * args, ports, env, resources, pull policy; restart/DNS policy; replicas, selector, template,
 * strategy); Services: ports with int-or-string target ports, selector, type, cluster IP,
 * external name; Jobs: the spec's counts and limits and the pod template — into a jansson
 * document, which then goes through the normal JSON write path. Other kinds get 415 naming JSON
 * as the accepted type. Unknown fields are skipped. Limits: nesting depth 16, body size bounded
 * by the request body limit. Thread-safe.
 */
#include "server/api/api_internal.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

typedef enum ftype {
    F_STR = 1,
    F_BYTES,
    F_INT,
    F_BOOL,
    F_MSG,
    F_MAP_SS,
    F_MAP_SB,
    F_MAP_SQ,
    F_TIME,
    F_REPSTR,
    F_REPMSG,
    F_INTSTR /* intstr.IntOrString {1: type, 2: intVal, 3: strVal} → a JSON number or string */
} ftype;

typedef struct pmsg pmsg;
typedef struct pfield {
    uint32_t num;
    const char *name;
    ftype t;
    const pmsg *sub;
} pfield;
struct pmsg {
    const pfield *f;
    size_t n;
};
#define MSG(arr)                                                                                   \
    {                                                                                              \
        arr, sizeof(arr) / sizeof(arr[0])                                                          \
    }

static const pfield owner_f[] = {
    {5, "apiVersion", F_STR, NULL},  {1, "kind", F_STR, NULL},
    {3, "name", F_STR, NULL},        {4, "uid", F_STR, NULL},
    {6, "controller", F_BOOL, NULL}, {7, "blockOwnerDeletion", F_BOOL, NULL}};
static const pmsg owner_m = MSG(owner_f);
static const pfield meta_f[] = {{1, "name", F_STR, NULL},
                                {2, "generateName", F_STR, NULL},
                                {3, "namespace", F_STR, NULL},
                                {5, "uid", F_STR, NULL},
                                {6, "resourceVersion", F_STR, NULL},
                                {7, "generation", F_INT, NULL},
                                {8, "creationTimestamp", F_TIME, NULL},
                                {11, "labels", F_MAP_SS, NULL},
                                {12, "annotations", F_MAP_SS, NULL},
                                {13, "ownerReferences", F_REPMSG, &owner_m},
                                {14, "finalizers", F_REPSTR, NULL}};
static const pmsg meta_m = MSG(meta_f);
static const pfield cm_f[] = {{1, "metadata", F_MSG, &meta_m},
                              {2, "data", F_MAP_SS, NULL},
                              {3, "binaryData", F_MAP_SB, NULL},
                              {4, "immutable", F_BOOL, NULL}};
static const pfield secret_f[] = {{1, "metadata", F_MSG, &meta_m},
                                  {2, "data", F_MAP_SB, NULL},
                                  {3, "type", F_STR, NULL},
                                  {4, "stringData", F_MAP_SS, NULL},
                                  {5, "immutable", F_BOOL, NULL}};
static const pfield nsspec_f[] = {{1, "finalizers", F_REPSTR, NULL}};
static const pmsg nsspec_m = MSG(nsspec_f);
static const pfield ns_f[] = {{1, "metadata", F_MSG, &meta_m}, {2, "spec", F_MSG, &nsspec_m}};
static const pfield ref_f[] = {{1, "name", F_STR, NULL}};
static const pmsg ref_m = MSG(ref_f);
static const pfield sa_f[] = {{1, "metadata", F_MSG, &meta_m},
                              {3, "imagePullSecrets", F_REPMSG, &ref_m},
                              {4, "automountServiceAccountToken", F_BOOL, NULL}};
/* Pods and Deployments as kubectl run / kubectl create deployment send them. */
static const pfield port_f[] = {{1, "name", F_STR, NULL},
                                {2, "hostPort", F_INT, NULL},
                                {3, "containerPort", F_INT, NULL},
                                {4, "protocol", F_STR, NULL},
                                {5, "hostIP", F_STR, NULL}};
static const pmsg port_m = MSG(port_f);
static const pfield env_f[] = {{1, "name", F_STR, NULL}, {2, "value", F_STR, NULL}};
static const pmsg env_m = MSG(env_f);
static const pfield res_f[] = {{1, "limits", F_MAP_SQ, NULL}, {2, "requests", F_MAP_SQ, NULL}};
static const pmsg res_m = MSG(res_f);
static const pfield ctr_f[] = {{1, "name", F_STR, NULL},
                               {2, "image", F_STR, NULL},
                               {3, "command", F_REPSTR, NULL},
                               {4, "args", F_REPSTR, NULL},
                               {5, "workingDir", F_STR, NULL},
                               {6, "ports", F_REPMSG, &port_m},
                               {7, "env", F_REPMSG, &env_m},
                               {8, "resources", F_MSG, &res_m},
                               {13, "terminationMessagePath", F_STR, NULL},
                               {14, "imagePullPolicy", F_STR, NULL},
                               {16, "stdin", F_BOOL, NULL},
                               {17, "stdinOnce", F_BOOL, NULL},
                               {18, "tty", F_BOOL, NULL},
                               {20, "terminationMessagePolicy", F_STR, NULL}};
static const pmsg ctr_m = MSG(ctr_f);
static const pfield podspec_f[] = {{2, "containers", F_REPMSG, &ctr_m},
                                   {3, "restartPolicy", F_STR, NULL},
                                   {4, "terminationGracePeriodSeconds", F_INT, NULL},
                                   {6, "dnsPolicy", F_STR, NULL},
                                   {7, "nodeSelector", F_MAP_SS, NULL},
                                   {8, "serviceAccountName", F_STR, NULL},
                                   {10, "nodeName", F_STR, NULL},
                                   {11, "hostNetwork", F_BOOL, NULL},
                                   {20, "initContainers", F_REPMSG, &ctr_m}};
static const pmsg podspec_m = MSG(podspec_f);
static const pfield pod_f[] = {{1, "metadata", F_MSG, &meta_m}, {2, "spec", F_MSG, &podspec_m}};
static const pfield tmpl_f[] = {{1, "metadata", F_MSG, &meta_m}, {2, "spec", F_MSG, &podspec_m}};
static const pmsg tmpl_m = MSG(tmpl_f);
static const pfield sel_f[] = {{1, "matchLabels", F_MAP_SS, NULL}};
static const pmsg sel_m = MSG(sel_f);
static const pfield strat_f[] = {{1, "type", F_STR, NULL}};
static const pmsg strat_m = MSG(strat_f);
static const pfield depspec_f[] = {
    {1, "replicas", F_INT, NULL},        {2, "selector", F_MSG, &sel_m},
    {3, "template", F_MSG, &tmpl_m},     {4, "strategy", F_MSG, &strat_m},
    {5, "minReadySeconds", F_INT, NULL}, {6, "revisionHistoryLimit", F_INT, NULL},
    {7, "paused", F_BOOL, NULL},         {9, "progressDeadlineSeconds", F_INT, NULL}};
static const pmsg depspec_m = MSG(depspec_f);
static const pfield dep_f[] = {{1, "metadata", F_MSG, &meta_m}, {2, "spec", F_MSG, &depspec_m}};
/* Services as `kubectl create service clusterip|nodeport|loadbalancer|externalname` send them. */
static const pfield svcport_f[] = {{1, "name", F_STR, NULL},     {2, "protocol", F_STR, NULL},
                                   {3, "port", F_INT, NULL},     {4, "targetPort", F_INTSTR, NULL},
                                   {5, "nodePort", F_INT, NULL}, {6, "appProtocol", F_STR, NULL}};
static const pmsg svcport_m = MSG(svcport_f);
static const pfield svcspec_f[] = {
    {1, "ports", F_REPMSG, &svcport_m}, {2, "selector", F_MAP_SS, NULL},
    {3, "clusterIP", F_STR, NULL},      {4, "type", F_STR, NULL},
    {5, "externalIPs", F_REPSTR, NULL}, {7, "sessionAffinity", F_STR, NULL},
    {10, "externalName", F_STR, NULL},  {11, "externalTrafficPolicy", F_STR, NULL},
    {18, "clusterIPs", F_REPSTR, NULL}};
static const pmsg svcspec_m = MSG(svcspec_f);
static const pfield svc_f[] = {{1, "metadata", F_MSG, &meta_m}, {2, "spec", F_MSG, &svcspec_m}};
/* Jobs as `kubectl create job` sends them. */
static const pfield jobspec_f[] = {
    {1, "parallelism", F_INT, NULL},           {2, "completions", F_INT, NULL},
    {3, "activeDeadlineSeconds", F_INT, NULL}, {4, "selector", F_MSG, &sel_m},
    {5, "manualSelector", F_BOOL, NULL},       {6, "template", F_MSG, &tmpl_m},
    {7, "backoffLimit", F_INT, NULL},          {8, "ttlSecondsAfterFinished", F_INT, NULL},
    {9, "completionMode", F_STR, NULL},        {10, "suspend", F_BOOL, NULL}};
static const pmsg jobspec_m = MSG(jobspec_f);
static const pfield job_f[] = {{1, "metadata", F_MSG, &meta_m}, {2, "spec", F_MSG, &jobspec_m}};
static const pfield unknown_tm_f[] = {{1, "apiVersion", F_STR, NULL}, {2, "kind", F_STR, NULL}};
static const pmsg unknown_tm_m = MSG(unknown_tm_f);

static const struct {
    const char *kind;
    pmsg m;
} kinds[] = {{"ConfigMap", MSG(cm_f)},      {"Secret", MSG(secret_f)}, {"Namespace", MSG(ns_f)},
             {"ServiceAccount", MSG(sa_f)}, {"Pod", MSG(pod_f)},       {"Deployment", MSG(dep_f)},
             {"Service", MSG(svc_f)},       {"Job", MSG(job_f)}};

typedef struct rd {
    const uint8_t *p, *end;
} rd;

static int varint(rd *r, uint64_t *ret)
{
    uint64_t v = 0;
    for (int s = 0; s < 64; s += 7) {
        if (r->p >= r->end)
            return -1;
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) {
            *ret = v;
            return 0;
        }
    }
    return -1;
}

static int bytes(rd *r, const uint8_t **ret, size_t *len)
{
    uint64_t n;
    if (varint(r, &n) || n > (uint64_t)(r->end - r->p))
        return -1;
    *ret = r->p;
    *len = (size_t)n;
    r->p += n;
    return 0;
}

static int skip(rd *r, unsigned wt)
{
    uint64_t v;
    const uint8_t *b;
    size_t n;
    switch (wt) {
    case 0:
        return varint(r, &v);
    case 1:
        if (r->end - r->p < 8)
            return -1;
        r->p += 8;
        return 0;
    case 2:
        return bytes(r, &b, &n);
    case 5:
        if (r->end - r->p < 4)
            return -1;
        r->p += 4;
        return 0;
    default:
        return -1;
    }
}

static json_t *b64(const uint8_t *p, size_t n)
{
    char *out = malloc(4 * ((n + 2) / 3) + 1);
    if (!out)
        return NULL;
    EVP_EncodeBlock((unsigned char *)out, p, (int)n);
    json_t *s = json_string(out);
    free(out);
    return s;
}

static int decode(const uint8_t *p, size_t len, const pmsg *m, json_t *obj, int depth);

/* resource.Quantity {1: string} → its string. */
static json_t *quantity(const uint8_t *p, size_t len)
{
    rd r = {p, p + len};
    while (r.p < r.end) {
        uint64_t tag;
        const uint8_t *b;
        size_t n;
        if (varint(&r, &tag))
            return NULL;
        if ((tag & 7) == 2 && (tag >> 3) == 1) {
            if (bytes(&r, &b, &n))
                return NULL;
            return json_stringn((const char *)b, n);
        }
        if (skip(&r, tag & 7))
            return NULL;
    }
    return json_string("0");
}

/* Map entry {1: key string, 2: value string|bytes|Quantity}. */
static int map_entry(const uint8_t *p, size_t len, int kind, json_t *map)
{
    bool bin = kind == 1;
    rd r = {p, p + len};
    const uint8_t *k = NULL, *v = NULL;
    size_t kl = 0, vl = 0;
    while (r.p < r.end) {
        uint64_t tag;
        if (varint(&r, &tag))
            return -1;
        if ((tag & 7) != 2) {
            if (skip(&r, tag & 7))
                return -1;
            continue;
        }
        const uint8_t *b;
        size_t n;
        if (bytes(&r, &b, &n))
            return -1;
        if ((tag >> 3) == 1)
            k = b, kl = n;
        else if ((tag >> 3) == 2)
            v = b, vl = n;
    }
    json_t *key = json_stringn((const char *)(k ? k : (const uint8_t *)""), kl);
    const uint8_t *vv = v ? v : (const uint8_t *)"";
    json_t *val = kind == 2 ? quantity(vv, vl)
                  : bin     ? b64(vv, vl)
                            : json_stringn((const char *)vv, vl);
    int rc = key && val ? json_object_set(map, json_string_value(key), val) : -1;
    json_decref(key);
    json_decref(val);
    return rc;
}

static json_t *time_str(const uint8_t *p, size_t len)
{
    rd r = {p, p + len};
    uint64_t secs = 0;
    while (r.p < r.end) {
        uint64_t tag, v;
        if (varint(&r, &tag))
            return NULL;
        if ((tag & 7) == 0 && (tag >> 3) == 1) {
            if (varint(&r, &v))
                return NULL;
            secs = v;
        } else if (skip(&r, tag & 7)) {
            return NULL;
        }
    }
    time_t t = (time_t)secs;
    struct tm tm;
    char buf[32];
    gmtime_r(&t, &tm);
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return json_string(buf);
}

/* intstr.IntOrString {1: type (0 int, 1 string), 2: intVal (int32), 3: strVal}. */
static json_t *int_or_string(const uint8_t *p, size_t len)
{
    rd r = {p, p + len};
    uint64_t type = 0, iv = 0;
    const uint8_t *sv = (const uint8_t *)"";
    size_t sl = 0;
    while (r.p < r.end) {
        uint64_t tag;
        if (varint(&r, &tag))
            return NULL;
        if ((tag & 7) == 0 && ((tag >> 3) == 1 || (tag >> 3) == 2)) {
            if (varint(&r, (tag >> 3) == 1 ? &type : &iv))
                return NULL;
        } else if ((tag & 7) == 2 && (tag >> 3) == 3) {
            if (bytes(&r, &sv, &sl))
                return NULL;
        } else if (skip(&r, tag & 7)) {
            return NULL;
        }
    }
    return type == 1 ? json_stringn((const char *)sv, sl) : json_integer((int32_t)(uint32_t)iv);
}

/* Pointer fields upstream: 0 is a value there, not "unset", so it is kept. */
static bool keeps_zero(const char *name)
{
    static const char *const names[] = {"replicas", "parallelism", "completions", "backoffLimit",
                                        "ttlSecondsAfterFinished"};
    for (size_t i = 0; i < KC__ARRAY_LEN(names); i++)
        if (!strcmp(name, names[i]))
            return true;
    return false;
}

static int field(rd *r, const pfield *f, unsigned wt, json_t *obj, int depth)
{
    uint64_t v;
    const uint8_t *b;
    size_t n;
    /* gogo-protobuf writes every non-pointer field, zero or not; Go's JSON encoding drops those
     * (omitempty), so zero strings/bools/ints/times are dropped here too, except for fields
     * that are pointers upstream (keeps_zero). */
    if (f->t == F_INT || f->t == F_BOOL) {
        if (wt != 0 || varint(r, &v))
            return -1;
        if (v == 0 && !keeps_zero(f->name))
            return 0;
        return json_object_set_new(obj, f->name,
                                   f->t == F_BOOL ? json_boolean(v) : json_integer((json_int_t)v));
    }
    if (wt != 2 || bytes(r, &b, &n))
        return -1;
    json_t *val = NULL;
    switch (f->t) {
    case F_STR:
        if (n == 0)
            return 0;
        val = json_stringn((const char *)b, n);
        break;
    case F_BYTES:
        val = b64(b, n);
        break;
    case F_INTSTR:
        val = int_or_string(b, n);
        break;
    case F_TIME:
        val = time_str(b, n);
        if (val && !strcmp(json_string_value(val), "1970-01-01T00:00:00Z")) {
            json_decref(val);
            return 0;
        }
        break;
    case F_MSG:
        val = json_object();
        if (val && decode(b, n, f->sub, val, depth + 1)) {
            json_decref(val);
            return -1;
        }
        break;
    case F_MAP_SS:
    case F_MAP_SB:
    case F_MAP_SQ: {
        json_t *map = json_object_get(obj, f->name);
        if (!map && json_object_set_new(obj, f->name, (map = json_object())))
            return -1;
        return map_entry(b, n, f->t == F_MAP_SB ? 1 : f->t == F_MAP_SQ ? 2 : 0, map);
    }
    case F_REPSTR:
    case F_REPMSG: {
        json_t *arr = json_object_get(obj, f->name);
        if (!arr && json_object_set_new(obj, f->name, (arr = json_array())))
            return -1;
        json_t *it = f->t == F_REPSTR ? json_stringn((const char *)b, n) : json_object();
        if (!it || (f->t == F_REPMSG && decode(b, n, f->sub, it, depth + 1))) {
            json_decref(it);
            return -1;
        }
        return json_array_append_new(arr, it);
    }
    default:
        break;
    }
    return val ? json_object_set_new(obj, f->name, val) : -1;
}

static int decode(const uint8_t *p, size_t len, const pmsg *m, json_t *obj, int depth)
{
    if (depth > 16)
        return -1;
    rd r = {p, p + len};
    while (r.p < r.end) {
        uint64_t tag;
        if (varint(&r, &tag))
            return -1;
        const pfield *f = NULL;
        for (size_t i = 0; i < m->n && !f; i++)
            if (m->f[i].num == (tag >> 3))
                f = &m->f[i];
        if (!f ? skip(&r, tag & 7) : field(&r, f, tag & 7, obj, depth))
            return -1;
    }
    return 0;
}

int kc__proto_to_json(const char *body, size_t len, json_t **ret, kc_error *err)
{
    const uint8_t *p = (const uint8_t *)body;
    if (len < 4 || memcmp(p, "k8s\0", 4) != 0)
        return kc__fail(err, 400, "BadRequest", "protobuf body without the k8s envelope");
    rd r = {p + 4, p + len};
    json_t *tm = json_object();
    const uint8_t *raw = NULL;
    size_t raw_len = 0;
    while (r.p < r.end) {
        uint64_t tag;
        const uint8_t *b;
        size_t n;
        if (varint(&r, &tag))
            goto bad;
        if ((tag & 7) == 2 && (tag >> 3) <= 2) {
            if (bytes(&r, &b, &n))
                goto bad;
            if ((tag >> 3) == 1 && decode(b, n, &unknown_tm_m, tm, 0))
                goto bad;
            if ((tag >> 3) == 2)
                raw = b, raw_len = n;
        } else if (skip(&r, tag & 7)) {
            goto bad;
        }
    }
    const char *kind = json_string_value(json_object_get(tm, "kind"));
    for (size_t i = 0; kind && i < KC__ARRAY_LEN(kinds); i++) {
        if (strcmp(kinds[i].kind, kind) != 0)
            continue;
        json_t *doc = json_object();
        json_object_set(doc, "apiVersion", json_object_get(tm, "apiVersion"));
        json_object_set(doc, "kind", json_object_get(tm, "kind"));
        if (decode(raw ? raw : p, raw_len, &kinds[i].m, doc, 0)) {
            json_decref(doc);
            goto bad;
        }
        json_decref(tm);
        *ret = doc;
        return 0;
    }
    json_decref(tm);
    return kc__fail(err, 415, "UnsupportedMediaType",
                    "the body of the request was in an unknown format - accepted media types "
                    "include: application/json, application/yaml (protobuf only for ConfigMap, "
                    "Secret, Namespace, ServiceAccount, Pod, Deployment, Service, Job)");
bad:
    json_decref(tm);
    return kc__fail(err, 400, "BadRequest", "malformed protobuf body");
}
