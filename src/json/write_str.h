/*
 * json/write_str.h — a JSON string written into a kc__buf (quotes and escapes: '"', '\\', the
 * short escapes of controls, \u00XX for the other controls; every other byte as it is, so valid
 * UTF-8 stays valid UTF-8). For the few places that write small JSON documents of their own
 * (obj_ident.c, the node agent cache's rendering) rather than a jansson tree.
 */
#ifndef KC_JSON_WRITE_STR_H
#define KC_JSON_WRITE_STR_H

#include "core/internal.h"

#include <stdbool.h>

/* Bytes that need an escape in a JSON string: '"', '\\' and controls. */
static inline bool kc__json_plain(unsigned char c)
{
    return c >= 0x20 && c != '"' && c != '\\';
}

/* The escape of a byte that is not plain, as jansson writes it: a short form ("\\n") or
 * "\\u00XX", into buf (at least 7 bytes); returns its text. */
const char *kc__json_escape_byte(unsigned char c, char buf[static 7]);

/* Append s (n bytes, may hold NUL) as a JSON string. 0, or KC_ENOMEM / KC_ETOOLARGE (the buffer's
 * bound). */
int kc__json_buf_string(kc__buf *b, const char *s, size_t n);

#endif
