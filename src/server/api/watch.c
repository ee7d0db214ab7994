/*
 * watch.c — WATCH streams (spec §5; #71–#93).
 *
 * Start (under srv->mu, so no event falls between the initial state and the subscription):
 *   RV unset / "0"      → synthetic ADDED for every matching object (key order), then live;
 *   RV = N              → the history events after N for this resource (filtered), then live;
 *                         N older than the history floor → one ERROR 410 Expired, then close;
 *                         N beyond the current RV → one ERROR 504 ResourceVersionTooLarge;
 *   sendInitialEvents   → ADDED for the current state, then one BOOKMARK annotated
 *                         k8s.io/initial-events-end (when allowWatchBookmarks), then live.
 * Live events come from the hub (hub.h) through a per-stream filter that applies the namespace
 * and the label/field selectors on old and new state (relabel out → DELETED with the old object
 * at the change's RV, in → ADDED; #80), and the shard selector (shard.c; KEP-5866 S10): initial
 * and replayed events too; bookmarks are the stream's progress, so a quiet shard gets them.
 * Streaming: a libmicrohttpd content callback with unknown size (chunked), run by MHD's small pool
 * of epoll threads, so it never blocks: each call drains every due event of the watcher's queue
 * (kc__watcher_take) into the buffer MHD offers — one chunk, one send for a whole batch. With
 * nothing to send it suspends the connection (MHD_suspend_connection) and then arms the watcher
 * (kc__watcher_arm; if an event slipped in meanwhile it resumes itself); the hub resumes it
 * (MHD_resume_connection, the wake callback) once per batch: on the first event queued, on
 * close/overflow, when the stall fault is lifted, or at the stream's next timer — the deadline
 * (timeoutSeconds, max watch duration), the bookmark timer, or every 250 ms to check server stop,
 * resource removal (CRD deleted) and whether the client hung up (POLLRDHUP on the socket; MHD does
 * not watch suspended sockets). Each event is one compact JSON line.
 */
#include "server/api/api_internal.h"

#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How often a parked stream looks at the client socket (hang-up) and at server stop. */
#define WS_CHECK_NS (250 * KC__NS_PER_MS)

typedef struct ev_item {
    kc_watch_type type;
    kc_obj *obj;
} ev_item;

typedef struct wstream {
    kc_server *srv;
    kc__rsrc *r;
    enum kc__fmt fmt;
    enum kc__table_obj tobj;
    struct MHD_Connection *conn;
    kc__watcher *w;
    kc_label_selector *ls;
    kc_field_selector *fs;
    kc_shard_selector *shard; /* shardSelector (shard.c), NULL = not sharded */
    char ns[256];
    bool has_ns;
    ev_item *init; /* initial events (synthetic ADDED or replay) */
    size_t n_init, i_init;
    bool end_bookmark;
    char *error_line; /* one ERROR event then close */
    kc__buf out;
    size_t out_off;
    uint64_t last_rv, sent, next_bm_ns, deadline_ns, bm_interval_ns, check_ns;
    bool bookmarks, first, done, replaying;
    char av[256];
    kc__conv *cv;  /* the CRD's webhook conversion until the converter thread takes it */
    kc__wconv *wc; /* converter thread (watch_convert.c), NULL = events sent as stored */
} wstream;

static char *error_event(int code, const char *reason, const char *msg, bool too_large);

/* slot: 0 for ev->obj, 1 for ev->old (the memo's side); memo NULL: no sharing. */
static bool match_memo(wstream *ws, const kc_obj *o, kc__ev_memo *memo, int slot)
{
    if (!o)
        return false;
    if (ws->has_ns && strcmp(kc_obj_namespace(o), ws->ns) != 0)
        return false;
    if (!kc_label_selector_match(ws->ls, o))
        return false;
    return kc__watch_fields_match(ws->fs, o, memo, slot);
}

static bool match(wstream *ws, const kc_obj *o)
{
    return match_memo(ws, o, NULL, 0);
}

