/*
 * cached/create_or_update.c — kc_cached_client_create_or_update (controllerutil.CreateOrUpdate)
 * and the steps it shares with create_or_patch.c.
 *
 * One attempt: read the object — from the cache on the first attempt (this client's own earlier
 * writes are in it: read-your-writes), live from the server on a retry —; build the document
 * (a copy of the object, or the skeleton {"apiVersion","kind","metadata":{"name","namespace"}});
 * run mutate; refuse a changed name or namespace (controller-runtime: "MutateFn cannot mutate
 * object name and/or object namespace"); then
 *   - absent: create (a racing creator's AlreadyExists retries: the next read finds its object);
 *   - kc_doc_equal to the copy: nothing is written (KC_OP_UNCHANGED, no resourceVersion bump);
 *   - changed: PUT with metadata.resourceVersion set to the one read. The server refuses it with
 *     409 when anyone wrote since: no lost update. The retry reads live, so it starts from the
 *     state that won (a cached read could still show the one that lost, and would only conflict
 *     again).
 * Only the server's 409 (and AlreadyExists) retries: mutate's own codes, KC_ECONFLICT included,
 * end the call. Backoff between attempts: client-go's retry.DefaultRetry by default (5 retries,
 * 10 ms, factor 1, 10% jitter; kc_mutate_opts). All writes go through this client's own create /
 * update, so block-on-write holds: the returned object is in the cache.
 */
#include "cached/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MUTATE_RETRIES    5
#define MUTATE_BACKOFF_MS 10

const char *kc_op_result_name(kc_op_result r)
{
    switch (r) {
    case KC_OP_UNCHANGED:
        return "unchanged";
    case KC_OP_CREATED:
        return "created";
    case KC_OP_UPDATED:
        return "updated";
    case KC_OP_UPDATED_STATUS:
        return "updatedStatus";
    case KC_OP_UPDATED_STATUS_ONLY:
        return "updatedStatusOnly";
    }
    return "?";
}

int kc__mutate_init(kc__mutate_run *m, kc_cached_client *cc, const kc_gvr *gvr, const char *kind,
                    const char *ns, const char *name, kc_mutate_fn mutate, void *ud,
                    const kc_mutate_opts *o, const kc_cached_call_opts *call, kc_error *err)
{
    if (!cc || !gvr || !gvr->version || !*gvr->version || !gvr->resource || !*gvr->resource ||
        !name || !*name || !mutate)
        return kc_error_set(err, KC_EINVAL,
                            "cached client: create-or-update needs a gvr, a name and a mutate");
    if (!kind || !*kind)
        return kc_error_set(err, KC_EINVAL,
                            "cached client: create-or-update of %s \"%s\" needs the kind",
                            gvr->resource, name);
    memset(m, 0, sizeof(*m));
    m->cc = cc;
    m->gvr = gvr;
    m->kind = kind;
    m->ns = ns ? ns : "";
    m->name = name;
    m->mutate = mutate;
    m->ud = ud;
    m->call = call;
    m->max_retries = o->max_retries == 0 ? MUTATE_RETRIES : o->max_retries < 0 ? 0 : o->max_retries;
    m->delay_ns = (uint64_t)(o->backoff_ms > 0 ? o->backoff_ms : MUTATE_BACKOFF_MS) * KC__NS_PER_MS;
    m->factor_pct = o->backoff_factor_pct ? o->backoff_factor_pct : 100;
    kc__rng_seed_auto(&m->rng);
    return 0;
}

void kc__mutate_backoff(kc__mutate_run *m)
{
    kc__sleep_ns(m->delay_ns + kc__rng_range(&m->rng, 0, m->delay_ns / 10 + 1));
    uint64_t next = m->delay_ns / 100 * m->factor_pct;
    m->delay_ns = next < 60000 * KC__NS_PER_MS ? next : 60000 * KC__NS_PER_MS;
}

int kc__mutate_read(kc__mutate_run *m, bool live, kc_obj **ret, kc_error *err)
{
    kc_cached_call_opts c = *m->call;
    c.live = c.live || live;
    *ret = NULL;
    int rc = (kc_cached_client_get)(m->cc, m->gvr, m->ns, m->name, &c, sizeof c, ret, err);
    if (rc == KC_ENOTFOUND) {
        kc_error_clear(err);
        *ret = NULL;
        return 0;
    }
    return rc;
}

/* {"apiVersion":…,"kind":…,"metadata":{"name":…[,"namespace":…]}} */
static int skeleton(const kc__mutate_run *m, kc_doc **ret, kc_error *err)
{
    char av[300];
    const char *g = m->gvr->group && *m->gvr->group ? m->gvr->group : NULL;
    int n = g ? snprintf(av, sizeof av, "%s/%s", g, m->gvr->version)
              : snprintf(av, sizeof av, "%s", m->gvr->version);
    if (n < 0 || (size_t)n >= sizeof av)
        return kc_error_set(err, KC_EINVAL, "cached client: group/version too long");
    kc_doc *d = NULL;
    int rc = kc_doc_new(&d, err);
    if (rc == 0)
        rc = kc_doc_set_string(d, "/apiVersion", av, err);
    if (rc == 0)
        rc = kc_doc_set_string(d, "/kind", m->kind, err);
    if (rc == 0)
        rc = kc_doc_set_string(d, "/metadata/name", m->name, err);
    if (rc == 0 && *m->ns)
        rc = kc_doc_set_string(d, "/metadata/namespace", m->ns, err);
    if (rc < 0) {
        kc_doc_free(d);
        return rc;
    }
    *ret = d;
    return 0;
}

