/*
 * encode.c — response bodies built from stored objects: single objects, LIST bodies and watch
 * event lines, in the negotiated representation (JSON, meta.k8s.io Table, PartialObjectMetadata,
 * protobuf for built-in kinds — proto.c; custom resources are JSON, or 406 when the client
 * accepts protobuf only, as upstream).
 *
 * A JSON LIST is never built in memory: the response is a libmicrohttpd content callback with a
 * known Content-Length that copies the envelope head, then each item's stored minified text
 * (comma separated), then "]}" — the stored text is the wire form, so LIST is mostly memcpy
 * (perf target ≥ 1 GB/s). The callback owns references to the items until the response is
 * destroyed, so writers never wait for a slow reader. Tables and metadata-only lists are small
 * per item and built in a buffer.
 */
#include "server/api/api_internal.h"

#include "server/discovery/table.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PB_CTYPE "application/vnd.kubernetes.protobuf"

int kc__fmt_for(kc__req *req, const kc__rsrc *r, enum kc__fmt *ret)
{
    enum kc__fmt f = req->fmt;
    if (f != KC__FMT_PROTO && f != KC__FMT_PROTO_JSON) {
        *ret = f;
        return 0;
    }
    char av[256];
    kc__rsrc_api_version(r, req->route.version, av, sizeof(av));
    if (kc__proto_has(av, r->kind)) {
        *ret = KC__FMT_PROTO;
        return 0;
    }
    if (f == KC__FMT_PROTO_JSON) {
        *ret = KC__FMT_JSON;
        return 0;
    }
    return kc__fail(&req->err, 406, "NotAcceptable",
                    "only the following media types are accepted: application/json, "
                    "application/json;as=Table;v=v1;g=meta.k8s.io, "
                    "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io");
}

/* Reply with a protobuf body (taken from b). */
static int reply_pb(kc__req *req, unsigned status, kc__buf *b)
{
    size_t len;
    char *s = kc__buf_steal(b, &len);
    if (!s)
        return KC_ENOMEM;
    int rc = kc__reply_raw(req, status, s, len);
    if (rc == 0) {
        MHD_del_response_header(req->resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
        MHD_add_response_header(req->resp, MHD_HTTP_HEADER_CONTENT_TYPE, PB_CTYPE);
    }
    return rc;
}

int kc__reply_obj(kc__req *req, unsigned status, kc__rsrc *r, kc_obj *obj)
{
    int frc = kc__fmt_for(req, r, &req->fmt);
    if (frc)
        return frc;
    if (req->fmt == KC__FMT_PROTO) {
        size_t l;
        const char *t = kc_obj_json(obj, &l);
        kc__buf b = KC__BUF_INIT(0);
        int rc = kc__proto_obj(&b, t, l);
        if (rc) {
            kc__buf_free(&b);
            return rc;
        }
        return reply_pb(req, status, &b);
    }
    if (req->fmt == KC__FMT_TABLE) {
        char rv[24];
        kc__rv_str(kc_obj_rv_int(obj), rv);
        json_t *t = kc__table_for(r, &obj, 1, rv, NULL, true);
        if (t && kc__table_set_objects(t, &obj, 1, req->table_obj) < 0) {
            json_decref(t);
            t = NULL;
        }
        return t ? kc__reply_doc(req, status, t) : KC_ENOMEM;
    }
    size_t len;
    char *s;
    if (req->fmt == KC__FMT_PARTIAL) {
        s = kc__partial_metadata_json(obj, &len);
    } else {
        const char *t = kc_obj_json(obj, &len);
        s = kc__strdup_n(t, len);
    }
    if (!s)
        return KC_ENOMEM;
    return kc__reply(req, status, s, len);
}

/* ---- streamed JSON list --------------------------------------------------------------------- */

typedef struct list_stream {
    char *head;
    size_t head_len;
    kc_obj **items;
    size_t n;
    size_t idx;    /* next item */
    const char *p; /* current piece */
    size_t left;   /* bytes left of the current piece */
    int state;     /* 0 head, 1 items, 2 tail, 3 done */
    bool comma;
} list_stream;

static void list_free(void *cls)
{
    list_stream *ls = cls;
    for (size_t i = 0; i < ls->n; i++)
        kc_obj_unref(ls->items[i]);
    free(ls->items);
    free(ls->head);
    free(ls);
}

static ssize_t list_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    list_stream *ls = cls;
    size_t w = 0;
    while (w < max) {
        if (ls->left == 0) {
            if (ls->comma) {
                buf[w++] = ',';
                ls->comma = false;
                continue;
            }
            if (ls->state == 0) {
                ls->state = 1;
            }
            if (ls->state == 1) {
                if (ls->idx < ls->n) {
                    ls->p = kc_obj_json(ls->items[ls->idx], &ls->left);
                    ls->comma = ls->idx + 1 < ls->n;
                    ls->idx++;
                    if (ls->left == 0)
                        continue;
                } else {
                    ls->state = 2;
                    ls->p = "]}\n"; /* Go's encoder ends the document with a newline */
                    ls->left = 3;
                }
            } else if (ls->state == 2) {
                ls->state = 3;
                break;
            } else {
                break;
            }
        }
        size_t c = ls->left < max - w ? ls->left : max - w;
        memcpy(buf + w, ls->p, c);
        w += c;
        ls->p += c;
        ls->left -= c;
    }
    if (w == 0)
        return MHD_CONTENT_READER_END_OF_STREAM;
    return (ssize_t)w;
}

