/*
 * informer/cache.c — kc_cache: shared informers keyed by gvr + namespace + selectors + metadata
 * mode, and readiness for all of them.
 *
 * Informers are keyed by their identity (spec.c: gvr, namespace, canonical selectors, metadata
 * mode), which is also their derived display name; a display name given in the options must not
 * be used by another informer of the cache (KC_EINVAL), so /readyz and /metrics never show two
 * informers under one name. They are created and started under the cache mutex (the reflector
 * thread only calls back into the cache after the mutex is released) and never freed before
 * kc_cache_free, so a pointer read under the mutex stays valid after it.
 *
 * Readiness: every informer calls the cache back (on_state) when it syncs, fails or stops; the
 * callback updates the eventfd and wakes kc_cache_wait_synced, which sleeps on the cache's own
 * condition variable: every wake-up is one of those events, never a poll, and informers added
 * meanwhile count at the next check. A required informer that failed for good (a resource the
 * server does not serve) or was stopped ends the wait at once with its own error; a timeout lists
 * every required informer still not synced with its last error. The eventfd is written when the
 * last required informer syncs and drained again when a new, unsynced required informer joins.
 *
 * User indexers are kept per type (group/version/resource, strings copied) under the mutex; a new
 * informer gets those of its type added to its store between kc_informer_new and kc_informer_start
 * (the store is empty then, so kc_store_add_indexer accepts them). Registering for a type that
 * already has an informer is refused (KC_EBUSY): its store may hold objects already.
 */
#include "informer/internal.h"

#include "rest/internal.h"
#include "kcache/cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

typedef struct centry {
    kc_informer *inf; /* its spec.id is the key */
    bool required;
} centry;

typedef struct cindexer {
    char *group, *version, *resource, *name;
    kc_store_indexer_fn fn;
    void *ud;
} cindexer;

struct kc_cache {
    kc_client *client;
    kc_cache_opts o;           /* o.defaults points at defaults */
    kc_informer_opts defaults; /* copied; decode points at defaults_decode (or is NULL) */
    kc_decode_opts defaults_decode;
    kc_shard_range *defaults_ranges; /* defaults.shard_ranges points here (copied) */
    cindexer *ixs;
    size_t n_ixs;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* an informer synced, failed or stopped; the cache stopped */
    centry *v;
    size_t n, cap;
    bool stopped;
    int sync_fd;
    bool fd_signalled;
};

/* Check the defaults' shard ranges (KC_EINVAL naming them) and copy them (the caller's array is
 * borrowed for kc_cache_new only). */
static int copy_default_ranges(kc_cache *c, kc_error *err)
{
    kc_shard_selector *sel = NULL;
    int rc = kc__inf_shard_build(c->defaults.shard_field, c->defaults.shard_ranges,
                                 c->defaults.shard_ranges_count,
                                 "kc_cache_opts.defaults->shard_field/shard_ranges", &sel, err);
    kc_shard_selector_free(sel);
    if (rc < 0)
        return rc;
    if (!sel) {
        c->defaults.shard_ranges = NULL;
        return 0;
    }
    size_t n = c->defaults.shard_ranges_count;
    c->defaults_ranges = malloc(n * sizeof *c->defaults_ranges);
    if (!c->defaults_ranges)
        return kc_error_set(err, KC_ENOMEM, "cache: out of memory");
    memcpy(c->defaults_ranges, c->defaults.shard_ranges, n * sizeof *c->defaults_ranges);
    c->defaults.shard_ranges = c->defaults_ranges;
    return 0;
}

