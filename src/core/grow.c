/*
 * grow.c — the growth rule every dynamic array uses (kc__grow).
 *
 * It replaces the hand-written "cap ? cap * 2 : N" reallocs: one place where the doubling, the
 * minimum and the overflow checks (capacity * 2, capacity * element size) live. A failed or
 * overflowing growth leaves the array as it was, so callers keep a consistent state and return
 * KC_ENOMEM. Stateless.
 */
#include "core/internal.h"

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

int kc__grow_slow(void *arrp, size_t *cap, size_t need, size_t elem, size_t first)
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
