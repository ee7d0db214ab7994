/*
 * test_server_sim.c — the simulated cluster (kc_server_opts.simulate_nodes): nodes and their
 * Leases, the scheduler (nodeSelector, insufficient cpu → Unschedulable), the kubelet (Running,
 * Ready, podIP, containerd IDs), Deployments (Available with 3 Running Ready pods; a rolling
 * update with maxSurge=1/maxUnavailable=0 whose invariant is checked on every pod event of a
 * watch), StatefulSet ordering, DaemonSet one pod per node, Jobs (completions, parallelism,
 * backoffLimit with a failing pod). Waits are on conditions with bounded deadlines (a GET repeated
 * until the condition holds, or watch events); the kubelet's delays are set to a few ms.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <time.h>

#include "test_server_util.h"

#define NSP "/apis/apps/v1/namespaces/default"

static kc_server *start(unsigned nodes)
{
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.simulate_nodes = nodes;
    o.sim_lease_ms = 50;
    o.sim_pod_start_ms = 2;
    o.sim_pod_run_ms = 20;
    o.sim_pod_stop_ms = 5;
    o.controllers = KC_SERVER_CONTROLLER_GARBAGE_COLLECTOR;
    return ts_start_opts(&o);
}

/* GET path until pred holds (bounded: 20 s); the last body (caller json_decref) or NULL. */
static json_t *wait_for(kc_server *s, const char *path, bool (*pred)(json_t *, const void *),
                        const void *arg)
{
    for (int i = 0; i < 4000; i++) {
        ts_resp r;
        ts_get(s, path, &r);
        json_t *j = r.json ? json_incref(r.json) : NULL;
        ts_resp_free(&r);
        if (j && pred(j, arg))
            return j;
        json_decref(j);
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL); /* backoff between tries, not synchronisation */
    }
    return NULL;
}

static bool cond_true(json_t *obj, const void *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(ts_j(obj, "status.conditions"), i, c)
    {
        if (!strcmp(ts_s(c, "type"), type) && !strcmp(ts_s(c, "status"), "True"))
            return true;
    }
    return false;
}

static bool deploy_done(json_t *d, const void *n)
{
    long want = *(const long *)n;
    return cond_true(d, "Available") &&
           json_integer_value(ts_j(d, "status.updatedReplicas")) == want &&
           json_integer_value(ts_j(d, "status.availableReplicas")) == want &&
           json_integer_value(ts_j(d, "status.replicas")) == want &&
           json_integer_value(ts_j(d, "status.observedGeneration")) ==
               json_integer_value(ts_j(d, "metadata.generation"));
}

static bool list_len(json_t *l, const void *n)
{
    return (long)json_array_size(ts_j(l, "items")) == *(const long *)n;
}

static void post(kc_server *s, const char *path, const char *body)
{
    ts_resp r;
    assert_int_equal(ts_post(s, path, body, &r), 201);
    ts_resp_free(&r);
}

static const char *deploy_body(const char *image)
{
    static char b[1024];
    snprintf(b, sizeof(b),
             "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\"},"
             "\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},"
             "\"strategy\":{\"rollingUpdate\":{\"maxSurge\":1,\"maxUnavailable\":0}},"
             "\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":"
             "[{\"name\":\"nginx\",\"image\":\"%s\"}]}}}}",
             image);
    return b;
}

/* A 3-replica Deployment becomes Available with 3 Running, Ready pods bound to simulated nodes
 * (controller-semantics: owner references controller/blockOwnerDeletion as upstream). */
