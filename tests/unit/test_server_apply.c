/* test_server_apply.c — server-side apply: fieldManager (#44), create with a managedFields entry
 * (#45), merge, field ownership conflicts and force (#46), YAML bodies. */
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

#define NOW "2026-11-29T15:00:00Z"

static const char *const DEPLOY_YAML = "apiVersion: apps/v1\n"
                                       "kind: Deployment\n"
                                       "metadata:\n"
                                       "  name: web\n"
                                       "  labels:\n"
                                       "    app: web\n"
                                       "spec:\n"
                                       "  replicas: 3\n"
                                       "  template:\n"
                                       "    spec:\n"
                                       "      containers:\n"
                                       "      - name: web\n"
                                       "        image: nginx:1\n";

static json_t *apply(const json_t *cur, const char *body, const char *mgr, bool force, int *code,
                     kc_error *err)
{
    json_t *out = NULL;
    *code = kc__apply(cur, body, strlen(body), mgr, force, NOW, &out, err);
    if (*code == 0)
        assert_non_null(out);
    else
        assert_null(out);
    return out;
}

static void test_server_apply_requires_field_manager(void **state)
{
    int code;
    kc_error err = KC_ERROR_INIT;
    apply(NULL, DEPLOY_YAML, NULL, false, &code, &err);
    assert_int_equal(code, KC_EUNPROCESSABLE);
    assert_non_null(strstr(err.message, "fieldManager"));
    kc_error_clear(&err);
    apply(NULL, DEPLOY_YAML, "", false, &code, NULL);
    assert_int_equal(code, KC_EUNPROCESSABLE);
}

static void test_server_apply_creates_with_managed_fields(void **state)
{
    int code;
    json_t *out = apply(NULL, DEPLOY_YAML, "kubectl", false, &code, NULL);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "spec.replicas", "3");
    kc_test_json_at(out, "metadata.managedFields.0.manager", "\"kubectl\"");
    kc_test_json_at(out, "metadata.managedFields.0.operation", "\"Apply\"");
    kc_test_json_at(out, "metadata.managedFields.0.apiVersion", "\"apps/v1\"");
    kc_test_json_at(out, "metadata.managedFields.0.time", "\"" NOW "\"");
    kc_test_json_at(out, "metadata.managedFields.0.fieldsType", "\"FieldsV1\"");
    kc_test_json_at(
        out, "metadata.managedFields.0.fieldsV1",
        "{\"f:metadata\":{\"f:labels\":{\"f:app\":{}}},\"f:spec\":{\"f:replicas\":{},"
        "\"f:template\":{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"web\\\"}\":"
        "{\".\":{},\"f:image\":{},\"f:name\":{}}}}}}}");
    json_decref(out);
}

static void test_server_apply_accepts_json_bodies(void **state)
{
    int code;
    json_t *out = apply(NULL,
                        "  {\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                        "\"c\"},\"data\":{\"k\":\"v\"}}",
                        "m", false, &code, NULL);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "metadata.managedFields.0.fieldsV1", "{\"f:data\":{\"f:k\":{}}}");
    json_decref(out);
}

static void test_server_apply_yaml_scalars_resolve_like_go_yaml(void **state)
{
    int code;
    json_t *out = apply(NULL,
                        "apiVersion: v1\nkind: X\nmetadata: {name: x}\nd:\n  a: yes\n  b: 'yes'\n"
                        "  c: 42\n  e: 1.5\n  f: ~\n  g: \"42\"\n  h: 0x1f\n  i: 007\n  j: .inf\n"
                        "  k: [1, two]\n  l: |\n    text\n",
                        "m", false, &code, NULL);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "d",
                    "{\"a\":true,\"b\":\"yes\",\"c\":42,\"e\":1.5,\"f\":null,\"g\":\"42\",\"h\":31,"
                    "\"i\":\"007\",\"j\":\".inf\",\"k\":[1,\"two\"],\"l\":\"text\\n\"}");
    json_decref(out);
}

