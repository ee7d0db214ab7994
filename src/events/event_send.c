/*
 * event_send.c — the event recorder's requests (spec E5, E7): a new Event is POSTed as a core/v1
 * Event; a repeat is a strategic-merge PATCH of count, lastTimestamp and message of the Event
 * already posted (the stored name; no resourceVersion precondition, as client-go), POSTed again
 * when the patch finds it gone (404). Which failures are worth another try is decided here too
 * (kc__event_retryable); the waiting between tries is the recorder's (event_recorder.c).
 *
 * Bodies are built with kc_json_format (every string escaped); empty involvedObject fields are
 * left out (omitempty, as the Go types). Thread-safety: stateless; called by the sender thread.
 */
#include "events/internal.h"

#include "core/internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const kc_gvr EVENTS_GVR = {"", "v1", "events"};

void kc__event_time(uint64_t wall_ns, char out[32])
{
    time_t t = (time_t)(wall_ns / KC__NS_PER_SEC);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

bool kc__event_retryable(int code)
{
    switch (code) {
    case KC_EIO:
    case KC_ETIMEOUT:
    case KC_EDNS:
    case KC_ESERVER:
    case KC_ETHROTTLED:
        return true;
    default:
        return false;
    }
}

static const char *event_ns(const kc__event *ev)
{
    return ev->obj_ns[0] ? ev->obj_ns : "default";
}

/* Append ,"key":"value" (escaped) when value is not empty. */
static int add_field(kc__buf *b, const char *key, const char *value)
{
    if (!value[0])
        return 0;
    char *s;
    size_t n;
    int rc = kc_json_format(&s, &n, NULL, "%s", value);
    if (rc < 0)
        return rc;
    rc = kc__buf_printf(b, "%s\"%s\":", b->len && b->data[b->len - 1] != '{' ? "," : "", key);
    if (rc == 0)
        rc = kc__buf_append(b, s, n);
    free(s);
    return rc;
}

int kc__event_ref_json(kc__buf *b, const char *const f[7])
{
    static const char *const keys[7] = {"apiVersion",      "kind",     "namespace", "name", "uid",
                                        "resourceVersion", "fieldPath"};
    int rc = kc__buf_append_char(b, '{');
    for (size_t i = 0; rc == 0 && i < 7; i++)
        rc = add_field(b, keys[i], f[i]);
    return rc ? rc : kc__buf_append_char(b, '}');
}

int kc__event_related_json(const kc__event *ev, kc__buf *b)
{
    if (!ev->has_related)
        return 0;
    const char *const f[7] = {ev->rel_api_version, ev->rel_kind, ev->rel_ns,        ev->rel_name,
                              ev->rel_uid,         ev->rel_rv,   ev->rel_field_path};
    int rc = kc__buf_append_str(b, ",\"related\":");
    return rc ? rc : kc__event_ref_json(b, f);
}

static int involved_json(const kc__event *ev, kc__buf *b)
{
    const char *const f[7] = {ev->api_version, ev->kind, ev->obj_ns,    ev->name,
                              ev->uid,         ev->rv,   ev->field_path};
    return kc__event_ref_json(b, f);
}

/* ,"action":…,"related":{…} of a core/v1 Event that has them, appended to b (nothing otherwise). */
static int extra_json(const kc__event *ev, kc__buf *b)
{
    int rc = 0;
    if (ev->action[0]) {
        char *s;
        size_t n;
        rc = kc_json_format(&s, &n, NULL, ",\"action\":%s", ev->action);
        if (rc == 0) {
            rc = kc__buf_append(b, s, n);
            free(s);
        }
    }
    if (rc == 0)
        rc = kc__event_related_json(ev, b);
    return rc;
}

static int create_body(const kc__event_source *src, const kc__event *ev, char **ret, size_t *len)
{
    kc__buf inv, extra;
    kc__buf_init(&inv, 0);
    kc__buf_init(&extra, 0);
    int rc = involved_json(ev, &inv);
    if (rc == 0)
        rc = extra_json(ev, &extra);
    char first[32], last[32];
    kc__event_time(ev->first_wall_ns, first);
    kc__event_time(ev->wall_ns, last);
    if (rc == 0)
        rc = kc_json_format(
            ret, len, NULL,
            "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":%s,\"namespace\":%s},"
            "\"involvedObject\":%r,\"reason\":%s,\"message\":%s,\"type\":%s,"
            "\"source\":{\"component\":%s,\"host\":%s},\"firstTimestamp\":%s,"
            "\"lastTimestamp\":%s,\"count\":%l,\"reportingComponent\":%s,"
            "\"reportingInstance\":%s%r}",
            ev->event_name, event_ns(ev), inv.data, ev->reason, ev->message, ev->type,
            src->component, src->host, first, last, (int64_t)ev->count, src->component, src->host,
            extra.len ? extra.data : "");
    kc__buf_free(&inv);
    kc__buf_free(&extra);
    return rc;
}

/* Name and count of the Event the server returned. */
static int result(kc_obj *obj, char **ret_name, int64_t *ret_count)
{
    int64_t count = 1;
    kc_obj_get_int(obj, "/count", &count, NULL);
    char *name = kc__strdup(kc_obj_name(obj));
    kc_obj_unref(obj);
    if (!name)
        return KC_ENOMEM;
    *ret_name = name;
    *ret_count = count;
    return 0;
}

int kc__event_send(kc_client *client, const kc__event_source *src, const kc__event *ev,
                   char **ret_name, int64_t *ret_count, kc_error *err)
{
    kc_obj *obj = NULL;
    char *body = NULL;
    size_t len = 0;
    int rc;
    if (ev->patch) {
        char last[32];
        kc__event_time(ev->wall_ns, last);
        rc = kc_json_format(&body, &len, err, "{\"count\":%l,\"lastTimestamp\":%s,\"message\":%s}",
                            (int64_t)ev->count, last, ev->message);
        if (rc == 0)
            rc = kc_client_patch(client, &EVENTS_GVR, event_ns(ev), ev->event_name,
                                 KC_PATCH_STRATEGIC, body, len, NULL, &obj, err);
        free(body);
        body = NULL;
        if (rc == 0)
            return result(obj, ret_name, ret_count);
        if (rc != KC_ENOTFOUND)
            return rc;
        kc_error_clear(err); /* E5: the Event is gone (expired, deleted): create it again */
    }
    rc = create_body(src, ev, &body, &len);
    if (rc == 0)
        rc = kc_client_create(client, &EVENTS_GVR, event_ns(ev), body, len, NULL, &obj, err);
    free(body);
    return rc == 0 ? result(obj, ret_name, ret_count) : rc;
}
