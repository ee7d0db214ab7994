/*
 * controller/sources.c — the types a controller watches: their informer handlers, predicates
 * (spec C8) and the mapping of an event to the keys it enqueues.
 *
 *   primary  the object's own key ("ns/name", or "name" when cluster-scoped)
 *   owned    the key of its controller owner (spec C7): the first ownerReference with
 *            controller=true, if its group (apiVersion without the version; the version is
 *            ignored) and kind equal the primary type's. Key: the owned object's namespace (""
 *            for a cluster-scoped primary type) and the reference's name. An update enqueues the
 *            owners of the old and the new state (they differ when the reference changed). An
 *            apiVersion that does not parse is logged and maps to nothing.
 *   watch    whatever the user's map function enqueues (kc_controller_enqueue)
 *
 * Priority (spec C12, unless kc_controller_opts.no_priority_queue): an add of the registration's
 * initial contents (the informer's in_initial_list) and a resync (an update whose resourceVersion
 * did not change) enqueue at KC_WORKQUEUE_PRIORITY_LOW, any other event at 0 — for every role,
 * map functions included (kc__ctrl_event_priority, read by kc_controller_enqueue, holds the
 * event's priority while its handler runs), as controller-runtime's handlers do.
 *
 * Handlers run on the informer's dispatcher thread of the registration and only add to the queue
 * (thread-safe) and bump atomics. Objects are borrowed for the callback and never kept.
 */
#include "cached/internal.h"
#include "controller/internal.h"
#include "rest/internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- predicates ------------------------------------------------------------------------------ */

static bool labels_equal(kc_obj *a, kc_obj *b)
{
    size_t n = kc_obj_label_count(a);
    if (n != kc_obj_label_count(b))
        return false;
    for (size_t i = 0; i < n; i++) {
        const char *ka, *va, *kb, *vb;
        if (kc_obj_label_at(a, i, &ka, &va) < 0 || kc_obj_label_at(b, i, &kb, &vb) < 0)
            return false;
        if (strcmp(ka, kb) || strcmp(va, vb))
            return false;
    }
    return true;
}

static bool annotations_equal(kc_obj *a, kc_obj *b)
{
    const char *ja = NULL, *jb = NULL;
    size_t la = 0, lb = 0;
    bool ha = kc_obj_get_raw(a, "/metadata/annotations", &ja, &la, NULL) == 0;
    bool hb = kc_obj_get_raw(b, "/metadata/annotations", &jb, &lb, NULL) == 0;
    if (!ha || !hb) /* absent equals absent (and an empty object "{}" equals absent) */
        return (ha ? la <= 2 : true) && (hb ? lb <= 2 : true);
    return la == lb && !memcmp(ja, jb, la);
}

/* One flag's verdict on an update. */
static bool flag_pass(unsigned flag, kc_obj *o, kc_obj *n)
{
    switch (flag) {
    case KC_PREDICATE_GENERATION_CHANGED:
        return kc_obj_generation(o) != kc_obj_generation(n);
    case KC_PREDICATE_RESOURCE_VERSION_CHANGED:
        return strcmp(kc_obj_resource_version(o), kc_obj_resource_version(n)) != 0;
    case KC_PREDICATE_LABELS_CHANGED:
        return !labels_equal(o, n);
    case KC_PREDICATE_ANNOTATIONS_CHANGED:
        return !annotations_equal(o, n);
    default:
        return true;
    }
}

bool kc__ctrl_predicate_pass(const kc_predicate *pred, kc_controller_event ev, kc_obj *old_obj,
                             kc_obj *new_obj)
{
    if (ev == KC_CONTROLLER_EVENT_UPDATE && pred->flags) {
        bool any = false, all = true;
        for (unsigned bit = 1; bit <= KC_PREDICATE_ANNOTATIONS_CHANGED; bit <<= 1) {
            if (!(pred->flags & bit))
                continue;
            bool p = flag_pass(bit, old_obj, new_obj);
            any = any || p;
            all = all && p;
        }
        if (!(pred->any ? any : all))
            return false;
    }
    if (pred->custom)
        return pred->custom(pred->ud, ev, old_obj, new_obj);
    return true;
}

/* ---- owner mapping --------------------------------------------------------------------------- */

/* The controller reference of obj: *ret_api, *ret_kind, *ret_name are new strings (caller frees).
 * 1 when found, 0 when none (or out of memory). */
