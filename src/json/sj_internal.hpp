/*
 * json/sj_internal.hpp — what the C++ files of src/json/ share. Include it FIRST in each of them
 * and end each of them with KC_SJ_END_OF_FILE.
 *
 * The project's C++ is a thin C-callable wrapper around simdjson On-Demand (C face: sj.h). It was
 * one file; it is now a few small files, all wrapping simdjson and nothing else, one concept each:
 *   sj.cpp          contexts, compact copies, whitespace scan, depth check, one object, reference
 *   sj_meta.cpp     the walker: metadata extraction from one Kubernetes object (shared by all)
 *   sj_skip.hpp     skipping an unread array/object by a depth table over stage 1's index
 *   sj_strict.cpp   KC_DECODE_STRICT: validating every value the walker does not read
 *   sj_minify.cpp   minifying without joining tokens ("1 0" is refused, not made "10")
 *   sj_list.cpp     LIST bodies
 *   sj_watch.cpp    watch event lines
 *   sj_status.cpp   metav1.Status
 *   sj_pointer.cpp  JSON Pointer lookup
 *   sj_doc.cpp      a kc_doc's jansson tree from a stored object (kc_doc_from_obj)
 *   sj_statics.cpp  building simdjson's singletons early (exit safety, informer/exit.c)
 * No other file of the project uses simdjson or C++.
 *
 * Instruction set: On-Demand's walk is compiled into these files for one instruction set, the
 * "builtin" one. On x86-64 we select simdjson's haswell kernel (AVX2, BMI, PCLMUL, LZCNT) for these
 * files only, with GCC's target pragma or clang's target attribute pushed over the whole file
 * (every function, including those of the headers included after it — hence this header comes
 * first and KC_SJ_END_OF_FILE pops the attribute). The library therefore needs an x86-64-v3 CPU;
 * define KC_SJ_PORTABLE to use the compiler's default target instead. simdjson's stage 1 (the
 * structural index) is not compiled here: libsimdjson picks its kernel at run time.
 */
#ifndef KC_JSON_SJ_INTERNAL_HPP
#define KC_JSON_SJ_INTERNAL_HPP

#if defined(__x86_64__) && !defined(KC_SJ_PORTABLE)
#if defined(__clang__)
/* Before every include: clang rejects a target attribute on a function declared without it. */
#pragma clang attribute push(__attribute__((target("avx2,bmi,bmi2,pclmul,lzcnt,popcnt"))),         \
                             apply_to = function)
#define KC_SJ_END_OF_FILE _Pragma("clang attribute pop")
#elif defined(__GNUC__)
#pragma GCC target("avx2,bmi,bmi2,pclmul,lzcnt,popcnt")
#endif
#define SIMDJSON_BUILTIN_IMPLEMENTATION haswell
#define KC_SJ_AVX2                      1
#include <immintrin.h>
#endif
#ifndef KC_SJ_END_OF_FILE
#define KC_SJ_END_OF_FILE
#endif

#include <simdjson.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "json/locate.h"
#include "json/sj.h"
#include "kcache/shard.h"

namespace od = simdjson::ondemand;

static_assert(KC__SJ_PADDING >= simdjson::SIMDJSON_PADDING, "padding");

struct kc__sj_ctx {
    std::unique_ptr<od::parser> parser;
    char *buf = nullptr; /* padded scratch */
    size_t cap = 0;
    std::vector<kc__sj_label> labels;
    std::vector<kc__sj_cause> causes;
    std::string list_kind, list_api_version; /* survive a rewind of the parser */
    std::string list_head[7]; /* a windowed LIST's head members, kept while windows replace buf */
    std::unique_ptr<simdjson::dom::parser> dom; /* full validation of rare, bracket-heavy objects */
    size_t dom_depth = 0;
    const kc_shard_selector *shard = nullptr; /* kc__sj_ctx_set_shard */
    kc_shard_field shard_field = KC_SHARD_FIELD_NONE;
    ~kc__sj_ctx()
    {
        free(buf);
    }
};

