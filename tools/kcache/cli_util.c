/*
 * cli_util.c — what every kcache command shares: the one error format for bad arguments
 * ("kcache CMD: FLAG: problem" + "Run 'kcache CMD --help' for usage.", exit 2), the translation
 * of getopt_long's rejections into it (getopt's own messages are switched off with opterr = 0),
 * the flags get and watch share (kc__cli_scope), the format of run-time failures (server errors as
 * kubectl words them: "error from server (NotFound): …"), connecting with the kubeconfig rules, and
 * the clock and random bits the commands need (the CLI uses the public headers only, not the
 * library's internal helpers).
 */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

int kc__cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "kcache%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nRun 'kcache%s%s --help' for usage.\n", cmd ? " " : "", cmd ? cmd : "");
    return KC_CLI_EXIT_USAGE;
}

int kc__cli_getopt_error(const char *cmd, int ch, const char *optstring, char **argv)
{
    extern int optind, optopt;
    /* A long option is the element just consumed (optind has moved past it). A short one is
     * optopt: it may sit inside a bundle such as -xA, where optind has not moved yet. */
    const char *elem = optind > 0 ? argv[optind - 1] : "";
    int flag_len = (int)strcspn(elem, "=");
    bool long_elem = !strncmp(elem, "--", 2);
    if (ch == ':') {
        if (long_elem)
            return kc__cli_usage_error(cmd, "%s: missing value", elem);
        return kc__cli_usage_error(cmd, "-%c: missing value", optopt);
    }
    if (optopt == 0) /* an unknown (or ambiguous) long flag */
        return kc__cli_usage_error(cmd, "%.*s: unknown flag", flag_len, elem);
    if (optopt < KC_CLI_LONG_ONLY && !strchr(optstring, optopt)) /* an unknown short flag */
        return kc__cli_usage_error(cmd, "-%c: unknown flag", optopt);
    /* a known flag that takes no value was given one (--help=x) */
    return kc__cli_usage_error(cmd, "%.*s: takes no value", flag_len, elem);
}

int kc__cli_scope_flag(const char *cmd, kc__cli_scope *s, int ch, const char *arg)
{
    switch (ch) {
    case 'n':
        s->ns = arg;
        return 1;
    case 'A':
        s->all_ns = true;
        return 1;
    case 'l':
        s->label_selector = arg;
        return 1;
    case KC_CLI_OPT_FIELD:
        s->field_selector = arg;
        return 1;
    case KC_CLI_OPT_KUBECONFIG:
        s->kubeconfig = arg;
        return 1;
    case KC_CLI_OPT_CONTEXT:
        s->context = arg;
        return 1;
    case KC_CLI_OPT_TIMEOUT:
        s->request_timeout = arg;
        if (kc__cli_parse_timeout(arg, &s->timeout_ms)) {
            kc__cli_usage_error(cmd,
                                "--request-timeout: invalid value '%s': a single integer in "
                                "seconds, or an integer followed by a time unit (e.g. 1s | 2m | "
                                "3h), 0 for no timeout",
                                arg);
            return -1;
        }
        return 1;
    default:
        return 0;
    }
}

int kc__cli_parse_timeout(const char *s, int64_t *ms)
{
    static const struct {
        const char *unit;
        double ms;
    } units[] = {{"ns", 1e-6}, {"us", 1e-3}, {"\xc2\xb5s", 1e-3}, {"ms", 1},
                 {"s", 1000},  {"m", 60000}, {"h", 3600000}};
    char *end;
    errno = 0;
    long long secs = strtoll(s, &end, 10);
    if (*s && !*end && !errno && secs >= 0 && secs <= INT64_MAX / 1000) { /* a bare number */
        *ms = secs ? secs * 1000 : -1;
        return 0;
    }
    double total = 0;
    const char *p = s;
    if (!*p || !strcmp(p, "0"))
        return -1;
    while (*p) {
        if (!((*p >= '0' && *p <= '9') || *p == '.'))
            return -1;
        double v = strtod(p, &end);
        size_t i = 0, n = sizeof units / sizeof units[0], best = n;
        for (; i < n; i++) /* the longest unit that matches ("ms" before "m") */
            if (!strncmp(end, units[i].unit, strlen(units[i].unit)) &&
                (best == n || strlen(units[i].unit) > strlen(units[best].unit)))
                best = i;
        if (end == p || best == n)
            return -1;
        total += v * units[best].ms;
        p = end + strlen(units[best].unit);
    }
    if (total > 9e15)
        return -1;
    *ms = total <= 0 ? -1 : (int64_t)total < total ? (int64_t)total + 1 : (int64_t)total;
    return 0;
}

