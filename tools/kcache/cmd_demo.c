/*
 * cmd_demo.c — `kcache demo` (and `make demo`): the two field reports behind read-your-writes,
 * reproduced on the embedded API server (or a real cluster with --kubeconfig).
 *
 *   1. create then read — the konveyor mig-controller failure: a Secret created and immediately
 *      read from the cache is missing while watch events lag 10–500 ms; counted without waiting,
 *      with block-on-write and with block-on-read;
 *   2. discovery — N PersistentVolumes read one by one through API GETs vs through the cache;
 *   3. readiness — time from creating the cache to every informer synced;
 *   4. controller — a Migration operator whose reconcile creates a Secret and reads it back,
 *      with read-your-writes off and on, and restarted over existing objects (demo_controller.c;
 *      always on its own embedded server);
 *   6. webhook — a validating admission webhook whose cache is still syncing, with the readiness
 *      gating off and on, then a certificate rotation under load (demo_webhook.c; its own
 *      embedded server).
 * This file parses flags, sets up (server or kubeconfig, client, cache, the demo namespace and,
 * on a real cluster, the PVs) and tears down; demo_run.c runs the scenarios and demo_report.c
 * prints. Exit status: 0 when both wait modes had no stale read and the controller with
 * read-your-writes neither failed on a stale read nor reconciled before its caches synced, 1
 * otherwise or on a failure, 2 for bad flags.
 */
#include "cli.h"
#include "demo_common.h"
#include "demo_shards.h"

#include "kcache/server.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void demo_usage(FILE *f)
{
    fprintf(f,
            "Usage: kcache demo [options]\n"
            "       kcache demo shards [options]   (scale-out: see 'kcache demo shards --help')\n\n"
            "Reproduces the two field reports behind read-your-writes: Secrets created and read\n"
            "back at once through the cache (no wait / block-on-write / block-on-read), and\n"
            "PersistentVolume discovery through API GETs vs the cache, and a controller whose\n"
            "reconcile creates a Secret and reads it back. By default it starts the embedded API\n"
            "server in-process with delayed watch events (the controller scenario always runs on\n"
            "its own embedded server).\n\n"
            "Options:\n"
            "  --n N              Secrets created per mode (default 500)\n"
            "  --pv N             PersistentVolumes read in the discovery scenario (default 1000)\n"
            "  --controller N     Migrations reconciled in the controller scenario (default 200;\n"
            "                     0 skips it)\n"
            "  --shards N         Pods of the scale-out scenario: 4 replica processes of a\n"
            "                     sharded controller, as 'kcache demo shards --objects N'\n"
            "                     (default 2000; 0 skips it; embedded server only)\n"
            "  --webhook N        admissions per run of the webhook scenario: a validating\n"
            "                     webhook asked while its cache syncs, gating off and on, then\n"
            "                     through a certificate rotation (default 1000; 0 skips it;\n"
            "                     always on its own embedded server)\n"
            "  --workers N        concurrent writer threads per mode, and reconcile workers\n"
            "                     (default 32)\n"
            "  --watch-delay D    watch event delay MIN[-MAX], e.g. 10ms-500ms, 0 (default "
            "10ms-500ms;\n"
            "                     embedded server only)\n"
            "  --timeout MS       read-your-writes wait bound in ms (default 3000)\n"
            "  --kubeconfig FILE  run against that cluster instead (creates and deletes a\n"
            "                     namespace kcache-demo-<id> and N labelled PersistentVolumes)\n"
            "  --json             print machine-readable results (format: "
            "docs/read-your-writes.md)\n"
            "  --no-progress      no progress line on stderr\n"
            "  -h, --help         this help\n");
}

bool demo_parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || errno || *s == '-' || v < min || v > max)
        return false;
    *ret = (unsigned)v;
    return true;
}

/* "250", "250ms", "1s" → ms. */
static bool parse_ms(const char *s, size_t len, unsigned *ret)
{
    char buf[32];
    if (len == 0 || len >= sizeof(buf))
        return false;
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end == buf || errno || v < 0)
        return false;
    if (!strcmp(end, "s"))
        v *= 1000;
    else if (*end && strcmp(end, "ms"))
        return false;
    if (v > 600000)
        return false;
    *ret = (unsigned)(v + 0.5);
    return true;
}

