/*
 * get_print.c — `kcache get -o json|yaml|name`: objects printed as kubectl prints them.
 *
 * Design: each object's stored JSON is loaded into a jansson tree (one object at a time, so
 * memory stays bounded however long the list) and written out: as JSON the way Go's
 * encoding/json.MarshalIndent with four spaces writes it (what kubectl prints: keys sorted
 * bytewise, <, >, & and U+2028/U+2029 escaped, numbers in Go's shortest form), or as YAML through
 * get_yaml.c. Several objects go into one List document, streamed: the List's head is written
 * first, each item as it arrives. A number jansson cannot hold (an integer beyond int64) cannot
 * be converted: under -o json the object's stored text is printed as is instead, under -o yaml
 * the object is reported on stderr and skipped (the document stays valid).
 */
#include "get.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GET_INDENT 4

struct get_doc {
    FILE *out;
    get_fmt fmt;
    bool single;
    size_t n;
    bool failed;
    get_yaml *y;
};

/* ---- shared ---------------------------------------------------------------------------------- */

void get_kind_name(char *buf, size_t size, const kc_resource_info *ri, const char *name)
{
    size_t k = 0;
    for (const char *p = ri->kind; *p && k + 1 < size; p++)
        buf[k++] = (char)tolower((unsigned char)*p);
    buf[k] = '\0';
    snprintf(buf + k, size - k, "%s%s/%s", *ri->group ? "." : "", ri->group, name);
}

void get_format_real(char *buf, size_t size, double v)
{
    if (!isfinite(v)) { /* not representable in JSON; jansson never yields it */
        snprintf(buf, size, "null");
        return;
    }
    char e[40];
    int prec; /* the shortest %.*e that reads back as v (17 digits always do) */
    for (prec = 0; prec <= 16; prec++) {
        snprintf(e, sizeof e, "%.*e", prec, v);
        if (strtod(e, NULL) == v)
            break;
    }
    if (prec > 16)
        prec = 16;
    double a = fabs(v);
    if (a != 0 && (a < 1e-6 || a >= 1e21)) {
        /* Go: "1e-07" → "1e-7" */
        char *x = strchr(e, 'e');
        if (x && x[1] == '-' && x[2] == '0' && x[3] && !x[4])
            memmove(x + 2, x + 3, 2);
        snprintf(buf, size, "%s", e);
        return;
    }
    int exp10 = atoi(strchr(e, 'e') + 1);
    int decimals = prec - exp10;
    snprintf(buf, size, "%.*f", decimals > 0 ? decimals : 0, v);
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char **get_sorted_keys(json_t *obj, size_t *n)
{
    *n = json_object_size(obj);
    if (!*n)
        return NULL;
    const char **keys = malloc(*n * sizeof(*keys));
    if (!keys)
        return NULL;
    size_t i = 0;
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) keys[i++] = k;
    qsort(keys, *n, sizeof(*keys), cmp_keys);
    return keys;
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void json_str(FILE *f, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"':
            fputs("\\\"", f);
            continue;
        case '\\':
            fputs("\\\\", f);
            continue;
        case '\n':
            fputs("\\n", f);
            continue;
        case '\r':
            fputs("\\r", f);
            continue;
        case '\t':
            fputs("\\t", f);
            continue;
        case '\b':
            fputs("\\b", f);
            continue;
        case '\f':
            fputs("\\f", f);
            continue;
        case '<':
        case '>':
        case '&':
            fprintf(f, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
            continue;
        default:
            break;
        }
        if (c < 0x20) {
            fprintf(f, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
        } else if (c == 0xe2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
                   ((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9)) {
            fprintf(f, "\\u202%c", (unsigned char)s[i + 2] == 0xa8 ? '8' : '9');
            i += 2;
        } else {
            fputc(c, f);
        }
    }
    fputc('"', f);
}

static void json_indent(FILE *f, int level)
{
    fputc('\n', f);
    for (int i = 0; i < level * GET_INDENT; i++)
        fputc(' ', f);
}

/* Write v at nesting level (its first line is already indented). -1 on out of memory. */
static int json_write(FILE *f, json_t *v, int level)
{
    char num[64];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n;
        const char **keys = get_sorted_keys(v, &n);
        if (!n) {
            fputs("{}", f);
            return 0;
        }
        if (!keys)
            return -1;
        fputc('{', f);
        int rc = 0;
        for (size_t i = 0; i < n && !rc; i++) {
            json_indent(f, level + 1);
            json_str(f, keys[i], strlen(keys[i]));
            fputs(": ", f);
            rc = json_write(f, json_object_get(v, keys[i]), level + 1);
            if (i + 1 < n)
                fputc(',', f);
        }
        free(keys);
        json_indent(f, level);
        fputc('}', f);
        return rc;
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        if (!n) {
            fputs("[]", f);
            return 0;
        }
        fputc('[', f);
        for (size_t i = 0; i < n; i++) {
            json_indent(f, level + 1);
            if (json_write(f, json_array_get(v, i), level + 1))
                return -1;
            if (i + 1 < n)
                fputc(',', f);
        }
        json_indent(f, level);
        fputc(']', f);
        return 0;
    }
    case JSON_STRING:
        json_str(f, json_string_value(v), json_string_length(v));
        return 0;
    case JSON_INTEGER:
        fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return 0;
    case JSON_REAL:
        get_format_real(num, sizeof num, json_real_value(v));
        fputs(num, f);
        return 0;
    case JSON_TRUE:
        fputs("true", f);
        return 0;
    case JSON_FALSE:
        fputs("false", f);
        return 0;
    case JSON_NULL:
        fputs("null", f);
        return 0;
    }
    return 0;
}

