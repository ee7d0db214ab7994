/*
 * sj.cpp — simdjson On-Demand contexts and the plumbing every decoder in the sj*.cpp files shares
 * (see sj_internal.hpp for the list of files and the build note on the instruction set).
 *
 * Why On-Demand: it builds no DOM. Stage 1 indexes the structural characters of the text (and
 * validates UTF-8 and string termination); we then walk that index once, reading only the fields we
 * need and skipping every other sub-tree by depth counting (sj_meta.cpp). What we find is reported
 * as (pointer, length) spans in the C structs of sj.h; building objects is C.
 *
 * Text handed to simdjson must be compact (no whitespace outside strings) because the C side cuts
 * spans out of it byte-exactly, and padded (KC__SJ_PADDING readable bytes after it). Inputs are
 * copied into a context's scratch buffer until a byte <= 0x20 is seen (copy_until_ws, AVX2); then
 * the text is minified instead (kc__sj_minify, sj_minify.cpp), which never changes the text's
 * tokens: whitespace that separates two values ("1 0" would become "10") is rejected. LIST
 * bodies and watch lines that are already padded are decoded in place, uncopied.
 *
 * On-Demand only validates what it visits: skipped sub-trees are checked for UTF-8, string
 * termination and bracket balance, not full JSON grammar (see docs/decoding.md), unless the
 * caller asks for KC_DECODE_STRICT (sj_strict.cpp); objects with more opening brackets than the
 * depth limit get a full DOM validation (kc__sj_depth_check).
 *
 * Error offsets are byte offsets into the caller's text: stage-1 errors, which simdjson reports
 * without a position, are located by locate.c, and offsets into a minified copy are mapped back
 * (unminify_error).
 */
#include "json/sj_internal.hpp"

#include "core/populate.h"

