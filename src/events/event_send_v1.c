/*
 * event_send_v1.c — the event recorder's requests in events.k8s.io/v1 (spec E8–E10): a new Event
 * is POSTed with eventTime (MicroTime), reportingController, reportingInstance, action, reason,
 * regarding, related, note and type; the second occurrence of a series, its refreshes and its
 * final write are a merge PATCH of `series {count, lastObservedTime}` of the Event already
 * posted, POSTed again (with the series) when the patch finds it gone (404).
 *
 * Bodies are built with kc_json_format (every string escaped); empty reference fields are left out
 * (omitempty). Thread-safety: stateless; called by the sender thread.
 */
#include "events/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const kc_gvr EVENTS_V1 = {"events.k8s.io", "v1", "events"};

/* "2026-12-02T03:50:00.123456Z": metav1.MicroTime of a CLOCK_REALTIME ns. */
static void micro_time(uint64_t wall_ns, char out[40])
{
    time_t t = (time_t)(wall_ns / KC__NS_PER_SEC);
    struct tm tm;
    gmtime_r(&t, &tm);
    char base[24];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, 40, "%s.%06uZ", base, (unsigned)((wall_ns % KC__NS_PER_SEC) / 1000));
}

static const char *event_ns(const kc__event *ev)
{
    return ev->obj_ns[0] ? ev->obj_ns : "default";
}

/* ,"related":{…} and ,"series":{…} when the event has them, appended to b. */
static int optional_json(const kc__event *ev, kc__buf *b)
{
    int rc = kc__event_related_json(ev, b);
    if (rc == 0 && ev->series_wall_ns) {
        char last[40];
        micro_time(ev->series_wall_ns, last);
        rc = kc__buf_printf(b, ",\"series\":{\"count\":%lld,\"lastObservedTime\":\"%s\"}",
                            (long long)ev->count, last);
    }
    return rc;
}

static int create_body(const char *controller, const char *instance, const kc__event *ev,
                       char **ret, size_t *len, kc_error *err)
{
    kc__buf regarding, opt;
    kc__buf_init(&regarding, 0);
    kc__buf_init(&opt, 0);
    const char *const f[7] = {ev->api_version, ev->kind, ev->obj_ns,    ev->name,
                              ev->uid,         ev->rv,   ev->field_path};
    int rc = kc__event_ref_json(&regarding, f);
    if (rc == 0)
        rc = optional_json(ev, &opt);
    char when[40];
    micro_time(ev->first_wall_ns ? ev->first_wall_ns : ev->wall_ns, when);
    if (rc == 0)
        rc = kc_json_format(ret, len, err,
                            "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\","
                            "\"metadata\":{\"name\":%s,\"namespace\":%s},\"eventTime\":%s,"
                            "\"reportingController\":%s,\"reportingInstance\":%s,"
                            "\"action\":%s,\"reason\":%s,\"regarding\":%r,\"note\":%s,"
                            "\"type\":%s%r}",
                            ev->event_name, event_ns(ev), when, controller, instance, ev->action,
                            ev->reason, regarding.data, ev->message, ev->type,
                            opt.len ? opt.data : "");
    else
        kc_error_set(err, rc, "event: out of memory");
    kc__buf_free(&regarding);
    kc__buf_free(&opt);
    return rc;
}

int kc__event_send_v1(kc_client *client, const char *controller, const char *instance,
                      const kc__event *ev, kc_error *err)
{
    char *body = NULL;
    size_t len = 0;
    int rc;
    if (ev->patch) {
        char last[40];
        micro_time(ev->series_wall_ns, last);
        rc = kc_json_format(&body, &len, err, "{\"series\":{\"count\":%l,\"lastObservedTime\":%s}}",
                            (int64_t)ev->count, last);
        if (rc == 0)
            rc = kc_client_patch(client, &EVENTS_V1, event_ns(ev), ev->event_name, KC_PATCH_MERGE,
                                 body, len, NULL, NULL, err);
        free(body);
        body = NULL;
        if (rc != KC_ENOTFOUND)
            return rc;
        kc_error_clear(
            err); /* E9: the Event is gone (expired, deleted): create it with its series */
    }
    rc = create_body(controller, instance, ev, &body, &len, err);
    if (rc == 0)
        rc = kc_client_create(client, &EVENTS_V1, event_ns(ev), body, len, NULL, NULL, err);
    free(body);
    return rc;
}