namespace kc_sj
{

using simdjson::error_code;
using std::string_view;

/* Fills e (printf-style message) and returns code. */
int fail(kc__sj_err *e, int code, int64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Maps a simdjson error to a KC code and message "what: <simdjson's message>". */
int sjfail(kc__sj_err *e, error_code err, int64_t off, const char *what);

/* A raw token runs up to the next structural character: drop trailing whitespace. */
inline string_view tok_trim(string_view t)
{
    size_t n = t.size();
    while (n && static_cast<unsigned char>(t[n - 1]) <= 0x20)
        n--;
    return t.substr(0, n);
}

/* ctx->buf holds at least n + KC__SJ_PADDING bytes; false on out of memory. */
bool reserve(kc__sj_ctx *ctx, size_t n);
/* Puts a compact, padded copy of json into ctx->buf; *out_len gets its length, *minified whether
 * whitespace was removed (offsets into the copy are then mapped back with unminify_error). Text
 * whose minification would join two tokens ("1 0") is KC_EPARSE at the second one. Errors carry
 * input offsets. */
int make_compact(kc__sj_ctx *ctx, const char *json, size_t len, size_t *out_len, bool *minified,
                 kc__sj_err *e);
/* After an error r found in a minified copy of json: e->offset back to an offset into json. */
inline int unminify_error(int r, kc__sj_err *e, const char *json, size_t len, bool minified)
{
    if (r && minified && e->offset >= 0)
        e->offset = kc__json_unminify(json, len, e->offset);
    return r;
}
/* Stage 1 over text[0..len) (cap readable bytes) into doc. bias: added to error offsets. why (may
 * be NULL): simdjson's own code of a failure. */
int iterate(kc__sj_ctx *ctx, const char *text, size_t len, size_t cap, od::document &doc,
            kc__sj_err *e, int64_t bias, error_code *why = nullptr);

/* A JSON type named with its article, for messages: "an array", "a string", ... */
inline const char *type_name(od::json_type t)
{
    switch (t) {
    case od::json_type::array:
        return "an array";
    case od::json_type::object:
        return "an object";
    case od::json_type::number:
        return "a number";
    case od::json_type::string:
        return "a string";
    case od::json_type::boolean:
        return "a boolean";
    case od::json_type::null:
        return "null";
    }
    return "an unknown type";
}

inline bool at_end(od::document &doc)
{
    const char *p = nullptr;
    return doc.current_location().get(p) == simdjson::OUT_OF_BOUNDS;
}

/* One walk over a document: error reporting relative to its text, and the extraction of a
 * Kubernetes object's metadata (sj_meta.cpp). */
struct walker {
    od::document &doc;
    const char *base; /* start of the text given to simdjson */
    const char *end;  /* its end */
    int64_t off_bias; /* added to (p - base) for error offsets */
    kc__sj_err *e;
    kc__sj_ctx *ctx;
    bool strict;                     /* KC_DECODE_STRICT: validate what is not read (sj_strict) */
    const char *obj_start = nullptr; /* '{' of the object being walked */

    int64_t off(const char *p) const
    {
        return p ? off_bias + (p - base) : -1;
    }
    /* Offset of the iterator's token; the end of the text once it is past the last one (an
     * error there means the text ended early). */
    int64_t here()
    {
        const char *p = nullptr;
        if (doc.current_location().get(p))
            return off(end);
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
        int64_t at = here();
        if (at == off(end) && c != simdjson::MEMALLOC && c != simdjson::CAPACITY)
            return fail(e, KC_EPARSE, at, "%s: the text ends early (truncated?)", what);
        return sjfail(e, c, at, what);
    }
    int type_err(const char *field, const char *want, const char *at)
    {
        return fail(e, KC_EPARSE, off(at), "%s is not %s", field, want);
    }
    /* A member the walker reads must appear once: bit of *seen already set → KC_EPARSE at the
     * key (raw key text, after its quote). Reading one copy and storing both would make the stored
     * text say something else than the extracted metadata. */
    int once(unsigned *seen, unsigned bit, const char *key, const char *field)
    {
        if (*seen & bit)
            return fail(e, KC_EPARSE, off(key - 1), "duplicate member %s", field);
        *seen |= bit;
        return 0;
    }

    /* A member value the walker does not read. Default: an array or object is skipped by the
     * depth table, a string consumed (never left to On-Demand: see skip_container), another
     * scalar left to On-Demand (one token, skipped when the iteration moves on). Strict: validated
     * whole (validate_skip). close (may be NULL): the last byte of an array or object value.
     * Inline, in sj_skip.hpp (include it to call this). */
    inline int skip(od::value &v, const char *what, const char **close = nullptr);
    /* Strict mode only: the value (any type) checked completely — grammar, escapes, numbers,
     * nesting up to KC__SJ_MAX_DEPTH (sj_strict.cpp). */
    int validate(od::value &v, const char *what);
    /* skip in strict mode: validate, then *close (may be NULL) as skip gives it. */
    int validate_skip(od::value &v, const char *what, const char **close);
    /* KC_EPARSE at the end of the text: what was being read is not closed (truncated input). */
    __attribute__((cold)) int truncated(const char *what);
    /* KC_EPARSE at v's token: a ':', ',', ']' or '}' where a value of what should be. */
    __attribute__((cold)) int no_value(od::value &v, const char *what);
    /* A value whose first byte is 'n': 0 when it is the literal null, else KC_EPARSE. */
    __attribute__((cold, noinline)) int null_literal(od::value &v, const char *field);
    /* The key's escapes, checked by unescaping it (f.key() stays usable). */
    int check_key(od::field &f, const char *what)
    {
        od::raw_json_string raw = f.key();
        string_view k;
        auto c = f.unescaped_key().get(k);
        f.first = raw; /* unescaped_key() forgets the raw key; callers still compare it */
        return c ? sjfail(e, c, off(raw.raw() - 1), what) : 0;
    }
    /* check_key in strict mode (keys the walker only compares are otherwise not unescaped). */
    int key(od::field &f, const char *what)
    {
        return strict ? check_key(f, what) : 0;
    }

    /* A field that must be of type want or null: 0 and *present = not null, or a type error
     * naming field. */
    int nullable(od::value &v, od::json_type want, bool *present, const char *field);
    /* A string field that may be null (= absent: out unchanged). A string with a NUL character
     * (\u0000) is KC_EPARSE: every string the walker extracts becomes a C string (kc_obj_name,
     * the store key, list metadata, a Status' reason…), which would silently end at the NUL — two
     * pods "p\u0000one" and "p\u0000two" would both be "p". */
    int opt_string(od::value &v, kc__sj_str *out, const char *field);
    /* KC_EPARSE at `at`: field contains a NUL character. */
    __attribute__((cold, noinline)) int nul_err(const char *field, const char *at);
    /* s, unescaped from the raw token raw (quotes included, maybe trailing whitespace): 0, or
     * nul_err when it holds a NUL. Escapes always shorten a string, so an unescaped string as long
     * as its raw text had none and holds no NUL (stage 1 refuses raw control characters inside
     * strings): the usual case costs a comparison, the rest a memchr. */
    int no_nul(string_view s, string_view raw, const char *field)
    {
        if (s.size() + 2 == tok_trim(raw).size() || !memchr(s.data(), 0, s.size()))
            return 0;
        return nul_err(field, raw.data());
    }
    /* A field that must be an object (or array) or null: *present tells which. */
    int opt_object(od::value &v, od::object &o, bool *present, const char *field);
    int opt_array(od::value &v, od::array &a, bool *present, const char *field);
    /* fn(od::value &element) for each element of an array-or-null field; stops at fn's error. */
    template <typename F> int each_element(od::value &v, const char *field, F &&fn)
    {
        od::array arr;
        bool present = false;
        if (int r = opt_array(v, arr, &present, field))
            return r;
        if (!present)
            return 0;
        for (auto er : arr) {
            od::value el;
            if (auto c = std::move(er).get(el))
                return err(c, field);
            if (int r = fn(el))
                return r;
        }
        return 0;
    }
    /* A field that must be an object (not null). */
    int req_object(od::value &v, od::object &o, const char *field);

    /* The document's top-level object; what names it in errors ("<what> is not a JSON object"). */
    int top_object(od::object &o, const char *what);
    /* Walks object o whose '{' is at start; fills m (labels in ctx->labels). */
    int object(od::object &o, const char *start, kc__sj_meta *m);

  private:
    int metadata(od::value &v, kc__sj_meta *m);
    int deletion(od::value &v, kc__sj_meta *m);
    int owner_refs(od::value &v, kc__sj_meta *m);
    int labels(od::value &v);
    int annotations(od::value &v, kc__sj_meta *m);
    int finalizers(od::value &v, kc__sj_meta *m);
    int managed_fields(od::value &v, const char *key, kc__sj_meta *m);
};

/* json made compact into ctx->buf, stage 1 over it, then fn(walker &, od::object &top) on its
 * top-level object; what names the document in errors ("<what> is not a JSON object", "trailing
 * data after <what>"). Spans fn records stay valid until ctx is used again. Error offsets are
 * into the copy: the caller maps them back with unminify_error(…, *minified). */
template <typename F>
int with_compact_object(kc__sj_ctx *ctx, const char *json, size_t len, bool strict,
                        const char *what, kc__sj_err *e, bool *minified, F &&fn)
{
    od::document doc;
    size_t n = 0;
    int r = make_compact(ctx, json, len, &n, minified, e);
    if (r)
        return r;
    if ((r = iterate(ctx, ctx->buf, n, ctx->cap, doc, e, 0)))
        return r;
    walker w{doc, ctx->buf, ctx->buf + n, 0, e, ctx, strict};
    od::object top;
    if ((r = w.top_object(top, what)) || (r = fn(w, top)))
        return r;
    if (!at_end(doc))
        return fail(e, KC_EPARSE, w.here(), "trailing data after %s", what);
    return 0;
}

} // namespace kc_sj

#endif
