/*
 * patch_strategic.c — strategic merge patch for built-in kinds (#40) and the merge-key table it
 * shares with server-side apply.
 *
 * Design: upstream derives merge keys from Go struct tags (patchStrategy/patchMergeKey in
 * k8s.io/api). We keep a small static table of the keyed lists clients patch in practice,
 * selected by (field name, name of the enclosing field, kind). Lists not in the table are atomic:
 * the patch's list replaces the current one, exactly like a merge patch. Maps merge recursively;
 * null deletes. Directives:
 *   - "$patch": "replace" in a map replaces the map; as a list element, replaces the list;
 *   - "$patch": "delete" in a map deletes the map; in a keyed-list element, deletes the element
 *     with that key;
 *   - "$deleteFromPrimitiveList/<field>": removes the listed values from a list of primitives;
 *   - "$retainKeys": [keys] clears, after the merge, the map's keys that are not listed (kubectl
 *     sends it when a volume source or a deployment strategy changes type);
 *   - "$setElementOrder/<field>" is accepted and ignored (lists keep the current order, new
 *     elements are appended).
 * A value the current object does not have yet is materialised by merging the patch value into an
 * empty map, which applies (and strips) any directive inside it with the same code.
 * Thread-safe: pure functions; the table is const.
 */
#include "server/patch/patch_internal.h"

#include "core/internal.h"

#include <string.h>

/* ---- merge-key table ---------------------------------------------------------------------- */

typedef struct list_rule {
    const char *field;
    const char *parent; /* NULL = any enclosing field */
    const char *kind;   /* NULL = any kind */
    kc__list_keys keys;
} list_rule;

#define NAME_KEY                                                                                   \
    {                                                                                              \
        {"name", NULL}, NULL, false                                                                \
    }
#define CPORT_KEY                                                                                  \
    {                                                                                              \
        {"containerPort", "protocol"}, "TCP", false                                                \
    }

static const list_rule list_rules[] = {
    /* core/v1 PodSpec (and every pod template) */
    {"containers", NULL, NULL, NAME_KEY},
    {"initContainers", NULL, NULL, NAME_KEY},
    {"ephemeralContainers", NULL, NULL, NAME_KEY},
    {"volumes", NULL, NULL, NAME_KEY},
    {"imagePullSecrets", NULL, NULL, NAME_KEY},
    {"hostAliases", NULL, NULL, {{"ip", NULL}, NULL, false}},
    {"schedulingGates", NULL, NULL, NAME_KEY},
    {"topologySpreadConstraints", NULL, NULL, {{"topologyKey", "whenUnsatisfiable"}, NULL, false}},
    {"resourceClaims", "spec", NULL, NAME_KEY},
    /* core/v1 Container */
    {"ports", "containers", NULL, CPORT_KEY},
    {"ports", "initContainers", NULL, CPORT_KEY},
    {"ports", "ephemeralContainers", NULL, CPORT_KEY},
    {"env", NULL, NULL, NAME_KEY},
    {"volumeMounts", NULL, NULL, {{"mountPath", NULL}, NULL, false}},
    {"volumeDevices", NULL, NULL, {{"devicePath", NULL}, NULL, false}},
    /* core/v1 ServiceSpec */
    {"ports", "spec", "Service", {{"port", "protocol"}, "TCP", false}},
    /* ServiceAccount, Node status, every status.conditions */
    {"secrets", "", "ServiceAccount", NAME_KEY},
    {"addresses", "status", "Node", {{"type", NULL}, NULL, false}},
    {"conditions", "status", NULL, {{"type", NULL}, NULL, false}},
    /* ObjectMeta */
    {"ownerReferences", "metadata", NULL, {{"uid", NULL}, NULL, false}},
    {"finalizers", "metadata", NULL, {{NULL, NULL}, NULL, true}},
};

