/*
 * selector_label.c — label selectors, a faithful port of k8s.io/apimachinery labels.Parse.
 *
 * Two passes, as upstream: a lexer turns the whole text into tokens (identifiers are runs of bytes
 * that are neither whitespace nor one of = ! ( ) , > <; "in"/"notin" are keywords only where an
 * operator is expected), then a recursive-descent parser builds requirements. Keys are validated as
 * Kubernetes qualified names, values as label values; the set of an in/notin is sorted and
 * de-duplicated (`in ()` is the set {""}, exactly like upstream). Requirements are sorted by key
 * (stable), which gives the canonical string form. The parsed selector is immutable, so matching
 * needs no lock. Errors carry upstream's wording and the byte offset of the offending token.
 * Key and value syntax checks live in core/names.c (shared with the server).
 */
#include "core/internal.h"
#include "kcache/selector.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Longest selector text accepted (bytes). */
#define LABEL_SELECTOR_MAX_LEN ((size_t)256 * 1024)

enum op { OP_EXISTS, OP_NOT_EXISTS, OP_EQ, OP_DEQ, OP_NEQ, OP_IN, OP_NOTIN, OP_GT, OP_LT };

struct req {
    char *key;
    enum op op;
    size_t n_values;
    char **values; /* sorted, unique */
    int64_t num;   /* OP_GT / OP_LT operand */
};

struct kc_label_selector {
    size_t n;
    struct req *reqs;
};

/* ---- lexer ----------------------------------------------------------------------------------- */

enum tok {
    T_END,
    T_CPAR,
    T_COMMA,
    T_NOT,
    T_DEQ,
    T_EQ,
    T_GT,
    T_ID,
    T_IN,
    T_LT,
    T_NEQ,
    T_NOTIN,
    T_OPAR
};

struct token {
    enum tok type;
    size_t start, len;
};

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_special(char c)
{
    return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

/* Tokenise text into toks (capacity len + 1 always suffices). Returns the count. */
static size_t lex(const char *s, size_t len, struct token *toks)
{
    size_t n = 0, i = 0;
    for (;;) {
        while (i < len && is_ws(s[i]))
            i++;
        struct token *t = &toks[n++];
        t->start = i;
        if (i >= len) {
            t->type = T_END;
            t->len = 0;
            return n;
        }
        char c = s[i];
        if (is_special(c)) {
            char d = i + 1 < len ? s[i + 1] : '\0';
            t->len = 1;
            switch (c) {
            case '!':
                t->type = d == '=' ? T_NEQ : T_NOT;
                t->len = d == '=' ? 2 : 1;
                break;
            case '=':
                t->type = d == '=' ? T_DEQ : T_EQ;
                t->len = d == '=' ? 2 : 1;
                break;
            case '(':
                t->type = T_OPAR;
                break;
            case ')':
                t->type = T_CPAR;
                break;
            case ',':
                t->type = T_COMMA;
                break;
            case '>':
                t->type = T_GT;
                break;
            default:
                t->type = T_LT;
                break;
            }
            i += t->len;
            continue;
        }
        while (i < len && !is_special(s[i]) && !is_ws(s[i]))
            i++;
        t->len = i - t->start;
        t->type = T_ID;
        if (kc__streq_n(s + t->start, t->len, "in"))
            t->type = T_IN;
        else if (kc__streq_n(s + t->start, t->len, "notin"))
            t->type = T_NOTIN;
    }
}

/* strconv.ParseInt(s, 10, 64): optional sign, at least one digit, no overflow. */
static bool parse_int64(const char *s, int64_t *ret)
{
    if (!s || !*s)
        return false;
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (!*p)
        return false;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9')
            return false;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE)
        return false;
    *ret = (int64_t)v;
    return true;
}

/* ---- parser ---------------------------------------------------------------------------------- */

struct parser {
    const char *s;
    struct token *toks;
    size_t pos;
    struct req *reqs;
    size_t n_reqs, cap_reqs;
    kc_error *err;
};

/* In a values context "in"/"notin" are plain identifiers. */
static enum tok tok_as_value(enum tok t)
{
    return (t == T_IN || t == T_NOTIN) ? T_ID : t;
}

static const struct token *peek(struct parser *p)
{
    return &p->toks[p->pos];
}

static const struct token *next(struct parser *p)
{
    const struct token *t = &p->toks[p->pos];
    if (t->type != T_END)
        p->pos++;
    return t;
}

