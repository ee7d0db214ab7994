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

#include <stdarg.h>
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

bool kc__cli_scope_flag(kc__cli_scope *s, int ch, const char *arg)
{
    switch (ch) {
    case 'n':
        s->ns = arg;
        return true;
    case 'A':
        s->all_ns = true;
        return true;
    case 'l':
        s->label_selector = arg;
        return true;
    case KC_CLI_OPT_FIELD:
        s->field_selector = arg;
        return true;
    case KC_CLI_OPT_KUBECONFIG:
        s->kubeconfig = arg;
        return true;
    case KC_CLI_OPT_CONTEXT:
        s->context = arg;
        return true;
    default:
        return false;
    }
}

void kc__cli_error(const char *cmd, int rc, const kc_error *err)
{
    const char *msg = err && err->message ? err->message : kc_strerror(rc);
    if (err && err->http_status && err->reason)
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

int kc__cli_connect(const char *cmd, const char *kubeconfig, const char *context, kc_client **ret)
{
    kc_config_opts co = {.kubeconfig = kubeconfig, .context = context};
    kc_config *cfg = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_config_load(&co, &cfg, &err);
    if (!rc) {
        rc = kc_client_new(cfg, NULL, ret, &err);
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