static int controller_ref(kc_obj *obj, char **ret_api, char **ret_kind, char **ret_name)
{
    size_t n = kc_obj_owner_count(obj);
    for (size_t i = 0; i < n; i++) {
        char ptr[80];
        bool is_ctrl = false;
        snprintf(ptr, sizeof(ptr), "/metadata/ownerReferences/%zu/controller", i);
        if (kc_obj_get_bool(obj, ptr, &is_ctrl, NULL) < 0 || !is_ctrl)
            continue;
        char *api = NULL, *kind = NULL, *name = NULL;
        snprintf(ptr, sizeof(ptr), "/metadata/ownerReferences/%zu/apiVersion", i);
        kc__obj_get_cstring(obj, ptr, &api, false, NULL);
        snprintf(ptr, sizeof(ptr), "/metadata/ownerReferences/%zu/kind", i);
        kc__obj_get_cstring(obj, ptr, &kind, false, NULL);
        snprintf(ptr, sizeof(ptr), "/metadata/ownerReferences/%zu/name", i);
        kc__obj_get_cstring(obj, ptr, &name, false, NULL);
        if (!api || !kind || !name) {
            free(api);
            free(kind);
            free(name);
            return 0;
        }
        *ret_api = api;
        *ret_kind = kind;
        *ret_name = name;
        return 1; /* only the first controller reference counts */
    }
    return 0;
}

/* Group of an apiVersion ("group/version" or "version" for core); NULL when it does not parse. */
static const char *api_group(char *api)
{
    char *slash = strchr(api, '/');
    if (!slash)
        return *api ? "" : NULL;
    if (slash == api || !slash[1] || strchr(slash + 1, '/'))
        return NULL;
    *slash = '\0';
    return api;
}

void kc__ctrl_enqueue_owner(kc_controller *ctrl, kc_obj *obj)
{
    char *api = NULL, *kind = NULL, *name = NULL;
    if (!controller_ref(obj, &api, &kind, &name))
        return;
    const kc__ctrl_source *p = ctrl->sources[0];
    const char *group = api_group(api);
    if (!group) {
        KC__LOG_WARN("controller",
                     "controller %s: %s/%s: ownerReference apiVersion \"%s\" does not parse",
                     ctrl->name, kc_obj_namespace(obj), kc_obj_name(obj), api);
    } else if (!strcmp(group, p->group) && !strcmp(kind, p->kind)) {
        kc__ctrl_enqueue_sharded(ctrl, ctrl->primary_cluster_scoped ? "" : kc_obj_namespace(obj),
                                 name, kc_obj_controller_uid(obj)); /* A15 */
    }
    free(api);
    free(kind);
    free(name);
}

/* ---- handlers -------------------------------------------------------------------------------- */

/* C12: the priority of an event's enqueues (controller-runtime's WithLowPriorityWhenUnchanged):
 * an add of the initial list and a resync (an update with an unchanged resourceVersion) are low,
 * everything else normal. */
static int event_priority(kc_controller_event ev, kc_obj *old_obj, kc_obj *new_obj, bool initial)
{
    if (ev == KC_CONTROLLER_EVENT_ADD && initial)
        return KC_WORKQUEUE_PRIORITY_LOW;
    if (ev == KC_CONTROLLER_EVENT_UPDATE &&
        (old_obj == new_obj ||
         !strcmp(kc_obj_resource_version(old_obj), kc_obj_resource_version(new_obj))))
        return KC_WORKQUEUE_PRIORITY_LOW;
    return KC_WORKQUEUE_PRIORITY_DEFAULT;
}

static void dispatch(kc__ctrl_source *s, kc_controller_event ev, kc_obj *old_obj, kc_obj *new_obj,
                     bool initial)
{
    kc_controller *c = s->ctrl;
    if (!kc__ctrl_predicate_pass(&s->pred, ev, old_obj, new_obj)) {
        atomic_fetch_add(&c->n_filtered, 1);
        return;
    }
    kc__ctrl_event_priority = event_priority(ev, old_obj, new_obj, initial);
    switch (s->role) {
    case KC__CTRL_PRIMARY:
        kc__ctrl_enqueue_sharded(c, c->primary_cluster_scoped ? "" : kc_obj_namespace(new_obj),
                                 kc_obj_name(new_obj), kc_obj_uid(new_obj));
        break;
    case KC__CTRL_OWNED:
        if (old_obj)
            kc__ctrl_enqueue_owner(c, old_obj);
        kc__ctrl_enqueue_owner(c, new_obj);
        break;
    case KC__CTRL_WATCH:
        s->map(s->map_ud, c, ev, old_obj, new_obj);
        break;
    }
    kc__ctrl_event_priority = KC_WORKQUEUE_PRIORITY_DEFAULT;
}

static void on_add(void *ud, kc_obj *obj, bool in_initial_list)
{
    dispatch(ud, KC_CONTROLLER_EVENT_ADD, NULL, obj, in_initial_list);
}

static void on_update(void *ud, kc_obj *old_obj, kc_obj *new_obj)
{
    dispatch(ud, KC_CONTROLLER_EVENT_UPDATE, old_obj, new_obj, false);
}

static void on_delete(void *ud, kc_obj *obj, bool tombstone)
{
    (void)tombstone;
    dispatch(ud, KC_CONTROLLER_EVENT_DELETE, NULL, obj, false);
}

