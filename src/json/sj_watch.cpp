/*
 * sj_watch.cpp — one watch event line ({"type":…,"object":{…}}) through simdjson On-Demand.
 *
 * A compact line with KC__SJ_PADDING readable bytes after it (the rest of the caller's chunk) is
 * parsed where it is; otherwise it is copied (or minified) into the context's scratch. The object
 * of a non-ERROR event is walked by the shared walker (sj_meta.cpp); an ERROR event's object (a
 * metav1.Status) is handed over raw, for status.c. "type" and "object" may appear once; other
 * members go through walker::skip (validated in strict mode). Error offsets are into line.
 */
#include "json/sj_internal.hpp"
#include "json/sj_skip.hpp"

using namespace kc_sj;

namespace
{

struct event_walk {
    walker &w;
    kc__sj_event ev = {};
    kc__sj_meta m = {};
    bool have_obj = false, is_error = false;
    bool data_event = false; /* "type" (seen before "object") is ADDED, MODIFIED or DELETED */

    /* The event object: walked as an object, or for ERROR events kept raw (validated in strict
     * mode). */
    int object(od::value &v)
    {
        const char *start = v.raw_json_token().data();
        have_obj = true;
        ev.obj_off = w.off(start);
        od::object o;
        if (is_error && w.strict) {
            od::json_type t;
            if (auto c = v.type().get(t))
                return w.err(c, "watch event object");
            if (t != od::json_type::object)
                return w.type_err("watch event object", "an object", start);
            const char *close = nullptr;
            if (int r = w.validate_skip(v, "watch event object", &close))
                return r;
            ev.status_json = {start, static_cast<size_t>(close + 1 - start)};
            return 0;
        }
        if (int r = w.req_object(v, o, "watch event object"))
            return r;
        if (is_error) {
            string_view raw;
            if (auto c = o.raw_json().get(raw))
                return w.err(c, "watch event object");
            ev.status_json = {raw.data(), raw.size()};
            return 0;
        }
        m = kc__sj_meta{};
        /* Filter only objects known to be of a data event: a BOOKMARK's annotations must be read
         * (and with "type" after "object", watch.c decides after the walk). */
        const kc_shard_selector *shard = w.ctx->shard;
        kc_shard_field field = w.ctx->shard_field;
        if (!data_event) {
            w.ctx->shard = nullptr;
            w.ctx->shard_field = KC_SHARD_FIELD_NONE;
        }
        int r = w.object(o, start, &m);
        w.ctx->shard = shard;
        w.ctx->shard_field = field;
        ev.status_json = {m.text, m.len};
        return r;
    }

    /* The members of the event line's top-level object. */
    int members(od::object &top)
    {
        unsigned seen = 0;
        for (auto fr : top) {
            od::field f;
            if (auto c = std::move(fr).get(f))
                return w.err(c, "watch event");
            if (int r = w.key(f, "watch event key"))
                return r;
            od::raw_json_string k = f.key();
            int r;
            if (k.unsafe_is_equal("type")) {
                ev.type_off = w.off(f.value().raw_json_token().data());
                if (!(r = w.once(&seen, 1, k.raw(), "watch event type")))
                    r = w.opt_string(f.value(), &ev.type, "watch event type");
                is_error = ev.type.n == 5 && memcmp(ev.type.p, "ERROR", 5) == 0;
                data_event = !r && !have_obj &&
                             ((ev.type.n == 5 && memcmp(ev.type.p, "ADDED", 5) == 0) ||
                              (ev.type.n == 8 && memcmp(ev.type.p, "MODIFIED", 8) == 0) ||
                              (ev.type.n == 7 && memcmp(ev.type.p, "DELETED", 7) == 0));
            } else if (k.unsafe_is_equal("object")) {
                if (!(r = w.once(&seen, 2, k.raw(), "watch event object")))
                    r = object(f.value());
            } else {
                r = w.skip(f.value(), "watch event");
            }
            if (r)
                return r;
        }
        return 0;
    }
};

/* One event line, text compact and padded (cap readable bytes). */
int decode_line(kc__sj_ctx *ctx, const char *text, size_t n, size_t cap, bool strict,
                kc__sj_event_fn fn, void *ud, kc__sj_err *e)
{
    od::document doc;
    int r = iterate(ctx, text, n, cap, doc, e, 0);
    if (r)
        return r;
    walker w{doc, text, text + n, 0, e, ctx, strict};
    od::object top;
    if ((r = w.top_object(top, "watch event")))
        return r;
    event_walk ew{w};
    if ((r = ew.members(top)))
        return r;
    if (!at_end(doc))
        return fail(e, KC_EPARSE, w.here(), "trailing data after the watch event");
    if (ew.ev.type.n == 0)
        return fail(e, KC_EPARSE, 0, "watch event without a type");
    if (!ew.have_obj)
        return fail(e, KC_EPARSE, 0, "watch event without an object");
    ew.ev.obj = ew.is_error ? nullptr : &ew.m;
    return fn(ud, &ew.ev, e);
}

} // namespace

extern "C" {

int kc__sj_watch_line(kc__sj_ctx *ctx, const char *line, size_t len, size_t readable, bool compact,
                      bool strict, kc__sj_event_fn fn, void *ud, kc__sj_err *e)
{
    const char *text = line;
    size_t n = len;
    size_t cap = readable;
    bool minified = false;
    if (!compact || readable < len + KC__SJ_PADDING ||
        static_cast<unsigned char>(line[len]) > 0x20) {
        int r = make_compact(ctx, line, len, &n, &minified, e);
        if (r)
            return r;
        text = ctx->buf;
        cap = ctx->cap;
    }
    return unminify_error(decode_line(ctx, text, n, cap, strict, fn, ud, e), e, line, len,
                          minified);
}

} /* extern "C" */

KC_SJ_END_OF_FILE
