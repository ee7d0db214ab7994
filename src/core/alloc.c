/*
 * alloc.c — the growth rule every dynamic array uses, and the test hook for allocation failures.
 *
 * kc__grow replaces the hand-written "cap ? cap * 2 : N" reallocs: one place where the doubling,
 * the minimum and the overflow checks (capacity * 2, capacity * element size) live. A failed or
 * overflowing growth leaves the array as it was, so callers keep a consistent state and return
 * KC_ENOMEM.
 *
 * kc__calloc consults a process-wide hook (an atomic function pointer, NULL outside tests) so an
 * integration test can make one named allocation fail and check what the library does about it
 * (count it, log it) without interposing malloc for the whole process.
 */
#include "core/internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

size_t kc__grow_cap(size_t cap, size_t need, size_t elem, size_t first)
{
    size_t nc = cap ? cap : (first ? first : 1);
    while (nc < need) {
        if (!kc__size_mul(nc, 2, &nc))
            return 0;
    }
    size_t bytes;
    if (!kc__size_mul(nc, elem ? elem : 1, &bytes))
        return 0;
    return nc;
}

int kc__grow(void *arrp, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t nc = kc__grow_cap(*cap, need, elem, first);
    if (!nc)
        return KC_ENOMEM;
    void *old;
    memcpy(&old, arrp, sizeof(old));
    void *nv = realloc(old, nc * elem);
    if (!nv)
        return KC_ENOMEM;
    memcpy(arrp, &nv, sizeof(nv));
    *cap = nc;
    return 0;
}

static _Atomic(kc__alloc_fail_fn) fail_hook;

void kc__alloc_fail_hook_set(kc__alloc_fail_fn fn)
{
    atomic_store(&fail_hook, fn);
}

void *kc__calloc(const char *site, size_t n, size_t size)
{
    kc__alloc_fail_fn fn = atomic_load_explicit(&fail_hook, memory_order_acquire);
    if (KC__UNLIKELY(fn != NULL) && fn(site))
        return NULL;
    return calloc(n, size);
}
