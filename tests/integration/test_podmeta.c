/*
 * test_podmeta — kc_podmeta (kcache/podmeta.h) against the in-process API server: readiness only
 * once both informers synced, node scoping (RB2, CA1), every lookup kind with containerd://,
 * cri-o://, docker:// and bare ids (CA2, CI1, CI2), a label change visible after its watch event
 * (CA3), a deleted pod found as a tombstone until its grace ends and the fd wakes the agent at
 * expiry (DP4), a same-name re-creation told apart by container id and uid (DP5, CA6), the
 * not-yet-seen wait (woken by the pod's arrival; KC_ENOTFOUND after the bound), and lookups that
 * keep working across a relist after 410 Gone and a server restart (informer-semantics).
 * Waits are on kc_podmeta_fd or the lookup's own wait, bounded; never sleeps.
 */
#include "kc_test.h"
#include "kcache/client.h"
#include "kcache/config.h"
#include "kcache/podmeta.h"
#include "kcache/server.h"

#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

static const kc_gvr PODS = {"", "v1", "pods"};
static const kc_gvr NSS = {"", "v1", "namespaces"};

typedef struct fx {
    kc_server *srv;
    kc_config *cfg;
    kc_client *client;
    kc_podmeta *pm;
} fx;

static void up(fx *f, const kc_podmeta_opts *po)
{
    memset(f, 0, sizeof *f);
    kc_server_opts o = {.bookmark_interval_ms = 200};
    f->srv = kc_test_server_start(&o);
    assert_non_null(f->srv);
    kc_error e = KC_ERROR_INIT;
    KC_TEST_RC(kc_config_from_url(kc_server_url(f->srv), NULL, NULL, &f->cfg, &e), 0, &e);
    kc_client_opts co = {.qps = -1, .max_retries = -1};
    KC_TEST_RC(kc_client_new(f->cfg, &co, &f->client, &e), 0, &e);
    const char *ns =
        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team\","
        "\"labels\":{\"owner\":\"ops\"}}}";
    KC_TEST_RC(kc_client_create(f->client, &NSS, NULL, ns, strlen(ns), NULL, NULL, &e), 0, &e);
    kc_podmeta_opts d = {.node_name = "n1"};
    KC_TEST_RC(kc_podmeta_new(f->client, po ? po : &d, &f->pm, &e), 0, &e);
}

static void start(fx *f)
{
    kc_error e = KC_ERROR_INIT;
    assert_false(kc_podmeta_ready(f->pm)); /* not synced yet */
    KC_TEST_RC(kc_podmeta_start(f->pm, &e), 0, &e);
    KC_TEST_RC(kc_podmeta_wait_ready(f->pm, 10000, &e), 0, &e);
    assert_true(kc_podmeta_ready(f->pm));
}

static void down(fx *f)
{
    kc_podmeta_free(f->pm);
    kc_client_free(f->client);
    kc_config_unref(f->cfg);
    kc_server_free(f->srv);
}

/* Create a pod on node with label app, then set its container statuses (ids "" = none). Returns
 * the uid in uid (64 bytes). */
