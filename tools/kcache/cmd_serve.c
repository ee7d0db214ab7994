/*
 * cmd_serve.c — `kcache serve`: run the in-memory Kubernetes API server until SIGINT/SIGTERM.
 *
 * Design: flags are parsed by hand (both "--flag value" and "--flag=value") into kc_server_opts;
 * any bad flag or value prints one error naming the flag and exits 2. The server is created,
 * started, the kubeconfig written (if asked), and only then is the single line
 * "kcache serve: listening on <URL>" printed and flushed, so scripts that wait for that line can
 * use the kubeconfig at once. Signals: the handler only writes a byte to a self-pipe; the main
 * thread sleeps in poll() on it, then stops and frees the server and exits 0. The token is never
 * printed (not in --help, not in errors).
 */
#include "cli.h"
#include "serve_authz.h"
#include "serve_usage.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kcache/server.h"

#define EXIT_USAGE KC_CLI_EXIT_USAGE
#define TOKEN_MAX  4096

static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    int saved = errno;
    char c = (char)sig;
    ssize_t w = write(sig_pipe[1], &c, 1);
    (void)w;
    errno = saved;
}

/* "kcache serve: FLAG: problem" in the format of every command (cli_util.c); exit 2. */
static int usage_error(const char *flag, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int usage_error(const char *flag, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return kc__cli_usage_error("serve", "%s: %s", flag, msg);
}

static bool parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
    if (!s || *s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max)
        return false;
    *ret = v;
    return true;
}

