/*
 * demo_run.c — the scenarios of `kcache demo`.
 *
 * Create then read (one call per mode): `workers` threads claim indexes from a shared counter;
 * each creates a Secret through the mode's cached client, timing the create ("write latency"),
 * then immediately gets it back through the cache, timing the get ("read latency"), and counts the
 * read stale when the cache answered "not found", answered with an older resourceVersion than the
 * create returned, or could not catch up within the bound. Concurrency only shortens the run: a
 * worker's read always follows its own write, which is the read-your-writes question.
 *
 * Discovery: the mig-controller case — N PersistentVolumes read one by one, first with live API
 * GETs, then from the cache (median of 5 passes; the API pass follows one warm-up GET so the
 * connection exists).
 */
#include "cli.h"
#include "demo_common.h"

#include "kcache/rv.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const kc_gvr demo_secrets = {"", "v1", "secrets"};
const kc_gvr demo_pvs = {"", "v1", "persistentvolumes"};
const kc_gvr demo_namespaces = {"", "v1", "namespaces"};

typedef struct ctr_shared {
    const demo_env *env;
    const demo_opts *o;
    int mode;
    atomic_uint next;
    double *write_ms, *read_ms;
    atomic_uint stale, not_caught_up, errors;
    demo_progress prog;
    pthread_mutex_t err_lock;
    int first_rc;
    char first_err[256];
} ctr_shared;

static void note_error(ctr_shared *s, const char *what, int rc, const kc_error *e)
{
    atomic_fetch_add(&s->errors, 1);
    pthread_mutex_lock(&s->err_lock);
    if (!s->first_rc) {
        s->first_rc = rc;
        snprintf(s->first_err, sizeof(s->first_err), "%s: %s%s%s", what, kc_strerror(rc),
                 e && e->message ? ": " : "", e && e->message ? e->message : "");
    }
    pthread_mutex_unlock(&s->err_lock);
}

static char *secret_body(const char *name, size_t *ret_len)
{
    json_t *doc = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:s}}", "apiVersion", "v1", "kind",
                            "Secret", "metadata", "name", name, "labels", "app", "kcache-demo",
                            "data", "token", "a2NhY2hlLWRlbW8=");
    if (!doc)
        return NULL;
    char *s = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (s)
        *ret_len = strlen(s);
    return s;
}

static bool is_stale(const kc_obj *written, const kc_obj *read)
{
    const char *w = kc_obj_resource_version(written), *r = kc_obj_resource_version(read);
    kc_rv_order ord = kc_rv_compare(r, w);
    return ord == KC_RV_LESS || (ord == KC_RV_NOT_COMPARABLE && strcmp(r, w) != 0);
}

static void one(ctr_shared *s, kc_cached_client *cc, unsigned i)
{
    char name[128];
    snprintf(name, sizeof(name), "%s-%s-%05u", s->env->run_id, demo_mode_names[s->mode], i);
    for (char *p = name; *p; p++)
        if (*p == '_')
            *p = '-';
    size_t len = 0;
    char *body = secret_body(name, &len);
    if (!body) {
        note_error(s, "building a Secret", KC_ENOMEM, NULL);
        return;
    }
    kc_error e = KC_ERROR_INIT;
    kc_obj *written = NULL, *read = NULL;
    uint64_t t0 = kc__cli_now_ns();
    int rc =
        kc_cached_client_create(cc, &demo_secrets, s->env->ns, body, len, NULL, NULL, &written, &e);
    uint64_t t1 = kc__cli_now_ns();
    free(body);
    s->write_ms[i] = (double)(t1 - t0) / 1e6;
    if (rc == KC_ENOT_CAUGHT_UP)
        atomic_fetch_add(&s->not_caught_up, 1);
    else if (rc < 0) {
        note_error(s, "create", rc, &e);
        kc_error_clear(&e);
        return;
    }
    kc_error_clear(&e);
    rc = kc_cached_client_get(cc, &demo_secrets, s->env->ns, name, NULL, &read, &e);
    s->read_ms[i] = (double)(kc__cli_now_ns() - t1) / 1e6;
    if (rc == 0) {
        if (is_stale(written, read))
            atomic_fetch_add(&s->stale, 1);
    } else if (rc == KC_ENOTFOUND) {
        atomic_fetch_add(&s->stale, 1);
    } else if (rc == KC_ENOT_CAUGHT_UP) {
        atomic_fetch_add(&s->stale, 1);
        atomic_fetch_add(&s->not_caught_up, 1);
    } else {
        note_error(s, "get", rc, &e);
    }
    kc_error_clear(&e);
    kc_obj_unref(read);
    kc_obj_unref(written);
}

static void *ctr_worker(void *arg)
{
    ctr_shared *s = arg;
    kc_cached_client *cc = s->env->cc[s->mode];
    for (;;) {
        unsigned i = atomic_fetch_add(&s->next, 1);
        if (i >= s->o->n)
            break;
        one(s, cc, i);
        demo_progress_tick(&s->prog);
    }
    return NULL;
}

