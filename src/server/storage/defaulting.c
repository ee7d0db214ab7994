/*
 * defaulting.c — where the write path calls the defaults room (server/defaults/): what the
 * API server does to an object between decoding a request and storing it (docs/server.md,
 * "Defaulting"), in its order:
 *   kc__write_defaults — decoding: metadata's empty fields dropped (omitempty, as the
 *     decode/encode round trip does upstream), the scheme's defaulters, on every create, update,
 *     patch and apply result (before the managedFields entry of the writer is computed, so that
 *     entry owns the defaulted fields, as upstream);
 *   kc__write_prepare — the registry: on create the strategy's PrepareForCreate and the pod
 *     admission plugins that set fields (Priority: the priority class is looked up in the
 *     store; 403 when it does not exist), on update PrepareForUpdate; Service allocations
 *     (cluster IP, node ports); then the read-back decode's defaulting again;
 *   kc__write_settle — after the commit (or its failure): allocations the stored object no
 *     longer holds are released (or, on failure, those this write reserved);
 *   kc__write_released — a removed Service gives its allocations back.
 * Custom resources are left alone (their defaults come from their schemas). Runs with srv->mu
 * held.
 */
#include "server/storage/storage_internal.h"

#include "server/defaults/defaults.h"
#include "server/defaults/service_alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool is_service(const kc__rsrc *r)
{
    return !r->is_crd && !r->group[0] && !strcmp(r->plural, "services");
}

int kc__write_defaults(kc_server *srv, const kc__write *w, json_t *doc, kc_error *err)
{
    (void)srv;
    kc__meta_omit_empty(doc);
    if (w->r->is_crd || kc__defaults_apply(w->r->group, w->r->kind, doc) == 0)
        return 0;
    return kc_error_set(err, KC_ENOMEM, "out of memory");
}

static int forbidden(kc_error *err, const kc__rsrc *r, const char *name, const char *fmt, ...)
    KC__PRINTF(4, 5);
static int forbidden(kc_error *err, const kc__rsrc *r, const char *name, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    char q[300];
    kc__rsrc_qualified(r, q, sizeof(q));
    int rc = kc__fail(err, 403, "Forbidden", "%s \"%s\" is forbidden: %s", q, name, why);
    kc__fail_details(err, name, r->group[0] ? r->group : NULL, r->plural);
    return rc;
}

/* The PriorityClass name → value and preemption policy, from the store. found = false when the
 * class does not exist; with name "" the global default class if any (the lowest value when
 * several claim it, as upstream). */
static bool priority_class(kc_server *srv, const char *name, const char **ret_name,
                           int64_t *ret_value, const char **ret_policy)
{
    kc__rsrc *pc = kc__registry_find(srv, "scheduling.k8s.io", "v1", "priorityclasses");
    size_t n = 0;
    kc__entry **s = pc ? kc__store_sorted(pc, &n) : NULL;
    bool found = false;
    for (size_t i = 0; s && i < n; i++) {
        const kc_obj *o = s[i]->obj;
        bool dflt = false;
        int64_t v = 0;
        kc_obj_get_bool(o, "/globalDefault", &dflt, NULL);
        kc_obj_get_int(o, "/value", &v, NULL);
        if (*name ? strcmp(kc_obj_name(o), name) != 0 : !dflt || (found && v >= *ret_value))
            continue;
        found = true;
        *ret_name = kc_obj_name(o);
        *ret_value = v;
        *ret_policy = "PreemptLowerPriority";
        const char *raw;
        size_t len;
        if (kc_obj_get_raw(o, "/preemptionPolicy", &raw, &len, NULL) == 0 &&
            !strncmp(raw, "\"Never\"", len))
            *ret_policy = "Never";
    }
    return found;
}