static void test_server_apply_bad_bodies_are_400(void **state)
{
    static const char *const bad[] = {
        "kind: X\nmetadata: {name: x}\n",                            /* no apiVersion */
        "apiVersion: v1\nmetadata: {name: x}\n",                     /* no kind */
        "- a\n- b\n",                                                /* not a map */
        "apiVersion: v1\nkind: X\nmetadata:\n  managedFields: []\n", /* managedFields */
        "apiVersion: v1\nkind: X\n---\napiVersion: v1\nkind: Y\n",   /* two documents */
        "apiVersion: v1\nkind: X\na: &x {b: 1}\nc: *x\n",            /* alias */
        "apiVersion: v1\nkind: X\na: [1, 2\n",                       /* syntax */
        "{\"apiVersion\":\"v1\",",                                   /* bad JSON */
        "",                                                          /* empty */
        "apiVersion: v1\nkind: X\n? [a]\n: 1\n",                     /* non-scalar key */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int code;
        kc_error err = KC_ERROR_INIT;
        json_t *out = NULL;
        code = kc__apply(NULL, bad[i], strlen(bad[i]), "m", false, NOW, &out, &err);
        if (code != KC_EBADREQUEST)
            fail_msg("body %zu: got %d (%s), want KC_EBADREQUEST", i, code,
                     err.message ? err.message : "");
        assert_null(out);
        kc_error_clear(&err);
    }
}

static void test_server_apply_deep_yaml_is_400(void **state)
{
    char body[2048] = "apiVersion: v1\nkind: X\nd: ";
    for (int i = 0; i < 150; i++)
        strcat(body, "[");
    for (int i = 0; i < 150; i++)
        strcat(body, "]");
    int code;
    apply(NULL, body, "m", false, &code, NULL);
    assert_int_equal(code, KC_EBADREQUEST);
}

static void test_server_apply_merges_into_current(void **state)
{
    int code;
    json_t *cur = kc_test_json_load(
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{"
        "\"name\":\"web\",\"uid\":\"u1\",\"labels\":{\"other\":\"x\"}},\"spec\":{"
        "\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"side\","
        "\"image\":\"b\"},{\"name\":\"web\",\"image\":\"old\",\"args\":[\"a\"]}]}}}}");
    json_t *out = apply(cur, DEPLOY_YAML, "kubectl", false, &code, NULL);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "metadata.uid", "\"u1\"");
    kc_test_json_at(out, "metadata.labels", "{\"other\":\"x\",\"app\":\"web\"}");
    kc_test_json_at(out, "spec.replicas", "3");
    kc_test_json_at(out, "spec.template.spec.containers",
                    "[{\"name\":\"side\",\"image\":\"b\"},{\"name\":\"web\",\"image\":\"nginx:1\","
                    "\"args\":[\"a\"]}]");
    kc_test_json_at(out, "metadata.managedFields.0.manager", "\"kubectl\"");
    json_decref(out);
    json_decref(cur);
}

static json_t *owned_deployment(const char *op)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
             "\"managedFields\":[{\"manager\":\"kubectl-client-side-apply\",\"operation\":\"%s\","
             "\"apiVersion\":\"apps/v1\",\"time\":\"2026-01-01T00:00:00Z\",\"fieldsType\":"
             "\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\"f:replicas\":{}}}}]},\"spec\":{"
             "\"replicas\":1}}",
             op);
    return kc_test_json_load(buf);
}

static void test_server_apply_conflict_with_other_manager_is_409(void **state)
{
    json_t *cur = owned_deployment("Apply");
    int code;
    kc_error err = KC_ERROR_INIT;
    apply(cur, DEPLOY_YAML, "kubectl", false, &code, &err);
    assert_int_equal(code, KC_ECONFLICT);
    assert_int_equal(err.http_status, 409);
    assert_string_equal(err.reason, "Conflict");
    assert_string_equal(err.message, "Apply failed with 1 conflict: conflict with "
                                     "\"kubectl-client-side-apply\" using apps/v1: .spec.replicas");
    assert_int_equal(err.n_causes, 1);
    assert_string_equal(err.causes[0].reason, "FieldManagerConflict");
    assert_string_equal(err.causes[0].field, ".spec.replicas");
    assert_string_equal(err.causes[0].message,
                        "conflict with \"kubectl-client-side-apply\" using apps/v1");
    kc_error_clear(&err);
    json_decref(cur);
}

