// clang-format off
/*
 * informer/reflector.c — the reflector thread: full lists (streaming or paged), watches with
 * resume, relists, and backoff. docs/informer.md draws the state machine; in short:
 *
 *   LIST (need_list)
 *     │ streaming: WATCH sendInitialEvents=true, RVMatch=NotOlderThan, bookmarks on; items go
 *     │   into a batch until the k8s.io/initial-events-end bookmark, which swaps the batch in
 *     │   (store RV = bookmark RV); the same stream then goes on as the WATCH. Rejected (4xx),
 *     │   or no bookmark within initial_events_timeout_ms of silence (the watchdog of
 *     │   watchdog.c fires the cancel token) → paged LIST from now on.
 *     │ paged: LIST limit=page_size (all pages; rest's kc__client_list_full picks how) into a
 *     │   batch, swapped in at the list RV. Every item of a full list counts against its
 *     │   bounds (limits.c) and a refused one keeps the store's reason (verify.c).
 *     │ The list's RV: unset (a consistent read) for the first list and after a reset; after a
 *     │   410, the last RV with NotOlderThan, then unset if that is 410 or too large again. A
 *     │   list asked at the last RV that returns an RV older than the watermark is retried unset.
 *     ▼
 *   WATCH from the last RV (bookmarks on, timeoutSeconds random 300..600)
 *     clean close / network error / 429 / 5xx → WATCH again from the last RV
 *     410 (status or ERROR event)             → LIST at the last RV, then at ""
 *     504 ResourceVersionTooLarge, or an      → the server went back in time: LIST from scratch
 *       event or bookmark older than the resume RV
 *
 * Sharding (shard.c): the selector goes with every LIST page and WATCH and filters in the
 * decoders; each complete LIST records whether the server echoed it. A range change cancels the
 * call in flight; the loop takes it between calls and relists from scratch.
 *
 * Backoff (issue 29 points 1-3): what each event means and what to do after a call ended — relist
 * or not, how long to wait — are pure functions in backoff.c, with the policy in backoff.h: every
 * restart after a call that ended early (any end: a clean close after any number of events, an
 * error, 410, the server going back in time) waits one exponential step (backoff_initial_ms to
 * backoff_max_ms, jitter 1.0, reset after backoff_reset_ms without a step; Retry-After honoured up
 * to backoff_max_ms); a healthy watch (it lasted its timeoutSeconds or backoff_reset_ms) restarts
 * at once. Sleeps wait on the informer's condition variable, so stop interrupts them. Store writes
 * and handler pushes happen under the informer's event lock (see informer/internal.h).
 */
// clang-format on
#include "informer/backoff.h"
#include "informer/internal.h"

#include "rest/internal.h"
#include "kcache/rv.h"

#include <stdlib.h>
#include <string.h>

typedef struct refl {
    kc_informer *inf;
    char rv[KC_STORE_RV_MAX]; /* last synced RV (resume point) */
    bool need_list;
    bool list_at_rv;       /* next list at rv with NotOlderThan (after 410) */
    kc__backoff bo;        /* backoff.c: every restart after an early end steps it */
    kc__inf_streak streak; /* failures since the last success, as logged (status.c) */
    kc__rng rng;
    uint64_t timeout_ns; /* the current watch's timeoutSeconds */
    /* streaming attempt */
    kc_store_batch *batch;
    kc__list_limits lim;
    bool initial;       /* before the initial-events-end bookmark */
    bool watched_event; /* the current watch delivered something */
    bool unflushed;     /* changes applied since the last flush_cb */
    int stream_error;   /* ERROR event code */
} refl;

static void set_rv(refl *r, const char *rv)
{
    if (rv && *rv && strlen(rv) < sizeof(r->rv))
        strcpy(r->rv, rv);
}

/* A call that started at t0 (a list when `list`, asked at the last RV when `at_rv`) ended with rc:
 * decide (backoff.c) whether to relist and how long to wait, record a failure, and wait. A 410 or
 * the server going back in time is a failure for a list asked at "", routine for a watch. */
