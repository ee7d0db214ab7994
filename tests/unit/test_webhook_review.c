/*
 * test_webhook_review — kc__wh_review without a transport (srv NULL counts as ready): the
 * AdmissionReview decoding (every field), malformed requests (400 naming the field, the handler
 * never called), the response encoding field by field, deny defaults, warnings, audit
 * annotations, the mutating patch, the readiness policies (a fake srv and the definition of
 * kc__wh_wait_ready below), and ConversionReviews. Rule ids: the admission spec (AR, CV, RD, SV).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "webhook/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The transport's readiness wait, as these tests want it (server.c is not linked here). */
static bool g_ready = true;
static int g_waits;
static int64_t g_wait_ms;
bool kc__wh_wait_ready(kc_webhook_server *srv, int64_t timeout_ms)
{
    (void)srv;
    g_waits++;
    g_wait_ms = timeout_ms;
    return g_ready;
}

static int g_calls;
static kc_admission_request g_seen; /* copied strings are not kept: checked inside the handler */
static char g_user_groups[256];
static char g_summary[1024];
static char g_obj_name[64], g_old_name[64], g_options[256], g_user_info[256];
static int (*g_then)(kc_admission_response *resp, const kc_admission_request *req);

static int admit(void *ud, const kc_admission_request *req, kc_admission_response *resp)
{
    (void)ud;
    g_calls++;
    g_seen = *req;
    snprintf(g_summary, sizeof g_summary,
             "%s|%s|%s/%s/%s|%s/%s/%s|%s|%s/%s/%s|%s/%s/%s|%s|%s|%s|%s|%s|%s", req->api_version,
             req->uid, req->kind.group, req->kind.version, req->kind.kind, req->resource.group,
             req->resource.version, req->resource.resource, req->sub_resource,
             req->request_kind.group, req->request_kind.version, req->request_kind.kind,
             req->request_resource.group, req->request_resource.version,
             req->request_resource.resource, req->request_sub_resource, req->operation, req->ns,
             req->name, req->user, req->user_uid);
    g_user_groups[0] = '\0';
    for (size_t i = 0; i < req->n_groups; i++) {
        strcat(g_user_groups, req->groups[i]);
        strcat(g_user_groups, ",");
    }
    snprintf(g_obj_name, sizeof g_obj_name, "%s", req->object ? kc_obj_name(req->object) : "-");
    snprintf(g_old_name, sizeof g_old_name, "%s",
             req->old_object ? kc_obj_name(req->old_object) : "-");
    snprintf(g_options, sizeof g_options, "%s", req->options_json);
    snprintf(g_user_info, sizeof g_user_info, "%s", req->user_info_json);
    return g_then ? g_then(resp, req) : 0;
}

static kc__wh_route route_of(kc__wh_kind kind)
{
    kc__wh_route r = {0};
    r.path = "/x";
    r.name = "/x";
    r.kind = kind;
    r.admit = admit;
    r.ready_wait_ms = 1234;
    return r;
}

typedef struct answer {
    int rc, status;
    char *body;
    size_t len;
    const char *ctype;
    kc_doc *doc; /* the body parsed, when 200 */
} answer;

static answer call_ct(kc_webhook_server *srv, const kc__wh_route *r, const char *ct,
                      const char *body)
{
    answer a = {0};
    a.rc = kc__wh_review(srv, r, ct, body, strlen(body), &a.status, &a.body, &a.len, &a.ctype);
    if (a.status == 200) {
        kc_error err = KC_ERROR_INIT;
        if (kc_doc_parse(a.body, a.len, &a.doc, &err))
            fail_msg("200 body not JSON: %s", a.body);
    }
    return a;
}

static answer call(const kc__wh_route *r, const char *body)
{
    return call_ct(NULL, r, "application/json", body);
}

static void answer_free(answer *a)
{
    free(a->body);
    kc_doc_free(a->doc);
}

static const char *str(const answer *a, const char *ptr)
{
    const char *s = NULL;
    if (kc_doc_get_string(a->doc, ptr, &s, NULL, NULL))
        return NULL;
    return s;
}

