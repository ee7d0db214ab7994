/*
 * get_collect.c — `kcache get` output that needs every object before printing anything: --sort-by,
 * -o jsonpath=… (kubectl runs the template once, against a List of all objects) and
 * -o custom-columns=… (columns as wide as their widest cell).
 *
 * Design: objects are collected as they are read, each with its JSON loaded once into a jansson
 * tree (the CLI's way to walk a document, as get_print.c does). --sort-by orders them as kubectl's
 * sorter does: by the first value its relaxed JSONPath finds, objects without one first, numbers
 * numerically, strings bytewise (as kubectl 1.32 does: w-10 < w-100 < w-9), a stable sort. The
 * table's rows are reordered by the same order (get_items_rank). Streaming output (json, yaml, name
 * without --sort-by) does not come here.
 */
#include "get.h"
#include "jsonpath.h"

#include <stdlib.h>
#include <string.h>

int get_items_add(get_items *l, kc_obj *obj, const kc_resource_info *ri)
{
    size_t len;
    const char *text = kc_obj_json(obj, &len);
    json_t *doc = json_loadb(text, len, JSON_ALLOW_NUL, NULL);
    if (!doc) { /* beyond what jansson holds (an integer over int64): shown as null */
        kc_obj_unref(obj);
        return -1;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        get_item *v = realloc(l->v, cap * sizeof(*v));
        if (!v) {
            json_decref(doc);
            kc_obj_unref(obj);
            return -1;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (get_item){obj, doc, ri, NULL};
    return 0;
}

void get_items_clear(get_items *l)
{
    for (size_t i = 0; i < l->n; i++) {
        kc_obj_unref(l->v[i].obj);
        json_decref(l->v[i].doc);
    }
    free(l->v);
    memset(l, 0, sizeof(*l));
}

/* ---- --sort-by ------------------------------------------------------------------------------- */

/* Order of two sort keys (NULL: the object has none, first). */
static int key_cmp(json_t *a, json_t *b)
{
    if (!a || !b)
        return !a && !b ? 0 : !a ? -1 : 1;
    if (json_is_integer(a) && json_is_integer(b))
        return json_integer_value(a) < json_integer_value(b)
                   ? -1
                   : json_integer_value(a) > json_integer_value(b);
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) < json_number_value(b)
                   ? -1
                   : json_number_value(a) > json_number_value(b);
    if (json_is_string(a) && json_is_string(b))
        return strcmp(json_string_value(a), json_string_value(b));
    if (json_is_boolean(a) && json_is_boolean(b))
        return json_is_true(a) - json_is_true(b);
    if (json_typeof(a) != json_typeof(b))
        return json_typeof(a) < json_typeof(b) ? -1 : 1;
    char *sa = jp_sprint(a, false), *sb = jp_sprint(b, false); /* objects, arrays: by their text */
    int c = sa && sb ? strcmp(sa, sb) : 0;
    free(sa);
    free(sb);
    return c;
}

/* Stable merge sort of v[0..n) by key, through tmp. */
static void merge_sort(get_item *v, get_item *tmp, size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2, i = 0, j = h, k = 0;
    merge_sort(v, tmp, h);
    merge_sort(v + h, tmp, n - h);
    while (i < h && j < n)
        tmp[k++] = key_cmp(v[j].key, v[i].key) < 0 ? v[j++] : v[i++];
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof(*v));
}

int get_items_sort(get_items *l, const jp_tmpl *by, const char *by_text, char *err, size_t errsz)
{
    bool any = false;
    for (size_t i = 0; i < l->n; i++) {
        json_t **vals = NULL;
        size_t n = 0;
        if (jp_find(by, l->v[i].doc, &vals, &n)) {
            snprintf(err, errsz, "out of memory");
            return -1;
        }
        l->v[i].key = n ? vals[0] : NULL;
        any = any || n;
        free(vals);
    }
    if (!any && l->n > 1) {
        snprintf(err, errsz, "couldn't find any field with path \"%s\" in the list of objects",
                 by_text);
        return -1;
    }
    get_item *tmp = malloc((l->n + 1) * sizeof(*tmp));
    if (!tmp) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    merge_sort(l->v, tmp, l->n);
    free(tmp);
    return 0;
}

static bool same_type(const kc_resource_info *a, const kc_resource_info *b)
{
    return !strcmp(a->group, b->group) && !strcmp(a->resource, b->resource);
}

size_t get_items_rank(const get_items *l, const kc_resource_info *ri, const char *ns,
                      const char *name)
{
    for (size_t i = 0; i < l->n; i++) /* lists read twice can differ: unknown rows go last */
        if (same_type(l->v[i].ri, ri) && !strcmp(kc_obj_name(l->v[i].obj), name) &&
            !strcmp(kc_obj_namespace(l->v[i].obj), ns))
            return i;
    return l->n;
}

/* ---- printing -------------------------------------------------------------------------------- */

/* kubectl's List around the items, or the single object: what a template runs against. */
static json_t *template_root(const get_items *l, bool single)
{
    if (single)
        return l->n ? json_incref(l->v[0].doc) : NULL;
    json_t *items = json_array();
    for (size_t i = 0; items && i < l->n; i++)
        json_array_append(items, l->v[i].doc);
    return json_pack("{s:s, s:o, s:s, s:{s:s}}", "apiVersion", "v1", "items", items, "kind", "List",
                     "metadata", "resourceVersion", "");
}

int get_items_print(const get_items *l, const get_out *o, bool single, FILE *out)
{
    char err[256];
    if (o->fmt == GET_JSONPATH) {
        json_t *root = template_root(l, single);
        int rc = root ? jp_print(o->tmpl, root, !single, out, err, sizeof err) : 0;
        json_decref(root);
        if (rc)
            fprintf(stderr, "kcache get: error executing jsonpath \"%s\": %s\n", o->tmpl_text, err);
        return rc;
    }
    if (o->fmt == GET_COLUMNS) {
        for (size_t i = 0; i < l->n; i++)
            if (get_cols_add(o->cols, l->v[i].doc, !single))
                return -1;
        if (l->n)
            get_cols_print(o->cols, out, !o->no_headers);
        return 0;
    }
    get_doc *d = get_doc_new(out, o->fmt, single);
    if (!d)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < l->n; i++)
        rc |= get_doc_add(d, l->v[i].obj, l->v[i].ri);
    return get_doc_finish(d) | rc;
}