namespace kc_sj
{

int fail(kc__sj_err *e, int code, int64_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->code = code;
    e->offset = off;
    return code;
}

/* Maps a simdjson error to a KC code and message. */
int sjfail(kc__sj_err *e, error_code err, int64_t off, const char *what)
{
    int code = KC_EPARSE;
    if (err == simdjson::MEMALLOC)
        code = KC_ENOMEM;
    else if (err == simdjson::CAPACITY)
        code = KC_ETOOLARGE;
    return fail(e, code, off, "%s: %s", what, simdjson::error_message(err));
}

bool reserve(kc__sj_ctx *ctx, size_t n)
{
    if (ctx->cap >= n + KC__SJ_PADDING)
        return true;
    size_t want = n + KC__SJ_PADDING;
    if (want < 4096)
        want = 4096;
    char *p = static_cast<char *>(malloc(want));
    if (!p)
        return false;
    /* A big scratch is fresh pages (an mmap) about to be written whole: populate them in one call
     * instead of a fault each (1.5-3x cheaper per page here; docs/benchmarks-journal.md, wave 2.6).
     * From 32 MiB (glibc's largest dynamic mmap threshold: the block is its own mapping, not part
     * of the heap, which other allocations reuse after it is freed) on huge pages where
     * core/populate.c measures them cheaper (the 2 MiB-aligned part). */
    if (want >= (size_t(1) << 20))
        (void)kc__mem_populate_ex(p, want, want >= (size_t(32) << 20));
    free(ctx->buf);
    ctx->buf = p;
    ctx->cap = want;
    return true;
}

/* The parser's stage-1 index, populated when it grows for a big text.
 *
 * Why: stage 1 writes 4 bytes per structural character of the text into an index that simdjson
 * allocates with new[] when the parser grows — fresh memory, which stage 1 then faults in a
 * 4 KiB page at a time: ~0.9 bytes of index per byte of a Pod LIST page, so ~700 faults for a
 * page of 500 Pods, 8-14 ms of the first page's decode of every paged LIST on the VMs we measure
 * on (later pages reuse the index: ~1 ms each). Populated in one call, the same first decode takes
 * 2-5 ms. Only about the part stage 1 is about to write is populated (len bytes, for ~0.9 per byte
 * of a Pod page; denser text faults in the rest as before), so the RSS is what the faults would
 * have made resident anyway. Small pages, as for the scratch (reserve, above): an index under
 * 32 MiB may be part of glibc's heap, which must not be advised to use huge pages, and for a page
 * of 500 Pods they measured the same (first decode in a fresh process, 8 runs each: 5.4-8.3 ms
 * small, 5.5-8.4 ms huge, 8.5-12.9 ms not populated).
 *
 * How it reaches the index: ondemand::parser keeps its dom_parser_implementation (whose
 * structural_indexes is public) in a private member. An explicit instantiation may name a private
 * member ([temp.spec] in the C++ standard), so a template instantiated with its member pointer
 * hands it out without a cast. A simdjson that renames it stops this file compiling, loudly. */
template <auto M> struct parser_impl_access {
    friend std::unique_ptr<simdjson::internal::dom_parser_implementation> &
    parser_impl_of(od::parser &p)
    {
        return p.*M;
    }
};
template struct parser_impl_access<&od::parser::implementation>;
std::unique_ptr<simdjson::internal::dom_parser_implementation> &parser_impl_of(od::parser &p);

static void populate_index(od::parser *p, size_t len)
{
    if (len < (size_t(1) << 20))
        return; /* a small index: a few faults, and watch lines grow the parser in small steps */
    auto &impl = parser_impl_of(*p);
    if (impl && impl->structural_indexes) /* 4 bytes per byte of capacity */
        (void)kc__mem_populate_ex(impl->structural_indexes.get(), len,
                                  p->capacity() >= (size_t(8) << 20));
}

static od::parser *get_parser(kc__sj_ctx *ctx)
{
    if (!ctx->parser)
        ctx->parser.reset(new (std::nothrow) od::parser());
    return ctx->parser.get();
}

/* Copies n bytes; returns true when none of them is <= 0x20. When opens is not NULL, adds the
 * number of '{' and '[' bytes (an upper bound of the nesting depth) to *opens. */
static bool copy_compact(char *dst, const char *src, size_t n, size_t *opens)
{
    size_t i = 0;
    unsigned bad = 0;
    size_t open = 0;
#ifdef KC_SJ_AVX2
    const __m256i ws = _mm256_set1_epi8(0x20);
    const __m256i lb = _mm256_set1_epi8('{'), ls = _mm256_set1_epi8('[');
    __m256i acc = _mm256_setzero_si256();
    for (; i + 32 <= n; i += 32) {
        __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src + i));
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(dst + i), v);
        acc = _mm256_or_si256(acc, _mm256_cmpeq_epi8(_mm256_max_epu8(v, ws), ws));
        if (opens) {
            __m256i o = _mm256_or_si256(_mm256_cmpeq_epi8(v, lb), _mm256_cmpeq_epi8(v, ls));
            open += static_cast<size_t>(
                __builtin_popcount(static_cast<unsigned>(_mm256_movemask_epi8(o))));
        }
    }
    bad = static_cast<unsigned>(_mm256_movemask_epi8(acc));
#endif
    for (; i < n; i++) {
        dst[i] = src[i];
        bad |= static_cast<unsigned char>(src[i]) <= 0x20;
        open += src[i] == '{' || src[i] == '[';
    }
    if (opens)
        *opens += open;
    return bad == 0;
}

/* Copies src to dst up to the first byte <= 0x20 and returns its index; n when there is none (the
 * text is compact and copied whole). Stops early: text that is not compact is minified instead,
 * and pretty-printed text has whitespace within its first bytes. */
static size_t copy_until_ws(char *dst, const char *src, size_t n)
{
    size_t i = 0;
#ifdef KC_SJ_AVX2
    const __m256i ws = _mm256_set1_epi8(0x20);
    for (; i + 32 <= n; i += 32) {
        __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src + i));
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(dst + i), v);
        unsigned m = static_cast<unsigned>(
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(v, ws), ws)));
        if (m)
            return i + static_cast<size_t>(__builtin_ctz(m));
    }
#endif
    for (; i < n; i++) {
        if (static_cast<unsigned char>(src[i]) <= 0x20)
            return i;
        dst[i] = src[i];
    }
    return n;
}

/* Where in text a stage-1 error is (simdjson does not say); the start when it cannot tell. */
static int64_t stage1_error_at(error_code c, const char *text, size_t len)
{
    int64_t at = -1;
    if (c == simdjson::UTF8_ERROR)
        at = kc__json_bad_utf8(text, len);
    else if (c == simdjson::UNCLOSED_STRING)
        at = kc__json_unclosed_string(text, len);
    else if (c == simdjson::UNESCAPED_CHARS)
        at = kc__json_control_in_string(text, len);
    return at >= 0 ? at : 0;
}

