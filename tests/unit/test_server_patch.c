/* test_server_patch.c — Content-Type mapping (#41), JSON merge patch (#38) and JSON patch (#39). */
#include "server/patch/patch.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kc_test_json.h"

static const char *const POD =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":"
    "\"default\","
    "\"labels\":{\"app\":\"web\",\"tier\":\"fe\"}},\"spec\":{\"containers\":[{\"name\":\"web\","
    "\"image\":\"nginx:1\"}],\"nodeName\":\"n1\"}}";

/* Patch POD with body; returns the result (caller decrefs) or NULL with *code set. */
static json_t *patch(kc__patch_type t, const char *body, int *code, kc_error *err)
{
    json_t *cur = kc_test_json_load(POD);
    json_t *out = NULL;
    *code = kc__patch_apply(t, cur, body, strlen(body), "Pod", true, &out, err);
    json_t *again = kc_test_json_load(POD);
    assert_true(json_equal(cur, again)); /* current is never modified */
    json_decref(again);
    json_decref(cur);
    if (*code == 0)
        assert_non_null(out);
    return out;
}

/* ---- Content-Type (#41) ---- */

static void test_server_patch_content_type_maps_the_four_types(void **state)
{
    kc__patch_type t = 0;
    assert_int_equal(kc__patch_type_from_content_type("application/merge-patch+json", &t, NULL), 0);
    assert_int_equal(t, KC__PATCH_MERGE);
    assert_int_equal(kc__patch_type_from_content_type("application/json-patch+json", &t, NULL), 0);
    assert_int_equal(t, KC__PATCH_JSON);
    assert_int_equal(
        kc__patch_type_from_content_type("application/strategic-merge-patch+json", &t, NULL), 0);
    assert_int_equal(t, KC__PATCH_STRATEGIC);
    assert_int_equal(kc__patch_type_from_content_type("application/apply-patch+yaml", &t, NULL), 0);
    assert_int_equal(t, KC__PATCH_APPLY);
}

static void test_server_patch_content_type_ignores_parameters(void **state)
{
    kc__patch_type t = 0;
    assert_int_equal(
        kc__patch_type_from_content_type(" application/merge-patch+json ; charset=utf-8", &t, NULL),
        0);
    assert_int_equal(t, KC__PATCH_MERGE);
}

static void test_server_patch_content_type_unknown_is_415_with_list(void **state)
{
    kc_error err = KC_ERROR_INIT;
    kc__patch_type t = KC__PATCH_MERGE;
    assert_int_equal(kc__patch_type_from_content_type("application/json", &t, &err), KC_EMEDIATYPE);
    assert_int_equal(t, KC__PATCH_MERGE); /* untouched */
    assert_int_equal(err.http_status, 415);
    assert_non_null(strstr(err.message, "application/merge-patch+json"));
    assert_non_null(strstr(err.message, "application/apply-patch+yaml"));
    kc_error_clear(&err);
    assert_int_equal(kc__patch_type_from_content_type("application/apply-patch+cbor", &t, NULL),
                     KC_EMEDIATYPE);
    assert_int_equal(kc__patch_type_from_content_type(NULL, &t, NULL), KC_EMEDIATYPE);
}

/* ---- merge patch (#38) ---- */

static void test_server_patch_merge_sets_and_deletes(void **state)
{
    int code;
    json_t *out = patch(KC__PATCH_MERGE,
                        "{\"metadata\":{\"labels\":{\"app\":null,\"new\":\"x\"}},\"spec\":{"
                        "\"nodeName\":null}}",
                        &code, NULL);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "metadata.labels", "{\"tier\":\"fe\",\"new\":\"x\"}");
    assert_null(json_object_get(json_object_get(out, "spec"), "nodeName"));
    json_decref(out);
}

static void test_server_patch_merge_replaces_lists(void **state)
{
    int code;
    json_t *out =
        patch(KC__PATCH_MERGE, "{\"spec\":{\"containers\":[{\"name\":\"side\"}]}}", &code, NULL);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "spec.containers", "[{\"name\":\"side\"}]");
    json_decref(out);
}

static void test_server_patch_merge_nulls_inside_new_objects_vanish(void **state)
{
    int code;
    json_t *out =
        patch(KC__PATCH_MERGE, "{\"status\":{\"a\":null,\"b\":{\"c\":null,\"d\":1}}}", &code, NULL);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "status", "{\"b\":{\"d\":1}}");
    json_decref(out);
}

static void test_server_patch_merge_non_object_body_is_400(void **state)
{
    int code;
    kc_error err = KC_ERROR_INIT;
    assert_null(patch(KC__PATCH_MERGE, "[1,2]", &code, &err));
    assert_int_equal(code, KC_EBADREQUEST);
    kc_error_clear(&err);
    assert_null(patch(KC__PATCH_MERGE, "{\"a\":", &code, &err));
    assert_int_equal(code, KC_EBADREQUEST);
    kc_error_clear(&err);
}

