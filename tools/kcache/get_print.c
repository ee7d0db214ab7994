/*
 * get_print.c — `kcache get -o json|yaml|name`: objects printed as kubectl prints them.
 *
 * Design: each object's stored JSON is loaded into a jansson tree (one object at a time, so
 * memory stays bounded however long the list) and written out:
 *   - JSON as Go's encoding/json.MarshalIndent with four spaces writes it (what kubectl prints):
 *     keys sorted bytewise, <, >, & and U+2028/U+2029 escaped, numbers in Go's shortest form;
 *   - YAML through libyaml's emitter (never hand-written YAML), keys sorted the same way. A
 *     string that a YAML reader would take for something else — null, a YAML 1.1 boolean (y, no,
 *     on…), a number in any YAML 1.1/1.2 spelling, a timestamp, "=" or "<<" — is
 *     double-quoted (kubectl leaves "=" and "<<" plain, which PyYAML cannot read back);
 *     libyaml quotes whatever else plain style cannot carry (leading "- ", ": ", " #",
 *     control characters…); multi-line strings become literal blocks where libyaml allows;
 *     \r, NEL, U+2028 and U+2029 (line breaks to YAML 1.1 only) are escaped in double quotes;
 *     an exponent float gets a '.' (1.0e-9) so that YAML 1.1 readers see a number.
 * Several objects go into one List document, streamed: the List's head is written first, each
 * item as it arrives. A number jansson cannot hold (an integer beyond int64) cannot be
 * converted: under -o json the object's stored text is printed as is instead, under -o yaml the
 * object is reported on stderr and skipped (the document stays valid).
 */
#include "get.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define GET_INDENT 4

struct get_doc {
    FILE *out;
    get_fmt fmt;
    bool single;
    size_t n;
    bool failed;
    yaml_emitter_t em;
    bool em_open;
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

/* The keys of obj sorted bytewise (as Go sorts map keys), new malloc'd (caller frees); NULL when
 * empty or out of memory (*n = 0 then for empty). */
static const char **sorted_keys(json_t *obj, size_t *n)
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
        const char **keys = sorted_keys(v, &n);
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

/* ---- YAML ------------------------------------------------------------------------------------ */

static bool all_in(const char *s, size_t n, const char *set)
{
    if (!n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!s[i] || !strchr(set, s[i]))
            return false;
    return true;
}

/* [0-9_]* '.' [0-9_]* ([eE][-+]?[0-9]+)?  or  [0-9_]+ [eE][-+]?[0-9]+ (s starts with a digit or
 * '.'), as YAML 1.1 and 1.2 floats. */
static bool looks_float(const char *s, size_t n)
{
    size_t i = 0, digits = 0;
    for (; i < n && (isdigit((unsigned char)s[i]) || s[i] == '_'); i++)
        digits++;
    bool dot = i < n && s[i] == '.';
    if (dot)
        for (i++; i < n && (isdigit((unsigned char)s[i]) || s[i] == '_'); i++)
            digits++;
    if (i == n)
        return dot && digits;
    if (s[i] != 'e' && s[i] != 'E')
        return false;
    i++;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        i++;
    return digits && all_in(s + i, n - i, "0123456789");
}

/* 1:20, 190:20:30.15 — YAML 1.1 sexagesimal numbers. */
static bool looks_sexagesimal(const char *s, size_t n)
{
    const char *colon = memchr(s, ':', n);
    return colon && all_in(s, (size_t)(colon - s), "0123456789_") &&
           all_in(colon, n - (size_t)(colon - s), "0123456789_:.");
}

/* Count the digits at s[*i] (at most max), advancing *i. */
static size_t digits_at(const char *s, size_t n, size_t *i, size_t max)
{
    size_t d = 0;
    while (*i < n && d < max && isdigit((unsigned char)s[*i])) {
        (*i)++;
        d++;
    }
    return d;
}

/* A YAML 1.1 timestamp: 2001-12-14, or 2001-12-14t21:59:43.10-05:00 and its variants. */
static bool looks_timestamp(const char *s, size_t n)
{
    size_t i = 0;
    if (digits_at(s, n, &i, 4) != 4 || i >= n || s[i++] != '-')
        return false;
    size_t mo = digits_at(s, n, &i, 2);
    if (!mo || i >= n || s[i++] != '-')
        return false;
    size_t dd = digits_at(s, n, &i, 2);
    if (!dd)
        return false;
    if (i == n)
        return mo == 2 && dd == 2;
    if (s[i] == 'T' || s[i] == 't')
        i++;
    else if (s[i] == ' ' || s[i] == '\t')
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
    else
        return false;
    if (!digits_at(s, n, &i, 2) || i >= n || s[i++] != ':' || digits_at(s, n, &i, 2) != 2 ||
        i >= n || s[i++] != ':' || digits_at(s, n, &i, 2) != 2)
        return false;
    if (i < n && s[i] == '.') {
        i++;
        digits_at(s, n, &i, n);
    }
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i < n && s[i] == 'Z')
        return i + 1 == n;
    if (i < n && (s[i] == '-' || s[i] == '+')) {
        i++;
        if (!digits_at(s, n, &i, 2))
            return false;
        if (i < n && s[i] == ':') {
            i++;
            if (digits_at(s, n, &i, 2) != 2)
                return false;
        }
    }
    return i == n;
}

