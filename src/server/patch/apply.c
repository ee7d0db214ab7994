/*
 * apply.c — server-side apply (PATCH application/apply-patch+yaml, #44–#46).
 *
 * Flow: check fieldManager (422) → decode the body (JSON when it starts with '{', else YAML) →
 * check it is a partial object with apiVersion and kind and no managedFields (400) → compute the
 * FieldsV1 set of the applied configuration. Without a current object the applied configuration
 * is the result (server-core fills uid, RV, timestamps). Otherwise, on a copy of current:
 *   1. conflicts: every leaf of the new set that another managedFields entry also owns, and
 *      whose applied value differs from the current one, is a conflict. Without force → 409
 *      Conflict with one FieldManagerConflict cause per field and upstream's message; with force
 *      the field leaves the other manager's set (an emptied entry is dropped);
 *   2. merge: maps merge, keyed lists merge element by element (apply_fields.c keys), other
 *      values replace, null deletes;
 *   3. fields this manager applied last time, dropped now and owned by nobody else are removed;
 *   4. this manager's Apply entry is replaced (or appended) with the new set.
 * Not modelled: the implicit "before-first-apply" owner upstream creates for objects without
 * managedFields, Update-operation tracking (server-core's business), and type-aware defaulting.
 * Thread-safe: pure function.
 */
#include "server/patch/apply_internal.h"
#include "server/patch/patch.h"
#include "server/patch/validate.h"

#include <stdlib.h>
#include <string.h>

/* ---- conflicts ---------------------------------------------------------------------------- */

typedef struct owner_sub {
    size_t entry; /* index in managedFields */
    json_t *set;  /* that entry's subset at the current walk position (borrowed) */
} owner_sub;

typedef struct conflict {
    size_t entry;
    char *path;   /* ".spec.replicas" */
    json_t *keys; /* array of set keys from the root, for removal on force */
} conflict;

typedef struct walker {
    const kc__apply_ctx *ctx;
    kc__buf path;
    const char *keys[KC__PATCH_MAX_DEPTH * 2 + 4];
    size_t nkeys;
    conflict *conf;
    size_t nconf, capconf;
} walker;

static int add_conflict(walker *w, size_t entry)
{
    if (kc__grow(&w->conf, &w->capconf, w->nconf + 1, sizeof *w->conf, 8) < 0)
        return KC_ENOMEM;
    json_t *keys = json_array();
    char *path = kc__strdup(w->path.data ? w->path.data : "");
    for (size_t i = 0; keys && i < w->nkeys; i++)
        json_array_append_new(keys, json_string(w->keys[i]));
    if (!keys || !path || json_array_size(keys) != w->nkeys) {
        json_decref(keys);
        free(path);
        return KC_ENOMEM;
    }
    w->conf[w->nconf++] = (conflict){entry, path, keys};
    return 0;
}

/* The child value a set key names inside v (map field or list element). Borrowed. */
static json_t *child_of(const json_t *v, const char *key, const kc__list_keys *lk)
{
    if (key[0] == 'f')
        return json_is_object(v) ? json_object_get(v, key + 2) : NULL;
    return kc__apply_find_elem(v, lk, key, NULL);
}

/* Keys for the children of field `key` when they form a list. */
static const kc__list_keys *child_keys(const walker *w, const char *parent, const char *key,
                                       const json_t *list)
{
    if (key[0] != 'f' || !json_is_array(list))
        return NULL;
    return kc__apply_list_keys(w->ctx, parent, key + 2, list);
}

/* Name of the field enclosing the children of key (list elements inherit the list's name). */
static const char *child_parent(const char *parent, const char *key)
{
    return key[0] == 'f' ? key + 2 : parent;
}

