/*
 * ipalloc.c — the ranges of the Service allocator: parsing the service CIDR and the node port
 * range, lazily allocated bitmaps with upstream's random-scan-with-offset strategy
 * (k8s.io/kubernetes pkg/registry/core/service/allocator: randomScanStrategyWithOffset, and
 * ipallocator / portallocator calculateRangeOffset), and IP text ↔ slot conversion.
 * An IPv4 range excludes its network and broadcast addresses, an IPv6 one its network address;
 * the first usable IP is taken at start (the `kubernetes` Service's IP in a cluster).
 * Runs under the caller's lock; no state beyond the allocator.
 */
#include "server/defaults/service_alloc_internal.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool kc__slots_test(const kc__slots *s, uint64_t i)
{
    if (s->reserve0 && i == 0)
        return true;
    return s->bits && i < s->size && (s->bits[i / 8] >> (i % 8)) & 1;
}

int kc__slots_set(kc__slots *s, uint64_t i, bool on)
{
    if (i >= s->size || (s->reserve0 && i == 0))
        return 0;
    if (!s->bits && !(s->bits = calloc((size_t)(s->size + 7) / 8, 1)))
        return KC_ENOMEM;
    bool was = kc__slots_test(s, i);
    if (on && !was) {
        s->bits[i / 8] |= (uint8_t)(1u << (i % 8));
        s->used++;
    } else if (!on && was) {
        s->bits[i / 8] &= (uint8_t) ~(1u << (i % 8));
        s->used--;
    }
    return 0;
}

static bool scan(const kc__slots *s, uint64_t lo, uint64_t n, uint64_t start, uint64_t *ret)
{
    for (uint64_t k = 0; k < n; k++) {
        uint64_t at = lo + (start + k) % n;
        if (!kc__slots_test(s, at)) {
            *ret = at;
            return true;
        }
    }
    return false;
}

bool kc__slots_next(kc__slots *s, kc__rng *rng, uint64_t *ret)
{
    if (s->used >= s->size)
        return false;
    uint64_t upper = s->size - s->offset;
    if (upper && scan(s, s->offset, upper, kc__rng_range(rng, 0, upper - 1), ret))
        return true;
    return s->offset && scan(s, 0, s->offset, kc__rng_range(rng, 0, s->offset - 1), ret);
}

/* upstream calculateRangeOffset: size/step within [lo, hi]; 0 below lo. */
static uint64_t band(uint64_t size, uint64_t lo, uint64_t hi, uint64_t step)
{
    if (size < lo)
        return 0;
    uint64_t o = size / step;
    return o < lo ? lo : o > hi ? hi : o;
}

static int parse_cidr(kc__svc_alloc *a, const char *cidr, kc_error *err)
{
    char addr[64];
    const char *slash = strchr(cidr, '/');
    char *end;
    unsigned long prefix = slash ? strtoul(slash + 1, &end, 10) : 0;
    if (!slash || (size_t)(slash - cidr) >= sizeof(addr) || !slash[1] || *end)
        return kc_error_set(err, KC_EINVAL, "service CIDR \"%s\" is not ADDRESS/PREFIX", cidr);
    memcpy(addr, cidr, (size_t)(slash - cidr));
    addr[slash - cidr] = 0;
    if (inet_pton(AF_INET, addr, a->base) == 1)
        a->family = AF_INET;
    else if (inet_pton(AF_INET6, addr, a->base) == 1)
        a->family = AF_INET6;
    else
        return kc_error_set(err, KC_EINVAL, "service CIDR \"%s\": \"%s\" is not an IP address",
                            cidr, addr);
    unsigned bits = a->family == AF_INET ? 32 : 128;
    if (prefix > bits || bits - prefix > 20 || bits - prefix < 2)
        return kc_error_set(err, KC_EINVAL,
                            "service CIDR \"%s\": the prefix must be /%u to /%u (at most 2^20 "
                            "addresses, as the API server's allocator)",
                            cidr, bits - 20, bits - 2);
    a->prefix = (unsigned)prefix;
    for (unsigned b = a->prefix; b < bits; b++) /* mask the host bits */
        a->base[b / 8] &= (unsigned char)~(0x80u >> (b % 8));
    char txt[INET6_ADDRSTRLEN];
    inet_ntop(a->family, a->base, txt, sizeof(txt));
    snprintf(a->cidr, sizeof(a->cidr), "%s/%u", txt, a->prefix);
    uint64_t full = 1ull << (bits - a->prefix);
    a->ips.size = full - (a->family == AF_INET ? 2 : 1);
    a->ips.reserve0 = true; /* the first IP: the `kubernetes` Service's */
    a->ips.used = 1;
    a->ips.offset = band(full, 16, 256, 16);
    if (a->ips.offset >= a->ips.size)
        a->ips.offset = 0;
    return 0;
}

