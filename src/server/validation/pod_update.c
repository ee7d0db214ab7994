/*
 * pod_update.c — ValidatePodUpdate's rule on the spec: a Pod's spec may change only in its
 * containers' and init containers' images, activeDeadlineSeconds, tolerations and
 * terminationGracePeriodSeconds; anything else is `spec: Forbidden: pod updates may not change
 * fields other than …` as upstream (which also appends a cmp.Diff of the Go structs: not
 * reproduced, the message ends with the list).
 * Design: the new spec is copied, the updatable fields are set to the stored spec's values
 * ("munged", as upstream does) and the copy is compared with the stored spec. Cost: one copy
 * and one comparison of the spec, on Pod updates only.
 */
#include "server/validation/validation_internal.h"

#define POD_UPDATABLE                                                                              \
    "pod updates may not change fields other than `spec.containers[*].image`,"                     \
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "        \
    "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set " \
    "to 1 if it was previously negative)"

/* Set dst[key] to src[key] (or remove it when src has none). */
static void take(json_t *dst, const json_t *src, const char *key)
{
    json_t *v = json_object_get(src, key);
    if (v)
        json_object_set(dst, key, v);
    else
        json_object_del(dst, key);
}

static void take_images(json_t *spec, const json_t *old, const char *key)
{
    json_t *nc = json_object_get(spec, key);
    const json_t *oc = json_object_get(old, key);
    for (size_t i = 0; i < json_array_size(nc) && i < json_array_size(oc); i++)
        take(json_array_get(nc, i), json_array_get(oc, i), "image");
}

void kc__v_pod_update(kc__vlist *l, const json_t *spec, const json_t *old_spec)
{
    if (!spec || !old_spec || json_equal((json_t *)spec, (json_t *)old_spec))
        return;
    json_t *munged = json_deep_copy(spec);
    if (!munged) {
        l->oom = true;
        return;
    }
    take_images(munged, old_spec, "containers");
    take_images(munged, old_spec, "initContainers");
    take(munged, old_spec, "activeDeadlineSeconds");
    take(munged, old_spec, "tolerations");
    take(munged, old_spec, "terminationGracePeriodSeconds");
    if (!json_equal(munged, (json_t *)old_spec))
        kc__v_forbidden(l, "spec", POD_UPDATABLE);
    json_decref(munged);
}
