/*
 * kcache/doc.h — kc_doc: a mutable JSON document for building and editing Kubernetes objects,
 * and base64 for Secret data.
 *
 * A kc_obj (kcache/obj.h) is immutable and shared by the cache; to change an object, copy it into
 * a kc_doc (kc_doc_from_obj), edit it by JSON Pointer, serialise it (kc_doc_json) and write it.
 * A kc_doc belongs to one thread at a time (no internal locking); distinct documents may be used
 * from different threads at once.
 *
 * Pointers are RFC 6901 ("" is the whole document, "/metadata/labels/app.kubernetes.io~1name",
 * "~0" is '~', "~1" is '/'). Setters create missing parents as objects (as an array when the
 * next token is "-", so "/metadata/finalizers/-" works on an object without finalizers); a last
 * token "-" appends to an array (RFC 6901's "past the end" element); a numeric token indexes an
 * existing array element (a token equal to the array's length appends); into an object, a numeric
 * token is simply a member name. Going through a value of another type (a member of a string, a
 * token into an array that is neither an index nor "-") is KC_EINVAL with the kc_error message
 * naming the pointer and the type found. Members keep their document order; new members go last.
 *
 * Bounds: documents nest at most 512 levels deep (KC_ETOOLARGE beyond, from the parser and the
 * setters alike); text handed to kc_doc_parse / kc_doc_set_raw is at most
 * KC_DEFAULT_MAX_OBJECT_SIZE bytes (KC_ETOOLARGE beyond). Integers are those of int64: text with
 * a larger integer, or a number beyond double's range, is refused (KC_EPARSE).
 */
#ifndef KCACHE_DOC_H
#define KCACHE_DOC_H

#include "obj.h"

KC_BEGIN_DECLS

typedef struct kc_doc kc_doc;
typedef struct kc_doc_iter kc_doc_iter;

/* kc_json_type and kc_json_type_name are declared in kcache/obj.h (shared with kc_obj_iter). */

/* ---- construction ------------------------------------------------------------------------- */

/* New empty object document ({}). On success *ret is new — caller frees with kc_doc_free().
 * Errors: KC_EINVAL (ret NULL), KC_ENOMEM. Thread-safe. Since 0.1. */
KC_API int kc_doc_new(kc_doc **ret, kc_error *err);

/* New document holding a copy of obj's JSON (obj is borrowed for the call and never changed).
 * On success *ret is new — caller frees with kc_doc_free(). Errors: KC_EINVAL (NULL obj or ret),
 * KC_EPARSE (obj holds a number beyond double's range, which kc_obj stores unread), KC_ENOMEM.
 * An integer of obj beyond int64 becomes a KC_JSON_DOUBLE.
 * Thread-safe. Since 0.1. */
KC_API int kc_doc_from_obj(const kc_obj *obj, kc_doc **ret, kc_error *err);

/* New document parsed from json (len bytes, need not be NUL-terminated; borrowed for the call),
 * which may be any JSON value. Errors: KC_EINVAL (ret NULL, json NULL with len > 0), KC_EPARSE
 * (not JSON: err names the line, column and byte offset), KC_ETOOLARGE (over
 * KC_DEFAULT_MAX_OBJECT_SIZE bytes or 512 levels), KC_ENOMEM. On success *ret is new — caller
 * frees with kc_doc_free(). Thread-safe. Since 0.1. */
KC_API int kc_doc_parse(const char *json, size_t len, kc_doc **ret, kc_error *err);

/* Copy of doc (borrowed for the call), independent of it: O(1), the two share their tree until
 * one of them changes, which copies only the containers on the changed path (copy-on-write). On
 * success *ret is new — caller frees with kc_doc_free(). Errors: KC_EINVAL (NULL doc or ret),
 * KC_ENOMEM. Thread-safe for distinct documents (also a document and its copy). Since 0.1. */
KC_API int kc_doc_copy(const kc_doc *doc, kc_doc **ret, kc_error *err);

