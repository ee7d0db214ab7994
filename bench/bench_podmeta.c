/*
 * bench_podmeta — the node agent cache (kcache/podmeta.h): heap per cached pod, and lookup
 * latency by ns/name, uid and container id, single-threaded and with 2 reader threads while the
 * writer churns.
 *
 * Usage: bench_podmeta [N]   (N pods, default 1000; a node holds ~110, the figure is per pod)
 *
 * Workload: a realistic Pod (~7 KB compact: 10 labels, 4 annotations, an owner, 2 containers with
 * env, ports, probes and resources, 2 container statuses, conditions, managedFields), decoded with
 * the cache's own projection (kc__pm_pod_keep: metadata name, namespace, uid, labels,
 * annotations, ownerReferences; nodeName, podIP, hostIP, the statuses' name, image, imageID,
 * containerID) and fed to the cache's writer directly (no server: the figures are the cache's, not
 * the network's).
 *
 * Each pod goes through the cache's own transform (kc__pm_transform: the identity object with the
 * pod's record, pm_rec.c) and writer, as the Pod informer hands it over.
 * Heap per pod = (kc_podmeta_stats.heap_bytes: entries + their objects with the records + the key
 * dictionary + index tables) / N, bytes asked of malloc, beside the unprojected kc_obj_heap_size
 * of the same Pod for comparison; the same with every key made unique to its pod (the key
 * dictionary's worst case: nothing shared);
 * and what malloc's in-use count (mallinfo2 uordblks) grew by during the fill / N: the same plus
 * the allocator's chunk headers and rounding and the writer's arrays.
 * Lookup latency: batches of 1000 lookups timed with CLOCK_MONOTONIC, median of 51 batches, in
 * ns per lookup; "churn" runs 2 reader threads while the writer re-adds pods (an update per
 * pod, each publishing a new index) as fast as it can.
 *
 * Watch lag: the time from a pod's creation (kc_client_create returned) to the cache answering
 * for it, through the in-process API server on loopback (median and max of 50).
 *
 * Output: human-readable lines, plus `BENCH <metric> <value> <unit>` lines.
 */
#include "nodeagent/internal.h"

