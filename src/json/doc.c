/*
 * doc.c — kc_doc (kcache/doc.h): construction, output, comparison.
 *
 * A kc_doc is a jansson tree (json/doc_internal.h); jansson keeps object members in insertion
 * order (since 2.8), which is the document order doc.h promises. Text is parsed with
 * JSON_DECODE_ANY | JSON_ALLOW_NUL (any value; "\u0000" inside strings) after a scan that bounds
 * the nesting (KC__DOC_MAX_DEPTH), so jansson's own limit (2048) is never what refuses a document.
 * kc_doc_from_obj — the hot path of create-or-update — builds the tree from a simdjson walk of the
 * object's stored text (sj_doc.cpp), which measured about 4x faster than jansson's parser over the
 * same text (bench/bench_doc.c; docs/doc.md, "Cost"); both stay selectable for the bench and the
 * fuzzer. Output is doc_write.c's. Equality is ours: jansson's json_equal tells 1 from 1.0, doc.h
 * does not.
 */
#include "json/doc_internal.h"
#include "json/obj_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *kc_json_type_name(kc_json_type type)
{
    switch (type) {
    case KC_JSON_NULL:
        return "null";
    case KC_JSON_BOOL:
        return "boolean";
    case KC_JSON_INT:
        return "integer";
    case KC_JSON_DOUBLE:
        return "number";
    case KC_JSON_STRING:
        return "string";
    case KC_JSON_ARRAY:
        return "array";
    case KC_JSON_OBJECT:
        return "object";
    }
    return "?";
}

kc_json_type kc__doc_jtype(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return KC_JSON_OBJECT;
    case JSON_ARRAY:
        return KC_JSON_ARRAY;
    case JSON_STRING:
        return KC_JSON_STRING;
    case JSON_INTEGER:
        return KC_JSON_INT;
    case JSON_REAL:
        return KC_JSON_DOUBLE;
    case JSON_TRUE:
    case JSON_FALSE:
        return KC_JSON_BOOL;
    case JSON_NULL:
        break;
    }
    return KC_JSON_NULL;
}

int kc__doc_wrap(json_t *root, kc_doc **ret, kc_error *err)
{
    kc_doc *d = root ? malloc(sizeof *d) : NULL;
    if (!d) {
        json_decref(root);
        return kc_error_set(err, KC_ENOMEM, "kc_doc: out of memory");
    }
    d->root = root;
    *ret = d;
    return 0;
}

/* The deepest nesting of brackets outside strings in text, stopping once over max (the text need
 * not be valid JSON: the parser judges that). */
static size_t text_depth(const char *s, size_t n, size_t max)
{
    size_t depth = 0, deepest = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '"') {
            for (i++; i < n && s[i] != '"'; i++)
                if (s[i] == '\\')
                    i++;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest && (deepest = depth) > max)
                break;
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    return deepest;
}

int kc__doc_load(const char *json, size_t len, size_t max_depth, const char *what, json_t **ret,
                 kc_error *err)
{
    if (text_depth(json, len, max_depth) > max_depth)
        return kc_error_set(err, KC_ETOOLARGE, "%s: JSON nests deeper than %zu levels", what,
                            max_depth);
    json_error_t je;
    json_t *v = json_loadb(json ? json : "", len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (v) {
        *ret = v;
        return 0;
    }
    if (json_error_code(&je) == json_error_out_of_memory)
        return kc_error_set(err, KC_ENOMEM, "%s: out of memory", what);
    return kc_error_set(err, KC_EPARSE, "%s: invalid JSON at line %d, column %d (byte %d): %s",
                        what, je.line, je.column, je.position, je.text);
}

size_t kc__doc_tree_depth(const json_t *v, size_t limit)
{
    if (!json_is_object(v) && !json_is_array(v))
        return 0;
    if (limit == 0)
        return 1;
    size_t deepest = 0, d;
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v) && deepest < limit; i++)
            if ((d = kc__doc_tree_depth(json_array_get(v, i), limit - 1)) > deepest)
                deepest = d;
    } else {
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)v, k, m)
        {
            if ((d = kc__doc_tree_depth(m, limit - 1)) > deepest)
                deepest = d;
            if (deepest >= limit)
                break;
        }
    }
    return deepest + 1;
}

