/*
 * informer/informer.c — kc_informer lifecycle (new, start, stop, free) and the state transitions
 * the reflector makes (status.c has readiness, the status snapshot and the error record; spec.c
 * what is watched; exit.c the exit handler).
 *
 * Stop: sets `stopping` (under st_mu), fires the cancel token of the call in flight, wakes every
 * sleeper; joins the reflector; stops the store (its waiters get KC_ESTOPPED) and every handler
 * registration (joined, kept allocated until free). A stop that finds another one in progress
 * waits until that one has joined the threads (stop_done), so "stop returned" always means "no
 * thread of the informer runs".
 */
#include "informer/internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

void kc_informer_free(kc_informer *inf)
{
    if (!inf)
        return;
    kc_informer_stop(inf);
    kc__inf_exit_unregister(inf);
    pthread_mutex_lock(&inf->st_mu);
    while (inf->exit_pinned) /* exit is stopping it right now (exit.c) */
        pthread_cond_wait(&inf->st_cv, &inf->st_mu);
    pthread_mutex_unlock(&inf->st_mu);
    kc__inf_regs_free_all(inf);
    kc_store_free(inf->store);
    if (inf->sync_fd >= 0)
        close(inf->sync_fd);
    kc_error_clear(&inf->item_err);
    kc__inf_spec_clear(&inf->spec);
    kc_shard_selector_free(inf->shard);
    kc_shard_selector_free(inf->shard_next);
    free(inf->name);
    pthread_cond_destroy(&inf->st_cv);
    pthread_mutex_destroy(&inf->st_mu);
    pthread_mutex_destroy(&inf->ev_mu);
    free(inf);
}

/* Zero option fields take their defaults; strings point into inf->spec. opts is a full-size
 * copy whose decode (if set) is too. */
static void set_opts(kc_informer *inf, const kc_informer_opts *opts)
{
    inf->o = *opts;
    if (opts->decode)
        inf->dec = *opts->decode;
    inf->dec.shard = NULL; /* the informer filters by its own ranges only */
    inf->o.decode = &inf->dec;
    inf->o.decode_size = sizeof inf->dec;
    inf->o.ns = inf->spec.ns;
    inf->o.label_selector = inf->spec.label_selector;
    inf->o.field_selector = inf->spec.field_selector;
    inf->o.name = NULL;
    if (inf->o.page_size <= 0)
        inf->o.page_size = 500;
    if (inf->o.initial_events_timeout_ms <= 0)
        inf->o.initial_events_timeout_ms = 10000;
    if (inf->o.handler_queue_cap == 0)
        inf->o.handler_queue_cap = 65536;
    if (inf->o.backoff_initial_ms <= 0)
        inf->o.backoff_initial_ms = 800;
    if (inf->o.backoff_max_ms <= 0)
        inf->o.backoff_max_ms = 30000;
    if (inf->o.backoff_reset_ms <= 0)
        inf->o.backoff_reset_ms = 120000;
    if (inf->o.max_list_items == 0)
        inf->o.max_list_items = 10000000;
    if (inf->o.max_list_bytes == 0)
        inf->o.max_list_bytes = (int64_t)8 << 30;
    if (inf->o.max_list_pages == 0)
        inf->o.max_list_pages =
            inf->o.max_list_items > 0 ? inf->o.max_list_items / inf->o.page_size + 1000 : -1;
    if (inf->o.metadata_only)
        inf->dec.flags |= KC_DECODE_METADATA_ONLY;
}

