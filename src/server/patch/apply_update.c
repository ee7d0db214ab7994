/*
 * apply_update.c — managedFields bookkeeping for ordinary writes (operation "Update"), so that
 * server-side apply can see fields owned by create/update/patch clients (#46: "conflict with
 * "kubectl-client-side-apply" using apps/v1 at …").
 *
 * Design: upstream's rule, simplified to the field-set level. The fields an update changes (leaf
 * values that differ from the old object, or are new) become owned by the writer's Update entry
 * and leave every other manager's set — an update never conflicts. Fields that disappeared leave
 * every set. Entries left empty are dropped. A body that carries metadata.managedFields replaces
 * them (clients may reset ownership); a body without them keeps the old ones.
 * Thread-safe: pure function.
 */
#include "server/patch/apply_internal.h"
#include "server/patch/patch.h"
#include "server/patch/validate.h"

#include <string.h>

/* Put an empty set at set[key] unless present; returns it (borrowed) or NULL on ENOMEM. */
static json_t *set_child(json_t *set, const char *key)
{
    json_t *c = json_object_get(set, key);
    if (c)
        return c;
    c = json_object();
    if (!c || json_object_set_new(set, key, c) < 0)
        return NULL;
    return c;
}

/* Collect into out the leaves of nw (the new object's set) whose value differs between a (new
 * object) and b (old object); a new keyed element also brings its "." marker. */
