/*
 * sj_pointer.cpp — JSON Pointer (RFC 6901) lookup in a stored object's text with simdjson
 * On-Demand's at_pointer: stage 1 over the stored text, then a walk down the path only. No DOM is
 * kept between calls. The pointer was validated in C (pointer.c).
 */
#include "json/sj_internal.hpp"

using namespace kc_sj;

extern "C" {

int kc__sj_pointer(kc__sj_ctx *ctx, const char *text, size_t len, const char *pointer,
                   enum kc__sj_want want, kc__sj_ptr_out *out, kc__sj_err *e)
{
    od::document doc;
    int r = iterate(ctx, text, len, len + KC__SJ_PADDING, doc, e, 0);
    if (r)
        return r;
    od::value v;
    error_code c = doc.at_pointer(pointer).get(v);
    if (c == simdjson::NO_SUCH_FIELD || c == simdjson::INDEX_OUT_OF_BOUNDS ||
        c == simdjson::INCORRECT_TYPE || c == simdjson::INVALID_JSON_POINTER)
        return fail(e, KC_ENOTFOUND, -1, "%s: no such path", pointer);
    if (c)
        return sjfail(e, c, -1, pointer);
    od::json_type t;
    if ((c = v.type().get(t)))
        return sjfail(e, c, -1, pointer);
    const char *wantname = "";
    switch (want) {
    case KC__SJ_WANT_STRING:
        if (t != od::json_type::string) {
            wantname = "a string";
            break;
        }
        {
            string_view s;
            if ((c = v.get_string().get(s)))
                return sjfail(e, c, -1, pointer);
            out->str = {s.data(), s.size()};
        }
        return 0;
    case KC__SJ_WANT_INT:
        if (t != od::json_type::number) {
            wantname = "an integer";
            break;
        }
        if ((c = v.get_int64().get(out->i)))
            return fail(e, KC_EINVAL, -1, "%s: number is not an integer that fits int64", pointer);
        return 0;
    case KC__SJ_WANT_BOOL:
        if (t != od::json_type::boolean) {
            wantname = "a boolean";
            break;
        }
        if ((c = v.get_bool().get(out->b)))
            return sjfail(e, c, -1, pointer);
        return 0;
    case KC__SJ_WANT_RAW: {
        string_view raw;
        if (t == od::json_type::object) {
            od::object o;
            if (!(c = v.get_object().get(o)))
                c = o.raw_json().get(raw);
        } else if (t == od::json_type::array) {
            od::array a;
            if (!(c = v.get_array().get(a)))
                c = a.raw_json().get(raw);
        } else {
            raw = tok_trim(v.raw_json_token());
        }
        if (c)
            return sjfail(e, c, -1, pointer);
        out->str = {raw.data(), raw.size()};
        return 0;
    }
    }
    return fail(e, KC_EINVAL, -1, "%s: value is %s, not %s", pointer, type_name(t), wantname);
}

} /* extern "C" */

KC_SJ_END_OF_FILE
