/*
 * test_cached_fixture.h — shared set-up of the cached-client integration tests: the embedded API
 * server on 127.0.0.1:0 (with a watch delay), a kc_client, a kc_cache and a kc_cached_client, plus
 * small helpers to build bodies. Header-only (static functions) so each test binary stands alone.
 */
#ifndef KC_TEST_CACHED_FIXTURE_H
#define KC_TEST_CACHED_FIXTURE_H

#include "core/internal.h"
#include "kc_test.h"
#include "kcache/cached_client.h"
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

static const kc_gvr fx_secrets = {"", "v1", "secrets"};
static const kc_gvr fx_configmaps = {"", "v1", "configmaps"};
static const kc_gvr fx_pods = {"", "v1", "pods"};

typedef struct fx {
    kc_server *srv;
    kc_config *cfg;
    kc_client *client;
    kc_cache *cache;
    kc_cached_client *cc;
} fx;

/* Assert rc == want, printing both sides and the error detail when not. */
#define FX_RC(rc, want, e) KC_TEST_RC(rc, want, e)

static inline void fx_set_delay(fx *f, unsigned min_ms, unsigned max_ms)
{
    kc_server_faults fl;
    kc_server_get_faults(f->srv, &fl);
    fl.watch_delay_min_ms = min_ms;
    fl.watch_delay_max_ms = max_ms;
    assert_int_equal(kc_server_set_faults(f->srv, &fl), 0);
}

static inline void fx_set_stall(fx *f, bool stall)
{
    kc_server_faults fl;
    kc_server_get_faults(f->srv, &fl);
    fl.watch_stall = stall;
    assert_int_equal(kc_server_set_faults(f->srv, &fl), 0);
}

/* A second cached client over the fixture's cache. */
static inline kc_cached_client *fx_cc(fx *f, kc_ryw_mode mode, int64_t timeout_ms)
{
    kc_cached_client_opts o = {.mode = mode, .timeout_ms = timeout_ms};
    kc_cached_client *cc = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cached_client_new(f->client, f->cache, &o, &cc, &e), 0, &e);
    return cc;
}

static inline void fx_up_opts(fx *f, unsigned delay_min_ms, unsigned delay_max_ms, kc_ryw_mode mode,
                              int64_t timeout_ms, const kc_cache_opts *cache_opts)
{
    memset(f, 0, sizeof(*f));
    kc_error e = KC_ERROR_INIT;
    kc_server_faults faults = {.watch_delay_min_ms = delay_min_ms,
                               .watch_delay_max_ms = delay_max_ms};
    kc_server_opts so = {.faults = &faults, .faults_size = sizeof faults};
    f->srv = kc_test_server_start(&so);
    assert_non_null(f->srv);
    FX_RC(kc_config_from_url(kc_server_url(f->srv), NULL, NULL, &f->cfg, &e), 0, &e);
    kc_client_opts co = {.qps = -1};
    FX_RC(kc_client_new(f->cfg, &co, &f->client, &e), 0, &e);
    FX_RC(kc_cache_new(f->client, cache_opts, &f->cache, &e), 0, &e);
    f->cc = fx_cc(f, mode, timeout_ms);
}

static inline void fx_up(fx *f, unsigned delay_min_ms, unsigned delay_max_ms, kc_ryw_mode mode,
                         int64_t timeout_ms)
{
    fx_up_opts(f, delay_min_ms, delay_max_ms, mode, timeout_ms, NULL);
}

static inline void fx_down(fx *f)
{
    if (f->cache)
        kc_cache_stop(f->cache);
    kc_cached_client_free(f->cc);
    kc_cache_free(f->cache);
    kc_client_free(f->client);
    kc_config_unref(f->cfg);
    kc_server_free(f->srv);
    memset(f, 0, sizeof(*f));
}

/* The informer store of gvr (all namespaces), synced. */
static inline kc_store *fx_store(fx *f, const kc_gvr *gvr)
{
    kc_informer *inf = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cache_get_informer(f->cache, gvr, NULL, &inf, &e), 0, &e);
    assert_int_equal(kc_informer_wait_synced(inf, 10000, NULL), 0);
    return kc_informer_store(inf);
}