static bool parse_delay(const char *s, unsigned *ret_min, unsigned *ret_max)
{
    const char *dash = strchr(s, '-');
    unsigned lo, hi;
    if (!parse_ms(s, dash ? (size_t)(dash - s) : strlen(s), &lo))
        return false;
    hi = lo;
    if (dash && !parse_ms(dash + 1, strlen(dash + 1), &hi))
        return false;
    if (hi < lo)
        return false;
    *ret_min = lo;
    *ret_max = hi;
    return true;
}

/* Parse flags into *o. Returns -1 to go on, else the exit status. */
static int parse_flags(int argc, char **argv, demo_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            demo_usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--json")) {
            o->json = true;
            continue;
        }
        if (!strcmp(a, "--no-progress")) {
            o->progress = false;
            continue;
        }
        char flag[32];
        const char *eq = strchr(a, '=');
        if (strncmp(a, "--", 2) != 0)
            return kc__cli_usage_error("demo", "%s: unexpected argument", a);
        size_t fl = eq ? (size_t)(eq - a) : strlen(a);
        if (fl >= sizeof(flag))
            return kc__cli_usage_error("demo", "%s: unknown flag", a);
        memcpy(flag, a, fl);
        flag[fl] = 0;
        static const char *const valued[] = {"--n",          "--pv",          "--workers",
                                             "--controller", "--watch-delay", "--timeout",
                                             "--kubeconfig", "--shards",      "--webhook"};
        bool known = false;
        for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]); k++)
            known = known || !strcmp(flag, valued[k]);
        if (!known && (!strcmp(flag, "--json") || !strcmp(flag, "--no-progress")))
            return kc__cli_usage_error("demo", "%s: takes no value", flag);
        if (!known)
            return kc__cli_usage_error("demo", "%s: unknown flag", flag);
        if (eq)
            v = eq + 1;
        else if (i + 1 < argc)
            v = argv[++i];
        else
            return kc__cli_usage_error("demo", "%s: missing value", flag);
        unsigned u;
        if (!strcmp(flag, "--n")) {
            if (!demo_parse_uint(v, 1, 1000000, &o->n))
                return kc__cli_usage_error("demo",
                                           "--n: expected a count from 1 to 1000000, got '%s'", v);
        } else if (!strcmp(flag, "--pv")) {
            if (!demo_parse_uint(v, 1, 1000000, &o->n_pv))
                return kc__cli_usage_error("demo",
                                           "--pv: expected a count from 1 to 1000000, got '%s'", v);
        } else if (!strcmp(flag, "--controller")) {
            if (!demo_parse_uint(v, 0, 1000, &o->n_ctrl))
                return kc__cli_usage_error("demo", "--controller: expected 0 to 1000, got '%s'", v);
        } else if (!strcmp(flag, "--shards")) {
            if (!demo_parse_uint(v, 0, 1000000, &o->n_shards))
                return kc__cli_usage_error("demo", "--shards: expected 0 to 1000000, got '%s'", v);
        } else if (!strcmp(flag, "--webhook")) {
            if (!demo_parse_uint(v, 0, 100000, &o->n_webhook))
                return kc__cli_usage_error("demo", "--webhook: expected 0 to 100000, got '%s'", v);
        } else if (!strcmp(flag, "--workers")) {
            if (!demo_parse_uint(v, 1, 1024, &o->workers))
                return kc__cli_usage_error("demo", "--workers: expected 1 to 1024, got '%s'", v);
        } else if (!strcmp(flag, "--timeout")) {
            if (!demo_parse_uint(v, 1, 3600000, &u))
                return kc__cli_usage_error(
                    "demo", "--timeout: expected milliseconds (1 to 3600000), got '%s'", v);
            o->timeout_ms = u;
        } else if (!strcmp(flag, "--watch-delay")) {
            if (!parse_delay(v, &o->delay_min_ms, &o->delay_max_ms))
                return kc__cli_usage_error(
                    "demo", "--watch-delay: expected MIN[-MAX] like 10ms-500ms, got '%s'", v);
        } else if (!strcmp(flag, "--kubeconfig")) {
            if (!*v)
                return kc__cli_usage_error("demo", "--kubeconfig: empty path");
            o->kubeconfig = v;
        } else {
            return kc__cli_usage_error("demo", "%s: unknown flag", flag);
        }
    }
    return -1;
}

