/*
 * review.c — kc__wh_review: one POST body in, one answer out (webhook/internal.h states the
 * contract; the transport calls it on a worker thread).
 *
 * Order: the Content-Type must name application/json (parameters such as charset allowed: 415
 * otherwise; SV2), the body must be one JSON object (parsed once into a kc_doc, bounded only by
 * nesting: the transport bounded its size), its apiVersion and kind must be those of the route's
 * review — admission.k8s.io/v1 or v1beta1 AdmissionReview (AR1, AR15: both are answered, in the
 * request's version), apiextensions.k8s.io/v1 or v1beta1 ConversionReview (CV2, CV4) — and its
 * request must decode (review_decode.c, review_convert.c). Anything malformed is answered 400 with
 * a plain-text reason naming the field and never reaches a handler (SV5 answers such requests
 * inside a 200 review; we answer 400 because a request without a uid cannot be answered as a
 * review the API server accepts, AR9, and the body says why).
 *
 * Admission: for a route that reads the cache (route->cache_wait) the request waits for the
 * server's readiness at most route->ready_wait_ms (kc__wh_wait_ready; srv NULL counts as ready);
 * still not ready, it is answered by the route's not-ready policy (RD4) without calling the
 * handler: denied with a 503 ServiceUnavailable Status, or allowed with a warning. Otherwise the
 * handler runs with the decoded request and a response that starts allowed; a negative return is
 * a denial with Status 500 InternalError carrying the code's text. Conversion never waits (RD4,
 * CV10).
 */
#include "webhook/review_internal.h"

#include "json/doc_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char CT_JSON[] = "application/json";
static const char CT_TEXT[] = "text/plain; charset=utf-8";

/* true when the header value names application/json, parameters allowed ("; charset=utf-8"). */
static bool is_json(const char *ct)
{
    if (!ct)
        return false;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t n = sizeof CT_JSON - 1;
    if (strncasecmp(ct, CT_JSON, n) != 0)
        return false;
    for (ct += n; *ct == ' ' || *ct == '\t'; ct++)
        ;
    return *ct == '\0' || *ct == ';';
}

/* A plain-text answer (status, the reason and a newline). */
static int plain(int code, const char *text, int *status, char **resp, size_t *resp_len,
                 const char **ctype)
{
    kc__buf b = KC__BUF_INIT(0);
    if (kc__buf_printf(&b, "%s\n", text ? text : "malformed review") ||
        !(*resp = kc__buf_steal(&b, resp_len))) {
        kc__buf_free(&b);
        *status = 500;
        *ctype = CT_TEXT;
        return KC_ENOMEM;
    }
    *status = code;
    *ctype = CT_TEXT;
    return 0;
}

/* The body as a document whose root is an object, the slow way: jansson's parser (its errors
 * name line, column and byte). KC_EBADREQUEST naming what is wrong. */
static int load_jansson(const char *body, size_t len, kc_doc **ret, kc_error *err)
{
    json_t *v = NULL;
    int rc = kc__doc_load(body, len, KC__DOC_MAX_DEPTH, "review body", &v, err);
    if (rc == KC_ENOMEM)
        return rc;
    if (rc) { /* KC_EPARSE (line, column, byte named), KC_ETOOLARGE (nesting) */
        char msg[256];
        snprintf(msg, sizeof msg, "%s", err && err->message ? err->message : kc_strerror(rc));
        return kc_error_set(err, KC_EBADREQUEST, "%s", msg);
    }
    if (!json_is_object(v)) {
        kc_json_type t = kc__doc_jtype(v);
        json_decref(v);
        return kc_error_set(err, KC_EBADREQUEST, "review body: expected a JSON object, got %s",
                            kc_json_type_name(t));
    }
    return kc__doc_wrap(v, ret, err);
}

/*
 * An admission review's document without the trees of request.object and request.oldObject: the
 * parsed text with each (when an object) replaced by {}, walked (small now) into the
 * document. The decoder needs only their presence and type from the document — the kc_obj are
 * made from obj's slices, and a mutating route's "from" document from the request's kc_obj
 * (managedFields already cut) — so building ~2/3 of a typical review's nodes only to free them is
 * saved. 0, or non-zero when there is nothing to leave out or it failed (the caller then builds
 * the whole document).
 */
