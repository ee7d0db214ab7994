/* test_server_validate.c — name rules with upstream messages (#14), generateName suffixes (#11),
 * UUIDs and RFC 3339 timestamps (#9). */
#include "server/patch/validate.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_server_validate_subdomain_accepts_valid_names(void **state)
{
    static const char *const ok[] = {"a", "web", "my-app.example.com", "0abc", "a-b.c-d", "1"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        assert_int_equal(kc__validate_name(ok[i], KC__NAME_DNS1123_SUBDOMAIN, "Pod", NULL), 0);
    char max[254];
    memset(max, 'a', 253);
    max[253] = '\0';
    assert_int_equal(kc__validate_name(max, KC__NAME_DNS1123_SUBDOMAIN, "Pod", NULL), 0);
}

static void test_server_validate_subdomain_rejects_with_upstream_message(void **state)
{
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__validate_name("Bad_Name", KC__NAME_DNS1123_SUBDOMAIN, "ConfigMap", &err),
                     KC_EUNPROCESSABLE);
    assert_int_equal(err.http_status, 422);
    assert_string_equal(err.reason, "Invalid");
    assert_string_equal(err.kind, "ConfigMap");
    assert_string_equal(err.name, "Bad_Name");
    assert_int_equal(err.n_causes, 1);
    assert_string_equal(err.causes[0].reason, "FieldValueInvalid");
    assert_string_equal(err.causes[0].field, "metadata.name");
    const char *msg =
        "Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case "
        "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    assert_string_equal(err.causes[0].message, msg);
    assert_non_null(strstr(err.message, "ConfigMap \"Bad_Name\" is invalid: metadata.name: "));
    kc_error_clear(&err);
}

static void test_server_validate_subdomain_rejects_bad_shapes(void **state)
{
    static const char *const bad[] = {"-a", "a-", "a..b", ".a", "a.", "A", "a_b", "a b", "a/b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (kc__validate_name(bad[i], KC__NAME_DNS1123_SUBDOMAIN, "Pod", NULL) != KC_EUNPROCESSABLE)
            fail_msg("\"%s\" was accepted", bad[i]);
    }
}

static void test_server_validate_subdomain_too_long(void **state)
{
    char long_name[255];
    memset(long_name, 'a', 254);
    long_name[254] = '\0';
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__validate_name(long_name, KC__NAME_DNS1123_SUBDOMAIN, "Pod", &err),
                     KC_EUNPROCESSABLE);
    assert_non_null(strstr(err.causes[0].message, "must be no more than 253 characters"));
    kc_error_clear(&err);
}

static void test_server_validate_label_rules(void **state)
{
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__validate_name("my-ns", KC__NAME_DNS1123_LABEL, "Namespace", NULL), 0);
    assert_int_equal(kc__validate_name("a.b", KC__NAME_DNS1123_LABEL, "Namespace", &err),
                     KC_EUNPROCESSABLE);
    assert_string_equal(err.causes[0].message,
                        "Invalid value: \"a.b\": a lowercase RFC 1123 label must consist of lower "
                        "case alphanumeric characters or '-', and must start and end with an "
                        "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
    kc_error_clear(&err);
    char n64[65];
    memset(n64, 'a', 64);
    n64[64] = '\0';
    assert_int_equal(kc__validate_name(n64, KC__NAME_DNS1123_LABEL, "Service", &err),
                     KC_EUNPROCESSABLE);
    assert_non_null(strstr(err.causes[0].message, "must be no more than 63 characters"));
    kc_error_clear(&err);
}