/* A global flag: its value count (1), or -1 when arg is not one. "--flag=v" counts 0. */
static int global_flag(const char *arg)
{
    static const char *const flags[] = {"-n", "--namespace", "--kubeconfig", "--context",
                                        "--request-timeout"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        size_t n = strlen(flags[i]);
        if (!strncmp(arg, flags[i], n) && (!arg[n] || (arg[n] == '=' && arg[1] == '-')))
            return arg[n] ? 0 : 1;
        if (!strcmp(flags[i], "-n") && !strncmp(arg, "-n", 2) && arg[2]) /* -nNS */
            return 0;
    }
    return -1;
}

int kc__cli_hoist_globals(int argc, char **argv)
{
    int i = 1;
    while (i < argc && argv[i][0] == '-' && strcmp(argv[i], "--help") && strcmp(argv[i], "-h") &&
           strcmp(argv[i], "--version")) {
        int vals = global_flag(argv[i]);
        if (vals < 0)
            return kc__cli_usage_error(NULL,
                                       "%.*s: unknown flag before the command (global "
                                       "flags: -n, --kubeconfig, --context, "
                                       "--request-timeout)",
                                       (int)strcspn(argv[i], "="), argv[i]);
        if (i + vals >= argc)
            return kc__cli_usage_error(NULL, "%s: missing value", argv[i]);
        i += 1 + vals;
    }
    if (i == 1 || i >= argc)
        return i >= argc && i > 1 ? kc__cli_usage_error(NULL, "missing command") : 0;
    /* rotate argv[1..i] right by one: the command first, then the globals in their order */
    char *cmd = argv[i];
    memmove(argv + 2, argv + 1, (size_t)(i - 1) * sizeof(*argv));
    argv[1] = cmd;
    return 0;
}

/* The --request-timeout in force (kc__cli_connect), for the timeout message. */
static char cli_timeout[64] = "30s";

void kc__cli_error(const char *cmd, int rc, const kc_error *err)
{
    const char *msg = err && err->message ? err->message : kc_strerror(rc);
    if (rc == KC_ETIMEOUT && !(err && err->http_status))
        fprintf(stderr,
                "kcache %s: the server did not answer within the request timeout (%s); "
                "a longer --request-timeout may help\n",
                cmd, cli_timeout);
    else if (err && err->http_status && err->reason)
        fprintf(stderr, "kcache %s: error from server (%s): %s\n", cmd, err->reason, msg);
    else
        fprintf(stderr, "kcache %s: %s\n", cmd, msg);
}

int kc__cli_resolve(const char *cmd, kc_client *c, const char *type, kc_resource_info *ret)
{
    kc_error err = KC_ERROR_INIT;
    int rc = kc_client_resolve(c, type, ret, &err);
    if (rc == KC_ENOTFOUND)
        fprintf(stderr, "kcache %s: the server doesn't have a resource type \"%s\"\n", cmd, type);
    else if (rc)
        kc__cli_error(cmd, rc, &err);
    kc_error_clear(&err);
    return rc;
}

int kc__cli_connect(const char *cmd, const kc__cli_scope *s, kc_client **ret)
{
    kc_config_opts co = {.kubeconfig = s->kubeconfig, .context = s->context};
    kc_client_opts opts = {.request_timeout_ms = s->request_timeout ? s->timeout_ms : 0};
    if (s->request_timeout) /* a bare number is seconds */
        snprintf(cli_timeout, sizeof cli_timeout, "%s%s", s->request_timeout,
                 s->request_timeout[strspn(s->request_timeout, "0123456789")] ? "" : "s");
    kc_config *cfg = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_config_load(&co, &cfg, &err);
    if (!rc) {
        rc = kc_client_new(cfg, &opts, ret, &err);
        kc_config_unref(cfg);
    }
    if (rc)
        kc__cli_error(cmd, rc, &err);
    kc_error_clear(&err);
    return rc;
}

uint64_t kc__cli_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t kc__cli_random(void)
{
    uint64_t v;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v)
        v = kc__cli_now_ns() ^ ((uint64_t)getpid() << 32);
    return v;
}
