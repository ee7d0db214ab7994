/*
 * kcache/obj.h — kc_obj: an immutable, reference-counted Kubernetes object.
 *
 * A kc_obj owns its minified JSON text (managedFields stripped unless asked otherwise; the full
 * form is never retained) and a small fixed record of metadata extracted at decode time. It never
 * changes after construction, so any number of threads may read it without locks; the reference
 * count is atomic. Accessors return pointers borrowed from the object: valid until the caller's
 * reference is dropped. Field access by JSON Pointer parses the stored text on demand (no DOM is
 * kept per object).
 */
#ifndef KCACHE_OBJ_H
#define KCACHE_OBJ_H

#include "error.h"

KC_BEGIN_DECLS

typedef struct kc_obj kc_obj;

/* Decode-time transform flags (kc_decode_opts.flags). */
enum kc_decode_flags {
    KC_DECODE_KEEP_MANAGED_FIELDS = 1u << 0, /* keep metadata.managedFields (default: strip) */
    KC_DECODE_METADATA_ONLY = 1u << 1,       /* keep only apiVersion, kind and metadata */
    /* The caller guarantees KC_DECODE_PADDING readable bytes after the input (their content does
     * not matter): kc_list_decode then parses the body in place instead of copying it first. */
    KC_DECODE_INPUT_PADDED = 1u << 2,
    /* Validate the whole text as JSON (RFC 8259 grammar, string escapes, numbers within a
     * double's range, nesting up to 512), not only the members the decoder reads. By default the
     * sub-trees it does not read (spec, status, managedFields, unknown members) are checked for
     * UTF-8, string termination and bracket balance only; see "Validation" in docs/decoding.md.
     * Costs about 1.5x (LIST) to 2x (watch) the default decode's CPU time
     * (docs/benchmarks-journal.md, wave 2.1). */
    KC_DECODE_STRICT = 1u << 3,
};

/* Bytes of readable padding KC_DECODE_INPUT_PADDED promises after an input buffer. */
#define KC_DECODE_PADDING 64

/* Default maximum size of one object or watch event: large enough for a 3 MiB object. */
#define KC_DEFAULT_MAX_OBJECT_SIZE ((size_t)4 * 1024 * 1024)

typedef struct kc_shard_selector kc_shard_selector; /* kcache/shard.h */

/* Options for every decoder. Zero-initialised means the defaults. Copied by the callee. */
typedef struct kc_decode_opts {
    unsigned flags;         /* enum kc_decode_flags */
    size_t max_object_size; /* bytes of one object / event line; 0 = KC_DEFAULT_MAX_OBJECT_SIZE */
    /* Client-side shard filter (kcache/shard.h; appended): list items, and watch ADDED /
     * MODIFIED / DELETED events, whose shard field hashes outside it are skipped — the field is
     * hashed during the metadata walk and the object is never built (BOOKMARK and ERROR events
     * always pass). Borrowed: must outlive the call, or the watch decoder. NULL = no filter. */
    const kc_shard_selector *shard;
    /* Field projection (appended): NULL, or a NULL-terminated array of JSON Pointers
     * ("/metadata", "/spec/nodeName", "/status/containerStatuses/ * /name" — without the spaces:
     * "*" is any member or array element) naming what the stored text keeps; every other member
     * is dropped while the object is built, so it costs the memory of the kept fields only.
     * Top-level kind and apiVersion are always kept; metadata.managedFields is dropped unless
     * KC_DECODE_KEEP_MANAGED_FIELDS; KC_DECODE_METADATA_ONLY is ignored. The extracted metadata
     * (kc_obj_name, labels, uid, …) is read before projecting and is always there. Borrowed:
     * must outlive the call, or the watch decoder / informer given it. See docs/decoding.md. */
    const char *const *keep;
} kc_decode_opts;

/*
 * Build an object from one JSON object text (json need not be NUL-terminated; it is copied,
 * minified and transformed). opts may be NULL (defaults). Errors: KC_EINVAL (ret_obj NULL, or
 * json NULL with len > 0), KC_EPARSE (not JSON, not an object, metadata fields of the wrong type
 * or given twice, a NUL character (\u0000) in a string that becomes a C string below — name,
 * namespace, uid, resourceVersion, kind, apiVersion, a label key or value, an owner's uid,
 * apiVersion, kind or name —, invalid UTF-8, two values with only whitespace between them, nesting
 * deeper than 512 levels, truncated; err names what and the byte offset in json), KC_ETOOLARGE,
 * KC_ENOMEM, KC_EUNSUPPORTED (opts longer than this library's, or a CPU the JSON parser does not
 * support). json and opts are borrowed for the call. On success *ret_obj is a new reference —
 * caller unrefs. Thread-safe (uses a per-thread parser, kept between calls for objects up to
 * 1 MiB). Since 0.1.
 */
