/*
 * informer/informer.c — kc_informer lifecycle, readiness and status.
 *
 * Readiness is a latch plus a freshness test: `synced` is set once, by the reflector, after the
 * initial list was swapped into the store and the SYNCED markers were queued to the handlers; it
 * wakes kc_informer_wait_synced (condition variable on CLOCK_MONOTONIC) and makes the eventfd
 * readable (one write, never read back). `ready` additionally requires that the watch has not been
 * down longer than max_staleness_ms (disconnected_since is set on the first failure after a
 * success, cleared by the next successful list or watch event).
 *
 * Stop: sets `stopping` (under st_mu), fires the cancel token of the call in flight, wakes every
 * sleeper; joins the reflector; stops the store (its waiters get KC_ESTOPPED) and every handler
 * registration.
 */
#include "informer/informer_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

static char *dup_or_null(const char *s)
{
    return (s && *s) ? kc__strdup(s) : NULL;
}

void kc_informer_free(kc_informer *inf)
{
    if (!inf)
        return;
    kc_informer_stop(inf);
    kc_store_free(inf->store);
    if (inf->sync_fd >= 0)
        close(inf->sync_fd);
    free(inf->group);
    free(inf->version);
    free(inf->resource);
    free((char *)inf->o.ns);
    free((char *)inf->o.label_selector);
    free((char *)inf->o.field_selector);
    free(inf->name);
    pthread_cond_destroy(&inf->st_cv);
    pthread_mutex_destroy(&inf->st_mu);
    pthread_mutex_destroy(&inf->ev_mu);
    free(inf);
}

int kc_informer_new(kc_client *client, const kc_gvr *gvr, const kc_informer_opts *opts,
                    kc_informer **ret, kc_error *err)
{
    if (!client || !gvr || !gvr->version || !*gvr->version || !gvr->resource || !*gvr->resource)
        return kc_error_set(err, KC_EINVAL,
                            "informer: client and gvr (version, resource) required");
    kc_informer *inf = calloc(1, sizeof(*inf));
    if (!inf)
        return kc_error_set(err, KC_ENOMEM, "informer: out of memory");
    inf->sync_fd = -1;
    pthread_mutex_init(&inf->ev_mu, NULL);
    pthread_mutex_init(&inf->st_mu, NULL);
    if (kc__cond_init_monotonic(&inf->st_cv) < 0) {
        pthread_mutex_destroy(&inf->st_mu);
        pthread_mutex_destroy(&inf->ev_mu);
        free(inf);
        return kc_error_set(err, KC_ENOMEM, "informer: out of memory");
    }
    inf->client = client;
    if (opts)
        inf->o = *opts;
    inf->o.ns = dup_or_null(opts ? opts->ns : NULL);
    inf->o.label_selector = dup_or_null(opts ? opts->label_selector : NULL);
    inf->o.field_selector = dup_or_null(opts ? opts->field_selector : NULL);
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
    if (inf->o.metadata_only)
        inf->o.decode.flags |= KC_DECODE_METADATA_ONLY;
    inf->group = kc__strdup(gvr->group ? gvr->group : "");
    inf->version = kc__strdup(gvr->version);
    inf->resource = kc__strdup(gvr->resource);
    if (opts && opts->name && *opts->name) {
        inf->name = kc__strdup(opts->name);
    } else {
        kc__buf b = KC__BUF_INIT(1024);
        if (inf->o.ns)
            kc__buf_printf(&b, "%s/", inf->o.ns);
        kc__buf_printf(&b, "%s%s%s", gvr->resource, (gvr->group && *gvr->group) ? "." : "",
                       gvr->group ? gvr->group : "");
        if (inf->o.label_selector)
            kc__buf_printf(&b, "{%s}", inf->o.label_selector);
        inf->name = kc__buf_steal(&b, NULL);
    }
    inf->gvr.group = inf->group;
    inf->gvr.version = inf->version;
    inf->gvr.resource = inf->resource;
    inf->sync_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int rc = 0;
    if (!inf->group || !inf->version || !inf->resource || !inf->name ||
        (opts && opts->ns && *opts->ns && !inf->o.ns) ||
        (opts && opts->label_selector && *opts->label_selector && !inf->o.label_selector) ||
        (opts && opts->field_selector && *opts->field_selector && !inf->o.field_selector))
        rc = kc_error_set(err, KC_ENOMEM, "informer: out of memory");
    else if (inf->sync_fd < 0)
        rc = kc_error_set(err, KC_EIO, "informer: eventfd failed");
    else
        rc = kc_store_new(NULL, &inf->store, err);
    if (rc < 0) {
        kc_informer_free(inf);
        return rc;
    }
    inf->phase = KC_INFORMER_NEW;
    *ret = inf;
    return 0;
}

int kc_informer_start(kc_informer *inf, kc_error *err)
{
    pthread_mutex_lock(&inf->st_mu);
    if (inf->started || inf->stopping) {
        pthread_mutex_unlock(&inf->st_mu);
        return kc_error_set(err, KC_EBUSY, "informer %s: already started or stopped", inf->name);
    }
    inf->started = true;
    inf->phase = KC_INFORMER_SYNCING;
    inf->sync_start_ns = kc__now_ns();
    inf->disconnected_since_ns = inf->sync_start_ns;
    int rc = pthread_create(&inf->thread, NULL, kc__reflector_main, inf);
    if (rc != 0) {
        inf->started = false;
        inf->phase = KC_INFORMER_NEW;
    }
    pthread_mutex_unlock(&inf->st_mu);
    if (rc != 0)
        return kc_error_set(err, KC_ENOMEM, "informer %s: cannot start thread", inf->name);
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
    pthread_mutex_lock(&inf->st_mu);
    bool was_stopping = inf->stopping;
    bool join = inf->started && !was_stopping;
    inf->stopping = true;
    inf->phase = KC_INFORMER_STOPPED;
    if (inf->cancel)
        kc_cancel_fire(inf->cancel);
    pthread_cond_broadcast(&inf->st_cv);
    pthread_mutex_unlock(&inf->st_mu);
    if (was_stopping)
        return;
    if (join)
        pthread_join(inf->thread, NULL);
    if (inf->store)
        kc_store_stop(inf->store);
    kc__inf_regs_stop_all(inf);
}

