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

#define SRC_NAMESPACE (-1)
#define SRC_LABELS    (-2)
#define SRC_LABEL0    (-3) /* SRC_LABEL0 - i: the -L column of label_keys[i] */

struct get_table {
    const kc_resource_info *ri;
    bool wide, show_ns, have_cols, show_labels;
    char *const *label_keys; /* -L */
    size_t n_label_keys;
    size_t ncols;  /* shown columns */
    char **head;   /* their headers */
    int *src;      /* the server's cell index of each shown column, or SRC_* */
    int name_col;  /* shown index of the name column */
    char **cells;  /* nrows × ncols */
    char **row_ns; /* each row's namespace */
    size_t nrows, cap;
    char rv[64]; /* the last page's resourceVersion */
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

void get_table_labels(get_table *t, char *const *keys, size_t n, bool show_labels)
{
    t->label_keys = keys;
    t->n_label_keys = n;
    t->show_labels = show_labels;
}

void get_table_free(get_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->ncols; i++)
        free(t->head[i]);
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    for (size_t i = 0; i < t->nrows; i++)
        free(t->row_ns[i]);
    free(t->row_ns);
    free(t->head);
    free(t->src);
    free(t->cells);
    free(t);
}

size_t get_table_cols(const get_table *t)
{
    return t->ncols;
}

size_t get_table_rows(const get_table *t)
{
    return t->nrows;
}

const char *get_table_rv(const get_table *t)
{
    return t->rv;
}

void get_table_row_id(const get_table *t, size_t r, const char **ns, const char **name)
{
    *ns = t->row_ns[r];
    *name = t->cells[r * t->ncols + (size_t)t->name_col];
}