KC_API int(kc_obj_parse)(const char *json, size_t len, const kc_decode_opts *opts, size_t opts_size,
                         kc_obj **ret_obj, kc_error *err);
#define kc_obj_parse(json, len, opts, ret_obj, err)                                                \
    (kc_obj_parse)((json), (len), (opts), sizeof(kc_decode_opts), (ret_obj), (err))

/* Take one more reference: returns obj, a new reference — caller unrefs. Accepts NULL.
 * Thread-safe. Never fails. Since 0.1. */
KC_API kc_obj *kc_obj_ref(kc_obj *obj);

/* Drop one reference (consumed); the last one frees the object. Accepts NULL. Thread-safe.
 * Never fails. Since 0.1. */
KC_API void kc_obj_unref(kc_obj *obj);

/* Release an array of references as the list functions return it (kc_store_list…,
 * kc_cached_client_list…): unref each of the n objects, then free(objs) — the array and its
 * references are consumed. Accepts NULL. Thread-safe (the array is the caller's). Never fails.
 * Since 0.1. */
KC_API void kc_obj_array_free(kc_obj **objs, size_t n);

/* The stored minified JSON (NUL-terminated; *ret_len, if not NULL, gets its length without the
 * NUL). Borrowed: valid while the caller holds a reference. Thread-safe. "" for a NULL obj.
 * Never fails. Since 0.1. */
KC_API const char *kc_obj_json(const kc_obj *obj, size_t *ret_len);

/*
 * Extracted metadata. Each returns a NUL-terminated string borrowed from obj (valid while the
 * caller holds a reference), "" when the field is absent (never NULL); the whole field: a
 * decoder refuses a value with a NUL in it (KC_EPARSE) rather than cut it. Thread-safe. These and
 * the other accessors below take a NULL obj as an object without fields ("", 0, false; NULL from
 * kc_obj_label, KC_EINVAL from kc_obj_label_at).
 */
/* apiVersion. Borrowed from obj (valid while the caller holds a reference). Thread-safe. Never
 * fails. Since 0.1. */
KC_API const char *kc_obj_api_version(const kc_obj *obj);
/* kind. Borrowed from obj (valid while the caller holds a reference). Thread-safe. Never fails.
 * Since 0.1. */
KC_API const char *kc_obj_kind(const kc_obj *obj);
/* metadata.namespace. Borrowed from obj (valid while the caller holds a reference). Thread-safe.
 * Never fails. Since 0.1. */
KC_API const char *kc_obj_namespace(const kc_obj *obj);
/* metadata.name. Borrowed from obj (valid while the caller holds a reference). Thread-safe. Never
 * fails. Since 0.1. */
KC_API const char *kc_obj_name(const kc_obj *obj);
/* metadata.uid. Borrowed from obj (valid while the caller holds a reference). Thread-safe. Never
 * fails. Since 0.1. */
KC_API const char *kc_obj_uid(const kc_obj *obj);
/* metadata.resourceVersion. Borrowed from obj (valid while the caller holds a reference).
 * Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_obj_resource_version(const kc_obj *obj);
/* Controller owner's uid (ownerReferences[] entry with controller=true), "" when none. Borrowed
 * from obj (valid while the caller holds a reference). Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_obj_controller_uid(const kc_obj *obj);
/* Controller owner's apiVersion (the same ownerReferences[] entry as kc_obj_controller_uid), ""
 * when none. Borrowed from obj (valid while the caller holds a reference). Thread-safe. Never
 * fails. Since 0.1. */
KC_API const char *kc_obj_controller_api_version(const kc_obj *obj);
/* Controller owner's kind, "" when none. Borrowed from obj (valid while the caller holds a
 * reference). Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_obj_controller_kind(const kc_obj *obj);
/* Controller owner's name, "" when none. Borrowed from obj (valid while the caller holds a
 * reference). Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_obj_controller_name(const kc_obj *obj);

/* resourceVersion as an integer when it is a canonical decimal (no sign, no leading zero, not
 * "0"); 0 otherwise. No ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API uint64_t kc_obj_rv_int(const kc_obj *obj);
/* metadata.generation, 0 when absent. No ownership transfer. Thread-safe. Never fails. Since 0.1.
 */
KC_API int64_t kc_obj_generation(const kc_obj *obj);
/* true when metadata.deletionTimestamp is present (the object is being deleted).
 * No ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_obj_deleting(const kc_obj *obj);
/* Number of metadata.finalizers. No ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API size_t kc_obj_finalizer_count(const kc_obj *obj);
/* Number of metadata.ownerReferences. No ownership transfer. Thread-safe. Never fails. Since 0.1.
 */
