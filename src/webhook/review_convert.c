/*
 * review_convert.c — a ConversionReview (apiextensions.k8s.io/v1, CV2–CV5, CV10): each object of
 * the request converted by the route's handler, the answer in the request's order.
 *
 * The request must carry a non-empty uid, a non-empty desiredAPIVersion and objects (an array of
 * objects; absent or null reads as none): otherwise 400 (CV10). Each object is parsed into its own
 * kc_doc, copied, and the copy handed to the handler with the desired version; afterwards the
 * library sets apiVersion to the desired version itself and checks what the API server checks
 * (CV4 items 6–7): the result is still an object of the original kind with the same
 * metadata.name, metadata.namespace and metadata.uid; labels and annotations, the only metadata
 * the API server keeps from a conversion (CV5), must stay maps of strings. Other metadata changes
 * are passed on (the API server restores those fields from the original). The first failure —
 * the handler's error, a broken check — answers the whole review result {status: "Failure",
 * message} without convertedObjects (CV3; "Failure" is metav1's constant, as controller-runtime
 * writes it); else result {status: "Success"} and every converted object in order. The response
 * echoes the request's apiVersion, kind ConversionReview and uid (CV4 items 1–3).
 */
#include "webhook/review_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Equal JSON at ptr in a and b, both absent counting as equal. */
static bool same_at(const kc_doc *a, const kc_doc *b, const char *ptr)
{
    bool ha = kc_doc_has(a, ptr), hb = kc_doc_has(b, ptr);
    if (!ha || !hb)
        return ha == hb;
    char *x = NULL, *y = NULL;
    bool eq = kc_doc_get_raw(a, ptr, &x, NULL, NULL) == 0 &&
              kc_doc_get_raw(b, ptr, &y, NULL, NULL) == 0 && strcmp(x, y) == 0;
    free(x);
    free(y);
    return eq;
}

/* NULL when the map at ptr (absent or null is fine) holds strings only, else what is wrong. */
static const char *string_map(const kc_doc *d, const char *ptr)
{
    kc_json_type t;
    if (kc_doc_type(d, ptr, &t, NULL) || t == KC_JSON_NULL)
        return NULL;
    if (t != KC_JSON_OBJECT)
        return "is not a map";
    kc_doc_iter *it = NULL;
    if (kc_doc_iter_new(d, ptr, &it, NULL))
        return "cannot be read";
    const char *bad = NULL;
    while (!bad && kc_doc_iter_next(it) == 1)
        if (kc_doc_iter_type(it) != KC_JSON_STRING)
            bad = "holds a value that is not a string";
    kc_doc_iter_free(it);
    return bad;
}

/* What the API server would refuse in the converted object conv of orig, or NULL (CV4, CV5). */
static const char *check_converted(const kc_doc *orig, const kc_doc *conv, char *why, size_t cap)
{
    kc_json_type t;
    if (kc_doc_type(conv, "", &t, NULL) || t != KC_JSON_OBJECT)
        return "the converted value is not an object";
    static const char *const kept[][2] = {{"/kind", "kind"},
                                          {"/metadata/name", "name"},
                                          {"/metadata/namespace", "namespace"},
                                          {"/metadata/uid", "uid"}};
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        if (!same_at(orig, conv, kept[i][0])) {
            snprintf(why, cap, "the conversion changed the %s", kept[i][1]);
            return why;
        }
    }
    const char *bad = string_map(conv, "/metadata/labels");
    if (bad) {
        snprintf(why, cap, "metadata.labels %s", bad);
        return why;
    }
    if ((bad = string_map(conv, "/metadata/annotations"))) {
        snprintf(why, cap, "metadata.annotations %s", bad);
        return why;
    }
    return NULL;
}

/* Convert objects[i] and append it to out's convertedObjects. 0, KC_ENOMEM, or 1 with *fail (new
 * malloc'd message). */
