/*
 * nodeagent_fixture.h — a kc_podmeta that is never started (its client points at a closed port),
 * fed directly through the writer's informer handlers (src/nodeagent/pm_writer.c), and Pod JSON
 * projected as the cache's informer would. Header-only, for the test_nodeagent_* unit tests.
 */
#ifndef KC_TEST_NODEAGENT_FIXTURE_H
#define KC_TEST_NODEAGENT_FIXTURE_H

#include "nodeagent/internal.h"

#include <kcache/client.h>
#include <kcache/config.h>
#include <kcache/decode.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct nafx {
    kc_config *cfg;
    kc_client *client;
    kc_podmeta *pm;
} nafx;

static const char *const NAFX_KEEP[] = {"/metadata",
                                        "/spec/nodeName",
                                        "/status/containerStatuses/*/name",
                                        "/status/containerStatuses/*/image",
                                        "/status/containerStatuses/*/imageID",
                                        "/status/containerStatuses/*/containerID",
                                        "/status/initContainerStatuses/*/name",
                                        "/status/initContainerStatuses/*/containerID",
                                        NULL};

static inline void nafx_up(nafx *f, const kc_podmeta_opts *o)
{
    memset(f, 0, sizeof *f);
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_config_from_url("http://127.0.0.1:1", NULL, NULL, &f->cfg, &e), 0);
    assert_int_equal(kc_client_new(f->cfg, NULL, &f->client, &e), 0);
    kc_podmeta_opts d = {.node_name = "n1"};
    int r = kc_podmeta_new(f->client, o ? o : &d, &f->pm, &e);
    if (r)
        fail_msg("kc_podmeta_new: %s", e.message);
}

static inline void nafx_down(nafx *f)
{
    kc_podmeta_free(f->pm);
    kc_client_free(f->client);
    kc_config_unref(f->cfg);
}

/* A projected Pod: ns/name, uid, container ids (cids[i] "" = not created yet), label app=v. */
static inline kc_obj *nafx_pod(const char *ns, const char *name, const char *uid, const char *app,
                               const char *const *cids, size_t n)
{
    char body[4096], st[2048] = "";
    size_t off = 0;
    for (size_t i = 0; i < n; i++)
        off += (size_t)snprintf(st + off, sizeof st - off,
                                "%s{\"name\":\"c%zu\",\"image\":\"img%zu\",\"imageID\":\"id%zu\","
                                "\"ready\":true,\"containerID\":\"%s\"}",
                                i ? "," : "", i, i, i, cids[i]);
    snprintf(body, sizeof body,
             "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
             "\"%s\",\"uid\":\"%s\",\"labels\":{\"app\":\"%s\"}},\"spec\":{\"nodeName\":\"n1\","
             "\"containers\":[{\"name\":\"c0\"}]},\"status\":{\"phase\":\"Running\","
             "\"containerStatuses\":[%s]}}",
             name, ns, uid, app, st);
    kc_decode_opts o = {.keep = NAFX_KEEP};
    kc_obj *obj = NULL;
    kc_error e = KC_ERROR_INIT;
    if (kc_obj_parse(body, strlen(body), &o, &obj, &e))
        fail_msg("kc_obj_parse: %s", e.message);
    return obj;
}

static inline kc_obj *nafx_ns(const char *name)
{
    char body[256];
    snprintf(body, sizeof body,
             "{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{"
             "\"name\":\"%s\",\"labels\":{\"team\":\"x\"}}}",
             name);
    kc_obj *obj = NULL;
    assert_int_equal(kc_obj_parse(body, strlen(body), NULL, &obj, NULL), 0);
    return obj;
}

/* Feed the writer as the informers' dispatchers would; the object is borrowed. */
static inline void nafx_add(nafx *f, kc_obj *obj)
{
    kc__pm_pod_handlers.on_add(f->pm, obj);
    kc_obj_unref(obj);
}

static inline void nafx_ns_add(nafx *f, kc_obj *obj)
{
    kc__pm_ns_handlers.on_add(f->pm, obj);
    kc_obj_unref(obj);
}

static inline void nafx_del(nafx *f, kc_obj *obj)
{
    kc__pm_pod_handlers.on_delete(f->pm, obj, false);
    kc_obj_unref(obj);
}

/* Lookup without waiting: 0 and the result, or the error. */
static inline int nafx_find(nafx *f, const char *ns, const char *name, const char *uid,
                            const char *cid, kc_podmeta_result *res)
{
    kc_podmeta_query q = {.ns = ns, .name = name, .uid = uid, .container_id = cid, .wait_ms = -1};
    return kc_podmeta_lookup(f->pm, &q, res, NULL);
}

#endif