/* "[unable to parse requirement: ]found '<token text>'<expected>" with the token's offset. */
static int fail_found(struct parser *p, const struct token *t, bool in_req, const char *expected)
{
    kc_error_set(p->err, KC_EINVAL, "%sfound '%.*s%s",
                 in_req ? "unable to parse requirement: " : "", (int)t->len, p->s + t->start,
                 expected);
    if (p->err)
        p->err->offset = (int64_t)t->start;
    return KC_EINVAL;
}

static void req_clear(struct req *r)
{
    free(r->key);
    for (size_t i = 0; i < r->n_values; i++)
        free(r->values[i]);
    free(r->values);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add the span as a value of r unless present (sorted/unique is fixed up at the end). */
static int add_value(struct parser *p, struct req *r, const struct token *t, const char *v,
                     size_t n)
{
    const char *why = kc__check_label_value(v, n);
    if (why) {
        kc_error_set(p->err, KC_EINVAL,
                     "unable to parse requirement: values[%zu][%s]: Invalid value: \"%.*s\": %s",
                     r->n_values, r->key, (int)n, v, why);
        if (p->err)
            p->err->offset = (int64_t)t->start;
        return KC_EINVAL;
    }
    for (size_t i = 0; i < r->n_values; i++)
        if (kc__streq_n(v, n, r->values[i]))
            return 0;
    char **vals = realloc(r->values, (r->n_values + 1) * sizeof *vals);
    if (!vals)
        return kc_error_set(p->err, KC_ENOMEM, "out of memory");
    r->values = vals;
    if (!(vals[r->n_values] = kc__strdup_n(v, n)))
        return kc_error_set(p->err, KC_ENOMEM, "out of memory");
    r->n_values++;
    return 0;
}

/* parseIdentifiersList: "(" already consumed; handles "a,b", ",a", "a,", "a,,b". */
static int parse_identifiers_list(struct parser *p, struct req *r)
{
    for (;;) {
        const struct token *t = next(p);
        enum tok tt = tok_as_value(t->type);
        int rc;
        if (tt == T_ID) {
            if ((rc = add_value(p, r, t, p->s + t->start, t->len)) < 0)
                return rc;
            const struct token *n = peek(p);
            enum tok nt = tok_as_value(n->type);
            if (nt == T_COMMA)
                continue;
            if (nt == T_CPAR)
                return 0;
            return fail_found(p, n, true, "', expected: ',' or ')'");
        } else if (tt == T_COMMA) {
            if (r->n_values == 0 && (rc = add_value(p, r, t, "", 0)) < 0)
                return rc;
            enum tok nt = tok_as_value(peek(p)->type);
            if (nt == T_CPAR)
                return add_value(p, r, t, "", 0);
            if (nt == T_COMMA) {
                next(p);
                if ((rc = add_value(p, r, t, "", 0)) < 0)
                    return rc;
            }
        } else {
            return fail_found(p, t, true, "', expected: ',', or identifier");
        }
    }
}

static int parse_values(struct parser *p, struct req *r)
{
    const struct token *t = next(p);
    if (tok_as_value(t->type) != T_OPAR)
        return fail_found(p, t, true, "' expected: '('");
    const struct token *la = peek(p);
    enum tok lt = tok_as_value(la->type);
    if (lt == T_ID || lt == T_COMMA) {
        int rc = parse_identifiers_list(p, r);
        if (rc < 0)
            return rc;
        const struct token *c = next(p);
        if (tok_as_value(c->type) != T_CPAR)
            return fail_found(p, la, true, "', expected: ')'");
        return 0;
    }
    if (lt == T_CPAR) { /* "()" is the set {""} */
        next(p);
        return add_value(p, r, la, "", 0);
    }
    return fail_found(p, la, true, "', expected: ',', ')' or identifier");
}

static int parse_exact_value(struct parser *p, struct req *r)
{
    const struct token *t = peek(p);
    enum tok tt = tok_as_value(t->type);
    if (tt == T_END || tt == T_COMMA)
        return add_value(p, r, t, "", 0);
    next(p);
    if (tt == T_ID)
        return add_value(p, r, t, p->s + t->start, t->len);
    return fail_found(p, t, true, "', expected: identifier");
}

static int parse_requirement(struct parser *p, struct req *r)
{
    /* parseKeyAndInferOperator */
    bool not_exists = false;
    const struct token *t = next(p);
    if (tok_as_value(t->type) == T_NOT) {
        not_exists = true;
        t = next(p);
    }
    if (tok_as_value(t->type) != T_ID)
        return fail_found(p, t, true, "', expected: identifier");
    const char *why = kc__check_qualified_name(p->s + t->start, t->len);
    if (why) {
        kc_error_set(p->err, KC_EINVAL, "unable to parse requirement: Invalid value: \"%.*s\": %s",
                     (int)t->len, p->s + t->start, why);
        if (p->err)
            p->err->offset = (int64_t)t->start;
        return KC_EINVAL;
    }
    if (!(r->key = kc__strdup_n(p->s + t->start, t->len)))
        return kc_error_set(p->err, KC_ENOMEM, "out of memory");
    enum tok la = tok_as_value(peek(p)->type);
    if (not_exists) {
        r->op = OP_NOT_EXISTS; /* whatever follows must be ',' or the end (checked by caller) */
        return 0;
    }
    if (la == T_END || la == T_COMMA) {
        r->op = OP_EXISTS;
        return 0;
    }
    /* parseOperator: here "in"/"notin" are keywords */
    const struct token *o = next(p);
    switch (o->type) {
    case T_IN:
        r->op = OP_IN;
        return parse_values(p, r);
    case T_NOTIN:
        r->op = OP_NOTIN;
        return parse_values(p, r);
    case T_EQ:
        r->op = OP_EQ;
        break;
    case T_DEQ:
        r->op = OP_DEQ;
        break;
    case T_NEQ:
        r->op = OP_NEQ;
        break;
    case T_GT:
        r->op = OP_GT;
        break;
    case T_LT:
        r->op = OP_LT;
        break;
    default:
        return fail_found(p, o, true, "', expected: in, notin, =, ==, !=, gt, lt");
    }
    const struct token *vt = peek(p);
    int rc = parse_exact_value(p, r);
    if (rc < 0)
        return rc;
    if ((r->op == OP_GT || r->op == OP_LT) && !parse_int64(r->values[0], &r->num)) {
        kc_error_set(p->err, KC_EINVAL,
                     "unable to parse requirement: values[0]: Invalid value: \"%s\": for 'Gt', "
                     "'Lt' operators, the value must be an integer",
                     r->values[0]);
        if (p->err)
            p->err->offset = (int64_t)vt->start;
        return KC_EINVAL;
    }
    return 0;
}

static int push_req(struct parser *p, struct req **ret)
{
    if (kc__grow(&p->reqs, &p->cap_reqs, p->n_reqs + 1, sizeof *p->reqs, 4) < 0)
        return kc_error_set(p->err, KC_ENOMEM, "out of memory");
    *ret = &p->reqs[p->n_reqs++];
    memset(*ret, 0, sizeof **ret);
    return 0;
}

static int parse_all(struct parser *p)
{
    for (;;) {
        const struct token *t = peek(p);
        enum tok tt = tok_as_value(t->type);
        if (tt == T_END)
            return 0;
        if (tt != T_ID && tt != T_NOT)
            return fail_found(p, t, false, "', expected: !, identifier, or 'end of string'");
        struct req *r = NULL;
        int rc = push_req(p, &r);
        if (rc < 0)
            return rc;
        if ((rc = parse_requirement(p, r)) < 0)
            return rc;
        const struct token *after = next(p);
        enum tok at = tok_as_value(after->type);
        if (at == T_END)
            return 0;
        if (at != T_COMMA)
            return fail_found(p, after, false, "', expected: ',' or 'end of string'");
        const struct token *la = peek(p);
        enum tok lt = tok_as_value(la->type);
        if (lt != T_ID && lt != T_NOT)
            return fail_found(p, la, false, "', expected: identifier after ','");
    }
}

/* Stable insertion sort by key (selectors are short). */
static void sort_reqs(struct req *reqs, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        struct req x = reqs[i];
        size_t j = i;
        while (j > 0 && strcmp(reqs[j - 1].key, x.key) > 0) {
            reqs[j] = reqs[j - 1];
            j--;
        }
        reqs[j] = x;
    }
}

