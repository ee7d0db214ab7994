/*
 * selector_field.c — field selectors, a port of k8s.io/apimachinery fields.ParseSelector.
 *
 * Parsing follows upstream step by step: split the text on commas not escaped by '\', sort the
 * terms, drop empty ones, split each term at the first "!=", "==" or "=" (the field part has no
 * escaping), and unescape the value (only "\\", "\," and "\=" are valid escapes; a bare ',' or
 * '=' in a value is an error). Field paths are not validated here: the API server decides which
 * fields a type supports (kc_field_selector_count/_field let it check).
 *
 * Matching: every dotted path is turned once, at parse time, into a JSON Pointer (RFC 6901) kept
 * in its requirement. kc_field_selector_match takes metadata.name and metadata.namespace from the
 * object's metadata record (no JSON access) and resolves any other pointer with kc_obj_get_raw;
 * kc_field_selector_pointer hands it to kc_field_selector_match_fn's lookups, so no caller derives
 * it again. The
 * field's string form is compared: strings unescaped, numbers and booleans as printed, null or
 * missing as "". A path with an empty segment ("spec..x") has no pointer and never matches a
 * value but "". The selector is immutable after parse.
 */
#include "core/internal.h"
#include "kcache/selector.h"

#include <stdlib.h>
#include <string.h>

#define FIELD_SELECTOR_MAX_LEN ((size_t)256 * 1024)

enum fkind { F_NAME, F_NAMESPACE, F_PATH };

struct freq {
    char *field;
    char *value;   /* unescaped */
    char *pointer; /* JSON Pointer of field, NULL when the path has an empty segment */
    enum fkind kind;
    bool neg; /* != */
};

struct kc_field_selector {
    size_t n;
    struct freq *reqs;
};

struct term {
    const char *s;
    size_t len, off;
};

/* ---- parsing --------------------------------------------------------------------------------- */

static size_t split_terms(const char *s, size_t len, struct term *terms)
{
    size_t n = 0, start = 0;
    bool in_slash = false;
    for (size_t i = 0; i < len; i++) {
        if (in_slash)
            in_slash = false;
        else if (s[i] == '\\')
            in_slash = true;
        else if (s[i] == ',') {
            terms[n++] = (struct term){s + start, i - start, start};
            start = i + 1;
        }
    }
    terms[n++] = (struct term){s + start, len - start, start};
    return n;
}

static int cmp_term(const void *a, const void *b)
{
    const struct term *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->s, y->s, n);
    if (c)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* Split at the first "!=", "==" or "=". Returns false when the term has none. */
static bool split_term(const struct term *t, size_t *lhs_len, size_t *op_len)
{
    for (size_t i = 0; i < t->len; i++) {
        if (t->s[i] == '!' && i + 1 < t->len && t->s[i + 1] == '=') {
            *lhs_len = i;
            *op_len = 2;
            return true;
        }
        if (t->s[i] == '=') {
            *lhs_len = i;
            *op_len = (i + 1 < t->len && t->s[i + 1] == '=') ? 2 : 1;
            return true;
        }
    }
    return false;
}

static int value_error(kc_error *err, size_t offset, const char *fmt, ...) KC__PRINTF(3, 4);
static int value_error(kc_error *err, size_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kc__error_vset(err, KC_EINVAL, fmt, ap);
    va_end(ap);
    if (err)
        err->offset = (int64_t)offset;
    return KC_EINVAL;
}

/* fields.UnescapeValue: "\\" "\," "\=" are the only escapes; a bare ',' or '=' is an error. */
static int unescape_value(const char *s, size_t n, size_t off, char **ret, kc_error *err)
{
    char *out = malloc(n + 1);
    if (!out)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    size_t o = 0;
    bool in_slash = false;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char c = s[i];
        if (in_slash) {
            if (c != '\\' && c != ',' && c != '=')
                rc = value_error(err, off + i - 1,
                                 "invalid field selector: invalid escape sequence: \\%c", c);
            out[o++] = c;
            in_slash = false;
        } else if (c == '\\') {
            in_slash = true;
        } else if (c == ',' || c == '=') {
            rc = value_error(err, off + i,
                             "invalid field selector: unescaped character in value: %d", c);
        } else {
            out[o++] = c;
        }
    }
    if (rc == 0 && in_slash)
        rc = value_error(err, off + n - 1, "invalid field selector: invalid escape sequence: %c",
                         '\\');
    if (rc < 0) {
        free(out);
        return rc;
    }
    out[o] = '\0';
    *ret = out;
    return 0;
}

