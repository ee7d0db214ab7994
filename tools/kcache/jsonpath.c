/*
 * jsonpath.c — the parser of kubectl's JSONPath templates (the language of client-go's
 * util/jsonpath, which `kubectl get -o jsonpath=…`, `-o custom-columns=…` and `--sort-by` use).
 *
 * Design: one pass of recursive descent over the template into a flat list of nodes
 * (jsonpath_ast.h): text, {path}, {range path} … {end}, with each path a list of steps. Bounded:
 * the template is at most JP_MAX_LEN bytes, {range} and filters nest at most JP_MAX_DEPTH deep, so
 * the recursion (filters hold paths, which hold filters) is bounded too. Every error names what is
 * wrong and the byte offset where it was seen ("jsonpath: unterminated '{' at offset 7").
 * Evaluation is jsonpath_eval.c's.
 */
#include "jsonpath_ast.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct jp_parser {
    const char *s;
    size_t pos, len;
    int depth;
    size_t off_shift; /* relaxed expressions are parsed as "{." + text + "}": offsets shift back */
    size_t src_len;   /* the text as given: no offset beyond its end */
    char *err;
    size_t errsz;
    bool failed;
} jp_parser;

static int perr(jp_parser *p, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int perr(jp_parser *p, size_t at, const char *fmt, ...)
{
    if (p->failed)
        return -1;
    p->failed = true;
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t off = at > p->off_shift ? at - p->off_shift : 0;
    if (off > p->src_len) /* at the '}' a relaxed expression was given */
        off = p->src_len;
    snprintf(p->err, p->errsz, "jsonpath: %s at offset %zu", what, off);
    return -1;
}

static int nomem(jp_parser *p)
{
    return perr(p, p->pos, "out of memory");
}

static char peek(const jp_parser *p)
{
    return p->pos < p->len ? p->s[p->pos] : '\0';
}

static void skip_ws(jp_parser *p)
{
    while (p->pos < p->len && strchr(" \t\r\n", p->s[p->pos]))
        p->pos++;
}

static bool eat(jp_parser *p, const char *tok)
{
    size_t n = strlen(tok);
    if (p->len - p->pos >= n && !memcmp(p->s + p->pos, tok, n)) {
        p->pos += n;
        return true;
    }
    return false;
}

/* ---- the tree -------------------------------------------------------------------------------- */

static void path_clear(jp_path *path);

static void filter_free(jp_filter *f)
{
    if (!f)
        return;
    path_clear(&f->lhs);
    path_clear(&f->rhs);
    json_decref(f->literal);
    free(f);
}

static void path_clear(jp_path *path)
{
    for (size_t i = 0; i < path->n; i++) {
        free(path->steps[i].name);
        filter_free(path->steps[i].cond);
    }
    free(path->steps);
    path->steps = NULL;
    path->n = 0;
}

void jp_free(jp_tmpl *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->nodes[i].text);
        path_clear(&t->nodes[i].path);
    }
    free(t->nodes);
    free(t);
}

static jp_step *add_step(jp_parser *p, jp_path *path, jp_step_kind kind)
{
    jp_step *s = realloc(path->steps, (path->n + 1) * sizeof(*s));
    if (!s) {
        nomem(p);
        return NULL;
    }
    path->steps = s;
    s = &path->steps[path->n++];
    memset(s, 0, sizeof(*s));
    s->kind = kind;
    return s;
}

static jp_node *add_node(jp_parser *p, jp_tmpl *t, jp_node_kind kind)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        jp_node *n = realloc(t->nodes, cap * sizeof(*n));
        if (!n) {
            nomem(p);
            return NULL;
        }
        t->nodes = n;
        t->cap = cap;
    }
    jp_node *n = &t->nodes[t->n++];
    memset(n, 0, sizeof(*n));
    n->kind = kind;
    return n;
}

/* ---- tokens ---------------------------------------------------------------------------------- */