int make_compact(kc__sj_ctx *ctx, const char *json, size_t len, size_t *out_len, bool *minified,
                 kc__sj_err *e)
{
    *minified = false;
    if (!reserve(ctx, len))
        return fail(e, KC_ENOMEM, -1, "out of memory for a %zu-byte scratch buffer", len);
    size_t k = copy_until_ws(ctx->buf, json, len);
    if (k < len && kc__sj_ws_outside_strings(json, len) == len) {
        /* whitespace only inside strings (a condition message): the text is its minified form */
        memcpy(ctx->buf + k, json + k, len - k);
        k = len;
    }
    if (k == len) {
        /* simdjson peeks at text[len] (its end sentinel) on malformed input: make the padding
         * deterministic and non-structural, never stale bytes of an earlier input. */
        memset(ctx->buf + len, 0, KC__SJ_PADDING);
        *out_len = len;
        return 0;
    }
    size_t n = 0;
    int64_t join = -1;
    if (kc__sj_minify(json, len, ctx->buf, &n, &join)) {
        if (join >= 0)
            return fail(e, KC_EPARSE, join,
                        "malformed JSON: a value follows another with only whitespace between "
                        "them (a ',' or ':' is missing)");
        return sjfail(e, simdjson::UNCLOSED_STRING,
                      stage1_error_at(simdjson::UNCLOSED_STRING, json, len), "malformed JSON");
    }
    *minified = true;
    memset(ctx->buf + n, 0, KC__SJ_PADDING);
    *out_len = n;
    return 0;
}

int iterate(kc__sj_ctx *ctx, const char *text, size_t len, size_t cap, od::document &doc,
            kc__sj_err *e, int64_t bias, error_code *why)
{
    od::parser *p = get_parser(ctx);
    if (!p)
        return fail(e, KC_ENOMEM, -1, "out of memory for a parser");
    if (p->capacity() < len) {
        /* Grow with a quarter of headroom: pages of a LIST differ by a few bytes, and an exact fit
         * would reallocate (fresh memory: page faults) on every page a little bigger than all
         * before it. */
        size_t want = len + len / 4;
        if (want > p->max_capacity())
            want = p->max_capacity();
        simdjson::error_code grown = p->allocate(want, p->max_depth());
        /* on failure iterate() allocates the exact size, or reports the failure */
        if (grown == simdjson::SUCCESS)
            populate_index(p, len);
    }
    auto res = p->iterate(text, len, cap);
    if (auto c = std::move(res).get(doc)) {
        if (why)
            *why = c;
        return sjfail(e, c, bias + stage1_error_at(c, text, len), "malformed JSON");
    }
    return 0;
}

} // namespace kc_sj

using namespace kc_sj;

/* ---- C API ---------------------------------------------------------------------------------- */

