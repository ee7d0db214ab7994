/*
 * doc_jsonpatch.c — kc_doc_json_patch_diff: the RFC 6902 JSON Patch that turns one document into
 * another (a mutating admission webhook's answer, built from the object it was sent and the object
 * its handler wants).
 *
 * The two trees are walked together, building the current path (RFC 6901: '~' written "~0", '/'
 * written "~1") in one growable buffer:
 *   - equal values (numbers by value, object members in any order: kc__doc_jequal) give nothing;
 *   - two objects: a member only in `from` is removed, one only in `to` is added, a member on both
 *     sides is diffed recursively;
 *   - two arrays: the equal common prefix and suffix are kept; of the differing middle, the first
 *     min(n_from, n_to) elements are diffed pairwise in place, then the extra elements of `from`
 *     are removed from the highest index down (so the indices still to be removed stay valid), or
 *     the extra elements of `to` are added at increasing indices (each insert lands before the
 *     kept suffix);
 *   - anything else (a type change, a changed scalar) is one "replace" of the value, the whole
 *     document ("" path) included.
 * Ops only name paths that exist when they run (replace and remove target existing values, add
 * targets an existing parent), so the patch applies in order to `from` with any RFC 6902 applier.
 * It is not minimal (no moves are detected), only correct and small for the usual edits. The
 * trees are at most KC__DOC_MAX_DEPTH deep, which bounds the recursion.
 */
#include "json/doc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct differ {
    kc__buf path; /* the current JSON pointer */
    json_t *ops;  /* the array being built */
    bool oom;
} differ;

/* Append one op; value (borrowed) may be NULL for "remove". */
static void emit(differ *d, const char *op, const json_t *value)
{
    if (d->oom)
        return;
    json_t *o = json_object();
    json_t *p = json_stringn(d->path.data ? d->path.data : "", d->path.len);
    if (!o || !p || json_object_set_new(o, "op", json_string(op)) ||
        json_object_set_new(o, "path", p) ||
        (value && json_object_set_new(o, "value", json_incref((json_t *)value))) ||
        json_array_append_new(d->ops, o)) {
        if (!o)
            json_decref(p);
        d->oom = true;
    }
}

/* Push "/token" (escaped) onto the path; returns the length to truncate back to. */
static size_t push_key(differ *d, const char *k, size_t n)
{
    size_t mark = d->path.len;
    if (kc__buf_append_char(&d->path, '/'))
        d->oom = true;
    for (size_t i = 0; i < n && !d->oom; i++) {
        int rc = k[i] == '~'   ? kc__buf_append(&d->path, "~0", 2)
                 : k[i] == '/' ? kc__buf_append(&d->path, "~1", 2)
                               : kc__buf_append_char(&d->path, k[i]);
        if (rc)
            d->oom = true;
    }
    return mark;
}

static size_t push_index(differ *d, size_t i)
{
    size_t mark = d->path.len;
    if (kc__buf_printf(&d->path, "/%zu", i))
        d->oom = true;
    return mark;
}

static void diff_value(differ *d, const json_t *from, const json_t *to);

/* The member k of to, diffed against from's member f (NULL: added). */
static void diff_member(differ *d, const char *k, size_t kn, const json_t *f, const json_t *v)
{
    if (f == v) /* a subtree both documents share (copy-on-write): nothing changed below */
        return;
    size_t mark = push_key(d, k, kn);
    if (!f)
        emit(d, "add", v);
    else
        diff_value(d, f, v);
    kc__buf_truncate(&d->path, mark);
}

/* Members are walked side by side while both objects list the same keys in the same order (a
 * document and its edited copy nearly always do: changes keep a member's place, additions go to
 * the end), without a hash lookup; past the first difference each remaining key is looked up.
 * A key of either remainder cannot be in the common prefix (keys are unique), so the lookups over
 * the whole other object find exactly the remainder's matches. */
