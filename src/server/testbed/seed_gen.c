/*
 * seed_gen.c — synthetic objects for `kcache serve --seed-objects SPEC` (kc__seed_generate).
 *
 * SPEC is a comma-separated list of KIND=N[:ns=NAME] parts, e.g. "pods=100000,namespaces=100"
 * or "pods=1000:ns=default,configmaps=50,persistentvolumes=1000". Kinds: pods, configmaps,
 * secrets, persistentvolumes (cluster-scoped; alias pvs), namespaces (alias ns).
 * - namespaces=K creates ns-0 … ns-{K-1}; namespaced objects without :ns= are spread round-robin
 *   over them. When pods without :ns= are requested and namespaces= is not given, K defaults to
 *   100; otherwise (no such pods, no namespaces=) namespaced objects go to "default".
 * - :ns=NAME puts every object of that part into NAME (created first unless it is built in).
 * Pods have the shape of bench/genpod.h's Pods (≈5.9 KB with 40 % managedFields, name
 * web-7d9f8c6b5-NNNNN, nodeName node-{i%5000}); uid, resourceVersion and creationTimestamp are
 * left to the server's create path. Other kinds are small realistic objects named cm-NNNNN,
 * secret-NNNNN, pv-NNNNN. Namespaces come first, then the parts in the order given.
 * Limits: ≤ 16 parts, N ≤ 10 000 000 per part, namespaces ≤ 100 000. The whole spec is parsed
 * before the first object (kc_server_seed_spec_check parses only). Thread-safe: no state.
 */
#include "server/testbed/seed.h"

#include "core/internal.h"
#include "kcache/server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARTS   16
#define MAX_COUNT   10000000ull
#define MAX_NS      100000ull
#define DEFAULT_NS  100ull
#define NS_NAME_MAX 63
#define OBJ_BUF     (16 * 1024)

typedef enum gkind { G_PODS, G_CONFIGMAPS, G_SECRETS, G_PVS, G_NAMESPACES } gkind;

typedef struct part {
    gkind kind;
    unsigned long long n;
    char ns[NS_NAME_MAX + 1]; /* "" = spread */
} part;

static const struct {
    const char *name;
    gkind kind;
} kinds[] = {
    {"pods", G_PODS},       {"configmaps", G_CONFIGMAPS},
    {"secrets", G_SECRETS}, {"persistentvolumes", G_PVS},
    {"pvs", G_PVS},         {"namespaces", G_NAMESPACES},
    {"ns", G_NAMESPACES},
};

/* The pod of bench/genpod.h, without uid/resourceVersion/creationTimestamp.
 * Arguments: index (name), namespace, node index. */
