/*
 * chain.c — the admission chain of one write, as kube-apiserver runs it: the mutating webhooks one
 * after the other in configuration-name order, list order inside one (CH2), each seeing the
 * object as the previous left it, its JSON Patch applied and the result defaulted again (CH3, JP4)
 * and compared with the object before (CH4); one reinvocation round for IfNeeded webhooks a later
 * change concerns (CH5); then, on the object the write would store, the validating webhooks in
 * parallel, the first error in configuration order winning (CH6). Outcomes: a denial ends the
 * chain whatever the failurePolicy (CH7, CH8); a call failure is a 500 under Fail and skipped
 * under Ignore (CH9–CH11); a dry run reaching a webhook with side effects is a 400 (CH15); a
 * patch that does not apply, or one on DELETE, is a 500 (CH12, JP3). Warnings go to the reply
 * once each (AR13); audit annotations are read and dropped (the server keeps no audit log).
 */
#include "server/admission/admission_internal.h"

#include "kcache/doc.h"
#include "server/defaults/defaults.h"
#include "server/patch/patch.h"

#include <stdlib.h>
#include <string.h>

#define KC__ADM_MAX_PARALLEL 32 /* validating calls run at once; more run in turn */

/* CH10: a call failure under failurePolicy Fail. */
static int call_failed(const kc__adm_hook *h, const char *reason, kc_error *err)
{
    return kc__fail(err, 500, "InternalError",
                    "Internal error occurred: failed calling webhook "
                    "\"%s\": %s",
                    h->name, reason ? reason : "out of memory");
}

#define KC__ADM_NIL_SIDE_EFFECTS "Webhook SideEffects is nil"

/* CH15: a dry run may only reach webhooks without side effects. 1: refused (err set); 2: no
 * sideEffects at all, a call failure (KC__ADM_NIL_SIDE_EFFECTS). */
static int dry_run_refused(const kc__adm_chain *c, const kc__adm_hook *h, kc_error *err)
{
    if (!c->a.dry_run)
        return 0;
    const char *se = json_string_value(json_object_get(h->def, "sideEffects"));
    if (se && (!strcmp(se, "None") || !strcmp(se, "NoneOnDryRun")))
        return 0;
    if (!se)
        return 2;
    kc__fail(err, 400, "BadRequest", "admission webhook \"%s\" does not support dry run", h->name);
    return 1;
}

/* CH7: a denial as the client sees it. */
static int denied(const kc__adm_hook *h, const json_t *resp, kc_error *err)
{
    const json_t *st = json_object_get(resp, "status");
    const char *msg = json_string_value(json_object_get(st, "message"));
    const char *reason = json_string_value(json_object_get(st, "reason"));
    json_t *code = json_object_get(st, "code");
    int http =
        json_is_integer(code) && json_integer_value(code) >= 400 && json_integer_value(code) < 600
            ? (int)json_integer_value(code)
            : 400;
    int rc;
    if (msg && *msg)
        rc = kc__fail(err, http, reason, "admission webhook \"%s\" denied the request: %s", h->name,
                      msg);
    else if (reason && *reason)
        rc = kc__fail(err, http, reason, "admission webhook \"%s\" denied the request: %s", h->name,
                      reason);
    else
        rc = kc__fail(err, http, reason,
                      "admission webhook \"%s\" denied the request without explanation", h->name);
    const json_t *d = json_object_get(st, "details");
    if (json_is_object(d))
        kc__fail_details(err, json_string_value(json_object_get(d, "name")),
                         json_string_value(json_object_get(d, "group")),
                         json_string_value(json_object_get(d, "kind")));
    return rc;
}

/* AR13: each warning once. */
static void warnings(kc__adm_chain *c, const json_t *resp)
{
    size_t i, j;
    json_t *w;
    json_array_foreach(json_object_get(resp, "warnings"), i, w)
    {
        const char *t = json_string_value(w);
        if (!t || !*t)
            continue;
        for (j = 0; j < c->n_seen && strcmp(c->seen[j], t); j++)
            ;
        if (j < c->n_seen || c->n_seen == KC__ADM_MAX_WARNINGS)
            continue;
        if (!(c->seen[c->n_seen] = strdup(t)))
            continue;
        c->n_seen++;
        if (c->a.warn)
            c->a.warn(c->a.warn_ctx, t);
    }
}

/* JP1–JP4, CH3, CH12: the response's patch applied to *obj. 1 = a call failure (*reason). */
static int apply_patch(kc__adm_chain *c, const kc__adm_hook *h, const json_t *resp, json_t **obj,
                       bool *changed, char **reason, kc_error *err)
{
    const char *p64 = json_string_value(json_object_get(resp, "patch"));
    if (!p64 || !*p64)
        return 0;
    if (!*obj)
        return kc__fail(err, 500, "InternalError",
                        "Internal error occurred: admission webhook \"%s\" attempted to modify "
                        "the object, which is not supported for this operation",
                        h->name);
    unsigned char *patch = NULL;
    size_t len = 0;
    kc_error perr = {0};
    json_t *nu = NULL;
    int rc = kc_base64_decode(p64, strlen(p64), &patch, &len, &perr);
    json_error_t je;
    json_t *ops = rc ? NULL : json_loadb((const char *)patch, len, 0, &je);
    if (!json_is_array(ops)) {
        *reason = NULL;
        if (asprintf(reason, "received undecodable patch in webhook response: %s",
                     rc ? (perr.message ? perr.message : "bad base64") : je.text) < 0)
            *reason = NULL;
        json_decref(ops);
        free(patch);
        kc_error_clear(&perr);
        return 1;
    }
    json_decref(ops);
    const kc__rsrc *r = c->a.r;
    rc = kc__patch_apply(KC__PATCH_JSON, *obj, (const char *)patch, len,
                         c->kind ? c->kind : r->kind, !r->is_crd, &nu, &perr);
    free(patch);
    if (rc) {
        rc = kc__fail(err, 500, "InternalError", "Internal error occurred: %s",
                      perr.message ? perr.message : "the patch does not apply");
        kc_error_clear(&perr);
        return rc;
    }
    if (!r->is_crd && !c->kind && json_is_object(nu))
        kc__defaults_apply(r->group, r->kind, nu); /* CH3: decoded and defaulted again */
    *changed = !json_equal(nu, *obj);
    json_decref(*obj);
    *obj = nu;
    return 0;
}