int(kc_cache_new)(kc_client *client, const kc_cache_opts *opts, size_t opts_size, kc_cache **ret,
                  kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_cache_opts, err);
    kc_informer_opts defs = {0};
    KC__OPTS_TAKE_NESTED(opts__copy, defaults, &defs, "kc_cache_opts.defaults", err);
    kc_decode_opts defs_decode = {0};
    KC__OPTS_TAKE_NESTED(defs, decode, &defs_decode, "kc_cache_opts.defaults->decode", err);
    if (!client || !ret)
        return kc_error_set(err, KC_EINVAL, "cache: client and ret are required");
    kc_cache *c = calloc(1, sizeof(*c));
    if (!c)
        return kc_error_set(err, KC_ENOMEM, "cache: out of memory");
    c->client = client;
    c->o = *opts;
    c->defaults = defs;
    c->defaults_decode = defs_decode;
    if (c->defaults.decode)
        c->defaults.decode = &c->defaults_decode;
    c->o.defaults = &c->defaults;
    c->o.defaults_size = sizeof c->defaults;
    /* Strings in defaults that form the key are not used; others (name) are per informer. */
    c->defaults.ns = c->defaults.label_selector = c->defaults.field_selector = NULL;
    c->defaults.name = NULL;
    int src = copy_default_ranges(c, err);
    if (src < 0) {
        free(c);
        return src;
    }
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
    if (kc__cond_init_monotonic(&c->cv) < 0) {
        pthread_mutex_destroy(&c->mu);
        close(c->sync_fd);
        free(c);
        return kc_error_set(err, KC_ENOMEM, "cache: out of memory");
    }
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

/* An informer synced, failed or stopped (its on_state hook), or one joined the cache. */
static void on_informer_state(void *ud)
{
    kc_cache *c = ud;
    pthread_mutex_lock(&c->mu);
    if (!c->fd_signalled && all_synced_locked(c)) {
        uint64_t one = 1;
        if (write(c->sync_fd, &one, sizeof(one)) == sizeof(one))
            c->fd_signalled = true;
    }
    pthread_cond_broadcast(&c->cv);
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

static bool ix_is_for_spec(const kc__inf_spec *sp, const kc_gvr *gvr)
{
    return streq0(sp->group, gvr->group) && streq0(sp->version, gvr->version) &&
           streq0(sp->resource, gvr->resource);
}

static void ix_free(cindexer *x)
{
    free(x->group);
    free(x->version);
    free(x->resource);
    free(x->name);
}

/* With c->mu held: does an informer of gvr exist? */
static bool has_informer_locked(kc_cache *c, const kc_gvr *gvr)
{
    for (size_t i = 0; i < c->n; i++)
        if (ix_is_for_spec(&c->v[i].inf->spec, gvr))
            return true;
    return false;
}

int kc_cache_add_indexer(kc_cache *c, const kc_gvr *gvr, const char *name, kc_store_indexer_fn fn,
                         void *ud, kc_error *err)
{
    if (!c)
        return kc_error_set(err, KC_EINVAL, "cache is NULL");
    int rc = kc__gvr_check(gvr, err);
    if (rc < 0)
        return rc;
    if (!name || !*name || !fn || strcmp(name, KC_STORE_INDEX_NAMESPACE) == 0)
        return kc_error_set(err, KC_EINVAL, "cache: bad indexer name or function");
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

/* Zero fields of o take the cache defaults. */
static kc_informer_opts merged(const kc_cache *c, const kc_informer_opts *o)
{
    kc_informer_opts m = c->defaults;
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
    KC__DEF(max_list_items)
    KC__DEF(max_list_bytes)
    KC__DEF(max_list_pages)
#undef KC__DEF
    if (r.list_mode == KC_INFORMER_LIST_AUTO)
        r.list_mode = m.list_mode;
    if (!r.decode) {
        r.decode = m.decode;
        r.decode_size = m.decode_size;
    }
    if (r.shard_field == KC_SHARD_FIELD_NONE && !r.shard_ranges && !r.shard_ranges_count) {
        r.shard_field = m.shard_field;
        r.shard_ranges = m.shard_ranges;
        r.shard_ranges_count = m.shard_ranges_count;
    }
    return r;
}

/* With c->mu held: the informer whose identity is id, or NULL. */
static kc_informer *find_locked(kc_cache *c, const char *id)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i].inf->spec.id, id) == 0)
            return c->v[i].inf;
    return NULL;
}

/* With c->mu held: KC_EINVAL when name (display) is taken by another informer. */
static int check_name_locked(kc_cache *c, const char *name, kc_error *err)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(kc_informer_name(c->v[i].inf), name) == 0)
            return kc_error_set(err, KC_EINVAL,
                                "cache: informer name \"%s\" is already used by another informer "
                                "(%s): names label /readyz and /metrics and must be unique",
                                name, c->v[i].inf->spec.id);
    return 0;
}

