/*
 * doc_get.c — reading a kc_doc by JSON Pointer (kcache/doc.h, "reading").
 *
 * Each getter resolves the pointer (doc_pointer.c) and checks the type found; a mismatch is
 * KC_EINVAL naming the pointer and the type found, so a reconcile's error says what the object
 * held. Strings are borrowed from the tree (jansson keeps them NUL-terminated, with their length
 * for strings holding "\u0000").
 */
#include "json/doc_internal.h"

#include <stdlib.h>

/* The value at ptr, or an error: NULL doc/ptr/output is KC_EINVAL. */
static int get(const kc_doc *doc, const char *ptr, const void *out, const char *what, json_t **ret,
               kc_error *err)
{
    if (!doc || !ptr || !out)
        return kc_error_set(err, KC_EINVAL, "%s: NULL argument", what);
    return kc__doc_lookup(doc->root, ptr, what, ret, err);
}

/* Which types a getter takes (kc_json_type bits). */
#define T(x)     (1u << (x))
#define NUMBER   (T(KC_JSON_INT) | T(KC_JSON_DOUBLE))
#define CONTAINS (T(KC_JSON_ARRAY) | T(KC_JSON_OBJECT))

/* The value at ptr, of one of the types in mask (want names them) or KC_EINVAL naming the type
 * found. */
static int get_as(const kc_doc *doc, const char *ptr, const void *out, const char *what,
                  unsigned mask, const char *want, json_t **ret, kc_error *err)
{
    int rc = get(doc, ptr, out, what, ret, err);
    if (rc == 0 && !(mask & T(kc__doc_jtype(*ret))))
        rc = kc_error_set(err, KC_EINVAL, "%s \"%s\": %s found, not %s", what, ptr,
                          kc_json_type_name(kc__doc_jtype(*ret)), want);
    return rc;
}

int kc_doc_type(const kc_doc *doc, const char *ptr, kc_json_type *ret, kc_error *err)
{
    json_t *v;
    int rc = get(doc, ptr, ret, "kc_doc_type", &v, err);
    if (rc == 0)
        *ret = kc__doc_jtype(v);
    return rc;
}

bool kc_doc_has(const kc_doc *doc, const char *ptr)
{
    json_t *v;
    return doc && ptr && kc__doc_lookup(doc->root, ptr, "kc_doc_has", &v, NULL) == 0;
}

int kc_doc_get_string(const kc_doc *doc, const char *ptr, const char **ret, size_t *ret_len,
                      kc_error *err)
{
    json_t *v;
    int rc = get_as(doc, ptr, ret, "kc_doc_get_string", T(KC_JSON_STRING), "a string", &v, err);
    if (rc == 0) {
        *ret = json_string_value(v);
        if (ret_len)
            *ret_len = json_string_length(v);
    }
    return rc;
}

int kc_doc_get_int(const kc_doc *doc, const char *ptr, int64_t *ret, kc_error *err)
{
    json_t *v;
    int rc = get_as(doc, ptr, ret, "kc_doc_get_int", T(KC_JSON_INT), "an integer", &v, err);
    if (rc == 0)
        *ret = (int64_t)json_integer_value(v);
    return rc;
}

int kc_doc_get_double(const kc_doc *doc, const char *ptr, double *ret, kc_error *err)
{
    json_t *v;
    int rc = get_as(doc, ptr, ret, "kc_doc_get_double", NUMBER, "a number", &v, err);
    if (rc == 0)
        *ret = json_number_value(v);
    return rc;
}

int kc_doc_get_bool(const kc_doc *doc, const char *ptr, bool *ret, kc_error *err)
{
    json_t *v;
    int rc = get_as(doc, ptr, ret, "kc_doc_get_bool", T(KC_JSON_BOOL), "a boolean", &v, err);
    if (rc == 0)
        *ret = json_is_true(v);
    return rc;
}

int kc_doc_get_raw(const kc_doc *doc, const char *ptr, char **ret, size_t *ret_len, kc_error *err)
{
    json_t *v;
    int rc = get(doc, ptr, ret, "kc_doc_get_raw", &v, err);
    return rc ? rc : kc__doc_dump(v, ret, ret_len, err);
}

int kc_doc_count(const kc_doc *doc, const char *ptr, size_t *ret, kc_error *err)
{
    json_t *v;
    int rc = get_as(doc, ptr, ret, "kc_doc_count", CONTAINS, "an object or array", &v, err);
    if (rc == 0)
        *ret = json_is_object(v) ? json_object_size(v) : json_array_size(v);
    return rc;
}