int(kc_informer_new)(kc_client *client, const kc_gvr *gvr, const kc_informer_opts *opts,
                     size_t opts_size, kc_informer **ret, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_informer_opts, err);
    kc_decode_opts dec;
    KC__OPTS_TAKE_NESTED(opts__copy, decode, &dec, "kc_informer_opts.decode", err);
    if (!client || !ret)
        return kc_error_set(err, KC_EINVAL, "informer: client and ret are required");
    kc__inf_spec spec;
    int rc = kc__inf_spec_init(&spec, gvr, opts, err);
    if (rc < 0)
        return rc;
    kc_informer *inf = calloc(1, sizeof(*inf));
    if (!inf) {
        kc__inf_spec_clear(&spec);
        return kc_error_set(err, KC_ENOMEM, "informer: out of memory");
    }
    inf->spec = spec;
    inf->sync_fd = -1;
    pthread_mutex_init(&inf->ev_mu, NULL);
    pthread_mutex_init(&inf->st_mu, NULL);
    if (kc__cond_init_monotonic(&inf->st_cv) < 0) {
        pthread_mutex_destroy(&inf->st_mu);
        pthread_mutex_destroy(&inf->ev_mu);
        kc__inf_spec_clear(&inf->spec);
        free(inf);
        return kc_error_set(err, KC_ENOMEM, "informer: out of memory");
    }
    inf->client = client;
    set_opts(inf, opts);
    inf->gvr.group = inf->spec.group;
    inf->gvr.version = inf->spec.version;
    inf->gvr.resource = inf->spec.resource;
    inf->name = kc__strdup((opts && opts->name && *opts->name) ? opts->name : inf->spec.id);
    inf->sync_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (!inf->name)
        rc = kc_error_set(err, KC_ENOMEM, "informer: out of memory");
    else if (inf->sync_fd < 0)
        rc = kc_error_set(err, KC_EIO, "informer: eventfd failed");
    else
        rc = kc_store_new(NULL, &inf->store, err);
    if (rc == 0 && opts) /* the reflector's own copy of spec.shard (ranges may change later) */
        rc = kc__inf_shard_from_opts(opts, &inf->shard, err);
    if (rc == 0 && opts && opts->shard_field != KC_SHARD_FIELD_NONE && !inf->shard)
        inf->shard_none = true; /* sharded with no range yet: empty and synced, no request */
    if (rc < 0) {
        kc_informer_free(inf);
        return rc;
    }
    inf->phase = KC_INFORMER_PHASE_NEW;
    *ret = inf;
    return 0;
}

int kc_informer_start(kc_informer *inf, kc_error *err)
{
    if (!inf)
        return kc_error_set(err, KC_EINVAL, "informer is NULL");
    /* Listed before the thread exists, so the exit handler always sees it; not under st_mu (the
     * handler takes its lock first, then ours). */
    kc__inf_exit_register(inf);
    pthread_mutex_lock(&inf->st_mu);
    if (inf->started || inf->stopping) {
        bool started = inf->started && !inf->stopping;
        pthread_mutex_unlock(&inf->st_mu);
        if (!started)
            kc__inf_exit_unregister(inf);
        return kc_error_set(err, KC_EBUSY, "informer %s: already started or stopped", inf->name);
    }
    inf->started = true;
    inf->phase = KC_INFORMER_PHASE_SYNCING;
    inf->sync_start_ns = kc__now_ns();
    inf->disconnected_since_ns = inf->sync_start_ns;
    int rc = pthread_create(&inf->thread, NULL, kc__reflector_main, inf);
    if (rc != 0) {
        inf->started = false;
        inf->phase = KC_INFORMER_PHASE_NEW;
    }
    pthread_mutex_unlock(&inf->st_mu);
    if (rc != 0) {
        kc__inf_exit_unregister(inf);
        return kc_error_set(err, KC_ENOMEM, "informer %s: cannot start thread", inf->name);
    }
    return 0;
}

int kc__informer_watch_from(kc_informer *inf, const char *rv)
{
    if (!rv || !*rv || strlen(rv) >= sizeof(inf->start_rv))
        return KC_EINVAL;
    pthread_mutex_lock(&inf->st_mu);
    bool started = inf->started;
    if (!started)
        strcpy(inf->start_rv, rv);
    pthread_mutex_unlock(&inf->st_mu);
    return started ? KC_EBUSY : 0;
}

