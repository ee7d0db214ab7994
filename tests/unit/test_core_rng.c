/* test_core_rng.c — xoshiro256** PRNG: determinism, ranges without bias, jitter bounds. */
#include "core/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_core_rng_same_seed_same_sequence(void **state)
{
    kc__rng a, b, c;
    kc__rng_seed(&a, 42);
    kc__rng_seed(&b, 42);
    kc__rng_seed(&c, 43);
    int differ = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t x = kc__rng_next(&a);
        assert_int_equal(x, kc__rng_next(&b));
        differ += x != kc__rng_next(&c);
    }
    assert_true(differ > 95);
}

static void test_core_rng_auto_seed_differs(void **state)
{
    kc__rng a, b;
    kc__rng_seed_auto(&a);
    kc__rng_seed_auto(&b);
    assert_true(kc__rng_next(&a) != kc__rng_next(&b));
}

static void test_core_rng_range_stays_inclusive_and_covers(void **state)
{
    kc__rng r;
    kc__rng_seed(&r, 7);
    int seen[6] = {0};
    for (int i = 0; i < 6000; i++) {
        uint64_t v = kc__rng_range(&r, 10, 15);
        assert_true(v >= 10 && v <= 15);
        seen[v - 10]++;
    }
    for (int i = 0; i < 6; i++) /* each ~1000; far from 0 and 6000 */
        assert_true(seen[i] > 800 && seen[i] < 1200);
    assert_int_equal(kc__rng_range(&r, 5, 5), 5);
    assert_int_equal(kc__rng_range(&r, 9, 3), 9);
    (void)kc__rng_range(&r, 0, UINT64_MAX);
}

static void test_core_rng_double_in_unit_interval(void **state)
{
    kc__rng r;
    kc__rng_seed(&r, 1);
    double sum = 0;
    for (int i = 0; i < 10000; i++) {
        double d = kc__rng_double(&r);
        assert_true(d >= 0.0 && d < 1.0);
        sum += d;
    }
    assert_true(sum / 10000 > 0.45 && sum / 10000 < 0.55);
}

static void test_core_rng_jitter_bounds(void **state)
{
    kc__rng r;
    kc__rng_seed(&r, 3);
    for (int i = 0; i < 1000; i++) {
        uint64_t j = kc__rng_jitter(&r, 1000, 0.5);
        assert_true(j >= 1000 && j < 1500);
        j = kc__rng_jitter(&r, 1000, 0); /* factor <= 0 means 1.0 */
        assert_true(j >= 1000 && j < 2000);
    }
    assert_int_equal(kc__rng_jitter(&r, UINT64_MAX, 1.0) >= UINT64_MAX - 1, 1);
    assert_int_equal(kc__rng_jitter(&r, 0, 1.0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_rng_same_seed_same_sequence),
        cmocka_unit_test(test_core_rng_auto_seed_differs),
        cmocka_unit_test(test_core_rng_range_stays_inclusive_and_covers),
        cmocka_unit_test(test_core_rng_double_in_unit_interval),
        cmocka_unit_test(test_core_rng_jitter_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