/* ---- set-up helpers -------------------------------------------------------------------------- */

static int fail(const char *what, int rc, const kc_error *e)
{
    fprintf(stderr, "kcache demo: %s: %s%s%s\n", what, kc_strerror(rc), e && e->message ? ": " : "",
            e && e->message ? e->message : "");
    return 1;
}

static int create_json(kc_client *c, const kc_gvr *gvr, const char *ns, json_t *doc, kc_error *e)
{
    char *s = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (!s)
        return kc_error_set(e, KC_ENOMEM, "out of memory");
    int rc = kc_client_create(c, gvr, ns, s, strlen(s), NULL, NULL, e);
    free(s);
    return rc;
}

typedef struct pv_job {
    kc_client *client;
    const char *run_id;
    unsigned n;
    atomic_uint next, failed;
} pv_job;

static void *pv_worker(void *arg)
{
    pv_job *j = arg;
    for (unsigned i; (i = atomic_fetch_add(&j->next, 1)) < j->n;) {
        char name[96];
        snprintf(name, sizeof(name), "%s-pv-%05u", j->run_id, i);
        json_t *doc = json_pack(
            "{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:{s:s}, s:[s], s:{s:s}, s:s}}", "apiVersion", "v1",
            "kind", "PersistentVolume", "metadata", "name", name, "labels", "kcache-demo",
            j->run_id, "spec", "capacity", "storage", "1Mi", "accessModes", "ReadWriteOnce",
            "hostPath", "path", "/tmp/kcache-demo", "persistentVolumeReclaimPolicy", "Retain");
        kc_error e = KC_ERROR_INIT;
        if (!doc || create_json(j->client, &demo_pvs, NULL, doc, &e) < 0)
            atomic_fetch_add(&j->failed, 1);
        kc_error_clear(&e);
    }
    return NULL;
}

/* Real cluster: create the demo's PVs with `workers` threads. */
static int create_pvs(kc_client *client, const char *run_id, unsigned n, unsigned workers)
{
    pv_job j = {.client = client, .run_id = run_id, .n = n};
    pthread_t th[64];
    unsigned nw = workers < 64 ? workers : 64, started = 0;
    for (; started < nw; started++)
        if (pthread_create(&th[started], NULL, pv_worker, &j) != 0)
            break;
    if (!started)
        pv_worker(&j);
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    return atomic_load(&j.failed) ? -1 : 0;
}

/* ---- the command ----------------------------------------------------------------------------- */

/* One run of the demo: its names and the handles its steps open (freed by demo_run_close). */
typedef struct demo_run {
    char run_id[32], ns[64], pv_sel[64];
    kc_server *srv;
    kc_config *cfg;
    kc_client *client;
    kc_cache *cache;
    demo_env env;
    bool ns_created, pvs_created;
} demo_run;

/* Where the API server is: the embedded one (seeded with the PVs) or --kubeconfig's; and the
 * client. Returns < 0 after printing what failed. */
static int demo_connect(demo_run *r, const demo_opts *o, kc_error *e)
{
    int rc;
    if (!o->kubeconfig) {
        char seed[64];
        snprintf(seed, sizeof(seed), "persistentvolumes=%u", o->n_pv);
        kc_server_faults faults = {.watch_delay_min_ms = o->delay_min_ms,
                                   .watch_delay_max_ms = o->delay_max_ms};
        kc_server_opts so = {.listen = "127.0.0.1:0",
                             .quiet = true,
                             .seed_spec = seed,
                             .faults = &faults,
                             .faults_size = sizeof faults};
        if ((rc = kc_server_new(&so, &r->srv, e)) < 0 || (rc = kc_server_start(r->srv, e)) < 0) {
            fail("starting the embedded API server", rc, e);
            return rc;
        }
        if ((rc = kc_config_from_url(kc_server_url(r->srv), NULL, NULL, &r->cfg, e)) < 0) {
            fail("configuration", rc, e);
            return rc;
        }
    } else {
        kc_config_opts co = {.kubeconfig = o->kubeconfig};
        if ((rc = kc_config_load(&co, &r->cfg, e)) < 0) {
            fail(o->kubeconfig, rc, e);
            return rc;
        }
        r->env.pv_selector = r->pv_sel;
    }
    /* The embedded server is local: no client-side rate limit, as the comparison is about
     * round trips; a real cluster keeps the client's default limiter. */
    kc_client_opts clo = {.qps = o->kubeconfig ? 0 : -1};
    if ((rc = kc_client_new(r->cfg, &clo, &r->client, e)) < 0) {
        fail("client", rc, e);
        return rc;
    }
    r->env.client = r->client;
    return 0;
}

