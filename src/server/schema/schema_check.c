/*
 * schema_check.c — built-in objects against their generated schemas (models.c): the type check
 * the API server's decoding into Go types amounts to, and the unknown fields fieldValidation
 * reports.
 *
 * Type check: one walk of the jansson document along the model; null fits every type (Go leaves
 * the zero value), unknown fields are skipped (decoding ignores them), the first mismatch in
 * document order is reported. What a mismatch is follows Go: a string field takes only a string;
 * int32/int64 only an integer in range; float64 any number; a struct or map an object; a slice
 * an array; IntOrString a string or an int32; Quantity a number or a quantity string; Time a RFC
 * 3339 string; []byte base64. The message is worded after the decode path (schema.h, enum
 * kc__decode_style): encoding/json's UnmarshalTypeError for POST/PUT and JSON/merge patches
 * (`json: cannot unmarshal number into Go struct field ConfigMap.data of type string`: the
 * innermost struct's Go name, the JSON field names from the root without indices), the
 * unstructured converter's for strategic merge patches (`cannot convert int64 to string`), the
 * structured-merge-diff typed conversion's for apply (`.data.a: expected string, got …`).
 * Known differences: Go named types print as their base type (`string`, not `v1.Protocol`); a
 * number literal is printed from its value (1.0 prints as 1); apply paths index list elements
 * (`[0]`) where upstream names associative keys (`[name="x"]`).
 *
 * Thread-safety: pure functions over const data.
 */
#include "server/schema/schema_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LV_SCALAR, LV_ARRAY, LV_MAP, LV_MAP_ARRAY };

typedef struct walk {
    const kc__decode_ctx *ctx;
    char gopath[512]; /* Go decoder's field stack: "spec.template.spec.containers.image" */
    char smd[512];    /* apply's path: ".spec.template.spec.containers[0].image" */
    char gostruct[96];
    kc__buf msg; /* the mismatch, worded for ctx->style */
} walk;

static const char *const scalar_go[] = {
    [KC__ST_STRING] = "string",
    [KC__ST_BOOL] = "bool",
    [KC__ST_INT32] = "int32",
    [KC__ST_INT64] = "int64",
    [KC__ST_NUMBER] = "float64",
    [KC__ST_ANY] = "interface {}",
    [KC__ST_INTORSTR] = "intstr.IntOrString",
    [KC__ST_TIME] = "v1.Time",
    [KC__ST_MICROTIME] = "v1.MicroTime",
    [KC__ST_BYTES] = "[]uint8",
    [KC__ST_QUANTITY] = "resource.Quantity",
};

/* The Go type of a field at nesting level lv (the field itself, or its elements). */
static void go_type(const kc__sfield *f, int lv, char *out, size_t cap)
{
    char elem[128];
    if (f->type == KC__ST_OBJECT)
        kc__schema_go_type(f->ref, elem, sizeof(elem));
    else
        snprintf(elem, sizeof(elem), "%s", scalar_go[f->type]);
    if (lv == LV_ARRAY)
        snprintf(out, cap, "[]%s", elem);
    else if (lv == LV_MAP && f->type == KC__ST_QUANTITY)
        snprintf(out, cap, "v1.ResourceList");
    else if (lv == LV_MAP)
        snprintf(out, cap, "map[string]%s", elem);
    else if (lv == LV_MAP_ARRAY)
        snprintf(out, cap, "map[string][]%s", elem);
    else
        snprintf(out, cap, "%s", elem);
}

/* encoding/json's word for v; numbers that do not fit an integer field carry their literal. */
static void json_word(const json_t *v, bool int_field, kc__buf *b)
{
    kc__buf_append_str(b, kc__json_word(v));
    if (int_field && (json_is_real(v) || json_is_integer(v))) {
        kc__buf_append_char(b, ' ');
        kc__go_value(b, v, 'v');
    }
}

static bool is_int(enum kc__stype t)
{
    return t == KC__ST_INT32 || t == KC__ST_INT64;
}

/* A mismatch at a Go-typed position: the wording of each decode path. gotype is the expected Go
 * type at this level; base (the element type) decides the converter's and apply's words. */
