/*
 * controller/controller.c — kc_controller: construction, options, getters, stats, enqueue and the
 * activity gate.
 *
 * Ownership: the controller owns its queue, its cached client, the health endpoint it serves and,
 * unless kc_controller_opts.cache was given, its cache. It borrows the kc_client. Every watched
 * type is a kc__ctrl_source (sources.c) owning copies of the caller's strings; informers are
 * borrowed from the cache (kc_cache_get_informer) and shared with anyone else using the cache.
 *
 * The gate (kc_controller_set_active) is a flag under the controller mutex; workers test it after
 * every get and wait on the condition variable while it is closed (run.c), so closing it takes
 * effect for the next key at once, without polling. With opts.leader_elector, the controller hands
 * the elector a gate (ctrl_gate, a callback that sets it), so leadership drives the gate while the
 * elector, a layer below (src/leader/), knows no controller and calls none by name.
 */
#include "controller/internal.h"
#include "leader/internal.h"
#include "workqueue/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Thread_local int kc__ctrl_event_priority;

static int opts_check(const kc_controller_opts *o, kc_error *err)
{
    if (!o->reconcile)
        return kc_error_set(err, KC_EINVAL, "controller: opts.reconcile is required");
    if (!o->primary)
        return kc_error_set(err, KC_EINVAL, "controller: opts.primary is required");
    if (!o->primary->gvr.resource || !o->primary->gvr.version)
        return kc_error_set(err, KC_EINVAL, "controller: opts.primary.gvr is required");
    if (!o->primary->kind || !*o->primary->kind)
        return kc_error_set(err, KC_EINVAL,
                            "controller: opts.primary.kind is required (owner references name "
                            "their owner by kind)");
    return 0;
}

/* The gate the leader elector is handed (kc__leader_elector_add_gate): leadership opens and
 * closes the controller's activity gate, as kc_controller_set_active does. */
static void ctrl_gate(void *ud, bool active)
{
    kc_controller_set_active(ud, active);
}