static bool boolean(const answer *a, const char *ptr)
{
    bool b = false;
    assert_int_equal(kc_doc_get_bool(a->doc, ptr, &b, NULL), 0);
    return b;
}

#define REVIEW(req)                                                                                \
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":" req "}"

static const char FULL[] = REVIEW(
    "{\"uid\":\"u-1\",\"kind\":{\"group\":\"apps\",\"version\":\"v1\",\"kind\":\"Deployment\"},"
    "\"resource\":{\"group\":\"apps\",\"version\":\"v1\",\"resource\":\"deployments\"},"
    "\"subResource\":\"scale\",\"requestKind\":{\"group\":\"apps\",\"version\":\"v1beta2\","
    "\"kind\":\"Deployment\"},\"requestResource\":{\"group\":\"apps\",\"version\":\"v1beta2\","
    "\"resource\":\"deployments\"},\"requestSubResource\":\"status\",\"name\":\"web\","
    "\"namespace\":\"prod\",\"operation\":\"UPDATE\",\"userInfo\":{\"username\":\"alice\","
    "\"uid\":\"a-1\",\"groups\":[\"dev\",\"system:authenticated\"],\"extra\":{\"k\":[\"v\"]}},"
    "\"object\":{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":"
    "\"web\",\"labels\":{\"a\":\"1\"}},\"spec\":{\"replicas\":2}},\"oldObject\":{\"apiVersion\":"
    "\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web-old\"}},\"dryRun\":true,"
    "\"options\":{\"apiVersion\":\"meta.k8s.io/v1\",\"kind\":\"UpdateOptions\"}}");

/* AR1–AR8: every field of the request reaches the handler. */
static void test_webhook_review_decode_every_field(void **state)
{
    (void)state;
    kc__wh_route r = route_of(KC__WH_VALIDATING);
    g_calls = 0;
    g_then = NULL;
    answer a = call(&r, FULL);
    assert_int_equal(a.rc, 0);
    assert_int_equal(a.status, 200);
    assert_int_equal(g_calls, 1);
    assert_string_equal(g_summary, "admission.k8s.io/v1|u-1|apps/v1/Deployment|apps/v1/deployments|"
                                   "scale|apps/v1beta2/Deployment|apps/v1beta2/deployments|status|"
                                   "UPDATE|prod|web|alice|a-1");
    assert_int_equal(g_seen.n_groups, 2);
    assert_string_equal(g_user_groups, "dev,system:authenticated,");
    assert_true(g_seen.dry_run);
    assert_string_equal(g_obj_name, "web");
    assert_string_equal(g_old_name, "web-old");
    assert_string_equal(g_options,
                        "{\"apiVersion\":\"meta.k8s.io/v1\",\"kind\":\"UpdateOptions\"}");
    assert_non_null(strstr(g_user_info, "\"extra\":{\"k\":[\"v\"]}"));
    /* AR9: the answer echoes apiVersion, kind and uid; allowed, nothing else. */
    assert_string_equal(a.ctype, "application/json");
    assert_string_equal(a.body, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
                                "\"AdmissionReview\",\"response\":{\"uid\":\"u-1\","
                                "\"allowed\":true}}");
    answer_free(&a);
}

/* AR5, AR6, AR7: absent fields read as empty; DELETE without object; CONNECT options without
 * metadata; v1beta1 is answered in v1beta1 (AR15). */
