/*
 * sj_project.cpp — the field projection of kc_decode_opts.keep: the members of one object's text
 * that lie on or under a kept path, copied verbatim, everything else dropped.
 *
 * Why a second walk: the decoders' walker (sj_meta.cpp) reads metadata only and skips the rest by
 * a depth table; the projection must look into spec and status. It runs only when keep is set
 * (the default decode never reaches this file), over the object's compact text, with a parser of
 * its own (a thread-local On-Demand parser: the context's parser is busy iterating the LIST or
 * watch line that holds this object). Cost: one more stage 1 over the object, measured in
 * docs/decoding.md ("Field projection").
 *
 * Matching. keep is a NULL-terminated list of JSON Pointers ("/metadata", "/spec/nodeName",
 * "/status/containerStatuses/ * /name" without the spaces); "*" matches every member of an object
 * or every element of an array. A member whose path equals a kept pointer or lies under it is
 * copied whole; a member on the way to a kept pointer is descended into (objects and arrays); the
 * rest is dropped. Containers descended into that keep nothing are dropped too (so array indices
 * of a projection need not match the original's). Top-level kind and apiVersion are always kept;
 * metadata.managedFields is dropped unless drop_mf is false. Keys are compared as they appear in
 * the text (escaped form): a key with '/' or '~' cannot be named. Values are copied as they are
 * (the input is compact, so the output is too).
 */
#include "json/sj_internal.hpp"

using namespace kc_sj;

namespace
{

/* One kept pointer, matched up to the component starting at c (after its '/'). */
struct active {
    const char *c;
};

struct projector {
    std::string out;
    bool drop_mf;
    kc__sj_err *e;
    const char *base;