KC_API size_t kc_obj_owner_count(const kc_obj *obj);

/* Label lookup (binary search over the sorted labels): the value borrowed from obj, or NULL
 * when the key is absent (valid while the caller holds a reference); key is borrowed for the call.
 * Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_obj_label(const kc_obj *obj, const char *key);
/* Number of labels. No ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API size_t kc_obj_label_count(const kc_obj *obj);
/* The i-th label (sorted by key): *ret_key and *ret_value (either may be NULL) are borrowed from
 * obj, valid while the caller holds a reference. Errors: KC_EINVAL when i is out of range or obj is
 * NULL (outputs untouched). Thread-safe. Since 0.1. */
KC_API int kc_obj_label_at(const kc_obj *obj, size_t i, const char **ret_key,
                           const char **ret_value);

/*
 * Field access by JSON Pointer (RFC 6901, e.g. "/spec/nodeName", "/metadata/labels/a~1b").
 * Errors: KC_ENOTFOUND when the path does not exist, KC_EINVAL when the pointer is malformed or the
 * value has another JSON type (err says which type it has), or obj or pointer is NULL; KC_ENOMEM;
 * KC_EUNSUPPORTED (a CPU the JSON parser does not support). pointer is borrowed for the call.
 * Thread-safe. Each function below repeats the four points for itself.
 */
/* String value, unescaped: *ret_str is a new malloc'd NUL-terminated string — caller frees with
 * free(); *ret_len (may be NULL) gets its length. Any string is returned, one with a \u0000
 * escape too: then *ret_len is more than strlen(*ret_str) — compare them before using the value
 * as a C string (a name, a key). Errors: KC_ENOTFOUND, KC_EINVAL, KC_ENOMEM, KC_EUNSUPPORTED (as
 * above). Thread-safe. Since 0.1. */
KC_API int kc_obj_get_string(const kc_obj *obj, const char *pointer, char **ret_str,
                             size_t *ret_len, kc_error *err);
/* Integer value (JSON number without fraction that fits int64) into *ret (the caller's; no
 * ownership transfer). Errors: KC_ENOTFOUND, KC_EINVAL, KC_ENOMEM, KC_EUNSUPPORTED (as above).
 * Thread-safe. Since 0.1. */
KC_API int kc_obj_get_int(const kc_obj *obj, const char *pointer, int64_t *ret, kc_error *err);
/* Boolean value into *ret (the caller's; no ownership transfer). Errors: KC_ENOTFOUND, KC_EINVAL,
 * KC_ENOMEM, KC_EUNSUPPORTED (as above). Thread-safe. Since 0.1. */
KC_API int kc_obj_get_bool(const kc_obj *obj, const char *pointer, bool *ret, kc_error *err);
/* Raw JSON of the sub-tree (any type), borrowed from obj's text: *ret_json points into
 * kc_obj_json(obj) and is NOT NUL-terminated (valid while the caller holds a reference);
 * *ret_len is its length. Errors: KC_ENOTFOUND, KC_EINVAL, KC_ENOMEM, KC_EUNSUPPORTED (as above).
 * Thread-safe. Since 0.1. */
KC_API int kc_obj_get_raw(const kc_obj *obj, const char *pointer, const char **ret_json,
                          size_t *ret_len, kc_error *err);

/* The JSON type of a value (kc_doc_type, iterators). */
typedef enum kc_json_type {
    KC_JSON_NULL = 0,
    KC_JSON_BOOL = 1,
    KC_JSON_INT = 2,    /* a number without fraction or exponent that fits int64 */
    KC_JSON_DOUBLE = 3, /* any other number */
    KC_JSON_STRING = 4,
    KC_JSON_ARRAY = 5,
    KC_JSON_OBJECT = 6,
} kc_json_type;

/* Name of a kc_json_type ("string", "object", …; "?" when unknown). Borrowed (static).
 * Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_json_type_name(kc_json_type type);

/* ---- iteration ---------------------------------------------------------------------------- */
/*
 * Members (object, document order) or elements (array) of the value at a JSON Pointer of a stored
 * object, read in place: no copy of the document is made. kc_obj_iter_new runs one pass of the
 * JSON parser over the stored text and records where each member's key and value are (about 20
 * bytes per member, in an array the iterator owns); the getters then read the value's text.
 *
 *     kc_obj_iter *it;
 *     if (kc_obj_iter_new(obj, "/data", &it, &err) == 0) {
 *         while (kc_obj_iter_next(it) == 1) {
 *             size_t kn, vn;
 *             const char *k = kc_obj_iter_key(it, &kn), *v;
 *             if (kc_obj_iter_string(it, &v, &vn) == 0) ... (k, kn) → (v, vn) ...
 *         }
 *         kc_obj_iter_free(it);
 *     }
 *
 * Strings (keys and values) are returned with their length and are NOT NUL-terminated: one
 * without escapes points into kc_obj_json(obj); one with escapes is unescaped into the
 * iterator's buffer, valid until the next call on the iterator. The iterator holds no reference:
 * the caller's reference to obj must outlive it.
 */
