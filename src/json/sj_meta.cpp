/*
 * sj_meta.cpp — the walker: what one pass of simdjson On-Demand over a Kubernetes object finds.
 *
 * On-Demand iterates the object's top-level members once, in text order. kind and apiVersion are
 * read with their raw spans; metadata is walked (name, namespace, uid, resourceVersion,
 * generation, labels, the initial-events-end annotation, ownerReferences' controller uid, counts
 * of finalizers and owners, deletionTimestamp, and the raw span of managedFields, which is never
 * parsed); every other member (spec, status, …) is skipped by depth counting over the structural
 * index (sj_skip.hpp: a table instead of On-Demand's per-token switch). Results are (pointer,
 * length) spans into the text or into the parser's string buffer (kc__sj_meta, sj.h); building the
 * stored object is C (obj.c).
 *
 * Field types are checked as the API server would send them; null means absent. The "nullable
 * container" prologue (type check, null, object/array) is one helper (opt_object/opt_array) for
 * every field that has it; labels and annotations share one string-map loop.
 */
#include "json/sj_internal.hpp"
#include "json/sj_skip.hpp"

namespace kc_sj
{

int walker::nullable(od::value &v, od::json_type want, bool *present, const char *field)
{
    const char *at = v.raw_json_token().data();
    od::json_type t;
    *present = false;
    if (auto c = v.type().get(t))
        return err(c, field);
    if (t == od::json_type::null)
        return 0;
    if (t != want)
        return type_err(field, type_name(want), at);
    *present = true;
    return 0;
}

int walker::opt_string(od::value &v, kc__sj_str *out, const char *field)
{
    bool present = false;
    int r = nullable(v, od::json_type::string, &present, field);
    if (r || !present)
        return r;
    string_view s;
    if (auto c = v.get_string().get(s))
        return err(c, field);
    out->p = s.data();
    out->n = s.size();
    return 0;
}

int walker::opt_object(od::value &v, od::object &o, bool *present, const char *field)
{
    int r = nullable(v, od::json_type::object, present, field);
    if (r || !*present)
        return r;
    if (auto c = v.get_object().get(o))
        return err(c, field);
    return 0;
}

int walker::opt_array(od::value &v, od::array &a, bool *present, const char *field)
{
    int r = nullable(v, od::json_type::array, present, field);
    if (r || !*present)
        return r;
    if (auto c = v.get_array().get(a))
        return err(c, field);
    return 0;
}

int walker::top_object(od::object &o, const char *what)
{
    if (auto c = doc.get_object().get(o))
        return c == simdjson::INCORRECT_TYPE
                   ? fail(e, KC_EPARSE, off(base), "%s is not a JSON object", what)
                   : err(c, what);
    return 0;
}

int walker::req_object(od::value &v, od::object &o, const char *field)
{
    const char *at = v.raw_json_token().data();
    if (v.get_object().get(o))
        return type_err(field, "an object", at);
    return 0;
}

namespace
{

/* The members of a string-to-string map field (labels, annotations), null = empty: fn(field,
 * value) per member, after checking that the value is a string. Messages name the field. */
struct string_map_names {
    const char *field, *key, *value, *a_value;
};

template <typename F> int string_map(walker &w, od::value &v, const string_map_names &nm, F &&fn)
{
    od::object o;
    bool present = false;
    if (int r = w.opt_object(v, o, &present, nm.field))
        return r;
    if (!present)
        return 0;
    for (auto fr : o) {
        od::field f;
        if (auto c = std::move(fr).get(f))
            return w.err(c, nm.field);
        const char *vat = f.value().raw_json_token().data();
        od::json_type ft;
        if (auto c = f.value().type().get(ft))
            return w.err(c, nm.value);
        if (ft != od::json_type::string)
            return w.type_err(nm.a_value, "a string", vat);
        if (int r = fn(f))
            return r;
    }
    return 0;
}

} // namespace

int walker::labels(od::value &v)
{
    static const string_map_names nm = {"metadata.labels", "metadata.labels key",
                                        "metadata.labels value", "a metadata.labels value"};
    return string_map(*this, v, nm, [&](od::field &f) -> int {
        string_view k, s;
        if (auto c = f.unescaped_key().get(k))
            return err(c, nm.key);
        if (auto c = f.value().get_string().get(s))
            return err(c, nm.value);
        ctx->labels.push_back({{k.data(), k.size()}, {s.data(), s.size()}});
        return 0;
    });
}

int walker::annotations(od::value &v, kc__sj_meta *m)
{
    static const string_map_names nm = {"metadata.annotations", "metadata.annotations key",
                                        "metadata.annotations value",
                                        "a metadata.annotations value"};
    return string_map(*this, v, nm, [&](od::field &f) -> int {
        if (!f.key().unsafe_is_equal("k8s.io/initial-events-end"))
            return 0;
        string_view s;
        if (auto c = f.value().get_string().get(s))
            return err(c, nm.value);
        m->initial_events_end = s == "true";
        return 0;
    });
}

int walker::owner_refs(od::value &v, kc__sj_meta *m)
{
    return each_element(v, "metadata.ownerReferences", [&](od::value &el) -> int {
        od::object o;
        if (int r = req_object(el, o, "metadata.ownerReferences[] entry"))
            return r;
        m->n_owners++;
        kc__sj_str uid = {nullptr, 0};
        bool ctrl = false;
        for (auto fr : o) {
            od::field f;
            if (auto c = std::move(fr).get(f))
                return err(c, "metadata.ownerReferences");
            od::raw_json_string k = f.key();
            if (k.unsafe_is_equal("uid")) {
                if (int r = opt_string(f.value(), &uid, "metadata.ownerReferences[].uid"))
                    return r;
            } else if (k.unsafe_is_equal("controller")) {
                bool present = false;
                if (int r = nullable(f.value(), od::json_type::boolean, &present,
                                     "metadata.ownerReferences[].controller"))
                    return r;
                if (!present)
                    continue;
                if (auto c = f.value().get_bool().get(ctrl))
                    return err(c, "metadata.ownerReferences[].controller");
            }
        }
        if (ctrl && m->controller_uid.n == 0)
            m->controller_uid = uid;
        return 0;
    });
}

int walker::finalizers(od::value &v, kc__sj_meta *m)
{
    return each_element(v, "metadata.finalizers", [&](od::value &) -> int {
        m->n_finalizers++;
        return 0;
    });
}

/* managedFields is never parsed: only its raw span ("managedFields":[…]) is recorded, to be cut. */
int walker::managed_fields(od::value &v, const char *key, kc__sj_meta *m)
{
    const char *vat = v.raw_json_token().data();
    od::json_type t;
    if (auto c = v.type().get(t))
        return err(c, "metadata.managedFields");
    string_view raw;
    if (t == od::json_type::array) {
        const char *close = nullptr;
        if (auto c = skip_container(v, &close))
            return err(c, "metadata.managedFields");
        raw = string_view(vat, static_cast<size_t>(close + 1 - vat));
    } else if (t == od::json_type::null) {
        raw = tok_trim(v.raw_json_token());
    } else {
        return type_err("metadata.managedFields", "an array", vat);
    }
    m->mf_off = static_cast<size_t>(key - 1 - obj_start);
    m->mf_len = static_cast<size_t>(raw.data() + raw.size() - (key - 1));
    return 0;
}

int walker::metadata(od::value &v, kc__sj_meta *m)
{
    od::object o;
    if (int r = req_object(v, o, "metadata"))
        return r;
    for (auto fr : o) {
        od::field f;
        if (auto c = std::move(fr).get(f))
            return err(c, "metadata");
        od::raw_json_string k = f.key();
        const char *ks = k.raw();
        int r = 0;
        switch (ks[0]) {
        case 'a':
            if (k.unsafe_is_equal("annotations"))
                r = annotations(f.value(), m);
            break;
        case 'd':
            if (k.unsafe_is_equal("deletionTimestamp")) {
                bool isnull = false;
                if (auto c = f.value().is_null().get(isnull))
                    return err(c, "metadata.deletionTimestamp");
                if (!isnull) {
                    kc__sj_str s = {nullptr, 0};
                    r = opt_string(f.value(), &s, "metadata.deletionTimestamp");
                    m->deleting = true;
                }
            }
            break;
        case 'f':
            if (k.unsafe_is_equal("finalizers"))
                r = finalizers(f.value(), m);
            break;
        case 'g':
            if (k.unsafe_is_equal("generation")) {
                const char *vat = f.value().raw_json_token().data();
                if (f.value().get_int64().get(m->generation))
                    return type_err("metadata.generation", "an integer", vat);
            }
            break;
        case 'l':
            if (k.unsafe_is_equal("labels"))
                r = labels(f.value());
            break;
        case 'm':
            if (k.unsafe_is_equal("managedFields"))
                r = managed_fields(f.value(), ks, m);
            break;
        case 'n':
            if (k.unsafe_is_equal("name"))
                r = opt_string(f.value(), &m->name, "metadata.name");
            else if (k.unsafe_is_equal("namespace"))
                r = opt_string(f.value(), &m->ns, "metadata.namespace");
            break;
        case 'o':
            if (k.unsafe_is_equal("ownerReferences"))
                r = owner_refs(f.value(), m);
            break;
        case 'r':
            if (k.unsafe_is_equal("resourceVersion"))
                r = opt_string(f.value(), &m->rv, "metadata.resourceVersion");
            break;
        case 'u':
            if (k.unsafe_is_equal("uid"))
                r = opt_string(f.value(), &m->uid, "metadata.uid");
            break;
        default:
            break;
        }
        if (r)
            return r;
    }
    return 0;
}

int walker::object(od::object &o, const char *start, kc__sj_meta *m)
{
    ctx->labels.clear();
    m->text = start;
    obj_start = start; /* mf_off is relative to the object */
    for (auto fr : o) {
        od::field f;
        if (auto c = std::move(fr).get(f))
            return err(c, "object");
        od::raw_json_string k = f.key();
        const char *ks = k.raw();
        int r = 0;
        if (ks[0] == 'k' && k.unsafe_is_equal("kind")) {
            string_view tok = tok_trim(f.value().raw_json_token());
            r = opt_string(f.value(), &m->kind, "kind");
            m->has_kind = m->kind.n > 0;
            m->kind_off = static_cast<size_t>(ks - 1 - start);
            m->kind_len = static_cast<size_t>(tok.data() + tok.size() - (ks - 1));
        } else if (ks[0] == 'a' && k.unsafe_is_equal("apiVersion")) {
            string_view tok = tok_trim(f.value().raw_json_token());
            r = opt_string(f.value(), &m->api_version, "apiVersion");
            m->has_api_version = m->api_version.n > 0;
            m->apiv_off = static_cast<size_t>(ks - 1 - start);
            m->apiv_len = static_cast<size_t>(tok.data() + tok.size() - (ks - 1));
        } else if (ks[0] == 'm' && k.unsafe_is_equal("metadata")) {
            r = metadata(f.value(), m);
            m->meta_off = static_cast<size_t>(ks - 1 - start);
            m->meta_len = static_cast<size_t>(loc_or_end() - (ks - 1));
        } else {
            const char *close = nullptr; /* spec, status, …: kept as text, never read */
            if (auto c = skip_container(f.value(), &close))
                return err(c, "object");
        }
        if (r)
            return r;
    }
    m->len = static_cast<size_t>(loc_or_end() - start);
    m->labels = ctx->labels.data();
    m->n_labels = ctx->labels.size();
    return 0;
}

} // namespace kc_sj

KC_SJ_END_OF_FILE
