/*
 * sj_list.cpp — a LIST response body through simdjson On-Demand: list kind/apiVersion and
 * metadata (resourceVersion, continue, remainingItemCount, shardInfo.selector), and each items[]
 * element walked by the shared walker (sj_meta.cpp) and handed to the item callback as it is
 * reached.
 *
 * kind/apiVersion must be known before items are delivered (they are injected into items that
 * lack them); they normally come first. When items come first, one look-ahead pass over the
 * top-level keys finds them, then the document is rewound. The body is parsed in place when the
 * caller guarantees padding, else from a copy in the context's scratch; items are not made compact
 * here (list.c checks each item and re-decodes one with whitespace through kc__sj_object).
 * Members read (kind, apiVersion, metadata, items; resourceVersion, continue, remainingItemCount)
 * may appear once; the others go through walker::skip (validated in strict mode). Bodies over
 * KC__SJ_LIST_WINDOW_MIN are walked in windows of a few MiB (list_windowed, below).
 */
#include "json/sj_internal.hpp"
#include "json/sj_skip.hpp"

#include <atomic>

using namespace kc_sj;

extern "C" {

namespace
{

/* metadata.shardInfo (KEP-5866): its selector, the server's canonical echo of shardSelector. */
int shard_info(walker &w, od::value &v, kc__sj_list_info &info)
{
    od::object so;
    bool present = false;
    if (int r = w.opt_object(v, so, &present, "list metadata.shardInfo"))
        return r;
    if (!present)
        return 0;
    info.has_shard_info = true;
    unsigned seen = 0;
    for (auto sr : so) {
        od::field sf;
        if (auto c = std::move(sr).get(sf))
            return w.err(c, "list metadata.shardInfo");
        if (int r = w.key(sf, "list metadata.shardInfo key"))
            return r;
        od::raw_json_string sk = sf.key();
        int r;
        if (sk.unsafe_is_equal("selector")) {
            if (!(r = w.once(&seen, 1, sk.raw(), "list metadata.shardInfo.selector")))
                r = w.opt_string(sf.value(), &info.shard_selector,
                                 "list metadata.shardInfo.selector");
        } else {
            r = w.skip(sf.value(), "list metadata.shardInfo");
        }
        if (r)
            return r;
    }
    return 0;
}

/* metadata of the list: resourceVersion, continue, remainingItemCount, shardInfo into info. */
int list_metadata(walker &w, od::value &v, kc__sj_list_info &info)
{
    od::object mo;
    bool present = false;
    if (int r = w.opt_object(v, mo, &present, "list metadata"))
        return r;
    if (!present)
        return 0;
    unsigned seen = 0;
    for (auto mr : mo) {
        od::field mf;
        if (auto c = std::move(mr).get(mf))
            return w.err(c, "list metadata");
        if (int r = w.key(mf, "list metadata key"))
            return r;
        od::raw_json_string mk = mf.key();
        int r = 0;
        if (mk.unsafe_is_equal("resourceVersion")) {
            if (!(r = w.once(&seen, 1, mk.raw(), "list metadata.resourceVersion")))
                r = w.opt_string(mf.value(), &info.rv, "list metadata.resourceVersion");
            info.has_rv = info.rv.n > 0;
        } else if (mk.unsafe_is_equal("continue")) {
            if (!(r = w.once(&seen, 2, mk.raw(), "list metadata.continue")))
                r = w.opt_string(mf.value(), &info.cont, "list metadata.continue");
            info.has_cont = info.cont.n > 0;
        } else if (mk.unsafe_is_equal("shardInfo")) {
            if (!(r = w.once(&seen, 8, mk.raw(), "list metadata.shardInfo")))
                r = shard_info(w, mf.value(), info);
        } else if (mk.unsafe_is_equal("remainingItemCount")) {
            if ((r = w.once(&seen, 4, mk.raw(), "list metadata.remainingItemCount")))
                return r;
            const char *vat = mf.value().raw_json_token().data();
            bool isnull = false;
            if (auto c = mf.value().is_null().get(isnull))
                return w.err(c, "list metadata.remainingItemCount");
            if (isnull)
                continue;
            if (mf.value().get_int64().get(info.remaining))
                return w.type_err("list metadata.remainingItemCount", "an integer", vat);
            info.has_remaining = true;
        } else {
            r = w.skip(mf.value(), "list metadata");
        }
        if (r)
            return r;
    }
    return 0;
}

/* kind or apiVersion (key k) of the list into info. */
int list_type(walker &w, od::field &f, od::raw_json_string k, kc__sj_list_info &info,
              unsigned *seen)
{
    bool is_kind = k.raw()[0] == 'k';
    const char *what = is_kind ? "list kind" : "list apiVersion";
    if (int r = w.once(seen, is_kind ? 1 : 2, k.raw(), what))
        return r;
    string_view tok = tok_trim(f.value().raw_json_token());
    kc__sj_str s = {nullptr, 0};
    if (int r = w.opt_string(f.value(), &s, what))
        return r;
    if (is_kind) {
        info.kind = s, info.raw_kind = {tok.data(), tok.size()}, info.has_kind = s.n > 0;
    } else {
        info.api_version = s, info.raw_api_version = {tok.data(), tok.size()};
        info.has_api_version = s.n > 0;
    }
    return 0;
}

/* r, with "items[i]: " put before e's message (which item of the list it is about). */
__attribute__((cold, noinline)) int item_error(int r, kc__sj_err *e, size_t i)
{
    char head[32];
    int n = snprintf(head, sizeof head, "items[%zu]: ", i);
    size_t len = strnlen(e->msg, sizeof e->msg - 1);
    if (n <= 0 || strncmp(e->msg, head, static_cast<size_t>(n)) == 0)
        return r;
    size_t keep = len + static_cast<size_t>(n) < sizeof e->msg ? len : sizeof e->msg - 1 - n;
    memmove(e->msg + n, e->msg, keep);
    memcpy(e->msg, head, static_cast<size_t>(n));
    e->msg[n + keep] = '\0';
    return r;
}

/* One items[] element: walked, then handed to item_fn. *end: just after its closing brace.
 * *cb: the error is item_fn's (not the text's). Errors name the element (items[i]: …). */
int list_item(walker &w, od::value &item, kc__sj_list_info &info, kc__sj_item_fn item_fn, void *ud,
              const char **end, bool *cb)
{
    const char *start = item.raw_json_token().data();
    od::object io;
    if (int r = w.req_object(item, io, "an items[] element"))
        return item_error(r, w.e, info.n_items);
    kc__sj_meta m = {};
    if (int r = w.object(io, start, &m))
        return item_error(r, w.e, info.n_items);
    *end = m.text + m.len;
    int r = item_fn(ud, &info, &m, w.e);
    *cb = r != 0;
    if (r)
        return item_error(r, w.e, info.n_items);
    info.n_items++;
    return 0;
}

/* ---- large bodies, in windows -------------------------------------------------------------
 *
 * Stage 1 indexes a whole document before On-Demand walks it: 4 bytes per structural character,
 * so a 600 MB body (100k Pods in one LIST response, as a kube-apiserver answers a LIST at
 * resourceVersion=0 from its watch cache, whatever the limit) needs ~400 MB of index that a cold
 * process faults in 4 KiB at a time before the first item is decoded. Bodies over
 * KC__SJ_LIST_WINDOW_MIN are decoded in windows instead, each a copy of a few MiB of the body in
 * the context's scratch, so the index and scratch stay window-sized and warm:
 *
 *   head   the body's start, until the top-level "items" key (kind, apiVersion, metadata read as
 *          by the one-shot walk, then copied out of the window);
 *   items  "[[" + body[from, to) + "]]" (first window) or "[[0 " + body[from, to) + "]]" (later
 *          ones: from is just after the last item delivered, so the text goes on with "," or
 *          "]"; the 0 is a dummy element, skipped, and the space keeps it from running into what
 *          follows — "0U" would be one unread token; the inner array puts items as deep as in
 *          the list object, for depth limits). Every item walked completely is delivered; the first
 *          that is not — the window ends inside it — starts the next window. A window that
 *          delivers nothing doubles (an item larger than a window, or an error, which the last
 *          window reports with its offset in the body), but never past the item size limit
 *          (max_item, the raw text list.c would accept): a window of more than that which
 *          delivers nothing is the item's KC_ETOOLARGE, so one huge item costs a window of
 *          scratch, not its size (issue 29 point 6) — nor does a window end moved past a string
 *          (below) go further than that;
 *   tail   "{\"\":0 " + what follows items' "]" (normally "}"): members after items, duplicates
 *          and trailing data checked as in one pass.
 * A window must not end inside a string or a UTF-8 sequence (stage 1 rejects both): the end is
 * put just after a "},{" found past the nominal size (an item boundary unless it is inside a
 * string), moved back to a UTF-8 sequence's first byte, and when stage 1 still finds an unclosed
 * string it moves past that string's closing quote (a '"' not escaped by an odd run of '\').
 * Items before both kind and apiVersion (look_ahead) are walked twice: once delivering nothing,
 * to read them from the tail, then as usual. Anything else unusual (no items, a head larger than
 * the body's window sizes) leaves the body to the one-shot walk, which decides as before.
 */
std::atomic<size_t> window_min{0}, window_len{0};

size_t list_window_min()
{
    size_t v = window_min.load(std::memory_order_relaxed);
    return v ? v : KC__SJ_LIST_WINDOW_MIN;
}

size_t list_window()
{
    size_t v = window_len.load(std::memory_order_relaxed);
    return v ? v : KC__SJ_LIST_WINDOW;
}

struct wlist {
    kc__sj_ctx *ctx;
    const char *body;
    size_t len;
    bool strict;
    kc__sj_err *e;
    size_t max_item; /* an item's raw text over this is KC_ETOOLARGE; 0 = no limit */
    od::document doc{};
    const char *text = nullptr; /* the window's text in ctx->buf … */
    size_t tlen = 0;            /* … its length without the closing character load adds */
    int64_t bias = 0;           /* … body offset of text[0] */
};

/* For a window end `to` inside a string (the window starts outside one, at from): just after the
 * string's closing quote; len when the body ends first. */
size_t after_string(const char *b, size_t from, size_t to, size_t len)
{
    for (size_t i = to; i < len; i++) {
        const char *q = static_cast<const char *>(memchr(b + i, '"', len - i));
        if (!q)
            return len;
        size_t k = static_cast<size_t>(q - b), bs = 0;
        while (k - bs > from && b[k - bs - 1] == '\\')
            bs++;
        if (!(bs & 1))
            return k + 1;
        i = k;
    }
    return len;
}

/* prefix + body[from, *to) + close into ctx->buf, stage 1 into L.doc; *to: the end used. close
 * makes the last structural character match the first, which On-Demand requires of a document's
 * root before it walks it. A window ending inside a string is moved past its end, but not past
 * stop (0: the body's end, else an items window's bound): a string still open there is cut at
 * stop and closed with a quote, so the items before it are walked as usual and the one holding
 * it ends early; *cut (may be NULL) is then set. */
int load(wlist &L, const char *prefix, size_t plen, size_t from, size_t *to, const char *close,
         size_t stop = 0, bool *cut = nullptr)
{
    size_t end = stop && stop < L.len ? stop : L.len;
    size_t clen = strlen(close);
    size_t t = *to;
    bool quote = false;
    for (int tries = 0;; tries++) {
        while (t < L.len && t > from && (static_cast<unsigned char>(L.body[t]) & 0xC0) == 0x80)
            t--;
        if (quote) { /* the added quote must not be escaped by the text's last backslash */
            size_t bs = 0;
            while (t - bs > from && L.body[t - bs - 1] == '\\')
                bs++;
            t -= bs & 1;
        }
        size_t q = quote ? 1 : 0, n = plen + (t - from) + q + clen;
        if (!reserve(L.ctx, n))
            return fail(L.e, KC_ENOMEM, -1, "out of memory for a %zu-byte scratch buffer", n);
        char *b = L.ctx->buf;
        memcpy(b, prefix, plen);
        memcpy(b + plen, L.body + from, t - from);
        if (quote)
            b[n - clen - 1] = '"';
        memcpy(b + n - clen, close, clen);
        memset(b + n, 0, KC__SJ_PADDING);
        L.text = b, L.tlen = n - clen - q;
        L.bias = static_cast<int64_t>(from) - static_cast<int64_t>(plen);
        error_code why = simdjson::SUCCESS;
        int r = iterate(L.ctx, b, n, L.ctx->cap, L.doc, L.e, L.bias, &why);
        *to = t;
        if (!r || why != simdjson::UNCLOSED_STRING || t == L.len || quote)
            return r;
        if (t >= end) {
            if (!cut)
                return r;
            *cut = quote = true;
            t = end;
            continue;
        }
        if (tries >= 2)
            return r;
        t = after_string(L.body, from, t, end);
    }
}

/* The head's strings point into the window: copied into ctx, which outlives the windows. */
void keep(kc__sj_ctx *ctx, kc__sj_list_info &info)
{
    kc__sj_str *f[] = {&info.kind, &info.api_version, &info.raw_kind,      &info.raw_api_version,
                       &info.rv,   &info.cont,        &info.shard_selector};
    static_assert(sizeof f / sizeof f[0] == sizeof ctx->list_head / sizeof ctx->list_head[0],
                  "one kept string per member");
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i]->p) {
            ctx->list_head[i].assign(f[i]->p, f[i]->n);
            f[i]->p = ctx->list_head[i].data();
        }
}