extern "C" {

kc__sj_ctx *kc__sj_ctx_new(void)
{
    return new (std::nothrow) kc__sj_ctx();
}

void kc__sj_ctx_free(kc__sj_ctx *ctx)
{
    delete ctx;
}

kc__sj_ctx *kc__sj_thread_ctx(void)
{
    static thread_local std::unique_ptr<kc__sj_ctx> tls;
    if (!tls)
        tls.reset(new (std::nothrow) kc__sj_ctx());
    return tls.get();
}

kc__sj_ctx *kc__sj_thread_list_ctx(void)
{
    static thread_local std::unique_ptr<kc__sj_ctx> tls;
    if (!tls)
        tls.reset(new (std::nothrow) kc__sj_ctx());
    return tls.get();
}

void kc__sj_ctx_set_shard(kc__sj_ctx *ctx, const struct kc_shard_selector *sel)
{
    if (!ctx)
        return;
    ctx->shard = sel;
    ctx->shard_field = kc_shard_selector_field(sel);
}

void kc__sj_ctx_trim(kc__sj_ctx *ctx, size_t keep)
{
    if (!ctx)
        return;
    if (ctx->cap > keep) {
        free(ctx->buf);
        ctx->buf = nullptr;
        ctx->cap = 0;
    }
    if (ctx->parser && ctx->parser->capacity() > keep)
        ctx->parser.reset();
    if (ctx->dom && ctx->dom->capacity() > keep)
        ctx->dom.reset();
    if (ctx->labels.capacity() > 4096)
        std::vector<kc__sj_label>().swap(ctx->labels);
}

bool kc__sj_copy_compact(char *dst, const char *src, size_t n, size_t *opens)
{
    return copy_compact(dst, src, n, opens);
}

int kc__sj_depth_check(kc__sj_ctx *ctx, const char *text, size_t len, size_t max_depth,
                       kc__sj_err *e)
{
    if (!ctx->dom || ctx->dom_depth != max_depth) {
        ctx->dom.reset(new (std::nothrow) simdjson::dom::parser());
        ctx->dom_depth = max_depth;
        if (!ctx->dom)
            return fail(e, KC_ENOMEM, -1, "out of memory for a parser");
    }
    if (ctx->dom->capacity() < len || ctx->dom->max_depth() != max_depth) {
        if (ctx->dom->allocate(len, max_depth))
            return fail(e, KC_ENOMEM, -1, "out of memory for a parser");
    }
    simdjson::dom::element el;
    error_code c = ctx->dom->parse(text, len, false).get(el);
    if (c == simdjson::DEPTH_ERROR)
        return fail(e, KC_EPARSE, -1, "JSON nested deeper than %zu levels", max_depth);
    if (c)
        return sjfail(e, c, -1, "malformed JSON");
    return 0;
}

size_t kc__sj_find_ws(const char *p, size_t n)
{
    size_t i = 0;
#ifdef KC_SJ_AVX2
    const __m256i ws = _mm256_set1_epi8(0x20);
    /* 128 bytes a round, as glibc's memchr does: a compact line (the common case) is one long
     * run without a hit, so the four compares are OR-ed into one test */
    for (; i + 128 <= n; i += 128) {
        const __m256i *q = reinterpret_cast<const __m256i *>(p + i);
        __m256i a = _mm256_loadu_si256(q), b = _mm256_loadu_si256(q + 1),
                c = _mm256_loadu_si256(q + 2), d = _mm256_loadu_si256(q + 3);
        __m256i any = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_max_epu8(a, ws), ws),
                            _mm256_cmpeq_epi8(_mm256_max_epu8(b, ws), ws)),
            _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_max_epu8(c, ws), ws),
                            _mm256_cmpeq_epi8(_mm256_max_epu8(d, ws), ws)));
        if (!_mm256_testz_si256(any, any))
            break; /* the 32-byte loop below finds the first hit in this round */
    }
    for (; i + 32 <= n; i += 32) {
        __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p + i));
        unsigned m = static_cast<unsigned>(
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(v, ws), ws)));
        if (m)
            return i + static_cast<size_t>(__builtin_ctz(m));
    }
#endif
    for (; i < n; i++)
        if (static_cast<unsigned char>(p[i]) <= 0x20)
            return i;
    return n;
}

int kc__sj_object(kc__sj_ctx *ctx, const char *json, size_t len, bool strict, kc__sj_obj_fn fn,
                  void *ud, kc__sj_err *e)
{
    kc__sj_meta m = {};
    bool minified = false;
    int r =
        with_compact_object(ctx, json, len, strict, "the text", e, &minified,
                            [&](walker &w, od::object &o) { return w.object(o, ctx->buf, &m); });
    if (!r)
        r = fn(ud, &m, e);
    return unminify_error(r, e, json, len, minified);
}

int64_t kc__sj_reference_pass(kc__sj_ctx *ctx, const char *text, size_t len, bool stage1_only)
{
    kc__sj_err e = {0, -1, ""};
    od::document doc;
    if (iterate(ctx, text, len, len + KC__SJ_PADDING, doc, &e, 0)) /* runs stage 1 */
        return e.code;
    if (stage1_only)
        return 0;
    od::object top;
    if (doc.get_object().get(top))
        return KC_EPARSE;
    int64_t n = 0;
    for (auto fr : top) {
        od::field f;
        if (std::move(fr).get(f))
            return KC_EPARSE;
        if (!f.key().unsafe_is_equal("items"))
            continue;
        od::array arr;
        if (f.value().get_array().get(arr))
            return KC_EPARSE;
        for (auto er : arr) {
            od::value v;
            if (std::move(er).get(v))
                return KC_EPARSE;
            n++; /* not touched: skipped when the iterator advances */
        }
    }
    return at_end(doc) ? n : static_cast<int64_t>(KC_EPARSE);
}

} /* extern "C" */

KC_SJ_END_OF_FILE
