/* test_core_names.c — Kubernetes name syntax: qualified names, label values, DNS-1123. */
#include "core/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *qn(const char *s)
{
    return kc__check_qualified_name(s, strlen(s));
}

static const char *lv(const char *s)
{
    return kc__check_label_value(s, strlen(s));
}

static void test_core_names_qualified_name_accepts(void **state)
{
    const char *ok[] = {
        "a",      "Z9", "my.name", "123-abc", "a_b", "example.com/MyName", "app.kubernetes.io/name",
        "a-b.c/d"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (qn(ok[i]))
            fail_msg("\"%s\" rejected: %s", ok[i], qn(ok[i]));
}

static void test_core_names_qualified_name_rejects_with_reason(void **state)
{
    assert_non_null(strstr(qn(""), "name part must be non-empty"));
    assert_non_null(strstr(qn("a/"), "name part must be non-empty"));
    assert_non_null(strstr(qn("/a"), "prefix part must be non-empty"));
    assert_non_null(strstr(qn("A.com/a"), "RFC 1123 subdomain"));
    assert_non_null(strstr(qn("a/b/c"), "qualified name"));
    assert_non_null(strstr(qn("-a"), "name part must consist of"));
    assert_non_null(strstr(qn("a."), "name part must consist of"));
    assert_non_null(strstr(qn("a b"), "name part must consist of"));
    char name[70];
    memset(name, 'n', 64);
    name[64] = '\0';
    assert_non_null(strstr(qn(name), "no more than 63 characters"));
    name[63] = '\0';
    assert_null(qn(name));
}

static void test_core_names_label_value(void **state)
{
    assert_null(lv(""));
    assert_null(lv("v"));
    assert_null(lv("My_value-1.2"));
    assert_non_null(lv("-v"));
    assert_non_null(lv("v_"));
    assert_non_null(lv("a/b"));
    char v[70];
    memset(v, 'v', 64);
    v[64] = '\0';
    assert_non_null(strstr(lv(v), "no more than 63 characters"));
}

static void test_core_names_dns1123(void **state)
{
    assert_true(kc__is_dns1123_subdomain("example.com", 11));
    assert_true(kc__is_dns1123_subdomain("a-b.c0", 6));
    assert_false(kc__is_dns1123_subdomain("", 0));
    assert_false(kc__is_dns1123_subdomain("Example.com", 11));
    assert_false(kc__is_dns1123_subdomain("a..b", 4));
    assert_false(kc__is_dns1123_subdomain("a.", 2));
    assert_false(kc__is_dns1123_subdomain(".a", 2));
    assert_false(kc__is_dns1123_subdomain("a-.b", 4));
    assert_true(kc__is_dns1123_label("kube-system", 11));
    assert_false(kc__is_dns1123_label("a.b", 3));
    assert_false(kc__is_dns1123_label("-a", 2));
    char l[70];
    memset(l, 'a', 64);
    assert_false(kc__is_dns1123_label(l, 64));
    assert_true(kc__is_dns1123_label(l, 63));
    char big[300];
    memset(big, 'a', sizeof big);
    assert_true(kc__is_dns1123_subdomain(big, 253));
    assert_false(kc__is_dns1123_subdomain(big, 254));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_names_qualified_name_accepts),
        cmocka_unit_test(test_core_names_qualified_name_rejects_with_reason),
        cmocka_unit_test(test_core_names_label_value),
        cmocka_unit_test(test_core_names_dns1123),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
