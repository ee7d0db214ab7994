/*
 * obj_ident.c — identity objects (kc__obj_ident_new, json/obj_internal.h): a kc_obj holding only
 * what names an object — apiVersion, kind, metadata name, namespace, uid and resourceVersion —
 * followed, in the same allocation, by bytes of the caller's own.
 *
 * Why: an informer's store keys objects by namespace/name and resumes watches by resourceVersion;
 * it needs nothing else. A cache that keeps the rest in a denser form of its own (the node agent
 * cache keeps a pod's labels, owners and container statuses as packed strings, not JSON) lets the
 * informer store this identity with its form appended (kc_informer_opts.transform), so the object
 * is held once. The stored text is valid JSON (kc_obj_json, kc_obj_get_* work on it); the
 * extracted fields are copies as in any kc_obj (struct kc_obj layout: text, NUL, strings, then
 * the caller's bytes at ext_off, 8-aligned; padding after, when short, for simdjson's in-place
 * reads of the text).
 */
#include "core/internal.h"
#include "json/obj_internal.h"
#include "json/write_str.h"

#include <stdlib.h>
#include <string.h>

#define MAX_EXT ((size_t)1 << 30)

/* The stored text: the identity members of src that are not empty. */
/* The members of keys/vals whose value is not empty, after "{"; *first: none written yet. */
static int members(kc__buf *b, const char *const *keys, const char *const *vals, int n, bool first)
{
    int r = 0;
    for (int i = 0; i < n && !r; i++) {
        if (!*vals[i])
            continue;
        r = kc__buf_printf(b, "%s\"%s\":", first ? "" : ",", keys[i]);
        if (!r)
            r = kc__json_buf_string(b, vals[i], strlen(vals[i]));
        first = false;
    }
    return r;
}

static int ident_text(const kc_obj *src, kc__buf *b)
{
    static const char *const top[] = {"apiVersion", "kind"};
    static const char *const meta[] = {"name", "namespace", "uid", "resourceVersion"};
    const char *tv[] = {kc_obj_api_version(src), kc_obj_kind(src)};
    const char *mv[] = {kc_obj_name(src), kc_obj_namespace(src), kc_obj_uid(src),
                        kc_obj_resource_version(src)};
    int r = kc__buf_append_char(b, '{');
    r = r ? r : members(b, top, tv, 2, true);
    r = r ? r : kc__buf_printf(b, "%s\"metadata\":{", *tv[0] || *tv[1] ? "," : "");
    r = r ? r : members(b, meta, mv, 4, true);
    return r ? r : kc__buf_append_str(b, "}}");
}

int kc__obj_ident_new(const kc_obj *src, size_t ext_size, kc_obj **ret)
{
    *ret = NULL;
    if (ext_size > MAX_EXT)
        return KC_ETOOLARGE;
    const char *v[F_CTRL] = {kc_obj_api_version(src), kc_obj_kind(src),
                             kc_obj_namespace(src),   kc_obj_name(src),
                             kc_obj_uid(src),         kc_obj_resource_version(src)};
    kc__buf b;
    kc__buf_init(&b, 0);
    int r = ident_text(src, &b);
    if (r) {
        kc__buf_free(&b);
        return r;
    }
    size_t strs = 0;
    for (int i = 0; i < F_CTRL; i++)
        strs += *v[i] ? strlen(v[i]) + 1 : 0;
    size_t at = sizeof(struct kc_obj) + b.len + 1 + strs;
    size_t ext_at = (at + 7) & ~(size_t)7;
    size_t total = ext_at + ext_size;
    if (total - (sizeof(struct kc_obj) + b.len) < KC__SJ_PADDING)
        total = sizeof(struct kc_obj) + b.len + KC__SJ_PADDING;
    struct kc_obj *o = calloc(1, total);
    if (!o) {
        kc__buf_free(&b);
        return KC_ENOMEM;
    }
    atomic_init(&o->refs, 1);
    o->json_len = (uint32_t)b.len;
    o->heap = (uint32_t)total;
    memcpy(o->json, b.data, b.len + 1);
    kc__buf_free(&b);
    char *s = o->json + o->json_len + 1;
    for (int i = 0; i < F_CTRL; i++) {
        if (!*v[i])
            continue;
        size_t n = strlen(v[i]);
        o->off[i] = (uint32_t)(s - (char *)o);
        memcpy(s, v[i], n + 1);
        s += n + 1;
    }
    o->ext_off = ext_size ? (uint32_t)ext_at : 0;
    o->deleting = kc_obj_deleting(src);
    o->generation = kc_obj_generation(src);
    o->rv_int = src->rv_int;
    *ret = o;
    return 0;
}