static kc_watch_type filt(void *ud, const kc__hub_event *ev, kc_obj **ret)
{
    wstream *ws = ud;
    /* sharded: one hash per event decides, old and new state share uid and namespace (S10) */
    if (ws->shard && !kc__shard_event_match(ws->srv, ws->shard, ev))
        return 0;
    switch (ev->type) {
    case KC_WATCH_ADDED:
        *ret = ev->obj;
        return match_memo(ws, ev->obj, ev->memo, 0) ? KC_WATCH_ADDED : 0;
    case KC_WATCH_DELETED:
        *ret = ev->obj;
        return match_memo(ws, ev->obj, ev->memo, 0) ? KC_WATCH_DELETED : 0;
    default: {
        bool nm = match_memo(ws, ev->obj, ev->memo, 0), om = match_memo(ws, ev->old, ev->memo, 1);
        if (nm) {
            *ret = ev->obj;
            return om ? KC_WATCH_MODIFIED : KC_WATCH_ADDED;
        }
        *ret = ev->old;
        return om ? KC_WATCH_DELETED : 0;
    }
    }
}

static void ws_free(void *cls)
{
    wstream *ws = cls;
    kc__wconv_stop(ws->wc, ws->w); /* the watcher goes with the converter thread */
    kc__conv_end(ws->cv);
    for (size_t i = 0; i < ws->n_init; i++)
        kc_obj_unref(ws->init[i].obj);
    free(ws->init);
    free(ws->error_line);
    kc__buf_free(&ws->out);
    kc_label_selector_free(ws->ls);
    kc_field_selector_free(ws->fs);
    if (ws->shard) {
        atomic_fetch_sub(&ws->srv->shard_watchers, 1);
        kc_shard_selector_free(ws->shard);
    }
    free(ws);
}

static const char *type_name(kc_watch_type t)
{
    switch (t) {
    case KC_WATCH_ADDED:
        return "ADDED";
    case KC_WATCH_MODIFIED:
        return "MODIFIED";
    case KC_WATCH_DELETED:
        return "DELETED";
    case KC_WATCH_BOOKMARK:
        return "BOOKMARK";
    default:
        return "ERROR";
    }
}

static int put_event(wstream *ws, kc_watch_type t, kc_obj *obj, uint64_t rv)
{
    kc_obj *fixed = NULL;
    if (rv && kc_obj_rv_int(obj) != rv && kc__obj_with_rv(ws->srv, obj, rv, &fixed, NULL) == 0)
        obj = fixed;
    int rc = kc__encode_event(&ws->out, ws->fmt, ws->tobj, ws->r, type_name(t), obj, ws->first);
    ws->first = false;
    kc_obj_unref(fixed);
    return rc;
}

/* A BOOKMARK at the stream's progress: the server's current RV once every event up to it was
 * sent or filtered out — so a watch scoped by namespace or selector, or on a quiet resource,
 * moves on with the server (as upstream's watch cache does) — never below the last RV sent, never
 * past an event still queued for the stream (spec §5.4, #84). The end-of-initial-events bookmark
 * keeps the RV of the snapshot. */
static int put_bookmark(wstream *ws, bool end)
{
    /* converted streams: events may wait in the converter, so only what was sent */
    uint64_t p = !end && ws->w && !ws->wc ? kc__watcher_progress(ws->w) : 0;
    if (p > ws->last_rv)
        ws->last_rv = p;
    const char *kind = ws->fmt == KC__FMT_PARTIAL ? "PartialObjectMetadata" : ws->r->kind;
    const char *av = ws->fmt == KC__FMT_PARTIAL ? "meta.k8s.io/v1" : ws->av;
    if (ws->fmt == KC__FMT_PROTO) {
        kc__buf line = KC__BUF_INIT(0);
        int rc = kc__buf_printf(
            &line,
            "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":\"%s\","
            "\"metadata\":{\"resourceVersion\":\"%llu\"%s}}}",
            kind, av, (unsigned long long)ws->last_rv,
            end ? ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}" : "");
        if (!rc)
            rc = kc__proto_event_line(&ws->out, line.data);
        kc__buf_free(&line);
        return rc;
    }
    return kc__buf_printf(
        &ws->out,
        "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":\"%s\","
        "\"metadata\":{\"resourceVersion\":\"%llu\"%s}}}\n",
        kind, av, (unsigned long long)ws->last_rv,
        end ? ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}" : "");
}

/* A JSON event line as the stream's format writes it (protobuf: the same event as a frame). */
static void put_line(wstream *ws, const char *line)
{
    if (ws->fmt == KC__FMT_PROTO)
        kc__proto_event_line(&ws->out, line);
    else
        kc__buf_append_str(&ws->out, line);
}

