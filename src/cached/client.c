/*
 * cached/client.c — kc_cached_client: construction, options, the type → informer store mapping,
 * and the one wait primitive every read-your-writes path goes through.
 *
 * Informers: a cached client asks kc_cache for the informer of (gvr, namespace) on every call —
 * kc_cache creates and starts it on first use and hands the same one to later callers, so the
 * client keeps no informer table of its own. When the client is restricted to one namespace,
 * namespaced calls use that namespace's informer; calls with no namespace (cluster-scoped types,
 * all-namespace lists) use an all-namespace informer.
 *
 * Waiting (kc__cc_wait): one non-blocking check first (most waits in a busy program are already
 * satisfied), then kc_store_wait, which sleeps on the store's per-waiter condition variable and
 * is woken only by events on that key or watermark moves: no polling, no client lock held. A
 * timeout becomes KC_ENOT_CAUGHT_UP (the documented "write succeeded, cache not caught up" code);
 * a stopped store stays KC_ESTOPPED.
 */
#include "cached/internal.h"
#include "informer/internal.h" /* kc__cache_find_informer */

#include "kcache/rv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- options --------------------------------------------------------------------------------- */

int64_t kc__cc_timeout(const kc_cached_client *cc, const kc_cached_call_opts *call)
{
    if (call && call->timeout_ms != 0)
        return call->timeout_ms;
    return cc->timeout_ms;
}

bool kc__cc_wait_enabled(const kc_cached_client *cc, const kc_cached_call_opts *call)
{
    return cc->mode != KC_RYW_NONE && !(call && call->no_wait);
}

uint64_t kc__cc_deadline(const kc_cached_client *cc, const kc_cached_call_opts *call)
{
    return kc__deadline_after_ms(kc__cc_timeout(cc, call));
}