static void test_server_patch_depth_over_limit_is_400(void **state)
{
    char body[1024] = "";
    for (int i = 0; i < 120; i++)
        strcat(body, "{\"a\":");
    strcat(body, "1");
    for (int i = 0; i < 120; i++)
        strcat(body, "}");
    int code;
    assert_null(patch(KC__PATCH_MERGE, body, &code, NULL));
    assert_int_equal(code, KC_EBADREQUEST);
}

/* ---- JSON patch (#39) ---- */

static void test_server_patch_json_add_replace_remove(void **state)
{
    int code;
    json_t *out = patch(KC__PATCH_JSON,
                        "[{\"op\":\"add\",\"path\":\"/metadata/labels/a~1b\",\"value\":\"1\"},"
                        "{\"op\":\"replace\",\"path\":\"/spec/nodeName\",\"value\":\"n2\"},"
                        "{\"op\":\"remove\",\"path\":\"/metadata/labels/tier\"}]",
                        &code, NULL);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "metadata.labels", "{\"app\":\"web\",\"a/b\":\"1\"}");
    kc_test_json_at(out, "spec.nodeName", "\"n2\"");
    json_decref(out);
}

static void test_server_patch_json_array_append_and_insert(void **state)
{
    int code;
    json_t *out = patch(KC__PATCH_JSON,
                        "[{\"op\":\"add\",\"path\":\"/spec/containers/-\",\"value\":{\"name\":"
                        "\"c\"}},{\"op\":\"add\",\"path\":\"/spec/containers/0\",\"value\":{"
                        "\"name\":\"a\"}}]",
                        &code, NULL);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "spec.containers.0.name", "\"a\"");
    kc_test_json_at(out, "spec.containers.1.name", "\"web\"");
    kc_test_json_at(out, "spec.containers.2.name", "\"c\"");
    json_decref(out);
}

static void test_server_patch_json_move_and_copy(void **state)
{
    int code;
    json_t *out = patch(KC__PATCH_JSON,
                        "[{\"op\":\"copy\",\"from\":\"/metadata/labels/app\",\"path\":"
                        "\"/metadata/labels/copy\"},{\"op\":\"move\",\"from\":\"/spec/nodeName\","
                        "\"path\":\"/spec/host\"}]",
                        &code, NULL);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "metadata.labels.copy", "\"web\"");
    kc_test_json_at(out, "spec.host", "\"n1\"");
    assert_null(json_object_get(json_object_get(out, "spec"), "nodeName"));
    json_decref(out);
}

static void test_server_patch_json_test_passes_numerically(void **state)
{
    json_t *cur = kc_test_json_load("{\"a\":1,\"b\":[1,{\"c\":true}]}");
    json_t *out = NULL;
    const char *body = "[{\"op\":\"test\",\"path\":\"/a\",\"value\":1.0},"
                       "{\"op\":\"test\",\"path\":\"/b\",\"value\":[1,{\"c\":true}]}]";
    assert_int_equal(
        kc__patch_apply(KC__PATCH_JSON, cur, body, strlen(body), "X", false, &out, NULL), 0);
    assert_true(json_equal(cur, out));
    json_decref(out);
    json_decref(cur);
}

static void test_server_patch_json_failing_test_is_422(void **state)
{
    int code;
    kc_error err = KC_ERROR_INIT;
    assert_null(patch(KC__PATCH_JSON,
                      "[{\"op\":\"test\",\"path\":\"/spec/nodeName\",\"value\":\"other\"}]", &code,
                      &err));
    assert_int_equal(code, KC_EUNPROCESSABLE);
    assert_non_null(strstr(err.message, "/spec/nodeName"));
    kc_error_clear(&err);
}

static void test_server_patch_json_missing_path_is_422(void **state)
{
    int code;
    assert_null(
        patch(KC__PATCH_JSON, "[{\"op\":\"remove\",\"path\":\"/spec/nope\"}]", &code, NULL));
    assert_int_equal(code, KC_EUNPROCESSABLE);
    assert_null(patch(KC__PATCH_JSON,
                      "[{\"op\":\"replace\",\"path\":\"/spec/containers/5\",\"value\":1}]", &code,
                      NULL));
    assert_int_equal(code, KC_EUNPROCESSABLE);
    assert_null(patch(KC__PATCH_JSON,
                      "[{\"op\":\"add\",\"path\":\"/spec/containers/01\",\"value\":1}]", &code,
                      NULL));
    assert_int_equal(code, KC_EUNPROCESSABLE);
    assert_null(
        patch(KC__PATCH_JSON, "[{\"op\":\"add\",\"path\":\"/a/b\",\"value\":1}]", &code, NULL));
    assert_int_equal(code, KC_EUNPROCESSABLE);
}

static void test_server_patch_json_move_into_child_is_422(void **state)
{
    int code;
    assert_null(patch(KC__PATCH_JSON, "[{\"op\":\"move\",\"from\":\"/spec\",\"path\":\"/spec/x\"}]",
                      &code, NULL));
    assert_int_equal(code, KC_EUNPROCESSABLE);
}

