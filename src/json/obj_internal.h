/*
 * json/obj_internal.h — the kc_obj layout and its construction, shared by the decoders
 * (obj.c, list.c, watch.c) and the accessors (obj_access.c).
 */
#ifndef KC_JSON_OBJ_INTERNAL_H
#define KC_JSON_OBJ_INTERNAL_H

#include "json/sj.h"
#include "kcache/decode.h"
#include "kcache/shard.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * struct kc_obj — the object itself (obj.c builds it, obj_access.c reads it).
 *
 * Layout (one allocation: the object arena's for bulk decodes — KC__BUILD_ARENA, core/slab.h —
 * else malloc's; see docs/decoding.md):
 *
 *   struct kc_obj   refcount, lengths, counts, rv_int, generation, offsets of the strings below
 *   json[json_len]  the stored minified JSON (managedFields cut out, kind/apiVersion injected)
 *   '\0'
 *   labels[]        n_labels pairs of uint32 offsets (key, value), sorted by key
 *   strings         NUL-terminated apiVersion, kind, namespace, name, uid, resourceVersion,
 *                   the controller owner's uid, apiVersion, kind and name (four strings back to
 *                   back, when an owner has controller=true: no offset more in the header),
 *                   label keys and values
 *   [pad]           only when the tail after json is shorter than KC__SJ_PADDING: simdjson reads
 *                   the stored text in place for JSON Pointer access and needs that many
 *                   readable bytes after it (their content does not matter)
 *
 * Offsets are uint32 from the start of the object (0 = absent → ""), so objects are limited to
 * 2 GiB (kc__decode_max caps max_object_size). Nothing is written after construction, so readers
 * need no lock; the count is atomic (acquire/release on the last unref).
 */
enum { F_API_VERSION, F_KIND, F_NS, F_NAME, F_UID, F_RV, F_CTRL, F_LABELS, F_COUNT };

struct kc_obj {
    _Atomic uint32_t refs;
    uint32_t json_len;
    uint32_t heap; /* bytes allocated for this object */
    uint32_t n_labels;
    uint32_t n_finalizers;
    uint32_t n_owners;
    uint32_t ext_off; /* offset of a caller's data (kc__obj_ident_new), 0 = none */
    uint32_t off[F_COUNT];
    bool deleting;
    bool arena; /* the allocation is kc__slab's (core/slab.h), else malloc's */
    uint64_t rv_int;
    int64_t generation;
    char json[];
};

/* An object of src's identity only — its stored text {"apiVersion","kind","metadata":{"name",
 * "namespace","uid","resourceVersion"}} and those extracted fields; deleting, generation and the
 * RV's integer kept; no labels, owners or finalizers — with ext_size bytes (8-aligned, zeroed) of
 * the caller's own data in the same allocation, found with kc__obj_ext: for a cache that keeps an
 * object in a form of its own (the node agent's, src/nodeagent/) while the informer's store keys
 * and resumes by the identity. 0 and a new reference in *ret, KC_ENOMEM, or KC_ETOOLARGE (more
 * than 1 GiB). */
int kc__obj_ident_new(const kc_obj *src, size_t ext_size, kc_obj **ret);
/* The ext_size bytes of an object from kc__obj_ident_new, else NULL. */
static inline void *kc__obj_ext(const kc_obj *o)
{
    return o && o->ext_off ? (char *)o + o->ext_off : NULL;
}

/* Release o's memory (the last reference is gone). */
void kc__obj_free(struct kc_obj *o);

/* Effective maximum object size of opts (0 → KC_DEFAULT_MAX_OBJECT_SIZE; capped below 2 GiB). */
size_t kc__decode_max(const kc_decode_opts *opts);

/* The public decode flags of opts (internal bits masked off); 0 for NULL. */
static inline unsigned kc__decode_flags(const kc_decode_opts *opts)
{
    return opts ? opts->flags & (KC_DECODE_KEEP_MANAGED_FIELDS | KC_DECODE_METADATA_ONLY |
                                 KC_DECODE_INPUT_PADDED | KC_DECODE_STRICT)
                : 0;
}

/* Internal build flag: copy the object's text while checking it for bytes <= 0x20; when one is
 * seen, nothing is built and kc__obj_build returns KC__OBJ_NOT_COMPACT (> 0). */
#define KC__BUILD_CHECK_WS  (1u << 30)
#define KC__OBJ_NOT_COMPACT 1
/* Internal build flag: take the object's memory from the arena (core/slab.h) when it is on — bulk
 * decodes only (LIST items, a streaming list's initial events), whose thread releases its chunk
 * when the bulk ends. */
#define KC__BUILD_ARENA (1u << 29)

/* Build one kc_obj from what sj found. list (may be NULL): the enclosing list, whose apiVersion
 * and kind (minus its "List" suffix) are injected when the object lacks them. keep (may be NULL):
 * kc_decode_opts.keep, the field projection (sj_project.cpp) of the stored text.
 * Returns 0 and a new reference in *ret, or KC_ETOOLARGE / KC_ENOMEM (e filled). */
int kc__obj_build(const kc__sj_meta *m, unsigned flags, size_t max_size,
                  const kc__sj_list_info *list, const char *const *keep, kc_obj **ret,
                  kc__sj_err *e);

/* false when sel (may be NULL: keep) rejects the object m describes: the walker flagged it
 * (shard_out), or its shard key — "" when absent — hashes outside (kcache/shard.h). */
static inline bool kc__shard_keep(const struct kc_shard_selector *sel, const kc__sj_meta *m)
{
    if (!sel)
        return true;
    if (m->shard_out)
        return false;
    kc__sj_str k = kc_shard_selector_field(sel) == KC_SHARD_FIELD_UID ? m->uid : m->ns;
    return kc_shard_selector_match_hash(sel, kc_shard_hash(k.p, k.n));
}

/* watch_prefilter.c: true when the watch line's first bytes show an ADDED/MODIFIED/DELETED event
 * whose shard key hashes outside sel (drop it undecoded); false = decode it normally. */
bool kc__watch_prefilter_drop(const char *line, size_t n, const struct kc_shard_selector *sel);

/* Copy an sj error into err (offset shifted by base when known). Returns the code. */
int kc__sj_err_to(const kc__sj_err *e, int64_t base, kc_error *err);

/* obj_iter.c: a new iterator over the members or elements of it's current value (an object or
 * array: else KC_EINVAL), from a pass over that value's text only. Borrows the same object. */
int kc__obj_iter_child(const kc_obj_iter *it, kc_obj_iter **ret, kc_error *err);

/* obj_iter.c: find the first element of the array at ptr of obj that is an object whose member
 * key is the string value; 0 when found (buf, when not NULL, gets its member want's string value,
 * cut to cap - 1 bytes, "" when absent), KC_ENOTFOUND when none (or no array at ptr), or the
 * iterator's error. */
int kc__obj_array_lookup(const kc_obj *obj, const char *ptr, const char *key, const char *value,
                         const char *want, char *buf, size_t cap, kc_error *err);

#endif
