/*
 * jsonpath_eval.c — evaluating a parsed JSONPath template (jsonpath.c) against a jansson tree, as
 * client-go's util/jsonpath does for kubectl with AllowMissingKeys (a missing field yields no
 * value, not an error).
 *
 * Design: a path maps a list of values to a list of values step by step (borrowed pointers into
 * the document: nothing is copied). A {range} runs its body once per result, with that result as
 * the current value (@); $ is always the document. Printing follows kubectl's JSONPath printer:
 * the results of one action are separated by a space; objects and arrays are compact JSON written
 * as Go's encoding/json (get_json.c); strings raw; numbers, booleans and null as Go's fmt.Fprint
 * (0.25, 1e+06, true, null). Map keys are visited in sorted order (wildcards, recursive descent).
 * Filters compare one value with one value: numbers numerically, strings bytewise, booleans for
 * (in)equality; other pairs never match.
 */
#include "get.h"
#include "jsonpath_ast.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct vlist {
    json_t **v;
    size_t n, cap;
} vlist;

typedef struct jp_run {
    json_t *root;
    bool ints; /* integral reals print as integers (jp_print's list) */
    char *err;
    size_t errsz;
    bool failed;
} jp_run;

static int rerr(jp_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int rerr(jp_run *r, const char *fmt, ...)
{
    if (!r->failed && r->err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err, r->errsz, fmt, ap);
        va_end(ap);
    }
    r->failed = true;
    return -1;
}

static int push(jp_run *r, vlist *l, json_t *v)
{
    if (l->n >= JP_MAX_RESULTS)
        return rerr(r, "jsonpath: more than %u values in one step", JP_MAX_RESULTS);
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        json_t **n = realloc(l->v, cap * sizeof(*n));
        if (!n)
            return rerr(r, "jsonpath: out of memory");
        l->v = n;
        l->cap = cap;
    }
    l->v[l->n++] = v;
    return 0;
}

/* Every value inside v (object values in sorted key order), pushed. */
static int push_children(jp_run *r, vlist *out, json_t *v)
{
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            if (push(r, out, json_array_get(v, i)))
                return -1;
        return 0;
    }
    size_t n;
    const char **keys = json_is_object(v) ? get_sorted_keys(v, &n) : NULL;
    if (json_is_object(v) && json_object_size(v) && !keys)
        return rerr(r, "jsonpath: out of memory");
    int rc = 0;
    for (size_t i = 0; keys && i < n && !rc; i++)
        rc = push(r, out, json_object_get(v, keys[i]));
    free(keys);
    return rc;
}

/* client-go's recursive descent: v when it has children, then the same for each child. */
static int push_recursive(jp_run *r, vlist *out, json_t *v)
{
    vlist kids = {0};
    if (push_children(r, &kids, v)) {
        free(kids.v);
        return -1;
    }
    int rc = kids.n ? push(r, out, v) : 0;
    for (size_t i = 0; i < kids.n && !rc; i++)
        rc = push_recursive(r, out, kids.v[i]);
    free(kids.v);
    return rc;
}

/* [a:b:c] on array v as client-go evaluates it (bounds errors included). */
static int apply_slice(jp_run *r, const jp_step *s, json_t *v, vlist *out)
{
    if (!json_is_array(v))
        return 0;
    long len = (long)json_array_size(v);
    long a = s->has[0] ? s->idx[0] : 0;
    if (a < 0)
        a += len;
    long b = s->single ? a + 1 : s->has[1] ? s->idx[1] : len;
    if (!s->single && s->has[1] && b < 0)
        b += len;
    if (a == b)
        return 0;
    if (a < 0 || a >= len)
        return rerr(r, "array index out of bounds: index %ld, length %ld", a, len);
    if (b < 0 || b > len)
        return rerr(r, "array index out of bounds: index %ld, length %ld", b - 1, len);
    if (a > b)
        return rerr(r, "starting index %ld is greater than ending index %ld", a, b);
    long step = s->has[2] ? s->idx[2] : 1;
    if (step <= 0)
        return rerr(r, "step must be > 0");
    for (long i = a; i < b; i += step)
        if (push(r, out, json_array_get(v, (size_t)i)))
            return -1;
    return 0;
}

static int eval_path(jp_run *r, const jp_path *p, json_t *cur, vlist *out);

static int cmp_numbers(double a, double b)
{
    return a < b ? -1 : a > b;
}

