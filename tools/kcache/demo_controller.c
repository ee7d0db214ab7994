/*
 * demo_controller.c — scenario 4 of `kcache demo`: the field report's controller, end to end, on
 * its own embedded API server (always in-process, also with --kubeconfig: it installs a CRD and
 * 400 objects, which a demo should not do to a real cluster) with the demo's watch delay.
 *
 * A Migration (migrations.example.kcache.io) is reconciled as examples/migration_operator.c
 * does: read it from the cache, create its Secret (owned by it) unless the cache has it, read the
 * Secret back from the cache, set status Ready. A read-back that misses the Secret this very
 * reconcile created is the mig-controller failure: the reconcile returns an error (rate-limited
 * retry) and is counted.
 *   (a) read-your-writes off (KC_RYW_NONE): N Migrations created while the controller runs;
 *       failed_stale_no_ryw is expected to be large;
 *   (b) read-your-writes on (block-on-write, the default): failed_stale_ryw must be 0;
 *       all_ready_ms (first create → last Ready) and reconcile_p99_ms come from this run;
 *   (c) a new controller started while the server already holds (b)'s objects: every reconcile
 *       checks that the controller's cache has synced; reconciled_before_sync must be 0.
 */
#include "cli.h"
#include "demo_common.h"

#include "kcache/controller.h"
#include "kcache/server.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const kc_gvr migrations = {"example.kcache.io", "v1", "migrations"};
static const kc_gvr crds = {"apiextensions.k8s.io", "v1", "customresourcedefinitions"};

static const char crd_json[] =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"migrations.example.kcache.io\"},\"spec\":{\"group\":"
    "\"example.kcache.io\",\"scope\":\"Namespaced\",\"names\":{\"plural\":\"migrations\","
    "\"singular\":\"migration\",\"kind\":\"Migration\"},\"versions\":[{\"name\":\"v1\","
    "\"served\":true,\"storage\":true,\"subresources\":{\"status\":{}}}]}}";

#define CTRL_MAX_N 1000

/* One run's shared state (under mu). */
typedef struct run {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    kc_controller *ctrl;
    unsigned n, ready, stale, before_sync, reconciles;
    bool is_ready[CTRL_MAX_N];
    double *durations; /* ms of each reconcile, up to cap */
    size_t n_dur, cap_dur;
    uint64_t last_ready_ns;
} run;

static int index_of(const char *name)
{
    int i = -1;
    return sscanf(name, "m-%d", &i) == 1 ? i : -1;
}

static bool obj_ready(kc_obj *mig)
{
    char *phase = NULL;
    kc_obj_get_string(mig, "/status/phase", &phase, NULL, NULL);
    bool ok = phase && !strcmp(phase, "Ready");
    free(phase);
    return ok;
}

/* Steps 2–3: the owned Secret, created unless cached, then read back. *ret_created says whether
 * this call created it. */
static int secret_step(kc_cached_client *cc, kc_obj *mig, const char *secret, bool *ret_created,
                       kc_error *err)
{
    const kc_gvr *sg = &demo_secrets;
    kc_obj *s = NULL;
    int rc = kc_cached_client_get(cc, sg, kc_obj_namespace(mig), secret, NULL, &s, err);
    kc_obj_unref(s);
    if (rc == 0 || rc != KC_ENOTFOUND)
        return rc;
    char *body = NULL;
    size_t len = 0;
    rc = kc_json_format(&body, &len, err,
                        "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":%s,"
                        "\"ownerReferences\":[{\"apiVersion\":\"example.kcache.io/v1\",\"kind\":"
                        "\"Migration\",\"name\":%s,\"uid\":%s,\"controller\":true}]}}",
                        secret, kc_obj_name(mig), kc_obj_uid(mig));
    if (rc == 0)
        rc = kc_cached_client_create(cc, sg, kc_obj_namespace(mig), body, len, NULL, NULL, NULL,
                                     err);
    free(body);
    if (rc == 0)
        *ret_created = true;
    else if (rc != KC_EEXISTS)
        return rc;
    /* the read the mig-controller team's next step did */
    rc = kc_cached_client_get(cc, sg, kc_obj_namespace(mig), secret, NULL, &s, err);
    kc_obj_unref(s);
    return rc;
}

static int status_step(kc_cached_client *cc, kc_obj *mig, const char *secret, kc_error *err)
{
    char *body = NULL;
    size_t len = 0;
    int64_t gen = kc_obj_generation(mig);
    int rc = kc_json_format(&body, &len, err,
                            "{\"status\":{\"phase\":\"Ready\",\"secretName\":%s,"
                            "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
                            "\"reason\":\"SecretReady\",\"observedGeneration\":%l}]}}",
                            secret, gen);
    kc_patch_opts po = {.subresource = "status"};
    if (rc == 0)
        rc = kc_cached_client_patch(cc, &migrations, kc_obj_namespace(mig), kc_obj_name(mig),
                                    KC_PATCH_MERGE, body, len, &po, NULL, NULL, err);
    free(body);
    return rc;
}

