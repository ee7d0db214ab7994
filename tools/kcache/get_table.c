/*
 * get_table.c — `kcache get`'s table: the columns the server prints (server-side printing, as
 * kubectl does), not columns of our own.
 *
 * Design: rows come from kc_client_get_table (Accept: application/json;as=Table;v=v1;
 * g=meta.k8s.io), one page at a time (each page is loaded with jansson and reduced to its cells,
 * so memory holds only text); a collection follows metadata.continue. Columns are the Table's
 * columnDefinitions with priority 0 (all with -o wide), headers upper-cased; -A puts NAMESPACE
 * first, taken from each row's object (PartialObjectMetadata). Cells are printed as kubectl's
 * table printer does: strings cut at the first line break (then "…" as "..."), other values as
 * text, control characters replaced. A server that answers without a Table (no server-side
 * printing) gets a NAME column from the objects. Printing pads like kubectl's tabwriter
 * (padding 3, minimum cell width 6, widths in code points, the last column unpadded).
 */
#include "get.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define GET_PAGE     500
#define TAB_PADDING  3
#define TAB_MINWIDTH 6

struct get_table {
    const kc_resource_info *ri;
    bool wide, show_ns, have_cols;
    size_t ncols; /* shown columns */
    char **head;  /* their headers */
    int *src;     /* the server's cell index of each shown column; -1 = NAMESPACE */
    int name_col; /* shown index of the name column */
    char **cells; /* nrows × ncols */
    size_t nrows, cap;
};

get_table *get_table_new(const kc_resource_info *ri, bool wide, bool show_ns)
{
    get_table *t = calloc(1, sizeof(*t));
    if (t) {
        t->ri = ri;
        t->wide = wide;
        t->show_ns = show_ns;
    }
    return t;
}

void get_table_free(get_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->ncols; i++)
        free(t->head[i]);
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->head);
    free(t->src);
    free(t->cells);
    free(t);
}

size_t get_table_rows(const get_table *t)
{
    return t->nrows;
}

/* ---- columns and cells ----------------------------------------------------------------------- */

static char *upper(const char *s)
{
    char *u = strdup(s ? s : "");
    for (char *p = u; p && *p; p++)
        *p = (char)toupper((unsigned char)*p);
    return u;
}

/* Choose the shown columns from columnDefinitions (NULL: a plain NAME column). -1 on OOM. */
static int set_columns(get_table *t, json_t *defs)
{
    size_t n = json_array_size(defs), k = 0;
    t->head = calloc(n + 2, sizeof(*t->head));
    t->src = calloc(n + 2, sizeof(*t->src));
    if (!t->head || !t->src)
        return -1;
    if (t->show_ns) {
        t->src[k] = -1;
        t->head[k++] = strdup("NAMESPACE");
    }
    t->name_col = (int)k;
    bool named = false;
    for (size_t i = 0; i < n; i++) {
        json_t *d = json_array_get(defs, i);
        if (json_integer_value(json_object_get(d, "priority")) != 0 && !t->wide)
            continue;
        const char *fmt = json_string_value(json_object_get(d, "format"));
        if (!named && fmt && !strcmp(fmt, "name")) {
            t->name_col = (int)k;
            named = true;
        }
        t->src[k] = (int)i;
        t->head[k++] = upper(json_string_value(json_object_get(d, "name")));
    }
    if (k == (t->show_ns ? 1u : 0u)) { /* no columns from the server: the objects' names */
        t->src[k] = 0;
        t->head[k++] = strdup("NAME");
    }
    t->ncols = k;
    t->have_cols = true;
    for (size_t i = 0; i < k; i++)
        if (!t->head[i])
            return -1;
    return 0;
}

/* A cell as kubectl's printer shows it. New malloc'd; NULL on OOM. */
static char *cell_text(json_t *v)
{
    char num[64];
    char *s = NULL;
    switch (json_typeof(v)) {
    case JSON_STRING: {
        const char *str = json_string_value(v);
        size_t n = json_string_length(v), cut = strcspn(str, "\f\n\r");
        bool truncated = cut < n;
        s = malloc(cut + 4);
        if (!s)
            return NULL;
        for (size_t i = 0; i < cut; i++)
            s[i] = ((unsigned char)str[i] < 0x20 || str[i] == 0x7f) ? '?' : str[i];
        memcpy(s + cut, truncated ? "..." : "", truncated ? 4 : 1);
        return s;
    }
    case JSON_INTEGER:
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return strdup(num);
    case JSON_REAL:
        get_format_real(num, sizeof num, json_real_value(v));
        return strdup(num);
    case JSON_TRUE:
        return strdup("true");
    case JSON_FALSE:
        return strdup("false");
    case JSON_NULL:
        return strdup("<nil>");
    default:
        return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    }
}

