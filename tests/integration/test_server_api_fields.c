/*
 * test_server_api_fields.c — managedFields "Update" entries of ordinary writes in the embedded
 * API server (spec §9 #46): POST, PUT, PUT /status and non-apply PATCH record the writer's
 * entry (manager from ?fieldManager, else the User-Agent prefix), so a later server-side apply
 * by another manager conflicts with them unless forced.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

#define DEP_PATH "/apis/apps/v1/namespaces/default/deployments"
#define APPLY    "application/apply-patch+yaml"
#define MERGE    "application/merge-patch+json"

static int setup(void **state)
{
    kc_server *s = ts_start();
    if (!s)
        return -1;
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    kc_server_free(*state);
    return 0;
}

/* The managedFields entry of manager (operation op, subresource sub or "" for none) in obj, or
 * NULL. Borrowed. */
static json_t *entry(json_t *obj, const char *manager, const char *op, const char *sub)
{
    size_t i;
    json_t *e;
    json_array_foreach(ts_j(obj, "metadata.managedFields"), i, e)
    {
        const char *es = json_string_value(json_object_get(e, "subresource"));
        if (!strcmp(ts_s(e, "manager"), manager) && !strcmp(ts_s(e, "operation"), op) &&
            !strcmp(es ? es : "", sub))
            return e;
    }
    return NULL;
}

static const char *cm_x(const char *name, const char *x)
{
    static char buf[256];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"},"
             "\"data\":{\"x\":\"%s\"}}",
             name, x);
    return buf;
}

static void test_server_fields_post_then_apply_conflicts_46(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(ts_post(s, CM_PATH "?fieldManager=alice", cm_x("c1", "1"), &r), 201);
    json_t *e = entry(r.json, "alice", "Update", "");
    assert_non_null(e);
    assert_string_equal(ts_s(e, "fieldsType"), "FieldsV1");
    assert_string_equal(ts_s(e, "apiVersion"), "v1");
    assert_non_null(ts_j(e, "fieldsV1.f:data.f:x"));
    assert_true(strlen(ts_s(e, "time")) > 0);
    ts_resp_free(&r);

    ts_req(s, "PATCH", CM_PATH "/c1?fieldManager=bob", APPLY, cm_x("c1", "2"), NULL, &r);
    assert_int_equal(r.status, 409);
    assert_string_equal(ts_s(r.json, "details.causes.0.reason"), "FieldManagerConflict");
    assert_string_equal(ts_s(r.json, "details.causes.0.field"), ".data.x");
    assert_non_null(strstr(ts_s(r.json, "details.causes.0.message"), "\"alice\""));
    ts_resp_free(&r);
}

static void test_server_fields_force_takes_field_from_update_owner_46(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    const char *body = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                       "\"c2\"},\"data\":{\"x\":\"1\",\"y\":\"1\"}}";
    assert_int_equal(ts_post(s, CM_PATH "?fieldManager=alice", body, &r), 201);
    ts_resp_free(&r);
    ts_req(s, "PATCH", CM_PATH "/c2?fieldManager=bob&force=true", APPLY, cm_x("c2", "2"), NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "data.x"), "2");
    json_t *a = entry(r.json, "alice", "Update", "");
    assert_non_null(a); /* still owns data.y */
    assert_null(ts_j(a, "fieldsV1.f:data.f:x"));
    assert_non_null(ts_j(a, "fieldsV1.f:data.f:y"));
    assert_non_null(ts_j(entry(r.json, "bob", "Apply", ""), "fieldsV1.f:data.f:x"));
    ts_resp_free(&r);
}

static void test_server_fields_manager_from_user_agent_46(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    const char *h[] = {"User-Agent: kubectl-client-side-apply/v1.30.0 (linux/amd64) kubernetes",
                       NULL};
    ts_req_h(s, "POST", CM_PATH, "application/json", cm_x("c3", "1"), NULL, h, &r);
    assert_int_equal(r.status, 201);
    assert_non_null(entry(r.json, "kubectl-client-side-apply", "Update", ""));
    ts_resp_free(&r);
    /* kubectl apply --server-side then names the client-side owner in its conflict */
    ts_req(s, "PATCH", CM_PATH "/c3?fieldManager=kubectl", APPLY, cm_x("c3", "2"), NULL, &r);
    assert_int_equal(r.status, 409);
    assert_non_null(
        strstr(ts_s(r.json, "details.causes.0.message"), "\"kubectl-client-side-apply\""));
    ts_resp_free(&r);
}