/* Would a YAML reader (1.1 or 1.2) take this plain scalar for something other than a string? */
static bool yaml_ambiguous(const char *s, size_t n)
{
    static const char *const words[] = {"~",    "null", "Null", "NULL",  "y",     "Y",     "yes",
                                        "Yes",  "YES",  "n",    "N",     "no",    "No",    "NO",
                                        "true", "True", "TRUE", "false", "False", "FALSE", "on",
                                        "On",   "ON",   "off",  "Off",   "OFF",   "=",     "<<",
                                        ".inf", ".Inf", ".INF", ".nan",  ".NaN",  ".NAN",  NULL};
    if (n == 0 || memchr(s, '\0', n))
        return true;
    for (const char *const *w = words; *w; w++)
        if (strlen(*w) == n && !memcmp(*w, s, n))
            return true;
    const char *t = s;
    if (*t == '-' || *t == '+')
        t++;
    size_t m = n - (size_t)(t - s);
    if (m == 0)
        return false;
    if (m == 4 && (!memcmp(t, ".inf", 4) || !memcmp(t, ".Inf", 4) || !memcmp(t, ".INF", 4)))
        return true;
    if (!isdigit((unsigned char)t[0]) && !(t[0] == '.' && m > 1 && isdigit((unsigned char)t[1])))
        return false;
    if (m > 2 && t[0] == '0' && strchr("xXoObB", t[1]))
        return all_in(t + 2, m - 2, "0123456789abcdefABCDEF_");
    return all_in(t, m, "0123456789_") || looks_float(t, m) || looks_sexagesimal(t, m) ||
           looks_timestamp(t, m);
}

static int y_emit(get_doc *d, yaml_event_t *ev, int ok)
{
    if (!ok || !yaml_emitter_emit(&d->em, ev)) {
        d->failed = true;
        return -1;
    }
    return 0;
}

static yaml_scalar_style_t string_style(const char *s, size_t n)
{
    if (yaml_ambiguous(s, n))
        return YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    /* \r, NEL, LS and PS are line breaks to YAML 1.1, content to 1.2: escape them */
    if (memchr(s, '\r', n) || memmem(s, n, "\xc2\x85", 2) || memmem(s, n, "\xe2\x80\xa8", 3) ||
        memmem(s, n, "\xe2\x80\xa9", 3))
        return YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    if (!memchr(s, '\n', n))
        return YAML_ANY_SCALAR_STYLE; /* plain, or the quotes libyaml finds necessary */
    size_t trailing = 0;
    while (trailing < n && s[n - 1 - trailing] == '\n')
        trailing++;
    /* A literal block as kubectl prints it, but not "|+" (kept trailing line breaks): after
     * one, libyaml ends the document with "...". Those strings are double-quoted instead. */
    return trailing <= 1 && trailing < n ? YAML_LITERAL_SCALAR_STYLE
                                         : YAML_DOUBLE_QUOTED_SCALAR_STYLE;
}

static int y_scalar(get_doc *d, const char *s, size_t n, bool is_string)
{
    yaml_event_t ev;
    yaml_scalar_style_t style = is_string ? string_style(s, n) : YAML_PLAIN_SCALAR_STYLE;
    return y_emit(
        d, &ev,
        yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)n, 1, 1, style));
}

