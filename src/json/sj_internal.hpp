/*
 * json/sj_internal.hpp — what the C++ files of src/json/ share. Include it FIRST in each of them
 * and end each of them with KC_SJ_END_OF_FILE.
 *
 * The project's C++ is a thin C-callable wrapper around simdjson On-Demand (C face: sj.h). It was
 * one file; it is now a few small files, all wrapping simdjson and nothing else, one concept each:
 *   sj.cpp          contexts, compact copies, whitespace scan, depth check, one object, reference
 *   sj_meta.cpp     the walker: metadata extraction from one Kubernetes object (shared by all)
 *   sj_skip.hpp     skipping an unread array/object by a depth table over stage 1's index
 *   sj_list.cpp     LIST bodies
 *   sj_watch.cpp    watch event lines
 *   sj_status.cpp   metav1.Status
 *   sj_pointer.cpp  JSON Pointer lookup
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

#include "json/sj.h"

namespace od = simdjson::ondemand;

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
/* Copies n bytes; true when none of them is <= 0x20; adds the '{' and '[' count to *opens. */
bool copy_compact(char *dst, const char *src, size_t n, size_t *opens = nullptr);
/* Puts a compact, padded copy of json into ctx->buf; *out_len gets its length, *was_compact
 * whether it was compact already (offsets into it are then input offsets). */
int make_compact(kc__sj_ctx *ctx, const char *json, size_t len, size_t *out_len, bool *was_compact,
                 kc__sj_err *e);
/* Stage 1 over text[0..len) (cap readable bytes) into doc. bias: error offset, <0 unknown. */
int iterate(kc__sj_ctx *ctx, const char *text, size_t len, size_t cap, od::document &doc,
            kc__sj_err *e, int64_t bias);
/* make_compact (into ctx->buf, *n bytes) then iterate; *bias: 0 when offsets into ctx->buf are
 * input offsets, else -1. */
int iterate_compact(kc__sj_ctx *ctx, const char *json, size_t len, od::document &doc, size_t *n,
                    int64_t *bias, kc__sj_err *e);

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

    /* A field that must be of type want or null: 0 and *present = not null, or a type error
     * naming field. */
    int nullable(od::value &v, od::json_type want, bool *present, const char *field);
    /* A string field that may be null (= absent: out unchanged). */
    int opt_string(od::value &v, kc__sj_str *out, const char *field);
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
    int owner_refs(od::value &v, kc__sj_meta *m);
    int labels(od::value &v);
    int annotations(od::value &v, kc__sj_meta *m);
    int finalizers(od::value &v, kc__sj_meta *m);
    int managed_fields(od::value &v, const char *key, kc__sj_meta *m);
};

/* json made compact into ctx->buf, stage 1 over it, then fn(walker &, od::object &top) on its
 * top-level object; what names the document in errors ("<what> is not a JSON object", "trailing
 * data after <what>"). Spans fn records stay valid until ctx is used again. */
template <typename F>
int with_compact_object(kc__sj_ctx *ctx, const char *json, size_t len, const char *what,
                        kc__sj_err *e, F &&fn)
{
    od::document doc;
    size_t n = 0;
    int64_t bias = 0;
    int r = iterate_compact(ctx, json, len, doc, &n, &bias, e);
    if (r)
        return r;
    walker w{doc, ctx->buf, ctx->buf + n, bias, e, ctx};
    od::object top;
    if ((r = w.top_object(top, what)) || (r = fn(w, top)))
        return r;
    if (!at_end(doc))
        return fail(e, KC_EPARSE, w.here(), "trailing data after %s", what);
    return 0;
}

} // namespace kc_sj

#endif