/* Append one row: cells (the server's array), ns (the object's namespace). -1 on OOM. */
static int add_row(get_table *t, json_t *cells, const char *ns)
{
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        char **c = realloc(t->cells, cap * t->ncols * sizeof(*c));
        if (!c)
            return -1;
        t->cells = c;
        t->cap = cap;
    }
    char **row = t->cells + t->nrows * t->ncols;
    for (size_t i = 0; i < t->ncols; i++) {
        json_t *v = t->src[i] < 0 ? NULL : json_array_get(cells, (size_t)t->src[i]);
        row[i] = t->src[i] < 0 ? strdup(ns ? ns : "") : v ? cell_text(v) : strdup("");
        if (!row[i]) {
            for (size_t j = 0; j < i; j++)
                free(row[j]);
            return -1;
        }
    }
    t->nrows++;
    return 0;
}

static const char *meta_str(json_t *obj, const char *key)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

/* Rows of one answer: a Table, else a list (items) or one object. */
static int add_doc(get_table *t, json_t *doc, kc_error *err)
{
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    bool table = kind && !strcmp(kind, "Table");
    if (!t->have_cols && set_columns(t, table ? json_object_get(doc, "columnDefinitions") : NULL))
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    if (table) {
        size_t i;
        json_t *row;
        json_array_foreach(json_object_get(doc, "rows"), i, row)
        {
            json_t *obj = json_object_get(row, "object");
            if (add_row(t, json_object_get(row, "cells"), meta_str(obj, "namespace")))
                return kc_error_set(err, KC_ENOMEM, "out of memory");
        }
        return 0;
    }
    json_t *items = json_object_get(doc, "items");
    if (!json_is_array(items) && !meta_str(doc, "name"))
        return kc_error_set(err, KC_EPARSE, "%s: the server sent neither a Table nor objects",
                            t->ri->resource);
    size_t n = json_is_array(items) ? json_array_size(items) : 1;
    for (size_t i = 0; i < n; i++) {
        json_t *obj = json_is_array(items) ? json_array_get(items, i) : doc;
        const char *name = meta_str(obj, "name");
        json_t *cells = json_pack("[s]", name ? name : "");
        /* the NAME column is the first server cell here */
        int rc = cells ? add_row(t, cells, meta_str(obj, "namespace")) : -1;
        json_decref(cells);
        if (rc)
            return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    return 0;
}

int get_table_fetch(get_table *t, kc_client *c, const kc_gvr *gvr, const char *ns, const char *name,
                    const kc_list_opts *opts, kc_error *err)
{
    kc_list_opts o = {0};
    if (opts)
        o = *opts;
    if (o.limit <= 0)
        o.limit = GET_PAGE;
    char *cont = NULL;
    int rc;
    do {
        o.continue_token = cont;
        char *body = NULL;
        size_t len = 0;
        rc = kc_client_get_table(c, gvr, ns, name, &o, &body, &len, err);
        free(cont);
        cont = NULL;
        if (rc)
            break;
        json_error_t je;
        json_t *doc = json_loadb(body, len, 0, &je);
        free(body);
        if (!doc)
            return kc_error_set(err, KC_EPARSE, "%s: the server's answer is not JSON: %s",
                                t->ri->resource, je.text);
        rc = add_doc(t, doc, err);
        const char *next = name ? NULL : meta_str(doc, "continue");
        if (!rc && next && *next && !(cont = strdup(next)))
            rc = kc_error_set(err, KC_ENOMEM, "out of memory");
        json_decref(doc);
        o.resource_version = NULL; /* a continue token carries the snapshot */
        o.resource_version_match = NULL;
    } while (!rc && cont);
    free(cont);
    return rc;
}

/* ---- printing -------------------------------------------------------------------------------- */

static size_t width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80; /* code points, as Go's tabwriter counts */
    return w;
}

void get_table_print(const get_table *t, FILE *out, bool with_kind)
{
    if (!t->have_cols)
        return;
    size_t *w = calloc(t->ncols, sizeof(*w));
    char **named = calloc(t->nrows + 1, sizeof(*named));
    if (!w || !named) {
        free(w);
        free(named);
        return;
    }
    for (size_t r = 0; r < t->nrows; r++) {
        const char *n = t->cells[r * t->ncols + (size_t)t->name_col];
        size_t need = strlen(n) + strlen(t->ri->kind) + strlen(t->ri->group) + 4;
        if (with_kind && (named[r] = malloc(need)))
            get_kind_name(named[r], need, t->ri, n);
    }
    for (size_t c = 0; c < t->ncols; c++) {
        w[c] = width(t->head[c]);
        for (size_t r = 0; r < t->nrows; r++) {
            const char *s = t->cells[r * t->ncols + c];
            if ((int)c == t->name_col && named[r])
                s = named[r];
            size_t x = width(s);
            w[c] = x > w[c] ? x : w[c];
        }
    }
    for (size_t r = 0; r <= t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = r == 0 ? t->head[c] : t->cells[(r - 1) * t->ncols + c];
            if (r > 0 && (int)c == t->name_col && named[r - 1])
                s = named[r - 1];
            fputs(s, out);
            if (c + 1 == t->ncols)
                break;
            size_t cw = w[c] + TAB_PADDING < TAB_MINWIDTH ? TAB_MINWIDTH : w[c] + TAB_PADDING;
            for (size_t k = width(s); k < cw; k++)
                fputc(' ', out);
        }
        fputc('\n', out);
    }
    for (size_t r = 0; r < t->nrows; r++)
        free(named[r]);
    free(named);
    free(w);
}
