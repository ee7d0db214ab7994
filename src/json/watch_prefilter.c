/*
 * watch_prefilter.c — the shard filter's fast path for watch lines (json/decode_internal.h):
 * decide "out of range" from the first bytes of a line, before simdjson indexes all of it.
 *
 * kube-apiserver writes an event as {"type":…,"object":{"kind":…,"apiVersion":…,"metadata":{
 * "name":…,"namespace":…,"uid":…,…}…}} — Go's ObjectMeta field order puts the shard key among the
 * first few strings. This scanner reads that prefix only: JSON strings without escapes and plain
 * scalars (numbers, true/false/null); it gives up (the line is decoded normally) at anything else
 * — an object or array before the key, an escape, "object" before "type", an unknown member
 * order, the end of the line. It says "drop" only for an ADDED/MODIFIED/DELETED event whose
 * shard key it read and found out of range: exactly the events the full decode would drop, except
 * that the dropped line's remaining bytes are not validated (a malformed tail of an out-of-range
 * event goes unnoticed; its content was going to be discarded anyway).
 */
#include "json/obj_internal.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

typedef struct scan {
    const char *p, *end;
} scan;

static void ws(scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n'))
        s->p++;
}

static bool lit(scan *s, char c)
{
    ws(s);
    if (s->p < s->end && *s->p == c) {
        s->p++;
        return true;
    }
    return false;
}

/* A string without escapes into *out; false otherwise. */
static bool str(scan *s, kc__sj_str *out)
{
    ws(s);
    if (s->p >= s->end || *s->p != '"')
        return false;
    const char *b = ++s->p;
#ifdef __SSE2__
    /* 16 bytes at a time: the first quote, backslash or control byte ends the run */
    const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1f);
    while (s->end - s->p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s->p);
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, bs)),
                                   _mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v));
        unsigned m = (unsigned)_mm_movemask_epi8(hit);
        if (m) {
            s->p += __builtin_ctz(m);
            break;
        }
        s->p += 16;
    }
#endif
    while (s->p < s->end && *s->p != '"') {
        if (*s->p == '\\' || (unsigned char)*s->p < 0x20)
            return false;
        s->p++;
    }
    if (s->p >= s->end)
        return false;
    out->p = b;
    out->n = (size_t)(s->p - b);
    s->p++;
    return true;
}

/* A string or a plain scalar (skipped); false at an object, array or anything unexpected. */
static bool value(scan *s)
{
    kc__sj_str v;
    ws(s);
    if (s->p < s->end && *s->p == '"')
        return str(s, &v);
    const char *b = s->p;
    while (s->p < s->end && *s->p != ',' && *s->p != '}' && *s->p != ' ') {
        if (*s->p == '{' || *s->p == '[' || *s->p == '"' || *s->p == ']')
            return false;
        s->p++;
    }
    return s->p > b;
}

static bool is(kc__sj_str k, const char *lit_s)
{
    size_t n = strlen(lit_s);
    return k.n == n && memcmp(k.p, lit_s, n) == 0;
}

/* Inside metadata: the shard key's value, or false. An absent key cannot be told apart from one
 * after a nested member, so it gives up then too (the full decode hashes "" for it). */
static bool meta_key(scan *s, const char *want, kc__sj_str *out)
{
    if (!lit(s, '{'))
        return false;
    for (int i = 0; i < 16; i++) {
        kc__sj_str k;
        if (!str(s, &k) || !lit(s, ':'))
            return false;
        if (is(k, want))
            return str(s, out);
        if (!value(s) || !lit(s, ','))
            return false;
    }
    return false;
}

bool kc__watch_prefilter_drop(const char *line, size_t n, const kc_shard_selector *sel)
{
    scan s = {line, line + n};
    kc__sj_str k, type = {NULL, 0}, key;
    bool data = false;
    const char *want = kc_shard_selector_field(sel) == KC_SHARD_FIELD_UID ? "uid" : "namespace";
    if (!lit(&s, '{') || !str(&s, &k) || !is(k, "type") || !lit(&s, ':') || !str(&s, &type))
        return false;
    data = is(type, "ADDED") || is(type, "MODIFIED") || is(type, "DELETED");
    if (!data || !lit(&s, ',') || !str(&s, &k) || !is(k, "object") || !lit(&s, ':') ||
        !lit(&s, '{'))
        return false;
    for (int i = 0; i < 4; i++) { /* kind, apiVersion, then metadata */
        if (!str(&s, &k) || !lit(&s, ':'))
            return false;
        if (is(k, "metadata")) {
            if (!meta_key(&s, want, &key))
                return false;
            return !kc_shard_selector_match_hash(sel, kc_shard_hash(key.p, key.n));
        }
        if (!value(&s) || !lit(&s, ','))
            return false;
    }
    return false;
}