/* One member of the list object in the head or the tail: kind, apiVersion and metadata into info,
 * others skipped. items: *at = its value's first byte when at is given (the head stops there),
 * else a duplicate (the tail). */
int list_member(walker &w, od::field &f, kc__sj_list_info &info, unsigned *seen, const char **at)
{
    if (int r = w.key(f, "list key"))
        return r;
    od::raw_json_string k = f.key();
    if (k.unsafe_is_equal("kind") || k.unsafe_is_equal("apiVersion"))
        return list_type(w, f, k, info, seen);
    if (k.unsafe_is_equal("metadata")) {
        if (int r = w.once(seen, 4, k.raw(), "list metadata"))
            return r;
        return list_metadata(w, f.value(), info);
    }
    if (k.unsafe_is_equal("items")) {
        if (!at)
            return w.once(seen, 8, k.raw(), "list items");
        *at = f.value().raw_json_token().data();
        return 0;
    }
    return w.skip(f.value(), "list");
}

/* The members before items into info; *items: body offset just after items' '['. 2: neither
 * kind nor apiVersion came before items (look_ahead); 1: not for windows (the one-shot walk
 * decides). Windows are cut at their nominal end even inside a
 * string (load's stop: a huge first item's string is not copied whole); what is read is used
 * only when the items key was reached, and so lies before the cut. */
