/*
 * gojson.c — the bytes Go's encoding/json writes where jansson writes others, so that every
 * JSON body the server sends matches the API server's: Go's encoder is HTML-safe (<, > and &
 * inside strings become \u003c, \u003e, \u0026) and escapes U+2028 / U+2029 (\u2028, \u2029).
 * Those bytes can only occur inside JSON strings, so a byte-level pass over compact text is
 * exact. Applied to every stored object's text (store.c) and every reply body (api/reply.c); the
 * pass is idempotent. Thread-safe: pure functions.
 */
#include "server/storage/storage_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Bytes needing an escape at s[i]: 1 for <, >, &; 3 for U+2028 / U+2029 (E2 80 A8 / A9); 0. */
static size_t escapable(const unsigned char *s, size_t i, size_t len)
{
    if (s[i] == '<' || s[i] == '>' || s[i] == '&')
        return 1;
    if (s[i] == 0xe2 && i + 2 < len && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9))
        return 3;
    return 0;
}

#define ONES  0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* Non-zero when a byte of x is c (the classic zero-byte test on x ^ c...c). */
static inline uint64_t has_byte(uint64_t x, unsigned char c)
{
    uint64_t y = x ^ (ONES * c);
    return (y - ONES) & ~y & HIGHS;
}

/* The index of the first byte from i that may need an escape (<, >, &, or the lead byte of
 * U+2028/9), len when none: eight bytes at a time, as most text has none. */
static size_t first_candidate(const unsigned char *s, size_t i, size_t len)
{
    for (; i + 8 <= len; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        if (has_byte(x, '<') | has_byte(x, '>') | has_byte(x, '&') | has_byte(x, 0xe2))
            break;
    }
    while (i < len && s[i] != '<' && s[i] != '>' && s[i] != '&' && s[i] != 0xe2)
        i++;
    return i;
}

char *kc__go_json_escape(const char *text, size_t len, size_t *ret_len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t extra = 0, start = first_candidate(s, 0, len);
    if (start == len)
        return NULL; /* the common case: one fast pass */
    for (size_t i = start; i < len; i++) {
        size_t n = escapable(s, i, len);
        extra += n == 1 ? 5 : n == 3 ? 3 : 0;
        i += n ? n - 1 : 0;
    }
    if (!extra)
        return NULL;
    char *out = malloc(len + extra + 1);
    if (!out)
        return NULL;
    memcpy(out, s, start); /* nothing to escape before start */
    size_t o = start;
    for (size_t i = start; i < len; i++) {
        size_t n = escapable(s, i, len);
        if (n == 1) {
            static const char hex[] = "0123456789abcdef";
            memcpy(out + o, "\\u00", 4);
            out[o + 4] = hex[s[i] >> 4];
            out[o + 5] = hex[s[i] & 15];
            o += 6;
        } else if (n == 3) {
            memcpy(out + o, s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029", 6);
            o += 6;
            i += 2;
        } else {
            out[o++] = (char)s[i];
        }
    }
    out[o] = '\0';
    *ret_len = o;
    return out;
}