static void conclude(refl *r, const char *what, bool list, bool at_rv, uint64_t t0, int rc,
                     const kc_error *err)
{
    kc__refl_result res = {.list = list,
                           .list_at_rv = at_rv,
                           .end = kc__refl_end_of(rc),
                           .started_ns = t0,
                           .ended_ns = kc__now_ns(),
                           .timeout_ns = list ? 0 : r->timeout_ns,
                           .retry_after_s = err ? err->retry_after_s : -1};
    kc__refl_next n = kc__refl_decide(&r->bo, &res);
    r->need_list = n.need_list;
    r->list_at_rv = n.list_at_rv;
    if (res.end == KC__END_ERROR ||
        (list && !at_rv && res.end != KC__END_OK && res.end != KC__END_CANCELED))
        kc__inf_record_failure(r->inf, &r->streak, what, rc, err, n.delay_ns);
    else if (res.end == KC__END_GONE || res.end == KC__END_RV_BACK)
        KC__LOG_DEBUG("informer", "informer %s: %s ended with %s; relisting in %llu ms",
                      r->inf->name, what, kc_strerror(rc),
                      (unsigned long long)(n.delay_ns / KC__NS_PER_MS));
    else if (n.delay_ns)
        KC__LOG_DEBUG("informer", "informer %s: %s closed after %llu ms; next in %llu ms",
                      r->inf->name, what, (unsigned long long)((res.ended_ns - t0) / KC__NS_PER_MS),
                      (unsigned long long)(n.delay_ns / KC__NS_PER_MS));
    if (n.delay_ns)
        kc__inf_sleep(r->inf, n.delay_ns);
}

/* ---- applying events ------------------------------------------------------------------------ */

static int push_change_cb(void *ud, const kc_store_change *ch)
{
    kc__inf_push_change(ud, ch);
    return 0;
}

/* Swap b in (consumed) at list_rv, notify handlers, and mark the informer synced. */
static int install(refl *r, kc_store_batch *b, const char *list_rv, uint64_t t0, kc_error *err)
{
    kc_informer *inf = r->inf;
    pthread_mutex_lock(&inf->ev_mu);
    bool first = !inf->ev_synced;
    /* A relist is counted before the swap makes it visible: whoever sees the new contents (through
     * the store's mutex) then also sees the count. Counted after, a reader woken by the swap (a
     * store waiter) could read the old count — test_informer_faults failed that way on a loaded
     * machine. Undone if the swap fails. */
    if (!first)
        atomic_fetch_add(&inf->relists, 1);
    int rc = kc_store_replace(inf->store, b, list_rv, push_change_cb, inf, err);
    kc__inf_flush(inf);
    if (rc == 0 && first) {
        inf->ev_synced = true;
        kc__inf_push_synced(inf);
    } else if (rc != 0 && !first) {
        atomic_fetch_sub(&inf->relists, 1);
    }
    pthread_mutex_unlock(&inf->ev_mu);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&inf->st_mu);
    inf->last_sync_s = (double)(kc__now_ns() - t0) / 1e9;
    pthread_mutex_unlock(&inf->st_mu);
    kc__inf_set_connected(inf, true); /* first: whoever sees "synced" sees the streak ended */
    kc__inf_streak_end(r->inf, &r->streak);
    kc__inf_mark_synced(inf);
    r->need_list = false;
    r->list_at_rv = false;
    return 0;
}

/* The store sees each event at once (waiters wake per event); handlers get the changes of a chunk
 * of the stream together (flush_cb), one queue lock and at most one wake-up per registration. */
static int apply_event(refl *r, kc_watch_type type, kc_obj *obj)
{
    kc_informer *inf = r->inf;
    kc_store_change ch;
    kc_error e = KC_ERROR_INIT;
    pthread_mutex_lock(&inf->ev_mu);
    int rc = kc_store_apply(inf->store, type, obj, &ch, &e);
    if (rc == 0)
        kc__inf_push_change_owned(inf, &ch);
    pthread_mutex_unlock(&inf->ev_mu);
    if (rc)
        kc__inf_keep_reason(inf, rc, &e); /* the store's reason (verify.c) */
    if (rc == 0) {
        r->unflushed = true;
        atomic_fetch_add_explicit(&inf->events_applied, 1, memory_order_relaxed);
        set_rv(r, kc_obj_resource_version(obj));
    }
    return rc;
}