static int list_head(kc__buf *b, const char *kind, const char *av, uint64_t rv, const char *cont,
                     int64_t remaining, const char *shard)
{
    int rc = kc__buf_printf(b,
                            "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{"
                            "\"resourceVersion\":\"%" PRIu64 "\"",
                            kind, av, rv);
    if (!rc && cont && *cont)
        rc = kc__buf_printf(b, ",\"continue\":\"%s\"", cont);
    if (!rc && remaining >= 0)
        rc = kc__buf_printf(b, ",\"remainingItemCount\":%" PRId64, remaining);
    /* ListMeta.shardInfo (KEP-5866, S8): the canonical selector, which needs no JSON escape */
    if (!rc && shard)
        rc = kc__buf_printf(b, ",\"shardInfo\":{\"selector\":\"%s\"}", shard);
    if (!rc)
        rc = kc__buf_append_str(b, "},\"items\":[");
    return rc;
}

static void release(kc_obj **items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        kc_obj_unref(items[i]);
    free(items);
}

int kc__reply_list(kc__req *req, kc__rsrc *r, kc_obj **items, size_t n, uint64_t rv,
                   const char *cont, int64_t remaining)
{
    char rvs[24];
    kc__rv_str(rv, rvs);
    int frc = kc__fmt_for(req, r, &req->fmt);
    if (frc) {
        release(items, n);
        return frc;
    }
    if (req->fmt == KC__FMT_PROTO) {
        char av[256], lk[300];
        kc__rsrc_api_version(r, req->route.version, av, sizeof(av));
        snprintf(lk, sizeof(lk), "%sList", r->kind);
        kc__buf b = KC__BUF_INIT(0);
        int rc = kc__proto_list(&b, av, lk, items, n, rvs, cont, remaining);
        release(items, n);
        if (rc) {
            kc__buf_free(&b);
            return rc;
        }
        return reply_pb(req, 200, &b);
    }
    if (req->fmt == KC__FMT_TABLE) {
        json_t *t = kc__table_for(r, items, n, rvs, cont, true);
        if (t && kc__table_set_objects(t, items, n, req->table_obj) < 0) {
            json_decref(t);
            t = NULL;
        }
        release(items, n);
        if (t && remaining >= 0)
            json_object_set_new(json_object_get(t, "metadata"), "remainingItemCount",
                                json_integer(remaining));
        if (t && req->shard_echo)
            json_object_set_new(json_object_get(t, "metadata"), "shardInfo",
                                json_pack("{s:s}", "selector", req->shard_echo));
        return t ? kc__reply_doc(req, 200, t) : KC_ENOMEM;
    }
    kc__buf b = KC__BUF_INIT(0);
    char av[256];
    kc__rsrc_api_version(r, req->route.version, av, sizeof(av));
    if (req->fmt == KC__FMT_PARTIAL) {
        int rc = list_head(&b, "PartialObjectMetadataList", "meta.k8s.io/v1", rv, cont, remaining,
                           req->shard_echo);
        for (size_t i = 0; i < n && !rc; i++) {
            size_t l;
            char *p = kc__partial_metadata_json(items[i], &l);
            if (!p)
                rc = KC_ENOMEM;
            if (!rc && i)
                rc = kc__buf_append_char(&b, ',');
            if (!rc)
                rc = kc__buf_append(&b, p, l);
            free(p);
        }
        if (!rc)
            rc = kc__buf_append_str(&b, "]}");
        release(items, n);
        if (rc) {
            kc__buf_free(&b);
            return rc;
        }
        size_t len;
        char *s = kc__buf_steal(&b, &len);
        return s ? kc__reply(req, 200, s, len) : KC_ENOMEM;
    }
    list_stream *ls = calloc(1, sizeof(*ls));
    if (!ls || list_head(&b, r->list_kind, av, rv, cont, remaining, req->shard_echo) != 0) {
        free(ls);
        kc__buf_free(&b);
        release(items, n);
        return KC_ENOMEM;
    }
    ls->head = kc__buf_steal(&b, &ls->head_len);
    ls->items = items;
    ls->n = n;
    ls->p = ls->head;
    ls->left = ls->head_len;
    uint64_t total = ls->head_len + 3 + (n ? n - 1 : 0);
    for (size_t i = 0; i < n; i++) {
        size_t l;
        kc_obj_json(items[i], &l);
        total += l;
    }
    struct MHD_Response *resp =
        MHD_create_response_from_callback(total, 256 * 1024, list_read, ls, list_free);
    if (!resp) {
        list_free(ls);
        return KC_ENOMEM;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    kc__reply_warnings(req, resp);
    if (req->resp)
        MHD_destroy_response(req->resp);
    req->resp = resp;
    req->status = 200;
    return 0;
}

/* ---- watch events --------------------------------------------------------------------------- */

int kc__encode_event(kc__buf *out, enum kc__fmt fmt, enum kc__table_obj tobj, kc__rsrc *r,
                     const char *type, kc_obj *obj, bool first)
{
    if (fmt == KC__FMT_PROTO) {
        size_t l;
        const char *s = kc_obj_json(obj, &l);
        return kc__proto_event(out, type, s, l);
    }
    int rc = kc__buf_printf(out, "{\"type\":\"%s\",\"object\":", type);
    if (rc)
        return rc;
    if (fmt == KC__FMT_TABLE) {
        json_t *t = kc__table_for(r, &obj, 1, kc_obj_resource_version(obj), NULL, first);
        if (t && kc__table_set_objects(t, &obj, 1, tobj) < 0) {
            json_decref(t);
            t = NULL;
        }
        char *s = t ? json_dumps(t, JSON_COMPACT) : NULL;
        json_decref(t);
        rc = s ? kc__buf_append_str(out, s) : KC_ENOMEM;
        free(s);
    } else if (fmt == KC__FMT_PARTIAL) {
        size_t l;
        char *s = kc__partial_metadata_json(obj, &l);
        rc = s ? kc__buf_append(out, s, l) : KC_ENOMEM;
        free(s);
    } else {
        size_t l;
        const char *s = kc_obj_json(obj, &l);
        rc = kc__buf_append(out, s, l);
    }
    return rc ? rc : kc__buf_append_str(out, "}\n");
}
