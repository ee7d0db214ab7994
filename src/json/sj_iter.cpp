/*
 * sj_iter.cpp — the members or elements of one object or array of a stored object's text, found
 * by one pass of simdjson On-Demand (kc_obj_iter, obj_iter.c).
 *
 * The pass walks to the pointer (at_pointer, as sj_pointer.cpp), then over the container's
 * children once, recording for each the span of its key and of its value text and its type
 * (kc__sj_span, 20 bytes) into a malloc'd array that grows geometrically. Nothing of the document
 * is copied but keys written with escapes, which are unescaped here into a small side buffer.
 * Values are validated as they are passed (a string with escapes is unescaped into the parser's
 * buffer and dropped, a number parsed, a literal checked, an object or array validated whole by
 * the strict walker, sj_strict.cpp) so that the getters and a later iteration of a child, which
 * re-read one token at a time (kc__sj_token), cannot fail on the text. Stored text decoded without
 * KC_DECODE_STRICT may hold malformed sub-trees; they are reported here as KC_EPARSE.
 */
#include "json/sj_internal.hpp"
#include "kcache/obj.h"

using namespace kc_sj;

namespace
{

bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return false;
    *p = q;
    *cap = n;
    return true;
}

struct pass {
    const char *text;
    kc__sj_iter_out *out;
    kc__sj_err *e;
    walker &w; /* its strict validation (sj_strict.cpp) checks nested containers */

    int64_t off(const char *p) const
    {
        return p - text;
    }
    int err(error_code c, const char *at, const char *what)
    {
        if (c == simdjson::MEMALLOC)
            return fail(e, KC_ENOMEM, -1, "out of memory");
        return fail(e, KC_EPARSE, off(at), "%s: %s", what, simdjson::error_message(c));
    }
    kc__sj_span *next()
    {
        if (!grow(reinterpret_cast<void **>(&out->spans), &out->cap, out->n + 1,
                  sizeof(kc__sj_span)))
            return nullptr;
        kc__sj_span *s = &out->spans[out->n++];
        *s = kc__sj_span{0, 0, 0, 0, 0, 0};
        return s;
    }
    /* An object or array child: validated whole (the stored text's unread sub-trees were only
     * bracket-counted by a default decode), then its span. */
    int container(od::value &v, od::json_type t, kc__sj_span *sp)
    {
        const char *start = v.raw_json_token().data(), *close = nullptr;
        if (int r = w.validate_skip(v, "the value", &close))
            return r;
        sp->type = t == od::json_type::object ? KC_JSON_OBJECT : KC_JSON_ARRAY;
        sp->val_off = static_cast<uint32_t>(start - text);
        sp->val_len = static_cast<uint32_t>(close + 1 - start);
        return 0;
    }
    /* The value's span and type, after checking it. */
    int value(od::value &v, kc__sj_span *sp)
    {
        string_view tok = tok_trim(v.raw_json_token());
        od::json_type t;
        if (auto c = v.type().get(t))
            return err(c, tok.data(), "malformed value");
        if (t == od::json_type::object || t == od::json_type::array)
            return container(v, t, sp);
        sp->val_off = static_cast<uint32_t>(tok.data() - text);
        sp->val_len = static_cast<uint32_t>(tok.size());
        error_code c = simdjson::SUCCESS;
        switch (t) {
        case od::json_type::string: {
            sp->type = KC_JSON_STRING;
            if (tok.size() < 2 || !memchr(tok.data() + 1, '\\', tok.size() - 2))
                break;
            sp->flags |= KC__SJ_SPAN_STR_ESC;
            string_view s;
            c = v.get_string().get(s);
            break;
        }
        case od::json_type::number: {
            od::number n;
            if (!(c = v.get_number().get(n))) {
                sp->type = n.is_int64() ? KC_JSON_INT : KC_JSON_DOUBLE;
            } else { /* an integer beyond uint64 (get_number refuses it) is still a number */
                double d;
                sp->type = KC_JSON_DOUBLE;
                c = v.get_double().get(d);
            }
            break;
        }
        case od::json_type::boolean: {
            bool b;
            sp->type = KC_JSON_BOOL;
            c = v.get_bool().get(b);
            break;
        }
        case od::json_type::null: {
            bool isnull = false;
            sp->type = KC_JSON_NULL;
            if (!(c = v.is_null().get(isnull)) && !isnull)
                c = simdjson::N_ATOM_ERROR;
            break;
        }
        default:
            break;
        }
        return c ? err(c, tok.data(), "malformed value") : 0;
    }
    /* The key of f (raw: after its opening quote) up to the value at vat. */
    int key(od::field &f, const char *kr, const char *vat, kc__sj_span *sp)
    {
        const char *p = vat - 1; /* back over whitespace, ':' and whitespace to the quote */
        while (p > kr && static_cast<unsigned char>(*p) <= 0x20)
            p--;
        if (p > kr && *p == ':')
            p--;
        while (p > kr && static_cast<unsigned char>(*p) <= 0x20)
            p--;
        size_t raw_n = p >= kr && *p == '"' ? static_cast<size_t>(p - kr) : 0;
        sp->flags |= KC__SJ_SPAN_KEY;
        if (!memchr(kr, '\\', raw_n)) {
            sp->key_off = static_cast<uint32_t>(kr - text);
            sp->key_len = static_cast<uint32_t>(raw_n);
            return 0;
        }
        string_view k;
        if (auto c = f.unescaped_key().get(k))
            return err(c, kr - 1, "malformed key");
        if (!grow(reinterpret_cast<void **>(&out->keys), &out->keys_cap, out->keys_n + k.size() + 1,
                  1))
            return fail(e, KC_ENOMEM, -1, "out of memory");
        memcpy(out->keys + out->keys_n, k.data(), k.size());
        sp->flags |= KC__SJ_SPAN_KEY_ESC;
        sp->key_off = static_cast<uint32_t>(out->keys_n);
        sp->key_len = static_cast<uint32_t>(k.size());
        out->keys_n += k.size();
        return 0;
    }
    int members(od::object &o)
    {
        for (auto fr : o) {
            od::field f;
            if (auto c = std::move(fr).get(f))
                return err(c, nullptr, "malformed object");
            kc__sj_span *sp = next();
            if (!sp)
                return fail(e, KC_ENOMEM, -1, "out of memory");
            const char *kr = f.key().raw();
            const char *vat = f.value().raw_json_token().data();
            if (int r = key(f, kr, vat, sp))
                return r;
            if (int r = value(f.value(), sp))
                return r;
        }
        return 0;
    }
    int elements(od::array &a)
    {
        for (auto er : a) {
            od::value el;
            if (auto c = std::move(er).get(el))
                return err(c, nullptr, "malformed array");
            kc__sj_span *sp = next();
            if (!sp)
                return fail(e, KC_ENOMEM, -1, "out of memory");
            if (int r = value(el, sp))
                return r;
        }
        return 0;
    }
};

} // namespace