/* After each chunk of the watch stream (and at its end): push the held-back changes. */
static void flush_cb(void *ud)
{
    refl *r = ud;
    if (!r->unflushed)
        return;
    r->unflushed = false;
    pthread_mutex_lock(&r->inf->ev_mu);
    kc__inf_flush(r->inf);
    pthread_mutex_unlock(&r->inf->ev_mu);
}

/* The initial-events-end bookmark: swap the streaming list's batch in at its RV. */
static int initial_end(refl *r, const char *rv)
{
    kc_informer *inf = r->inf;
    kc_store_batch *b = r->batch;
    r->batch = NULL;
    r->initial = false;
    pthread_mutex_lock(&inf->st_mu);
    inf->initial_end_seen = true;
    pthread_cond_broadcast(&inf->st_cv);
    pthread_mutex_unlock(&inf->st_mu);
    set_rv(r, rv);
    return install(r, b, rv, inf->sync_start_ns, NULL);
}

/* Each event, as backoff.c classifies it against the last RV (an event or bookmark older than it:
 * the server lost its history, e.g. restarted with an RV reset). */
static int watch_cb(void *ud, const kc_watch_event *ev)
{
    refl *r = ud;
    kc_informer *inf = r->inf;
    atomic_store(&inf->last_event_ns, kc__now_ns());
    if (!r->watched_event) {
        r->watched_event = true;
        if (!r->initial) {
            kc__inf_set_connected(inf, true);
            kc__inf_streak_end(r->inf, &r->streak);
        }
    }
    if (ev->type == KC_WATCH_BOOKMARK)
        atomic_fetch_add(&inf->bookmarks, 1);
    int code = ev->type == KC_WATCH_ERROR ? kc__refl_error_code(ev->error) : 0, stop = KC_EPARSE;
    const char *rv = ev->obj ? kc_obj_resource_version(ev->obj) : "";
    switch (kc__refl_classify(r->initial, (int)ev->type, r->rv, rv, ev->initial_events_end, code)) {
    case KC__EV_SKIP:
        return 0;
    case KC__EV_BOOKMARK:
        kc_store_bookmark(inf->store, rv);
        set_rv(r, rv);
        return 0;
    case KC__EV_INITIAL_END:
        return initial_end(r, rv);
    case KC__EV_APPLY: {
        int rc = kc__inf_check_event(inf, ev->obj); /* issue 29 point 11 (verify.c) */
        if (rc)
            return rc;
        kc_obj *o = kc__inf_transform(inf, ev->obj);
        if (r->initial) /* counted against the list's bounds (limits.c) */
            rc = kc__list_limits_add(&r->lim, o);
        else
            rc = apply_event(r, ev->type, o);
        kc_obj_unref(o);
        return rc;
    }
    case KC__EV_STOP_GONE:
        stop = KC_EGONE;
        break;
    case KC__EV_STOP_RV_BACK:
        stop = KC_ERV_TOO_LARGE;
        break;
    case KC__EV_STOP_ERROR: /* a DELETED in the initial events, an unknown type */
        break;
    }
    if (ev->type == KC_WATCH_ERROR)
        return r->stream_error = code;
    return stop;
}

/* ---- one cycle ------------------------------------------------------------------------------- */

static void list_opts_fill(kc_informer *inf, kc_list_opts *lo)
{
    memset(lo, 0, sizeof(*lo));
    lo->label_selector = inf->o.label_selector;
    lo->field_selector = inf->o.field_selector;
    lo->limit = inf->o.page_size;
    lo->metadata_only = inf->o.metadata_only;
    lo->decode = inf->o.decode;
    lo->decode_size = inf->o.decode_size;
    lo->shard_selector = inf->shard ? kc_shard_selector_string(inf->shard) : NULL;
}