int head(wlist &L, kc__sj_list_info &info, unsigned *seen, size_t *items)
{
    for (size_t win = list_window(); win < L.len; win *= 2) {
        size_t to = win;
        bool cut = false;
        if (load(L, "", 0, 0, &to, "}", win, &cut) || to == L.len)
            continue;
        walker w{L.doc, L.text, L.text + L.tlen, L.bias, L.e, L.ctx, L.strict};
        info = {};
        *seen = 0;
        od::object top;
        if (w.top_object(top, "list body"))
            continue;
        const char *at = nullptr;
        for (auto fr : top) {
            od::field f;
            if (std::move(fr).get(f) || list_member(w, f, info, seen, &at))
                break;
            if (!at)
                continue;
            if (*at != '[')
                return 1;
            *seen |= 8;
            *items = static_cast<size_t>(at - L.text) + 1;
            keep(L.ctx, info);
            return info.has_kind || info.has_api_version ? 0 : 2;
        }
    }
    return 1;
}

/* A window of more than max_item bytes from `from` delivered no item (issue 29 point 6): the item
 * there is over the limit, and is rejected now — at the cost of this window, not of its whole
 * size (a 200 MB item cost 790 MiB of scratch when the window doubled until the item fitted). A
 * fault the walk found within the limit (r, not a window that merely ended early) is reported
 * as it is. */