/* Free doc (consumed). Accepts NULL. Not thread-safe (the document's owner only). Never fails.
 * Since 0.1. */
KC_API void kc_doc_free(kc_doc *doc);

/* ---- output ------------------------------------------------------------------------------- */

/* The document as compact JSON text (members in document order): *ret is a new malloc'd
 * NUL-terminated string — caller frees with free(); *ret_len (may be NULL) gets its length.
 * Errors: KC_EINVAL (NULL doc or ret), KC_ENOMEM. Thread-safe for distinct documents. Since 0.1. */
KC_API int kc_doc_json(const kc_doc *doc, char **ret, size_t *ret_len, kc_error *err);

/* An immutable kc_obj built from the document (as kc_obj_parse with default options).
 * On success *ret_obj is a new reference — caller unrefs. Errors: KC_EINVAL (NULL doc or ret_obj),
 * KC_EPARSE (the document is not an object, or its metadata has the wrong types), KC_ETOOLARGE,
 * KC_ENOMEM. Thread-safe for distinct documents. Since 0.1. */
KC_API int kc_doc_to_obj(const kc_doc *doc, kc_obj **ret_obj, kc_error *err);

/* true when a and b hold equal JSON values (object members compared regardless of order,
 * numbers by value). Both borrowed. false when either is NULL. Thread-safe for distinct
 * documents. Never fails. Since 0.1. */
KC_API bool kc_doc_equal(const kc_doc *a, const kc_doc *b);

/* RFC 7386 JSON merge patch that turns from into to (members only in from become null; arrays
 * and changed scalars are replaced whole): *ret is a new malloc'd NUL-terminated JSON object text
 * — caller frees with free(); "{}" when they are equal; to's own text when either whole document
 * is not an object (RFC 7386: such a patch replaces the target). A member whose value is null in to
 * reads as a deletion (merge patches cannot set null). ptr (NULL or "" = the whole documents)
 * restricts the diff to one member such as "/status", the patch then holding only that path.
 * Errors: KC_EINVAL (NULL argument, malformed ptr), KC_ENOMEM. Thread-safe for distinct
 * documents. Since 0.1. */
KC_API int kc_doc_merge_diff(const kc_doc *from, const kc_doc *to, const char *ptr, char **ret,
                             size_t *ret_len, kc_error *err);

/* RFC 6902 JSON Patch that turns from into to (both borrowed, any JSON values): *ret is a new
 * malloc'd NUL-terminated JSON array text of "add", "remove" and "replace" operations — caller
 * frees with free(); *ret_len (may be NULL) its length; "[]" when they are equal (numbers by
 * value, members in any order). Paths escape '~' as "~0" and '/' as "~1"; arrays are diffed
 * element by element after their common prefix and suffix (removals from the highest index
 * down); a type change, or a different whole document, is one "replace" (path "" for the root).
 * Applied in order to from, the operations give a value equal to to. Errors: KC_EINVAL (NULL
 * argument), KC_ENOMEM. Thread-safe for distinct documents. Since 0.1. */
KC_API int kc_doc_json_patch_diff(const kc_doc *from, const kc_doc *to, char **ret, size_t *ret_len,
                                  kc_error *err);

/* ---- reading ------------------------------------------------------------------------------ */
/*
 * Common rules: ptr is borrowed for the call. Errors: KC_ENOTFOUND (the path does not exist; err
 * names the pointer), KC_EINVAL (NULL doc, ptr or output, malformed pointer, or the value has
 * another type: err names the pointer and the type found). Thread-safe for distinct documents.
 */

/* The type of the value at ptr into *ret. Errors: KC_ENOTFOUND, KC_EINVAL (as above).
 * No ownership transfer. Thread-safe for distinct documents. Since 0.1. */
KC_API int kc_doc_type(const kc_doc *doc, const char *ptr, kc_json_type *ret, kc_error *err);

