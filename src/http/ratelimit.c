/*
 * ratelimit.c — client-side token bucket (client-go's flowcontrol.NewTokenBucketRateLimiter).
 *
 * The bucket holds up to burst tokens and refills at qps per second. A caller reserves one token
 * under the mutex; when the bucket is empty the balance goes negative (a queue of reservations)
 * and the caller sleeps outside the lock for the time it takes to refill to its reservation. So
 * the long-run rate is exactly qps regardless of how many threads wait, and no lock is held while
 * sleeping. qps <= 0 disables the limiter.
 */
#include "http/internal.h"

int kc__ratelimit_init(kc__ratelimit *rl, double qps, int burst)
{
    rl->qps = qps;
    rl->burst = burst > 0 ? burst : 1;
    rl->tokens = rl->burst;
    rl->last_ns = kc__now_ns();
    return pthread_mutex_init(&rl->mu, NULL) == 0 ? 0 : KC_ENOMEM;
}

void kc__ratelimit_destroy(kc__ratelimit *rl)
{
    pthread_mutex_destroy(&rl->mu);
}

uint64_t kc__ratelimit_reserve(kc__ratelimit *rl)
{
    if (rl->qps <= 0)
        return 0;
    pthread_mutex_lock(&rl->mu);
    uint64_t now = kc__now_ns();
    if (now > rl->last_ns) {
        rl->tokens += (double)(now - rl->last_ns) * rl->qps / 1e9;
        if (rl->tokens > rl->burst)
            rl->tokens = rl->burst;
        rl->last_ns = now;
    }
    rl->tokens -= 1.0;
    double deficit = rl->tokens < 0 ? -rl->tokens : 0;
    pthread_mutex_unlock(&rl->mu);
    return (uint64_t)(deficit / rl->qps * 1e9);
}

void kc__ratelimit_wait(kc__ratelimit *rl)
{
    uint64_t ns = kc__ratelimit_reserve(rl);
    if (ns)
        kc__sleep_ns(ns);
}