static bool parse_size(const char *s, size_t *ret)
{
    if (!s || *s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return false;
    unsigned long long mult = 1;
    if (!strcmp(end, "K") || !strcmp(end, "k"))
        mult = 1000;
    else if (!strcmp(end, "Ki"))
        mult = 1024;
    else if (!strcmp(end, "M"))
        mult = 1000000;
    else if (!strcmp(end, "Mi"))
        mult = 1024 * 1024;
    else if (!strcmp(end, "G"))
        mult = 1000000000;
    else if (!strcmp(end, "Gi"))
        mult = 1024ull * 1024 * 1024;
    else if (*end)
        return false;
    if (v > SIZE_MAX / mult)
        return false;
    *ret = (size_t)(v * mult);
    return true;
}

static bool parse_prob(const char *s, double *ret)
{
    char *end;
    errno = 0;
    double p = strtod(s, &end);
    if (errno || end == s || *end || !(p >= 0 && p <= 1))
        return false;
    *ret = p;
    return true;
}

/* The first line of path, without its line end, in *ret (new malloc'd — caller frees). Errors
 * name the file and carry the system's reason (strerror) in err. */
static int read_token_file(const char *path, char **ret, kc_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return kc_error_set(err, KC_EIO, "cannot read '%s': %s", path, strerror(errno));
    char *buf = calloc(1, TOKEN_MAX + 2);
    if (!buf) {
        fclose(f);
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    }
    int rc = 0;
    if (!fgets(buf, TOKEN_MAX + 2, f) && ferror(f))
        rc = kc_error_set(err, KC_EIO, "cannot read '%s': %s", path, strerror(errno));
    fclose(f);
    size_t n = strcspn(buf, "\r\n");
    if (!rc && n > TOKEN_MAX)
        rc = kc_error_set(err, KC_EINVAL, "'%s': the token is longer than %d bytes", path,
                          TOKEN_MAX);
    else if (!rc && n == 0)
        rc = kc_error_set(err, KC_EINVAL, "'%s': the first line is empty (it holds the token)",
                          path);
    buf[n] = '\0';
    if (rc) {
        memset(buf, 0, TOKEN_MAX + 2);
        free(buf);
        return rc;
    }
    *ret = buf;
    return 0;
}

static const char *const value_flags[] = {
    "--listen",
    "--kubeconfig-out",
    "--token",
    "--token-file",
    "--history",
    "--bookmark-interval",
    "--max-watch",
    "--max-body",
    "--watch-queue",
    "--watch-delay",
    "--list-delay",
    "--fail-429",
    "--fail-500",
    "--fail-503",
    "--retry-after",
    "--watch-close-every",
    "--watch-close-prob",
    "--seed-objects",
    "--fixtures",
    "--seed",
    "--service-cluster-ip-range",
    "--service-node-port-range",
    "--controllers",
    "--simulate-nodes",
    "--simulate-lease-period",
    "--shard-selector",
    "--webhook-service",
    "--authorization",
    "--user",
    "--token-auth-file",
    "--kubeconfig-out-as",
    NULL,
};

static bool takes_value(const char *flag)
{
    for (const char *const *f = value_flags; *f; f++)
        if (!strcmp(flag, *f))
            return true;
    return false;
}

/* "ADDR:PORT" or "[V6]:PORT" with PORT in 0..65535. */
static bool valid_listen(const char *v)
{
    const char *colon = strrchr(v, ':');
    if (!colon || colon == v)
        return false;
    if (v[0] == '[' && colon[-1] != ']')
        return false;
    uint64_t port;
    return parse_u64(colon + 1, 65535, &port);
}

typedef struct serve_args {
    kc_server_opts opts; /* opts.faults points at faults */
    kc_server_faults faults;
    const char *kubeconfig_out;
    char *token_owned;
    char *webhook_services; /* the --webhook-service entries, comma-joined (malloc'd) */
    kc__serve_authz authz;  /* --authorization, --user, --token-auth-file, --kubeconfig-out-as */
} serve_args;

/* --controllers LIST: the kc_server_controller bits of a comma-separated list of names ("none":
 * the NONE bit, so that the list runs nothing else; "default": the default set). */
static bool parse_controllers(const char *v, unsigned *ret)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"namespace", KC_SERVER_CONTROLLER_NAMESPACE},
                 {"garbagecollector", KC_SERVER_CONTROLLER_GARBAGE_COLLECTOR},
                 {"serviceaccount", KC_SERVER_CONTROLLER_SERVICE_ACCOUNT},
                 {"none", KC_SERVER_CONTROLLER_NONE},
                 {"default", KC_SERVER_CONTROLLERS_DEFAULT}};
    unsigned bits = 0;
    while (*v) {
        size_t n = strcspn(v, ",");
        size_t i = 0;
        while (i < sizeof(names) / sizeof(names[0]) &&
               (strlen(names[i].name) != n || strncmp(names[i].name, v, n) != 0))
            i++;
        if (i == sizeof(names) / sizeof(names[0]))
            return false;
        bits |= names[i].bit;
        v += n + (v[n] == ',');
    }
    *ret = bits;
    return bits != 0;
}

/* The flags of Service allocations and controllers (*o); 1 = not one of them, else 0 or the
 * usage error's exit status. */
static int parse_cluster_flag(const char *flag, const char *val, kc_server_opts *o)
{
    if (!strcmp(flag, "--service-cluster-ip-range")) {
        if (!*val)
            return usage_error(flag, "empty CIDR");
        o->service_cidr = val; /* checked by kc_server_new (cmd_serve names the flag) */
    } else if (!strcmp(flag, "--service-node-port-range")) {
        if (!*val)
            return usage_error(flag, "empty range");
        o->node_port_range = val;
    } else if (!strcmp(flag, "--simulate-nodes")) {
        uint64_t n;
        if (!parse_u64(val, 10000, &n))
            return usage_error(flag, "expected a number of nodes 0..10000, got '%s'", val);
        o->simulate_nodes = (unsigned)n;
    } else if (!strcmp(flag, "--simulate-lease-period")) {
        unsigned ms = 0;
        kc_error err = KC_ERROR_INIT;
        if (kc_server_duration_parse(val, &ms, &err) != 0 || ms == 0) {
            kc_error_clear(&err);
            return usage_error(flag, "expected a duration such as 10s or 500ms, got '%s'", val);
        }
        o->sim_lease_ms = ms;
    } else if (!strcmp(flag, "--controllers")) {
        if (!parse_controllers(val, &o->controllers))
            return usage_error(flag,
                               "expected a list of namespace, garbagecollector, serviceaccount, "
                               "got '%s'",
                               val);
    } else {
        return 1;
    }
    return 0;
}

