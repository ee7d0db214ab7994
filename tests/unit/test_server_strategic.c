/* test_server_strategic.c — strategic merge patch for built-in kinds (#40). */
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
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"app\":"
    "\"web\"},\"finalizers\":[\"a\"]},\"spec\":{\"containers\":[{\"name\":\"web\",\"image\":"
    "\"nginx:1\",\"ports\":[{\"containerPort\":80},{\"containerPort\":53,\"protocol\":\"UDP\"}],"
    "\"env\":[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B\",\"value\":\"2\"}],\"volumeMounts\":["
    "{"
    "\"name\":\"v\",\"mountPath\":\"/data\"}]},{\"name\":\"side\",\"image\":\"busybox\"}],"
    "\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}}],\"tolerations\":[{\"key\":\"k1\"}]}}";

static json_t *smp(const char *doc, const char *kind, const char *body, int *code)
{
    json_t *cur = kc_test_json_load(doc);
    json_t *out = NULL;
    *code = kc__patch_apply(KC__PATCH_STRATEGIC, cur, body, strlen(body), kind, true, &out, NULL);
    json_decref(cur);
    return out;
}

static void test_server_strategic_containers_merge_by_name(void **state)
{
    int code;
    json_t *out = smp(POD, "Pod",
                      "{\"spec\":{\"containers\":[{\"name\":\"side\",\"image\":\"busybox:2\"},{"
                      "\"name\":\"new\",\"image\":\"x\"}]}}",
                      &code);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "spec.containers.0.image", "\"nginx:1\"");
    kc_test_json_at(out, "spec.containers.1", "{\"name\":\"side\",\"image\":\"busybox:2\"}");
    kc_test_json_at(out, "spec.containers.2", "{\"name\":\"new\",\"image\":\"x\"}");
    json_decref(out);
}

static void test_server_strategic_env_and_mounts_merge_by_key(void **state)
{
    int code;
    json_t *out = smp(POD, "Pod",
                      "{\"spec\":{\"containers\":[{\"name\":\"web\",\"env\":[{\"name\":\"B\","
                      "\"value\":\"3\"}],\"volumeMounts\":[{\"mountPath\":\"/data\","
                      "\"readOnly\":true}]}]}}",
                      &code);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "spec.containers.0.env",
                    "[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B\",\"value\":\"3\"}]");
    kc_test_json_at(out, "spec.containers.0.volumeMounts",
                    "[{\"name\":\"v\",\"mountPath\":\"/data\",\"readOnly\":true}]");
    json_decref(out);
}

static void test_server_strategic_container_ports_key_includes_protocol(void **state)
{
    int code;
    json_t *out = smp(POD, "Pod",
                      "{\"spec\":{\"containers\":[{\"name\":\"web\",\"ports\":[{"
                      "\"containerPort\":80,\"protocol\":\"TCP\",\"name\":\"http\"},{"
                      "\"containerPort\":53,\"protocol\":\"TCP\"}]}]}}",
                      &code);
    assert_int_equal(code, 0);
    /* 80 (no protocol = TCP) merged; 53/TCP is a new port beside 53/UDP. */
    kc_test_json_at(out, "spec.containers.0.ports",
                    "[{\"containerPort\":80,\"protocol\":\"TCP\",\"name\":\"http\"},"
                    "{\"containerPort\":53,\"protocol\":\"UDP\"},"
                    "{\"containerPort\":53,\"protocol\":\"TCP\"}]");
    json_decref(out);
}

static void test_server_strategic_service_ports_merge_by_port(void **state)
{
    const char *svc =
        "{\"kind\":\"Service\",\"spec\":{\"ports\":[{\"port\":80,\"targetPort\":8080},"
        "{\"port\":443}]}}";
    int code;
    json_t *out =
        smp(svc, "Service", "{\"spec\":{\"ports\":[{\"port\":80,\"targetPort\":9090}]}}", &code);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "spec.ports", "[{\"port\":80,\"targetPort\":9090},{\"port\":443}]");
    json_decref(out);
}