int kc_doc_new(kc_doc **ret, kc_error *err)
{
    if (!ret)
        return kc_error_set(err, KC_EINVAL, "kc_doc_new: NULL ret");
    return kc__doc_wrap(json_object(), ret, err);
}

int kc_doc_parse(const char *json, size_t len, kc_doc **ret, kc_error *err)
{
    if (!ret || (!json && len > 0))
        return kc_error_set(err, KC_EINVAL, "kc_doc_parse: NULL argument");
    if (len > KC_DEFAULT_MAX_OBJECT_SIZE)
        return kc_error_set(err, KC_ETOOLARGE, "kc_doc_parse: %zu bytes of JSON, over %zu", len,
                            KC_DEFAULT_MAX_OBJECT_SIZE);
    json_t *v;
    int rc = kc__doc_load(json, len, KC__DOC_MAX_DEPTH, "kc_doc_parse", &v, err);
    return rc ? rc : kc__doc_wrap(v, ret, err);
}

/* (a) jansson's parser over the stored text. */
static int from_obj_jansson(const char *text, size_t len, json_t **ret, kc_error *err)
{
    json_error_t je;
    json_t *v = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (v) {
        *ret = v;
        return 0;
    }
    if (json_error_code(&je) == json_error_out_of_memory)
        return kc_error_set(err, KC_ENOMEM, "kc_doc_from_obj: out of memory");
    /* What simdjson accepted and jansson does not: numbers beyond int64 and double. */
    return kc_error_set(err, KC_EPARSE, "kc_doc_from_obj: %s (byte %d)", je.text, je.position);
}

/* (b) the tree built from a simdjson On-Demand walk (sj_doc.cpp). */
static int from_obj_simdjson(const char *text, size_t len, json_t **ret, kc_error *err)
{
    int rc = kc__json_cpu_check(err);
    if (rc)
        return rc;
    kc__sj_ctx *ctx = kc__sj_thread_ctx();
    if (!ctx)
        return kc_error_set(err, KC_ENOMEM, "kc_doc_from_obj: out of memory");
    kc__sj_err e = {0, -1, ""};
    rc = kc__sj_doc_build(ctx, text, len, ret, &e);
    if (len > ((size_t)1 << 20)) /* keep no big object's parser buffers per thread */
        kc__sj_ctx_trim(ctx, (size_t)1 << 20);
    return rc ? kc__sj_err_to(&e, 0, err) : 0;
}

int kc__doc_from_text(const char *text, size_t len, kc_doc **ret, kc_error *err)
{
    json_t *v;
    int rc = from_obj_simdjson(text, len, &v, err);
    return rc ? rc : kc__doc_wrap(v, ret, err);
}

int kc__doc_from_obj_with(const kc_obj *obj, enum kc__doc_builder how, kc_doc **ret, kc_error *err)
{
    if (!obj || !ret)
        return kc_error_set(err, KC_EINVAL, "kc_doc_from_obj: NULL argument");
    size_t len;
    const char *text = kc_obj_json(obj, &len);
    /* The object's text was validated, and bounded in depth, when it was decoded. */
    json_t *v;
    int rc = how == KC__DOC_BUILD_SIMDJSON ? from_obj_simdjson(text, len, &v, err)
                                           : from_obj_jansson(text, len, &v, err);
    return rc ? rc : kc__doc_wrap(v, ret, err);
}

/* The object whose document this thread already holds (kc__doc_set_template), and that tree. */
static _Thread_local const kc_obj *tpl_obj;
static _Thread_local json_t *tpl_root;