static void test_server_apply_conflict_names_update_time(void **state)
{
    json_t *cur = owned_deployment("Update");
    int code;
    kc_error err = KC_ERROR_INIT;
    apply(cur, DEPLOY_YAML, "kubectl", false, &code, &err);
    assert_int_equal(code, KC_ECONFLICT);
    assert_string_equal(err.causes[0].message, "conflict with \"kubectl-client-side-apply\" using "
                                               "apps/v1 at 2026-01-01T00:00:00Z");
    kc_error_clear(&err);
    json_decref(cur);
}

static void test_server_apply_same_value_is_no_conflict(void **state)
{
    json_t *cur = owned_deployment("Update");
    json_object_set_new(json_object_get(cur, "spec"), "replicas", json_integer(3));
    int code;
    json_t *out = apply(cur, DEPLOY_YAML, "kubectl", false, &code, NULL);
    assert_int_equal(code, 0);
    /* Both managers now own spec.replicas. */
    assert_int_equal(
        json_array_size(json_object_get(json_object_get(out, "metadata"), "managedFields")), 2);
    json_decref(out);
    json_decref(cur);
}

static void test_server_apply_force_takes_ownership(void **state)
{
    json_t *cur = owned_deployment("Update");
    int code;
    json_t *out = apply(cur, DEPLOY_YAML, "kubectl", true, &code, NULL);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "spec.replicas", "3");
    /* The other manager owned only spec.replicas: its entry is gone. */
    json_t *mf = json_object_get(json_object_get(out, "metadata"), "managedFields");
    assert_int_equal(json_array_size(mf), 1);
    kc_test_json_at(out, "metadata.managedFields.0.manager", "\"kubectl\"");
    json_decref(out);
    json_decref(cur);
}

static void test_server_apply_force_keeps_other_fields_of_other_manager(void **state)
{
    json_t *cur = kc_test_json_load(
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
        "\"managedFields\":[{\"manager\":\"a\",\"operation\":\"Apply\","
        "\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"
        "\"f:data\":{\"f:x\":{},\"f:y\":{}}}}]},\"data\":{\"x\":\"1\",\"y\":\"2\"}}");
    const char *body = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {x: '9'}\n";
    int code;
    json_t *out = apply(cur, body, "b", true, &code, NULL);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "data", "{\"x\":\"9\",\"y\":\"2\"}");
    kc_test_json_at(out, "metadata.managedFields.0.fieldsV1", "{\"f:data\":{\"f:y\":{}}}");
    kc_test_json_at(out, "metadata.managedFields.1.fieldsV1", "{\"f:data\":{\"f:x\":{}}}");
    json_decref(out);
    json_decref(cur);
}

static void test_server_apply_reapply_removes_dropped_fields(void **state)
{
    int code;
    const char *v1 = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: {a: '1', "
                     "b: '2'}\ndata: {x: '1', y: '2'}\n";
    const char *v2 = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels: {a: '1'}\n"
                     "data: {x: '1'}\n";
    json_t *first = apply(NULL, v1, "m", false, &code, NULL);
    assert_int_equal(code, 0);
    json_t *second = apply(first, v2, "m", false, &code, NULL);
    assert_int_equal(code, 0);
    kc_test_json_at(second, "metadata.labels", "{\"a\":\"1\"}");
    kc_test_json_at(second, "data", "{\"x\":\"1\"}");
    assert_int_equal(
        json_array_size(json_object_get(json_object_get(second, "metadata"), "managedFields")), 1);
    json_decref(second);
    json_decref(first);
}

static void test_server_apply_custom_resource_lists_keyed_by_name(void **state)
{
    int code;
    json_t *cur =
        kc_test_json_load("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{"
                          "\"name\":\"w\"},\"spec\":{\"items\":[{\"name\":\"a\",\"v\":1},{\"name\":"
                          "\"b\",\"v\":2}]}}");
    const char *body = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
                       "spec:\n  items:\n  - {name: b, v: 3}\n";
    json_t *out = apply(cur, body, "m", false, &code, NULL);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "spec.items", "[{\"name\":\"a\",\"v\":1},{\"name\":\"b\",\"v\":3}]");
    kc_test_json_at(out, "metadata.managedFields.0.fieldsV1",
                    "{\"f:spec\":{\"f:items\":{\"k:{\\\"name\\\":\\\"b\\\"}\":{\".\":{},"
                    "\"f:name\":{},\"f:v\":{}}}}}");
    json_decref(out);
    json_decref(cur);
}

