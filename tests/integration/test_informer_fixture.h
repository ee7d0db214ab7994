/*
 * test_informer_fixture.h — shared set-up for the informer / cache / health integration tests: the
 * embedded API server on 127.0.0.1:0, a kc_client, and helpers to write ConfigMaps and compare a
 * store with the server's LIST. Header-only (static functions) so each test binary stands alone.
 */
#ifndef KC_TEST_INFORMER_FIXTURE_H
#define KC_TEST_INFORMER_FIXTURE_H

#include "core/internal.h"
#include "kc_test.h"
#include "kcache/cache.h"
#include "kcache/health.h"
#include "kcache/informer.h"
#include "kcache/rv.h"
#include "kcache/server.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const kc_gvr ifx_cm = {"", "v1", "configmaps"};
static const kc_gvr ifx_pods = {"", "v1", "pods"};

typedef struct ifx {
    kc_server *srv;
    kc_config *cfg;
    kc_client *client;
} ifx;

#define IFX_RC(rc, want, e) KC_TEST_RC(rc, want, e)

static inline void ifx_client_for(ifx *f, const char *url)
{
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_config_from_url(url, NULL, NULL, &f->cfg, &e), 0, &e);
    kc_client_opts co = {.qps = -1, .max_retries = -1};
    IFX_RC(kc_client_new(f->cfg, &co, &f->client, &e), 0, &e);
}

static inline void ifx_up(ifx *f, const char *seed_spec)
{
    memset(f, 0, sizeof(*f));
    kc_server_opts o = {0};
    o.seed_spec = seed_spec;
    o.bookmark_interval_ms = 200;
    f->srv = kc_test_server_start(&o);
    assert_non_null(f->srv);
    ifx_client_for(f, kc_server_url(f->srv));
}

static inline void ifx_down(ifx *f)
{
    kc_client_free(f->client);
    kc_config_unref(f->cfg);
    kc_server_free(f->srv);
    memset(f, 0, sizeof(*f));
}

static inline void ifx_faults(ifx *f, const kc_server_faults *fl)
{
    assert_int_equal(kc_server_set_faults(f->srv, fl), 0);
}

/* Create a ConfigMap; returns its RV in rv_out (cap ≥ KC_STORE_RV_MAX) when not NULL. */
static inline int ifx_cm_create(ifx *f, const char *ns, const char *name, const char *val,
                                char *rv_out)
{
    char body[512];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"%s\"},\"data\":{\"v\":\"%s\"}}",
             name, ns, val);
    kc_obj *o = NULL;
    int rc = kc_client_create(f->client, &ifx_cm, ns, body, strlen(body), NULL, &o, NULL);
    if (rc == 0 && rv_out)
        snprintf(rv_out, KC_STORE_RV_MAX, "%s", kc_obj_resource_version(o));
    kc_obj_unref(o);
    return rc;
}

static inline int ifx_cm_update(ifx *f, const char *ns, const char *name, const char *val)
{
    char body[256];
    snprintf(body, sizeof(body), "{\"data\":{\"v\":\"%s\"}}", val);
    return kc_client_patch(f->client, &ifx_cm, ns, name, KC_PATCH_MERGE, body, strlen(body), NULL,
                           NULL, NULL);
}

static inline int ifx_cm_delete(ifx *f, const char *ns, const char *name)
{
    return kc_client_delete(f->client, &ifx_cm, ns, name, NULL, NULL, NULL);
}

/* ---- comparing a store with the server ----------------------------------------------------- */

typedef struct ifx_list {
    char **keys, **rvs;
    size_t n, cap;
} ifx_list;

static inline int ifx_list_cb(void *ud, kc_obj *o)
{
    ifx_list *l = ud;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->keys = realloc(l->keys, l->cap * sizeof(char *));
        l->rvs = realloc(l->rvs, l->cap * sizeof(char *));
    }
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", kc_obj_namespace(o), kc_obj_name(o));
    l->keys[l->n] = strdup(key);
    l->rvs[l->n] = strdup(kc_obj_resource_version(o));
    l->n++;
    kc_obj_unref(o);
    return 0;
}

static inline void ifx_list_free(ifx_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->keys[i]);
        free(l->rvs[i]);
    }
    free(l->keys);
    free(l->rvs);
    memset(l, 0, sizeof(*l));
}

/* Compare store with the server's LIST of gvr in ns. Returns the number of differences; *list_rv
 * gets the list's RV. */
static inline size_t ifx_diff(ifx *f, const kc_gvr *gvr, const char *ns, kc_store *s, char *list_rv,
                              bool print)
{
    ifx_list l = {0};
    kc_list_meta meta = {0};
    kc_error e = KC_ERROR_INIT;
    int rc = kc_client_list_all(f->client, gvr, ns, NULL, &meta, ifx_list_cb, &l, &e);
    if (rc != 0) {
        kc_test_print_rc("kc_client_list_all", rc, 0, &e);
        kc_error_clear(&e);
        ifx_list_free(&l);
        return SIZE_MAX;
    }
    snprintf(list_rv, KC_STORE_RV_MAX, "%s", meta.resource_version ? meta.resource_version : "");
    kc_list_meta_clear(&meta);
    size_t diff = 0;
    for (size_t i = 0; i < l.n; i++) {
        kc_obj *o = kc_store_get_key(s, l.keys[i]);
        if (!o || strcmp(kc_obj_resource_version(o), l.rvs[i]) != 0) {
            if (print)
                fprintf(stderr, "diff: %s server rv %s store %s\n", l.keys[i], l.rvs[i],
                        o ? kc_obj_resource_version(o) : "(absent)");
            diff++;
        }
        kc_obj_unref(o);
    }
    size_t sl = kc_store_len(s);
    if (sl != l.n) {
        if (print)
            fprintf(stderr, "diff: store has %zu objects, server %zu\n", sl, l.n);
        diff += sl > l.n ? sl - l.n : l.n - sl;
    }
    ifx_list_free(&l);
    return diff;
}

/* Wait (bounded) until the store equals the server's LIST. Each round waits on the store's
 * watermark reaching the list RV (event-driven) before comparing again. Returns the last diff. */
static inline size_t ifx_converge(ifx *f, const kc_gvr *gvr, const char *ns, kc_store *s,
                                  int64_t timeout_ms)
{
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    char rv[KC_STORE_RV_MAX];
    size_t d = SIZE_MAX;
    while (kc__now_ns() < deadline) {
        d = ifx_diff(f, gvr, ns, s, rv, false);
        if (d == 0)
            return 0;
        /* Wait for the next event (any) rather than spinning. */
        kc_store_cond c = {KC_STORE_WAIT_WATERMARK, NULL, NULL,
                           "x-next-event",          NULL, kc_store_seq(s)};
        kc_store_wait(s, &c, 200, NULL);
    }
    return ifx_diff(f, gvr, ns, s, rv, true);
}

#endif