static int load_lean(const kc_obj *obj, kc_doc **ret)
{
    static const char *const ptrs[] = {"/request/object", "/request/oldObject"};
    const char *s[2];
    size_t n[2], k = 0, tlen;
    const char *text = kc_obj_json(obj, &tlen);
    for (size_t i = 0; i < 2; i++)
        if (kc_obj_get_raw(obj, ptrs[i], &s[k], &n[k], NULL) == 0 && n[k] > 2 && s[k][0] == '{')
            k++;
    if (k == 0)
        return 1;
    if (k == 2 && s[1] < s[0]) {
        const char *t = s[0];
        size_t m = n[0];
        s[0] = s[1], n[0] = n[1], s[1] = t, n[1] = m;
    }
    kc__buf b = KC__BUF_INIT(0);
    const char *at = text;
    int rc = 0;
    for (size_t i = 0; i < k && rc == 0; i++) {
        rc = kc__buf_append(&b, at, (size_t)(s[i] - at)) || kc__buf_append(&b, "{}", 2);
        at = s[i] + n[i];
    }
    if (rc == 0)
        rc = kc__buf_append(&b, at, (size_t)(text + tlen - at));
    if (rc == 0) /* obj's text, validated, with two objects replaced by {} */
        rc = kc__doc_from_text(b.data, b.len, ret, NULL);
    kc__buf_free(&b);
    return rc ? KC_ENOMEM : 0;
}

/*
 * The body as a document, and (when the fast path took it) as a kc_obj: simdjson validates the
 * whole text (KC_DECODE_STRICT: the RFC 8259 grammar, nesting up to 512 as kc__doc_load) and the
 * document's tree is built from that walk — about 4 × less CPU than jansson's parser on a 3 KB
 * review (docs/BENCHMARKS.md, bench_webhook); for an admission route without the objects' trees
 * (load_lean). A body the fast path refuses goes the slow way, which either accepts it (what
 * kc_obj_parse refuses beyond JSON: a root "metadata" of another shape) or words the 400 as
 * before.
 */
static int load(const char *body, size_t len, bool lean, kc_doc **ret, kc_obj **ret_obj,
                kc_error *err)
{
    kc_decode_opts o = {.flags = KC_DECODE_STRICT | KC_DECODE_KEEP_MANAGED_FIELDS,
                        .max_object_size = len > KC_DEFAULT_MAX_OBJECT_SIZE ? len : 0};
    kc_obj *obj = NULL;
    int rc = kc_obj_parse(body, len, &o, &obj, NULL);
    if (rc == 0 && lean && load_lean(obj, ret) == 0) {
        *ret_obj = obj;
        return 0;
    }
    if (rc == 0 && (rc = kc__doc_from_obj_with(obj, KC__DOC_BUILD_SIMDJSON, ret, NULL)) == 0) {
        *ret_obj = obj;
        return 0;
    }
    kc_obj_unref(obj);
    if (rc == KC_ENOMEM)
        return kc_error_set(err, rc, "review body: out of memory");
    return load_jansson(body, len, ret, err);
}

/* apiVersion and kind of the review, checked against the route's kind; *ret_av borrowed. */
static int check_gvk(const kc__wh_route *route, const kc_doc *review, const char **ret_av,
                     kc_error *err)
{
    const char *av, *kind;
    int rc;
    if ((rc = kc__wh_opt_string(review, "/apiVersion", &av, err)) ||
        (rc = kc__wh_opt_string(review, "/kind", &kind, err)))
        return rc;
    bool conv = route->kind == KC__WH_CONVERSION;
    const char *group = conv ? "apiextensions.k8s.io/" : "admission.k8s.io/";
    const char *want = conv ? "ConversionReview" : "AdmissionReview";
    size_t g = strlen(group);
    if (strncmp(av, group, g) != 0 || (strcmp(av + g, "v1") != 0 && strcmp(av + g, "v1beta1")))
        return kc_error_set(err, KC_EBADREQUEST, "apiVersion: \"%.64s\" is not %sv1 (or %sv1beta1)",
                            av, group, group);
    if (strcmp(kind, want) != 0)
        return kc_error_set(err, KC_EBADREQUEST, "kind: \"%.64s\" is not %s", kind, want);
    *ret_av = av;
    return 0;
}

/* The answer when the cache is not ready (RD4), into r. */
static int not_ready(const kc__wh_route *route, kc_admission_response *r)
{
    char msg[160];
    snprintf(msg, sizeof msg,
             "the webhook's cache has not synced (waited %lld ms); the request cannot be "
             "checked yet",
             (long long)route->ready_wait_ms);
    if (route->not_ready_policy == KC_WEBHOOK_NOT_READY_ALLOW)
        return kc_admission_response_warn(r, "webhook cache not synced: allowed unchecked");
    return kc_admission_response_deny(r, 503, "ServiceUnavailable", msg);
}

