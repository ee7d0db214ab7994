/*
 * kcache/rv.h — resourceVersion comparison per KEP-5504.
 *
 * resourceVersions are opaque strings to clients; since Kubernetes 1.35 they are comparable when
 * both are canonical decimals: digits only, no leading zero, not "0" and not "". Canonical decimals
 * compare by length, then digit by digit (so arbitrarily long values work). Anything else is "not
 * comparable" and the caller is told so: it must then fall back to exact-match semantics
 * (docs/semantics.md, Part 2 §6 rule 1).
 */
#ifndef KCACHE_RV_H
#define KCACHE_RV_H

#include "error.h"

KC_BEGIN_DECLS

typedef enum kc_rv_order {
    KC_RV_LESS = -1,
    KC_RV_EQUAL = 0,
    KC_RV_GREATER = 1,
    KC_RV_NOT_COMPARABLE = 2, /* either side is not a canonical decimal */
} kc_rv_order;

/* true when rv (NUL-terminated; NULL allowed → false) is a canonical decimal. rv is borrowed for
 * the call. Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_rv_is_canonical(const char *rv);

/* Compare two resourceVersions (NULL treated as ""); a and b are borrowed for the call.
 * Thread-safe. Never fails: KC_RV_NOT_COMPARABLE is an answer, not an error. Since 0.1. */
KC_API kc_rv_order kc_rv_compare(const char *a, const char *b);

/* Parse a canonical decimal that fits in uint64 into *ret. Returns 0, or KC_ENOT_COMPARABLE when
 * rv is not canonical, or KC_ETOOLARGE when it does not fit (*ret untouched; err, may be NULL,
 * says which). rv is borrowed for the call. Errors: KC_EINVAL (ret NULL), KC_ENOT_COMPARABLE,
 * KC_ETOOLARGE. Thread-safe. Since 0.1. */
KC_API int kc_rv_parse(const char *rv, uint64_t *ret, kc_error *err);

KC_END_DECLS

#endif
