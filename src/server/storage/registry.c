/*
 * registry.c — the resource registry of the embedded API server: the built-in resources from the
 * table in resources.c (one kc__rsrc per row, all its versions served from one store), the
 * resources CRDs add (crd.c), lookups by group/version/plural and by apiVersion/kind.
 * The discovery documents built from it are in discovery.c.
 * All functions run with srv->mu held except kc__rsrc_free.
 */
#include "server/storage/storage_internal.h"

#include "server/schema/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kc__rsrc_free(kc__rsrc *r)
{
    if (!r)
        return;
    kc__store_clear_rsrc(r);
    kc__htab_free(&r->map);
    free(r->sorted);
    free(r->group);
    for (size_t i = 0; i < r->n_versions; i++)
        free(r->versions[i]);
    for (size_t i = 0; i < r->n_short; i++)
        free(r->short_names[i]);
    for (size_t i = 0; i < r->n_categories; i++)
        free(r->categories[i]);
    free(r->plural);
    free(r->singular);
    free(r->kind);
    free(r->list_kind);
    free(r->crd_name);
    for (char **f = r->crd_fields; f && *f; f++)
        free(*f);
    free(r->crd_fields);
    json_decref(r->crd_versions);
    if (r->is_crd)
        pthread_mutex_destroy(&r->crd_mu);
    free(r);
}

static int split_csv(const char *s, char **out, size_t *n)
{
    *n = 0;
    while (s && *s && *n < KC__MAX_NAMES) {
        const char *c = strchr(s, ',');
        size_t l = c ? (size_t)(c - s) : strlen(s);
        if (!(out[(*n)++] = kc__strdup_n(s, l)))
            return KC_ENOMEM;
        s = c ? c + 1 : NULL;
    }
    return 0;
}

int kc__registry_add(kc_server *srv, kc__rsrc *r)
{
    if (kc__grow(&srv->rsrcs, &srv->cap_rsrcs, srv->n_rsrcs + 1, sizeof(*srv->rsrcs), 32) < 0)
        return KC_ENOMEM;
    srv->rsrcs[srv->n_rsrcs++] = r;
    return 0;
}

void kc__registry_remove(kc_server *srv, kc__rsrc *r)
{
    for (size_t i = 0; i < srv->n_rsrcs; i++) {
        if (srv->rsrcs[i] != r)
            continue;
        memmove(&srv->rsrcs[i], &srv->rsrcs[i + 1], (srv->n_rsrcs - i - 1) * sizeof(r));
        srv->n_rsrcs--;
        r->removed = true;
        kc__store_clear_rsrc(r);
        if (kc__grow(&srv->retired, &srv->cap_retired, srv->n_retired + 1, sizeof(*srv->retired),
                     8) < 0)
            return; /* leaks r until exit rather than freeing under watchers */
        srv->retired[srv->n_retired++] = r;
        return;
    }
}

int kc__registry_init_builtins(kc_server *srv)
{
    size_t n;
    const kc__builtin *rows = kc__builtins(&n);
    for (size_t i = 0; i < n; i++) {
        const kc__builtin *b = &rows[i];
        kc__rsrc *r = calloc(1, sizeof(*r));
        if (!r)
            return KC_ENOMEM;
        char lk[128];
        snprintf(lk, sizeof(lk), "%sList", b->kind);
        r->def = b;
        r->group = kc__strdup(b->group);
        r->plural = kc__strdup(b->plural);
        r->singular = kc__strdup(b->singular);
        r->kind = kc__strdup(b->kind);
        r->list_kind = kc__strdup(lk);
        r->namespaced = (b->flags & KC__BI_NAMESPACED) != 0;
        r->has_status = kc__rsrc_has_sub(r, "status");
        r->return_deleted = (b->flags & KC__BI_RETURN_DELETED) != 0;
        r->graceful = (b->flags & KC__BI_GRACEFUL) != 0;
        r->name_rule = b->rule;
        r->gen_rule = b->gen;
        r->fields = b->fields;
        for (const char *const *f = b->fields; f && *f; f++)
            r->node_indexed |= strcmp(*f, "spec.nodeName") == 0;
        if (!r->group || !r->plural || !r->singular || !r->kind || !r->list_kind ||
            split_csv(b->versions, r->versions, &r->n_versions) != 0 ||
            split_csv(b->shorts, r->short_names, &r->n_short) != 0 ||
            split_csv(b->cats, r->categories, &r->n_categories) != 0 ||
            kc__registry_add(srv, r) != 0) {
            kc__rsrc_free(r);
            return KC_ENOMEM;
        }
        for (size_t v = 0; v < r->n_versions; v++)
            r->model[v] = kc__schema_model_for(r->group, r->versions[v], r->kind);
    }
    return 0;
}

