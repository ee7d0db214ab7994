/*
 * obj_iter.c — kc_obj_iter: the members or elements at a JSON Pointer of a stored object, read
 * in place.
 *
 * kc_obj_iter_new runs one simdjson pass (sj_iter.cpp) that records each child's key and value
 * spans into an array the iterator owns; the stored text itself is never copied (it has
 * KC__SJ_PADDING readable bytes after it, obj.c, so simdjson reads it in place). The getters then
 * hand out spans of the text: a string without escapes, any raw value. A string with escapes, an
 * integer or a double is read from its token by simdjson again (kc__sj_token, the calling
 * thread's parser) — the pass validated it, so only memory can fail; an unescaped string is
 * copied into the iterator's buffer, valid until the next call. Keys with escapes (rare) were
 * unescaped by the pass into a side buffer.
 *
 * The iterator holds no reference on the object: like kc_obj_get_raw's result, it is valid while
 * the caller's reference is.
 */
#include "json/decode_internal.h"
#include "json/obj_internal.h"

#include <stdlib.h>
#include <string.h>

struct kc_obj_iter {
    const char *text; /* kc_obj_json of the object */
    size_t len;
    kc__sj_iter_out out;
    size_t pos; /* 1 + index of the current child; 0 before the first */
    char *buf;  /* the last unescaped string */
    size_t buf_cap;
};

void kc_obj_iter_free(kc_obj_iter *it)
{
    if (!it)
        return;
    free(it->out.spans);
    free(it->out.keys);
    free(it->buf);
    free(it);
}

static void trim_ctx(kc__sj_ctx *ctx, size_t len)
{
    if (ctx && len > ((size_t)1 << 20)) /* do not keep a big object's parser per thread */
        kc__sj_ctx_trim(ctx, (size_t)1 << 20);
}

static const kc__sj_span *current(const kc_obj_iter *it)
{
    return it && it->pos >= 1 && it->pos <= it->out.n ? &it->out.spans[it->pos - 1] : NULL;
}

/* A new iterator over the members of a pass already made over text (kc_obj_iter_new and
 * kc__obj_iter_child). */
