/*
 * time.c — monotonic clock, deadlines and condition variables on CLOCK_MONOTONIC.
 *
 * Every timeout in kcache is an absolute CLOCK_MONOTONIC deadline in ns (uint64_t), so a wall
 * clock step never shortens or stretches a wait. Condvars that wait with a deadline must be made
 * with kc__cond_init_monotonic so pthread_cond_timedwait interprets the timespec on that clock.
 */
#include "core/internal.h"

#include <errno.h>

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * KC__NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t kc__now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

uint64_t kc__now_ms(void)
{
    return kc__now_ns() / KC__NS_PER_MS;
}

uint64_t kc__wall_ms(void)
{
    return clock_ns(CLOCK_REALTIME) / KC__NS_PER_MS;
}

uint64_t kc__deadline_after_ms(int64_t ms)
{
    if (ms < 0)
        return KC__DEADLINE_NEVER;
    uint64_t add, r;
    if (__builtin_mul_overflow((uint64_t)ms, KC__NS_PER_MS, &add) ||
        __builtin_add_overflow(kc__now_ns(), add, &r) || r == KC__DEADLINE_NEVER)
        return KC__DEADLINE_NEVER;
    return r;
}

uint64_t kc__deadline_left_ns(uint64_t deadline_ns)
{
    uint64_t now = kc__now_ns();
    return deadline_ns > now ? deadline_ns - now : 0;
}

struct timespec kc__deadline_timespec(uint64_t deadline_ns)
{
    struct timespec ts;
    /* Clamp so tv_sec fits any time_t comfortably (about 292 years for int64 ns). */
    uint64_t max_ns = (uint64_t)INT32_MAX * KC__NS_PER_SEC * 4;
    if (deadline_ns > max_ns)
        deadline_ns = max_ns;
    ts.tv_sec = (time_t)(deadline_ns / KC__NS_PER_SEC);
    ts.tv_nsec = (long)(deadline_ns % KC__NS_PER_SEC);
    return ts;
}

int kc__cond_init_monotonic(pthread_cond_t *cond)
{
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return KC_ENOMEM;
    int rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
    if (rc == ENOMEM || rc == EAGAIN)
        return KC_ENOMEM;
    return rc == 0 ? 0 : KC_EINVAL;
}

int kc__cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *mutex, uint64_t deadline_ns)
{
    if (deadline_ns == KC__DEADLINE_NEVER) {
        pthread_cond_wait(cond, mutex);
        return 0;
    }
    struct timespec ts = kc__deadline_timespec(deadline_ns);
    int rc = pthread_cond_timedwait(cond, mutex, &ts);
    if (rc == ETIMEDOUT)
        return KC_ETIMEOUT;
    return 0;
}

void kc__sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / KC__NS_PER_SEC), (long)(ns % KC__NS_PER_SEC)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}
