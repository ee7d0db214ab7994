/*
 * locate.c — positions in a JSON text, by simdjson's stage-1 rules (see locate.h).
 *
 * Why this exists. The decoders hand simdjson a minified copy of any text that has whitespace
 * outside strings, and simdjson's stage 1 reports some errors (bad UTF-8, an unclosed string, a
 * document that does not end where it should) without a position. Errors must name the byte of
 * the caller's input, so these loops find it — on the error path only. The one exception is
 * kc__json_ws_join, the check that minification does not join two tokens ("1 0" → "10"): the
 * reference the vectorised minifier (sj_minify.cpp) is fuzzed against, and its stand-in when the
 * library is built without AVX2.
 *
 * Every loop shares one tokenizer step (struct scan): it tracks the escape and string state
 * exactly as simdjson does and classifies each byte. It is not a parser: it recognises no grammar
 * beyond bytes, strings and bracket counts.
 */
#include "json/locate.h"

enum cls {
    C_WS,     /* JSON whitespace outside strings */
    C_OPEN,   /* '{' or '[' outside strings */
    C_CLOSE,  /* '}' or ']' outside strings */
    C_SEP,    /* ',' or ':' outside strings */
    C_QOPEN,  /* the quote that opens a string */
    C_QCLOSE, /* the quote that closes it */
    C_STR,    /* a byte inside a string */
    C_SCALAR, /* any other byte outside strings (numbers, literals, garbage) */
};

struct scan {
    const unsigned char *t;
    size_t n, i;
    bool in, esc;
};

/* Classifies byte s->i and advances. */
static enum cls step(struct scan *s)
{
    unsigned char c = s->t[s->i++];
    bool esc = s->esc;
    s->esc = !esc && c == '\\';
    if (!esc && c == '"') {
        s->in = !s->in;
        return s->in ? C_QOPEN : C_QCLOSE;
    }
    if (s->in)
        return C_STR;
    switch (c) {
    case ' ':
    case '\t':
    case '\n':
    case '\r':
        return C_WS;
    case '{':
    case '[':
        return C_OPEN;
    case '}':
    case ']':
        return C_CLOSE;
    case ',':
    case ':':
        return C_SEP;
    default:
        return C_SCALAR;
    }
}

static struct scan scan_of(const char *text, size_t n)
{
    struct scan s = {(const unsigned char *)text, n, 0, false, false};
    return s;
}

int64_t kc__json_ws_join(const char *text, size_t n)
{
    struct scan s = scan_of(text, n);
    bool value_ended = false, gap = false;
    while (s.i < n) {
        size_t at = s.i;
        enum cls c = step(&s);
        if (c == C_STR)
            continue;
        if (c == C_WS) {
            gap = gap || value_ended;
            continue;
        }
        if (gap && (c == C_SCALAR || c == C_QOPEN || c == C_OPEN))
            return (int64_t)at;
        gap = false;
        value_ended = c == C_SCALAR || c == C_QCLOSE || c == C_CLOSE;
    }
    return -1;
}

size_t kc__json_ws_outside_strings(const char *text, size_t n)
{
    struct scan s = scan_of(text, n);
    while (s.i < n) {
        size_t at = s.i;
        if (step(&s) == C_WS)
            return at;
    }
    return n;
}

int64_t kc__json_unminify(const char *text, size_t n, int64_t k)
{
    struct scan s = scan_of(text, n);
    int64_t kept = 0;
    while (s.i < n) {
        size_t at = s.i;
        if (step(&s) == C_WS)
            continue;
        if (kept++ == k)
            return (int64_t)at;
    }
    return (int64_t)n;
}

int64_t kc__json_bad_utf8(const char *text, size_t n)
{
    const unsigned char *t = (const unsigned char *)text;
    size_t i = 0;
    while (i < n) {
        unsigned c = t[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k;
        unsigned lo = 0x80, hi = 0xBF; /* range of the first continuation byte */
        if (c >= 0xC2 && c <= 0xDF) {
            k = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            k = 2;
            lo = c == 0xE0 ? 0xA0 : 0x80; /* overlong */
            hi = c == 0xED ? 0x9F : 0xBF; /* surrogates */
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            lo = c == 0xF0 ? 0x90 : 0x80; /* overlong */
            hi = c == 0xF4 ? 0x8F : 0xBF; /* above U+10FFFF */
        } else {
            return (int64_t)i;
        }
        for (size_t j = 1; j <= k; j++) {
            if (i + j >= n)
                return (int64_t)i;
            unsigned d = t[i + j];
            if (d < (j == 1 ? lo : 0x80) || d > (j == 1 ? hi : 0xBF))
                return (int64_t)i;
        }
        i += k + 1;
    }
    return -1;
}

int64_t kc__json_unclosed_string(const char *text, size_t n)
{
    struct scan s = scan_of(text, n);
    size_t open = 0;
    while (s.i < n) {
        size_t at = s.i;
        if (step(&s) == C_QOPEN)
            open = at;
    }
    return s.in ? (int64_t)open : -1;
}

int64_t kc__json_control_in_string(const char *text, size_t n)
{
    struct scan s = scan_of(text, n);
    while (s.i < n) {
        size_t at = s.i;
        if (step(&s) == C_STR && s.t[at] < 0x20)
            return (int64_t)at;
    }
    return -1;
}

int64_t kc__json_document_end(const char *text, size_t n, bool *trailing)
{
    struct scan s = scan_of(text, n);
    int64_t depth = 0, closed_at = -1;
    *trailing = false;
    while (s.i < n) {
        size_t at = s.i;
        enum cls c = step(&s);
        if (c == C_WS || c == C_STR)
            continue;
        if (closed_at >= 0) {
            *trailing = true;
            return (int64_t)at;
        }
        if (c == C_OPEN)
            depth++;
        else if (depth == 0)
            return (int64_t)at; /* not a bracket where the document starts */
        else if (c == C_CLOSE && --depth == 0)
            closed_at = (int64_t)at;
    }
    return closed_at >= 0 ? closed_at : (int64_t)n;
}
