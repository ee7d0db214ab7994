/*
 * enrich_project.c — the few fields of a record its key needs, read without building the whole
 * record: the mmexternal helper's parse of rsyslog's fulljson lines (enrich_mmx.c).
 *
 * A fulljson line is ~750 bytes of some 22 members (msg, rawmsg, timereported, hostname, …) of
 * which the key needs one or three ($!metadata!filename, or journald's CONTAINER_NAME and
 * CONTAINER_ID_FULL, or the explicit fields). jansson builds every member (≈ 12 µs a line, most
 * of a helper's time once answers are reused); this hands the line to the library's simdjson
 * decoder instead (kc_obj_parse, include/kcache/obj.h) with KC_DECODE_STRICT (the whole line is
 * validated as JSON, RFC 8259) and a projection (kc_decode_opts.keep) naming the configured field
 * paths, and parses only the small projected text with jansson (≈ 2–3 µs together), so
 * kc__enrich_record_key reads the same values from it as from the whole record.
 *
 * Not a JSON parser of our own: both parsers are libraries'. Exactness: a line either decoder
 * refuses, a path the projection cannot name (a component with '/' or '~', or empty), or a record
 * whose key is not found in the projection is left to the caller's whole-record jansson parse, so
 * those answers are as before. Deviations (documented in docs/node-agents.md): keys are matched as
 * written (a key spelled with a \u escape is not seen; rsyslog writes none), a key twice in one
 * object is read from its first occurrence (jansson: the last; rsyslog writes none twice), and an
 * integer beyond int64 (valid JSON, which jansson refuses) no longer makes the line malformed.
 */
#include "enrich.h"

#include <string.h>

#include "kcache/obj.h"

#define MAX_PATHS 8
#define PTR_CAP   512

/* path ('!'-separated, "$!" first for rsyslog's message variables, as kc__enrich_path_get reads
 * it) as a JSON Pointer into out; false when the projection cannot name it. */
static bool pointer_of(const char *path, char *out, size_t cap)
{
    const char *p = path;
    size_t n = 0;
    if (!strncmp(p, "$!", 2)) {
        memcpy(out, "/$!", 3);
        n = 3;
        p += p[2] == '!' ? 3 : 2;
    }
    while (*p) {
        size_t c = strcspn(p, "!");
        if (!c || n + 1 + c + 1 > cap || memchr(p, '/', c) || memchr(p, '~', c))
            return false;
        out[n++] = '/';
        memcpy(out + n, p, c);
        n += c;
        p += c + (p[c] == '!');
    }
    out[n] = '\0';
    return n > 0;
}

json_t *kc__enrich_record_fields(const kc__enrich_fields *f, const char *line, size_t len)
{
    const char *paths[] = {f->ns,
                           f->pod,
                           f->container,
                           f->container_id,
                           f->filename,
                           f->container_name,
                           f->container_id_full,
                           f->tag};
    char buf[MAX_PATHS][PTR_CAP];
    const char *keep[MAX_PATHS + 1];
    int k = 0;
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        if (!paths[i] || !*paths[i])
            continue;
        if (!pointer_of(paths[i], buf[k], sizeof buf[k]))
            return NULL;
        keep[k] = buf[k];
        k++;
    }
    if (!k)
        return NULL;
    keep[k] = NULL;
    kc_decode_opts o = {.flags = KC_DECODE_STRICT, .keep = keep};
    kc_obj *obj = NULL;
    if (kc_obj_parse(line, len, &o, &obj, NULL))
        return NULL;
    size_t n = 0;
    const char *text = kc_obj_json(obj, &n);
    json_t *rec = json_loadb(text, n, JSON_ALLOW_NUL, NULL);
    kc_obj_unref(obj);
    if (!json_is_object(rec)) {
        json_decref(rec);
        return NULL;
    }
    return rec;
}