/* {"apiVersion":"v1","kind":"Secret","metadata":{"name":…[,"finalizers":[…]]},"data":{…}} */
static inline int fx_secret_json(char *buf, size_t cap, const char *name, const char *finalizer,
                                 const char *rv)
{
    char fin[128] = "", rvs[64] = "";
    if (finalizer)
        snprintf(fin, sizeof(fin), ",\"finalizers\":[\"%s\"]", finalizer);
    if (rv)
        snprintf(rvs, sizeof(rvs), ",\"resourceVersion\":\"%s\"", rv);
    return snprintf(buf, cap,
                    "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"%s\","
                    "\"labels\":{\"app\":\"ryw\"}%s%s},\"data\":{\"k\":\"dg==\"}}",
                    name, fin, rvs);
}

/* Create a Secret through cc; returns the server's object (new reference). */
static inline kc_obj *fx_create(kc_cached_client *cc, const char *ns, const char *name,
                                const char *finalizer, const kc_cached_call_opts *call, int want_rc)
{
    char body[512];
    int len = fx_secret_json(body, sizeof(body), name, finalizer, NULL);
    kc_obj *obj = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cached_client_create(cc, &fx_secrets, ns, body, (size_t)len, NULL, call, &obj, &e),
          want_rc, &e);
    kc_error_clear(&e);
    assert_non_null(obj);
    return obj;
}

/* Create n Secrets "<prefix>-NN" through cc (rc 0 each). */
static inline void fx_create_n(kc_cached_client *cc, const char *ns, const char *prefix, int n)
{
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof(name), "%s-%02d", prefix, i);
        kc_obj_unref(fx_create(cc, ns, name, NULL, NULL, 0));
    }
}

/* true when the store's object at ns/name has an RV >= the RV of obj. */
static inline bool fx_store_has(kc_store *s, const char *ns, const kc_obj *obj)
{
    kc_obj *cur = kc_store_get(s, ns, kc_obj_name(obj));
    bool ok = cur && kc_rv_compare(kc_obj_resource_version(cur), kc_obj_resource_version(obj)) !=
                         KC_RV_LESS;
    kc_obj_unref(cur);
    return ok;
}

/*
 * A read never returns an object this client deleted: for ms milliseconds, read back the deleted
 * objects (names[i] with uids[i], n of them, in ns) through cc over and over — a cached get of each
 * (KC_ENOTFOUND, or an object with another UID) and a cached list of ns (none of the UIDs).
 * A bounded loop over a deadline that asserts a safety property (something never happens), not a
 * sleep. Returns the number of reads that returned a deleted object.
 */
static inline unsigned fx_resurrections(kc_cached_client *cc, const char *ns,
                                        const char *const *names, const char *const *uids, size_t n,
                                        unsigned ms)
{
    unsigned bad = 0;
    uint64_t deadline = kc__deadline_after_ms(ms);
    do {
        for (size_t i = 0; i < n; i++) {
            kc_obj *g = NULL;
            kc_error e = KC_ERROR_INIT;
            int rc = kc_cached_client_get(cc, &fx_secrets, ns, names[i], NULL, &g, &e);
            if (rc == 0 && strcmp(kc_obj_uid(g), uids[i]) == 0)
                bad++;
            else if (rc != 0 && rc != KC_ENOTFOUND)
                FX_RC(rc, KC_ENOTFOUND, &e);
            kc_error_clear(&e);
            kc_obj_unref(g);
        }
        kc_obj **items = NULL;
        size_t k = 0;
        kc_error e = KC_ERROR_INIT;
        FX_RC(kc_cached_client_list(cc, &fx_secrets, ns, NULL, NULL, NULL, &items, &k, &e), 0, &e);
        for (size_t j = 0; j < k; j++)
            for (size_t i = 0; i < n; i++)
                bad += strcmp(kc_obj_uid(items[j]), uids[i]) == 0;
        kc_obj_array_free(items, k);
    } while (kc__now_ns() < deadline);
    return bad;
}

static inline double fx_ms_since(uint64_t t0)
{
    return (double)(kc__now_ns() - t0) / 1e6;
}

#endif