int too_large(wlist &L, size_t lead, int r, bool early)
{
    if (r && !early &&
        (r != KC_EPARSE ||
         (L.e->offset >= 0 && static_cast<size_t>(L.e->offset) < lead + L.max_item)))
        return r;
    return fail(L.e, KC_ETOOLARGE, static_cast<int64_t>(lead),
                "items[] element at byte %zu: no end within %zu bytes, over the object size "
                "limit (kc_decode_opts.max_object_size)",
                lead, L.max_item);
}

/* The first byte at or after from that is not whitespace or a comma (an item's first byte). */
size_t skip_sep(const wlist &L, size_t from)
{
    while (from < L.len && (L.body[from] == ',' || L.body[from] == ' ' || L.body[from] == '\t' ||
                            L.body[from] == '\n' || L.body[from] == '\r'))
        from++;
    return from;
}

/* items[] from body offset from (just after '['); *tail: just after its ']'. */
int items(wlist &L, size_t from, kc__sj_list_info &info, kc__sj_item_fn item_fn, void *ud,
          size_t *tail)
{
    bool first = true;
    for (size_t win = list_window();;) {
        size_t to = L.len - from > win ? from + win : L.len;
        if (to < L.len) { /* end just after an item's '}' when one is near */
            size_t look = L.len - to < 65536 ? L.len - to : 65536;
            if (const void *b = memmem(L.body + to, look, "},{", 3))
                to = static_cast<size_t>(static_cast<const char *>(b) - L.body) + 1;
        }
        size_t plen = first ? 2 : 4, done = from, n = 0;
        bool early = false; /* r: the window ended before items did, not a fault in the text */
        size_t lead = L.max_item ? skip_sep(L, from) : from;     /* the next item's first byte */
        size_t stop = L.max_item ? lead + L.max_item + 8192 : 0; /* never a longer window */
        int r = load(L, first ? "[[" : "[[0 ", plen, from, &to, "]]", stop, &early);
        bool last = to == L.len;
        if (!r) {
            walker w{L.doc, L.text, L.text + L.tlen, L.bias, L.e, L.ctx, L.strict};
            info.text_base = L.text, info.base_off = L.bias;
            od::array outer, arr; /* items nest as deep as in the list object */
            od::array_iterator it;
            od::value inner;
            if (auto c = L.doc.get_array().get(outer))
                r = w.err(c, "items");
            else if (auto c2 = outer.begin().get(it))
                r = w.err(c2, "items");
            else if (auto c3 = (*it).get(inner))
                r = w.err(c3, "items");
            else if (auto c4 = inner.get_array().get(arr))
                r = w.err(c4, "items");
            else {
                bool dummy = !first;
                for (auto er : arr) {
                    od::value el;
                    if (auto c = std::move(er).get(el)) {
                        r = w.err(c, "items");
                        break;
                    }
                    if (dummy) {
                        dummy = false;
                        continue;
                    }
                    const char *end = nullptr;
                    bool cb = false;
                    if ((r = list_item(w, el, info, item_fn, ud, &end, &cb))) {
                        if (cb)
                            return r;
                        break;
                    }
                    done = from + static_cast<size_t>(end - L.text) - plen;
                    n++;
                }
            }
            if (!r) { /* closed: by a ']' of the body, or by the window's own */
                size_t p = done;
                while (p < to && (L.body[p] == ' ' || L.body[p] == '\t' || L.body[p] == '\n' ||
                                  L.body[p] == '\r'))
                    p++;
                if (p < to && L.body[p] == ']') {
                    *tail = p + 1;
                    return 0;
                }
                r = fail(L.e, KC_EPARSE, static_cast<int64_t>(p),
                         "items: the text ends early (truncated?)");
                early = true;
            }
        }
        if (last)
            return r;
        if (n == 0) {
            if (L.max_item && to > lead && to - lead > L.max_item + 4096)
                return too_large(L, lead, r, early);
            win = win > (L.len - from) / 2 ? L.len - from : win * 2;
            if (L.max_item && win > lead - from + L.max_item + 8192)
                win = lead - from + L.max_item + 8192; /* enough to tell, never a huge item */
        } else {
            from = done;
            first = false;
        }
    }
}

