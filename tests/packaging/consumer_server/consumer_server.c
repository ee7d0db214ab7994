/*
 * consumer_server.c — a program built against an *installed* kcache that links both libraries:
 * libkcache-server starts the embedded API server on a free loopback port, and libkcache's
 * client reads the built-in "default" Namespace from it. Proves the two libraries, their headers
 * and package files (find_package(kcache COMPONENTS server), pkg-config kcache-server) work
 * together. Exit 0 and one line on success.
 */
#include <kcache.h>
#include <kcache/server.h>

#include <stdio.h>
#include <string.h>

static int fail(const char *what, int rc, kc_error *err)
{
    fprintf(stderr, "%s: %s: %s\n", what, kc_errno_name(rc), err->message ? err->message : "");
    kc_error_clear(err);
    return 1;
}

int main(void)
{
    kc_error err = KC_ERROR_INIT;
    kc_server_faults faults = {0};
    kc_server_opts so = {
        .listen = "127.0.0.1:0", .quiet = true, .faults = &faults, .faults_size = sizeof faults};
    int rc = kc_server_faults_parse("rate429", "0:get", &faults, &err);
    if (rc)
        return fail("kc_server_faults_parse", rc, &err);
    kc_server *srv = NULL;
    if ((rc = kc_server_new(&so, &srv, &err)) || (rc = kc_server_start(srv, &err))) {
        kc_server_free(srv);
        return fail("server", rc, &err);
    }
    kc_config *cfg = NULL;
    kc_client *c = NULL;
    kc_obj *ns = NULL;
    const kc_gvr namespaces = {"", "v1", "namespaces"};
    if ((rc = kc_config_from_url(kc_server_url(srv), NULL, NULL, &cfg, &err)) ||
        (rc = kc_client_new(cfg, NULL, &c, &err)) ||
        (rc = kc_client_get(c, &namespaces, NULL, "default", &ns, &err))) {
        kc_client_free(c);
        kc_config_unref(cfg);
        kc_server_free(srv);
        return fail("client", rc, &err);
    }
    int ok = strcmp(kc_obj_name(ns), "default") == 0 && strcmp(kc_obj_kind(ns), "Namespace") == 0;
    printf("kcache %s server consumer: GET %s/api/v1/namespaces/default -> %s %s\n", kc_version(),
           kc_server_url(srv), kc_obj_kind(ns), kc_obj_name(ns));
    kc_obj_unref(ns);
    kc_client_free(c);
    kc_config_unref(cfg);
    kc_server_free(srv);
    return ok ? 0 : 1;
}
