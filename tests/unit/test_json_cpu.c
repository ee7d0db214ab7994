/*
 * test_json_cpu — the decoder's CPU check (src/json/cpu_check.c): on the machines we build and
 * test on (x86-64-v3, or any CPU with -DKC_SJ_PORTABLE=ON) it finds nothing missing and decoding
 * works; on a CPU that lacks a feature (planted with kc__json_cpu_pretend_missing) every entry
 * point into the decoder returns KC_EUNSUPPORTED with a message naming the feature and the fix,
 * and the process goes on (no abort).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <kcache/decode.h>
#include <kcache/obj.h>

#include "json/sj.h"

#include <stdlib.h>
#include <string.h>

static void test_json_cpu_nothing_missing(void **state)
{
    (void)state;
    const char *missing = kc__json_cpu_missing();
    if (missing)
        fail_msg("this CPU lacks %s, yet the process started and runs the decoder", missing);
    assert_null(kc__json_cpu_missing()); /* stable across calls */
}

static void test_json_cpu_decoder_runs(void **state)
{
    (void)state;
    static const char pod[] = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{}}";
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(pod, strlen(pod), NULL, &o, NULL), 0);
    assert_string_equal(kc_obj_name(o), "p");
    kc_obj_unref(o);
}

static void expect_unsupported(int rc, kc_error *e, const char *what)
{
    if (rc != KC_EUNSUPPORTED)
        fail_msg("%s: %s, want KC_EUNSUPPORTED", what, kc_errno_name(rc));
    assert_int_equal(e->code, KC_EUNSUPPORTED);
    assert_non_null(e->message);
    assert_non_null(strstr(e->message, "this CPU lacks AVX2"));
    assert_non_null(strstr(e->message, "-DKC_SJ_PORTABLE=ON"));
    kc_error_clear(e);
}

static int no_item(void *ud, kc_obj *item)
{
    (void)ud, (void)item;
    return 0;
}

static void test_json_cpu_missing_feature_is_an_error_not_an_abort(void **state)
{
    (void)state;
    static const char obj[] = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}";
    kc_obj *o = NULL; /* parsed while the CPU is fine, read while it "is not" */
    assert_int_equal(kc_obj_parse(obj, strlen(obj), NULL, &o, NULL), 0);
    kc__json_cpu_pretend_missing("AVX2");
    kc_error e = KC_ERROR_INIT;
    kc_obj *o2 = NULL;
    expect_unsupported(kc_obj_parse(obj, strlen(obj), NULL, &o2, &e), &e, "kc_obj_parse");
    assert_null(o2);
    static const char list[] = "{\"kind\":\"PodList\",\"metadata\":{},\"items\":[]}";
    expect_unsupported(kc_list_decode(list, strlen(list), NULL, NULL, no_item, NULL, &e), &e,
                       "kc_list_decode");
    kc_list_decoder *ld = NULL;
    expect_unsupported(kc_list_decoder_new(NULL, &ld, &e), &e, "kc_list_decoder_new");
    assert_null(ld);
    kc_watch_decoder *wd = NULL;
    expect_unsupported(kc_watch_decoder_new(NULL, &wd, &e), &e, "kc_watch_decoder_new");
    assert_null(wd);
    expect_unsupported(kc_status_parse("{}", 2, &e), &e, "kc_status_parse");
    int64_t v = 0;
    expect_unsupported(kc_obj_get_int(o, "/metadata/generation", &v, &e), &e, "kc_obj_get_int");
    kc__json_cpu_pretend_missing(NULL);
    char *name = NULL;
    assert_int_equal(kc_obj_get_string(o, "/metadata/name", &name, NULL, NULL), 0);
    assert_string_equal(name, "p");
    free(name);
    kc_obj_unref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_cpu_nothing_missing),
        cmocka_unit_test(test_json_cpu_decoder_runs),
        cmocka_unit_test(test_json_cpu_missing_feature_is_an_error_not_an_abort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