kc_store *kc_informer_store(kc_informer *inf)
{
    return inf->store;
}

const char *kc_informer_name(const kc_informer *inf)
{
    return inf->name;
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
        inf->phase = KC_INFORMER_SYNCED;
    pthread_cond_broadcast(&inf->st_cv);
    pthread_mutex_unlock(&inf->st_mu);
    if (first) {
        uint64_t one = 1;
        ssize_t w = write(inf->sync_fd, &one, sizeof(one));
        (void)w; /* cannot fail for a fresh eventfd counter */
        if (inf->on_synced)
            inf->on_synced(inf->on_synced_ud);
    }
}

bool kc__inf_sleep(kc_informer *inf, uint64_t ns)
{
    uint64_t deadline = kc__now_ns() + ns;
    pthread_mutex_lock(&inf->st_mu);
    while (!inf->stopping && kc__cond_wait_until(&inf->st_cv, &inf->st_mu, deadline) == 0)
        ;
    bool s = inf->stopping;
    pthread_mutex_unlock(&inf->st_mu);
    return s;
}

kc_cancel *kc__inf_new_cancel(kc_informer *inf)
{
    kc_cancel *c = kc_cancel_new();
    if (!c)
        return NULL;
    pthread_mutex_lock(&inf->st_mu);
    if (inf->stopping) {
        pthread_mutex_unlock(&inf->st_mu);
        kc_cancel_free(c);
        return NULL;
    }
    inf->cancel = c;
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

/* ---- readiness ------------------------------------------------------------------------------ */

bool kc_informer_has_synced(kc_informer *inf)
{
    pthread_mutex_lock(&inf->st_mu);
    bool s = inf->synced;
    pthread_mutex_unlock(&inf->st_mu);
    return s;
}

static bool ready_locked(kc_informer *inf, uint64_t now)
{
    if (!inf->synced || inf->stopping)
        return false;
    if (inf->o.max_staleness_ms <= 0 || inf->connected)
        return true;
    return now - inf->disconnected_since_ns <= (uint64_t)inf->o.max_staleness_ms * KC__NS_PER_MS;
}

bool kc_informer_ready(kc_informer *inf)
{
    pthread_mutex_lock(&inf->st_mu);
    bool r = ready_locked(inf, kc__now_ns());
    pthread_mutex_unlock(&inf->st_mu);
    return r;
}

int kc_informer_wait_synced(kc_informer *inf, int64_t timeout_ms)
{
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    int rc = 0;
    pthread_mutex_lock(&inf->st_mu);
    while (!inf->synced) {
        if (inf->stopping) {
            rc = KC_ESTOPPED;
            break;
        }
        if (kc__cond_wait_until(&inf->st_cv, &inf->st_mu, deadline) == KC_ETIMEOUT) {
            rc = inf->synced ? 0 : KC_ETIMEOUT;
            break;
        }
    }
    if (rc == 0 && inf->stopping && !inf->synced)
        rc = KC_ESTOPPED;
    pthread_mutex_unlock(&inf->st_mu);
    return rc;
}

int kc_informer_sync_fd(kc_informer *inf)
{
    return inf->sync_fd;
}

const char *kc_informer_phase_name(kc_informer_phase phase)
{
    switch (phase) {
    case KC_INFORMER_NEW:
        return "new";
    case KC_INFORMER_SYNCING:
        return "syncing";
    case KC_INFORMER_SYNCED:
        return "synced";
    case KC_INFORMER_RESYNCING:
        return "resyncing";
    case KC_INFORMER_STOPPED:
        return "stopped";
    }
    return "unknown";
}

void kc_informer_get_status(kc_informer *inf, kc_informer_status *ret)
{
    kc_informer_status st;
    memset(&st, 0, sizeof(st));
    uint64_t now = kc__now_ns();
    pthread_mutex_lock(&inf->st_mu);
    st.phase = inf->phase;
    st.synced = inf->synced;
    st.ready = ready_locked(inf, now);
    st.connected = inf->connected;
    st.disconnected_ms = (inf->connected || !inf->started)
                             ? 0
                             : (int64_t)((now - inf->disconnected_since_ns) / KC__NS_PER_MS);
    st.last_sync_duration_s = inf->last_sync_s;
    st.streaming = inf->streaming;
    pthread_mutex_unlock(&inf->st_mu);
    st.objects = kc_store_len(inf->store);
    if (kc_store_watermark(inf->store, st.watermark, sizeof(st.watermark)) < 0)
        st.watermark[0] = '\0';
    st.relists = atomic_load(&inf->relists);
    st.watch_restarts = atomic_load(&inf->watch_restarts);
    st.events_applied = atomic_load(&inf->events_applied);
    st.bookmarks = atomic_load(&inf->bookmarks);
    st.errors = atomic_load(&inf->errors);
    st.lagging_handlers = kc__inf_lagging_count(inf);
    *ret = st;
}
