/*
 * fuzz_doc.c — libFuzzer target for kc_doc (kcache/doc.h) and kc_base64_*.
 *
 * Input: a JSON text, then a line "%%", then up to 32 operation lines "<op><pointer>[ <arg>]":
 *   s ptr str   kc_doc_set_string          i ptr num   kc_doc_set_int (strtoll of arg)
 *   f ptr num   kc_doc_set_double          r ptr json  kc_doc_set_raw
 *   c ptr       kc_doc_set_doc of the original document
 *   d ptr       kc_doc_remove              g ptr       every getter, kc_doc_has/type/count
 *   n ptr       iterate (every accessor)   x ptr       kc_doc_merge_diff(original, current, ptr)
 *   b text      base64: encode/decode text, decode text
 * Invariants: every error carries its code and a message; kc_doc_json's text re-parses to an equal
 * document and is deterministic; a copy is equal; merge_diff(a, a) is "{}" and every patch
 * parses as JSON and, applied to the original (RFC 7386, here), gives the edited document unless
 * that holds a null (which merge patches cannot set); a document that kc_doc_to_obj accepts comes
 * back equal (less metadata.managedFields, which the stored object drops) from kc_doc_from_obj,
 * whichever tree builder is used; base64 round-trips.
 */
#include "kcache/doc.h"

#include "json/doc_internal.h" /* kc__doc_from_obj_with: both builders */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_err(int rc, kc_error *err)
{
    if (rc > 0 || (rc && (err->code != rc || !err->message || !err->message[0])))
        abort();
    if (rc && rc != KC_ENOTFOUND && rc != KC_EINVAL && rc != KC_EPARSE && rc != KC_ETOOLARGE &&
        rc != KC_ENOMEM)
        abort();
    kc_error_clear(err);
}

static char *text_of(const kc_doc *d, size_t *n)
{
    kc_error err = KC_ERROR_INIT;
    char *s = NULL;
    if (kc_doc_json(d, &s, n, &err) != 0)
        abort();
    if (strlen(s) != *n)
        abort();
    return s;
}

/* The text re-parses to an equal document; a copy is equal; output is deterministic. */
static void check_doc(const kc_doc *d)
{
    size_t n, n2;
    char *s = text_of(d, &n);
    kc_doc *p = NULL, *c = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_doc_parse(s, n, &p, &err);
    check_err(rc, &err);
    if (rc == 0 && !kc_doc_equal(d, p))
        abort();
    if (rc && rc != KC_ETOOLARGE) /* only the size bound may refuse our own output */
        abort();
    if (kc_doc_copy(d, &c, &err) != 0 || !kc_doc_equal(c, d))
        abort();
    char *s2 = text_of(c, &n2);
    if (n != n2 || memcmp(s, s2, n) != 0)
        abort();
    free(s);
    free(s2);
    kc_doc_free(p);
    kc_doc_free(c);
}

/* A document accepted by kc_doc_to_obj comes back equal from kc_doc_from_obj (both builders). */
static void check_obj(const kc_doc *d)
{
    kc_obj *o = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_doc_to_obj(d, &o, &err);
    check_err(rc, &err);
    if (rc)
        return;
    kc_doc *want = NULL;
    if (kc_doc_copy(d, &want, NULL) != 0)
        abort();
    kc_doc_remove(want, "/metadata/managedFields", NULL);
    for (int how = 0; how < 2; how++) {
        kc_doc *back = NULL;
        rc = kc__doc_from_obj_with(o, how ? KC__DOC_BUILD_SIMDJSON : KC__DOC_BUILD_JANSSON, &back,
                                   &err);
        check_err(rc, &err);
        if (rc || !kc_doc_equal(back, want))
            abort();
        kc_doc_free(back);
    }
    kc_doc_free(want);
    kc_obj_unref(o);
}