/* The handler, with r->from's tree lent to kc_doc_from_obj(req->object) on this thread: the
 * handler's document shares it (copy-on-write) instead of parsing the object again, and the diff
 * against r->from skips every subtree the handler left alone (same node) — the mutating path's
 * largest costs after decoding (docs/BENCHMARKS.md, bench_webhook). */
static int call_admit(const kc__wh_route *route, const kc_admission_request *req,
                      kc_admission_response *r)
{
    if (r->from)
        kc__doc_set_template(req->object, r->from->root);
    int rc = route->admit(route->ud, req, r);
    kc__doc_set_template(NULL, NULL);
    return rc;
}

static int admit(kc_webhook_server *srv, const kc__wh_route *route, const kc_doc *review,
                 const kc_obj *review_obj, const char *av, char **ret, size_t *ret_len,
                 kc_error *err)
{
    kc__wh_admission a;
    int rc = kc__wh_admission_decode(review, review_obj, &a, err);
    if (rc) {
        kc__wh_admission_fini(&a);
        return rc;
    }
    kc_admission_response r;
    kc__wh_response_init(&r, route->kind, a.req.object);
    if (route->kind == KC__WH_MUTATING && review_obj && a.req.object)
        kc_doc_from_obj(a.req.object, &r.from, NULL); /* NULL on out of memory: set_object
                                                       * builds its own */
    bool ready = !srv || !route->cache_wait || kc__wh_wait_ready(srv, route->ready_wait_ms);
    if (!ready) {
        rc = not_ready(route, &r);
    } else if (!route->admit || (rc = call_admit(route, &a.req, &r)) < 0) {
        int code = route->admit ? rc : KC_EINVAL;
        free(r.patch);
        r.patch = NULL;
        rc = kc_admission_response_deny(&r, 500, "InternalError", kc_strerror(code));
    } else {
        rc = 0;
    }
    if (rc == 0)
        rc = kc__wh_response_encode(&r, av, a.req.uid, ret, ret_len, err);
    kc__wh_response_fini(&r);
    kc__wh_admission_fini(&a);
    return rc == KC_ENOMEM || rc == 0
               ? rc
               : kc_error_set(err, KC_ENOMEM, "encoding: %s", kc_strerror(rc));
}

int kc__wh_review(kc_webhook_server *srv, const kc__wh_route *route, const char *content_type,
                  const char *body, size_t len, int *status, char **resp, size_t *resp_len,
                  const char **ctype)
{
    *resp = NULL;
    *resp_len = 0;
    if (route->kind == KC__WH_RAW) { /* benches only: the transport's floor */
        int rc = route->raw(route->ud, body, len, resp, resp_len);
        *status = rc ? 500 : 200;
        *ctype = rc ? CT_TEXT : CT_JSON;
        return rc;
    }
    if (!is_json(content_type)) {
        char msg[200];
        snprintf(msg, sizeof msg, "unsupported Content-Type \"%.100s\": send application/json",
                 content_type ? content_type : "");
        return plain(415, msg, status, resp, resp_len, ctype);
    }
    kc_error err = KC_ERROR_INIT;
    kc_doc *review = NULL;
    kc_obj *review_obj = NULL;
    const char *av = NULL;
    int rc = load(body, len, route->kind != KC__WH_CONVERSION, &review, &review_obj, &err);
    if (rc == 0 && (rc = check_gvk(route, review, &av, &err)) == 0) {
        rc = route->kind == KC__WH_CONVERSION
                 ? kc__wh_convert(route, review, av, resp, resp_len, &err)
                 : admit(srv, route, review, review_obj, av, resp, resp_len, &err);
    }
    kc_doc_free(review);
    kc_obj_unref(review_obj);
    if (rc == 0) {
        *status = 200;
        *ctype = CT_JSON;
    } else if (rc == KC_EBADREQUEST) {
        rc = plain(400, err.message, status, resp, resp_len, ctype);
    } else {
        free(*resp);
        *resp = NULL;
        *resp_len = 0;
        *status = 500;
        *ctype = CT_TEXT;
        rc = KC_ENOMEM;
    }
    kc_error_clear(&err);
    return rc;
}