#include <kcache/client.h>
#include <kcache/config.h>
#include <kcache/decode.h>
#include <kcache/server.h>

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char POD_FMT[] =
    "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"checkout-7d9f8c6b5-%05u\","
    "\"generateName\":\"checkout-7d9f8c6b5-\",\"namespace\":\"shop\",\"uid\":"
    "\"3f2b1c9e-8a7d-4e6f-9b0a-%012u\",\"resourceVersion\":\"%u\",\"creationTimestamp\":"
    "\"2024-05-01T12:00:00Z\",\"labels\":{\"app\":\"checkout\",\"app.kubernetes.io/name\":"
    "\"checkout\",\"app.kubernetes.io/instance\":\"checkout-prod\",\"app.kubernetes.io/version\":"
    "\"2.14.1\",\"app.kubernetes.io/component\":\"api\",\"app.kubernetes.io/part-of\":\"shop\","
    "\"app.kubernetes.io/managed-by\":\"Helm\",\"pod-template-hash\":\"7d9f8c6b5\",\"team\":"
    "\"payments\",\"env\":\"prod\"},\"annotations\":{\"kubectl.kubernetes.io/restartedAt\":"
    "\"2024-05-01T11:59:00Z\",\"prometheus.io/scrape\":\"true\",\"prometheus.io/port\":\"9090\","
    "\"checksum/config\":\"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\"},"
    "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":"
    "\"checkout-7d9f8c6b5\",\"uid\":\"aa11bb22-cc33-dd44-ee55-ff6677889900\",\"controller\":true,"
    "\"blockOwnerDeletion\":true}],\"managedFields\":[{\"manager\":\"kube-controller-manager\","
    "\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2024-05-01T12:00:00Z\","
    "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{},"
    "\"f:team\":{},\"f:env\":{}}},\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"api\\\"}\":{"
    "\".\":{},\"f:image\":{},\"f:name\":{},\"f:ports\":{}}}}}},{\"manager\":\"kubelet\","
    "\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2024-05-01T12:00:05Z\","
    "\"fieldsType\":\"FieldsV1\",\"subresource\":\"status\",\"fieldsV1\":{\"f:status\":{"
    "\"f:conditions\":{},\"f:containerStatuses\":{},\"f:hostIP\":{},\"f:phase\":{},\"f:podIP\":{},"
    "\"f:podIPs\":{},\"f:startTime\":{}}}}]},\"spec\":{\"nodeName\":\"node-1\",\"containers\":[{"
    "\"name\":\"api\",\"image\":\"registry.example.com/shop/checkout:2.14.1\",\"ports\":[{"
    "\"name\":\"http\",\"containerPort\":8080,\"protocol\":\"TCP\"},{\"name\":\"metrics\","
    "\"containerPort\":9090,\"protocol\":\"TCP\"}],\"env\":[{\"name\":\"POD_NAME\",\"valueFrom\":{"
    "\"fieldRef\":{\"fieldPath\":\"metadata.name\"}}},{\"name\":\"LOG_LEVEL\",\"value\":\"info\"},"
    "{\"name\":\"DB_HOST\",\"value\":\"postgres.shop.svc\"}],\"resources\":{\"limits\":{\"cpu\":"
    "\"2\",\"memory\":\"1Gi\"},\"requests\":{\"cpu\":\"500m\",\"memory\":\"512Mi\"}},"
    "\"readinessProbe\":{\"httpGet\":{\"path\":\"/healthz\",\"port\":8080,\"scheme\":\"HTTP\"},"
    "\"periodSeconds\":10,\"timeoutSeconds\":1,\"successThreshold\":1,\"failureThreshold\":3},"
    "\"volumeMounts\":[{\"name\":\"config\",\"mountPath\":\"/etc/config\"},{\"name\":"
    "\"kube-api-access-x7k2p\",\"readOnly\":true,\"mountPath\":"
    "\"/var/run/secrets/kubernetes.io/serviceaccount\"}],\"terminationMessagePath\":"
    "\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":"
    "\"IfNotPresent\"},{\"name\":\"envoy\",\"image\":\"envoyproxy/envoy:v1.29.1\",\"ports\":[{"
    "\"containerPort\":15001,\"protocol\":\"TCP\"}],\"resources\":{\"requests\":{\"cpu\":\"100m\","
    "\"memory\":\"128Mi\"}},\"terminationMessagePath\":\"/dev/termination-log\","
    "\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":\"IfNotPresent\"}],\"volumes\":[{"
    "\"name\":\"config\",\"configMap\":{\"name\":\"checkout-config\",\"defaultMode\":420}}],"
    "\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":"
    "\"ClusterFirst\",\"serviceAccountName\":\"checkout\",\"schedulerName\":\"default-scheduler\","
    "\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\","
    "\"effect\":\"NoExecute\",\"tolerationSeconds\":300}],\"priority\":0,\"enableServiceLinks\":"
    "true},\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Initialized\",\"status\":"
    "\"True\",\"lastTransitionTime\":\"2024-05-01T12:00:01Z\"},{\"type\":\"Ready\",\"status\":"
    "\"True\",\"lastTransitionTime\":\"2024-05-01T12:00:05Z\"},{\"type\":\"ContainersReady\","
    "\"status\":\"True\",\"lastTransitionTime\":\"2024-05-01T12:00:05Z\"},{\"type\":"
    "\"PodScheduled\",\"status\":\"True\",\"lastTransitionTime\":\"2024-05-01T12:00:00Z\"}],"
    "\"hostIP\":\"10.0.3.17\",\"podIP\":\"10.244.3.%u\",\"podIPs\":[{\"ip\":\"10.244.3.%u\"}],"
    "\"startTime\":\"2024-05-01T12:00:00Z\",\"containerStatuses\":[{\"name\":\"api\",\"state\":{"
    "\"running\":{\"startedAt\":\"2024-05-01T12:00:03Z\"}},\"lastState\":{},\"ready\":true,"
    "\"restartCount\":0,\"image\":\"registry.example.com/shop/checkout:2.14.1\",\"imageID\":"
    "\"registry.example.com/shop/checkout@sha256:"
    "5d41402abc4b2a76b9719d911017c592b9c7c6e1f0b8f0e8f4a0c2d9e7b6a5f4\",\"containerID\":"
    "\"containerd://%064u\",\"started\":true},{\"name\":\"envoy\",\"state\":{\"running\":{"
    "\"startedAt\":\"2024-05-01T12:00:02Z\"}},\"lastState\":{},\"ready\":true,\"restartCount\":0,"
    "\"image\":\"docker.io/envoyproxy/envoy:v1.29.1\",\"imageID\":\"docker.io/envoyproxy/envoy@"
    "sha256:7c6e1f0b8f0e8f4a0c2d9e7b6a5f45d41402abc4b2a76b9719d911017c592b9\",\"containerID\":"
    "\"containerd://%064u\",\"started\":true}],\"qosClass\":\"Burstable\"}}";