static void op_get(const kc_doc *d, const char *ptr)
{
    kc_error err = KC_ERROR_INIT;
    const char *s;
    size_t n;
    int64_t i;
    double f;
    bool b;
    char *raw;
    kc_json_type t;
    int rc = kc_doc_get_string(d, ptr, &s, &n, &err);
    if (rc == 0 && s[n] != '\0')
        abort();
    check_err(rc, &err);
    check_err(kc_doc_get_int(d, ptr, &i, &err), &err);
    check_err(kc_doc_get_double(d, ptr, &f, &err), &err);
    check_err(kc_doc_get_bool(d, ptr, &b, &err), &err);
    check_err(kc_doc_count(d, ptr, &n, &err), &err);
    rc = kc_doc_type(d, ptr, &t, &err);
    check_err(rc, &err);
    if ((rc == 0) != kc_doc_has(d, ptr))
        abort();
    rc = kc_doc_get_raw(d, ptr, &raw, &n, &err);
    check_err(rc, &err);
    if (rc == 0) {
        kc_doc *p = NULL;
        if (strlen(raw) != n || kc_doc_parse(raw, n, &p, NULL) != 0 || kc_doc_type(p, "", &t, NULL))
            abort();
        kc_doc_free(p);
        free(raw);
    }
}

static void op_iter(const kc_doc *d, const char *ptr)
{
    kc_doc_iter *it = NULL;
    kc_error err = KC_ERROR_INIT;
    size_t count = 0, want = 0;
    int rc = kc_doc_iter_new(d, ptr, &it, &err);
    check_err(rc, &err);
    if (rc)
        return;
    if (kc_doc_count(d, ptr, &want, NULL) != 0)
        abort();
    while (kc_doc_iter_next(it) == 1) {
        count++;
        const char *s;
        int64_t i;
        double f;
        bool b;
        char *raw = NULL;
        size_t n;
        kc_doc_iter_key(it, &n);
        kc_doc_iter_type(it);
        kc_doc_iter_string(it, &s, &n);
        kc_doc_iter_int(it, &i);
        kc_doc_iter_double(it, &f);
        kc_doc_iter_bool(it, &b);
        if (kc_doc_iter_raw(it, &raw, &n) != 0 || strlen(raw) != n)
            abort();
        free(raw);
    }
    if (count != want)
        abort();
    kc_doc_iter_free(it);
}

static void op_diff(const kc_doc *a, const kc_doc *b, const char *ptr)
{
    kc_error err = KC_ERROR_INIT;
    char *p = NULL;
    size_t n;
    /* Nothing to change is "{}" — except between whole non-objects, whose patch is the target. */
    kc_json_type t = KC_JSON_NULL;
    kc_doc_type(a, "", &t, NULL);
    bool whole_scalar = (!ptr || !*ptr) && t != KC_JSON_OBJECT;
    int rc = kc_doc_merge_diff(a, a, ptr, &p, &n, &err);
    check_err(rc, &err);
    if (rc == 0 && !whole_scalar && strcmp(p, "{}") != 0)
        abort();
    free(p);
    rc = kc_doc_merge_diff(a, b, ptr, &p, &n, &err);
    check_err(rc, &err);
    if (rc == 0) {
        kc_doc *pd = NULL;
        int r2 = kc_doc_parse(p, n, &pd, &err);
        check_err(r2, &err);
        if (r2 && r2 != KC_ETOOLARGE)
            abort();
        if (kc_doc_equal(a, b) && !whole_scalar && strcmp(p, "{}") != 0)
            abort();
        kc_doc_free(pd);
        free(p);
    }
}

/* RFC 7386 section 2: apply patch to target (consumed); a new value. */
static json_t *merge_apply(json_t *target, const json_t *patch)
{
    if (!json_is_object(patch)) {
        json_decref(target);
        return json_deep_copy(patch);
    }
    if (!json_is_object(target)) {
        json_decref(target);
        target = json_object();
    }
    const char *k;
    size_t kn;
    json_t *v;
    json_object_keylen_foreach((json_t *)patch, k, kn, v)
    {
        if (json_is_null(v)) {
            json_object_deln(target, k, kn);
        } else {
            json_t *cur = json_object_getn(target, k, kn);
            json_object_setn_new(target, k, kn, merge_apply(json_incref(cur), v));
        }
    }
    return target;
}

/* Applying merge_diff(a, b) to a gives b — unless b holds a null, which a merge patch cannot set.
 */
