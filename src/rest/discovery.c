/*
 * rest/discovery.c — legacy discovery documents (/api, /api/v1, /apis, /apis/G/V) and the
 * RESTMapper (kc_client_resolve), as kubectl resolves resource names.
 *
 * The cache is one immutable kc__disc (every resource of every served group version, core group
 * first, then groups in discovery order; each flagged preferred or not). It is fetched without
 * any lock held, then published by swapping the pointer under disc_mu; readers copy what they
 * need under disc_mu. A name not found triggers one refetch (a CRD created since), then
 * KC_ENOTFOUND. Documents are parsed with the json layer (kc_obj_parse + JSON Pointer access).
 *
 * Matching, in order of preference, among preferred versions unless a version is named:
 *   plural, singular, short name, kind (case-insensitive); qualified forms RESOURCE.VERSION.GROUP
 *   then RESOURCE.GROUP; the first match in discovery order wins (core group first).
 */
#include "rest/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>

#define KC__DISC_MAX_RESOURCES 20000
#define KC__DISC_MAX_LIST      1000

typedef struct kc__dres {
    kc_resource_info info;
    bool preferred;
} kc__dres;

struct kc__disc {
    kc__dres *v;
    size_t n, cap;
};

void kc_resource_info_clear(kc_resource_info *r)
{
    if (!r)
        return;
    free(r->group);
    free(r->version);
    free(r->resource);
    free(r->kind);
    free(r->singular);
    for (size_t i = 0; i < r->n_short; i++)
        free(r->short_names[i]);
    free(r->short_names);
    for (size_t i = 0; i < r->n_verbs; i++)
        free(r->verbs[i]);
    free(r->verbs);
    memset(r, 0, sizeof *r);
}

void kc__disc_free(kc__disc *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++)
        kc_resource_info_clear(&d->v[i].info);
    free(d->v);
    free(d);
}

static int kc__strv_copy(char **src, size_t n, char ***dst, size_t *dn)
{
    *dst = NULL;
    *dn = 0;
    if (!n)
        return 0;
    char **v = calloc(n, sizeof *v);
    if (!v)
        return KC_ENOMEM;
    *dst = v;
    for (size_t i = 0; i < n; i++) {
        if (!(v[i] = kc__strdup(src[i])))
            return KC_ENOMEM;
        (*dn)++;
    }
    return 0;
}

static int kc__info_copy(const kc_resource_info *s, kc_resource_info *d)
{
    memset(d, 0, sizeof *d);
    d->namespaced = s->namespaced;
    if (!(d->group = kc__strdup(s->group)) || !(d->version = kc__strdup(s->version)) ||
        !(d->resource = kc__strdup(s->resource)) || !(d->kind = kc__strdup(s->kind)) ||
        !(d->singular = kc__strdup(s->singular)) ||
        kc__strv_copy(s->short_names, s->n_short, &d->short_names, &d->n_short) ||
        kc__strv_copy(s->verbs, s->n_verbs, &d->verbs, &d->n_verbs)) {
        kc_resource_info_clear(d);
        return KC_ENOMEM;
    }
    return 0;
}

/* GET a discovery document as a kc_obj. 404 → *ret NULL and 0. */
static int kc__disc_get(kc_client *c, const char *path, kc_obj **ret, kc_error *err)
{
    kc__http_req req = {.method = "GET", .path = path};
    kc__http_resp resp;
    kc__http_resp_init(&resp);
    *ret = NULL;
    int rc = kc__client_call(c, &req, true, &resp, err);
    if (rc == KC_ENOTFOUND) {
        kc_error_clear(err);
        rc = 0;
    } else if (rc == 0) {
        kc_decode_opts d = {.flags = 0, .max_object_size = (size_t)64 * 1024 * 1024};
        rc = kc_obj_parse(resp.body.data ? resp.body.data : "", resp.body.len, &d, ret, err);
    }
    kc__http_resp_free(&resp);
    return rc;
}

/* String array at pointer prefix (e.g. "/verbs") → new vector. */
static int kc__str_array(const kc_obj *o, const char *ptr, char ***ret, size_t *ret_n)
{
    *ret = NULL;
    *ret_n = 0;
    for (size_t i = 0; i < KC__DISC_MAX_LIST; i++) {
        char p[64];
        char *s = NULL;
        snprintf(p, sizeof p, "%s/%zu", ptr, i);
        if (kc__obj_get_cstring(o, p, &s, false, NULL) != 0)
            break;
        char **v = realloc(*ret, (i + 1) * sizeof *v);
        if (!v) {
            free(s);
            return KC_ENOMEM;
        }
        v[i] = s;
        *ret = v;
        *ret_n = i + 1;
    }
    return 0;
}

