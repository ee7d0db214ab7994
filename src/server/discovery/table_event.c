/*
 * table_event.c — the cells of kubectl's Event printer (upstream's printEvent): Last Seen, Type,
 * Reason, Object, Message; at priority 1 (-o wide) Subobject, Source, First Seen, Count, Name.
 * Split from table_printers.c, whose table lists the columns. Thread-safe: pure functions.
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

/* kubernetes' printEvent: Last Seen falls back to First Seen (firstTimestamp, else eventTime);
 * a series overrides the last time and the count; a count of 0 (new API singleton) shows 1; the
 * object is "<kind lowercased>/<name>"; the source is component[, host] (reportingController /
 * reportingInstance when source is empty), "<unknown>" without one. */
json_t *kc__table_row_event(const kc_obj *o, int64_t now)
{
    int64_t first = kc__table_time(o, "/firstTimestamp");
    if (first < 0)
        first = kc__table_time(o, "/eventTime");
    int64_t last = kc__table_time(o, "/lastTimestamp");
    if (last < 0)
        last = first;
    int64_t count = kc__table_int(o, "/count");
    int64_t series_last = kc__table_time(o, "/series/lastObservedTime");
    if (series_last >= 0) {
        last = series_last;
        count = kc__table_int(o, "/series/count");
    } else if (count == 0) {
        count = 1;
    }
    char *kind = str_at(o, "/involvedObject/kind"), *name = str_at(o, "/involvedObject/name");
    char *comp = str_at(o, "/source/component"), *host = str_at(o, "/source/host");
    char *rc = str_at(o, "/reportingComponent"), *ri = str_at(o, "/reportingInstance");
    char *msg = str_at(o, "/message");
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
                            target.data, kc__table_str(o, "/involvedObject/fieldPath", ""),
                            source.data, m, ml, since_cell(first, now), (json_int_t)count,
                            kc_obj_name(o));
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
