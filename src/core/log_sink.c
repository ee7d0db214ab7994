/*
 * log_sink.c — the process's one log sink (kcache/log.h): kc_log_set, kc_log_write, the stderr
 * sink that KCACHE_LOG selects.
 *
 * State: the callback and its ud behind a rwlock (writers: kc_log_set; readers: every delivered
 * message, held across the callback so that kc_log_set returning means nobody is still in the old
 * one), and the enabled level in an atomic int read without the lock (kc_log_enabled is on the
 * debug-log path of every request). KCACHE_LOG is read once (pthread_once) before the first use;
 * it only selects the default, which an installed callback replaces.
 *
 * Recursion: a thread-local flag marks "inside the sink"; a message logged from there (a callback
 * that calls into kcache) is dropped, and kc_log_set from there fails with KC_EBUSY instead of
 * deadlocking on the rwlock. glibc's rwlock prefers readers by default, so the read lock is never
 * blocked by a waiting kc_log_set while this thread already holds it.
 *
 * This is the only mutable global of libkcache besides the exit list (informer/exit.c) and the
 * test allocation hook; libkcache-server has no copy of it (it calls these public functions in
 * libkcache.so; checked by tests/packaging/check_symbols.sh).
 */
#include "core/internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MSG_MAX ((size_t)16384) /* redacted message bound (the formatter's is 8 KiB) */

static pthread_once_t kc__log_sink_once = PTHREAD_ONCE_INIT;
static pthread_rwlock_t kc__log_sink_lock = PTHREAD_RWLOCK_INITIALIZER;
static kc_log_fn kc__log_sink_fn;         /* kc__log_sink_lock */
static void *kc__log_sink_ud;             /* kc__log_sink_lock */
static atomic_int kc__log_sink_max = -1;  /* enabled level; -1: nothing */
static int kc__log_sink_env = -1;         /* KCACHE_LOG's level; written once */
static __thread bool kc__log_sink_inside; /* this thread is inside the callback */

static void sink_init(void)
{
    kc__log_sink_env = kc__log_level_parse(getenv("KCACHE_LOG"));
    if (kc__log_sink_env >= 0)
        kc__log_sink_fn = kc_log_stderr;
    atomic_store_explicit(&kc__log_sink_max, kc__log_sink_env, memory_order_relaxed);
}

int kc_log_set(kc_log_fn fn, void *ud, kc_log_level max_level)
{
    if ((int)max_level < KC_LOG_LEVEL_ERROR || max_level > KC_LOG_LEVEL_DEBUG)
        return KC_EINVAL;
    if (kc__log_sink_inside)
        return KC_EBUSY;
    pthread_once(&kc__log_sink_once, sink_init);
    pthread_rwlock_wrlock(&kc__log_sink_lock);
    int max = (int)max_level;
    if (!fn) {
        max = kc__log_sink_env;
        fn = max >= 0 ? kc_log_stderr : NULL;
        ud = NULL;
    }
    kc__log_sink_fn = fn;
    kc__log_sink_ud = ud;
    atomic_store_explicit(&kc__log_sink_max, max, memory_order_relaxed);
    pthread_rwlock_unlock(&kc__log_sink_lock);
    return 0;
}

bool kc_log_enabled(kc_log_level level)
{
    pthread_once(&kc__log_sink_once, sink_init);
    return (int)level <= atomic_load_explicit(&kc__log_sink_max, memory_order_relaxed) &&
           (int)level >= 0;
}

void kc_log_write(kc_log_level level, const char *subsystem, const char *message)
{
    if (!message || !kc_log_enabled(level) || kc__log_sink_inside)
        return;
    if (!subsystem)
        subsystem = "app";
    kc__buf b = KC__BUF_INIT(MSG_MAX);
    size_t n = strnlen(message, MSG_MAX / 2);
    if (kc__redact_buf(message, n, &b) == 0) {
        const char *text = b.data ? b.data : "";
        pthread_rwlock_rdlock(&kc__log_sink_lock);
        kc_log_fn fn = kc__log_sink_fn;
        void *ud = kc__log_sink_ud;
        if (fn && (int)level <= atomic_load_explicit(&kc__log_sink_max, memory_order_relaxed)) {
            kc__log_sink_inside = true;
            fn(ud, level, subsystem, text);
            kc__log_sink_inside = false;
        }
        pthread_rwlock_unlock(&kc__log_sink_lock);
    }
    kc__buf_free(&b);
}

const char *kc_log_level_name(kc_log_level level)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    return (int)level >= 0 && (size_t)level < KC__ARRAY_LEN(names) ? names[level] : "?";
}

void kc_log_stderr(void *ud, kc_log_level level, const char *subsystem, const char *message)
{
    (void)ud;
    kc__buf line = KC__BUF_INIT(MSG_MAX + 256);
    if (kc__buf_printf(&line, "kcache %s %s: %s", kc_log_level_name(level),
                       subsystem ? subsystem : "app", message ? message : "") == 0 &&
        kc__buf_append_char(&line, '\n') == 0) {
        ssize_t w = write(STDERR_FILENO, line.data, line.len);
        (void)w;
    }
    kc__buf_free(&line);
}