/* "spec.nodeName" → "/spec/nodeName" (RFC 6901 escaping). NULL *ret when a segment is empty. */
static int path_to_pointer(const char *field, char **ret)
{
    *ret = NULL;
    size_t n = strlen(field);
    if (n == 0 || field[0] == '.' || field[n - 1] == '.' || strstr(field, ".."))
        return 0;
    kc__buf b = KC__BUF_INIT(0);
    int rc = kc__buf_append_char(&b, '/');
    for (const char *p = field; *p && rc == 0; p++) {
        if (*p == '.')
            rc = kc__buf_append_char(&b, '/');
        else if (*p == '~')
            rc = kc__buf_append(&b, "~0", 2);
        else if (*p == '/')
            rc = kc__buf_append(&b, "~1", 2);
        else
            rc = kc__buf_append_char(&b, *p);
    }
    if (rc < 0) {
        kc__buf_free(&b);
        return KC_ENOMEM;
    }
    *ret = kc__buf_steal(&b, NULL);
    return *ret ? 0 : KC_ENOMEM;
}

static void freq_clear(struct freq *r)
{
    free(r->field);
    free(r->value);
    free(r->pointer);
}

static int build_req(const char *text, const struct term *t, struct freq *r, kc_error *err)
{
    size_t lhs_len, op_len;
    if (!split_term(t, &lhs_len, &op_len)) {
        kc_error_set(err, KC_EINVAL, "invalid selector: '%s'; can't understand '%.*s'", text,
                     (int)t->len, t->s);
        if (err)
            err->offset = (int64_t)t->off;
        return KC_EINVAL;
    }
    r->neg = op_len == 2 && t->s[lhs_len] == '!';
    size_t voff = lhs_len + op_len;
    int rc = unescape_value(t->s + voff, t->len - voff, t->off + voff, &r->value, err);
    if (rc < 0)
        return rc;
    if (!(r->field = kc__strdup_n(t->s, lhs_len)))
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    if (strcmp(r->field, "metadata.name") == 0)
        r->kind = F_NAME;
    else if (strcmp(r->field, "metadata.namespace") == 0)
        r->kind = F_NAMESPACE;
    else
        r->kind = F_PATH;
    if (path_to_pointer(r->field, &r->pointer) < 0) /* kept for match_fn's lookup */
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    return 0;
}

int kc_field_selector_parse(const char *text, kc_field_selector **ret_sel, kc_error *err)
{
    if (!ret_sel)
        return kc_error_set(err, KC_EINVAL, "ret_sel is NULL");
    size_t len = text ? strlen(text) : 0;
    if (len > FIELD_SELECTOR_MAX_LEN)
        return kc_error_set(err, KC_ETOOLARGE, "field selector longer than %zu bytes",
                            FIELD_SELECTOR_MAX_LEN);
    kc_field_selector *sel = calloc(1, sizeof *sel);
    if (!sel)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    if (len == 0) {
        *ret_sel = sel;
        return 0;
    }
    struct term *terms = malloc((len + 1) * sizeof *terms);
    size_t n = terms ? split_terms(text, len, terms) : 0;
    sel->reqs = calloc(n ? n : 1, sizeof *sel->reqs);
    if (!terms || !sel->reqs) {
        free(terms);
        kc_field_selector_free(sel);
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    qsort(terms, n, sizeof *terms, cmp_term);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (terms[i].len == 0)
            continue;
        rc = build_req(text, &terms[i], &sel->reqs[sel->n], err);
        sel->n++; /* count it even when half-built so free releases it */
    }
    free(terms);
    if (rc < 0) {
        kc_field_selector_free(sel);
        return rc;
    }
    *ret_sel = sel;
    return 0;
}

void kc_field_selector_free(kc_field_selector *sel)
{
    if (!sel)
        return;
    for (size_t i = 0; i < sel->n; i++)
        freq_clear(&sel->reqs[i]);
    free(sel->reqs);
    free(sel);
}

bool kc_field_selector_empty(const kc_field_selector *sel)
{
    return !sel || sel->n == 0;
}

size_t kc_field_selector_count(const kc_field_selector *sel)
{
    return sel ? sel->n : 0;
}

const char *kc_field_selector_field(const kc_field_selector *sel, size_t i)
{
    return sel && i < sel->n ? sel->reqs[i].field : NULL;
}

const char *kc_field_selector_exact(const kc_field_selector *sel, const char *field)
{
    if (!sel || !field)
        return NULL;
    for (size_t i = 0; i < sel->n; i++)
        if (!sel->reqs[i].neg && strcmp(sel->reqs[i].field, field) == 0)
            return sel->reqs[i].value;
    return NULL;
}

/* ---- matching -------------------------------------------------------------------------------- */