/* A quoted string ('…' or "…", with \n \t \r \\ \' \" escapes) into a new malloc'd *ret. */
static int parse_quoted(jp_parser *p, char **ret, size_t *ret_len)
{
    size_t start = p->pos;
    char q = p->s[p->pos++];
    char *out = malloc(p->len - p->pos + 1);
    size_t k = 0;
    if (!out)
        return nomem(p);
    while (p->pos < p->len && p->s[p->pos] != q) {
        char c = p->s[p->pos++];
        if (c == '\\') {
            if (p->pos >= p->len)
                break;
            c = p->s[p->pos++];
            const char *from = "ntr0", *to = "\n\t\r\0";
            const char *at = strchr(from, c);
            if (at && c)
                c = to[at - from];
            else if (!strchr("\\'\"", c)) {
                free(out);
                return perr(p, p->pos - 2, "unknown escape '\\%c' in a quoted string", c);
            }
        }
        out[k++] = c;
    }
    if (p->pos >= p->len) {
        free(out);
        return perr(p, start, "unterminated quoted string");
    }
    p->pos++;
    out[k] = '\0';
    *ret = out;
    if (ret_len)
        *ret_len = k;
    return 0;
}

/* A field name: up to a character that ends it; '\' escapes the next (.metadata.labels.a\.b). */
static int parse_name(jp_parser *p, char **ret)
{
    size_t start = p->pos, k = 0;
    char *out = malloc(p->len - p->pos + 1);
    if (!out)
        return nomem(p);
    while (p->pos < p->len && !strchr(" \t\r\n.,[](){}=<>!@$'\"", p->s[p->pos])) {
        if (p->s[p->pos] == '\\' && p->pos + 1 < p->len)
            p->pos++;
        out[k++] = p->s[p->pos++];
    }
    out[k] = '\0';
    if (!k) {
        free(out);
        return p->pos < p->len
                   ? perr(p, start, "unexpected '%c' where a field name belongs", p->s[p->pos])
                   : perr(p, start, "missing field name");
    }
    *ret = out;
    return 0;
}

/* An optional integer: true and *v when one is there. */
static int parse_int(jp_parser *p, long *v, bool *have)
{
    *have = false;
    skip_ws(p);
    const char *b = p->s + p->pos;
    if (!(*b == '-' || *b == '+' || (*b >= '0' && *b <= '9')))
        return 0;
    char *end;
    errno = 0;
    *v = strtol(b, &end, 10);
    if (end == b || errno)
        return perr(p, p->pos, "invalid array index");
    p->pos += (size_t)(end - b);
    *have = true;
    skip_ws(p);
    return 0;
}

/* ---- paths ----------------------------------------------------------------------------------- */

static int parse_path(jp_parser *p, jp_path *path);

/* A literal after a filter's operator: 'x', "x", a number, true or false. */
static int parse_literal(jp_parser *p, jp_filter *f)
{
    size_t at = p->pos;
    char c = peek(p);
    if (c == '\'' || c == '"') {
        char *s = NULL;
        size_t n = 0;
        if (parse_quoted(p, &s, &n))
            return -1;
        f->literal = json_stringn(s, n);
        free(s);
    } else if (eat(p, "true") || eat(p, "false")) {
        f->literal = json_boolean(p->s[at] == 't');
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        char *end;
        errno = 0;
        long long i = strtoll(p->s + at, &end, 10);
        if (*end == '.' || *end == 'e' || *end == 'E') {
            double d = strtod(p->s + at, &end);
            f->literal = json_real(d);
        } else {
            f->literal = errno ? NULL : json_integer(i);
        }
        p->pos += (size_t)(end - (p->s + at));
        if (!f->literal)
            return perr(p, at, "invalid number");
    } else {
        return perr(p, at, "expected a value after the operator");
    }
    return f->literal ? 0 : nomem(p);
}

/* [?( lhs [op rhs] )] — the position is just after "?(". */
static int parse_filter(jp_parser *p, jp_step *s)
{
    static const struct {
        const char *tok;
        jp_op op;
    } ops[] = {{"==", JP_EQ}, {"!=", JP_NE}, {"<=", JP_LE},
               {">=", JP_GE}, {"<", JP_LT},  {">", JP_GT}};
    if (!(s->cond = calloc(1, sizeof(*s->cond))))
        return nomem(p);
    skip_ws(p);
    if (parse_path(p, &s->cond->lhs))
        return -1;
    skip_ws(p);
    s->cond->op = JP_EXISTS;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (eat(p, ops[i].tok)) {
            s->cond->op = ops[i].op;
            break;
        }
    skip_ws(p);
    if (s->cond->op != JP_EXISTS) {
        char c = peek(p);
        if (c == '@' || c == '$') {
            s->cond->rhs_is_path = true;
            if (parse_path(p, &s->cond->rhs))
                return -1;
        } else if (parse_literal(p, s->cond)) {
            return -1;
        }
        skip_ws(p);
    }
    if (!eat(p, ")"))
        return perr(p, p->pos, "expected ')' to close the filter");
    return 0;
}

