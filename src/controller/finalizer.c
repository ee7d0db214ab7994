/*
 * controller/finalizer.c — the controller's finalizer registry: kube-runtime's finalizer() helper
 * (Event::Apply / Event::Cleanup) in front of the reconcile.
 *
 * run.c calls kc__ctrl_finalize instead of the reconcile when a finalizer is registered. Per key,
 * with the primary object read from the cache (read-your-writes: this controller's own finalizer
 * patch is in the next read):
 *
 *   object                                  action
 *   absent                                  reconcile (the key's own logic handles "gone")
 *   not deleting, matching, finalizer absent add it (JSON patch with a resourceVersion test,
 *                                           kc_cached_client_add_finalizer), then reconcile
 *   not deleting, matching, finalizer there reconcile
 *   deleting, finalizer there               cleanup; DONE → remove it (the server deletes the
 *                                           object when it was the last); else its result, kept
 *   not matching, finalizer there           cleanup; DONE → remove it, then reconcile (the object
 *                                           left the finalizer's label selector: released)
 *   not matching, finalizer absent          reconcile
 *   deleting, finalizer absent              nothing: DONE without calling reconcile or cleanup
 *
 * "Matching" is kc_finalizer_opts.label_selector (none: every object matches).
 * Writes carry the request's fence (kc_reconcile_request.fence). A failed add or remove becomes
 * KC_RECONCILE_ERROR: the key is retried with the queue's rate-limited backoff, as a failed
 * cleanup. The registry is immutable after start; it is read by the workers without a lock.
 */
#include "controller/internal.h"

#include "kcache/finalizer.h"
#include "kcache/selector.h"

#include <stdlib.h>
#include <string.h>

struct kc__ctrl_finalizer {
    char *name;
    kc_finalizer_cleanup_fn cleanup;
    void *ud;
    kc_label_selector *sel; /* NULL = every object */
};

/* The registry entry of o (validated); NULL with err set on failure. */
static kc__ctrl_finalizer *fin_new(const kc_controller *ctrl, const kc_finalizer_opts *o,
                                   kc_error *err)
{
    const char *bad = kc__check_qualified_name(o->finalizer, strlen(o->finalizer));
    if (bad) {
        kc_error_set(err, KC_EINVAL, "controller %s: finalizer \"%s\": %s", ctrl->name,
                     o->finalizer, bad);
        return NULL;
    }
    kc_label_selector *sel = NULL;
    if (o->label_selector && *o->label_selector &&
        kc_label_selector_parse(o->label_selector, &sel, err) < 0)
        return NULL;
    kc__ctrl_finalizer *f = calloc(1, sizeof(*f));
    char *name = kc__strdup(o->finalizer);
    if (!f || !name) {
        free(f);
        free(name);
        kc_label_selector_free(sel);
        kc_error_set(err, KC_ENOMEM, "controller: out of memory");
        return NULL;
    }
    f->name = name;
    f->cleanup = o->cleanup;
    f->ud = o->ud;
    f->sel = sel;
    return f;
}

int(kc_controller_add_finalizer)(kc_controller *ctrl, const kc_finalizer_opts *opts,
                                 size_t opts_size, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_finalizer_opts, err);
    if (!ctrl || !opts->finalizer || !opts->cleanup)
        return kc_error_set(err, KC_EINVAL,
                            "controller: add_finalizer needs a controller, a name and a cleanup");
    pthread_mutex_lock(&ctrl->mu);
    int rc = 0;
    if (ctrl->state != KC__CTRL_NEW)
        rc = kc_error_set(err, KC_EBUSY, "controller %s: add_finalizer after start", ctrl->name);
    else if (ctrl->fin)
        rc = kc_error_set(err, KC_EEXISTS, "controller %s: finalizer \"%s\" is registered already",
                          ctrl->name, ctrl->fin->name);
    else if (!(ctrl->fin = fin_new(ctrl, opts, err)))
        rc = err && err->code ? err->code : KC_ENOMEM;
    pthread_mutex_unlock(&ctrl->mu);
    return rc;
}

void kc__ctrl_finalizer_free(kc__ctrl_finalizer *f)
{
    if (!f)
        return;
    free(f->name);
    kc_label_selector_free(f->sel);
    free(f);
}

static kc_reconcile_result fin_error(const kc_controller *c, const char *what,
                                     const kc_reconcile_request *req, int rc, const kc_error *e)
{
    KC__LOG_WARN("controller", "controller %s: %s finalizer %s of %s: %s", c->name, what,
                 c->fin->name, req->key, e->message ? e->message : kc_strerror(rc));
    kc_reconcile_result r = {.code = KC_RECONCILE_ERROR};
    return r;
}

kc_reconcile_result kc__ctrl_finalize(kc_controller *c, const kc_reconcile_request *req)
{
    const kc__ctrl_source *p = c->sources[0];
    kc_gvr gvr = {p->group, p->version, p->resource};
    kc_cached_call_opts call = {.fence = req->fence};
    kc_error e = KC_ERROR_INIT;
    kc_obj *obj = NULL;
    kc_reconcile_result r = {.code = KC_RECONCILE_DONE};
    int rc = kc_cached_client_get(c->cc, &gvr, req->ns, req->name, &call, &obj, &e);
    if (rc == KC_ENOTFOUND) {
        kc_error_clear(&e);
        return c->reconcile(c->ud, req, c->cc);
    }
    if (rc < 0) {
        r = fin_error(c, "reading the object for", req, rc, &e);
        kc_error_clear(&e);
        return r;
    }
    bool has = kc_obj_has_finalizer(obj, c->fin->name);
    bool deleting = kc_obj_deleting(obj);
    bool wanted = !deleting && kc_label_selector_match(c->fin->sel, obj);
    if (wanted || (!deleting && !has)) { /* Event::Apply (or an object the finalizer is not for) */
        if (wanted && !has)
            rc = kc_cached_client_add_finalizer(c->cc, &gvr, req->ns, req->name, c->fin->name,
                                                &call, NULL, &e);
        kc_obj_unref(obj);
        if (rc < 0 && rc != KC_ENOT_CAUGHT_UP) { /* not caught up: added all the same */
            r = fin_error(c, "adding", req, rc, &e);
            kc_error_clear(&e);
            return r;
        }
        kc_error_clear(&e);
        return c->reconcile(c->ud, req, c->cc);
    }
    if (has) { /* Event::Cleanup: being deleted, or no longer matching */
        r = c->fin->cleanup(c->fin->ud, req, obj, c->cc);
        if (r.code == KC_RECONCILE_DONE) {
            rc = kc_cached_client_remove_finalizer(c->cc, &gvr, req->ns, req->name, c->fin->name,
                                                   &call, NULL, &e);
            if (rc < 0 && rc != KC_ENOT_CAUGHT_UP)
                r = fin_error(c, "removing", req, rc, &e);
            else if (!deleting) /* released: the object lives on, reconcile it as any other */
                r = c->reconcile(c->ud, req, c->cc);
        }
    }
    kc_error_clear(&e);
    kc_obj_unref(obj);
    return r;
}
