/*
 * debug.c — what a failed KC__DEBUG_ASSERT does (Debug and sanitizer builds only), and the
 * lock-held probe behind KC__ASSERT_HELD.
 *
 * The failure message is written with write(2) to stderr as well as to the log sink: the default
 * sink is silent and an invariant violation must be seen. Then __builtin_trap() stops the process
 * (SIGILL on x86-64) so a debugger or the sanitizer runtime catches it where it happened.
 */
#include "core/internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef KC_DEBUG_ASSERTS
void kc__debug_assert_fail(const char *cond, const char *file, int line)
{
    char msg[512];
    int n = snprintf(msg, sizeof msg, "kcache: assertion failed: %s (%s:%d)\n", cond, file, line);
    if (n > 0) {
        ssize_t w = write(STDERR_FILENO, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
        (void)w;
        msg[strcspn(msg, "\n")] = '\0';
        kc_log_write(KC_LOG_LEVEL_ERROR, "core", msg + 8);
    }
    __builtin_trap();
}
#endif

bool kc__mutex_held(pthread_mutex_t *m)
{
    int r = pthread_mutex_trylock(m);
    if (r == 0) {
        pthread_mutex_unlock(m);
        return false;
    }
    return r == EBUSY;
}
