/*
 * proto.c — the Kubernetes protobuf envelope (spec §6.2, §5.1): "k8s\0" followed by a
 * runtime.Unknown message {1 typeMeta{1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding,
 * 4 contentType} whose raw is the typed message. Request bodies of every built-in kind the
 * generated table knows (proto_schema_data.c: all served group versions) decode through
 * proto_decode.c into the JSON document a JSON request of the same object carries, which then
 * takes the normal JSON write path; other kinds get 415 naming JSON. Responses: objects, lists
 * ({1 ListMeta, 2 items}) and watch frames (4-byte big-endian length + a raw metav1.WatchEvent
 * {1 type, 2 RawExtension{raw = the enveloped object}}, as the upstream stream serializer writes
 * them) encode through proto_encode.c. Limits: nesting KC__PB_MAX_DEPTH, body size bounded by
 * the request body limit. Thread-safe (no state).
 */
#include "server/api/api_internal.h"
#include "server/api/proto_schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kc__pb_lookup(const char *api_version, const char *kind)
{
    size_t lo = 0, hi = kc__pb_ntypes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(kc__pb_types[mid].api_version, api_version);
        if (!c)
            c = strcmp(kc__pb_types[mid].kind, kind);
        if (!c)
            return kc__pb_types[mid].msg;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

const kc__pbfield *kc__pb_field(int mi, uint32_t num)
{
    const kc__pbmsg *m = &kc__pb_msgs[mi];
    size_t lo = m->first, hi = (size_t)m->first + m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (kc__pb_fields[mid].num == num)
            return &kc__pb_fields[mid];
        if (kc__pb_fields[mid].num < num)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Read one length-delimited or varint field of the envelope; -1 when truncated. */
static int env_field(const uint8_t **p, const uint8_t *end, uint64_t *tag, const uint8_t **b,
                     size_t *n)
{
    uint64_t v[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        if (k == 1 && (*tag & 7) != 2 && (*tag & 7) != 0)
            return -1;
        int s = 0;
        for (;; s += 7) {
            if (*p >= end || s > 63)
                return -1;
            uint8_t c = *(*p)++;
            v[k] |= (uint64_t)(c & 0x7f) << s;
            if (!(c & 0x80))
                break;
        }
        if (k == 0)
            *tag = v[0];
    }
    if ((*tag & 7) == 0)
        return *b = NULL, *n = 0, 0;
    if (v[1] > (uint64_t)(end - *p))
        return -1;
    *b = *p;
    *n = (size_t)v[1];
    *p += v[1];
    return 0;
}

json_t *kc__pb_decode_envelope(const uint8_t *body, size_t len, char *err, size_t errcap, int depth)
{
    if (len < 4 || memcmp(body, "k8s\0", 4) != 0)
        return snprintf(err, errcap, "protobuf body without the k8s envelope"), NULL;
    const uint8_t *p = body + 4, *end = body + len, *raw = (const uint8_t *)"";
    char av[256] = "", kind[256] = "";
    size_t raw_len = 0;
    while (p < end) {
        const uint8_t *at = p, *b;
        uint64_t tag;
        size_t n;
        if (env_field(&p, end, &tag, &b, &n))
            return snprintf(err, errcap, "Unknown at byte %zu: truncated field",
                            (size_t)(at - body)),
                   NULL;
        if (tag == ((1 << 3) | 2)) { /* typeMeta */
            const uint8_t *q = b, *qe = b + n, *s;
            size_t sn;
            while (q < qe) {
                uint64_t t;
                const uint8_t *qa = q;
                if (env_field(&q, qe, &t, &s, &sn))
                    return snprintf(err, errcap, "Unknown.typeMeta at byte %zu: truncated field",
                                    (size_t)(qa - body)),
                           NULL;
                char *dst = t == ((1 << 3) | 2) ? av : t == ((2 << 3) | 2) ? kind : NULL;
                if (dst && sn < 256)
                    memcpy(dst, s, sn), dst[sn] = 0;
            }
        } else if (tag == ((2 << 3) | 2)) {
            raw = b, raw_len = n;
        }
    }
    int mi = kind[0] ? kc__pb_lookup(av, kind) : -1;
    if (mi < 0)
        return snprintf(err, errcap, "415 protobuf for %s %s", av[0] ? av : "(no apiVersion)",
                        kind[0] ? kind : "(no kind)"),
               NULL;
    json_t *obj = kc__pb_decode(body, raw, raw_len, mi, kind, err, errcap, depth);
    if (!obj)
        return NULL;
    if (!json_is_object(obj)) {
        json_decref(obj);
        return snprintf(err, errcap, "%s: not an object", kind), NULL;
    }
    /* apiVersion and kind first, as in the JSON of a typed object */
    json_t *doc = json_pack("{s:s,s:s}", "apiVersion", av, "kind", kind);
    if (doc)
        json_object_update(doc, obj);
    json_decref(obj);
    return doc;
}

int kc__proto_to_json(const char *body, size_t len, json_t **ret, kc_error *err)
{
    char msg[512];
    json_t *doc = kc__pb_decode_envelope((const uint8_t *)body, len, msg, sizeof(msg), 0);
    if (doc) {
        *ret = doc;
        return 0;
    }
    if (!strncmp(msg, "415 ", 4))
        return kc__fail(err, 415, "UnsupportedMediaType",
                        "the body of the request was in an unknown format - accepted media "
                        "types include: application/json, application/yaml (%s: not a built-in "
                        "kind this server serves)",
                        msg + 4);
    return kc__fail(err, 400, "BadRequest", "malformed protobuf body: %s", msg);
}

/* ---- responses ------------------------------------------------------------------------------ */

static int envelope(kc__buf *out, const char *av, const char *kind, const kc__buf *raw)
{
    kc__buf tm = KC__BUF_INIT(0);
    int rc = kc__buf_append(out, "k8s\0", 4);
    if (!rc)
        rc = kc__pb_put_bytes(&tm, 1, av, strlen(av));
    if (!rc)
        rc = kc__pb_put_bytes(&tm, 2, kind, strlen(kind));
    if (!rc)
        rc = kc__pb_put_bytes(out, 1, tm.data, tm.len);
    if (!rc)
        rc = kc__pb_put_bytes(out, 2, raw->data, raw->len);
    if (!rc)
        rc = kc__pb_put_bytes(out, 3, "", 0);
    if (!rc)
        rc = kc__pb_put_bytes(out, 4, "", 0);
    kc__buf_free(&tm);
    return rc;
}

/* The message of a response object: the built-in kinds, and the Status of ERROR events. */
static int response_msg(const char *av, const char *kind)
{
    if (!strcmp(kind, "Status") && (!strcmp(av, "v1") || !strcmp(av, "meta.k8s.io/v1")))
        return kc__pb_msg_Status;
    return kc__pb_lookup(av, kind);
}

bool kc__proto_has(const char *av, const char *kind)
{
    return response_msg(av, kind) >= 0;
}

static int doc_envelope(kc__buf *out, const json_t *doc)
{
    const char *av = json_string_value(json_object_get(doc, "apiVersion"));
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    int mi = av && kind ? response_msg(av, kind) : -1;
    if (mi < 0)
        return KC_ENOTFOUND;
    kc__buf raw = KC__BUF_INIT(0);
    int rc = kc__pb_encode(&raw, doc, mi);
    if (!rc)
        rc = envelope(out, av, kind, &raw);
    kc__buf_free(&raw);
    return rc;
}

int kc__proto_obj(kc__buf *out, const char *json, size_t len)
{
    json_t *doc = json_loadb(json, len, 0, NULL);
    if (!doc)
        return KC_EINVAL;
    int rc = doc_envelope(out, doc);
    json_decref(doc);
    return rc;
}

int kc__proto_list(kc__buf *out, const char *av, const char *list_kind, kc_obj **items, size_t n,
                   const char *rv, const char *cont, int64_t remaining)
{
    int mi = kc__pb_lookup(av, list_kind);
    if (mi < 0)
        return KC_ENOTFOUND;
    const kc__pbfield *items_f = kc__pb_field(mi, 2);
    if (!items_f || items_f->kind != KC__PBK_MSG)
        return KC_ENOTFOUND;
    kc__buf raw = KC__BUF_INIT(0), meta = KC__BUF_INIT(0);
    /* ListMeta {2 resourceVersion, 3 continue, 4 remainingItemCount} */
    int rc = kc__pb_put_bytes(&meta, 1, "", 0);
    if (!rc)
        rc = kc__pb_put_bytes(&meta, 2, rv, strlen(rv));
    if (!rc)
        rc = kc__pb_put_bytes(&meta, 3, cont ? cont : "", cont ? strlen(cont) : 0);
    if (!rc && remaining >= 0) {
        rc = kc__pb_put_varint(&meta, 4 << 3);
        if (!rc)
            rc = kc__pb_put_varint(&meta, (uint64_t)remaining);
    }
    if (!rc)
        rc = kc__pb_put_bytes(&raw, 1, meta.data, meta.len);
    for (size_t i = 0; i < n && !rc; i++) {
        size_t l;
        const char *s = kc_obj_json(items[i], &l);
        json_t *doc = json_loadb(s, l, 0, NULL);
        kc__buf item = KC__BUF_INIT(0);
        rc = doc ? kc__pb_encode(&item, doc, items_f->msg) : KC_EINVAL;
        if (!rc)
            rc = kc__pb_put_bytes(&raw, 2, item.data, item.len);
        kc__buf_free(&item);
        json_decref(doc);
    }
    if (!rc)
        rc = envelope(out, av, list_kind, &raw);
    kc__buf_free(&raw);
    kc__buf_free(&meta);
    return rc;
}

/* Append the 4-byte big-endian length frame of WatchEvent{type, object{raw = enveloped obj}}. */
static int frame(kc__buf *out, const char *type, const kc__buf *obj)
{
    kc__buf ev = KC__BUF_INIT(0), ext = KC__BUF_INIT(0);
    int rc = kc__pb_put_bytes(&ext, 1, obj->data, obj->len);
    if (!rc)
        rc = kc__pb_put_bytes(&ev, 1, type, strlen(type));
    if (!rc)
        rc = kc__pb_put_bytes(&ev, 2, ext.data, ext.len);
    if (!rc && ev.len > UINT32_MAX)
        rc = KC_ETOOLARGE;
    uint8_t hdr[4] = {(uint8_t)(ev.len >> 24), (uint8_t)(ev.len >> 16), (uint8_t)(ev.len >> 8),
                      (uint8_t)ev.len};
    if (!rc)
        rc = kc__buf_append(out, hdr, 4);
    if (!rc)
        rc = kc__buf_append(out, ev.data, ev.len);
    kc__buf_free(&ev);
    kc__buf_free(&ext);
    return rc;
}

int kc__proto_event(kc__buf *out, const char *type, const char *json, size_t len)
{
    kc__buf obj = KC__BUF_INIT(0);
    int rc = kc__proto_obj(&obj, json, len);
    if (!rc)
        rc = frame(out, type, &obj);
    kc__buf_free(&obj);
    return rc;
}

int kc__proto_event_line(kc__buf *out, const char *line)
{
    json_t *ev = json_loads(line, 0, NULL);
    const char *type = json_string_value(json_object_get(ev, "type"));
    json_t *obj = json_object_get(ev, "object");
    kc__buf b = KC__BUF_INIT(0);
    int rc = type && obj ? doc_envelope(&b, obj) : KC_EINVAL;
    if (!rc)
        rc = frame(out, type, &b);
    kc__buf_free(&b);
    json_decref(ev);
    return rc;
}
