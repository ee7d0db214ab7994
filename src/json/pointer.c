/*
 * pointer.c — JSON Pointer (RFC 6901) access to a stored object's text, parsed on demand.
 *
 * No DOM is kept per object: each call runs simdjson On-Demand over the stored text (in place:
 * obj.c leaves KC__SJ_PADDING readable bytes after it) with the calling thread's parser, walks the
 * pointer's tokens and reads only the target value. The pointer's syntax is checked here first so
 * that simdjson's errors can be reported as "not found" versus "malformed pointer" precisely.
 * kc__obj_get_cstring is the internal callers' way to read a string they use as a C string: one
 * with a NUL inside is refused rather than cut.
 */
#include "json/decode_internal.h"
#include "json/obj_internal.h"

#include <stdlib.h>
#include <string.h>

bool kc__json_pointer_ok(const char *p)
{
    if (p[0] == '\0')
        return true;
    if (p[0] != '/')
        return false;
    for (; *p; p++)
        if (*p == '~' && p[1] != '0' && p[1] != '1')
            return false;
    return true;
}

static int lookup(const kc_obj *obj, const char *pointer, enum kc__sj_want want,
                  kc__sj_ptr_out *out, kc_error *err)
{
    if (!obj || !pointer)
        return kc_error_set(err, KC_EINVAL, "JSON pointer lookup: NULL argument");
    if (!kc__json_pointer_ok(pointer))
        return kc_error_set(err, KC_EINVAL, "malformed JSON pointer \"%s\"", pointer);
    size_t len;
    const char *text = kc_obj_json(obj, &len);
    if (pointer[0] == '\0') { /* the whole document: an object */
        if (want != KC__SJ_WANT_RAW)
            return kc_error_set(err, KC_EINVAL, "\"\": value is an object");
        out->str.p = text;
        out->str.n = len;
        return 0;
    }
    int crc = kc__json_cpu_check(err);
    if (crc)
        return crc;
    kc__sj_ctx *ctx = kc__sj_thread_ctx();
    if (!ctx)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    kc__sj_err e = {0, -1, ""};
    int r = kc__sj_pointer(ctx, text, len, pointer, want, out, &e);
    /* Do not keep a big object's parser buffers per thread. A string result lives in the
     * parser's buffer: kc_obj_get_string trims after copying it. */
    if (want != KC__SJ_WANT_STRING && len > ((size_t)1 << 20))
        kc__sj_ctx_trim(ctx, (size_t)1 << 20);
    if (r)
        return kc__sj_err_to(&e, 0, err);
    return 0;
}

int kc_obj_get_string(const kc_obj *obj, const char *pointer, char **ret_str, size_t *ret_len,
                      kc_error *err)
{
    kc__sj_ptr_out out = {{0}, 0, false};
    int r = lookup(obj, pointer, KC__SJ_WANT_STRING, &out, err);
    if (r)
        return r;
    char *s = malloc(out.str.n + 1);
    if (!s)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    if (out.str.n)
        memcpy(s, out.str.p, out.str.n);
    s[out.str.n] = '\0';
    size_t len;
    kc_obj_json(obj, &len);
    if (len > ((size_t)1 << 20))
        kc__sj_ctx_trim(kc__sj_thread_ctx(), (size_t)1 << 20);
    if (ret_str)
        *ret_str = s;
    else
        free(s);
    if (ret_len)
        *ret_len = out.str.n;
    return 0;
}

/* s (n bytes, with NULs) with each NUL as the six characters \u0000; NULL on out of memory. */
static char *escape_nul(const char *s, size_t n)
{
    size_t nuls = 0;
    for (size_t i = 0; i < n; i++)
        nuls += s[i] == '\0';
    char *d = malloc(n + nuls * 5 + 1), *p = d;
    if (!d)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i]) {
            *p++ = s[i];
        } else {
            memcpy(p, "\\u0000", 6);
            p += 6;
        }
    }
    *p = '\0';
    return d;
}

int kc__obj_get_cstring(const kc_obj *obj, const char *pointer, char **ret_str, bool escape,
                        kc_error *err)
{
    char *s = NULL;
    size_t n = 0;
    int r = kc_obj_get_string(obj, pointer, &s, &n, err);
    if (r)
        return r;
    if (strlen(s) != n) {
        char *e = escape ? escape_nul(s, n) : NULL;
        free(s);
        if (!escape)
            return kc_error_set(err, KC_EPARSE, "%s contains a NUL character (\\u0000)", pointer);
        if (!e)
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        s = e;
    }
    if (ret_str)
        *ret_str = s;
    else
        free(s);
    return 0;
}

int kc_obj_get_int(const kc_obj *obj, const char *pointer, int64_t *ret, kc_error *err)
{
    kc__sj_ptr_out out = {{0}, 0, false};
    int r = lookup(obj, pointer, KC__SJ_WANT_INT, &out, err);
    if (r)
        return r;
    if (ret)
        *ret = out.i;
    return 0;
}

int kc_obj_get_bool(const kc_obj *obj, const char *pointer, bool *ret, kc_error *err)
{
    kc__sj_ptr_out out = {{0}, 0, false};
    int r = lookup(obj, pointer, KC__SJ_WANT_BOOL, &out, err);
    if (r)
        return r;
    if (ret)
        *ret = out.b;
    return 0;
}

int kc_obj_get_raw(const kc_obj *obj, const char *pointer, const char **ret_json, size_t *ret_len,
                   kc_error *err)
{
    kc__sj_ptr_out out = {{0}, 0, false};
    int r = lookup(obj, pointer, KC__SJ_WANT_RAW, &out, err);
    if (r)
        return r;
    if (ret_json)
        *ret_json = out.str.p;
    if (ret_len)
        *ret_len = out.str.n;
    return 0;
}
