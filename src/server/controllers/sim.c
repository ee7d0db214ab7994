/*
 * sim.c — the simulated cluster's thread (kc_server_opts.simulate_nodes): what KWOK does for a
 * cluster, inside the embedded API server.
 *
 * Design: one thread, as a controller manager with one worker. It subscribes to the hub (hub.h)
 * for pods, replicasets, deployments, statefulsets, daemonsets and jobs, armed with a wake
 * callback that only sets a flag under the thread's own small lock (wmu) — the callback runs
 * under the hub's lock, so it never touches the store. The loop takes every due event without
 * blocking, turns each into keys of a deduplicated FIFO work queue (the object itself and its
 * controlling owner), runs the timers that are due (a min-heap of keys: kubelet delays, lease
 * renewals, retries), then reconciles the queued keys one at a time, each with srv->mu held only
 * for that key, writing through storage's write path (kc__write_update / kc__write_create /
 * kc__delete_one: RVs, watch events, defaulting; no admission). Then it arms every watcher and
 * sleeps on wcond until a wake or the next timer. It never holds srv->mu while it waits, nor wmu
 * while it calls the hub or takes srv->mu (order: srv->mu → hub → wmu).
 * Stop: kc__sim_stop sets stop under wmu, signals, joins. A watcher closed under it (a restart
 * closes every watcher) is subscribed again, and every object queued again (a resync).
 * Errors of a reconcile are dropped: the next event or timer of that key retries.
 */
#include "server/controllers/sim_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const sim_plural[] = {"pods",         "replicasets", "deployments",
                                         "statefulsets", "daemonsets",  "jobs"};
static const char *const sim_group[] = {"", "apps", "apps", "apps", "apps", "batch"};

/* ---- work queue ---- */

static size_t item_key(char *out, size_t cap, int kind, const char *ns, const char *name)
{
    size_t a = strlen(ns), b = strlen(name);
    if (3 + a + b > cap)
        return 0;
    out[0] = (char)('A' + kind);
    memcpy(out + 1, ns, a + 1);
    memcpy(out + 2 + a, name, b + 1);
    return 2 + a + b;
}

void kc__sim_enqueue(kc__sim *s, int kind, const char *ns, const char *name)
{
    char k[600];
    size_t kl = item_key(k, sizeof(k), kind, ns ? ns : "", name ? name : "");
    if (!kl || kc__htab_find(&s->queued, k, kl, kc__hash(k, kl)))
        return;
    kc__sim_item *it = malloc(sizeof(*it) + kl + 1);
    if (!it)
        return;
    memcpy(it->key, k, kl + 1);
    it->h = (kc__hent){.hash = kc__hash(k, kl), .klen = kl, .key = it->key};
    it->kind = kind;
    it->ns = it->key + 1;
    it->name = it->ns + strlen(it->ns) + 1;
    it->next = NULL;
    if (kc__htab_insert(&s->queued, &it->h) != 0) {
        free(it);
        return;
    }
    if (s->tail)
        s->tail->next = it;
    else
        s->head = it;
    s->tail = it;
}

/* ---- timers ---- */

static void heap_swap(kc__sim *s, size_t a, size_t b)
{
    kc__sim_timer t = s->timers[a];
    s->timers[a] = s->timers[b];
    s->timers[b] = t;
}