static void test_webhook_review_decode_sparse(void **state)
{
    (void)state;
    kc__wh_route r = route_of(KC__WH_VALIDATING);
    g_then = NULL;
    answer a = call(&r, REVIEW("{\"uid\":\"d\",\"operation\":\"DELETE\",\"object\":null,"
                               "\"oldObject\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}}"));
    assert_int_equal(a.status, 200);
    assert_string_equal(g_obj_name, "-");
    assert_string_equal(g_old_name, "p");
    assert_string_equal(g_summary, "admission.k8s.io/v1|d|//|//||//|//||DELETE||||");
    assert_int_equal(g_seen.n_groups, 0);
    assert_null(g_seen.groups);
    assert_false(g_seen.dry_run);
    assert_string_equal(g_options, "");
    assert_string_equal(g_user_info, "");
    answer_free(&a);
    a = call(&r, REVIEW("{\"uid\":\"c\",\"operation\":\"CONNECT\",\"object\":{\"kind\":"
                        "\"PodExecOptions\",\"apiVersion\":\"v1\",\"command\":[\"sh\"]},"
                        "\"options\":null,\"userInfo\":{\"groups\":null}}"));
    assert_int_equal(a.status, 200);
    assert_string_equal(g_obj_name, "");
    assert_string_equal(g_old_name, "-");
    answer_free(&a);
    a = call(&r, "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\","
                 "\"request\":{\"uid\":\"b\",\"operation\":\"CREATE\"}}");
    assert_int_equal(a.status, 200);
    assert_string_equal(str(&a, "/apiVersion"), "admission.k8s.io/v1beta1");
    assert_string_equal(str(&a, "/response/uid"), "b");
    answer_free(&a);
}

/* Each malformed request: 400 whose text names what is wrong; the handler is never called. */
static void test_webhook_review_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *body, *word;
    } cases[] = {
        {"", "invalid JSON"},
        {"{\"apiVersion\":", "invalid JSON"},
        {"[1]", "expected a JSON object, got array"},
        {"{\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\"}}", "apiVersion"},
        {"{\"apiVersion\":\"admission.k8s.io/v2\",\"kind\":\"AdmissionReview\"}", "apiVersion"},
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"ConversionReview\"}", "kind"},
        {"{\"apiVersion\":7,\"kind\":\"AdmissionReview\"}", "apiVersion: expected a string"},
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}", "request"},
        {REVIEW("[]"), "request: expected an object"},
        {REVIEW("{\"operation\":\"CREATE\"}"), "request.uid"},
        {REVIEW("{\"uid\":\"\",\"operation\":\"CREATE\"}"), "request.uid"},
        {REVIEW("{\"uid\":5,\"operation\":\"CREATE\"}"), "request.uid: expected a string"},
        {REVIEW("{\"uid\":\"u\\u0000v\",\"operation\":\"CREATE\"}"), "NUL"},
        {REVIEW("{\"uid\":\"u\"}"), "request.operation"},
        {REVIEW("{\"uid\":\"u\",\"operation\":\"PATCH\"}"), "request.operation"},
        {REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"kind\":\"Pod\"}"), "request.kind"},
        {REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"kind\":{\"version\":1}}"),
         "request.kind.version"},
        {REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"dryRun\":\"yes\"}"), "request.dryRun"},
        {REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"object\":[1]}"), "request.object"},
        {REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"oldObject\":\"x\"}"),
         "request.oldObject"},
        {REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"object\":{\"metadata\":{\"name\":3}}}"),
         "request.object"},
        {REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"userInfo\":{\"groups\":[\"a\",2]}}"),
         "request.userInfo.groups[1]"},
        {REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"userInfo\":{\"groups\":\"a\"}}"),
         "request.userInfo.groups"},
        {REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"userInfo\":{\"username\":[]}}"),
         "request.userInfo.username"},
        {REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"options\":true}"), "request.options"},
        {REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"namespace\":{}}"), "request.namespace"},
    };
    kc__wh_route r = route_of(KC__WH_MUTATING);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        g_calls = 0;
        answer a = call(&r, cases[i].body);
        if (a.status != 400 || !strstr(a.body, cases[i].word))
            fail_msg("case %zu (%s): %d %s", i, cases[i].body, a.status, a.body);
        assert_int_equal(a.rc, 0);
        assert_string_equal(a.ctype, "text/plain; charset=utf-8");
        assert_int_equal(g_calls, 0);
        answer_free(&a);
    }
}

/* SV2: application/json with parameters only; anything else 415. */
static void test_webhook_review_content_type(void **state)
{
    (void)state;
    kc__wh_route r = route_of(KC__WH_VALIDATING);
    const char *body = REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\"}");
    const char *ok[] = {"application/json", "application/json; charset=utf-8",
                        "Application/JSON;charset=UTF-8"};
    const char *bad[] = {NULL, "", "text/plain", "application/jsonx", "application/yaml"};
    for (size_t i = 0; i < 3; i++) {
        answer a = call_ct(NULL, &r, ok[i], body);
        assert_int_equal(a.status, 200);
        answer_free(&a);
    }
    for (size_t i = 0; i < 5; i++) {
        g_calls = 0;
        answer a = call_ct(NULL, &r, bad[i], body);
        assert_int_equal(a.status, 415);
        assert_non_null(strstr(a.body, "application/json"));
        assert_int_equal(g_calls, 0);
        answer_free(&a);
    }
}

