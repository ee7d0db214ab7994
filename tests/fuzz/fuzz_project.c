/*
 * fuzz_project.c — libFuzzer target for the field projection at decode (kc_decode_opts.keep,
 * src/json/sj_project.cpp).
 *
 * Input: up to 8 JSON Pointers, one per line, an empty line, then an object's JSON text. The text
 * is decoded without and with the projection. Checks: errors carry their code; the projection
 * decodes what the plain decode decodes, never more; the extracted metadata (name, namespace, uid,
 * resourceVersion, labels) is the same; the projected text is no longer than the plain one;
 * when the text is valid JSON (KC_DECODE_STRICT decodes it) the projected text is too, and
 * projecting it again with the same pointers changes nothing.
 */
#include "kcache/obj.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_err(int rc, kc_error *err)
{
    if (rc && (err->code != rc || !err->message))
        abort();
    kc_error_clear(err);
}

static kc_obj *decode(const char *t, size_t n, const char *const *keep, unsigned flags)
{
    kc_decode_opts o = {.flags = flags, .keep = keep};
    kc_obj *obj = NULL;
    kc_error e = KC_ERROR_INIT;
    int rc = kc_obj_parse(t, n, &o, &obj, &e);
    check_err(rc, &e);
    return rc ? NULL : obj;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    const char *keep[9] = {0};
    size_t nk = 0;
    char *p = buf, *end = buf + size;
    while (p < end && nk < 8) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl || nl == p) {
            p = nl ? nl + 1 : p;
            break;
        }
        *nl = '\0';
        keep[nk++] = p;
        p = nl + 1;
    }
    size_t n = (size_t)(end - p);
    kc_obj *plain = decode(p, n, NULL, 0), *proj = decode(p, n, keep, 0);
    if (proj && !plain)
        abort();
    if (plain && proj) {
        if (strcmp(kc_obj_name(plain), kc_obj_name(proj)) ||
            strcmp(kc_obj_namespace(plain), kc_obj_namespace(proj)) ||
            strcmp(kc_obj_uid(plain), kc_obj_uid(proj)) ||
            strcmp(kc_obj_resource_version(plain), kc_obj_resource_version(proj)) ||
            kc_obj_label_count(plain) != kc_obj_label_count(proj))
            abort();
        size_t lp, lq;
        kc_obj_json(plain, &lp);
        const char *tq = kc_obj_json(proj, &lq);
        if (lq > lp)
            abort();
        kc_obj *strict = decode(p, n, NULL, KC_DECODE_STRICT);
        if (strict) {
            kc_obj *again = decode(tq, lq, keep, KC_DECODE_STRICT);
            if (!again || strcmp(kc_obj_json(again, NULL), tq) != 0)
                abort();
            kc_obj_unref(again);
        }
        kc_obj_unref(strict);
    }
    kc_obj_unref(plain);
    kc_obj_unref(proj);
    free(buf);
    return 0;
}