extern "C" {

int kc__sj_iter(kc__sj_ctx *ctx, const char *text, size_t len, const char *pointer,
                kc__sj_iter_out *out, kc__sj_err *e)
{
    od::document doc;
    int r = iterate(ctx, text, len, len + KC__SJ_PADDING, doc, e, 0);
    if (r)
        return r == KC_ENOMEM ? r : KC_EPARSE;
    od::value v;
    error_code c = doc.at_pointer(pointer).get(v);
    if (c == simdjson::NO_SUCH_FIELD || c == simdjson::INDEX_OUT_OF_BOUNDS ||
        c == simdjson::INCORRECT_TYPE || c == simdjson::INVALID_JSON_POINTER)
        return fail(e, KC_ENOTFOUND, -1, "%s: no such path", pointer);
    walker w{doc, text, text + len, 0, e, ctx, true};
    pass p{text, out, e, w};
    if (c)
        return p.err(c, nullptr, pointer);
    od::json_type t;
    if ((c = v.type().get(t)))
        return p.err(c, nullptr, pointer);
    if (t == od::json_type::object) {
        od::object o;
        if ((c = v.get_object().get(o)))
            return p.err(c, nullptr, pointer);
        return p.members(o);
    }
    if (t == od::json_type::array) {
        od::array a;
        if ((c = v.get_array().get(a)))
            return p.err(c, nullptr, pointer);
        return p.elements(a);
    }
    return fail(e, KC_EINVAL, -1, "\"%s\": value is %s, not an object or array", pointer,
                type_name(t));
}

int kc__sj_token(kc__sj_ctx *ctx, const char *tok, size_t len, size_t avail,
                 enum kc__sj_tok_want want, kc__sj_str *s, int64_t *i, double *d)
{
    od::document doc;
    kc__sj_err e = {0, -1, ""};
    error_code c = simdjson::SUCCESS;
    if (want == KC__SJ_TOK_STRING) {
        int r = iterate(ctx, tok, len, avail, doc, &e, 0);
        if (r)
            return r == KC_ENOMEM ? r : KC_EINVAL;
        string_view sv;
        if (!(c = doc.get_string().get(sv)))
            *s = {sv.data(), sv.size()};
    } else {
        /* A number is read as the element of "[tok]" (the scratch) with the calls the pass made,
         * so that simdjson parses it as the pass did: a root number, or get_double where the pass
         * used get_number, disagree on some exponents ("0e00000000012394911434645837222"). */
        if (!reserve(ctx, len + 2))
            return KC_ENOMEM;
        ctx->buf[0] = '[';
        memcpy(ctx->buf + 1, tok, len);
        ctx->buf[len + 1] = ']';
        int r = iterate(ctx, ctx->buf, len + 2, ctx->cap, doc, &e, 0);
        if (r)
            return r == KC_ENOMEM ? r : KC_EINVAL;
        od::array a;
        od::value v;
        od::number n;
        if (!(c = doc.get_array().get(a)) && !(c = a.at(0).get(v))) {
            if (!(c = v.get_number().get(n)) && want == KC__SJ_TOK_INT) /* as the pass typed it */
                c = n.is_int64() ? (*i = n.get_int64(), simdjson::SUCCESS)
                                 : simdjson::INCORRECT_TYPE;
            else if (!c)
                *d = n.as_double();
            else if (want == KC__SJ_TOK_DOUBLE) /* beyond uint64: get_number refuses it */
                c = v.get_double().get(*d);
        }
    }
    if (c == simdjson::MEMALLOC)
        return KC_ENOMEM;
    return c ? KC_EINVAL : 0;
}

} /* extern "C" */

KC_SJ_END_OF_FILE
