/*
 * test_server_api_faults.c — injected faults of the embedded server (#96–#98: 429 with Retry-After,
 * 503, 500), its admin endpoint, and compaction expiring a watch (#100). (Split from the former
 * test_server_api_misc.c, one concept per file.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

#include <unistd.h>

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

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_injected_429_retry_after_96_97),
        cmocka_unit_test(test_server_injected_503_and_500_98),
        cmocka_unit_test(test_server_admin_endpoint),
        cmocka_unit_test(test_server_compaction_expires_watch_100),
    };
    int rc = cmocka_run_group_tests(tests, ts_group_setup_t1, ts_group_teardown);
    curl_global_cleanup();
    return rc;
}
