/*
 * doc_set.c — editing a kc_doc by JSON Pointer (kcache/doc.h, "editing").
 *
 * Each setter makes a new jansson value from the caller's (copied: strings are duplicated, JSON
 * text is parsed, documents deep-copied) and hands it to kc__doc_place (doc_pointer.c), which
 * creates missing parents, appends for "-", bounds the nesting and consumes the value whatever
 * happens. Strings must be UTF-8 (jansson's constructors check); numbers finite.
 */
#include "json/doc_internal.h"

#include <math.h>
#include <string.h>

static int null_args(const kc_doc *doc, const char *ptr, const char *what, kc_error *err)
{
    return !doc || !ptr ? kc_error_set(err, KC_EINVAL, "%s: NULL argument", what) : 0;
}

int kc_doc_set_stringn(kc_doc *doc, const char *ptr, const char *s, size_t len, kc_error *err)
{
    int rc = null_args(doc, ptr, "kc_doc_set_string", err);
    if (rc || (!s && len > 0))
        return rc ? rc : kc_error_set(err, KC_EINVAL, "kc_doc_set_string: NULL string");
    json_t *v = json_stringn(s ? s : "", len);
    if (!v) { /* invalid UTF-8 or out of memory: the unchecked constructor tells them apart */
        json_t *probe = json_stringn_nocheck(s ? s : "", len);
        json_decref(probe);
        return probe ? kc_error_set(err, KC_EINVAL, "kc_doc_set_string \"%s\": not UTF-8", ptr)
                     : kc_error_set(err, KC_ENOMEM, "kc_doc_set_string: out of memory");
    }
    return kc__doc_place(doc, ptr, v, false, "kc_doc_set_string", err);
}

int kc_doc_set_string(kc_doc *doc, const char *ptr, const char *s, kc_error *err)
{
    if (!s)
        return kc_error_set(err, KC_EINVAL, "kc_doc_set_string: NULL string");
    return kc_doc_set_stringn(doc, ptr, s, strlen(s), err);
}

int kc_doc_set_int(kc_doc *doc, const char *ptr, int64_t v, kc_error *err)
{
    int rc = null_args(doc, ptr, "kc_doc_set_int", err);
    return rc ? rc
              : kc__doc_place(doc, ptr, json_integer((json_int_t)v), false, "kc_doc_set_int", err);
}

int kc_doc_set_double(kc_doc *doc, const char *ptr, double v, kc_error *err)
{
    int rc = null_args(doc, ptr, "kc_doc_set_double", err);
    if (rc)
        return rc;
    if (!isfinite(v))
        return kc_error_set(err, KC_EINVAL, "kc_doc_set_double \"%s\": %g is not a JSON number",
                            ptr, v);
    return kc__doc_place(doc, ptr, json_real(v), false, "kc_doc_set_double", err);
}

int kc_doc_set_bool(kc_doc *doc, const char *ptr, bool v, kc_error *err)
{
    int rc = null_args(doc, ptr, "kc_doc_set_bool", err);
    return rc ? rc : kc__doc_place(doc, ptr, json_boolean(v), false, "kc_doc_set_bool", err);
}

int kc_doc_set_null(kc_doc *doc, const char *ptr, kc_error *err)
{
    int rc = null_args(doc, ptr, "kc_doc_set_null", err);
    return rc ? rc : kc__doc_place(doc, ptr, json_null(), false, "kc_doc_set_null", err);
}

int kc_doc_set_raw(kc_doc *doc, const char *ptr, const char *json, size_t len, kc_error *err)
{
    int rc = null_args(doc, ptr, "kc_doc_set_raw", err);
    if (rc || (!json && len > 0))
        return rc ? rc : kc_error_set(err, KC_EINVAL, "kc_doc_set_raw: NULL json");
    long ntok = kc__doc_ptr_tokens(ptr);
    if (ntok < 0) /* kc__doc_place says so, naming the pointer */
        return kc__doc_place(doc, ptr, json_null(), true, "kc_doc_set_raw", err);
    if (len > KC_DEFAULT_MAX_OBJECT_SIZE)
        return kc_error_set(err, KC_ETOOLARGE, "kc_doc_set_raw \"%s\": %zu bytes of JSON, over %zu",
                            ptr, len, KC_DEFAULT_MAX_OBJECT_SIZE);
    size_t room = (size_t)ntok >= KC__DOC_MAX_DEPTH ? 0 : KC__DOC_MAX_DEPTH - (size_t)ntok;
    json_t *v;
    if ((rc = kc__doc_load(json, len, room, "kc_doc_set_raw", &v, err)) != 0)
        return rc;
    return kc__doc_place(doc, ptr, v, true, "kc_doc_set_raw", err);
}

int kc_doc_set_doc(kc_doc *doc, const char *ptr, const kc_doc *src, kc_error *err)
{
    int rc = null_args(doc, ptr, "kc_doc_set_doc", err);
    if (rc || !src)
        return rc ? rc : kc_error_set(err, KC_EINVAL, "kc_doc_set_doc: NULL src");
    return kc__doc_place(doc, ptr, json_deep_copy(src->root), true, "kc_doc_set_doc", err);
}
