/*
 * watch.c — resumable decoder for newline-delimited watch streams.
 *
 * State: a byte buffer that holds at most one partial line (the tail of the last chunk), plus,
 * only after a callback asked to stop, the unprocessed rest of that chunk. Feeding a chunk:
 *   1. lines left over after a callback stop are decoded first;
 *   2. a buffered partial line is completed from the chunk (the only copy of event bytes);
 *   3. every line wholly inside the chunk is decoded in place: one scan finds the first byte
 *      <= 0x20; if it is the '\n', the line is compact and, when at least KC__SJ_PADDING bytes of
 *      the chunk follow its start beyond its end, simdjson reads it where it is. Otherwise
 *      (whitespace, CRLF, last line of the chunk) sj.cpp copies or minifies it into scratch;
 *   4. the tail is buffered.
 * Blank lines and CR before LF are skipped. A line over max_object_size is KC_ETOOLARGE; that and
 * KC_EPARSE are sticky until kc_watch_decoder_reset(). A callback's own code is not sticky.
 * With a shard filter (kc_decode_opts.shard or kc__watch_decoder_set_shard), ADDED/MODIFIED/DELETED
 * events outside its ranges are dropped before their object is built; BOOKMARK and ERROR events
 * always pass.
 */
#include "core/internal.h"
#include "json/decode_internal.h"
#include "json/obj_internal.h"
#include "core/slab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kc_watch_decoder {
    unsigned flags;
    size_t max;
    const kc_shard_selector *shard; /* kc__watch_decoder_set_shard (borrowed) */
    kc__sj_ctx *ctx;
    char *buf; /* buffered bytes [pos, len); cap >= len + KC__SJ_PADDING */
    size_t len, pos, cap;
    int failed;              /* sticky error code, 0 when usable */
    int64_t total_in;        /* stream bytes fed so far */
    bool arena;              /* kc__watch_decoder_set_initial_arena: until initial-events-end */
    const char *const *keep; /* kc_decode_opts.keep (borrowed: must outlive the decoder) */
};

const char *kc_watch_type_name(kc_watch_type type)
{
    switch (type) {
    case KC_WATCH_ADDED:
        return "ADDED";
    case KC_WATCH_MODIFIED:
        return "MODIFIED";
    case KC_WATCH_DELETED:
        return "DELETED";
    case KC_WATCH_BOOKMARK:
        return "BOOKMARK";
    case KC_WATCH_ERROR:
        return "ERROR";
    }
    return "UNKNOWN";
}

int(kc_watch_decoder_new)(const kc_decode_opts *opts, size_t opts_size, kc_watch_decoder **ret,
                          kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_decode_opts, err);
    if (!ret)
        return kc_error_set(err, KC_EINVAL, "kc_watch_decoder_new: ret is NULL");
    int crc = kc__json_cpu_check(err);
    if (crc)
        return crc;
    kc_watch_decoder *d = calloc(1, sizeof *d);
    if (!d)
        return kc_error_set(err, KC_ENOMEM, "watch decoder: out of memory");
    d->flags = kc__decode_flags(opts);
    d->max = kc__decode_max(opts);
    d->shard = opts ? opts->shard : NULL; /* kc_decode_opts.shard (borrowed) */
    d->keep = opts ? opts->keep : NULL;   /* kc_decode_opts.keep (borrowed) */
    d->ctx = kc__sj_ctx_new();
    if (!d->ctx) {
        free(d);
        return kc_error_set(err, KC_ENOMEM, "watch decoder: out of memory");
    }
    kc__sj_ctx_set_shard(d->ctx, d->shard);
    *ret = d;
    return 0;
}

void kc__watch_decoder_set_shard(kc_watch_decoder *dec, const kc_shard_selector *shard)
{
    if (!dec)
        return;
    dec->shard = shard;
    kc__sj_ctx_set_shard(dec->ctx, shard);
}

void kc__watch_decoder_set_initial_arena(kc_watch_decoder *dec)
{
    if (dec)
        dec->arena = true;
}

