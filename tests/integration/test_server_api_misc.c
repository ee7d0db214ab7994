/*
 * test_server_api_misc.c — Table and PartialObjectMetadata output (#23, #94, #95), injected
 * faults (#96–#98), the admin endpoint, compaction (#100), seeding (a refused fixture names its
 * file), a taken listen address (the system's reason), TLS and the scale subresource of the
 * embedded server.
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

static int setup(void **state)
{
    kc_server *s = ts_start();
    if (!s)
        return -1;
    ts_resp r;
    ts_post(s, CM_PATH, ts_cm("t1", "{\"a\":\"b\"}"), &r);
    ts_resp_free(&r);
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    kc_server_free(*state);
    return 0;
}

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

static void test_server_injected_429_retry_after_96_97(void **state)
{
    kc_server *s = *state;
    kc_server_faults f;
    memset(&f, 0, sizeof(f));
    f.rate_429[KC_SERVER_VERB_GET] = 1.0;
    f.retry_after_s = 1;
    kc_server_set_faults(s, &f);
    ts_resp r;
    assert_int_equal(ts_get(s, CM_PATH "/t1", &r), 429);
    assert_string_equal(r.retry_after, "1");
    assert_string_equal(ts_s(r.json, "reason"), "TooManyRequests");
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, CM_PATH, &r), 200); /* LIST not affected */
    ts_resp_free(&r);
    f.retry_after_s = 0;
    kc_server_set_faults(s, &f);
    assert_int_equal(ts_get(s, CM_PATH "/t1", &r), 429);
    assert_string_equal(r.retry_after, "");
    ts_resp_free(&r);
    memset(&f, 0, sizeof(f));
    kc_server_set_faults(s, &f);
    assert_int_equal(ts_get(s, CM_PATH "/t1", &r), 200);
    ts_resp_free(&r);
}

static void test_server_injected_503_and_500_98(void **state)
{
    kc_server *s = *state;
    kc_server_faults f;
    memset(&f, 0, sizeof(f));
    f.rate_503[KC_SERVER_VERB_LIST] = 1.0;
    f.retry_after_s = 2;
    kc_server_set_faults(s, &f);
    ts_resp r;
    assert_int_equal(ts_get(s, CM_PATH, &r), 503);
    assert_string_equal(r.retry_after, "2");
    ts_resp_free(&r);
    memset(&f, 0, sizeof(f));
    f.rate_500[KC_SERVER_VERB_CREATE] = 1.0;
    kc_server_set_faults(s, &f);
    assert_int_equal(ts_post(s, CM_PATH, ts_cm("t98", NULL), &r), 500);
    assert_string_equal(r.retry_after, "");
    ts_resp_free(&r);
    memset(&f, 0, sizeof(f));
    kc_server_set_faults(s, &f);
}

static void test_server_admin_endpoint(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    assert_int_equal(ts_get(s, "/admin/faults", &r), 200);
    assert_true(json_is_object(r.json));
    ts_resp_free(&r);
    ts_req(s, "PUT", "/admin/faults", "application/json", "{\"watchCloseEvery\":7}", NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    kc_server_faults f;
    kc_server_get_faults(s, &f);
    assert_int_equal(f.watch_close_every, 7);
    memset(&f, 0, sizeof(f));
    kc_server_set_faults(s, &f);
    ts_req(s, "POST", "/admin/compact", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    ts_resp_free(&r);
    ts_req(s, "GET", "/admin/compact", NULL, NULL, NULL, &r);
    assert_int_equal(r.status, 405);
    ts_resp_free(&r);
}

static void test_server_compaction_expires_watch_100(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    ts_post(s, CM_PATH, ts_cm("t100", NULL), &r);
    char path[256];
    snprintf(path, sizeof(path), CM_PATH "?watch=1&resourceVersion=%llu", ts_rv(r.json) - 1);
    ts_resp_free(&r);
    ts_post(s, CM_PATH, ts_cm("t100b", NULL), &r);
    ts_resp_free(&r);
    kc_server_compact(s);
    ts_watch *w = ts_watch_start(s, path);
    json_t *ev = ts_watch_next(w, 3000);
    assert_string_equal(ts_s(ev, "type"), "ERROR");
    assert_int_equal(json_integer_value(ts_j(ev, "object.code")), 410);
    json_decref(ev);
    ts_watch_free(w);
}

static void test_server_seed_spec(void **state)
{
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.seed_spec = "configmaps=25";
    kc_server *s = ts_start_opts(&o);
    assert_non_null(s);
    ts_resp r;
    assert_int_equal(ts_get(s, "/api/v1/configmaps", &r), 200);
    assert_int_equal(json_array_size(ts_j(r.json, "items")), 25);
    ts_resp_free(&r);
    kc_server_free(s);
}

/* A fixture the create path refuses stops kc_server_new, naming the file, the object and why
 * (issue 16 #15); one that already exists (the built-in "default") is skipped. */
static void test_server_seed_refused_fixture_names_file(void **state)
{
    char dir[] = "/tmp/kc_fx_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], ok[256];
    snprintf(ok, sizeof ok, "%s/10-ok.yaml", dir);
    snprintf(path, sizeof path, "%s/20-bad.yaml", dir);
    FILE *f = fopen(ok, "w");
    assert_non_null(f);
    fputs("apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n", f);
    fclose(f);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lost, namespace: nowhere}\n", f);
    fclose(f);
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.listen = "127.0.0.1:0";
    o.quiet = true;
    o.seed_dir = dir;
    kc_server *s = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_server_new(&o, &s, &err), KC_ENOTFOUND);
    assert_null(s);
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, "ConfigMap \"lost\""));
    assert_non_null(strstr(err.message, "namespaces \"nowhere\" not found"));
    kc_error_clear(&err);
    unlink(path);
    o.seed_dir = dir; /* only the existing namespace left: the start goes on */
    assert_int_equal(kc_server_new(&o, &s, &err), 0);
    kc_server_free(s);
    unlink(ok);
    rmdir(dir);
}