static int changed_fields(const kc__apply_ctx *ctx, const json_t *nw, const json_t *a,
                          const json_t *b, const kc__list_keys *lk, const char *parent, json_t *out)
{
    const char *key;
    json_t *sub;
    json_object_foreach((json_t *)nw, key, sub)
    {
        if (strcmp(key, ".") == 0)
            continue;
        const json_t *ac, *bc;
        if (key[0] == 'f') {
            ac = json_object_get(a, key + 2);
            bc = json_is_object(b) ? json_object_get(b, key + 2) : NULL;
        } else {
            ac = kc__apply_find_elem(a, lk, key, NULL);
            bc = kc__apply_find_elem(b, lk, key, NULL);
        }
        if (json_object_size(sub) == 0 || key[0] == 'v') {
            if (!bc || !kc__json_equal(ac, bc)) {
                if (!set_child(out, key))
                    return KC_ENOMEM;
            }
            continue;
        }
        json_t *child = json_object();
        if (!child)
            return KC_ENOMEM;
        if (key[0] == 'k' && !bc && json_object_set_new(child, ".", json_object()) < 0) {
            json_decref(child);
            return KC_ENOMEM;
        }
        const kc__list_keys *clk = key[0] == 'f' && json_is_array(ac)
                                       ? kc__apply_list_keys(ctx, parent, key + 2, ac)
                                       : NULL;
        int rc = changed_fields(ctx, sub, ac, bc, clk, key[0] == 'f' ? key + 2 : parent, child);
        if (rc == 0 && json_object_size(child) > 0 && json_object_set(out, key, child) < 0)
            rc = KC_ENOMEM;
        json_decref(child);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Leaves (and keyed elements) of old_set missing from new_set, into out. */
static int removed_fields(const json_t *old_set, const json_t *new_set, json_t *out)
{
    const char *key;
    json_t *sub;
    json_object_foreach((json_t *)old_set, key, sub)
    {
        if (strcmp(key, ".") == 0)
            continue;
        json_t *ns = new_set ? json_object_get(new_set, key) : NULL;
        if (!ns) {
            if (!set_child(out, key))
                return KC_ENOMEM;
            continue;
        }
        if (json_object_size(sub) == 0)
            continue;
        json_t *child = json_object();
        int rc = child ? removed_fields(sub, ns, child) : KC_ENOMEM;
        if (rc == 0 && json_object_size(child) > 0 && json_object_set(out, key, child) < 0)
            rc = KC_ENOMEM;
        json_decref(child);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* set -= sub (a leaf in sub removes the whole key); empty intermediate sets are dropped. */
static void set_subtract(json_t *set, const json_t *sub)
{
    const char *key;
    json_t *s;
    json_object_foreach((json_t *)sub, key, s)
    {
        json_t *c = json_object_get(set, key);
        if (!c)
            continue;
        if (json_object_size(s) == 0) {
            json_object_del(set, key);
            continue;
        }
        set_subtract(c, s);
        if (json_object_size(c) == 0)
            json_object_del(set, key);
    }
}

/* set += add. */
static int set_union(json_t *set, const json_t *add)
{
    const char *key;
    json_t *s;
    json_object_foreach((json_t *)add, key, s)
    {
        json_t *c = set_child(set, key);
        if (!c || set_union(c, s) < 0)
            return KC_ENOMEM;
    }
    return 0;
}

/* The writer's own entry: same manager, operation Update and the same subresource ("" = none:
 * a status write and a main-resource write of one manager are two entries, as upstream). */
static bool is_update_entry(const json_t *e, const char *manager, const char *subresource)
{
    const char *sub = json_string_value(json_object_get(e, "subresource"));
    return kc__streq(json_string_value(json_object_get(e, "manager")), manager) &&
           kc__streq(json_string_value(json_object_get(e, "operation")), "Update") &&
           kc__streq(sub ? sub : "", subresource);
}

int kc__managed_fields_update(json_t *obj, const json_t *old, const char *manager,
                              const char *now_rfc3339, kc_error *err)
{
    return kc__managed_fields_update_sub(obj, old, manager, NULL, now_rfc3339, err);
}

int kc__managed_fields_update_sub(json_t *obj, const json_t *old, const char *manager,
                                  const char *subresource, const char *now_rfc3339, kc_error *err)
{
    if (!subresource)
        subresource = "";
    if (!json_is_object(obj) || !manager || !*manager)
        return kc_error_set(err, KC_EINVAL, "managed fields: object and manager are required");
    json_t *md = json_object_get(obj, "metadata");
    if (!json_is_object(md))
        return 0;
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    kc__apply_ctx ctx = {json_string_value(json_object_get(obj, "kind")), kc__apply_builtin(av)};
    if (!ctx.kind)
        ctx.kind = "";
    json_t *mf = json_object_get(md, "managedFields");
    if (!mf) {
        const json_t *omf = json_object_get(json_object_get(old, "metadata"), "managedFields");
        mf = json_is_array(omf) ? json_deep_copy(omf) : json_array();
        if (!mf || json_object_set_new(md, "managedFields", mf) < 0)
            return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    if (!json_is_array(mf))
        return 0; /* not ours to repair: validation is server-core's */

    json_t *nset = kc__apply_fieldset(&ctx, obj);
    json_t *oset = old ? kc__apply_fieldset(&ctx, old) : json_object();
    json_t *changed = json_object(), *removed = json_object();
    int rc = KC_ENOMEM;
    if (!nset || !oset || !changed || !removed)
        goto out;
    /* managedFields itself is server-owned and never part of a set (apply_fields.c). */
    if (changed_fields(&ctx, nset, obj, old, NULL, "", changed) < 0 ||
        removed_fields(oset, nset, removed) < 0)
        goto out;
    json_t *mine = NULL;
    for (size_t i = json_array_size(mf); i-- > 0;) {
        json_t *e = json_array_get(mf, i);
        json_t *fs = json_object_get(e, "fieldsV1");
        if (is_update_entry(e, manager, subresource)) {
            mine = e;
            continue;
        }
        if (!json_is_object(fs))
            continue;
        set_subtract(fs, changed);
        set_subtract(fs, removed);
        if (json_object_size(fs) == 0)
            json_array_remove(mf, i);
    }
    if (mine) {
        json_t *fs = json_object_get(mine, "fieldsV1");
        if (!json_is_object(fs)) {
            fs = json_object();
            if (!fs || json_object_set_new(mine, "fieldsV1", fs) < 0)
                goto out;
        }
        if (set_union(fs, changed) < 0)
            goto out;
        set_subtract(fs, removed);
        char ts[32];
        if (!now_rfc3339)
            kc__now_rfc3339(ts);
        if (json_object_set_new(mine, "time", json_string(now_rfc3339 ? now_rfc3339 : ts)) < 0)
            goto out;
        if (json_object_size(fs) == 0) {
            for (size_t i = 0; i < json_array_size(mf); i++) {
                if (json_array_get(mf, i) == mine) {
                    json_array_remove(mf, i);
                    break;
                }
            }
        }
    } else if (json_object_size(changed) > 0) {
        char ts[32];
        if (!now_rfc3339)
            kc__now_rfc3339(ts);
        json_t *e =
            json_pack("{s:s, s:s, s:s, s:s, s:s, s:O}", "manager", manager, "operation", "Update",
                      "apiVersion", av ? av : "", "time", now_rfc3339 ? now_rfc3339 : ts,
                      "fieldsType", "FieldsV1", "fieldsV1", changed);
        if (!e ||
            (*subresource && json_object_set_new(e, "subresource", json_string(subresource)) < 0)) {
            json_decref(e);
            goto out;
        }
        if (json_array_append_new(mf, e) < 0)
            goto out;
    }
    rc = 0;
out:
    json_decref(nset);
    json_decref(oset);
    json_decref(changed);
    json_decref(removed);
    return rc < 0 ? kc_error_set(err, rc, "out of memory recording managed fields") : 0;
}