void kc_watch_decoder_free(kc_watch_decoder *dec)
{
    if (!dec)
        return;
    if (dec->arena) /* the stream ended before its initial-events-end bookmark */
        kc__slab_release_thread();
    kc__sj_ctx_free(dec->ctx);
    free(dec->buf);
    free(dec);
}

void kc_watch_decoder_reset(kc_watch_decoder *dec)
{
    if (!dec)
        return;
    dec->len = dec->pos = 0;
    dec->failed = 0;
    dec->total_in = 0;
    if (dec->cap > ((size_t)1 << 20)) { /* do not keep a huge buffer across streams */
        free(dec->buf);
        dec->buf = NULL;
        dec->cap = 0;
    }
    kc__sj_ctx_trim(dec->ctx, (size_t)1 << 20);
}

/* Appends n bytes to the buffer. */
static int append(kc_watch_decoder *dec, const char *p, size_t n, kc_error *err)
{
    if (dec->pos && dec->pos == dec->len)
        dec->len = dec->pos = 0;
    size_t need = dec->len + n + KC__SJ_PADDING;
    if (need > dec->cap) {
        size_t cap = dec->cap ? dec->cap : 4096;
        while (cap < need)
            cap *= 2;
        char *b = realloc(dec->buf, cap);
        if (!b)
            return kc_error_set(err, KC_ENOMEM, "out of memory buffering a watch event");
        dec->buf = b;
        dec->cap = cap;
    }
    memcpy(dec->buf + dec->len, p, n);
    dec->len += n;
    /* Padding after the buffered text is read by simdjson: keep it initialised and whitespace. */
    memset(dec->buf + dec->len, 0, KC__SJ_PADDING);
    return 0;
}

struct line_state {
    kc_watch_decoder *dec;
    kc_watch_event_cb cb;
    void *ud;
    bool user_stop;
};

static bool is(kc__sj_str s, const char *lit, size_t n)
{
    return s.n == n && memcmp(s.p, lit, n) == 0;
}

static int event_cb(void *ud, const kc__sj_event *sev, kc__sj_err *e)
{
    struct line_state *ls = ud;
    kc_watch_event ev = {0, NULL, false, NULL};
    if (is(sev->type, "ADDED", 5))
        ev.type = KC_WATCH_ADDED;
    else if (is(sev->type, "MODIFIED", 8))
        ev.type = KC_WATCH_MODIFIED;
    else if (is(sev->type, "DELETED", 7))
        ev.type = KC_WATCH_DELETED;
    else if (is(sev->type, "BOOKMARK", 8))
        ev.type = KC_WATCH_BOOKMARK;
    else if (is(sev->type, "ERROR", 5))
        ev.type = KC_WATCH_ERROR;
    else {
        e->code = KC_EPARSE;
        e->offset = sev->type_off;
        snprintf(e->msg, sizeof e->msg, "unknown watch event type \"%.*s\"",
                 (int)(sev->type.n > 32 ? 32 : sev->type.n), sev->type.p);
        return KC_EPARSE;
    }
    int r;
    if (ev.type == KC_WATCH_ERROR) {
        kc_error status = KC_ERROR_INIT;
        r = kc_status_parse(sev->status_json.p, sev->status_json.n, &status);
        if (r == KC_EPARSE || r == KC_ENOMEM || r == KC_EINVAL) {
            e->code = r == KC_ENOMEM ? KC_ENOMEM : KC_EPARSE;
            e->offset =
                r == KC_ENOMEM ? -1 : sev->obj_off + (status.offset > 0 ? status.offset : 0);
            snprintf(e->msg, sizeof e->msg, "ERROR watch event: %s",
                     status.message ? status.message : kc_strerror(r));
            kc_error_clear(&status);
            return e->code;
        }
        if (r == 0) /* a "Success" Status in an ERROR event: still an error */
            kc_error_set(&status, KC_EHTTP, "ERROR watch event with a Success Status");
        ev.error = &status;
        r = ls->cb(ls->ud, &ev);
        kc_error_clear(&status);
    } else {
        if (ev.type != KC_WATCH_BOOKMARK && !kc__shard_keep(ls->dec->shard, sev->obj))
            return 0; /* outside the shard filter: dropped unbuilt (S13.2) */
        kc_obj *obj = NULL;
        unsigned fl = ls->dec->flags | (ls->dec->arena ? KC__BUILD_ARENA : 0);
        r = kc__obj_build(sev->obj, fl, ls->dec->max, NULL, ls->dec->keep, &obj, e);
        if (r)
            return r;
        ev.obj = obj;
        ev.initial_events_end = ev.type == KC_WATCH_BOOKMARK && sev->obj->initial_events_end;
        if (ev.initial_events_end && ls->dec->arena) { /* the bulk is over */
            ls->dec->arena = false;
            kc__slab_release_thread();
        }
        r = ls->cb(ls->ud, &ev);
        kc_obj_unref(obj);
    }
    if (r) {
        ls->user_stop = true;
        e->code = r;
    }
    return r;
}

