/*
 * test_webhook_convert — ConversionReviews through kc__wh_review (srv NULL): objects converted in
 * order with apiVersion set by the library (CV3, CV10), the response echoing apiVersion, kind and
 * uid (CV4 1–3), the checks the API server makes of converted objects (CV4 6–7: kind, name,
 * namespace, uid; CV5: labels and annotations maps of strings), a handler error answering
 * result Failure without objects (CV3), and malformed reviews answered 400 (CV10).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "webhook/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Conversion never waits (RD4): any call of this fails the test. */
bool kc__wh_wait_ready(kc_webhook_server *srv, int64_t timeout_ms)
{
    (void)srv;
    (void)timeout_ms;
    fail_msg("a conversion waited for readiness");
    return false;
}

static int g_calls;
static const char *g_mode = "";

/* v1 → v2: spec.size (int) becomes spec.sizeGi (string); modes break it on purpose. */
static int convert(void *ud, const char *desired, kc_doc *obj, kc_error *err)
{
    (void)ud;
    g_calls++;
    assert_string_equal(desired, "example.com/v2");
    int64_t size = 0;
    if (kc_doc_get_int(obj, "/spec/size", &size, NULL) == 0) {
        char s[32];
        snprintf(s, sizeof s, "%lldGi", (long long)size);
        kc_doc_remove(obj, "/spec/size", NULL);
        kc_doc_set_string(obj, "/spec/sizeGi", s, NULL);
    }
    if (strcmp(g_mode, "fail") == 0 && g_calls == 2)
        return kc_error_set(err, KC_EINVAL, "spec.size is not convertible");
    if (strcmp(g_mode, "rename") == 0)
        kc_doc_set_string(obj, "/metadata/name", "other", NULL);
    if (strcmp(g_mode, "kind") == 0)
        kc_doc_set_string(obj, "/kind", "Other", NULL);
    if (strcmp(g_mode, "uid") == 0)
        kc_doc_remove(obj, "/metadata/uid", NULL);
    if (strcmp(g_mode, "ns") == 0)
        kc_doc_set_string(obj, "/metadata/namespace", "b", NULL);
    if (strcmp(g_mode, "labels") == 0)
        kc_doc_set_int(obj, "/metadata/labels/n", 1, NULL);
    if (strcmp(g_mode, "annotations") == 0)
        kc_doc_set_raw(obj, "/metadata/annotations", "[]", 2, NULL);
    if (strcmp(g_mode, "root") == 0)
        kc_doc_set_raw(obj, "", "[]", 2, NULL);
    if (strcmp(g_mode, "meta") == 0) { /* allowed: labels, annotations, other metadata */
        kc_doc_set_string(obj, "/metadata/labels/converted", "yes", NULL);
        kc_doc_set_string(obj, "/metadata/resourceVersion", "99", NULL);
    }
    return 0;
}

static kc__wh_route conv_route(void)
{
    kc__wh_route r = {0};
    r.path = "/convert";
    r.kind = KC__WH_CONVERSION;
    r.convert = convert;
    r.cache_wait = true; /* ignored for conversion */
    return r;
}

#define OBJ(name, size)                                                                            \
    "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Disk\",\"metadata\":{\"name\":\"" name          \
    "\",\"namespace\":\"a\",\"uid\":\"id-" name                                                    \
    "\",\"labels\":{\"l\":\"1\"}},\"spec\":{\"size\":" size "}}"
#define CONV(objs)                                                                                 \
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\",\"request\":{"      \
    "\"uid\":\"c-1\",\"desiredAPIVersion\":\"example.com/v2\",\"objects\":[" objs "]}}"

static const char TWO[] = CONV(OBJ("d1", "1") "," OBJ("d2", "20"));

typedef struct answer {
    int status;
    char *body;
    size_t len;
    const char *ctype;
    kc_doc *doc;
} answer;

static answer call(const char *body)
{
    kc__wh_route r = conv_route();
    answer a = {0};
    g_calls = 0;
    assert_int_equal(kc__wh_review(NULL, &r, "application/json", body, strlen(body), &a.status,
                                   &a.body, &a.len, &a.ctype),
                     0);
    if (a.status == 200)
        assert_int_equal(kc_doc_parse(a.body, a.len, &a.doc, NULL), 0);
    return a;
}

static void answer_free(answer *a)
{
    free(a->body);
    kc_doc_free(a->doc);
}

