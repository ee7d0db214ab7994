/*
 * controllers.c — the hooks the write path calls (srv->ctl), dispatching to the controllers
 * enabled in kc_server_opts.controllers: namespace.c (namespace lifecycle, ServiceAccount
 * "default") and gc.c (ownerReferences; its index gc_index.c). Thread-safety: every hook runs with
 * mu held.
 */
#include "server/controllers/internal.h"

static bool on(const kc_server *srv, unsigned bit)
{
    return (srv->opts.controllers & bit) != 0;
}

static void created(kc_server *srv, kc__rsrc *r, kc_obj *obj)
{
    if (on(srv, KC_SERVER_CONTROLLER_SERVICE_ACCOUNT))
        kc__sa_created(srv, r, obj);
}

static void removed(kc_server *srv, kc__rsrc *r, kc_obj *obj)
{
    if (on(srv, KC_SERVER_CONTROLLER_GARBAGE_COLLECTOR))
        kc__gc_removed(srv, r, obj);
    if (on(srv, KC_SERVER_CONTROLLER_NAMESPACE))
        kc__ns_removed(srv, r, obj);
    if (on(srv, KC_SERVER_CONTROLLER_SERVICE_ACCOUNT))
        kc__sa_removed(srv, r, obj);
}

static int deleting(kc_server *srv, kc__rsrc *r, kc__entry *cur, const char *propagation,
                    kc_obj **ret_obj, kc_error *err)
{
    int rc = 0;
    if (on(srv, KC_SERVER_CONTROLLER_NAMESPACE))
        rc = kc__ns_deleting(srv, r, cur, ret_obj, err);
    if (rc == 0 && on(srv, KC_SERVER_CONTROLLER_GARBAGE_COLLECTOR))
        rc = kc__gc_deleting(srv, r, cur, propagation, ret_obj, err);
    return rc;
}

static bool holds(kc_server *srv, const kc__rsrc *r, const kc__entry *cur)
{
    return on(srv, KC_SERVER_CONTROLLER_NAMESPACE) && kc__ns_holds(srv, r, cur);
}

static void committed(kc_server *srv, kc__rsrc *r, kc_watch_type type, kc_obj *obj, kc_obj *old)
{
    if (on(srv, KC_SERVER_CONTROLLER_GARBAGE_COLLECTOR))
        kc__gc_committed(srv, r, type, obj, old);
}

static const kc__ctl_ops ops = {.created = created,
                                .removed = removed,
                                .deleting = deleting,
                                .holds = holds,
                                .committed = committed};

const kc__ctl_ops *kc__controllers_ops(const kc_server *srv)
{
    unsigned all = KC_SERVER_CONTROLLER_NAMESPACE | KC_SERVER_CONTROLLER_GARBAGE_COLLECTOR |
                   KC_SERVER_CONTROLLER_SERVICE_ACCOUNT;
    return srv->opts.controllers & all ? &ops : NULL;
}

void kc__controllers_free(kc_server *srv)
{
    kc__gc_index_free(srv);
}
