/*
 * sj.cpp — the project's only C++ file: a thin C-callable wrapper around simdjson On-Demand.
 *
 * Why On-Demand: it builds no DOM. Stage 1 indexes the structural characters of the text (and
 * validates UTF-8 and string termination); we then walk that index once, reading only the fields we
 * need (kind, apiVersion, metadata.*) and skipping every other sub-tree by depth counting. What we
 * find is reported as (pointer, length) spans in the C structs of sj.h; building objects is C.
 *
 * Text handed to simdjson must be compact (no whitespace outside strings) because the C side cuts
 * spans out of it byte-exactly, and padded (KC__SJ_PADDING readable bytes after it). Inputs are
 * copied into a context's scratch buffer while checking for bytes <= 0x20; when one is seen the
 * text is minified with simdjson::minify instead. Watch lines that are already compact and padded
 * by the rest of the caller's chunk are decoded in place, uncopied.
 *
 * On-Demand only validates what it visits: skipped sub-trees are checked for UTF-8, string
 * termination and bracket balance, not full JSON grammar (see docs/decoding.md).
 *
 * Build note: On-Demand is compiled for one instruction set, the "builtin" one. With GCC on x86-64
 * we select simdjson's haswell kernel (AVX2, BMI, PCLMUL, LZCNT) for this file only, so the
 * library needs an x86-64-v3 CPU; define KC_SJ_PORTABLE to use the compiler's default target.
 */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(KC_SJ_PORTABLE)
#pragma GCC target("avx2,bmi,bmi2,pclmul,lzcnt,popcnt")
#define SIMDJSON_BUILTIN_IMPLEMENTATION haswell
#define KC_SJ_AVX2                      1
#include <immintrin.h>
#endif
#include <simdjson.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "json/sj.h"

namespace od = simdjson::ondemand;
using simdjson::error_code;
using std::string_view;

static_assert(KC__SJ_PADDING >= simdjson::SIMDJSON_PADDING, "padding");

struct kc__sj_ctx {
    std::unique_ptr<od::parser> parser;
    char *buf = nullptr; /* padded scratch */
    size_t cap = 0;
    std::vector<kc__sj_label> labels;
    std::vector<kc__sj_cause> causes;
    std::string list_kind, list_api_version;    /* survive a rewind of the parser */
    std::unique_ptr<simdjson::dom::parser> dom; /* full validation of rare, bracket-heavy objects */
    size_t dom_depth = 0;
    ~kc__sj_ctx()
    {
        free(buf);
    }
};

