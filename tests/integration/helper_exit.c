/*
 * helper_exit — a program that returns from main (or calls exit) while informers run, for
 * test_exit_safety (issue 16 point 9). Linked with the shared libkcache, written only from the
 * public headers, as a user's program is. It never stops or frees anything: that is the point.
 *
 *   helper_exit URL MODE
 *     early     start six informers with handlers and return at once (initial lists in flight)
 *     synced    the same, return once every cache is synced (watches and dispatchers busy)
 *     full      synced, plus a health endpoint and a cached client doing reads and writes
 *     handler   call exit(0) from inside an event handler (a dispatcher thread)
 *
 * Exit status 0 on the path under test; 2-9 when the set-up itself failed (the test says which).
 * alarm(60) turns a hang at exit into SIGALRM, which the test reports as a failure.
 */
#include <kcache/cache.h>
#include <kcache/cached_client.h>
#include <kcache/health.h>

#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const RESOURCES[] = {"configmaps", "secrets", "pods",
                                        "services",   "events",  "namespaces"};

static int exit_in_handler;
static atomic_flag exit_called = ATOMIC_FLAG_INIT; /* exit() once: concurrent calls are undefined */

/* Touch the object's JSON from the dispatcher thread (the decoder's code), like a real handler. */
static void on_add(void *ud, kc_obj *o)
{
    char *s = NULL;
    if (kc_obj_get_string(o, "/metadata/name", &s, NULL, NULL) == 0)
        free(s);
    if (exit_in_handler && ud && !atomic_flag_test_and_set(&exit_called))
        exit(0);
}

static void on_update(void *ud, kc_obj *old_obj, kc_obj *new_obj)
{
    on_add(ud, new_obj);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    alarm(60);
    const char *mode = argv[2];
    exit_in_handler = strcmp(mode, "handler") == 0;
    kc_config *cfg = NULL;
    kc_client *client = NULL;
    kc_cache *cache = NULL;
    kc_error e = KC_ERROR_INIT;
    if (kc_config_from_url(argv[1], NULL, NULL, &cfg, &e) < 0 ||
        kc_client_new(cfg, NULL, &client, &e) < 0 || kc_cache_new(client, NULL, &cache, &e) < 0) {
        fprintf(stderr, "helper_exit: set-up: %s\n", e.message ? e.message : "?");
        return 3;
    }
    for (size_t i = 0; i < sizeof(RESOURCES) / sizeof(RESOURCES[0]); i++) {
        kc_gvr gvr = {"", "v1", RESOURCES[i]};
        kc_informer *inf = NULL;
        kc_informer_handlers h = {.on_add = on_add, .on_update = on_update, .ud = (void *)1};
        if (kc_cache_get_informer(cache, &gvr, NULL, &inf, &e) < 0 ||
            kc_informer_add_handler(inf, &h, NULL, NULL, &e) < 0) {
            fprintf(stderr, "helper_exit: informer: %s\n", e.message ? e.message : "?");
            return 4;
        }
    }
    if (strcmp(mode, "early") == 0)
        return 0;
    struct pollfd p = {kc_cache_sync_fd(cache), POLLIN, 0};
    if (poll(&p, 1, 30000) != 1) {
        fprintf(stderr, "helper_exit: caches did not sync\n");
        return 5;
    }
    if (exit_in_handler) { /* the handlers call exit(0); if none does, fail */
        pause();
        return 6;
    }
    if (strcmp(mode, "full") == 0) {
        kc_health *h = NULL;
        kc_cached_client *cc = NULL;
        if (kc_health_new(cache, NULL, NULL, &h, &e) < 0 ||
            kc_cached_client_new(client, cache, NULL, &cc, &e) < 0) {
            fprintf(stderr, "helper_exit: full: %s\n", e.message ? e.message : "?");
            return 7;
        }
        kc_gvr cms = {"", "v1", "configmaps"};
        char body[256];
        snprintf(body, sizeof(body),
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"generateName\":"
                 "\"exit-\",\"namespace\":\"default\"},\"data\":{\"pid\":\"%d\"}}",
                 (int)getpid());
        kc_obj *o = NULL;
        int rc =
            kc_cached_client_create(cc, &cms, "default", body, strlen(body), NULL, NULL, &o, &e);
        if (rc < 0 && rc != KC_ENOT_CAUGHT_UP) {
            fprintf(stderr, "helper_exit: create: %s\n", e.message ? e.message : "?");
            return 8;
        }
        kc_obj_unref(o);
    }
    return 0;
}
