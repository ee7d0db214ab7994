/*
 * shard.c — hash ranges of objects: FNV-1a, even splits, and the `shardSelector` grammar of the
 * API server's sharded list and watch (KEP-5866), with its canonical text form.
 *
 * The parser is a small recursive-descent scanner over the grammar in kcache/shard.h (the API
 * server parses the same text as a CEL AST and accepts only this shape; it never evaluates it):
 * a term is the identifier `shardRange`, '(', a field path, ',', a quoted bound, ',', a quoted
 * bound, ')'; terms are joined by "||". Every error names what was expected and its byte offset.
 * Bounds are checked the server's way: `0x` then exactly 16 lowercase hex digits, or the one
 * 17-digit literal 0x10000000000000000; a shorter bound's message suggests the padded form.
 *
 * A selector stores its ranges as (start, end, end_max) — the top 2^64 does not fit a uint64 —
 * and its canonical text, built once, so that a server echoes it and a client compares the echo
 * without formatting anything per request.
 */
#include "core/internal.h"
#include "kcache/shard.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME  0x100000001b3ULL

struct kc_shard_selector {
    kc_shard_field field;
    size_t n;
    kc_shard_range *r;
    char *text; /* canonical */
};

uint64_t kc_shard_hash(const void *s, size_t len)
{
    const unsigned char *p = s;
    uint64_t h = FNV_OFFSET;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= FNV_PRIME;
    }
    return h;
}

const char *kc_shard_key(const kc_obj *obj, kc_shard_field field)
{
    if (!obj)
        return NULL;
    const char *v;
    switch (field) {
    case KC_SHARD_FIELD_UID:
        v = kc_obj_uid(obj);
        break;
    case KC_SHARD_FIELD_NAMESPACE:
        v = kc_obj_namespace(obj);
        break;
    default:
        return NULL;
    }
    return v ? v : "";
}

bool kc_shard_range_contains(const kc_shard_range *r, uint64_t h)
{
    if (!r)
        return false;
    return h >= r->start && (r->end_max || h < r->end);
}

/* floor(i * 2^64 / n) for i < n, by 128-bit arithmetic. */
static uint64_t split_point(uint64_t n, uint64_t i)
{
    unsigned __int128 v = ((unsigned __int128)i << 64) / n;
    return (uint64_t)v;
}

int kc_shard_range_split(uint64_t n, uint64_t i, kc_shard_range *ret)
{
    if (!ret || n == 0 || i >= n)
        return KC_EINVAL;
    ret->start = split_point(n, i);
    ret->end_max = i + 1 == n;
    ret->end = ret->end_max ? 0 : split_point(n, i + 1);
    return 0;
}

/* ---- parsing ------------------------------------------------------------------------------ */

typedef struct {
    const char *s;
    size_t i, n;
    kc_error *err;
} scan;

static int perr(scan *sc, size_t at, const char *fmt, ...) KC__PRINTF(3, 4);
static int perr(scan *sc, size_t at, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kc_error_set(sc->err, KC_EINVAL, "invalid shard selector: %s at offset %zu", msg, at);
    if (sc->err)
        sc->err->offset = (int64_t)at;
    return KC_EINVAL;
}

static void skip_ws(scan *sc)
{
    while (sc->i < sc->n && (sc->s[sc->i] == ' ' || sc->s[sc->i] == '\t' || sc->s[sc->i] == '\n' ||
                             sc->s[sc->i] == '\r'))
        sc->i++;
}

static bool eat(scan *sc, const char *tok)
{
    skip_ws(sc);
    size_t k = strlen(tok);
    if (sc->n - sc->i >= k && memcmp(sc->s + sc->i, tok, k) == 0) {
        sc->i += k;
        return true;
    }
    return false;
}

static int expect(scan *sc, const char *tok)
{
    if (eat(sc, tok))
        return 0;
    return perr(sc, sc->i, "expected '%s'", tok);
}

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.';
}

