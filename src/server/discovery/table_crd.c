/*
 * table_crd.c — Tables of custom resources with their CRD's additionalPrinterColumns, as the
 * API server's CRD table convertor builds them: a Name column, then each printer column of the
 * version (name, type, format, description, priority) with the cell its jsonPath selects;
 * without printer columns, Name and Age (the default convertor of upstream's CRD handler).
 *
 * Cells by column type: string → the value as JSONPath prints it (strings as is, numbers and
 * booleans in Go's form, objects and arrays as JSON); integer → an integer (numbers truncated);
 * number → a number; boolean → a boolean; date → the humanised age of an RFC 3339 string
 * ("<invalid>" otherwise); nothing selected, or a value of another type → null.
 * JSONPath: the simple paths CRDs use — `.a.b`, `.a[0]`, `.a[*]` (the first result) and
 * `.a[?(@.k=="v")]` filters (string equality).
 * Thread-safety: pure functions; the CRD's columns are read from a reference taken under the
 * resource's crd_mu (kc__crd_versions_ref), so this runs without srv->mu.
 */
#include "server/discovery/table_internal.h"
#include "server/discovery/discovery_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One step of a simple JSONPath from p (after its leading '.' or '['); NULL when v has none. */
static const json_t *step(const json_t *v, const char **pp)
{
    const char *p = *pp;
    if (*p == '.') {
        p++;
        size_t n = strcspn(p, ".[");
        char key[256];
        snprintf(key, sizeof(key), "%.*s", (int)(n < sizeof(key) ? n : sizeof(key) - 1), p);
        *pp = p + n;
        return json_object_get(v, key);
    }
    if (*p != '[')
        return NULL;
    const char *end = strchr(p, ']');
    if (!end)
        return NULL;
    *pp = end + 1;
    if (p[1] == '*')
        return json_array_get(v, 0);
    if (p[1] == '?') { /* [?(@.k=="v")] */
        char k[128], want[256];
        if (sscanf(p, "[?(@.%127[^=!]==\"%255[^\"]\")]", k, want) != 2)
            return NULL;
        size_t i;
        const json_t *e;
        json_array_foreach(v, i, e)
        {
            if (kc__streq(json_string_value(json_object_get(e, k)), want))
                return e;
        }
        return NULL;
    }
    char *num_end;
    long idx = strtol(p + 1, &num_end, 10);
    if (num_end != end)
        return NULL;
    if (idx < 0)
        idx += (long)json_array_size(v);
    return idx >= 0 ? json_array_get(v, (size_t)idx) : NULL;
}

static const json_t *select_path(const json_t *doc, const char *path)
{
    const json_t *v = doc;
    const char *p = path;
    while (v && *p)
        v = step(v, &p);
    return v;
}

static json_t *cell(const char *type, const json_t *v, int64_t now)
{
    if (!v || json_is_null(v))
        return json_null();
    if (!strcmp(type, "integer"))
        return json_is_integer(v) ? json_incref((json_t *)v)
               : json_is_real(v)  ? json_integer((json_int_t)json_real_value(v))
                                  : json_null();
    if (!strcmp(type, "number"))
        return json_is_number(v) ? json_real(json_number_value(v)) : json_null();
    if (!strcmp(type, "boolean"))
        return json_is_boolean(v) ? json_incref((json_t *)v) : json_null();
    if (!strcmp(type, "date")) {
        if (!json_is_string(v))
            return json_null();
        int64_t t = kc__rfc3339_seconds(json_string_value(v));
        char buf[32];
        if (t < 0)
            return json_string("<invalid>");
        kc__human_duration(now - t, buf);
        return json_string(buf);
    }
    if (json_is_string(v))
        return json_incref((json_t *)v);
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    json_t *c = s ? json_string(s) : json_null();
    free(s);
    return c;
}

/* The printer columns of the version the items are in (the first item's apiVersion, else the
 * preferred version); NULL when it has none. Borrowed from versions. */
static const json_t *columns_of(const json_t *versions, const kc__rsrc *r, kc_obj *const *items,
                                size_t n)
{
    const char *want = r->versions[0];
    const char *av = n ? kc_obj_api_version(items[0]) : NULL;
    const char *slash = av ? strrchr(av, '/') : NULL;
    if (slash)
        want = slash + 1;
    size_t i;
    const json_t *v;
    json_array_foreach(versions, i, v)
    {
        if (kc__streq(json_string_value(json_object_get(v, "name")), want)) {
            const json_t *c = json_object_get(v, "additionalPrinterColumns");
            return json_array_size(c) ? c : NULL;
        }
    }
    return NULL;
}

static const char *str_or_empty(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static json_t *build_cr(const json_t *cols, kc_obj *const *items, size_t n, const char *rv,
                        const char *cont, bool with_columns, int64_t now)
{
    const kc__column *name = &kc__table_printer("kcache.invalid", "")->cols[0];
    json_t *t = kc__table_skeleton(rv, cont);
    json_t *rows = json_array();
    if (!t || !rows) {
        json_decref(t);
        json_decref(rows);
        return NULL;
    }
    if (with_columns) {
        json_t *defs = json_array();
        json_array_append_new(defs, json_pack("{s:s,s:s,s:s,s:s,s:i}", "name", name->name, "type",
                                              name->type, "format", name->format, "description",
                                              name->description, "priority", 0));
        size_t i;
        const json_t *c;
        json_array_foreach(cols, i, c)
        {
            json_array_append_new(
                defs, json_pack("{s:s,s:s,s:s,s:s,s:I}", "name", str_or_empty(c, "name"), "type",
                                str_or_empty(c, "type"), "format", str_or_empty(c, "format"),
                                "description", str_or_empty(c, "description"), "priority",
                                json_integer_value(json_object_get(c, "priority"))));
        }
        json_object_set_new(t, "columnDefinitions", defs);
    }
    for (size_t k = 0; k < n; k++) {
        json_t *doc = kc__doc_from_obj(items[k]);
        json_t *cells = json_pack("[s]", kc_obj_name(items[k]));
        size_t i;
        const json_t *c;
        json_array_foreach(cols, i, c)
        {
            const char *jp = json_string_value(json_object_get(c, "jsonPath"));
            json_array_append_new(
                cells, cell(str_or_empty(c, "type"), jp ? select_path(doc, jp) : NULL, now));
        }
        json_decref(doc);
        json_t *obj = kc__table_row_object(items[k]);
        if (!obj || json_array_append_new(
                        rows, json_pack("{s:o,s:o}", "cells", cells, "object", obj)) < 0) {
            json_decref(rows);
            json_decref(t);
            return NULL;
        }
    }
    json_object_set_new(t, "rows", rows);
    return t;
}

json_t *kc__table_for(kc__rsrc *r, kc_obj *const *items, size_t n, const char *rv, const char *cont,
                      bool with_columns)
{
    if (!r->is_crd)
        return kc__table_build(r->group, r->plural, items, n, rv, cont, with_columns);
    json_t *versions = kc__crd_versions_ref(r);
    const json_t *cols = columns_of(versions, r, items, n);
    /* no printer columns: upstream serves a default Age column */
    json_t *age =
        cols ? NULL
             : json_pack("[{s:s,s:s,s:s,s:s}]", "name", "Age", "type", "date", "description",
                         "Custom resource definition column (in JSONPath format): "
                         ".metadata.creationTimestamp",
                         "jsonPath", ".metadata.creationTimestamp");
    json_t *t = build_cr(cols ? cols : age, items, n, rv, cont, with_columns, (int64_t)time(NULL));
    json_decref(age);
    json_decref(versions);
    return t;
}