static void watch_opts_fill(refl *r, kc_watch_opts *wo)
{
    kc_informer *inf = r->inf;
    memset(wo, 0, sizeof(*wo));
    wo->label_selector = inf->o.label_selector;
    wo->field_selector = inf->o.field_selector;
    wo->allow_bookmarks = true;
    wo->metadata_only = inf->o.metadata_only;
    wo->decode = inf->o.decode;
    wo->decode_size = inf->o.decode_size;
    wo->shard_selector = inf->shard ? kc_shard_selector_string(inf->shard) : NULL;
    wo->timeout_s = inf->o.watch_timeout_s > 0 ? inf->o.watch_timeout_s
                                               : (int64_t)kc__rng_range(&r->rng, 300, 600);
    r->timeout_ns = (uint64_t)wo->timeout_s * KC__NS_PER_SEC;
}

/* Each LIST item: counted against the list's bounds and added to the batch (limits.c); ud is the
 * list's kc__list_limits. */
static int batch_add_cb(void *ud, kc_obj *item)
{
    kc__list_limits *lim = ud;
    kc_obj *o = kc__inf_transform(lim->inf, item);
    int rc = kc__list_limits_add(lim, o);
    kc_obj_unref(o);
    kc_obj_unref(item);
    return rc;
}

/* `streaming` is read by kc_informer_get_status under st_mu: written under it too. */
static void set_streaming(kc_informer *inf, bool on)
{
    pthread_mutex_lock(&inf->st_mu);
    inf->streaming = on;
    pthread_mutex_unlock(&inf->st_mu);
}

static int paged_list(refl *r, kc_error *err)
{
    kc_informer *inf = r->inf;
    kc_list_opts lo;
    list_opts_fill(inf, &lo);
    if (r->list_at_rv && r->rv[0]) {
        lo.resource_version = r->rv;
        lo.resource_version_match = "NotOlderThan";
    }
    kc_store_batch *b = NULL;
    int rc = kc_store_batch_new(inf->store, &b, err);
    if (rc < 0)
        return rc;
    kc_list_meta meta = {0};
    meta.remaining_item_count = -1;
    uint64_t t0 = kc__now_ns();
    kc_cancel *c = kc__inf_new_cancel(inf); /* kc_informer_stop fires it: the LIST stops at once */
    if (!c) {
        kc_store_batch_free(b);
        return KC_ESTOPPED;
    }
    lo.cancel = c;
    kc__list_echo echo = {0};
    kc__list_limits lim;
    kc__list_limits_init(&lim, inf, b);
    kc__list_limits_opts(inf, &lo);
    rc = kc__client_list_full(inf->client, &inf->gvr, inf->o.ns, &lo, inf->shard, &meta, &echo,
                              batch_add_cb, &lim, err);
    kc__inf_item_error(inf, rc, err); /* the store's reason for a refused item (issue 29 p. 10) */
    rc = kc__list_limits_result(&lim, rc, err);
    kc__inf_drop_cancel(inf, c);
    if (rc == 0)
        kc__inf_shard_note_list(inf, &echo);
    if (rc == 0) {
        const char *lrv = meta.resource_version;
        char wm[KC_STORE_RV_MAX];
        if (kc_store_watermark(inf->store, wm, sizeof(wm)) > 0 && lrv &&
            kc_rv_compare(lrv, wm) == KC_RV_LESS) {
            if (r->list_at_rv) {
                /* Older than what we have seen although asked NotOlderThan: retry consistently
                 * (at "", at once: backoff.c). */
                kc_store_batch_free(b);
                kc_list_meta_clear(&meta);
                return kc_error_set(err, KC_ERV_TOO_LARGE, "list RV older than the watermark");
            }
            KC__LOG_WARN("informer",
                         "informer %s: server resourceVersion went back (%s < %s); relisted",
                         inf->name, lrv, wm);
        }
        kc__inf_expect_type(inf, meta.kind, meta.api_version); /* watch events' (verify.c) */
        set_streaming(inf, false);
        r->rv[0] = '\0';
        set_rv(r, lrv);
        rc = install(r, b, lrv, t0, err);
        b = NULL;
    }
    kc_store_batch_free(b);
    kc_list_meta_clear(&meta);
    return rc;
}

