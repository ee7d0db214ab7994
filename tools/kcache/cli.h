/* cli.h — subcommand registry and shared helpers of the kcache CLI (see main.c, cli_util.c). */
#ifndef KC_CLI_H
#define KC_CLI_H

#include "kcache/client.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses of every command: 0 success, 1 failure, 2 bad arguments. */
#define KC_CLI_EXIT_FAIL  1
#define KC_CLI_EXIT_USAGE 2

/* First getopt_long val of options that have no short form. */
#define KC_CLI_LONG_ONLY 256

#define KC_CLI_NS_PER_MS 1000000ull

typedef struct kc__cli_cmd {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the command name; returns the exit status */
} kc__cli_cmd;

void kc__cli_register(const char *name, const char *summary, int (*run)(int, char **));

/* Use once per command file: KC_CLI_COMMAND(serve, "run the in-memory API server", cmd_serve) */
#define KC_CLI_COMMAND(name, summary, fn)                                                          \
    __attribute__((constructor)) static void kc__cli_reg_##name(void)                              \
    {                                                                                              \
        kc__cli_register(#name, summary, fn);                                                      \
    }

/*
 * The one format for bad arguments, for every command:
 *   kcache CMD: MESSAGE
 *   Run 'kcache CMD --help' for usage.
 * on stderr, where MESSAGE names the flag or argument first ("--limit: expected …"). Returns
 * KC_CLI_EXIT_USAGE. cmd NULL means the top level ("kcache: …", "Run 'kcache --help' …").
 */
int kc__cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Report what getopt_long rejected in that format. Call getopt_long with opterr = 0 and an
 * optstring that starts with ':'; give long-only options a val of KC_CLI_LONG_ONLY or above (so a
 * rejected one is told from an unknown short flag). ch is getopt_long's '?' or ':' return,
 * optstring the same string. Returns KC_CLI_EXIT_USAGE.
 */
int kc__cli_getopt_error(const char *cmd, int ch, const char *optstring, char **argv);

/*
 * The flags that pick what to read and from where, shared by get and watch as kubectl spells
 * them: -n/--namespace NS, -A/--all-namespaces, -l/--selector SEL, --field-selector S,
 * --kubeconfig PATH, --context NAME, --request-timeout T. A command lists KC__CLI_SCOPE_OPTIONS in
 * its getopt_long table (and "n:Al:" in its optstring), numbers its own long-only options from
 * KC_CLI_OPT_OWN, and hands every getopt_long return to kc__cli_scope_flag before its own switch.
 * kubectl's global ones (-n, --kubeconfig, --context, --request-timeout) may also come before
 * the command (kcache --kubeconfig F get pods): main.c moves them after it.
 */
typedef struct kc__cli_scope {
    const char *ns, *label_selector, *field_selector, *kubeconfig, *context; /* argv's */
    bool all_ns;
    const char *request_timeout; /* as typed; NULL = the library's default (30 s) */
    int64_t timeout_ms;          /* parsed: > 0, or -1 for none ("0") */
} kc__cli_scope;

enum {
    KC_CLI_OPT_FIELD = KC_CLI_LONG_ONLY,
    KC_CLI_OPT_KUBECONFIG,
    KC_CLI_OPT_CONTEXT,
    KC_CLI_OPT_TIMEOUT,
    KC_CLI_OPT_OWN
};

/* clang-format off */
#define KC__CLI_SCOPE_OPTIONS                                                                      \
    {"namespace", required_argument, NULL, 'n'},                                                   \
    {"all-namespaces", no_argument, NULL, 'A'},                                                    \
    {"selector", required_argument, NULL, 'l'},                                                    \
    {"field-selector", required_argument, NULL, KC_CLI_OPT_FIELD},                                 \
    {"kubeconfig", required_argument, NULL, KC_CLI_OPT_KUBECONFIG},                                \
    {"context", required_argument, NULL, KC_CLI_OPT_CONTEXT},                                      \
    {"request-timeout", required_argument, NULL, KC_CLI_OPT_TIMEOUT}
/* clang-format on */

/* The help lines of those flags, for a command's --help. */
#define KC__CLI_SCOPE_HELP                                                                         \
    "      --kubeconfig PATH   kubeconfig file (default: $KUBECONFIG, ~/.kube/config)\n"           \
    "      --context NAME      kubeconfig context\n"                                               \
    "      --request-timeout T how long one request may take: 0 (no limit), 5s, 1m, 500ms, or\n"   \
    "                          a number of seconds (default 30s; a watch is not limited)\n"

/* ch (a getopt_long return, its value in arg) stored into *s when it is one of those flags: 1;
 * 0 for any other; -1 when its value is wrong (reported for cmd, exit status KC_CLI_EXIT_USAGE). */
int kc__cli_scope_flag(const char *cmd, kc__cli_scope *s, int ch, const char *arg);

/* kubectl's --request-timeout value: "0" (none: *ms = -1), a bare number of seconds, or Go
 * durations (1h2m3.5s, 300ms, 10us, 5ns; rounded up to whole milliseconds). 0, or -1 if bad. */
int kc__cli_parse_timeout(const char *s, int64_t *ms);

/* Move kubectl's global flags that precede the command (kcache --kubeconfig F -n NS get pods)
 * after it, in place: argv[1] becomes the command. 0, or the exit status of a bad argument (an
 * unknown flag before the command, or a missing value). */
int kc__cli_hoist_globals(int argc, char **argv);

/* A failure at run time: "kcache CMD: MESSAGE" on stderr. MESSAGE is "error from server (REASON):
 * message" when err carries an HTTP answer; for KC_ETIMEOUT, that the server did not answer
 * within the request timeout (naming it and --request-timeout); else err's message, else
 * kc_strerror(rc). */
void kc__cli_error(const char *cmd, int rc, const kc_error *err);

/* cli_log.c: install the CLI's log sink (warnings, or up to KCACHE_LOG, on stderr). request_log:
 * also print the embedded server's request lines ("kcache serve: GET /path 200"). */
void kc__cli_log_init(bool request_log);
/* cli_log.c: 0, or KC_EUNSUPPORTED after printing why this CPU cannot run the JSON decoder. */
int kc__cli_check_cpu(void);

/* Resolve a TYPE as kubectl does (kc_client_resolve). 0 and *ret filled (caller clears), or the
 * error reported for cmd — a type the server lacks in kubectl's words ("the server doesn't have
 * a resource type \"x\""). */
int kc__cli_resolve(const char *cmd, kc_client *c, const char *type, kc_resource_info *ret);

/* Connect as kubectl does (--kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster; --context),
 * with s's --request-timeout. 0 and a new client in *ret (caller frees), or the error, already
 * reported for cmd. */
int kc__cli_connect(const char *cmd, const kc__cli_scope *s, kc_client **ret);

/* cli_watch.c: stop a watch on Ctrl-C / SIGTERM — block them in every thread (call before
 * starting others) and fire cancel from a thread that waits for them. NULL when it cannot (the
 * watch then runs uninterruptible by us). _end stops that thread; accepts NULL. */
typedef struct kc__cli_sigstop kc__cli_sigstop;
kc__cli_sigstop *kc__cli_sigstop_start(kc_cancel *cancel);
void kc__cli_sigstop_end(kc__cli_sigstop *s);

/* cli_watch.c: why a watch ended (kc_client_watch's rc and err), on stderr for cmd, with where
 * ("after N events, last resourceVersion RV"): the server closing the stream, a broken
 * connection or timeout (in words, not the transport's), or the error. KC_ECANCELED
 * (interrupted) is a success: 0, and so is the server closing the stream under get -w (kubectl's
 * status there); else KC_CLI_EXIT_FAIL. */
int kc__cli_watch_ended(const char *cmd, int rc, const kc_error *err, unsigned long events,
                        const char *last_rv);

/* The monotonic clock (CLOCK_MONOTONIC) in nanoseconds. */
uint64_t kc__cli_now_ns(void);

/* 64 random bits from getrandom(2), or the clock and pid when it fails: for unique names, never
 * for secrets. */
uint64_t kc__cli_random(void);

#endif