static void ctrl_destroy(kc_controller *c)
{
    /* no call from the elector after this */
    kc__leader_elector_remove_gate(c->elector, ctrl_gate, c);
    kc__ctrl_shard_detach(c);
    kc__ctrl_keymap_free(c->keymap);
    kc_health_free(c->health); /* before the cache it reads */
    for (size_t i = 0; i < c->n_sources; i++)
        kc__ctrl_source_free(c->sources[i]);
    free(c->sources);
    kc_cached_client_free(c->cc);
    if (c->own_cache)
        kc_cache_free(c->cache);
    kc_workqueue_free(c->q);
    kc__ctrl_metrics_free(c->metrics);
    free(c->threads);
    free(c->health_listen);
    free(c->name);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static int add_source(kc_controller *c, kc__ctrl_source *s)
{
    kc__ctrl_source **n = realloc(c->sources, (c->n_sources + 1) * sizeof(*n));
    if (!n)
        return KC_ENOMEM;
    c->sources = n;
    c->sources[c->n_sources++] = s;
    return 0;
}

static int ctrl_build(kc_controller *c, const kc_controller_opts *o, kc_error *err)
{
    kc_workqueue_opts qo;
    if (o->queue)
        qo = *o->queue; /* a full-size copy (kc_controller_new) */
    else
        memset(&qo, 0, sizeof qo);
    if (!qo.name || !*qo.name)
        qo.name = c->name;
    int rc = kc_workqueue_new(&qo, &c->q, err);
    if (rc < 0)
        return rc;
    /* controller-runtime's queue labels: controller="<name>", depth by priority (M1) */
    if (kc__workqueue_set_controller(c->q, c->name, c->priority) < 0)
        return kc_error_set(err, KC_ENOMEM, "controller: out of memory");
    if (o->cache) {
        c->cache = o->cache;
    } else {
        rc = kc_cache_new(c->client, NULL, &c->cache, err);
        if (rc < 0)
            return rc;
        c->own_cache = true;
    }
    kc_cached_client_opts cco;
    memset(&cco, 0, sizeof cco);
    if (o->client)
        cco = *o->client; /* a full-size copy (kc_controller_new) */
    if (c->fence && !cco.fence)
        cco.fence = c->fence;
    rc = kc_cached_client_new(c->client, c->cache, &cco, &c->cc, err);
    if (rc < 0)
        return rc;
    kc__ctrl_source *p = kc__ctrl_source_new(c, KC__CTRL_PRIMARY, o->primary, err);
    if (!p)
        return err && err->code ? err->code : KC_ENOMEM;
    if (add_source(c, p) < 0) {
        kc__ctrl_source_free(p);
        return kc_error_set(err, KC_ENOMEM, "controller: out of memory");
    }
    return 0;
}

/* The caller's nested structs of a kc_controller_type (after KC__OPTS_TAKE of it), copied into
 * full-size locals: what names the type in errors. */
#define CTRL_TYPE_TAKE_NESTED(t, what, err)                                                        \
    kc_informer_opts t##__inf;                                                                     \
    kc_predicate t##__pred;                                                                        \
    KC__OPTS_TAKE_NESTED(t, informer, &t##__inf, what ".informer", err);                           \
    KC__OPTS_TAKE_NESTED(t, predicate, &t##__pred, what ".predicate", err)

int(kc_controller_new)(kc_client *client, const kc_controller_opts *opts, size_t opts_size,
                       kc_controller **ret, kc_error *err)
{
    if (!client || !opts || !ret)
        return kc_error_set(err, KC_EINVAL, "kc_controller_new: client, opts and ret are required");
    KC__OPTS_TAKE(opts, kc_controller_opts, err);
    kc_workqueue_opts queue;
    kc_cached_client_opts cco;
    kc_controller_type prim;
    memset(&prim, 0, sizeof prim); /* read below even when opts.primary is NULL */
    KC__OPTS_TAKE_NESTED(opts__copy, queue, &queue, "kc_controller_opts.queue", err);
    KC__OPTS_TAKE_NESTED(opts__copy, client, &cco, "kc_controller_opts.client", err);
    KC__OPTS_TAKE_NESTED(opts__copy, primary, &prim, "kc_controller_opts.primary", err);
    CTRL_TYPE_TAKE_NESTED(prim, "kc_controller_opts.primary", err);
    int rc = opts_check(opts, err);
    if (rc < 0)
        return rc;
    kc_controller *c = calloc(1, sizeof(*c));
    if (!c)
        return kc_error_set(err, KC_ENOMEM, "controller: out of memory");
    pthread_mutex_init(&c->mu, NULL);
    if (kc__cond_init_monotonic(&c->cv) < 0) {
        pthread_mutex_destroy(&c->mu);
        free(c);
        return kc_error_set(err, KC_ENOMEM, "controller: cannot create a condition variable");
    }
    c->client = client;
    c->reconcile = opts->reconcile;
    c->ud = opts->ud;
    c->workers = opts->max_concurrent_reconciles ? opts->max_concurrent_reconciles : 1;
    c->sync_timeout_ms = opts->sync_timeout_ms ? opts->sync_timeout_ms : 120000;
    c->stop_timeout_ms = opts->stop_timeout_ms > 0 ? opts->stop_timeout_ms : 30000;
    c->primary_cluster_scoped = opts->primary->cluster_scoped;
    c->active = !opts->start_inactive && !opts->leader_elector;
    c->elector = opts->leader_elector;
    c->fence = kc_leader_elector_fence(opts->leader_elector);
    c->coord = opts->coordinator;
    c->priority = !opts->no_priority_queue;
    if (!(c->metrics = kc__ctrl_metrics_new()) ||
        (c->coord && !(c->keymap = kc__ctrl_keymap_new()))) {
        ctrl_destroy(c);
        return kc_error_set(err, KC_ENOMEM, "controller: out of memory");
    }
    c->name = kc__strdup(opts->name && *opts->name ? opts->name : opts->primary->gvr.resource);
    c->health_listen = opts->health_listen ? kc__strdup(opts->health_listen) : NULL;
    if (!c->name || (opts->health_listen && !c->health_listen)) {
        ctrl_destroy(c);
        return kc_error_set(err, KC_ENOMEM, "controller: out of memory");
    }
    rc = ctrl_build(c, opts, err);
    if (rc == 0 && c->elector && kc__leader_elector_add_gate(c->elector, ctrl_gate, c) < 0) {
        c->elector = NULL;
        rc = kc_error_set(err, KC_ETOOLARGE,
                          "controller %s: the elector gates too many "
                          "controllers",
                          c->name);
    }
    if (rc < 0) {
        ctrl_destroy(c);
        return rc;
    }
    *ret = c;
    return 0;
}

static int add_type(kc_controller *c, kc__ctrl_role role, const kc_controller_type *type,
                    kc_controller_map_fn map, void *ud, kc_error *err)
{
    pthread_mutex_lock(&c->mu);
    bool fresh = c->state == KC__CTRL_NEW;
    pthread_mutex_unlock(&c->mu);
    if (!fresh)
        return kc_error_set(err, KC_EBUSY, "controller %s: types are added before start", c->name);
    kc__ctrl_source *s = kc__ctrl_source_new(c, role, type, err);
    if (!s)
        return err && err->code ? err->code : KC_ENOMEM;
    s->map = map;
    s->map_ud = ud;
    if (add_source(c, s) < 0) {
        kc__ctrl_source_free(s);
        return kc_error_set(err, KC_ENOMEM, "controller: out of memory");
    }
    return 0;
}

int(kc_controller_own)(kc_controller *ctrl, const kc_controller_type *type, size_t type_size,
                       kc_error *err)
{
    if (!ctrl || !type)
        return kc_error_set(err, KC_EINVAL, "kc_controller_own: ctrl and type are required");
    KC__OPTS_TAKE(type, kc_controller_type, err);
    CTRL_TYPE_TAKE_NESTED(type__copy, "kc_controller_type", err);
    return add_type(ctrl, KC__CTRL_OWNED, type, NULL, NULL, err);
}

int(kc_controller_watch)(kc_controller *ctrl, const kc_controller_type *type, size_t type_size,
                         kc_controller_map_fn map, void *ud, kc_error *err)
{
    if (!ctrl || !type || !map)
        return kc_error_set(err, KC_EINVAL, "kc_controller_watch: ctrl, type and map are required");
    KC__OPTS_TAKE(type, kc_controller_type, err);
    CTRL_TYPE_TAKE_NESTED(type__copy, "kc_controller_type", err);
    return add_type(ctrl, KC__CTRL_WATCH, type, map, ud, err);
}

int kc_controller_enqueue(kc_controller *ctrl, const char *ns, const char *name)
{
    if (!ctrl || !name || !*name)
        return KC_EINVAL;
    char key[KC__CTRL_KEY_MAX];
    int n = ns && *ns ? snprintf(key, sizeof(key), "%s/%s", ns, name)
                      : snprintf(key, sizeof(key), "%s", name);
    if (n < 0 || (size_t)n >= sizeof(key))
        return KC_EINVAL;
    int rc =
        kc_workqueue_add_with_priority(ctrl->q, key, ctrl->priority ? kc__ctrl_event_priority : 0);
    if (rc == 0)
        atomic_fetch_add(&ctrl->n_enqueued, 1);
    return rc;
}

int kc_controller_set_active(kc_controller *ctrl, bool active)
{
    if (!ctrl)
        return KC_EINVAL;
    pthread_mutex_lock(&ctrl->mu);
    if (ctrl->active != active)
        KC__LOG_INFO("controller", "controller %s: %s", ctrl->name,
                     active ? "active" : "inactive (gated off)");
    ctrl->active = active;
    pthread_cond_broadcast(&ctrl->cv);
    pthread_mutex_unlock(&ctrl->mu);
    return 0;
}

bool kc_controller_active(kc_controller *ctrl)
{
    if (!ctrl)
        return false;
    pthread_mutex_lock(&ctrl->mu);
    bool a = ctrl->active;
    pthread_mutex_unlock(&ctrl->mu);
    return a;
}

static void stats_fill(kc_controller *ctrl, kc_controller_stats *ret)
{
    ret->reconciles = atomic_load(&ctrl->n_reconciles);
    ret->done = atomic_load(&ctrl->n_done);
    ret->requeue_after = atomic_load(&ctrl->n_requeue_after);
    ret->errors = atomic_load(&ctrl->n_errors);
    ret->terminal = atomic_load(&ctrl->n_terminal);
    ret->unknown = atomic_load(&ctrl->n_unknown);
    ret->put_back = atomic_load(&ctrl->n_put_back);
    ret->enqueued = atomic_load(&ctrl->n_enqueued);
    ret->filtered = atomic_load(&ctrl->n_filtered);
    ret->fenced = atomic_load(&ctrl->n_fenced);
    ret->shard_dropped = atomic_load(&ctrl->n_shard_dropped);
    pthread_mutex_lock(&ctrl->mu);
    ret->running = ctrl->running;
    ret->started = ctrl->state == KC__CTRL_RUNNING;
    pthread_mutex_unlock(&ctrl->mu);
}

void(kc_controller_get_stats)(kc_controller *ctrl, kc_controller_stats *ret, size_t ret_size)
{
    if (!ret)
        return;
    kc_controller_stats st;
    memset(&st, 0, sizeof st);
    if (ctrl)
        stats_fill(ctrl, &st);
    kc__result_copy(ret, ret_size, &st, sizeof st);
}

kc_cache *kc_controller_cache(kc_controller *ctrl)
{
    return ctrl ? ctrl->cache : NULL;
}

kc_cached_client *kc_controller_client(kc_controller *ctrl)
{
    return ctrl ? ctrl->cc : NULL;
}

kc_workqueue *kc_controller_queue(kc_controller *ctrl)
{
    return ctrl ? ctrl->q : NULL;
}

const char *kc_controller_health_url(kc_controller *ctrl)
{
    if (!ctrl)
        return NULL;
    pthread_mutex_lock(&ctrl->mu);
    const char *u = ctrl->health ? kc_health_url(ctrl->health) : NULL;
    pthread_mutex_unlock(&ctrl->mu);
    return u;
}

int kc_controller_start(kc_controller *ctrl, kc_error *err)
{
    if (!ctrl)
        return kc_error_set(err, KC_EINVAL, "kc_controller_start: ctrl is NULL");
    return kc__ctrl_start(ctrl, err);
}

int kc_controller_stop(kc_controller *ctrl)
{
    if (!ctrl)
        return KC_EINVAL;
    return kc__ctrl_stop(ctrl);
}

void kc_controller_free(kc_controller *ctrl)
{
    if (!ctrl)
        return;
    kc__ctrl_stop(ctrl);
    kc__ctrl_finalizer_free(ctrl->fin);
    ctrl_destroy(ctrl);
}
