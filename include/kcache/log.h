/*
 * kcache/log.h — where the library's messages go.
 *
 * The libraries (libkcache and libkcache-server) never write to stdout or stderr on their own:
 * every message — a failing watch, a relist, a dropped change, a request line of the embedded
 * server — goes to one process-wide sink, the callback installed with kc_log_set(), as
 * (level, subsystem, message).
 *
 * Process-wide, not per client: messages come from places that have no client handle (decoders,
 * kubeconfig loading, the exit handler, the embedded server, which uses libkcache's sink), and an
 * application has one log. A per-client sink would have to be threaded through every layer and
 * would still leave those messages without a home.
 *
 * Default (before any kc_log_set call, or after kc_log_set(NULL, …)): nothing is written, unless
 * the environment variable KCACHE_LOG is set when the library first considers a message. Then
 * lines "kcache <level> <subsystem>: <message>\n" go to stderr (kc_log_stderr) for every level up
 * to the one it names:
 *   KCACHE_LOG=error | warn (or warning) | info | debug   (case-insensitive; also 0 | 1 | 2 | 3)
 *   KCACHE_LOG=off | none, empty or unset                  nothing
 *   any other value                                        warn
 * KCACHE_LOG is read once per process. An installed callback replaces that default entirely.
 *
 * Secrets: a message is redacted before any sink sees it (Authorization headers, bearer tokens,
 * password=/token=/secret= values, URL passwords become "***"), so a callback never receives
 * credentials.
 *
 * Subsystems (stable strings, a callback may filter on them): "json", "http", "rest", "store",
 * "informer", "cached", "controller", "server" (the embedded API server), "server.request" (its
 * request log, one line per request at KC_LOG_LEVEL_INFO unless kc_server_opts.quiet).
 */
#ifndef KCACHE_LOG_H
#define KCACHE_LOG_H

#include "common.h"

KC_BEGIN_DECLS

/* Severity, most severe first: a sink at level L receives messages of level <= L. */
typedef enum kc_log_level {
    KC_LOG_LEVEL_ERROR = 0, /* something failed that the library cannot retry */
    KC_LOG_LEVEL_WARN = 1, /* a persistent failure, lost data (a change dropped on out of memory) */
    KC_LOG_LEVEL_INFO = 2, /* state changes: recovered, fell back to LIST, relisted */
    KC_LOG_LEVEL_DEBUG = 3, /* per request and per retry detail */
} kc_log_level;

/*
 * A log sink. level: the message's; subsystem and message: borrowed for the call (never NULL;
 * message has no trailing newline and is already redacted). Called from library threads (an
 * informer's, a dispatcher's, the server's) and from the caller's thread, possibly concurrently:
 * it must be thread-safe. It may call kcache functions; messages they log meanwhile on the same
 * thread are dropped (no recursion). It must not call kc_log_set (KC_EBUSY).
 */
typedef void (*kc_log_fn)(void *ud, kc_log_level level, const char *subsystem, const char *message);

/*
 * Install fn (with ud, borrowed until replaced) as the process's sink, receiving messages of
 * level <= max_level. fn NULL: back to the default (nothing, or stderr per KCACHE_LOG). When it
 * returns, no thread is still inside the previous callback, so its ud may be freed.
 * Errors: KC_EINVAL (max_level out of range), KC_EBUSY (called from inside a sink).
 * Thread-safe. Since 0.1.
 */
KC_API int kc_log_set(kc_log_fn fn, void *ud, kc_log_level max_level);

/* Would a message of this level reach the sink? Cheap (one atomic load). No ownership transfer.
 * Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_log_enabled(kc_log_level level);

/*
 * Send one message (copied, redacted first) to the sink, if its level is enabled. For companion
 * libraries (libkcache-server uses it) and applications that want their lines in the same log.
 * subsystem NULL → "app"; message NULL → nothing. subsystem is borrowed for the call.
 * Thread-safe. Never fails (a message that cannot be formatted for lack of memory is dropped).
 * Since 0.1.
 */
KC_API void kc_log_write(kc_log_level level, const char *subsystem, const char *message);

/* A ready-made sink: one line "kcache <level> <subsystem>: <message>\n" on stderr per message,
 * written with one write(2) so lines of different threads never interleave. ud is unused;
 * subsystem and message are borrowed for the call. Thread-safe. Never fails (a failed write is
 * ignored). Since 0.1. */
KC_API void kc_log_stderr(void *ud, kc_log_level level, const char *subsystem, const char *message);

/* "error", "warn", "info", "debug" ("?" out of range). Borrowed (static). Thread-safe.
 * Never fails. Since 0.1. */
KC_API const char *kc_log_level_name(kc_log_level level);

KC_END_DECLS

#endif
