/*
 * table.c — meta.k8s.io/v1 Table and PartialObjectMetadata documents (#23, #94, #95).
 *
 * Design: the column set and the cells come from table_printers.c; this file assembles the
 * Table (kind, apiVersion, metadata resourceVersion/continue, columnDefinitions unless a later
 * watch event, rows) and each row's object: the item's metadata as PartialObjectMetadata, so
 * kubectl can add NAMESPACE and label columns itself. The metadata-only rendering
 * (kc__partial_metadata_json) splices the stored metadata text without re-encoding it.
 * ?includeObject=None / Object (kc__table_set_objects) turn a row's object into null / the whole
 * stored object, as the API server's asTable does.
 * Thread-safe: pure functions.
 */
#include "server/discovery/table_internal.h"

#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- documents ---------------------------------------------------------------------------- */

static json_t *partial_metadata(const kc_obj *o)
{
    const char *raw;
    size_t n;
    json_t *md = kc_obj_get_raw(o, "/metadata", &raw, &n, NULL) == 0 ? json_loadb(raw, n, 0, NULL)
                                                                     : json_object();
    if (!md)
        return NULL;
    return json_pack("{s:s, s:s, s:o}", "kind", "PartialObjectMetadata", "apiVersion",
                     "meta.k8s.io/v1", "metadata", md);
}

json_t *kc__table_row_object(const kc_obj *o)
{
    return partial_metadata(o);
}

json_t *kc__table_skeleton(const char *rv, const char *cont)
{
    json_t *t =
        json_pack("{s:s, s:s, s:{}}", "kind", "Table", "apiVersion", "meta.k8s.io/v1", "metadata");
    json_t *md = json_object_get(t, "metadata");
    if (!t || (rv && json_object_set_new(md, "resourceVersion", json_string(rv)) < 0) ||
        (cont && *cont && json_object_set_new(md, "continue", json_string(cont)) < 0)) {
        json_decref(t);
        return NULL;
    }
    return t;
}

/* The rows' order when the printer sorts (FlowSchemas): items sorted by p->cmp, ties in stored
 * order; NULL when it does not (or on ENOMEM). New malloc'd array of borrowed objects. */
typedef struct sort_item {
    kc_obj *o;
    size_t i;
    kc__row_cmp cmp;
} sort_item;

static int cmp_item(const void *a, const void *b)
{
    const sort_item *x = a, *y = b;
    int c = x->cmp(x->o, y->o);
    return c ? c : (x->i < y->i ? -1 : x->i > y->i);
}

static kc_obj **sorted(const kc__printer *p, kc_obj *const *items, size_t n)
{
    kc__row_cmp cmp = kc__table_row_cmp(p);
    if (!cmp || n < 2)
        return NULL;
    sort_item *v = calloc(n, sizeof(*v));
    kc_obj **out = calloc(n, sizeof(*out));
    if (v && out) {
        for (size_t i = 0; i < n; i++)
            v[i] = (sort_item){items[i], i, cmp};
        qsort(v, n, sizeof(*v), cmp_item);
        for (size_t i = 0; i < n; i++)
            out[i] = v[i].o;
    } else {
        free(out);
        out = NULL;
    }
    free(v);
    return out;
}