static void test_server_apply_conflict_path_inside_keyed_list(void **state)
{
    json_t *cur = kc_test_json_load(
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"managedFields\":[{"
        "\"manager\":\"other\",\"operation\":\"Apply\",\"apiVersion\":\"v1\",\"fieldsType\":"
        "\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"web\\\"}\":"
        "{"
        "\".\":{},\"f:image\":{},\"f:name\":{}}}}}}]},\"spec\":{\"containers\":[{\"name\":\"web\","
        "\"image\":\"a\"}]}}");
    const char *body = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                       "  - {name: web, image: b}\n";
    int code;
    kc_error err = KC_ERROR_INIT;
    apply(cur, body, "me", false, &code, &err);
    assert_int_equal(code, KC_ECONFLICT);
    assert_int_equal(err.n_causes, 1);
    assert_string_equal(err.causes[0].field, ".spec.containers[name=\"web\"].image");
    kc_error_clear(&err);
    json_decref(cur);
}

static void test_server_apply_several_conflicts_grouped_by_manager(void **state)
{
    json_t *cur = kc_test_json_load(
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
        "\"managedFields\":[{\"manager\":\"b\",\"operation\":\"Apply\","
        "\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"
        "\"f:data\":{\"f:x\":{},\"f:y\":{}}}},{\"manager\":\"a\",\"operation\":"
        "\"Apply\",\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"
        "\"f:data\":{\"f:z\":{}}}}]},\"data\":{\"x\":\"1\",\"y\":\"2\",\"z\":\"3\"}}");
    const char *body = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
                       "data: {x: '9', y: '9', z: '9'}\n";
    int code;
    kc_error err = KC_ERROR_INIT;
    apply(cur, body, "me", false, &code, &err);
    assert_int_equal(code, KC_ECONFLICT);
    assert_int_equal(err.n_causes, 3);
    assert_string_equal(err.message,
                        "Apply failed with 3 conflicts: conflicts with \"a\" using v1:\n"
                        "- .data.z\nconflicts with \"b\" using v1:\n- .data.x\n- .data.y");
    kc_error_clear(&err);
    json_decref(cur);
}

/* ---- Update-operation bookkeeping (kc__managed_fields_update) ---- */

static void test_server_apply_update_entry_owns_changed_fields(void **state)
{
    json_t *obj =
        kc_test_json_load("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{"
                          "\"name\":\"web\"},\"spec\":{\"replicas\":1}}");
    assert_int_equal(kc__managed_fields_update(obj, NULL, "kubectl-create", NOW, NULL), 0);
    kc_test_json_at(obj, "metadata.managedFields",
                    "[{\"manager\":\"kubectl-create\",\"operation\":\"Update\",\"apiVersion\":"
                    "\"apps/v1\",\"time\":\"" NOW "\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"
                    "\"f:spec\":{\"f:replicas\":{}}}}]");
    json_decref(obj);
}

static void test_server_apply_update_then_apply_conflicts(void **state)
{
    json_t *obj =
        kc_test_json_load("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{"
                          "\"name\":\"web\"},\"spec\":{\"replicas\":1}}");
    assert_int_equal(kc__managed_fields_update(obj, NULL, "kubectl-create", NOW, NULL), 0);
    int code;
    kc_error err = KC_ERROR_INIT;
    apply(obj, DEPLOY_YAML, "kubectl", false, &code, &err);
    assert_int_equal(code, KC_ECONFLICT);
    assert_string_equal(err.message,
                        "Apply failed with 1 conflict: conflict with \"kubectl-create\" "
                        "using apps/v1 at " NOW ": .spec.replicas");
    kc_error_clear(&err);
    json_decref(obj);
}