/* One watch call. streaming: the call is also the (re)list. Returns the watch result. */
static int do_watch(refl *r, bool streaming, kc_error *err)
{
    kc_informer *inf = r->inf;
    kc_watch_opts wo;
    watch_opts_fill(r, &wo);
    r->watched_event = false;
    r->stream_error = 0;
    r->initial = streaming;
    kc__watchdog wd = {0};
    if (streaming) {
        int rc = kc_store_batch_new(inf->store, &r->batch, err);
        if (rc < 0)
            return rc;
        kc__list_limits_init(&r->lim, inf, r->batch);
        wo.send_initial_events = true;
        wo.resource_version_match = "NotOlderThan";
        wo.resource_version = (r->list_at_rv && r->rv[0]) ? r->rv : "";
        pthread_mutex_lock(&inf->st_mu);
        inf->initial_end_seen = false;
        inf->initial_timed_out = false;
        pthread_mutex_unlock(&inf->st_mu);
        atomic_store(&inf->last_event_ns, kc__now_ns());
    } else {
        wo.resource_version = r->rv;
    }
    kc_cancel *c = kc__inf_new_cancel(inf);
    if (!c) {
        kc_store_batch_free(r->batch);
        r->batch = NULL;
        return KC_ESTOPPED;
    }
    if (streaming)
        kc__watchdog_start(&wd, inf);
    int rc = kc__client_watch_ex(inf->client, &inf->gvr, inf->o.ns, &wo, inf->shard, watch_cb,
                                 flush_cb, r, c, err);
    kc__inf_item_error(inf, rc, err); /* why an event was refused (verify.c) */
    if (streaming)
        rc = kc__list_limits_result(&r->lim, rc, err);
    flush_cb(r);
    kc__watchdog_stop(&wd);
    kc__inf_drop_cancel(inf, c);
    if (r->stream_error && (rc == r->stream_error || rc == 0))
        rc = r->stream_error;
    if (r->batch) { /* the streaming list did not complete */
        kc_store_batch_free(r->batch);
        r->batch = NULL;
        if (rc == KC_ECANCELED && kc__inf_shard_pending(inf))
            return rc; /* cancelled for a range change: not a streaming-list failure */
        if (rc == KC_ECANCELED && inf->initial_timed_out && !kc__inf_stopping(inf)) /* joined */
            rc = kc_error_set(err, KC_ETIMEOUT,
                              "streaming list timed out: no initial-events-end bookmark "
                              "(initial_events_timeout_ms %lld ms without an event, or 10 times "
                              "that in all)",
                              (long long)inf->o.initial_events_timeout_ms);
        else if (rc == 0 || (rc == KC_ECANCELED && !kc__inf_stopping(inf)))
            rc = kc_error_set(err, KC_EUNSUPPORTED,
                              "streaming list: the stream ended before its initial-events-end "
                              "bookmark");
    }
    return rc;
}

static bool is_rejection(int rc)
{
    return rc == KC_EBADREQUEST || rc == KC_EUNPROCESSABLE || rc == KC_EUNSUPPORTED ||
           rc == KC_EFORBIDDEN || rc == KC_EMETHOD || rc == KC_ENOTFOUND || rc == KC_EMEDIATYPE;
}

