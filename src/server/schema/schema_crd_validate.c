// clang-format off
/*
 * schema_crd_validate.c — validation of a custom resource against its openAPIV3Schema, as the
 * API server does it with kube-openapi and words it through apiextensions' conversion to field
 * errors: the message is `<Kind>.<group> "<name>" is invalid: <errors>` (one error as is, more
 * as "[e1, e2]", duplicates dropped), one Status cause per error.
 *
 *   type mismatch  spec.r: Invalid value: "string": spec.r in body must be of type integer: "string"
 *   required       spec.size: Required value
 *   enum           spec.color: Unsupported value: "pink": supported values: "red", "green"
 *   maximum        spec.r: Invalid value: 20: spec.r in body should be less than or equal to 10
 *   maxLength      spec.name: Too long: may not be more than 5 bytes
 *   maxItems       spec.items: Too many: 4: must have at most 3 items
 *   minLength, pattern, minItems, multipleOf, minimum, uniqueItems, minProperties: Invalid value
 *
 * Patterns are compiled as POSIX extended expressions (\d, \w, \s translated); a pattern that does
 * not compile is not checked. Thread-safety: pure functions.
 */
// clang-format on
#include "server/schema/schema_internal.h"

#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ERRS 32

static bool flag_true(const json_t *s, const char *k)
{
    return json_is_true(json_object_get(s, k));
}

typedef struct verr {
    const char *type; /* cause reason: FieldValueInvalid, … */
    char *field, *body;
} verr;

typedef struct vwalk {
    verr errs[MAX_ERRS];
    size_t n;
    char path[1024];
} vwalk;

static const char *word_of(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "integer";
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    default:
        return "null";
    }
}

/* field.Error's value printing: numbers and bools plain, strings quoted, the rest as %#v. */
static void bad_value(kc__buf *b, const json_t *v)
{
    if (json_is_string(v))
        kc__go_quote(b, json_string_value(v), json_string_length(v));
    else if (json_is_null(v))
        kc__buf_append_str(b, "\"null\"");
    else
        kc__go_value(b, v, json_is_object(v) || json_is_array(v) ? '#' : 'v');
}

/* Record one error: type word of the cause, "Invalid value" etc. built by the caller in body. */
static void add(vwalk *w, const char *type, kc__buf *body)
{
    if (w->n < MAX_ERRS) {
        verr *e = &w->errs[w->n++];
        e->type = type;
        e->field = kc__strdup(w->path[0] ? w->path : "<nil>");
        e->body = kc__buf_steal(body, NULL);
    }
    kc__buf_free(body);
}

static const char *name_of(vwalk *w)
{
    return w->path[0] ? w->path : ".";
}

/* "Invalid value: <v>: <path> in body <detail…>" */
static void invalid(vwalk *w, const char *type, const json_t *v, const char *fmt, ...)
    KC__PRINTF(4, 5);
static void invalid(vwalk *w, const char *type, const json_t *v, const char *fmt, ...)
{
    kc__buf b = KC__BUF_INIT(0);
    kc__buf_append_str(&b, "Invalid value: ");
    bad_value(&b, v);
    kc__buf_printf(&b, ": %s in body ", name_of(w));
    va_list ap;
    va_start(ap, fmt);
    kc__buf_vprintf(&b, fmt, ap);
    va_end(ap);
    add(w, type, &b);
}

static bool type_ok(const json_t *s, const json_t *v)
{
    if (flag_true(s, "x-kubernetes-int-or-string"))
        return json_is_string(v) || json_is_integer(v) ||
               (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)));
    const char *t = json_string_value(json_object_get(s, "type"));
    if (!t || !*t)
        return true;
    if (!strcmp(t, "integer"))
        return json_is_integer(v) ||
               (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)));
    if (!strcmp(t, "number"))
        return json_is_number(v);
    return !strcmp(t, word_of(v));
}

static double num(const json_t *v)
{
    return json_number_value(v);
}

static void go_num(kc__buf *b, const json_t *v)
{
    kc__go_value(b, v, 'v');
}