typedef struct kc_obj_iter kc_obj_iter;

/* New iterator over the object or array at ptr ("" = the whole object) of obj (borrowed: the
 * caller keeps a reference while the iterator is used). ptr borrowed for the call. On success *ret
 * is new — caller frees with kc_obj_iter_free(). Errors: KC_ENOTFOUND (no value at ptr), KC_EINVAL
 * (a scalar at ptr, a malformed pointer, NULL arguments), KC_EPARSE (the stored text at ptr is not
 * valid JSON: a decoder that did not validate it, see KC_DECODE_STRICT), KC_ENOMEM,
 * KC_EUNSUPPORTED (a CPU the JSON parser does not support). Thread-safe. Since 0.1. */
KC_API int kc_obj_iter_new(const kc_obj *obj, const char *ptr, kc_obj_iter **ret, kc_error *err);
/* Advance: 1 when positioned on the next member or element, 0 at the end. Errors: KC_EINVAL (NULL
 * it). Not thread-safe (the iterator's owner). Since 0.1. No ownership transfer. */
KC_API int kc_obj_iter_next(kc_obj_iter *it);
/* The current member's name, unescaped, not NUL-terminated (*ret_len, may be NULL, its length);
 * NULL for an array element or when not positioned. Borrowed from obj's text (no escape in it) or
 * from the iterator (valid until it is freed). Not thread-safe (the iterator's owner). Never fails.
 * Since 0.1. */
KC_API const char *kc_obj_iter_key(const kc_obj_iter *it, size_t *ret_len);
/* The current value's type (KC_JSON_NULL when not positioned). No ownership transfer. Not
 * thread-safe (the iterator's owner). Never fails. Since 0.1. */
KC_API kc_json_type kc_obj_iter_type(const kc_obj_iter *it);
/* The current value as a string, unescaped, not NUL-terminated: *ret borrowed from obj's text (no
 * escape in it) or from the iterator's buffer (valid until the next call on it); *ret_len (may be
 * NULL) its length. Errors: KC_EINVAL (not a string, not positioned, NULL it or ret), KC_ENOMEM.
 * Not thread-safe (the iterator's owner). Since 0.1. */
KC_API int kc_obj_iter_string(kc_obj_iter *it, const char **ret, size_t *ret_len);
/* The current value as an integer into *ret, the caller's. Errors: KC_EINVAL (not KC_JSON_INT,
 * not positioned, NULL argument), KC_ENOMEM. Not thread-safe (the iterator's owner). Since 0.1.
 * No ownership transfer. */
KC_API int kc_obj_iter_int(kc_obj_iter *it, int64_t *ret);
/* The current value as a number (KC_JSON_INT or KC_JSON_DOUBLE) into *ret, the caller's. Errors:
 * KC_EINVAL (not a number, not positioned, NULL argument), KC_ENOMEM. Not thread-safe (the
 * iterator's owner). Since 0.1. No ownership transfer. */
KC_API int kc_obj_iter_double(kc_obj_iter *it, double *ret);
/* The current value as a boolean into *ret, the caller's. Errors: KC_EINVAL (not a boolean, not
 * positioned, NULL argument). Not thread-safe (the iterator's owner). Since 0.1. No ownership
 * transfer. */
KC_API int kc_obj_iter_bool(const kc_obj_iter *it, bool *ret);
/* The current value (any type) as JSON text: *ret borrowed, points into kc_obj_json(obj) and is
 * NOT NUL-terminated; *ret_len its length. Errors: KC_EINVAL (not positioned, NULL argument). Not
 * thread-safe (the iterator's owner). Since 0.1. */
KC_API int kc_obj_iter_raw(const kc_obj_iter *it, const char **ret, size_t *ret_len);
/* Free it (consumed; obj is not touched). Accepts NULL. Not thread-safe (the iterator's owner).
 * Never fails. Since 0.1. */
KC_API void kc_obj_iter_free(kc_obj_iter *it);

/* Bytes of heap this object holds (struct, text, metadata record), for memory accounting; 0 for
 * NULL. No ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API size_t kc_obj_heap_size(const kc_obj *obj);

KC_END_DECLS

#endif