static int kc__disc_add(kc__disc *d, const char *group, const char *version, bool preferred,
                        const kc_obj *r)
{
    char *name = NULL;
    if (kc__obj_get_cstring(r, "/name", &name, false, NULL) != 0)
        return 0;
    if (strchr(name, '/') || d->n >= KC__DISC_MAX_RESOURCES) { /* subresource */
        free(name);
        return 0;
    }
    if (kc__grow(&d->v, &d->cap, d->n + 1, sizeof *d->v, 64) < 0) {
        free(name);
        return KC_ENOMEM;
    }
    kc__dres *e = &d->v[d->n];
    memset(e, 0, sizeof *e);
    e->preferred = preferred;
    kc_resource_info *i = &e->info;
    i->resource = name;
    kc__obj_get_cstring(r, "/kind", &i->kind, false, NULL);
    kc__obj_get_cstring(r, "/singularName", &i->singular, false, NULL);
    kc_obj_get_bool(r, "/namespaced", &i->namespaced, NULL);
    if (i->singular && !*i->singular) {
        free(i->singular);
        i->singular = NULL;
    }
    if (!i->singular && i->kind) { /* kubectl: fall back to the lowercased kind */
        i->singular = kc__strdup(i->kind);
        for (char *p = i->singular; p && *p; p++)
            *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    }
    if (!i->kind)
        i->kind = kc__strdup("");
    i->group = kc__strdup(group);
    i->version = kc__strdup(version);
    int rc = kc__str_array(r, "/shortNames", &i->short_names, &i->n_short);
    rc = rc ? rc : kc__str_array(r, "/verbs", &i->verbs, &i->n_verbs);
    if (rc || !i->kind || !i->singular || !i->group || !i->version) {
        kc_resource_info_clear(i);
        return KC_ENOMEM;
    }
    d->n++;
    return 0;
}

/* One APIResourceList. */
static int kc__disc_gv(kc_client *c, kc__disc *d, const char *group, const char *version,
                       bool preferred, kc_error *err)
{
    char path[512];
    if (*group)
        snprintf(path, sizeof path, "/apis/%s/%s", group, version);
    else
        snprintf(path, sizeof path, "/api/%s", version);
    kc_obj *doc = NULL;
    int rc = kc__disc_get(c, path, &doc, err);
    if (rc || !doc)
        return rc;
    for (size_t i = 0; i < KC__DISC_MAX_RESOURCES && rc == 0; i++) {
        char p[48];
        const char *raw;
        size_t len;
        snprintf(p, sizeof p, "/resources/%zu", i);
        if (kc_obj_get_raw(doc, p, &raw, &len, NULL) != 0)
            break;
        kc_obj *r = NULL;
        if (kc_obj_parse(raw, len, NULL, &r, NULL) == 0) {
            rc = kc__disc_add(d, group, version, preferred, r);
            kc_obj_unref(r);
        }
    }
    kc_obj_unref(doc);
    if (rc == KC_ENOMEM)
        kc_error_set(err, rc, "out of memory");
    return rc;
}

static bool kc__safe_segment(const char *s)
{
    if (!s || !*s || strlen(s) > 200)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '.'))
            return false;
    return true;
}

static int kc__disc_fetch(kc_client *c, kc__disc **ret, kc_error *err)
{
    kc__disc *d = calloc(1, sizeof *d);
    if (!d)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    kc_obj *api = NULL, *apis = NULL;
    int rc = kc__disc_get(c, "/api", &api, err);
    char *v = NULL;
    for (size_t i = 0; rc == 0 && api && i < KC__DISC_MAX_LIST; i++) {
        char p[48];
        snprintf(p, sizeof p, "/versions/%zu", i);
        if (kc__obj_get_cstring(api, p, &v, false, NULL) != 0)
            break;
        if (kc__safe_segment(v))
            rc = kc__disc_gv(c, d, "", v, i == 0, err);
        free(v);
    }
    if (!rc)
        rc = kc__disc_get(c, "/apis", &apis, err);
    for (size_t g = 0; rc == 0 && apis && g < KC__DISC_MAX_LIST; g++) {
        char p[96];
        char *name = NULL, *pref = NULL;
        snprintf(p, sizeof p, "/groups/%zu/name", g);
        if (kc__obj_get_cstring(apis, p, &name, false, NULL) != 0)
            break;
        snprintf(p, sizeof p, "/groups/%zu/preferredVersion/version", g);
        kc__obj_get_cstring(apis, p, &pref, false, NULL);
        for (size_t k = 0; rc == 0 && k < KC__DISC_MAX_LIST; k++) {
            snprintf(p, sizeof p, "/groups/%zu/versions/%zu/version", g, k);
            if (kc__obj_get_cstring(apis, p, &v, false, NULL) != 0)
                break;
            bool preferred = pref ? strcmp(pref, v) == 0 : k == 0;
            if (kc__safe_segment(name) && kc__safe_segment(v))
                rc = kc__disc_gv(c, d, name, v, preferred, err);
            free(v);
        }
        free(name);
        free(pref);
    }
    kc_obj_unref(api);
    kc_obj_unref(apis);
    if (rc) {
        kc__disc_free(d);
        return rc;
    }
    *ret = d;
    return 0;
}