static void list_cycle(refl *r)
{
    kc_informer *inf = r->inf;
    kc_error err = KC_ERROR_INIT;
    bool streaming = inf->o.list_mode != KC_INFORMER_LIST_PAGED && !inf->streaming_unsupported;
    bool at_rv = r->list_at_rv && r->rv[0];
    uint64_t t0 = kc__now_ns();
    pthread_mutex_lock(&inf->st_mu);
    inf->sync_start_ns = t0;
    pthread_mutex_unlock(&inf->st_mu);
    if (kc_informer_has_synced(inf))
        kc__inf_set_phase(inf, KC_INFORMER_PHASE_RESYNCING);
    int rc;
    if (streaming) {
        kc__inf_shard_probe(inf); /* a streaming list has no shardInfo echo (S13.3) */
        set_streaming(inf, true);
        rc = do_watch(r, true, &err);
        if (!r->need_list) { /* the initial events ended: the stream was the watch */
            conclude(r, "watch", false, false, t0, rc, &err);
            kc_error_clear(&err);
            return;
        }
        if (rc == KC_ENOTFOUND && inf->o.list_mode == KC_INFORMER_LIST_AUTO) {
            /* Most likely the resource is not served: let the paged LIST say so (and report it),
             * without giving up streaming lists for when it is. */
            kc_error_clear(&err);
            rc = paged_list(r, &err);
        } else if ((is_rejection(rc) || (rc == KC_ETIMEOUT && inf->initial_timed_out)) &&
                   inf->o.list_mode == KC_INFORMER_LIST_AUTO) {
            KC__LOG_INFO("informer", "informer %s: streaming list not available (%s); using LIST",
                         inf->name, kc_strerror(rc));
            inf->streaming_unsupported = true;
            kc_error_clear(&err);
            rc = paged_list(r, &err);
        }
    } else {
        rc = paged_list(r, &err);
    }
    if (rc < 0 && rc != KC_EGONE && rc != KC_ERV_TOO_LARGE) {
        /* A LIST answered 410 or 504 ResourceVersionTooLarge (the server went back in time below
         * the RV we listed at) arrives as a plain HTTP error: classify it like a watch ERROR
         * event, or a relist at the last RV would retry that RV forever. */
        int c = kc__refl_error_code(&err);
        if (c == KC_EGONE || c == KC_ERV_TOO_LARGE)
            rc = c;
    }
    /* done: watch at once; failed at the last RV with 410 or too large: retry at "" at once;
     * any other failure backs off (backoff.c) */
    conclude(r, "list", true, at_rv, t0, rc, &err);
    kc_error_clear(&err);
}

static void watch_cycle(refl *r)
{
    kc_informer *inf = r->inf;
    kc_error err = KC_ERROR_INIT;
    uint64_t t0 = kc__now_ns();
    int rc = do_watch(r, false, &err);
    atomic_fetch_add(&inf->watch_restarts, 1);
    conclude(r, "watch", false, false, t0, rc, &err);
    kc_error_clear(&err);
}

/* No range held (shard.c): the store becomes empty, as a LIST that found nothing would make it;
 * the watermark stays (no list RV to follow). */
static int install_empty(void *ud)
{
    refl *r = ud;
    kc_informer *inf = r->inf;
    kc_error err = KC_ERROR_INIT;
    kc_store_batch *b = NULL;
    int rc = kc_store_batch_new(inf->store, &b, &err);
    if (rc == 0)
        rc = install(r, b, NULL, kc__now_ns(), &err);
    if (rc == 0) {
        set_streaming(inf, false);
        if (kc_informer_has_synced(inf))
            kc__inf_set_phase(inf, KC_INFORMER_PHASE_SYNCED);
    }
    kc_error_clear(&err);
    return rc;
}

void *kc__reflector_main(void *arg)
{
    refl r;
    memset(&r, 0, sizeof(r));
    r.inf = arg;
    r.need_list = true;
    if (r.inf->start_rv[0]) { /* kc__informer_watch_from (benchmarks): no initial list */
        set_rv(&r, r.inf->start_rv);
        r.need_list = false;
    }
    kc__rng_seed_auto(&r.rng);
    kc_informer_opts *o = &r.inf->o;
    kc__backoff_init(&r.bo, o->backoff_initial_ms, o->backoff_max_ms, o->backoff_reset_ms,
                     kc__rng_next(&r.rng));
    while (!kc__inf_stopping(r.inf)) {
        if (kc__inf_shard_take(r.inf)) { /* new ranges: relist from scratch with them */
            r.need_list = true;
            r.list_at_rv = false;
        }
        if (r.inf->shard_none) { /* no range held: nothing to list or watch */
            kc__inf_shard_hold_none(r.inf, install_empty, &r);
            r.need_list = true;
            r.list_at_rv = false;
            continue;
        }
        if (r.need_list) {
            list_cycle(&r);
            if (!r.need_list && kc_informer_has_synced(r.inf))
                kc__inf_set_phase(r.inf, KC_INFORMER_PHASE_SYNCED);
        } else {
            watch_cycle(&r);
        }
    }
    kc__inf_set_connected(r.inf, false);
    return NULL;
}
