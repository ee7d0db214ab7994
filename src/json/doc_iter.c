/*
 * doc_iter.c — iteration over the members of an object or the elements of an array of a kc_doc
 * (kcache/doc.h, "iteration").
 *
 * An iterator borrows the container: object members come in document order (jansson's iteration
 * order is insertion order), array elements by index. Values are borrowed from the tree, so the
 * document must not change while the iterator is in use.
 */
#include "json/doc_internal.h"

#include <stdlib.h>

struct kc_doc_iter {
    json_t *container;
    void *member; /* the current member's jansson iterator (objects) */
    size_t index; /* the next element (arrays) */
    bool started; /* objects: the first kc_doc_iter_next happened */
    const char *key;
    size_t key_len;
    json_t *value; /* NULL when not positioned */
};

int kc_doc_iter_new(const kc_doc *doc, const char *ptr, kc_doc_iter **ret, kc_error *err)
{
    if (!doc || !ptr || !ret)
        return kc_error_set(err, KC_EINVAL, "kc_doc_iter_new: NULL argument");
    json_t *v;
    int rc = kc__doc_lookup(doc->root, ptr, "kc_doc_iter_new", &v, err);
    if (rc)
        return rc;
    if (!json_is_object(v) && !json_is_array(v))
        return kc_error_set(err, KC_EINVAL,
                            "kc_doc_iter_new \"%s\": %s found, not an object or "
                            "array",
                            ptr, kc_json_type_name(kc__doc_jtype(v)));
    kc_doc_iter *it = calloc(1, sizeof *it);
    if (!it)
        return kc_error_set(err, KC_ENOMEM, "kc_doc_iter_new: out of memory");
    it->container = v;
    *ret = it;
    return 0;
}

int kc_doc_iter_next(kc_doc_iter *it)
{
    if (!it)
        return KC_EINVAL;
    if (json_is_array(it->container)) {
        it->value = json_array_get(it->container, it->index);
        if (it->value)
            it->index++;
        return it->value ? 1 : 0;
    }
    if (!it->started)
        it->member = json_object_iter(it->container);
    else if (it->member)
        it->member = json_object_iter_next(it->container, it->member);
    it->started = true;
    if (!it->member) {
        it->value = NULL;
        it->key = NULL;
        return 0;
    }
    it->key = json_object_iter_key(it->member);
    it->key_len = json_object_iter_key_len(it->member);
    it->value = json_object_iter_value(it->member);
    return 1;
}

const char *kc_doc_iter_key(const kc_doc_iter *it, size_t *ret_len)
{
    const char *k = it && it->value ? it->key : NULL;
    if (ret_len)
        *ret_len = k ? it->key_len : 0;
    return k;
}

kc_json_type kc_doc_iter_type(const kc_doc_iter *it)
{
    return it && it->value ? kc__doc_jtype(it->value) : KC_JSON_NULL;
}

int kc_doc_iter_string(const kc_doc_iter *it, const char **ret, size_t *ret_len)
{
    if (!it || !ret || !json_is_string(it->value))
        return KC_EINVAL;
    *ret = json_string_value(it->value);
    if (ret_len)
        *ret_len = json_string_length(it->value);
    return 0;
}

int kc_doc_iter_int(const kc_doc_iter *it, int64_t *ret)
{
    if (!it || !ret || !json_is_integer(it->value))
        return KC_EINVAL;
    *ret = (int64_t)json_integer_value(it->value);
    return 0;
}

int kc_doc_iter_double(const kc_doc_iter *it, double *ret)
{
    if (!it || !ret || !json_is_number(it->value))
        return KC_EINVAL;
    *ret = json_number_value(it->value);
    return 0;
}

int kc_doc_iter_bool(const kc_doc_iter *it, bool *ret)
{
    if (!it || !ret || !json_is_boolean(it->value))
        return KC_EINVAL;
    *ret = json_is_true(it->value);
    return 0;
}

int kc_doc_iter_raw(const kc_doc_iter *it, char **ret, size_t *ret_len)
{
    if (!it || !ret || !it->value)
        return KC_EINVAL;
    return kc__doc_dump(it->value, ret, ret_len, NULL);
}

void kc_doc_iter_free(kc_doc_iter *it)
{
    free(it);
}
