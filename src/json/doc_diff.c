/*
 * doc_diff.c — kc_doc_merge_diff: the RFC 7386 JSON merge patch that turns one document into
 * another (the body of a merge PATCH, e.g. of /status after a reconcile).
 *
 * Objects are compared member by member: a member only in `from` becomes null, one only in `to`
 * is copied, members that are objects on both sides are diffed recursively (and left out when
 * equal), anything else that differs (arrays included: merge patches cannot address elements) is
 * replaced whole. Numbers compare by value (kc__doc_jequal). When either whole document is not an
 * object, the patch is `to` itself (RFC 7386: a non-object patch replaces the target, and "{}"
 * would turn a scalar into an empty object), even when they are equal. RFC 7386 cannot express a
 * null *value* (null deletes), so a member set to null in `to` shows up as a deletion.
 *
 * A pointer restricts the diff to one member path (its tokens name object members; "/status"):
 * the values there are diffed as above and wrapped in objects along the path, so the patch holds
 * that path only.
 */
#include "json/doc_internal.h"

#include <stdlib.h>
#include <string.h>

/* The patch turning object from into object to: a new object (empty when equal), NULL on OOM. */
static json_t *diff_objects(const json_t *from, const json_t *to)
{
    json_t *p = json_object();
    const char *k;
    size_t kn;
    json_t *t;
    json_object_keylen_foreach((json_t *)to, k, kn, t)
    {
        if (!p)
            return NULL;
        json_t *f = json_object_getn(from, k, kn), *v = NULL;
        if (!f) {
            v = json_deep_copy(t);
        } else if (json_is_object(f) && json_is_object(t)) {
            v = diff_objects(f, t);
            if (v && json_object_size(v) == 0) {
                json_decref(v);
                continue;
            }
        } else if (!kc__doc_jequal(f, t)) {
            v = json_deep_copy(t);
        } else {
            continue;
        }
        if (!v || json_object_setn_new_nocheck(p, k, kn, v) != 0) {
            json_decref(p);
            return NULL;
        }
    }
    json_object_keylen_foreach((json_t *)from, k, kn, t)
    {
        if (!p)
            return NULL;
        if (!json_object_getn(to, k, kn) && json_object_setn_new_nocheck(p, k, kn, json_null())) {
            json_decref(p);
            return NULL;
        }
    }
    return p;
}

/* The patch turning value from into value to (either may be NULL: absent): a new value, or NULL
 * when there is nothing to change (*oom tells an allocation failure apart). */
static json_t *diff_values(const json_t *from, const json_t *to, bool *oom)
{
    json_t *p = NULL;
    if (!from && !to)
        return NULL;
    if (!to) {
        p = json_null();
    } else if (from && json_is_object(from) && json_is_object(to)) {
        p = diff_objects(from, to);
        if (p && json_object_size(p) == 0) {
            json_decref(p);
            return NULL;
        }
    } else if (from && kc__doc_jequal(from, to)) {
        return NULL;
    } else {
        p = json_deep_copy(to);
    }
    *oom = p == NULL;
    return p;
}

/* The member of v named by an unescaped token, NULL when v is not an object or lacks it. */
static json_t *member(const json_t *v, const char *tok, size_t n)
{
    return v && json_is_object(v) ? json_object_getn(v, tok, n) : NULL;
}

/* Unescape the token starting after the '/' at *p into buf (room for strlen(*p)); advance *p. */
static size_t next_token(const char **p, char *buf)
{
    const char *s = *p + 1;
    size_t n = 0;
    for (; *s && *s != '/'; s++)
        buf[n++] = *s == '~' ? (*++s == '1' ? '/' : '~') : *s;
    buf[n] = '\0';
    *p = s;
    return n;
}

/* Wrap patch (stolen) in objects along the pointer's tokens: {"a":{"b":patch}} for "/a/b". */
static json_t *wrap(const char *ptr, long ntok, json_t *patch, char *tok)
{
    if (ntok == 0 || !patch)
        return patch;
    const char *p = ptr;
    size_t n = next_token(&p, tok);
    json_t *o = json_object();
    json_t *inner = wrap(p, ntok - 1, patch, tok + n + 1);
    if (!o || !inner) {
        json_decref(o);
        json_decref(inner);
        return NULL;
    }
    if (json_object_setn_new_nocheck(o, tok, n, inner) != 0) { /* inner consumed */
        json_decref(o);
        return NULL;
    }
    return o;
}

static int emit(json_t *patch, bool oom, char **ret, size_t *ret_len, kc_error *err)
{
    if (oom) {
        json_decref(patch);
        return kc_error_set(err, KC_ENOMEM, "kc_doc_merge_diff: out of memory");
    }
    if (!patch && !(patch = json_object()))
        return kc_error_set(err, KC_ENOMEM, "kc_doc_merge_diff: out of memory");
    int rc = kc__doc_dump(patch, ret, ret_len, err);
    json_decref(patch);
    return rc;
}

int kc_doc_merge_diff(const kc_doc *from, const kc_doc *to, const char *ptr, char **ret,
                      size_t *ret_len, kc_error *err)
{
    if (!from || !to || !ret)
        return kc_error_set(err, KC_EINVAL, "kc_doc_merge_diff: NULL argument");
    long ntok = kc__doc_ptr_tokens(ptr ? ptr : "");
    if (ntok < 0)
        return kc_error_set(err, KC_EINVAL, "kc_doc_merge_diff: malformed JSON pointer \"%s\"",
                            ptr);
    bool oom = false;
    if (ntok == 0 && (!json_is_object(from->root) || !json_is_object(to->root))) {
        /* Not two objects: the patch is to itself ("{}" would turn a scalar into {}). */
        json_t *whole = json_deep_copy(to->root);
        return emit(whole, !whole, ret, ret_len, err);
    }
    if (ntok == 0)
        return emit(diff_values(from->root, to->root, &oom), oom, ret, ret_len, err);
    /* Room for every token unescaped, each NUL-terminated (tokens only shrink unescaped). */
    char *toks = malloc(strlen(ptr) + (size_t)ntok + 1);
    if (!toks)
        return kc_error_set(err, KC_ENOMEM, "kc_doc_merge_diff: out of memory");
    const json_t *f = from->root, *t = to->root;
    const char *p = ptr;
    for (char *tok = toks; *p; tok += strlen(tok) + 1) {
        size_t n = next_token(&p, tok);
        f = member(f, tok, n);
        t = member(t, tok, n);
    }
    json_t *patch = diff_values(f, t, &oom);
    if (patch && !(patch = wrap(ptr, ntok, patch, toks)))
        oom = true;
    free(toks);
    return emit(patch, oom, ret, ret_len, err);
}