/* Is name one of the comma-separated items of list? */
static bool in_csv(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *c = strchr(p, ',');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        if (l == n && !strncmp(p, name, n))
            return true;
        p = c ? c + 1 : NULL;
    }
    return false;
}

bool kc__rsrc_has_sub(const kc__rsrc *r, const char *sub)
{
    if (!r->def)
        return !strcmp(sub, "status") && r->has_status;
    return in_csv(r->def->subresources, sub);
}

int kc__rsrc_version_index(const kc__rsrc *r, const char *version)
{
    for (size_t i = 0; i < r->n_versions; i++)
        if (!strcmp(r->versions[i], version))
            return (int)i;
    return -1;
}

bool kc__rsrc_serves(const kc__rsrc *r, const char *version)
{
    return kc__rsrc_version_index(r, version) >= 0;
}

kc__rsrc *kc__registry_find(kc_server *srv, const char *group, const char *version,
                            const char *plural)
{
    for (size_t i = 0; i < srv->n_rsrcs; i++) {
        kc__rsrc *r = srv->rsrcs[i];
        if (strcmp(r->group, group) == 0 && strcmp(r->plural, plural) == 0 &&
            kc__rsrc_serves(r, version))
            return r;
    }
    return NULL;
}

kc__rsrc *kc__registry_find_kind(kc_server *srv, const char *api_version, const char *kind)
{
    const char *slash = strchr(api_version, '/');
    char group[128] = "";
    const char *version = api_version;
    if (slash) {
        size_t gl = (size_t)(slash - api_version);
        if (gl >= sizeof(group))
            return NULL;
        memcpy(group, api_version, gl);
        group[gl] = 0;
        version = slash + 1;
    }
    for (size_t i = 0; i < srv->n_rsrcs; i++) {
        kc__rsrc *r = srv->rsrcs[i];
        if (strcmp(r->group, group) == 0 && strcmp(r->kind, kind) == 0 &&
            kc__rsrc_serves(r, version))
            return r;
    }
    return NULL;
}

kc__rsrc *kc__rsrc_namespaces(kc_server *srv)
{
    return kc__registry_find(srv, "", "v1", "namespaces");
}

void kc__rsrc_qualified(const kc__rsrc *r, char *out, size_t cap)
{
    if (r->group[0])
        snprintf(out, cap, "%s.%s", r->plural, r->group);
    else
        snprintf(out, cap, "%s", r->plural);
}

void kc__rsrc_api_version(const kc__rsrc *r, const char *version, char *out, size_t cap)
{
    if (!version)
        version = r->versions[0];
    if (r->group[0])
        snprintf(out, cap, "%s/%s", r->group, version);
    else
        snprintf(out, cap, "%s", version);
}

const char *kc__rsrc_bad_field(const kc__rsrc *r, const kc_field_selector *sel)
{
    size_t n = kc_field_selector_count(sel);
    for (size_t i = 0; i < n; i++) {
        const char *f = kc_field_selector_field(sel, i);
        if (!f || strcmp(f, "metadata.name") == 0 || strcmp(f, "metadata.namespace") == 0)
            continue;
        bool ok = false;
        for (const char *const *p = r->fields; p && *p && !ok; p++)
            ok = strcmp(*p, f) == 0;
        if (!ok)
            return f;
    }
    return NULL;
}