/* Match levels: 1 plural, 2 singular, 3 short name, 4 kind (case-insensitive). */
static bool kc__match(const kc_resource_info *r, const char *name, size_t len, int level)
{
    switch (level) {
    case 1:
        return kc__streq_n(name, len, r->resource);
    case 2:
        return kc__streq_n(name, len, r->singular);
    case 3:
        for (size_t i = 0; i < r->n_short; i++)
            if (kc__streq_n(name, len, r->short_names[i]))
                return true;
        return false;
    default:
        return strlen(r->kind) == len && strncasecmp(r->kind, name, len) == 0;
    }
}

/* Under disc_mu. */
static const kc__dres *kc__disc_lookup(const kc__disc *d, const char *name)
{
    const char *dot = strchr(name, '.');
    size_t base = dot ? (size_t)(dot - name) : strlen(name);
    for (int level = 1; level <= 4; level++) {
        if (dot) {
            /* RESOURCE.VERSION.GROUP */
            const char *rest = dot + 1, *dot2 = strchr(rest, '.');
            if (dot2)
                for (size_t i = 0; i < d->n; i++) {
                    const kc_resource_info *r = &d->v[i].info;
                    if (kc__streq_n(rest, (size_t)(dot2 - rest), r->version) &&
                        strcmp(dot2 + 1, r->group) == 0 && kc__match(r, name, base, level))
                        return &d->v[i];
                }
            /* RESOURCE.GROUP */
            for (size_t i = 0; i < d->n; i++) {
                const kc_resource_info *r = &d->v[i].info;
                if (d->v[i].preferred && strcmp(rest, r->group) == 0 &&
                    kc__match(r, name, base, level))
                    return &d->v[i];
            }
        } else {
            for (size_t i = 0; i < d->n; i++)
                if (d->v[i].preferred && kc__match(&d->v[i].info, name, base, level))
                    return &d->v[i];
        }
    }
    return NULL;
}

int kc_client_resolve(kc_client *c, const char *name, kc_resource_info *ret, kc_error *err)
{
    if (!c || !name || !*name || !ret)
        return kc_error_set(err, KC_EINVAL, "resolve: a resource name is required");
    for (int pass = 0; pass < 2; pass++) {
        pthread_mutex_lock(&c->disc_mu);
        bool have = c->disc != NULL;
        if (have && pass == 0) {
            const kc__dres *r = kc__disc_lookup(c->disc, name);
            int rc = r ? kc__info_copy(&r->info, ret) : 1;
            pthread_mutex_unlock(&c->disc_mu);
            if (rc == 0)
                return 0;
            if (rc < 0)
                return kc_error_set(err, rc, "out of memory");
        } else {
            pthread_mutex_unlock(&c->disc_mu);
        }
        /* fetch (no lock held while on the network), publish, look up */
        kc__disc *d = NULL;
        int rc = kc__disc_fetch(c, &d, err);
        if (rc)
            return rc;
        pthread_mutex_lock(&c->disc_mu);
        kc__disc *old = c->disc;
        c->disc = d;
        const kc__dres *r = kc__disc_lookup(d, name);
        rc = r ? kc__info_copy(&r->info, ret) : 1;
        pthread_mutex_unlock(&c->disc_mu);
        kc__disc_free(old);
        if (rc == 0)
            return 0;
        if (rc < 0)
            return kc_error_set(err, rc, "out of memory");
        break;
    }
    return kc_error_set(err, KC_ENOTFOUND, "the server doesn't have a resource type \"%s\"", name);
}

int kc_client_discovery_invalidate(kc_client *c)
{
    if (!c)
        return KC_EINVAL;
    pthread_mutex_lock(&c->disc_mu);
    kc__disc *old = c->disc;
    c->disc = NULL;
    pthread_mutex_unlock(&c->disc_mu);
    kc__disc_free(old);
    return 0;
}