static void test_server_strategic_volumes_merge_and_tolerations_replace(void **state)
{
    int code;
    json_t *out = smp(POD, "Pod",
                      "{\"spec\":{\"volumes\":[{\"name\":\"w\",\"emptyDir\":{}}],\"tolerations\":[{"
                      "\"key\":\"k2\"}]}}",
                      &code);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "spec.volumes",
                    "[{\"name\":\"v\",\"emptyDir\":{}},{\"name\":\"w\",\"emptyDir\":{}}]");
    kc_test_json_at(out, "spec.tolerations", "[{\"key\":\"k2\"}]");
    json_decref(out);
}

static void test_server_strategic_patch_delete_removes_element(void **state)
{
    int code;
    json_t *out =
        smp(POD, "Pod", "{\"spec\":{\"containers\":[{\"name\":\"side\",\"$patch\":\"delete\"}]}}",
            &code);
    assert_int_equal(code, 0);
    assert_int_equal(json_array_size(json_object_get(json_object_get(out, "spec"), "containers")),
                     1);
    kc_test_json_at(out, "spec.containers.0.name", "\"web\"");
    json_decref(out);
}

static void test_server_strategic_patch_replace_on_list(void **state)
{
    int code;
    json_t *out =
        smp(POD, "Pod",
            "{\"spec\":{\"containers\":[{\"name\":\"only\"},{\"$patch\":\"replace\"}]}}", &code);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "spec.containers", "[{\"name\":\"only\"}]");
    json_decref(out);
}

static void test_server_strategic_patch_replace_on_map(void **state)
{
    int code;
    json_t *out =
        smp(POD, "Pod", "{\"metadata\":{\"labels\":{\"$patch\":\"replace\",\"x\":\"y\"}}}", &code);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "metadata.labels", "{\"x\":\"y\"}");
    json_decref(out);
}

static void test_server_strategic_patch_delete_on_map(void **state)
{
    int code;
    json_t *out = smp(POD, "Pod", "{\"metadata\":{\"labels\":{\"$patch\":\"delete\"}}}", &code);
    assert_int_equal(code, 0);
    assert_null(json_object_get(json_object_get(out, "metadata"), "labels"));
    json_decref(out);
}

static void test_server_strategic_directives_are_stripped(void **state)
{
    int code;
    json_t *out = smp(POD, "Pod",
                      "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"side\"},{\"name\":"
                      "\"web\"}],\"containers\":[{\"name\":"
                      "\"side\",\"image\":\"b2\"}],\"newMap\":{\"$patch\":\"merge\",\"k\":1}}}",
                      &code);
    assert_int_equal(code, 0);
    json_t *spec = json_object_get(out, "spec");
    assert_null(json_object_get(spec, "$setElementOrder/containers"));
    assert_null(json_object_get(spec, "$retainKeys"));
    kc_test_json_at(out, "spec.newMap", "{\"k\":1}");
    /* order kept: web first */
    kc_test_json_at(out, "spec.containers.0.name", "\"web\"");
    json_decref(out);
}

static void test_server_strategic_finalizers_union_and_delete_from_primitive_list(void **state)
{
    int code;
    json_t *out = smp(POD, "Pod", "{\"metadata\":{\"finalizers\":[\"b\",\"a\"]}}", &code);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "metadata.finalizers", "[\"a\",\"b\"]");
    json_decref(out);
    out =
        smp(POD, "Pod", "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"a\"]}}", &code);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "metadata.finalizers", "[]");
    json_decref(out);
}

static void test_server_strategic_null_deletes_and_scalars_replace(void **state)
{
    int code;
    json_t *out = smp(POD, "Pod",
                      "{\"metadata\":{\"labels\":{\"app\":null,\"v\":\"2\"}},\"spec\":{"
                      "\"tolerations\":null}}",
                      &code);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "metadata.labels", "{\"v\":\"2\"}");
    assert_null(json_object_get(json_object_get(out, "spec"), "tolerations"));
    json_decref(out);
}