static void check_patch_applies(const kc_doc *a, const kc_doc *b)
{
    size_t n;
    char *bt = text_of(b, &n), *p = NULL;
    if (strstr(bt, "null")) {
        free(bt);
        return;
    }
    if (kc_doc_merge_diff(a, b, NULL, &p, &n, NULL) != 0)
        abort();
    json_t *patch = json_loadb(p, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (!patch)
        abort();
    json_t *got = merge_apply(json_deep_copy(a->root), patch);
    if (!got || !kc__doc_jequal(got, b->root))
        abort();
    json_decref(got);
    json_decref(patch);
    free(p);
    free(bt);
}

static void op_base64(const char *s, size_t n)
{
    kc_error err = KC_ERROR_INIT;
    char *e = NULL;
    size_t en;
    unsigned char *d = NULL;
    size_t dn;
    if (kc_base64_encode(s, n, &e, &en, &err) != 0 || en != (n + 2) / 3 * 4)
        abort();
    if (kc_base64_decode(e, en, &d, &dn, &err) != 0 || dn != n || memcmp(d, s, n) != 0)
        abort();
    free(d);
    free(e);
    int rc = kc_base64_decode(s, n, &d, &dn, &err);
    check_err(rc, &err);
    if (rc == 0) {
        if (n % 4 != 0 || dn > n / 4 * 3 || d[dn] != '\0')
            abort();
        free(d);
    }
}

/* One operation line (NUL-terminated, without its newline). */
static void run_line(kc_doc *d, const kc_doc *orig, char *line)
{
    char op = line[0];
    if (op == 'b') {
        op_base64(line + 1, strlen(line + 1));
        return;
    }
    char *ptr = line + 1, *arg = strchr(ptr, ' ');
    if (arg)
        *arg++ = '\0';
    kc_error err = KC_ERROR_INIT;
    int rc = 0;
    switch (op) {
    case 's':
        rc = kc_doc_set_string(d, ptr, arg ? arg : "", &err);
        break;
    case 'i':
        rc = kc_doc_set_int(d, ptr, arg ? strtoll(arg, NULL, 10) : 0, &err);
        break;
    case 'f':
        rc = kc_doc_set_double(d, ptr, arg ? strtod(arg, NULL) : 0.5, &err);
        break;
    case 'r':
        rc = kc_doc_set_raw(d, ptr, arg ? arg : "", arg ? strlen(arg) : 0, &err);
        break;
    case 'c':
        rc = kc_doc_set_doc(d, ptr, orig, &err);
        break;
    case 'd':
        rc = kc_doc_remove(d, ptr, &err);
        break;
    case 'g':
        op_get(d, ptr);
        break;
    case 'n':
        op_iter(d, ptr);
        break;
    case 'x':
        op_diff(orig, d, ptr);
        break;
    default:
        break;
    }
    check_err(rc, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    char *in = malloc(size + 1);
    if (!in)
        return 0;
    memcpy(in, data, size);
    in[size] = '\0';
    char *ops = strstr(in, "\n%%\n");
    size_t jlen = ops ? (size_t)(ops - in) : size;
    kc_doc *orig = NULL, *d = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_doc_parse(in, jlen, &orig, &err);
    check_err(rc, &err);
    if (rc == 0 && kc_doc_copy(orig, &d, &err) == 0) {
        check_doc(orig);
        char *line = ops ? ops + 4 : NULL;
        for (int k = 0; line && *line && k < 32; k++) {
            char *nl = strchr(line, '\n');
            if (nl)
                *nl = '\0';
            run_line(d, orig, line);
            line = nl ? nl + 1 : NULL;
        }
        check_doc(d);
        check_obj(d);
        op_diff(orig, d, NULL);
        check_patch_applies(orig, d);
        /* d was a copy of orig sharing its tree (copy-on-write): no edit of d may show in orig */
        kc_doc *again = NULL;
        if (kc_doc_parse(in, jlen, &again, NULL) == 0 && !kc_doc_equal(again, orig))
            abort();
        kc_doc_free(again);
    }
    kc_doc_free(d);
    kc_doc_free(orig);
    free(in);
    return 0;
}