int kc_label_selector_parse(const char *text, kc_label_selector **ret_sel, kc_error *err)
{
    if (!ret_sel)
        return kc_error_set(err, KC_EINVAL, "ret_sel is NULL");
    size_t len = text ? strlen(text) : 0;
    if (len > LABEL_SELECTOR_MAX_LEN)
        return kc_error_set(err, KC_ETOOLARGE, "label selector longer than %zu bytes",
                            LABEL_SELECTOR_MAX_LEN);
    struct parser p = {.s = text ? text : "", .err = err};
    p.toks = malloc((len + 1) * sizeof *p.toks);
    kc_label_selector *sel = calloc(1, sizeof *sel);
    if (!p.toks || !sel) {
        free(p.toks);
        free(sel);
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    lex(p.s, len, p.toks);
    int rc = parse_all(&p);
    free(p.toks);
    if (rc < 0) {
        for (size_t i = 0; i < p.n_reqs; i++)
            req_clear(&p.reqs[i]);
        free(p.reqs);
        free(sel);
        return rc;
    }
    for (size_t i = 0; i < p.n_reqs; i++)
        if (p.reqs[i].n_values > 1)
            qsort(p.reqs[i].values, p.reqs[i].n_values, sizeof(char *), cmp_str);
    sort_reqs(p.reqs, p.n_reqs);
    sel->reqs = p.reqs;
    sel->n = p.n_reqs;
    *ret_sel = sel;
    return 0;
}

void kc_label_selector_free(kc_label_selector *sel)
{
    if (!sel)
        return;
    for (size_t i = 0; i < sel->n; i++)
        req_clear(&sel->reqs[i]);
    free(sel->reqs);
    free(sel);
}

bool kc_label_selector_empty(const kc_label_selector *sel)
{
    return !sel || sel->n == 0;
}

/* ---- matching -------------------------------------------------------------------------------- */

static bool has_value(const struct req *r, const char *v)
{
    for (size_t i = 0; i < r->n_values; i++)
        if (strcmp(r->values[i], v) == 0)
            return true;
    return false;
}

static bool req_matches(const struct req *r, const char *v /* NULL = absent */)
{
    int64_t n;
    switch (r->op) {
    case OP_IN:
    case OP_EQ:
    case OP_DEQ:
        return v && has_value(r, v);
    case OP_NOTIN:
    case OP_NEQ:
        return !v || !has_value(r, v); /* #62: objects lacking the key match */
    case OP_EXISTS:
        return v != NULL;
    case OP_NOT_EXISTS:
        return v == NULL;
    case OP_GT:
        return v && parse_int64(v, &n) && n > r->num;
    case OP_LT:
        return v && parse_int64(v, &n) && n < r->num;
    }
    return false;
}

bool kc_label_selector_match_fn(const kc_label_selector *sel, kc_label_lookup_fn lookup, void *ud)
{
    if (!sel)
        return true;
    for (size_t i = 0; i < sel->n; i++)
        if (!req_matches(&sel->reqs[i], lookup(ud, sel->reqs[i].key)))
            return false;
    return true;
}

static const char *obj_lookup(void *ud, const char *key)
{
    return kc_obj_label((const kc_obj *)ud, key);
}

bool kc_label_selector_match(const kc_label_selector *sel, const kc_obj *obj)
{
    return kc_label_selector_match_fn(sel, obj_lookup, (void *)obj);
}

/* ---- canonical string ------------------------------------------------------------------------ */

char *kc_label_selector_string(const kc_label_selector *sel)
{
    static const char *const ops[] = {
        [OP_EQ] = "=",          [OP_DEQ] = "==", [OP_NEQ] = "!=", [OP_IN] = " in ",
        [OP_NOTIN] = " notin ", [OP_GT] = ">",   [OP_LT] = "<",
    };
    kc__buf b = KC__BUF_INIT(0);
    int rc = 0;
    for (size_t i = 0; sel && i < sel->n && rc == 0; i++) {
        const struct req *r = &sel->reqs[i];
        if (i)
            rc = kc__buf_append_char(&b, ',');
        if (rc == 0 && r->op == OP_NOT_EXISTS)
            rc = kc__buf_append_char(&b, '!');
        if (rc == 0)
            rc = kc__buf_append_str(&b, r->key);
        if (rc || r->op == OP_EXISTS || r->op == OP_NOT_EXISTS)
            continue;
        bool set = r->op == OP_IN || r->op == OP_NOTIN;
        rc = kc__buf_append_str(&b, ops[r->op]);
        if (rc == 0 && set)
            rc = kc__buf_append_char(&b, '(');
        for (size_t v = 0; rc == 0 && v < r->n_values; v++) {
            if (v)
                rc = kc__buf_append_char(&b, ',');
            if (rc == 0)
                rc = kc__buf_append_str(&b, r->values[v]);
        }
        if (rc == 0 && set)
            rc = kc__buf_append_char(&b, ')');
    }
    if (rc < 0) {
        kc__buf_free(&b);
        return NULL;
    }
    return kc__buf_steal(&b, NULL);
}
