/*
 * buf.c — kc__buf, a growable byte buffer with a hard ceiling (after curl's dynbuf).
 *
 * Growth doubles the capacity (at least 64 bytes) but never beyond max + 1 (room for the NUL), so
 * a hostile peer cannot make us allocate more than the caller allowed. Every failing operation
 * leaves the buffer exactly as it was.
 */
#include "core/internal.h"
#include "core/populate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t buf_max(const kc__buf *b)
{
    return b->max ? b->max : KC__BUF_DEFAULT_MAX;
}

void kc__buf_init(kc__buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

void kc__buf_free(kc__buf *b)
{
    if (!b)
        return;
    free(b->data);
    kc__buf_init(b, b->max);
}

void kc__buf_reset(kc__buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

int kc__buf_reserve(kc__buf *b, size_t extra)
{
    size_t need, max = buf_max(b);
    if (!kc__size_add(b->len, extra, &need) || need > max)
        return KC_ETOOLARGE;
    need += 1; /* NUL */
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) {
        if (cap > (SIZE_MAX / 2)) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    if (max < SIZE_MAX && cap > max + 1)
        cap = max + 1;
    char *d = realloc(b->data, cap);
    if (!d)
        return KC_ENOMEM;
    if (!b->data)
        d[0] = '\0';
    b->data = d;
    b->cap = cap;
    return 0;
}

int kc__buf_reserve_populated(kc__buf *b, size_t extra)
{
    size_t had = b->cap;
    int rc = kc__buf_reserve(b, extra);
    if (rc == 0 && b->cap != had && extra >= ((size_t)256 << 10))
        (void)kc__mem_populate_ex(b->data + b->len, extra, false);
    return rc;
}

int kc__buf_append(kc__buf *b, const void *p, size_t n)
{
    int rc = kc__buf_reserve(b, n);
    if (rc < 0)
        return rc;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int kc__buf_append_str(kc__buf *b, const char *s)
{
    return kc__buf_append(b, s, s ? strlen(s) : 0);
}

int kc__buf_append_char(kc__buf *b, char c)
{
    return kc__buf_append(b, &c, 1);
}

int kc__buf_vprintf(kc__buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return KC_EINVAL;
    if ((size_t)n < sizeof small)
        return kc__buf_append(b, small, (size_t)n);
    int rc = kc__buf_reserve(b, (size_t)n);
    if (rc < 0)
        return rc;
    va_copy(ap2, ap);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    b->len += (size_t)n;
    return 0;
}

int kc__buf_printf(kc__buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = kc__buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

void kc__buf_truncate(kc__buf *b, size_t len)
{
    if (len >= b->len)
        return;
    b->len = len;
    b->data[len] = '\0';
}

void kc__buf_consume(kc__buf *b, size_t n)
{
    if (n >= b->len) {
        kc__buf_reset(b);
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

char *kc__buf_steal(kc__buf *b, size_t *ret_len)
{
    char *d = b->data;
    size_t len = b->len;
    if (!d) {
        d = calloc(1, 1);
        if (!d)
            return NULL;
        len = 0;
    }
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    if (ret_len)
        *ret_len = len;
    return d;
}
