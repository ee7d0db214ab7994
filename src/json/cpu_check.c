/*
 * json/cpu_check.c — KC_EUNSUPPORTED instead of SIGILL on a CPU the decoder was not built for.
 *
 * The simdjson walk in src/json/sj*.cpp is compiled for simdjson's haswell kernel (AVX2, BMI1/2,
 * PCLMUL, LZCNT, POPCNT: x86-64-v3; docs/decoding.md, "Instruction set and compiler"). On an older
 * CPU, or a VM whose virtual CPU model hides AVX2 (QEMU's default qemu64, for one), the first
 * decode would die of an illegal instruction with no hint why. This file, compiled for the
 * baseline target (it is C: the AVX2 target is applied to the C++ files only), checks the CPU
 * once, on first use, and every entry point into the C++ code (kc_obj_parse, kc_list_decode, the
 * decoder constructors, kc_status_parse, the JSON pointer getters, the exit handler's simdjson
 * warm-up) calls kc__json_cpu_check first and fails with KC_EUNSUPPORTED and a message that says
 * what is missing and how to build for such machines (-DKC_SJ_PORTABLE=ON). The library never
 * stops the process: the application (the `kcache` CLI prints it) decides. Nothing compiled for
 * AVX2 runs at load time (the C++ files have no static initialisers), so loading is always safe.
 *
 * Why not pick a kernel at run time instead: simdjson 3.0.1's amalgamated header puts its
 * On-Demand code outside any target region, so a second, portable copy of sj*.cpp would share
 * inline functions (simdjson's generic parts, std:: templates) with the AVX2 copy, and the linker
 * keeps one copy of each — possibly the AVX2 one, which then runs on the portable path. Isolating
 * the two copies needs symbol localisation at link time; not done (docs/decoding.md).
 *
 * Tests plant a missing feature with kc__json_cpu_pretend_missing (a process-wide atomic pointer,
 * NULL in production).
 */
#include "json/sj.h"

#include "core/internal.h"

#include <stdatomic.h>
#include <stddef.h>

static const char *cpu_missing_probe(void)
{
#if defined(__x86_64__) && !defined(KC_SJ_PORTABLE)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2"))
        return "AVX2";
    if (!__builtin_cpu_supports("bmi"))
        return "BMI1";
    if (!__builtin_cpu_supports("bmi2"))
        return "BMI2";
    if (!__builtin_cpu_supports("pclmul"))
        return "PCLMUL";
    if (!__builtin_cpu_supports("popcnt"))
        return "POPCNT";
#endif
    return NULL;
}

/* 0: not probed yet; 1: supported; 2: missing (cpu_missing_name says what). Idempotent, so a race
 * between two first callers only probes twice. */
static atomic_int cpu_state;
static const char *_Atomic cpu_missing_name;
static const char *_Atomic cpu_pretend; /* tests */

const char *kc__json_cpu_missing(void)
{
    const char *p = atomic_load_explicit(&cpu_pretend, memory_order_acquire);
    if (KC__UNLIKELY(p != NULL))
        return p;
    int s = atomic_load_explicit(&cpu_state, memory_order_acquire);
    if (KC__LIKELY(s == 1))
        return NULL;
    if (s == 2)
        return atomic_load_explicit(&cpu_missing_name, memory_order_relaxed);
    const char *m = cpu_missing_probe();
    atomic_store_explicit(&cpu_missing_name, m, memory_order_relaxed);
    atomic_store_explicit(&cpu_state, m ? 2 : 1, memory_order_release);
    return m;
}

int kc__json_cpu_check(kc_error *err)
{
    const char *missing = kc__json_cpu_missing();
    if (KC__LIKELY(!missing))
        return 0;
    return kc_error_set(err, KC_EUNSUPPORTED,
                        "this build's JSON decoder needs an x86-64-v3 CPU (AVX2, BMI1/2, PCLMUL, "
                        "LZCNT, POPCNT); this CPU lacks %s. Rebuild kcache with "
                        "-DKC_SJ_PORTABLE=ON",
                        missing);
}

void kc__json_cpu_pretend_missing(const char *feature)
{
    atomic_store_explicit(&cpu_pretend, feature, memory_order_release);
}
