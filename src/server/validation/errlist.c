/*
 * errlist.c — upstream's field.ErrorList in C: errors appended in validation order, each with its
 * type, field path and body as field.Error.ErrorBody() words it ("Required value", "Invalid
 * value: <value>: <detail>", "Unsupported value: \"x\": supported values: \"A\", \"B\"", "Too
 * long: may not be more than N bytes"), and the 422 the API server makes of the list
 * (apierrors.NewInvalid): message `<Kind>.<group> "<name>" is invalid: <aggregate>` where the
 * aggregate is the one error or "[e1, e2]" with repeated messages dropped (ToAggregate), one
 * cause per error (repeats kept). Also the Go renderings of bad values the messages quote: %q of
 * a string, %#v of a map[string]string, a *metav1.LabelSelector's String().
 * Memory: proportional to the errors found; an allocation failure marks the list (KC_ENOMEM).
 */
#include "server/validation/validation_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *type_word(const char *type)
{
    static const char *const map[][2] = {
        {"FieldValueRequired", "Required value"},
        {"FieldValueInvalid", "Invalid value"},
        {"FieldValueNotSupported", "Unsupported value"},
        {"FieldValueDuplicate", "Duplicate value"},
        {"FieldValueForbidden", "Forbidden"},
        {"FieldValueTooLong", "Too long"},
        {"FieldValueNotFound", "Not found"},
        {"FieldValueTooMany", "Too many"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(map[i][0], type))
            return map[i][1];
    return type;
}

void kc__v_add(kc__vlist *l, const char *type, const char *field, const char *value,
               const char *detail)
{
    if (l->oom)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        kc__verr *e = realloc(l->e, cap * sizeof(*e));
        if (!e) {
            l->oom = true;
            return;
        }
        l->e = e;
        l->cap = cap;
    }
    kc__buf b = KC__BUF_INIT(0);
    kc__buf_append_str(&b, type_word(type));
    if (value) {
        kc__buf_append_str(&b, ": ");
        kc__buf_append_str(&b, value);
    }
    if (detail && *detail) {
        kc__buf_append_str(&b, ": ");
        kc__buf_append_str(&b, detail);
    }
    char *body = kc__buf_steal(&b, NULL);
    char *f = kc__strdup(field);
    if (!body || !f) {
        free(body);
        free(f);
        l->oom = true;
        return;
    }
    l->e[l->n++] = (kc__verr){.type = type, .field = f, .body = body};
}

void kc__v_required(kc__vlist *l, const char *field, const char *detail)
{
    kc__v_add(l, "FieldValueRequired", field, NULL, detail);
}

void kc__v_forbidden(kc__vlist *l, const char *field, const char *detail)
{
    kc__v_add(l, "FieldValueForbidden", field, NULL, detail);
}

void kc__v_toolong(kc__vlist *l, const char *field, long max)
{
    char d[64];
    snprintf(d, sizeof d, "may not be more than %ld %s", max, max == 1 ? "byte" : "bytes");
    kc__v_add(l, "FieldValueTooLong", field, NULL, d);
}

static void add_quoted(kc__vlist *l, const char *type, const char *field, const char *value,
                       const char *detail)
{
    kc__buf b = KC__BUF_INIT(0);
    kc__v_go_quote(&b, value);
    kc__v_add(l, type, field, b.data ? b.data : "\"\"", detail);
    kc__buf_free(&b);
}

void kc__v_invalid_s(kc__vlist *l, const char *field, const char *value, const char *detail)
{
    add_quoted(l, "FieldValueInvalid", field, value, detail);
}

void kc__v_invalid_i(kc__vlist *l, const char *field, int64_t value, const char *detail)
{
    char v[32];
    snprintf(v, sizeof v, "%lld", (long long)value);
    kc__v_add(l, "FieldValueInvalid", field, v, detail);
}

void kc__v_invalid_v(kc__vlist *l, const char *field, const char *value, const char *detail)
{
    kc__v_add(l, "FieldValueInvalid", field, value, detail);
}

void kc__v_duplicate_s(kc__vlist *l, const char *field, const char *value)
{
    add_quoted(l, "FieldValueDuplicate", field, value, NULL);
}

void kc__v_notfound_s(kc__vlist *l, const char *field, const char *value)
{
    add_quoted(l, "FieldValueNotFound", field, value, NULL);
}

void kc__v_unsupported_s(kc__vlist *l, const char *field, const char *value,
                         const char *const *supported)
{
    kc__buf d = KC__BUF_INIT(0);
    for (size_t i = 0; supported && supported[i]; i++) {
        kc__buf_append_str(&d, i ? ", " : "supported values: ");
        kc__v_go_quote(&d, supported[i]);
    }
    add_quoted(l, "FieldValueNotSupported", field, value, d.data);
    kc__buf_free(&d);
}

void kc__v_free(kc__vlist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->e[i].field);
        free(l->e[i].body);
    }
    free(l->e);
    *l = (kc__vlist){0};
}

