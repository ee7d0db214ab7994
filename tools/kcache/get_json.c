/*
 * get_json.c — JSON written as kubectl writes it: Go's encoding/json (MarshalIndent with four
 * spaces for -o json, Marshal's compact form for objects a JSONPath prints). Keys sorted
 * bytewise, <, >, & and U+2028/U+2029 escaped, numbers in Go's shortest form. Split from
 * get_print.c so that jsonpath_eval.c (and the fuzzer linking it) share it without the printers.
 */
#include "get.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GET_INDENT 4

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

static void json_indent(FILE *f, int level, bool compact)
{
    if (compact)
        return;
    fputc('\n', f);
    for (int i = 0; i < level * GET_INDENT; i++)
        fputc(' ', f);
}

int get_json_write(FILE *f, json_t *v, int level, bool compact)
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
            json_indent(f, level + 1, compact);
            json_str(f, keys[i], strlen(keys[i]));
            fputs(compact ? ":" : ": ", f);
            rc = get_json_write(f, json_object_get(v, keys[i]), level + 1, compact);
            if (i + 1 < n)
                fputc(',', f);
        }
        free(keys);
        json_indent(f, level, compact);
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
            json_indent(f, level + 1, compact);
            if (get_json_write(f, json_array_get(v, i), level + 1, compact))
                return -1;
            if (i + 1 < n)
                fputc(',', f);
        }
        json_indent(f, level, compact);
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