static int iter_over(const char *text, size_t len, const char *ptr, kc_obj_iter **ret,
                     kc_error *err)
{
    int r = kc__json_cpu_check(err);
    if (r)
        return r;
    kc__sj_ctx *ctx = kc__sj_thread_ctx();
    kc_obj_iter *it = calloc(1, sizeof *it);
    if (!ctx || !it) {
        free(it);
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    it->text = text;
    it->len = len;
    kc__sj_err e = {0, -1, ""};
    r = kc__sj_iter(ctx, text, len, ptr, &it->out, &e);
    trim_ctx(ctx, len);
    if (r) {
        kc_obj_iter_free(it);
        return kc__sj_err_to(&e, 0, err);
    }
    *ret = it;
    return 0;
}

int kc_obj_iter_new(const kc_obj *obj, const char *ptr, kc_obj_iter **ret, kc_error *err)
{
    if (!obj || !ptr || !ret)
        return kc_error_set(err, KC_EINVAL, "kc_obj_iter_new: NULL argument");
    if (!kc__json_pointer_ok(ptr))
        return kc_error_set(err, KC_EINVAL, "malformed JSON pointer \"%s\"", ptr);
    size_t len;
    const char *text = kc_obj_json(obj, &len);
    return iter_over(text, len, ptr, ret, err);
}

int kc__obj_iter_child(const kc_obj_iter *it, kc_obj_iter **ret, kc_error *err)
{
    const kc__sj_span *s = current(it);
    if (!s || !ret || (s->type != KC_JSON_OBJECT && s->type != KC_JSON_ARRAY))
        return kc_error_set(err, KC_EINVAL, "not positioned on an object or array");
    /* the rest of the text and its padding follow the value: simdjson may read it in place */
    return iter_over(it->text + s->val_off, s->val_len, "", ret, err);
}

int kc_obj_iter_next(kc_obj_iter *it)
{
    if (!it)
        return KC_EINVAL;
    if (it->pos >= it->out.n) {
        it->pos = it->out.n + 1; /* past the end: not positioned */
        return 0;
    }
    it->pos++;
    return 1;
}

const char *kc_obj_iter_key(const kc_obj_iter *it, size_t *ret_len)
{
    const kc__sj_span *s = current(it);
    if (ret_len)
        *ret_len = s && (s->flags & KC__SJ_SPAN_KEY) ? s->key_len : 0;
    if (!s || !(s->flags & KC__SJ_SPAN_KEY))
        return NULL;
    return (s->flags & KC__SJ_SPAN_KEY_ESC ? it->out.keys : it->text) + s->key_off;
}

kc_json_type kc_obj_iter_type(const kc_obj_iter *it)
{
    const kc__sj_span *s = current(it);
    return s ? (kc_json_type)s->type : KC_JSON_NULL;
}

/* The current value's token read by simdjson as want. */
static int token(const kc_obj_iter *it, const kc__sj_span *s, enum kc__sj_tok_want want,
                 kc__sj_str *str, int64_t *i, double *d)
{
    kc__sj_ctx *ctx = kc__sj_thread_ctx();
    if (!ctx)
        return KC_ENOMEM;
    size_t avail = it->len - s->val_off + KC__SJ_PADDING;
    int r = kc__sj_token(ctx, it->text + s->val_off, s->val_len, avail, want, str, i, d);
    return r;
}

int kc_obj_iter_string(kc_obj_iter *it, const char **ret, size_t *ret_len)
{
    const kc__sj_span *s = current(it);
    if (!s || !ret || s->type != KC_JSON_STRING)
        return KC_EINVAL;
    if (!(s->flags & KC__SJ_SPAN_STR_ESC)) {
        *ret = it->text + s->val_off + 1;
        if (ret_len)
            *ret_len = s->val_len - 2;
        return 0;
    }
    kc__sj_str str = {NULL, 0};
    int r = token(it, s, KC__SJ_TOK_STRING, &str, NULL, NULL);
    if (r)
        return r;
    if (str.n + 1 > it->buf_cap) {
        size_t cap = it->buf_cap ? it->buf_cap : 64;
        while (cap < str.n + 1)
            cap *= 2;
        char *b = realloc(it->buf, cap);
        if (!b)
            return KC_ENOMEM;
        it->buf = b;
        it->buf_cap = cap;
    }
    memcpy(it->buf, str.p, str.n);
    it->buf[str.n] = '\0';
    *ret = it->buf;
    if (ret_len)
        *ret_len = str.n;
    return 0;
}

int kc_obj_iter_int(kc_obj_iter *it, int64_t *ret)
{
    const kc__sj_span *s = current(it);
    if (!s || !ret || s->type != KC_JSON_INT)
        return KC_EINVAL;
    return token(it, s, KC__SJ_TOK_INT, NULL, ret, NULL);
}

int kc_obj_iter_double(kc_obj_iter *it, double *ret)
{
    const kc__sj_span *s = current(it);
    if (!s || !ret || (s->type != KC_JSON_INT && s->type != KC_JSON_DOUBLE))
        return KC_EINVAL;
    if (s->type == KC_JSON_INT) {
        int64_t i = 0;
        int r = token(it, s, KC__SJ_TOK_INT, NULL, &i, NULL);
        if (r == 0)
            *ret = (double)i;
        return r;
    }
    return token(it, s, KC__SJ_TOK_DOUBLE, NULL, NULL, ret);
}

int kc_obj_iter_bool(const kc_obj_iter *it, bool *ret)
{
    const kc__sj_span *s = current(it);
    if (!s || !ret || s->type != KC_JSON_BOOL)
        return KC_EINVAL;
    *ret = it->text[s->val_off] == 't'; /* the pass checked the literal */
    return 0;
}

int kc_obj_iter_raw(const kc_obj_iter *it, const char **ret, size_t *ret_len)
{
    const kc__sj_span *s = current(it);
    if (!s || !ret || !ret_len)
        return KC_EINVAL;
    *ret = it->text + s->val_off;
    *ret_len = s->val_len;
    return 0;
}

/* The current member's string value equals (s, n): false when it is no string. */
static bool value_is(kc_obj_iter *it, const char *s, size_t n)
{
    const char *v;
    size_t vn;
    return kc_obj_iter_string(it, &v, &vn) == 0 && vn == n && memcmp(v, s, n) == 0;
}

static bool key_is(const kc_obj_iter *it, const char *key)
{
    size_t n;
    const char *k = kc_obj_iter_key(it, &n);
    return k && n == strlen(key) && memcmp(k, key, n) == 0;
}

/* In the object el (a child iterator): whether key == value, and want's string into buf. */
static bool element_matches(kc_obj_iter *el, const char *key, const char *value, const char *want,
                            char *buf, size_t cap)
{
    bool match = false;
    if (buf && cap)
        buf[0] = '\0';
    while (kc_obj_iter_next(el) == 1) {
        if (key_is(el, key)) {
            match = value_is(el, value, strlen(value));
        } else if (want && buf && cap && key_is(el, want)) {
            const char *v;
            size_t vn;
            if (kc_obj_iter_string(el, &v, &vn) == 0) {
                vn = vn < cap - 1 ? vn : cap - 1;
                memcpy(buf, v, vn);
                buf[vn] = '\0';
            }
        }
    }
    return match;
}

int kc__obj_array_lookup(const kc_obj *obj, const char *ptr, const char *key, const char *value,
                         const char *want, char *buf, size_t cap, kc_error *err)
{
    kc_obj_iter *it = NULL;
    int r = kc_obj_iter_new(obj, ptr, &it, err);
    if (r == KC_EINVAL && obj && ptr) /* a scalar (null) there: no elements */
        r = kc_error_set(err, KC_ENOTFOUND, "%s: not an array", ptr);
    if (r)
        return r;
    r = KC_ENOTFOUND;
    while (r == KC_ENOTFOUND && kc_obj_iter_next(it) == 1) {
        if (kc_obj_iter_type(it) != KC_JSON_OBJECT)
            continue;
        kc_obj_iter *el = NULL;
        int cr = kc__obj_iter_child(it, &el, err);
        if (cr)
            r = cr;
        else if (element_matches(el, key, value, want, buf, cap))
            r = 0;
        kc_obj_iter_free(el);
    }
    kc_obj_iter_free(it);
    if (r == KC_ENOTFOUND)
        kc_error_set(err, r, "%s: no element with %s \"%s\"", ptr, key, value);
    return r;
}