/* ---- the document ---------------------------------------------------------------------------- */

/* The List's head up to its items sequence (YAML). */
static int yaml_list_begin(get_yaml *y)
{
    int rc = get_yaml_doc(y, true);
    rc = rc ? rc : get_yaml_map(y, true);
    rc = rc ? rc : get_yaml_str(y, "apiVersion");
    rc = rc ? rc : get_yaml_str(y, "v1");
    rc = rc ? rc : get_yaml_str(y, "items");
    return rc ? rc : get_yaml_seq(y, true);
}

static int yaml_list_end(get_yaml *y)
{
    int rc = get_yaml_seq(y, false);
    rc = rc ? rc : get_yaml_str(y, "kind");
    rc = rc ? rc : get_yaml_str(y, "List");
    rc = rc ? rc : get_yaml_str(y, "metadata");
    rc = rc ? rc : get_yaml_map(y, true);
    rc = rc ? rc : get_yaml_str(y, "resourceVersion");
    rc = rc ? rc : get_yaml_str(y, "");
    rc = rc ? rc : get_yaml_map(y, false);
    rc = rc ? rc : get_yaml_map(y, false);
    return rc ? rc : get_yaml_doc(y, false);
}

get_doc *get_doc_new(FILE *out, get_fmt fmt, bool single)
{
    get_doc *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->out = out;
    d->fmt = fmt;
    d->single = single;
    if (fmt == GET_JSON && !single)
        fputs("{\n    \"apiVersion\": \"v1\",\n    \"items\": [", out);
    /* a single object gets its YAML document when it arrives (none when it is not found) */
    if (fmt == GET_YAML && (!(d->y = get_yaml_new(out)) || (!single && yaml_list_begin(d->y)))) {
        get_yaml_free(d->y);
        free(d);
        return NULL;
    }
    return d;
}

int get_doc_add(get_doc *d, const kc_obj *obj, const kc_resource_info *ri)
{
    if (d->fmt == GET_NAME) {
        char buf[1024];
        get_kind_name(buf, sizeof buf, ri, kc_obj_name(obj));
        fprintf(d->out, "%s\n", buf);
        d->n++;
        return 0;
    }
    if (d->single && d->n > 0)
        return 0; /* a single object was asked for */
    size_t len;
    const char *text = kc_obj_json(obj, &len);
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_ALLOW_NUL, &je);
    int rc = 0;
    if (d->fmt == GET_JSON) {
        if (!d->single)
            fputs(d->n ? ",\n        " : "\n        ", d->out);
        if (root)
            rc = json_write(d->out, root, d->single ? 0 : 2);
        else
            fputs(text, d->out); /* jansson cannot hold it (e.g. an integer beyond int64) */
        if (d->single)
            fputc('\n', d->out);
        d->n++;
    } else if (root) {
        rc = d->single ? get_yaml_doc(d->y, true) : 0;
        rc = rc ? rc : get_yaml_value(d->y, root);
        rc = rc || !d->single ? rc : get_yaml_doc(d->y, false);
        d->failed = d->failed || rc;
        d->n++;
    } else {
        fprintf(stderr, "kcache get: %s %s%s%s: cannot convert to YAML: %s\n", ri->resource,
                kc_obj_namespace(obj), *kc_obj_namespace(obj) ? "/" : "", kc_obj_name(obj),
                je.text);
        rc = -1;
    }
    json_decref(root);
    return rc;
}

int get_doc_finish(get_doc *d)
{
    if (!d)
        return 0;
    int rc = d->failed ? -1 : 0;
    if (d->fmt == GET_JSON && !d->single)
        fprintf(d->out,
                "%s],\n    \"kind\": \"List\",\n    \"metadata\": {\n        "
                "\"resourceVersion\": \"\"\n    }\n}\n",
                d->n ? "\n    " : "");
    if (d->fmt == GET_YAML) {
        if (!d->failed && !d->single && yaml_list_end(d->y))
            rc = -1;
        if (get_yaml_free(d->y))
            rc = -1;
    }
    if (fflush(d->out) || ferror(d->out))
        rc = -1;
    free(d);
    return rc;
}