static int y_node(get_doc *d, json_t *v)
{
    yaml_event_t ev;
    char num[64];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n;
        const char **keys = sorted_keys(v, &n);
        if (n && !keys)
            return -1;
        int rc = y_emit(
            d, &ev,
            yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE));
        for (size_t i = 0; i < n && !rc; i++) {
            rc = y_scalar(d, keys[i], strlen(keys[i]), true);
            rc = rc ? rc : y_node(d, json_object_get(v, keys[i]));
        }
        free(keys);
        return rc ? rc : y_emit(d, &ev, yaml_mapping_end_event_initialize(&ev));
    }
    case JSON_ARRAY: {
        int rc = y_emit(
            d, &ev,
            yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE));
        for (size_t i = 0; i < json_array_size(v) && !rc; i++)
            rc = y_node(d, json_array_get(v, i));
        return rc ? rc : y_emit(d, &ev, yaml_sequence_end_event_initialize(&ev));
    }
    case JSON_STRING:
        return y_scalar(d, json_string_value(v), json_string_length(v), true);
    case JSON_INTEGER:
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return y_scalar(d, num, strlen(num), false);
    case JSON_REAL: {
        get_format_real(num, sizeof num, json_real_value(v));
        /* YAML 1.1 readers (PyYAML) need a '.' in an exponent float: 1e-9 → 1.0e-9 */
        char *e = strchr(num, 'e');
        if (e && !memchr(num, '.', (size_t)(e - num)) && strlen(num) + 3 < sizeof num) {
            memmove(e + 2, e, strlen(e) + 1);
            memcpy(e, ".0", 2);
        }
        return y_scalar(d, num, strlen(num), false);
    }
    case JSON_TRUE:
        return y_scalar(d, "true", 4, false);
    case JSON_FALSE:
        return y_scalar(d, "false", 5, false);
    case JSON_NULL:
        return y_scalar(d, "null", 4, false);
    }
    return 0;
}

static int y_key(get_doc *d, const char *k)
{
    return y_scalar(d, k, strlen(k), true);
}

static int y_map(get_doc *d, bool start)
{
    yaml_event_t ev;
    return start ? y_emit(d, &ev,
                          yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                                              YAML_BLOCK_MAPPING_STYLE))
                 : y_emit(d, &ev, yaml_mapping_end_event_initialize(&ev));
}

static int y_doc(get_doc *d, bool start)
{
    yaml_event_t ev;
    return start ? y_emit(d, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1))
                 : y_emit(d, &ev, yaml_document_end_event_initialize(&ev, 1));
}

/* The stream's start and, for a List, its document up to the items sequence. A single object
 * gets its document when it arrives (none when it is not found). */
static int y_begin(get_doc *d)
{
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&d->em))
        return -1;
    d->em_open = true;
    yaml_emitter_set_output_file(&d->em, d->out);
    yaml_emitter_set_unicode(&d->em, 1);
    int rc = y_emit(d, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
    if (rc || d->single)
        return rc;
    rc = y_doc(d, true);
    rc = rc ? rc : y_map(d, true);
    rc = rc ? rc : y_key(d, "apiVersion");
    rc = rc ? rc : y_key(d, "v1");
    rc = rc ? rc : y_key(d, "items");
    return rc ? rc
              : y_emit(d, &ev,
                       yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
                                                            YAML_BLOCK_SEQUENCE_STYLE));
}

static int y_end(get_doc *d)
{
    yaml_event_t ev;
    int rc = 0;
    if (!d->single) {
        rc = y_emit(d, &ev, yaml_sequence_end_event_initialize(&ev));
        rc = rc ? rc : y_key(d, "kind");
        rc = rc ? rc : y_key(d, "List");
        rc = rc ? rc : y_key(d, "metadata");
        rc = rc ? rc : y_map(d, true);
        rc = rc ? rc : y_key(d, "resourceVersion");
        rc = rc ? rc : y_key(d, "");
        rc = rc ? rc : y_map(d, false);
        rc = rc ? rc : y_map(d, false);
        rc = rc ? rc : y_doc(d, false);
    }
    rc = rc ? rc : y_emit(d, &ev, yaml_stream_end_event_initialize(&ev));
    return rc;
}

/* ---- the document ---------------------------------------------------------------------------- */

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
    if (fmt == GET_YAML && y_begin(d)) {
        if (d->em_open)
            yaml_emitter_delete(&d->em);
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
        rc = d->single ? y_doc(d, true) : 0;
        rc = rc ? rc : y_node(d, root);
        rc = rc || !d->single ? rc : y_doc(d, false);
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
        if (!d->failed && y_end(d))
            rc = -1;
        yaml_emitter_delete(&d->em);
    }
    if (fflush(d->out) || ferror(d->out))
        rc = -1;
    free(d);
    return rc;
}
