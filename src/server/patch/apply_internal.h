/*
 * apply_internal.h — helpers of server-side apply shared by apply.c and apply_fields.c. Field
 * sets are FieldsV1 JSON objects (see apply_fields.c). Thread-safe: no shared state.
 */
#ifndef KC_SERVER_APPLY_INTERNAL_H
#define KC_SERVER_APPLY_INTERNAL_H

#include "server/patch/patch_internal.h"

#include "core/internal.h"

/* What the list-key lookup needs to know about the applied object. */
typedef struct kc__apply_ctx {
    const char *kind; /* the applied kind (borrowed) */
    bool builtin;     /* built-in API group: strategic merge keys; else lists keyed by "name" */
} kc__apply_ctx;

/* true for built-in API versions: "v1", "<group without dots>/<v>", "<group>.k8s.io/<v>". */
bool kc__apply_builtin(const char *api_version);

/* Keys of list field `field` inside the field `parent` (see kc__list_keys_find), or for custom
 * resources the "name" key when every element of applied_list is a map with a string name.
 * NULL = atomic. Borrowed (static). */
const kc__list_keys *kc__apply_list_keys(const kc__apply_ctx *ctx, const char *parent,
                                         const char *field, const json_t *applied_list);

/* The key object of element el ({"name":"web"}, {"containerPort":80,"protocol":"TCP"}); the
 * second key gets its default when absent. New reference; NULL on ENOMEM. */
json_t *kc__apply_elem_key(const kc__list_keys *lk, const json_t *el);

/* "<prefix>:<compact JSON of v, keys sorted>", e.g. k:{"name":"web"} or v:"a". New malloc'd
 * string (caller frees); NULL on ENOMEM. */
char *kc__apply_set_key(char prefix, const json_t *v);

/* The element of arr a "k:…" or "v:…" set key names (borrowed from arr), NULL when none;
 * *ret_index (may be NULL) gets its index. lk is needed for "k:" keys. */
json_t *kc__apply_find_elem(const json_t *arr, const kc__list_keys *lk, const char *set_key,
                            size_t *ret_index);

/* The FieldsV1 set of an applied configuration (object). New reference; NULL on ENOMEM. */
json_t *kc__apply_fieldset(const kc__apply_ctx *ctx, const json_t *applied);

/* Append the upstream path form of one set key to b: f:x → ".x", k:{"name":"a"} → [name="a"],
 * v:"x" → [="x"]. 0 or the kc__buf error. */
int kc__apply_path_append(kc__buf *b, const char *set_key);

#endif