static void diff_objects(differ *d, const json_t *from, const json_t *to)
{
    void *fi = json_object_iter((json_t *)from), *ti = json_object_iter((json_t *)to);
    while (fi && ti && !d->oom) {
        const char *fk = json_object_iter_key(fi), *tk = json_object_iter_key(ti);
        size_t fkn = json_object_iter_key_len(fi), tkn = json_object_iter_key_len(ti);
        if (fkn != tkn || memcmp(fk, tk, fkn) != 0)
            break;
        diff_member(d, tk, tkn, json_object_iter_value(fi), json_object_iter_value(ti));
        fi = json_object_iter_next((json_t *)from, fi);
        ti = json_object_iter_next((json_t *)to, ti);
    }
    for (; fi && !d->oom; fi = json_object_iter_next((json_t *)from, fi)) {
        const char *k = json_object_iter_key(fi);
        size_t kn = json_object_iter_key_len(fi);
        if (!json_object_getn(to, k, kn)) {
            size_t mark = push_key(d, k, kn);
            emit(d, "remove", NULL);
            kc__buf_truncate(&d->path, mark);
        }
    }
    for (; ti && !d->oom; ti = json_object_iter_next((json_t *)to, ti)) {
        const char *k = json_object_iter_key(ti);
        size_t kn = json_object_iter_key_len(ti);
        diff_member(d, k, kn, json_object_getn(from, k, kn), json_object_iter_value(ti));
    }
}

static void diff_arrays(differ *d, const json_t *from, const json_t *to)
{
    size_t nf = json_array_size(from), nt = json_array_size(to), pre = 0, suf = 0;
    while (pre < nf && pre < nt &&
           kc__doc_jequal(json_array_get(from, pre), json_array_get(to, pre)))
        pre++;
    while (suf < nf - pre && suf < nt - pre &&
           kc__doc_jequal(json_array_get(from, nf - 1 - suf), json_array_get(to, nt - 1 - suf)))
        suf++;
    size_t mf = nf - pre - suf, mt = nt - pre - suf, common = mf < mt ? mf : mt;
    for (size_t i = 0; i < common && !d->oom; i++) {
        size_t mark = push_index(d, pre + i);
        diff_value(d, json_array_get(from, pre + i), json_array_get(to, pre + i));
        kc__buf_truncate(&d->path, mark);
    }
    for (size_t i = mf; i > common && !d->oom; i--) { /* highest index first */
        size_t mark = push_index(d, pre + i - 1);
        emit(d, "remove", NULL);
        kc__buf_truncate(&d->path, mark);
    }
    for (size_t i = common; i < mt && !d->oom; i++) {
        size_t mark = push_index(d, pre + i);
        emit(d, "add", json_array_get(to, pre + i));
        kc__buf_truncate(&d->path, mark);
    }
}

static void diff_value(differ *d, const json_t *from, const json_t *to)
{
    if (d->oom || from == to || kc__doc_jequal(from, to))
        return;
    if (json_is_object(from) && json_is_object(to))
        diff_objects(d, from, to);
    else if (json_is_array(from) && json_is_array(to))
        diff_arrays(d, from, to);
    else
        emit(d, "replace", to);
}

int kc_doc_json_patch_diff(const kc_doc *from, const kc_doc *to, char **ret, size_t *ret_len,
                           kc_error *err)
{
    if (!from || !to || !ret)
        return kc_error_set(err, KC_EINVAL, "kc_doc_json_patch_diff: NULL argument");
    differ d = {KC__BUF_INIT(0), json_array(), false};
    if (!d.ops)
        return kc_error_set(err, KC_ENOMEM, "kc_doc_json_patch_diff: out of memory");
    diff_value(&d, from->root, to->root);
    kc__buf_free(&d.path);
    int rc = d.oom ? kc_error_set(err, KC_ENOMEM, "kc_doc_json_patch_diff: out of memory")
                   : kc__doc_dump(d.ops, ret, ret_len, err);
    json_decref(d.ops);
    return rc;
}
