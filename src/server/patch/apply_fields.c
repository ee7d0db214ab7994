/*
 * apply_fields.c — FieldsV1 field sets for server-side apply (#45, #46).
 *
 * A field set is the JSON form upstream stores in managedFields[].fieldsV1: an object whose keys
 * are "f:<field>" (a map field), "k:<json key>" (an element of a keyed list, e.g.
 * k:{"name":"web"}), "v:<json value>" (a value of a list used as a set) and "." (the element
 * itself); every value is again a set, and {} marks a leaf the manager owns whole.
 * This file builds the set of an applied configuration, finds the list keys apply uses, and
 * locates the element a "k:" / "v:" key names. Keyed lists are the strategic-merge table's for
 * built-in kinds, and for custom resources any list whose elements are all maps with a string
 * "name". Lists without keys are atomic (one leaf). Fields the server owns (apiVersion, kind,
 * metadata.name/namespace/uid/resourceVersion/generation/creationTimestamp/managedFields/…) are
 * left out, as upstream does. Thread-safe: pure functions.
 */
#include "server/patch/apply_internal.h"

#include "core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kc__list_keys name_keys = {{"name", NULL}, NULL, false};

bool kc__apply_builtin(const char *api_version)
{
    const char *slash = api_version ? strchr(api_version, '/') : NULL;
    if (!slash)
        return true; /* core "v1" */
    size_t n = (size_t)(slash - api_version);
    if (!memchr(api_version, '.', n))
        return true; /* apps, batch, … */
    static const char suffix[] = ".k8s.io";
    return n >= sizeof suffix - 1 &&
           memcmp(api_version + n - (sizeof suffix - 1), suffix, sizeof suffix - 1) == 0;
}

static bool all_named(const json_t *arr)
{
    if (!json_is_array(arr) || json_array_size(arr) == 0)
        return false;
    size_t i;
    json_t *el;
    json_array_foreach(arr, i, el)
    {
        if (!json_is_string(json_object_get(el, "name")))
            return false;
    }
    return true;
}

const kc__list_keys *kc__apply_list_keys(const kc__apply_ctx *ctx, const char *parent,
                                         const char *field, const json_t *applied_list)
{
    if (ctx->builtin)
        return kc__list_keys_find(ctx->kind, parent, field);
    return all_named(applied_list) ? &name_keys : NULL;
}

json_t *kc__apply_elem_key(const kc__list_keys *lk, const json_t *el)
{
    json_t *k = json_object();
    if (!k)
        return NULL;
    for (int i = 0; i < 2 && lk->keys[i]; i++) {
        json_t *v = json_object_get(el, lk->keys[i]);
        if (v) {
            json_object_set(k, lk->keys[i], v);
        } else if (i == 1 && lk->key2_default) {
            json_object_set_new(k, lk->keys[i], json_string(lk->key2_default));
        }
    }
    return k;
}

char *kc__apply_set_key(char prefix, const json_t *v)
{
    char *j = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (!j)
        return NULL;
    size_t n = strlen(j);
    char *s = malloc(n + 3);
    if (s) {
        s[0] = prefix;
        s[1] = ':';
        memcpy(s + 2, j, n + 1);
    }
    free(j);
    return s;
}

json_t *kc__apply_find_elem(const json_t *arr, const kc__list_keys *lk, const char *set_key,
                            size_t *ret_index)
{
    if (!json_is_array(arr) || strlen(set_key) < 2)
        return NULL;
    json_t *want = json_loads(set_key + 2, JSON_DECODE_ANY, NULL);
    if (!want)
        return NULL;
    json_t *found = NULL;
    size_t i;
    json_t *el;
    json_array_foreach(arr, i, el)
    {
        bool hit = set_key[0] == 'v' ? kc__json_equal(el, want)
                                     : lk && kc__list_elem_matches(lk, el, want);
        if (hit) {
            found = el;
            if (ret_index)
                *ret_index = i;
            break;
        }
    }
    json_decref(want);
    return found;
}

