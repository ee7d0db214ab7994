/*
 * json/locate.h — where in a JSON text something is, for error offsets, and the one check that
 * keeps minification from joining tokens (locate.c).
 *
 * These are byte loops over the text with simdjson's stage-1 rules (below), run once an error is
 * known; kc__json_ws_join is also the reference for the vectorised minifier (sj_minify.cpp) and
 * its stand-in in portable builds. Offsets are byte offsets into text; -1 means "not found".
 *
 * The rules (simdjson's stage 1): JSON whitespace is space, tab, LF and CR; the operators are
 * { } [ ] , and :; a backslash that is not itself escaped escapes the next byte, wherever it is;
 * an unescaped '"' opens or closes a string. simdjson::minify removes exactly the whitespace
 * outside strings.
 */
#ifndef KC_JSON_LOCATE_H
#define KC_JSON_LOCATE_H

#include "kcache/error.h"

KC_BEGIN_DECLS

/* The first byte of a value (scalar, string, '{' or '[') that only whitespace separates from the
 * end of the previous value (scalar, string, '}' or ']'): minifying there would join "1 0" into
 * "10" or "tr ue" into "true". -1 when there is none. */
int64_t kc__json_ws_join(const char *text, size_t n);

/* The first whitespace byte outside strings (what minifying removes), or n. */
size_t kc__json_ws_outside_strings(const char *text, size_t n);

/* The offset in text of the byte that is at offset k of simdjson::minify(text); n when k is at or
 * past the end of the minified text. */
int64_t kc__json_unminify(const char *text, size_t n, int64_t k);

/* The start of the first invalid UTF-8 sequence (overlong forms, surrogates and code points above
 * U+10FFFF are invalid), or -1. */
int64_t kc__json_bad_utf8(const char *text, size_t n);

/* The opening quote of a string that is not closed before the end, or -1. */
int64_t kc__json_unclosed_string(const char *text, size_t n);

/* The first byte below 0x20 inside a string (it must be escaped), or -1. */
int64_t kc__json_control_in_string(const char *text, size_t n);

/* Where the top-level object or array stops being one document: n when it never closes (the text
 * is truncated); else, with *trailing set, the first non-whitespace byte after it; else the
 * bracket that closed it (as the ']' of "{]": brackets are counted, not matched) or the first
 * byte when the text does not start with a bracket. */
int64_t kc__json_document_end(const char *text, size_t n, bool *trailing);

KC_END_DECLS

#endif