/* usage_error with a kc_error's message as the reason; clears *err. */
static int usage_error_from(const char *flag, kc_error *err)
{
    int rc = usage_error(flag, "%s", err->message);
    kc_error_clear(err);
    return rc;
}

/* Where to listen and who may connect (*a); 1 = not one of them, else 0 or the usage error's
 * exit status. */
static int parse_access_flag(const char *flag, const char *val, serve_args *a)
{
    kc_server_opts *o = &a->opts;
    kc_error err = KC_ERROR_INIT;
    if (!strcmp(flag, "--listen")) {
        if (!valid_listen(val))
            return usage_error(flag, "expected ADDR:PORT (port 0..65535), got '%s'", val);
        o->listen = val;
    } else if (!strcmp(flag, "--kubeconfig-out")) {
        if (!*val)
            return usage_error(flag, "empty path");
        a->kubeconfig_out = val;
    } else if (!strcmp(flag, "--token")) {
        if (!*val || strlen(val) > TOKEN_MAX || strpbrk(val, "\r\n"))
            return usage_error(flag, "bad token (empty, too long or multi-line)");
        o->token = val;
    } else if (!strcmp(flag, "--webhook-service")) {
        char *joined = NULL;
        if (asprintf(&joined, "%s%s%s", a->webhook_services ? a->webhook_services : "",
                     a->webhook_services ? "," : "", val) < 0)
            return usage_error(flag, "out of memory");
        free(a->webhook_services);
        a->webhook_services = joined;
        o->webhook_services = joined; /* checked by kc_server_new */
    } else if (!strcmp(flag, "--token-file")) {
        free(a->token_owned);
        a->token_owned = NULL;
        if (read_token_file(val, &a->token_owned, &err))
            return usage_error_from(flag, &err);
        o->token = a->token_owned;
    } else {
        return 1;
    }
    return 0;
}

/* The flags of history, watch and body limits (*o); 1 = not one of them, else 0 or the usage
 * error's exit status. */
static int parse_limit_flag(const char *flag, const char *val, kc_server_opts *o)
{
    uint64_t u;
    unsigned ms;
    if (!strcmp(flag, "--history")) {
        if (!parse_u64(val, 100000000, &u) || u == 0)
            return usage_error(flag, "expected a positive event count, got '%s'", val);
        o->history = (size_t)u;
    } else if (!strcmp(flag, "--bookmark-interval")) {
        if (kc_server_duration_parse(val, &ms, NULL) || ms == 0)
            return usage_error(flag, "expected a positive duration like 1s, got '%s'", val);
        o->bookmark_interval_ms = ms;
    } else if (!strcmp(flag, "--max-watch")) {
        if (kc_server_duration_parse(val, &ms, NULL))
            return usage_error(flag, "expected a duration like 30s, got '%s'", val);
        o->max_watch_s = (ms + 999) / 1000;
    } else if (!strcmp(flag, "--max-body")) {
        size_t sz;
        if (!parse_size(val, &sz) || sz == 0)
            return usage_error(flag, "expected a size like 3Mi, got '%s'", val);
        o->max_body = sz;
    } else if (!strcmp(flag, "--watch-queue")) {
        if (!parse_u64(val, 100000000, &u) || u == 0)
            return usage_error(flag, "expected a positive event count, got '%s'", val);
        o->watch_queue = (size_t)u;
    } else if (!strcmp(flag, "--shard-selector")) {
        if (strcmp(val, "ignore") && strcmp(val, "honor"))
            return usage_error(flag, "expected honor or ignore, got '%s'", val);
        o->ignore_shard_selector = val[0] == 'i';
    } else {
        return 1;
    }
    return 0;
}

