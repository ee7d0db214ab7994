/*
 * get_columns.c — `kcache get -o custom-columns=NAME:.path,…` (and custom-columns-file=FILE) as
 * kubectl prints them.
 *
 * Design: the spec is split as kubectl splits it (columns on ',', header and path on the first
 * ':'); each path is a relaxed JSONPath (jsonpath.h: ".metadata.name", "metadata.name" and
 * "{.metadata.name}" alike). A row holds, per column, the values found in the object printed as
 * Go's fmt.Sprint prints them and joined with ",", or "<none>" when there is none. Rows are kept
 * as text and printed through the table's tabwriter (get_tab_print), the header first, so the
 * columns align as kubectl's do; under -w each event prints its own row.
 */
#include "get.h"
#include "jsonpath.h"

#include <stdlib.h>
#include <string.h>

struct get_cols {
    size_t n;
    char **head;
    jp_tmpl **path;
    char **cells; /* nrows × n */
    size_t nrows, cap;
};

void get_cols_free(get_cols *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->head[i]);
        jp_free(c->path[i]);
    }
    for (size_t i = 0; i < c->nrows * c->n; i++)
        free(c->cells[i]);
    free(c->head);
    free(c->path);
    free(c->cells);
    free(c);
}

/* Append column head:path. 0, or -1 with err set. */
static int add_col(get_cols *c, const char *head, size_t head_len, const char *path, char *err,
                   size_t errsz)
{
    char **h = realloc(c->head, (c->n + 1) * sizeof(*h));
    if (h)
        c->head = h;
    jp_tmpl **p = realloc(c->path, (c->n + 1) * sizeof(*p));
    if (p)
        c->path = p;
    if (!h || !p || !(c->head[c->n] = strndup(head, head_len))) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    char why[200];
    if (jp_parse(path, true, &c->path[c->n], why, sizeof why)) {
        snprintf(err, errsz, "column %s: %s", c->head[c->n], why);
        free(c->head[c->n]);
        return -1;
    }
    c->n++;
    return 0;
}

/* "A:.a,B:.b". */
static int parse_inline(get_cols *c, const char *spec, char *err, size_t errsz)
{
    const char *p = spec;
    for (;;) {
        size_t len = strcspn(p, ",");
        char *col = strndup(p, len);
        if (!col) {
            snprintf(err, errsz, "out of memory");
            return -1;
        }
        char *colon = strchr(col, ':');
        int rc = 0;
        if (!colon || !len) {
            snprintf(err, errsz,
                     "unexpected custom-columns spec: %s, expected <header>:<json-path-expr>", col);
            rc = -1;
        } else {
            rc = add_col(c, col, (size_t)(colon - col), colon + 1, err, errsz);
        }
        free(col);
        if (rc)
            return -1;
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

/* A custom-columns-file: headers on the first line, paths on the second (blank-separated). */
static int parse_file(get_cols *c, const char *text, char *err, size_t errsz)
{
    char *copy = strdup(text), *save = NULL, *hsave = NULL, *psave = NULL;
    if (!copy) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    char *heads = strtok_r(copy, "\n", &save), *paths = strtok_r(NULL, "\n", &save);
    int rc = 0;
    if (!heads || !paths) {
        snprintf(err, errsz, "custom-columns-file: expected a line of headers and a line of paths");
        rc = -1;
    }
    char *h = rc ? NULL : strtok_r(heads, " \t\r", &hsave);
    char *p = rc ? NULL : strtok_r(paths, " \t\r", &psave);
    while (!rc && (h || p)) {
        if (!h || !p) {
            snprintf(err, errsz, "custom-columns-file: the number of headers and of paths differ");
            rc = -1;
            break;
        }
        rc = add_col(c, h, strlen(h), p, err, errsz);
        h = strtok_r(NULL, " \t\r", &hsave);
        p = strtok_r(NULL, " \t\r", &psave);
    }
    free(copy);
    return rc;
}

int get_cols_parse(const char *spec, bool file_form, get_cols **ret, char *err, size_t errsz)
{
    *ret = NULL;
    if (!file_form && !*spec) {
        snprintf(err, errsz, "custom-columns format specified but no custom columns given");
        return -1;
    }
    get_cols *c = calloc(1, sizeof(*c));
    if (!c) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    if (file_form ? parse_file(c, spec, err, errsz) : parse_inline(c, spec, err, errsz)) {
        get_cols_free(c);
        return -1;
    }
    *ret = c;
    return 0;
}

/* Column i of obj: its values (fmt.Sprint) joined with ",", or <none>. NULL on OOM. */
static char *col_cell(const get_cols *c, size_t i, json_t *obj, bool list)
{
    json_t **vals = NULL;
    size_t n = 0;
    if (jp_find(c->path[i], obj, &vals, &n))
        return NULL;
    if (!n) {
        free(vals);
        return strdup("<none>");
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    for (size_t k = 0; f && k < n; k++) {
        char *s = jp_sprint(vals[k], list);
        if (s) {
            for (char *q = s; *q; q++) /* printers.EscapeTerminal: no control characters */
                if ((unsigned char)*q < 0x20 || *q == 0x7f)
                    *q = '?';
            fprintf(f, "%s%s", k ? "," : "", s);
        }
        free(s);
    }
    free(vals);
    if (!f || fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}

int get_cols_add(get_cols *c, json_t *obj, bool list)
{
    if (c->nrows == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 32;
        char **cells = realloc(c->cells, cap * c->n * sizeof(*cells));
        if (!cells)
            return -1;
        c->cells = cells;
        c->cap = cap;
    }
    char **row = c->cells + c->nrows * c->n;
    for (size_t i = 0; i < c->n; i++)
        if (!(row[i] = col_cell(c, i, obj, list))) {
            for (size_t j = 0; j < i; j++)
                free(row[j]);
            return -1;
        }
    c->nrows++;
    return 0;
}

void get_cols_print(get_cols *c, FILE *out, bool header)
{
    size_t first = header ? 1 : 0;
    char **m = calloc((c->nrows + first) * c->n + 1, sizeof(*m));
    if (m) {
        if (header)
            memcpy(m, c->head, c->n * sizeof(*m));
        memcpy(m + first * c->n, c->cells, c->nrows * c->n * sizeof(*m));
        get_tab_print(out, m, c->nrows + first, c->n, NULL);
        free(m);
    }
    for (size_t i = 0; i < c->nrows * c->n; i++)
        free(c->cells[i]);
    c->nrows = 0;
}