/* true when ptr names an existing value. false on any error. No ownership transfer. Thread-safe
 * for distinct documents. Never fails. Since 0.1. */
KC_API bool kc_doc_has(const kc_doc *doc, const char *ptr);

/* String at ptr: *ret borrowed from doc (NUL-terminated; valid until doc is next changed or
 * freed), *ret_len (may be NULL) its length (more than strlen when it holds \u0000). Errors:
 * KC_ENOTFOUND, KC_EINVAL (as above). Thread-safe for distinct documents. Since 0.1. */
KC_API int kc_doc_get_string(const kc_doc *doc, const char *ptr, const char **ret, size_t *ret_len,
                             kc_error *err);
/* Integer at ptr (KC_JSON_INT) into *ret, the caller's. Errors: KC_ENOTFOUND, KC_EINVAL (as above).
 * Thread-safe for distinct documents. Since 0.1. No ownership transfer. */
KC_API int kc_doc_get_int(const kc_doc *doc, const char *ptr, int64_t *ret, kc_error *err);
/* Number at ptr (KC_JSON_INT or KC_JSON_DOUBLE) into *ret, the caller's. Errors: KC_ENOTFOUND,
 * KC_EINVAL (as above). Thread-safe for distinct documents. Since 0.1. No ownership transfer. */
KC_API int kc_doc_get_double(const kc_doc *doc, const char *ptr, double *ret, kc_error *err);
/* Boolean at ptr into *ret, the caller's. Errors: KC_ENOTFOUND, KC_EINVAL (as above). Thread-safe
 * for distinct documents. Since 0.1. No ownership transfer. */
KC_API int kc_doc_get_bool(const kc_doc *doc, const char *ptr, bool *ret, kc_error *err);
/* The value at ptr (any type) as compact JSON text: *ret is a new malloc'd NUL-terminated string
 * — caller frees with free(). Errors: KC_ENOTFOUND, KC_EINVAL (as above), KC_ENOMEM. Thread-safe
 * for distinct documents. Since 0.1. */
KC_API int kc_doc_get_raw(const kc_doc *doc, const char *ptr, char **ret, size_t *ret_len,
                          kc_error *err);
/* Number of members (object) or elements (array) at ptr into *ret, the caller's. Errors:
 * KC_ENOTFOUND, KC_EINVAL (as above; also a scalar). Thread-safe for distinct documents.
 * Since 0.1. No ownership transfer. */
KC_API int kc_doc_count(const kc_doc *doc, const char *ptr, size_t *ret, kc_error *err);

/* ---- editing ------------------------------------------------------------------------------ */
/*
 * Common rules: ptr and values are borrowed for the call (copied into the document). Missing
 * parents are created as objects; "-" appends (see the top of this file). Errors: KC_EINVAL (NULL
 * doc or ptr, malformed pointer, a pointer that is not UTF-8 (member names become JSON text), ""
 * where a value must go inside the document, a parent of another type: err names the pointer and
 * the type found), KC_ETOOLARGE (nesting), KC_ENOMEM.
 * Not thread-safe (the document's owner only).
 */

/* Set the string s (NUL-terminated) at ptr. Errors: KC_EINVAL, KC_ETOOLARGE, KC_ENOMEM (as above).
 * Values copied. Not thread-safe. Since 0.1. */
KC_API int kc_doc_set_string(kc_doc *doc, const char *ptr, const char *s, kc_error *err);
/* Set the string of len bytes at s (may hold NUL bytes; must be UTF-8: KC_EINVAL otherwise).
 * Errors: KC_EINVAL, KC_ETOOLARGE, KC_ENOMEM (as above). Values copied. Not thread-safe.
 * Since 0.1. */
KC_API int kc_doc_set_stringn(kc_doc *doc, const char *ptr, const char *s, size_t len,
                              kc_error *err);