static void pod(fx *f, const char *name, const char *node, const char *app, const char *cid0,
                const char *cid1, char *uid)
{
    char body[2048];
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
             "\"team\",\"labels\":{\"app\":\"%s\"}},\"spec\":{\"nodeName\":\"%s\",\"containers\":["
             "{\"name\":\"app\",\"image\":\"nginx\"},{\"name\":\"side\",\"image\":\"envoy\"}]}}",
             name, app, node);
    kc_obj *o = NULL;
    kc_error e = KC_ERROR_INIT;
    KC_TEST_RC(kc_client_create(f->client, &PODS, "team", body, strlen(body), NULL, &o, &e), 0, &e);
    if (uid)
        snprintf(uid, 64, "%s", kc_obj_uid(o));
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
             "\"team\",\"resourceVersion\":\"%s\",\"labels\":{\"app\":\"%s\"}},\"spec\":{"
             "\"nodeName\":\"%s\",\"containers\":[{\"name\":\"app\",\"image\":\"nginx\"},{\"name\":"
             "\"side\",\"image\":\"envoy\"}]},\"status\":{\"hostIP\":\"10.0.0.1\",\"podIP\":"
             "\"10.1.0.7\",\"containerStatuses\":[{\"name\":\"app\",\"image\":\"nginx:1\","
             "\"imageID\":\"docker-pullable://nginx@sha256:aa\",\"containerID\":\"%s\",\"ready\":"
             "true,\"restartCount\":0},{\"name\":\"side\",\"image\":\"envoy\",\"imageID\":\"e\","
             "\"containerID\":\"%s\",\"ready\":true,\"restartCount\":0}]}}",
             name, kc_obj_resource_version(o), app, node, cid0, cid1);
    kc_obj_unref(o);
    KC_TEST_RC(
        kc_client_update_status(f->client, &PODS, "team", body, strlen(body), NULL, NULL, &e), 0,
        &e);
}

static int find(fx *f, const char *name, const char *uid, const char *cid, int64_t wait,
                kc_podmeta_result *r)
{
    kc_podmeta_query q = {
        .ns = name ? "team" : NULL, .name = name, .uid = uid, .container_id = cid, .wait_ms = wait};
    return kc_podmeta_lookup(f->pm, &q, r, NULL);
}

typedef bool (*cond_fn)(fx *f, const void *arg);

/* Wait on kc_podmeta_fd until cond holds (bounded: 10 s). */
static bool wait_for(fx *f, cond_fn cond, const void *arg)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (cond(f, arg))
            return true;
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        long left = 10000 - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
        if (left <= 0)
            return false;
        struct pollfd p = {kc_podmeta_fd(f->pm), POLLIN, 0};
        if (poll(&p, 1, (int)left) == 1)
            kc_podmeta_fd_drain(f->pm);
    }
}

/* The pod name has label app = want (arg: {name, want}); deleted state as asked. */
typedef struct lbl {
    const char *name, *app;
    int deleted; /* -1 any */
    int gone;    /* 1: want KC_ENOTFOUND */
} lbl;

static bool has(fx *f, const void *arg)
{
    const lbl *l = arg;
    kc_podmeta_result r;
    int rc = find(f, l->name, NULL, NULL, -1, &r);
    if (l->gone) {
        kc_podmeta_result_clear(&r);
        return rc == KC_ENOTFOUND;
    }
    if (rc)
        return false;
    const char *app = kc_obj_label(kc_podmeta_pod_obj(r.pod), "app");
    bool ok = app && strcmp(app, l->app) == 0 &&
              (l->deleted < 0 || kc_podmeta_pod_deleted(r.pod) == (l->deleted == 1));
    kc_podmeta_result_clear(&r);
    return ok;
}

#define ID_A "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
#define ID_B "1111111111111111111111111111111111111111111111111111111111111111"
#define ID_C "2222222222222222222222222222222222222222222222222222222222222222"