static void test_server_patch_json_malformed_is_400(void **state)
{
    static const char *const bad[] = {
        "{\"op\":\"add\"}",                                 /* not an array */
        "[{\"path\":\"/a\",\"value\":1}]",                  /* no op */
        "[{\"op\":\"add\",\"value\":1}]",                   /* no path */
        "[{\"op\":\"frobnicate\",\"path\":\"/a\"}]",        /* unknown op */
        "[{\"op\":\"add\",\"path\":\"/a\"}]",               /* no value */
        "[{\"op\":\"move\",\"path\":\"/a\"}]",              /* no from */
        "[1]",                                              /* not an object */
        "[{\"op\":\"add\",\"path\":\"/a\",\"value\":1},2]", /* checked before applying */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int code;
        json_t *out = patch(KC__PATCH_JSON, bad[i], &code, NULL);
        if (code != KC_EBADREQUEST)
            fail_msg("%s: got %d, want KC_EBADREQUEST", bad[i], code);
        assert_null(out);
    }
}

static void test_server_patch_json_too_many_ops_is_413(void **state)
{
    size_t n = 10001;
    char *body = malloc(n * 32 + 8);
    size_t o = 0;
    body[o++] = '[';
    for (size_t i = 0; i < n; i++)
        o += (size_t)sprintf(body + o, "%s{\"op\":\"test\",\"path\":\"\"}", i ? "," : "");
    body[o++] = ']';
    body[o] = '\0';
    int code;
    assert_null(patch(KC__PATCH_JSON, body, &code, NULL));
    /* The first op is malformed (no value) but the count is checked first. */
    assert_int_equal(code, KC_ETOOLARGE);
    free(body);
}

static void test_server_patch_json_result_must_stay_an_object(void **state)
{
    int code;
    assert_null(
        patch(KC__PATCH_JSON, "[{\"op\":\"replace\",\"path\":\"\",\"value\":3}]", &code, NULL));
    assert_int_equal(code, KC_EBADREQUEST);
}

static void test_server_patch_json_copy_growth_is_bounded(void **state)
{
    /* Each copy of the root doubles the document: 40 of them would need 2^40 values. */
    char body[8192] = "[{\"op\":\"add\",\"path\":\"/x\",\"value\":[1,2,3,4,5,6,7,8]}";
    for (int i = 0; i < 40; i++)
        strcat(body, ",{\"op\":\"copy\",\"from\":\"/x\",\"path\":\"/x/0\"}");
    strcat(body, "]");
    int code;
    assert_null(patch(KC__PATCH_JSON, body, &code, NULL));
    assert_int_equal(code, KC_EUNPROCESSABLE);
}

static void test_server_patch_json_depth_growth_is_bounded(void **state)
{
    char body[16384] = "[{\"op\":\"add\",\"path\":\"/x\",\"value\":{\"a\":{\"a\":{}}}}";
    for (int i = 0; i < 120; i++)
        strcat(body, ",{\"op\":\"copy\",\"from\":\"/x\",\"path\":\"/x/a/a/b\"}");
    strcat(body, "]");
    int code;
    kc_error err = KC_ERROR_INIT;
    assert_null(patch(KC__PATCH_JSON, body, &code, &err));
    assert_int_equal(code, KC_EUNPROCESSABLE);
    assert_non_null(strstr(err.message, "deeper"));
    kc_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_patch_content_type_maps_the_four_types),
        cmocka_unit_test(test_server_patch_content_type_ignores_parameters),
        cmocka_unit_test(test_server_patch_content_type_unknown_is_415_with_list),
        cmocka_unit_test(test_server_patch_merge_sets_and_deletes),
        cmocka_unit_test(test_server_patch_merge_replaces_lists),
        cmocka_unit_test(test_server_patch_merge_nulls_inside_new_objects_vanish),
        cmocka_unit_test(test_server_patch_merge_non_object_body_is_400),
        cmocka_unit_test(test_server_patch_depth_over_limit_is_400),
        cmocka_unit_test(test_server_patch_json_add_replace_remove),
        cmocka_unit_test(test_server_patch_json_array_append_and_insert),
        cmocka_unit_test(test_server_patch_json_move_and_copy),
        cmocka_unit_test(test_server_patch_json_test_passes_numerically),
        cmocka_unit_test(test_server_patch_json_failing_test_is_422),
        cmocka_unit_test(test_server_patch_json_missing_path_is_422),
        cmocka_unit_test(test_server_patch_json_move_into_child_is_422),
        cmocka_unit_test(test_server_patch_json_malformed_is_400),
        cmocka_unit_test(test_server_patch_json_too_many_ops_is_413),
        cmocka_unit_test(test_server_patch_json_result_must_stay_an_object),
        cmocka_unit_test(test_server_patch_json_copy_growth_is_bounded),
        cmocka_unit_test(test_server_patch_json_depth_growth_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