int kc__ctrl_source_start(kc__ctrl_source *s, kc_error *err)
{
    kc_gvr gvr = {s->group, s->version, s->resource};
    int rc =
        kc_cache_get_informer(s->ctrl->cache, &gvr, s->has_iopts ? &s->iopts : NULL, &s->inf, err);
    if (rc < 0)
        return rc;
    /* The controller's cached client reads this type from this informer (its selectors and shard
     * ranges apply), not from a second one it would start on first use; a type bound already (an
     * earlier source, a restart) keeps its informer. */
    (void)kc__cached_client_bind(s->ctrl->cc, &gvr, s->has_iopts ? s->iopts.ns : NULL, s->inf);
    kc_informer_handlers h = {
        .on_add_ex = on_add, .on_update = on_update, .on_delete = on_delete, .ud = s};
    return kc_informer_add_handler(s->inf, &h, NULL, &s->reg, err);
}

void kc__ctrl_source_stop(kc__ctrl_source *s)
{
    if (s->inf && s->reg)
        kc_informer_remove_handler(s->inf, s->reg);
    s->reg = NULL;
}

/* ---- construction ---------------------------------------------------------------------------- */

static bool dup_opt(char **dst, const char *src)
{
    if (!src)
        return true;
    *dst = kc__strdup(src);
    return *dst != NULL;
}

kc__ctrl_source *kc__ctrl_source_new(kc_controller *ctrl, kc__ctrl_role role,
                                     const kc_controller_type *type, kc_error *err)
{
    kc_gvr g = type->gvr;
    if (!g.group)
        g.group = "";
    if (!g.version || !g.resource) {
        kc_error_set(err, KC_EINVAL,
                     "controller %s: a watched type needs gvr.version and "
                     "gvr.resource",
                     ctrl->name);
        return NULL;
    }
    if (kc__gvr_check(&g, err) < 0)
        return NULL;
    kc__ctrl_source *s = calloc(1, sizeof(*s));
    if (!s) {
        kc_error_set(err, KC_ENOMEM, "controller: out of memory");
        return NULL;
    }
    s->ctrl = ctrl;
    s->role = role;
    if (type->predicate) /* a full-size copy (kc_controller_new, _own, _watch) */
        s->pred = *type->predicate;
    bool ok = dup_opt(&s->group, g.group) && dup_opt(&s->version, g.version) &&
              dup_opt(&s->resource, g.resource) && dup_opt(&s->kind, type->kind ? type->kind : "");
    if (ok && type->informer) {
        const kc_informer_opts *io = type->informer;
        s->iopts = *io;
        s->has_iopts = true;
        ok = dup_opt(&s->ns, io->ns) && dup_opt(&s->label_selector, io->label_selector) &&
             dup_opt(&s->field_selector, io->field_selector) && dup_opt(&s->iname, io->name);
        s->iopts.ns = s->ns;
        s->iopts.label_selector = s->label_selector;
        s->iopts.field_selector = s->field_selector;
        s->iopts.name = s->iname;
        if (ok && io->shard_ranges && io->shard_ranges_count) { /* borrowed for the call too */
            size_t n = io->shard_ranges_count;
            s->shard_ranges = n <= SIZE_MAX / sizeof *s->shard_ranges
                                  ? malloc(n * sizeof *s->shard_ranges)
                                  : NULL;
            ok = s->shard_ranges != NULL;
            if (ok)
                memcpy(s->shard_ranges, io->shard_ranges, n * sizeof *s->shard_ranges);
            s->iopts.shard_ranges = s->shard_ranges;
        }
        if (io->decode) { /* the caller's decode options are borrowed for the call only */
            if (kc__opts_copy(&s->decode, sizeof s->decode, io->decode, io->decode_size,
                              "kc_informer_opts.decode", err) < 0) {
                kc__ctrl_source_free(s);
                return NULL;
            }
            s->iopts.decode = &s->decode;
            s->iopts.decode_size = sizeof s->decode;
        }
    }
    if (!ok) {
        kc__ctrl_source_free(s);
        kc_error_set(err, KC_ENOMEM, "controller: out of memory");
        return NULL;
    }
    /* A14: a sharded controller's primary informer lists and watches only the held ranges
     * (starting with none); shard options of the caller's own are kept as given. */
    if (role == KC__CTRL_PRIMARY && ctrl->coord &&
        (!s->has_iopts || s->iopts.shard_field == KC_SHARD_FIELD_NONE)) {
        if (!s->has_iopts)
            memset(&s->iopts, 0, sizeof s->iopts);
        s->has_iopts = true;
        s->iopts.shard_field = KC_SHARD_FIELD_UID;
        s->iopts.shard_ranges = NULL;
        s->iopts.shard_ranges_count = 0;
        s->follow_ranges = true;
    }
    return s;
}

void kc__ctrl_source_free(kc__ctrl_source *s)
{
    if (!s)
        return;
    free(s->group);
    free(s->version);
    free(s->resource);
    free(s->kind);
    free(s->ns);
    free(s->label_selector);
    free(s->field_selector);
    free(s->iname);
    free(s->shard_ranges);
    free(s);
}