static int mismatch(walk *w, const kc__sfield *f, int lv, const json_t *v)
{
    char gt[160];
    go_type(f, lv, gt, sizeof(gt));
    kc__buf *b = &w->msg;
    bool scalar = lv == LV_SCALAR, intf = scalar && is_int(f->type);
    switch (w->ctx->style) {
    case KC__DECODE_BODY:
    case KC__DECODE_JSON_PATCH:
        kc__buf_append_str(b, "json: cannot unmarshal ");
        json_word(v, intf, b);
        kc__buf_printf(b, " into Go struct field %s.%s of type %s", w->gostruct, w->gopath, gt);
        break;
    case KC__DECODE_SMP:
        if (!scalar)
            kc__buf_printf(b, "cannot restore %s from %s", lv == LV_ARRAY ? "slice" : "map",
                           kc__go_kind(v));
        else if (f->type == KC__ST_OBJECT)
            kc__buf_printf(b, "cannot restore struct from: %s", kc__go_kind(v));
        else if ((f->type == KC__ST_STRING && json_is_number(v)) || (intf && json_is_real(v)))
            kc__buf_printf(b, "cannot convert %s to %s", kc__go_kind(v), gt);
        else
            kc__buf_printf(b, "json: cannot unmarshal %s into Go value of type %s",
                           kc__json_word(v), gt);
        break;
    case KC__DECODE_APPLY: {
        kc__buf_printf(b, "%s: ", w->smd);
        if (!scalar || f->type == KC__ST_OBJECT) {
            kc__buf_printf(b, "expected %s, got &{", lv == LV_ARRAY ? "list" : "map");
            kc__go_value(b, v, 'v');
            kc__buf_append_char(b, '}');
        } else if (f->type == KC__ST_BOOL) {
            kc__buf_append_str(b, "expected boolean, got &{");
            kc__go_value(b, v, 'v');
            kc__buf_append_char(b, '}');
        } else if (is_int(f->type) || f->type == KC__ST_NUMBER) {
            kc__buf_printf(b, "expected numeric (int or float), got %s", kc__go_typeof(v));
        } else if (f->type == KC__ST_QUANTITY || f->type == KC__ST_INTORSTR) {
            kc__buf_append_str(b, "expected any scalar, got &{");
            kc__go_value(b, v, 'v');
            kc__buf_append_char(b, '}');
        } else {
            kc__buf_append_str(b, "expected string, got &value.valueUnstructured{Value:");
            kc__go_value(b, v, '#');
            kc__buf_append_char(b, '}');
        }
        break;
    }
    }
    return 1;
}

/* A failure worded by a custom unmarshaler (time, quantity, base64): the same text on every
 * decode path but apply (whose typed conversion only checks the JSON type). */
static int unmarshaler_error(walk *w, const char *fmt, ...) KC__PRINTF(2, 3);
static int unmarshaler_error(walk *w, const char *fmt, ...)
{
    if (w->ctx->style == KC__DECODE_APPLY)
        return 0;
    va_list ap;
    va_start(ap, fmt);
    kc__buf_vprintf(&w->msg, fmt, ap);
    va_end(ap);
    return 1;
}

/* resource.ParseQuantity's grammar: [+-]digits[.digits] then a suffix (binary Ki..Ei, decimal
 * n u m "" k M G T P E, or an exponent e/E[+-]digits). */
static bool quantity_ok(const char *s)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    const char *d = p;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p);)
            p++;
    if (p == d || (p == d + 1 && *d == '.'))
        return false;
    static const char *const sfx[] = {"",  "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n",
                                      "u", "m",  "k",  "M",  "G",  "T",  "P",  "E"};
    for (size_t i = 0; i < KC__ARRAY_LEN(sfx); i++)
        if (!strcmp(p, sfx[i]))
            return true;
    if (*p != 'e' && *p != 'E')
        return false;
    p++;
    if (*p == '+' || *p == '-')
        p++;
    if (!isdigit((unsigned char)*p))
        return false;
    while (isdigit((unsigned char)*p))
        p++;
    return *p == 0;
}