int get_table_permute(get_table *t, const size_t *order)
{
    char **cells = malloc((t->nrows * t->ncols + 1) * sizeof(*cells));
    char **ns = malloc((t->nrows + 1) * sizeof(*ns));
    if (!cells || !ns) {
        free(cells);
        free(ns);
        return -1;
    }
    for (size_t r = 0; r < t->nrows; r++) {
        memcpy(cells + r * t->ncols, t->cells + order[r] * t->ncols, t->ncols * sizeof(*cells));
        ns[r] = t->row_ns[order[r]];
    }
    memcpy(t->cells, cells, t->nrows * t->ncols * sizeof(*cells));
    memcpy(t->row_ns, ns, t->nrows * sizeof(*ns));
    free(cells);
    free(ns);
    return 0;
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
    size_t n = json_array_size(defs), k = 0, extra = t->n_label_keys + 3;
    t->head = calloc(n + extra, sizeof(*t->head));
    t->src = calloc(n + extra, sizeof(*t->src));
    if (!t->head || !t->src)
        return -1;
    if (t->show_ns) {
        t->src[k] = SRC_NAMESPACE;
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
    for (size_t i = 0; i < t->n_label_keys; i++) { /* -L: kubectl's header is the last part */
        const char *slash = strrchr(t->label_keys[i], '/');
        t->src[k] = SRC_LABEL0 - (int)i;
        t->head[k++] = upper(slash ? slash + 1 : t->label_keys[i]);
    }
    if (t->show_labels) {
        t->src[k] = SRC_LABELS;
        t->head[k++] = strdup("LABELS");
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

/* "k=v,k2=v2" (keys sorted) or <none>: kubectl's LABELS cell. New malloc'd; NULL on OOM. */
static char *labels_text(json_t *labels)
{
    size_t n;
    const char **keys = get_sorted_keys(labels, &n);
    if (!keys)
        return strdup("<none>");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    for (size_t i = 0; f && i < n; i++)
        fprintf(f, "%s%s=%s", i ? "," : "", keys[i],
                json_string_value(json_object_get(labels, keys[i])) ?: "");
    free(keys);
    if (!f || fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* The cell of shown column i: from the server's cells, or the object's namespace or labels. */
static char *row_cell(const get_table *t, size_t i, json_t *cells, json_t *meta)
{
    int src = t->src[i];
    json_t *labels = json_object_get(meta, "labels");
    if (src == SRC_NAMESPACE) {
        const char *ns = json_string_value(json_object_get(meta, "namespace"));
        return strdup(ns ? ns : "");
    }
    if (src == SRC_LABELS)
        return labels_text(labels);
    if (src <= SRC_LABEL0) {
        const char *v = json_string_value(json_object_get(labels, t->label_keys[SRC_LABEL0 - src]));
        return strdup(v ? v : "");
    }
    json_t *v = json_array_get(cells, (size_t)src);
    return v ? cell_text(v) : strdup("");
}

/* Append one row: cells (the server's array) of the object whose metadata is meta. -1 on OOM. */
static int add_row(get_table *t, json_t *cells, json_t *meta)
{
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        char **c = realloc(t->cells, cap * t->ncols * sizeof(*c));
        if (c)
            t->cells = c;
        char **ns = realloc(t->row_ns, cap * sizeof(*ns));
        if (ns)
            t->row_ns = ns;
        if (!c || !ns)
            return -1;
        t->cap = cap;
    }
    char **row = t->cells + t->nrows * t->ncols;
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    if (!(t->row_ns[t->nrows] = strdup(ns ? ns : "")))
        return -1;
    for (size_t i = 0; i < t->ncols; i++) {
        if (!(row[i] = row_cell(t, i, cells, meta))) {
            for (size_t j = 0; j < i; j++)
                free(row[j]);
            free(t->row_ns[t->nrows]);
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
            if (add_row(t, json_object_get(row, "cells"), json_object_get(obj, "metadata")))
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
        int rc = cells ? add_row(t, cells, json_object_get(obj, "metadata")) : -1;
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
        const char *rv = meta_str(doc, "resourceVersion");
        if (rv)
            snprintf(t->rv, sizeof t->rv, "%s", rv);
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

void get_tab_print(FILE *out, char *const *cells, size_t nrows, size_t ncols, size_t *widths)
{
    size_t *w = calloc(ncols ? ncols : 1, sizeof(*w));
    if (!w)
        return;
    if (widths)
        memcpy(w, widths, ncols * sizeof(*w));
    for (size_t c = 0; c < ncols; c++)
        for (size_t r = 0; r < nrows; r++) {
            size_t x = width(cells[r * ncols + c]);
            w[c] = x > w[c] ? x : w[c];
        }
    for (size_t r = 0; r < nrows; r++) {
        for (size_t c = 0; c < ncols; c++) {
            const char *s = cells[r * ncols + c];
            fputs(s, out);
            if (c + 1 == ncols)
                break;
            size_t cw = w[c] + TAB_PADDING < TAB_MINWIDTH ? TAB_MINWIDTH : w[c] + TAB_PADDING;
            for (size_t k = width(s); k < cw; k++)
                fputc(' ', out);
        }
        fputc('\n', out);
    }
    if (widths)
        memcpy(widths, w, ncols * sizeof(*w));
    free(w);
}

void get_table_print(const get_table *t, FILE *out, bool with_kind, bool header, size_t *widths)
{
    if (!t->have_cols)
        return;
    size_t first = header ? 1 : 0, nrows = t->nrows + first;
    char **m = calloc(nrows * t->ncols + 1, sizeof(*m));
    char **named = calloc(t->nrows + 1, sizeof(*named));
    if (!m || !named) {
        free(m);
        free(named);
        return;
    }
    if (header)
        memcpy(m, t->head, t->ncols * sizeof(*m));
    memcpy(m + first * t->ncols, t->cells, t->nrows * t->ncols * sizeof(*m));
    for (size_t r = 0; with_kind && r < t->nrows; r++) {
        const char *n = t->cells[r * t->ncols + (size_t)t->name_col];
        size_t need = strlen(n) + strlen(t->ri->kind) + strlen(t->ri->group) + 4;
        if ((named[r] = malloc(need))) {
            get_kind_name(named[r], need, t->ri, n);
            m[(r + first) * t->ncols + (size_t)t->name_col] = named[r];
        }
    }
    get_tab_print(out, m, nrows, t->ncols, widths);
    for (size_t r = 0; r < t->nrows; r++)
        free(named[r]);
    free(named);
    free(m);
}