/* The inside of [ … ]: the position is just after '['. */
static int parse_bracket(jp_parser *p, jp_path *path)
{
    size_t open = p->pos - 1;
    skip_ws(p);
    jp_step *s;
    if (eat(p, "*")) {
        if (!add_step(p, path, JP_WILD))
            return -1;
    } else if (eat(p, "?(")) {
        if (!(s = add_step(p, path, JP_FILTER)) || parse_filter(p, s))
            return -1;
    } else if (peek(p) == '\'' || peek(p) == '"') {
        if (!(s = add_step(p, path, JP_FIELD)) || parse_quoted(p, &s->name, NULL))
            return -1;
    } else {
        if (!(s = add_step(p, path, JP_SLICE)))
            return -1;
        bool colon = false;
        for (int i = 0; i < 3; i++) {
            if (parse_int(p, &s->idx[i], &s->has[i]))
                return -1;
            if (i == 2 || !eat(p, ":"))
                break;
            colon = true;
        }
        s->single = !colon;
        if (s->has[2] && s->idx[2] == 0)
            return perr(p, open, "step of a slice must not be 0");
        if (s->single && !s->has[0] && peek(p) != ',')
            return peek(p) == ']' ? perr(p, open, "empty brackets '[]'")
                                  : perr(p, p->pos, "unexpected '%c' in brackets", peek(p));
        if (peek(p) == ',')
            return perr(p, p->pos, "unions ([a,b]) are not supported");
    }
    skip_ws(p);
    if (!eat(p, "]"))
        return peek(p) ? perr(p, p->pos, "unexpected '%c' in brackets", peek(p))
                       : perr(p, open, "unterminated '['");
    return 0;
}

/* One step after a '.' (the position is just after it). */
static int parse_dot(jp_parser *p, jp_path *path)
{
    jp_step *s;
    if (eat(p, ".")) { /* .. */
        if (!add_step(p, path, JP_RECURSE))
            return -1;
        if (peek(p) == '[')
            return 0;
    }
    if (eat(p, "*"))
        return add_step(p, path, JP_WILD) ? 0 : -1;
    char c = peek(p);
    if (c == '}' || c == ')' || c == '\0' || strchr(" \t\r\n=<>!", c))
        return path->n && path->steps[path->n - 1].kind == JP_RECURSE
                   ? perr(p, p->pos, "missing field name after '..'")
                   : 0; /* a lone '.': the current value */
    if (!(s = add_step(p, path, JP_FIELD)))
        return -1;
    return parse_name(p, &s->name);
}

/* [$|@] then steps until the action (or the filter's operand) ends. */
static int parse_path(jp_parser *p, jp_path *path)
{
    if (++p->depth > JP_MAX_DEPTH)
        return perr(p, p->pos, "nested deeper than %d", JP_MAX_DEPTH);
    if (eat(p, "$"))
        path->from_root = true;
    else if (!eat(p, "@") && peek(p) != '.' && peek(p) != '[')
        return peek(p) ? perr(p, p->pos, "unexpected '%c' where a path belongs", peek(p))
                       : perr(p, p->pos, "missing path");
    for (;;) {
        char c = peek(p);
        int rc = 0;
        if (c == '.') {
            p->pos++;
            rc = parse_dot(p, path);
        } else if (c == '[') {
            p->pos++;
            rc = parse_bracket(p, path);
        } else {
            break;
        }
        if (rc)
            return -1;
    }
    p->depth--;
    return 0;
}