static void test_server_sim_deployment_available(void **state)
{
    (void)state;
    kc_server *s = start(3);
    assert_non_null(s);
    post(s, NSP "/deployments", deploy_body("nginx"));
    long three = 3;
    json_t *d = wait_for(s, NSP "/deployments/web", deploy_done, &three);
    assert_non_null(d);
    json_t *dann = ts_j(d, "metadata.annotations");
    assert_string_equal(
        json_string_value(json_object_get(dann, "deployment.kubernetes.io/revision")), "1");
    assert_true(cond_true(d, "Progressing"));
    assert_int_equal(json_integer_value(ts_j(d, "metadata.generation")), 1); /* as upstream */
    assert_string_equal(ts_s(d, "status.conditions.0.reason"), "MinimumReplicasAvailable");
    json_decref(d);
    ts_resp r;
    assert_int_equal(ts_get(s, "/api/v1/namespaces/default/pods", &r), 200);
    json_t *items = ts_j(r.json, "items");
    assert_int_equal(json_array_size(items), 3);
    size_t i;
    json_t *p;
    json_array_foreach(items, i, p)
    {
        assert_string_equal(ts_s(p, "status.phase"), "Running");
        assert_true(cond_true(p, "Ready"));
        assert_true(cond_true(p, "PodScheduled"));
        assert_memory_equal(ts_s(p, "spec.nodeName"), "kcache-node-", 12);
        assert_memory_equal(ts_s(p, "metadata.name"), "web-", 4);
        assert_true(strlen(ts_s(p, "status.podIP")) > 7);
        const char *cid = ts_s(p, "status.containerStatuses.0.containerID");
        assert_int_equal(strlen(cid), 13 + 64);
        assert_memory_equal(cid, "containerd://", 13);
        assert_true(json_is_true(ts_j(p, "status.containerStatuses.0.ready")));
        assert_string_equal(ts_s(p, "metadata.ownerReferences.0.kind"), "ReplicaSet");
        assert_true(json_is_true(ts_j(p, "metadata.ownerReferences.0.controller")));
        assert_true(json_is_true(ts_j(p, "metadata.ownerReferences.0.blockOwnerDeletion")));
        const char *hash = ts_s(p, "metadata.labels.pod-template-hash");
        char rs[128];
        snprintf(rs, sizeof(rs), "web-%s-", hash);
        assert_memory_equal(ts_s(p, "metadata.name"), rs, strlen(rs));
    }
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, NSP "/replicasets", &r), 200);
    assert_int_equal(json_array_size(ts_j(r.json, "items")), 1);
    json_t *rs = ts_j(r.json, "items.0");
    json_t *ann = ts_j(rs, "metadata.annotations");
    assert_string_equal(
        json_string_value(json_object_get(ann, "deployment.kubernetes.io/revision")), "1");
    assert_int_equal(json_integer_value(ts_j(rs, "status.readyReplicas")), 3);
    ts_resp_free(&r);
    /* GC of the ReplicaSet and its pods when the Deployment goes (garbage collector on) */
    ts_req(s, "DELETE", NSP "/deployments/web", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    long zero = 0;
    json_t *left = wait_for(s, "/api/v1/namespaces/default/pods", list_len, &zero);
    assert_non_null(left);
    json_decref(left);
    kc_server_free(s);
}

typedef struct podv {
    char name[128];
    bool ready, deleting;
} podv;

/* Rolling update to a new image with maxSurge=1, maxUnavailable=0: at every pod event at most 4
 * pods not being deleted exist and at least 3 of them are Ready; it ends with 3 new pods. */