int demo_create_then_read(const demo_env *env, const demo_opts *o, int mode, demo_mode_result *ret,
                          kc_error *err)
{
    ctr_shared s = {.env = env, .o = o, .mode = mode};
    memset(ret, 0, sizeof(*ret));
    s.write_ms = calloc(o->n ? o->n : 1, sizeof(double));
    s.read_ms = calloc(o->n ? o->n : 1, sizeof(double));
    unsigned nw = o->workers < o->n ? o->workers : (o->n ? o->n : 1);
    pthread_t *th = calloc(nw, sizeof(*th));
    if (!s.write_ms || !s.read_ms || !th) {
        free(s.write_ms);
        free(s.read_ms);
        free(th);
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&s.err_lock, NULL);
    char label[64];
    snprintf(label, sizeof(label), "create then read, %s:", demo_mode_labels[mode]);
    demo_progress_start(&s.prog, o->progress, label, o->n);

    uint64_t t0 = kc__cli_now_ns();
    unsigned started = 0;
    for (; started < nw; started++)
        if (pthread_create(&th[started], NULL, ctr_worker, &s) != 0)
            break;
    if (started == 0)
        ctr_worker(&s); /* no thread could start: run inline */
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    ret->seconds = (double)(kc__cli_now_ns() - t0) / 1e9;
    demo_progress_end(&s.prog);

    ret->n = o->n;
    ret->stale = atomic_load(&s.stale);
    ret->not_caught_up = atomic_load(&s.not_caught_up);
    ret->errors = atomic_load(&s.errors);
    ret->write_p50_ms = demo_percentile(s.write_ms, o->n, 50);
    ret->write_p99_ms = demo_percentile(s.write_ms, o->n, 99);
    ret->read_p50_ms = demo_percentile(s.read_ms, o->n, 50);
    ret->read_p99_ms = demo_percentile(s.read_ms, o->n, 99);
    int rc = 0;
    if (s.first_rc && ret->errors == o->n) /* nothing worked: report why */
        rc = kc_error_set(err, s.first_rc, "%s", s.first_err);
    else if (s.first_rc)
        fprintf(stderr, "kcache demo: %u errors in mode %s, first: %s\n", ret->errors,
                demo_mode_labels[mode], s.first_err);
    pthread_mutex_destroy(&s.err_lock);
    free(th);
    free(s.write_ms);
    free(s.read_ms);
    return rc;
}

/* ---- discovery ------------------------------------------------------------------------------- */

static int read_all(kc_cached_client *cc, char **names, unsigned n, bool live, demo_progress *prog,
                    double *ret_s, kc_error *err)
{
    kc_cached_call_opts call = {.live = live};
    uint64_t t0 = kc__cli_now_ns();
    for (unsigned i = 0; i < n; i++) {
        kc_obj *obj = NULL;
        int rc = kc_cached_client_get(cc, &demo_pvs, NULL, names[i], &call, &obj, err);
        if (rc < 0)
            return rc;
        kc_obj_unref(obj);
        if (prog)
            demo_progress_tick(prog);
    }
    *ret_s = (double)(kc__cli_now_ns() - t0) / 1e9;
    return 0;
}

int demo_discovery(const demo_env *env, const demo_opts *o, demo_results *ret, kc_error *err)
{
    kc_cached_client *cc = env->cc[DEMO_BLOCK_ON_WRITE];
    kc_obj **items = NULL;
    size_t n_items = 0;
    int rc = kc_cached_client_list(cc, &demo_pvs, NULL, env->pv_selector, NULL, NULL, &items,
                                   &n_items, err);
    if (rc < 0)
        return rc;
    unsigned n = n_items < o->n_pv ? (unsigned)n_items : o->n_pv;
    char **names = calloc(n ? n : 1, sizeof(*names));
    for (unsigned i = 0; names && i < n; i++)
        names[i] = strdup(kc_obj_name(items[i]));
    kc_obj_array_free(items, n_items);
    if (!names)
        return kc_error_set(err, KC_ENOMEM, "out of memory");

    ret->disc_n = n;
    double api_s = 0, cache_runs[5] = {0};
    if (n > 0) {
        kc_obj *warm = NULL;
        kc_cached_call_opts live = {.live = true};
        rc = kc_cached_client_get(cc, &demo_pvs, NULL, names[0], &live, &warm, err);
        kc_obj_unref(warm);
        demo_progress p;
        demo_progress_start(&p, o->progress, "discovery, API GETs:", n);
        if (rc == 0)
            rc = read_all(cc, names, n, true, &p, &api_s, err);
        demo_progress_end(&p);
        for (int r = 0; rc == 0 && r < 5; r++)
            rc = read_all(cc, names, n, false, NULL, &cache_runs[r], err);
    }
    for (unsigned i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (rc < 0)
        return rc;
    ret->disc_api_s = api_s;
    ret->disc_cache_s = demo_percentile(cache_runs, 5, 50);
    ret->disc_ratio = ret->disc_cache_s > 0 ? api_s / ret->disc_cache_s : 0;
    return 0;
}
