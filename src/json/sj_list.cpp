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
 * may appear once; the others go through walker::skip (validated in strict mode).
 */
#include "json/sj_internal.hpp"
#include "json/sj_skip.hpp"

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

} // namespace

int kc__sj_list(kc__sj_ctx *ctx, const char *body, size_t len, bool padded, bool strict,
                kc__sj_item_fn item_fn, kc__sj_list_fn list_fn, void *ud, kc__sj_err *e)
{
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
            bool is_kind = k.raw()[0] == 'k';
            const char *what = is_kind ? "list kind" : "list apiVersion";
            if ((r = w.once(&seen, is_kind ? 1 : 2, k.raw(), what)))
                return r;
            if (looked && !lookahead)
                continue; /* already known (and read) in the look-ahead pass */
            string_view tok = tok_trim(f.value().raw_json_token());
            kc__sj_str s = {nullptr, 0};
            if ((r = w.opt_string(f.value(), &s, what)))
                return r;
            if (is_kind) {
                info.kind = s, info.raw_kind = {tok.data(), tok.size()}, info.has_kind = s.n > 0;
            } else {
                info.api_version = s, info.raw_api_version = {tok.data(), tok.size()};
                info.has_api_version = s.n > 0;
            }
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
                const char *start = item.raw_json_token().data();
                od::object io;
                if (int r2 = w.req_object(item, io, "an items[] element"))
                    return r2;
                kc__sj_meta m = {};
                if (int r2 = w.object(io, start, &m))
                    return r2;
                return item_fn(ud, &info, &m, e);
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