/* What follows items' ']' as the rest of the list object. */
int tail(wlist &L, size_t from, kc__sj_list_info &info, unsigned *seen)
{
    size_t to = L.len;
    if (int r = load(L, "{\"\":0 ", 6, from, &to, ""))
        return r;
    walker w{L.doc, L.text, L.text + L.tlen, L.bias, L.e, L.ctx, L.strict};
    od::object top;
    if (int r = w.top_object(top, "list body"))
        return r;
    for (auto fr : top) {
        od::field f;
        if (auto c = std::move(fr).get(f))
            return w.err(c, "list");
        if (int r = list_member(w, f, info, seen, nullptr))
            return r;
    }
    if (!at_end(L.doc))
        return fail(L.e, KC_EPARSE, w.here(), "trailing data after the list object");
    return 0;
}

int skip_item(void *, const kc__sj_list_info *, const kc__sj_meta *, kc__sj_err *)
{
    return 0;
}

/* Items come before kind and apiVersion, which are injected into them (a hostile order: an API
 * server writes them first): as the one pass looks ahead for them, a first pass in windows walks
 * items delivering nothing — each item bounded as in the second — and reads what follows them;
 * kind and apiVersion go into info (kept). */
int look_ahead(wlist &L, size_t from, kc__sj_list_info &info, unsigned seen)
{
    kc__sj_list_info ahead = info;
    size_t end = 0;
    int r = items(L, from, ahead, skip_item, nullptr, &end);
    if (!r)
        r = tail(L, end, ahead, &seen);
    if (r)
        return r;
    info.kind = ahead.kind, info.raw_kind = ahead.raw_kind, info.has_kind = ahead.has_kind;
    info.api_version = ahead.api_version, info.raw_api_version = ahead.raw_api_version;
    info.has_api_version = ahead.has_api_version;
    keep(L.ctx, info);
    return 0;
}