static bool client_gone(wstream *ws)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(ws->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return false;
    struct pollfd p = {.fd = ci->connect_fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

/* Fill ws->out with what is ready now, up to about limit bytes; never blocks. Returns true when
 * it produced output or ended the stream, false when nothing is ready: *wake_at is then when the
 * stream must look again even without an event (deadline, bookmark, hang-up check). */
static bool produce(wstream *ws, size_t limit, uint64_t *wake_at)
{
    kc_server *srv = ws->srv;
    if (ws->i_init < ws->n_init) {
        while (ws->i_init < ws->n_init && ws->out.len < limit) {
            ev_item *it = &ws->init[ws->i_init++];
            if (put_event(ws, it->type, it->obj, 0) != 0) {
                ws->done = true;
                return true;
            }
            kc_obj_unref(it->obj);
            it->obj = NULL;
            /* replayed events count for the close-every-N fault; a synthetic snapshot not */
            if (ws->replaying && kc__faults_close_watch(srv->faults, ++ws->sent)) {
                ws->done = true;
                return true;
            }
        }
        return true;
    }
    if (ws->end_bookmark) {
        ws->end_bookmark = false;
        if (put_bookmark(ws, true) != 0)
            ws->done = true;
        return true;
    }
    if (ws->error_line) {
        put_line(ws, ws->error_line);
        ws->done = true;
        return true;
    }
    if (srv->stopping || ws->r->removed) {
        ws->done = true;
        return true;
    }
    uint64_t now = kc__now_ns();
    if (now >= ws->deadline_ns) {
        /* a last bookmark tells the client where to resume (upstream sends one just before the
         * deadline) */
        if (ws->bookmarks)
            put_bookmark(ws, false);
        ws->done = true;
        return true;
    }
    if (ws->bookmarks && now >= ws->next_bm_ns) {
        ws->next_bm_ns = now + ws->bm_interval_ns;
        if (put_bookmark(ws, false) != 0)
            ws->done = true;
        return true;
    }
    /* Batch: every due event, up to the buffer libmicrohttpd offers. */
    kc__hub_event evs[64];
    for (;;) {
        size_t n = 0;
        char *cerr = NULL;
        int rc = ws->wc ? kc__wconv_take(ws->wc, evs, KC__ARRAY_LEN(evs), &n, &cerr)
                        : kc__watcher_take(ws->w, evs, KC__ARRAY_LEN(evs), &n);
        if (cerr) { /* CV8: the conversion failure ends this watch with an ERROR event */
            char *line = error_event(500, "InternalError", cerr, false);
            if (line)
                put_line(ws, line);
            free(line);
            free(cerr);
        }
        for (size_t i = 0; i < n; i++) {
            int prc = ws->done ? 0 : put_event(ws, evs[i].type, evs[i].obj, evs[i].rv);
            if (!ws->done) {
                ws->last_rv = evs[i].rv;
                ws->sent++;
                if (prc != 0 || kc__faults_close_watch(srv->faults, ws->sent))
                    ws->done = true;
            }
            kc__hub_event_release(&evs[i]);
        }
        if (ws->done)
            return true;
        if (rc != 0) { /* closed (restart, stop) or overflowed: the client resumes */
            ws->done = true;
            return true;
        }
        if (n < KC__ARRAY_LEN(evs) || ws->out.len >= limit)
            break;
    }
    if (ws->out.len)
        return true;
    if (now >= ws->check_ns) {
        ws->check_ns = now + WS_CHECK_NS;
        if (client_gone(ws)) {
            ws->done = true;
            return true;
        }
    }
    uint64_t until = ws->deadline_ns < ws->check_ns ? ws->deadline_ns : ws->check_ns;
    if (ws->bookmarks && ws->next_bm_ns < until)
        until = ws->next_bm_ns;
    *wake_at = until;
    return false;
}

/* libmicrohttpd wakes a suspended stream from the hub (under the hub lock). */
static void ws_wake(void *ud)
{
    wstream *ws = ud;
    MHD_resume_connection(ws->conn);
}

static ssize_t ws_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    wstream *ws = cls;
    for (;;) {
        if (ws->out_off < ws->out.len) {
            size_t c = ws->out.len - ws->out_off;
            if (c > max)
                c = max;
            memcpy(buf, ws->out.data + ws->out_off, c);
            ws->out_off += c;
            if (ws->out_off == ws->out.len) {
                kc__buf_reset(&ws->out);
                ws->out_off = 0;
            }
            return (ssize_t)c;
        }
        if (ws->done)
            return MHD_CONTENT_READER_END_OF_STREAM;
        uint64_t wake_at = KC__DEADLINE_NEVER;
        if (produce(ws, max, &wake_at))
            continue;
        /* Suspend first, then arm: a wake (MHD_resume_connection) can only come after the
         * arm, so it always finds the connection suspended and no wake-up is lost. */
        MHD_suspend_connection(ws->conn);
        int rc = ws->wc ? kc__wconv_park(ws->wc, wake_at) : kc__watcher_arm(ws->w, wake_at);
        if (rc != 0) { /* ready meanwhile (1) or no timer thread: run again after resuming */
            if (rc != 1)
                ws->done = true;
            MHD_resume_connection(ws->conn);
        }
        return 0;
    }
}

static char *error_event(int code, const char *reason, const char *msg, bool too_large)
{
    kc_error e = KC_ERROR_INIT;
    kc__fail(&e, code, reason, "%s", msg);
    if (too_large)
        kc__fail_cause(&e, "ResourceVersionTooLarge", NULL, "Too large resource version");
    size_t len;
    char *st = kc__status_json(&e, &len);
    kc_error_clear(&e);
    if (!st)
        return NULL;
    kc__buf b = KC__BUF_INIT(0);
    kc__buf_printf(&b, "{\"type\":\"ERROR\",\"object\":%s}\n", st);
    free(st);
    return kc__buf_steal(&b, NULL);
}

static int validate(kc__req *req, uint64_t *want)
{
    kc__query *q = &req->q;
    kc_error *err = &req->err;
    const char *m = q->rv_match && *q->rv_match ? q->rv_match : NULL;
    if (q->send_initial && (!m || strcmp(m, "NotOlderThan") != 0))
        return kc__fail(err, 422, "Invalid",
                        "resourceVersionMatch: Forbidden: sendInitialEvents "
                        "requires setting resourceVersionMatch to "
                        "NotOlderThan");
    if (m && !q->send_initial)
        return kc__fail(err, 422, "Invalid",
                        "resourceVersionMatch: Forbidden: "
                        "resourceVersionMatch is forbidden for watch unless "
                        "sendInitialEvents is provided");
    *want = 0;
    if (q->rv && *q->rv && strcmp(q->rv, "0") != 0 && kc_rv_parse(q->rv, want, NULL) != 0)
        return kc__fail(err, 400, "BadRequest", "invalid resource version: %s", q->rv);
    return 0;
}

/* Under mu: initial state (synthetic ADDED) of matching objects. */
static int snapshot(wstream *ws)
{
    size_t n;
    kc__entry **s = kc__store_sorted(ws->r, &n);
    if (n && !s)
        return KC_ENOMEM;
    ws->init = malloc((n ? n : 1) * sizeof(*ws->init));
    if (!ws->init)
        return KC_ENOMEM;
    const char *ptr, *node = kc__watch_node_pin(ws->fs, &ptr);
    for (size_t i = 0; i < n; i++)
        if ((!node || kc__entry_on_node(ws->r, s[i], node)) && match(ws, s[i]->obj) &&
            kc_shard_selector_match(ws->shard, s[i]->obj))
            ws->init[ws->n_init++] = (ev_item){KC_WATCH_ADDED, kc_obj_ref(s[i]->obj)};
    return 0;
}

/* Under mu: history events after rv for this resource, filtered. */
static int replay(wstream *ws, uint64_t rv)
{
    kc_server *srv = ws->srv;
    ws->init = malloc((srv->hist_len ? srv->hist_len : 1) * sizeof(*ws->init));
    if (!ws->init)
        return KC_ENOMEM;
    for (size_t k = 0; k < srv->hist_len; k++) {
        kc__hist *h = &srv->hist[(srv->hist_head + k) % srv->hist_cap];
        if (h->rv <= rv || h->rsrc != ws->r)
            continue;
        kc__hub_event ev = {.type = h->type, .obj = h->obj, .old = h->old, .rv = h->rv};
        kc_obj *o = NULL;
        kc_watch_type t = filt(ws, &ev, &o);
        if (!t)
            continue;
        kc_obj *fixed = NULL;
        if (kc_obj_rv_int(o) != h->rv && kc__obj_with_rv(srv, o, h->rv, &fixed, NULL) == 0)
            o = fixed;
        else
            kc_obj_ref(o);
        ws->init[ws->n_init++] = (ev_item){t, o};
    }
    return 0;
}

/* Watch: the stream's label and field selectors (400 when they do not parse or name an unknown
 * field); the deprecated /watch/.../{name} form selects metadata.name. */
static int ws_selectors(kc__req *req, kc__rsrc *r, wstream *ws)
{
    int rc = 0;
    kc_error perr = KC_ERROR_INIT;
    if (kc_label_selector_parse(req->q.label_sel, &ws->ls, &perr) != 0 ||
        kc_field_selector_parse(req->q.field_sel, &ws->fs, &perr) != 0) {
        rc = kc__fail(&req->err, 400, "BadRequest", "unable to parse selector: %s",
                      perr.message ? perr.message : "parse error");
        goto out;
    }
    const char *bad = kc__rsrc_bad_field(r, ws->fs);
    if (bad) {
        rc = kc__fail(&req->err, 400, "BadRequest",
                      "\"%s\" is not a known field selector: only "
                      "\"metadata.name\", \"metadata.namespace\"",
                      bad);
        goto out;
    }
    if (req->route.has_name) { /* deprecated /watch/.../{name} */
        kc_field_selector_free(ws->fs);
        char fsel[300];
        snprintf(fsel, sizeof(fsel), "metadata.name=%s", req->route.name);
        if (kc_field_selector_parse(fsel, &ws->fs, NULL) != 0)
            rc = kc__fail(&req->err, 400, "BadRequest", "bad name");
    }
out:
    kc_error_clear(&perr);
    return rc;
}

/* Watch: the stream's deadline (timeoutSeconds, capped by --max-watch), bookmark interval and
 * next checks, from now. */
static void ws_timers(kc_server *srv, const kc__req *req, wstream *ws)
{
    uint64_t now = kc__now_ns();
    uint64_t tmo_s = req->q.timeout > 0 ? (uint64_t)req->q.timeout : 0;
    if (srv->opts.max_watch_s && (!tmo_s || tmo_s > srv->opts.max_watch_s))
        tmo_s = srv->opts.max_watch_s;
    ws->deadline_ns = tmo_s ? now + tmo_s * KC__NS_PER_SEC : KC__DEADLINE_NEVER;
    ws->bm_interval_ns =
        (uint64_t)(srv->opts.bookmark_interval_ms ? srv->opts.bookmark_interval_ms : 60000) *
        KC__NS_PER_MS;
    ws->next_bm_ns = now + ws->bm_interval_ns;
    ws->check_ns = now + WS_CHECK_NS;
}

/* Watch, under srv->mu: what the stream starts with for resourceVersion want — the initial
 * snapshot (sendInitialEvents or RV 0), a 410 below the history floor, a 504 above the current
 * RV, else the history after want — then the hub subscription. 0 or a negative KC_ code. */
static int ws_start_locked(kc_server *srv, kc__req *req, kc__rsrc *r, wstream *ws, uint64_t want)
{
    int rc;
    if (req->q.send_initial || want == 0) {
        rc = snapshot(ws);
        ws->end_bookmark = req->q.send_initial && ws->bookmarks;
        if (want > srv->rv && req->q.send_initial) {
            char msg[128];
            snprintf(msg, sizeof(msg), "Timeout: Too large resource version: %llu, current: %llu",
                     (unsigned long long)want, (unsigned long long)srv->rv);
            ws->error_line = error_event(504, "Timeout", msg, true);
            ws->end_bookmark = false;
        }
    } else if (want < srv->floor) {
        char msg[128];
        snprintf(msg, sizeof(msg), "too old resource version: %llu (%llu)",
                 (unsigned long long)want, (unsigned long long)srv->floor + 1);
        ws->error_line = error_event(410, "Expired", msg, false);
        rc = ws->error_line ? 0 : KC_ENOMEM;
    } else if (want > srv->rv) {
        char msg[128];
        snprintf(msg, sizeof(msg), "Timeout: Too large resource version: %llu, current: %llu",
                 (unsigned long long)want, (unsigned long long)srv->rv);
        ws->error_line = error_event(504, "Timeout", msg, true);
        rc = ws->error_line ? 0 : KC_ENOMEM;
    } else {
        rc = replay(ws, want);
        ws->replaying = true;
    }
    ws->last_rv = srv->rv;
    if (rc == 0 && !ws->error_line) {
        /* spec.nodeName=X: offered only the events of pods on X, before or after (hub.h) */
        const char *ptr = NULL, *node = kc__watch_node_pin(ws->fs, &ptr);
        ws->w = kc__hub_subscribe_pinned(srv->hub, r, filt, ws, ptr, node);
        if (!ws->w)
            rc = KC_ENOMEM;
        else
            kc__watcher_set_wake(ws->w, ws_wake, ws);
    }
    return rc;
}

/* The initial events converted here (a failure fails the request, CV8), then the converter
 * thread for the live ones (watch_convert.c). */
static int ws_convert_start(kc__req *req, wstream *ws)
{
    kc_obj **objs = calloc(ws->n_init ? ws->n_init : 1, sizeof(*objs));
    if (!objs)
        return kc_error_set(&req->err, KC_ENOMEM, "out of memory");
    for (size_t i = 0; i < ws->n_init; i++)
        objs[i] = ws->init[i].obj;
    int rc = kc__convert_objs_with(req, ws->r, ws->cv, ws->av, objs, ws->n_init);
    for (size_t i = 0; i < ws->n_init; i++)
        ws->init[i].obj = objs[i]; /* replaced references released by the call */
    free(objs);
    if (rc == 0 && ws->w) {
        rc = kc__wconv_start(req->srv, ws->r, req->route.version, ws->w, ws->conn, ws->cv, &ws->wc);
        if (rc)
            rc = kc_error_set(&req->err, rc, "cannot start the watch's converter");
        else
            ws->cv = NULL;
    }
    return rc;
}

int kc__verb_watch(kc__req *req, kc__rsrc *r)
{
    kc_server *srv = req->srv;
    uint64_t want;
    int rc = validate(req, &want);
    if (rc)
        return rc;
    wstream *ws = calloc(1, sizeof(*ws));
    if (!ws)
        return kc_error_set(&req->err, KC_ENOMEM, "out of memory");
    kc__buf_init(&ws->out, 0);
    ws->srv = srv;
    ws->r = r;
    if ((rc = kc__fmt_for(req, r, &ws->fmt)) != 0) {
        ws_free(ws);
        return rc;
    }
    ws->tobj = req->table_obj;
    ws->conn = req->conn;
    ws->first = true;
    ws->bookmarks = req->q.bookmarks;
    ws->has_ns = req->route.has_ns;
    snprintf(ws->ns, sizeof(ws->ns), "%s", req->route.ns);
    kc__rsrc_api_version(r, req->route.version, ws->av, sizeof(ws->av));
    if ((rc = ws_selectors(req, r, ws)) != 0 || (rc = kc__shard_selector_of(req, &ws->shard)) != 0)
        goto fail;
    if (ws->shard) /* counted before subscribing: the publisher hashes events from now on */
        atomic_fetch_add(&srv->shard_watchers, 1);
    ws_timers(srv, req, ws);
    /* CV7: a watch in a non-storage version of a CRD converting by webhook */
    if (r->is_crd && strcmp(req->route.version, r->versions[0]) != 0 &&
        (rc = kc__conv_begin(srv, r, &ws->cv, &req->err)) != 0)
        goto fail;
    pthread_mutex_lock(&srv->mu);
    rc = ws_start_locked(srv, req, r, ws, want);
    pthread_mutex_unlock(&srv->mu);
    if (rc) {
        rc = kc_error_set(&req->err, rc, "out of memory");
        goto fail;
    }
    if (ws->cv && (rc = ws_convert_start(req, ws)) != 0)
        goto fail;
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, ws_read, ws, ws_free);
    if (!resp) {
        rc = kc_error_set(&req->err, KC_ENOMEM, "out of memory");
        goto fail;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            ws->fmt == KC__FMT_PROTO
                                ? "application/vnd.kubernetes.protobuf;stream=watch"
                                : "application/json");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache, private");
    kc__reply_warnings(req, resp);
    req->resp = resp;
    req->status = 200;
    return 0;
fail:
    ws_free(ws);
    return rc;
}