#define KEEP kc__pm_pod_keep /* the cache's own projection (src/nodeagent/podmeta.c) */

static unsigned n_pods = 1000;

/* The Pod's label and annotation keys, for the variant where each pod has keys of its own. */
static const char *const KEYS[] = {"app",
                                   "app.kubernetes.io/name",
                                   "app.kubernetes.io/instance",
                                   "app.kubernetes.io/version",
                                   "app.kubernetes.io/component",
                                   "app.kubernetes.io/part-of",
                                   "app.kubernetes.io/managed-by",
                                   "pod-template-hash",
                                   "team",
                                   "env",
                                   "kubectl.kubernetes.io/restartedAt",
                                   "prometheus.io/scrape",
                                   "prometheus.io/port",
                                   "checksum/config",
                                   NULL};

/* Pod i; unique_keys: every label and annotation key suffixed "-<i>" (no key shared by two
 * pods: the key dictionary's worst case). */
static kc_obj *mkpod_keys(unsigned i, unsigned rv, const char *const *keep, bool unique_keys)
{
    char buf[16384], out[16384];
    int n = snprintf(buf, sizeof buf, POD_FMT, i, i, rv, i % 250, i % 250, 2 * i, 2 * i + 1);
    if (unique_keys) { /* "key": → "key-<i>": (the managedFields' "f:app" are not keys) */
        size_t o = 0;
        for (int at = 0; at < n;) {
            size_t kn = 0;
            for (int k = 0; KEYS[k] && !kn; k++) {
                size_t l = strlen(KEYS[k]);
                if (buf[at] == '"' && !strncmp(buf + at + 1, KEYS[k], l) &&
                    !strncmp(buf + at + 1 + l, "\":", 2))
                    kn = l;
            }
            if (kn) {
                o += (size_t)snprintf(out + o, sizeof out - o, "\"%.*s-%u", (int)kn, buf + at + 1,
                                      i);
                at += (int)kn + 1;
            } else {
                out[o++] = buf[at++];
            }
        }
        memcpy(buf, out, o);
        n = (int)o;
    }
    kc_decode_opts o = {.keep = keep};
    kc_obj *obj = NULL;
    kc_error e = KC_ERROR_INIT;
    if (kc_obj_parse(buf, (size_t)n, &o, &obj, &e)) {
        fprintf(stderr, "parse: %s\n", e.message);
        exit(1);
    }
    return obj;
}

static kc_obj *mkpod(unsigned i, unsigned rv, const char *const *keep)
{
    return mkpod_keys(i, rv, keep, false);
}

/* What the Pod informer hands the cache: the projected Pod through the cache's transform (its
 * identity object with the pod's record, pm_rec.c). */