static void test_server_strategic_missing_merge_key_is_400(void **state)
{
    int code;
    assert_null(smp(POD, "Pod", "{\"spec\":{\"containers\":[{\"image\":\"x\"}]}}", &code));
    assert_int_equal(code, KC_EBADREQUEST);
    assert_null(smp(POD, "Pod", "{\"spec\":{\"containers\":[\"x\"]}}", &code));
    assert_int_equal(code, KC_EBADREQUEST);
    assert_null(smp(POD, "Pod", "{\"spec\":{\"$patch\":\"explode\"}}", &code));
    assert_int_equal(code, KC_EBADREQUEST);
}

static void test_server_strategic_custom_resource_is_415(void **state)
{
    json_t *cur = kc_test_json_load("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\"}");
    json_t *out = NULL;
    kc_error err = KC_ERROR_INIT;
    const char *body = "{\"spec\":{}}";
    assert_int_equal(
        kc__patch_apply(KC__PATCH_STRATEGIC, cur, body, strlen(body), "Widget", false, &out, &err),
        KC_EMEDIATYPE);
    assert_null(out);
    assert_int_equal(err.http_status, 415);
    assert_string_equal(err.message,
                        "the body of the request was in an unknown format - accepted media types "
                        "include: application/json-patch+json, application/merge-patch+json, "
                        "application/apply-patch+yaml");
    kc_error_clear(&err);
    json_decref(cur);
}

static void test_server_strategic_unknown_lists_of_other_kinds_replace(void **state)
{
    /* "ports" under a Deployment's spec is not a Service port list: replaced. */
    const char *d = "{\"kind\":\"Thing\",\"spec\":{\"ports\":[{\"port\":1},{\"port\":2}]}}";
    int code;
    json_t *out = smp(d, "Thing", "{\"spec\":{\"ports\":[{\"port\":3}]}}", &code);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "spec.ports", "[{\"port\":3}]");
    json_decref(out);
}

static void test_server_strategic_retain_keys_clears_unlisted(void **state)
{
    int code;
    json_t *out = smp(POD, "Pod",
                      "{\"spec\":{\"volumes\":[{\"name\":\"v\",\"$retainKeys\":[\"name\","
                      "\"configMap\"],\"configMap\":{\"name\":\"cm\"}}]}}",
                      &code);
    assert_int_equal(code, 0);
    kc_test_json_at(out, "spec.volumes", "[{\"name\":\"v\",\"configMap\":{\"name\":\"cm\"}}]");
    json_decref(out);
    assert_null(smp(POD, "Pod", "{\"spec\":{\"$retainKeys\":\"x\"}}", &code));
    assert_int_equal(code, KC_EBADREQUEST);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_strategic_containers_merge_by_name),
        cmocka_unit_test(test_server_strategic_env_and_mounts_merge_by_key),
        cmocka_unit_test(test_server_strategic_container_ports_key_includes_protocol),
        cmocka_unit_test(test_server_strategic_service_ports_merge_by_port),
        cmocka_unit_test(test_server_strategic_volumes_merge_and_tolerations_replace),
        cmocka_unit_test(test_server_strategic_patch_delete_removes_element),
        cmocka_unit_test(test_server_strategic_patch_replace_on_list),
        cmocka_unit_test(test_server_strategic_patch_replace_on_map),
        cmocka_unit_test(test_server_strategic_patch_delete_on_map),
        cmocka_unit_test(test_server_strategic_directives_are_stripped),
        cmocka_unit_test(test_server_strategic_retain_keys_clears_unlisted),
        cmocka_unit_test(test_server_strategic_finalizers_union_and_delete_from_primitive_list),
        cmocka_unit_test(test_server_strategic_null_deletes_and_scalars_replace),
        cmocka_unit_test(test_server_strategic_missing_merge_key_is_400),
        cmocka_unit_test(test_server_strategic_custom_resource_is_415),
        cmocka_unit_test(test_server_strategic_unknown_lists_of_other_kinds_replace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
