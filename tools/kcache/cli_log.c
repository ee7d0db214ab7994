/*
 * cli_log.c — where the CLI sends the libraries' log messages (kcache/log.h).
 *
 * The libraries write nothing on their own; the CLI installs one sink at start: warnings and
 * errors (or every level up to KCACHE_LOG when it is set) as "kcache <level> <subsystem>: …"
 * lines, and the embedded server's request log ("server.request", info level, only produced when
 * `kcache serve` runs without --quiet) as "kcache serve: METHOD PATH STATUS" — the format the
 * conformance tests and users grep for.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kcache/log.h"

static kc_log_level cli_level = KC_LOG_LEVEL_WARN;

static void cli_sink(void *ud, kc_log_level level, const char *sub, const char *msg)
{
    (void)ud;
    if (!strcmp(sub, "server.request")) {
        fprintf(stderr, "kcache serve: %s\n", msg);
        return;
    }
    if (level <= cli_level)
        kc_log_stderr(NULL, level, sub, msg);
}

/* KCACHE_LOG as the library reads it (kcache/log.h); unset → warn. */
static kc_log_level env_level(bool *off)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    const char *s = getenv("KCACHE_LOG");
    *off = false;
    if (!s || !*s)
        return KC_LOG_LEVEL_WARN;
    if (!strcasecmp(s, "off") || !strcasecmp(s, "none")) {
        *off = true;
        return KC_LOG_LEVEL_ERROR;
    }
    if (s[0] >= '0' && s[0] <= '3' && !s[1])
        return (kc_log_level)(s[0] - '0');
    if (!strcasecmp(s, "warning"))
        return KC_LOG_LEVEL_WARN;
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(s, names[i]))
            return (kc_log_level)i;
    return KC_LOG_LEVEL_WARN;
}

void kc__cli_log_init(bool request_log)
{
    bool off;
    cli_level = env_level(&off);
    kc_log_level sink = cli_level;
    if (request_log && sink < KC_LOG_LEVEL_INFO)
        sink = KC_LOG_LEVEL_INFO; /* the request lines are info; cli_sink filters the rest */
    if (off && !request_log)
        kc_log_set(NULL, NULL, KC_LOG_LEVEL_ERROR);
    else
        kc_log_set(cli_sink, NULL, sink);
    if (off)
        cli_level = (kc_log_level)-1;
}

int kc__cli_check_cpu(void)
{
    kc_obj *o = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_obj_parse("{}", 2, NULL, &o, &err);
    kc_obj_unref(o);
    if (rc == KC_EUNSUPPORTED) {
        fprintf(stderr, "kcache: %s\n", err.message ? err.message : kc_strerror(rc));
        kc_error_clear(&err);
        return rc;
    }
    kc_error_clear(&err);
    return 0;
}