/* Set the integer v at ptr. Errors: KC_EINVAL, KC_ETOOLARGE, KC_ENOMEM (as above). Values copied.
 * Not thread-safe. Since 0.1. */
KC_API int kc_doc_set_int(kc_doc *doc, const char *ptr, int64_t v, kc_error *err);
/* Set the number v at ptr (finite only: KC_EINVAL for NaN and infinities). Errors: KC_EINVAL,
 * KC_ETOOLARGE, KC_ENOMEM (as above). Values copied. Not thread-safe. Since 0.1. */
KC_API int kc_doc_set_double(kc_doc *doc, const char *ptr, double v, kc_error *err);
/* Set the boolean v at ptr. Errors: KC_EINVAL, KC_ETOOLARGE, KC_ENOMEM (as above). Values copied.
 * Not thread-safe. Since 0.1. */
KC_API int kc_doc_set_bool(kc_doc *doc, const char *ptr, bool v, kc_error *err);
/* Set null at ptr. Errors: KC_EINVAL, KC_ETOOLARGE, KC_ENOMEM (as above). Not thread-safe.
 * Since 0.1. No ownership transfer. */
KC_API int kc_doc_set_null(kc_doc *doc, const char *ptr, kc_error *err);
/* Set the JSON value parsed from json (len bytes; any type) at ptr; "" replaces the whole
 * document. Errors: KC_EPARSE (json is not JSON), KC_EINVAL, KC_ETOOLARGE, KC_ENOMEM (as above).
 * Values copied. Not thread-safe. Since 0.1. */
KC_API int kc_doc_set_raw(kc_doc *doc, const char *ptr, const char *json, size_t len,
                          kc_error *err);
/* Set a copy of the document src (borrowed; any type) at ptr; "" replaces the whole document.
 * Errors: KC_EINVAL, KC_ETOOLARGE, KC_ENOMEM (as above). Values copied. Not thread-safe.
 * Since 0.1. */
KC_API int kc_doc_set_doc(kc_doc *doc, const char *ptr, const kc_doc *src, kc_error *err);
/* Remove the value at ptr (an array's later elements move down). Errors: KC_ENOTFOUND (absent),
 * KC_EINVAL (as above; also ""). Not thread-safe. Since 0.1. No ownership transfer. */
KC_API int kc_doc_remove(kc_doc *doc, const char *ptr, kc_error *err);

/* Escape one member name of len bytes (key need not be NUL-terminated: kc_obj_iter_key's keys are
 * not) for use in a pointer ('~' → "~0", '/' → "~1"): writes at most cap bytes including the NUL
 * into buf, returns the length the full result needs without the NUL (so a return ≥ cap means it
 * was cut). A name holding a NUL byte cannot be named by a pointer (C strings end there). key and
 * buf are the caller's. Thread-safe. Never fails. Since 0.1. No ownership transfer. */
KC_API size_t kc_json_pointer_escape(const char *key, size_t len, char *buf, size_t cap);

/* ---- iteration ---------------------------------------------------------------------------- */
/*
 * Members (object, document order) or elements (array) of the value at ptr:
 *
 *     kc_doc_iter *it;
 *     if (kc_doc_iter_new(doc, "/data", &it, &err) == 0) {
 *         while (kc_doc_iter_next(it) == 1) { ... kc_doc_iter_key(it, NULL) ... }
 *         kc_doc_iter_free(it);
 *     }
 *
 * The document must not change while an iterator over it is in use.
 */

/* New iterator over the object or array at ptr of doc (borrowed: must outlive the iterator and
 * stay unchanged). On success *ret is new — caller frees with kc_doc_iter_free(). Errors:
 * KC_ENOTFOUND, KC_EINVAL (a scalar at ptr; NULL arguments), KC_ENOMEM. Thread-safe for distinct
 * documents. Since 0.1. */
