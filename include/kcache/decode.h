/*
 * kcache/decode.h — the hot path: LIST bodies and watch streams → immutable kc_obj; and
 * metav1.Status error bodies → kc_error.
 *
 * Both decoders use simdjson; items are minified and transformed (managedFields stripped by
 * default) straight into kc_obj without a general DOM. List items that lack apiVersion/kind get
 * them from the list (kind without its "List" suffix), as the API server omits them; an item
 * that has them must agree with the list (a Secret in a ConfigMapList, or apiVersion "v2" in a
 * v1 list, is KC_EPARSE) unless the list's kind is not "<Kind>List" (the generic v1 "List").
 *
 * A string that becomes a C string (kc_obj_name and the other accessors, the list's metadata, a
 * watch event's type) with a NUL character (\u0000) in it is KC_EPARSE naming the field: cut at
 * the NUL, two different names would become one store key. Errors about a LIST item start with
 * its index ("items[3]: ") and give its byte offset, also when the item callback stopped.
 *
 * Malformed input is KC_EPARSE with the byte offset of the fault in kc_error.offset (the end of
 * the input when it is truncated); it is never rewritten. Sub-trees the decoders do not read are
 * checked only for UTF-8, string termination and bracket balance unless opts has
 * KC_DECODE_STRICT (obj.h; docs/decoding.md, "Validation").
 */
#ifndef KCACHE_DECODE_H
#define KCACHE_DECODE_H

#include "obj.h"

KC_BEGIN_DECLS

/* List metadata. Strings are owned by the struct; release with kc_list_meta_clear(). */
typedef struct kc_list_meta {
    char *api_version;            /* e.g. "v1"; NULL when absent */
    char *kind;                   /* e.g. "PodList"; NULL when absent */
    char *resource_version;       /* metadata.resourceVersion; NULL when absent */
    char *continue_token;         /* metadata.continue; NULL when absent or empty */
    int64_t remaining_item_count; /* metadata.remainingItemCount; -1 when absent */
} kc_list_meta;

/* Free the strings of meta (borrowed; the strings it owns are freed) and zero it
 * (remaining_item_count = -1). Accepts NULL. Thread-safe for distinct metas. Never fails.
 * Since 0.1. */
KC_API void kc_list_meta_clear(kc_list_meta *meta);

/* Called once per item, in order. item is consumed: the callback owns the reference and must
 * unref it (or keep it). Return 0 to go on, or a negative code to stop decoding (returned by
 * kc_list_decode). */
typedef int (*kc_list_item_cb)(void *ud, kc_obj *item);

/*
 * Decode a complete LIST response body (len bytes; need not be NUL-terminated nor padded).
 * Fills *ret_meta (may be NULL) and calls on_item for each of items[] (may be NULL: items are
 * decoded, validated and dropped). Errors: KC_EPARSE (err names what and the byte offset),
 * KC_ETOOLARGE (an item over opts->max_object_size), KC_ENOMEM, or the callback's code. On failure
 * ret_meta is untouched; items already delivered stay delivered. On success *ret_meta is
 * overwritten (clear it first if it held strings) — its strings are new, owned by the struct;
 * body and opts are borrowed for the call; each item is a new reference handed to on_item.
 * Thread-safe (scratch is per thread; a callback may itself call kc_list_decode). Since 0.1.
 */
KC_API int(kc_list_decode)(const char *body, size_t len, const kc_decode_opts *opts,
                           size_t opts_size, kc_list_meta *ret_meta, kc_list_item_cb on_item,
                           void *ud, kc_error *err);
#define kc_list_decode(body, len, opts, ret_meta, on_item, ud, err)                                \
    (kc_list_decode)((body), (len), (opts), sizeof(kc_decode_opts), (ret_meta), (on_item), (ud),   \
                     (err))

/*
 * Reusable LIST decoder. Decoding needs scratch memory (a copy of the body plus simdjson's
 * structural index, together about 2-5x the body); bodies over 16 MiB are decoded in windows of
 * about 4 MiB, so their scratch stays near 20 MiB whatever the body's size. A window grows to hold
 * an item bigger than it, but never past the item size limit (2 x max_object_size + 4096 bytes of
 * raw text: 8 MiB by default): an item with no end within that is KC_ETOOLARGE at its first byte,
 * for the cost of that window, whatever its size. kc_list_decode keeps a
 * per-thread scratch between calls only while it is under 16 MiB (a LIST page); larger scratch is
 * freed after the call. A kc_list_decoder keeps its scratch whatever the size, which avoids
 * fresh-page faults when big LISTs are decoded repeatedly. new: opts may be NULL (copied); errors
 * KC_EINVAL (ret NULL), KC_ENOMEM; on success *ret is new — caller frees with
 * kc_list_decoder_free(). One decoder is used by one thread at a time.
 */
typedef struct kc_list_decoder kc_list_decoder;
/* New reusable LIST decoder (above): opts copied; *ret is new — caller frees with
 * kc_list_decoder_free(). Errors: KC_EINVAL (ret NULL), KC_EUNSUPPORTED (opts of a newer header),
 * KC_ENOMEM. Thread-safe (the decoder it returns is used by one thread at a time). Since 0.1. */
KC_API int(kc_list_decoder_new)(const kc_decode_opts *opts, size_t opts_size, kc_list_decoder **ret,
                                kc_error *err);
#define kc_list_decoder_new(opts, ret, err)                                                        \
    (kc_list_decoder_new)((opts), sizeof(kc_decode_opts), (ret), (err))
/* As kc_list_decode, with dec's options and retained scratch: body is borrowed for the call, each
 * item is a new reference handed to on_item. Errors: KC_EPARSE, KC_ETOOLARGE, KC_ENOMEM,
 * KC_EINVAL, the callback's code. Not thread-safe: one thread at a time per decoder. Since 0.1. */
