/*
 * informer/cache.c — kc_cache: shared informers keyed by gvr + namespace + selectors + metadata
 * mode, and readiness for all of them.
 *
 * Informers are created and started under the cache mutex (the reflector thread only calls back
 * into the cache after the mutex is released) and never freed before kc_cache_free, so a pointer
 * read under the mutex stays valid after it. kc_cache_wait_synced repeatedly picks the first
 * required informer that has not synced and waits on that informer's own condition variable with
 * the remaining time: every wake-up is a sync or a stop, never a poll, and informers added
 * meanwhile are picked up by the next round. The cache's eventfd is written when the last required
 * informer syncs and drained again when a new, unsynced required informer joins.
 *
 * User indexers are kept per type (group/version/resource, strings copied) under the mutex; a new
 * informer gets those of its type added to its store between kc_informer_new and kc_informer_start
 * (the store is empty then, so kc_store_add_indexer accepts them). Registering for a type that
 * already has an informer is refused (KC_EBUSY): its store may hold objects already.
 */
#include "informer/informer_internal.h"
#include "kcache/cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

typedef struct centry {
    kc_informer *inf;
    char *key;
    bool required;
} centry;

typedef struct cindexer {
    char *group, *version, *resource, *name;
    kc_store_indexer_fn fn;
    void *ud;
} cindexer;

struct kc_cache {
    kc_client *client;
    kc_cache_opts o;
    cindexer *ixs;
    size_t n_ixs;
    pthread_mutex_t mu;
    centry *v;
    size_t n, cap;
    bool stopped;
    int sync_fd;
    bool fd_signalled;
};

int kc_cache_new(kc_client *client, const kc_cache_opts *opts, kc_cache **ret, kc_error *err)
{
    if (!client)
        return kc_error_set(err, KC_EINVAL, "cache: client required");
    kc_cache *c = calloc(1, sizeof(*c));
    if (!c)
        return kc_error_set(err, KC_ENOMEM, "cache: out of memory");
    c->client = client;
    if (opts)
        c->o = *opts;
    /* Strings in defaults that form the key are not used; others (name) are per informer. */
    c->o.defaults.ns = c->o.defaults.label_selector = c->o.defaults.field_selector = NULL;
    c->o.defaults.name = NULL;
    if (!c->o.max_informers)
        c->o.max_informers = 256;
    c->o.indexers = NULL;
    c->o.n_indexers = 0;
    c->sync_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (c->sync_fd < 0) {
        free(c);
        return kc_error_set(err, KC_EIO, "cache: eventfd failed");
    }
    pthread_mutex_init(&c->mu, NULL);
    for (size_t i = 0; opts && opts->indexers && i < opts->n_indexers; i++) {
        const kc_cache_indexer *x = &opts->indexers[i];
        int rc = kc_cache_add_indexer(c, &x->gvr, x->name, x->fn, x->ud, err);
        if (rc < 0) {
            kc_cache_free(c);
            return rc;
        }
    }
    /* No informer yet: vacuously synced. */
    uint64_t one = 1;
    if (write(c->sync_fd, &one, sizeof(one)) == sizeof(one))
        c->fd_signalled = true;
    *ret = c;
    return 0;
}

static bool all_synced_locked(kc_cache *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i].required && !kc_informer_has_synced(c->v[i].inf))
            return false;
    return true;
}

static void on_informer_synced(void *ud)
{
    kc_cache *c = ud;
    pthread_mutex_lock(&c->mu);
    if (!c->fd_signalled && all_synced_locked(c)) {
        uint64_t one = 1;
        if (write(c->sync_fd, &one, sizeof(one)) == sizeof(one))
            c->fd_signalled = true;
    }
    pthread_mutex_unlock(&c->mu);
}