/* RFC 3339 as Go's time.Parse(time.RFC3339) takes it; false when it would fail. */
static bool rfc3339_ok(const char *s)
{
    int y, mo, d, h, mi, sec, used = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &used) != 6 ||
        used != 19 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59)
        return false;
    const char *p = s + used;
    if (*p == '.')
        for (p++; isdigit((unsigned char)*p);)
            p++;
    if (*p == 'Z')
        return p[1] == 0;
    int oh, om;
    return (*p == '+' || *p == '-') && sscanf(p + 1, "%2d:%2d%n", &oh, &om, &used) == 2 &&
           used == 5 && p[6] == 0;
}

/* Go's base64.StdEncoding: the offset of the first byte it rejects, -1 when it decodes. */
static long base64_bad(const char *s, size_t n)
{
    size_t q = 0; /* chars in the current quantum */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\r' || c == '\n')
            continue;
        if (c == '=') {
            if (q < 2)
                return (long)i;
            size_t want = 4 - q, got = 0;
            for (; i < n && got < want; i++)
                if (s[i] == '=')
                    got++;
                else if (s[i] != '\r' && s[i] != '\n')
                    return (long)i;
            return got == want && i == n ? -1 : (long)i;
        }
        if (!(isalnum(c) || c == '+' || c == '/'))
            return (long)i;
        q = (q + 1) % 4;
    }
    return q == 0 ? -1 : (long)(n - q);
}

static int check_model(walk *w, int m, const json_t *obj);

