/*
 * quickstart.c — the README's quick start: a cached client with block-on-write and a readiness
 * wait. Usage: quickstart [KUBECONFIG]. Without a kubeconfig it starts the embedded API server
 * in-process with watch events delayed 10–500 ms, so a plain cache read right after the create
 * would miss the Secret; with block-on-write it never does.
 */
#include <kcache/cached_client.h>
#include <kcache/server.h>

#include <stdio.h>
#include <string.h>

static const kc_gvr secrets = {"", "v1", "secrets"};

/* Every call's result is checked: a failure is reported with its reason (kc_error) and the rest
 * is skipped; the clean-up below is safe whatever was created (every destructor accepts NULL). */
static int run(kc_config *cfg, const char *ns)
{
    /* ---- the README's example --------------------------------------------------------------- */
    kc_client *client = NULL;
    kc_cache *cache = NULL;
    kc_cached_client *cc = NULL;
    kc_informer *inf = NULL;
    kc_obj *created = NULL, *read = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_client_new(cfg, NULL, &client, &err);
    if (rc == 0)
        rc = kc_cache_new(client, NULL, &cache, &err);
    if (rc == 0) /* watch Secrets */
        rc = kc_cache_get_informer(cache, &secrets, NULL, &inf, &err);
    if (rc == 0) /* readiness: the initial list is applied (err says why not) */
        rc = kc_cache_wait_synced(cache, 30000, &err);
    if (rc == 0) /* block-on-write by default */
        rc = kc_cached_client_new(client, cache, NULL, &cc, &err);
    const char *s = "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"generateName\":"
                    "\"quickstart-\"},\"data\":{\"greeting\":\"aGVsbG8=\"}}";
    if (rc == 0) /* returns once the cache has seen the Secret (or KC_ENOT_CAUGHT_UP after 3 s) */
        rc = kc_cached_client_create(cc, &secrets, ns, s, strlen(s), NULL, NULL, &created, &err);
    if (rc == 0) /* a cache read right after the write: never stale */
        rc = kc_cached_client_get(cc, &secrets, ns, kc_obj_name(created), NULL, &read, &err);
    if (rc == 0)
        printf("created %s at rv %s; the cache has rv %s\n", kc_obj_name(created),
               kc_obj_resource_version(created), kc_obj_resource_version(read));
    else
        fprintf(stderr, "quickstart: %s: %s\n", kc_errno_name(rc),
                err.message ? err.message : kc_strerror(rc));
    /* ---------------------------------------------------------------------------------------- */
    kc_error_clear(&err);
    if (created) { /* also after KC_ENOT_CAUGHT_UP: the Secret exists */
        int drc =
            kc_cached_client_delete(cc, &secrets, ns, kc_obj_name(created), NULL, NULL, NULL, &err);
        if (drc < 0) {
            fprintf(stderr, "quickstart: deleting %s: %s\n", kc_obj_name(created),
                    err.message ? err.message : kc_strerror(drc));
            rc = rc < 0 ? rc : drc;
        }
        kc_error_clear(&err);
    }
    kc_obj_unref(read);
    kc_obj_unref(created);
    kc_cache_stop(cache);
    kc_cached_client_free(cc);
    kc_cache_free(cache);
    kc_client_free(client);
    return rc < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
    kc_server *srv = NULL;
    kc_config *cfg = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc;
    if (argc > 1) {
        kc_config_opts co = {.kubeconfig = argv[1]};
        rc = kc_config_load(&co, &cfg, &err);
    } else {
        /* A nested struct is given by pointer and size (docs/abi.md). */
        kc_server_faults faults = {.watch_delay_min_ms = 10, .watch_delay_max_ms = 500};
        kc_server_opts so = {.listen = "127.0.0.1:0",
                             .quiet = true,
                             .faults = &faults,
                             .faults_size = sizeof faults};
        rc = kc_server_new(&so, &srv, &err);
        if (rc == 0)
            rc = kc_server_start(srv, &err);
        if (rc == 0)
            rc = kc_config_from_url(kc_server_url(srv), NULL, NULL, &cfg, &err);
    }
    if (rc < 0) {
        fprintf(stderr, "quickstart: %s: %s\n", kc_errno_name(rc),
                err.message ? err.message : kc_strerror(rc));
        kc_error_clear(&err);
        kc_server_free(srv);
        return 1;
    }
    int status = run(cfg, kc_config_namespace(cfg));
    kc_config_unref(cfg);
    kc_server_free(srv);
    return status;
}
