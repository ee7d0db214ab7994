/*
 * webhook/review_internal.h — shared by the review files (review.c: the entry point and admission
 * flow; review_decode.c: AdmissionReview request → kc_admission_request; review_response.c: the
 * kc_admission_response_* calls and the AdmissionReview response; review_convert.c: the
 * ConversionReview). Decoding errors are KC_EBADREQUEST with err's message naming the field (the
 * 400 answer's text); KC_ENOMEM otherwise.
 */
#ifndef KC_WEBHOOK_REVIEW_INTERNAL_H
#define KC_WEBHOOK_REVIEW_INTERNAL_H

#include "core/internal.h"
#include "webhook/internal.h"

/* The handler's answer being built (one per request, on the worker's stack). */
struct kc_admission_response {
    kc__wh_kind kind;
    kc_obj *object; /* the request's object (borrowed), NULL when absent */
    kc_doc *from;   /* object as a document, built from the review's tree (owned); NULL = none */
    bool allowed;
    int code;
    char *reason, *message;
    char **warnings;
    size_t n_warnings;
    char **ann; /* key, value, key, value, … */
    size_t n_ann;
    char *patch; /* JSON Patch array text, NULL when none */
    size_t patch_len;
};

/* A decoded AdmissionReview request: req's strings are borrowed from the review document (which
 * must outlive it) or static; the rest is owned here. */
typedef struct kc__wh_admission {
    kc_admission_request req;
    const char **groups;
    char *options_json, *user_info_json;
} kc__wh_admission;

/* review_decode.c: decode review's request (the document's apiVersion and kind already checked).
 * review_obj (may be NULL) is the same review parsed as a kc_obj: object and oldObject are then
 * taken from its text. KC_EBADREQUEST naming the field, KC_ENOMEM. a is cleared first; fini it in
 * every case. */
int kc__wh_admission_decode(const kc_doc *review, const kc_obj *review_obj, kc__wh_admission *a,
                            kc_error *err);
void kc__wh_admission_fini(kc__wh_admission *a);

/* A string member at ptr of doc: "" when absent or null; KC_EBADREQUEST when of another type or
 * holding a NUL. *ret borrowed from doc. */
int kc__wh_opt_string(const kc_doc *doc, const char *ptr, const char **ret, kc_error *err);
/* KC_EBADREQUEST "<field>: expected <want>, got <type>" (the field is ptr with '.' for '/'). */
int kc__wh_bad_type(kc_error *err, const char *ptr, const char *want, kc_json_type got);

/* review_response.c */
void kc__wh_response_init(kc_admission_response *r, kc__wh_kind kind, kc_obj *object);
void kc__wh_response_fini(kc_admission_response *r);
/* The AdmissionReview answer for uid, apiVersion api_version: new malloc'd JSON. KC_ENOMEM. */
int kc__wh_response_encode(const kc_admission_response *r, const char *api_version, const char *uid,
                           char **ret, size_t *ret_len, kc_error *err);

/* review_convert.c: answer a ConversionReview (review's apiVersion and kind checked). *ret is
 * the 200 body. KC_EBADREQUEST (malformed request: err names the field), KC_ENOMEM. */
int kc__wh_convert(const kc__wh_route *route, const kc_doc *review, const char *api_version,
                   char **ret, size_t *ret_len, kc_error *err);

#endif
