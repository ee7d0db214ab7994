/*
 * informer/transform.c — kc_informer_opts.transform (client-go's SetTransform): what the informer
 * stores, and hands to handlers, in place of each decoded object.
 *
 * Applied by the reflector to every object a LIST page or a WATCH event brings (added, modified,
 * deleted, the streaming list's initial events), after the checks of verify.c and before the
 * list's bounds count it (so they count what is stored). The store keys objects by namespace and
 * name, waits by uid, and resumes the watch by resourceVersion: a transform's result that says
 * another of those is refused — the decoded object is stored unchanged and the refusal logged —
 * as is a NULL result (the transform had nothing to change, or failed).
 */
#include "informer/internal.h"

#include <string.h>

static bool same_identity(const kc_obj *a, const kc_obj *b)
{
    return !strcmp(kc_obj_namespace(a), kc_obj_namespace(b)) &&
           !strcmp(kc_obj_name(a), kc_obj_name(b)) && !strcmp(kc_obj_uid(a), kc_obj_uid(b)) &&
           !strcmp(kc_obj_resource_version(a), kc_obj_resource_version(b));
}

kc_obj *kc__inf_transform(kc_informer *inf, kc_obj *obj)
{
    if (!inf->o.transform)
        return kc_obj_ref(obj);
    kc_obj *t = inf->o.transform(inf->o.transform_ud, obj);
    if (!t)
        return kc_obj_ref(obj);
    if (t != obj && !same_identity(obj, t)) {
        kc__log(KC_LOG_LEVEL_WARN, "informer",
                "%s: the transform of %s/%s (resourceVersion %s) changed its namespace, name, uid "
                "or resourceVersion: stored untransformed",
                inf->name, kc_obj_namespace(obj), kc_obj_name(obj), kc_obj_resource_version(obj));
        kc_obj_unref(t);
        return kc_obj_ref(obj);
    }
    return t;
}