/* Does one value pair satisfy op? */
static bool compare(json_t *a, jp_op op, json_t *b)
{
    int c;
    if (json_is_number(a) && json_is_number(b)) {
        if (json_is_integer(a) && json_is_integer(b))
            c = json_integer_value(a) < json_integer_value(b)   ? -1
                : json_integer_value(a) > json_integer_value(b) ? 1
                                                                : 0;
        else
            c = cmp_numbers(json_number_value(a), json_number_value(b));
    } else if (json_is_string(a) && json_is_string(b)) {
        c = strcmp(json_string_value(a), json_string_value(b));
    } else if (json_is_boolean(a) && json_is_boolean(b) && (op == JP_EQ || op == JP_NE)) {
        c = json_is_true(a) != json_is_true(b);
    } else {
        return false;
    }
    switch (op) {
    case JP_EQ:
        return c == 0;
    case JP_NE:
        return c != 0;
    case JP_LT:
        return c < 0;
    case JP_GT:
        return c > 0;
    case JP_LE:
        return c <= 0;
    case JP_GE:
        return c >= 0;
    default:
        return false;
    }
}

/* One element of a filtered array: -1 (error), 0 (no), 1 (kept). */
static int filter_keeps(jp_run *r, const jp_filter *f, json_t *el)
{
    vlist lhs = {0}, rhs = {0};
    int rc = eval_path(r, &f->lhs, el, &lhs);
    if (!rc && f->op != JP_EXISTS && f->rhs_is_path)
        rc = eval_path(r, &f->rhs, el, &rhs);
    if (!rc) {
        if (f->op == JP_EXISTS)
            rc = lhs.n > 0;
        else if (lhs.n > 1 || rhs.n > 1)
            rc = rerr(r, "can only compare one element at a time");
        else if (lhs.n == 1 && (f->rhs_is_path ? rhs.n == 1 : true))
            rc = compare(lhs.v[0], f->op, f->rhs_is_path ? rhs.v[0] : f->literal);
    }
    free(lhs.v);
    free(rhs.v);
    return rc;
}

static int apply_step(jp_run *r, const jp_step *s, json_t *v, vlist *out)
{
    switch (s->kind) {
    case JP_FIELD: {
        json_t *x = json_is_object(v) ? json_object_get(v, s->name) : NULL;
        return x ? push(r, out, x) : 0;
    }
    case JP_WILD:
        return push_children(r, out, v);
    case JP_RECURSE:
        return push_recursive(r, out, v);
    case JP_SLICE:
        return apply_slice(r, s, v, out);
    case JP_FILTER:
        for (size_t i = 0; json_is_array(v) && i < json_array_size(v); i++) {
            int k = filter_keeps(r, s->cond, json_array_get(v, i));
            if (k < 0 || (k && push(r, out, json_array_get(v, i))))
                return -1;
        }
        return 0;
    }
    return 0;
}

static int eval_path(jp_run *r, const jp_path *p, json_t *cur, vlist *out)
{
    vlist in = {0}, next = {0};
    if (push(r, &in, p->from_root ? r->root : cur))
        return -1;
    for (size_t i = 0; i < p->n; i++) {
        next.n = 0;
        for (size_t k = 0; k < in.n; k++)
            if (apply_step(r, &p->steps[i], in.v[k], &next)) {
                free(in.v);
                free(next.v);
                return -1;
            }
        vlist t = in;
        in = next;
        next = t;
    }
    free(next.v);
    for (size_t k = 0; k < in.n; k++)
        if (push(r, out, in.v[k])) {
            free(in.v);
            return -1;
        }
    free(in.v);
    return 0;
}

/* ---- printing -------------------------------------------------------------------------------- */

/* A double as Go's fmt %v prints it (strconv 'g', shortest): the shortest digits that read back,
 * in %e form (sign and two exponent digits at least: 1e+06, 1e-09) when the exponent is below -4
 * or from 6 up. */
static void go_float(char *buf, size_t size, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, size, "%s", isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf");
        return;
    }
    char e[48];
    int prec;
    for (prec = 0; prec < 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec, v);
        if (strtod(e, NULL) == v)
            break;
    }
    int exp10 = atoi(strchr(e, 'e') + 1);
    if (exp10 < -4 || exp10 >= 6) {
        snprintf(buf, size, "%s", e); /* C's %e already has a sign and two exponent digits */
        return;
    }
    int decimals = prec - exp10;
    snprintf(buf, size, "%.*f", decimals > 0 ? decimals : 0, v);
}

