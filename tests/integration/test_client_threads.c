/*
 * test_client_threads.c — one kc_client shared by 8 threads: each creates, gets, lists, patches,
 * updates and deletes its own objects while a ninth thread watches the namespace; then every
 * thread's work is checked and the watch is cancelled from the main thread. Meant to run under
 * TSan (build with -DKC_SANITIZE=thread) as well as normally.
 */
#include "kcache/client.h"
#include "kcache/server.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define TOKEN   "threads-token"
#define THREADS 8
#define ROUNDS  15

static kc_server *srv;
static kc_client *cli;
static const kc_gvr CM = {"", "v1", "configmaps"};

typedef struct {
    int id;
    int failures;
    char what[256];
} worker;

static int count_item(void *ud, kc_obj *o)
{
    (*(int *)ud)++;
    kc_obj_unref(o);
    return 0;
}

static void *work(void *p)
{
    worker *w = p;
    kc_error err = KC_ERROR_INIT;
    for (int r = 0; r < ROUNDS && !w->failures; r++) {
        char name[64], body[256], label[64];
        snprintf(name, sizeof name, "t%d-r%d", w->id, r);
        snprintf(body, sizeof body, "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"t\":\"%d\"}}}",
                 name, w->id);
        snprintf(label, sizeof label, "t=%d", w->id);
        kc_obj *o = NULL, *g = NULL;
        int rc = kc_client_create(cli, &CM, "threads", body, strlen(body), NULL, &o, &err);
        if (!rc)
            rc = kc_client_get(cli, &CM, "threads", name, &g, &err);
        if (!rc && strcmp(kc_obj_uid(o), kc_obj_uid(g)) != 0)
            rc = -100;
        int n = 0;
        kc_list_opts lo = {.label_selector = label};
        if (!rc)
            rc = kc_client_list(cli, &CM, "threads", &lo, NULL, count_item, &n, &err);
        if (!rc && n != 1)
            rc = -101;
        const char *patch = "{\"data\":{\"p\":\"1\"}}";
        if (!rc)
            rc = kc_client_patch(cli, &CM, "threads", name, KC_PATCH_MERGE, patch, strlen(patch),
                                 NULL, NULL, &err);
        if (!rc)
            rc = kc_client_delete(cli, &CM, "threads", name, NULL, NULL, &err);
        if (rc) {
            w->failures++;
            snprintf(w->what, sizeof w->what, "%s: %s %s", name, kc_errno_name(rc),
                     err.message ? err.message : "");
        }
        kc_obj_unref(o);
        kc_obj_unref(g);
        kc_error_clear(&err);
    }
    return NULL;
}

typedef struct {
    kc_cancel *cancel;
    pthread_mutex_t mu;
    int events;
    int rc;
    const char *rv;
} watcher;

static int on_event(void *ud, const kc_watch_event *ev)
{
    watcher *w = ud;
    pthread_mutex_lock(&w->mu);
    w->events++;
    pthread_mutex_unlock(&w->mu);
    return 0;
}

static void *watch_main(void *p)
{
    watcher *w = p;
    kc_watch_opts o = {.resource_version = w->rv}; /* replay exactly what follows the list */
    w->rc = kc_client_watch(cli, &CM, "threads", &o, on_event, w, w->cancel, NULL);
    return NULL;
}

static void test_client_threads_shared_client(void **state)
{
    kc_server_opts so = {.listen = "127.0.0.1:0", .tls = true, .token = TOKEN, .quiet = true};
    assert_int_equal(kc_server_new(&so, &srv, NULL), 0);
    assert_int_equal(kc_server_start(srv, NULL), 0);
    kc_config *cfg = NULL;
    assert_int_equal(
        kc_config_from_url(kc_server_url(srv), kc_server_ca_pem(srv), TOKEN, &cfg, NULL), 0);
    kc_client_opts co = {.qps = 500, .burst = 50};
    assert_int_equal(kc_client_new(cfg, &co, &cli, NULL), 0);
    kc_config_unref(cfg);
    const kc_gvr ns = {"", "v1", "namespaces"};
    const char *nsb = "{\"metadata\":{\"name\":\"threads\"}}";
    assert_int_equal(kc_client_create(cli, &ns, NULL, nsb, strlen(nsb), NULL, NULL, NULL), 0);

    kc_list_meta meta = {0};
    assert_int_equal(kc_client_list(cli, &CM, "threads", NULL, &meta, NULL, NULL, NULL), 0);
    watcher wa = {.rv = meta.resource_version};
    assert_int_equal(kc_cancel_new(&wa.cancel, NULL), 0);
    pthread_mutex_init(&wa.mu, NULL);
    pthread_t wt;
    assert_int_equal(pthread_create(&wt, NULL, watch_main, &wa), 0);

    pthread_t th[THREADS];
    worker ws[THREADS];
    for (int i = 0; i < THREADS; i++) {
        ws[i] = (worker){.id = i};
        assert_int_equal(pthread_create(&th[i], NULL, work, &ws[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < THREADS; i++)
        if (ws[i].failures)
            fail_msg("thread %d: %s", i, ws[i].what);

    /* every object was created, modified and deleted: 3 events each, in one namespace */
    int want = THREADS * ROUNDS * 3;
    for (int spins = 0; spins < 1000; spins++) {
        pthread_mutex_lock(&wa.mu);
        int got = wa.events;
        pthread_mutex_unlock(&wa.mu);
        if (got >= want)
            break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL); /* polling a condition with a deadline (10 s) */
    }
    kc_cancel_fire(wa.cancel);
    pthread_join(wt, NULL);
    assert_int_equal(wa.rc, KC_ECANCELED);
    assert_int_equal(wa.events, want);
    kc_cancel_free(wa.cancel);
    kc_list_meta_clear(&meta);
    kc_client_free(cli);
    kc_server_free(srv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_threads_shared_client),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