/* plugin/pkg/admission/priority: resolve the pod's priority class into env. */
static int pod_priority(kc_server *srv, const kc__rsrc *r, json_t *doc, kc__create_env *env,
                        kc_error *err)
{
    const char *name = kc__meta_str(doc, "name");
    const char *cls = kc__defaults_pod_priority_class(doc);
    env->priority_class = "";
    env->priority = 0;
    env->preemption_policy = "PreemptLowerPriority";
    if (kc__defaults_system_priority(cls, &env->priority))
        env->priority_class = cls;
    else if (!priority_class(srv, cls, &env->priority_class, &env->priority,
                             &env->preemption_policy) &&
             *cls)
        return forbidden(err, r, name ? name : "", "no PriorityClass with name %s was found", cls);
    json_t *spec = json_object_get(doc, "spec");
    json_t *prio = json_object_get(spec, "priority");
    if (json_is_integer(prio) && json_integer_value(prio) != env->priority)
        return forbidden(err, r, name ? name : "",
                         "the integer value of priority (%lld) must not be provided in pod spec; "
                         "priority admission controller computed %lld from the given "
                         "PriorityClass name",
                         (long long)json_integer_value(prio), (long long)env->priority);
    const char *pp = json_string_value(json_object_get(spec, "preemptionPolicy"));
    if (pp && strcmp(pp, env->preemption_policy) != 0)
        return forbidden(err, r, name ? name : "",
                         "the string value of PreemptionPolicy (%s) must not be provided in pod "
                         "spec; priority admission controller computed %s from the given "
                         "PriorityClass name",
                         pp, env->preemption_policy);
    return 0;
}

static int allocate(kc_server *srv, const kc__write *w, json_t *doc, const json_t *old,
                    kc_error *err)
{
    kc__svc_fail f = {{0}, {0}};
    int rc = kc__svc_alloc_write(srv->svc_alloc, doc, old, w->dry_run, &f);
    if (rc == 0)
        return 0;
    if (rc == KC_ENOMEM)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    const char *name = kc__meta_str(doc, "name");
    if (rc == KC_ESERVER)
        return kc__fail(err, 500, "InternalError", "Internal error occurred: %s", f.msg);
    char field[80];
    const char *msg = f.msg;
    if (!f.field[0]) { /* the field is the message's head: "spec.x[0]: Invalid value: …" */
        const char *sep = strstr(f.msg, ": ");
        snprintf(field, sizeof(field), "%.*s", sep ? (int)(sep - f.msg) : 0, f.msg);
        msg = sep ? sep + 2 : f.msg;
    } else {
        snprintf(field, sizeof(field), "%s", f.field);
    }
    rc = kc__fail(err, 422, "Invalid", "Service \"%s\" is invalid: %s: %s", name ? name : "", field,
                  msg);
    kc__fail_details(err, name, NULL, "Service");
    kc__fail_cause(err, "FieldValueInvalid", field, msg);
    return rc;
}

int kc__write_prepare(kc_server *srv, const kc__write *w, json_t *doc, const json_t *old,
                      kc_error *err)
{
    kc__rsrc *r = w->r;
    if (r->is_crd || !kc__defaults_known(r->group, r->kind))
        return 0;
    int rc = 0;
    if (!old) {
        char now[32];
        kc__now_rfc3339(now);
        kc__create_env env = {.reset_status = !w->keep_status, .now = now};
        if (!r->group[0] && !strcmp(r->kind, "Pod") && (rc = pod_priority(srv, r, doc, &env, err)))
            return rc;
        rc = kc__defaults_prepare_create(r->group, r->kind, doc, &env);
    } else if (!w->status_sub) {
        rc = kc__defaults_prepare_update(r->group, r->kind, doc, old);
    }
    if (rc == 0)
        rc = kc__defaults_apply(r->group, r->kind, doc);
    if (rc)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    if (is_service(r) && !w->status_sub)
        return allocate(srv, w, doc, old, err);
    return 0;
}

void kc__write_settle(kc_server *srv, const kc__write *w, const json_t *doc, const json_t *old,
                      bool committed)
{
    if (!is_service(w->r) || w->dry_run || w->status_sub)
        return;
    if (committed)
        kc__svc_alloc_release(srv->svc_alloc, old, doc);
    else
        kc__svc_alloc_release(srv->svc_alloc, doc, old);
}

void kc__write_released(kc_server *srv, const kc__rsrc *r, const kc_obj *obj)
{
    if (!is_service(r))
        return;
    json_t *doc = kc__doc_from_obj(obj);
    kc__svc_alloc_release(srv->svc_alloc, doc, NULL);
    json_decref(doc);
}