/* The body in windows; *fallback: not for windows (nothing was delivered). */
int list_windowed(kc__sj_ctx *ctx, const char *body, size_t len, bool strict, size_t max_item,
                  kc__sj_item_fn item_fn, kc__sj_list_fn list_fn, void *ud, kc__sj_err *e,
                  bool *fallback)
{
    wlist L{ctx, body, len, strict, e, max_item};
    kc__sj_list_info info = {};
    unsigned seen = 0;
    size_t from = 0, end = 0;
    int h = head(L, info, &seen, &from);
    if (h == 1) {
        *fallback = true;
        return 0;
    }
    int r = h == 2 ? look_ahead(L, from, info, seen) : 0;
    if (!r)
        r = items(L, from, info, item_fn, ud, &end);
    if (!r)
        r = tail(L, end, info, &seen);
    if (r) { /* a token load added (the closing bracket, the padding after it) is the body's end */
        if (e->offset > static_cast<int64_t>(len))
            e->offset = static_cast<int64_t>(len);
        return r;
    }
    info.text_base = L.text, info.base_off = L.bias;
    return list_fn(ud, &info, e);
}

} // namespace

void kc__sj_list_window_set(size_t min_len, size_t window)
{
    window_min.store(min_len, std::memory_order_relaxed);
    window_len.store(window, std::memory_order_relaxed);
}