static void note(run *r, uint64_t t0, int idx, bool ready, bool stale, bool before_sync)
{
    double ms = (double)(kc__cli_now_ns() - t0) / 1e6;
    pthread_mutex_lock(&r->mu);
    r->reconciles++;
    r->stale += stale;
    r->before_sync += before_sync;
    if (r->n_dur < r->cap_dur)
        r->durations[r->n_dur++] = ms;
    if (ready && idx >= 0 && idx < (int)r->n && !r->is_ready[idx]) {
        r->is_ready[idx] = true;
        r->ready++;
        r->last_ready_ns = kc__cli_now_ns();
        pthread_cond_broadcast(&r->cv);
    }
    pthread_mutex_unlock(&r->mu);
}

static kc_reconcile_result reconcile(void *ud, const kc_reconcile_request *req,
                                     kc_cached_client *cc)
{
    run *r = ud;
    uint64_t t0 = kc__cli_now_ns();
    bool before_sync = !kc_cache_has_synced(kc_controller_cache(r->ctrl));
    kc_error err = KC_ERROR_INIT;
    kc_obj *mig = NULL;
    bool created = false, ready = false;
    char secret[300];
    snprintf(secret, sizeof(secret), "%s-secret", req->name);
    int rc = kc_cached_client_get(cc, &migrations, req->ns, req->name, NULL, &mig, &err);
    if (rc == 0 && obj_ready(mig)) {
        ready = true; /* (c), or a repeat after the Secret's own event */
    } else if (rc == 0) {
        rc = secret_step(cc, mig, secret, &created, &err);
        if (rc == 0)
            rc = status_step(cc, mig, secret, &err);
        ready = rc == 0;
    }
    bool stale = rc == KC_ENOTFOUND && created;
    note(r, t0, index_of(req->name), ready, stale, before_sync);
    kc_obj_unref(mig);
    kc_error_clear(&err);
    if (rc == KC_ENOTFOUND && !mig)
        return (kc_reconcile_result){KC_RECONCILE_DONE, 0}; /* gone */
    return (kc_reconcile_result){rc == 0 ? KC_RECONCILE_DONE : KC_RECONCILE_ERROR, 0};
}

static int new_controller(kc_client *client, run *r, const char *ns, kc_ryw_mode mode,
                          unsigned workers, kc_error *err)
{
    kc_informer_opts io = {.ns = ns};
    kc_predicate generation = {.flags = KC_PREDICATE_GENERATION_CHANGED};
    kc_controller_type primary = {.gvr = migrations,
                                  .kind = "Migration",
                                  .informer = &io,
                                  .informer_size = sizeof io,
                                  .predicate = &generation,
                                  .predicate_size = sizeof generation};
    kc_cached_client_opts cco = {.mode = mode, .ns = ns};
    kc_controller_opts o = {
        .name = "demo-migrations",
        .primary = &primary,
        .primary_size = sizeof primary,
        .reconcile = reconcile,
        .ud = r,
        .max_concurrent_reconciles = workers,
        .sync_timeout_ms = 60000,
        .client = &cco,
        .client_size = sizeof cco,
    };
    int rc = kc_controller_new(client, &o, &r->ctrl, err);
    kc_controller_type owned = {.gvr = demo_secrets, .informer = &io, .informer_size = sizeof io};
    if (rc == 0)
        rc = kc_controller_own(r->ctrl, &owned, err);
    return rc;
}

