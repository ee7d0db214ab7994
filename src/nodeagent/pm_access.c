/*
 * pm_access.c — a cached pod's accessors (kcache/podmeta.h): its fields, labels, annotations and
 * owner references read from its record (pm_rec.c) in place, and its JSON.
 *
 * Nothing here allocates but kc_podmeta_pod_json (a new string each call) and kc_podmeta_pod_obj
 * (the projected Pod as a kc_obj, made from that JSON on the entry's first call and kept with the
 * entry — the heap the cache reports then counts it). Agents on the hot path read the accessors,
 * which cost a few comparisons; the enricher renders JSON once per pod version it answers.
 */
#include "json/write_str.h"
#include "nodeagent/internal.h"

#include <stdlib.h>
#include <string.h>

static const char *str(const kc_podmeta_pod *p, size_t slot, size_t *len, bool *present)
{
    return kc__pm_rec_str(kc__pm_rec_of(p), p->dict, slot, len, present);
}

const char *kc_podmeta_pod_get(const kc_podmeta_pod *pod, kc_podmeta_field f, size_t *ret_len)
{
    if (ret_len)
        *ret_len = 0;
    if (!pod)
        return NULL;
    const char *s;
    switch (f) {
    case KC_PODMETA_FIELD_NAME:
        s = kc_obj_name(pod->obj);
        break;
    case KC_PODMETA_FIELD_NAMESPACE:
        s = kc_obj_namespace(pod->obj);
        break;
    case KC_PODMETA_FIELD_UID:
        s = kc_obj_uid(pod->obj);
        break;
    case KC_PODMETA_FIELD_RESOURCE_VERSION:
        s = kc_obj_resource_version(pod->obj);
        break;
    case KC_PODMETA_FIELD_NODE_NAME:
        return str(pod, KC__PM_F_NODE, ret_len, NULL);
    case KC_PODMETA_FIELD_POD_IP:
        return str(pod, KC__PM_F_POD_IP, ret_len, NULL);
    case KC_PODMETA_FIELD_HOST_IP:
        return str(pod, KC__PM_F_HOST_IP, ret_len, NULL);
    case KC_PODMETA_FIELD_DELETION_TIMESTAMP:
        return str(pod, KC__PM_F_DELETION, ret_len, NULL);
    default:
        return NULL;
    }
    if (ret_len)
        *ret_len = strlen(s);
    return s;
}

size_t kc_podmeta_pod_map_count(const kc_podmeta_pod *pod, kc_podmeta_map m)
{
    if (!pod)
        return 0;
    const kc__pm_rec *r = kc__pm_rec_of(pod);
    return m == KC_PODMETA_LABELS ? r->n_lab : m == KC_PODMETA_ANNOTATIONS ? r->n_ann : 0;
}

int kc_podmeta_pod_map_at(const kc_podmeta_pod *pod, kc_podmeta_map m, size_t i,
                          const char **ret_key, const char **ret_value, size_t *ret_value_len)
{
    if (!pod || (m != KC_PODMETA_LABELS && m != KC_PODMETA_ANNOTATIONS))
        return KC_EINVAL;
    if (i >= kc_podmeta_pod_map_count(pod, m))
        return KC_ENOTFOUND;
    const kc__pm_rec *r = kc__pm_rec_of(pod);
    size_t at = m == KC_PODMETA_LABELS ? kc__pm_rec_lab(r, i) : kc__pm_rec_ann(r, i);
    if (ret_key)
        *ret_key = str(pod, at, NULL, NULL);
    const char *v = str(pod, at + 1, ret_value_len, NULL);
    if (ret_value)
        *ret_value = v;
    return 0;
}

const char *kc_podmeta_pod_map_get(const kc_podmeta_pod *pod, kc_podmeta_map m, const char *key)
{
    if (!pod || !key)
        return NULL;
    size_t n = kc_podmeta_pod_map_count(pod, m), kn = strlen(key), len;
    const kc__pm_rec *r = kc__pm_rec_of(pod);
    for (size_t i = 0; i < n; i++) {
        size_t at = m == KC_PODMETA_LABELS ? kc__pm_rec_lab(r, i) : kc__pm_rec_ann(r, i);
        const char *k = str(pod, at, &len, NULL);
        if (len == kn && memcmp(k, key, kn) == 0)
            return str(pod, at + 1, NULL, NULL);
    }
    return NULL;
}

