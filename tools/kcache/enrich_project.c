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
 * paths, then reads those strings (kc_obj_get_string) into a small jansson object of the same
 * shape (≈ 2 µs together), so kc__enrich_record_key reads the same values from it as from the
 * whole record. It also gives the record's id: the values read, path after path, from which the
 * key follows but for the file system (enrich_reuse.c holds the key per id for a second).
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

#include <stdlib.h>
#include <string.h>

#include "kcache/error.h"
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

/* Append one value to the id: '-' (absent), or '+', its length and its bytes; *n becomes 0 (no
 * id) when it does not fit. */
static void id_add(char *id, size_t cap, size_t *n, const char *v, size_t vl)
{
    size_t need = 1 + (v ? sizeof vl + vl : 0);
    if (!*n || *n + need > cap) {
        *n = 0;
        return;
    }
    id[(*n)++] = v ? '+' : '-';
    if (v) {
        memcpy(id + *n, &vl, sizeof vl);
        memcpy(id + *n + sizeof vl, v, vl);
        *n += sizeof vl + vl;
    }
}

/* The string at ptr in obj, set at the same place in rec (objects made on the way), as jansson
 * would have read it from the whole line, and added to the id; absent or not a string: nothing.
 * 0, or -1 (no memory, or rec cannot hold it). */
static int put_string(json_t *rec, const kc_obj *obj, const char *ptr, char *id, size_t cap,
                      size_t *id_len)
{
    char *v = NULL;
    size_t vl = 0;
    int rc = kc_obj_get_string(obj, ptr, &v, &vl, NULL);
    if (!rc || rc == KC_ENOTFOUND || rc == KC_EINVAL)
        id_add(id, cap, id_len, rc ? NULL : v, vl);
    if (rc == KC_ENOTFOUND || rc == KC_EINVAL) /* absent, or another type */
        return 0;
    if (rc)
        return -1;
    json_t *at = rec;
    const char *p = ptr + 1, *slash;
    for (; at && (slash = strchr(p, '/')); p = slash + 1) {
        json_t *next = json_object_getn(at, p, (size_t)(slash - p));
        if (!next && json_object_setn_new(at, p, (size_t)(slash - p), next = json_object()))
            next = NULL;
        at = json_is_object(next) ? next : NULL;
    }
    rc = at ? json_object_set_new(at, p, json_stringn_nocheck(v, vl)) : -1;
    free(v);
    return rc ? -1 : 0;
}

json_t *kc__enrich_record_fields(const kc__enrich_fields *f, const char *line, size_t len, char *id,
                                 size_t cap, size_t *id_len)
{
    *id_len = 0;
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
    json_t *rec = json_object();
    int rc = rec ? 0 : -1;
    *id_len = cap ? 1 : 0;
    if (cap)
        id[0] = 'k'; /* never empty while it fits */
    for (int i = 0; !rc && i < k; i++)
        rc = put_string(rec, obj, keep[i], id, cap, id_len);
    kc_obj_unref(obj);
    if (rc) {
        json_decref(rec);
        return NULL;
    }
    return rec;
}
