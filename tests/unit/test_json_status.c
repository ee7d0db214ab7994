/*
 * test_json_status — metav1.Status bodies → kc_error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <kcache/decode.h>

#include <string.h>

static int parse(const char *json, kc_error *err)
{
    return kc_status_parse(json, strlen(json), err);
}

static void test_json_status_causes(void **state)
{
    const char *s =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
        "\"message\":\"Pod \\\"x\\\" is "
        "invalid\",\"reason\":\"Invalid\",\"details\":{\"name\":\"x\","
        "\"group\":\"apps\",\"kind\":\"pods\",\"uid\":\"u-1\",\"causes\":[{\"reason\":"
        "\"FieldValueInvalid\",\"message\":\"bad name\",\"field\":\"metadata.name\"},{\"reason\":"
        "\"FieldValueRequired\",\"field\":\"spec.containers\"}]},\"code\":422}";
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(parse(s, &err), KC_EUNPROCESSABLE);
    assert_int_equal(err.code, KC_EUNPROCESSABLE);
    assert_int_equal(err.http_status, 422);
    assert_string_equal(err.reason, "Invalid");
    assert_string_equal(err.message, "Pod \"x\" is invalid");
    assert_string_equal(err.name, "x");
    assert_string_equal(err.group, "apps");
    assert_string_equal(err.kind, "pods");
    assert_string_equal(err.uid, "u-1");
    assert_int_equal(err.n_causes, 2);
    assert_string_equal(err.causes[0].reason, "FieldValueInvalid");
    assert_string_equal(err.causes[0].message, "bad name");
    assert_string_equal(err.causes[0].field, "metadata.name");
    assert_string_equal(err.causes[1].reason, "FieldValueRequired");
    assert_null(err.causes[1].message);
    assert_string_equal(err.causes[1].field, "spec.containers");
    assert_int_equal(err.retry_after_s, -1);
    kc_error_clear(&err);
    assert_null(err.reason);
}

static void test_json_status_codes(void **state)
{
    static const struct {
        const char *json;
        int code, http;
    } cases[] = {
        {"{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Expired\",\"code\":410}",
         KC_EGONE, 410},
        {"{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Gone\",\"code\":410}", KC_EGONE,
         410},
        {"{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404}",
         KC_ENOTFOUND, 404},
        {"{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"AlreadyExists\",\"code\":409}",
         KC_EEXISTS, 409},
        {"{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Conflict\",\"code\":409}",
         KC_ECONFLICT, 409},
        {"{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Forbidden\",\"code\":403}",
         KC_EFORBIDDEN, 403},
        {"{\"kind\":\"Status\",\"status\":\"Failure\",\"code\":401}", KC_EUNAUTHORIZED, 401},
        {"{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"InternalError\",\"code\":500}",
         KC_ESERVER, 500},
        /* no code: derived from the reason */
        {"{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Expired\"}", KC_EGONE, 410},
        {"{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"NotFound\"}", KC_ENOTFOUND, 404},
        {"{\"status\":\"Failure\",\"code\":400}", KC_EBADREQUEST, 400},
        {"{\"kind\":\"Status\",\"status\":\"Failure\"}", KC_EHTTP, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kc_error err = KC_ERROR_INIT;
        int r = parse(cases[i].json, &err);
        if (r != cases[i].code)
            fail_msg("case %zu: got %s want %s", i, kc_errno_name(r), kc_errno_name(cases[i].code));
        assert_int_equal(err.code, cases[i].code);
        assert_int_equal(err.http_status, cases[i].http);
        kc_error_clear(&err);
    }
}

static void test_json_status_retry_after(void **state)
{
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(
        parse("{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"TooManyRequests\","
              "\"code\":429,\"details\":{\"retryAfterSeconds\":7}}",
              &err),
        KC_ETHROTTLED);
    assert_int_equal(err.retry_after_s, 7);
    kc_error_clear(&err);
}

static void test_json_status_success_is_zero(void **state)
{
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(parse("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Success\","
                           "\"details\":{\"name\":\"x\",\"kind\":\"pods\",\"uid\":\"u\"}}",
                           &err),
                     0);
    assert_int_equal(err.code, 0);
    assert_int_equal(parse("{\"kind\":\"Status\",\"status\":\"Success\"}", NULL), 0);
}

/* details.causes: null is no causes, like every other nullable field the decoders read. */
static void test_json_status_null_causes(void **state)
{
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(parse("{\"kind\":\"Status\",\"status\":\"Failure\",\"code\":404,"
                           "\"reason\":\"NotFound\",\"details\":{\"causes\":null}}",
                           &err),
                     KC_ENOTFOUND);
    assert_int_equal(err.n_causes, 0);
    kc_error_clear(&err);
}

static void test_json_status_not_a_status(void **state)
{
    static const char *bad[] = {
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"}}",
        "{\"metadata\":{}}",
        "[1]",
        "not json",
        "",
        "{\"kind\":\"Status\",\"status\":\"Failure\",\"code\":\"410\"}",
        "{\"kind\":\"Status\",\"details\":{\"causes\":{}}}",
        "{\"kind\":\"Status\",\"details\":{\"causes\":[1]}}",
        "{\"kind\":\"Status\",\"message\":5}",
        "{\"kind\":\"Status\",\"status\":\"Failure\"",
        /* an unread member whose value is a string followed by ':' (invalid JSON): simdjson's own
         * skip took the string for a key and read on past the object's end (informer-semantics:
         * malformed server data is refused, never read as something else) */
        "{\"kind\":\"Status\",\"code\":404,\"x\":\"y\":[]}}",
        "{\"kind\":\"Status\",\"code\":404,\"x\":\"y\":[]}",
        "{\"kind\":\"Status\",\"code\":404,\"details\":{\"x\":\"y\":[]}}}",
        "{\"kind\":\"Status\",\"code\":404,\"details\":{\"causes\":[{\"x\":\"y\":[]}]}}}",
        "{\"kind\":\"Status\",\"code\":404,\"x\":]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kc_error err = KC_ERROR_INIT;
        int r = parse(bad[i], &err);
        if (r != KC_EPARSE)
            fail_msg("case %zu (%s): %s", i, bad[i], kc_errno_name(r));
        assert_int_equal(err.code, KC_EPARSE);
        assert_non_null(err.message);
        kc_error_clear(&err);
    }
    assert_int_equal(kc_status_parse(NULL, 3, NULL), KC_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_status_causes),
        cmocka_unit_test(test_json_status_codes),
        cmocka_unit_test(test_json_status_retry_after),
        cmocka_unit_test(test_json_status_success_is_zero),
        cmocka_unit_test(test_json_status_null_causes),
        cmocka_unit_test(test_json_status_not_a_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