/* The word kw followed by no more of a name ("range .x", "end"): consumed, true. */
static bool keyword(jp_parser *p, const char *kw)
{
    size_t n = strlen(kw);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, kw, n))
        return false;
    char next = p->pos + n < p->len ? p->s[p->pos + n] : '\0';
    if (next && !strchr(" \t\r\n}", next))
        return false;
    p->pos += n;
    return true;
}

/* ---- the template ---------------------------------------------------------------------------- */

/* One action: the position is just after '{'. open: the offset of that '{'. */
static int parse_action(jp_parser *p, jp_tmpl *t, size_t open, size_t *ranges, int *nranges)
{
    skip_ws(p);
    jp_node *n;
    char c = peek(p);
    if (c == '\0')
        return perr(p, open, "unterminated '{'");
    if (c == '\'' || c == '"') {
        if (!(n = add_node(p, t, JP_TEXT)) || parse_quoted(p, &n->text, &n->len))
            return -1;
    } else if (keyword(p, "range")) {
        if (*nranges >= JP_MAX_DEPTH)
            return perr(p, open, "{range} nested deeper than %d", JP_MAX_DEPTH);
        skip_ws(p);
        ranges[(*nranges)++] = t->n;
        if (!(n = add_node(p, t, JP_RANGE)) || parse_path(p, &n->path))
            return -1;
    } else if (keyword(p, "end")) {
        if (!*nranges)
            return perr(p, open, "{end} without {range}");
        size_t r = ranges[--*nranges];
        if (!add_node(p, t, JP_END))
            return -1;
        t->nodes[r].end = t->n - 1;
    } else {
        if (!(n = add_node(p, t, JP_EXPR)) || parse_path(p, &n->path))
            return -1;
    }
    skip_ws(p);
    if (eat(p, "}"))
        return 0;
    if (!peek(p))
        return perr(p, open, "unterminated '{'");
    return perr(p, p->pos, "unexpected '%c' in an action", peek(p));
}

static int parse_template(jp_parser *p, jp_tmpl *t)
{
    size_t ranges[JP_MAX_DEPTH];
    int nranges = 0;
    while (p->pos < p->len) {
        size_t start = p->pos;
        while (p->pos < p->len && p->s[p->pos] != '{')
            p->pos++;
        if (p->pos > start) {
            jp_node *n = add_node(p, t, JP_TEXT);
            if (!n || !(n->text = strndup(p->s + start, p->pos - start)))
                return n ? nomem(p) : -1;
            n->len = p->pos - start;
        }
        if (p->pos < p->len) {
            size_t open = p->pos++;
            if (parse_action(p, t, open, ranges, &nranges))
                return -1;
        }
    }
    if (nranges)
        return perr(p, 0, "{range} without {end}");
    return 0;
}

/* kubectl's RelaxedJSONPathExpression: {.x} {x} .x x all mean {.x}. */
static char *relax(const char *src, size_t *shift)
{
    size_t n = strlen(src);
    const char *b = src;
    if (n >= 2 && b[0] == '{' && b[n - 1] == '}') {
        b++;
        n -= 2;
    }
    *shift = 2 + (size_t)(b - src);
    if (n && *b == '.') {
        b++;
        n--;
        (*shift)--;
    }
    char *s = malloc(n + 4);
    if (s)
        snprintf(s, n + 4, "{.%.*s}", (int)n, b);
    return s;
}

int jp_parse(const char *src, bool relaxed, jp_tmpl **ret, char *err, size_t errsz)
{
    jp_parser p = {.err = err, .errsz = errsz, .src_len = strlen(src)};
    *ret = NULL;
    if (strlen(src) > JP_MAX_LEN)
        return perr(&p, JP_MAX_LEN, "longer than %d bytes", JP_MAX_LEN);
    char *owned = NULL;
    if (relaxed && !(owned = relax(src, &p.off_shift)))
        return nomem(&p);
    p.s = owned ? owned : src;
    p.len = strlen(p.s);
    jp_tmpl *t = calloc(1, sizeof(*t));
    int rc = t ? parse_template(&p, t) : nomem(&p);
    if (!rc && relaxed && (t->n != 1 || t->nodes[0].kind != JP_EXPR))
        rc = perr(&p, 0, "expected one path such as .metadata.name");
    free(owned);
    if (rc) {
        jp_free(t);
        return -1;
    }
    *ret = t;
    return 0;
}
