/*
 * json/decode_internal.h — decoder features for the REST layer that the public API does not carry
 * (sharded informers, KEP-5866): a hash-range filter applied while decoding, and what a LIST body
 * says beyond kc_list_meta (a frozen public struct) — the server's echo of a shard selector
 * (metadata.shardInfo.selector), which a sharded informer compares with what it sent.
 *
 * The filter (kcache/shard.h; borrowed: it must outlive the decode or the decoder): list items
 * and ADDED / MODIFIED / DELETED watch events whose shard key (metadata.uid or
 * metadata.namespace, "" when absent) hashes outside it are dropped while the decoder walks their
 * metadata — no kc_obj is built, the callback never sees them. BOOKMARK and ERROR events pass.
 */
#ifndef KC_JSON_DECODE_INTERNAL_H
#define KC_JSON_DECODE_INTERNAL_H

#include "kcache/decode.h"
#include "kcache/shard.h"

typedef struct kc__list_ext {
    bool has_shard_info;  /* metadata.shardInfo present (not null) */
    char *shard_selector; /* its selector (malloc'd); NULL when absent */
} kc__list_ext;

/* kc_list_decode (opts already a full-size copy, may be NULL) with the filter shard (may be NULL),
 * also filling *ret_ext (may be NULL; the caller clears it with kc__list_ext_clear) on success. */
int kc__list_decode_ex(const char *body, size_t len, const kc_decode_opts *opts,
                       const kc_shard_selector *shard, kc_list_meta *ret_meta,
                       kc__list_ext *ret_ext, kc_list_item_cb on_item, void *ud, kc_error *err);
void kc__list_ext_clear(kc__list_ext *ext);

/* Filter the decoder's later events through shard (NULL: none). */
void kc__watch_decoder_set_shard(kc_watch_decoder *dec, const kc_shard_selector *shard);
/* A streaming list (sendInitialEvents): the objects of the events before the initial-events-end
 * bookmark take their memory from the object arena (core/slab.h), as LIST items do. The decoder
 * must be fed on one thread; that thread's arena chunk is released at the bookmark (or when the
 * decoder is freed before it). */
void kc__watch_decoder_set_initial_arena(kc_watch_decoder *dec);

/* kc_obj_get_string for a value used as a C string (a name, a version, an identity): cut at a
 * NUL character (\u0000), "a\u0000b" would read as "a" (issue 29 point 9). A string with a NUL
 * in it is KC_EPARSE (err names the pointer; *ret_str untouched) or, with escape, returned with
 * each NUL written as the six characters \u0000 — for values that are compared, where absent
 * would mean something else (a lease holder: absent is a free lease). */
int kc__obj_get_cstring(const kc_obj *obj, const char *pointer, char **ret_str, bool escape,
                        kc_error *err);

/* A JSON Pointer's syntax (pointer.c): "" or "/…" with every '~' followed by '0' or '1'. */
bool kc__json_pointer_ok(const char *p);

#endif