static int parse_field(scan *sc, kc_shard_field *ret)
{
    skip_ws(sc);
    size_t at = sc->i;
    while (sc->i < sc->n && ident_char(sc->s[sc->i]))
        sc->i++;
    size_t len = sc->i - at;
    if (len == 19 && memcmp(sc->s + at, "object.metadata.uid", 19) == 0)
        *ret = KC_SHARD_FIELD_UID;
    else if (len == 25 && memcmp(sc->s + at, "object.metadata.namespace", 25) == 0)
        *ret = KC_SHARD_FIELD_NAMESPACE;
    else
        return perr(sc, at,
                    "unsupported field '%.*s' (want object.metadata.uid or "
                    "object.metadata.namespace)",
                    (int)(len > 64 ? 64 : len), sc->s + at);
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* A quoted bound: *ret and *top (2^64). */
static int parse_bound(scan *sc, uint64_t *ret, bool *top)
{
    skip_ws(sc);
    size_t at = sc->i;
    if (sc->i >= sc->n || (sc->s[sc->i] != '\'' && sc->s[sc->i] != '"'))
        return perr(sc, at, "expected a quoted hex bound such as '0x0000000000000000'");
    char q = sc->s[sc->i++];
    size_t b = sc->i;
    while (sc->i < sc->n && sc->s[sc->i] != q)
        sc->i++;
    if (sc->i >= sc->n)
        return perr(sc, at, "unterminated string");
    size_t len = sc->i - b;
    const char *v = sc->s + b;
    sc->i++; /* closing quote */
    if (len < 2 || v[0] != '0' || v[1] != 'x')
        return perr(sc, b, "bound '%.*s' does not start with 0x", (int)(len > 40 ? 40 : len), v);
    size_t nd = len - 2;
    if (nd == 0)
        return perr(sc, b, "bound '0x' has no digits");
    for (size_t k = 0; k < nd; k++)
        if (hexval(v[2 + k]) < 0)
            return perr(sc, b + 2 + k, "bound '%.*s': '%c' is not a lowercase hex digit",
                        (int)(len > 40 ? 40 : len), v, v[2 + k]);
    if (nd == 17) {
        if (memcmp(v + 2, "10000000000000000", 17) != 0)
            return perr(sc, b, "bound '%.*s' is above 0x10000000000000000", (int)len, v);
        *ret = 0;
        *top = true;
        return 0;
    }
    if (nd > 17)
        return perr(sc, b, "bound '%.*s' has more than 17 hex digits", (int)(len > 40 ? 40 : len),
                    v);
    if (nd < 16) {
        char pad[17];
        memset(pad, '0', 16 - nd);
        memcpy(pad + 16 - nd, v + 2, nd);
        pad[16] = '\0';
        return perr(sc, b, "bound '%.*s' must have exactly 16 hex digits (did you mean '0x%s'?)",
                    (int)len, v, pad);
    }
    uint64_t x = 0;
    for (size_t k = 0; k < 16; k++)
        x = (x << 4) | (uint64_t)hexval(v[2 + k]);
    *ret = x;
    *top = false;
    return 0;
}

static int parse_term(scan *sc, kc_shard_field *field, kc_shard_range *r)
{
    size_t at = (skip_ws(sc), sc->i);
    if (!eat(sc, "shardRange"))
        return perr(sc, at, "expected shardRange(field, 'start', 'end')");
    /* `shardRangeX(` is another function: the identifier must end here. */
    if (sc->i < sc->n && ident_char(sc->s[sc->i]))
        return perr(sc, at, "unknown function (only shardRange is supported)");
    int rc;
    uint64_t start;
    bool start_top;
    if ((rc = expect(sc, "(")) || (rc = parse_field(sc, field)) || (rc = expect(sc, ",")))
        return rc;
    size_t sat = (skip_ws(sc), sc->i);
    if ((rc = parse_bound(sc, &start, &start_top)) || (rc = expect(sc, ",")))
        return rc;
    if ((rc = parse_bound(sc, &r->end, &r->end_max)) || (rc = expect(sc, ")")))
        return rc;
    if (start_top || (!r->end_max && start >= r->end))
        return perr(sc, sat, "start must be less than end");
    r->start = start;
    return 0;
}

static int build_text(kc_shard_selector *s)
{
    static const char *names[] = {"", "object.metadata.uid", "object.metadata.namespace"};
    const char *f = names[s->field];
    size_t per =
        strlen("shardRange(, '0x0000000000000000', '0x10000000000000000') || ") + strlen(f);
    s->text = malloc(per * s->n + 1);
    if (!s->text)
        return KC_ENOMEM;
    char *p = s->text;
    for (size_t i = 0; i < s->n; i++) {
        const kc_shard_range *r = &s->r[i];
        char end[24];
        if (r->end_max)
            snprintf(end, sizeof end, "0x10000000000000000");
        else
            snprintf(end, sizeof end, "0x%016llx", (unsigned long long)r->end);
        p += sprintf(p, "%sshardRange(%s, '0x%016llx', '%s')", i ? " || " : "", f,
                     (unsigned long long)r->start, end);
    }
    return 0;
}

void kc_shard_selector_free(kc_shard_selector *sel)
{
    if (!sel)
        return;
    free(sel->r);
    free(sel->text);
    free(sel);
}

static int finish(kc_shard_selector *s, kc_shard_selector **ret_sel, kc_error *err)
{
    if (build_text(s) < 0) {
        kc_shard_selector_free(s);
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    *ret_sel = s;
    return 0;
}

static int parse_terms(scan *sc, kc_shard_selector *s)
{
    size_t cap = 0;
    for (;;) {
        if (s->n == KC_SHARD_SELECTOR_MAX_TERMS) {
            kc_error_set(sc->err, KC_ETOOLARGE, "shard selector has more than %d terms",
                         KC_SHARD_SELECTOR_MAX_TERMS);
            return KC_ETOOLARGE;
        }
        if (kc__grow(&s->r, &cap, s->n + 1, sizeof *s->r, 4) < 0)
            return kc_error_set(sc->err, KC_ENOMEM, "out of memory");
        kc_shard_field f = KC_SHARD_FIELD_NONE;
        size_t at = (skip_ws(sc), sc->i);
        int rc = parse_term(sc, &f, &s->r[s->n]);
        if (rc < 0)
            return rc;
        if (s->n > 0 && f != s->field)
            return perr(sc, at, "all terms must use the same field");
        s->field = f;
        s->n++;
        skip_ws(sc);
        if (sc->i == sc->n)
            return 0;
        if (!eat(sc, "||"))
            return perr(sc, sc->i, "expected '||' or the end (only || joins terms)");
    }
}

int kc_shard_selector_parse(const char *text, kc_shard_selector **ret_sel, kc_error *err)
{
    if (!ret_sel)
        return kc_error_set(err, KC_EINVAL, "ret_sel is NULL");
    *ret_sel = NULL;
    if (!text)
        return kc_error_set(err, KC_EINVAL, "invalid shard selector: empty");
    size_t n = strnlen(text, KC_SHARD_SELECTOR_MAX_LEN + 1);
    if (n > KC_SHARD_SELECTOR_MAX_LEN)
        return kc_error_set(err, KC_ETOOLARGE, "shard selector longer than %d bytes",
                            KC_SHARD_SELECTOR_MAX_LEN);
    scan sc = {.s = text, .i = 0, .n = n, .err = err};
    skip_ws(&sc);
    if (sc.i == n)
        return perr(&sc, 0, "empty selector");
    kc_shard_selector *s = calloc(1, sizeof *s);
    if (!s)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    int rc = parse_terms(&sc, s);
    if (rc < 0) {
        kc_shard_selector_free(s);
        return rc;
    }
    return finish(s, ret_sel, err);
}

int kc_shard_selector_new(kc_shard_field field, const kc_shard_range *ranges, size_t n,
                          kc_shard_selector **ret_sel, kc_error *err)
{
    if (!ret_sel)
        return kc_error_set(err, KC_EINVAL, "ret_sel is NULL");
    *ret_sel = NULL;
    if (field != KC_SHARD_FIELD_UID && field != KC_SHARD_FIELD_NAMESPACE)
        return kc_error_set(err, KC_EINVAL, "shard field %d is not uid or namespace", (int)field);
    if (!ranges || n == 0 || n > KC_SHARD_SELECTOR_MAX_TERMS)
        return kc_error_set(err, KC_EINVAL, "need 1 to %d ranges, got %zu",
                            KC_SHARD_SELECTOR_MAX_TERMS, ranges ? n : 0);
    for (size_t i = 0; i < n; i++)
        if (!ranges[i].end_max && ranges[i].start >= ranges[i].end)
            return kc_error_set(err, KC_EINVAL, "shard range %zu is empty (start >= end)", i);
    kc_shard_selector *s = calloc(1, sizeof *s);
    if (!s || !(s->r = malloc(n * sizeof *s->r))) {
        free(s);
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    s->field = field;
    s->n = n;
    for (size_t i = 0; i < n; i++) {
        s->r[i] = ranges[i];
        if (s->r[i].end_max)
            s->r[i].end = 0;
    }
    return finish(s, ret_sel, err);
}

const char *kc_shard_selector_string(const kc_shard_selector *sel)
{
    return sel ? sel->text : NULL;
}

kc_shard_field kc_shard_selector_field(const kc_shard_selector *sel)
{
    return sel ? sel->field : KC_SHARD_FIELD_NONE;
}

size_t kc_shard_selector_count(const kc_shard_selector *sel)
{
    return sel ? sel->n : 0;
}

const kc_shard_range *kc_shard_selector_range(const kc_shard_selector *sel, size_t i)
{
    return sel && i < sel->n ? &sel->r[i] : NULL;
}

bool kc_shard_selector_match_hash(const kc_shard_selector *sel, uint64_t h)
{
    if (!sel)
        return true;
    for (size_t i = 0; i < sel->n; i++)
        if (kc_shard_range_contains(&sel->r[i], h))
            return true;
    return false;
}

bool kc_shard_selector_match(const kc_shard_selector *sel, const kc_obj *obj)
{
    if (!sel)
        return true;
    const char *k = kc_shard_key(obj, sel->field);
    if (!k)
        return false;
    return kc_shard_selector_match_hash(sel, kc_shard_hash(k, strlen(k)));
}