KC_API int kc_doc_iter_new(const kc_doc *doc, const char *ptr, kc_doc_iter **ret, kc_error *err);
/* Advance: 1 when positioned on the next member or element, 0 at the end. Errors: KC_EINVAL (NULL
 * it). Not thread-safe (the iterator's owner). Since 0.1. No ownership transfer. */
KC_API int kc_doc_iter_next(kc_doc_iter *it);
/* The current member's name (NUL-terminated, unescaped; *ret_len, may be NULL, its length), NULL
 * for an array element or before the first kc_doc_iter_next. Borrowed from the document. Not
 * thread-safe (the iterator's owner). Never fails. Since 0.1. */
KC_API const char *kc_doc_iter_key(const kc_doc_iter *it, size_t *ret_len);
/* The current value's type (KC_JSON_NULL when not positioned). No ownership transfer. Not
 * thread-safe (the iterator's owner). Never fails. Since 0.1. */
KC_API kc_json_type kc_doc_iter_type(const kc_doc_iter *it);
/* The current value as a string: *ret borrowed from the document (valid as kc_doc_get_string's),
 * *ret_len (may be NULL) its length. Errors: KC_EINVAL (not a string, not positioned). Not
 * thread-safe (the iterator's owner). Since 0.1. */
KC_API int kc_doc_iter_string(const kc_doc_iter *it, const char **ret, size_t *ret_len);
/* The current value as an integer into *ret, the caller's. Errors: KC_EINVAL (not KC_JSON_INT,
 * not positioned). Not thread-safe (the iterator's owner). Since 0.1. No ownership transfer. */
KC_API int kc_doc_iter_int(const kc_doc_iter *it, int64_t *ret);
/* The current value as a number into *ret, the caller's. Errors: KC_EINVAL (not a number, not
 * positioned). Not thread-safe (the iterator's owner). Since 0.1. No ownership transfer. */
KC_API int kc_doc_iter_double(const kc_doc_iter *it, double *ret);
/* The current value as a boolean into *ret, the caller's. Errors: KC_EINVAL (not a boolean, not
 * positioned). Not thread-safe (the iterator's owner). Since 0.1. No ownership transfer. */
KC_API int kc_doc_iter_bool(const kc_doc_iter *it, bool *ret);
/* The current value (any type) as compact JSON: *ret is a new malloc'd NUL-terminated string —
 * caller frees with free(). Errors: KC_EINVAL (not positioned), KC_ENOMEM. Not thread-safe (the
 * iterator's owner). Since 0.1. */
KC_API int kc_doc_iter_raw(const kc_doc_iter *it, char **ret, size_t *ret_len);
/* Free it (consumed). Accepts NULL. Not thread-safe (the iterator's owner). Never fails.
 * Since 0.1. */
KC_API void kc_doc_iter_free(kc_doc_iter *it);

/* ---- base64 (RFC 4648, standard alphabet with padding: Secret data) ------------------------ */

/* Encode len bytes at data: *ret is a new malloc'd NUL-terminated string — caller frees with
 * free(); *ret_len (may be NULL) its length. data borrowed for the call (may be NULL when len is
 * 0). Errors: KC_EINVAL (ret NULL), KC_ETOOLARGE (len over SIZE_MAX / 4 * 3 - 3), KC_ENOMEM.
 * Thread-safe. Since 0.1. */
KC_API int kc_base64_encode(const void *data, size_t len, char **ret, size_t *ret_len,
                            kc_error *err);
/* Decode len characters at text (padding required, no whitespace, as the API server emits):
 * *ret is a new malloc'd buffer of *ret_len bytes plus a NUL after them (so text decodes to a C
 * string) — caller frees with free(). Errors: KC_EINVAL (ret or ret_len NULL; a character outside
 * the alphabet, bad padding or a length not a multiple of 4: err names the byte offset),
 * KC_ENOMEM. Thread-safe. Since 0.1. */
KC_API int kc_base64_decode(const char *text, size_t len, unsigned char **ret, size_t *ret_len,
                            kc_error *err);

KC_END_DECLS

#endif
