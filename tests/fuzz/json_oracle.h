/*
 * tests/fuzz/json_oracle.h — checks the JSON decoders' fuzz targets share (fuzz_list.c,
 * fuzz_watch.c). Header-only: each fuzz target is its own program.
 *
 * The validity oracle for KC_DECODE_STRICT is simdjson's DOM parser (reached through the internal
 * kc__sj_depth_check), a different code path from the On-Demand walk strict mode uses. The DOM
 * parser rejects integers beyond 64 bits, which are valid JSON and which strict mode accepts: a
 * DOM "number" error is therefore not held against a text with a run of 19 or more digits.
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