/* With c->mu held: create, equip and start the informer of spec with options m. */
static int add_locked(kc_cache *c, const kc_gvr *gvr, const kc_informer_opts *m,
                      kc_informer **ret_inf, kc_error *err)
{
    if (c->n >= c->o.max_informers)
        return kc_error_set(err, KC_ETOOLARGE, "cache: more than %zu informers",
                            c->o.max_informers);
    if (kc__grow(&c->v, &c->cap, c->n + 1, sizeof(*c->v), 8) < 0)
        return kc_error_set(err, KC_ENOMEM, "cache: out of memory");
    kc_informer *inf = NULL;
    int rc = kc_informer_new(c->client, gvr, m, &inf, err);
    if (rc == 0)
        rc = check_name_locked(c, kc_informer_name(inf), err);
    for (size_t i = 0; rc == 0 && i < c->n_ixs; i++)
        if (ix_is_for(&c->ixs[i], gvr))
            rc = kc_store_add_indexer(kc_informer_store(inf), c->ixs[i].name, c->ixs[i].fn,
                                      c->ixs[i].ud, err);
    if (rc < 0) {
        kc_informer_free(inf);
        return rc;
    }
    inf->on_state = on_informer_state;
    inf->on_state_ud = c;
    c->v[c->n++] = (centry){inf, !m->optional};
    if (!m->optional && c->fd_signalled) {
        uint64_t v;
        if (read(c->sync_fd, &v, sizeof(v)) == sizeof(v))
            c->fd_signalled = false;
    }
    rc = kc_informer_start(inf, err);
    if (rc < 0) {
        c->n--;
        kc_informer_free(inf);
        return rc;
    }
    *ret_inf = inf;
    return 0;
}

int(kc_cache_get_informer)(kc_cache *c, const kc_gvr *gvr, const kc_informer_opts *opts,
                           size_t opts_size, kc_informer **ret_inf, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_informer_opts, err);
    if (!c || !ret_inf)
        return kc_error_set(err, KC_EINVAL, "cache: cache and ret_inf are required");
    /* Checked and made canonical before the lookup: equivalent selectors share one informer,
     * and a bad gvr or selector is refused whether or not an informer exists. */
    kc__inf_spec spec;
    kc_informer_opts m = merged(c, opts); /* the defaults' shard ranges are part of the identity */
    int rc = kc__inf_spec_init(&spec, gvr, &m, err);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&c->mu);
    kc_informer *found = c->stopped ? NULL : find_locked(c, spec.id);
    if (c->stopped) {
        rc = kc_error_set(err, KC_ESTOPPED, "cache: stopped");
    } else if (found) {
        *ret_inf = found;
    } else {
        m.ns = spec.ns;
        m.label_selector = spec.label_selector;
        m.field_selector = spec.field_selector;
        rc = add_locked(c, gvr, &m, ret_inf, err);
    }
    pthread_mutex_unlock(&c->mu);
    kc__inf_spec_clear(&spec);
    if (rc == 0)
        on_informer_state(c); /* e.g. an optional informer joined a cache that was synced */
    return rc;
}

int kc__cache_find_informer(kc_cache *c, const kc_gvr *gvr, const kc_informer_opts *opts,
                            kc_informer **ret_inf)
{
    if (!c || !ret_inf)
        return KC_EINVAL;
    *ret_inf = NULL;
    kc__inf_spec spec;
    kc_informer_opts m = merged(c, opts); /* the same identity as kc_cache_get_informer's */
    int rc = kc__inf_spec_init(&spec, gvr, &m, NULL);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&c->mu);
    kc_informer *found = c->stopped ? NULL : find_locked(c, spec.id);
    rc = c->stopped ? KC_ESTOPPED : found ? 0 : KC_ENOTFOUND;
    pthread_mutex_unlock(&c->mu);
    kc__inf_spec_clear(&spec);
    *ret_inf = found;
    return rc;
}