static void feed(kc_podmeta *pm, kc_obj *o)
{
    kc_obj *t = kc__pm_transform(pm, o);
    kc__pm_pod_handlers.on_add(pm, t ? t : o);
    kc_obj_unref(t);
    kc_obj_unref(o);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median ns per lookup of kind k (0 ns/name, 1 uid, 2 container id). */
static double lookup_ns(kc_podmeta *pm, int k, unsigned seed)
{
    double t[51];
    char key[128];
    unsigned i = seed;
    for (int b = 0; b < 51; b++) {
        double t0 = now_s();
        for (int j = 0; j < 1000; j++) {
            i = (i * 1103515245u + 12345u) % n_pods;
            kc_podmeta_query q = {.wait_ms = -1};
            if (k == 0) {
                snprintf(key, sizeof key, "checkout-7d9f8c6b5-%05u", i);
                q.ns = "shop", q.name = key;
            } else if (k == 1) {
                snprintf(key, sizeof key, "3f2b1c9e-8a7d-4e6f-9b0a-%012u", i);
                q.uid = key;
            } else {
                snprintf(key, sizeof key, "containerd://%064u", 2 * i + 1);
                q.container_id = key;
            }
            kc_podmeta_result r;
            if (kc_podmeta_lookup(pm, &q, &r, NULL)) {
                fprintf(stderr, "lookup %d of %u failed\n", k, i);
                exit(1);
            }
            kc_podmeta_result_clear(&r);
        }
        t[b] = (now_s() - t0) / 1000 * 1e9;
    }
    qsort(t, 51, sizeof t[0], cmp_d);
    return t[25];
}

typedef struct rd {
    kc_podmeta *pm;
    int k;
    double ns[3];
} rd;

static void *reader(void *arg)
{
    rd *r = arg;
    for (int k = 0; k < 3; k++)
        r->ns[k] = lookup_ns(r->pm, k, (unsigned)r->k * 977);
    return NULL;
}

static _Atomic bool stop_churn;
static _Atomic unsigned long churned;

static void *churn(void *arg)
{
    kc_podmeta *pm = arg;
    unsigned rv = 5000000;
    while (!atomic_load(&stop_churn)) {
        feed(pm, mkpod(rv % n_pods, rv, KEEP));
        rv++;
        atomic_fetch_add(&churned, 1);
    }
    return NULL;
}

/* What the transform adds per Pod event: the record's build (pm_rec.c) on a projected Pod,
 * median of 21 batches of 200. */
static void record_build_cost(kc_podmeta *pm)
{
    kc_obj *proj[200];
    for (unsigned i = 0; i < 200; i++)
        proj[i] = mkpod(i, 7, KEEP);
    double t[21];
    for (int b = 0; b < 21; b++) {
        double t1 = now_s();
        for (unsigned i = 0; i < 200; i++)
            kc_obj_unref(kc__pm_transform(pm, proj[i]));
        t[b] = (now_s() - t1) / 200 * 1e9;
    }
    kc_obj *one = kc__pm_transform(pm, proj[0]);
    const kc__pm_rec *r = kc__obj_ext(one);
    size_t json_len;
    kc_obj_json(one, &json_len);
    printf("record object: %zu bytes (identity text %zu, record %zu: %u labels, %u annotations, "
           "%u owners, %u containers, strings %u, %s slots)\n",
           kc_obj_heap_size(one), json_len,
           kc_obj_heap_size(one) - (size_t)((const char *)r - (const char *)one), r->n_lab,
           r->n_ann, r->n_own, r->n_cont, r->arena_len, r->wide ? "4-byte" : "2-byte");
    printf("BENCH podmeta_record_object_bytes %zu B\n", kc_obj_heap_size(one));
    kc_obj_unref(one);
    for (unsigned i = 0; i < 200; i++)
        kc_obj_unref(proj[i]);
    qsort(t, 21, sizeof t[0], cmp_d);
    printf("BENCH podmeta_record_build_ns %.0f ns/pod\n", t[10]);
}

/* The heap per pod when no two pods share a label or annotation key (every key interned once,
 * for one pod): the dictionary's worst case. */
static void heap_unique_keys(const kc_podmeta_opts *po, kc_client *client)
{
    kc_podmeta *pm = NULL;
    if (kc_podmeta_new(client, po, &pm, NULL)) {
        fprintf(stderr, "setup failed\n");
        exit(1);
    }
    for (unsigned i = 0; i < n_pods; i++)
        feed(pm, mkpod_keys(i, 1000 + i, KEEP, true));
    kc_podmeta_stats s;
    kc_podmeta_get_stats(pm, &s);
    printf("BENCH podmeta_heap_per_pod_unique_keys %.0f B\n", (double)s.heap_bytes / n_pods);
    kc_podmeta_free(pm);
}

/* Watch lag on loopback: from kc_client_create's return to the pod being found (a lookup that
 * waits for it), through the in-process API server; 50 pods. Why kc_podmeta has no GET fallback. */
static void watch_lag(void)
{
    kc_server_opts so = {.listen = "127.0.0.1:0", .quiet = true};
    kc_server *srv = NULL;
    kc_config *cfg = NULL;
    kc_client *c = NULL;
    kc_podmeta *pm = NULL;
    kc_client_opts co = {.qps = -1};
    kc_podmeta_opts po = {.node_name = "node-1"};
    if (kc_server_new(&so, &srv, NULL) || kc_server_start(srv, NULL) ||
        kc_config_from_url(kc_server_url(srv), NULL, NULL, &cfg, NULL) ||
        kc_client_new(cfg, &co, &c, NULL) || kc_podmeta_new(c, &po, &pm, NULL) ||
        kc_podmeta_start(pm, NULL) || kc_podmeta_wait_ready(pm, 10000, NULL)) {
        fprintf(stderr, "watch lag: setup failed\n");
        exit(1);
    }
    static const kc_gvr pods = {"", "v1", "pods"};
    double lag[50], total[50];
    for (int i = 0; i < 50; i++) {
        char body[512], name[32];
        snprintf(name, sizeof name, "lag-%d", i);
        int n = snprintf(body, sizeof body,
                         "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
                         "\"namespace\":\"default\"},\"spec\":{\"nodeName\":\"node-1\","
                         "\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
                         name);
        double ts = now_s();
        if (kc_client_create(c, &pods, "default", body, (size_t)n, NULL, NULL, NULL)) {
            fprintf(stderr, "watch lag: create failed\n");
            exit(1);
        }
        double t0 = now_s();
        kc_podmeta_query q = {.ns = "default", .name = name, .wait_ms = 5000};
        kc_podmeta_result r;
        if (kc_podmeta_lookup(pm, &q, &r, NULL)) {
            fprintf(stderr, "watch lag: pod not seen\n");
            exit(1);
        }
        lag[i] = (now_s() - t0) * 1e3;
        total[i] = (now_s() - ts) * 1e3;
        kc_podmeta_result_clear(&r);
    }
    qsort(lag, 50, sizeof lag[0], cmp_d);
    printf("BENCH podmeta_watch_lag_median_ms %.3f ms\n", lag[25]);
    printf("BENCH podmeta_watch_lag_max_ms %.3f ms\n", lag[49]);
    qsort(total, 50, sizeof total[0], cmp_d);
    printf("BENCH podmeta_create_to_cached_median_ms %.3f ms\n", total[25]);
    printf("BENCH podmeta_create_to_cached_max_ms %.3f ms\n", total[49]);
    kc_podmeta_free(pm);
    kc_client_free(c);
    kc_config_unref(cfg);
    kc_server_free(srv);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        n_pods = (unsigned)strtoul(argv[1], NULL, 10);
    if (n_pods < 1)
        n_pods = 1;
    kc_config *cfg = NULL;
    kc_client *client = NULL;
    kc_podmeta *pm = NULL;
    kc_podmeta_opts po = {.node_name = "node-1", .no_namespaces = true};
    if (kc_config_from_url("http://127.0.0.1:1", NULL, NULL, &cfg, NULL) ||
        kc_client_new(cfg, NULL, &client, NULL) || kc_podmeta_new(client, &po, &pm, NULL)) {
        fprintf(stderr, "setup failed\n");
        return 1;
    }
    kc_obj *full = mkpod(0, 1, NULL), *proj = mkpod(0, 1, KEEP);
    size_t text_len;
    kc_obj_json(full, &text_len);
    printf("pod: %zu bytes stored unprojected (kc_obj_heap_size %zu), %zu projected\n", text_len,
           kc_obj_heap_size(full), kc_obj_heap_size(proj));
    printf("BENCH podmeta_pod_obj_unprojected_bytes %zu B\n", kc_obj_heap_size(full));
    printf("BENCH podmeta_pod_obj_projected_bytes %zu B\n", kc_obj_heap_size(proj));
    kc_obj_unref(full);
    kc_obj_unref(proj);
    for (int pass = 0; pass < 2; pass++) { /* decode cost of the projection, per pod */
        double t[21];
        for (int b = 0; b < 21; b++) {
            double t1 = now_s();
            for (unsigned i = 0; i < 200; i++)
                kc_obj_unref(mkpod(i, 7, pass ? KEEP : NULL));
            t[b] = (now_s() - t1) / 200 * 1e9;
        }
        qsort(t, 21, sizeof t[0], cmp_d);
        printf("BENCH podmeta_decode_%s_ns %.0f ns/pod\n", pass ? "projected" : "unprojected",
               t[10]);
    }

    record_build_cost(pm);
    heap_unique_keys(&po, client);
    size_t used0 = mallinfo2().uordblks;
    double t0 = now_s();
    for (unsigned i = 0; i < n_pods; i++)
        feed(pm, mkpod(i, 1000 + i, KEEP)); /* one index rebuild per pod, as per event */
    double fill = now_s() - t0;
    kc_podmeta_stats s;
    kc_podmeta_get_stats(pm, &s);
    printf("%u pods: heap %zu bytes, %.0f bytes per pod; fill %.3f s (%.1f us per event incl. "
           "parse)\n",
           n_pods, s.heap_bytes, (double)s.heap_bytes / n_pods, fill, fill / n_pods * 1e6);
    printf("BENCH podmeta_heap_per_pod %.0f B\n", (double)s.heap_bytes / n_pods);
    /* What malloc handed out meanwhile (main arena, in-use chunks with their headers and
     * rounding): the above plus allocator overhead, the writer's arrays and any snapshot not yet
     * reclaimed. */
    size_t used1 = mallinfo2().uordblks;
    double mall = used1 > used0 ? (double)(used1 - used0) / n_pods : 0;
    printf("malloc in use grew %zu bytes during the fill, %.0f per pod\n", used1 - used0, mall);
    printf("BENCH podmeta_heap_per_pod_malloc %.0f B\n", mall);

    const char *names[3] = {"name", "uid", "container_id"};
    for (int k = 0; k < 3; k++)
        printf("BENCH podmeta_lookup_%s_ns %.1f ns/op\n", names[k], lookup_ns(pm, k, 1));

    pthread_t w, r[2];
    rd rs[2] = {{pm, 1, {0}}, {pm, 2, {0}}};
    atomic_store(&stop_churn, false);
    pthread_create(&w, NULL, churn, pm);
    for (int i = 0; i < 2; i++)
        pthread_create(&r[i], NULL, reader, &rs[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(r[i], NULL);
    atomic_store(&stop_churn, true);
    pthread_join(w, NULL);
    for (int k = 0; k < 3; k++)
        printf("BENCH podmeta_lookup_%s_churn_ns %.1f ns/op\n", names[k],
               (rs[0].ns[k] + rs[1].ns[k]) / 2);
    printf("churn: %lu writer events during the 2-reader run\n", atomic_load(&churned));
    kc_podmeta_free(pm);
    kc_client_free(client);
    kc_config_unref(cfg);
    watch_lag();
    return 0;
}
