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
 * every field that has it; labels and annotations share one string-map loop. A member the walker
 * reads may appear only once (walker::once): with two "metadata" members the extracted name
 * would come from one and the stored text would carry both. Members it does not read go through
 * walker::skip, which validates them in strict mode.
 *
 * Shard filter (kc__sj_ctx_set_shard): once metadata.uid or metadata.namespace (the filter's
 * field) is read and hashes outside the ranges, the rest of metadata is skipped like spec and
 * m->shard_out is set; the caller drops the object without building it. An absent field (hash of
 * "") is the caller's to decide, after the walk.
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
        return null_literal(v, field);
    if (t != want)
        return type_err(field, type_name(want), at);
    *present = true;
    return 0;
}

int walker::opt_string(od::value &v, kc__sj_str *out, const char *field)
{
    string_view raw = v.raw_json_token();
    if (raw[0] != '"') { /* null (absent), or not a string: nullable says which */
        bool present = false;
        int r = nullable(v, od::json_type::string, &present, field);
        if (r || !present)
            return r;
    }
    string_view s;
    if (auto c = v.get_string().get(s))
        return err(c, field);
    if (int r = no_nul(s, raw, field))
        return r;
    out->p = s.data();
    out->n = s.size();
    return 0;
}

int walker::nul_err(const char *field, const char *at)
{
    return fail(e, KC_EPARSE, off(at),
                "%s contains a NUL character (\\u0000): refused, its C string would be cut short",
                field);
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
    auto c = doc.get_object().get(o);
    if (!c)
        return 0;
    if (c == simdjson::INCORRECT_TYPE)
        return fail(e, KC_EPARSE, off(base), "%s is not a JSON object", what);
    if (c == simdjson::INCOMPLETE_ARRAY_OR_OBJECT) {
        /* On-Demand checks that the last token closes the object, and reports it at the start. */
        bool trailing = false;
        int64_t at = kc__json_document_end(base, static_cast<size_t>(end - base), &trailing);
        if (at == end - base)
            return fail(e, KC_EPARSE, off(end),
                        "%s is truncated: it ends inside an object or array", what);
        return fail(e, KC_EPARSE, off(base + at),
                    trailing ? "trailing data after %s" : "%s: unbalanced brackets", what);
    }
    return err(c, what);
}

int walker::null_literal(od::value &v, const char *field)
{
    /* type() looks at the first byte only: "nul" or "n\0" is not null */
    const char *at = v.raw_json_token().data();
    bool isnull = false;
    if (v.is_null().get(isnull) || !isnull)
        return fail(e, KC_EPARSE, off(at), "%s: malformed literal (not null)", field);
    return 0;
}

int walker::truncated(const char *what)
{
    return fail(e, KC_EPARSE, off(end), "%s: the text ends early (truncated?)", what);
}

int walker::no_value(od::value &v, const char *what)
{
    const char *at = v.raw_json_token().data();
    return fail(e, KC_EPARSE, off(at), "%s: '%c' where a value should be", what, *at);
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
        if (int r = w.key(f, nm.key))
            return r;
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
        const char *kat = f.key().raw() - 1; /* unescaped_key() forgets the raw key */
        if (auto c = f.unescaped_key().get(k))
            return err(c, nm.key);
        string_view raw = f.value().raw_json_token();
        if (auto c = f.value().get_string().get(s))
            return err(c, nm.value);
        if (int r = no_nul(s, raw, nm.value))
            return r;
        /* "key":value with no escape and no whitespace in it: the key cannot hold a NUL */
        if (k.size() + 3 != static_cast<size_t>(raw.data() - kat) && memchr(k.data(), 0, k.size()))
            return nul_err(nm.key, kat);
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
            return skip(f.value(), nm.value);
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
        kc__sj_str uid = {nullptr, 0}, apiv = {nullptr, 0}, kind = {nullptr, 0},
                   name = {nullptr, 0};
        bool ctrl = false;
        unsigned seen = 0;
        for (auto fr : o) {
            od::field f;
            if (auto c = std::move(fr).get(f))
                return err(c, "metadata.ownerReferences");
            if (int r = key(f, "metadata.ownerReferences[] key"))
                return r;
            od::raw_json_string k = f.key();
            if (k.unsafe_is_equal("uid")) {
                if (int r = once(&seen, 1, k.raw(), "metadata.ownerReferences[].uid"))
                    return r;
                if (int r = opt_string(f.value(), &uid, "metadata.ownerReferences[].uid"))
                    return r;
            } else if (k.unsafe_is_equal("controller")) {
                if (int r = once(&seen, 2, k.raw(), "metadata.ownerReferences[].controller"))
                    return r;
                bool present = false;
                if (int r = nullable(f.value(), od::json_type::boolean, &present,
                                     "metadata.ownerReferences[].controller"))
                    return r;
                if (!present)
                    continue;
                if (auto c = f.value().get_bool().get(ctrl))
                    return err(c, "metadata.ownerReferences[].controller");
            } else if (k.unsafe_is_equal("apiVersion")) {
                if (int r = once(&seen, 4, k.raw(), "metadata.ownerReferences[].apiVersion"))
                    return r;
                if (int r = opt_string(f.value(), &apiv, "metadata.ownerReferences[].apiVersion"))
                    return r;
            } else if (k.unsafe_is_equal("kind")) {
                if (int r = once(&seen, 8, k.raw(), "metadata.ownerReferences[].kind"))
                    return r;
                if (int r = opt_string(f.value(), &kind, "metadata.ownerReferences[].kind"))
                    return r;
            } else if (k.unsafe_is_equal("name")) {
                if (int r = once(&seen, 16, k.raw(), "metadata.ownerReferences[].name"))
                    return r;
                if (int r = opt_string(f.value(), &name, "metadata.ownerReferences[].name"))
                    return r;
            } else if (int r = skip(f.value(), "metadata.ownerReferences[]")) {
                return r; /* blockOwnerDeletion…: a string is consumed, never left to On-Demand */
            }
        }
        if (ctrl && !m->has_controller) { /* the first controller, as metav1.GetControllerOf */
            m->has_controller = true;
            m->controller_uid = uid;
            m->ctrl_api_version = apiv;
            m->ctrl_kind = kind;
            m->ctrl_name = name;
        }
        return 0;
    });
}

