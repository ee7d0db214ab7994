/*
 * fuzz_obj_iter.c — libFuzzer target for kc_obj_iter over arbitrary stored objects.
 *
 * Input: a JSON Pointer, a newline, then an object's JSON text. When the text decodes (default,
 * non-strict decode: sub-trees may be malformed), the value at the pointer is iterated. Checks:
 * errors carry their code; every key and raw span lies inside the stored text (or, for an
 * unescaped key, the iterator); each typed getter succeeds exactly for its type; an element's raw
 * text and string equal kc_obj_get_raw / kc_obj_get_string at "<ptr>/<index or key>"; when the
 * object also decodes with KC_DECODE_STRICT, the iteration cannot fail with KC_EPARSE. The
 * condition reader (kc_obj_condition_status) runs over the same object.
 */
#include "kcache/condition.h"
#include "kcache/obj.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_err(int rc, kc_error *err)
{
    if (rc && (err->code != rc || !err->message))
        abort();
    if (rc && rc != KC_ENOTFOUND && rc != KC_EINVAL && rc != KC_EPARSE && rc != KC_ENOMEM)
        abort();
    kc_error_clear(err);
}

/* "<ptr>/<token>" when token needs no escaping; NULL otherwise. */
static char *child_ptr(const char *ptr, const char *tok, size_t n)
{
    if (memchr(tok, '~', n) || memchr(tok, '/', n) || memchr(tok, '\0', n))
        return NULL;
    size_t pl = strlen(ptr);
    char *p = malloc(pl + n + 2);
    if (!p)
        return NULL;
    memcpy(p, ptr, pl);
    p[pl] = '/';
    memcpy(p + pl + 1, tok, n);
    p[pl + 1 + n] = '\0';
    return p;
}

static void check_getters(kc_obj_iter *it)
{
    kc_json_type t = kc_obj_iter_type(it);
    const char *s;
    size_t n;
    int64_t i;
    double d;
    bool b;
    int rs = kc_obj_iter_string(it, &s, &n), ri = kc_obj_iter_int(it, &i);
    int rd = kc_obj_iter_double(it, &d), rb = kc_obj_iter_bool(it, &b);
    if ((rs == 0) != (t == KC_JSON_STRING) || (rb == 0) != (t == KC_JSON_BOOL))
        abort();
    if ((ri == 0) != (t == KC_JSON_INT))
        abort();
    if ((rd == 0) != (t == KC_JSON_INT || t == KC_JSON_DOUBLE))
        abort();
}

static void check_element(const kc_obj *o, kc_obj_iter *it, const char *ptr, size_t index)
{
    size_t len, kn = 0, rl = 0;
    const char *text = kc_obj_json(o, &len), *raw = NULL;
    const char *k = kc_obj_iter_key(it, &kn);
    if (kc_obj_iter_raw(it, &raw, &rl) || raw < text || raw + rl > text + len || rl == 0)
        abort();
    check_getters(it);
    char idx[24];
    snprintf(idx, sizeof idx, "%zu", index);
    /* simdjson's pointer lookup compares keys as written: a key with escapes (unescaped into the
     * iterator, outside the text) is not found by its unescaped name */
    if (k && (k < text || k > text + len))
        return;
    char *cp = k ? child_ptr(ptr, k, kn) : child_ptr(ptr, idx, strlen(idx));
    if (!cp)
        return;
    const char *r2 = NULL;
    size_t rl2 = 0;
    kc_error err = KC_ERROR_INIT;
    /* a key given twice: the pointer finds the first, the iterator both */
    if (kc_obj_get_raw(o, cp, &r2, &rl2, &err) != 0 || (!k && (r2 != raw || rl2 != rl)))
        abort();
    kc_error_clear(&err);
    char *s2 = NULL;
    size_t n2 = 0;
    const char *s;
    size_t n;
    if (!k && kc_obj_iter_string(it, &s, &n) == 0 &&
        (kc_obj_get_string(o, cp, &s2, &n2, NULL) != 0 || n2 != n || memcmp(s, s2, n) != 0))
        abort();
    free(s2);
    free(cp);
}

static void iterate(const kc_obj *o, const char *ptr, bool strict_ok)
{
    kc_obj_iter *it = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_obj_iter_new(o, ptr, &it, &err);
    if (rc == KC_EPARSE && strict_ok)
        abort();
    check_err(rc, &err);
    if (rc)
        return;
    size_t i = 0;
    while (kc_obj_iter_next(it) == 1)
        check_element(o, it, ptr, i++);
    if (kc_obj_iter_next(it) != 0 || kc_obj_iter_key(it, NULL))
        abort();
    kc_obj_iter_free(it);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    const uint8_t *nl = memchr(data, '\n', size);
    if (!nl)
        return 0;
    size_t plen = (size_t)(nl - data);
    char *ptr = malloc(plen + 1);
    if (!ptr)
        return 0;
    memcpy(ptr, data, plen);
    ptr[plen] = '\0';
    const char *json = (const char *)nl + 1;
    size_t jlen = size - plen - 1;

    kc_obj *o = NULL, *strict = NULL;
    kc_error err = KC_ERROR_INIT;
    if (kc_obj_parse(json, jlen, NULL, &o, &err) != 0) {
        kc_error_clear(&err);
        free(ptr);
        return 0;
    }
    kc_decode_opts so = {.flags = KC_DECODE_STRICT};
    bool strict_ok = kc_obj_parse(json, jlen, &so, &strict, NULL) == 0;
    kc_obj_unref(strict);
    iterate(o, ptr, strict_ok);
    iterate(o, "", strict_ok);
    const char *st = NULL;
    int rc = kc_obj_condition_status(o, ptr[0] ? ptr + 1 : "Ready", &st, &err);
    if (rc == 0 && strcmp(st, "True") && strcmp(st, "False") && strcmp(st, "Unknown"))
        abort();
    check_err(rc, &err);
    kc_obj_unref(o);
    free(ptr);
    return 0;
}
