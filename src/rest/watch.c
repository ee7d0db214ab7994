/*
 * rest/watch.c — streaming WATCH (apiserver-semantics §5): the 2xx response body is fed to a
 * kc_watch_decoder chunk by chunk as libcurl delivers it, so events reach the callback as soon
 * as their line is complete. A non-2xx answer is collected and mapped like any other error (410 →
 * KC_EGONE, 504 ResourceVersionTooLarge → KC_ERV_TOO_LARGE, …). Cancellation wakes the transfer
 * through kc_cancel (see cancel.c); the callback's own negative code stops the stream and is
 * returned. kc__client_watch_ex also calls a flush hook after each read of the stream is decoded
 * (the informer batches its handler notifications per read). No rate limiting and no client-side
 * timeout apply; TCP keepalive stays on.
 */
#include "rest/internal.h"

#include <string.h>

typedef struct kc__watch_ctx {
    kc_watch_decoder *dec;
    kc_watch_event_cb cb;
    void *ud;
    int rc;        /* first decoder/callback error */
    kc_error derr; /* its detail */
} kc__watch_ctx;

static size_t kc__watch_data(void *ud, const char *p, size_t n)
{
    kc__watch_ctx *w = ud;
    if (w->rc)
        return 0;
    int rc = kc_watch_decoder_feed(w->dec, p, n, w->cb, w->ud, &w->derr);
    if (rc) {
        w->rc = rc;
        return 0;
    }
    return n;
}

int(kc_client_watch)(kc_client *c, const kc_gvr *gvr, const char *ns, const kc_watch_opts *opts,
                     size_t opts_size, kc_watch_event_cb cb, void *ud, kc_cancel *cancel,
                     kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_watch_opts, err);
    kc_decode_opts dec;
    KC__OPTS_TAKE_NESTED(opts__copy, decode, &dec, "kc_watch_opts.decode", err);
    return kc__client_watch_ex(c, gvr, ns, opts, NULL, cb, NULL, ud, cancel, err);
}

int kc__client_watch_ex(kc_client *c, const kc_gvr *gvr, const char *ns, const kc_watch_opts *opts,
                        const kc_shard_selector *shard, kc_watch_event_cb cb,
                        void (*on_flush)(void *ud), void *ud, kc_cancel *cancel, kc_error *err)
{
    kc_watch_opts none = {0};
    if (!opts)
        opts = &none;
    if (!c || !cb)
        return kc_error_set(err, KC_EINVAL, "watch: client and callback required");
    int rc = kc__gvr_check(gvr, err);
    rc = rc ? rc : kc__ns_check(ns, err);
    if (rc)
        return rc;
    kc__buf p = KC__BUF_INIT(0);
    rc = kc__path(&p, gvr, ns, NULL, NULL);
    if (rc) {
        kc__buf_free(&p);
        return kc_error_set(err, rc, "bad resource (group/version/resource required)");
    }
    rc = kc__query(&p, "watch", "1");
    rc = rc ? rc : kc__query(&p, "labelSelector", opts->label_selector);
    rc = rc ? rc : kc__query(&p, "fieldSelector", opts->field_selector);
    rc = rc ? rc : kc__query(&p, "resourceVersion", opts->resource_version);
    rc = rc ? rc : kc__query(&p, "resourceVersionMatch", opts->resource_version_match);
    rc = rc ? rc : kc__query(&p, "shardSelector", opts->shard_selector);
    if (!rc && opts->allow_bookmarks)
        rc = kc__query(&p, "allowWatchBookmarks", "true");
    if (!rc && opts->send_initial_events)
        rc = kc__query(&p, "sendInitialEvents", "true");
    if (!rc && opts->timeout_s > 0)
        rc = kc__query_int(&p, "timeoutSeconds", opts->timeout_s);
    if (rc) {
        kc__buf_free(&p);
        return kc_error_set(err, rc, "out of memory");
    }
    kc_decode_opts d = {0};
    if (opts->decode)
        d = *opts->decode;
    if (opts->metadata_only)
        d.flags |= KC_DECODE_METADATA_ONLY;
    kc__watch_ctx w = {.cb = cb, .ud = ud};
    kc_error_init(&w.derr);
    int drc = kc_watch_decoder_new(&d, &w.dec, err);
    if (drc) {
        kc__buf_free(&p);
        return drc;
    }
    if (shard) /* else the caller's kc_decode_opts.shard, if any, stays */
        kc__watch_decoder_set_shard(w.dec, shard);
    if (opts->send_initial_events) /* fed on this thread, by libcurl's callbacks */
        kc__watch_decoder_set_initial_arena(w.dec);
    kc__http_req req = {.method = "GET",
                        .path = p.data,
                        .accept = opts->metadata_only ? KC__ACCEPT_PARTIAL : NULL,
                        .stream = true,
                        .cancel = cancel,
                        .on_data = kc__watch_data,
                        .ud = &w,
                        .on_idle = on_flush,
                        .idle_ud = ud};
    kc__http_resp resp;
    kc__http_resp_init(&resp);
    rc = kc__client_call(c, &req, true, &resp, err);
    if (w.rc) {
        /* the decoder or the callback stopped the stream: that is the result */
        rc = w.rc;
        if (err) {
            kc_error_clear(err);
            *err = w.derr;
            kc_error_init(&w.derr);
            if (err->code == 0)
                kc_error_set(err, rc, "watch stopped by the event callback (%s)",
                             kc_errno_name(rc));
        }
    } else if (rc == 0) {
        rc = kc_watch_decoder_finish(w.dec, cb, ud, err);
        if (on_flush)
            on_flush(ud);
    }
    kc_error_clear(&w.derr);
    kc_watch_decoder_free(w.dec);
    kc__http_resp_free(&resp);
    kc__buf_free(&p);
    return rc;
}