static void check_number(vwalk *w, const json_t *s, const json_t *v)
{
    const json_t *mx = json_object_get(s, "maximum"), *mn = json_object_get(s, "minimum");
    const json_t *mo = json_object_get(s, "multipleOf");
    kc__buf b = KC__BUF_INIT(0);
    if (json_is_number(mx)) {
        bool exc = flag_true(s, "exclusiveMaximum");
        if (exc ? num(v) >= num(mx) : num(v) > num(mx)) {
            go_num(&b, mx);
            invalid(w, "FieldValueInvalid", v, "should be less than %s%s",
                    exc ? "" : "or equal to ", b.data);
        }
    }
    kc__buf_reset(&b);
    if (json_is_number(mn)) {
        bool exc = flag_true(s, "exclusiveMinimum");
        if (exc ? num(v) <= num(mn) : num(v) < num(mn)) {
            go_num(&b, mn);
            invalid(w, "FieldValueInvalid", v, "should be greater than %s%s",
                    exc ? "" : "or equal to ", b.data);
        }
    }
    kc__buf_reset(&b);
    if (json_is_number(mo) && num(mo) > 0) {
        double q = num(v) / num(mo);
        if (q != floor(q)) {
            go_num(&b, mo);
            invalid(w, "FieldValueInvalid", v, "should be a multiple of %s", b.data);
        }
    }
    kc__buf_free(&b);
}

static size_t runes(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* An RE2 / ECMA pattern as a POSIX ERE: \d \w \s (and their negations) spelled out. */
static bool pattern_match(const char *pat, const char *s, bool *ret)
{
    kc__buf b = KC__BUF_INIT(0);
    for (const char *p = pat; *p; p++) {
        if (p[0] == '\\' && p[1] && strchr("dDwWsS", p[1])) {
            static const char *const cls[] = {"[0-9]",         "[^0-9]",      "[0-9A-Za-z_]",
                                              "[^0-9A-Za-z_]", "[[:space:]]", "[^[:space:]]"};
            kc__buf_append_str(&b, cls[strchr("dDwWsS", p[1]) - "dDwWsS"]);
            p++;
        } else {
            kc__buf_append_char(&b, *p);
        }
    }
    regex_t re;
    bool ok = b.data && regcomp(&re, b.data, REG_EXTENDED | REG_NOSUB) == 0;
    kc__buf_free(&b);
    if (!ok)
        return false;
    *ret = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return true;
}

static void check_string(vwalk *w, const json_t *s, const json_t *v)
{
    const char *str = json_string_value(v);
    const json_t *mx = json_object_get(s, "maxLength"), *mn = json_object_get(s, "minLength");
    const char *pat = json_string_value(json_object_get(s, "pattern"));
    size_t n = runes(str);
    if (json_is_integer(mx) && n > (size_t)json_integer_value(mx)) {
        kc__buf b = KC__BUF_INIT(0);
        json_int_t m = json_integer_value(mx);
        kc__buf_printf(&b, "Too long: may not be more than %lld byte%s", (long long)m,
                       m == 1 ? "" : "s");
        add(w, "FieldValueTooLong", &b);
    }
    if (json_is_integer(mn) && n < (size_t)json_integer_value(mn))
        invalid(w, "FieldValueInvalid", v, "should be at least %lld chars long",
                (long long)json_integer_value(mn));
    bool match;
    if (pat && pattern_match(pat, str, &match) && !match)
        invalid(w, "FieldValueInvalid", v, "should match '%s'", pat);
}

static void too_many(vwalk *w, size_t have, json_int_t max)
{
    kc__buf b = KC__BUF_INIT(0);
    kc__buf_printf(&b, "Too many: %zu: must have at most %lld items", have, (long long)max);
    add(w, "FieldValueTooMany", &b);
}

static void check_enum(vwalk *w, const json_t *s, const json_t *v)
{
    const json_t *en = json_object_get(s, "enum");
    if (!json_is_array(en) || !json_array_size(en))
        return;
    size_t i;
    const json_t *e;
    json_array_foreach(en, i, e) if (json_equal(e, v)) return;
    kc__buf b = KC__BUF_INIT(0);
    kc__buf_append_str(&b, "Unsupported value: ");
    bad_value(&b, v);
    kc__buf_append_str(&b, ": supported values: ");
    json_array_foreach(en, i, e)
    {
        if (i)
            kc__buf_append_str(&b, ", ");
        char *t = json_is_string(e) ? NULL : json_dumps(e, JSON_COMPACT | JSON_ENCODE_ANY);
        const char *x = t ? t : json_string_value(e);
        kc__go_quote(&b, x ? x : "", x ? strlen(x) : 0);
        free(t);
    }
    add(w, "FieldValueNotSupported", &b);
}

static void validate(vwalk *w, const json_t *s, const json_t *v);

static void child(vwalk *w, const json_t *s, const json_t *v, const char *key, size_t idx)
{
    size_t pl = strlen(w->path);
    if (key)
        snprintf(w->path + pl, sizeof(w->path) - pl, "%s%s", pl ? "." : "", key);
    else
        snprintf(w->path + pl, sizeof(w->path) - pl, "[%zu]", idx);
    validate(w, s, v);
    w->path[pl] = 0;
}

static void check_object(vwalk *w, const json_t *s, const json_t *v)
{
    const json_t *props = json_object_get(s, "properties");
    const json_t *addl = json_object_get(s, "additionalProperties");
    const json_t *mx = json_object_get(s, "maxProperties"),
                 *mn = json_object_get(s, "minProperties");
    size_t n = json_object_size(v);
    if (json_is_integer(mx) && n > (size_t)json_integer_value(mx))
        too_many(w, n, json_integer_value(mx));
    if (json_is_integer(mn) && n < (size_t)json_integer_value(mn)) {
        json_t *cnt = json_integer((json_int_t)n);
        invalid(w, "FieldValueInvalid", cnt, "should have at least %lld properties",
                (long long)json_integer_value(mn));
        json_decref(cnt);
    }
    const char *k;
    const json_t *x;
    json_object_foreach((json_t *)v, k, x)
    {
        const json_t *ps = json_object_get(props, k);
        if (ps)
            child(w, ps, x, k, 0);
        else if (json_is_object(addl))
            child(w, addl, x, k, 0);
    }
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(s, "required"), i, r)
    {
        const char *rk = json_string_value(r);
        if (!rk || json_object_get(v, rk))
            continue;
        size_t pl = strlen(w->path);
        snprintf(w->path + pl, sizeof(w->path) - pl, "%s%s", pl ? "." : "", rk);
        kc__buf b = KC__BUF_INIT(0);
        kc__buf_append_str(&b, "Required value");
        add(w, "FieldValueRequired", &b);
        w->path[pl] = 0;
    }
}