static void test_server_sim_rolling_update(void **state)
{
    (void)state;
    kc_server *s = start(3);
    assert_non_null(s);
    post(s, NSP "/deployments", deploy_body("nginx"));
    long three = 3;
    json_t *d = wait_for(s, NSP "/deployments/web", deploy_done, &three);
    assert_non_null(d);
    json_decref(d);
    ts_resp r;
    assert_int_equal(ts_get(s, "/api/v1/namespaces/default/pods", &r), 200);
    char path[256];
    snprintf(path, sizeof(path), "/api/v1/namespaces/default/pods?watch=1&resourceVersion=%s",
             ts_s(r.json, "metadata.resourceVersion"));
    podv pods[64];
    size_t np = 0;
    size_t i;
    json_t *p;
    json_array_foreach(ts_j(r.json, "items"), i, p)
    {
        snprintf(pods[np].name, sizeof(pods[np].name), "%s", ts_s(p, "metadata.name"));
        pods[np].ready = true;
        pods[np++].deleting = false;
    }
    ts_resp_free(&r);
    ts_watch *w = ts_watch_start(s, path);
    ts_req(s, "PATCH", NSP "/deployments/web", "application/merge-patch+json",
           "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"nginx\",\"image\":"
           "\"nginx:1.27\"}]}}}}",
           NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    int new_ready = 0;
    for (int ev = 0; ev < 500 && new_ready < 3; ev++) {
        json_t *e = ts_watch_next_nb(w, 10000);
        assert_non_null(e);
        json_t *o = ts_j(e, "object");
        const char *name = ts_s(o, "metadata.name");
        size_t k = 0;
        while (k < np && strcmp(pods[k].name, name) != 0)
            k++;
        if (k == np && np < 64)
            snprintf(pods[np++].name, sizeof(pods[0].name), "%s", name);
        bool gone = !strcmp(ts_s(e, "type"), "DELETED");
        pods[k].deleting = gone || json_is_string(ts_j(o, "metadata.deletionTimestamp"));
        pods[k].ready = cond_true(o, "Ready");
        int live = 0, ready = 0;
        new_ready = 0;
        for (size_t q = 0; q < np; q++) {
            live += !pods[q].deleting;
            ready += !pods[q].deleting && pods[q].ready;
        }
        assert_true(live <= 4);  /* replicas + maxSurge */
        assert_true(ready >= 3); /* replicas - maxUnavailable */
        json_decref(e);
        ts_get(s, NSP "/deployments/web", &r);
        new_ready =
            deploy_done(r.json, &three) &&
                    !strcmp(ts_s(r.json, "spec.template.spec.containers.0.image"), "nginx:1.27")
                ? 3
                : 0;
        ts_resp_free(&r);
    }
    ts_watch_free(w);
    d = wait_for(s, NSP "/deployments/web", deploy_done, &three);
    assert_non_null(d);
    json_t *ann = ts_j(d, "metadata.annotations");
    assert_string_equal(
        json_string_value(json_object_get(ann, "deployment.kubernetes.io/revision")), "2");
    json_decref(d);
    kc_server_free(s);
}

/* Recreate: no pod of the new template exists while a pod of the old one is still live. */
static void test_server_sim_recreate(void **state)
{
    (void)state;
    kc_server *s = start(2);
    assert_non_null(s);
    post(s, NSP "/deployments",
         "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"r\"},"
         "\"spec\":{\"replicas\":2,\"strategy\":{\"type\":\"Recreate\"},\"selector\":{"
         "\"matchLabels\":{\"app\":\"r\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":"
         "\"r\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}}}");
    long two = 2;
    json_t *d = wait_for(s, NSP "/deployments/r", deploy_done, &two);
    assert_non_null(d);
    json_decref(d);
    ts_resp r;
    assert_int_equal(ts_get(s, "/api/v1/namespaces/default/pods", &r), 200);
    char path[256], old_hash[32];
    snprintf(path, sizeof(path), "/api/v1/namespaces/default/pods?watch=1&resourceVersion=%s",
             ts_s(r.json, "metadata.resourceVersion"));
    snprintf(old_hash, sizeof(old_hash), "%s",
             ts_s(r.json, "items.0.metadata.labels.pod-template-hash"));
    ts_resp_free(&r);
    ts_watch *w = ts_watch_start(s, path);
    ts_req(s, "PATCH", NSP "/deployments/r", "application/merge-patch+json",
           "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
           "\"nginx:2\"}]}}}}",
           NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    int old_gone = 0, new_ready = 0;
    while (new_ready < 2) {
        json_t *e = ts_watch_next_nb(w, 10000);
        assert_non_null(e);
        bool is_old = !strcmp(ts_s(e, "object.metadata.labels.pod-template-hash"), old_hash);
        if (is_old && !strcmp(ts_s(e, "type"), "DELETED"))
            old_gone++;
        if (!is_old) {
            assert_int_equal(old_gone, 2); /* created only once both old pods are gone */
            if (cond_true(ts_j(e, "object"), "Ready"))
                new_ready++;
        }
        json_decref(e);
    }
    ts_watch_free(w);
    kc_server_free(s);
}

/* revisionHistoryLimit 1: after three rollouts, the new ReplicaSet and one idle old one stay. */
static void test_server_sim_revision_history(void **state)
{
    (void)state;
    kc_server *s = start(1);
    assert_non_null(s);
    post(s, NSP "/deployments",
         "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"h\"},"
         "\"spec\":{\"replicas\":1,\"revisionHistoryLimit\":1,\"selector\":{\"matchLabels\":{"
         "\"app\":\"h\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"h\"}},\"spec\":{"
         "\"containers\":[{\"name\":\"c\",\"image\":\"nginx:0\"}]}}}}");
    long one = 1, two = 2;
    for (int v = 1; v <= 3; v++) {
        json_t *d = wait_for(s, NSP "/deployments/h", deploy_done, &one);
        assert_non_null(d);
        json_decref(d);
        char patch[256];
        snprintf(patch, sizeof(patch),
                 "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
                 "\"image\":\"nginx:%d\"}]}}}}",
                 v);
        ts_resp r;
        ts_req(s, "PATCH", NSP "/deployments/h", "application/merge-patch+json", patch, NULL, &r);
        assert_int_equal(r.status, 200);
        ts_resp_free(&r);
    }
    json_t *d = wait_for(s, NSP "/deployments/h", deploy_done, &one);
    assert_non_null(d);
    json_t *ann = ts_j(d, "metadata.annotations");
    assert_string_equal(
        json_string_value(json_object_get(ann, "deployment.kubernetes.io/revision")), "4");
    json_decref(d);
    json_t *l = wait_for(s, NSP "/replicasets", list_len, &two); /* without cleanup: 4 */
    assert_non_null(l);
    json_decref(l);
    kc_server_free(s);
}

static bool sts_ready(json_t *o, const void *n)
{
    return json_integer_value(ts_j(o, "status.readyReplicas")) == *(const long *)n;
}

/* OrderedReady: pod i appears only after pod i-1 is Ready. */
static void test_server_sim_statefulset_ordered(void **state)
{
    (void)state;
    kc_server *s = start(2);
    assert_non_null(s);
    ts_watch *w = ts_watch_start(s, "/api/v1/namespaces/default/pods?watch=1");
    post(s, NSP "/statefulsets",
         "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"db\"},"
         "\"spec\":{\"replicas\":3,\"serviceName\":\"db\",\"selector\":{\"matchLabels\":{\"app\":"
         "\"db\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"db\"}},\"spec\":{"
         "\"containers\":[{\"name\":\"c\",\"image\":\"postgres\"}]}}}}");
    bool ready[3] = {false, false, false};
    while (!ready[2]) {
        json_t *e = ts_watch_next_nb(w, 10000);
        assert_non_null(e);
        const char *name = ts_s(e, "object.metadata.name");
        assert_memory_equal(name, "db-", 3);
        int i = atoi(name + 3);
        assert_true(i >= 0 && i < 3);
        if (!strcmp(ts_s(e, "type"), "ADDED"))
            assert_true(i == 0 || ready[i - 1]);
        if (cond_true(ts_j(e, "object"), "Ready"))
            ready[i] = true;
        json_decref(e);
    }
    ts_watch_free(w);
    long three = 3;
    json_t *o = wait_for(s, NSP "/statefulsets/db", sts_ready, &three);
    assert_non_null(o);
    json_decref(o);
    /* scale to 1: db-2 goes first, db-1 only once db-2 is gone */
    ts_resp r;
    assert_int_equal(ts_get(s, "/api/v1/namespaces/default/pods", &r), 200);
    char path[256];
    snprintf(path, sizeof(path), "/api/v1/namespaces/default/pods?watch=1&resourceVersion=%s",
             ts_s(r.json, "metadata.resourceVersion"));
    ts_resp_free(&r);
    w = ts_watch_start(s, path);
    ts_req(s, "PATCH", NSP "/statefulsets/db", "application/merge-patch+json",
           "{\"spec\":{\"replicas\":1}}", NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    bool gone2 = false, gone1 = false;
    while (!gone1) {
        json_t *e = ts_watch_next_nb(w, 10000);
        assert_non_null(e);
        const char *name = ts_s(e, "object.metadata.name");
        bool del = json_is_string(ts_j(e, "object.metadata.deletionTimestamp"));
        if (!strcmp(name, "db-1") && del)
            assert_true(gone2);
        assert_string_not_equal(name, "db-0");
        if (!strcmp(ts_s(e, "type"), "DELETED")) {
            gone2 |= !strcmp(name, "db-2");
            gone1 |= !strcmp(name, "db-1");
        }
        json_decref(e);
    }
    ts_watch_free(w);
    kc_server_free(s);
}

static bool ds_ready(json_t *o, const void *n)
{
    return json_integer_value(ts_j(o, "status.numberReady")) == *(const long *)n &&
           json_integer_value(ts_j(o, "status.desiredNumberScheduled")) == *(const long *)n;
}

/* One pod per simulated node. */
static void test_server_sim_daemonset_per_node(void **state)
{
    (void)state;
    kc_server *s = start(3);
    assert_non_null(s);
    post(s, NSP "/daemonsets",
         "{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"metadata\":{\"name\":\"agent\"},"
         "\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"agent\"}},\"template\":{\"metadata\":"
         "{\"labels\":{\"app\":\"agent\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
         "\"busybox\"}]}}}}");
    long three = 3;
    json_t *o = wait_for(s, NSP "/daemonsets/agent", ds_ready, &three);
    assert_non_null(o);
    json_decref(o);
    ts_resp r;
    assert_int_equal(ts_get(s, "/api/v1/namespaces/default/pods", &r), 200);
    assert_int_equal(json_array_size(ts_j(r.json, "items")), 3);
    bool seen[3] = {false, false, false};
    size_t i;
    json_t *p;
    json_array_foreach(ts_j(r.json, "items"), i, p)
    {
        int n = atoi(ts_s(p, "spec.nodeName") + 12);
        assert_true(n >= 0 && n < 3 && !seen[n]);
        seen[n] = true;
    }
    ts_resp_free(&r);
    kc_server_free(s);
}

static const char *job_body(const char *name, int comp, int par, int backoff, int code)
{
    static char b[1024];
    snprintf(
        b, sizeof(b),
        "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\"},"
        "\"spec\":{\"completions\":%d,\"parallelism\":%d,\"backoffLimit\":%d,\"template\":{"
        "\"metadata\":{\"annotations\":{\"kcache.io/simulate-exit-code\":\"%d\"}},\"spec\":{"
        "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}}}",
        name, comp, par, backoff, code);
    return b;
}

/* completions 4, parallelism 2: never more than 2 active pods; Complete with 4 succeeded. A pod
 * that exits 1 with backoffLimit 1: Failed (BackoffLimitExceeded) after 2 failed pods. */
static void test_server_sim_job(void **state)
{
    (void)state;
    kc_server *s = start(2);
    assert_non_null(s);
    ts_watch *w = ts_watch_start(s, "/apis/batch/v1/namespaces/default/jobs?watch=1");
    post(s, "/apis/batch/v1/namespaces/default/jobs", job_body("ok", 4, 2, 6, 0));
    for (;;) {
        json_t *e = ts_watch_next_nb(w, 10000);
        assert_non_null(e);
        json_t *o = ts_j(e, "object");
        assert_true(json_integer_value(ts_j(o, "status.active")) <= 2);
        bool done = cond_true(o, "Complete");
        if (done) {
            assert_int_equal(json_integer_value(ts_j(o, "status.succeeded")), 4);
            assert_true(json_is_string(ts_j(o, "status.completionTime")));
        }
        json_decref(e);
        if (done)
            break;
    }
    ts_watch_free(w);
    post(s, "/apis/batch/v1/namespaces/default/jobs", job_body("bad", 1, 1, 1, 1));
    json_t *o = wait_for(s, "/apis/batch/v1/namespaces/default/jobs/bad", cond_true, "Failed");
    assert_non_null(o);
    assert_int_equal(json_integer_value(ts_j(o, "status.failed")), 2);
    assert_string_equal(ts_s(o, "status.conditions.1.reason"), "BackoffLimitExceeded");
    json_decref(o);
    kc_server_free(s);
}

static bool scheduled_false(json_t *o, const void *unused)
{
    (void)unused;
    size_t i;
    json_t *c;
    json_array_foreach(ts_j(o, "status.conditions"), i, c)
    {
        if (!strcmp(ts_s(c, "type"), "PodScheduled") && !strcmp(ts_s(c, "status"), "False"))
            return true;
    }
    return false;
}

static void pod(kc_server *s, const char *name, const char *extra)
{
    char b[1024];
    snprintf(b, sizeof(b),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},\"spec\":{"
             "%s\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"%s}]}}",
             name, strstr(extra, "nodeSelector") ? extra : "",
             strstr(extra, "resources") ? extra : "");
    post(s, "/api/v1/namespaces/default/pods", b);
}