static int convert_one(const kc__wh_route *route, const kc_doc *review, size_t i,
                       const char *desired, kc_doc *out, char **fail)
{
    char p[64], *raw = NULL, why[256];
    snprintf(p, sizeof p, "/request/objects/%zu", i);
    kc_doc *orig = NULL, *conv = NULL;
    kc_error e = KC_ERROR_INIT;
    const char *bad = NULL;
    size_t n = 0;
    int rc = kc_doc_get_raw(review, p, &raw, &n, &e);
    if (rc == 0 && (rc = kc_doc_parse(raw, n, &orig, &e)) == 0)
        rc = kc_doc_copy(orig, &conv, &e);
    free(raw);
    if (rc == 0 && !kc_doc_has(orig, "/kind"))
        bad = "it has no kind";
    if (rc == 0 && !bad && route->convert && (rc = route->convert(route->ud, desired, conv, &e))) {
        snprintf(why, sizeof why, "%s", e.message ? e.message : kc_strerror(rc));
        bad = why;
        rc = 0;
    }
    kc_json_type t = KC_JSON_NULL;
    if (rc == 0 && !bad && kc_doc_type(conv, "", &t, NULL) == 0 && t == KC_JSON_OBJECT &&
        kc_doc_has(conv, "/kind"))
        rc = kc_doc_set_string(conv, "/apiVersion", desired, &e);
    if (rc == 0 && !bad)
        bad = check_converted(orig, conv, why, sizeof why);
    if (rc == 0 && !bad)
        rc = kc_doc_set_doc(out, "/response/convertedObjects/-", conv, &e);
    if (rc && rc != KC_ENOMEM) { /* the object itself cannot be worked on */
        snprintf(why, sizeof why, "%s", e.message ? e.message : kc_strerror(rc));
        bad = why;
        rc = 0;
    }
    if (rc == 0 && bad) {
        const char *name = "";
        kc_doc_get_string(orig, "/metadata/name", &name, NULL, NULL);
        kc__buf b = KC__BUF_INIT(0);
        rc = kc__buf_printf(&b, "converting objects[%zu] (%s) to %s: %s", i, name, desired, bad);
        *fail = rc ? NULL : kc__buf_steal(&b, NULL);
        kc__buf_free(&b);
        rc = !*fail ? KC_ENOMEM : 1;
    }
    kc_doc_free(orig);
    kc_doc_free(conv);
    kc_error_clear(&e);
    return rc;
}

/* The request's uid, desiredAPIVersion and number of objects (each an object). */
static int decode(const kc_doc *review, const char **uid, const char **desired, size_t *n,
                  kc_error *err)
{
    kc_json_type t = KC_JSON_NULL;
    if (kc_doc_type(review, "/request", &t, NULL) || t == KC_JSON_NULL)
        return kc_error_set(err, KC_EBADREQUEST, "request: missing");
    if (t != KC_JSON_OBJECT)
        return kc__wh_bad_type(err, "/request", "an object", t);
    int rc;
    if ((rc = kc__wh_opt_string(review, "/request/uid", uid, err)) ||
        (rc = kc__wh_opt_string(review, "/request/desiredAPIVersion", desired, err)))
        return rc;
    if (!**uid)
        return kc_error_set(err, KC_EBADREQUEST, "request.uid: missing or empty");
    if (!**desired)
        return kc_error_set(err, KC_EBADREQUEST, "request.desiredAPIVersion: missing or empty");
    *n = 0;
    if (kc_doc_type(review, "/request/objects", &t, NULL) || t == KC_JSON_NULL)
        return 0;
    if (t != KC_JSON_ARRAY)
        return kc__wh_bad_type(err, "/request/objects", "an array", t);
    kc_doc_count(review, "/request/objects", n, NULL);
    for (size_t i = 0; i < *n; i++) {
        char p[64];
        snprintf(p, sizeof p, "/request/objects/%zu", i);
        kc_doc_type(review, p, &t, NULL);
        if (t != KC_JSON_OBJECT)
            return kc__wh_bad_type(err, p, "an object", t);
    }
    return 0;
}

int kc__wh_convert(const kc__wh_route *route, const kc_doc *review, const char *api_version,
                   char **ret, size_t *ret_len, kc_error *err)
{
    const char *uid, *desired;
    size_t n;
    int rc = decode(review, &uid, &desired, &n, err);
    if (rc)
        return rc;
    kc_doc *out = NULL;
    char *fail = NULL;
    if ((rc = kc_doc_new(&out, err)) ||
        (rc = kc_doc_set_string(out, "/apiVersion", api_version, err)) ||
        (rc = kc_doc_set_string(out, "/kind", "ConversionReview", err)) ||
        (rc = kc_doc_set_string(out, "/response/uid", uid, err)) ||
        (rc = kc_doc_set_raw(out, "/response/convertedObjects", "[]", 2, err)))
        goto out;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = convert_one(route, review, i, desired, out, &fail);
    if (rc == 1) {
        if ((rc = kc_doc_remove(out, "/response/convertedObjects", err)) == 0 &&
            (rc = kc_doc_set_string(out, "/response/result/status", "Failure", err)) == 0 &&
            (rc = kc_doc_set_string(out, "/response/result/message", fail, err)) == KC_EINVAL)
            rc = kc_doc_set_string(out, "/response/result/message",
                                   "conversion failed (its message is not UTF-8)", err);
    } else if (rc == 0) {
        rc = kc_doc_set_string(out, "/response/result/status", "Success", err);
    }
    if (rc == 0)
        rc = kc_doc_json(out, ret, ret_len, err);
out:
    free(fail);
    kc_doc_free(out);
    return rc == 0 || rc == KC_ENOMEM
               ? rc
               : kc_error_set(err, KC_ENOMEM, "conversion: %s", kc_strerror(rc));
}
