/*
 * fuzz_pointer.c — libFuzzer target for JSON Pointer access on stored objects.
 *
 * Input: a JSON Pointer, a newline, then an object's JSON text. When the text decodes, the pointer
 * is looked up as string, integer, boolean and raw JSON. Errors must carry their code; a raw
 * result must lie inside the stored text; a string result must be NUL-terminated at its length.
 */
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

    kc_obj *o = NULL;
    kc_error err = KC_ERROR_INIT;
    if (kc_obj_parse(json, jlen, NULL, &o, &err) != 0) {
        kc_error_clear(&err);
        free(ptr);
        return 0;
    }
    size_t len;
    const char *text = kc_obj_json(o, &len);

    char *s = NULL;
    size_t sl = 0;
    int rc = kc_obj_get_string(o, ptr, &s, &sl, &err);
    if (rc == 0) {
        if (s[sl] != '\0')
            abort();
        free(s);
    }
    check_err(rc, &err);
    int64_t i;
    check_err(kc_obj_get_int(o, ptr, &i, &err), &err);
    bool b;
    check_err(kc_obj_get_bool(o, ptr, &b, &err), &err);
    const char *raw;
    size_t rl;
    rc = kc_obj_get_raw(o, ptr, &raw, &rl, &err);
    if (rc == 0 && (raw < text || raw + rl > text + len || rl == 0))
        abort();
    check_err(rc, &err);
    kc_obj_unref(o);
    free(ptr);
    return 0;
}
