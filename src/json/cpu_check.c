/*
 * json/cpu_check.c — a clear error instead of SIGILL on a CPU the decoder was not built for.
 *
 * The simdjson walk in src/json/sj*.cpp is compiled for simdjson's haswell kernel (AVX2, BMI1/2,
 * PCLMUL, LZCNT, POPCNT: x86-64-v3; docs/decoding.md, "Instruction set and compiler"). On an older
 * CPU, or a VM whose virtual CPU model hides AVX2 (QEMU's default qemu64, for one), the first
 * decode would die of an illegal instruction with no hint why. This file, compiled for the
 * baseline target (it is C: the AVX2 target is applied to the C++ files only), checks the CPU when
 * the library is loaded, before any C++ initialiser, and stops the process with a message that
 * says what is missing and how to build for such machines (-DKC_SJ_PORTABLE=ON).
 *
 * Why not pick a kernel at run time instead: simdjson 3.0.1's amalgamated header puts its
 * On-Demand code outside any target region, so a second, portable copy of sj*.cpp would share
 * inline functions (simdjson's generic parts, std:: templates) with the AVX2 copy, and the linker
 * keeps one copy of each — possibly the AVX2 one, which then runs on the portable path. Isolating
 * the two copies needs symbol localisation at link time; not done (docs/decoding.md).
 */
#include "json/sj.h"

#include <stdio.h>
#include <stdlib.h>

const char *kc__json_cpu_missing(void)
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

/* Priority 101: before C++ static initialisers (default priority) of the same program. */
__attribute__((constructor(101))) static void cpu_check(void)
{
    const char *missing = kc__json_cpu_missing();
    if (!missing)
        return;
    fprintf(stderr,
            "kcache: this build's JSON decoder needs an x86-64-v3 CPU (AVX2, BMI1/2, PCLMUL, "
            "LZCNT, POPCNT); this CPU lacks %s. Rebuild kcache with -DKC_SJ_PORTABLE=ON.\n",
            missing);
    abort();
}