    int err(error_code c, const char *at)
    {
        return sjfail(e, c, at ? at - base : -1, "projection");
    }
};

/* Length of the component at c (up to '/' or the end). */
inline size_t comp_len(const char *c)
{
    size_t n = 0;
    while (c[n] && c[n] != '/')
        n++;
    return n;
}

/* The raw key text (escaped, without quotes) starting at k, up to its closing quote. */
inline string_view raw_key(const char *k)
{
    size_t n = 0;
    while (k[n] != '"') {
        if (k[n] == '\\')
            n++;
        n++;
    }
    return string_view(k, n);
}

/* Match key against the actives: *whole when a pointer ends here, else the children in next. */
void match(const std::vector<active> &act, string_view key, bool *whole, std::vector<active> &next)
{
    for (const active &a : act) {
        size_t n = comp_len(a.c);
        if (!((n == 1 && a.c[0] == '*') || string_view(a.c, n) == key))
            continue;
        if (a.c[n] == '\0') {
            *whole = true;
            return;
        }
        next.push_back({a.c + n + 1});
    }
}

int walk_value(projector &p, od::value v, const std::vector<active> &act, bool *kept);

/* A value kept whole: its text. */
int copy_value(projector &p, od::value v)
{
    od::json_type t;
    if (auto c = v.type().get(t))
        return p.err(c, nullptr);
    string_view raw;
    error_code c = simdjson::SUCCESS;
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
        return p.err(c, nullptr);
    p.out.append(raw.data(), raw.size());
    return 0;
}

/* metadata without managedFields. */
int copy_meta(projector &p, od::value v)
{
    od::object o;
    if (v.get_object().get(o))
        return copy_value(p, v); /* not an object: the decoder's walker already refused that */
    p.out.push_back('{');
    bool first = true;
    for (auto fr : o) {
        od::field f;
        if (auto c = std::move(fr).get(f))
            return p.err(c, nullptr);
        string_view k = raw_key(f.key().raw());
        if (k == "managedFields")
            continue;
        if (!first)
            p.out.push_back(',');
        first = false;
        p.out.push_back('"');
        p.out.append(k.data(), k.size());
        p.out.append("\":");
        if (int r = copy_value(p, f.value()))
            return r;
    }
    p.out.push_back('}');
    return 0;
}

/* The members of o on the kept paths, comma-separated, without braces; *kept: any. top: the
 * object is the document (kind, apiVersion always kept; managedFields rule). */
int walk_object(projector &p, od::object o, const std::vector<active> &act, bool top, bool *kept)
{
    *kept = false;
    std::vector<active> next;
    for (auto fr : o) {
        od::field f;
        if (auto c = std::move(fr).get(f))
            return p.err(c, nullptr);
        string_view k = raw_key(f.key().raw());
        bool whole = top && (k == "kind" || k == "apiVersion");
        next.clear();
        if (!whole)
            match(act, k, &whole, next);
        if (!whole && next.empty())
            continue;
        size_t mark = p.out.size();
        if (*kept)
            p.out.push_back(',');
        p.out.push_back('"');
        p.out.append(k.data(), k.size());
        p.out.append("\":");
        bool any = true;
        int r;
        if (whole && top && p.drop_mf && k == "metadata")
            r = copy_meta(p, f.value());
        else if (whole)
            r = copy_value(p, f.value());
        else
            r = walk_value(p, f.value(), next, &any);
        if (r)
            return r;
        if (!any)
            p.out.resize(mark);
        else
            *kept = true;
    }
    return 0;
}

/* A value descended into: objects and arrays keep what matches, scalars nothing. */
int walk_value(projector &p, od::value v, const std::vector<active> &act, bool *kept)
{
    *kept = false;
    od::json_type t;
    if (auto c = v.type().get(t))
        return p.err(c, nullptr);
    if (t == od::json_type::object) {
        od::object o;
        if (auto c = v.get_object().get(o))
            return p.err(c, nullptr);
        p.out.push_back('{');
        if (int r = walk_object(p, o, act, false, kept))
            return r;
        p.out.push_back('}');
        return 0;
    }
    if (t != od::json_type::array)
        return 0;
    od::array a;
    if (auto c = v.get_array().get(a))
        return p.err(c, nullptr);
    std::vector<active> next;
    bool whole = false;
    match(act, "*", &whole, next); /* array elements: only "*" names them */
    p.out.push_back('[');
    bool first = true;
    for (auto er : a) {
        od::value ev;
        if (auto c = std::move(er).get(ev))
            return p.err(c, nullptr);
        size_t mark = p.out.size();
        if (!first)
            p.out.push_back(',');
        bool any = true;
        int r = whole ? copy_value(p, ev) : walk_value(p, ev, next, &any);
        if (r)
            return r;
        if (!any)
            p.out.resize(mark);
        else
            first = false;
    }
    p.out.push_back(']');
    *kept = !first;
    return 0;
}

} // namespace

extern "C" {

int kc__sj_project(const char *text, size_t len, const char *const *keep, bool drop_mf, char **ret,
                   size_t *ret_len, kc__sj_err *e)
{
    static thread_local std::unique_ptr<od::parser> tls;
    if (!tls)
        tls.reset(new (std::nothrow) od::parser());
    if (!tls)
        return fail(e, KC_ENOMEM, -1, "out of memory");
    std::vector<active> act;
    for (const char *const *k = keep; *k; k++)
        if ((*k)[0] == '/' && (*k)[1])
            act.push_back({*k + 1});
    projector p{std::string(), drop_mf, e, text};
    try {
        od::document doc;
        if (auto c = tls->iterate(text, len, len + KC__SJ_PADDING).get(doc))
            return p.err(c, nullptr);
        od::object o;
        if (auto c = doc.get_object().get(o))
            return p.err(c, nullptr);
        bool kept = false;
        if (int r = walk_object(p, o, act, true, &kept))
            return r;
    } catch (const std::bad_alloc &) {
        return fail(e, KC_ENOMEM, -1, "out of memory");
    }
    if (tls->capacity() > ((size_t)1 << 20))
        tls.reset();
    char *s = static_cast<char *>(malloc(p.out.size() + 1));
    if (!s)
        return fail(e, KC_ENOMEM, -1, "out of memory");
    memcpy(s, p.out.data(), p.out.size());
    s[p.out.size()] = '\0';
    *ret = s;
    *ret_len = p.out.size();
    return 0;
}

} /* extern "C" */

KC_SJ_END_OF_FILE
