/*
 * kcache/common.h — export macro, version, and conventions shared by every public header.
 *
 * Conventions used in every doc comment of the public API:
 *   - Ownership, in fixed words: *borrowed* (valid until the stated event), *copied* (the callee
 * keeps its own copy), *consumed* (the callee takes over the caller's reference), *new reference —
 *     caller unrefs* (the caller owns one reference and must call the matching _unref/_free).
 *   - Out-parameters are named ret_… and are left untouched when the call fails.
 *   - Functions return 0 (or a non-negative count) on success and a negative KC_E… code on failure
 *     (see kcache/error.h).
 *   - NULL handles: a function taking a handle returns KC_EINVAL for a NULL one (its kc_error says
 *     so); destructors, _unref, _stop and other void functions do nothing; getters return their
 *     "nothing" value — NULL, "" for strings documented never NULL, 0, false, or KC_EINVAL for an
 *     int (a file descriptor, a port). tests/integration/test_api_null.c holds every function to
 *     this.
 *   - Thread-safety is stated in every function's comment: "Thread-safe", "Not thread-safe", or
 *     "Threads: see the header" for the rule in the paragraph of the header's top comment that
 *     starts "Threads:".
 *   - Errors: "Errors:" lists the KC_E… codes a function returns (a NULL handle or argument is
 *     always KC_EINVAL for an int function); "Never fails" for void functions and getters.
 *   - "Since X.Y." is the version a function was added in (scripts/check-api-docs checks all four).
 *   - Structs: a function that reads or writes a caller's struct takes its size right after the
 *     pointer (`opts, opts_size`); a same-named macro passes sizeof, so callers write the call
 *     without it. Zero-initialise every struct passed in (zero = default). A struct nested in an
 *     options struct is a pointer plus `<field>_size` (0 with a pointer: KC_EINVAL). Any such
 *     function also fails with KC_EUNSUPPORTED when the struct is longer than this library's
 *     and sets a field it does not know (a newer header). docs/abi.md has the rules and what
 *     stays compatible across versions.
 *
 * Platform: Linux only (futexes for store waiters, eventfds for the readiness file descriptors).
 */
#ifndef KCACHE_COMMON_H
#define KCACHE_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(KC_BUILDING)
#define KC_API __attribute__((visibility("default")))
#else
#define KC_API
#endif

#ifdef __cplusplus
#define KC_BEGIN_DECLS extern "C" {
#define KC_END_DECLS   }
#else
#define KC_BEGIN_DECLS
#define KC_END_DECLS
#endif

#define KC_VERSION_MAJOR  0
#define KC_VERSION_MINOR  1
#define KC_VERSION_PATCH  0
#define KC_VERSION_STRING "0.1.0"

KC_BEGIN_DECLS

/* The library version string, e.g. "0.1.0". Borrowed (static). Thread-safe. Never fails.
 * Since 0.1. */
KC_API const char *kc_version(void);

KC_END_DECLS

#endif