const kc__list_keys *kc__list_keys_find(const char *kind, const char *parent, const char *field)
{
    for (size_t i = 0; i < KC__ARRAY_LEN(list_rules); i++) {
        const list_rule *r = &list_rules[i];
        if (strcmp(r->field, field) != 0)
            continue;
        if (r->parent && !kc__streq(r->parent, parent ? parent : ""))
            continue;
        if (r->kind && !kc__streq(r->kind, kind ? kind : ""))
            continue;
        return &r->keys;
    }
    return NULL;
}

bool kc__list_elem_matches(const kc__list_keys *lk, const json_t *el, const json_t *key)
{
    if (!json_is_object(el) || !json_is_object(key) || !lk->keys[0])
        return false;
    const json_t *a = json_object_get(el, lk->keys[0]);
    const json_t *b = json_object_get(key, lk->keys[0]);
    if (!a || !b || !kc__json_equal(a, b))
        return false;
    if (!lk->keys[1])
        return true;
    a = json_object_get(el, lk->keys[1]);
    b = json_object_get(key, lk->keys[1]);
    if (!a && !b)
        return true;
    json_t *dflt = lk->key2_default ? json_string(lk->key2_default) : NULL;
    bool eq = kc__json_equal(a ? a : dflt, b ? b : dflt);
    json_decref(dflt);
    return eq;
}

/* ---- merge -------------------------------------------------------------------------------- */

#define SMP_DELETE_ME 1 /* smp_object result: the patch said "$patch": "delete" */

static int smp_object(json_t *doc, const json_t *patch, const char *kind, const char *parent,
                      kc_error *err);

static bool is_directive_key(const char *k)
{
    return strcmp(k, "$patch") == 0 || strcmp(k, "$retainKeys") == 0 ||
           kc__starts_with(k, "$setElementOrder/") ||
           kc__starts_with(k, "$deleteFromPrimitiveList/");
}

/* The map's "$patch" value: NULL when absent, else "replace", "delete" or "merge" (borrowed).
 * KC_EBADREQUEST for anything else. */
static int patch_directive(const json_t *patch, const char **ret, kc_error *err)
{
    const json_t *d = json_object_get(patch, "$patch");
    *ret = NULL;
    if (!d)
        return 0;
    const char *s = json_string_value(d);
    if (!s || (strcmp(s, "replace") != 0 && strcmp(s, "delete") != 0 && strcmp(s, "merge") != 0))
        return kc_error_set(err, KC_EBADREQUEST,
                            "invalid $patch directive: must be \"replace\", \"delete\" or "
                            "\"merge\"");
    *ret = s;
    return 0;
}

/* A new value for a place the document does not have yet: maps are merged into {} (which applies
 * their directives), arrays element-wise, scalars copied. *ret NULL means "drop it" (a map that
 * deletes itself). */
static int materialize(const json_t *pv, const char *kind, const char *parent, json_t **ret,
                       kc_error *err)
{
    *ret = NULL;
    if (json_is_object(pv)) {
        json_t *o = json_object();
        if (!o)
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        int rc = smp_object(o, pv, kind, parent, err);
        if (rc != 0) {
            json_decref(o);
            return rc == SMP_DELETE_ME ? 0 : rc;
        }
        *ret = o;
        return 0;
    }
    if (json_is_array(pv)) {
        json_t *a = json_array();
        if (!a)
            return kc_error_set(err, KC_ENOMEM, "out of memory");
        size_t i;
        json_t *el;
        json_array_foreach(pv, i, el)
        {
            const char *d = NULL;
            if (json_is_object(el) && json_object_size(el) == 1 &&
                patch_directive(el, &d, NULL) == 0 && d)
                continue; /* a bare {"$patch": ...} marker */
            json_t *m;
            int rc = materialize(el, kind, parent, &m, err);
            if (rc < 0 || (m && json_array_append_new(a, m) < 0)) {
                json_decref(a);
                return rc < 0 ? rc : kc_error_set(err, KC_ENOMEM, "out of memory");
            }
        }
        *ret = a;
        return 0;
    }
    if (!(*ret = json_deep_copy(pv)))
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    return 0;
}

