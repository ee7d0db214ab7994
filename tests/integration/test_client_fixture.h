/*
 * test_client_fixture.h — shared set-up of test_client_verbs.c and test_client_watch.c: the
 * embedded API server on 127.0.0.1:0 over TLS with a bearer token, one kc_client (no rate limit)
 * and the namespaces a file asks for, plus create_cm. Header-only (static) so each test binary
 * stands alone; each file has its own server.
 */
#ifndef KC_TEST_CLIENT_FIXTURE_H
#define KC_TEST_CLIENT_FIXTURE_H

#include "kc_test.h"
#include "kcache/client.h"
#include "kcache/server.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static kc_server *srv;
static kc_client *cli;
static const kc_gvr CM = {"", "v1", "configmaps"};

/* Start the server with the token, a client for it, and create the namespaces nss (a
 * NULL-terminated list). 0, or -1 with the reason on stderr. */
static inline int client_fixture_up(const char *token, const char *const *nss)
{
    kc_server_opts so = {.tls = true, .token = token};
    kc_error err = KC_ERROR_INIT;
    if (!(srv = kc_test_server_start(&so)))
        return -1;
    kc_config *cfg = NULL;
    if (kc_config_from_url(kc_server_url(srv), kc_server_ca_pem(srv), token, &cfg, &err))
        return -1;
    kc_client_opts co = {.qps = -1};
    int rc = kc_client_new(cfg, &co, &cli, &err);
    kc_config_unref(cfg);
    const kc_gvr ns = {"", "v1", "namespaces"};
    for (size_t i = 0; rc == 0 && nss[i]; i++) {
        char b[128];
        snprintf(b, sizeof b, "{\"metadata\":{\"name\":\"%s\"}}", nss[i]);
        rc = kc_client_create(cli, &ns, NULL, b, strlen(b), NULL, NULL, &err);
    }
    if (rc)
        fprintf(stderr, "setup: %s\n", err.message);
    return rc ? -1 : 0;
}

static inline int group_teardown(void **state)
{
    kc_client_free(cli);
    kc_server_free(srv);
    return 0;
}

/* Create ConfigMap ns/name with data k=v and the given labels (JSON members, or NULL); fails
 * the test on error. New reference — caller unrefs. */
static inline kc_obj *create_cm(const char *ns, const char *name, const char *labels)
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{%s}},\"data\":{\"k\":\"v\"}}",
             name, labels ? labels : "");
    kc_obj *o = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_client_create(cli, &CM, ns, body, strlen(body), NULL, &o, &err);
    if (rc)
        fail_msg("create %s: %s %s", name, kc_errno_name(rc), err.message);
    return o;
}

#endif