static void test_server_validate_path_segment_rules(void **state)
{
    assert_int_equal(kc__validate_name("Any_Thing:1", KC__NAME_PATH_SEGMENT, "W", NULL), 0);
    static const char *const bad[] = {".", "..", "a/b", "50%"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(kc__validate_name(bad[i], KC__NAME_PATH_SEGMENT, "W", NULL),
                         KC_EUNPROCESSABLE);
}

/* generateName is checked as a prefix (a trailing '-' allowed) and reported with the name as
 * ValidateObjectMeta's list; a Service name is a DNS-1035 label. */
static void test_server_validate_generate_name_and_dns1035(void **state)
{
    (void)state;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(
        kc__validate_object_name("web-x2k4z", "web-", KC__NAME_DNS1123_SUBDOMAIN, "Pod", NULL), 0);
    assert_int_equal(kc__validate_object_name("Bad_x2k4z", "Bad_", KC__NAME_DNS1123_SUBDOMAIN,
                                              "Deployment.apps", &err),
                     KC_EUNPROCESSABLE);
    assert_int_equal(err.n_causes, 2);
    assert_string_equal(err.causes[0].field, "metadata.generateName");
    assert_string_equal(err.causes[1].field, "metadata.name");
    assert_non_null(strstr(err.message, "Deployment.apps \"Bad_x2k4z\" is invalid: "
                                        "[metadata.generateName: Invalid value: \"Bad_\": a "
                                        "lowercase RFC 1123 subdomain must consist of"));
    assert_non_null(strstr(err.message, ", metadata.name: Invalid value: \"Bad_x2k4z\": a "
                                        "lowercase RFC 1123 subdomain"));
    assert_int_equal(err.message[strlen(err.message) - 1], ']');
    kc_error_clear(&err);
    assert_int_equal(kc__validate_name("1svc", KC__NAME_DNS1035_LABEL, "Service", &err),
                     KC_EUNPROCESSABLE);
    assert_non_null(strstr(err.causes[0].message, "a DNS-1035 label must consist of lower case "
                                                  "alphanumeric characters or '-', start with an "
                                                  "alphabetic character"));
    kc_error_clear(&err);
    assert_int_equal(kc__validate_name("svc-1", KC__NAME_DNS1035_LABEL, "Service", NULL), 0);
}

static void test_server_validate_empty_name_is_required(void **state)
{
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__validate_name("", KC__NAME_DNS1123_SUBDOMAIN, "Pod", &err),
                     KC_EUNPROCESSABLE);
    assert_string_equal(err.causes[0].reason, "FieldValueRequired");
    assert_string_equal(err.causes[0].field, "metadata.name");
    kc_error_clear(&err);
}

static void test_server_validate_message_escapes_quotes(void **state)
{
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__validate_name("a\"b\n", KC__NAME_DNS1123_SUBDOMAIN, "Pod", &err),
                     KC_EUNPROCESSABLE);
    assert_non_null(strstr(err.causes[0].message, "\"a\\\"b\\x0a\""));
    kc_error_clear(&err);
}

static void test_server_validate_generate_name_suffix_alphabet(void **state)
{
    uint64_t rng = 42;
    char seen[256] = {0};
    for (int i = 0; i < 2000; i++) {
        char s[6];
        kc__generate_name_suffix(&rng, s);
        assert_int_equal(strlen(s), 5);
        for (int j = 0; j < 5; j++) {
            if (!strchr("bcdfghjklmnpqrstvwxz2456789", s[j]))
                fail_msg("suffix %s has %c", s, s[j]);
            seen[(unsigned char)s[j]] = 1;
        }
    }
    int distinct = 0;
    for (int c = 0; c < 256; c++)
        distinct += seen[c];
    assert_int_equal(distinct, 27);
}

static void test_server_validate_uuid_v4_shape(void **state)
{
    uint64_t rng = 7;
    char a[37], b[37];
    kc__uuid_v4(&rng, a);
    kc__uuid_v4(&rng, b);
    assert_int_equal(strlen(a), 36);
    assert_string_not_equal(a, b);
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23)
            assert_int_equal(a[i], '-');
        else
            assert_non_null(strchr("0123456789abcdef", a[i]));
    }
    assert_int_equal(a[14], '4');
    assert_non_null(strchr("89ab", a[19]));
}

static void test_server_validate_now_rfc3339_shape(void **state)
{
    char ts[32];
    kc__now_rfc3339(ts);
    assert_int_equal(strlen(ts), 20);
    assert_int_equal(ts[4], '-');
    assert_int_equal(ts[10], 'T');
    assert_int_equal(ts[19], 'Z');
    assert_true(strncmp(ts, "20", 2) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_validate_subdomain_accepts_valid_names),
        cmocka_unit_test(test_server_validate_subdomain_rejects_with_upstream_message),
        cmocka_unit_test(test_server_validate_subdomain_rejects_bad_shapes),
        cmocka_unit_test(test_server_validate_subdomain_too_long),
        cmocka_unit_test(test_server_validate_label_rules),
        cmocka_unit_test(test_server_validate_path_segment_rules),
        cmocka_unit_test(test_server_validate_generate_name_and_dns1035),
        cmocka_unit_test(test_server_validate_empty_name_is_required),
        cmocka_unit_test(test_server_validate_message_escapes_quotes),
        cmocka_unit_test(test_server_validate_generate_name_suffix_alphabet),
        cmocka_unit_test(test_server_validate_uuid_v4_shape),
        cmocka_unit_test(test_server_validate_now_rfc3339_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
