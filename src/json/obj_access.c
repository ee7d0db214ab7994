/*
 * obj_access.c — kc_obj's reference counting and its accessors: the extracted metadata (strings
 * at offsets in the object's own allocation, json/obj_internal.h), the counts, and the labels
 * (sorted by key: binary search).
 *
 * Nothing here writes an object after construction except its atomic reference count, so every
 * accessor is lock-free; the last unref frees (acquire/release).
 */
#include "core/internal.h"
#include "json/obj_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

kc_obj *kc_obj_ref(kc_obj *obj)
{
    if (obj)
        atomic_fetch_add_explicit(&obj->refs, 1, memory_order_relaxed);
    return obj;
}

void kc_obj_unref(kc_obj *obj)
{
    /* acq_rel rather than release + acquire fence: same ordering, and ThreadSanitizer (which does
     * not model stand-alone fences) sees the happens-before edge to free(). */
    if (!obj)
        return;
    uint32_t prev = atomic_fetch_sub_explicit(&obj->refs, 1, memory_order_acq_rel);
    KC__DEBUG_ASSERT(prev != 0); /* an unref without a matching reference (underflow) */
    if (prev == 1)
        kc__obj_free(obj);
}

void kc_obj_array_free(kc_obj **objs, size_t n)
{
    if (!objs)
        return;
    for (size_t i = 0; i < n; i++)
        kc_obj_unref(objs[i]);
    free(objs);
}

/* Accessors accept NULL (header): "" or 0, as for an absent field. */

const char *kc_obj_json(const kc_obj *obj, size_t *ret_len)
{
    if (ret_len)
        *ret_len = obj ? obj->json_len : 0;
    return obj ? obj->json : "";
}

static const char *field(const kc_obj *obj, int f)
{
    return obj && obj->off[f] ? (const char *)obj + obj->off[f] : "";
}

const char *kc_obj_api_version(const kc_obj *obj)
{
    return field(obj, F_API_VERSION);
}
const char *kc_obj_kind(const kc_obj *obj)
{
    return field(obj, F_KIND);
}
const char *kc_obj_namespace(const kc_obj *obj)
{
    return field(obj, F_NS);
}
const char *kc_obj_name(const kc_obj *obj)
{
    return field(obj, F_NAME);
}
const char *kc_obj_uid(const kc_obj *obj)
{
    return field(obj, F_UID);
}
const char *kc_obj_resource_version(const kc_obj *obj)
{
    return field(obj, F_RV);
}
/* The controller's strings: uid, apiVersion, kind, name, each NUL-terminated, back to back from
 * off[F_CTRL] (present when an owner reference has controller=true); i-th of them, or "". */
static const char *ctrl_field(const kc_obj *obj, int i)
{
    const char *s = field(obj, F_CTRL);
    if (!*s && !(obj && obj->off[F_CTRL]))
        return "";
    for (; i > 0; i--)
        s += strlen(s) + 1;
    return s;
}
const char *kc_obj_controller_uid(const kc_obj *obj)
{
    return field(obj, F_CTRL);
}
const char *kc_obj_controller_api_version(const kc_obj *obj)
{
    return ctrl_field(obj, 1);
}
const char *kc_obj_controller_kind(const kc_obj *obj)
{
    return ctrl_field(obj, 2);
}
const char *kc_obj_controller_name(const kc_obj *obj)
{
    return ctrl_field(obj, 3);
}
uint64_t kc_obj_rv_int(const kc_obj *obj)
{
    return obj ? obj->rv_int : 0;
}
int64_t kc_obj_generation(const kc_obj *obj)
{
    return obj ? obj->generation : 0;
}
bool kc_obj_deleting(const kc_obj *obj)
{
    return obj && obj->deleting;
}
size_t kc_obj_finalizer_count(const kc_obj *obj)
{
    return obj ? obj->n_finalizers : 0;
}
size_t kc_obj_owner_count(const kc_obj *obj)
{
    return obj ? obj->n_owners : 0;
}
size_t kc_obj_label_count(const kc_obj *obj)
{
    return obj ? obj->n_labels : 0;
}

int kc_obj_label_at(const kc_obj *obj, size_t i, const char **ret_key, const char **ret_value)
{
    if (!obj || i >= obj->n_labels)
        return KC_EINVAL;
    const char *base = (const char *)obj;
    const uint32_t *lab = (const uint32_t *)(base + obj->off[F_LABELS]);
    if (ret_key)
        *ret_key = base + lab[2 * i];
    if (ret_value)
        *ret_value = base + lab[2 * i + 1];
    return 0;
}

const char *kc_obj_label(const kc_obj *obj, const char *key)
{
    if (!obj || !key)
        return NULL;
    const char *base = (const char *)obj;
    const uint32_t *lab = (const uint32_t *)(base + obj->off[F_LABELS]);
    size_t lo = 0, hi = obj->n_labels;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(key, base + lab[2 * mid]);
        if (c == 0)
            return base + lab[2 * mid + 1];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

size_t kc_obj_heap_size(const kc_obj *obj)
{
    return obj ? obj->heap : 0;
}