namespace
{

int fail(kc__sj_err *e, int code, int64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
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

/* A raw token runs up to the next structural character: drop trailing whitespace. */
string_view tok_trim(string_view t)
{
    size_t n = t.size();
    while (n && static_cast<unsigned char>(t[n - 1]) <= 0x20)
        n--;
    return t.substr(0, n);
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
    free(ctx->buf);
    ctx->buf = p;
    ctx->cap = want;
    return true;
}

od::parser *get_parser(kc__sj_ctx *ctx)
{
    if (!ctx->parser)
        ctx->parser.reset(new (std::nothrow) od::parser());
    return ctx->parser.get();
}

/* Copies n bytes; returns true when none of them is <= 0x20. When opens is not NULL, adds the
 * number of '{' and '[' bytes (an upper bound of the nesting depth) to *opens. */
bool copy_compact(char *dst, const char *src, size_t n, size_t *opens = nullptr)
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

/* Puts a compact, padded copy of json into ctx->buf; *out_len gets its length. */
int make_compact(kc__sj_ctx *ctx, const char *json, size_t len, size_t *out_len, bool *was_compact,
                 kc__sj_err *e)
{
    if (!reserve(ctx, len))
        return fail(e, KC_ENOMEM, -1, "out of memory for a %zu-byte scratch buffer", len);
    if (copy_compact(ctx->buf, json, len)) {
        /* simdjson peeks at text[len] (its end sentinel) on malformed input: make the padding
         * deterministic and non-structural, never stale bytes of an earlier input. */
        memset(ctx->buf + len, 0, KC__SJ_PADDING);
        *out_len = len;
        *was_compact = true;
        return 0;
    }
    *was_compact = false;
    size_t n = 0;
    error_code err = simdjson::minify(json, len, ctx->buf, n);
    if (err)
        return sjfail(e, err, -1, "malformed JSON");
    memset(ctx->buf + n, 0, KC__SJ_PADDING);
    *out_len = n;
    return 0;
}

/* ---- extracting one Kubernetes object ------------------------------------------------------- */

struct walker {
    od::document &doc;
    const char *base; /* start of the text given to simdjson */
    const char *end;  /* its end */
    int64_t off_bias; /* added to (p - base) for error offsets; <0 = offsets unknown */
    kc__sj_err *e;
    kc__sj_ctx *ctx;
    const char *obj_start = nullptr; /* '{' of the object being walked */

    int64_t off(const char *p) const
    {
        return off_bias < 0 || !p ? -1 : off_bias + (p - base);
    }
    int64_t here()
    {
        const char *p = nullptr;
        if (doc.current_location().get(p))
            return -1;
        return off(p);
    }
    const char *loc_or_end()
    {
        const char *p = nullptr;
        if (doc.current_location().get(p))
            return end;
        return p;
    }
    int err(error_code c, const char *what)
    {
        return sjfail(e, c, here(), what);
    }
    int type_err(const char *field, const char *want, const char *at)
    {
        return fail(e, KC_EPARSE, off(at), "%s is not %s", field, want);
    }

    /* A string field that may be null (= absent). */
    int opt_string(od::value &v, kc__sj_str *out, const char *field)
    {
        const char *at = v.raw_json_token().data();
        od::json_type t;
        if (auto c = v.type().get(t))
            return err(c, field);
        if (t == od::json_type::null)
            return 0;
        if (t != od::json_type::string)
            return type_err(field, "a string", at);
        string_view s;
        if (auto c = v.get_string().get(s))
            return err(c, field);
        out->p = s.data();
        out->n = s.size();
        return 0;
    }

    int owner_refs(od::value &v, kc__sj_meta *m)
    {
        const char *at = v.raw_json_token().data();
        od::json_type t;
        if (auto c = v.type().get(t))
            return err(c, "metadata.ownerReferences");
        if (t == od::json_type::null)
            return 0;
        if (t != od::json_type::array)
            return type_err("metadata.ownerReferences", "an array", at);
        od::array arr;
        if (auto c = v.get_array().get(arr))
            return err(c, "metadata.ownerReferences");
        for (auto er : arr) {
            od::value el;
            if (auto c = std::move(er).get(el))
                return err(c, "metadata.ownerReferences");
            const char *eat = el.raw_json_token().data();
            od::object o;
            if (el.get_object().get(o))
                return type_err("metadata.ownerReferences[] entry", "an object", eat);
            m->n_owners++;
            kc__sj_str uid = {nullptr, 0};
            bool ctrl = false;
            for (auto fr : o) {
                od::field f;
                if (auto c = std::move(fr).get(f))
                    return err(c, "metadata.ownerReferences");
                od::raw_json_string k = f.key();
                if (k.unsafe_is_equal("uid")) {
                    int r = opt_string(f.value(), &uid, "metadata.ownerReferences[].uid");
                    if (r)
                        return r;
                } else if (k.unsafe_is_equal("controller")) {
                    const char *vat = f.value().raw_json_token().data();
                    od::json_type ft;
                    if (auto c = f.value().type().get(ft))
                        return err(c, "metadata.ownerReferences[].controller");
                    if (ft == od::json_type::null)
                        continue;
                    if (ft != od::json_type::boolean)
                        return type_err("metadata.ownerReferences[].controller", "a boolean", vat);
                    if (auto c = f.value().get_bool().get(ctrl))
                        return err(c, "metadata.ownerReferences[].controller");
                }
            }
            if (ctrl && m->controller_uid.n == 0)
                m->controller_uid = uid;
        }
        return 0;
    }

    int labels(od::value &v)
    {
        const char *at = v.raw_json_token().data();
        od::json_type t;
        if (auto c = v.type().get(t))
            return err(c, "metadata.labels");
        if (t == od::json_type::null)
            return 0;
        if (t != od::json_type::object)
            return type_err("metadata.labels", "an object", at);
        od::object o;
        if (auto c = v.get_object().get(o))
            return err(c, "metadata.labels");
        for (auto fr : o) {
            od::field f;
            if (auto c = std::move(fr).get(f))
                return err(c, "metadata.labels");
            string_view k;
            if (auto c = f.unescaped_key().get(k))
                return err(c, "metadata.labels key");
            kc__sj_label l = {{k.data(), k.size()}, {nullptr, 0}};
            const char *vat = f.value().raw_json_token().data();
            od::json_type ft;
            if (auto c = f.value().type().get(ft))
                return err(c, "metadata.labels value");
            if (ft != od::json_type::string)
                return type_err("a metadata.labels value", "a string", vat);
            string_view s;
            if (auto c = f.value().get_string().get(s))
                return err(c, "metadata.labels value");
            l.value = {s.data(), s.size()};
            ctx->labels.push_back(l);
        }
        return 0;
    }

    int annotations(od::value &v, kc__sj_meta *m)
    {
        const char *at = v.raw_json_token().data();
        od::json_type t;
        if (auto c = v.type().get(t))
            return err(c, "metadata.annotations");
        if (t == od::json_type::null)
            return 0;
        if (t != od::json_type::object)
            return type_err("metadata.annotations", "an object", at);
        od::object o;
        if (auto c = v.get_object().get(o))
            return err(c, "metadata.annotations");
        for (auto fr : o) {
            od::field f;
            if (auto c = std::move(fr).get(f))
                return err(c, "metadata.annotations");
            const char *vat = f.value().raw_json_token().data();
            od::json_type ft;
            if (auto c = f.value().type().get(ft))
                return err(c, "metadata.annotations value");
            if (ft != od::json_type::string)
                return type_err("a metadata.annotations value", "a string", vat);
            if (f.key().unsafe_is_equal("k8s.io/initial-events-end")) {
                string_view s;
                if (auto c = f.value().get_string().get(s))
                    return err(c, "metadata.annotations value");
                m->initial_events_end = s == "true";
            }
        }
        return 0;
    }

    int metadata(od::value &v, kc__sj_meta *m)
    {
        const char *at = v.raw_json_token().data();
        od::object o;
        if (v.get_object().get(o))
            return type_err("metadata", "an object", at);
        for (auto fr : o) {
            od::field f;
            if (auto c = std::move(fr).get(f))
                return err(c, "metadata");
            od::raw_json_string k = f.key();
            const char *ks = k.raw();
            int r = 0;
            switch (ks[0]) {
            case 'a':
                if (k.unsafe_is_equal("annotations"))
                    r = annotations(f.value(), m);
                break;
            case 'd':
                if (k.unsafe_is_equal("deletionTimestamp")) {
                    kc__sj_str s = {nullptr, 0};
                    const char *vat = f.value().raw_json_token().data();
                    bool isnull = false;
                    if (auto c = f.value().is_null().get(isnull))
                        return err(c, "metadata.deletionTimestamp");
                    if (!isnull) {
                        r = opt_string(f.value(), &s, "metadata.deletionTimestamp");
                        (void)vat;
                        m->deleting = true;
                    }
                }
                break;
            case 'f':
                if (k.unsafe_is_equal("finalizers")) {
                    const char *vat = f.value().raw_json_token().data();
                    od::json_type t;
                    if (auto c = f.value().type().get(t))
                        return err(c, "metadata.finalizers");
                    if (t == od::json_type::null)
                        break;
                    if (t != od::json_type::array)
                        return type_err("metadata.finalizers", "an array", vat);
                    od::array arr;
                    if (auto c = f.value().get_array().get(arr))
                        return err(c, "metadata.finalizers");
                    for (auto er : arr) {
                        od::value el;
                        if (auto c = std::move(er).get(el))
                            return err(c, "metadata.finalizers");
                        m->n_finalizers++;
                    }
                }
                break;
            case 'g':
                if (k.unsafe_is_equal("generation")) {
                    const char *vat = f.value().raw_json_token().data();
                    if (f.value().get_int64().get(m->generation))
                        return type_err("metadata.generation", "an integer", vat);
                }
                break;
            case 'l':
                if (k.unsafe_is_equal("labels"))
                    r = labels(f.value());
                break;
            case 'm':
                if (k.unsafe_is_equal("managedFields")) {
                    const char *vat = f.value().raw_json_token().data();
                    od::json_type t;
                    if (auto c = f.value().type().get(t))
                        return err(c, "metadata.managedFields");
                    string_view raw;
                    if (t == od::json_type::array) {
                        od::array arr;
                        if (auto c = f.value().get_array().get(arr))
                            return err(c, "metadata.managedFields");
                        if (auto c = arr.raw_json().get(raw))
                            return err(c, "metadata.managedFields");
                    } else if (t == od::json_type::null) {
                        raw = tok_trim(f.value().raw_json_token());
                    } else {
                        return type_err("metadata.managedFields", "an array", vat);
                    }
                    m->mf_off = static_cast<size_t>(ks - 1 - obj_start);
                    m->mf_len = static_cast<size_t>(raw.data() + raw.size() - (ks - 1));
                }
                break;
            case 'n':
                if (k.unsafe_is_equal("name"))
                    r = opt_string(f.value(), &m->name, "metadata.name");
                else if (k.unsafe_is_equal("namespace"))
                    r = opt_string(f.value(), &m->ns, "metadata.namespace");
                break;
            case 'o':
                if (k.unsafe_is_equal("ownerReferences"))
                    r = owner_refs(f.value(), m);
                break;
            case 'r':
                if (k.unsafe_is_equal("resourceVersion"))
                    r = opt_string(f.value(), &m->rv, "metadata.resourceVersion");
                break;
            case 'u':
                if (k.unsafe_is_equal("uid"))
                    r = opt_string(f.value(), &m->uid, "metadata.uid");
                break;
            default:
                break;
            }
            if (r)
                return r;
        }
        return 0;
    }

    /* Walks object o whose '{' is at start; fills m. */
    int object(od::object &o, const char *start, kc__sj_meta *m)
    {
        ctx->labels.clear();
        m->text = start;
        for (auto fr : o) {
            od::field f;
            if (auto c = std::move(fr).get(f))
                return err(c, "object");
            od::raw_json_string k = f.key();
            const char *ks = k.raw();
            int r = 0;
            if (ks[0] == 'k' && k.unsafe_is_equal("kind")) {
                string_view tok = tok_trim(f.value().raw_json_token());
                r = opt_string(f.value(), &m->kind, "kind");
                m->has_kind = m->kind.n > 0;
                m->kind_off = static_cast<size_t>(ks - 1 - start);
                m->kind_len = static_cast<size_t>(tok.data() + tok.size() - (ks - 1));
            } else if (ks[0] == 'a' && k.unsafe_is_equal("apiVersion")) {
                string_view tok = tok_trim(f.value().raw_json_token());
                r = opt_string(f.value(), &m->api_version, "apiVersion");
                m->has_api_version = m->api_version.n > 0;
                m->apiv_off = static_cast<size_t>(ks - 1 - start);
                m->apiv_len = static_cast<size_t>(tok.data() + tok.size() - (ks - 1));
            } else if (ks[0] == 'm' && k.unsafe_is_equal("metadata")) {
                obj_start = start; /* mf_off is relative to the object */
                r = metadata(f.value(), m);
                m->meta_off = static_cast<size_t>(ks - 1 - start);
                m->meta_len = static_cast<size_t>(loc_or_end() - (ks - 1));
            }
            if (r)
                return r;
        }
        m->len = static_cast<size_t>(loc_or_end() - start);
        m->labels = ctx->labels.data();
        m->n_labels = ctx->labels.size();
        return 0;
    }
};

bool at_end(od::document &doc)
{
    const char *p = nullptr;
    return doc.current_location().get(p) == simdjson::OUT_OF_BOUNDS;
}

int iterate(kc__sj_ctx *ctx, const char *text, size_t len, size_t cap, od::document &doc,
            kc__sj_err *e, int64_t bias)
{
    od::parser *p = get_parser(ctx);
    if (!p)
        return fail(e, KC_ENOMEM, -1, "out of memory for a parser");
    auto res = p->iterate(text, len, cap);
    if (auto c = std::move(res).get(doc))
        return sjfail(e, c, bias < 0 ? -1 : bias, "malformed JSON");
    return 0;
}

} // namespace

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

int kc__sj_object(kc__sj_ctx *ctx, const char *json, size_t len, kc__sj_obj_fn fn, void *ud,
                  kc__sj_err *e)
{
    size_t n = 0;
    bool compact = false;
    int r = make_compact(ctx, json, len, &n, &compact, e);
    if (r)
        return r;
    od::document doc;
    if ((r = iterate(ctx, ctx->buf, n, ctx->cap, doc, e, compact ? 0 : -1)))
        return r;
    walker w{doc, ctx->buf, ctx->buf + n, compact ? 0 : -1, e, ctx};
    od::object o;
    if (auto c = doc.get_object().get(o))
        return c == simdjson::INCORRECT_TYPE
                   ? fail(e, KC_EPARSE, w.off(ctx->buf), "not a JSON object")
                   : w.err(c, "object");
    kc__sj_meta m = {};
    if ((r = w.object(o, ctx->buf, &m)))
        return r;
    if (!at_end(doc))
        return fail(e, KC_EPARSE, w.here(), "trailing data after the object");
    return fn(ud, &m, e);
}

int kc__sj_list(kc__sj_ctx *ctx, const char *body, size_t len, bool padded, kc__sj_item_fn item_fn,
                kc__sj_list_fn list_fn, void *ud, kc__sj_err *e)
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
    walker w{doc, text, text + len, 0, e, ctx};
    kc__sj_list_info info = {};
    info.text_base = text;

