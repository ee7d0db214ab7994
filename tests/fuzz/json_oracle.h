/*
 * tests/fuzz/json_oracle.h — checks the JSON decoders' fuzz targets share (fuzz_list.c,
 * fuzz_watch.c). Header-only: each fuzz target is its own program.
 *
 * The validity oracle for KC_DECODE_STRICT is simdjson's DOM parser (reached through the internal
 * kc__sj_depth_check), a different code path from the On-Demand walk strict mode uses. The DOM
 * parser rejects integers beyond 64 bits, which are valid JSON and which strict mode accepts: a
 * DOM "number" error is therefore not held against a text with a run of 19 or more digits.
 *
 * check_cstrings: every C string an object's accessors return is the whole value in its stored
 * text — nothing cut at a NUL (\u0000), which the decoders refuse (issue 29 point 9).
 *
 * check_one_document: a text a default decode accepts is one document, brackets balanced.
 *
 * check_minify compares the decoders' vectorised minifier (kc__sj_minify) with the reference
 * (simdjson::minify, then the scalar join check of locate.c) on any text, and the vectorised
 * scan for whitespace outside strings with its scalar reference.
 */
#ifndef KC_FUZZ_JSON_ORACLE_H
#define KC_FUZZ_JSON_ORACLE_H

#include "kcache/decode.h"

#include "json/locate.h"
#include "json/sj.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* rc and err agree; KC_EPARSE comes with an offset inside the text (len bytes). */
static inline void check_err(int rc, const kc_error *err, size_t len)
{
    if (rc && (err->code != rc || !err->message))
        abort();
    if (rc == KC_EPARSE && (err->offset < 0 || err->offset > (int64_t)len)) {
        fprintf(stderr, "KC_EPARSE without a valid offset (%lld, length %zu): %s\n",
                (long long)err->offset, len, err->message);
        abort();
    }
}

/* A run of n or more ASCII digits in text. */
static inline bool digit_run(const char *text, size_t len, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < len; i++)
        if ((run = text[i] >= '0' && text[i] <= '9' ? run + 1 : 0) >= n)
            return true;
    return false;
}

/* Aborts unless text (accepted by a strict decode) is valid JSON by the DOM parser. */
static inline void check_valid_json(const char *text, size_t len)
{
    static kc__sj_ctx *ctx;
    if (!ctx && !(ctx = kc__sj_ctx_new()))
        return;
    char *p = malloc(len + KC_DECODE_PADDING);
    if (!p)
        return;
    memcpy(p, text, len);
    memset(p + len, 0, KC_DECODE_PADDING);
    kc__sj_err e = {0, -1, ""};
    int r = kc__sj_depth_check(ctx, p, len, 1024, &e);
    free(p);
    if (r && !(strstr(e.msg, "number") && digit_run(text, len, 19))) {
        fprintf(stderr, "strict mode accepted invalid JSON (%s): %.*s\n", e.msg,
                (int)(len > 2000 ? 2000 : len), text);
        abort();
    }
}

/* Aborts unless text (accepted by a default decode) is one document with its brackets balanced,
 * counted outside strings: what the default decode checks everywhere, unread sub-trees included
 * (docs/decoding.md, "Validation"). An item walked one '}' past its end let a body with a surplus
 * '}' through in one pass as in windows (a string member value followed by ':', which
 * On-Demand's skip_child takes for a key): the two paths agreed, so only this sees it. */
static inline void check_one_document(const char *text, size_t len)
{
    bool trailing = false;
    int64_t at = kc__json_document_end(text, len, &trailing);
    if (at < 0 || (size_t)at >= len || trailing || (text[at] != '}' && text[at] != ']')) {
        fprintf(stderr, "accepted, but not one balanced document (at %lld%s): %.*s\n",
                (long long)at, trailing ? ", trailing data" : "", (int)(len < 512 ? len : 512),
                text);
        abort();
    }
}

/* The accessor's C string is the whole value the stored text holds at pointer (when it is a
 * string there): nothing cut at a NUL (issue 29 point 9; the decoders refuse such values). */
static inline void check_whole(const kc_obj *o, const char *pointer, const char *got)
{
    char *s = NULL;
    size_t n = 0;
    if (kc_obj_get_string(o, pointer, &s, &n, NULL) != 0)
        return;
    bool same = strlen(got) == n && memcmp(got, s, n) == 0;
    free(s);
    if (!same) {
        fprintf(stderr, "%s: the accessor's \"%s\" is not the stored value (%zu bytes)\n", pointer,
                got, n);
        abort();
    }
}

/* check_whole for every extracted string of o: name, namespace, uid, resourceVersion, kind,
 * apiVersion and each label key's value (a key cut at a NUL would not find it). */
static inline void check_cstrings(const kc_obj *o)
{
    check_whole(o, "/metadata/name", kc_obj_name(o));
    check_whole(o, "/metadata/namespace", kc_obj_namespace(o));
    check_whole(o, "/metadata/uid", kc_obj_uid(o));
    check_whole(o, "/metadata/resourceVersion", kc_obj_resource_version(o));
    check_whole(o, "/kind", kc_obj_kind(o));
    check_whole(o, "/apiVersion", kc_obj_api_version(o));
    for (size_t i = 0; i < kc_obj_label_count(o) && i < 8; i++) {
        const char *k = NULL, *v = NULL;
        char ptr[512] = "/metadata/labels/";
        size_t at = strlen(ptr);
        if (kc_obj_label_at(o, i, &k, &v))
            abort();
        for (; *k && at + 3 < sizeof ptr; k++) /* RFC 6901: ~ → ~0, / → ~1 */
            at += (size_t)snprintf(ptr + at, sizeof ptr - at, "%s",
                                   *k == '~'   ? "~0"
                                   : *k == '/' ? "~1"
                                               : (char[2]){*k, 0});
        if (*k)
            continue; /* too long for the buffer */
        char *s = NULL;
        size_t n = 0;
        if (kc_obj_get_string(o, ptr, &s, &n, NULL) != 0)
            continue; /* a key written with escapes: JSON Pointer matches raw keys */
        bool same = strlen(v) == n && memcmp(v, s, n) == 0;
        free(s);
        if (!same)
            abort();
    }
}

/* kc__sj_minify and kc__sj_minify_reference agree on text: same bytes kept, same join found. */
static inline void check_minify(const char *text, size_t len)
{
    char *a = malloc(len + 72), *b = malloc(len + 72);
    if (!a || !b) {
        free(a);
        free(b);
        return;
    }
    size_t na = 0, nb = 0;
    int64_t ja = -1, jb = -1;
    int ra = kc__sj_minify(text, len, a, &na, &ja);
    int rb = kc__sj_minify_reference(text, len, b, &nb, &jb);
    bool same;
    if (!ra && !rb)
        same = na == nb && memcmp(a, b, na) == 0;
    else if (!ra != !rb)
        same = false;
    else if (jb >= 0) /* the reference found a join, so no string is left open: the same one */
        same = ja == jb;
    else /* the reference stops at a string left open; the minifier may see a join first */
        same = kc__json_unclosed_string(text, len) >= 0;
    free(a);
    free(b);
    if (!same) {
        fprintf(stderr, "minifier and reference disagree: %d/%d, join %lld/%lld, %zu/%zu bytes\n",
                ra, rb, (long long)ja, (long long)jb, na, nb);
        abort();
    }
    if (kc__sj_ws_outside_strings(text, len) != kc__json_ws_outside_strings(text, len)) {
        fprintf(stderr, "whitespace-outside-strings scans disagree\n");
        abort();
    }
}

#endif