/* A taken address: kc_server_start says which and why (issue 16 #15). */
static void test_server_listen_error_has_reason(void **state)
{
    char listen[64];
    const char *url = kc_server_url(*state);
    snprintf(listen, sizeof listen, "%s", strstr(url, "//") + 2);
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.listen = listen;
    o.quiet = true;
    kc_server *s = NULL;
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_server_new(&o, &s, &err), 0);
    assert_int_equal(kc_server_start(s, &err), KC_EIO);
    assert_non_null(strstr(err.message, listen));
    assert_non_null(strstr(err.message, "Address already in use"));
    kc_error_clear(&err);
    kc_server_free(s);
}

static void test_server_tls(void **state)
{
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.tls = true;
    kc_server *s = ts_start_opts(&o);
    assert_non_null(s);
    assert_memory_equal(kc_server_url(s), "https://", 8);
    const char *ca = kc_server_ca_pem(s);
    assert_non_null(ca);
    CURL *c = curl_easy_init();
    char url[256];
    snprintf(url, sizeof(url), "%s/api", kc_server_url(s));
    struct curl_blob blob = {(void *)ca, strlen(ca), CURL_BLOB_COPY};
    ts_resp body;
    memset(&body, 0, sizeof(body));
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, ts_body_cb);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    long st = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &st);
    assert_int_equal(st, 200);
    curl_easy_cleanup(c);
    ts_resp_free(&body);
    kc_server_free(s);
}

static void test_server_scale_subresource(void **state)
{
    kc_server *s = *state;
    ts_resp r;
    const char *dep = "/apis/apps/v1/namespaces/default/deployments";
    assert_int_equal(ts_post(s, dep,
                             "{\"metadata\":{\"name\":\"sc\"},\"spec\":{\"replicas\":1,"
                             "\"selector\":{\"matchLabels\":{\"app\":\"sc\"}}}}",
                             &r),
                     201);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/apis/apps/v1/namespaces/default/deployments/sc/scale", &r), 200);
    assert_string_equal(ts_s(r.json, "kind"), "Scale");
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.replicas")), 1);
    assert_string_equal(ts_s(r.json, "status.selector"), "app=sc");
    ts_resp_free(&r);
    ts_req(s, "PATCH", "/apis/apps/v1/namespaces/default/deployments/sc/scale",
           "application/merge-patch+json", "{\"spec\":{\"replicas\":4}}", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.replicas")), 4);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, "/apis/apps/v1/namespaces/default/deployments/sc", &r), 200);
    assert_int_equal(json_integer_value(ts_j(r.json, "spec.replicas")), 4);
    assert_int_equal(json_integer_value(ts_j(r.json, "metadata.generation")), 2);
    ts_resp_free(&r);
    assert_int_equal(ts_get(s, CM_PATH "/t1/scale", &r), 404);
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
        cmocka_unit_test(test_server_injected_429_retry_after_96_97),
        cmocka_unit_test(test_server_injected_503_and_500_98),
        cmocka_unit_test(test_server_admin_endpoint),
        cmocka_unit_test(test_server_compaction_expires_watch_100),
        cmocka_unit_test(test_server_seed_spec),
        cmocka_unit_test(test_server_seed_refused_fixture_names_file),
        cmocka_unit_test(test_server_listen_error_has_reason),
        cmocka_unit_test(test_server_tls),
        cmocka_unit_test(test_server_scale_subresource),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    curl_global_cleanup();
    return rc;
}