/* One mutating webhook on *obj; *changed when its patch changed the object. */
static int mutate_one(kc__adm_chain *c, const kc__adm_hook *h, json_t **obj, bool *changed,
                      kc_error *err)
{
    *changed = false;
    int dr = dry_run_refused(c, h, err);
    if (dr == 1)
        return err->code;
    json_t *resp = NULL;
    char *reason = dr == 2 ? strdup(KC__ADM_NIL_SIDE_EFFECTS) : NULL;
    int rc = 0;
    bool failed = dr == 2 || kc__adm_call(c, h, *obj, &resp, &reason) != 0;
    if (!failed) {
        warnings(c, resp);
        if (!json_is_true(json_object_get(resp, "allowed")))
            rc = denied(h, resp, err);
        else if ((rc = apply_patch(c, h, resp, obj, changed, &reason, err)) == 1)
            failed = true;
    }
    if (failed) { /* a call failure: failurePolicy */
        rc = h->ignore ? 0 : call_failed(h, reason, err);
        if (h->ignore)
            c->failed_open++;
    }
    free(reason);
    json_decref(resp);
    return rc;
}

int kc__adm_mutate(kc__adm_chain *c, json_t **inout, kc_error *err)
{
    if (!c || !c->n_mut)
        return 0;
    bool *prev = calloc(c->n_mut * 2, sizeof(bool));
    if (!prev)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    bool *reinvoke = prev + c->n_mut;
    bool any = false;
    int rc = 0;
    for (int round = 0; round < 2 && rc == 0 && (round == 0 || any); round++) {
        for (size_t i = 0; i < c->n_mut && rc == 0; i++) {
            const kc__adm_hook *h = &c->mut[i];
            bool m = false, changed = false;
            if (round == 1 && !reinvoke[i]) /* CH5: only those a later change concerns */
                continue;
            if ((rc = kc__adm_match(c, h, *inout, &m, err)) != 0 || !m)
                continue;
            if ((rc = mutate_one(c, h, inout, &changed, err)) != 0)
                break;
            if (changed) { /* every IfNeeded webhook called before this change runs again */
                for (size_t j = 0; j < c->n_mut; j++)
                    if (prev[j]) {
                        reinvoke[j] = true;
                        prev[j] = false;
                    }
                any = true;
            }
            if (h->reinvoke)
                prev[i] = true; /* after the marking: never re-run by its own change */
        }
    }
    free(prev);
    return rc;
}

typedef struct val_call {
    const kc__adm_chain *c;
    const kc__adm_hook *h;
    const json_t *obj;
    json_t *resp;
    char *reason;
    int failed;
    pthread_t th;
    bool threaded;
} val_call;

static void *val_run(void *arg)
{
    val_call *v = arg;
    v->failed = kc__adm_call(v->c, v->h, v->obj, &v->resp, &v->reason) != 0;
    return NULL;
}

/* The outcome of one validating call, in configuration order (CH6). */
static int val_outcome(kc__adm_chain *c, val_call *v, kc_error *err)
{
    if (v->failed) {
        if (v->h->ignore) {
            c->failed_open++;
            return 0;
        }
        return call_failed(v->h, v->reason, err);
    }
    warnings(c, v->resp);
    if (!json_is_true(json_object_get(v->resp, "allowed")))
        return denied(v->h, v->resp, err);
    return 0;
}

int kc__adm_validate(kc__adm_chain *c, const json_t *obj, kc_error *err)
{
    if (!c || !c->n_val)
        return 0;
    val_call *vs = calloc(c->n_val, sizeof(*vs));
    if (!vs)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; i < c->n_val && rc == 0; i++) {
        bool m = false;
        if ((rc = kc__adm_match(c, &c->val[i], obj, &m, err)) != 0 || !m)
            continue;
        int dr = dry_run_refused(c, &c->val[i], err); /* CH15, before any call */
        if (dr == 1)
            rc = err->code;
        vs[n++] = (val_call){.c = c, .h = &c->val[i], .obj = obj, .failed = dr == 2};
        if (dr == 2)
            vs[n - 1].reason = strdup(KC__ADM_NIL_SIDE_EFFECTS);
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (vs[i].failed) /* decided without a call */
            continue;
        if (n > 1 && i < KC__ADM_MAX_PARALLEL &&
            pthread_create(&vs[i].th, NULL, val_run, &vs[i]) == 0)
            vs[i].threaded = true;
        else
            val_run(&vs[i]);
    }
    for (size_t i = 0; i < n; i++) {
        if (vs[i].threaded)
            pthread_join(vs[i].th, NULL);
        if (rc == 0 && (vs[i].resp || vs[i].failed))
            rc = val_outcome(c, &vs[i], err);
        json_decref(vs[i].resp);
        free(vs[i].reason);
    }
    free(vs);
    return rc;
}
