/*
 * opts.c — the struct-size handshake of the public ABI (docs/abi.md).
 *
 * Every public function that reads a caller-allocated struct (options, conditions, handler tables)
 * or writes one (status, stats) takes the struct's size as the caller compiled it: the header
 * supplies sizeof through a same-named macro. Structs only grow at the end, so
 *   - reading: a shorter struct (caller built against an older header) is copied into a zeroed
 *     full-size local: the fields it does not have read as 0, which means "default"; a longer one
 *     (newer header, older library) is accepted when the bytes this library does not know are all
 *     zero (the caller did not ask for anything new), else KC_EUNSUPPORTED naming the struct —
 *     never silently ignored;
 *   - writing: at most the caller's size is written; a longer caller struct gets zeros past what
 *     this library knows.
 * Both are one memcpy on the hot path (the sizes are equal there).
 */
#include "core/internal.h"

#include <string.h>

int kc__opts_copy(void *dst, size_t dst_size, const void *src, size_t src_size, const char *what,
                  kc_error *err)
{
    memset(dst, 0, dst_size);
    if (!src)
        return 0;
    if (!src_size) /* a nested pointer whose _size field was left 0 */
        return kc_error_set(err, KC_EINVAL,
                            "%s: given with size 0 (set its _size field to the struct's sizeof)",
                            what);
    if (src_size <= dst_size) {
        memcpy(dst, src, src_size);
        return 0;
    }
    const unsigned char *tail = (const unsigned char *)src + dst_size;
    for (size_t i = 0; i < src_size - dst_size; i++) {
        if (tail[i])
            return kc_error_set(err, KC_EUNSUPPORTED,
                                "%s: a field this library does not know is set (byte %zu of %zu; "
                                "the library knows %zu: built against a newer kcache header?)",
                                what, dst_size + i, src_size, dst_size);
    }
    memcpy(dst, src, dst_size);
    return 0;
}

void kc__result_copy(void *dst, size_t dst_size, const void *src, size_t src_size)
{
    if (!dst)
        return;
    if (dst_size <= src_size) {
        memcpy(dst, src, dst_size);
        return;
    }
    memcpy(dst, src, src_size);
    memset((unsigned char *)dst + src_size, 0, dst_size - src_size);
}
