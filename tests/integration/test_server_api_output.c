/*
 * test_server_api_output.c — Table and PartialObjectMetadata output of the embedded server (#23,
 * #94, #95): get, list, watch columns sent once, metadata-only get and list. (Split from the former
 * test_server_api_misc.c, one concept per file.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

#include <unistd.h>

#define TABLE "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
#define POM   "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
#define POML  "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

static void test_server_table_get_23(void **state)
{
    ts_resp r;
    ts_req(*state, "GET", CM_PATH "/t1", NULL, NULL, TABLE, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "kind"), "Table");
    assert_int_equal(json_array_size(ts_j(r.json, "rows")), 1);
    ts_resp_free(&r);
}

static void test_server_table_list_94(void **state)
{
    ts_resp r;
    ts_req(*state, "GET", "/api/v1/configmaps", NULL, NULL, TABLE, &r);
    assert_int_equal(r.status, 200);
    assert_true(json_array_size(ts_j(r.json, "columnDefinitions")) >= 1);
    json_t *obj = ts_j(r.json, "rows.0.object");
    assert_string_equal(ts_s(obj, "kind"), "PartialObjectMetadata");
    assert_string_equal(ts_s(obj, "metadata.name"), "t1");
    assert_string_equal(ts_s(obj, "metadata.namespace"), "default");
    assert_string_equal(ts_s(obj, "metadata.labels.a"), "b");
    ts_resp_free(&r);
}

static void test_server_table_watch_columns_once_95(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    ts_post(s, CM_PATH, ts_cm("t95", NULL), &r);
    ts_resp_free(&r);
    /* curl-based follower cannot set Accept; use the raw request helper with a timeout */
    CURL *c = curl_easy_init();
    char url[512];
    snprintf(url, sizeof(url), "%s" CM_PATH "?watch=1&resourceVersion=0&timeoutSeconds=1",
             kc_server_url(s));
    struct curl_slist *h = curl_slist_append(NULL, "Accept: " TABLE);
    ts_resp body;
    memset(&body, 0, sizeof(body));
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, ts_body_cb);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    char *save = NULL;
    int n = 0;
    for (char *line = strtok_r(body.body, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_t *ev = json_loads(line, 0, NULL);
        assert_string_equal(ts_s(ev, "object.kind"), "Table");
        if (n == 0)
            assert_non_null(ts_j(ev, "object.columnDefinitions"));
        else
            assert_true(json_array_size(ts_j(ev, "object.columnDefinitions")) == 0);
        json_decref(ev);
        n++;
    }
    assert_int_equal(n, 2);
    ts_resp_free(&body);
}

static void test_server_partial_metadata_get_and_list(void **state)
{
    ts_resp r;
    ts_req(*state, "GET", CM_PATH "/t1", NULL, NULL, POM, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "kind"), "PartialObjectMetadata");
    assert_string_equal(ts_s(r.json, "metadata.name"), "t1");
    assert_null(ts_j(r.json, "data"));
    ts_resp_free(&r);
    ts_req(*state, "GET", CM_PATH, NULL, NULL, POML, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(ts_s(r.json, "kind"), "PartialObjectMetadataList");
    assert_string_equal(ts_s(r.json, "items.0.kind"), "PartialObjectMetadata");
    assert_true(ts_rv(r.json) > 0);
    ts_resp_free(&r);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_table_get_23),
        cmocka_unit_test(test_server_table_list_94),
        cmocka_unit_test(test_server_table_watch_columns_once_95),
        cmocka_unit_test(test_server_partial_metadata_get_and_list),
    };
    int rc = cmocka_run_group_tests(tests, ts_group_setup_t1, ts_group_teardown);
    curl_global_cleanup();
    return rc;
}