/* Decodes one line (no '\n'); off is its stream offset. */
static int line(kc_watch_decoder *dec, const char *p, size_t n, size_t readable, int compact,
                int64_t off, kc_watch_event_cb cb, void *ud, kc_error *err)
{
    while (n && (unsigned char)p[n - 1] <= 0x20)
        n--;
    while (n && (unsigned char)p[0] <= 0x20)
        p++, n--, readable--, off++;
    if (n == 0)
        return 0;
    if (n > dec->max) {
        dec->failed = KC_ETOOLARGE;
        kc_error_set(err, KC_ETOOLARGE, "watch event of %zu bytes is over the limit of %zu", n,
                     dec->max);
        if (err)
            err->offset = off;
        return KC_ETOOLARGE;
    }
    if (dec->shard && kc__watch_prefilter_drop(p, n, dec->shard))
        return 0; /* out of range, told by its first bytes: never indexed (watch_prefilter.c) */
    if (compact < 0)
        compact = kc__sj_find_ws(p, n) == n;
    struct line_state ls = {dec, cb, ud, false};
    kc__sj_err e = {0, -1, ""};
    int r = kc__sj_watch_line(dec->ctx, p, n, readable, compact != 0,
                              (dec->flags & KC_DECODE_STRICT) != 0, event_cb, &ls, &e);
    if (!r)
        return 0;
    if (ls.user_stop) {
        kc_error_set(err, r, "stopped by the watch event callback (%s)", kc_errno_name(r));
        return r;
    }
    if (r == KC_EPARSE || r == KC_ETOOLARGE)
        dec->failed = r;
    return kc__sj_err_to(&e, off, err);
}

/* Decodes the complete lines in the buffer; leaves a partial line at its start. */
static int drain(kc_watch_decoder *dec, int64_t buf_off, kc_watch_event_cb cb, void *ud,
                 kc_error *err)
{
    int r = 0;
    while (dec->pos < dec->len) {
        char *s = dec->buf + dec->pos;
        char *nl = memchr(s, '\n', dec->len - dec->pos);
        if (!nl)
            break;
        size_t n = (size_t)(nl - s);
        dec->pos += n + 1;
        r = line(dec, s, n, dec->cap - (size_t)(s - dec->buf), -1, buf_off, cb, ud, err);
        buf_off += (int64_t)n + 1;
        if (r)
            return r;
    }
    if (dec->pos) {
        memmove(dec->buf, dec->buf + dec->pos, dec->len - dec->pos);
        dec->len -= dec->pos;
        dec->pos = 0;
        memset(dec->buf + dec->len, 0, KC__SJ_PADDING);
    }
    return 0;
}

static int too_large(kc_watch_decoder *dec, kc_error *err)
{
    dec->failed = KC_ETOOLARGE;
    return kc_error_set(err, KC_ETOOLARGE, "watch event line over the limit of %zu bytes",
                        dec->max);
}