static void test_webhook_convert_success(void **state)
{
    (void)state;
    g_mode = "";
    answer a = call(TWO);
    assert_int_equal(a.status, 200);
    assert_int_equal(g_calls, 2);
    assert_string_equal(
        a.body,
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\",\"response\":{"
        "\"uid\":\"c-1\",\"convertedObjects\":[{\"apiVersion\":\"example.com/v2\",\"kind\":"
        "\"Disk\",\"metadata\":{\"name\":\"d1\",\"namespace\":\"a\",\"uid\":\"id-d1\",\"labels\":"
        "{\"l\":\"1\"}},\"spec\":{\"sizeGi\":\"1Gi\"}},{\"apiVersion\":\"example.com/v2\",\"kind\":"
        "\"Disk\",\"metadata\":{\"name\":\"d2\",\"namespace\":\"a\",\"uid\":\"id-d2\",\"labels\":"
        "{\"l\":\"1\"}},\"spec\":{\"sizeGi\":\"20Gi\"}}],\"result\":{\"status\":\"Success\"}}}");
    answer_free(&a);
    /* Labels, annotations and other metadata may change (CV5: the API server keeps the first
     * two and restores the rest); v1beta1 is echoed; no objects is a success with none. */
    g_mode = "meta";
    a = call(TWO);
    const char *s = NULL;
    assert_int_equal(kc_doc_get_string(a.doc,
                                       "/response/convertedObjects/1/metadata/labels/converted", &s,
                                       NULL, NULL),
                     0);
    assert_string_equal(s, "yes");
    answer_free(&a);
    a = call("{\"apiVersion\":\"apiextensions.k8s.io/v1beta1\",\"kind\":\"ConversionReview\","
             "\"request\":{\"uid\":\"z\",\"desiredAPIVersion\":\"example.com/v2\"}}");
    assert_string_equal(a.body, "{\"apiVersion\":\"apiextensions.k8s.io/v1beta1\",\"kind\":"
                                "\"ConversionReview\",\"response\":{\"uid\":\"z\","
                                "\"convertedObjects\":[],\"result\":{\"status\":\"Success\"}}}");
    answer_free(&a);
}

/* CV3, CV4: any failure → Failure with the reason, no convertedObjects, uid echoed. */
static void test_webhook_convert_failures(void **state)
{
    (void)state;
    static const char *const modes[][2] = {
        {"fail", "spec.size is not convertible"},
        {"rename", "changed the name"},
        {"kind", "changed the kind"},
        {"uid", "changed the uid"},
        {"ns", "changed the namespace"},
        {"labels", "metadata.labels"},
        {"annotations", "metadata.annotations"},
        {"root", "not an object"},
    };
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        g_mode = modes[i][0];
        answer a = call(TWO);
        assert_int_equal(a.status, 200);
        const char *st = NULL, *msg = NULL, *uid = NULL;
        assert_int_equal(kc_doc_get_string(a.doc, "/response/result/status", &st, NULL, NULL), 0);
        assert_string_equal(st, "Failure");
        assert_int_equal(kc_doc_get_string(a.doc, "/response/result/message", &msg, NULL, NULL), 0);
        if (!strstr(msg, modes[i][1]) || !strstr(msg, "objects["))
            fail_msg("%s: %s", modes[i][0], msg);
        assert_int_equal(kc_doc_get_string(a.doc, "/response/uid", &uid, NULL, NULL), 0);
        assert_string_equal(uid, "c-1");
        assert_false(kc_doc_has(a.doc, "/response/convertedObjects"));
        answer_free(&a);
    }
    g_mode = "";
}

/* CV10: an undecodable review, or one without its request fields, is 400; no handler call. */
static void test_webhook_convert_malformed(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\"}", "request"},
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"ConversionReview\",\"request\":{}}",
         "apiVersion"},
        {"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"AdmissionReview\"}", "kind"},
        {"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\",\"request\":"
         "{\"desiredAPIVersion\":\"g/v\"}}",
         "request.uid"},
        {"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\",\"request\":"
         "{\"uid\":\"u\"}}",
         "request.desiredAPIVersion"},
        {"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\",\"request\":"
         "{\"uid\":\"u\",\"desiredAPIVersion\":\"g/v\",\"objects\":{}}}",
         "request.objects"},
        {"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\",\"request\":"
         "{\"uid\":\"u\",\"desiredAPIVersion\":\"g/v\",\"objects\":[{},3]}}",
         "request.objects[1]"},
        {"{\"apiVersion\":\"apiextensions.k8s.io/v1\",", "invalid JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        answer a = call(cases[i][0]);
        if (a.status != 400 || !strstr(a.body, cases[i][1]))
            fail_msg("case %zu: %d %s", i, a.status, a.body);
        assert_int_equal(g_calls, 0);
        answer_free(&a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_webhook_convert_success),
        cmocka_unit_test(test_webhook_convert_failures),
        cmocka_unit_test(test_webhook_convert_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
