/*
 * test_core_debug.c — KC__DEBUG_ASSERT and KC__ASSERT_HELD (src/core/internal.h): in Debug and
 * sanitizer builds a false condition stops the process with a trap (and a message on stderr); in
 * release builds it is compiled out and the process goes on. Each case runs in a child process.
 */
#include "core/internal.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "kc_test_child.h"

static void false_assert(void)
{
    volatile int two = 2;
    KC__DEBUG_ASSERT(two == 3);
}

static void held_assert_on_free_mutex(void)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    KC__ASSERT_HELD(&m);
}

static void held_assert_on_held_mutex(void)
{
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&m);
    KC__ASSERT_HELD(&m);
    pthread_mutex_unlock(&m);
}

static void test_core_debug_false_assert_traps_only_in_debug(void **state)
{
    kc_test_expect_trap_in_debug(kc_test_in_child(false_assert));
}

static void test_core_debug_assert_held(void **state)
{
    kc_test_expect_trap_in_debug(kc_test_in_child(held_assert_on_free_mutex));
    int st = kc_test_in_child(held_assert_on_held_mutex);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    assert_false(kc__mutex_held(&m));
    pthread_mutex_lock(&m);
    assert_true(kc__mutex_held(&m));
    pthread_mutex_unlock(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_debug_false_assert_traps_only_in_debug),
        cmocka_unit_test(test_core_debug_assert_held),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