int kc_watch_decoder_feed(kc_watch_decoder *dec, const char *buf, size_t len, kc_watch_event_cb cb,
                          void *ud, kc_error *err)
{
    if (!dec || !cb || (!buf && len))
        return kc_error_set(err, KC_EINVAL, "kc_watch_decoder_feed: NULL argument");
    if (dec->failed)
        return kc_error_set(err, dec->failed, "watch decoder failed earlier (%s); reset it",
                            kc_errno_name(dec->failed));
    if (!buf)
        buf = ""; /* len is 0: an empty chunk (the copies below then never see NULL) */
    int64_t base = dec->total_in; /* stream offset of buf[0] */
    int r;

    /* 1. Lines left in the buffer by a callback stop. */
    if (dec->len > dec->pos) {
        int64_t boff = base - (int64_t)(dec->len - dec->pos);
        if ((r = drain(dec, boff, cb, ud, err))) {
            if (!dec->failed && append(dec, buf, len, err) == 0)
                dec->total_in += (int64_t)len;
            return r;
        }
    }
    dec->total_in += (int64_t)len;
    const char *p = buf, *end = buf + len;

    /* 2. Complete a buffered partial line. */
    if (dec->len > dec->pos) {
        const char *nl = memchr(p, '\n', len);
        size_t k = nl ? (size_t)(nl - p) : len;
        if (dec->len - dec->pos + k > dec->max + 2)
            return too_large(dec, err);
        if ((r = append(dec, p, k, err)))
            return r;
        if (!nl)
            return 0;
        size_t n = dec->len - dec->pos;
        int64_t loff = base - (int64_t)(n - k);
        r = line(dec, dec->buf + dec->pos, n, dec->cap - dec->pos, -1, loff, cb, ud, err);
        dec->len = dec->pos = 0;
        p = nl + 1;
        if (r) {
            if (!dec->failed && p < end && append(dec, p, (size_t)(end - p), err))
                return KC_ENOMEM;
            return r;
        }
    }

    /* 3. Lines wholly inside the chunk, in place. */
    while (p < end) {
        size_t rem = (size_t)(end - p);
        size_t w = kc__sj_find_ws(p, rem);
        const char *nl;
        int compact;
        if (w < rem && p[w] == '\n') {
            nl = p + w;
            compact = 1;
        } else if (w == rem) {
            nl = NULL;
            compact = 1;
        } else {
            nl = memchr(p + w, '\n', rem - w);
            compact = 0;
        }
        if (!nl)
            break;
        size_t n = (size_t)(nl - p);
        r = line(dec, p, n, rem, compact, base + (p - buf), cb, ud, err);
        p = nl + 1;
        if (r) {
            if (!dec->failed && p < end && append(dec, p, (size_t)(end - p), err))
                return KC_ENOMEM;
            return r;
        }
    }

    /* 4. Buffer the tail. */
    if (p < end) {
        if ((size_t)(end - p) > dec->max + 2)
            return too_large(dec, err);
        if ((r = append(dec, p, (size_t)(end - p), err)))
            return r;
    }
    return 0;
}

int kc_watch_decoder_finish(kc_watch_decoder *dec, kc_watch_event_cb cb, void *ud, kc_error *err)
{
    if (!dec || !cb)
        return kc_error_set(err, KC_EINVAL, "kc_watch_decoder_finish: NULL argument");
    if (dec->failed)
        return kc_error_set(err, dec->failed, "watch decoder failed earlier (%s); reset it",
                            kc_errno_name(dec->failed));
    int64_t boff = dec->total_in - (int64_t)(dec->len - dec->pos);
    int r = drain(dec, boff, cb, ud, err);
    if (r)
        return r;
    if (dec->len > dec->pos) {
        size_t n = dec->len - dec->pos;
        boff = dec->total_in - (int64_t)n;
        r = line(dec, dec->buf + dec->pos, n, dec->cap - dec->pos, -1, boff, cb, ud, err);
        dec->len = dec->pos = 0;
        if (r)
            return r;
    }
    return 0;
}
