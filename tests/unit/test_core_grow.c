/* test_core_grow.c — kc__grow / kc__grow_cap (src/core/grow.c): doubling from a first capacity,
 * contents kept, and sizes that overflow refused with KC_ENOMEM, leaving the array untouched. */
#include "core/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

static void test_core_grow_doubles_from_first_and_keeps_contents(void **state)
{
    int *v = NULL;
    size_t cap = 0;
    assert_int_equal(kc__grow(&v, &cap, 1, sizeof *v, 4), 0);
    assert_int_equal(cap, 4);
    for (int i = 0; i < 4; i++)
        v[i] = i;
    assert_int_equal(kc__grow(&v, &cap, 4, sizeof *v, 4), 0); /* enough already */
    assert_int_equal(cap, 4);
    assert_int_equal(kc__grow(&v, &cap, 5, sizeof *v, 4), 0);
    assert_int_equal(cap, 8);
    assert_int_equal(kc__grow(&v, &cap, 100, sizeof *v, 4), 0);
    assert_int_equal(cap, 128);
    for (int i = 0; i < 4; i++)
        assert_int_equal(v[i], i);
    free(v);
}

static void test_core_grow_refuses_overflow(void **state)
{
    char *v = malloc(8);
    char *orig = v;
    size_t cap = 8;
    assert_int_equal(kc__grow(&v, &cap, SIZE_MAX / 2 + 2, 1, 4), KC_ENOMEM); /* cap * 2 */
    assert_ptr_equal(v, orig);
    assert_int_equal(cap, 8);
    assert_int_equal(kc__grow(&v, &cap, SIZE_MAX / 16, 64, 4), KC_ENOMEM); /* cap * elem */
    assert_ptr_equal(v, orig);
    assert_int_equal(cap, 8);
    assert_int_equal(kc__grow_cap(0, 1, SIZE_MAX, 1), 1);
    assert_int_equal(kc__grow_cap(1, 2, SIZE_MAX, 1), 0);
    assert_int_equal(kc__grow_cap(16, 17, 8, 16), 32);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_grow_doubles_from_first_and_keeps_contents),
        cmocka_unit_test(test_core_grow_refuses_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