    /* kind/apiVersion must be known before items are delivered; they normally come first. When
     * items come first, one look-ahead pass over the top-level keys finds them, then we rewind. */
    bool lookahead = false, looked = false;
again:
    od::object top;
    if (auto c = doc.get_object().get(top))
        return c == simdjson::INCORRECT_TYPE
                   ? fail(e, KC_EPARSE, 0, "list body is not a JSON object")
                   : w.err(c, "list");
    for (auto fr : top) {
        od::field f;
        if (auto c = std::move(fr).get(f))
            return w.err(c, "list");
        od::raw_json_string k = f.key();
        if (k.unsafe_is_equal("kind") || k.unsafe_is_equal("apiVersion")) {
            if (looked && !lookahead)
                continue; /* already known from the look-ahead pass */
            bool is_kind = k.raw()[0] == 'k';
            string_view tok = tok_trim(f.value().raw_json_token());
            kc__sj_str s = {nullptr, 0};
            if ((r = w.opt_string(f.value(), &s, is_kind ? "list kind" : "list apiVersion")))
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
            const char *at = f.value().raw_json_token().data();
            od::json_type t;
            if (auto c = f.value().type().get(t))
                return w.err(c, "list metadata");
            if (t == od::json_type::null)
                continue;
            od::object mo;
            if (f.value().get_object().get(mo))
                return w.type_err("list metadata", "an object", at);
            for (auto mr : mo) {
                od::field mf;
                if (auto c = std::move(mr).get(mf))
                    return w.err(c, "list metadata");
                od::raw_json_string mk = mf.key();
                if (mk.unsafe_is_equal("resourceVersion")) {
                    if ((r = w.opt_string(mf.value(), &info.rv, "list metadata.resourceVersion")))
                        return r;
                    info.has_rv = info.rv.n > 0;
                } else if (mk.unsafe_is_equal("continue")) {
                    if ((r = w.opt_string(mf.value(), &info.cont, "list metadata.continue")))
                        return r;
                    info.has_cont = info.cont.n > 0;
                } else if (mk.unsafe_is_equal("remainingItemCount")) {
                    const char *vat = mf.value().raw_json_token().data();
                    bool isnull = false;
                    if (auto c = mf.value().is_null().get(isnull))
                        return w.err(c, "list metadata.remainingItemCount");
                    if (isnull)
                        continue;
                    if (mf.value().get_int64().get(info.remaining))
                        return w.type_err("list metadata.remainingItemCount", "an integer", vat);
                    info.has_remaining = true;
                }
            }
        } else if (k.unsafe_is_equal("items")) {
            if (!info.has_kind && !info.has_api_version && !looked) {
                doc.rewind();
                lookahead = looked = true;
                goto again;
            }
            const char *at = f.value().raw_json_token().data();
            od::json_type t;
            if (auto c = f.value().type().get(t))
                return w.err(c, "items");
            if (t == od::json_type::null)
                continue;
            od::array arr;
            if (f.value().get_array().get(arr))
                return w.type_err("items", "an array", at);
            for (auto er : arr) {
                od::value item;
                if (auto c = std::move(er).get(item))
                    return w.err(c, "items");
                const char *start = item.raw_json_token().data();
                od::object io;
                if (item.get_object().get(io))
                    return w.type_err("an items[] element", "an object", start);
                kc__sj_meta m = {};
                if ((r = w.object(io, start, &m)))
                    return r;
                if ((r = item_fn(ud, &info, &m, e)))
                    return r;
            }
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
    if (auto c = doc.get_object().get(top))
        return c == simdjson::INCORRECT_TYPE
                   ? fail(e, KC_EPARSE, 0, "watch event is not a JSON object")
                   : w.err(c, "watch event");
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
            if (f.value().get_object().get(o))
                return w.type_err("watch event object", "an object", start);
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

int kc__sj_status(kc__sj_ctx *ctx, const char *json, size_t len, kc__sj_status_fn fn, void *ud,
                  kc__sj_err *e)
{
    size_t n = 0;
    bool compact = false;
    int r = make_compact(ctx, json, len, &n, &compact, e);
    if (r)
        return r;
    od::document doc;
    if ((r = iterate(ctx, ctx->buf, n, ctx->cap, doc, e, compact ? 0 : -1)))
        return r;
    walker w{doc, ctx->buf, ctx->buf + n, compact ? 0 : -1, e, ctx};
    od::object top;
    if (doc.get_object().get(top))
        return fail(e, KC_EPARSE, 0, "Status body is not a JSON object");
    kc__sj_status_info st = {};
    ctx->causes.clear();
    for (auto fr : top) {
        od::field f;
        if (auto c = std::move(fr).get(f))
            return w.err(c, "Status");
        od::raw_json_string k = f.key();
        if (k.unsafe_is_equal("kind")) {
            r = w.opt_string(f.value(), &st.kind, "Status kind");
            st.has_kind = true;
        } else if (k.unsafe_is_equal("status")) {
            r = w.opt_string(f.value(), &st.status, "Status status");
            st.has_status = st.status.n > 0;
        } else if (k.unsafe_is_equal("message")) {
            r = w.opt_string(f.value(), &st.message, "Status message");
        } else if (k.unsafe_is_equal("reason")) {
            r = w.opt_string(f.value(), &st.reason, "Status reason");
        } else if (k.unsafe_is_equal("code")) {
            const char *at = f.value().raw_json_token().data();
            if (f.value().get_int64().get(st.code))
                return w.type_err("Status code", "an integer", at);
            st.has_code = true;
        } else if (k.unsafe_is_equal("details")) {
            const char *at = f.value().raw_json_token().data();
            bool isnull = false;
            if (auto c = f.value().is_null().get(isnull))
                return w.err(c, "Status details");
            if (isnull)
                continue;
            od::object d;
            if (f.value().get_object().get(d))
                return w.type_err("Status details", "an object", at);
            for (auto dr : d) {
                od::field df;
                if (auto c = std::move(dr).get(df))
                    return w.err(c, "Status details");
                od::raw_json_string dk = df.key();
                if (dk.unsafe_is_equal("name")) {
                    r = w.opt_string(df.value(), &st.d_name, "Status details.name");
                } else if (dk.unsafe_is_equal("group")) {
                    r = w.opt_string(df.value(), &st.d_group, "Status details.group");
                } else if (dk.unsafe_is_equal("kind")) {
                    r = w.opt_string(df.value(), &st.d_kind, "Status details.kind");
                } else if (dk.unsafe_is_equal("uid")) {
                    r = w.opt_string(df.value(), &st.d_uid, "Status details.uid");
                } else if (dk.unsafe_is_equal("retryAfterSeconds")) {
                    const char *vat = df.value().raw_json_token().data();
                    if (df.value().get_int64().get(st.retry_after))
                        return w.type_err("Status details.retryAfterSeconds", "an integer", vat);
                    st.has_retry = true;
                } else if (dk.unsafe_is_equal("causes")) {
                    const char *vat = df.value().raw_json_token().data();
                    od::array arr;
                    if (df.value().get_array().get(arr))
                        return w.type_err("Status details.causes", "an array", vat);
                    for (auto er : arr) {
                        od::value el;
                        if (auto c = std::move(er).get(el))
                            return w.err(c, "Status details.causes");
                        const char *eat = el.raw_json_token().data();
                        od::object co;
                        if (el.get_object().get(co))
                            return w.type_err("a Status cause", "an object", eat);
                        kc__sj_cause cause = {};
                        for (auto cr : co) {
                            od::field cf;
                            if (auto c = std::move(cr).get(cf))
                                return w.err(c, "Status cause");
                            od::raw_json_string ck = cf.key();
                            if (ck.unsafe_is_equal("reason"))
                                r = w.opt_string(cf.value(), &cause.reason, "cause reason");
                            else if (ck.unsafe_is_equal("message"))
                                r = w.opt_string(cf.value(), &cause.message, "cause message");
                            else if (ck.unsafe_is_equal("field"))
                                r = w.opt_string(cf.value(), &cause.field, "cause field");
                            if (r)
                                return r;
                        }
                        ctx->causes.push_back(cause);
                    }
                }
                if (r)
                    return r;
            }
        }
        if (r)
            return r;
    }
    if (!at_end(doc))
        return fail(e, KC_EPARSE, w.here(), "trailing data after the Status");
    st.causes = ctx->causes.data();
    st.n_causes = ctx->causes.size();
    return fn(ud, &st, e);
}

static const char *type_name(od::json_type t)
{
    switch (t) {
    case od::json_type::array:
        return "array";
    case od::json_type::object:
        return "object";
    case od::json_type::number:
        return "number";
    case od::json_type::string:
        return "string";
    case od::json_type::boolean:
        return "boolean";
    case od::json_type::null:
        return "null";
    }
    return "?";
}

int kc__sj_pointer(kc__sj_ctx *ctx, const char *text, size_t len, const char *pointer,
                   enum kc__sj_want want, kc__sj_ptr_out *out, kc__sj_err *e)
{
    od::document doc;
    int r = iterate(ctx, text, len, len + KC__SJ_PADDING, doc, e, 0);
    if (r)
        return r;
    od::value v;
    error_code c = doc.at_pointer(pointer).get(v);
    if (c == simdjson::NO_SUCH_FIELD || c == simdjson::INDEX_OUT_OF_BOUNDS ||
        c == simdjson::INCORRECT_TYPE || c == simdjson::INVALID_JSON_POINTER)
        return fail(e, KC_ENOTFOUND, -1, "%s: no such path", pointer);
    if (c)
        return sjfail(e, c, -1, pointer);
    od::json_type t;
    if ((c = v.type().get(t)))
        return sjfail(e, c, -1, pointer);
    const char *wantname = "";
    switch (want) {
    case KC__SJ_WANT_STRING:
        if (t != od::json_type::string) {
            wantname = "a string";
            break;
        }
        {
            string_view s;
            if ((c = v.get_string().get(s)))
                return sjfail(e, c, -1, pointer);
            out->str = {s.data(), s.size()};
        }
        return 0;
    case KC__SJ_WANT_INT:
        if (t != od::json_type::number) {
            wantname = "an integer";
            break;
        }
        if ((c = v.get_int64().get(out->i)))
            return fail(e, KC_EINVAL, -1, "%s: number is not an integer that fits int64", pointer);
        return 0;
    case KC__SJ_WANT_BOOL:
        if (t != od::json_type::boolean) {
            wantname = "a boolean";
            break;
        }
        if ((c = v.get_bool().get(out->b)))
            return sjfail(e, c, -1, pointer);
        return 0;
    case KC__SJ_WANT_RAW: {
        string_view raw;
        if (t == od::json_type::object) {
            od::object o;
            if (!(c = v.get_object().get(o)))
                c = o.raw_json().get(raw);
        } else if (t == od::json_type::array) {
            od::array a;
            if (!(c = v.get_array().get(a)))
                c = a.raw_json().get(raw);
        } else {
            raw = tok_trim(v.raw_json_token());
        }
        if (c)
            return sjfail(e, c, -1, pointer);
        out->str = {raw.data(), raw.size()};
        return 0;
    }
    }
    return fail(e, KC_EINVAL, -1, "%s: value is %s %s, not %s", pointer,
                t == od::json_type::array || t == od::json_type::object ? "an" : "a", type_name(t),
                wantname);
}

int64_t kc__sj_reference_pass(kc__sj_ctx *ctx, const char *text, size_t len)
{
    kc__sj_err e = {0, -1, ""};
    od::document doc;
    if (iterate(ctx, text, len, len + KC__SJ_PADDING, doc, &e, 0))
        return e.code;
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