static const char pod_fmt[] =
    "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"web-7d9f8c6b5-%05llu\","
    "\"generateName\":\"web-7d9f8c6b5-\",\"namespace\":\"%s\",\"labels\":{\"app\":\"web\",\"p"
    "od-template-hash\":\"7d9f8c6b5\",\"tier\":\"frontend\",\"version\":\"v1.2.3\"},\"annotat"
    "ions\":{\"kubectl.kubernetes.io/restartedAt\":\"2024-05-01T11:59:00Z\",\"prometheus.io/s"
    "crape\":\"true\",\"prometheus.io/port\":\"9090\"},\"ownerReferences\":[{\"apiVersion\":\""
    "apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web-7d9f8c6b5\",\"uid\":\"aa11bb22-cc33-dd4"
    "4-ee55-ff6677889900\",\"controller\":true,\"blockOwnerDeletion\":true}],\"managedFields\""
    ":[{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\",\"apiVersion\":\"v1\""
    ",\"time\":\"2024-05-01T12:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadat"
    "a\":{\"f:annotations\":{\".\":{},\"f:kubectl.kubernetes.io/restartedAt\":{},\"f:promethe"
    "us.io/port\":{},\"f:prometheus.io/scrape\":{}},\"f:generateName\":{},\"f:labels\":{\".\""
    ":{},\"f:app\":{},\"f:pod-template-hash\":{},\"f:tier\":{},\"f:version\":{}},\"f:ownerRef"
    "erences\":{\".\":{},\"k:{\\\"uid\\\":\\\"aa11bb22-cc33-dd44-ee55-ff6677889900\\\"}\":{}}"
    "},\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"web\\\"}\":{\".\":{},\"f:env\":{\""
    ".\":{},\"k:{\\\"name\\\":\\\"POD_NAME\\\"}\":{\".\":{},\"f:name\":{},\"f:valueFrom\":{\""
    ".\":{},\"f:fieldRef\":{}}},\"k:{\\\"name\\\":\\\"LOG_LEVEL\\\"}\":{\".\":{},\"f:name\":{"
    "},\"f:value\":{}}},\"f:image\":{},\"f:imagePullPolicy\":{},\"f:name\":{},\"f:ports\":{\""
    ".\":{},\"k:{\\\"containerPort\\\":8080,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},\"f:con"
    "tainerPort\":{},\"f:name\":{},\"f:protocol\":{}}},\"f:readinessProbe\":{\".\":{},\"f:fai"
    "lureThreshold\":{},\"f:httpGet\":{\".\":{},\"f:path\":{},\"f:port\":{},\"f:scheme\":{}},"
    "\"f:periodSeconds\":{},\"f:successThreshold\":{},\"f:timeoutSeconds\":{}},\"f:resources\""
    ":{\".\":{},\"f:limits\":{\".\":{},\"f:cpu\":{},\"f:memory\":{}},\"f:requests\":{\".\":{}"
    ",\"f:cpu\":{},\"f:memory\":{}}},\"f:terminationMessagePath\":{},\"f:terminationMessagePo"
    "licy\":{},\"f:volumeMounts\":{\".\":{},\"k:{\\\"mountPath\\\":\\\"/etc/config\\\"}\":{\""
    ".\":{},\"f:mountPath\":{},\"f:name\":{}}}}},\"f:dnsPolicy\":{},\"f:enableServiceLinks\":"
    "{},\"f:restartPolicy\":{},\"f:schedulerName\":{},\"f:securityContext\":{},\"f:terminatio"
    "nGracePeriodSeconds\":{},\"f:volumes\":{\".\":{},\"k:{\\\"name\\\":\\\"config\\\"}\":{\""
    ".\":{},\"f:configMap\":{\".\":{},\"f:defaultMode\":{},\"f:name\":{}},\"f:name\":{}}}}}},"
    "{\"manager\":\"kubelet\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2024-"
    "05-01T12:00:10Z\",\"fieldsType\":\"FieldsV1\",\"subresource\":\"status\",\"fieldsV1\":{\""
    "f:status\":{\"f:conditions\":{\"k:{\\\"type\\\":\\\"ContainersReady\\\"}\":{\".\":{},\"f"
    ":lastProbeTime\":{},\"f:lastTransitionTime\":{},\"f:status\":{},\"f:type\":{}},\"k:{\\\""
    "type\\\":\\\"Initialized\\\"}\":{\".\":{},\"f:lastProbeTime\":{},\"f:lastTransitionTime\""
    ":{},\"f:status\":{},\"f:type\":{}},\"k:{\\\"type\\\":\\\"PodReadyToStartContainers\\\"}\""
    ":{\".\":{},\"f:lastProbeTime\":{},\"f:lastTransitionTime\":{},\"f:status\":{},\"f:type\""
    ":{}},\"k:{\\\"type\\\":\\\"Ready\\\"}\":{\".\":{},\"f:lastProbeTime\":{},\"f:lastTransit"
    "ionTime\":{},\"f:status\":{},\"f:type\":{}}},\"f:containerStatuses\":{},\"f:hostIP\":{},"
    "\"f:hostIPs\":{},\"f:phase\":{},\"f:podIP\":{},\"f:podIPs\":{\".\":{},\"k:{\\\"ip\\\":\\\""
    "10.244.1.23\\\"}\":{\".\":{},\"f:ip\":{}}},\"f:startTime\":{}}}}]},\"spec\":{\"volumes\""
    ":[{\"name\":\"config\",\"configMap\":{\"name\":\"web-config\",\"defaultMode\":420}},{\"n"
    "ame\":\"kube-api-access-abcde\",\"projected\":{\"sources\":[{\"serviceAccountToken\":{\""
    "expirationSeconds\":3607,\"path\":\"token\"}},{\"configMap\":{\"name\":\"kube-root-ca.cr"
    "t\",\"items\":[{\"key\":\"ca.crt\",\"path\":\"ca.crt\"}]}},{\"downwardAPI\":{\"items\":["
    "{\"path\":\"namespace\",\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":\"metadata.nam"
    "espace\"}}]}}],\"defaultMode\":420}}],\"containers\":[{\"name\":\"web\",\"image\":\"regi"
    "stry.example.com/team/web:v1.2.3\",\"ports\":[{\"name\":\"http\",\"containerPort\":8080,"
    "\"protocol\":\"TCP\"}],\"env\":[{\"name\":\"POD_NAME\",\"valueFrom\":{\"fieldRef\":{\"ap"
    "iVersion\":\"v1\",\"fieldPath\":\"metadata.name\"}}},{\"name\":\"LOG_LEVEL\",\"value\":\""
    "info\"}],\"resources\":{\"limits\":{\"cpu\":\"500m\",\"memory\":\"512Mi\"},\"requests\":"
    "{\"cpu\":\"100m\",\"memory\":\"128Mi\"}},\"volumeMounts\":[{\"name\":\"config\",\"mountP"
    "ath\":\"/etc/config\"},{\"name\":\"kube-api-access-abcde\",\"readOnly\":true,\"mountPath"
    "\":\"/var/run/secrets/kubernetes.io/serviceaccount\"}],\"readinessProbe\":{\"httpGet\":{"
    "\"path\":\"/healthz\",\"port\":8080,\"scheme\":\"HTTP\"},\"timeoutSeconds\":1,\"periodSe"
    "conds\":10,\"successThreshold\":1,\"failureThreshold\":3},\"terminationMessagePath\":\"/"
    "dev/termination-log\",\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":\"IfNotP"
    "resent\"}],\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":30,\"dnsPolicy"
    "\":\"ClusterFirst\",\"serviceAccountName\":\"default\",\"serviceAccount\":\"default\",\""
    "nodeName\":\"node-%llu\",\"securityContext\":{},\"schedulerName\":\"default-scheduler\","
    "\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"eff"
    "ect\":\"NoExecute\",\"tolerationSeconds\":300},{\"key\":\"node.kubernetes.io/unreachable"
    "\",\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300}],\"priori"
    "ty\":0,\"enableServiceLinks\":true,\"preemptionPolicy\":\"PreemptLowerPriority\"},\"stat"
    "us\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"PodReadyToStartContainers\",\"st"
    "atus\":\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":\"2024-05-01T12:00:08Z\"},"
    "{\"type\":\"Initialized\",\"status\":\"True\",\"lastProbeTime\":null,\"lastTransitionTim"
    "e\":\"2024-05-01T12:00:08Z\"},{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":"
    "null,\"lastTransitionTime\":\"2024-05-01T12:00:08Z\"},{\"type\":\"ContainersReady\",\"st"
    "atus\":\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":\"2024-05-01T12:00:08Z\"},"
    "{\"type\":\"PodScheduled\",\"status\":\"True\",\"lastProbeTime\":null,\"lastTransitionTi"
    "me\":\"2024-05-01T12:00:08Z\"}],\"hostIP\":\"10.0.0.5\",\"hostIPs\":[{\"ip\":\"10.0.0.5\""
    "}],\"podIP\":\"10.244.1.23\",\"podIPs\":[{\"ip\":\"10.244.1.23\"}],\"startTime\":\"2024-"
    "05-01T12:00:00Z\",\"containerStatuses\":[{\"name\":\"web\",\"state\":{\"running\":{\"sta"
    "rtedAt\":\"2024-05-01T12:00:05Z\"}},\"lastState\":{},\"ready\":true,\"restartCount\":0,\""
    "image\":\"registry.example.com/team/web:v1.2.3\",\"imageID\":\"registry.example.com/team"
    "/web@sha256:abababababababababababababababababababababababababababababababab\",\"contain"
    "erID\":\"containerd://cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd\""
    ",\"started\":true}],\"qosClass\":\"Burstable\"}}";