/* The demo's namespace, and on a real cluster its PVs (the embedded server was seeded). */
static int demo_create_objects(demo_run *r, const demo_opts *o, kc_error *e)
{
    int rc;
    json_t *nsdoc = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                              "metadata", "name", r->ns);
    if ((rc = create_json(r->client, &demo_namespaces, NULL, nsdoc, e)) < 0) {
        fail("creating the demo namespace", rc, e);
        return rc;
    }
    r->ns_created = true;
    if (o->kubeconfig) {
        if (o->progress)
            fprintf(stderr, "  creating %u PersistentVolumes…", o->n_pv);
        r->pvs_created = true;
        if (create_pvs(r->client, r->run_id, o->n_pv, o->workers) < 0) {
            fprintf(stderr, "\nkcache demo: creating the demo PersistentVolumes failed\n");
            return -1;
        }
        if (o->progress)
            fprintf(stderr, "\r\033[K");
    }
    return 0;
}

/* 3. Readiness: from creating the cache to every informer synced (res->synced_ms); then one
 * cached client per read-your-writes mode. */
static int demo_start_cache(demo_run *r, const demo_opts *o, demo_results *res, kc_error *e)
{
    int rc;
    uint64_t t0 = kc__cli_now_ns();
    if ((rc = kc_cache_new(r->client, NULL, &r->cache, e)) < 0) {
        fail("cache", rc, e);
        return rc;
    }
    r->env.cache = r->cache;
    kc_informer *inf;
    kc_informer_opts io_sec = {.ns = r->ns}, io_pv = {0};
    if ((rc = kc_cache_get_informer(r->cache, &demo_secrets, &io_sec, &inf, e)) < 0 ||
        (rc = kc_cache_get_informer(r->cache, &demo_pvs, &io_pv, &inf, e)) < 0) {
        fail("starting informers", rc, e);
        return rc;
    }
    if ((rc = kc_cache_wait_synced(r->cache, 60000, e)) < 0) {
        fail("waiting for the caches to sync", rc, e);
        return rc;
    }
    res->synced_ms = (double)(kc__cli_now_ns() - t0) / 1e6;

    const kc_ryw_mode modes[DEMO_MODES] = {KC_RYW_NONE, KC_RYW_BLOCK_ON_WRITE,
                                           KC_RYW_BLOCK_ON_READ};
    for (int m = 0; m < DEMO_MODES; m++) {
        kc_cached_client_opts cco = {.mode = modes[m], .timeout_ms = o->timeout_ms, .ns = r->ns};
        if ((rc = kc_cached_client_new(r->client, r->cache, &cco, &r->env.cc[m], e)) < 0) {
            fail("cached client", rc, e);
            return rc;
        }
    }
    return 0;
}

/* Sections 1 (create then read), 2 (discovery) and 4 (controller). */
static int demo_run_sections(demo_run *r, const demo_opts *o, demo_results *res, kc_error *e)
{
    int rc;
    for (int m = 0; m < DEMO_MODES; m++) {
        if ((rc = demo_create_then_read(&r->env, o, m, &res->modes[m], e)) < 0) {
            fail(demo_mode_labels[m], rc, e);
            return rc;
        }
    }
    if ((rc = demo_discovery(&r->env, o, res, e)) < 0) {
        fail("discovery", rc, e);
        return rc;
    }
    if (o->n_ctrl && (rc = demo_controller(o, res, e)) < 0) {
        fail("controller", rc, e);
        return rc;
    }
    if (o->n_shards && !o->kubeconfig) { /* replica processes over an embedded server of its own */
        shards_opts so = {.replicas = 4,
                          .objects = o->n_shards,
                          .ranges = 16,
                          .ld_ms = 2000,
                          .rd_ms = 1500,
                          .rp_ms = 500,
                          .fallback = true};
        if ((rc = demo_shards_run(&so, &res->shards, e)) < 0) {
            fail("scale-out", rc, e);
            return rc;
        }
        res->shards_done = true;
    }
    if (o->n_webhook) {
        if ((rc = demo_webhook(o, &res->wh, e)) < 0) {
            fail("webhook", rc, e);
            return rc;
        }
        res->wh_done = true;
    }
    return 0;
}