static int deny_default(kc_admission_response *resp, const kc_admission_request *req)
{
    (void)req;
    assert_int_equal(kc_admission_response_warn(resp, "first"), 0);
    assert_int_equal(kc_admission_response_warn(resp, "second"), 0);
    assert_int_equal(kc_admission_response_annotate(resp, "policy", "strict"), 0);
    assert_int_equal(kc_admission_response_annotate(resp, "policy", "lax"), 0); /* replaced */
    assert_int_equal(kc_admission_response_annotate(resp, "a.b-c_d", "x"), 0);
    assert_int_equal(kc_admission_response_annotate(resp, "example.com/x", "v"), KC_EINVAL);
    assert_int_equal(kc_admission_response_annotate(resp, "-bad", "v"), KC_EINVAL);
    assert_int_equal(kc_admission_response_annotate(resp, "", "v"), KC_EINVAL);
    assert_int_equal(kc_admission_response_warn(resp, ""), KC_EINVAL);
    assert_int_equal(kc_admission_response_deny(resp, 200, NULL, "x"), KC_EINVAL);
    /* A validating handler may not patch (AR12). */
    kc_doc *d = NULL;
    assert_int_equal(kc_doc_new(&d, NULL), 0);
    assert_int_equal(kc_admission_response_set_object(resp, d), KC_EINVAL);
    assert_int_equal(kc_admission_response_set_patch(resp, "[]", 2), KC_EINVAL);
    kc_doc_free(d);
    return kc_admission_response_deny(resp, 0, NULL, "no");
}

static int deny_codes(kc_admission_response *resp, const kc_admission_request *req)
{
    if (strcmp(req->name, "422") == 0)
        return kc_admission_response_deny(resp, 422, NULL, NULL);
    if (strcmp(req->name, "own") == 0)
        return kc_admission_response_deny(resp, 409, "AlreadyExists", "dup");
    if (strcmp(req->name, "odd") == 0)
        return kc_admission_response_deny(resp, 418, NULL, "tea");
    return KC_ETIMEOUT;
}

/* AR10, SV6: deny defaults (403 Forbidden), Status fields, warnings (AR13), annotations (AR14). */
static void test_webhook_review_deny_encoding(void **state)
{
    (void)state;
    kc__wh_route r = route_of(KC__WH_VALIDATING);
    g_then = deny_default;
    answer a = call(&r, REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"object\":{}}"));
    assert_int_equal(a.status, 200);
    assert_string_equal(
        a.body, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                "\"response\":{\"uid\":\"u\",\"allowed\":false,\"status\":{\"metadata\":{},"
                "\"status\":\"Failure\",\"code\":403,\"reason\":\"Forbidden\",\"message\":\"no\"},"
                "\"warnings\":[\"first\",\"second\"],\"auditAnnotations\":{\"policy\":\"lax\","
                "\"a.b-c_d\":\"x\"}}}");
    answer_free(&a);
    g_then = deny_codes;
    static const struct {
        const char *name, *reason, *message;
        int code;
    } cases[] = {{"422", "Invalid", NULL, 422},
                 {"own", "AlreadyExists", "dup", 409},
                 {"odd", NULL, "tea", 418},
                 {"fail", "InternalError", "timed out", 500}}; /* a negative return */
    for (size_t i = 0; i < 4; i++) {
        char body[256];
        snprintf(body, sizeof body,
                 REVIEW("{\"uid\":\"u%zu\",\"operation\":\"CREATE\",\"name\":\"%s\"}"), i,
                 cases[i].name);
        a = call(&r, body);
        assert_false(boolean(&a, "/response/allowed"));
        int64_t code = 0;
        assert_int_equal(kc_doc_get_int(a.doc, "/response/status/code", &code, NULL), 0);
        assert_int_equal(code, cases[i].code);
        assert_string_equal(str(&a, "/response/status/status"), "Failure");
        assert_true(kc_doc_has(a.doc, "/response/status/metadata"));
        if (cases[i].reason)
            assert_string_equal(str(&a, "/response/status/reason"), cases[i].reason);
        else
            assert_false(kc_doc_has(a.doc, "/response/status/reason"));
        if (cases[i].message)
            assert_string_equal(str(&a, "/response/status/message"), cases[i].message);
        else
            assert_false(kc_doc_has(a.doc, "/response/status/message"));
        assert_false(kc_doc_has(a.doc, "/response/patch"));
        answer_free(&a);
    }
    g_then = NULL;
}

