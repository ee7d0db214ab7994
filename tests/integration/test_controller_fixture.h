/*
 * test_controller_fixture.h — shared set-up of the controller integration tests: the embedded API
 * server (test_informer_fixture.h), a controller over ConfigMaps (primary, kind ConfigMap) and a
 * recorder: a reconcile callback that logs every call (key, time, whether the caches had synced,
 * concurrency) under a mutex and lets the test wait on a condition variable for what it expects,
 * with a deadline — never a sleep. The decision of each reconcile is a test-supplied function.
 * Header-only (static functions) so each test binary stands alone.
 */
#ifndef KC_TEST_CONTROLLER_FIXTURE_H
#define KC_TEST_CONTROLLER_FIXTURE_H

#include "test_informer_fixture.h"

#include "kcache/controller.h"

#include <curl/curl.h>
#include <pthread.h>

#define CREC_MAX 4096

typedef struct crec crec;
/* nth: how many times this key was reconciled before (0 the first time). */
typedef kc_reconcile_result (*crec_decide_fn)(crec *r, const kc_reconcile_request *req,
                                              kc_cached_client *cc, unsigned nth);

struct crec {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t n;
    struct {
        char key[128];
        uint64_t start_ns, end_ns;
    } log[CREC_MAX];
    unsigned running, max_running;
    unsigned before_sync; /* reconciles that ran while the controller's cache was not synced */
    unsigned same_key;    /* reconciles that overlapped another of the same key */
    char running_keys[16][128];
    crec_decide_fn decide;
    void *ud;
    kc_controller *ctrl;
};

static inline void crec_init(crec *r, crec_decide_fn decide)
{
    memset(r, 0, sizeof(*r));
    pthread_mutex_init(&r->mu, NULL);
    kc__cond_init_monotonic(&r->cv);
    r->decide = decide;
}

static inline void crec_destroy(crec *r)
{
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
}

/* Reconciles of key so far (caller holds r->mu). */
static inline unsigned crec_count_locked(crec *r, const char *key)
{
    unsigned c = 0;
    for (size_t i = 0; i < r->n && i < CREC_MAX; i++)
        c += !strcmp(r->log[i].key, key);
    return c;
}

static inline unsigned crec_count(crec *r, const char *key)
{
    pthread_mutex_lock(&r->mu);
    unsigned c = crec_count_locked(r, key);
    pthread_mutex_unlock(&r->mu);
    return c;
}

static kc_reconcile_result crec_reconcile(void *ud, const kc_reconcile_request *req,
                                          kc_cached_client *cc)
{
    crec *r = ud;
    bool synced = kc_cache_has_synced(kc_controller_cache(r->ctrl));
    pthread_mutex_lock(&r->mu);
    unsigned nth = crec_count_locked(r, req->key);
    size_t slot = r->n < CREC_MAX ? r->n : CREC_MAX - 1;
    r->n++;
    snprintf(r->log[slot].key, sizeof(r->log[slot].key), "%s", req->key);
    r->log[slot].start_ns = kc__now_ns();
    r->log[slot].end_ns = 0;
    if (!synced)
        r->before_sync++;
    for (unsigned i = 0; i < 16; i++)
        if (r->running_keys[i][0] && !strcmp(r->running_keys[i], req->key))
            r->same_key++;
    unsigned my = 16;
    for (unsigned i = 0; i < 16; i++)
        if (!r->running_keys[i][0]) {
            snprintf(r->running_keys[i], 128, "%s", req->key);
            my = i;
            break;
        }
    r->running++;
    if (r->running > r->max_running)
        r->max_running = r->running;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);

    kc_reconcile_result res = {KC_RECONCILE_DONE, 0};
    if (r->decide)
        res = r->decide(r, req, cc, nth);

    pthread_mutex_lock(&r->mu);
    r->running--;
    if (my < 16)
        r->running_keys[my][0] = '\0';
    r->log[slot].end_ns = kc__now_ns();
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return res;
}

/* Wait until key has been reconciled at least n times (true) or timeout_ms passes (false). */
static inline bool crec_wait_key(crec *r, const char *key, unsigned n, int64_t timeout_ms)
{
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    pthread_mutex_lock(&r->mu);
    while (crec_count_locked(r, key) < n && kc__cond_wait_until(&r->cv, &r->mu, deadline) == 0) {
    }
    bool ok = crec_count_locked(r, key) >= n;
    pthread_mutex_unlock(&r->mu);
    return ok;
}

/* Wait until at least n reconciles are running at once. */
static inline bool crec_wait_running(crec *r, unsigned n, int64_t timeout_ms)
{
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    pthread_mutex_lock(&r->mu);
    while (r->running < n && kc__cond_wait_until(&r->cv, &r->mu, deadline) == 0) {
    }
    bool ok = r->running >= n;
    pthread_mutex_unlock(&r->mu);
    return ok;
}

/* Start time of the i-th reconcile of key (0 when there is none). */
static inline uint64_t crec_start_of(crec *r, const char *key, unsigned i)
{
    uint64_t t = 0;
    pthread_mutex_lock(&r->mu);
    for (size_t j = 0; j < r->n && j < CREC_MAX; j++)
        if (!strcmp(r->log[j].key, key) && i-- == 0) {
            t = r->log[j].start_ns;
            break;
        }
    pthread_mutex_unlock(&r->mu);
    return t;
}

/* Poll the controller's counters until pred holds (bounded): for effects that follow a
 * reconcile's return (the queue action), which no callback can observe. */
