/*
 * cmd_enrich.c — `kcache enrich`: add pod metadata to log records (docs/node-agents.md).
 *
 * Design: the pieces live in enrich_*.c (enrich.h lists them); this file wires one mode:
 *   filter (default)  JSON records on stdin → enriched records on stdout;
 *   --mmexternal      rsyslog's helper protocol on stdin/stdout (enrich_mmx.c);
 *   --daemon          the node cache served on a Unix socket (enrich_daemon.c) until a signal.
 * Metadata comes from the daemon (--socket, enrich_client.c), an in-process cache (--standalone,
 * enrich_podmeta.c), or nowhere (file-derived fields only).
 *
 * Under --mmexternal stderr is rsyslog's reply pipe (MX2): before anything else runs, fd 2 is
 * pointed at /dev/null — or at --log-file — so no byte of ours or of the libraries can corrupt a
 * reply; bad arguments then go to the log file (or nowhere) and exit 2. SIGTERM and SIGINT are
 * blocked in every thread and taken only while the loop waits for input (ppoll) or by the daemon's
 * sigwait, so both exit promptly with status 0; SIGPIPE is ignored (a vanished reader ends the
 * loop with a write error).
 */
#include "cli.h"
#include "enrich.h"

#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int enrich_stop;

static void on_signal(int sig)
{
    (void)sig;
    enrich_stop = 1;
}

static bool has_arg(int argc, char **argv, const char *a)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], a))
            return true;
    return false;
}

/* --log-file's value straight from argv (for errors found before the options are parsed). */
static const char *log_file_arg(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--log-file=", 11))
            return argv[i] + 11;
        if (!strcmp(argv[i], "--log-file") && i + 1 < argc)
            return argv[i + 1];
    }
    return NULL;
}

/* Point stderr at path (appending), or at /dev/null when path is NULL or cannot be opened. */
static void redirect_stderr(const char *path)
{
    int fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
    if (fd < 0)
        fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (fd >= 0 && fd != STDERR_FILENO) {
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
}

static void signals_setup(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    pthread_sigmask(SIG_BLOCK, set, NULL);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* ud: the daemon, published (atomically) once it runs — the endpoint scrapes from its own thread
 * and may start first: NULL counts 0. */
static char *daemon_metrics(void *ud)
{
    kc__enrich_daemon *d =
        atomic_load_explicit((_Atomic(kc__enrich_daemon *) *)ud, memory_order_acquire);
    char *s = NULL;
    if (asprintf(&s,
                 "# HELP kcache_enrich_requests_total Lookups answered on the enrich socket.\n"
                 "# TYPE kcache_enrich_requests_total counter\n"
                 "kcache_enrich_requests_total %" PRIu64 "\n",
                 d ? kc__enrich_daemon_requests(d) : 0) < 0)
        return NULL;
    return s;
}

static int run_daemon(kc__enrich_opts *o, const sigset_t *sigs)
{
    char msg[512];
    static _Atomic(kc__enrich_daemon *) live; /* what daemon_metrics reads */
    kc__enrich_daemon *d = NULL;
    kc__enrich_cache *c = kc__enrich_cache_start(o, daemon_metrics, &live, msg, sizeof msg);
    if (c)
        d = kc__enrich_daemon_start(o->socket, kc__enrich_cache_view(c), o->max_clients, msg,
                                    sizeof msg);
    atomic_store_explicit(&live, d, memory_order_release);
    if (!d) {
        fprintf(stderr, "kcache enrich: %s\n", msg);
        kc__enrich_cache_free(c);
        return KC_CLI_EXIT_FAIL;
    }
    const char *url = kc__enrich_cache_health_url(c);
    printf("kcache enrich: serving on %s%s%s\n", o->socket, url ? ", health on " : "",
           url ? url : "");
    fflush(stdout);
    int sig = 0;
    while (!enrich_stop && sigwait(sigs, &sig))
        ;
    kc__enrich_cache_stop_health(c); /* no scrape reads the daemon while it goes */
    kc__enrich_daemon_stop(d);
    kc__enrich_cache_free(c);
    return 0;
}

static void log_stats(const kc__enrich_loop *l)
{
    const kc__enrich_stats *s = &l->stats;
    fprintf(stderr,
            "kcache enrich: %" PRIu64 " lines: %" PRIu64 " enriched, %" PRIu64
            " file-derived only, %" PRIu64 " naming no pod; errors: %" PRIu64 " malformed, %" PRIu64
            " too long, %" PRIu64 " lookups failed\n",
            s->lines, s->enriched, s->file_only, s->no_match, s->malformed, s->too_long,
            s->lookup_errors);
}

static int run_loop(kc__enrich_opts *o)
{
    char msg[512];
    kc__enrich_cache *cache = NULL;
    kc__enrich_client *client = NULL;
    kc__enrich_loop l = {.in_fd = STDIN_FILENO,
                         .out_fd = STDOUT_FILENO,
                         .mmexternal = o->mode == KC_ENRICH_MODE_MMX,
                         .max_line = o->max_line,
                         .fmt = o->out.fmt,
                         .fields = &o->fields,
                         .out = &o->out,
                         .stop = &enrich_stop};
    if (o->standalone) {
        if (!(cache = kc__enrich_cache_start(o, NULL, NULL, msg, sizeof msg))) {
            fprintf(stderr, "kcache enrich: %s\n", msg);
            return KC_CLI_EXIT_FAIL;
        }
        l.view = kc__enrich_cache_view(cache);
    } else if (o->socket) {
        if (!(client = kc__enrich_client_new(o->socket, o->socket_timeout_ms, 100, 5000))) {
            fprintf(stderr, "kcache enrich: --socket %s: path too long\n", o->socket);
            return KC_CLI_EXIT_USAGE;
        }
        l.view = kc__enrich_client_view(client);
    }
    int rc = kc__enrich_run(&l);
    if (o->log_file || l.stats.malformed || l.stats.too_long) /* stderr: the log (or nothing) */
        log_stats(&l);
    kc__enrich_client_free(client);
    kc__enrich_cache_free(cache);
    return rc ? KC_CLI_EXIT_FAIL : 0;
}

static int cmd_enrich(int argc, char **argv)
{
    bool mmx = has_arg(argc, argv, "--mmexternal");
    if (mmx) /* MX2: stderr is rsyslog's reply pipe; nothing of ours may reach it */
        redirect_stderr(log_file_arg(argc, argv));
    kc__enrich_opts o;
    char msg[768];
    int rc = kc__enrich_opts_parse(&o, argc, argv, msg, sizeof msg);
    if (rc == 1) {
        fputs(kc__enrich_usage, stdout);
        kc__enrich_opts_free(&o);
        return 0;
    }
    if (rc) {
        if (mmx)
            fprintf(stderr, "kcache enrich: %s\n", msg);
        else
            kc__cli_usage_error("enrich", "%s", msg);
        kc__enrich_opts_free(&o);
        return KC_CLI_EXIT_USAGE;
    }
    sigset_t sigs;
    signals_setup(&sigs);
    rc = o.mode == KC_ENRICH_MODE_DAEMON ? run_daemon(&o, &sigs) : run_loop(&o);
    kc__enrich_opts_free(&o);
    return rc;
}

KC_CLI_COMMAND(enrich, "add pod metadata to log records (rsyslog mmexternal, node daemon)",
               cmd_enrich)