int walker::finalizers(od::value &v, kc__sj_meta *m)
{
    return each_element(v, "metadata.finalizers", [&](od::value &el) -> int {
        m->n_finalizers++;
        return skip(el, "metadata.finalizers[]");
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
        if (int r = skip(v, "metadata.managedFields", &close))
            return r;
        raw = string_view(vat, static_cast<size_t>(close + 1 - vat));
    } else if (t == od::json_type::null) {
        raw = string_view(vat, 4);
        bool present = false; /* checks the literal: "n\0" is not null */
        if (int r = nullable(v, t, &present, "metadata.managedFields"))
            return r;
    } else {
        return type_err("metadata.managedFields", "an array", vat);
    }
    m->mf_off = static_cast<size_t>(key - 1 - obj_start);
    m->mf_len = static_cast<size_t>(raw.data() + raw.size() - (key - 1));
    return 0;
}

namespace
{

/* The metadata members the walker reads, one bit each (each may appear once). */
enum meta_member : unsigned {
    MM_OTHER = 0,
    MM_ANNOTATIONS = 1u << 0,
    MM_DELETION = 1u << 1,
    MM_FINALIZERS = 1u << 2,
    MM_GENERATION = 1u << 3,
    MM_LABELS = 1u << 4,
    MM_MANAGED = 1u << 5,
    MM_NAME = 1u << 6,
    MM_NAMESPACE = 1u << 7,
    MM_OWNERS = 1u << 8,
    MM_RV = 1u << 9,
    MM_UID = 1u << 10,
};

const char *const meta_field[] = {
    "metadata.annotations",
    "metadata.deletionTimestamp",
    "metadata.finalizers",
    "metadata.generation",
    "metadata.labels",
    "metadata.managedFields",
    "metadata.name",
    "metadata.namespace",
    "metadata.ownerReferences",
    "metadata.resourceVersion",
    "metadata.uid",
};

meta_member member_of(od::raw_json_string k)
{
    switch (k.raw()[0]) {
    case 'a':
        return k.unsafe_is_equal("annotations") ? MM_ANNOTATIONS : MM_OTHER;
    case 'd':
        return k.unsafe_is_equal("deletionTimestamp") ? MM_DELETION : MM_OTHER;
    case 'f':
        return k.unsafe_is_equal("finalizers") ? MM_FINALIZERS : MM_OTHER;
    case 'g':
        return k.unsafe_is_equal("generation") ? MM_GENERATION : MM_OTHER;
    case 'l':
        return k.unsafe_is_equal("labels") ? MM_LABELS : MM_OTHER;
    case 'm':
        return k.unsafe_is_equal("managedFields") ? MM_MANAGED : MM_OTHER;
    case 'n':
        return k.unsafe_is_equal("name")        ? MM_NAME
               : k.unsafe_is_equal("namespace") ? MM_NAMESPACE
                                                : MM_OTHER;
    case 'o':
        return k.unsafe_is_equal("ownerReferences") ? MM_OWNERS : MM_OTHER;
    case 'r':
        return k.unsafe_is_equal("resourceVersion") ? MM_RV : MM_OTHER;
    case 'u':
        return k.unsafe_is_equal("uid") ? MM_UID : MM_OTHER;
    default:
        return MM_OTHER;
    }
}

} // namespace

int walker::deletion(od::value &v, kc__sj_meta *m)
{
    bool isnull = false;
    if (auto c = v.is_null().get(isnull))
        return err(c, "metadata.deletionTimestamp");
    if (isnull)
        return 0;
    kc__sj_str s = {nullptr, 0};
    m->deleting = true;
    return opt_string(v, &s, "metadata.deletionTimestamp");
}

int walker::metadata(od::value &v, kc__sj_meta *m)
{
    od::object o;
    if (int r = req_object(v, o, "metadata"))
        return r;
    unsigned seen = 0;
    for (auto fr : o) {
        od::field f;
        if (auto c = std::move(fr).get(f))
            return err(c, "metadata");
        if (int r = key(f, "metadata key"))
            return r;
        od::raw_json_string k = f.key();
        meta_member mm = member_of(k);
        int r = 0;
        if (mm != MM_OTHER &&
            (r = once(&seen, mm, k.raw(), meta_field[__builtin_ctz(static_cast<unsigned>(mm))])))
            return r;
        od::value &fv = f.value();
        if (m->shard_out) { /* out of the shard filter's ranges: dropped, not read */
            if ((r = skip(fv, "metadata")))
                return r;
            continue;
        }
        switch (mm) {
        case MM_ANNOTATIONS:
            r = annotations(fv, m);
            break;
        case MM_DELETION:
            r = deletion(fv, m);
            break;
        case MM_FINALIZERS:
            r = finalizers(fv, m);
            break;
        case MM_GENERATION: {
            const char *vat = fv.raw_json_token().data();
            if (fv.get_int64().get(m->generation))
                return type_err("metadata.generation", "an integer", vat);
            break;
        }
        case MM_LABELS:
            r = labels(fv);
            break;
        case MM_MANAGED:
            r = managed_fields(fv, k.raw(), m);
            break;
        case MM_NAME:
            r = opt_string(fv, &m->name, "metadata.name");
            break;
        case MM_NAMESPACE:
            r = opt_string(fv, &m->ns, "metadata.namespace");
            if (!r && ctx->shard_field == KC_SHARD_FIELD_NAMESPACE)
                m->shard_out =
                    !kc_shard_selector_match_hash(ctx->shard, kc_shard_hash(m->ns.p, m->ns.n));
            break;
        case MM_OWNERS:
            r = owner_refs(fv, m);
            break;
        case MM_RV:
            r = opt_string(fv, &m->rv, "metadata.resourceVersion");
            break;
        case MM_UID:
            r = opt_string(fv, &m->uid, "metadata.uid");
            if (!r && ctx->shard_field == KC_SHARD_FIELD_UID)
                m->shard_out =
                    !kc_shard_selector_match_hash(ctx->shard, kc_shard_hash(m->uid.p, m->uid.n));
            break;
        case MM_OTHER: /* creationTimestamp, generateName…: a string consumed (skip_container) */
            r = skip(fv, "metadata");
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
    m->off = off(start);
    obj_start = start; /* mf_off is relative to the object */
    unsigned seen = 0;
    for (auto fr : o) {
        od::field f;
        if (auto c = std::move(fr).get(f))
            return err(c, "object");
        if (int r = key(f, "object key"))
            return r;
        od::raw_json_string k = f.key();
        const char *ks = k.raw();
        int r = 0;
        if (ks[0] == 'k' && k.unsafe_is_equal("kind")) {
            if ((r = once(&seen, 1, ks, "kind")))
                return r;
            string_view tok = tok_trim(f.value().raw_json_token());
            r = opt_string(f.value(), &m->kind, "kind");
            m->has_kind = m->kind.n > 0;
            m->kind_off = static_cast<size_t>(ks - 1 - start);
            m->kind_len = static_cast<size_t>(tok.data() + tok.size() - (ks - 1));
        } else if (ks[0] == 'a' && k.unsafe_is_equal("apiVersion")) {
            if ((r = once(&seen, 2, ks, "apiVersion")))
                return r;
            string_view tok = tok_trim(f.value().raw_json_token());
            r = opt_string(f.value(), &m->api_version, "apiVersion");
            m->has_api_version = m->api_version.n > 0;
            m->apiv_off = static_cast<size_t>(ks - 1 - start);
            m->apiv_len = static_cast<size_t>(tok.data() + tok.size() - (ks - 1));
        } else if (ks[0] == 'm' && k.unsafe_is_equal("metadata")) {
            if ((r = once(&seen, 4, ks, "metadata")))
                return r;
            r = metadata(f.value(), m);
            m->meta_off = static_cast<size_t>(ks - 1 - start);
            m->meta_len = static_cast<size_t>(loc_or_end() - (ks - 1));
        } else { /* spec, status, …: kept as text, never read */
            r = skip(f.value(), "an object member");
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