static int walk_conflicts(walker *w, const json_t *set, const json_t *a, const json_t *c,
                          const owner_sub *subs, size_t nsubs, const kc__list_keys *lk,
                          const char *parent)
{
    const char *key;
    json_t *sub;
    json_object_foreach((json_t *)set, key, sub)
    {
        if (strcmp(key, ".") == 0 || key[0] == 'v')
            continue;
        owner_sub *cs = nsubs ? malloc(nsubs * sizeof *cs) : NULL;
        size_t ncs = 0;
        if (nsubs && !cs)
            return KC_ENOMEM;
        for (size_t i = 0; i < nsubs; i++) {
            json_t *s = json_object_get(subs[i].set, key);
            if (json_is_object(s))
                cs[ncs++] = (owner_sub){subs[i].entry, s};
        }
        int rc = 0;
        if (ncs > 0 && w->nkeys < KC__ARRAY_LEN(w->keys)) {
            json_t *ac = child_of(a, key, lk), *cc = child_of(c, key, lk);
            size_t plen = w->path.len;
            w->keys[w->nkeys++] = key;
            rc = kc__apply_path_append(&w->path, key);
            if (rc == 0 && json_object_size(sub) == 0) {
                for (size_t i = 0; rc == 0 && i < ncs; i++) {
                    if (!kc__json_equal(ac, cc))
                        rc = add_conflict(w, cs[i].entry);
                }
            } else if (rc == 0) {
                rc = walk_conflicts(w, sub, ac, cc, cs, ncs, child_keys(w, parent, key, ac),
                                    child_parent(parent, key));
            }
            w->nkeys--;
            kc__buf_truncate(&w->path, plen);
        }
        free(cs);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Remove keys[i..] from set, dropping intermediate sets that become empty. */
static void set_remove(json_t *set, const json_t *keys, size_t i)
{
    const char *k = json_string_value(json_array_get(keys, i));
    json_t *child = k ? json_object_get(set, k) : NULL;
    if (!child)
        return;
    if (i + 1 == json_array_size(keys)) {
        json_object_del(set, k);
        return;
    }
    set_remove(child, keys, i + 1);
    if (json_object_size(child) == 0)
        json_object_del(set, k);
}

/* "mgr" [with subresource "s"] using <apiVersion> [at <time> for Update]. New string. */
static char *manager_label(const json_t *entry)
{
    kc__buf b = KC__BUF_INIT(4096);
    const char *m = json_string_value(json_object_get(entry, "manager"));
    const char *sub = json_string_value(json_object_get(entry, "subresource"));
    const char *op = json_string_value(json_object_get(entry, "operation"));
    const char *av = json_string_value(json_object_get(entry, "apiVersion"));
    const char *t = json_string_value(json_object_get(entry, "time"));
    kc__buf_printf(&b, "\"%s\"", m ? m : "");
    if (sub && *sub)
        kc__buf_printf(&b, " with subresource \"%s\"", sub);
    kc__buf_printf(&b, " using %s", av ? av : "");
    if (op && strcmp(op, "Update") == 0 && t)
        kc__buf_printf(&b, " at %s", t);
    return kc__buf_steal(&b, NULL);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Fill err with upstream's apply-conflict Status (409 Conflict, FieldManagerConflict causes). */
static int conflict_error(const walker *w, const json_t *mf, kc_error *err)
{
    int code = KC_ECONFLICT;
    char **labels = calloc(w->nconf, sizeof *labels);
    kc__buf msg = KC__BUF_INIT(0);
    if (!labels)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    for (size_t i = 0; i < w->nconf; i++)
        labels[i] = manager_label(json_array_get(mf, w->conf[i].entry));
    if (w->nconf == 1) {
        kc__buf_printf(&msg, "Apply failed with 1 conflict: conflict with %s: %s",
                       labels[0] ? labels[0] : "?", w->conf[0].path);
    } else {
        kc__buf_printf(&msg, "Apply failed with %zu conflicts: ", w->nconf);
        char **uniq = calloc(w->nconf, sizeof *uniq);
        size_t nu = 0;
        for (size_t i = 0; uniq && i < w->nconf; i++) {
            bool seen = false;
            for (size_t j = 0; j < nu; j++)
                seen = seen || kc__streq(uniq[j], labels[i]);
            if (!seen && labels[i])
                uniq[nu++] = labels[i];
        }
        if (uniq)
            qsort(uniq, nu, sizeof *uniq, cmp_str);
        for (size_t u = 0; u < nu; u++) {
            kc__buf_printf(&msg, "%sconflicts with %s:", u ? "\n" : "", uniq[u]);
            for (size_t i = 0; i < w->nconf; i++) {
                if (kc__streq(labels[i], uniq[u]))
                    kc__buf_printf(&msg, "\n- %s", w->conf[i].path);
            }
        }
        free(uniq);
    }
    kc_error_set(err, code, "%s", msg.data ? msg.data : "Apply failed with conflicts");
    kc__buf_free(&msg);
    if (err) {
        err->http_status = 409;
        err->reason = kc__strdup("Conflict");
        err->causes = calloc(w->nconf, sizeof *err->causes);
        if (err->causes) {
            err->n_causes = w->nconf;
            for (size_t i = 0; i < w->nconf; i++) {
                kc_cause *c = &err->causes[i];
                c->reason = kc__strdup("FieldManagerConflict");
                c->field = kc__strdup(w->conf[i].path);
                if (labels[i] && asprintf(&c->message, "conflict with %s", labels[i]) < 0)
                    c->message = NULL;
            }
        }
    }
    for (size_t i = 0; i < w->nconf; i++)
        free(labels[i]);
    free(labels);
    return code;
}

/* ---- merge and removal -------------------------------------------------------------------- */

static int merge(const kc__apply_ctx *ctx, json_t *dst, const json_t *src, const char *parent)
{
    const char *k;
    json_t *sv;
    json_object_foreach((json_t *)src, k, sv)
    {
        json_t *dv = json_object_get(dst, k);
        if (json_is_null(sv)) {
            json_object_del(dst, k);
            continue;
        }
        if (json_is_object(sv) && json_is_object(dv)) {
            if (merge(ctx, dv, sv, k) < 0)
                return KC_ENOMEM;
            continue;
        }
        const kc__list_keys *lk =
            json_is_array(sv) && json_is_array(dv) ? kc__apply_list_keys(ctx, parent, k, sv) : NULL;
        if (!lk) {
            if (json_object_set_new(dst, k, json_deep_copy(sv)) < 0)
                return KC_ENOMEM;
            continue;
        }
        size_t i;
        json_t *se;
        json_array_foreach(sv, i, se)
        {
            size_t j;
            json_t *de, *hit = NULL;
            json_array_foreach(dv, j, de)
            {
                if (lk->set ? kc__json_equal(de, se) : kc__list_elem_matches(lk, de, se)) {
                    hit = de;
                    break;
                }
            }
            int rc = 0;
            if (hit && json_is_object(hit) && json_is_object(se))
                rc = merge(ctx, hit, se, k);
            else if (hit)
                rc = json_array_set_new(dv, j, json_deep_copy(se));
            else
                rc = json_array_append_new(dv, json_deep_copy(se));
            if (rc < 0)
                return KC_ENOMEM;
        }
    }
    return 0;
}

/* Remove from res what prev owned, nw does not and no other owner (subs) owns. */
static int drop_unowned(const kc__apply_ctx *ctx, const json_t *prev, const json_t *nw,
                        const owner_sub *subs, size_t nsubs, json_t *res, const kc__list_keys *lk,
                        const char *parent)
{
    const char *key;
    json_t *psub;
    json_object_foreach((json_t *)prev, key, psub)
    {
        if (strcmp(key, ".") == 0 || !json_is_object(psub))
            continue;
        json_t *nsub = nw ? json_object_get(nw, key) : NULL;
        owner_sub *cs = nsubs ? malloc(nsubs * sizeof *cs) : NULL;
        size_t ncs = 0;
        if (nsubs && !cs)
            return KC_ENOMEM;
        for (size_t i = 0; i < nsubs; i++) {
            json_t *s = json_object_get(subs[i].set, key);
            if (json_is_object(s))
                cs[ncs++] = (owner_sub){subs[i].entry, s};
        }
        bool leaf = json_object_size(psub) == 0 || key[0] == 'v' ||
                    (key[0] == 'k' && json_object_get(psub, "."));
        int rc = 0;
        if (!nsub && ncs == 0 && leaf) {
            size_t idx;
            if (key[0] == 'f' && json_is_object(res))
                json_object_del(res, key + 2);
            else if (key[0] != 'f' && kc__apply_find_elem(res, lk, key, &idx))
                json_array_remove(res, idx);
        } else if (json_object_size(psub) > 0 && key[0] != 'v') {
            json_t *child = key[0] == 'f' ? json_object_get(res, key + 2)
                                          : kc__apply_find_elem(res, lk, key, NULL);
            const kc__list_keys *clk = key[0] == 'f' && json_is_array(child)
                                           ? kc__apply_list_keys(ctx, parent, key + 2, child)
                                           : NULL;
            if (child)
                rc = drop_unowned(ctx, psub, nsub, cs, ncs, child, clk, child_parent(parent, key));
        }
        free(cs);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ---- entry point -------------------------------------------------------------------------- */

int kc__apply_decode(const char *body, size_t len, json_t **ret, kc_error *err)
{
    size_t i = 0;
    while (i < len && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n'))
        i++;
    int rc = i < len && body[i] == '{' ? kc__patch_json_decode(body, len, ret, err)
                                       : kc__yaml_decode(body, len, KC__PATCH_MAX_DEPTH, ret, err);
    if (rc < 0)
        return rc;
    const json_t *a = *ret;
    const char *why = NULL;
    if (!json_is_object(a))
        why = "the apply body must be an object";
    else if (!json_string_length(json_object_get(a, "apiVersion")))
        why = "apiVersion must be set in the applied object";
    else if (!json_string_length(json_object_get(a, "kind")))
        why = "kind must be set in the applied object";
    else if (json_object_get(a, "metadata") && !json_is_object(json_object_get(a, "metadata")))
        why = "metadata must be an object";
    else if (json_object_get(json_object_get(a, "metadata"), "managedFields"))
        why = "metadata.managedFields must be nil";
    if (why) {
        json_decref(*ret);
        *ret = NULL;
        return kc_error_set(err, KC_EBADREQUEST, "%s", why);
    }
    return 0;
}

/* 422: an apply names no field manager. */
static int no_manager(kc_error *err)
{
    return kc_error_set(err, KC_EUNPROCESSABLE,
                        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required "
                        "value: is required for apply patch");
}

/* The Apply entry; sub (NULL or "" = the main resource) is recorded as "subresource" when set. */
static json_t *new_entry(const char *manager, const char *api_version, const char *sub,
                         const char *now, json_t *set)
{
    char ts[32];
    if (!now)
        kc__now_rfc3339(ts);
    json_t *e = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o}", "manager", manager, "operation",
                          "Apply", "apiVersion", api_version, "time", now ? now : ts, "fieldsType",
                          "FieldsV1", "fieldsV1", set);
    if (e && sub && *sub && json_object_set_new(e, "subresource", json_string(sub)) < 0) {
        json_decref(e);
        return NULL;
    }
    return e;
}

/* Set obj.metadata.managedFields = mf (consumed). */
static int put_managed_fields(json_t *obj, json_t *mf)
{
    json_t *md = json_object_get(obj, "metadata");
    if (!json_is_object(md)) {
        md = json_object();
        if (json_object_set_new(obj, "metadata", md) < 0) {
            json_decref(mf);
            return KC_ENOMEM;
        }
    }
    return json_object_set_new(md, "managedFields", mf) < 0 ? KC_ENOMEM : 0;
}

/* manager's Apply entry through the same subresource ("" = the main resource): each
 * subresource's apply owns its own set, as upstream's field manager keeps them apart. */
static bool is_own_entry(const json_t *e, const char *manager, const char *subresource)
{
    const char *sub = json_string_value(json_object_get(e, "subresource"));
    return kc__streq(json_string_value(json_object_get(e, "manager")), manager) &&
           kc__streq(json_string_value(json_object_get(e, "operation")), "Apply") &&
           kc__streq(sub ? sub : "", subresource ? subresource : "");
}

int kc__apply(const json_t *current, const char *body, size_t len, const char *field_manager,
              bool force, const char *now_rfc3339, json_t **ret_new, kc_error *err)
{
    if (!field_manager || !*field_manager)
        return no_manager(err);
    json_t *applied = NULL;
    int rc = kc__apply_decode(body, len, &applied, err);
    if (rc < 0)
        return rc;
    rc = kc__apply_doc(current, applied, field_manager, force, now_rfc3339, ret_new, err);
    json_decref(applied);
    return rc;
}

int kc__apply_doc(const json_t *current, const json_t *applied, const char *field_manager,
                  bool force, const char *now_rfc3339, json_t **ret_new, kc_error *err)
{
    return kc__apply_doc_sub(current, applied, field_manager, NULL, force, now_rfc3339, ret_new,
                             err);
}

int kc__apply_doc_sub(const json_t *current, const json_t *applied, const char *field_manager,
                      const char *subresource, bool force, const char *now_rfc3339,
                      json_t **ret_new, kc_error *err)
{
    if (!field_manager || !*field_manager)
        return no_manager(err);
    if (!ret_new || !json_is_object(applied) || (current && !json_is_object(current)))
        return kc_error_set(err, KC_EINVAL, "apply: bad arguments");
    json_t *res = NULL, *set = NULL, *entry = NULL;
    walker w = {.path = KC__BUF_INIT(0)};
    owner_sub *subs = NULL;
    int rc;
    const char *av = json_string_value(json_object_get(applied, "apiVersion"));
    kc__apply_ctx ctx = {json_string_value(json_object_get(applied, "kind")),
                         kc__apply_builtin(av)};
    w.ctx = &ctx;
    rc = KC_ENOMEM;
    if (!(set = kc__apply_fieldset(&ctx, applied)) ||
        !(entry = new_entry(field_manager, av, subresource, now_rfc3339, json_incref(set))) ||
        !(res = json_deep_copy(current ? current : applied)))
        goto fail_nomem;

    json_t *mf = json_object_get(json_object_get(res, "metadata"), "managedFields");
    if (!current || !json_is_array(mf)) {
        /* Creation, or an object nobody manages yet: the applied configuration merges in. */
        if (current && merge(&ctx, res, applied, "") < 0)
            goto fail_nomem;
        json_t *arr = json_array();
        if (!arr || json_array_append(arr, entry) < 0 || put_managed_fields(res, arr) < 0)
            goto fail_nomem;
        goto done;
    }

    /* Other owners, and this manager's previous Apply entry. */
    size_t n = json_array_size(mf), nsubs = 0, own = SIZE_MAX;
    if (n && !(subs = malloc(n * sizeof *subs)))
        goto fail_nomem;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(mf, i);
        json_t *fs = json_object_get(e, "fieldsV1");
        if (is_own_entry(e, field_manager, subresource))
            own = i;
        else if (json_is_object(fs))
            subs[nsubs++] = (owner_sub){i, fs};
    }
    if ((rc = walk_conflicts(&w, set, applied, current, subs, nsubs, NULL, "")) < 0)
        goto fail_nomem;
    if (w.nconf > 0 && !force) {
        rc = conflict_error(&w, mf, err);
        goto fail;
    }
    for (size_t i = 0; i < w.nconf; i++)
        set_remove(json_object_get(json_array_get(mf, w.conf[i].entry), "fieldsV1"), w.conf[i].keys,
                   0);
    if (merge(&ctx, res, applied, "") < 0)
        goto fail_nomem;
    if (own != SIZE_MAX) {
        json_t *prev = json_object_get(json_array_get(mf, own), "fieldsV1");
        if (json_is_object(prev) && drop_unowned(&ctx, prev, set, subs, nsubs, res, NULL, "") < 0)
            goto fail_nomem;
    }
    /* merge() may have replaced metadata: find managedFields again. */
    mf = json_object_get(json_object_get(res, "metadata"), "managedFields");
    if (!json_is_array(mf)) {
        json_t *arr = json_array();
        if (!arr || put_managed_fields(res, arr) < 0)
            goto fail_nomem;
        mf = arr;
        own = SIZE_MAX;
    }
    if (own != SIZE_MAX ? json_array_set(mf, own, entry) < 0 : json_array_append(mf, entry) < 0)
        goto fail_nomem;
    /* Forced entries left with nothing are dropped. */
    for (size_t i = json_array_size(mf); i-- > 0;) {
        json_t *fs = json_object_get(json_array_get(mf, i), "fieldsV1");
        if (json_is_object(fs) && json_object_size(fs) == 0 && json_array_get(mf, i) != entry)
            json_array_remove(mf, i);
    }
done:
    *ret_new = res;
    res = NULL;
    rc = 0;
    goto out;
fail_nomem:
    rc = kc_error_set(err, KC_ENOMEM, "out of memory during apply");
fail:
out:
    for (size_t i = 0; i < w.nconf; i++) {
        free(w.conf[i].path);
        json_decref(w.conf[i].keys);
    }
    free(w.conf);
    kc__buf_free(&w.path);
    free(subs);
    json_decref(res);
    json_decref(entry);
    json_decref(set);
    return rc;
}