/* Server-owned fields: never part of a manager's set. */
static bool skipped(const char *parent, int depth, const char *k)
{
    static const char *const top[] = {"apiVersion", "kind", NULL};
    static const char *const meta[] = {"name",
                                       "namespace",
                                       "uid",
                                       "resourceVersion",
                                       "generation",
                                       "creationTimestamp",
                                       "deletionTimestamp",
                                       "deletionGracePeriodSeconds",
                                       "managedFields",
                                       "selfLink",
                                       NULL};
    const char *const *list =
        depth == 0 ? top : (depth == 1 && !strcmp(parent, "metadata") ? meta : NULL);
    for (; list && *list; list++) {
        if (strcmp(*list, k) == 0)
            return true;
    }
    return false;
}

static int set_child(json_t *set, char prefix, const char *name, json_t *child)
{
    if (!child)
        return KC_ENOMEM;
    char *k = NULL;
    if (asprintf(&k, "%c:%s", prefix, name) < 0) {
        json_decref(child);
        return KC_ENOMEM;
    }
    int rc = json_object_set_new(set, k, child) < 0 ? KC_ENOMEM : 0;
    free(k);
    return rc;
}

static int build(const kc__apply_ctx *ctx, const json_t *v, const char *parent, int depth,
                 json_t *set);

/* Set of the list field applied[field] (arr). */
static int build_list(const kc__apply_ctx *ctx, const json_t *arr, const kc__list_keys *lk,
                      const char *field, int depth, json_t *set)
{
    size_t i;
    json_t *el;
    json_array_foreach(arr, i, el)
    {
        json_t *keyv = lk->set ? json_incref(el) : kc__apply_elem_key(lk, el);
        char *k = keyv ? kc__apply_set_key(lk->set ? 'v' : 'k', keyv) : NULL;
        json_decref(keyv);
        json_t *sub = k ? json_object() : NULL;
        int rc = sub ? 0 : KC_ENOMEM;
        if (rc == 0 && !lk->set) {
            rc = json_object_set_new(sub, ".", json_object()) < 0 ? KC_ENOMEM : 0;
            if (rc == 0 && json_is_object(el))
                rc = build(ctx, el, field, depth + 1, sub);
        }
        if (rc == 0 && json_object_set_new(set, k, sub) < 0)
            rc = KC_ENOMEM;
        else if (rc < 0)
            json_decref(sub);
        free(k);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int build(const kc__apply_ctx *ctx, const json_t *v, const char *parent, int depth,
                 json_t *set)
{
    const char *k;
    json_t *c;
    json_object_foreach((json_t *)v, k, c)
    {
        if (skipped(parent, depth, k))
            continue;
        json_t *sub = json_object();
        int rc = sub ? 0 : KC_ENOMEM;
        const kc__list_keys *lk = json_is_array(c) ? kc__apply_list_keys(ctx, parent, k, c) : NULL;
        if (rc == 0 && json_is_object(c))
            rc = build(ctx, c, k, depth + 1, sub);
        else if (rc == 0 && lk)
            rc = build_list(ctx, c, lk, k, depth, sub);
        if (rc < 0) {
            json_decref(sub);
            return rc;
        }
        if (json_is_object(c) && json_object_size(c) > 0 && json_object_size(sub) == 0) {
            json_decref(sub); /* only server-owned fields inside (metadata: {name: x}) */
            continue;
        }
        if ((rc = set_child(set, 'f', k, sub)) < 0)
            return rc;
    }
    return 0;
}

json_t *kc__apply_fieldset(const kc__apply_ctx *ctx, const json_t *applied)
{
    json_t *set = json_object();
    if (set && build(ctx, applied, "", 0, set) < 0) {
        json_decref(set);
        return NULL;
    }
    return set;
}

int kc__apply_path_append(kc__buf *b, const char *set_key)
{
    if (set_key[0] == 'f')
        return kc__buf_printf(b, ".%s", set_key + 2);
    if (set_key[0] == 'v')
        return kc__buf_printf(b, "[=%s]", set_key + 2);
    /* k:{"a":1,"b":"x"} → [a=1,b="x"] */
    json_t *o = json_loads(set_key + 2, 0, NULL);
    int rc = kc__buf_append_char(b, '[');
    const char *k;
    json_t *v;
    bool first = true;
    json_object_foreach(o, k, v)
    {
        char *j = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (rc == 0)
            rc = kc__buf_printf(b, "%s%s=%s", first ? "" : ",", k, j ? j : "?");
        free(j);
        first = false;
    }
    json_decref(o);
    return rc == 0 ? kc__buf_append_char(b, ']') : rc;
}
