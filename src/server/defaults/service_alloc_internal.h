/*
 * service_alloc_internal.h — the bitmaps of the Service allocator, shared by ipalloc.c (ranges,
 * slots, IP text) and service_alloc.c (the Service rules). Runs under the caller's lock.
 */
#ifndef KC_SERVER_SERVICE_ALLOC_INTERNAL_H
#define KC_SERVER_SERVICE_ALLOC_INTERNAL_H

#include "server/defaults/service_alloc.h"

#include "core/internal.h"

#include <netinet/in.h>

/* A bitmap of `size` slots; [0, offset) is the static band, used for random allocation only
 * when the rest is full. bits is allocated at the first use. */
typedef struct kc__slots {
    uint64_t size, offset, used;
    bool reserve0; /* slot 0 is always taken (and counted in used) */
    uint8_t *bits;
} kc__slots;

struct kc__svc_alloc {
    int family;                /* AF_INET or AF_INET6 */
    unsigned char base[16];    /* network address (4 or 16 bytes) */
    unsigned prefix;           /* prefix length */
    char cidr[64];             /* canonical text, for messages */
    kc__slots ips;             /* slot i = base + 1 + i */
    unsigned port_lo, port_hi; /* node port range */
    char port_range[24];       /* "30000-32767" */
    kc__slots ports;           /* slot i = port_lo + i */
    kc__rng rng;
};

/* Slot operations (false on out of memory for the lazy bitmap). */
bool kc__slots_test(const kc__slots *s, uint64_t i);
int kc__slots_set(kc__slots *s, uint64_t i, bool on);
/* Random free slot (upper band first) into *ret; false when full. */
bool kc__slots_next(kc__slots *s, kc__rng *rng, uint64_t *ret);

/* IP text ↔ slot. ip_slot: 1 = a slot of the range, 0 = a valid IP of the served family
 * outside the range (or the network / broadcast address), -1 = another family, -2 = not an IP. */
int kc__ip_slot(const kc__svc_alloc *a, const char *ip, uint64_t *ret);
void kc__ip_text(const kc__svc_alloc *a, uint64_t slot, char out[64]);
/* "IPv4" / "IPv6" of the served family. */
const char *kc__ip_family(const kc__svc_alloc *a);

#endif