json_t *kc__table_build_at(const char *group, const char *resource, kc_obj *const *items, size_t n,
                           const char *rv, const char *cont, bool with_columns, int64_t now)
{
    const kc__printer *p = kc__table_printer(group, resource);
    json_t *t = kc__table_skeleton(rv, cont);
    json_t *rows = json_array();
    if (!t || !rows)
        goto fail;
    if (with_columns) {
        json_t *cols = json_array();
        if (json_object_set_new(t, "columnDefinitions", cols) < 0)
            goto fail;
        for (size_t i = 0; i < p->ncols; i++) {
            const kc__column *c = &p->cols[i];
            if (json_array_append_new(cols, json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", c->name,
                                                      "type", c->type, "format", c->format,
                                                      "description", c->description, "priority",
                                                      kc__table_column_priority(p, i))) < 0)
                goto fail;
        }
    }
    kc_obj **order = sorted(p, items, n);
    if (kc__table_row_cmp(p) && n > 1 && !order)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        const kc_obj *o = order ? order[i] : items[i];
        json_t *cells = p->row(o, now);
        json_t *obj = cells ? partial_metadata(o) : NULL;
        if (!cells || !obj ||
            json_array_append_new(rows, json_pack("{s:o, s:o}", "cells", cells, "object", obj)) <
                0) {
            free(order);
            goto fail;
        }
    }
    free(order);
    if (json_object_set_new(t, "rows", rows) < 0) {
        rows = NULL;
        goto fail;
    }
    return t;
fail:
    json_decref(rows);
    json_decref(t);
    return NULL;
}

json_t *kc__table_build(const char *group, const char *resource, kc_obj *const *items, size_t n,
                        const char *rv, const char *cont, bool with_columns)
{
    return kc__table_build_at(group, resource, items, n, rv, cont, with_columns,
                              (int64_t)time(NULL));
}

int kc__table_obj_parse(const char *s, enum kc__table_obj *out)
{
    if (!s || !*s || strcmp(s, "Metadata") == 0)
        *out = KC__TOBJ_METADATA;
    else if (strcmp(s, "None") == 0)
        *out = KC__TOBJ_NONE;
    else if (strcmp(s, "Object") == 0)
        *out = KC__TOBJ_OBJECT;
    else
        return KC_EINVAL;
    return 0;
}

/* The item a row shows: items[i] unless the printer reordered the rows (FlowSchemas), then the
 * item of the row object's namespace and name. */
static const kc_obj *row_item(const json_t *row, kc_obj *const *items, size_t n, size_t i)
{
    const json_t *md = json_object_get(json_object_get(row, "object"), "metadata");
    const char *name = json_string_value(json_object_get(md, "name")) ?: "";
    const char *ns = json_string_value(json_object_get(md, "namespace")) ?: "";
    for (size_t k = 0; k < n; k++) {
        const kc_obj *o = items[(i + k) % n]; /* items[i] first: the stored order */
        if (kc__streq(kc_obj_name(o) ?: "", name) && kc__streq(kc_obj_namespace(o) ?: "", ns))
            return o;
    }
    return items[i];
}

int kc__table_set_objects(json_t *t, kc_obj *const *items, size_t n, enum kc__table_obj mode)
{
    json_t *rows = json_object_get(t, "rows");
    if (mode == KC__TOBJ_METADATA || !json_is_array(rows))
        return 0;
    for (size_t i = 0; i < n && i < json_array_size(rows); i++) {
        json_t *o = json_null();
        if (mode == KC__TOBJ_OBJECT) {
            size_t len;
            const char *s = kc_obj_json(row_item(json_array_get(rows, i), items, n, i), &len);
            o = json_loadb(s, len, 0, NULL);
        }
        if (!o || json_object_set_new(json_array_get(rows, i), "object", o) < 0)
            return KC_ENOMEM;
    }
    return 0;
}

char *kc__partial_metadata_json(const kc_obj *obj, size_t *ret_len)
{
    static const char head[] =
        "{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\","
        "\"metadata\":";
    const char *raw = "{}";
    size_t n = 2;
    if (kc_obj_get_raw(obj, "/metadata", &raw, &n, NULL) < 0) {
        raw = "{}";
        n = 2;
    }
    size_t total = sizeof head - 1 + n + 1;
    char *s = malloc(total + 1);
    if (!s)
        return NULL;
    memcpy(s, head, sizeof head - 1);
    memcpy(s + sizeof head - 1, raw, n);
    s[total - 1] = '}';
    s[total] = '\0';
    if (ret_len)
        *ret_len = total;
    return s;
}