static bool streq0(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool ix_is_for(const cindexer *x, const kc_gvr *gvr)
{
    return streq0(x->group, gvr->group) && streq0(x->version, gvr->version) &&
           streq0(x->resource, gvr->resource);
}

static void ix_free(cindexer *x)
{
    free(x->group);
    free(x->version);
    free(x->resource);
    free(x->name);
}

/* Informer keys are "group|version|resource|ns|labels|fields|metadata_only"; their first three
 * fields, with the '|' after each, are the type's prefix. */
static int put_type_prefix(kc__buf *b, const kc_gvr *gvr)
{
    return kc__buf_printf(b, "%s|%s|%s|", gvr->group ? gvr->group : "", gvr->version,
                          gvr->resource);
}

/* With c->mu held: does an informer of gvr exist? */
static bool has_informer_locked(kc_cache *c, const kc_gvr *gvr)
{
    kc__buf pre = KC__BUF_INIT(8192);
    bool found = put_type_prefix(&pre, gvr) != 0; /* out of memory: be conservative */
    for (size_t i = 0; i < c->n && !found; i++)
        found = strncmp(c->v[i].key, pre.data, pre.len) == 0;
    kc__buf_free(&pre);
    return found;
}

int kc_cache_add_indexer(kc_cache *c, const kc_gvr *gvr, const char *name, kc_store_indexer_fn fn,
                         void *ud, kc_error *err)
{
    if (!c || !gvr || !gvr->version || !*gvr->version || !gvr->resource || !*gvr->resource)
        return kc_error_set(err, KC_EINVAL, "cache: indexer needs a gvr with version and resource");
    if (!name || !*name || !fn || strcmp(name, "namespace") == 0)
        return kc_error_set(err, KC_EINVAL, "cache: bad indexer name or function");
    int rc = 0;
    size_t same_type = 0;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n_ixs; i++) {
        if (!ix_is_for(&c->ixs[i], gvr))
            continue;
        same_type++;
        if (strcmp(c->ixs[i].name, name) == 0)
            rc = kc_error_set(err, KC_EINVAL, "cache: indexer %s already registered for %s", name,
                              gvr->resource);
    }
    if (!rc && c->stopped)
        rc = kc_error_set(err, KC_ESTOPPED, "cache: stopped");
    if (!rc && same_type >= KC_STORE_MAX_INDEXERS)
        rc = kc_error_set(err, KC_ETOOLARGE, "cache: more than %d indexers for %s",
                          KC_STORE_MAX_INDEXERS, gvr->resource);
    if (!rc && has_informer_locked(c, gvr))
        rc = kc_error_set(err, KC_EBUSY,
                          "cache: an informer of %s exists already: add indexers before first use",
                          gvr->resource);
    if (!rc) {
        cindexer *nv = realloc(c->ixs, (c->n_ixs + 1) * sizeof(*nv));
        if (nv)
            c->ixs = nv;
        cindexer x = {kc__strdup(gvr->group ? gvr->group : ""),
                      kc__strdup(gvr->version),
                      kc__strdup(gvr->resource),
                      kc__strdup(name),
                      fn,
                      ud};
        if (!nv || !x.group || !x.version || !x.resource || !x.name) {
            ix_free(&x);
            rc = kc_error_set(err, KC_ENOMEM, "cache: out of memory");
        } else {
            c->ixs[c->n_ixs++] = x;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

static char *make_key(const kc_gvr *gvr, const kc_informer_opts *o)
{
    kc__buf b = KC__BUF_INIT(8192);
    put_type_prefix(&b, gvr);
    kc__buf_printf(&b, "%s|%s|%s|%d", (o && o->ns) ? o->ns : "",
                   (o && o->label_selector) ? o->label_selector : "",
                   (o && o->field_selector) ? o->field_selector : "", o && o->metadata_only);
    return kc__buf_steal(&b, NULL);
}

/* Zero fields of o take the cache defaults. */
static kc_informer_opts merged(const kc_cache *c, const kc_informer_opts *o)
{
    kc_informer_opts m = c->o.defaults;
    if (!o)
        return m;
    kc_informer_opts r = *o;
#define KC__DEF(f)                                                                                 \
    if (!r.f)                                                                                      \
        r.f = m.f;
    KC__DEF(page_size)
    KC__DEF(resync_ms)
    KC__DEF(initial_events_timeout_ms)
    KC__DEF(max_staleness_ms)
    KC__DEF(handler_queue_cap)
    KC__DEF(backoff_initial_ms)
    KC__DEF(backoff_max_ms)
    KC__DEF(backoff_reset_ms)
    KC__DEF(watch_timeout_s)
#undef KC__DEF
    if (r.list_mode == KC_INFORMER_LIST_AUTO)
        r.list_mode = m.list_mode;
    if (!r.decode.flags && !r.decode.max_object_size)
        r.decode = m.decode;
    return r;
}

int kc_cache_get_informer(kc_cache *c, const kc_gvr *gvr, const kc_informer_opts *opts,
                          kc_informer **ret_inf, kc_error *err)
{
    if (!gvr || !gvr->version || !gvr->resource)
        return kc_error_set(err, KC_EINVAL, "cache: gvr required");
    char *key = make_key(gvr, opts);
    if (!key)
        return kc_error_set(err, KC_ENOMEM, "cache: out of memory");
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    if (c->stopped) {
        rc = kc_error_set(err, KC_ESTOPPED, "cache: stopped");
        goto out;
    }
    for (size_t i = 0; i < c->n; i++) {
        if (strcmp(c->v[i].key, key) == 0) {
            *ret_inf = c->v[i].inf;
            goto out;
        }
    }
    if (c->n >= c->o.max_informers) {
        rc = kc_error_set(err, KC_ETOOLARGE, "cache: more than %zu informers", c->o.max_informers);
        goto out;
    }
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 8;
        centry *nv = realloc(c->v, nc * sizeof(*nv));
        if (!nv) {
            rc = kc_error_set(err, KC_ENOMEM, "cache: out of memory");
            goto out;
        }
        c->v = nv;
        c->cap = nc;
    }
    kc_informer_opts m = merged(c, opts);
    kc_informer *inf = NULL;
    rc = kc_informer_new(c->client, gvr, &m, &inf, err);
    if (rc < 0)
        goto out;
    for (size_t i = 0; i < c->n_ixs; i++) {
        if (!ix_is_for(&c->ixs[i], gvr))
            continue;
        rc = kc_store_add_indexer(kc_informer_store(inf), c->ixs[i].name, c->ixs[i].fn,
                                  c->ixs[i].ud, err);
        if (rc < 0) {
            kc_informer_free(inf);
            goto out;
        }
    }
    inf->on_synced = on_informer_synced;
    inf->on_synced_ud = c;
    c->v[c->n] = (centry){inf, key, !m.optional};
    key = NULL;
    c->n++;
    if (!m.optional && c->fd_signalled) {
        uint64_t v;
        if (read(c->sync_fd, &v, sizeof(v)) == sizeof(v))
            c->fd_signalled = false;
    }
    rc = kc_informer_start(inf, err);
    if (rc < 0) {
        c->n--;
        free(c->v[c->n].key);
        kc_informer_free(inf);
        goto out;
    }
    *ret_inf = inf;
out:
    pthread_mutex_unlock(&c->mu);
    free(key);
    if (rc == 0)
        on_informer_synced(c); /* e.g. an optional informer joined a cache that was synced */
    return rc;
}

int kc_cache_wait_synced(kc_cache *c, int64_t timeout_ms)
{
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    for (;;) {
        pthread_mutex_lock(&c->mu);
        bool stopped = c->stopped;
        kc_informer *pending = NULL;
        for (size_t i = 0; !stopped && !pending && i < c->n; i++)
            if (c->v[i].required && !kc_informer_has_synced(c->v[i].inf))
                pending = c->v[i].inf;
        pthread_mutex_unlock(&c->mu);
        if (stopped)
            return KC_ESTOPPED;
        if (!pending)
            return 0;
        int64_t left = -1;
        if (deadline != KC__DEADLINE_NEVER)
            left = (int64_t)(kc__deadline_left_ns(deadline) / KC__NS_PER_MS);
        int rc = kc_informer_wait_synced(pending, left);
        if (rc < 0)
            return rc;
    }
}

bool kc_cache_has_synced(kc_cache *c)
{
    pthread_mutex_lock(&c->mu);
    bool s = all_synced_locked(c);
    pthread_mutex_unlock(&c->mu);
    return s;
}

bool kc_cache_ready(kc_cache *c)
{
    bool r = true;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; r && i < c->n; i++)
        if (c->v[i].required && !kc_informer_ready(c->v[i].inf))
            r = false;
    r = r && !c->stopped;
    pthread_mutex_unlock(&c->mu);
    return r;
}

int kc_cache_sync_fd(kc_cache *c)
{
    return c->sync_fd;
}

size_t kc_cache_informer_count(kc_cache *c)
{
    pthread_mutex_lock(&c->mu);
    size_t n = c->n;
    pthread_mutex_unlock(&c->mu);
    return n;
}

kc_informer *kc_cache_informer_at(kc_cache *c, size_t i)
{
    pthread_mutex_lock(&c->mu);
    kc_informer *inf = i < c->n ? c->v[i].inf : NULL;
    pthread_mutex_unlock(&c->mu);
    return inf;
}

bool kc_cache_informer_required(kc_cache *c, size_t i)
{
    pthread_mutex_lock(&c->mu);
    bool r = i < c->n && c->v[i].required;
    pthread_mutex_unlock(&c->mu);
    return r;
}

void kc_cache_stop(kc_cache *c)
{
    pthread_mutex_lock(&c->mu);
    c->stopped = true;
    size_t n = c->n;
    pthread_mutex_unlock(&c->mu);
    /* No informer is added after `stopped`; the first n entries are stable. */
    for (size_t i = 0; i < n; i++)
        kc_informer_stop(c->v[i].inf);
}

void kc_cache_free(kc_cache *c)
{
    if (!c)
        return;
    kc_cache_stop(c);
    for (size_t i = 0; i < c->n; i++) {
        kc_informer_free(c->v[i].inf);
        free(c->v[i].key);
    }
    free(c->v);
    for (size_t i = 0; i < c->n_ixs; i++)
        ix_free(&c->ixs[i]);
    free(c->ixs);
    close(c->sync_fd);
    pthread_mutex_destroy(&c->mu);
    free(c);
}