void kc__doc_set_template(const kc_obj *obj, json_t *root)
{
    tpl_obj = root ? obj : NULL;
    tpl_root = obj ? root : NULL;
}

int kc_doc_from_obj(const kc_obj *obj, kc_doc **ret, kc_error *err)
{
    if (obj && ret && obj == tpl_obj) /* shared, copy-on-write (doc_pointer.c) */
        return kc__doc_wrap(json_incref(tpl_root), ret, err);
    return kc__doc_from_obj_with(obj, KC__DOC_BUILD_DEFAULT, ret, err);
}

/* O(1): the copy shares the tree; the first change of either copies the containers on its path
 * (copy-on-write, doc_pointer.c). */
int kc_doc_copy(const kc_doc *doc, kc_doc **ret, kc_error *err)
{
    if (!doc || !ret)
        return kc_error_set(err, KC_EINVAL, "kc_doc_copy: NULL argument");
    return kc__doc_wrap(json_incref(doc->root), ret, err);
}

void kc_doc_free(kc_doc *doc)
{
    if (!doc)
        return;
    json_decref(doc->root);
    free(doc);
}

/* ---- output ---------------------------------------------------------------------------------- */

int kc_doc_json(const kc_doc *doc, char **ret, size_t *ret_len, kc_error *err)
{
    if (!doc || !ret)
        return kc_error_set(err, KC_EINVAL, "kc_doc_json: NULL argument");
    return kc__doc_dump(doc->root, ret, ret_len, err);
}

int kc_doc_to_obj(const kc_doc *doc, kc_obj **ret_obj, kc_error *err)
{
    if (!doc || !ret_obj)
        return kc_error_set(err, KC_EINVAL, "kc_doc_to_obj: NULL argument");
    if (!json_is_object(doc->root))
        return kc_error_set(err, KC_EPARSE, "kc_doc_to_obj: the document is %s, not an object",
                            kc_json_type_name(kc__doc_jtype(doc->root)));
    char *text;
    size_t len;
    int rc = kc__doc_dump(doc->root, &text, &len, err);
    if (rc)
        return rc;
    rc = kc_obj_parse(text, len, NULL, ret_obj, err);
    free(text);
    return rc;
}

/* ---- equality -------------------------------------------------------------------------------- */

/* An integer and a real are equal when the real is that integer exactly. */
static bool int_real_equal(json_int_t i, double r)
{
    if (!(r >= -9223372036854775808.0 && r < 9223372036854775808.0) || r != floor(r))
        return false;
    return (json_int_t)r == i;
}

bool kc__doc_jequal(const json_t *a, const json_t *b)
{
    if (a == b) /* a subtree two documents share (copy-on-write) */
        return true;
    if (json_is_number(a) && json_is_number(b)) {
        if (json_is_integer(a) && json_is_integer(b))
            return json_integer_value(a) == json_integer_value(b);
        if (json_is_real(a) && json_is_real(b))
            return json_real_value(a) == json_real_value(b);
        return json_is_integer(a) ? int_real_equal(json_integer_value(a), json_real_value(b))
                                  : int_real_equal(json_integer_value(b), json_real_value(a));
    }
    if (json_typeof(a) != json_typeof(b))
        return false;
    if (json_is_array(a)) {
        size_t n = json_array_size(a);
        if (n != json_array_size(b))
            return false;
        for (size_t i = 0; i < n; i++)
            if (!kc__doc_jequal(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b))
            return false;
        const char *k;
        size_t kn;
        json_t *m;
        json_object_keylen_foreach((json_t *)a, k, kn, m)
        {
            json_t *o = json_object_getn(b, k, kn);
            if (!o || !kc__doc_jequal(m, o))
                return false;
        }
        return true;
    }
    return json_equal(a, b); /* strings, booleans, null */
}

bool kc_doc_equal(const kc_doc *a, const kc_doc *b)
{
    return a && b && kc__doc_jequal(a->root, b->root);
}