/* One value at a scalar position of field f. Returns 1 on a mismatch (w->msg says it). */
static int check_scalar(walk *w, const kc__sfield *f, const json_t *v)
{
    if (json_is_null(v))
        return 0;
    switch ((enum kc__stype)f->type) {
    case KC__ST_STRING:
        return json_is_string(v) ? 0 : mismatch(w, f, LV_SCALAR, v);
    case KC__ST_BOOL:
        return json_is_boolean(v) ? 0 : mismatch(w, f, LV_SCALAR, v);
    case KC__ST_INT32:
        if (json_is_integer(v) && json_integer_value(v) >= INT32_MIN &&
            json_integer_value(v) <= INT32_MAX)
            return 0;
        return mismatch(w, f, LV_SCALAR, v);
    case KC__ST_INT64:
        return json_is_integer(v) ? 0 : mismatch(w, f, LV_SCALAR, v);
    case KC__ST_NUMBER:
        return json_is_number(v) ? 0 : mismatch(w, f, LV_SCALAR, v);
    case KC__ST_OBJECT:
        return json_is_object(v) ? check_model(w, f->ref, v) : mismatch(w, f, LV_SCALAR, v);
    case KC__ST_ANY:
        return 0;
    case KC__ST_INTORSTR: {
        if (json_is_string(v) || (json_is_integer(v) && json_integer_value(v) >= INT32_MIN &&
                                  json_integer_value(v) <= INT32_MAX))
            return 0;
        if (w->ctx->style == KC__DECODE_APPLY)
            return json_is_object(v) || json_is_array(v) ? mismatch(w, f, LV_SCALAR, v) : 0;
        kc__sfield as_int = *f; /* IntOrString decodes a non-string into its int32 */
        as_int.type = KC__ST_INT32;
        return mismatch(w, &as_int, LV_SCALAR, v);
    }
    case KC__ST_QUANTITY:
        if (json_is_number(v) || (json_is_string(v) && quantity_ok(json_string_value(v))))
            return 0;
        if (w->ctx->style == KC__DECODE_APPLY)
            return json_is_object(v) || json_is_array(v) ? mismatch(w, f, LV_SCALAR, v) : 0;
        return unmarshaler_error(w, "quantities must match the regular expression "
                                    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    case KC__ST_TIME:
    case KC__ST_MICROTIME:
        if (!json_is_string(v)) {
            kc__sfield as_str = *f; /* Time decodes its JSON into a string first */
            as_str.type = KC__ST_STRING;
            return mismatch(w, w->ctx->style == KC__DECODE_APPLY ? f : &as_str, LV_SCALAR, v);
        }
        if (rfc3339_ok(json_string_value(v)) || w->ctx->style == KC__DECODE_APPLY)
            return 0;
        /* time.Parse's error; exact when the year is where it fails */
        kc__buf_append_str(&w->msg, "parsing time ");
        kc__go_quote(&w->msg, json_string_value(v), json_string_length(v));
        kc__buf_printf(&w->msg, " as \"%s\": cannot parse ",
                       f->type == KC__ST_TIME ? "2006-01-02T15:04:05Z07:00"
                                              : "2006-01-02T15:04:05.000000Z07:00");
        kc__go_quote(&w->msg, json_string_value(v), json_string_length(v));
        kc__buf_append_str(&w->msg, " as \"2006\"");
        return 1;
    case KC__ST_BYTES: {
        if (!json_is_string(v))
            return mismatch(w, f, LV_SCALAR, v);
        long bad = base64_bad(json_string_value(v), json_string_length(v));
        return bad < 0 ? 0 : unmarshaler_error(w, "illegal base64 data at input byte %ld", bad);
    }
    }
    return 0;
}

/* Path bookkeeping: a field name pushed onto both paths; restored by the caller from lengths. */
static void push_field(walk *w, const char *name)
{
    size_t n = strlen(w->gopath);
    snprintf(w->gopath + n, sizeof(w->gopath) - n, "%s%s", n ? "." : "", name);
    n = strlen(w->smd);
    snprintf(w->smd + n, sizeof(w->smd) - n, ".%s", name);
}

static void push_index(walk *w, size_t i)
{
    size_t n = strlen(w->smd);
    snprintf(w->smd + n, sizeof(w->smd) - n, "[%zu]", i);
}

/* The value of field f (its whole shape). Returns 1 on a mismatch. */
static int check_field(walk *w, const kc__sfield *f, const json_t *v)
{
    if (json_is_null(v) || f->shape == KC__SH_SCALAR)
        return check_scalar(w, f, v);
    size_t sl = strlen(w->smd);
    if (f->shape == KC__SH_ARRAY) {
        if (!json_is_array(v))
            return mismatch(w, f, LV_ARRAY, v);
        for (size_t i = 0; i < json_array_size(v); i++) {
            push_index(w, i);
            if (check_scalar(w, f, json_array_get(v, i)))
                return 1;
            w->smd[sl] = 0;
        }
        return 0;
    }
    if (!json_is_object(v))
        return mismatch(w, f, f->shape == KC__SH_MAP ? LV_MAP : LV_MAP_ARRAY, v);
    const char *k;
    const json_t *x;
    json_object_foreach((json_t *)v, k, x)
    {
        size_t n = strlen(w->smd);
        snprintf(w->smd + n, sizeof(w->smd) - n, ".%s", k);
        if (f->shape == KC__SH_MAP) {
            if (check_scalar(w, f, x))
                return 1;
        } else if (!json_is_null(x)) {
            if (!json_is_array(x))
                return mismatch(w, f, LV_ARRAY, x);
            for (size_t i = 0; i < json_array_size(x); i++)
                if (check_scalar(w, f, json_array_get(x, i)))
                    return 1;
        }
        w->smd[sl] = 0;
    }
    return 0;
}

static int check_model(walk *w, int m, const json_t *obj)
{
    char saved_struct[sizeof(w->gostruct)]; /* nested structs restore the name on return */
    memcpy(saved_struct, w->gostruct, sizeof(saved_struct));
    kc__schema_type_name(m, w->gostruct, sizeof(w->gostruct));
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        const kc__sfield *f = kc__schema_field(m, k);
        if (!f)
            continue;
        size_t gl = strlen(w->gopath), sl = strlen(w->smd);
        push_field(w, k);
        if (check_field(w, f, v))
            return 1; /* paths and struct stay at the mismatch */
        w->gopath[gl] = 0;
        w->smd[sl] = 0;
    }
    memcpy(w->gostruct, saved_struct, sizeof(saved_struct));
    return 0;
}