static int warn_long(kc_admission_response *resp, const kc_admission_request *req)
{
    (void)req;
    char w[400];
    memset(w, 'x', 100);
    strcpy(w + 100, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"); /* 25 é */
    assert_int_equal(kc_admission_response_warn(resp, w), 0);
    assert_int_equal(kc_admission_response_warn(resp, "bad \xff"), KC_EINVAL);
    return 0;
}

/* AR13: a warning is cut after 120 characters (not bytes, never inside one). */
static void test_webhook_review_warning_cut(void **state)
{
    (void)state;
    kc__wh_route r = route_of(KC__WH_VALIDATING);
    g_then = warn_long;
    answer a = call(&r, REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\"}"));
    const char *w = str(&a, "/response/warnings/0");
    assert_non_null(w);
    assert_int_equal(strlen(w), 100 + 20 * 2);
    assert_true(boolean(&a, "/response/allowed"));
    answer_free(&a);
    g_then = NULL;
}

static int mutate(kc_admission_response *resp, const kc_admission_request *req)
{
    kc_doc *d = NULL;
    assert_int_equal(kc_doc_from_obj(req->object, &d, NULL), 0);
    assert_int_equal(kc_doc_set_string(d, "/metadata/annotations/example.com~1x", "1", NULL), 0);
    assert_int_equal(kc_doc_remove(d, "/spec/replicas", NULL), 0);
    int rc = kc_admission_response_set_object(resp, d);
    kc_doc_free(d);
    return rc;
}

static int mutate_nothing(kc_admission_response *resp, const kc_admission_request *req)
{
    kc_doc *d = NULL;
    assert_int_equal(kc_doc_from_obj(req->object, &d, NULL), 0);
    int rc = kc_admission_response_set_object(resp, d);
    kc_doc_free(d);
    return rc;
}

/* The answer's patch is mutate()'s: the annotation added, spec.replicas removed. */
static void assert_mutate_patch(answer *a)
{
    const char *b64 = str(a, "/response/patch");
    unsigned char *p = NULL;
    size_t n = 0;
    assert_int_equal(kc_base64_decode(b64, strlen(b64), &p, &n, NULL), 0);
    assert_string_equal(
        (char *)p, "[{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":"
                   "{\"example.com/x\":\"1\"}},{\"op\":\"remove\",\"path\":\"/spec/replicas\"}]");
    free(p);
}

/* AR11, JP2, JP6: the patch is base64 of the JSONPatch from the request's object. */
static void test_webhook_review_mutating_patch(void **state)
{
    (void)state;
    kc__wh_route r = route_of(KC__WH_MUTATING);
    g_then = mutate;
    answer a = call(&r, FULL);
    assert_true(boolean(&a, "/response/allowed"));
    assert_string_equal(str(&a, "/response/patchType"), "JSONPatch");
    assert_mutate_patch(&a);
    answer_free(&a);
    /* No change: no patch and no patchType (AR11). */
    g_then = mutate_nothing;
    a = call(&r, FULL);
    assert_false(kc_doc_has(a.doc, "/response/patch"));
    assert_false(kc_doc_has(a.doc, "/response/patchType"));
    answer_free(&a);
    g_then = NULL;
}

/* The patch's "from" is built from the review's own tree when the fast parse took the body
 * (review.c: object_doc): it must equal kc_doc_from_obj(req.object) — managedFields cut, numbers
 * alike — or an unchanged object would get a patch (AR11, JP2). */