static void test_server_fields_put_records_update_46(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(ts_post(s, CM_PATH "?fieldManager=alice", cm_x("c4", "1"), &r), 201);
    ts_resp_free(&r);
    ts_req(s, "PUT", CM_PATH "/c4?fieldManager=carol", "application/json",
           "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c4\"},"
           "\"data\":{\"x\":\"1\",\"y\":\"2\"}}",
           NULL, &r);
    assert_int_equal(r.status, 200);
    json_t *c = entry(r.json, "carol", "Update", "");
    assert_non_null(c);
    assert_non_null(ts_j(c, "fieldsV1.f:data.f:y"));
    assert_null(ts_j(c, "fieldsV1.f:data.f:x")); /* unchanged: stays alice's */
    assert_non_null(ts_j(entry(r.json, "alice", "Update", ""), "fieldsV1.f:data.f:x"));
    ts_resp_free(&r);
}

static void test_server_fields_noop_put_keeps_entries_and_rv_46(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(ts_post(s, CM_PATH "?fieldManager=alice", cm_x("c5", "1"), &r), 201);
    char *before = json_dumps(ts_j(r.json, "metadata.managedFields"), JSON_SORT_KEYS);
    unsigned long long rv = ts_rv(r.json);
    ts_resp_free(&r);
    ts_req(s, "PUT", CM_PATH "/c5?fieldManager=alice", "application/json", cm_x("c5", "1"), NULL,
           &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(ts_rv(r.json), rv);
    char *after = json_dumps(ts_j(r.json, "metadata.managedFields"), JSON_SORT_KEYS);
    assert_string_equal(before, after);
    free(before);
    free(after);
    ts_resp_free(&r);
}

static void test_server_fields_status_update_records_subresource_46(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(
        ts_post(s, DEP_PATH "?fieldManager=alice",
                "{\"metadata\":{\"name\":\"d1\"},\"spec\":{\"replicas\":1,\"selector\":{"
                "\"matchLabels\":{\"app\":\"a\"}},\"template\":{\"metadata\":{\"labels\":{"
                "\"app\":\"a\"}},\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x\"}]}}}}",
                &r),
        201);
    ts_resp_free(&r);
    ts_req(s, "PUT", DEP_PATH "/d1/status?fieldManager=ctrl", "application/json",
           "{\"metadata\":{\"name\":\"d1\"},\"status\":{\"replicas\":1}}", NULL, &r);
    assert_int_equal(r.status, 200);
    json_t *st = entry(r.json, "ctrl", "Update", "status");
    assert_non_null(st);
    assert_string_equal(ts_s(st, "apiVersion"), "apps/v1");
    assert_non_null(ts_j(st, "fieldsV1.f:status.f:replicas"));
    assert_null(entry(r.json, "ctrl", "Update", ""));
    assert_non_null(ts_j(entry(r.json, "alice", "Update", ""), "fieldsV1.f:spec.f:replicas"));
    ts_resp_free(&r);
}

/* Server-side apply through /status: the applier's own Apply entry is stored with
 * subresource "status" and owns only status fields (non-status members of the body are
 * ignored, as upstream's status strategy resets them); the main resource's Apply entry stays;
 * a second status applier conflicts on the same field; a status apply of a missing object is
 * 404 (a subresource cannot create). */
static void test_server_fields_status_apply_keeps_own_entry_46(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    const char *dep =
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d2\"},"
        "\"spec\":{\"replicas\":1,\"selector\":{\"matchLabels\":{\"app\":\"a\"}},"
        "\"template\":{\"metadata\":{\"labels\":{\"app\":\"a\"}},\"spec\":{\"containers\":"
        "[{\"name\":\"a\",\"image\":\"x\"}]}}}}";
    ts_req(s, "PATCH", DEP_PATH "/d2?fieldManager=kubectl", APPLY, dep, NULL, &r);
    assert_int_equal(r.status, 201);
    ts_resp_free(&r);
    const char *st = "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{"
                     "\"name\":\"d2\",\"labels\":{\"ignored\":\"1\"}},\"spec\":{\"replicas\":5},"
                     "\"status\":{\"conditions\":[{\"type\":\"MyCond\",\"status\":\"True\"}]}}";
    ts_req(s, "PATCH", DEP_PATH "/d2/status?fieldManager=stat", APPLY, st, NULL, &r);
    assert_int_equal(r.status, 200);
    json_t *e = entry(r.json, "stat", "Apply", "status");
    assert_non_null(e);
    assert_non_null(ts_j(e, "fieldsV1.f:status.f:conditions"));
    assert_null(ts_j(e, "fieldsV1.f:spec"));
    assert_null(ts_j(e, "fieldsV1.f:metadata"));
    assert_null(entry(r.json, "stat", "Apply", ""));
    assert_non_null(ts_j(entry(r.json, "kubectl", "Apply", ""), "fieldsV1.f:spec.f:replicas"));
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.replicas")), 1);
    assert_null(ts_j(r.json, "metadata.labels.ignored"));
    assert_string_equal(ts_s(r.json, "status.conditions.0.type"), "MyCond");
    ts_resp_free(&r);
    /* the same apply again: no-op, the entry kept */
    ts_req(s, "PATCH", DEP_PATH "/d2/status?fieldManager=stat", APPLY, st, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(entry(r.json, "stat", "Apply", "status"));
    ts_resp_free(&r);
    /* another status applier setting the same condition differently conflicts */
    ts_req(s, "PATCH", DEP_PATH "/d2/status?fieldManager=other", APPLY,
           "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d2\"},"
           "\"status\":{\"conditions\":[{\"type\":\"MyCond\",\"status\":\"False\"}]}}",
           NULL, &r);
    assert_int_equal(r.status, 409);
    assert_non_null(strstr(ts_s(r.json, "details.causes.0.message"), "\"stat\""));
    ts_resp_free(&r);
    ts_req(s, "PATCH", DEP_PATH "/nope/status?fieldManager=stat", APPLY,
           "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"nope\"},"
           "\"status\":{\"replicas\":1}}",
           NULL, &r);
    assert_int_equal(r.status, 404);
    ts_resp_free(&r);
}

static void test_server_fields_merge_patch_records_update_46(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(ts_post(s, CM_PATH "?fieldManager=alice", cm_x("c6", "1"), &r), 201);
    ts_resp_free(&r);
    ts_req(s, "PATCH", CM_PATH "/c6?fieldManager=dave", MERGE, "{\"data\":{\"x\":\"9\"}}", NULL,
           &r);
    assert_int_equal(r.status, 200);
    assert_non_null(ts_j(entry(r.json, "dave", "Update", ""), "fieldsV1.f:data.f:x"));
    assert_null(entry(r.json, "alice", "Update", "")); /* its only field moved to dave */
    ts_resp_free(&r);
}

static void test_server_fields_manager_too_long_422(void **state)
{
    char path[512];
    snprintf(path, sizeof(path), CM_PATH "?fieldManager=%0129d", 0);
    ts_resp r;
    assert_int_equal(ts_post(*state, path, cm_x("c7", "1"), &r), 422);
    ts_resp_free(&r);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_fields_post_then_apply_conflicts_46),
        cmocka_unit_test(test_server_fields_force_takes_field_from_update_owner_46),
        cmocka_unit_test(test_server_fields_manager_from_user_agent_46),
        cmocka_unit_test(test_server_fields_put_records_update_46),
        cmocka_unit_test(test_server_fields_noop_put_keeps_entries_and_rv_46),
        cmocka_unit_test(test_server_fields_status_update_records_subresource_46),
        cmocka_unit_test(test_server_fields_status_apply_keeps_own_entry_46),
        cmocka_unit_test(test_server_fields_merge_patch_records_update_46),
        cmocka_unit_test(test_server_fields_manager_too_long_422),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    curl_global_cleanup();
    return rc;
}
