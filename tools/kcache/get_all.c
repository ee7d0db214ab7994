/*
 * get_all.c — what `kcache get all` means: every resource whose discovery entry lists the
 * category "all" (pods, services, deployments.apps…, and CRDs that declare it), as kubectl
 * expands categories.
 *
 * Design: the discovery documents are read with raw GETs (/api/v1, /apis, then each group's
 * preferred version) and loaded with jansson, the CLI's JSON library; subresources (names with
 * '/') are skipped. The result is a list of names kubectl's RESTMapper resolves ("pods",
 * "deployments.apps"), in discovery order (the core group first, then the groups as /apis lists
 * them) — the order kubectl prints them in.
 */
#include "get.h"

#include <stdlib.h>
#include <string.h>

/* GET path as JSON. NULL after reporting why. */
static json_t *discovery_doc(kc_client *c, const char *path)
{
    int status = 0;
    char *body = NULL;
    size_t len = 0;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_client_raw(c, "GET", path, NULL, NULL, 0, &status, &body, &len, &err);
    json_t *doc = NULL;
    if (rc)
        kc__cli_error("get", rc, &err);
    else if (status != 200)
        fprintf(stderr, "kcache get: discovery %s: HTTP %d\n", path, status);
    else if (!(doc = json_loadb(body, len, 0, NULL)))
        fprintf(stderr, "kcache get: discovery %s: not JSON\n", path);
    kc_error_clear(&err);
    free(body);
    return doc;
}

static bool in_all(json_t *res)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(res, "categories"), i, c)
    {
        if (json_is_string(c) && !strcmp(json_string_value(c), "all"))
            return true;
    }
    return false;
}

/* The "all" resources of one APIResourceList (group "" for core), appended. -1 on OOM. */
static int add_group(json_t *list, const char *group, char ***names, size_t *n)
{
    size_t i;
    json_t *res;
    json_array_foreach(json_object_get(list, "resources"), i, res)
    {
        const char *name = json_string_value(json_object_get(res, "name"));
        if (!name || strchr(name, '/') || !in_all(res))
            continue;
        char **v = realloc(*names, (*n + 1) * sizeof(*v));
        if (!v)
            return -1;
        *names = v;
        size_t sz = strlen(name) + strlen(group) + 2;
        if (!(v[*n] = malloc(sz)))
            return -1;
        snprintf(v[*n], sz, "%s%s%s", name, *group ? "." : "", group);
        (*n)++;
    }
    return 0;
}

int get_all_types(kc_client *c, char ***ret, size_t *n)
{
    *ret = NULL;
    *n = 0;
    json_t *core = discovery_doc(c, "/api/v1"), *groups = core ? discovery_doc(c, "/apis") : NULL;
    int rc = core && groups ? add_group(core, "", ret, n) : -1;
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(groups, "groups"), i, g)
    {
        if (rc)
            break;
        const char *name = json_string_value(json_object_get(g, "name"));
        const char *gv = json_string_value(
            json_object_get(json_object_get(g, "preferredVersion"), "groupVersion"));
        if (!name || !gv)
            continue;
        char path[512];
        snprintf(path, sizeof path, "/apis/%s", gv);
        json_t *list = discovery_doc(c, path);
        rc = list ? add_group(list, name, ret, n) : -1;
        json_decref(list);
    }
    json_decref(core);
    json_decref(groups);
    if (rc) {
        for (size_t k = 0; k < *n; k++)
            free((*ret)[k]);
        free(*ret);
        *ret = NULL;
        *n = 0;
    }
    return rc;
}