static void test_server_apply_update_takes_fields_from_apply_manager(void **state)
{
    int code;
    json_t *applied = apply(NULL, DEPLOY_YAML, "kubectl", false, &code, NULL);
    assert_int_equal(code, 0);
    json_t *nu = json_deep_copy(applied);
    json_object_set_new(json_object_get(nu, "spec"), "replicas", json_integer(5));
    json_object_del(json_object_get(nu, "metadata"), "managedFields"); /* as clients send it */
    assert_int_equal(kc__managed_fields_update(nu, applied, "scaler", NOW, NULL), 0);
    json_t *mf = json_object_get(json_object_get(nu, "metadata"), "managedFields");
    assert_int_equal(json_array_size(mf), 2);
    /* The apply manager lost spec.replicas, the scaler owns it. */
    assert_null(json_object_get(
        json_object_get(json_object_get(json_array_get(mf, 0), "fieldsV1"), "f:spec"),
        "f:replicas"));
    kc_test_json_at(nu, "metadata.managedFields.1.fieldsV1", "{\"f:spec\":{\"f:replicas\":{}}}");
    /* Re-applying the old value is now a conflict with the scaler. */
    apply(nu, DEPLOY_YAML, "kubectl", false, &code, NULL);
    assert_int_equal(code, KC_ECONFLICT);
    json_decref(nu);
    json_decref(applied);
}

static void test_server_apply_update_without_changes_adds_no_entry(void **state)
{
    json_t *old =
        kc_test_json_load("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                          "\"c\"},\"data\":{\"a\":\"1\"}}");
    json_t *nu = json_deep_copy(old);
    assert_int_equal(kc__managed_fields_update(nu, old, "m", NOW, NULL), 0);
    kc_test_json_at(nu, "metadata.managedFields", "[]");
    json_decref(nu);
    json_decref(old);
}

static void test_server_apply_update_removed_fields_leave_sets(void **state)
{
    json_t *old =
        kc_test_json_load("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                          "\"c\",\"managedFields\":[{\"manager\":\"a\",\"operation\":\"Apply\","
                          "\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"
                          "\"f:data\":{\"f:a\":{}}}}]},\"data\":{\"a\":\"1\"}}");
    json_t *nu =
        kc_test_json_load("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                          "\"c\"},\"data\":{\"b\":\"2\"}}");
    assert_int_equal(kc__managed_fields_update(nu, old, "m", NOW, NULL), 0);
    json_t *mf = json_object_get(json_object_get(nu, "metadata"), "managedFields");
    assert_int_equal(json_array_size(mf), 1);
    kc_test_json_at(nu, "metadata.managedFields.0.manager", "\"m\"");
    kc_test_json_at(nu, "metadata.managedFields.0.fieldsV1", "{\"f:data\":{\"f:b\":{}}}");
    json_decref(nu);
    json_decref(old);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_apply_requires_field_manager),
        cmocka_unit_test(test_server_apply_creates_with_managed_fields),
        cmocka_unit_test(test_server_apply_accepts_json_bodies),
        cmocka_unit_test(test_server_apply_yaml_scalars_resolve_like_go_yaml),
        cmocka_unit_test(test_server_apply_bad_bodies_are_400),
        cmocka_unit_test(test_server_apply_deep_yaml_is_400),
        cmocka_unit_test(test_server_apply_merges_into_current),
        cmocka_unit_test(test_server_apply_conflict_with_other_manager_is_409),
        cmocka_unit_test(test_server_apply_conflict_names_update_time),
        cmocka_unit_test(test_server_apply_same_value_is_no_conflict),
        cmocka_unit_test(test_server_apply_force_takes_ownership),
        cmocka_unit_test(test_server_apply_force_keeps_other_fields_of_other_manager),
        cmocka_unit_test(test_server_apply_reapply_removes_dropped_fields),
        cmocka_unit_test(test_server_apply_custom_resource_lists_keyed_by_name),
        cmocka_unit_test(test_server_apply_conflict_path_inside_keyed_list),
        cmocka_unit_test(test_server_apply_several_conflicts_grouped_by_manager),
        cmocka_unit_test(test_server_apply_update_entry_owns_changed_fields),
        cmocka_unit_test(test_server_apply_update_then_apply_conflicts),
        cmocka_unit_test(test_server_apply_update_takes_fields_from_apply_manager),
        cmocka_unit_test(test_server_apply_update_without_changes_adds_no_entry),
        cmocka_unit_test(test_server_apply_update_removed_fields_leave_sets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
