/*
 * kcache/selector.h — label and field selectors: one parser and matcher shared by the client side
 * (informer options, cache filtering) and the embedded API server.
 *
 * Label grammar (k8s.io/apimachinery labels.Parse): comma-separated requirements
 *   key=value | key==value | key!=value | key in (v1,v2) | key notin (v1,v2) | key | !key
 *   | key>n | key<n (integers, as upstream)
 * `!=` and `notin` match objects that lack the key. Keys are [prefix/]name per Kubernetes rules
 * (prefix a DNS subdomain ≤ 253, name ≤ 63 of [A-Za-z0-9-_.] starting and ending alphanumeric);
 * values ≤ 63 of the same characters, may be empty. As upstream, `k in ()` is the set {""} (not an
 * error) and whitespace (space, tab, CR, LF) separates tokens.
 * Field grammar (fields.ParseSelector): comma-separated `path=value`, `path==value`, `path!=value`
 * where path is metadata.name, metadata.namespace or any dotted path into the object
 * (e.g. spec.nodeName, status.phase); values compare with the field's string form (numbers and
 * booleans as JSON prints them); a missing field compares as "".
 *
 * Threads: parsed selectors are immutable, so every function is thread-safe on any selector, except
 * the _free functions, which must not race with another use of the same selector.
 */
#ifndef KCACHE_SELECTOR_H
#define KCACHE_SELECTOR_H

#include "obj.h"

KC_BEGIN_DECLS

typedef struct kc_label_selector kc_label_selector;
typedef struct kc_field_selector kc_field_selector;

/* Looks a label up in a caller-defined object: returns the value or NULL when absent. */
typedef const char *(*kc_label_lookup_fn)(void *ud, const char *key);
/* Looks a field up for kc_field_selector_match_fn: field is the selector's dotted path
 * ("spec.nodeName"; "metadata.name" and "metadata.namespace" too) and i its requirement's index
 * (0 ≤ i < kc_field_selector_count), so a caller can memoise per requirement;
 * kc_field_selector_pointer(sel, i) gives the same path as the JSON Pointer the selector computed
 * when it was parsed. A path with an empty segment ("spec..x", ".x") names no field: it compares
 * as absent and lookup is not called for it. Returns true with *raw / *len set to the value's JSON
 * text (a string with its quotes, a number or boolean as written), borrowed until the match
 * returns; false when the field is absent (compared as ""). */
typedef bool (*kc_field_lookup_fn)(void *ud, const char *field, size_t i, const char **raw,
                                   size_t *len);

/* Parse text (NUL-terminated; "" or NULL = match everything; borrowed for the call). Errors:
 * KC_EINVAL with err naming the problem (upstream's wording) and its byte offset (err->offset);
 * KC_ETOOLARGE when text is longer than 256 KiB; KC_ENOMEM. On success *ret_sel is new — caller
 * frees with kc_label_selector_free(). Thread-safe. Since 0.1. */
KC_API int kc_label_selector_parse(const char *text, kc_label_selector **ret_sel, kc_error *err);
/* Free a selector (sel is consumed; NULL is a no-op). Threads: see the header. Never fails.
 * Since 0.1. */
KC_API void kc_label_selector_free(kc_label_selector *sel);
/* true when the selector has no requirement (matches everything; true for NULL). sel is borrowed
 * for the call. Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_label_selector_empty(const kc_label_selector *sel);
/* Match against an object's labels. sel NULL matches everything. sel and obj are borrowed for the
 * call. Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_label_selector_match(const kc_label_selector *sel, const kc_obj *obj);
/* Match against labels reached through a lookup function (called during the call only; the
 * strings it returns are borrowed until it returns; lookup must not be NULL for a non-empty sel).
 * Thread-safe if lookup is. Never fails. Since 0.1. */
KC_API bool kc_label_selector_match_fn(const kc_label_selector *sel, kc_label_lookup_fn lookup,
                                       void *ud);
