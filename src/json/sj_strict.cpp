/*
 * sj_strict.cpp — KC_DECODE_STRICT: what the walker does not read, validated completely.
 *
 * By default the decoders read only what they need and skip every other sub-tree (spec, status,
 * managedFields, unknown members) by counting brackets over stage 1's index: fast, and what an API
 * server sends is valid anyway, but a skipped sub-tree's grammar is not checked (docs/decoding.md,
 * "Validation"). In strict mode walker::skip calls walker::validate instead, which visits every
 * value of the sub-tree with On-Demand: keys and strings unescaped (escapes, surrogates), numbers
 * parsed (grammar; magnitudes a double cannot hold are rejected, as simdjson's DOM does), literals
 * matched, commas, colons and bracket kinds checked by the iteration itself, nesting limited to
 * KC__SJ_MAX_DEPTH. Errors name the sub-tree and carry the offset of the offending token.
 */
#include "json/sj_internal.hpp"

namespace kc_sj
{

namespace
{
int bad(kc__sj_err *e, error_code c, int64_t at, const char *what)
{
    if (c == simdjson::MEMALLOC || c == simdjson::CAPACITY)
        return sjfail(e, c, at, what);
    return fail(e, KC_EPARSE, at, "malformed JSON in %s: %s", what, simdjson::error_message(c));
}
} // namespace

int walker::validate(od::value &v, const char *what)
{
    const char *at = v.raw_json_token().data();
    od::json_type t;
    if (auto c = v.type().get(t))
        return bad(e, c, off(at), what);
    if ((t == od::json_type::object || t == od::json_type::array) &&
        doc.current_depth() >= static_cast<int32_t>(KC__SJ_MAX_DEPTH))
        return fail(e, KC_EPARSE, off(at), "%s: JSON nested deeper than %d levels", what,
                    KC__SJ_MAX_DEPTH);
    error_code c = simdjson::SUCCESS;
    switch (t) {
    case od::json_type::object: {
        od::object o;
        if ((c = v.get_object().get(o)))
            break;
        for (auto fr : o) {
            od::field f;
            if ((c = std::move(fr).get(f)))
                return bad(e, c, here(), what);
            if (int r = check_key(f, what))
                return r;
            if (int r = validate(f.value(), what))
                return r;
        }
        return 0;
    }
    case od::json_type::array: {
        od::array a;
        if ((c = v.get_array().get(a)))
            break;
        for (auto er : a) {
            od::value el;
            if ((c = std::move(er).get(el)))
                return bad(e, c, here(), what);
            if (int r = validate(el, what))
                return r;
        }
        return 0;
    }
    case od::json_type::string: {
        string_view s;
        c = v.get_string().get(s);
        break;
    }
    case od::json_type::number: {
        double d;
        c = v.get_double().get(d);
        break;
    }
    case od::json_type::boolean: {
        bool b;
        c = v.get_bool().get(b);
        break;
    }
    case od::json_type::null: {
        bool isnull = false;
        if (!(c = v.is_null().get(isnull)) && !isnull)
            c = simdjson::N_ATOM_ERROR;
        break;
    }
    }
    return c ? bad(e, c, off(at), what) : 0;
}

int walker::validate_skip(od::value &v, const char *what, const char **close)
{
    const char *start = v.raw_json_token().data();
    if (int r = validate(v, what))
        return r;
    const char *p = loc_or_end(); /* the next token: the value ends before it */
    while (p > start && static_cast<unsigned char>(p[-1]) <= 0x20)
        p--;
    if (close)
        *close = p - 1;
    return 0;
}

} // namespace kc_sj

KC_SJ_END_OF_FILE