static void test_webhook_review_mutating_from_review_tree(void **state)
{
    (void)state;
    static const char body[] =
        REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"object\":{\"apiVersion\":\"apps/v1\","
               "\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\",\"managedFields\":[{"
               "\"manager\":\"kubectl\",\"fieldsV1\":{\"f:spec\":{}}}]},\"spec\":{\"replicas\":2,"
               "\"f\":1.5,\"e\":1e3,\"big\":12345678901234567890,\"neg\":-3,\"s\":\"\\u00e9\\n\","
               "\"a\":[[],{},null,true]}}}");
    kc__wh_route r = route_of(KC__WH_MUTATING);
    g_then = mutate_nothing;
    answer a = call(&r, body);
    assert_true(boolean(&a, "/response/allowed"));
    assert_false(kc_doc_has(a.doc, "/response/patch"));
    answer_free(&a);
    g_then = mutate;
    a = call(&r, body);
    assert_mutate_patch(&a);
    answer_free(&a);
    g_then = NULL;
}

/* AR3, AR6: a validating route's document is built without the objects' trees (review.c:
 * load_lean splices them out, in text order): each kc_obj is still the right one, whichever comes
 * first in the body, and a scalar after them still decodes. */
static void test_webhook_review_validating_objects_any_order(void **state)
{
    (void)state;
    kc__wh_route r = route_of(KC__WH_VALIDATING);
    g_then = NULL;
    answer a = call(&r, REVIEW("{\"uid\":\"u\",\"oldObject\":{\"kind\":\"Pod\",\"metadata\":{"
                               "\"name\":\"old\"}},\"operation\":\"UPDATE\",\"object\":{\"kind\":"
                               "\"Pod\",\"metadata\":{\"name\":\"new\"}},\"name\":\"after\"}"));
    assert_int_equal(a.status, 200);
    assert_string_equal(g_obj_name, "new");
    assert_string_equal(g_old_name, "old");
    assert_non_null(strstr(g_summary, "|UPDATE||after|")); /* operation, ns, name */
    answer_free(&a);
}

/* A review the fast parse refuses beyond JSON (a root "metadata" that is not an object) is still
 * a review: the jansson path answers it (SV5's "malformed" is about JSON and fields we read). */
static void test_webhook_review_fallback_parse(void **state)
{
    (void)state;
    kc__wh_route r = route_of(KC__WH_VALIDATING);
    g_then = NULL;
    answer a = call(&r, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                        "\"metadata\":7,\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\"}}");
    assert_int_equal(a.status, 200);
    assert_true(boolean(&a, "/response/allowed"));
    answer_free(&a);
}

