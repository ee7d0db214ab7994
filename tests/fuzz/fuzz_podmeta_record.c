/*
 * fuzz_podmeta_record.c — libFuzzer target for the node agent cache's pod record
 * (src/nodeagent/pm_rec.c: built from a projected Pod by the Pod informer's transform) and what
 * reads it (pm_access.c, pm_entry.c).
 *
 * Input: a Pod's JSON text, decoded with the cache's projection (kc__pm_pod_keep). Checks: the
 * record builds (or fails with KC_ENOMEM / KC_ETOOLARGE only); every label and annotation of the
 * projected object whose value is a string that decodes reads back (a malformed part of the text
 * a lazy decode let through loses only itself) through kc_podmeta_pod_map_at, in order,
 * key and value byte for byte (the value by its length); the container count is the number of
 * status objects with at least one of the four strings (at most 255); kc_podmeta_pod_json is valid
 * JSON (KC_DECODE_STRICT) and decoding it and building its record again gives the same JSON (a
 * fixpoint); the identity object names the same pod.
 */
#include "nodeagent/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static kc_obj *decode(const char *t, size_t n, unsigned flags)
{
    kc_decode_opts o = {.flags = flags, .keep = kc__pm_pod_keep};
    kc_obj *obj = NULL;
    kc_error e = KC_ERROR_INIT;
    int rc = kc_obj_parse(t, n, &o, &obj, &e);
    kc_error_clear(&e);
    return rc ? NULL : obj;
}

static kc_podmeta_pod *entry(const kc_obj *src, kc__pm_dict *d)
{
    kc_obj *rec = NULL;
    int rc = kc__pm_rec_build(src, d, &rec);
    if (rc && rc != KC_ENOMEM && rc != KC_ETOOLARGE)
        abort();
    if (rc)
        return NULL;
    if (strcmp(kc_obj_name(rec), kc_obj_name(src)) || strcmp(kc_obj_uid(rec), kc_obj_uid(src)) ||
        strcmp(kc_obj_namespace(rec), kc_obj_namespace(src)) ||
        strcmp(kc_obj_resource_version(rec), kc_obj_resource_version(src)))
        abort();
    kc_podmeta_pod *p = kc__pm_pod_new(rec, d, false, 0, 0);
    kc_obj_unref(rec);
    return p;
}

/* The string members of the map at ptr read back through the record, in order. */
static void check_map(const kc_obj *src, const kc_podmeta_pod *p, const char *ptr, kc_podmeta_map m)
{
    kc_obj_iter *it = NULL;
    size_t i = 0;
    const char *raw;
    size_t rn;
    if (kc_obj_get_raw(src, ptr, &raw, &rn, NULL) == 0 && rn && raw[0] == '{' &&
        kc_obj_iter_new(src, ptr, &it, NULL) == 0) {
        while (kc_obj_iter_next(it) == 1) {
            size_t kn, vn, gn;
            const char *k = kc_obj_iter_key(it, &kn), *v, *gk, *gv;
            if (!k || kc_obj_iter_type(it) != KC_JSON_STRING)
                continue;
            if (kc_obj_iter_string(it, &v, &vn))
                continue; /* out of memory */
            if (kc_podmeta_pod_map_at(p, m, i++, &gk, &gv, &gn) || gn != vn ||
                memcmp(gv, v, vn) != 0 || strncmp(gk, k, kn) != 0)
                abort();
        }
        kc_obj_iter_free(it);
    }
    if (kc_podmeta_pod_map_count(p, m) != i)
        abort();
}

/* An element with at least one of a container status's four strings (the record keeps those). */
static bool has_string(kc_obj_iter *el)
{
    static const char *const F[4] = {"name", "image", "imageID", "containerID"};
    kc_obj_iter *m = NULL;
    bool any = false, seen[4] = {false};
    if (kc__obj_iter_child(el, &m, NULL))
        return false;
    while (kc_obj_iter_next(m) == 1) {
        size_t kn;
        const char *k = kc_obj_iter_key(m, &kn), *v;
        for (int i = 0; i < 4; i++)
            if (k && !seen[i] && strlen(F[i]) == kn && !memcmp(k, F[i], kn)) {
                seen[i] = true; /* the first occurrence counts */
                any |= kc_obj_iter_type(m) == KC_JSON_STRING && !kc_obj_iter_string(m, &v, NULL);
            }
    }
    kc_obj_iter_free(m);
    return any;
}

static size_t status_objects(const kc_obj *src)
{
    static const char *const CS[3] = {"/status/containerStatuses", "/status/initContainerStatuses",
                                      "/status/ephemeralContainerStatuses"};
    size_t n = 0;
    for (int c = 0; c < 3; c++) {
        kc_obj_iter *it = NULL;
        const char *raw;
        size_t rn;
        if (kc_obj_get_raw(src, CS[c], &raw, &rn, NULL) || !rn || raw[0] != '[' ||
            kc_obj_iter_new(src, CS[c], &it, NULL))
            continue;
        while (kc_obj_iter_next(it) == 1)
            n += kc_obj_iter_type(it) == KC_JSON_OBJECT && has_string(it);
        kc_obj_iter_free(it);
    }
    return n > KC__PM_MAX_CONT ? KC__PM_MAX_CONT : n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kc_obj *src = decode((const char *)data, size, 0);
    if (!src)
        return 0;
    kc__pm_dict *d = kc__pm_dict_new();
    kc_podmeta_pod *p = d ? entry(src, d) : NULL;
    if (p) {
        check_map(src, p, "/metadata/labels", KC_PODMETA_LABELS);
        check_map(src, p, "/metadata/annotations", KC_PODMETA_ANNOTATIONS);
        if (kc_podmeta_pod_container_count(p) != status_objects(src))
            abort();
        size_t n = 0, n2 = 0;
        char *json = kc_podmeta_pod_json(p, &n);
        kc_obj *again = json ? decode(json, n, KC_DECODE_STRICT) : NULL;
        if (json && !again)
            abort(); /* the JSON is not valid, or not a Pod the projection decodes */
        kc_podmeta_pod *q = again ? entry(again, d) : NULL;
        char *json2 = q ? kc_podmeta_pod_json(q, &n2) : NULL;
        if (json2 && (n2 != n || memcmp(json, json2, n) != 0))
            abort();
        free(json);
        free(json2);
        kc_obj_unref(again);
        kc_podmeta_pod_unref(q);
        kc_podmeta_pod_unref(p);
    }
    kc__pm_dict_unref(d);
    kc_obj_unref(src);
    return 0;
}