/* nodeSelector picks the node; 100 cpus fit nowhere: PodScheduled False, Unschedulable. */
static void test_server_sim_scheduler(void **state)
{
    (void)state;
    kc_server *s = start(3);
    assert_non_null(s);
    pod(s, "pinned", "\"nodeSelector\":{\"kubernetes.io/hostname\":\"kcache-node-2\"},");
    pod(s, "big", ",\"resources\":{\"requests\":{\"cpu\":\"100\"}}");
    pod(s, "nowhere", "\"nodeSelector\":{\"disk\":\"ssd\"},");
    json_t *o = wait_for(s, "/api/v1/namespaces/default/pods/pinned", cond_true, "Ready");
    assert_non_null(o);
    assert_string_equal(ts_s(o, "spec.nodeName"), "kcache-node-2");
    json_decref(o);
    o = wait_for(s, "/api/v1/namespaces/default/pods/big", scheduled_false, NULL);
    assert_non_null(o);
    assert_string_equal(ts_s(o, "status.conditions.0.reason"), "Unschedulable");
    assert_non_null(strstr(ts_s(o, "status.conditions.0.message"), "3 Insufficient cpu"));
    assert_string_equal(ts_s(o, "spec.nodeName"), "");
    json_decref(o);
    o = wait_for(s, "/api/v1/namespaces/default/pods/nowhere", scheduled_false, NULL);
    assert_non_null(o);
    assert_non_null(strstr(ts_s(o, "status.conditions.0.message"), "didn't match"));
    json_decref(o);
    kc_server_free(s);
}

