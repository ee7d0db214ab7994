/*
 * schema_util.c — what the schema checks need to word their errors as the API server does: API
 * failures into a kc_error, Go's strconv.Quote, and decoded JSON values printed the way Go's fmt
 * prints them (%v, %#v, %T), since the API server's messages quote Go values.
 * Thread-safety: pure functions.
 */
#include "server/schema/schema_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int kc__serr_v(kc_error *err, int http, const char *reason, const char *fmt, va_list ap)
{
    int code = kc_errno_from_http(http, reason);
    if (code == 0)
        code = KC_EHTTP;
    if (!err)
        return code;
    kc__error_vset(err, code, fmt, ap);
    err->http_status = http;
    free(err->reason);
    err->reason = reason ? kc__strdup(reason) : NULL;
    return code;
}

int kc__serr(kc_error *err, int http, const char *reason, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = kc__serr_v(err, http, reason, fmt, ap);
    va_end(ap);
    return code;
}

static void set(char **dst, const char *v)
{
    if (v) {
        free(*dst);
        *dst = kc__strdup(v);
    }
}

void kc__serr_details(kc_error *err, const char *name, const char *group, const char *kind)
{
    if (!err)
        return;
    set(&err->name, name);
    set(&err->group, group);
    set(&err->kind, kind);
}

int kc__serr_cause(kc_error *err, const char *reason, const char *field, const char *msg)
{
    if (!err)
        return 0;
    kc_cause *c = realloc(err->causes, (err->n_causes + 1) * sizeof(*c));
    if (!c)
        return KC_ENOMEM;
    err->causes = c;
    c[err->n_causes].reason = kc__strdup(reason);
    c[err->n_causes].field = field ? kc__strdup(field) : NULL;
    c[err->n_causes].message = kc__strdup(msg);
    err->n_causes++;
    return 0;
}

void kc__go_quote(kc__buf *b, const char *s, size_t n)
{
    kc__buf_append_char(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"':
            kc__buf_append_str(b, "\\\"");
            break;
        case '\\':
            kc__buf_append_str(b, "\\\\");
            break;
        case '\n':
            kc__buf_append_str(b, "\\n");
            break;
        case '\t':
            kc__buf_append_str(b, "\\t");
            break;
        case '\r':
            kc__buf_append_str(b, "\\r");
            break;
        default:
            if (c < 0x20 || c == 0x7f)
                kc__buf_printf(b, "\\x%02x", c);
            else
                kc__buf_append_char(b, (char)c);
        }
    }
    kc__buf_append_char(b, '"');
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Go prints a float64 with %v as strconv's shortest 'g' form, with an exponent from 1e21. */
static void go_real(kc__buf *b, double d)
{
    char s[40];
    snprintf(s, sizeof(s), "%.17g", d);
    for (int p = 1; p <= 17; p++) {
        snprintf(s, sizeof(s), "%.*g", p, d);
        if (strtod(s, NULL) == d)
            break;
    }
    kc__buf_append_str(b, s);
}

void kc__go_value(kc__buf *b, const json_t *v, char verb)
{
    bool sharp = verb == '#';
    switch (json_typeof(v)) {
    case JSON_STRING:
        if (sharp)
            kc__go_quote(b, json_string_value(v), json_string_length(v));
        else
            kc__buf_append(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        kc__buf_printf(b, "%lld", (long long)json_integer_value(v));
        break;
    case JSON_REAL:
        go_real(b, json_real_value(v));
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        kc__buf_append_str(b, json_is_true(v) ? "true" : "false");
        break;
    case JSON_NULL:
        kc__buf_append_str(b, sharp ? "interface {}(nil)" : "<nil>");
        break;
    case JSON_ARRAY: {
        kc__buf_append_str(b, sharp ? "[]interface {}{" : "[");
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                kc__buf_append_str(b, sharp ? ", " : " ");
            kc__go_value(b, json_array_get(v, i), verb);
        }
        kc__buf_append_char(b, sharp ? '}' : ']');
        break;
    }
    case JSON_OBJECT: {
        size_t n = json_object_size(v), k = 0;
        const char **keys = n ? malloc(n * sizeof(*keys)) : NULL;
        const char *key;
        json_t *x;
        if (n && !keys)
            return;
        json_object_foreach((json_t *)v, key, x) keys[k++] = key;
        qsort(keys, n, sizeof(*keys), key_cmp); /* Go prints maps sorted by key */
        kc__buf_append_str(b, sharp ? "map[string]interface {}{" : "map[");
        for (size_t i = 0; i < n; i++) {
            if (i)
                kc__buf_append_str(b, sharp ? ", " : " ");
            if (sharp)
                kc__go_quote(b, keys[i], strlen(keys[i]));
            else
                kc__buf_append_str(b, keys[i]);
            kc__buf_append_char(b, ':');
            kc__go_value(b, json_object_get(v, keys[i]), verb);
        }
        kc__buf_append_char(b, sharp ? '}' : ']');
        free(keys);
        break;
    }
    }
}

const char *kc__go_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "int64";
    case JSON_REAL:
        return "float64";
    case JSON_TRUE:
    case JSON_FALSE:
        return "bool";
    case JSON_ARRAY:
        return "slice";
    case JSON_OBJECT:
        return "map";
    default:
        return "invalid";
    }
}

const char *kc__go_typeof(const json_t *v)
{
    if (json_is_object(v))
        return "map[string]interface {}";
    if (json_is_array(v))
        return "[]interface {}";
    return kc__go_kind(v);
}

const char *kc__json_word(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "bool";
    case JSON_ARRAY:
        return "array";
    case JSON_OBJECT:
        return "object";
    default:
        return "null";
    }
}
