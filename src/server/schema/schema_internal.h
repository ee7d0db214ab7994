/*
 * schema_internal.h — helpers shared by the schema files: API failures into a kc_error (the
 * schema room sits below the server's status helpers, so it fills the fields itself), Go-style
 * quoting and value printing for the messages, a bounded string builder. Not installed.
 */
#ifndef KC_SERVER_SCHEMA_INTERNAL_H
#define KC_SERVER_SCHEMA_INTERNAL_H

#include "server/schema/schema.h"

#include "core/internal.h"

/* An API failure: code from the HTTP status, reason, message. Returns the code. */
int kc__serr(kc_error *err, int http, const char *reason, const char *fmt, ...) KC__PRINTF(4, 5);

/* Append Go's strconv.Quote of s (n bytes) to b. */
void kc__go_quote(kc__buf *b, const char *s, size_t n);
/* Append v as Go's fmt prints the decoded JSON value: verbs 'v' (%v / %+v: map[a:1 b:[x y]]),
 * '#' (%#v: map[string]interface {}{"a":1}). Numbers print as int64 when integral. */
void kc__go_value(kc__buf *b, const json_t *v, char verb);
/* Go's type word of a decoded JSON value for the converter's messages ("string", "int64",
 * "float64", "bool", "map", "slice") and for %T ("map[string]interface {}", "[]interface {}"). */
const char *kc__go_kind(const json_t *v);
const char *kc__go_typeof(const json_t *v);
/* encoding/json's word for a JSON value in "cannot unmarshal X": string, number, bool, array,
 * object. */
const char *kc__json_word(const json_t *v);

#endif