/* Exit status: 0 when no mode saw an error, the blocking modes read nothing stale, the
 * controller neither acted before sync nor failed on a stale read, and the gated webhook gave no
 * wrong answer and failed no admission (rotation included). */
static int demo_verdict(const demo_results *res)
{
    bool clean = true;
    for (int m = 0; m < DEMO_MODES; m++)
        clean = clean && res->modes[m].errors == 0;
    return (clean && res->modes[DEMO_BLOCK_ON_WRITE].stale == 0 &&
            res->modes[DEMO_BLOCK_ON_READ].stale == 0 && res->ctrl_failed_stale_ryw == 0 &&
            res->ctrl_before_sync == 0 && (!res->shards_done || demo_shards_clean(&res->shards)) &&
            (!res->wh_done || demo_webhook_clean(&res->wh)))
               ? 0
               : 1;
}

/* Stop and free what the steps opened; on a real cluster delete what the demo created. */
static void demo_run_close(demo_run *r, const demo_opts *o)
{
    kc_error e = KC_ERROR_INIT;
    if (r->cache)
        kc_cache_stop(r->cache);
    for (int m = 0; m < DEMO_MODES; m++)
        kc_cached_client_free(r->env.cc[m]);
    kc_cache_free(r->cache);
    if (r->client && o->kubeconfig) { /* leave the cluster as we found it */
        kc_delete_opts dopts = {0};
        dopts.label_selector = r->pv_sel;
        if (r->pvs_created &&
            kc_client_delete_collection(r->client, &demo_pvs, NULL, &dopts, &e) < 0)
            fail("deleting the demo PersistentVolumes", e.code, &e);
        kc_error_clear(&e);
        if (r->ns_created &&
            kc_client_delete(r->client, &demo_namespaces, NULL, r->ns, NULL, NULL, &e) < 0)
            fail("deleting the demo namespace", e.code, &e);
        kc_error_clear(&e);
    }
    kc_client_free(r->client);
    kc_config_unref(r->cfg);
    kc_server_free(r->srv);
}

static int cmd_demo(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "shards"))
        return demo_shards_cmd(argc - 1, argv + 1);
    demo_opts o = {.n = 500,
                   .n_pv = 1000,
                   .n_ctrl = 200,
                   .n_shards = 2000,
                   .n_webhook = 1000,
                   .workers = 32,
                   .delay_min_ms = 10,
                   .delay_max_ms = 500,
                   .timeout_ms = KC_RYW_DEFAULT_TIMEOUT_MS,
                   .progress = true};
    int status = parse_flags(argc, argv, &o);
    if (status >= 0)
        return status;
    o.progress = o.progress && isatty(STDERR_FILENO);

    demo_results res = {.embedded = !o.kubeconfig,
                        .workers = o.workers,
                        .delay_min_ms = o.delay_min_ms,
                        .delay_max_ms = o.delay_max_ms};
    kc_error e = KC_ERROR_INIT;
    demo_run r = {0};
    snprintf(r.run_id, sizeof(r.run_id), "kd%06llx",
             (unsigned long long)(kc__cli_random() & 0xffffff));
    snprintf(r.ns, sizeof(r.ns), "kcache-demo-%s", r.run_id + 2);
    snprintf(r.pv_sel, sizeof(r.pv_sel), "kcache-demo=%s", r.run_id);
    r.env.run_id = r.run_id;
    r.env.ns = r.ns;

    status = 1;
    if (demo_connect(&r, &o, &e) >= 0 && demo_create_objects(&r, &o, &e) >= 0 &&
        demo_start_cache(&r, &o, &res, &e) >= 0 && demo_run_sections(&r, &o, &res, &e) >= 0) {
        if (o.json)
            demo_print_json(&res);
        else
            demo_print_table(&res, &o);
        status = demo_verdict(&res);
    }
    kc_error_clear(&e);
    demo_run_close(&r, &o);
    return status;
}

KC_CLI_COMMAND(demo, "read-your-writes and discovery demo (embedded server or --kubeconfig)",
               cmd_demo)
