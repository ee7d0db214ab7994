/*
 * crd.c — CustomResourceDefinitions: validation and status on create, and (un)registration of the
 * custom resource in the registry (all served versions; one storage shared by the versions;
 * objects keep the apiVersion they were written with — no conversion). Custom resources follow
 * the CR rules: generation on any change outside metadata/status, 422 on an update without RV,
 * 415 for strategic merge patch, Success Status on delete. A CRD that is already registered keeps
 * its resource on update (descriptions are immutable once other threads can read them), but its
 * spec.versions (schemas, printer columns) are replaced: r->crd_versions is swapped under the
 * resource's crd_mu, and readers take a reference under it (kc__crd_versions_ref), so the schema
 * checks (server/schema/schema_crd*.c: pruning, defaults, validation) and Table columns may run
 * with or without srv->mu.
 * `selectableFields` of the storage version become supported field selectors.
 * Storage does not call this room: the write path reaches these rules through the hooks table
 * kc__crd_install hands it (srv->crd: prepare, stored, removed, validate).
 * Every function runs with srv->mu held.
 */
#include "server/discovery/discovery_internal.h"

#include "server/schema/schema.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int crd_invalid(kc_error *err, const char *name, const char *field, const char *msg)
{
    int rc = kc__fail(err, 422, "Invalid",
                      "CustomResourceDefinition.apiextensions.k8s.io \"%s\" "
                      "is invalid: %s: %s",
                      name, field, msg);
    kc__fail_details(err, name, "apiextensions.k8s.io", "CustomResourceDefinition");
    kc__fail_cause(err, "FieldValueRequired", field, msg);
    return rc;
}

static int crd_prepare(kc_server *srv, json_t *doc, kc_error *err)
{
    const char *name = kc__meta_str(doc, "name");
    json_t *spec = json_object_get(doc, "spec");
    json_t *names = json_object_get(spec, "names");
    const char *group = json_string_value(json_object_get(spec, "group"));
    const char *plural = json_string_value(json_object_get(names, "plural"));
    const char *kind = json_string_value(json_object_get(names, "kind"));
    const char *scope = json_string_value(json_object_get(spec, "scope"));
    json_t *versions = json_object_get(spec, "versions");
    if (!name)
        name = "";
    if (!group || !*group)
        return crd_invalid(err, name, "spec.group", "Required value");
    if (!plural || !*plural)
        return crd_invalid(err, name, "spec.names.plural", "Required value");
    if (!kind || !*kind)
        return crd_invalid(err, name, "spec.names.kind", "Required value");
    if (!scope || (strcmp(scope, "Namespaced") && strcmp(scope, "Cluster")))
        return crd_invalid(err, name, "spec.scope",
                           "Unsupported value: must be Namespaced or "
                           "Cluster");
    if (!json_is_array(versions) || !json_array_size(versions))
        return crd_invalid(err, name, "spec.versions", "Required value");
    char want[512];
    snprintf(want, sizeof(want), "%s.%s", plural, group);
    if (strcmp(name, want) != 0)
        return crd_invalid(err, name, "metadata.name",
                           "must be spec.names.plural+\".\"+spec.group");
    char ts[32];
    kc__now_rfc3339(ts);
    json_t *stored = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(versions, i, v)
    {
        if (json_is_true(json_object_get(v, "storage")))
            json_array_append(stored, json_object_get(v, "name"));
    }
    if (!json_array_size(stored))
        json_array_append(stored, json_object_get(json_array_get(versions, 0), "name"));
    json_t *st = json_pack(
        "{s:[{s:s,s:s,s:s,s:s,s:s},{s:s,s:s,s:s,s:s,s:s}],s:O,s:o}", "conditions", "type",
        "NamesAccepted", "status", "True", "lastTransitionTime", ts, "reason", "NoConflicts",
        "message", "no conflicts found", "type", "Established", "status", "True",
        "lastTransitionTime", ts, "reason", "InitialNamesAccepted", "message",
        "the initial names have been accepted", "acceptedNames", names, "storedVersions", stored);
    if (!st)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    json_object_set_new(doc, "status", st);
    (void)srv;
    return 0;
}