/* Fill err's Status fields (message already set). */
static int fill(kc__vlist *l, const char *group, const char *kind, const char *name, kc_error *err)
{
    err->http_status = 422;
    free(err->reason);
    err->reason = kc__strdup("Invalid");
    free(err->name);
    err->name = kc__strdup(name);
    free(err->group);
    err->group = *group ? kc__strdup(group) : NULL;
    free(err->kind);
    err->kind = kc__strdup(kind);
    err->causes = calloc(l->n, sizeof(*err->causes));
    if (!err->causes)
        return KC_ENOMEM;
    for (size_t i = 0; i < l->n; i++) { /* NewInvalid: one cause per error, repeats kept */
        err->causes[i].reason = kc__strdup(l->e[i].type);
        err->causes[i].field = l->e[i].field;
        err->causes[i].message = l->e[i].body;
        l->e[i].field = l->e[i].body = NULL;
    }
    err->n_causes = l->n;
    return 0;
}

int kc__v_finish(kc__vlist *l, const char *group, const char *kind, const char *name, kc_error *err)
{
    if (l->oom) {
        kc__v_free(l);
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    if (l->n == 0) {
        kc__v_free(l);
        return 0;
    }
    /* ToAggregate: "<field>: <body>" of each error, repeats dropped; one → bare, more → [a, b] */
    kc__buf agg = KC__BUF_INIT(0);
    size_t shown = 0;
    for (size_t i = 0; i < l->n; i++) {
        bool dup = false;
        for (size_t j = 0; j < i && !dup; j++)
            dup = !strcmp(l->e[i].field, l->e[j].field) && !strcmp(l->e[i].body, l->e[j].body);
        if (dup)
            continue;
        kc__buf_printf(&agg, "%s%s: %s", shown++ ? ", " : "", l->e[i].field, l->e[i].body);
    }
    int code = kc_error_set(err, KC_EUNPROCESSABLE, "%s%s%s \"%s\" is invalid: %s%s%s", kind,
                            *group ? "." : "", group, name, shown > 1 ? "[" : "",
                            agg.data ? agg.data : "", shown > 1 ? "]" : "");
    kc__buf_free(&agg);
    if (err && fill(l, group, kind, name, err) != 0)
        code = kc_error_set(err, KC_ENOMEM, "out of memory");
    kc__v_free(l);
    return code;
}

/* ---- Go renderings ----------------------------------------------------------------------------
 */

void kc__v_go_quote(kc__buf *b, const char *s)
{
    kc__buf_append_char(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            kc__buf_printf(b, "\\%c", c);
        else if (c == '\n')
            kc__buf_append_str(b, "\\n");
        else if (c == '\t')
            kc__buf_append_str(b, "\\t");
        else if (c == '\r')
            kc__buf_append_str(b, "\\r");
        else if (c < 0x20 || c == 0x7f)
            kc__buf_printf(b, "\\x%02x", c);
        else
            kc__buf_append_char(b, (char)c);
    }
    kc__buf_append_char(b, '"');
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of obj sorted (Go prints maps sorted); NULL when empty or on ENOMEM. */
static const char **sorted_keys(const json_t *obj, size_t *n)
{
    *n = json_object_size(obj);
    const char **keys = *n ? malloc(*n * sizeof(*keys)) : NULL;
    size_t k = 0;
    const char *key;
    json_t *v;
    if (!keys) {
        *n = 0;
        return NULL;
    }
    json_object_foreach((json_t *)obj, key, v) keys[k++] = key;
    qsort(keys, k, sizeof(*keys), key_cmp);
    return keys;
}

void kc__v_go_strmap(kc__buf *b, const json_t *map)
{
    if (!json_is_object(map)) {
        kc__buf_append_str(b, "map[string]string(nil)");
        return;
    }
    size_t n;
    const char **keys = sorted_keys(map, &n);
    kc__buf_append_str(b, "map[string]string{");
    for (size_t i = 0; i < n; i++) {
        const char *v = json_string_value(json_object_get(map, keys[i]));
        if (i)
            kc__buf_append_str(b, ", ");
        kc__v_go_quote(b, keys[i]);
        kc__buf_append_char(b, ':');
        kc__v_go_quote(b, v ? v : "");
    }
    kc__buf_append_char(b, '}');
    free(keys);
}

void kc__v_go_selector(kc__buf *b, const json_t *sel)
{
    if (!json_is_object(sel)) {
        kc__buf_append_str(b, "nil");
        return;
    }
    size_t n;
    const json_t *ml = json_object_get(sel, "matchLabels");
    const char **keys = sorted_keys(ml, &n);
    kc__buf_append_str(b, "&LabelSelector{MatchLabels:map[string]string{");
    for (size_t i = 0; i < n; i++) {
        const char *v = json_string_value(json_object_get(ml, keys[i]));
        kc__buf_printf(b, "%s: %s,", keys[i], v ? v : "");
    }
    free(keys);
    kc__buf_append_str(b, "},MatchExpressions:[]LabelSelectorRequirement{");
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, e)
    {
        const char *k = json_string_value(json_object_get(e, "key"));
        const char *op = json_string_value(json_object_get(e, "operator"));
        kc__buf_printf(b, "LabelSelectorRequirement{Key:%s,Operator:%s,Values:[", k ? k : "",
                       op ? op : "");
        size_t j;
        json_t *v;
        json_array_foreach(json_object_get(e, "values"), j, v)
        {
            const char *s = json_string_value(v);
            kc__buf_printf(b, "%s%s", j ? " " : "", s ? s : "");
        }
        kc__buf_append_str(b, "],},");
    }
    kc__buf_append_str(b, "},}");
}
