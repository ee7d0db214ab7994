/*
 * sj_doc.cpp — a kc_doc's jansson tree built from a stored object's text by a simdjson On-Demand
 * walk (the alternative to jansson's own parser for kc_doc_from_obj; doc.c says which one runs and
 * why). The text is a kc_obj's: compact, validated, bounded in depth and followed by
 * KC__SJ_PADDING readable bytes, so it is walked in place. Numbers follow doc.h: int64 as
 * integers, anything else as a double (an unsigned 64-bit or bigger integer too), which jansson's
 * own parser refuses. Strings are UTF-8 already (simdjson validated them), so jansson's
 * unchecked constructors are used.
 */
#include "json/sj_internal.hpp"

#include <jansson.h>

using namespace kc_sj;

namespace
{

struct builder {
    kc__sj_err *e;
    int rc = 0;

    json_t *fail_sj(error_code c)
    {
        rc = sjfail(e, c, -1, "kc_doc_from_obj");
        return nullptr;
    }
    json_t *oom()
    {
        rc = fail(e, KC_ENOMEM, -1, "kc_doc_from_obj: out of memory");
        return nullptr;
    }

    json_t *number(od::value v)
    {
        od::number n;
        error_code c = v.get_number().get(n);
        if (c == simdjson::NUMBER_ERROR) { /* beyond 64 bits: a double, as doc.h says */
            double d;
            if ((c = v.get_double().get(d)))
                return fail_sj(c);
            return json_real(d);
        }
        if (c)
            return fail_sj(c);
        if (n.is_int64())
            return json_integer((json_int_t)n.get_int64());
        if (n.is_uint64())
            return json_real((double)n.get_uint64());
        return json_real(n.get_double());
    }

    json_t *object(od::object o)
    {
        json_t *obj = json_object();
        if (!obj)
            return oom();
        for (auto field : o) {
            std::string_view k;
            error_code c = field.unescaped_key().get(k);
            json_t *m = c ? fail_sj(c) : value(field.value());
            if (!m || json_object_setn_new_nocheck(obj, k.data(), k.size(), m) != 0) {
                json_decref(obj);
                return m ? oom() : nullptr;
            }
        }
        return obj;
    }

    json_t *array(od::array a)
    {
        json_t *arr = json_array();
        if (!arr)
            return oom();
        for (auto el : a) {
            od::value ev;
            error_code c = el.get(ev);
            json_t *m = c ? fail_sj(c) : value(ev);
            if (!m || json_array_append_new(arr, m) != 0) {
                json_decref(arr);
                return m ? oom() : nullptr;
            }
        }
        return arr;
    }

    json_t *value(od::value v)
    {
        od::json_type t;
        error_code c = v.type().get(t);
        if (c)
            return fail_sj(c);
        json_t *r = nullptr;
        switch (t) {
        case od::json_type::object: {
            od::object o;
            return (c = v.get_object().get(o)) ? fail_sj(c) : object(o);
        }
        case od::json_type::array: {
            od::array a;
            return (c = v.get_array().get(a)) ? fail_sj(c) : array(a);
        }
        case od::json_type::string: {
            std::string_view s;
            if ((c = v.get_string().get(s)))
                return fail_sj(c);
            r = json_stringn_nocheck(s.data(), s.size());
            break;
        }
        case od::json_type::number:
            return number(v);
        case od::json_type::boolean: {
            bool b;
            if ((c = v.get_bool().get(b)))
                return fail_sj(c);
            r = json_boolean(b);
            break;
        }
        default: {
            bool is_null;
            if ((c = v.is_null().get(is_null)) || !is_null)
                return fail_sj(c ? c : simdjson::INCORRECT_TYPE);
            r = json_null();
        }
        }
        return r ? r : oom();
    }
};

} // namespace

extern "C" {

int kc__sj_doc_build(kc__sj_ctx *ctx, const char *text, size_t len, struct json_t **ret,
                     kc__sj_err *e)
{
    od::document doc;
    int r = iterate(ctx, text, len, len + KC__SJ_PADDING, doc, e, 0);
    if (r)
        return r;
    od::object o;
    error_code c = doc.get_object().get(o);
    if (c)
        return sjfail(e, c, -1, "kc_doc_from_obj");
    builder b{e};
    json_t *root = b.object(o);
    if (!root)
        return b.rc;
    *ret = root;
    return 0;
}

} // extern "C"

KC_SJ_END_OF_FILE