static char *lower(const char *s)
{
    char *d = kc__strdup(s);
    for (char *p = d; p && *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return d;
}

static int str_list(json_t *a, char **out, size_t *n)
{
    size_t i;
    json_t *v;
    *n = 0;
    json_array_foreach(a, i, v)
    {
        if (*n == KC__MAX_NAMES || !json_is_string(v))
            continue;
        if (!(out[(*n)++] = kc__strdup(json_string_value(v))))
            return KC_ENOMEM;
    }
    return 0;
}

json_t *kc__crd_versions_ref(kc__rsrc *r)
{
    if (!r->is_crd)
        return NULL;
    pthread_mutex_lock(&r->crd_mu);
    json_t *v = json_incref(r->crd_versions);
    pthread_mutex_unlock(&r->crd_mu);
    return v;
}

static void set_versions(kc__rsrc *r, json_t *versions)
{
    json_incref(versions);
    pthread_mutex_lock(&r->crd_mu);
    json_t *old = r->crd_versions;
    r->crd_versions = versions;
    pthread_mutex_unlock(&r->crd_mu);
    json_decref(old);
}

const json_t *kc__crd_schema_of(const json_t *versions, const char *version)
{
    size_t i;
    const json_t *v;
    json_array_foreach(versions, i, v)
    {
        if (kc__streq(json_string_value(json_object_get(v, "name")), version))
            return json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");
    }
    return NULL;
}

int kc__crd_decode(kc__rsrc *r, const char *version, json_t *doc, const json_t *base,
                   int (*fn)(void *, const char *, json_t *, const char *), void *ud)
{
    json_t *versions = kc__crd_versions_ref(r);
    const json_t *schema = kc__crd_schema_of(versions, version);
    int rc = 0;
    if (json_is_object(schema)) {
        rc = kc__crd_prune(schema, doc, base, fn, ud);
        if (rc == 0)
            rc = kc__crd_default(schema, doc);
    }
    json_decref(versions);
    return rc;
}

static int crd_validate_obj(kc__rsrc *r, const char *version, const json_t *doc, const char *name,
                            bool skip_status, kc_error *err)
{
    json_t *versions = kc__crd_versions_ref(r);
    const json_t *schema = kc__crd_schema_of(versions, version);
    int rc = 0;
    if (json_is_object(schema)) {
        json_t *view = skip_status ? json_copy((json_t *)doc) : json_incref((json_t *)doc);
        if (skip_status)
            json_object_del(view, "status");
        rc = view ? kc__crd_validate(schema, view, r->kind, r->group, name, err)
                  : kc_error_set(err, KC_ENOMEM, "out of memory");
        json_decref(view);
    }
    json_decref(versions);
    return rc;
}

static int crd_register(kc_server *srv, const kc_obj *crd, kc_error *err)
{
    json_t *doc = kc__doc_from_obj(crd);
    if (!doc)
        return kc_error_set(err, KC_ENOMEM, "cannot decode CRD");
    for (size_t i = 0; i < srv->n_rsrcs; i++)
        if (srv->rsrcs[i]->crd_name && !strcmp(srv->rsrcs[i]->crd_name, kc_obj_name(crd))) {
            set_versions(srv->rsrcs[i], json_object_get(json_object_get(doc, "spec"), "versions"));
            json_decref(doc);
            return 0;
        }
    json_t *spec = json_object_get(doc, "spec");
    json_t *names = json_object_get(spec, "names");
    const char *group = json_string_value(json_object_get(spec, "group"));
    const char *plural = json_string_value(json_object_get(names, "plural"));
    const char *kind = json_string_value(json_object_get(names, "kind"));
    const char *singular = json_string_value(json_object_get(names, "singular"));
    const char *list_kind = json_string_value(json_object_get(names, "listKind"));
    kc__rsrc *r = calloc(1, sizeof(*r));
    int rc = KC_ENOMEM;
    if (!r || !group || !plural || !kind)
        goto fail;
    r->group = kc__strdup(group);
    r->plural = kc__strdup(plural);
    r->kind = kc__strdup(kind);
    r->singular = singular && *singular ? kc__strdup(singular) : lower(kind);
    char lk[256];
    snprintf(lk, sizeof(lk), "%sList", kind);
    r->list_kind = kc__strdup(list_kind && *list_kind ? list_kind : lk);
    r->crd_name = kc__strdup(kc_obj_name(crd));
    r->namespaced = !kc__streq(json_string_value(json_object_get(spec, "scope")), "Cluster");
    r->is_crd = true;
    pthread_mutex_init(&r->crd_mu, NULL);
    r->crd_versions = json_incref(json_object_get(spec, "versions"));
    for (size_t v = 0; v < KC__MAX_VERSIONS; v++)
        r->model[v] = -1;
    r->gen_rule = KC__GEN_CR;
    r->name_rule = KC__NAME_DNS1123_SUBDOMAIN;
    if (!r->group || !r->plural || !r->kind || !r->singular || !r->list_kind || !r->crd_name ||
        str_list(json_object_get(names, "shortNames"), r->short_names, &r->n_short) ||
        str_list(json_object_get(names, "categories"), r->categories, &r->n_categories))
        goto fail;
    /* storage version first, then the other served versions */
    size_t i;
    json_t *v;
    for (int pass = 0; pass < 2; pass++) {
        json_array_foreach(json_object_get(spec, "versions"), i, v)
        {
            bool storage = json_is_true(json_object_get(v, "storage"));
            const char *vn = json_string_value(json_object_get(v, "name"));
            json_t *served = json_object_get(v, "served");
            if (!vn || (served && !json_is_true(served)) || storage != (pass == 0) ||
                r->n_versions == KC__MAX_VERSIONS)
                continue;
            if (!(r->versions[r->n_versions++] = kc__strdup(vn)))
                goto fail;
            if (json_object_get(json_object_get(v, "subresources"), "status"))
                r->has_status = true;
            /* selectableFields of the storage version: {"jsonPath": ".spec.color"} → spec.color */
            json_t *sf = json_object_get(v, "selectableFields");
            if (pass == 0 && json_array_size(sf) && !r->crd_fields) {
                size_t nf = json_array_size(sf), k = 0, j;
                json_t *f;
                if (!(r->crd_fields = calloc(nf + 1, sizeof(char *))))
                    goto fail;
                json_array_foreach(sf, j, f)
                {
                    const char *jp = json_string_value(json_object_get(f, "jsonPath"));
                    if (jp && jp[0] == '.' && jp[1] && !(r->crd_fields[k++] = kc__strdup(jp + 1)))
                        goto fail;
                }
                r->fields = (const char *const *)r->crd_fields;
            }
        }
    }
    if (!r->n_versions) {
        rc = kc__fail(err, 422, "Invalid", "CustomResourceDefinition \"%s\" serves no version",
                      kc_obj_name(crd));
        goto fail_set;
    }
    if ((rc = kc__registry_add(srv, r)) != 0)
        goto fail;
    json_decref(doc);
    return 0;
fail:
    rc = kc_error_set(err, KC_ENOMEM, "out of memory registering the CRD");
fail_set:
    kc__rsrc_free(r);
    json_decref(doc);
    return rc;
}

static void crd_unregister(kc_server *srv, const char *crd_name)
{
    for (size_t i = srv->n_rsrcs; i-- > 0;) {
        kc__rsrc *r = srv->rsrcs[i];
        if (r->crd_name && !strcmp(r->crd_name, crd_name))
            kc__registry_remove(srv, r);
    }
}

void kc__crd_install(kc_server *srv)
{
    static const kc__crd_hooks hooks = {
        .prepare = crd_prepare,
        .stored = crd_register,
        .removed = crd_unregister,
        .validate = crd_validate_obj,
    };
    kc__store_set_crd_hooks(srv, &hooks);
}