static int create_migrations(kc_client *client, const char *ns, unsigned n, kc_error *err)
{
    for (unsigned i = 0; i < n; i++) {
        char body[256];
        snprintf(body, sizeof(body),
                 "{\"apiVersion\":\"example.kcache.io/v1\",\"kind\":\"Migration\",\"metadata\":"
                 "{\"name\":\"m-%03u\"},\"spec\":{\"source\":\"db-%u\"}}",
                 i, i);
        int rc = kc_client_create(client, &migrations, ns, body, strlen(body), NULL, NULL, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Wait (60 s bound) until every Migration of the run is Ready. */
static int wait_ready(run *r, kc_error *err)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 60;
    pthread_mutex_lock(&r->mu);
    while (r->ready < r->n && pthread_cond_timedwait(&r->cv, &r->mu, &dl) == 0) {
    }
    unsigned ready = r->ready;
    pthread_mutex_unlock(&r->mu);
    if (ready < r->n)
        return kc_error_set(err, KC_ETIMEOUT, "%u of %u Migrations Ready after 60 s", ready, r->n);
    return 0;
}

/* One scenario: a controller in ns (mode), objects created after its start unless preexisting. */
static int one_run(kc_client *client, const char *ns, kc_ryw_mode mode, const demo_opts *o,
                   bool create, run *r, uint64_t *ret_t0, kc_error *err)
{
    memset(r, 0, sizeof(*r));
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->n = o->n_ctrl;
    r->cap_dur = 16 * (size_t)r->n;
    r->durations = calloc(r->cap_dur, sizeof(double));
    if (!r->durations)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    int rc = new_controller(client, r, ns, mode, o->workers, err);
    if (rc == 0)
        rc = kc_controller_start(r->ctrl, err);
    *ret_t0 = kc__cli_now_ns();
    if (rc == 0 && create)
        rc = create_migrations(client, ns, r->n, err);
    if (rc == 0)
        rc = wait_ready(r, err);
    kc_controller_free(r->ctrl);
    r->ctrl = NULL;
    return rc;
}

static void run_clear(run *r)
{
    free(r->durations);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
}

static int setup(const demo_opts *o, kc_server **srv, kc_config **cfg, kc_client **client,
                 kc_error *err)
{
    kc_server_faults faults = {.watch_delay_min_ms = o->delay_min_ms,
                               .watch_delay_max_ms = o->delay_max_ms};
    kc_server_opts so = {
        .listen = "127.0.0.1:0", .quiet = true, .faults = &faults, .faults_size = sizeof faults};
    int rc = kc_server_new(&so, srv, err);
    if (rc == 0)
        rc = kc_server_start(*srv, err);
    if (rc == 0)
        rc = kc_config_from_url(kc_server_url(*srv), NULL, NULL, cfg, err);
    kc_client_opts co = {.qps = -1};
    if (rc == 0)
        rc = kc_client_new(*cfg, &co, client, err);
    if (rc == 0)
        rc = kc_client_create(*client, &crds, NULL, crd_json, strlen(crd_json), NULL, NULL, err);
    const char *nss[] = {"demo-no-ryw", "demo-ryw"};
    for (size_t i = 0; rc == 0 && i < 2; i++) {
        char body[160];
        snprintf(body, sizeof(body),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
                 nss[i]);
        rc = kc_client_create(*client, &demo_namespaces, NULL, body, strlen(body), NULL, NULL, err);
    }
    return rc;
}

int demo_controller(const demo_opts *o, demo_results *res, kc_error *err)
{
    kc_server *srv = NULL;
    kc_config *cfg = NULL;
    kc_client *client = NULL;
    run a, b, c;
    uint64_t t0;
    bool ha = false, hb = false, hc = false;
    int rc = setup(o, &srv, &cfg, &client, err);
    if (rc == 0 && o->progress)
        fprintf(stderr, "\r\033[K  controller: read-your-writes off…");
    if (rc == 0)
        rc = one_run(client, "demo-no-ryw", KC_RYW_NONE, o, true, &a, &t0, err), ha = true;
    if (rc == 0 && o->progress)
        fprintf(stderr, "\r\033[K  controller: read-your-writes on…");
    if (rc == 0)
        rc = one_run(client, "demo-ryw", KC_RYW_BLOCK_ON_WRITE, o, true, &b, &t0, err), hb = true;
    if (rc == 0) {
        res->ctrl_all_ready_ms = (double)(b.last_ready_ns - t0) / 1e6;
        res->ctrl_reconcile_p99_ms = demo_percentile(b.durations, b.n_dur, 99);
    }
    if (rc == 0 && o->progress)
        fprintf(stderr, "\r\033[K  controller: restart over existing objects…");
    if (rc == 0) /* (c): the objects of (b) are on the server already */
        rc = one_run(client, "demo-ryw", KC_RYW_BLOCK_ON_WRITE, o, false, &c, &t0, err), hc = true;
    if (o->progress)
        fprintf(stderr, "\r\033[K");
    if (rc == 0) {
        res->ctrl_n = o->n_ctrl;
        res->ctrl_failed_stale_no_ryw = a.stale;
        res->ctrl_failed_stale_ryw = b.stale;
        res->ctrl_before_sync = a.before_sync + b.before_sync + c.before_sync;
        res->ctrl_reconciles_no_ryw = a.reconciles;
        res->ctrl_reconciles_ryw = b.reconciles;
        res->ctrl_reconciles_restart = c.reconciles;
        res->ctrl_done = true;
    }
    if (ha)
        run_clear(&a);
    if (hb)
        run_clear(&b);
    if (hc)
        run_clear(&c);
    kc_client_free(client);
    kc_config_unref(cfg);
    kc_server_free(srv);
    return rc;
}
