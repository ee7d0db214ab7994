/*
 * test_json_cpu — the load-time CPU check of the decoder (src/json/cpu_check.c): on the machines
 * we build and test on (x86-64-v3, or any CPU with -DKC_SJ_PORTABLE=ON) it finds nothing missing,
 * so the check cannot stop a process that can run the decoder; and decoding works after it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <kcache/decode.h>

#include "json/sj.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_cpu_nothing_missing),
        cmocka_unit_test(test_json_cpu_decoder_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
