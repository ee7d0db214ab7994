/*
 * schema_crd.c — custom resources against their CRD's openAPIV3Schema (a jansson document, read
 * as it is: no compilation, property lookups are jansson hash lookups): pruning of unknown
 * fields, defaults, and validation worded as the API server words it.
 *
 * Pruning (structural schemas): an object keeps the properties its schema declares, every key of
 * a map (additionalProperties with a schema), and everything under
 * x-kubernetes-preserve-unknown-fields; apiVersion, kind and metadata are kept at the root and in
 * x-kubernetes-embedded-resource objects. Defaults: top-down as upstream's structural defaulting
 * (a missing property, or a null one whose schema is not nullable, gets a copy of its default;
 * array items and map values too); a null without a default and without nullable is dropped.
 * Validation: kube-openapi's checks, errors converted as apiextensions does (Required value,
 * Invalid value, Unsupported value, Too long, Too many), paths "spec.items[0].name".
 * Not done: format checks, x-kubernetes-validations (CEL rules), x-kubernetes-list-type
 * uniqueness, ratcheting of unchanged invalid values on update.
 * Thread-safety: pure functions (the schema is read only).
 */
#include "server/schema/schema_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool flag(const json_t *s, const char *k)
{
    return json_is_true(json_object_get(s, k));
}

/* ---- pruning --------------------------------------------------------------------------------- */

typedef struct pwalk {
    kc__unknown_fn fn;
    void *ud;
    char path[1024];
} pwalk;

static int prune(pwalk *p, const json_t *s, json_t *v, const json_t *base, bool root);

static int prune_child(pwalk *p, const json_t *s, json_t *v, const json_t *base, const char *key,
                       size_t idx)
{
    size_t pl = strlen(p->path);
    if (key)
        snprintf(p->path + pl, sizeof(p->path) - pl, "%s%s", pl ? "." : "", key);
    else
        snprintf(p->path + pl, sizeof(p->path) - pl, "[%zu]", idx);
    int rc = prune(p, s, v, base, false);
    p->path[pl] = 0;
    return rc;
}

static int prune(pwalk *p, const json_t *s, json_t *v, const json_t *base, bool root)
{
    if (!json_is_object(s))
        return 0;
    if (json_is_array(v)) {
        const json_t *items = json_object_get(s, "items");
        for (size_t i = 0; i < json_array_size(v) && json_is_object(items); i++) {
            int rc = prune_child(p, items, json_array_get(v, i), json_array_get(base, i), NULL, i);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    if (!json_is_object(v))
        return 0;
    const json_t *props = json_object_get(s, "properties");
    const json_t *addl = json_object_get(s, "additionalProperties");
    bool preserve = flag(s, "x-kubernetes-preserve-unknown-fields") || json_is_true(addl);
    bool embedded = root || flag(s, "x-kubernetes-embedded-resource");
    const char *k;
    json_t *x;
    void *tmp;
    json_object_foreach_safe(v, tmp, k, x)
    {
        const json_t *ps = json_object_get(props, k);
        const json_t *b = json_is_object(base) ? json_object_get(base, k) : NULL;
        int rc = 0;
        if (ps)
            rc = prune_child(p, ps, x, b, k, 0);
        else if (json_is_object(addl))
            rc = prune_child(p, addl, x, b, k, 0);
        else if (preserve || (embedded && (!strcmp(k, "apiVersion") || !strcmp(k, "kind") ||
                                           !strcmp(k, "metadata"))))
            continue;
        else if (!b) {
            size_t pl = strlen(p->path);
            snprintf(p->path + pl, sizeof(p->path) - pl, "%s%s", pl ? "." : "", k);
            rc = p->fn(p->ud, p->path, v, k);
            p->path[pl] = 0;
            if (rc == 0)
                json_object_del(v, k);
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

int kc__crd_prune(const json_t *schema, json_t *doc, const json_t *base, kc__unknown_fn fn,
                  void *ud)
{
    pwalk p = {.fn = fn, .ud = ud};
    int rc = prune(&p, schema, doc, base, true);
    return rc > 0 ? 0 : rc;
}

/* ---- defaults -------------------------------------------------------------------------------- */

static int defaults(const json_t *s, json_t *v)
{
    if (!json_is_object(s))
        return 0;
    if (json_is_array(v)) {
        const json_t *items = json_object_get(s, "items");
        const json_t *d = json_object_get(items, "default");
        for (size_t i = 0; i < json_array_size(v) && json_is_object(items); i++) {
            if (json_is_null(json_array_get(v, i)) && d && !flag(items, "nullable") &&
                json_array_set_new(v, i, json_deep_copy(d)) < 0)
                return KC_ENOMEM;
            if (defaults(items, json_array_get(v, i)))
                return KC_ENOMEM;
        }
        return 0;
    }
    if (!json_is_object(v))
        return 0;
    const json_t *props = json_object_get(s, "properties");
    const char *k;
    json_t *ps, *x;
    void *tmp;
    json_object_foreach((json_t *)props, k, ps)
    {
        const json_t *d = json_object_get(ps, "default");
        x = json_object_get(v, k);
        if (d && (!x || (json_is_null(x) && !flag(ps, "nullable"))) &&
            json_object_set_new(v, k, json_deep_copy(d)) < 0)
            return KC_ENOMEM;
    }
    const json_t *addl = json_object_get(s, "additionalProperties");
    json_object_foreach_safe(v, tmp, k, x)
    {
        const json_t *cs = json_object_get(props, k);
        if (!cs && json_is_object(addl))
            cs = addl;
        if (!cs)
            continue;
        if (json_is_null(x) && !flag(cs, "nullable")) {
            json_object_del(v, k); /* a non-nullable null without default is pruned */
            continue;
        }
        if (defaults(cs, x))
            return KC_ENOMEM;
    }
    return 0;
}

int kc__crd_default(const json_t *schema, json_t *doc)
{
    return defaults(schema, doc);
}