/* Does the JSON text raw (NULL: absent), in string form, equal r->value? */
static bool raw_equals(const struct freq *r, const char *raw, size_t len)
{
    if (!raw || len == 0 || (len == 4 && memcmp(raw, "null", 4) == 0))
        return r->value[0] == '\0'; /* missing or null compares as "" */
    if (raw[0] != '"')
        return kc__streq_n(raw, len, r->value); /* number, bool, object, array: as printed */
    if (len >= 2 && !memchr(raw, '\\', len))
        return kc__streq_n(raw + 1, len - 2, r->value);
    /* an escaped string: unescape it through a one-member document */
    kc_obj *tmp = NULL;
    char *s = NULL;
    size_t slen = 0;
    bool eq = false;
    kc__buf b = KC__BUF_INIT(0);
    if (kc__buf_printf(&b, "{\"v\":%.*s}", (int)len, raw) == 0 &&
        kc_obj_parse(b.data, b.len, NULL, &tmp, NULL) == 0 &&
        kc_obj_get_string(tmp, "/v", &s, &slen, NULL) == 0)
        eq = slen == strlen(r->value) && memcmp(s, r->value, slen) == 0;
    free(s);
    kc_obj_unref(tmp);
    kc__buf_free(&b);
    return eq;
}

/* Does the field at r->pointer, in string form, equal r->value? */
static bool path_equals(const struct freq *r, const kc_obj *obj)
{
    const char *raw = NULL;
    size_t len = 0;
    if (!r->pointer || kc_obj_get_raw(obj, r->pointer, &raw, &len, NULL) < 0)
        return raw_equals(r, NULL, 0);
    if (len >= 2 && raw[0] == '"' && memchr(raw, '\\', len)) {
        char *s = NULL;
        size_t slen = 0;
        if (kc_obj_get_string(obj, r->pointer, &s, &slen, NULL) < 0)
            return false;
        bool eq = slen == strlen(r->value) && memcmp(s, r->value, slen) == 0;
        free(s);
        return eq;
    }
    return raw_equals(r, raw, len);
}

bool kc_field_selector_match(const kc_field_selector *sel, const kc_obj *obj)
{
    if (!sel)
        return true;
    for (size_t i = 0; i < sel->n; i++) {
        const struct freq *r = &sel->reqs[i];
        bool eq;
        switch (r->kind) {
        case F_NAME:
            eq = strcmp(kc_obj_name(obj), r->value) == 0;
            break;
        case F_NAMESPACE:
            eq = strcmp(kc_obj_namespace(obj), r->value) == 0;
            break;
        default:
            eq = path_equals(r, obj);
            break;
        }
        if (eq == r->neg)
            return false;
    }
    return true;
}

bool kc_field_selector_match_fn(const kc_field_selector *sel, kc_field_lookup_fn lookup, void *ud)
{
    if (!sel || sel->n == 0)
        return true;
    if (!lookup)
        return false;
    for (size_t i = 0; i < sel->n; i++) {
        const struct freq *r = &sel->reqs[i];
        const char *raw = NULL;
        size_t len = 0;
        if (!r->pointer || !lookup(ud, r->field, i, &raw, &len))
            raw = NULL; /* absent; a path with an empty segment names no field */
        if (raw_equals(r, raw, len) == r->neg)
            return false;
    }
    return true;
}

/* ---- canonical string ------------------------------------------------------------------------ */

/* "field=value" / "field!=value" with the value escaped (fields.EscapeValue), appended to b. */
static int render_term(const struct freq *r, kc__buf *b)
{
    int rc = kc__buf_printf(b, "%s%s", r->field, r->neg ? "!=" : "=");
    for (const char *v = r->value; rc == 0 && *v; v++) {
        if (*v == '\\' || *v == ',' || *v == '=')
            rc = kc__buf_append_char(b, '\\');
        if (rc == 0)
            rc = kc__buf_append_char(b, *v);
    }
    return rc;
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *kc_field_selector_string(const kc_field_selector *sel)
{
    size_t n = sel ? sel->n : 0;
    char **terms = calloc(n ? n : 1, sizeof *terms);
    if (!terms)
        return NULL;
    kc__buf b = KC__BUF_INIT(0);
    int rc = 0;
    /* Render, then sort the rendered terms, so the text is stable under re-parsing (parsing
     * sorts raw terms, and "==" renders as "="). */
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = render_term(&sel->reqs[i], &b);
        if (rc == 0 && !(terms[i] = kc__buf_steal(&b, NULL)))
            rc = KC_ENOMEM;
    }
    if (rc == 0)
        qsort(terms, n, sizeof *terms, cmp_cstr);
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (i)
            rc = kc__buf_append_char(&b, ',');
        if (rc == 0)
            rc = kc__buf_append_str(&b, terms[i]);
    }
    for (size_t i = 0; i < n; i++)
        free(terms[i]);
    free(terms);
    if (rc < 0) {
        kc__buf_free(&b);
        return NULL;
    }
    return kc__buf_steal(&b, NULL);
}

const char *kc_field_selector_pointer(const kc_field_selector *sel, size_t i)
{
    return sel && i < sel->n ? sel->reqs[i].pointer : NULL;
}