static bool str_eq0(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

bool kc__cc_uncached(const kc_cached_client *cc, const kc_gvr *gvr)
{
    if (cc->n_uncached == 0)
        return false;
    for (size_t i = 0; i < cc->n_uncached; i++) {
        const kc__cc_gvr *u = &cc->uncached[i];
        if (str_eq0(u->group, gvr->group) && str_eq0(u->version, gvr->version) &&
            str_eq0(u->resource, gvr->resource))
            return true;
    }
    return false;
}

int kc__cc_type_key(const kc_gvr *gvr, char *buf, size_t cap, kc_error *err)
{
    if (!gvr || !gvr->version || !*gvr->version || !gvr->resource || !*gvr->resource)
        return kc_error_set(err, KC_EINVAL, "cached client: gvr needs a version and a resource");
    int n =
        snprintf(buf, cap, "%s/%s/%s", gvr->group ? gvr->group : "", gvr->version, gvr->resource);
    if (n < 0 || (size_t)n >= cap)
        return kc_error_set(err, KC_EINVAL, "cached client: resource name too long");
    return 0;
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

static void free_uncached(kc__cc_gvr *u, size_t n)
{
    for (size_t i = 0; u && i < n; i++) {
        free(u[i].group);
        free(u[i].version);
        free(u[i].resource);
    }
    free(u);
}

int(kc_cached_client_new)(kc_client *client, kc_cache *cache, const kc_cached_client_opts *opts,
                          size_t opts_size, kc_cached_client **ret, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_cached_client_opts, err);
    kc_cached_client_opts o = {0};
    if (opts)
        o = *opts;
    if (!client || !cache || !ret)
        return kc_error_set(err, KC_EINVAL, "cached client: client, cache and ret are required");
    if (o.mode != KC_RYW_BLOCK_ON_WRITE && o.mode != KC_RYW_BLOCK_ON_READ && o.mode != KC_RYW_NONE)
        return kc_error_set(err, KC_EINVAL, "cached client: unknown read-your-writes mode %d",
                            (int)o.mode);
    if (o.n_uncached && !o.uncached)
        return kc_error_set(err, KC_EINVAL, "cached client: n_uncached without uncached");

    kc_cached_client *cc = calloc(1, sizeof(*cc));
    if (!cc)
        return kc_error_set(err, KC_ENOMEM, "cached client: out of memory");
    cc->client = client;
    cc->cache = cache;
    cc->mode = o.mode;
    cc->timeout_ms = o.timeout_ms ? o.timeout_ms : KC_RYW_DEFAULT_TIMEOUT_MS;
    cc->ns = (o.ns && *o.ns) ? kc__strdup(o.ns) : NULL;
    cc->field_manager = kc__strdup(o.field_manager ? o.field_manager : "kcache");
    if ((o.ns && *o.ns && !cc->ns) || !cc->field_manager)
        goto nomem;
    if (o.n_uncached) {
        cc->uncached = calloc(o.n_uncached, sizeof(*cc->uncached));
        if (!cc->uncached)
            goto nomem;
        cc->n_uncached = o.n_uncached;
        for (size_t i = 0; i < o.n_uncached; i++) {
            const kc_gvr *g = &o.uncached[i];
            cc->uncached[i].group = kc__strdup(g->group ? g->group : "");
            cc->uncached[i].version = kc__strdup(g->version ? g->version : "");
            cc->uncached[i].resource = kc__strdup(g->resource ? g->resource : "");
            if (!cc->uncached[i].group || !cc->uncached[i].version || !cc->uncached[i].resource)
                goto nomem;
        }
    }
    if (pthread_mutex_init(&cc->lock, NULL) != 0)
        goto nomem;
    kc__ryw_init(&cc->ryw);
    atomic_init(&cc->fence, o.fence);
    cc->fail_on_missing = o.fail_on_missing_informer;
    *ret = cc;
    return 0;

nomem:
    free_uncached(cc->uncached, cc->n_uncached);
    free(cc->field_manager);
    free(cc->ns);
    free(cc);
    return kc_error_set(err, KC_ENOMEM, "cached client: out of memory");
}

void kc_cached_client_free(kc_cached_client *cc)
{
    if (!cc)
        return;
    kc__ryw_destroy(&cc->ryw);
    size_t n = atomic_load(&cc->n_types);
    for (size_t i = 0; i < n; i++) {
        free(cc->types[i].group);
        free(cc->types[i].version);
        free(cc->types[i].resource);
        free(cc->types[i].ns);
    }
    pthread_mutex_destroy(&cc->lock);
    free_uncached(cc->uncached, cc->n_uncached);
    free(cc->field_manager);
    free(cc->ns);
    free(cc);
}

void(kc_cached_client_get_stats)(kc_cached_client *cc, kc_cached_client_stats *ret, size_t ret_size)
{
    kc_cached_client_stats st;
    memset(&st, 0, sizeof st);
    if (cc) {
        st.waits = atomic_load(&cc->n_waits);
        st.waits_immediate = atomic_load(&cc->n_waits_immediate);
        st.wait_timeouts = atomic_load(&cc->n_wait_timeouts);
        st.informers_started = atomic_load(&cc->n_informers_started);
        pthread_mutex_lock(&cc->lock);
        st.pending = cc->ryw.map.n;
        pthread_mutex_unlock(&cc->lock);
    }
    kc__result_copy(ret, ret_size, &st, sizeof st);
}

/* ---- type → store ---------------------------------------------------------------------------- */

static int64_t ms_left(uint64_t deadline_ns)
{
    if (deadline_ns == KC__DEADLINE_NEVER)
        return -1;
    uint64_t left = kc__deadline_left_ns(deadline_ns);
    return (int64_t)((left + KC__NS_PER_MS - 1) / KC__NS_PER_MS);
}

/* Publish inf for (gvr, ns); returns the entry (an existing one if another thread won), or NULL
 * when the table is full or out of memory (callers then go through kc_cache every time). */
static kc__cc_type *type_add(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                             kc_informer *inf)
{
    pthread_mutex_lock(&cc->lock);
    kc__cc_type *t = kc__cc_type_find(cc, gvr, ns);
    size_t n = atomic_load_explicit(&cc->n_types, memory_order_relaxed);
    if (!t && n < KC__CC_TYPES_MAX) {
        kc__cc_type *x = &cc->types[n];
        x->group = kc__strdup(gvr->group ? gvr->group : "");
        x->version = kc__strdup(gvr->version);
        x->resource = kc__strdup(gvr->resource);
        x->ns = kc__strdup(ns);
        if (x->group && x->version && x->resource && x->ns) {
            x->inf = inf;
            x->store = kc_informer_store(inf);
            atomic_init(&x->synced, false);
            atomic_store_explicit(&cc->n_types, n + 1, memory_order_release);
            t = x;
        } else {
            free(x->group);
            free(x->version);
            free(x->resource);
            free(x->ns);
            memset(x, 0, sizeof(*x));
        }
    }
    pthread_mutex_unlock(&cc->lock);
    return t;
}

int kc__cached_client_bind(kc_cached_client *cc, const kc_gvr *gvr, const char *ns,
                           kc_informer *inf)
{
    if (!cc || !gvr || !inf)
        return KC_EINVAL;
    const char *key = ns && *ns ? ns : "";
    if (cc->ns && strcmp(key, cc->ns) != 0) /* another namespace, or all for a client of one */
        return KC_EINVAL;
    if (kc__cc_type_find(cc, gvr, key))
        return KC_EEXISTS;
    kc__cc_type *t = type_add(cc, gvr, key, inf);
    if (!t)
        return atomic_load(&cc->n_types) >= KC__CC_TYPES_MAX ? KC_ETOOLARGE : KC_ENOMEM;
    if (t->inf != inf)
        return KC_EEXISTS; /* another thread published one first */
    if (*key && !cc->ns)
        atomic_fetch_add_explicit(&cc->n_ns_bound, 1, memory_order_release);
    return 0;
}

uint64_t kc__cc_deadline_lazy(const kc_cached_client *cc, const kc_cached_call_opts *call,
                              uint64_t *slot)
{
    if (*slot == 0)
        *slot = kc__cc_deadline(cc, call);
    return *slot;
}

int kc__cc_store(kc_cached_client *cc, const kc_gvr *gvr, const char *ns, bool wait_sync,
                 const kc_cached_call_opts *call, uint64_t *deadline_ns, kc_store **ret_store,
                 kc_error *err)
{
    const char *ins = "";
    if (ns && *ns && cc->ns) {
        if (strcmp(ns, cc->ns) != 0)
            return kc_error_set(err, KC_EINVAL,
                                "cached client: namespace \"%s\" is outside the client's \"%s\"",
                                ns, cc->ns);
        ins = cc->ns;
    }
    kc__cc_type *t = NULL;
    if (!*ins && ns && *ns && atomic_load_explicit(&cc->n_ns_bound, memory_order_acquire))
        t = kc__cc_type_find(cc, gvr, ns); /* an informer of that namespace, bound */
    if (!t)
        t = kc__cc_type_find(cc, gvr, ins);
    kc_informer *inf = t ? t->inf : NULL;
    if (!inf && cc->fail_on_missing) { /* ReaderFailOnMissingInformer: look, never start */
        kc_informer_opts io = {.ns = *ins ? ins : NULL};
        int rc = kc__cache_find_informer(cc->cache, gvr, &io, &inf);
        if (rc == KC_ENOTFOUND)
            return kc_error_set(err, KC_ENOTFOUND,
                                "cached client: no informer for %s/%s %s%s%s (the client fails on "
                                "a missing informer: start one with kc_cache_get_informer first)",
                                gvr->group && *gvr->group ? gvr->group : "core", gvr->version,
                                gvr->resource, *ins ? " in namespace " : "", ins);
        if (rc < 0)
            return kc_error_set(err, rc, "cached client: looking up the informer of %s: %s",
                                gvr->resource, kc_strerror(rc));
        t = type_add(cc, gvr, ins, inf);
    }
    if (!inf) {
        kc_informer_opts io = {.ns = *ins ? ins : NULL};
        size_t before = kc_cache_informer_count(cc->cache);
        int rc = kc_cache_get_informer(cc->cache, gvr, &io, &inf, err);
        if (rc < 0)
            return rc;
        if (kc_cache_informer_count(cc->cache) > before)
            atomic_fetch_add(&cc->n_informers_started, 1);
        t = type_add(cc, gvr, ins, inf);
    }
    if (wait_sync && !(t && atomic_load_explicit(&t->synced, memory_order_acquire))) {
        if (!kc_informer_has_synced(inf)) {
            /* err names the informer and its last error; KC_ENOTFOUND at once for a resource the
             * server does not serve */
            int rc = kc_informer_wait_synced(
                inf, ms_left(kc__cc_deadline_lazy(cc, call, deadline_ns)), err);
            if (rc < 0)
                return rc;
        }
        if (t)
            atomic_store_explicit(&t->synced, true, memory_order_release);
    }
    *ret_store = t ? t->store : kc_informer_store(inf);
    return 0;
}

/* ---- waiting --------------------------------------------------------------------------------- */

kc_store_cond kc__cc_written_cond(const char *ns, const char *name, const char *rv,
                                  uint64_t after_seq)
{
    kc_store_cond c = {
        .kind = KC_STORE_WAIT_WRITTEN, .ns = ns, .name = name, .rv = rv, .after_seq = after_seq};
    return c;
}

kc_store_cond kc__cc_deleted_cond(const char *ns, const char *name, const char *uid, const char *rv,
                                  uint64_t after_seq)
{
    kc_store_cond c = {.kind = KC_STORE_WAIT_DELETED,
                       .ns = ns,
                       .name = name,
                       .uid = uid,
                       .rv = rv,
                       .after_seq = after_seq};
    return c;
}

static const char *cond_what(const kc_store_cond *c)
{
    switch (c->kind) {
    case KC_STORE_WAIT_KEY_RV:
        return "resourceVersion";
    case KC_STORE_WAIT_KEY_GONE:
        return "deletion";
    case KC_STORE_WAIT_WATERMARK:
        return "resourceVersion (store watermark)";
    case KC_STORE_WAIT_WRITTEN:
        return "resourceVersion";
    case KC_STORE_WAIT_DELETED:
        return "deletion of uid";
    }
    return "condition";
}

int kc__cc_wait(kc_cached_client *cc, kc_store *s, const kc_store_cond *c, uint64_t deadline_ns,
                kc_error *err)
{
    atomic_fetch_add(&cc->n_waits, 1);
    int rc = kc_store_check(s, c, NULL);
    if (rc == 1) {
        atomic_fetch_add(&cc->n_waits_immediate, 1);
        return 0;
    }
    if (rc < 0)
        return kc_error_set(err, rc, "cached client: malformed wait condition");
    rc = kc_store_wait(s, c, ms_left(deadline_ns), NULL);
    if (rc == 0)
        return 0;
    if (rc == KC_ETIMEOUT) {
        atomic_fetch_add(&cc->n_wait_timeouts, 1);
        bool del = c->kind == KC_STORE_WAIT_KEY_GONE || c->kind == KC_STORE_WAIT_DELETED;
        const char *id = del ? c->uid : c->rv;
        return kc_error_set(err, KC_ENOT_CAUGHT_UP,
                            "cache did not observe %s %s of %s%s%s within the timeout",
                            cond_what(c), id ? id : "", c->ns && *c->ns ? c->ns : "",
                            c->ns && *c->ns ? "/" : "", c->name ? c->name : "");
    }
    if (rc == KC_ESTOPPED)
        return kc_error_set(err, KC_ESTOPPED, "cache stopped while waiting for %s", cond_what(c));
    return kc_error_set(err, rc, "cached client: wait failed: %s", kc_strerror(rc));
}

int kc_cached_client_set_fence(kc_cached_client *cc, const kc_fence *fence)
{
    if (!cc)
        return KC_EINVAL;
    atomic_store_explicit(&cc->fence, fence, memory_order_release);
    return 0;
}
