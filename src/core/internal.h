/*
 * core/internal.h — library-internal helpers shared by every subsystem (prefix kc__).
 * Not installed. Include as "core/internal.h".
 *
 * Sections: errors, checked arithmetic, strings, bounded byte buffer (kc__buf), monotonic time and
 * deadlines, PRNG (per-caller state), logging with secret redaction.
 * Thread-safety: every function here is thread-safe as long as each caller passes its own state
 * (kc__buf, kc__rng); none keeps mutable global state except the process's log sink
 * (core/log_sink.c: kc_log_set, behind a rwlock) and the test-only allocation failure hook.
 */
#ifndef KC_CORE_INTERNAL_H
#define KC_CORE_INTERNAL_H

#include "kcache/error.h"
#include "kcache/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define KC__LIKELY(x)    __builtin_expect(!!(x), 1)
#define KC__UNLIKELY(x)  __builtin_expect(!!(x), 0)
#define KC__ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define KC__PRINTF(f, a) __attribute__((format(printf, f, a)))

/* ---- debug assertions ------------------------------------------------------------------------ */

/*
 * KC__DEBUG_ASSERT(cond): an invariant the code relies on but cannot return an error for (a
 * reference count going below zero, two writers in a single-writer structure, a lock not held).
 * Debug and sanitizer builds (KC_DEBUG_ASSERTS, set by CMake) check it: on failure one line
 * "kcache: assertion failed: COND (FILE:LINE)" goes to stderr and to the log sink, then the
 * process traps (__builtin_trap: no abort/printf import, so packaging.no_print holds in every
 * build). Release builds compile it to nothing (cond is not evaluated): a library never stops its
 * host over a check.
 */
#ifdef KC_DEBUG_ASSERTS
__attribute__((noreturn, cold)) void kc__debug_assert_fail(const char *cond, const char *file,
                                                           int line);