/* err for a cache wait that ended with KC_ETIMEOUT: every required informer not synced, why. */
static int timeout_error(kc_cache *c, int64_t waited_ms, kc_error *err)
{
    if (!err)
        return KC_ETIMEOUT;
    kc__buf b = KC__BUF_INIT(64 * 1024);
    size_t pending = 0, shown = 0;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n; i++) {
        kc_informer *inf = c->v[i].inf;
        if (!c->v[i].required || kc_informer_has_synced(inf))
            continue;
        pending++;
        if (shown++ >= 8)
            continue;
        kc_informer_status st;
        kc_informer_get_status(inf, &st);
        kc__buf_printf(&b, "%s%s (", shown > 1 ? "; " : "", kc_informer_name(inf));
        if (st.last_error_code) {
            kc__buf_printf(
                &b, "last error %.1f s ago, %llu in a row: ", (double)st.last_error_age_ms / 1000.0,
                (unsigned long long)st.consecutive_errors);
            kc__inf_error_text(&st, &b);
        } else {
            kc__buf_append_str(&b, "no error so far: initial list in progress");
        }
        kc__buf_append_char(&b, ')');
    }
    pthread_mutex_unlock(&c->mu);
    kc_error_set(err, KC_ETIMEOUT, "cache: %zu required informer%s not synced after %lld ms: %s%s",
                 pending, pending == 1 ? "" : "s", (long long)waited_ms, b.data ? b.data : "",
                 shown > 8 ? "; …" : "");
    kc__buf_free(&b);
    return KC_ETIMEOUT;
}

int kc_cache_wait_synced(kc_cache *c, int64_t timeout_ms, kc_error *err)
{
    if (!c)
        return kc_error_set(err, KC_EINVAL, "cache is NULL");
    uint64_t t0 = kc__now_ns();
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    int rc = 0;
    kc_informer *failed = NULL;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        if (c->stopped) {
            rc = KC_ESTOPPED;
            break;
        }
        bool pending = false;
        for (size_t i = 0; !failed && i < c->n; i++) {
            kc_informer *inf = c->v[i].inf;
            if (!c->v[i].required || kc_informer_has_synced(inf))
                continue;
            pending = true;
            if (kc__inf_stopping(inf) || kc__inf_failed_permanently(inf))
                failed = inf;
        }
        if (failed || !pending)
            break;
        if (kc__cond_wait_until(&c->cv, &c->mu, deadline) == KC_ETIMEOUT) {
            rc = all_synced_locked(c) ? 0 : KC_ETIMEOUT;
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
    if (failed) /* stopped or failed for good: its own wait returns at once and says why */
        return kc_informer_wait_synced(failed, 0, err);
    if (rc == KC_ETIMEOUT)
        return timeout_error(c, (int64_t)((kc__now_ns() - t0) / KC__NS_PER_MS), err);
    if (rc == KC_ESTOPPED)
        return kc_error_set(err, KC_ESTOPPED, "cache: stopped");
    return 0;
}

bool kc_cache_has_synced(kc_cache *c)
{
    if (!c)
        return false;
    pthread_mutex_lock(&c->mu);
    bool s = all_synced_locked(c);
    pthread_mutex_unlock(&c->mu);
    return s;
}

bool kc_cache_ready(kc_cache *c)
{
    if (!c)
        return false;
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
    return c ? c->sync_fd : KC_EINVAL;
}

size_t kc_cache_informer_count(kc_cache *c)
{
    if (!c)
        return 0;
    pthread_mutex_lock(&c->mu);
    size_t n = c->n;
    pthread_mutex_unlock(&c->mu);
    return n;
}

kc_informer *kc_cache_informer_at(kc_cache *c, size_t i)
{
    if (!c)
        return NULL;
    pthread_mutex_lock(&c->mu);
    kc_informer *inf = i < c->n ? c->v[i].inf : NULL;
    pthread_mutex_unlock(&c->mu);
    return inf;
}

bool kc_cache_informer_required(kc_cache *c, size_t i)
{
    if (!c)
        return false;
    pthread_mutex_lock(&c->mu);
    bool r = i < c->n && c->v[i].required;
    pthread_mutex_unlock(&c->mu);
    return r;
}

void kc_cache_stop(kc_cache *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->stopped = true;
    pthread_cond_broadcast(&c->cv);
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
    for (size_t i = 0; i < c->n; i++)
        kc_informer_free(c->v[i].inf);
    free(c->v);
    for (size_t i = 0; i < c->n_ixs; i++)
        ix_free(&c->ixs[i]);
    free(c->ixs);
    free(c->defaults_ranges);
    close(c->sync_fd);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}
