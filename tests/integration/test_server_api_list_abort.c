/*
 * test_server_api_list_abort.c — a client that goes away in the middle of a large LIST body (an
 * informer cancelling its LIST when its shard ranges change, a killed process) must cost the
 * embedded server nothing: no crash, no leak (ASan), the next request answered. Regression: a
 * LIST sent as a libmicrohttpd iovec (0.9.75) aborted the process in MHD_destroy_response
 * ("Failed to destroy mutex") when the connection closed mid-transfer; the body is a content
 * callback again (src/server/api/encode.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

#include <curl/curl.h>

/* Accept the first ~64 KiB of the body, then abort the transfer (curl closes the socket). */
static size_t take_some(char *p, size_t sz, size_t n, void *ud)
{
    (void)p;
    size_t *got = ud;
    *got += sz * n;
    return *got > 64 * 1024 ? 0 : sz * n;
}

static void test_server_list_client_leaves_mid_body(void **state)
{
    (void)state;
    kc_server_opts o;
    memset(&o, 0, sizeof o);
    o.seed_spec = "pods=3000:ns=default"; /* ~18 MB LIST: many socket writes */
    kc_server *s = ts_start_opts(&o);
    assert_non_null(s);
    char url[512];
    snprintf(url, sizeof url, "%s/api/v1/namespaces/default/pods", kc_server_url(s));
    for (int i = 0; i < 40; i++) {
        CURL *h = curl_easy_init();
        assert_non_null(h);
        size_t got = 0;
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, take_some);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
        curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
        CURLcode rc = curl_easy_perform(h);
        curl_easy_cleanup(h);
        assert_int_equal(rc, CURLE_WRITE_ERROR); /* we left; the server saw the close */
        assert_true(got > 64 * 1024);
    }
    ts_resp r;
    assert_int_equal(ts_get(s, "/api/v1/namespaces/default/pods?limit=1", &r), 200);
    assert_int_equal(json_array_size(ts_j(r.json, "items")), 1);
    ts_resp_free(&r);
    kc_server_free(s); /* every reply of the aborted LISTs destroyed by now */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_list_client_leaves_mid_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
