/*
 * sj_watch.cpp — one watch event line ({"type":…,"object":{…}}) through simdjson On-Demand.
 *
 * A compact line with KC__SJ_PADDING readable bytes after it (the rest of the caller's chunk) is
 * parsed where it is; otherwise it is copied (or minified) into the context's scratch. The object
 * of a non-ERROR event is walked by the shared walker (sj_meta.cpp); an ERROR event's object (a
 * metav1.Status) is handed over raw, for status.c.
 */
#include "json/sj_internal.hpp"

using namespace kc_sj;

extern "C" {

int kc__sj_watch_line(kc__sj_ctx *ctx, const char *line, size_t len, size_t readable, bool compact,
                      kc__sj_event_fn fn, void *ud, kc__sj_err *e)
{
    const char *text = line;
    size_t n = len;
    size_t cap = readable;
    if (!compact || readable < len + KC__SJ_PADDING ||
        static_cast<unsigned char>(line[len]) > 0x20) {
        bool was = false;
        int r = make_compact(ctx, line, len, &n, &was, e);
        if (r)
            return r;
        text = ctx->buf;
        cap = ctx->cap;
        compact = was;
    }
    od::document doc;
    int r = iterate(ctx, text, n, cap, doc, e, compact ? 0 : -1);
    if (r)
        return r;
    walker w{doc, text, text + n, compact ? 0 : -1, e, ctx};
    od::object top;
    if ((r = w.top_object(top, "watch event")))
        return r;
    kc__sj_event ev = {};
    kc__sj_meta m = {};
    bool have_obj = false, is_error = false;
    for (auto fr : top) {
        od::field f;
        if (auto c = std::move(fr).get(f))
            return w.err(c, "watch event");
        od::raw_json_string k = f.key();
        if (k.unsafe_is_equal("type")) {
            if ((r = w.opt_string(f.value(), &ev.type, "watch event type")))
                return r;
            is_error = ev.type.n == 5 && memcmp(ev.type.p, "ERROR", 5) == 0;
        } else if (k.unsafe_is_equal("object")) {
            const char *start = f.value().raw_json_token().data();
            od::object o;
            if ((r = w.req_object(f.value(), o, "watch event object")))
                return r;
            if (is_error) {
                string_view raw;
                if (auto c = o.raw_json().get(raw))
                    return w.err(c, "watch event object");
                ev.status_json = {raw.data(), raw.size()};
            } else {
                m = kc__sj_meta{};
                if ((r = w.object(o, start, &m)))
                    return r;
                ev.status_json = {m.text, m.len};
            }
            have_obj = true;
        }
    }
    if (!at_end(doc))
        return fail(e, KC_EPARSE, w.here(), "trailing data after the watch event");
    if (ev.type.n == 0)
        return fail(e, KC_EPARSE, 0, "watch event without a type");
    if (!have_obj)
        return fail(e, KC_EPARSE, 0, "watch event without an object");
    ev.obj = is_error ? nullptr : &m;
    return fn(ud, &ev, e);
}

} /* extern "C" */

KC_SJ_END_OF_FILE