#define CFX_WAIT_STATS(ctrl, st, cond, timeout_ms)                                                 \
    ({                                                                                             \
        uint64_t cfx_dl_ = kc__deadline_after_ms(timeout_ms);                                      \
        kc_controller_get_stats((ctrl), &(st));                                                    \
        while (!(cond) && kc__now_ns() < cfx_dl_) {                                                \
            kc__sleep_ns(KC__NS_PER_MS); /* bounded poll of a condition, not a sleep-for-sync */   \
            kc_controller_get_stats((ctrl), &(st));                                                \
        }                                                                                          \
        (cond);                                                                                    \
    })

static inline size_t cfx_on_body(char *p, size_t sz, size_t n, void *ud)
{
    kc__buf_append(ud, p, sz * n);
    return sz * n;
}

/* GET base+path (the controller's health endpoint; curl_global_init done by the test): the body
 * (malloc'd, NUL-terminated; caller frees; NULL when the request failed) and *status (-1 when
 * it failed). */
static inline char *cfx_http_get(const char *base, const char *path, long *status)
{
    char url[256];
    snprintf(url, sizeof(url), "%s%s", base, path);
    kc__buf b = KC__BUF_INIT(8 << 20);
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, cfx_on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
    *status = -1;
    CURLcode rc = curl_easy_perform(h);
    if (rc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    curl_easy_cleanup(h);
    char *body = kc__buf_steal(&b, NULL);
    if (rc != CURLE_OK) {
        free(body);
        return NULL;
    }
    return body;
}

static const kc_gvr cfx_secrets = {"", "v1", "secrets"};

/* The primary type of the tests: ConfigMaps. */
static const kc_controller_type cfx_cm_type = {.gvr = {"", "v1", "configmaps"},
                                               .kind = "ConfigMap"};

/* Controller options over ConfigMaps in "default" with the recorder. */
static inline kc_controller_opts cfx_opts(crec *r)
{
    kc_controller_opts o = {0};
    o.name = "test";
    o.primary = &cfx_cm_type;
    o.primary_size = sizeof cfx_cm_type;
    o.reconcile = crec_reconcile;
    o.ud = r;
    o.sync_timeout_ms = 20000;
    return o;
}

static inline kc_controller *cfx_new(ifx *f, const kc_controller_opts *o, crec *r)
{
    kc_controller *c = NULL;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_controller_new(f->client, o, &c, &e), 0, &e);
    r->ctrl = c;
    return c;
}

static inline void cfx_start(kc_controller *c)
{
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_controller_start(c, &e), 0, &e);
    kc_error_clear(&e);
}

static inline void cfx_create_cm(ifx *f, const char *name)
{
    char body[512];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"},"
             "\"data\":{\"a\":\"1\"}}",
             name);
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_client_create(f->client, &ifx_cm, "default", body, strlen(body), NULL, NULL, &e), 0,
           &e);
}

/* A Secret whose ownerReference names owner_kind/owner_name (controller as given). */
static inline void cfx_create_secret(ifx *f, const char *name, const char *owner_api,
                                     const char *owner_kind, const char *owner_name, bool ctrl)
{
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"%s\","
             "\"ownerReferences\":[{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"name\":\"%s\","
             "\"uid\":\"u-%s\",\"controller\":%s}]}}",
             name, owner_api, owner_kind, owner_name, owner_name, ctrl ? "true" : "false");
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_client_create(f->client, &cfx_secrets, "default", body, strlen(body), NULL, NULL, &e),
           0, &e);
}

/* One test's whole set-up: server, recorder, options (changed by the test before cfx_make: o,
 * and the nested structs o points at — primary, its pred, queue, client) and the controller. */
typedef struct cfx {
    ifx f;
    crec r;
    kc_controller_opts o;
    kc_controller_type primary;
    kc_predicate pred;
    kc_workqueue_opts queue;
    kc_cached_client_opts client;
    kc_controller *c;
} cfx;

/* x->o = cfx_opts with its nested structs pointing at x's (reset to the fixture's defaults). */
static inline void cfx_reset_opts(cfx *x)
{
    x->o = cfx_opts(&x->r);
    x->primary = cfx_cm_type;
    memset(&x->pred, 0, sizeof x->pred);
    memset(&x->queue, 0, sizeof x->queue);
    memset(&x->client, 0, sizeof x->client);
    x->primary.predicate = &x->pred;
    x->primary.predicate_size = sizeof x->pred;
    x->o.primary = &x->primary;
    x->o.primary_size = sizeof x->primary;
    x->o.queue = &x->queue;
    x->o.queue_size = sizeof x->queue;
    x->o.client = &x->client;
    x->o.client_size = sizeof x->client;
}

static inline void cfx_up(cfx *x, const char *seed_spec, crec_decide_fn decide)
{
    ifx_up(&x->f, seed_spec);
    crec_init(&x->r, decide);
    cfx_reset_opts(x);
    x->c = NULL;
}

static inline kc_controller *cfx_make(cfx *x)
{
    x->c = cfx_new(&x->f, &x->o, &x->r);
    return x->c;
}

static inline void cfx_down(cfx *x)
{
    kc_controller_free(x->c);
    crec_destroy(&x->r);
    ifx_down(&x->f);
}

/* Every LIST and WATCH answers 503 (until the faults are reset), and the primary informer retries
 * fast (20–50 ms). */
static kc_informer_opts cfx_fast_retry = {.backoff_initial_ms = 20, .backoff_max_ms = 50};

static inline void cfx_fail_lists(cfx *x)
{
    kc_server_faults fl = {0};
    fl.rate_503[KC_SERVER_VERB_LIST] = 1.0;
    fl.rate_503[KC_SERVER_VERB_WATCH] = 1.0;
    ifx_faults(&x->f, &fl);
    x->primary.informer = &cfx_fast_retry;
    x->primary.informer_size = sizeof cfx_fast_retry;
}

#endif