#define KC__DEBUG_ASSERT(cond)                                                                     \
    do {                                                                                           \
        if (__builtin_expect(!(cond), 0))                                                          \
            kc__debug_assert_fail(#cond, __FILE__, __LINE__);                                      \
    } while (0)
#else
#define KC__DEBUG_ASSERT(cond) ((void)sizeof(!(cond)))
#endif

/* true when m is locked (by any thread): for KC__DEBUG_ASSERT(kc__mutex_held(&x->mu)) on
 * functions documented "mu held". Debug builds only. */
#define KC__ASSERT_HELD(m) KC__DEBUG_ASSERT(kc__mutex_held(m))
bool kc__mutex_held(pthread_mutex_t *m);

/* ---- errors ---------------------------------------------------------------------------------- */

/* kc_error_set with a va_list. Returns code. err may be NULL. */
int kc__error_vset(kc_error *err, int code, const char *fmt, va_list ap) KC__PRINTF(3, 0);

/* ---- the struct-size handshake (core/opts.c, docs/abi.md) ----------------------------------- */

/*
 * Copy a caller's struct src of src_size bytes (as the caller compiled it) into dst, this
 * library's struct of dst_size bytes: dst is zeroed first, then min(src_size, dst_size) bytes are
 * copied (src NULL: dst stays all zero, the defaults). A src longer than dst is accepted only when
 * its bytes past dst_size are all zero; otherwise KC_EUNSUPPORTED, err naming what (the struct,
 * e.g. "kc_informer_opts") and the first unknown byte set. A non-NULL src with src_size 0 (a
 * nested pointer whose _size field the caller left 0) is KC_EINVAL. Returns 0 or the code.
 */
int kc__opts_copy(void *dst, size_t dst_size, const void *src, size_t src_size, const char *what,
                  kc_error *err);

/* Write this library's result src (src_size bytes) into the caller's dst of dst_size bytes: at
 * most dst_size bytes are written; bytes of dst past src_size are zeroed. dst NULL: nothing. */
void kc__result_copy(void *dst, size_t dst_size, const void *src, size_t src_size);

/* KC__OPTS_COPY(&local, opts, opts_size, kc_x_opts, err): kc__opts_copy into a local of type
 * kc_x_opts, naming the type in the error. */
#define KC__OPTS_COPY(dst, src, src_size, type, err)                                               \
    kc__opts_copy((dst), sizeof(type), (src), (src_size), #type, (err))

/* At the top of a public function taking (const T *p, size_t p_size, …): p is replaced by a pointer
 * to a local full-size copy (all zero when p is NULL: the defaults), or the function returns the
 * error of kc__opts_copy. Everything after it reads the copy, never the caller's struct. */
#define KC__OPTS_TAKE(p, type, err)                                                                \
    type p##__copy;                                                                                \
    do {                                                                                           \
        if (KC__LIKELY((p) != NULL && p##_size == sizeof(type))) {                                 \
            p##__copy = *(p); /* the common case, inlined: a caller built with this header */      \
        } else if (!(p)) {                                                                         \
            memset(&p##__copy, 0, sizeof(type));                                                   \
        } else {                                                                                   \
            int p##__rc = kc__opts_copy(&p##__copy, sizeof(type), (p), p##_size, #type, (err));    \
            if (p##__rc)                                                                           \
                return p##__rc;                                                                    \
        }                                                                                          \
        p = &p##__copy;                                                                            \
    } while (0)

/* After KC__OPTS_TAKE: a pointer-with-size field of the local copy o (o.field, o.field_size; a
 * struct nested in an options struct, docs/abi.md) is copied into *storage (a full-size local of
 * the nested type) and o.field pointed at it; the function returns the error of kc__opts_copy (what
 * names the field, e.g. "kc_list_opts.decode"). A NULL o.field stays NULL. */
#define KC__OPTS_TAKE_NESTED(o, field, storage, what, err)                                         \
    do {                                                                                           \
        if ((o).field) {                                                                           \
            int rc__ = kc__opts_copy((storage), sizeof *(storage), (o).field, (o).field##_size,    \
                                     (what), (err));                                               \
            if (rc__)                                                                              \
                return rc__;                                                                       \
            (o).field = (storage);                                                                 \
            (o).field##_size = sizeof *(storage);                                                  \
        }                                                                                          \
    } while (0)

/* ---- checked arithmetic ---------------------------------------------------------------------- */

/* *ret = a + b / a * b; returns false (and leaves *ret untouched) on overflow. */
static inline bool kc__size_add(size_t a, size_t b, size_t *ret)
{
    size_t r;
    if (__builtin_add_overflow(a, b, &r))
        return false;
    *ret = r;
    return true;
}

static inline bool kc__size_mul(size_t a, size_t b, size_t *ret)
{
    size_t r;
    if (__builtin_mul_overflow(a, b, &r))
        return false;
    *ret = r;
    return true;
}

/* ---- strings --------------------------------------------------------------------------------- */

/* New malloc'd copy of the n bytes at s plus a NUL (s may contain no NUL in those n bytes; n == 0
 * gives ""). NULL on out of memory or when s is NULL and n > 0. Caller frees. */
char *kc__strdup_n(const char *s, size_t n);

/* New malloc'd copy of s (NULL → NULL). Caller frees. NULL on out of memory. */
char *kc__strdup(const char *s);

/* NULL-safe equality: two NULLs are equal; NULL never equals a string. */
bool kc__streq(const char *a, const char *b);

/* Equality of the span (s, n) — not NUL-terminated — with the C string z (NULL → false). */
bool kc__streq_n(const char *s, size_t n, const char *z);

/* true when s starts with prefix (both non-NULL). */
bool kc__starts_with(const char *s, const char *prefix);

/* ---- Kubernetes name syntax (core/names.c) --------------------------------------------------- */

/* Label/annotation key: [DNS-1123 subdomain prefix (≤ 253) '/'] name (≤ 63, [A-Za-z0-9-_.],
 * starting and ending alphanumeric). NULL when valid, else upstream's message (static). */
const char *kc__check_qualified_name(const char *s, size_t n);
/* Label value: empty, or ≤ 63 of [A-Za-z0-9-_.] starting and ending alphanumeric. NULL or the
 * message (static). */
const char *kc__check_label_value(const char *s, size_t n);
/* DNS-1123 subdomain: ≤ 253, lowercase alphanumeric labels with inner '-', joined by '.'. */
bool kc__is_dns1123_subdomain(const char *s, size_t n);
/* DNS-1123 label: ≤ 63, [a-z0-9]([-a-z0-9]*[a-z0-9])? (namespace names, most object names). */
bool kc__is_dns1123_label(const char *s, size_t n);

/* ---- bounded growable byte buffer ------------------------------------------------------------ */

/* Default ceiling when kc__buf.max is 0: 64 MiB. */
#define KC__BUF_DEFAULT_MAX ((size_t)64 * 1024 * 1024)

/*
 * A growable byte buffer with a hard ceiling: growing past max fails with KC_ETOOLARGE and leaves
 * the buffer as it was. data is always NUL-terminated after a successful append (the NUL is not
 * counted in len and is not counted against max). data is NULL until the first append/reserve.
 * Not thread-safe: one owner.
 */
typedef struct kc__buf {
    char *data;
    size_t len;
    size_t cap;  /* allocated bytes (including room for the NUL) */
    size_t max;  /* ceiling for len; 0 = KC__BUF_DEFAULT_MAX */
    bool huge;   /* set by the owner: a capacity of 2 MiB or more is mapped 2 MiB-aligned, in
                  * whole 2 MiB, and kc__buf_reserve_populated may put it on huge pages (page
                  * buffers reused for many large bodies); kept by kc__buf_free */
    bool mapped; /* data is such a mapping (munmap, not free) */
} kc__buf;

/* clang-format off */
#define KC__BUF_INIT(max_bytes) {NULL, 0, 0, (max_bytes), false, false}
/* clang-format on */

/* Initialise an empty buffer with the given ceiling (0 = default). Never fails, no allocation. */
void kc__buf_init(kc__buf *b, size_t max);
/* Free the memory and return to the empty state (max is kept). Accepts NULL. */
void kc__buf_free(kc__buf *b);
/* len = 0, keep the memory. */
void kc__buf_reset(kc__buf *b);
/* Make room for extra more bytes (plus the NUL). KC_ETOOLARGE past max, KC_ENOMEM. */
int kc__buf_reserve(kc__buf *b, size_t extra);
/* kc__buf_reserve for a body about to be written whole: when the room for extra bytes is new
 * memory and extra is 256 KiB or more, [len, len + extra) is populated in one call first
 * (core/populate.h: a fault per 4 KiB costs about twice as much); in a huge buffer of 2 MiB or
 * more the whole new mapping is, on huge pages when kc__mem_huge_pick says so. Same errors. */
int kc__buf_reserve_populated(kc__buf *b, size_t extra);
/* Append n bytes. 0, KC_ETOOLARGE or KC_ENOMEM (buffer unchanged on failure). */
int kc__buf_append(kc__buf *b, const void *p, size_t n);
int kc__buf_append_str(kc__buf *b, const char *s);
int kc__buf_append_char(kc__buf *b, char c);
/* printf-append. 0, KC_ETOOLARGE, KC_ENOMEM or KC_EINVAL (bad format); unchanged on failure. */
int kc__buf_printf(kc__buf *b, const char *fmt, ...) KC__PRINTF(2, 3);
int kc__buf_vprintf(kc__buf *b, const char *fmt, va_list ap) KC__PRINTF(2, 0);
/* Shorten to len bytes (no-op when len >= b->len). */
void kc__buf_truncate(kc__buf *b, size_t len);
/* Drop the first n bytes (memmove the rest down); n > len drops everything. */
void kc__buf_consume(kc__buf *b, size_t n);
/* Hand the contents over: returns the NUL-terminated data (an allocated "" when empty; NULL only
 * on out of memory), *ret_len (may be NULL) gets the length; the buffer is left empty. Caller
 * frees the result (with free(): a mapped buffer's contents are copied into malloc'd memory). */
char *kc__buf_steal(kc__buf *b, size_t *ret_len);

/* ---- monotonic time and deadlines ------------------------------------------------------------ */

#define KC__NS_PER_MS  1000000ull
#define KC__NS_PER_SEC 1000000000ull
/* A deadline that never expires. */
#define KC__DEADLINE_NEVER UINT64_MAX

/* CLOCK_MONOTONIC now, in ns / ms. */
uint64_t kc__now_ns(void);
uint64_t kc__now_ms(void);
/* CLOCK_REALTIME now in ms since the epoch (for timestamps only, never for timeouts). */
uint64_t kc__wall_ms(void);
/* Absolute monotonic deadline ms from now (saturates at KC__DEADLINE_NEVER; ms < 0 → never). */
uint64_t kc__deadline_after_ms(int64_t ms);
/* ns left until deadline (0 when passed). */
uint64_t kc__deadline_left_ns(uint64_t deadline_ns);
/* Absolute monotonic ns → struct timespec for pthread_cond_timedwait on a condvar made by
 * kc__cond_init_monotonic. */
struct timespec kc__deadline_timespec(uint64_t deadline_ns);
/* pthread_cond_init with CLOCK_MONOTONIC. Returns 0 or KC_ENOMEM / KC_EINVAL. */
int kc__cond_init_monotonic(pthread_cond_t *cond);
/* Wait on a monotonic condvar until signalled or the deadline (KC__DEADLINE_NEVER = no timeout).
 * Returns 0 when woken (spuriously too: re-check the predicate), KC_ETIMEOUT when the deadline
 * passed. mutex must be held. */
int kc__cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *mutex, uint64_t deadline_ns);
/* Sleep for ns (restarts on EINTR). Backoff only — never use a sleep as synchronisation. */
void kc__sleep_ns(uint64_t ns);

/* ---- PRNG: xoshiro256** seeded by splitmix64 ------------------------------------------------- */

/* Per-caller state: thread-safe because each thread / structure owns its own. Not for crypto. */
typedef struct kc__rng {
    uint64_t s[4];
} kc__rng;

/* Deterministic seed (tests). */
void kc__rng_seed(kc__rng *r, uint64_t seed);
/* Seed from getrandom(), falling back to time, pid and address bits. */
void kc__rng_seed_auto(kc__rng *r);
uint64_t kc__rng_next(kc__rng *r);
/* Uniform in [lo, hi] inclusive, without modulo bias (lo > hi → lo). */
uint64_t kc__rng_range(kc__rng *r, uint64_t lo, uint64_t hi);
/* Uniform double in [0, 1). */
double kc__rng_double(kc__rng *r);
/* client-go wait.Jitter: base + uniform [0, base*factor). factor <= 0 → 1.0. Saturates. */
uint64_t kc__rng_jitter(kc__rng *r, uint64_t base, double factor);

/* ---- allocation ------------------------------------------------------------------------------ */

/*
 * Grow the array *(T **)arrp (capacity *cap elements of elem bytes) to hold at least need
 * elements: the capacity doubles (starting at first when 0) until it does, every product checked
 * for overflow. The contents are kept (realloc). 0, or KC_ENOMEM (out of memory, or a size that
 * overflows): *arrp and *cap unchanged. No-op when *cap >= need. Usage:
 *   if (kc__grow(&v, &cap, n + 1, sizeof(*v), 16) < 0) return KC_ENOMEM;
 */
int kc__grow_slow(void *arrp, size_t *cap, size_t need, size_t elem, size_t first);
static inline int kc__grow(void *arrp, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (KC__LIKELY(need <= *cap)) /* the common case stays inline: one compare */
        return 0;
    return kc__grow_slow(arrp, cap, need, elem, first);
}
/* The capacity kc__grow would pick (0 on overflow), for callers that allocate a fresh array (a
 * ring buffer unrolled into it, a hash table's bucket array). */
size_t kc__grow_cap(size_t cap, size_t need, size_t elem, size_t first);

/* calloc that a test can make fail at a named site (kc__alloc_fail_hook_set). Used where an
 * allocation failure has a visible effect that tests must see (informer/handlers.c: a coalesced
 * change dropped and counted). */
void *kc__calloc(const char *site, size_t n, size_t size);
/* Tests only: fn(site) returning true makes that kc__calloc fail. NULL removes it. The hook is
 * process-wide (atomic); the library never sets it. */
typedef bool (*kc__alloc_fail_fn)(const char *site);
void kc__alloc_fail_hook_set(kc__alloc_fail_fn fn);

/* ---- logging --------------------------------------------------------------------------------- */

/* Parse a KCACHE_LOG value (kcache/log.h): "error" | "warn" | "warning" | "info" | "debug"
 * (case-insensitive; also "0".."3") → that level; NULL, "", "off", "none" → -1 (nothing);
 * anything else → KC_LOG_LEVEL_WARN. */
int kc__log_level_parse(const char *s);
/* Format a message and hand it to the process's sink (kc_log_write: redacted there) when level is
 * enabled. subsys: one of the names listed in kcache/log.h. Thread-safe. */
void kc__log(kc_log_level level, const char *subsys, const char *fmt, ...) KC__PRINTF(3, 4);
void kc__vlog(kc_log_level level, const char *subsys, const char *fmt, va_list ap) KC__PRINTF(3, 0);

#define KC__LOG_ERR(sub, ...)  kc__log(KC_LOG_LEVEL_ERROR, sub, __VA_ARGS__)
#define KC__LOG_WARN(sub, ...) kc__log(KC_LOG_LEVEL_WARN, sub, __VA_ARGS__)
#define KC__LOG_INFO(sub, ...) kc__log(KC_LOG_LEVEL_INFO, sub, __VA_ARGS__)
/* Arguments are evaluated only when debug messages reach a sink. */
#define KC__LOG_DEBUG(sub, ...)                                                                    \
    do {                                                                                           \
        if (kc_log_enabled(KC_LOG_LEVEL_DEBUG))                                                    \
            kc__log(KC_LOG_LEVEL_DEBUG, sub, __VA_ARGS__);                                         \
    } while (0)

/*
 * Mask secrets in a text (a header line, a URL, a log message): the value after
 * "Authorization:" / "Proxy-Authorization:" (whole rest of the line), after "Bearer " / "Basic ",
 * after "password", "passwd", "token", "secret", "client-key-data" followed by '=' or ':' (up to
 * the next whitespace, '&', ',', ';' or quote), and the userinfo password of URLs
 * (scheme://user:pw@host). Masked values become "***". Case-insensitive.
 * kc__redact: new malloc'd string (caller frees), NULL on out of memory or when line is NULL.
 * kc__redact_buf: appends the redacted (s, len) to out; 0 or the kc__buf error.
 */
char *kc__redact(const char *line);
int kc__redact_buf(const char *s, size_t len, kc__buf *out);

#endif