static void test_podmeta_lookups(void **state)
{
    (void)state;
    fx f;
    up(&f, NULL);
    char uid[64];
    pod(&f, "web-0", "n1", "web", "containerd://" ID_A, "cri-o://" ID_B, uid);
    pod(&f, "db-0", "n1", "db", "docker://" ID_C, "", NULL);
    pod(&f, "other-0", "n2", "other", "containerd://3333", "", NULL); /* another node */
    start(&f);
    kc_podmeta_result r;
    KC_TEST_RC(find(&f, "web-0", NULL, NULL, 5000, &r), 0, NULL);
    const kc_obj *o = kc_podmeta_pod_obj(r.pod);
    assert_string_equal(kc_obj_uid(o), uid);
    assert_non_null(r.ns);
    assert_string_equal(kc_obj_label(kc_podmeta_ns_obj(r.ns), "owner"), "ops");
    const char *ip = NULL;
    size_t n = 0;
    assert_int_equal(kc_obj_get_raw(o, "/status/podIP", &ip, &n, NULL), 0);
    assert_int_equal(kc_obj_get_raw(o, "/spec/containers", &ip, &n, NULL), KC_ENOTFOUND);
    kc_podmeta_result_clear(&r);
    /* wait until the statuses are in (the status update's event) */
    lbl l = {"db-0", "db", 0, 0};
    assert_true(wait_for(&f, has, &l));
    const char *ids[] = {"containerd://" ID_A, ID_A, "cri-o://" ID_B, ID_B, "docker://" ID_C, ID_C};
    const char *names[] = {"web-0", "web-0", "web-0", "web-0", "db-0", "db-0"};
    for (int i = 0; i < 6; i++) {
        int rc = KC_ENOTFOUND;
        for (int k = 0; k < 100 && rc == KC_ENOTFOUND; k++) /* bounded: each waits for a change */
            rc = find(&f, NULL, NULL, ids[i], 100, &r);
        KC_TEST_RC(rc, 0, NULL);
        assert_string_equal(kc_obj_name(kc_podmeta_pod_obj(r.pod)), names[i]);
        assert_int_equal(r.container, i == 2 || i == 3 ? 1 : 0);
        kc_podmeta_result_clear(&r);
    }
    KC_TEST_RC(find(&f, NULL, uid, NULL, -1, &r), 0, NULL);
    assert_string_equal(kc_obj_name(kc_podmeta_pod_obj(r.pod)), "web-0");
    kc_podmeta_result_clear(&r);
    /* node scoping: the pod on n2 is not cached */
    assert_int_equal(find(&f, "other-0", NULL, NULL, -1, &r), KC_ENOTFOUND);
    /* CA3: a label change is seen after its watch event */
    kc_error e = KC_ERROR_INIT;
    const char *patch = "{\"metadata\":{\"labels\":{\"app\":\"web2\"}}}";
    KC_TEST_RC(kc_client_patch(f.client, &PODS, "team", "web-0", KC_PATCH_MERGE, patch,
                               strlen(patch), NULL, NULL, &e),
               0, &e);
    lbl l2 = {"web-0", "web2", 0, 0};
    assert_true(wait_for(&f, has, &l2));
    char *m = kc_podmeta_metrics_render(f.pm);
    assert_non_null(strstr(m, "kcache_podmeta_pods 2\n"));
    free(m);
    down(&f);
}

/* DP4: the deleted pod is a tombstone until the grace ends; the fd wakes at expiry. DP5/CA6:
 * recreated under the same name, the old container id still names the old pod. */
static void test_podmeta_tombstones(void **state)
{
    (void)state;
    fx f;
    kc_podmeta_opts o = {.node_name = "n1", .deleted_grace_ms = 1500};
    up(&f, &o);
    start(&f);
    char old_uid[64], new_uid[64];
    pod(&f, "job-0", "n1", "v1", "containerd://" ID_A, "", old_uid);
    lbl live = {"job-0", "v1", 0, 0};
    assert_true(wait_for(&f, has, &live));
    kc_error e = KC_ERROR_INIT;
    kc_delete_opts dopt = {.has_grace_period = true, .grace_period_s = 0};
    KC_TEST_RC(kc_client_delete(f.client, &PODS, "team", "job-0", &dopt, NULL, &e), 0, &e);
    lbl tomb = {"job-0", "v1", 1, 0};
    assert_true(wait_for(&f, has, &tomb));
    pod(&f, "job-0", "n1", "v2", "containerd://" ID_B, "", new_uid);
    lbl live2 = {"job-0", "v2", 0, 0};
    assert_true(wait_for(&f, has, &live2));
    kc_podmeta_result r;
    KC_TEST_RC(find(&f, NULL, NULL, ID_A, -1, &r), 0, NULL);
    assert_true(kc_podmeta_pod_deleted(r.pod));
    assert_string_equal(kc_obj_uid(kc_podmeta_pod_obj(r.pod)), old_uid);
    kc_podmeta_result_clear(&r);
    KC_TEST_RC(find(&f, "job-0", old_uid, NULL, -1, &r), 0, NULL);
    assert_true(kc_podmeta_pod_deleted(r.pod));
    kc_podmeta_result_clear(&r);
    KC_TEST_RC(find(&f, "job-0", new_uid, NULL, -1, &r), 0, NULL);
    assert_false(kc_podmeta_pod_deleted(r.pod));
    kc_podmeta_result_clear(&r);
    /* the grace ends: the keeper expires the tombstone and the fd wakes us */
    KC_TEST_RC(kc_client_delete(f.client, &PODS, "team", "job-0", &dopt, NULL, &e), 0, &e);
    lbl gone = {"job-0", "", -1, 1};
    assert_true(wait_for(&f, has, &gone));
    assert_int_equal(find(&f, NULL, NULL, ID_A, -1, &r), KC_ENOTFOUND);
    kc_podmeta_stats s;
    kc_podmeta_get_stats(f.pm, &s);
    assert_int_equal(s.tombstones, 0);
    down(&f);
}

