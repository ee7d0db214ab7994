/*
 * kcache/shard.h — hash ranges of objects (server-side sharded list and watch, Kubernetes 1.36
 * alpha, KEP-5866): the hash, the `shardSelector` grammar and its canonical form, shared by the
 * client side (sharded informers, shard coordinators) and the embedded API server.
 *
 * An object's shard key is the string of one field, `object.metadata.uid` or
 * `object.metadata.namespace` ("" for cluster-scoped objects). Its hash is 64-bit FNV-1a over the
 * string's bytes (no terminator, no normalisation): offset basis 0xcbf29ce484222325, prime
 * 0x100000001b3, for each byte `h ^= b; h *= prime`.
 *
 * Selector grammar (the API server's, parsed, never evaluated):
 *   selector := term ( "||" term )*
 *   term     := shardRange( FIELD , BOUND , BOUND )
 *   FIELD    := object.metadata.uid | object.metadata.namespace     (the same in every term)
 *   BOUND    := a quoted ('…' or "…") 0x followed by exactly 16 lowercase hex digits, or the
 *               literal 0x10000000000000000 (2^64, the exclusive top)
 * Whitespace is free between tokens. A term is the half-open range [START, END) with START < END;
 * terms are a union, may be non-contiguous and may overlap. Anything else — `&&`, comparisons,
 * other functions, unquoted or short or uppercase bounds, an empty selector — is an error.
 *
 * The canonical form (what a server echoes in a list's `metadata.shardInfo.selector`, and what a
 * client must send so it can compare the echo byte for byte) is
 *   shardRange(<field>, '0x<16 hex>', '0x<16 hex>' | '0x10000000000000000')
 * with terms in the order given, joined by " || ".
 *
 * Threads: parsed selectors are immutable, so every function is thread-safe on any selector,
 * except kc_shard_selector_free, which must not race with another use of the same selector.
 */
#ifndef KCACHE_SHARD_H
#define KCACHE_SHARD_H

#include "obj.h"

KC_BEGIN_DECLS

/* The field an object is hashed on. Zero means "no sharding" wherever an options struct holds
 * one. */
typedef enum kc_shard_field {
    KC_SHARD_FIELD_NONE = 0,
    KC_SHARD_FIELD_UID = 1,       /* object.metadata.uid */
    KC_SHARD_FIELD_NAMESPACE = 2, /* object.metadata.namespace ("" when cluster-scoped) */
} kc_shard_field;

/* One hash range [start, end), or [start, 2^64) when end_max. A value type, passed by value and in
 * arrays: frozen (docs/abi.md). A range is valid when end_max or start < end. */
typedef struct kc_shard_range {
    uint64_t start;
    uint64_t end; /* exclusive; ignored when end_max */
    bool end_max; /* the range runs to the top of the hash space (2^64, exclusive) */
} kc_shard_range;

typedef struct kc_shard_selector kc_shard_selector;

/* The longest selector text kc_shard_selector_parse accepts. */
#define KC_SHARD_SELECTOR_MAX_LEN (64 * 1024)
/* The most terms one selector holds. */
#define KC_SHARD_SELECTOR_MAX_TERMS 1024

/* 64-bit FNV-1a of len bytes at s (s may be NULL when len is 0; borrowed for the call). Pure;
 * thread-safe. Never fails. Since 0.1. */
KC_API uint64_t kc_shard_hash(const void *s, size_t len);

/* The shard key of obj for field: its uid or namespace (borrowed from obj, valid while the caller
 * holds obj; "" when absent), or NULL when obj is NULL or field is not a known field. Thread-safe.
 * Never fails. Since 0.1. */
KC_API const char *kc_shard_key(const kc_obj *obj, kc_shard_field field);

/* true when h falls in r (borrowed for the call). r NULL → false. Pure; thread-safe. Never fails.
 * Since 0.1. */
KC_API bool kc_shard_range_contains(const kc_shard_range *r, uint64_t h);

/* The i-th of n even ranges of the hash space: start_i = floor(i·2^64/n), the last ends at 2^64
 * (for n = 3 the bounds are 0x5555555555555555 and 0xaaaaaaaaaaaaaaaa). Writes *ret. Errors:
 * KC_EINVAL when ret is NULL, n is 0 or i >= n. No ownership transfer (ret is the caller's).
 * Pure; thread-safe. Since 0.1. */
KC_API int kc_shard_range_split(uint64_t n, uint64_t i, kc_shard_range *ret);

/* Parse selector text (NUL-terminated; borrowed for the call). On success *ret_sel is new —
 * caller frees with kc_shard_selector_free(). Errors: KC_EINVAL with err naming the problem and its
 * byte offset (err->offset) — a short bound's message suggests the padded form; KC_ETOOLARGE when
 * text is longer than KC_SHARD_SELECTOR_MAX_LEN or has more than KC_SHARD_SELECTOR_MAX_TERMS terms;
 * KC_ENOMEM. Thread-safe. Since 0.1. */
KC_API int kc_shard_selector_parse(const char *text, kc_shard_selector **ret_sel, kc_error *err);

/* Build a selector from n ranges on field (ranges copied; their order kept); *ret_sel is new —
 * caller frees with kc_shard_selector_free(). Errors: KC_EINVAL when ret_sel is NULL, field is not
 * UID or NAMESPACE, n is 0 or over KC_SHARD_SELECTOR_MAX_TERMS, ranges is NULL, or a range is empty
 * (start >= end without end_max); KC_ENOMEM. Thread-safe. Since 0.1. */
KC_API int kc_shard_selector_new(kc_shard_field field, const kc_shard_range *ranges, size_t n,
                                 kc_shard_selector **ret_sel, kc_error *err);

/* Free a selector (sel is consumed; NULL is a no-op). Threads: see the header. Never fails.
 * Since 0.1. */
KC_API void kc_shard_selector_free(kc_shard_selector *sel);

/* The canonical text (borrowed; valid until the selector is freed). NULL sel → NULL.
 * Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_shard_selector_string(const kc_shard_selector *sel);

/* The field (KC_SHARD_FIELD_NONE for NULL sel). No ownership transfer. Thread-safe. Never fails.
 * Since 0.1. */
KC_API kc_shard_field kc_shard_selector_field(const kc_shard_selector *sel);
/* The number of terms (0 for NULL sel). No ownership transfer. Thread-safe. Never fails.
 * Since 0.1. */
KC_API size_t kc_shard_selector_count(const kc_shard_selector *sel);
/* The i-th range (borrowed; valid until the selector is freed; NULL when i is out of range or sel
 * is NULL). Thread-safe. Never fails. Since 0.1. */
KC_API const kc_shard_range *kc_shard_selector_range(const kc_shard_selector *sel, size_t i);

/* true when hash h is in any term. sel NULL matches everything. sel is borrowed for the call.
 * Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_shard_selector_match_hash(const kc_shard_selector *sel, uint64_t h);
/* true when obj's shard key hashes into any term. sel NULL matches everything; obj NULL never
 * matches a non-NULL sel. sel and obj are borrowed for the call. Thread-safe. Never fails.
 * Since 0.1. */
KC_API bool kc_shard_selector_match(const kc_shard_selector *sel, const kc_obj *obj);

KC_END_DECLS

#endif