static int parse_ports(kc__svc_alloc *a, const char *ports, kc_error *err)
{
    unsigned lo, hi;
    int used = 0;
    if (sscanf(ports, "%u-%u%n", &lo, &hi, &used) != 2 || ports[used] || lo < 1 || hi > 65535 ||
        hi < lo + 15)
        return kc_error_set(err, KC_EINVAL,
                            "node port range \"%s\" is not LO-HI within 1-65535 with at least "
                            "16 ports",
                            ports);
    a->port_lo = lo;
    a->port_hi = hi;
    snprintf(a->port_range, sizeof(a->port_range), "%u-%u", lo, hi);
    a->ports.size = hi - lo + 1;
    a->ports.offset = band(a->ports.size, 16, 128, 32);
    return 0;
}

int kc__svc_alloc_new(const char *cidr, const char *ports, uint64_t seed, kc__svc_alloc **ret,
                      kc_error *err)
{
    kc__svc_alloc *a = calloc(1, sizeof(*a));
    if (!a)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    int rc = parse_cidr(a, cidr ? cidr : KC__SERVICE_CIDR_DEFAULT, err);
    if (!rc)
        rc = parse_ports(a, ports ? ports : KC__NODE_PORT_RANGE_DEFAULT, err);
    if (rc) {
        free(a);
        return rc;
    }
    kc__rng_seed(&a->rng, seed);
    *ret = a;
    return 0;
}

void kc__svc_alloc_free(kc__svc_alloc *a)
{
    if (!a)
        return;
    free(a->ips.bits);
    free(a->ports.bits);
    free(a);
}

void kc__svc_alloc_reset(kc__svc_alloc *a)
{
    if (!a)
        return;
    free(a->ips.bits);
    free(a->ports.bits);
    a->ips.bits = a->ports.bits = NULL;
    a->ips.used = 1; /* the reserved first IP */
    a->ports.used = 0;
}

const char *kc__ip_family(const kc__svc_alloc *a)
{
    return a->family == AF_INET ? "IPv4" : "IPv6";
}

const char *kc__svc_alloc_first_ip(const kc__svc_alloc *a, char out[64])
{
    kc__ip_text(a, 0, out);
    return kc__ip_family(a);
}

int kc__ip_slot(const kc__svc_alloc *a, const char *ip, uint64_t *ret)
{
    unsigned char b[16];
    int fam;
    if (inet_pton(AF_INET, ip, b) == 1)
        fam = AF_INET;
    else if (inet_pton(AF_INET6, ip, b) == 1)
        fam = AF_INET6;
    else
        return -2;
    if (fam != a->family)
        return -1;
    unsigned bits = fam == AF_INET ? 32 : 128;
    for (unsigned i = 0; i < a->prefix; i++)
        if (((b[i / 8] ^ a->base[i / 8]) >> (7 - i % 8)) & 1)
            return 0;
    size_t n = bits / 8;
    uint64_t off =
        ((uint64_t)b[n - 4] << 24 | (uint64_t)b[n - 3] << 16 | (uint64_t)b[n - 2] << 8 | b[n - 1]) &
        ((1ull << (bits - a->prefix)) - 1);
    if (off < 1 || off > a->ips.size)
        return 0;
    *ret = off - 1;
    return 1;
}

void kc__ip_text(const kc__svc_alloc *a, uint64_t slot, char out[64])
{
    unsigned char b[16];
    memcpy(b, a->base, sizeof(b));
    size_t n = a->family == AF_INET ? 4 : 16;
    uint64_t off = slot + 1; /* < 2^20 and the base's host bits are 0: OR adds */
    for (size_t i = 0; i < 3; i++)
        b[n - 1 - i] |= (unsigned char)((off >> (8 * i)) & 0xff);
    inet_ntop(a->family, b, out, 64);
}
