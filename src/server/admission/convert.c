/*
 * convert.c — CRD conversion webhooks (spec.conversion.strategy: Webhook) as kube-apiserver's
 * webhook converter calls them: the objects not already at the desired apiVersion (CV6) in one
 * ConversionReview (CV1, CV2: the first of conversionReviewVersions this server knows), POSTed to
 * the CRD's clientConfig (url, or a Service mapped by --webhook-service; path "/" by default; TLS
 * verified against its caBundle) with a 30 s bound (CV9: upstream sets none); the reply checked in
 * upstream's order (CV4: kind, response, uid, result, count, each object's apiVersion, kind,
 * name, namespace and uid); each object rebuilt with its original metadata and only the webhook's
 * labels and annotations (CV5). Failures: `conversion webhook for GROUP/VERSION, Kind=KIND
 * failed: …` as a 500 InternalError (CV8).
 *
 * Design: the CRD's conversion stanza is read under srv->mu into a snapshot; the call runs without
 * the lock, as admission calls do.
 */
#include "server/admission/admission_internal.h"

#include <stdlib.h>
#include <string.h>

#define KC__CONV_TIMEOUT_S 30

struct kc__conv {
    json_t *conversion; /* the CRD's spec.conversion (owned) */
    char *services;
    char kind[128];
};

int kc__conv_begin(kc_server *srv, const kc__rsrc *r, kc__conv **ret, kc_error *err)
{
    *ret = NULL;
    if (!r->is_crd || !r->crd_name)
        return 0;
    json_t *conv = NULL;
    pthread_mutex_lock(&srv->mu);
    kc__rsrc *crds =
        kc__registry_find(srv, "apiextensions.k8s.io", "v1", "customresourcedefinitions");
    kc__entry *e = crds ? kc__store_find(crds, "", r->crd_name) : NULL;
    json_t *d = e ? kc__doc_from_obj(e->obj) : NULL;
    pthread_mutex_unlock(&srv->mu);
    json_t *c = json_object_get(json_object_get(d, "spec"), "conversion");
    const char *strategy = json_string_value(json_object_get(c, "strategy"));
    if (strategy && !strcmp(strategy, "Webhook"))
        conv = json_incref(c);
    json_decref(d);
    if (!conv)
        return 0;
    kc__conv *cv = calloc(1, sizeof(*cv));
    if (!cv || (srv->webhook_services && !(cv->services = strdup(srv->webhook_services)))) {
        free(cv);
        json_decref(conv);
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    cv->conversion = conv;
    snprintf(cv->kind, sizeof(cv->kind), "%s", r->kind);
    *ret = cv;
    return 0;
}

void kc__conv_end(kc__conv *cv)
{
    if (!cv)
        return;
    json_decref(cv->conversion);
    free(cv->services);
    free(cv);
}

static const char *str_at(const json_t *o, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(o, a), b));
}

/* CV4 step 6–7 and CV5: the converted object at index i checked against its original and given
 * the original's metadata with the webhook's labels and annotations. NULL with *reason. */
static json_t *converted(const json_t *orig, const json_t *got, const char *desired, size_t i,
                         char **reason)
{
    const char *av = json_string_value(json_object_get(got, "apiVersion"));
    const char *kind = json_string_value(json_object_get(got, "kind"));
    const char *okind = json_string_value(json_object_get(orig, "kind"));
    static const char *const same[] = {"name", "namespace", "uid"};
    if (!json_is_object(got) || !av || strcmp(av, desired)) {
        *reason = kc__adm_fmt("invalid converted object at index %zu: expected apiVersion "
                              "\"%s\", got \"%s\"",
                              i, desired, av ? av : "");
        return NULL;
    }
    if (!kind || !okind || strcmp(kind, okind)) {
        *reason = kc__adm_fmt("invalid converted object at index %zu: expected kind \"%s\", got "
                              "\"%s\"",
                              i, okind ? okind : "", kind ? kind : "");
        return NULL;
    }
    for (size_t k = 0; k < 3; k++) {
        const char *a = str_at(orig, "metadata", same[k]), *b = str_at(got, "metadata", same[k]);
        if ((a || b) && (!a || !b || strcmp(a, b))) {
            *reason = kc__adm_fmt("invalid converted object at index %zu: must have the same "
                                  "%s: \"%s\" != \"%s\"",
                                  i, same[k], b ? b : "", a ? a : "");
            return NULL;
        }
    }
    json_t *out = json_deep_copy(got);
    json_t *meta = json_deep_copy(json_object_get(orig, "metadata"));
    const json_t *gm = json_object_get(got, "metadata");
    if (!out || !meta) {
        json_decref(out);
        json_decref(meta);
        return NULL;
    }
    static const char *const keep[] = {"labels", "annotations"};
    for (size_t k = 0; k < 2; k++) {
        json_t *v = json_object_get(gm, keep[k]);
        if (json_is_object(v))
            json_object_set(meta, keep[k], v);
        else
            json_object_del(meta, keep[k]);
    }
    json_object_set_new(out, "metadata", meta);
    return out;
}

