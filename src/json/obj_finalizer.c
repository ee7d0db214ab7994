/*
 * json/obj_finalizer.c — kc_obj_has_finalizer: whether an immutable object's metadata.finalizers
 * holds a name, read in place.
 *
 * The object's metadata record knows only how many finalizers there are, so each element is read
 * through kc_obj_get_raw (a span of the object's own text, no copy): a JSON string without escapes
 * is compared as it stands; one with escapes (a finalizer name never needs one, but a server may
 * write "\/") is unescaped with kc_obj_get_string. No allocation in the common case.
 */
#include "core/internal.h"
#include "kcache/finalizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool kc_obj_has_finalizer(const kc_obj *obj, const char *name)
{
    if (!obj || !name)
        return false;
    size_t n = kc_obj_finalizer_count(obj), nl = strlen(name);
    for (size_t i = 0; i < n; i++) {
        char ptr[48];
        snprintf(ptr, sizeof ptr, "/metadata/finalizers/%zu", i);
        const char *raw = NULL;
        size_t len = 0;
        if (kc_obj_get_raw(obj, ptr, &raw, &len, NULL) < 0 || len < 2 || raw[0] != '"')
            continue;
        if (!memchr(raw, '\\', len)) {
            if (len - 2 == nl && memcmp(raw + 1, name, nl) == 0)
                return true;
            continue;
        }
        char *s = NULL;
        size_t sl = 0;
        bool eq =
            kc_obj_get_string(obj, ptr, &s, &sl, NULL) == 0 && sl == nl && memcmp(s, name, nl) == 0;
        free(s);
        if (eq)
            return true;
    }
    return false;
}