void kc_informer_stop(kc_informer *inf)
{
    if (!inf)
        return;
    pthread_mutex_lock(&inf->st_mu);
    bool was_stopping = inf->stopping;
    bool join = inf->started && !was_stopping;
    inf->stopping = true;
    inf->phase = KC_INFORMER_PHASE_STOPPED;
    if (inf->cancel)
        kc_cancel_fire(inf->cancel);
    pthread_cond_broadcast(&inf->st_cv);
    /* Another stop is joining: wait until it has (kc_informer_stop promises joined threads, which
     * the exit handler relies on). */
    while (was_stopping && !inf->stop_done)
        pthread_cond_wait(&inf->st_cv, &inf->st_mu);
    pthread_mutex_unlock(&inf->st_mu);
    if (was_stopping)
        return;
    if (join && !pthread_equal(inf->thread, pthread_self()))
        pthread_join(inf->thread, NULL);
    if (inf->store)
        kc_store_stop(inf->store);
    kc__inf_regs_stop_all(inf);
    pthread_mutex_lock(&inf->st_mu);
    inf->stop_done = true;
    pthread_cond_broadcast(&inf->st_cv);
    pthread_mutex_unlock(&inf->st_mu);
    kc__inf_exit_unregister(inf);
    if (inf->on_state)
        inf->on_state(inf->on_state_ud);
}

kc_store *kc_informer_store(kc_informer *inf)
{
    return inf ? inf->store : NULL;
}

const char *kc_informer_name(const kc_informer *inf)
{
    return inf ? inf->name : "";
}

/* ---- state used by the reflector ------------------------------------------------------------ */

bool kc__inf_stopping(kc_informer *inf)
{
    pthread_mutex_lock(&inf->st_mu);
    bool s = inf->stopping;
    pthread_mutex_unlock(&inf->st_mu);
    return s;
}

void kc__inf_set_connected(kc_informer *inf, bool connected)
{
    pthread_mutex_lock(&inf->st_mu);
    if (connected != inf->connected) {
        inf->connected = connected;
        if (!connected)
            inf->disconnected_since_ns = kc__now_ns();
    }
    if (connected)
        inf->consecutive_errors = 0;
    pthread_mutex_unlock(&inf->st_mu);
}

void kc__inf_set_phase(kc_informer *inf, kc_informer_phase phase)
{
    pthread_mutex_lock(&inf->st_mu);
    if (!inf->stopping)
        inf->phase = phase;
    pthread_mutex_unlock(&inf->st_mu);
}

void kc__inf_mark_synced(kc_informer *inf)
{
    pthread_mutex_lock(&inf->st_mu);
    bool first = !inf->synced;
    inf->synced = true;
    if (!inf->stopping)
        inf->phase = KC_INFORMER_PHASE_SYNCED;
    pthread_cond_broadcast(&inf->st_cv);
    pthread_mutex_unlock(&inf->st_mu);
    if (first) {
        uint64_t one = 1;
        ssize_t w = write(inf->sync_fd, &one, sizeof(one));
        (void)w; /* cannot fail for a fresh eventfd counter */
    }
    if (first && inf->on_state)
        inf->on_state(inf->on_state_ud);
}

bool kc__inf_sleep(kc_informer *inf, uint64_t ns)
{
    uint64_t deadline = kc__now_ns() + ns;
    pthread_mutex_lock(&inf->st_mu);
    while (!inf->stopping && !inf->shard_change &&
           kc__cond_wait_until(&inf->st_cv, &inf->st_mu, deadline) == 0)
        ;
    bool s = inf->stopping;
    pthread_mutex_unlock(&inf->st_mu);
    return s;
}

kc_cancel *kc__inf_new_cancel(kc_informer *inf)
{
    kc_cancel *c = NULL;
    if (kc_cancel_new(&c, NULL) != 0)
        return NULL;
    pthread_mutex_lock(&inf->st_mu);
    if (inf->stopping) {
        pthread_mutex_unlock(&inf->st_mu);
        kc_cancel_free(c);
        return NULL;
    }
    inf->cancel = c;
    if (inf->shard_change) /* the call would use the old ranges: end it at once (shard.c) */
        kc_cancel_fire(c);
    pthread_mutex_unlock(&inf->st_mu);
    return c;
}

void kc__inf_drop_cancel(kc_informer *inf, kc_cancel *c)
{
    pthread_mutex_lock(&inf->st_mu);
    if (inf->cancel == c)
        inf->cancel = NULL;
    pthread_mutex_unlock(&inf->st_mu);
    kc_cancel_free(c);
}