KC_API int kc_list_decoder_decode(kc_list_decoder *dec, const char *body, size_t len,
                                  kc_list_meta *ret_meta, kc_list_item_cb on_item, void *ud,
                                  kc_error *err);
/* Release the retained scratch (the decoder stays usable). Accepts NULL. No ownership transfer.
 * Not thread-safe: one thread at a time per decoder. Never fails. Since 0.1. */
KC_API void kc_list_decoder_trim(kc_list_decoder *dec);
/* Free (dec is consumed). Accepts NULL. Not thread-safe: no other call on dec may be in flight.
 * Never fails. Since 0.1. */
KC_API void kc_list_decoder_free(kc_list_decoder *dec);

typedef enum kc_watch_type {
    KC_WATCH_ADDED = 1,
    KC_WATCH_MODIFIED = 2,
    KC_WATCH_DELETED = 3,
    KC_WATCH_BOOKMARK = 4,
    KC_WATCH_ERROR = 5,
} kc_watch_type;

/* Name of a watch type ("ADDED", …). Borrowed (static). Thread-safe. Never fails ("UNKNOWN" for
 * another value). Since 0.1. */
KC_API const char *kc_watch_type_name(kc_watch_type type);

/* One decoded watch event, valid only during the callback. */
typedef struct kc_watch_event {
    kc_watch_type type;
    kc_obj *obj;             /* borrowed for the callback; kc_obj_ref() to keep. NULL for ERROR */
    bool initial_events_end; /* BOOKMARK annotated k8s.io/initial-events-end: "true" */
    const kc_error *error; /* ERROR: the decoded Status (code, http_status, reason…); else NULL */
} kc_watch_event;

/* Called once per event in stream order. Return 0 to go on, or a negative code to stop (returned
 * by kc_watch_decoder_feed; the decoder keeps the remaining bytes and may be fed again). */
typedef int (*kc_watch_event_cb)(void *ud, const kc_watch_event *ev);

typedef struct kc_watch_decoder kc_watch_decoder;

/* New resumable decoder for a newline-delimited watch stream. opts may be NULL (copied).
 * Errors: KC_EINVAL (ret NULL), KC_ENOMEM. On success *ret is new — caller frees with
 * kc_watch_decoder_free(). One decoder per stream, used from one thread at a time; this call is
 * thread-safe. Also KC_EUNSUPPORTED (opts of a newer header). Since 0.1. */
KC_API int(kc_watch_decoder_new)(const kc_decode_opts *opts, size_t opts_size,
                                 kc_watch_decoder **ret, kc_error *err);
#define kc_watch_decoder_new(opts, ret, err)                                                       \
    (kc_watch_decoder_new)((opts), sizeof(kc_decode_opts), (ret), (err))

/*
 * Feed the next chunk (any size; events may span chunks; CRLF and blank lines are accepted).
 * buf is borrowed for the call. Calls cb for every complete event. A chunk of 0 bytes (buf may
 * then be NULL) adds nothing: it returns 0 — after delivering the lines an earlier callback stop
 * held back, if any, as every feed does. Errors: KC_EINVAL (dec or cb NULL, or buf NULL with len >
 * 0), KC_EPARSE (a malformed event: err names what and the offset in the stream since the decoder
 * was created or reset), KC_ETOOLARGE (a line over max_object_size), KC_ENOMEM, or the callback's
 * code. After KC_EPARSE/KC_ETOOLARGE every call returns that code until the decoder is reset.
 * Events' objects are borrowed for the callback (kc_obj_ref() to keep). Not thread-safe: one
 * thread at a time per decoder. Since 0.1.
 */
KC_API int kc_watch_decoder_feed(kc_watch_decoder *dec, const char *buf, size_t len,
                                 kc_watch_event_cb cb, void *ud, kc_error *err);

/* Signal end of stream: a final event without a trailing newline is decoded. Returns as feed,
 * or KC_EPARSE when a partial event remains that is not valid JSON. Errors: as feed (KC_EPARSE,
 * KC_ETOOLARGE, KC_ENOMEM, KC_EINVAL, the callback's code). Objects are borrowed for the callback.
 * Not thread-safe: one thread at a time per decoder. Since 0.1. */
KC_API int kc_watch_decoder_finish(kc_watch_decoder *dec, kc_watch_event_cb cb, void *ud,
                                   kc_error *err);

/* Drop buffered bytes and error state; the decoder is ready for a new stream. NULL: nothing. No
 * ownership transfer. Not thread-safe: one thread at a time per decoder. Never fails. Since 0.1. */
KC_API void kc_watch_decoder_reset(kc_watch_decoder *dec);

/* Free (dec is consumed). Accepts NULL. Not thread-safe: no other call on dec may be in flight.
 * Never fails. Since 0.1. */
KC_API void kc_watch_decoder_free(kc_watch_decoder *dec);

/* ---- Status bodies -------------------------------------------------------------------------- */

/*
 * Parse a metav1.Status JSON body (len bytes at json; need not be NUL-terminated) into err:
 * code (from the Status `code` and `reason`), http_status, reason, message, details (name, group,
 * kind, uid, causes, retryAfterSeconds). Returns the mapped KC_E… code (negative) for a Failure
 * Status, 0 for a Success Status, or KC_EPARSE when the body is not a Status (err then says why).
 * Strings are copied into err (owned by it: kc_error_clear()); json is borrowed for the call.
 * Errors: the mapped code of a Failure Status, KC_EPARSE. Thread-safe. Since 0.1.
 */
KC_API int kc_status_parse(const char *json, size_t len, kc_error *err);

KC_END_DECLS

#endif