static void check_array(vwalk *w, const json_t *s, const json_t *v)
{
    const json_t *items = json_object_get(s, "items");
    size_t n = json_array_size(v);
    for (size_t i = 0; i < n && json_is_object(items); i++)
        child(w, items, json_array_get(v, i), NULL, i);
    const json_t *mx = json_object_get(s, "maxItems"), *mn = json_object_get(s, "minItems");
    if (json_is_integer(mn) && n < (size_t)json_integer_value(mn)) {
        json_t *cnt = json_integer((json_int_t)n);
        invalid(w, "FieldValueInvalid", cnt, "should have at least %lld items",
                (long long)json_integer_value(mn));
        json_decref(cnt);
    }
    if (json_is_integer(mx) && n > (size_t)json_integer_value(mx))
        too_many(w, n, json_integer_value(mx));
    if (flag_true(s, "uniqueItems"))
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++)
                if (json_equal(json_array_get(v, i), json_array_get(v, j))) {
                    json_t *empty = json_string("");
                    invalid(w, "FieldValueInvalid", empty, "shouldn't contain duplicates");
                    json_decref(empty);
                    return;
                }
}

/* allOf / anyOf / oneOf / not: the branches' own errors for allOf, one error for the others. */
static void check_combinators(vwalk *w, const json_t *s, const json_t *v)
{
    size_t i;
    const json_t *b;
    json_array_foreach(json_object_get(s, "allOf"), i, b) validate(w, b, v);
    static const char *const names[] = {"anyOf", "oneOf"};
    for (int c = 0; c < 2; c++) {
        const json_t *arr = json_object_get(s, names[c]);
        if (!json_array_size(arr))
            continue;
        size_t ok = 0;
        json_array_foreach(arr, i, b)
        {
            vwalk sub = {.n = 0};
            snprintf(sub.path, sizeof(sub.path), "%s", w->path);
            validate(&sub, b, v);
            ok += sub.n == 0;
            for (size_t e = 0; e < sub.n; e++) {
                free(sub.errs[e].field);
                free(sub.errs[e].body);
            }
        }
        if (c == 0 ? ok == 0 : ok != 1) {
            json_t *empty = json_string("");
            invalid(w, "FieldValueInvalid", empty, "must validate %s schema (%s)",
                    c == 0 ? "at least one" : "one and only one", names[c]);
            json_decref(empty);
        }
    }
    const json_t *not = json_object_get(s, "not");
    if (json_is_object(not )) {
        vwalk sub = {.n = 0};
        validate(&sub, not, v);
        for (size_t e = 0; e < sub.n; e++) {
            free(sub.errs[e].field);
            free(sub.errs[e].body);
        }
        if (sub.n == 0) {
            json_t *empty = json_string("");
            invalid(w, "FieldValueInvalid", empty, "must not validate the schema (not)");
            json_decref(empty);
        }
    }
}