/* The string at ptr of d, "" when absent or not a string. */
static const char *doc_str(const kc_doc *d, const char *ptr)
{
    const char *s = NULL;
    return kc_doc_get_string(d, ptr, &s, NULL, NULL) == 0 ? s : "";
}

int kc__mutate_apply(kc__mutate_run *m, const kc_obj *existing, kc_doc **ret_before,
                     kc_doc **ret_after, kc_error *err)
{
    kc_doc *before = NULL, *after = NULL;
    int rc = existing ? kc_doc_from_obj(existing, &before, err) : skeleton(m, &before, err);
    if (rc == 0)
        rc = kc_doc_copy(before, &after, err);
    if (rc == 0) {
        rc = m->mutate(m->ud, after, existing);
        if (rc != 0 && (!err || err->code == 0))
            kc_error_set(err, rc, "cached client: mutate of %s \"%s\" failed (%d)",
                         m->gvr->resource, m->name, rc);
    }
    if (rc == 0 && (strcmp(doc_str(after, "/metadata/name"), m->name) != 0 ||
                    strcmp(doc_str(after, "/metadata/namespace"), m->ns) != 0))
        rc = kc_error_set(err, KC_EINVAL,
                          "cached client: mutate cannot change the name or namespace of %s "
                          "\"%s\" (MutateFn cannot mutate object name and/or object namespace)",
                          m->gvr->resource, m->name);
    if (rc != 0) {
        kc_doc_free(before);
        kc_doc_free(after);
        return rc;
    }
    *ret_before = before;
    *ret_after = after;
    return 0;
}

int kc__mutate_create(kc__mutate_run *m, const kc_doc *doc, kc_obj **ret_obj, kc_error *err)
{
    char *json = NULL;
    size_t len = 0;
    int rc = kc_doc_json(doc, &json, &len, err);
    if (rc < 0)
        return rc;
    rc = (kc_cached_client_create)(m->cc, m->gvr, m->ns, json, len, NULL, 0, m->call,
                                   sizeof(*m->call), ret_obj, err);
    free(json);
    return rc;
}

int kc__mutate_json_at_rv(kc_doc *doc, const char *rv, char **ret, size_t *ret_len, kc_error *err)
{
    int rc = kc_doc_set_string(doc, "/metadata/resourceVersion", rv, err);
    return rc < 0 ? rc : kc_doc_json(doc, ret, ret_len, err);
}

/* One attempt on the object cur (NULL: absent). */
static int cou_attempt(kc__mutate_run *m, kc_obj *cur, kc_op_result *ret_result, kc_obj **ret_obj,
                       bool *ret_sent, kc_error *err)
{
    kc_doc *before = NULL, *after = NULL;
    int rc = kc__mutate_apply(m, cur, &before, &after, err);
    if (rc != 0)
        return rc;
    *ret_sent = !(cur && kc_doc_equal(before, after)); /* codes from here on are the server's */
    if (!cur) {
        rc = kc__mutate_create(m, after, ret_obj, err);
        *ret_result = KC_OP_CREATED;
    } else if (kc_doc_equal(before, after)) {
        *ret_obj = kc_obj_ref(cur);
        *ret_result = KC_OP_UNCHANGED;
    } else {
        char *json = NULL;
        size_t len = 0;
        rc = kc__mutate_json_at_rv(after, kc_obj_resource_version(cur), &json, &len, err);
        if (rc == 0)
            rc = (kc_cached_client_update)(m->cc, m->gvr, m->ns, json, len, NULL, 0, m->call,
                                           sizeof(*m->call), ret_obj, err);
        free(json);
        *ret_result = KC_OP_UPDATED;
    }
    kc_doc_free(before);
    kc_doc_free(after);
    return rc;
}

int(kc_cached_client_create_or_update)(kc_cached_client *cc, const kc_gvr *gvr, const char *kind,
                                       const char *ns, const char *name, kc_mutate_fn mutate,
                                       void *ud, const kc_mutate_opts *opts, size_t opts_size,
                                       const kc_cached_call_opts *call, size_t call_size,
                                       kc_op_result *ret_result, kc_obj **ret_obj, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_mutate_opts, err);
    KC__OPTS_TAKE(call, kc_cached_call_opts, err);
    kc__mutate_run m;
    int rc = kc__mutate_init(&m, cc, gvr, kind, ns, name, mutate, ud, opts, call, err);
    if (rc < 0)
        return rc;
    for (int attempt = 0;; attempt++) {
        if (attempt > 0)
            kc__mutate_backoff(&m);
        kc_obj *cur = NULL, *obj = NULL;
        kc_op_result res = KC_OP_UNCHANGED;
        bool sent = false;
        rc = kc__mutate_read(&m, attempt > 0, &cur, err);
        if (rc == 0)
            rc = cou_attempt(&m, cur, &res, &obj, &sent, err);
        kc_obj_unref(cur);
        /* the server's 409 (a stale resourceVersion) or a racing creator: read again, retry */
        bool retry = sent && (rc == KC_ECONFLICT || (rc == KC_EEXISTS && res == KC_OP_CREATED));
        if (retry && attempt < m.max_retries) {
            kc_error_clear(err);
            continue;
        }
        if (kc__write_done(rc) && ret_result)
            *ret_result = res;
        if (kc__write_done(rc) && ret_obj)
            *ret_obj = obj;
        else
            kc_obj_unref(obj);
        return rc;
    }
}