/* Merge the keyed list patch into the array cur (in place). field names the list (it encloses
 * the elements, for nested lookups). */
static int smp_keyed_list(json_t *cur, const json_t *patch, const kc__list_keys *lk,
                          const char *kind, const char *field, kc_error *err)
{
    size_t i;
    json_t *pel;
    /* A {"$patch":"replace"} element replaces the whole list. */
    json_array_foreach(patch, i, pel)
    {
        const char *d = NULL;
        int rc = json_is_object(pel) ? patch_directive(pel, &d, err) : 0;
        if (rc < 0)
            return rc;
        if (d && strcmp(d, "replace") == 0) {
            json_t *m;
            if ((rc = materialize(patch, kind, field, &m, err)) < 0)
                return rc;
            rc = json_array_clear(cur) < 0 || json_array_extend(cur, m) < 0
                     ? kc_error_set(err, KC_ENOMEM, "out of memory")
                     : 0;
            json_decref(m);
            return rc;
        }
    }
    json_array_foreach(patch, i, pel)
    {
        if (!json_is_object(pel))
            return kc_error_set(err, KC_EBADREQUEST,
                                "strategic merge patch: element %zu of list %s is not a map", i,
                                field);
        if (!json_object_get(pel, lk->keys[0])) {
            if (json_object_get(pel, "$patch") && json_object_size(pel) == 1)
                continue; /* a bare {"$patch":"merge"} marker */
            return kc_error_set(err, KC_EBADREQUEST,
                                "strategic merge patch: element %zu of list %s does not contain "
                                "declared merge key: %s",
                                i, field, lk->keys[0]);
        }
        const char *d = NULL;
        patch_directive(pel, &d, NULL);
        if (d && strcmp(d, "delete") == 0) {
            for (size_t j = json_array_size(cur); j-- > 0;) {
                if (kc__list_elem_matches(lk, json_array_get(cur, j), pel))
                    json_array_remove(cur, j);
            }
            continue;
        }
        json_t *target = NULL;
        size_t j;
        json_t *cel;
        json_array_foreach(cur, j, cel)
        {
            if (kc__list_elem_matches(lk, cel, pel)) {
                target = cel;
                break;
            }
        }
        int rc;
        if (target && json_is_object(target)) {
            rc = smp_object(target, pel, kind, field, err);
            if (rc == SMP_DELETE_ME) {
                json_array_remove(cur, j);
                rc = 0;
            }
        } else {
            json_t *m;
            rc = materialize(pel, kind, field, &m, err);
            if (rc == 0 && m && json_array_append_new(cur, m) < 0)
                rc = kc_error_set(err, KC_ENOMEM, "out of memory");
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Union of a list of primitives (patch values not yet present are appended). */
static int smp_set_list(json_t *cur, const json_t *patch, kc_error *err)
{
    size_t i;
    json_t *pel;
    json_array_foreach(patch, i, pel)
    {
        bool found = false;
        size_t j;
        json_t *cel;
        json_array_foreach(cur, j, cel)
        {
            if (kc__json_equal(cel, pel)) {
                found = true;
                break;
            }
        }
        if (!found && json_array_append_new(cur, json_deep_copy(pel)) < 0)
            return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    return 0;
}

/* "$deleteFromPrimitiveList/<field>": drop every listed value from doc[field]. */
static int smp_delete_from_list(json_t *doc, const char *field, const json_t *values, kc_error *err)
{
    if (!json_is_array(values))
        return kc_error_set(err, KC_EBADREQUEST, "$deleteFromPrimitiveList/%s must be a list",
                            field);
    json_t *cur = json_object_get(doc, field);
    if (!json_is_array(cur))
        return 0;
    for (size_t j = json_array_size(cur); j-- > 0;) {
        size_t i;
        json_t *v;
        json_array_foreach(values, i, v)
        {
            if (kc__json_equal(json_array_get(cur, j), v)) {
                json_array_remove(cur, j);
                break;
            }
        }
    }
    return 0;
}

static int smp_field(json_t *doc, const char *k, const json_t *pv, const char *kind,
                     const char *parent, kc_error *err)
{
    json_t *cur = json_object_get(doc, k);
    int rc;
    if (json_is_null(pv)) {
        json_object_del(doc, k);
        return 0;
    }
    if (json_is_object(pv) && json_is_object(cur)) {
        rc = smp_object(cur, pv, kind, k, err);
        if (rc == SMP_DELETE_ME) {
            json_object_del(doc, k);
            rc = 0;
        }
        return rc;
    }
    if (json_is_array(pv) && json_is_array(cur)) {
        const kc__list_keys *lk = kc__list_keys_find(kind, parent, k);
        if (lk && lk->set)
            return smp_set_list(cur, pv, err);
        if (lk)
            return smp_keyed_list(cur, pv, lk, kind, k, err);
    }
    json_t *m;
    if ((rc = materialize(pv, kind, k, &m, err)) < 0)
        return rc;
    if (!m) {
        json_object_del(doc, k);
        return 0;
    }
    return json_object_set_new(doc, k, m) < 0 ? kc_error_set(err, KC_ENOMEM, "out of memory") : 0;
}

/* "$retainKeys": [names] — after the merge, keys of doc not listed are cleared (how kubectl
 * switches a volume's or a strategy's type). NULL keys: nothing to do. */
static int apply_retain_keys(json_t *doc, const json_t *keys, kc_error *err)
{
    if (!keys)
        return 0;
    if (!json_is_array(keys))
        return kc_error_set(err, KC_EBADREQUEST, "$retainKeys must be a list of strings");
    size_t i;
    json_t *k;
    json_array_foreach(keys, i, k)
    {
        if (!json_is_string(k))
            return kc_error_set(err, KC_EBADREQUEST, "$retainKeys must be a list of strings");
    }
    const char *dk;
    json_t *dv, *tmp;
    json_object_foreach_safe(doc, tmp, dk, dv)
    {
        bool keep = false;
        json_array_foreach(keys, i, k)
        {
            if (strcmp(json_string_value(k), dk) == 0) {
                keep = true;
                break;
            }
        }
        if (!keep)
            json_object_del(doc, dk);
    }
    return 0;
}

/* Merge the map patch into doc (in place). Returns 0, SMP_DELETE_ME, or a negative code. */
static int smp_object(json_t *doc, const json_t *patch, const char *kind, const char *parent,
                      kc_error *err)
{
    const char *d = NULL;
    int rc = patch_directive(patch, &d, err);
    if (rc < 0)
        return rc;
    if (d && strcmp(d, "delete") == 0)
        return SMP_DELETE_ME;
    if (d && strcmp(d, "replace") == 0)
        json_object_clear(doc);
    const char *k;
    json_t *pv;
    json_object_foreach((json_t *)patch, k, pv)
    {
        if (kc__starts_with(k, "$deleteFromPrimitiveList/")) {
            rc = smp_delete_from_list(doc, k + strlen("$deleteFromPrimitiveList/"), pv, err);
        } else if (is_directive_key(k)) {
            continue;
        } else {
            rc = smp_field(doc, k, pv, kind, parent, err);
        }
        if (rc < 0)
            return rc;
    }
    return apply_retain_keys(doc, json_object_get(patch, "$retainKeys"), err);
}

int kc__strategic_merge(json_t *doc, const json_t *patch, const char *kind, kc_error *err)
{
    if (!json_is_object(doc) || !json_is_object(patch))
        return kc_error_set(err, KC_EBADREQUEST, "a strategic merge patch must be a JSON object");
    int rc = smp_object(doc, patch, kind, "", err);
    if (rc == SMP_DELETE_ME)
        return kc_error_set(err, KC_EBADREQUEST,
                            "strategic merge patch: $patch: delete on the whole object");
    return rc;
}