static int explicit_patch(kc_admission_response *resp, const kc_admission_request *req)
{
    (void)req;
    static const char *const bad[] = {"{}",
                                      "[1]",
                                      "[{\"op\":\"frob\",\"path\":\"/a\"}]",
                                      "[{\"op\":\"add\",\"path\":\"/a\"}]",
                                      "[{\"op\":\"add\",\"path\":\"a\",\"value\":1}]",
                                      "[{\"op\":\"move\",\"path\":\"/a\"}]",
                                      "[{\"op\":\"remove\",\"path\":\"/a~2\"}]",
                                      "not json"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(kc_admission_response_set_patch(resp, bad[i], strlen(bad[i])), KC_EINVAL);
    static const char ok[] =
        "[{\"op\":\"test\",\"path\":\"\",\"value\":{}}, {\"op\":\"copy\","
        "\"from\":\"/a\",\"path\":\"/b\"},{\"op\":\"remove\",\"path\":\"/a\"}]";
    return kc_admission_response_set_patch(resp, ok, strlen(ok));
}

static int patch_on_delete(kc_admission_response *resp, const kc_admission_request *req)
{
    (void)req;
    assert_int_equal(kc_admission_response_set_patch(resp, "[]", 2), KC_EINVAL); /* CH12 */
    return 0;
}

/* JP1: explicit operations are checked, then sent as given (compact). */
static void test_webhook_review_explicit_patch(void **state)
{
    (void)state;
    kc__wh_route r = route_of(KC__WH_MUTATING);
    g_then = explicit_patch;
    answer a = call(&r, REVIEW("{\"uid\":\"u\",\"operation\":\"CREATE\",\"object\":{\"a\":1}}"));
    const char *b64 = str(&a, "/response/patch");
    assert_non_null(b64);
    unsigned char *p = NULL;
    size_t n = 0;
    assert_int_equal(kc_base64_decode(b64, strlen(b64), &p, &n, NULL), 0);
    assert_string_equal((char *)p, "[{\"op\":\"test\",\"path\":\"\",\"value\":{}},{\"op\":\"copy\","
                                   "\"from\":\"/a\",\"path\":\"/b\"},{\"op\":\"remove\",\"path\":"
                                   "\"/a\"}]");
    free(p);
    answer_free(&a);
    g_then = patch_on_delete;
    a = call(&r, REVIEW("{\"uid\":\"u\",\"operation\":\"DELETE\",\"oldObject\":{\"a\":1}}"));
    assert_true(boolean(&a, "/response/allowed"));
    answer_free(&a);
    g_then = NULL;
}

/* RD4: not ready → by policy, handler never called; ready → handler; no wait when not needed. */
static void test_webhook_review_readiness(void **state)
{
    (void)state;
    int fake;
    kc_webhook_server *srv = (kc_webhook_server *)&fake;
    const char *body = REVIEW("{\"uid\":\"r\",\"operation\":\"CREATE\"}");
    kc__wh_route r = route_of(KC__WH_VALIDATING);
    r.cache_wait = true;
    g_ready = false;
    g_waits = g_calls = 0;
    answer a = call_ct(srv, &r, "application/json", body);
    assert_int_equal(g_waits, 1);
    assert_int_equal(g_wait_ms, 1234);
    assert_int_equal(g_calls, 0);
    assert_false(boolean(&a, "/response/allowed"));
    int64_t code = 0;
    kc_doc_get_int(a.doc, "/response/status/code", &code, NULL);
    assert_int_equal(code, 503);
    assert_string_equal(str(&a, "/response/status/reason"), "ServiceUnavailable");
    assert_non_null(strstr(str(&a, "/response/status/message"), "not synced"));
    assert_string_equal(str(&a, "/response/uid"), "r");
    answer_free(&a);
    r.not_ready_policy = KC_WEBHOOK_NOT_READY_ALLOW;
    a = call_ct(srv, &r, "application/json", body);
    assert_int_equal(g_calls, 0);
    assert_true(boolean(&a, "/response/allowed"));
    assert_non_null(strstr(str(&a, "/response/warnings/0"), "not synced"));
    answer_free(&a);
    g_ready = true;
    a = call_ct(srv, &r, "application/json", body);
    assert_int_equal(g_calls, 1);
    assert_false(kc_doc_has(a.doc, "/response/warnings"));
    answer_free(&a);
    /* No cache_wait, or no server: no wait at all. */
    g_waits = 0;
    r.cache_wait = false;
    g_ready = false;
    a = call_ct(srv, &r, "application/json", body);
    answer_free(&a);
    r.cache_wait = true;
    a = call_ct(NULL, &r, "application/json", body);
    answer_free(&a);
    assert_int_equal(g_waits, 0);
    assert_int_equal(g_calls, 3);
    g_ready = true;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_webhook_review_decode_every_field),
        cmocka_unit_test(test_webhook_review_decode_sparse),
        cmocka_unit_test(test_webhook_review_malformed),
        cmocka_unit_test(test_webhook_review_content_type),
        cmocka_unit_test(test_webhook_review_deny_encoding),
        cmocka_unit_test(test_webhook_review_warning_cut),
        cmocka_unit_test(test_webhook_review_mutating_patch),
        cmocka_unit_test(test_webhook_review_mutating_from_review_tree),
        cmocka_unit_test(test_webhook_review_fallback_parse),
        cmocka_unit_test(test_webhook_review_validating_objects_any_order),
        cmocka_unit_test(test_webhook_review_explicit_patch),
        cmocka_unit_test(test_webhook_review_readiness),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
