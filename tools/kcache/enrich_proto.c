/*
 * enrich_proto.c — the line protocol between `kcache enrich --daemon` and its clients.
 *
 * One request line, one reply line, both single JSON objects (jansson, compact, so a reply is
 * one line however large the pod):
 *   request  {"ns":"shop","pod":"web-0","container":"app","container_id":"<64hex>","uid":"…"}
 *            (members absent when unknown; ns and pod, or uid, or container_id, name the pod)
 *            "v":"…" when the client holds the answer of that version (below)
 *   reply    {"rc":0,"v":"…","deleted":false,"pod":{…projected Pod…},"ns":{…Namespace…}}
 *            {"rc":0,"v":"…","same":true}  the asker's version is current: reuse it
 *            {"rc":-N}  the lookup's kcache error code (KC_ENOTFOUND: no such pod; others: no
 *                       answer now, e.g. the cache not synced yet)
 * Requests are bounded (KC_ENRICH_MAX_REQUEST); replies carry the whole pod (no size limit on the
 * daemon side, so a pod over 64 KiB is never cut: AN11). The version ("v") changes whenever the
 * answer does (the pod's UID and resourceVersion, its tombstone flag, the namespace's UID and
 * resourceVersion): a helper reading a file's lines asks with the version it holds and mostly
 * gets "same", so neither side parses or prints the pod per record.
 */
#include "enrich.h"

#include <string.h>

static void put(json_t *o, const char *k, const char *v)
{
    if (v && *v)
        json_object_set_new(o, k, json_string(v));
}

char *kc__enrich_proto_request(const kc__enrich_key *key)
{
    json_t *o = json_object();
    put(o, "ns", key->ns);
    put(o, "pod", key->pod);
    put(o, "container", key->container);
    put(o, "container_id", key->container_id);
    put(o, "uid", key->uid);
    put(o, "v", key->have_version);
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static const char *take(json_t *o, const char *k, kc__enrich_key *key, size_t *used, bool *ok)
{
    const char *v = json_string_value(json_object_get(o, k));
    if (!v || !*v)
        return NULL;
    size_t n = strlen(v);
    if (*used + n + 1 > sizeof key->buf) {
        *ok = false;
        return NULL;
    }
    char *d = key->buf + *used;
    memcpy(d, v, n + 1);
    *used += n + 1;
    return d;
}

int kc__enrich_proto_parse_request(const char *line, size_t len, kc__enrich_key *key)
{
    memset(key, 0, sizeof *key);
    json_t *o = json_loadb(line, len, 0, NULL);
    if (!json_is_object(o)) {
        json_decref(o);
        return -1;
    }
    size_t used = 0;
    bool ok = true;
    key->ns = take(o, "ns", key, &used, &ok);
    key->pod = take(o, "pod", key, &used, &ok);
    key->container = take(o, "container", key, &used, &ok);
    key->container_id = take(o, "container_id", key, &used, &ok);
    key->uid = take(o, "uid", key, &used, &ok);
    key->have_version = take(o, "v", key, &used, &ok);
    json_decref(o);
    bool named = (key->ns && key->pod) || key->uid || key->container_id;
    return ok && named ? 0 : -1;
}

char *kc__enrich_proto_reply(int rc, const kc__enrich_meta *meta)
{
    json_t *o = json_object();
    json_object_set_new(o, "rc", json_integer(rc));
    if (!rc && meta && meta->version[0])
        json_object_set_new(o, "v", json_string(meta->version));
    if (!rc && meta && meta->same) {
        json_object_set_new(o, "same", json_true());
    } else if (!rc && meta) {
        json_object_set_new(o, "deleted", json_boolean(meta->deleted));
        if (meta->pod)
            json_object_set(o, "pod", meta->pod);
        if (meta->ns)
            json_object_set(o, "ns", meta->ns);
    }
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

int kc__enrich_proto_parse_reply(const char *line, size_t len, kc__enrich_meta *meta)
{
    memset(meta, 0, sizeof *meta);
    json_t *o = json_loadb(line, len, 0, NULL);
    json_t *rc = json_object_get(o, "rc");
    if (!json_is_integer(rc)) {
        json_decref(o);
        return -1;
    }
    int r = (int)json_integer_value(rc);
    const char *v = json_string_value(json_object_get(o, "v"));
    if (!r && v && strlen(v) < sizeof meta->version)
        strcpy(meta->version, v);
    meta->same = !r && json_is_true(json_object_get(o, "same"));
    if (r > 0 || (!r && !meta->same && !json_is_object(json_object_get(o, "pod")))) {
        json_decref(o);
        return -1;
    }
    if (!r && !meta->same) {
        meta->pod = json_incref(json_object_get(o, "pod"));
        json_t *ns = json_object_get(o, "ns");
        meta->ns = json_is_object(ns) ? json_incref(ns) : NULL;
        meta->deleted = json_is_true(json_object_get(o, "deleted"));
    }
    json_decref(o);
    return r;
}
