/*
 * event_obj.c — one recorded event as the recorder queues it (kc__event, events/
 * internal.h): built from the caller's references, type, reason, action and formatted
 * message, copied once into one block, so the hot path of record allocates twice (the block and
 * the message, kept separate because aggregation may replace it).
 *
 * Strings are never NULL: a field not given is "". Thread-safety: none (an event belongs to whoever
 * holds it: the recorder's queue, then its sender).
 */
#include "events/internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { NSTR = 17 };

static kc__event *build(const char *const src[NSTR], const char *message)
{
    size_t lens[NSTR], total = sizeof(kc__event);
    for (size_t i = 0; i < NSTR; i++) {
        lens[i] = src[i] ? strlen(src[i]) : 0;
        total += lens[i] + 1;
    }
    kc__event *ev = calloc(1, total);
    char *msg = kc__strdup(message ? message : "");
    if (!ev || !msg) {
        free(ev);
        free(msg);
        return NULL;
    }
    char **dst[NSTR] = {&ev->api_version,
                        &ev->kind,
                        &ev->uid,
                        &ev->obj_ns,
                        &ev->name,
                        &ev->rv,
                        &ev->field_path,
                        &ev->type,
                        &ev->reason,
                        &ev->action,
                        &ev->rel_api_version,
                        &ev->rel_kind,
                        &ev->rel_uid,
                        &ev->rel_ns,
                        &ev->rel_name,
                        &ev->rel_rv,
                        &ev->rel_field_path};
    char *p = (char *)(ev + 1);
    for (size_t i = 0; i < NSTR; i++) {
        if (lens[i])
            memcpy(p, src[i], lens[i]);
        p[lens[i]] = '\0';
        *dst[i] = p;
        p += lens[i] + 1;
    }
    ev->message = msg;
    return ev;
}

kc__event *kc__event_new(const kc_event_ref *ref, const kc_event_ref *related, const char *type,
                         const char *reason, const char *action, const char *message)
{
    static const kc_event_ref none;
    const kc_event_ref *rel = related ? related : &none;
    const char *src[NSTR] = {ref->api_version,      ref->kind,       ref->uid, ref->ns, ref->name,
                             ref->resource_version, ref->field_path, type,     reason,  action,
                             rel->api_version,      rel->kind,       rel->uid, rel->ns, rel->name,
                             rel->resource_version, rel->field_path};
    kc__event *ev = build(src, message);
    if (!ev)
        return NULL;
    ev->has_related = related != NULL;
    ev->mono_ns = kc__now_ns();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ev->wall_ns = (uint64_t)ts.tv_sec * KC__NS_PER_SEC + (uint64_t)ts.tv_nsec;
    return ev;
}

kc__event *kc__event_clone(const kc__event *e)
{
    const char *src[NSTR] = {e->api_version,
                             e->kind,
                             e->uid,
                             e->obj_ns,
                             e->name,
                             e->rv,
                             e->field_path,
                             e->type,
                             e->reason,
                             e->action,
                             e->rel_api_version,
                             e->rel_kind,
                             e->rel_uid,
                             e->rel_ns,
                             e->rel_name,
                             e->rel_rv,
                             e->rel_field_path};
    kc__event *ev = build(src, e->message);
    if (!ev)
        return NULL;
    ev->has_related = e->has_related;
    ev->mono_ns = e->mono_ns;
    ev->wall_ns = e->wall_ns;
    ev->first_wall_ns = e->first_wall_ns;
    ev->series_wall_ns = e->series_wall_ns;
    ev->count = e->count;
    return ev;
}

void kc__event_free(kc__event *ev)
{
    if (!ev)
        return;
    free(ev->message);
    free(ev->event_name);
    free(ev->key);
    free(ev);
}
