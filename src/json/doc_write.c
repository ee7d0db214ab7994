/*
 * doc_write.c — a kc_doc's compact JSON text (kc_doc_json, kc_doc_get_raw, merge patches).
 *
 * Our own writer over the jansson tree rather than jansson's encoder: jansson's hands every token
 * to a callback and checks UTF-8 again on output, which made kc_doc_json cost more than building
 * the document (bench/bench_doc.c: docs/doc.md, "Cost"); this one copies runs of plain bytes
 * whole. Output matches jansson's JSON_COMPACT: members in document order, '/' and non-ASCII
 * unescaped (strings in the tree are valid UTF-8), control characters as \b \f \n \r \t or \u00XX.
 * Doubles are written in the shortest of %.15g / %.16g / %.17g that reads back exactly (0.1 is
 * "0.1", where jansson writes 0.10000000000000001), with ".0" added when they would read as an
 * integer. The tree is at most KC__DOC_MAX_DEPTH deep, which bounds the recursion.
 */
#include "json/doc_internal.h"
#include "json/write_str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct writer {
    char *p;
    size_t len, cap;
    bool oom;
} writer;

static bool grow(writer *w, size_t extra)
{
    if (w->oom)
        return false;
    size_t need = w->len + extra + 1, cap = w->cap ? w->cap : 1024;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) {
            w->oom = true;
            return false;
        }
        cap *= 2;
    }
    char *p = realloc(w->p, cap);
    if (!p) {
        w->oom = true;
        return false;
    }
    w->p = p;
    w->cap = cap;
    return true;
}

static inline void put(writer *w, const char *s, size_t n)
{
    if (w->len + n + 1 > w->cap && !grow(w, n))
        return;
    memcpy(w->p + w->len, s, n);
    w->len += n;
}

static inline void put_c(writer *w, char c)
{
    if (w->len + 2 > w->cap && !grow(w, 1))
        return;
    w->p[w->len++] = c;
}

static void put_string(writer *w, const char *s, size_t n)
{
    put_c(w, '"');
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        while (run < n && kc__json_plain((unsigned char)s[run]))
            run++;
        put(w, s + i, run - i);
        if (run == n)
            break;
        char u[7];
        const char *e = kc__json_escape_byte((unsigned char)s[run], u);
        put(w, e, strlen(e));
        i = run + 1;
    }
    put_c(w, '"');
}

static void put_int(writer *w, json_int_t v)
{
    char buf[24], *e = buf + sizeof buf, *p = e;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    put(w, p, (size_t)(e - p));
}

static void put_real(writer *w, double v)
{
    char buf[40];
    int n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(buf, sizeof buf - 2, "%.*g", prec, v);
        if (prec == 17 || strtod(buf, NULL) == v)
            break;
    }
    if (!strpbrk(buf, ".eEn")) { /* "1" would read back as an integer */
        memcpy(buf + n, ".0", 3);
        n += 2;
    }
    put(w, buf, (size_t)n);
}

static void put_value(writer *w, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        put_c(w, '{');
        const char *k;
        size_t kn;
        json_t *m;
        bool first = true;
        json_object_keylen_foreach((json_t *)v, k, kn, m)
        {
            if (!first)
                put_c(w, ',');
            first = false;
            put_string(w, k, kn);
            put_c(w, ':');
            put_value(w, m);
        }
        put_c(w, '}');
        return;
    }
    case JSON_ARRAY:
        put_c(w, '[');
        for (size_t i = 0, n = json_array_size(v); i < n; i++) {
            if (i)
                put_c(w, ',');
            put_value(w, json_array_get(v, i));
        }
        put_c(w, ']');
        return;
    case JSON_STRING:
        put_string(w, json_string_value(v), json_string_length(v));
        return;
    case JSON_INTEGER:
        put_int(w, json_integer_value(v));
        return;
    case JSON_REAL:
        put_real(w, json_real_value(v));
        return;
    case JSON_TRUE:
        put(w, "true", 4);
        return;
    case JSON_FALSE:
        put(w, "false", 5);
        return;
    case JSON_NULL:
        put(w, "null", 4);
        return;
    }
}

int kc__doc_dump(const json_t *v, char **ret, size_t *ret_len, kc_error *err)
{
    writer w = {NULL, 0, 0, false};
    put_value(&w, v);
    if (w.oom || !w.p) {
        free(w.p);
        return kc_error_set(err, KC_ENOMEM, "kc_doc: out of memory writing JSON");
    }
    w.p[w.len] = '\0';
    *ret = w.p;
    if (ret_len)
        *ret_len = w.len;
    return 0;
}
