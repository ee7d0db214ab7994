/*
 * buf.c — kc__buf, a growable byte buffer with a hard ceiling (after curl's dynbuf).
 *
 * Growth doubles the capacity (at least 64 bytes) but never beyond max + 1 (room for the NUL), so
 * a hostile peer cannot make us allocate more than the caller allowed. Every failing operation
 * leaves the buffer exactly as it was.
 *
 * A buffer its owner marks huge (kc__buf.huge: the pager's page buffers, reused for many bodies of
 * megabytes) takes a capacity of 2 MiB or more as its own 2 MiB-aligned mapping in whole 2 MiB
 * instead of malloc's, so kc__buf_reserve_populated can put it on transparent huge pages: on the
 * VMs we measure on, a body's buffer on small pages cost 4-5 us per 4 KiB of first touch (one
 * fault, then one hypervisor exit at the first write), ~0.1-0.3 us on a huge page.
 */
#include "core/internal.h"
#include "core/populate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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
    b->huge = false;
    b->mapped = false;
}

#define HUGE_MIN ((size_t)2 << 20)

static void release(kc__buf *b)
{
    if (b->mapped)
        munmap(b->data, b->cap);
    else
        free(b->data);
}

void kc__buf_free(kc__buf *b)
{
    if (!b)
        return;
    release(b);
    bool huge = b->huge;
    kc__buf_init(b, b->max);
    b->huge = huge;
}

void kc__buf_reset(kc__buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

/* A huge buffer's new capacity cap (whole 2 MiB): a fresh aligned mapping holding the contents,
 * populated first when asked to. A mapping that grows by appends (a body without Content-Length)
 * is moved by the kernel instead, pages and all: no copy, and never the old and the new buffer
 * resident together (a 600 MB body). One that grows populated (a body growing towards its
 * Content-Length in steps, http/transport.c) has its pages moved to the start of the new aligned
 * mapping (mremap MREMAP_FIXED) and only the new part populated: no copy either. */
static int remap(kc__buf *b, size_t cap, bool populate)
{
    if (b->mapped && !populate) {
        void *m = mremap(b->data, b->cap, cap, MREMAP_MAYMOVE);
        if (m == MAP_FAILED)
            return KC_ENOMEM;
        b->data = m;
        b->cap = cap;
        return 0;
    }
    char *d = kc__mem_map_aligned(cap, NULL);
    if (!d)
        return KC_ENOMEM;
    if (b->mapped && mremap(b->data, b->cap, b->cap, MREMAP_MAYMOVE | MREMAP_FIXED, d) == d) {
        (void)kc__mem_populate_ex(d + b->cap, cap - b->cap, true);
        b->data = d;
        b->cap = cap;
        return 0;
    }
    if (populate)
        (void)kc__mem_populate_ex(d, cap, true);
    if (b->data)
        memcpy(d, b->data, b->len);
    d[b->len] = '\0';
    release(b);
    b->data = d;
    b->cap = cap;
    b->mapped = true;
    return 0;
}

/* Room for extra more bytes and the NUL; *grown: the memory is new. */
static int reserve(kc__buf *b, size_t extra, bool populate, bool *grown)
{
    size_t need, max = buf_max(b);
    *grown = false;
    if (!kc__size_add(b->len, extra, &need) || need > max)
        return KC_ETOOLARGE;
    need += 1; /* NUL */
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    if (b->huge && populate && need >= HUGE_MIN)
        cap = need; /* a body of known size: no doubling (the whole mapping gets populated) */
    while (cap < need) {
        if (cap > (SIZE_MAX / 2)) {
            cap = need;
            break;
        }
        cap *= 2;
    }
    if (max < SIZE_MAX && cap > max + 1)
        cap = max + 1;
    *grown = true;
    if (b->huge && cap >= HUGE_MIN && cap <= SIZE_MAX - HUGE_MIN)
        return remap(b, (cap + HUGE_MIN - 1) & ~(HUGE_MIN - 1), populate);
    char *d = realloc(b->data, cap);
    if (!d)
        return KC_ENOMEM;
    if (!b->data)
        d[0] = '\0';
    b->data = d;
    b->cap = cap;
    return 0;
}

int kc__buf_reserve(kc__buf *b, size_t extra)
{
    bool grown;
    return reserve(b, extra, false, &grown);
}

int kc__buf_reserve_populated(kc__buf *b, size_t extra)
{
    bool grown;
    int rc = reserve(b, extra, true, &grown);
    if (rc == 0 && grown && !b->mapped && extra >= ((size_t)256 << 10))
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
    if (d && b->mapped) { /* the caller frees with free() */
        if (!(d = malloc(len + 1)))
            return NULL;
        memcpy(d, b->data, len + 1);
        munmap(b->data, b->cap);
        b->mapped = false;
    }
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