size_t kc_podmeta_pod_owner_count(const kc_podmeta_pod *pod)
{
    return pod ? kc__pm_rec_of(pod)->n_own : 0;
}

int(kc_podmeta_pod_owner)(const kc_podmeta_pod *pod, size_t i, kc_podmeta_owner *ret,
                          size_t ret_size)
{
    if (!pod || !ret)
        return KC_EINVAL;
    if (ret_size > sizeof(kc_podmeta_owner)) {
        memset(ret, 0, ret_size);
        return KC_EUNSUPPORTED; /* a newer header's struct */
    }
    const kc__pm_rec *r = kc__pm_rec_of(pod);
    if (i >= r->n_own)
        return KC_ENOTFOUND;
    size_t at = kc__pm_rec_own(r, i);
    uint8_t fl = kc__pm_rec_flags(r)[i];
    kc_podmeta_owner out = {str(pod, at, NULL, NULL),         str(pod, at + 1, NULL, NULL),
                            str(pod, at + 2, NULL, NULL),     str(pod, at + 3, NULL, NULL),
                            (fl & KC__PM_OWN_CTRL_TRUE) != 0, (fl & KC__PM_OWN_BOD_TRUE) != 0};
    kc__result_copy(ret, ret_size, &out, sizeof out);
    return 0;
}

/* ---- JSON ------------------------------------------------------------------------------------ */

typedef struct jw {
    kc__buf b;
    int rc;
    bool comma; /* a member was written at this level */
} jw;

static void raw(jw *w, const char *s)
{
    if (!w->rc)
        w->rc = kc__buf_append_str(&w->b, s);
}

static void jstr(jw *w, const char *s, size_t n)
{
    if (!w->rc)
        w->rc = kc__json_buf_string(&w->b, s, n);
}

/* "key":value-string, when present. */
static void member(jw *w, const char *key, const char *s, size_t n, bool present)
{
    if (!present)
        return;
    raw(w, w->comma ? ",\"" : "\"");
    raw(w, key);
    raw(w, "\":");
    jstr(w, s, n);
    w->comma = true;
}

static void member_slot(jw *w, const kc_podmeta_pod *p, const char *key, size_t slot)
{
    size_t n;
    bool present;
    const char *s = str(p, slot, &n, &present);
    member(w, key, s, n, present);
}

static void open_member(jw *w, const char *key, const char *brace)
{
    raw(w, w->comma ? ",\"" : "\"");
    raw(w, key);
    raw(w, "\":");
    raw(w, brace);
    w->comma = false;
}

static void map(jw *w, const kc_podmeta_pod *p, const char *key, size_t first, size_t n)
{
    open_member(w, key, "{");
    for (size_t i = 0; i < n; i++) {
        size_t kn, vn;
        const char *k = str(p, first + 2 * i, &kn, NULL), *v = str(p, first + 2 * i + 1, &vn, NULL);
        raw(w, i ? "," : "");
        jstr(w, k, kn);
        raw(w, ":");
        jstr(w, v, vn);
    }
    raw(w, "}");
    w->comma = true;
}

static void bool_member(jw *w, const char *key, bool v)
{
    raw(w, w->comma ? ",\"" : "\"");
    raw(w, key);
    raw(w, v ? "\":true" : "\":false");
    w->comma = true;
}

static void owners(jw *w, const kc_podmeta_pod *p, const kc__pm_rec *r)
{
    static const char *const F[4] = {"apiVersion", "kind", "name", "uid"};
    open_member(w, "ownerReferences", "[");
    for (size_t i = 0; i < r->n_own; i++) {
        uint8_t fl = kc__pm_rec_flags(r)[i];
        raw(w, i ? ",{" : "{");
        w->comma = false;
        for (int f = 0; f < 4; f++)
            member_slot(w, p, F[f], kc__pm_rec_own(r, i) + (size_t)f);
        if (fl & KC__PM_OWN_CTRL)
            bool_member(w, "controller", fl & KC__PM_OWN_CTRL_TRUE);
        if (fl & KC__PM_OWN_BOD)
            bool_member(w, "blockOwnerDeletion", fl & KC__PM_OWN_BOD_TRUE);
        raw(w, "}");
    }
    raw(w, "]");
    w->comma = true;
}