/* The fault-injection flags (*f); 1 = not one of them, else 0 or the usage error's exit status. */
static int parse_fault_flag(const char *flag, const char *val, kc_server_faults *f)
{
    uint64_t u;
    kc_error err = KC_ERROR_INIT;
    if (!strcmp(flag, "--watch-delay")) {
        if (kc_server_faults_parse("watchDelay", val, f, &err))
            return usage_error_from(flag, &err);
    } else if (!strcmp(flag, "--list-delay")) {
        if (kc_server_faults_parse("listDelay", val, f, &err))
            return usage_error_from(flag, &err);
    } else if (!strcmp(flag, "--fail-429") || !strcmp(flag, "--fail-500") ||
               !strcmp(flag, "--fail-503")) {
        const char *field = flag[7] == '4' ? "rate429" : flag[9] == '0' ? "rate500" : "rate503";
        if (kc_server_faults_parse(field, val, f, &err))
            return usage_error_from(flag, &err);
    } else if (!strcmp(flag, "--retry-after")) {
        if (!parse_u64(val, 3600, &u))
            return usage_error(flag, "expected seconds (0..3600), got '%s'", val);
        f->retry_after_s = (unsigned)u;
    } else if (!strcmp(flag, "--watch-close-every")) {
        if (!parse_u64(val, UINT_MAX, &u))
            return usage_error(flag, "expected an event count, got '%s'", val);
        f->watch_close_every = (unsigned)u;
    } else if (!strcmp(flag, "--watch-close-prob")) {
        if (!parse_prob(val, &f->watch_close_prob))
            return usage_error(flag, "expected a probability 0..1, got '%s'", val);
    } else {
        return 1;
    }
    return 0;
}

/* The seeding flags (*o); 1 = not one of them, else 0 or the usage error's exit status. */
static int parse_seed_flag(const char *flag, const char *val, kc_server_opts *o)
{
    uint64_t u;
    kc_error err = KC_ERROR_INIT;
    if (!strcmp(flag, "--seed-objects")) {
        if (kc_server_seed_spec_check(val, &err))
            return usage_error_from(flag, &err);
        o->seed_spec = val;
    } else if (!strcmp(flag, "--fixtures")) {
        if (!*val)
            return usage_error(flag, "empty directory");
        o->seed_dir = val;
    } else if (!strcmp(flag, "--seed")) {
        if (!parse_u64(val, UINT64_MAX, &u))
            return usage_error(flag, "expected an unsigned integer, got '%s'", val);
        o->random_seed = u;
    } else {
        return 1;
    }
    return 0;
}

/* One flag that takes a value: 0 or the usage error's exit status. */
static int parse_value_flag(const char *flag, const char *val, serve_args *a)
{
    int rc;
    if ((rc = parse_cluster_flag(flag, val, &a->opts)) != 1 ||
        (rc = parse_access_flag(flag, val, a)) != 1 ||
        (rc = parse_limit_flag(flag, val, &a->opts)) != 1 ||
        (rc = parse_fault_flag(flag, val, &a->faults)) != 1 ||
        (rc = parse_seed_flag(flag, val, &a->opts)) != 1 ||
        (rc = kc__serve_authz_flag(flag, val, &a->opts, &a->authz)) != 1)
        return rc;
    return usage_error(flag, "unknown flag");
}

