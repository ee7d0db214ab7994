/*
 * convert.c — the verbs' side of CRD conversion webhooks (admission/convert.c): objects read in a
 * version other than the one they are stored at are converted through the CRD's webhook (GET,
 * LIST: one review for every item not at the request's version, CV6, CV7), and a create or
 * update sent in a version other than the storage version is converted to it before the write
 * and its reply back to the request's version (CV7). Custom resources whose CRD does not say
 * `strategy: Webhook` are untouched (one registry lookup per request of a custom resource).
 */
#include "server/api/api_internal.h"

#include <stdlib.h>
#include <string.h>

int kc__convert_objs(kc__req *req, kc__rsrc *r, kc_obj **items, size_t n)
{
    char desired[256];
    kc__rsrc_api_version(r, req->route.version, desired, sizeof(desired));
    size_t to_convert = 0;
    for (size_t i = 0; r->is_crd && i < n; i++)
        if (items[i] && strcmp(kc_obj_api_version(items[i]) ?: "", desired))
            to_convert++;
    if (!to_convert)
        return 0;
    kc__conv *cv = NULL;
    int rc = kc__conv_begin(req->srv, r, &cv, &req->err);
    if (rc || !cv)
        return rc;
    rc = kc__convert_objs_with(req, r, cv, desired, items, n);
    kc__conv_end(cv);
    return rc;
}

int kc__convert_objs_with(kc__req *req, kc__rsrc *r, kc__conv *cv, const char *desired,
                          kc_obj **items, size_t n)
{
    (void)r;
    int rc = 0;
    json_t **docs = calloc(n, sizeof(*docs)), **orig = calloc(n, sizeof(*orig));
    for (size_t i = 0; docs && orig && i < n; i++)
        orig[i] = docs[i] = kc__doc_from_obj(items[i]);
    if (!docs || !orig)
        rc = kc_error_set(&req->err, KC_ENOMEM, "out of memory");
    else
        rc = kc__conv_docs(cv, docs, n, desired, &req->err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (docs[i] == orig[i])
            continue;
        char *text = json_dumps(docs[i], JSON_COMPACT);
        kc_obj *o = NULL;
        if (!text || kc_obj_parse(text, strlen(text), &req->srv->dopts, &o, &req->err) != 0)
            rc = req->err.code ? req->err.code : kc_error_set(&req->err, KC_ENOMEM, "no memory");
        free(text);
        if (o) {
            kc_obj_unref(items[i]);
            items[i] = o;
        }
    }
    for (size_t i = 0; docs && i < n; i++) /* kc__conv_docs released the originals it replaced */
        json_decref(docs[i]);
    free(docs);
    free(orig);
    return rc;
}

int kc__convert_in(kc__req *req, kc__rsrc *r, json_t **doc, bool *converted)
{
    *converted = false;
    if (!r->is_crd || !strcmp(req->route.version, r->versions[0]))
        return 0;
    kc__conv *cv = NULL;
    int rc = kc__conv_begin(req->srv, r, &cv, &req->err);
    if (rc || !cv)
        return rc;
    char storage[256];
    kc__rsrc_api_version(r, r->versions[0], storage, sizeof(storage));
    if (!json_object_get(*doc, "apiVersion")) {
        char av[256];
        kc__rsrc_api_version(r, req->route.version, av, sizeof(av));
        json_object_set_new(*doc, "apiVersion", json_string(av));
    }
    if (!json_object_get(*doc, "kind"))
        json_object_set_new(*doc, "kind", json_string(r->kind));
    json_t *before = *doc;
    rc = kc__conv_docs(cv, doc, 1, storage, &req->err);
    *converted = rc == 0 && *doc != before;
    kc__conv_end(cv);
    return rc;
}
