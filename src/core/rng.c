/*
 * rng.c — xoshiro256** (Blackman & Vigna) seeded through splitmix64.
 *
 * Used for retry/backoff jitter and resync spreading, never for anything security-related. The
 * state lives in a caller-owned kc__rng, so there is no global state and no lock: one rng per
 * thread or per structure (under that structure's lock).
 */
#include "core/internal.h"

#include <stdint.h>
#include <sys/random.h>
#include <unistd.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void kc__rng_seed(kc__rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

void kc__rng_seed_auto(kc__rng *r)
{
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed)
        seed = kc__now_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)r;
    kc__rng_seed(r, seed);
}

uint64_t kc__rng_next(kc__rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t kc__rng_range(kc__rng *r, uint64_t lo, uint64_t hi)
{
    if (lo >= hi)
        return lo;
    uint64_t span = hi - lo;
    if (span == UINT64_MAX)
        return kc__rng_next(r);
    span += 1;
    /* Reject the top partial bucket so every value is equally likely. */
    uint64_t limit = UINT64_MAX - (UINT64_MAX % span);
    uint64_t v;
    do {
        v = kc__rng_next(r);
    } while (v >= limit);
    return lo + v % span;
}

double kc__rng_double(kc__rng *r)
{
    return (double)(kc__rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t kc__rng_jitter(kc__rng *r, uint64_t base, double factor)
{
    if (!(factor > 0))
        factor = 1.0;
    double add = kc__rng_double(r) * factor * (double)base;
    if (add >= (double)(UINT64_MAX - base))
        return UINT64_MAX;
    return base + (uint64_t)add;
}