void kc__sim_after(kc__sim *s, uint64_t due_ns, int kind, const char *ns, const char *name)
{
    if (s->n_timers == s->cap_timers) {
        size_t cap = s->cap_timers ? s->cap_timers * 2 : 64;
        kc__sim_timer *t = realloc(s->timers, cap * sizeof(*t));
        if (!t)
            return;
        s->timers = t;
        s->cap_timers = cap;
    }
    kc__sim_timer t = {
        .due = due_ns, .kind = kind, .ns = strdup(ns ? ns : ""), .name = strdup(name ? name : "")};
    if (!t.ns || !t.name) {
        free(t.ns);
        free(t.name);
        return;
    }
    size_t i = s->n_timers++;
    s->timers[i] = t;
    while (i > 0 && s->timers[(i - 1) / 2].due > s->timers[i].due) {
        heap_swap(s, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

/* Queue the keys of every timer due at now. */
static void run_timers(kc__sim *s, uint64_t now)
{
    while (s->n_timers && s->timers[0].due <= now) {
        kc__sim_timer t = s->timers[0];
        s->timers[0] = s->timers[--s->n_timers];
        for (size_t i = 0;;) {
            size_t l = 2 * i + 1, m = i;
            if (l < s->n_timers && s->timers[l].due < s->timers[m].due)
                m = l;
            if (l + 1 < s->n_timers && s->timers[l + 1].due < s->timers[m].due)
                m = l + 1;
            if (m == i)
                break;
            heap_swap(s, i, m);
            i = m;
        }
        kc__sim_enqueue(s, t.kind, t.ns, t.name);
        free(t.ns);
        free(t.name);
    }
}

/* ---- writes (mu held) ---- */

int kc__sim_update(kc__sim *s, kc__rsrc *r, kc__entry *e, json_t *doc, int how, kc_obj **ret)
{
    kc__write w = {.r = r,
                   .ns = r->namespaced ? e->ns : "",
                   .version = r->versions[0],
                   .status_sub = how != SIM_MAIN && how != SIM_BINDING && r->has_status,
                   .status_annotations = how == SIM_STATUS_ANNOT,
                   .binding = how == SIM_BINDING};
    kc_obj *obj = NULL;
    kc_error err = KC_ERROR_INIT;
    kc__meta_del(doc, "resourceVersion");
    int rc = kc__write_update(s->srv, &w, e, doc, false, &obj, &err);
    kc_error_clear(&err);
    if (rc == 0 && r == s->r[SIM_POD] && obj)
        kc__sim_pod_observe(s, e->ns, e->name, obj);
    if (ret && rc == 0)
        *ret = obj;
    else
        kc_obj_unref(obj);
    return rc;
}

int kc__sim_create(kc__sim *s, kc__rsrc *r, const char *ns, json_t *doc, bool keep_status,
                   kc_obj **ret)
{
    kc__write w = {.r = r,
                   .ns = r->namespaced ? ns : "",
                   .version = r->versions[0],
                   .keep_status = keep_status};
    kc_obj *obj = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc__write_create(s->srv, &w, doc, &obj, &err);
    kc_error_clear(&err);
    if (rc == 0 && r == s->r[SIM_POD] && obj)
        kc__sim_pod_observe(s, ns, kc_obj_name(obj), obj);
    if (ret && rc == 0)
        *ret = obj;
    else
        kc_obj_unref(obj);
    return rc;
}

int kc__sim_delete(kc__sim *s, kc__rsrc *r, kc__entry *e)
{
    char ns[256], name[320];
    snprintf(ns, sizeof(ns), "%s", e->ns);
    snprintf(name, sizeof(name), "%s", e->name);
    kc_obj *res = NULL;
    bool gone = false;
    kc_error err = KC_ERROR_INIT;
    json_t *opts = json_pack("{s:s}", "propagationPolicy", "Background");
    int rc = kc__delete_one(s->srv, r, e, opts, false, -1, &res, &gone, &err);
    json_decref(opts);
    kc_error_clear(&err);
    kc_obj_unref(res);
    if (r == s->r[SIM_POD]) {
        kc__entry *now = kc__store_find(r, ns, name);
        kc__sim_pod_observe(s, ns, name, now ? now->obj : NULL);
    }
    return rc;
}

/* ---- events ---- */

static int kind_of_owner(const char *kind)
{
    if (!kind)
        return -1;
    if (!strcmp(kind, "ReplicaSet"))
        return SIM_RS;
    if (!strcmp(kind, "Deployment"))
        return SIM_DEPLOY;
    if (!strcmp(kind, "StatefulSet"))
        return SIM_STS;
    if (!strcmp(kind, "DaemonSet"))
        return SIM_DS;
    if (!strcmp(kind, "Job"))
        return SIM_JOB;
    return -1;
}

static void on_event(kc__sim *s, int kind, const kc__hub_event *ev)
{
    const kc_obj *o = ev->obj;
    const char *ns = kc_obj_namespace(o), *name = kc_obj_name(o);
    if (!ns || !name)
        return;
    if (kind == SIM_POD) {
        /* our own writes were observed when made; an older event does not undo them (the
         * pod table compares resourceVersions) */
        kc__sim_pod_observe(s, ns, name, ev->type == KC_WATCH_DELETED ? NULL : o);
    }
    kc__sim_enqueue(s, kind, ns, name);
    int ok = kind_of_owner(kc_obj_controller_kind(o));
    if (ok >= 0 && kc_obj_controller_name(o))
        kc__sim_enqueue(s, ok, ns, kc_obj_controller_name(o));
}

static void wake(void *ud)
{
    kc__sim *s = ud;
    pthread_mutex_lock(&s->wmu);
    s->kicked = true;
    pthread_cond_signal(&s->wcond);
    pthread_mutex_unlock(&s->wmu);
}

/* Subscribe the closed or missing watchers and queue every object of their resources. */
static void subscribe(kc__sim *s)
{
    kc_server *srv = s->srv;
    pthread_mutex_lock(&srv->mu);
    for (int k = 0; k <= SIM_JOB; k++) {
        if (s->w[k])
            continue;
        if (k == SIM_POD) /* (again, after a restart): the table is rebuilt from the store */
            kc__sim_pods_free(s);
        if (!(s->w[k] = kc__hub_subscribe(srv->hub, s->r[k], NULL, NULL)))
            continue;
        kc__watcher_set_wake(s->w[k], wake, s);
        size_t n = 0;
        kc__entry **all = kc__store_sorted(s->r[k], &n);
        for (size_t i = 0; all && i < n; i++) {
            if (k == SIM_POD)
                kc__sim_pod_observe(s, all[i]->ns, all[i]->name, all[i]->obj);
            kc__sim_enqueue(s, k, all[i]->ns, all[i]->name);
        }
    }
    pthread_mutex_unlock(&srv->mu);
    kc__sim_enqueue(s, SIM_NODES, "", "");
}

/* Take every due event; false when a watcher was closed (resubscribe). */
static bool intake(kc__sim *s)
{
    bool ok = true;
    kc__hub_event evs[128];
    for (int k = 0; k <= SIM_JOB; k++) {
        size_t n;
        do {
            n = 0;
            int rc = s->w[k] ? kc__watcher_take(s->w[k], evs, KC__ARRAY_LEN(evs), &n) : KC_ESTOPPED;
            if (rc != 0) {
                kc__watcher_free(s->w[k]);
                s->w[k] = NULL;
                ok = false;
                break;
            }
            for (size_t i = 0; i < n; i++) {
                on_event(s, k, &evs[i]);
                kc__hub_event_release(&evs[i]);
            }
        } while (n == KC__ARRAY_LEN(evs));
    }
    return ok;
}

static void reconcile(kc__sim *s, kc__sim_item *it)
{
    switch (it->kind) {
    case SIM_POD:
        kc__sim_reconcile_pod(s, it->ns, it->name);
        break;
    case SIM_RS:
        kc__sim_reconcile_rs(s, it->ns, it->name);
        break;
    case SIM_DEPLOY:
        kc__sim_reconcile_deploy(s, it->ns, it->name);
        break;
    case SIM_STS:
        kc__sim_reconcile_sts(s, it->ns, it->name);
        break;
    case SIM_DS:
        kc__sim_reconcile_ds(s, it->ns, it->name);
        break;
    case SIM_JOB:
        kc__sim_reconcile_job(s, it->ns, it->name);
        break;
    case SIM_LEASES:
        kc__sim_renew_leases(s);
        break;
    case SIM_NODES:
        kc__sim_reconcile_nodes(s);
        break;
    default:
        break;
    }
}

static bool stopping(kc__sim *s)
{
    pthread_mutex_lock(&s->wmu);
    bool st = s->stop;
    pthread_mutex_unlock(&s->wmu);
    return st;
}

static void *loop(void *ud)
{
    kc__sim *s = ud;
    subscribe(s);
    kc__sim_enqueue(s, SIM_LEASES, "", "");
    while (!stopping(s)) {
        if (!intake(s)) {
            if (stopping(s))
                break;
            subscribe(s);
        }
        run_timers(s, kc__now_ns());
        /* one pass over what is queued now; what it queues waits for the next pass */
        kc__sim_item *tail = s->tail;
        while (s->head && !stopping(s)) {
            kc__sim_item *it = s->head;
            s->head = it->next;
            if (!s->head)
                s->tail = NULL;
            kc__htab_remove_ent(&s->queued, &it->h);
            bool last = it == tail;
            reconcile(s, it);
            free(it);
            if (last)
                break;
        }
        if (s->head)
            continue;
        uint64_t next = s->n_timers ? s->timers[0].due : KC__DEADLINE_NEVER;
        bool ready = false;
        for (int k = 0; k <= SIM_JOB; k++)
            if (s->w[k] && kc__watcher_arm(s->w[k], KC__DEADLINE_NEVER) != 0)
                ready = true;
        pthread_mutex_lock(&s->wmu);
        while (!ready && !s->kicked && !s->stop)
            if (kc__cond_wait_until(&s->wcond, &s->wmu, next) == KC_ETIMEOUT)
                break;
        s->kicked = false;
        pthread_mutex_unlock(&s->wmu);
    }
    return NULL;
}

static uint64_t ms_or(unsigned v, uint64_t def)
{
    return v ? v : def;
}

int kc__sim_start(kc_server *srv, kc_error *err)
{
    if (!srv->opts.simulate_nodes || srv->sim)
        return 0;
    kc__sim *s = calloc(1, sizeof(*s));
    if (!s)
        return kc_error_set(err, KC_ENOMEM, "simulation: out of memory");
    s->srv = srv;
    pthread_mutex_init(&s->wmu, NULL);
    kc__cond_init_monotonic(&s->wcond);
    kc__rng_seed(&s->rng, srv->opts.random_seed ? srv->opts.random_seed : kc__now_ns());
    s->lease_ms = ms_or(srv->opts.sim_lease_ms, 10000);
    s->heartbeat_ms = s->lease_ms * 6;
    s->start_ms = ms_or(srv->opts.sim_pod_start_ms, 50);
    s->run_ms = ms_or(srv->opts.sim_pod_run_ms, 1000);
    s->stop_ms = ms_or(srv->opts.sim_pod_stop_ms, 100);
    pthread_mutex_lock(&srv->mu);
    for (int k = 0; k <= SIM_JOB; k++)
        s->r[k] = kc__registry_find(srv, sim_group[k], "v1", sim_plural[k]);
    s->nodes_r = kc__registry_find(srv, "", "v1", "nodes");
    s->leases_r = kc__registry_find(srv, "coordination.k8s.io", "v1", "leases");
    pthread_mutex_unlock(&srv->mu);
    int rc = kc__sim_nodes_init(s);
    for (int k = 0; k <= SIM_JOB; k++)
        if (!s->r[k])
            rc = KC_ENOMEM;
    if (rc == 0 && pthread_create(&s->thread, NULL, loop, s) != 0)
        rc = KC_ENOMEM;
    if (rc) {
        free(s->nodes);
        pthread_mutex_destroy(&s->wmu);
        pthread_cond_destroy(&s->wcond);
        free(s);
        return kc_error_set(err, rc, "simulation: cannot start: %s", kc_strerror(rc));
    }
    s->running = true;
    srv->sim = s;
    return 0;
}

void kc__sim_stop(kc_server *srv)
{
    kc__sim *s = srv->sim;
    if (!s)
        return;
    pthread_mutex_lock(&s->wmu);
    s->stop = true;
    pthread_cond_signal(&s->wcond);
    pthread_mutex_unlock(&s->wmu);
    pthread_join(s->thread, NULL);
    for (int k = 0; k <= SIM_JOB; k++)
        kc__watcher_free(s->w[k]);
    while (s->head) {
        kc__sim_item *it = s->head;
        s->head = it->next;
        free(it);
    }
    kc__htab_free(&s->queued);
    for (size_t i = 0; i < s->n_timers; i++) {
        free(s->timers[i].ns);
        free(s->timers[i].name);
    }
    free(s->timers);
    kc__sim_pods_free(s);
    free(s->nodes);
    pthread_mutex_destroy(&s->wmu);
    pthread_cond_destroy(&s->wcond);
    free(s);
    srv->sim = NULL;
}
