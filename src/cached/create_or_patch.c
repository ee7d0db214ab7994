/*
 * cached/create_or_patch.c — kc_cached_client_create_or_patch (controllerutil.CreateOrPatch).
 *
 * The read, the mutate, the name check, the create and the retries are create_or_update.c's. An
 * existing object that mutate changed is written as up to two JSON merge patches (RFC 7386, from
 * kc_doc_merge_diff), as controller-runtime does:
 *   1. everything but /status: the diff of the two documents with /status removed from both, plus
 *      metadata.resourceVersion = the RV read. The server applies the patch and then checks that
 *      RV like an update's (409 when anyone wrote since), so the patch — computed from the state
 *      read — never lands on another one: no lost update;
 *   2. when /status changed: the diff restricted to /status, sent to the status subresource
 *      (kc_patch_opts.subresource "status") with the RV the first patch returned (or the one read).
 * A 409 retries the whole attempt from a live read; what earlier attempts wrote is kept in the
 * result (a first patch that went through followed by a conflicting status patch: the retry's
 * mutate finds the rest unchanged, patches the status, and the result is KC_OP_UPDATED_STATUS).
 * Result: main only → UPDATED, both → UPDATED_STATUS, status only → UPDATED_STATUS_ONLY.
 */
#include "cached/internal.h"

#include <stdlib.h>
#include <string.h>

/* A copy of d without /status. */
static int without_status(const kc_doc *d, kc_doc **ret, kc_error *err)
{
    int rc = kc_doc_copy(d, ret, err);
    if (rc == 0 && kc_doc_has(*ret, "/status"))
        rc = kc_doc_remove(*ret, "/status", err);
    if (rc < 0) {
        kc_doc_free(*ret);
        *ret = NULL;
    }
    return rc;
}

/* Send the merge patch text (a JSON object; "{}" = nothing to send: 1) with metadata.
 * resourceVersion = rv, to the object or its status subresource. */
static int send_patch(kc__mutate_run *m, const char *patch, const char *rv, bool status,
                      kc_obj **ret_obj, kc_error *err)
{
    if (!strcmp(patch, "{}"))
        return 1;
    kc_doc *p = NULL;
    char *json = NULL;
    size_t len = 0;
    int rc = kc_doc_parse(patch, strlen(patch), &p, err);
    if (rc == 0)
        rc = kc__mutate_json_at_rv(p, rv, &json, &len, err);
    kc_doc_free(p);
    if (rc < 0)
        return rc;
    kc_patch_opts po = {.subresource = status ? "status" : NULL};
    rc = (kc_cached_client_patch)(m->cc, m->gvr, m->ns, m->name, KC_PATCH_MERGE, json, len, &po,
                                  sizeof po, m->call, sizeof(*m->call), ret_obj, err);
    free(json);
    return rc;
}

typedef struct cop_state {
    bool wrote_main, wrote_status, sent;
    int late_rc; /* KC_ENOT_CAUGHT_UP / KC_ESTOPPED of a write that succeeded */
    kc_obj *obj; /* the last object written or read */
} cop_state;

static void keep(cop_state *s, kc_obj *obj)
{
    if (!obj)
        return;
    kc_obj_unref(s->obj);
    s->obj = obj;
}

/* The two patches of one attempt on cur, given the documents before and after mutate. */
static int patch_both(kc__mutate_run *m, const kc_obj *cur, const kc_doc *before,
                      const kc_doc *after, cop_state *s, kc_error *err)
{
    kc_doc *b2 = NULL, *a2 = NULL;
    char *main_p = NULL, *status_p = NULL;
    int rc = without_status(before, &b2, err);
    if (rc == 0)
        rc = without_status(after, &a2, err);
    if (rc == 0)
        rc = kc_doc_merge_diff(b2, a2, NULL, &main_p, NULL, err);
    if (rc == 0)
        rc = kc_doc_merge_diff(before, after, "/status", &status_p, NULL, err);
    kc_doc_free(b2);
    kc_doc_free(a2);
    const char *rv = kc_obj_resource_version(cur);
    kc_obj *o = NULL;
    s->sent = rc == 0;
    if (rc == 0 && (rc = send_patch(m, main_p, rv, false, &o, err)) != 1 && kc__write_done(rc)) {
        s->wrote_main = true;
        s->late_rc = rc ? rc : s->late_rc;
        keep(s, o);
        rv = s->obj ? kc_obj_resource_version(s->obj) : rv;
        rc = 0;
    }
    if (rc == 1)
        rc = 0;
    o = NULL;
    if (rc == 0 && (rc = send_patch(m, status_p, rv, true, &o, err)) != 1 && kc__write_done(rc)) {
        s->wrote_status = true;
        s->late_rc = rc ? rc : s->late_rc;
        keep(s, o);
        rc = 0;
    }
    if (rc == 1)
        rc = 0;
    free(main_p);
    free(status_p);
    return rc;
}

/* One attempt on cur (NULL: absent); *created when it created the object. */
static int cop_attempt(kc__mutate_run *m, kc_obj *cur, cop_state *s, bool *created, kc_error *err)
{
    kc_doc *before = NULL, *after = NULL;
    s->sent = false;
    int rc = kc__mutate_apply(m, cur, &before, &after, err);
    if (rc != 0)
        return rc;
    if (!cur) {
        kc_obj *o = NULL;
        s->sent = true;
        rc = kc__mutate_create(m, after, &o, err);
        *created = kc__write_done(rc);
        keep(s, o);
    } else if (kc_doc_equal(before, after)) {
        keep(s, kc_obj_ref(cur));
    } else {
        rc = patch_both(m, cur, before, after, s, err);
    }
    kc_doc_free(before);
    kc_doc_free(after);
    return rc;
}

static kc_op_result cop_result(const cop_state *s, bool created)
{
    if (created)
        return KC_OP_CREATED;
    if (s->wrote_status)
        return s->wrote_main ? KC_OP_UPDATED_STATUS : KC_OP_UPDATED_STATUS_ONLY;
    return s->wrote_main ? KC_OP_UPDATED : KC_OP_UNCHANGED;
}

int(kc_cached_client_create_or_patch)(kc_cached_client *cc, const kc_gvr *gvr, const char *kind,
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
    cop_state s = {0};
    bool created = false;
    for (int attempt = 0;; attempt++) {
        if (attempt > 0)
            kc__mutate_backoff(&m);
        kc_obj *cur = NULL;
        rc = kc__mutate_read(&m, attempt > 0, &cur, err);
        if (rc == 0)
            rc = cop_attempt(&m, cur, &s, &created, err);
        kc_obj_unref(cur);
        bool retry = s.sent && (rc == KC_ECONFLICT || (rc == KC_EEXISTS && !cur));
        if (retry && attempt < m.max_retries) {
            kc_error_clear(err);
            continue;
        }
        break;
    }
    if (rc == 0 && s.late_rc)
        rc = s.late_rc;
    if (kc__write_done(rc) && ret_result)
        *ret_result = cop_result(&s, created);
    if (kc__write_done(rc) && ret_obj)
        *ret_obj = s.obj;
    else
        kc_obj_unref(s.obj);
    return rc;
}
