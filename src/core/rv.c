/*
 * rv.c — resourceVersion comparison per KEP-5504 (apimachinery
 * pkg/util/resourceversion/resourceversion.go).
 *
 * A canonical RV is a non-empty run of ASCII digits without a leading zero ("0" itself is reserved
 * for list/watch semantics and never a live RV). Two canonical RVs compare by length, then by
 * bytes, so values beyond 64 bits (the conformance bound is 2^128-1) still order correctly.
 * Anything else is KC_RV_NOT_COMPARABLE and callers fall back to exact-match semantics.
 */
#include "core/internal.h"
#include "kcache/rv.h"

#include <string.h>

/* Length of rv when canonical, 0 otherwise. */
static size_t canonical_len(const char *rv)
{
    if (!rv || rv[0] < '1' || rv[0] > '9')
        return 0;
    size_t n = 1;
    while (rv[n] >= '0' && rv[n] <= '9')
        n++;
    return rv[n] == '\0' ? n : 0;
}

bool kc_rv_is_canonical(const char *rv)
{
    return canonical_len(rv) != 0;
}

kc_rv_order kc_rv_compare(const char *a, const char *b)
{
    size_t la = canonical_len(a), lb = canonical_len(b);
    if (!la || !lb)
        return KC_RV_NOT_COMPARABLE;
    if (la != lb)
        return la < lb ? KC_RV_LESS : KC_RV_GREATER;
    int c = memcmp(a, b, la);
    return c < 0 ? KC_RV_LESS : c > 0 ? KC_RV_GREATER : KC_RV_EQUAL;
}

int kc_rv_parse(const char *rv, uint64_t *ret, kc_error *err)
{
    if (!ret)
        return kc_error_set(err, KC_EINVAL, "kc_rv_parse: ret is NULL");
    size_t n = canonical_len(rv);
    if (!n)
        return kc_error_set(err, KC_ENOT_COMPARABLE,
                            "resourceVersion \"%.64s\" is not a canonical decimal", rv ? rv : "");
    if (n > 20) /* UINT64_MAX has 20 digits */
        return kc_error_set(err, KC_ETOOLARGE, "resourceVersion of %zu digits does not fit 64 bits",
                            n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (__builtin_mul_overflow(v, 10u, &v) ||
            __builtin_add_overflow(v, (uint64_t)(rv[i] - '0'), &v))
            return kc_error_set(err, KC_ETOOLARGE, "resourceVersion %.20s does not fit 64 bits",
                                rv);
    }
    *ret = v;
    return 0;
}