/* Canonical text form (requirements sorted by key), new malloc'd string — caller frees ("" for
 * NULL sel). Thread-safe. Errors: NULL on out of memory (KC_ENOMEM). Since 0.1. */
KC_API char *kc_label_selector_string(const kc_label_selector *sel);

/* Parse a field selector; as for labels. Values may escape `\,` `\=` `\\` (fields.EscapeValue);
 * an unknown escape or a bare ',' / '=' in a value is KC_EINVAL. Field paths are not validated.
 * text is borrowed for the call; on success *ret_sel is new — caller frees with
 * kc_field_selector_free(). Errors: KC_EINVAL (err->offset), KC_ETOOLARGE, KC_ENOMEM.
 * Thread-safe. Since 0.1. */
KC_API int kc_field_selector_parse(const char *text, kc_field_selector **ret_sel, kc_error *err);
/* Free a selector (sel is consumed; NULL is a no-op). Threads: see the header. Never fails.
 * Since 0.1. */
KC_API void kc_field_selector_free(kc_field_selector *sel);
/* true when the selector has no requirement (true for NULL). sel is borrowed for the call.
 * Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_field_selector_empty(const kc_field_selector *sel);
/* Number of requirements (0 for NULL), so a server can walk and reject fields it does not
 * support. No ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API size_t kc_field_selector_count(const kc_field_selector *sel);
/* The i-th field path (borrowed from sel, valid until it is freed); NULL when i is out of range
 * or sel is NULL. Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_field_selector_field(const kc_field_selector *sel, size_t i);
/* Match against an object. sel NULL matches everything. sel and obj are borrowed for the call.
 * Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_field_selector_match(const kc_field_selector *sel, const kc_obj *obj);
/* Match against field values reached through a lookup function, with kc_field_selector_match's
 * comparison rules (strings unescaped, numbers and booleans as written, null or absent as ""):
 * lets a caller that tests one object against many selectors (an API server's watch fan-out)
 * locate each field once. lookup is called during the call only, with each requirement's path
 * and index (kc_field_lookup_fn), and must not be NULL for a non-empty sel. sel is borrowed for
 * the call; so are the strings lookup gets from it. Thread-safe if lookup is. Never fails (false
 * for a NULL lookup with a non-empty sel). Since 0.1. */
KC_API bool kc_field_selector_match_fn(const kc_field_selector *sel, kc_field_lookup_fn lookup,
                                       void *ud);
/* Requirement i's field as a JSON Pointer (RFC 6901: "/spec/nodeName", "/metadata/name"; a '~' or
 * '/' inside a segment written "~0" / "~1"), computed when sel was parsed — what a
 * kc_field_lookup_fn resolves with kc_obj_get_raw. Borrowed from sel. NULL when i is out of
 * range, the path has an empty segment (it names no field), or sel is NULL. Thread-safe. Never
 * fails. Since 0.1. */
KC_API const char *kc_field_selector_pointer(const kc_field_selector *sel, size_t i);
/* If the selector pins field (e.g. metadata.name / metadata.namespace) with `=` or `==`, the value
 * of the first such term (borrowed from sel), else NULL: lets a store answer `metadata.name=x`
 * with one lookup (fields.Selector.RequiresExactMatch). field is borrowed for the call.
 * Thread-safe. Never fails (NULL for a NULL sel or field). Since 0.1. */
KC_API const char *kc_field_selector_exact(const kc_field_selector *sel, const char *field);
/* Canonical text form (terms sorted, `==` written `=`, values escaped), new malloc'd string —
 * caller frees ("" for NULL sel). Parsing it gives an equivalent selector. Thread-safe.
 * Errors: NULL on out of memory (KC_ENOMEM). Since 0.1. */
KC_API char *kc_field_selector_string(const kc_field_selector *sel);

KC_END_DECLS

#endif
