/*
 * test_server_api_listen.c — how the embedded server listens: a taken address fails with the
 * system's reason; TLS. (Split from the former test_server_api_misc.c, one concept per file.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "test_server_util.h"

#include <unistd.h>

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

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_listen_error_has_reason),
        cmocka_unit_test(test_server_tls),
    };
    int rc = cmocka_run_group_tests(tests, ts_group_setup_t1, ts_group_teardown);
    curl_global_cleanup();
    return rc;
}