static void *create_later(void *arg)
{
    fx *f = arg;
    pod(f, "late-0", "n1", "late", "containerd://" ID_C, "", NULL);
    return NULL;
}

/* The not-yet-seen wait: a lookup started before the pod exists returns it once its event
 * arrives; an unknown pod is KC_ENOTFOUND after the bound. */
static void test_podmeta_not_seen_wait(void **state)
{
    (void)state;
    fx f;
    up(&f, NULL);
    start(&f);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, create_later, &f), 0);
    kc_podmeta_result r;
    KC_TEST_RC(find(&f, "late-0", NULL, NULL, 10000, &r), 0, NULL);
    assert_string_equal(kc_obj_label(kc_podmeta_pod_obj(r.pod), "app"), "late");
    kc_podmeta_result_clear(&r);
    pthread_join(th, NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(find(&f, "never", NULL, NULL, 0, &r), KC_ENOTFOUND); /* default 100 ms */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    assert_true(ms >= 95); /* it did wait for its bound */
    assert_int_equal(find(&f, "never", NULL, NULL, -1, &r), KC_ENOTFOUND);
    kc_podmeta_stats s;
    kc_podmeta_get_stats(f.pm, &s);
    assert_true(s.waits >= 1);
    assert_int_equal(s.misses, 2);
    down(&f);
}

/* A relist after 410 Gone and a server restart: lookups keep answering, later pods arrive. */
static void test_podmeta_relist_restart(void **state)
{
    (void)state;
    fx f;
    up(&f, NULL);
    pod(&f, "keep-0", "n1", "k", "containerd://" ID_A, "", NULL);
    start(&f);
    lbl keep = {"keep-0", "k", 0, 0};
    assert_true(wait_for(&f, has, &keep));
    assert_int_equal(kc_server_compact(f.srv), 0);
    kc_error e = KC_ERROR_INIT;
    KC_TEST_RC(kc_server_restart(f.srv, KC_SERVER_RESTART_RESTORE, &e), 0, &e);
    assert_true(has(&f, &keep)); /* still answered from the cache meanwhile */
    pod(&f, "after-0", "n1", "a", "containerd://" ID_B, "", NULL);
    lbl after = {"after-0", "a", 0, 0};
    assert_true(wait_for(&f, has, &after));
    assert_true(has(&f, &keep));
    KC_TEST_RC(kc_podmeta_wait_ready(f.pm, 10000, &e), 0, &e);
    kc_podmeta_stop(f.pm);
    assert_true(has(&f, &keep)); /* stopped: lookups still answer */
    assert_int_equal(kc_podmeta_wait_ready(f.pm, 0, &e) == KC_ESTOPPED || kc_podmeta_ready(f.pm),
                     true);
    kc_error_clear(&e);
    down(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_podmeta_lookups),
        cmocka_unit_test(test_podmeta_tombstones),
        cmocka_unit_test(test_podmeta_not_seen_wait),
        cmocka_unit_test(test_podmeta_relist_restart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