/* Parse argv into *a. Returns -1 to go on, or an exit status (0 for --help). */
static int parse_args(int argc, char **argv, serve_args *a)
{
    kc_server_opts *o = &a->opts;
    kc_server_faults *f = &a->faults;
    o->faults = f;
    o->faults_size = sizeof *f;
    for (int i = 1; i < argc; i++) {
        char flag[64];
        const char *arg = argv[i], *val = NULL;
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            fputs(kc__serve_usage_text, stdout);
            return 0;
        }
        if (strncmp(arg, "--", 2))
            return usage_error(arg, "unexpected argument");
        const char *eq = strchr(arg, '=');
        size_t fl = eq ? (size_t)(eq - arg) : strlen(arg);
        if (fl >= sizeof flag)
            return usage_error(arg, "unknown flag");
        memcpy(flag, arg, fl);
        flag[fl] = '\0';

        bool boolean = !strcmp(flag, "--tls") || !strcmp(flag, "--quiet");
        if (boolean) {
            if (eq)
                return usage_error(flag, "takes no value");
            if (!strcmp(flag, "--tls"))
                o->tls = true;
            else
                o->quiet = true;
            continue;
        }
        if (!takes_value(flag))
            return usage_error(flag, "unknown flag");
        if (eq)
            val = eq + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        else
            return usage_error(flag, "missing value");
        int rc = parse_value_flag(flag, val, a);
        if (rc)
            return rc;
    }
    return -1;
}

static int cmd_serve(int argc, char **argv)
{
    serve_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) {
        free(a.token_owned);
        free(a.webhook_services);
        kc__serve_authz_free(&a.authz);
        return rc;
    }
    int status = 1;
    kc_server *srv = NULL;
    kc_error err = KC_ERROR_INIT;
    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK)) {
        fprintf(stderr, "kcache serve: pipe: %s\n", strerror(errno));
        goto out;
    }
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    kc__cli_log_init(!a.opts.quiet);
    rc = kc_server_new(&a.opts, &srv, &err);
    const char *msg = err.message ? err.message : "";
    if (rc == KC_EINVAL &&
        (!strncmp(msg, "service CIDR ", 13) || !strncmp(msg, "node port ", 10))) {
        /* a Service range flag's value, refused by the allocator: name the flag */
        status = usage_error(
            msg[0] == 's' ? "--service-cluster-ip-range" : "--service-node-port-range", "%s", msg);
        goto out;
    }
    if (rc) {
        fprintf(stderr, "kcache serve: %s\n", err.message ? err.message : kc_strerror(rc));
        status = rc == KC_EINVAL ? EXIT_USAGE : 1;
        goto out;
    }
    rc = kc_server_start(srv, &err);
    if (rc) {
        fprintf(stderr, "kcache serve: cannot start: %s\n",
                err.message ? err.message : kc_strerror(rc));
        goto out;
    }
    if (a.kubeconfig_out && (rc = kc_server_write_kubeconfig(srv, a.kubeconfig_out, &err))) {
        fprintf(stderr, "kcache serve: --kubeconfig-out: %s\n",
                err.message ? err.message : kc_strerror(rc));
        goto out;
    }
    if (kc__serve_authz_write(srv, &a.authz))
        goto out;
    printf("kcache serve: listening on %s\n", kc_server_url(srv));
    fflush(stdout);

    struct pollfd pfd = {.fd = sig_pipe[0], .events = POLLIN};
    for (;;) {
        int n = poll(&pfd, 1, -1);
        if (n > 0)
            break;
        if (n < 0 && errno != EINTR) {
            fprintf(stderr, "kcache serve: poll: %s\n", strerror(errno));
            break;
        }
    }
    if (!a.opts.quiet)
        fprintf(stderr, "kcache serve: stopping\n");
    kc_server_stop(srv);
    status = 0;
out:
    kc_server_free(srv);
    kc_error_clear(&err);
    free(a.webhook_services);
    kc__serve_authz_free(&a.authz);
    if (a.token_owned) {
        memset(a.token_owned, 0, strlen(a.token_owned));
        free(a.token_owned);
    }
    for (int i = 0; i < 2; i++)
        if (sig_pipe[i] >= 0) {
            close(sig_pipe[i]);
            sig_pipe[i] = -1;
        }
    return status;
}

KC_CLI_COMMAND(serve, "run the in-memory Kubernetes API server", cmd_serve)