static void validate(vwalk *w, const json_t *s, const json_t *v)
{
    if (!json_is_object(s))
        return;
    if (json_is_null(v)) {
        const char *t = json_string_value(json_object_get(s, "type"));
        if (t && *t && !flag_true(s, "nullable")) {
            kc__buf b = KC__BUF_INIT(0);
            kc__buf_printf(&b, "Invalid value: \"null\": %s in body must be of type %s: \"null\"",
                           name_of(w), t);
            add(w, "FieldValueTypeInvalid", &b);
        }
        return;
    }
    if (!type_ok(s, v)) {
        kc__buf b = KC__BUF_INIT(0);
        const char *t = flag_true(s, "x-kubernetes-int-or-string")
                            ? "integer,string"
                            : json_string_value(json_object_get(s, "type"));
        kc__buf_printf(&b, "Invalid value: \"%s\": %s in body must be of type %s: \"%s\"",
                       word_of(v), name_of(w), t, word_of(v));
        add(w, "FieldValueTypeInvalid", &b);
        return;
    }
    check_enum(w, s, v);
    if (json_is_number(v))
        check_number(w, s, v);
    else if (json_is_string(v))
        check_string(w, s, v);
    else if (json_is_object(v))
        check_object(w, s, v);
    else if (json_is_array(v))
        check_array(w, s, v);
    check_combinators(w, s, v);
}

int kc__crd_validate(const json_t *schema, const json_t *doc, const char *kind, const char *group,
                     const char *name, kc_error *err)
{
    if (!json_is_object(schema))
        return 0;
    vwalk w = {.n = 0};
    validate(&w, schema, doc);
    if (!w.n)
        return 0;
    /* errors.NewInvalid: "<Kind>.<group> \"<name>\" is invalid: " + the aggregate */
    kc__buf agg = KC__BUF_INIT(0);
    size_t shown = 0;
    for (size_t i = 0; i < w.n; i++) {
        bool dup = false;
        for (size_t j = 0; j < i && !dup; j++)
            dup = !strcmp(w.errs[i].field, w.errs[j].field) &&
                  !strcmp(w.errs[i].body, w.errs[j].body);
        if (dup)
            continue;
        kc__buf_printf(&agg, "%s%s: %s", shown++ ? ", " : "", w.errs[i].field, w.errs[i].body);
    }
    int rc = kc__serr(err, 422, "Invalid", "%s.%s \"%s\" is invalid: %s%s%s", kind, group, name,
                      shown > 1 ? "[" : "", agg.data ? agg.data : "", shown > 1 ? "]" : "");
    kc__serr_details(err, name, group, kind);
    for (size_t i = 0; i < w.n; i++) {
        kc__serr_cause(err, w.errs[i].type, w.errs[i].field, w.errs[i].body);
        free(w.errs[i].field);
        free(w.errs[i].body);
    }
    kc__buf_free(&agg);
    return rc;
}
