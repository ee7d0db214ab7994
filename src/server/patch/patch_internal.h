/*
 * patch_internal.h — helpers shared by the patch engines of the embedded server: body decoding
 * with a depth limit, merge-key lookup for built-in kinds, the strategic merge itself, the YAML →
 * jansson converter used by server-side apply, and numeric-aware JSON equality. Not used outside
 * patch*.c / apply*.c. Thread-safe: no shared state.
 */
#ifndef KC_SERVER_PATCH_INTERNAL_H
#define KC_SERVER_PATCH_INTERNAL_H

#include <jansson.h>

#include "kcache/error.h"

/* Deepest nesting a patch body, an applied configuration or a patched document may have (#39:
 * deeper bodies are malformed → KC_EBADREQUEST). */
#define KC__PATCH_MAX_DEPTH 100
/* Most operations one JSON patch may carry (upstream: 10 000; more → KC_ETOOLARGE, 413). */
#define KC__PATCH_MAX_OPS 10000

/* true when v nests no deeper than max_depth levels (a scalar is depth 0). Borrowed. */
bool kc__json_depth_ok(const json_t *v, int max_depth);

/* Decode a JSON body (len bytes, need not be NUL-terminated) of any type with the depth limit.
 * *ret is a new reference. Errors: KC_EBADREQUEST naming jansson's message and the offset. */
int kc__patch_json_decode(const char *body, size_t len, json_t **ret, kc_error *err);

/* JSON equality where numbers compare by value (1 == 1.0), as RFC 6902 "test" requires.
 * Borrowed arguments; NULLs are equal only to each other. */
bool kc__json_equal(const json_t *a, const json_t *b);

/* RFC 7386 merge of patch into *target (in place; *target may be replaced: the old reference is
 * dropped and *target holds a new one). Returns 0 or KC_ENOMEM. */
int kc__merge_patch(json_t **target, const json_t *patch);

/* RFC 6902: apply the operations array ops to *doc in place (*doc may be replaced as above).
 * Errors: KC_EBADREQUEST (malformed operation), KC_EUNPROCESSABLE (failed test, bad path),
 * KC_ETOOLARGE (> KC__PATCH_MAX_OPS), KC_ENOMEM. On failure *doc may be half patched: callers
 * work on a copy. */
int kc__json_patch(json_t **doc, const json_t *ops, kc_error *err);

/* A keyed list: the field's merge keys (1 or 2; keys[1] may be NULL) and, for the second key, the
 * value assumed when an element lacks it (e.g. protocol "TCP"). set=true marks a list of
 * primitives merged as a set (metadata.finalizers). */
typedef struct kc__list_keys {
    const char *keys[2];
    const char *key2_default;
    bool set;
} kc__list_keys;

/* The merge keys of list field `field` of an object of kind `kind`, inside the object field
 * `parent` ("" at the top, else the name of the field holding the object — for list elements the
 * list's field name). NULL when the list is atomic (replaced whole). Borrowed (static table). */
const kc__list_keys *kc__list_keys_find(const char *kind, const char *parent, const char *field);

/* true when list element el (object) matches the key values of key (object with the same keys),
 * applying lk->key2_default to either side when the second key is absent. */
bool kc__list_elem_matches(const kc__list_keys *lk, const json_t *el, const json_t *key);

/* Strategic merge patch (object patch) into *doc (object, modified in place). Errors:
 * KC_EBADREQUEST (bad directive, list element without its merge key, patch not an object),
 * KC_ENOMEM. */
int kc__strategic_merge(json_t *doc, const json_t *patch, const char *kind, kc_error *err);

/* Decode a YAML (or JSON) document of len bytes into a jansson value (*ret new reference).
 * One document only; anchors are ignored, aliases rejected; plain scalars resolve to null,
 * booleans, integers and floats as sigs.k8s.io/yaml does; nesting limited to max_depth.
 * Errors: KC_EBADREQUEST naming the line, KC_ENOMEM. */
int kc__yaml_decode(const char *body, size_t len, int max_depth, json_t **ret, kc_error *err);

#endif
