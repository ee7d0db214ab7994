/*
 * test_store_debug.c — the store's single-writer rule is checked in Debug and sanitizer builds
 * (KC__STORE_WRITER_ENTER, src/store/internal.h): a mutation that starts while another is in
 * flight traps; release builds compile the check out. The "other writer" is planted by raising
 * the in-flight count, in a child process.
 */
#include "store/internal.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "kc_test_child.h"

static const char CM[] = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                         "\"a\",\"namespace\":\"n\",\"resourceVersion\":\"5\"}}";

static void apply_while_another_writes(void)
{
    kc_store *s = NULL;
    kc_obj *o = NULL;
    if (kc_store_new(NULL, &s, NULL) || kc_obj_parse(CM, strlen(CM), NULL, &o, NULL))
        _exit(3);
    atomic_fetch_add(&s->writers, 1); /* a second writer is "in flight" */
    kc_store_apply(s, KC_WATCH_ADDED, o, NULL, NULL);
    _exit(0);
}

static void test_store_debug_second_writer_traps_in_debug(void **state)
{
    kc_test_expect_trap_in_debug(kc_test_in_child(apply_while_another_writes));
}

static void test_store_debug_one_writer_at_a_time_is_fine(void **state)
{
    kc_store *s = NULL;
    kc_obj *o = NULL;
    assert_int_equal(kc_store_new(NULL, &s, NULL), 0);
    assert_int_equal(kc_obj_parse(CM, strlen(CM), NULL, &o, NULL), 0);
    assert_int_equal(kc_store_apply(s, KC_WATCH_ADDED, o, NULL, NULL), 0);
    kc_store_bookmark(s, "7");
    assert_int_equal(kc_store_apply(s, KC_WATCH_DELETED, o, NULL, NULL), 0);
    assert_int_equal(atomic_load(&s->writers), 0);
    kc_obj_unref(o);
    kc_store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_debug_second_writer_traps_in_debug),
        cmocka_unit_test(test_store_debug_one_writer_at_a_time_is_fine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
