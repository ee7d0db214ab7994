/* test_core_populate.c — bulk population of fresh memory (src/core/populate.c): the bytes already
 * there are kept; forced off, nothing is advised for huge pages; forced on (when the kernel has THP
 * in madvise or always mode), the 2 MiB-aligned part of the range carries the hugepage flag; in the
 * measured mode the first pick is huge and the other kind is still probed now and then; a range
 * without a whole 2 MiB in it is never advised, nor counted in the fresh-memory totals. */
#include "core/populate.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#define HUGE ((size_t)2 << 20)

/* A 2 MiB-aligned anonymous mapping of n bytes (n a multiple of 2 MiB): kc__mem_map_aligned, whose
 * alignment every test using it checks. */
static char *map_aligned(size_t n)
{
    char *a = kc__mem_map_aligned(n, NULL);
    assert_non_null(a);
    assert_int_equal((uintptr_t)a % HUGE, 0);
    return a;
}

/* The VmFlags of the mapping holding p, from /proc/self/smaps ("" when not found). */
static void vm_flags(const void *p, char *out, size_t cap)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    assert_non_null(f);
    char line[512];
    bool in = false;
    out[0] = '\0';
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            continue;
        }
        if (in && strncmp(line, "VmFlags:", 8) == 0) {
            snprintf(out, cap, "%s", line + 8);
            break;
        }
    }
    fclose(f);
}

static bool has_flag(const void *p, const char *flag)
{
    char fl[256], want[8];
    vm_flags(p, fl, sizeof fl);
    snprintf(want, sizeof want, " %s", flag);
    return strstr(fl, want) != NULL;
}

static void test_core_populate_first_pick_is_huge_when_available(void **state)
{
    (void)state;
    kc__mem_huge_stats st;
    kc__mem_huge_stats_get(&st);
    assert_int_equal(st.huge_maps + st.small_maps, 0); /* nothing measured yet in this process */
    assert_int_equal(kc__mem_huge_pick(), st.available);
}

static void test_core_populate_keeps_bytes(void **state)
{
    (void)state;
    size_t n = 2 * HUGE;
    char *a = map_aligned(n);
    for (size_t i = 0; i < n; i += 1000)
        a[i] = (char)(i % 251 + 1);
    kc__mem_huge_set(1);
    (void)kc__mem_populate_ex(a, n, true);
    kc__mem_huge_set(-1);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(a[i], i % 1000 ? 0 : (char)(i % 251 + 1));
    munmap(a, n);
}

/* The fresh-memory totals (bench_sync's "fresh memory" line) count every population of a range
 * with a whole 2 MiB in it, huge or not, and nothing smaller. */
static void test_core_populate_totals_count_bytes_and_cpu(void **state)
{
    (void)state;
    size_t n = 2 * HUGE;
    char *a = map_aligned(n);
    kc__mem_huge_stats s0, s1, s2;
    kc__mem_huge_stats_get(&s0);
    (void)kc__mem_populate_ex(a, n, false);
    kc__mem_huge_stats_get(&s1);
    assert_int_equal(s1.total_bytes - s0.total_bytes, n);
    assert_true(s1.total_ns > s0.total_ns); /* 1024 pages' first writes take CPU time */
    (void)kc__mem_populate_ex(a, HUGE / 2, true);
    kc__mem_huge_stats_get(&s2);
    assert_int_equal(s2.total_bytes, s1.total_bytes);
    munmap(a, n);
}

static void test_core_populate_forced_off_and_on(void **state)
{
    (void)state;
    kc__mem_huge_stats st;
    kc__mem_huge_stats_get(&st);
    size_t n = 2 * HUGE;
    char *a = map_aligned(n);
    kc__mem_huge_set(0);
    assert_false(kc__mem_populate_ex(a, n, true));
    assert_false(has_flag(a, "hg"));
    munmap(a, n);

    a = map_aligned(n);
    kc__mem_huge_set(1);
    bool huge = kc__mem_populate_ex(a, n, true);
    assert_int_equal(huge, st.available);
    assert_int_equal(has_flag(a, "hg"), st.available);
    assert_false(kc__mem_populate_ex(a + 4096, HUGE, true)); /* no whole aligned 2 MiB in it */
    assert_false(kc__mem_populate_ex(a, n, false));          /* not asked for */
    kc__mem_huge_set(-1);
    munmap(a, n);
}

static void test_core_populate_measured_mode_probes_both_kinds(void **state)
{
    (void)state;
    kc__mem_huge_stats before, after;
    kc__mem_huge_stats_get(&before);
    if (!before.available)
        skip(); /* THP "never" here: nothing to choose */
    kc__mem_huge_set(-1);
    for (int i = 0; i < 40; i++) {
        char *a = map_aligned(HUGE);
        (void)kc__mem_populate_ex(a, HUGE, true);
        munmap(a, HUGE);
    }
    kc__mem_huge_stats_get(&after);
    assert_int_equal(after.huge_maps + after.small_maps, before.huge_maps + before.small_maps + 40);
    assert_true(after.huge_maps > before.huge_maps);   /* measured at least once */
    assert_true(after.small_maps > before.small_maps); /* and the other kind probed */
    assert_true(after.huge_ns > 0 && after.small_ns > 0);
}

/* A hint the kernel honours but that is not 2 MiB-aligned still gives an aligned mapping (the
 * map-more-and-cut path), of exactly n bytes: the bytes around it stay unmapped. */
static void test_core_populate_map_aligned_ignores_a_misaligned_hint(void **state)
{
    (void)state;
    char *free_range = map_aligned(4 * HUGE); /* reserve a range, then give it back */
    munmap(free_range, 4 * HUGE);
    char *a = kc__mem_map_aligned(HUGE, free_range + 4096);
    assert_non_null(a);
    assert_int_equal((uintptr_t)a % HUGE, 0);
    memset(a, 1, HUGE);
    unsigned char v;
    assert_int_equal(mincore(a + HUGE, 4096, &v), -1); /* ENOMEM: the cut tail is not mapped */
    munmap(a, HUGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_populate_first_pick_is_huge_when_available),
        cmocka_unit_test(test_core_populate_keeps_bytes),
        cmocka_unit_test(test_core_populate_totals_count_bytes_and_cpu),
        cmocka_unit_test(test_core_populate_forced_off_and_on),
        cmocka_unit_test(test_core_populate_measured_mode_probes_both_kinds),
        cmocka_unit_test(test_core_populate_map_aligned_ignores_a_misaligned_hint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