int kc__sj_list(kc__sj_ctx *ctx, const char *body, size_t len, bool padded, bool strict,
                size_t max_item, kc__sj_item_fn item_fn, kc__sj_list_fn list_fn, void *ud,
                kc__sj_err *e)
{
    if (len > list_window_min()) {
        bool fallback = false;
        int r = list_windowed(ctx, body, len, strict, max_item, item_fn, list_fn, ud, e, &fallback);
        if (!fallback)
            return r;
    }
    const char *text = body;
    size_t cap = len + KC__SJ_PADDING;
    /* In place only when the byte after the body cannot be taken for a structural character
     * (simdjson peeks at text[len] on malformed input). */
    if (padded && static_cast<unsigned char>(body[len]) > 0x20)
        padded = false;
    if (!padded) {
        if (!reserve(ctx, len))
            return fail(e, KC_ENOMEM, -1, "out of memory for a %zu-byte scratch buffer", len);
        memcpy(ctx->buf, body, len);
        memset(ctx->buf + len, 0, KC__SJ_PADDING);
        text = ctx->buf;
        cap = ctx->cap;
    }
    od::document doc;
    int r = iterate(ctx, text, len, cap, doc, e, 0);
    if (r)
        return r;
    walker w{doc, text, text + len, 0, e, ctx, strict};
    kc__sj_list_info info = {};
    info.text_base = text;

    /* kind/apiVersion must be known before items are delivered; they normally come first. When
     * items come first, one look-ahead pass over the top-level keys finds them, then we rewind. */
    bool lookahead = false, looked = false;
again:
    od::object top;
    if ((r = w.top_object(top, "list body")))
        return r;
    unsigned seen = 0;
    for (auto fr : top) {
        od::field f;
        if (auto c = std::move(fr).get(f))
            return w.err(c, "list");
        if (!lookahead && (r = w.key(f, "list key")))
            return r;
        od::raw_json_string k = f.key();
        if (k.unsafe_is_equal("kind") || k.unsafe_is_equal("apiVersion")) {
            if (looked && !lookahead) { /* already known (and read) in the look-ahead pass */
                bool is_kind = k.raw()[0] == 'k';
                if ((r = w.once(&seen, is_kind ? 1 : 2, k.raw(),
                                is_kind ? "list kind" : "list apiVersion")))
                    return r;
                continue;
            }
            if ((r = list_type(w, f, k, info, &seen)))
                return r;
        } else if (lookahead) {
            continue;
        } else if (k.unsafe_is_equal("metadata")) {
            if ((r = w.once(&seen, 4, k.raw(), "list metadata")) ||
                (r = list_metadata(w, f.value(), info)))
                return r;
        } else if (k.unsafe_is_equal("items")) {
            if (!info.has_kind && !info.has_api_version && !looked) {
                doc.rewind();
                lookahead = looked = true;
                goto again;
            }
            if ((r = w.once(&seen, 8, k.raw(), "list items")))
                return r;
            r = w.each_element(f.value(), "items", [&](od::value &item) -> int {
                const char *end;
                bool cb;
                return list_item(w, item, info, item_fn, ud, &end, &cb);
            });
            if (r)
                return r;
        } else if ((r = w.skip(f.value(), "list"))) {
            return r;
        }
    }
    if (lookahead) {
        /* get_string() results live in the parser's string buffer, reused after a rewind. */
        ctx->list_kind.assign(info.kind.p ? info.kind.p : "", info.kind.n);
        ctx->list_api_version.assign(info.api_version.p ? info.api_version.p : "",
                                     info.api_version.n);
        info.kind = {ctx->list_kind.data(), ctx->list_kind.size()};
        info.api_version = {ctx->list_api_version.data(), ctx->list_api_version.size()};
        doc.rewind();
        lookahead = false;
        goto again;
    }
    if (!at_end(doc))
        return fail(e, KC_EPARSE, w.here(), "trailing data after the list object");
    return list_fn(ud, &info, e);
}

} /* extern "C" */

KC_SJ_END_OF_FILE
