/*
 * test_json_condition — status conditions: kc_doc_condition_set with apimachinery's
 * meta.SetStatusCondition rules (k8s.io/apimachinery/pkg/api/meta/conditions.go), find, remove,
 * is_true, the field checks of metav1.Condition's validation (k8s.io/apimachinery/pkg/apis/meta/
 * v1/validation ValidateCondition), and the stored-object reader kc_obj_condition_status.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_fixture.h"

#include <kcache/condition.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool set(kc_doc *d, const kc_condition *c)
{
    bool changed = false;
    kc_error err = KC_ERROR_INIT;
    int r = kc_doc_condition_set(d, c, &changed, &err);
    if (r)
        fail_msg("set: %s (%s)", kc_errno_name(r), err.message);
    return changed;
}

static kc_condition found(const kc_doc *d, const char *type)
{
    kc_condition c = {0};
    kc_error err = KC_ERROR_INIT;
    int r = kc_doc_condition_find(d, type, &c, &err);
    if (r)
        fail_msg("find %s: %s (%s)", type, kc_errno_name(r), err.message);
    return c;
}

/* "2026-01-02T03:04:05Z": RFC 3339, seconds, UTC, as metav1.Time marshals. */
static bool is_rfc3339_utc(const char *s)
{
    const char *fmt = "dddd-dd-ddTdd:dd:ddZ";
    if (strlen(s) != strlen(fmt))
        return false;
    for (size_t i = 0; fmt[i]; i++)
        if (fmt[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != fmt[i])
            return false;
    return true;
}

/* SetStatusCondition: a new condition is appended (status/conditions created), and gets
 * lastTransitionTime = now when the caller gives none; changed = true. */
static void test_json_condition_new_appended(void **state)
{
    (void)state;
    kc_doc *d = jf_doc("{\"metadata\":{\"name\":\"x\"}}");
    kc_condition c = {.type = "Ready",
                      .status = "True",
                      .reason = "Synced",
                      .message = "ok",
                      .observed_generation = 3};
    assert_true(set(d, &c));
    kc_condition got = found(d, "Ready");
    assert_string_equal(got.status, "True");
    assert_string_equal(got.reason, "Synced");
    assert_string_equal(got.message, "ok");
    assert_int_equal(got.observed_generation, 3);
    assert_true(is_rfc3339_utc(got.last_transition_time));
    /* a second type is appended after the first */
    kc_condition c2 = {.type = "Degraded",
                       .status = "False",
                       .reason = "AsExpected",
                       .last_transition_time = "2020-01-01T00:00:00Z"};
    assert_true(set(d, &c2));
    const char *s = NULL;
    assert_int_equal(kc_doc_get_string(d, "/status/conditions/1/type", &s, NULL, NULL), 0);
    assert_string_equal(s, "Degraded");
    /* given a time, a new condition keeps it */
    assert_string_equal(found(d, "Degraded").last_transition_time, "2020-01-01T00:00:00Z");
    /* message is always written (metav1.Condition.message has no omitempty); 0 generation not */
    assert_string_equal(found(d, "Degraded").message, "");
    assert_false(kc_doc_has(d, "/status/conditions/1/observedGeneration"));
    kc_doc_free(d);
}

/* SetStatusCondition: the same status keeps lastTransitionTime (even when the caller passes
 * another); reason, message and observedGeneration are updated in place; nothing different →
 * changed = false. */
static void test_json_condition_same_status_keeps_time(void **state)
{
    (void)state;
    kc_doc *d = jf_doc("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
                       "\"lastTransitionTime\":\"2020-01-01T00:00:00Z\",\"reason\":\"A\","
                       "\"message\":\"m\"}]}}");
    kc_condition c = {.type = "Ready", .status = "True", .reason = "A", .message = "m"};
    assert_false(set(d, &c));
    c.last_transition_time = "2024-05-05T05:05:05Z";
    assert_false(set(d, &c)); /* the time given is ignored without a status change */
    assert_string_equal(found(d, "Ready").last_transition_time, "2020-01-01T00:00:00Z");
    c.reason = "B";
    assert_true(set(d, &c));
    c.message = "other";
    assert_true(set(d, &c));
    c.observed_generation = 7;
    assert_true(set(d, &c));
    kc_condition got = found(d, "Ready");
    assert_string_equal(got.reason, "B");
    assert_string_equal(got.message, "other");
    assert_int_equal(got.observed_generation, 7);
    assert_string_equal(got.last_transition_time, "2020-01-01T00:00:00Z");
    size_t n = 0;
    assert_int_equal(kc_doc_count(d, "/status/conditions", &n, NULL), 0);
    assert_int_equal(n, 1); /* updated in place, not appended */
    /* observedGeneration back to 0: omitted, as omitempty marshals it */
    c.observed_generation = 0;
    assert_true(set(d, &c));
    assert_false(kc_doc_has(d, "/status/conditions/0/observedGeneration"));
    kc_doc_free(d);
}

/* SetStatusCondition: a status change moves lastTransitionTime — to the caller's time when given,
 * else to now. */
static void test_json_condition_status_change_moves_time(void **state)
{
    (void)state;
    kc_doc *d = jf_doc("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
                       "\"lastTransitionTime\":\"2020-01-01T00:00:00Z\",\"reason\":\"A\","
                       "\"message\":\"\"}]}}");
    kc_condition c = {.type = "Ready", .status = "False", .reason = "A"};
    assert_true(set(d, &c));
    kc_condition got = found(d, "Ready");
    assert_string_equal(got.status, "False");
    assert_string_not_equal(got.last_transition_time, "2020-01-01T00:00:00Z");
    assert_true(is_rfc3339_utc(got.last_transition_time));
    c.status = "Unknown";
    c.last_transition_time = "2021-02-03T04:05:06Z";
    assert_true(set(d, &c));
    assert_string_equal(found(d, "Ready").last_transition_time, "2021-02-03T04:05:06Z");
    assert_true(!kc_doc_condition_is_true(d, "Ready"));
    c.status = "True";
    assert_true(set(d, &c));
    assert_true(kc_doc_condition_is_true(d, "Ready"));
    kc_doc_free(d);
}

/* metav1.Condition validation: type required, status True/False/Unknown, reason required and
 * matching ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$, message ≤ 32768, observedGeneration ≥ 0. */
static void test_json_condition_invalid(void **state)
{
    (void)state;
    kc_doc *d = jf_doc("{}");
    const kc_condition bad[] = {
        {.status = "True", .reason = "R"},
        {.type = "", .status = "True", .reason = "R"},
        {.type = "Ready", .status = "true", .reason = "R"},
        {.type = "Ready", .reason = "R"},
        {.type = "Ready", .status = "True"},
        {.type = "Ready", .status = "True", .reason = ""},
        {.type = "Ready", .status = "True", .reason = "9lives"},
        {.type = "Ready", .status = "True", .reason = "Ends,"},
        {.type = "Ready", .status = "True", .reason = "Has space"},
        {.type = "Ready", .status = "True", .reason = "R", .observed_generation = -1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kc_error err = KC_ERROR_INIT;
        bool changed = true;
        assert_int_equal(kc_doc_condition_set(d, &bad[i], &changed, &err), KC_EINVAL);
        assert_false(changed);
        assert_non_null(err.message);
        kc_error_clear(&err);
    }
    char *big = malloc(32770);
    memset(big, 'm', 32769);
    big[32769] = '\0';
    kc_condition c = {.type = "Ready", .status = "True", .reason = "R", .message = big};
    assert_int_equal(kc_doc_condition_set(d, &c, NULL, NULL), KC_EINVAL);
    free(big);
    kc_condition ok = {.type = "Ready", .status = "True", .reason = "a_B:c,D_9"};
    assert_true(set(d, &ok));
    assert_false(kc_doc_has(d, "/status/conditions/1"));
    /* /status/conditions of another type */
    kc_doc *wrong = jf_doc("{\"status\":{\"conditions\":{}}}");
    assert_int_equal(kc_doc_condition_set(wrong, &ok, NULL, NULL), KC_EINVAL);
    kc_doc_free(wrong);
    kc_doc_free(d);
}

/* RemoveStatusCondition: removed reports whether it was there; absent is not an error. */
static void test_json_condition_remove_and_find(void **state)
{
    (void)state;
    kc_doc *d = jf_doc("{\"status\":{\"conditions\":[{\"type\":\"A\",\"status\":\"True\"},"
                       "{\"type\":\"B\",\"status\":\"False\",\"observedGeneration\":2}]}}");
    kc_condition c = found(d, "B");
    assert_int_equal(c.observed_generation, 2);
    assert_string_equal(c.reason, ""); /* absent → "" */
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_doc_condition_find(d, "C", &c, &err), KC_ENOTFOUND);
    kc_error_clear(&err);
    bool removed = false;
    assert_int_equal(kc_doc_condition_remove(d, "A", &removed, NULL), 0);
    assert_true(removed);
    assert_int_equal(kc_doc_condition_remove(d, "A", &removed, NULL), 0);
    assert_false(removed);
    assert_string_equal(found(d, "B").status, "False");
    assert_false(kc_doc_condition_is_true(d, "A"));
    kc_doc_free(d);
}

/* Reading a stored object's condition without copying its text. */
static void test_json_condition_obj_status(void **state)
{
    (void)state;
    const char *j = "{\"metadata\":{\"name\":\"x\"},\"status\":{\"conditions\":["
                    "{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"Ok\"},"
                    "\"junk\",{\"status\":\"False\",\"type\":\"Synced\"},"
                    "{\"type\":\"Odd\",\"status\":\"Maybe\"}]}}";
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(j, strlen(j), NULL, &o, NULL), 0);
    const char *s = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_obj_condition_status(o, "Ready", &s, &err), 0);
    assert_string_equal(s, "True");
    assert_int_equal(kc_obj_condition_status(o, "Synced", &s, &err), 0);
    assert_string_equal(s, "False");
    assert_true(kc_obj_condition_is_true(o, "Ready"));
    assert_false(kc_obj_condition_is_true(o, "Synced"));
    assert_int_equal(kc_obj_condition_status(o, "Missing", &s, &err), KC_ENOTFOUND);
    kc_error_clear(&err);
    assert_int_equal(kc_obj_condition_status(o, "Odd", &s, &err), KC_EPARSE);
    kc_error_clear(&err);
    kc_obj_unref(o);
    const char *none = "{\"metadata\":{\"name\":\"x\"},\"status\":{\"conditions\":null}}";
    assert_int_equal(kc_obj_parse(none, strlen(none), NULL, &o, NULL), 0);
    assert_int_equal(kc_obj_condition_status(o, "Ready", &s, &err), KC_ENOTFOUND);
    kc_error_clear(&err);
    assert_false(kc_obj_condition_is_true(o, "Ready"));
    kc_obj_unref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_condition_new_appended),
        cmocka_unit_test(test_json_condition_same_status_keeps_time),
        cmocka_unit_test(test_json_condition_status_change_moves_time),
        cmocka_unit_test(test_json_condition_invalid),
        cmocka_unit_test(test_json_condition_remove_and_find),
        cmocka_unit_test(test_json_condition_obj_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
