/*
 * alloc.c — the test hook for allocation failures.
 *
 * kc__calloc consults a process-wide hook (an atomic function pointer, NULL outside tests) so an
 * integration test can make one named allocation fail and check what the library does about it
 * (count it, log it) without interposing malloc for the whole process.
 */
#include "core/internal.h"

#include <stdatomic.h>
#include <stdlib.h>

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