/* A scalar as fmt.Fprint prints it; objects and arrays as compact JSON. ints: a real with an
 * integral value int64 holds prints as an integer — kubectl re-encodes a list's items, Go writes
 * 1000000.0 as 1000000 and reads it back as int64 (1e+20 stays a float); a single object keeps
 * its reals (1e+06). */
static int print_value(FILE *out, json_t *v, bool ints)
{
    char num[64];
    switch (json_typeof(v)) {
    case JSON_OBJECT:
    case JSON_ARRAY:
        return get_json_write(out, v, 0, true);
    case JSON_STRING:
        fwrite(json_string_value(v), 1, json_string_length(v), out);
        return 0;
    case JSON_INTEGER:
        fprintf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return 0;
    case JSON_REAL:
        if (ints && json_real_value(v) == floor(json_real_value(v)) &&
            fabs(json_real_value(v)) < 9.2e18) {
            fprintf(out, "%lld", (long long)json_real_value(v));
            return 0;
        }
        go_float(num, sizeof num, json_real_value(v));
        fputs(num, out);
        return 0;
    case JSON_TRUE:
        fputs("true", out);
        return 0;
    case JSON_FALSE:
        fputs("false", out);
        return 0;
    case JSON_NULL:
        fputs("null", out);
        return 0;
    }
    return 0;
}

/* Nodes [from, to) with cur as the current value. */
static int exec_nodes(jp_run *r, const jp_tmpl *t, size_t from, size_t to, json_t *cur, FILE *out)
{
    for (size_t i = from; i < to; i++) {
        const jp_node *n = &t->nodes[i];
        if (n->kind == JP_TEXT) {
            fwrite(n->text, 1, n->len, out);
            continue;
        }
        if (n->kind == JP_END)
            continue;
        vlist vals = {0};
        int rc = eval_path(r, &n->path, cur, &vals);
        for (size_t k = 0; !rc && k < vals.n; k++) {
            if (n->kind == JP_RANGE) {
                rc = exec_nodes(r, t, i + 1, n->end, vals.v[k], out);
                continue;
            }
            if (k)
                fputc(' ', out);
            if (print_value(out, vals.v[k], r->ints))
                rc = rerr(r, "jsonpath: out of memory");
        }
        free(vals.v);
        if (rc)
            return -1;
        if (n->kind == JP_RANGE)
            i = n->end;
    }
    return 0;
}

int jp_print(const jp_tmpl *t, json_t *root, bool list, FILE *out, char *err, size_t errsz)
{
    jp_run r = {.root = root, .ints = list, .err = err, .errsz = errsz};
    return exec_nodes(&r, t, 0, t->n, root, out);
}

int jp_find(const jp_tmpl *t, json_t *root, json_t ***vals, size_t *n)
{
    jp_run r = {.root = root};
    vlist l = {0};
    *vals = NULL;
    *n = 0;
    if (t->n != 1 || t->nodes[0].kind != JP_EXPR)
        return 0;
    if (eval_path(&r, &t->nodes[0].path, root, &l)) {
        free(l.v);
        return r.failed && l.n == 0 ? 0 : -1; /* an index out of bounds: no value */
    }
    *vals = l.v;
    *n = l.n;
    return 0;
}

/* ---- fmt.Sprint ------------------------------------------------------------------------------ */

static void sprint(FILE *f, json_t *v, bool ints)
{
    if (json_is_string(v)) {
        fwrite(json_string_value(v), 1, json_string_length(v), f);
    } else if (json_is_null(v)) {
        fputs("<nil>", f);
    } else if (json_is_array(v)) {
        fputc('[', f);
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                fputc(' ', f);
            sprint(f, json_array_get(v, i), ints);
        }
        fputc(']', f);
    } else if (json_is_object(v)) {
        size_t n;
        const char **keys = get_sorted_keys(v, &n);
        fputs("map[", f);
        for (size_t i = 0; keys && i < n; i++) {
            fprintf(f, "%s%s:", i ? " " : "", keys[i]);
            sprint(f, json_object_get(v, keys[i]), ints);
        }
        fputc(']', f);
        free(keys);
    } else {
        print_value(f, v, ints);
    }
}

char *jp_sprint(json_t *v, bool list)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    sprint(f, v, list);
    if (fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}