/* The failure of each decode path around the mismatch text. */
static int report(const walk *w, const json_t *doc, kc_error *err)
{
    const kc__decode_ctx *c = w->ctx;
    const char *msg = w->msg.data ? w->msg.data : "";
    if (c->style == KC__DECODE_BODY)
        return kc__serr(err, 400, "BadRequest",
                        "%s in version \"%s\" cannot be handled as a %s: %s", c->kind, c->version,
                        c->kind, msg);
    if (c->style == KC__DECODE_APPLY)
        return kc__serr(
            err, 500, "Unknown", "failed to create typed patch object (%s/%s; %s/%s, Kind=%s): %s",
            c->ns ? c->ns : "", c->name ? c->name : "", c->group, c->version, c->kind, msg);
    /* patches: 422 Invalid on field "patch" quoting the patched JSON (JSON and merge patches)
     * or the patch map (strategic), as errors.NewInvalid with an empty kind and name words it */
    kc__buf q = KC__BUF_INIT(0), val = KC__BUF_INIT(0);
    if (c->style == KC__DECODE_SMP) {
        kc__go_value(&val, c->patch ? c->patch : doc, 'v');
    } else {
        char *s = json_dumps(doc, JSON_COMPACT);
        kc__buf_append_str(&val, s ? s : "");
        free(s);
    }
    kc__go_quote(&q, val.data ? val.data : "", val.len);
    kc__buf cause = KC__BUF_INIT(0);
    kc__buf_printf(&cause, "Invalid value: %s: %s", q.data ? q.data : "\"\"", msg);
    int rc =
        kc__serr(err, 422, "Invalid", " \"\" is invalid: patch: %s", cause.data ? cause.data : "");
    kc__serr_cause(err, "FieldValueInvalid", "patch", cause.data ? cause.data : "");
    kc__buf_free(&q);
    kc__buf_free(&val);
    kc__buf_free(&cause);
    return rc;
}

int kc__schema_typecheck(int m, const json_t *doc, const kc__decode_ctx *ctx, kc_error *err)
{
    if (m < 0 || !json_is_object(doc))
        return 0;
    walk w = {.ctx = ctx, .msg = KC__BUF_INIT(0)};
    int rc = 0;
    if (check_model(&w, m, doc))
        rc = report(&w, doc, err);
    kc__buf_free(&w.msg);
    return rc;
}

/* ---- unknown fields ------------------------------------------------------------------------ */

typedef struct uwalk {
    kc__unknown_fn fn;
    void *ud;
    char path[1024];
} uwalk;

static int unknown_model(uwalk *u, int m, json_t *obj, const json_t *base);

static int unknown_value(uwalk *u, const kc__sfield *f, json_t *v, const json_t *base)
{
    if (f->type != KC__ST_OBJECT || json_is_null(v))
        return 0;
    size_t pl = strlen(u->path);
    int rc = 0;
    if (f->shape == KC__SH_SCALAR) {
        rc =
            json_is_object(v) ? unknown_model(u, f->ref, v, json_is_object(base) ? base : NULL) : 0;
    } else if (f->shape == KC__SH_ARRAY && json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v) && rc == 0; i++) {
            json_t *e = json_array_get(v, i);
            snprintf(u->path + pl, sizeof(u->path) - pl, "[%zu]", i);
            if (json_is_object(e))
                rc = unknown_model(u, f->ref, e, json_array_get(base, i));
        }
    } else if (f->shape == KC__SH_MAP && json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x)
        {
            snprintf(u->path + pl, sizeof(u->path) - pl, ".%s", k);
            if (json_is_object(x) && (rc = unknown_model(u, f->ref, x, json_object_get(base, k))))
                break;
        }
    }
    u->path[pl] = 0;
    return rc;
}

static int unknown_model(uwalk *u, int m, json_t *obj, const json_t *base)
{
    const char *k;
    json_t *v;
    void *tmp;
    size_t pl = strlen(u->path);
    json_object_foreach_safe(obj, tmp, k, v)
    {
        snprintf(u->path + pl, sizeof(u->path) - pl, "%s%s", pl ? "." : "", k);
        const kc__sfield *f = kc__schema_field(m, k);
        const json_t *b = json_is_object(base) ? json_object_get(base, k) : NULL;
        int rc = 0;
        if (f)
            rc = unknown_value(u, f, v, b);
        else if (!b && (rc = u->fn(u->ud, u->path, obj, k)) == 0)
            json_object_del(obj, k);
        u->path[pl] = 0;
        if (rc < 0)
            return rc;
    }
    return 0;
}

int kc__schema_unknown(int m, json_t *doc, const json_t *base, kc__unknown_fn fn, void *ud)
{
    if (m < 0 || !json_is_object(doc))
        return 0;
    uwalk u = {.fn = fn, .ud = ud};
    int rc = unknown_model(&u, m, doc, base);
    return rc > 0 ? 0 : rc;
}