static bool renewed(json_t *o, const void *first)
{
    const char *t = ts_s(o, "spec.renewTime");
    return *t && strcmp(t, first) != 0;
}

/* Nodes are Ready with pods=110; their Leases are renewed. */
static void test_server_sim_nodes_leases(void **state)
{
    (void)state;
    kc_server *s = start(2);
    assert_non_null(s);
    json_t *n = wait_for(s, "/api/v1/nodes/kcache-node-1", cond_true, "Ready");
    assert_non_null(n);
    assert_string_equal(ts_s(n, "status.allocatable.pods"), "110");
    assert_string_equal(ts_s(n, "status.addresses.1.type"), "Hostname");
    json_decref(n);
    json_t *l = wait_for(s,
                         "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/"
                         "kcache-node-0",
                         renewed, "");
    assert_non_null(l);
    assert_string_equal(ts_s(l, "spec.holderIdentity"), "kcache-node-0");
    char first[64];
    snprintf(first, sizeof(first), "%s", ts_s(l, "spec.renewTime"));
    json_decref(l);
    l = wait_for(s, "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/kcache-node-0",
                 renewed, first);
    assert_non_null(l);
    json_decref(l);
    kc_server_free(s);
}

/* A restart that wipes the store: the simulation subscribes again and recreates its nodes. */
static void test_server_sim_restart_wipe(void **state)
{
    (void)state;
    kc_server *s = start(2);
    assert_non_null(s);
    json_t *n = wait_for(s, "/api/v1/nodes/kcache-node-1", cond_true, "Ready");
    assert_non_null(n);
    json_decref(n);
    assert_int_equal(kc_server_restart(s, KC_SERVER_RESTART_WIPE, NULL), 0);
    n = wait_for(s, "/api/v1/nodes/kcache-node-1", cond_true, "Ready");
    assert_non_null(n);
    json_decref(n);
    post(s, "/api/v1/namespaces/default/pods",
         "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{"
         "\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}");
    json_t *p = wait_for(s, "/api/v1/namespaces/default/pods/p", cond_true, "Ready");
    assert_non_null(p);
    json_decref(p);
    kc_server_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_sim_deployment_available),
        cmocka_unit_test(test_server_sim_rolling_update),
        cmocka_unit_test(test_server_sim_recreate),
        cmocka_unit_test(test_server_sim_revision_history),
        cmocka_unit_test(test_server_sim_statefulset_ordered),
        cmocka_unit_test(test_server_sim_daemonset_per_node),
        cmocka_unit_test(test_server_sim_job),
        cmocka_unit_test(test_server_sim_scheduler),
        cmocka_unit_test(test_server_sim_nodes_leases),
        cmocka_unit_test(test_server_sim_restart_wipe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