static void statuses(jw *w, const kc_podmeta_pod *p, const kc__pm_rec *r)
{
    static const char *const CS[3] = {"containerStatuses", "initContainerStatuses",
                                      "ephemeralContainerStatuses"};
    static const char *const F[4] = {"name", "image", "imageID", "containerID"};
    const uint8_t *kinds = kc__pm_rec_flags(r) + r->n_own;
    for (uint8_t k = 0; k < 3; k++) {
        if (!(r->present & (KC__PM_HAS_CS << k)))
            continue;
        open_member(w, CS[k], "[");
        bool first = true;
        for (size_t i = 0; i < r->n_cont; i++) {
            if (kinds[i] != k)
                continue;
            raw(w, first ? "{" : ",{");
            first = false;
            w->comma = false;
            for (int f = 0; f < 4; f++)
                member_slot(w, p, F[f], kc__pm_rec_cont(r, i) + (size_t)f);
            raw(w, "}");
        }
        raw(w, "]");
        w->comma = true;
    }
}

static void ident(jw *w, const kc_obj *o)
{
    const char *v[] = {kc_obj_name(o), kc_obj_namespace(o), kc_obj_uid(o),
                       kc_obj_resource_version(o)};
    static const char *const K[] = {"name", "namespace", "uid", "resourceVersion"};
    for (int i = 0; i < 4; i++)
        member(w, K[i], v[i], strlen(v[i]), *v[i] != '\0');
}

char *kc_podmeta_pod_json(const kc_podmeta_pod *pod, size_t *ret_len)
{
    if (ret_len)
        *ret_len = 0;
    if (!pod)
        return NULL;
    const kc__pm_rec *r = kc__pm_rec_of(pod);
    jw w = {.comma = false};
    kc__buf_init(&w.b, 0);
    raw(&w, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{");
    ident(&w, pod->obj);
    if (r->present & KC__PM_HAS_LABELS)
        map(&w, pod, "labels", kc__pm_rec_lab(r, 0), r->n_lab);
    if (r->present & KC__PM_HAS_ANNOTS)
        map(&w, pod, "annotations", kc__pm_rec_ann(r, 0), r->n_ann);
    if (r->present & KC__PM_HAS_OWNERS)
        owners(&w, pod, r);
    member_slot(&w, pod, "deletionTimestamp", KC__PM_F_DELETION);
    raw(&w, "}");
    w.comma = true;
    open_member(&w, "spec", "{");
    member_slot(&w, pod, "nodeName", KC__PM_F_NODE);
    raw(&w, "}");
    w.comma = true;
    open_member(&w, "status", "{");
    member_slot(&w, pod, "podIP", KC__PM_F_POD_IP);
    member_slot(&w, pod, "hostIP", KC__PM_F_HOST_IP);
    statuses(&w, pod, r);
    raw(&w, "}}");
    if (w.rc) {
        kc__buf_free(&w.b);
        return NULL;
    }
    return kc__buf_steal(&w.b, ret_len);
}

const kc_obj *kc_podmeta_pod_obj(const kc_podmeta_pod *pod)
{
    if (!pod)
        return NULL;
    kc_podmeta_pod *p = (kc_podmeta_pod *)pod; /* immutable but for this object, made once */
    kc_obj *o = atomic_load_explicit(&p->full, memory_order_acquire);
    if (o)
        return o;
    size_t n = 0;
    char *json = kc_podmeta_pod_json(pod, &n);
    if (!json || kc_obj_parse(json, n, NULL, &o, NULL)) {
        free(json);
        return pod->obj; /* out of memory: the identity at least */
    }
    free(json);
    kc_obj *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&p->full, &none, o, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        kc_obj_unref(o);
        return none;
    }
    return o;
}
