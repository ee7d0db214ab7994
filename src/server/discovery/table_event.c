/*
 * table_event.c — kubectl's Event printer (upstream's printEvent): Last Seen, Type, Reason,
 * Object, Message; at priority 1 (-o wide) Subobject, Source, First Seen, Count, Name. Upstream
 * serves core/v1 and events.k8s.io/v1 Events from one store of the internal type, so both get
 * these columns; an events.k8s.io object is read through the fields its conversion maps
 * (regarding, note, deprecatedSource, deprecatedFirstTimestamp, deprecatedLastTimestamp,
 * deprecatedCount, reportingController). Thread-safe: pure functions over const tables.
 */
#include "server/discovery/table_internal.h"

#include "core/internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static json_t *since_cell(int64_t t, int64_t now)
{
    char buf[32];
    if (t < 0)
        return json_string("<unknown>");
    kc__human_duration(now - t, buf);
    return json_string(buf);
}

/* The string at ptr, "" when absent. New malloc'd (NULL on ENOMEM). */
static char *str_at(const kc_obj *o, const char *ptr)
{
    char *s = NULL;
    if (kc_obj_get_string(o, ptr, &s, NULL, NULL) < 0)
        return strdup("");
    return s;
}

/* Where an Event's fields are, per API group. */
typedef struct ev_fields {
    const char *first, *last, *count, *kind, *name, *field_path, *comp, *host, *rc, *msg;
} ev_fields;

static const ev_fields core_fields = {"/firstTimestamp",
                                      "/lastTimestamp",
                                      "/count",
                                      "/involvedObject/kind",
                                      "/involvedObject/name",
                                      "/involvedObject/fieldPath",
                                      "/source/component",
                                      "/source/host",
                                      "/reportingComponent",
                                      "/message"};
static const ev_fields v1_fields = {"/deprecatedFirstTimestamp",
                                    "/deprecatedLastTimestamp",
                                    "/deprecatedCount",
                                    "/regarding/kind",
                                    "/regarding/name",
                                    "/regarding/fieldPath",
                                    "/deprecatedSource/component",
                                    "/deprecatedSource/host",
                                    "/reportingController",
                                    "/note"};

/* kubernetes' printEvent: Last Seen falls back to First Seen (firstTimestamp, else eventTime);
 * a series overrides the last time and the count; a count of 0 (new API singleton) shows 1; the
 * object is "<kind lowercased>/<name>"; the source is component[, host] (reportingController /
 * reportingInstance when source is empty), "<unknown>" without one. */
static json_t *row_event(const kc_obj *o, int64_t now, const ev_fields *f)
{
    int64_t first = kc__table_time(o, f->first);
    if (first < 0)
        first = kc__table_time(o, "/eventTime");
    int64_t last = kc__table_time(o, f->last);
    if (last < 0)
        last = first;
    int64_t count = kc__table_int(o, f->count);
    int64_t series_last = kc__table_time(o, "/series/lastObservedTime");
    if (series_last >= 0) {
        last = series_last;
        count = kc__table_int(o, "/series/count");
    } else if (count == 0) {
        count = 1;
    }
    char *kind = str_at(o, f->kind), *name = str_at(o, f->name);
    char *comp = str_at(o, f->comp), *host = str_at(o, f->host);
    char *rc = str_at(o, f->rc), *ri = str_at(o, "/reportingInstance");
    char *msg = str_at(o, f->msg);
    json_t *row = NULL;
    if (kind && name && comp && host && rc && ri && msg) {
        for (char *p = kind; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        const char *c = comp[0] ? comp : rc, *h = host[0] ? host : ri;
        kc__buf target = KC__BUF_INIT(0), source = KC__BUF_INIT(0);
        int brc = kc__buf_printf(&target, "%s%s%s", kind, name[0] ? "/" : "", name);
        if (brc == 0)
            brc = c[0] ? kc__buf_printf(&source, "%s%s%s", c, h[0] ? ", " : "", h)
                       : kc__buf_append_str(&source, "<unknown>");
        /* strings.TrimSpace of the message */
        char *m = msg;
        while (*m && isspace((unsigned char)*m))
            m++;
        size_t ml = strlen(m);
        while (ml && isspace((unsigned char)m[ml - 1]))
            ml--;
        if (brc == 0)
            row = json_pack("[o,o,o,s,o,s,s%,o,I,s]", since_cell(last, now),
                            kc__table_str(o, "/type", ""), kc__table_str(o, "/reason", ""),
                            target.data, kc__table_str(o, f->field_path, ""), source.data, m, ml,
                            since_cell(first, now), (json_int_t)count, kc_obj_name(o));
        kc__buf_free(&target);
        kc__buf_free(&source);
    }
    free(kind);
    free(name);
    free(comp);
    free(host);
    free(rc);
    free(ri);
    free(msg);
    return row;
}

json_t *kc__table_row_event(const kc_obj *o, int64_t now)
{
    return row_event(o, now, &core_fields);
}

json_t *kc__table_row_event_v1(const kc_obj *o, int64_t now)
{
    return row_event(o, now, &v1_fields);
}

#define EVENT_COLS                                                                                 \
    {                                                                                              \
        {"Last Seen", "string", "",                                                                \
         "The time at which the most recent occurrence of this event was recorded."},              \
            {"Type", "string", "",                                                                 \
             "Type of this event (Normal, Warning), new types could be added in the future"},      \
            {"Reason", "string", "",                                                               \
             "This should be a short, machine understandable string that gives the reason for "    \
             "the "                                                                                \
             "transition into the object's current status."},                                      \
            {"Object", "string", "", "The object that this event is about."},                      \
            {"Subobject", "string", "",                                                            \
             "If referring to a piece of an object instead of an entire object, this string "      \
             "should "                                                                             \
             "contain a valid JSON/Go field access statement, such as "                            \
             "desiredState.manifest.containers[2]."},                                              \
            {"Source", "string", "",                                                               \
             "The component reporting this event. Should be a short machine understandable "       \
             "string."},                                                                           \
            {"Message", "string", "",                                                              \
             "A human-readable description of the status of this operation."},                     \
            {"First Seen", "string", "",                                                           \
             "The time at which the event was first recorded. (Time of server receipt is in "      \
             "TypeMeta.)"},                                                                        \
            {"Count", "string", "", "The number of times this event has occurred."},               \
        {                                                                                          \
            "Name", "string", "name", "Name must be unique within a namespace."                    \
        }                                                                                          \
    }

const kc__printer kc__printers_event[2] = {
    {"", "events", EVENT_COLS, 10, kc__table_row_event, 0},
    {"events.k8s.io", "events", EVENT_COLS, 10, kc__table_row_event_v1, 0},
};
