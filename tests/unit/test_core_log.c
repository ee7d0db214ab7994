/* test_core_log.c — log levels from KCACHE_LOG, line output on stderr, secret redaction. */
#include "core/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static void expect_redacted(const char *in, const char *want)
{
    char *got = kc__redact(in);
    assert_non_null(got);
    if (strcmp(got, want) != 0)
        fail_msg("redact(\"%s\")\n  got  \"%s\"\n  want \"%s\"", in, got, want);
    free(got);
}

static void test_core_log_level_parse(void **state)
{
    assert_int_equal(kc__log_level_parse("error"), KC__LOG_ERROR);
    assert_int_equal(kc__log_level_parse("WARN"), KC__LOG_WARN);
    assert_int_equal(kc__log_level_parse("warning"), KC__LOG_WARN);
    assert_int_equal(kc__log_level_parse("info"), KC__LOG_INFO);
    assert_int_equal(kc__log_level_parse("Debug"), KC__LOG_DEBUG);
    assert_int_equal(kc__log_level_parse("3"), KC__LOG_DEBUG);
    assert_int_equal(kc__log_level_parse(NULL), KC__LOG_WARN);
    assert_int_equal(kc__log_level_parse(""), KC__LOG_WARN);
    assert_int_equal(kc__log_level_parse("verbose"), KC__LOG_WARN);
}

static void test_core_log_level_comes_from_env(void **state)
{
    /* main() sets KCACHE_LOG=info before the first log call. */
    assert_int_equal(kc__log_level(), KC__LOG_INFO);
    assert_true(kc__log_enabled(KC__LOG_WARN));
    assert_true(kc__log_enabled(KC__LOG_INFO));
    assert_false(kc__log_enabled(KC__LOG_DEBUG));
}

/* Runs fn with stderr redirected to a temp file and returns what was written. */
static char *capture_stderr(void (*fn)(void))
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fileno(tmp), STDERR_FILENO);
    fn();
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    long n = ftell(tmp);
    char *out = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
    rewind(tmp);
    size_t got = fread(out, 1, (size_t)(n > 0 ? n : 0), tmp);
    out[got] = '\0';
    fclose(tmp);
    return out;
}

static void log_some(void)
{
    kc__log(KC__LOG_WARN, "watch restarted after %d errors", 3);
    KC__LOG_DEBUG("invisible %s", "debug");
    kc__log(KC__LOG_INFO, "sending Authorization: Bearer abc.def.ghi");
}

static void test_core_log_writes_enabled_lines_redacted(void **state)
{
    char *out = capture_stderr(log_some);
    assert_string_equal(out, "kcache warn: watch restarted after 3 errors\n"
                             "kcache info: sending Authorization: ***\n");
    free(out);
}

static void test_core_log_redact_authorization_header(void **state)
{
    expect_redacted("Authorization: Bearer eyJhbGciOi.x.y", "Authorization: ***");
    expect_redacted("authorization:Basic dXNlcjpwYXNz\r\nAccept: */*",
                    "authorization:***\r\nAccept: */*");
    expect_redacted("Proxy-Authorization: Basic Zm9v", "Proxy-Authorization: ***");
}

static void test_core_log_redact_bearer_anywhere(void **state)
{
    expect_redacted("using bearer sha256~abcdef for user", "using bearer *** for user");
    expect_redacted("[Bearer tok123]", "[Bearer ***");
    expect_redacted("Bearer ", "Bearer ");
}

static void test_core_log_redact_key_values(void **state)
{
    expect_redacted("user=bob&password=hunter2&x=1", "user=bob&password=***&x=1");
    expect_redacted("{\"token\":\"s3cr3t\",\"a\":1}", "{\"token\":\"***\",\"a\":1}");
    expect_redacted("client-key-data: LS0tLS1CRUdJTi", "client-key-data: ***");
    expect_redacted("access_token=abc def", "access_token=*** def");
    expect_redacted("secret: 'x y z'", "secret: '***'");
    expect_redacted("tokens: 5, secretName: s", "tokens: 5, secretName: s");
}

static void test_core_log_redact_url_userinfo(void **state)
{
    expect_redacted("GET https://admin:pa55@example.com:6443/api",
                    "GET https://admin:***@example.com:6443/api");
    expect_redacted("https://example.com:6443/api?x=1", "https://example.com:6443/api?x=1");
}

static void test_core_log_redact_leaves_plain_text(void **state)
{
    expect_redacted("", "");
    expect_redacted("GET /api/v1/pods?watch=1 200", "GET /api/v1/pods?watch=1 200");
    assert_null(kc__redact(NULL));
}

static void test_core_log_redact_buf_appends(void **state)
{
    kc__buf b = KC__BUF_INIT(0);
    assert_int_equal(kc__buf_append_str(&b, "> "), 0);
    const char *in = "password=xyz tail";
    assert_int_equal(kc__redact_buf(in, 12, &b), 0); /* only "password=xyz" */
    assert_string_equal(b.data, "> password=***");
    kc__buf_free(&b);
}

int main(void)
{
    setenv("KCACHE_LOG", "info", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_log_level_parse),
        cmocka_unit_test(test_core_log_level_comes_from_env),
        cmocka_unit_test(test_core_log_writes_enabled_lines_redacted),
        cmocka_unit_test(test_core_log_redact_authorization_header),
        cmocka_unit_test(test_core_log_redact_bearer_anywhere),
        cmocka_unit_test(test_core_log_redact_key_values),
        cmocka_unit_test(test_core_log_redact_url_userinfo),
        cmocka_unit_test(test_core_log_redact_leaves_plain_text),
        cmocka_unit_test(test_core_log_redact_buf_appends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