static const char cm_fmt[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-%05llu\","
    "\"namespace\":\"%s\",\"labels\":{\"app\":\"seed\",\"tier\":\"config\"}},\"data\":{"
    "\"LOG_LEVEL\":\"info\",\"index\":\"%llu\",\"app.properties\":\"server.port=8080\\n"
    "cache.size=512\\nfeature.flags=a,b,c\\n\"}}";

static const char secret_fmt[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"secret-%05llu\","
    "\"namespace\":\"%s\",\"labels\":{\"app\":\"seed\"}},\"type\":\"Opaque\",\"data\":{"
    "\"username\":\"YWRtaW4=\",\"password\":\"czNjcjN0LSVsbHU=\"}}";

static const char pv_fmt[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolume\",\"metadata\":{\"name\":\"pv-%05llu\","
    "\"labels\":{\"app\":\"seed\",\"type\":\"local\"}},\"spec\":{\"capacity\":{\"storage\":"
    "\"10Gi\"},\"accessModes\":[\"ReadWriteOnce\"],\"persistentVolumeReclaimPolicy\":\"Retain\","
    "\"storageClassName\":\"standard\",\"volumeMode\":\"Filesystem\",\"hostPath\":{\"path\":"
    "\"/data/pv-%05llu\",\"type\":\"\"}},\"status\":{\"phase\":\"Available\"}}";

static const char ns_fmt[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\",\"labels\":{"
    "\"kubernetes.io/metadata.name\":\"%s\"}},\"spec\":{\"finalizers\":[\"kubernetes\"]}}";

static bool builtin_ns(const char *ns)
{
    return !strcmp(ns, "default") || !strcmp(ns, "kube-system") || !strcmp(ns, "kube-public");
}

/* Is ns one of the spread namespaces ns-0 … ns-{k-1}? */
static bool spread_ns(const char *ns, unsigned long long k)
{
    if (strncmp(ns, "ns-", 3) || !ns[3] || (ns[3] == '0' && ns[4]))
        return false;
    char *e;
    errno = 0;
    unsigned long long v = strtoull(ns + 3, &e, 10);
    return !*e && !errno && ns[3] >= '0' && ns[3] <= '9' && v < k;
}

static bool valid_ns(const char *s, size_t n)
{
    if (n == 0 || n > NS_NAME_MAX || s[0] == '-' || s[n - 1] == '-')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return false;
    return true;
}

/* Parse one "KIND=N[:ns=NAME]" of len bytes. */
static int parse_part(const char *s, size_t len, part *p, kc_error *err)
{
    const char *eq = memchr(s, '=', len);
    if (!eq)
        return kc_error_set(err, KC_EINVAL, "seed spec: '%.*s' is not KIND=COUNT", (int)len, s);
    size_t kl = (size_t)(eq - s);
    bool found = false;
    for (size_t i = 0; i < KC__ARRAY_LEN(kinds); i++)
        if (strlen(kinds[i].name) == kl && !strncmp(s, kinds[i].name, kl)) {
            p->kind = kinds[i].kind;
            found = true;
        }
    if (!found)
        return kc_error_set(err, KC_EINVAL,
                            "seed spec: unknown kind '%.*s' (pods, configmaps, secrets, "
                            "persistentvolumes, namespaces)",
                            (int)kl, s);
    const char *num = eq + 1, *end = s + len;
    const char *colon = memchr(num, ':', (size_t)(end - num));
    const char *nend = colon ? colon : end;
    char buf[24];
    size_t nl = (size_t)(nend - num);
    if (nl == 0 || nl >= sizeof buf)
        return kc_error_set(err, KC_EINVAL, "seed spec: bad count in '%.*s'", (int)len, s);
    memcpy(buf, num, nl);
    buf[nl] = '\0';
    char *e;
    errno = 0;
    unsigned long long n = strtoull(buf, &e, 10);
    if (*e || errno || buf[0] == '-' || buf[0] == '+')
        return kc_error_set(err, KC_EINVAL, "seed spec: bad count in '%.*s'", (int)len, s);
    if (n > (p->kind == G_NAMESPACES ? MAX_NS : MAX_COUNT))
        return kc_error_set(err, KC_EINVAL, "seed spec: count too large in '%.*s'", (int)len, s);
    p->n = n;
    p->ns[0] = '\0';
    if (colon) {
        const char *opt = colon + 1;
        size_t ol = (size_t)(end - opt);
        if (ol < 4 || strncmp(opt, "ns=", 3) || p->kind == G_NAMESPACES || p->kind == G_PVS)
            return kc_error_set(err, KC_EINVAL,
                                "seed spec: bad option in '%.*s' (only :ns=NAME, for namespaced "
                                "kinds)",
                                (int)len, s);
        if (!valid_ns(opt + 3, ol - 3))
            return kc_error_set(err, KC_EINVAL, "seed spec: bad namespace name in '%.*s'", (int)len,
                                s);
        memcpy(p->ns, opt + 3, ol - 3);
        p->ns[ol - 3] = '\0';
    }
    return 0;
}

static int emit(char *buf, int n, kc__seed_fn fn, void *ud, kc_error *err)
{
    if (n < 0 || n >= OBJ_BUF)
        return kc_error_set(err, KC_EINVAL, "seed: object too large for the generator buffer");
    int rc = fn(ud, buf, (size_t)n);
    if (rc < 0 && err && !err->code)
        kc_error_set(err, rc, "seed: generated object rejected");
    return rc < 0 ? rc : 0;
}

static int gen_namespace(char *buf, const char *name, kc__seed_fn fn, void *ud, kc_error *err)
{
    return emit(buf, snprintf(buf, OBJ_BUF, ns_fmt, name, name), fn, ud, err);
}

/* A parsed spec: its parts, and K, the number of ns-N namespaces to spread objects over. */
typedef struct spec {
    part parts[MAX_PARTS];
    size_t np;
    unsigned long long k;
} spec;

/* Parse the whole of text into *sp before anything is generated. Errors: KC_EINVAL naming the
 * bad part. */
static int parse_spec(const char *text, spec *sp, kc_error *err)
{
    if (!text)
        return kc_error_set(err, KC_EINVAL, "seed spec: missing");
    sp->np = 0;
    for (const char *s = text; *s;) {
        const char *c = strchr(s, ',');
        size_t l = c ? (size_t)(c - s) : strlen(s);
        if (l) {
            if (sp->np == MAX_PARTS)
                return kc_error_set(err, KC_EINVAL, "seed spec: more than %d parts", MAX_PARTS);
            int rc = parse_part(s, l, &sp->parts[sp->np], err);
            if (rc)
                return rc;
            sp->np++;
        }
        s += l;
        if (*s == ',')
            s++;
    }
    if (!sp->np)
        return kc_error_set(err, KC_EINVAL, "seed spec: empty");

    bool have_k = false, have_pods = false;
    sp->k = 0;
    for (size_t i = 0; i < sp->np; i++) {
        if (sp->parts[i].kind == G_NAMESPACES) {
            sp->k = sp->parts[i].n; /* the last one wins */
            have_k = true;
        }
        have_pods |= sp->parts[i].kind == G_PODS && !sp->parts[i].ns[0];
    }
    if (!have_k && have_pods)
        sp->k = DEFAULT_NS;
    return 0;
}

int kc_server_seed_spec_check(const char *text, kc_error *err)
{
    spec sp;
    return parse_spec(text, &sp, err);
}

int kc__seed_generate(const char *text, kc__seed_fn fn, void *ud, kc_error *err)
{
    spec sp;
    int prc = parse_spec(text, &sp, err);
    if (prc)
        return prc;
    const part *parts = sp.parts;
    size_t np = sp.np;
    unsigned long long k = sp.k;

    char *buf = malloc(OBJ_BUF);
    if (!buf)
        return kc_error_set(err, KC_ENOMEM, "seed: out of memory");
    char name[32];
    int rc = 0;
    for (unsigned long long i = 0; i < k && !rc; i++) {
        snprintf(name, sizeof name, "ns-%llu", i);
        rc = gen_namespace(buf, name, fn, ud, err);
    }
    /* Namespaces named by :ns= options, each once. */
    for (size_t i = 0; i < np && !rc; i++) {
        const char *ns = parts[i].ns;
        bool seen = !*ns || builtin_ns(ns) || spread_ns(ns, k);
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(parts[j].ns, ns);
        if (!seen)
            rc = gen_namespace(buf, ns, fn, ud, err);
    }
    for (size_t pi = 0; pi < np && !rc; pi++) {
        const part *p = &parts[pi];
        if (p->kind == G_NAMESPACES)
            continue;
        for (unsigned long long i = 0; i < p->n && !rc; i++) {
            const char *ns = p->ns;
            char spread[32];
            if (!*ns) {
                if (k) {
                    snprintf(spread, sizeof spread, "ns-%llu", i % k);
                    ns = spread;
                } else {
                    ns = "default";
                }
            }
            int n = 0;
            switch (p->kind) {
            case G_PODS:
                n = snprintf(buf, OBJ_BUF, pod_fmt, i, ns, i % 5000);
                break;
            case G_CONFIGMAPS:
                n = snprintf(buf, OBJ_BUF, cm_fmt, i, ns, i);
                break;
            case G_SECRETS:
                n = snprintf(buf, OBJ_BUF, secret_fmt, i, ns);
                break;
            case G_PVS:
                n = snprintf(buf, OBJ_BUF, pv_fmt, i, i);
                break;
            case G_NAMESPACES:
                break;
            }
            rc = emit(buf, n, fn, ud, err);
        }
    }
    free(buf);
    return rc;
}