/* CV4 steps 1–5: the response's convertedObjects (borrowed from doc), or NULL with *reason. */
static json_t *check_review(json_t *doc, const char *api_version, const char *uid, size_t sent,
                            char **reason)
{
    bool v1 = !strcmp(api_version, "apiextensions.k8s.io/v1");
    const char *av = json_string_value(json_object_get(doc, "apiVersion"));
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    json_t *resp = json_object_get(doc, "response");
    const char *ruid = str_at(doc, "response", "uid");
    const char *status =
        json_string_value(json_object_get(json_object_get(resp, "result"), "status"));
    const char *msg =
        json_string_value(json_object_get(json_object_get(resp, "result"), "message"));
    json_t *objs = json_object_get(resp, "convertedObjects");
    if (v1 && (!av || !kind || strcmp(av, api_version) || strcmp(kind, "ConversionReview")))
        *reason = kc__adm_fmt("expected webhook response of apiextensions.k8s.io/v1, "
                              "Kind=ConversionReview, got %s, Kind=%s",
                              av ? av : "", kind ? kind : "");
    else if (!json_is_object(resp))
        *reason = kc__adm_fmt("no response provided");
    else if (v1 && (!ruid || strcmp(ruid, uid)))
        *reason = kc__adm_fmt("expected response.uid=\"%s\", got \"%s\"", uid, ruid ? ruid : "");
    else if (!status || strcmp(status, "Success"))
        *reason = msg && *msg ? kc__adm_fmt("%s", msg)
                              : kc__adm_fmt("response.result.status was '%s', not 'Success'",
                                            status ? status : "");
    else if (json_array_size(objs) != sent)
        *reason = kc__adm_fmt("returned %zu objects, expected %zu", json_array_size(objs), sent);
    return *reason ? NULL : objs;
}

/* CV1: the ConversionReview version to send, NULL when none is known. */
static const char *review_version(const json_t *wh)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(wh, "conversionReviewVersions"), i, v)
    {
        const char *s = json_string_value(v);
        if (s && !strcmp(s, "v1"))
            return "apiextensions.k8s.io/v1";
        if (s && !strcmp(s, "v1beta1"))
            return "apiextensions.k8s.io/v1beta1";
    }
    return NULL;
}

/* One review of objs (their originals at idx in docs); converted objects replace them. */
static int convert_call(const kc__conv *cv, json_t **docs, const size_t *idx, size_t n,
                        const char *desired, char **reason)
{
    const json_t *wh = json_object_get(cv->conversion, "webhook");
    const char *av = review_version(wh);
    if (!av) {
        *reason = kc__adm_fmt("no supported conversion review versions");
        return -1;
    }
    char connect_to[600], uid[37];
    char *url = kc__adm_target(cv->services, json_object_get(wh, "clientConfig"), 0, connect_to,
                               sizeof(connect_to), reason);
    if (!url)
        return -1;
    kc__adm_uid(uid);
    json_t *objs = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append(objs, docs[idx[i]]);
    json_t *rev =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:o}}", "apiVersion", av, "kind", "ConversionReview",
                  "request", "uid", uid, "desiredAPIVersion", desired, "objects", objs);
    char *body = rev ? json_dumps(rev, JSON_COMPACT) : NULL;
    json_decref(rev);
    kc__adm_buf b = {0};
    int rc = -1;
    if (body && kc__adm_post(json_object_get(wh, "clientConfig"), url, connect_to,
                             KC__CONV_TIMEOUT_S, body, &b, reason) == 0) {
        json_error_t je;
        json_t *doc = json_loadb(b.p ? b.p : "", b.n, 0, &je);
        json_t *got = doc ? check_review(doc, av, uid, n, reason)
                          : (*reason = kc__adm_fmt("json parse error: %s", je.text), NULL);
        json_t **out = got ? calloc(n ? n : 1, sizeof(*out)) : NULL;
        size_t k = 0;
        for (; out && k < n; k++)
            if (!(out[k] = converted(docs[idx[k]], json_array_get(got, k), desired, k, reason)))
                break;
        if (out && k == n) {
            for (k = 0; k < n; k++) {
                json_decref(docs[idx[k]]);
                docs[idx[k]] = out[k];
            }
            rc = 0;
        } else if (out) {
            while (k--)
                json_decref(out[k]);
        }
        free(out);
        json_decref(doc);
    }
    if (rc && !*reason)
        *reason = kc__adm_fmt("out of memory");
    free(body);
    free(b.p);
    free(url);
    return rc;
}

int kc__conv_docs(kc__conv *cv, json_t **docs, size_t n, const char *desired, kc_error *err)
{
    if (!cv || !n)
        return 0;
    size_t *idx = calloc(n, sizeof(*idx)), k = 0;
    if (!idx)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) { /* CV6: only what is not there yet */
        const char *av = json_string_value(json_object_get(docs[i], "apiVersion"));
        if (json_object_size(docs[i]) > 2 && (!av || strcmp(av, desired)))
            idx[k++] = i;
    }
    int rc = 0;
    char *reason = NULL;
    if (k && convert_call(cv, docs, idx, k, desired, &reason) != 0) {
        const char *from = json_string_value(json_object_get(docs[idx[0]], "apiVersion"));
        rc = kc__fail(err, 500, "InternalError",
                      "Internal error occurred: conversion webhook for %s, Kind=%s failed: %s",
                      from ? from : "", cv->kind, reason ? reason : "out of memory");
    }
    free(reason);
    free(idx);
    return rc;
}
