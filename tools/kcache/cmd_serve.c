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

static const char usage_text[] =
    "Usage: kcache serve [options]\n"
    "\n"
    "Run an in-memory Kubernetes API server (HTTP/1.1, JSON) that kubectl, client-go,\n"
    "python-kubernetes and @kubernetes/client-node accept. Prints exactly one line\n"
    "  kcache serve: listening on <URL>\n"
    "to stdout once connections are accepted (after the kubeconfig is written).\n"
    "Ctrl-C / SIGTERM stops it cleanly (exit 0). Bad arguments exit 2; a start that fails\n"
    "(address in use, unreadable or refused fixture, …) exits 1 with the reason.\n"
    "\n"
    "Server:\n"
    "  --listen ADDR:PORT        address to bind (default 127.0.0.1:6443; port 0 = a free port;\n"
    "                            IPv6 as [::1]:PORT)\n"
    "  --kubeconfig-out FILE     write a kubeconfig (cluster, user, context \"kcache\",\n"
    "                            current-context; CA and token embedded), mode 0600, atomically\n"
    "  --tls                     serve HTTPS with a throw-away CA and serving certificate\n"
    "                            generated at start (SANs 127.0.0.1, ::1, localhost, listen host)\n"
    "  --token T                 require \"Authorization: Bearer T\" (401 Status otherwise);\n"
    "                            also guards the admin endpoint\n"
    "  --token-file FILE         read the token from FILE (first line), keeping it out of ps\n"
    "\n"
    "Authentication and authorization (docs/server.md \"Authorization\"):\n"
    "  --authorization MODE      AlwaysAllow (default: every authenticated request is allowed)\n"
    "                            or RBAC: Roles, ClusterRoles and their bindings decide (403\n"
    "                            Forbidden otherwise); the bootstrap ClusterRoles (cluster-admin,\n"
    "                            admin, edit, view, system:discovery, …) are created. The\n"
    "                            --token identity (generated when absent) is kubernetes-admin in\n"
    "                            group system:masters\n"
    "  --user NAME=TOKEN[:GROUP,GROUP…]\n"
    "                            an identity for bearer token TOKEN (repeatable); NAME\n"
    "                            system:serviceaccount:NS:SA gets that ServiceAccount's groups\n"
    "  --token-auth-file FILE    identities from kube-apiserver's CSV: token,user,uid,\"g1,g2\"\n"
    "  --kubeconfig-out-as USER=FILE\n"
    "                            write a kubeconfig with USER's token (repeatable)\n"
    "  --history N               watch history events kept for resume (default 10000); older\n"
    "                            resourceVersions get 410 Expired\n"
    "  --bookmark-interval DUR   BOOKMARK period for allowWatchBookmarks watches (default 1m)\n"
    "  --max-watch DUR           end every watch after DUR (default: no server-side limit)\n"
    "  --max-body BYTES          request body limit, e.g. 3Mi (default 3 MiB; larger → 413)\n"
    "  --watch-queue N           events queued per watcher before the server closes a slow\n"
    "                            watcher (default 100000); the client must resume or relist\n"
    "  --quiet                   no request log on stderr (otherwise one line per request:\n"
    "                            kcache serve: METHOD PATH STATUS)\n"
    "  --service-cluster-ip-range CIDR\n"
    "                            Service cluster IPs come from CIDR (default 10.96.0.0/12;\n"
    "                            IPv4 /12../30 or IPv6 /108../126)\n"
    "  --service-node-port-range LO-HI\n"
    "                            NodePort range (default 30000-32767, at least 16 ports)\n"
    "  --controllers LIST        the controllers to run, comma-separated (default:\n"
    "                            namespace,garbagecollector, as on every cluster):\n"
    "                            namespace (a deleted namespace turns Terminating, its objects\n"
    "                            are deleted, it goes once empty; without it a namespace and\n"
    "                            its objects go at once), garbagecollector (ownerReferences:\n"
    "                            Background, Foreground, Orphan), serviceaccount (ServiceAccount\n"
    "                            \"default\" in every namespace), default (the first two),\n"
    "                            none (no controller: the bare store, as envtest)\n"
    "  --simulate-nodes N        simulate a cluster of N nodes (0..10000; default 0 = off),\n"
    "                            as KWOK: Nodes kcache-node-0..N-1 (cpu 8, memory 32Gi,\n"
    "                            pods 110) with Leases in kube-node-lease renewed every 10s, a\n"
    "                            scheduler (requests, nodeSelector), a kubelet (Pending ->\n"
    "                            Running/Ready in ~100ms, podIP, containerStatuses; pods with\n"
    "                            restartPolicy Never/OnFailure exit after 1s with the code of\n"
    "                            annotation kcache.io/simulate-exit-code) and the Deployment,\n"
    "                            ReplicaSet, StatefulSet, DaemonSet and Job controllers\n"
    "                            (kubectl rollout status / wait work)\n"
    "  --simulate-lease-period DURATION\n"
    "                            Lease renewal period of the simulated nodes (default 10s)\n"
    "  --webhook-service NAME.NAMESPACE:PORT=HOST:PORT\n"
    "                            admission webhooks whose clientConfig names Service\n"
    "                            NAME in NAMESPACE on PORT are dialled at HOST:PORT (e.g.\n"
    "                            127.0.0.1:9443); TLS still verifies the name\n"
    "                            NAME.NAMESPACE.svc against the caBundle; repeatable\n"
    "  --shard-selector MODE     the shardSelector parameter of LIST and WATCH (server-side\n"
    "                            sharded list and watch, KEP-5866): honor (default) keeps\n"
    "                            the objects whose uid/namespace hash is in the selector and\n"
    "                            echoes it in metadata.shardInfo; ignore behaves as an old or\n"
    "                            gate-off server (full lists, no shardInfo, full watches).\n"
    "                            Switchable at run time: PUT /admin/sharding\n"
    "\n"
    "Objects at start:\n"
    "  --seed-objects SPEC       generate objects; SPEC is KIND=N[:ns=NAME],… with KIND one of\n"
    "                            pods, configmaps, secrets, persistentvolumes (pvs), namespaces\n"
    "                            (ns). namespaces=K creates ns-0…ns-{K-1} and spreads namespaced\n"
    "                            objects over them (K defaults to 100 when pods are asked for);\n"
    "                            :ns=NAME puts a part in one namespace. Pods are realistic ~6 KB\n"
    "                            objects. Examples: \"pods=100000\",\n"
    "                            \"pods=1000:ns=default,configmaps=50,persistentvolumes=1000\"\n"
    "  --fixtures DIR            load every *.yaml, *.yml and *.json file of DIR (name order;\n"
    "                            multi-document YAML and List kinds allowed); an object the\n"
    "                            server refuses stops the start, naming its file\n"
    "\n"
    "Faults (also changeable at run time, see below):\n"
    "  --watch-delay MIN[-MAX]   deliver each watch event after a uniform random delay, never\n"
    "                            before an earlier event of the same stream (e.g. 10ms-500ms)\n"
    "  --list-delay MIN[-MAX]    answer each collection LIST (not a watch) after a uniform\n"
    "                            random delay, serving other requests meanwhile (e.g. 5ms-20ms)\n"
    "  --fail-429 RATE[:VERBS]   inject 429 with probability RATE (0..1) per request, for the\n"
    "                            listed verbs (get,list,watch,create,update,patch,delete,\n"
    "                            deletecollection; default all)\n"
    "  --fail-500 RATE[:VERBS]   inject 500 InternalError (never with Retry-After)\n"
    "  --fail-503 RATE[:VERBS]   inject 503 ServiceUnavailable\n"
    "  --retry-after S           Retry-After seconds sent with injected 429/503 (default 0 =\n"
    "                            no header)\n"
    "  --watch-close-every N     end every watch stream after N events\n"
    "  --watch-close-prob P      end a watch stream after any event with probability P\n"
    "  --seed N                  PRNG seed for faults and delays (default: random)\n"
    "\n"
    "Durations: 250us, 50ms, 1s, 2m, or 0. Sizes: bytes, or with K/Ki/M/Mi suffix.\n"
    "\n"
    "Admin endpoint (same authentication as the API when --token is set; with\n"
    "--authorization RBAC only identities allowed the path, e.g. system:masters):\n"
    "  GET  /admin/faults        the faults in force as JSON\n"
    "  PUT  /admin/faults        change faults; fields absent keep their value:\n"
    "                            {\"watchDelay\":\"10ms-500ms\", \"watchDelayMinMs\":N,\n"
    "                             \"watchDelayMaxMs\":N, \"listDelay\":\"5ms-20ms\",\n"
    "                             \"listDelayMinMs\":N, \"listDelayMaxMs\":N,\n"
    "                             \"rate429\":R, \"rate500\":R,\n"
    "                             \"rate503\":R, \"retryAfterSeconds\":N,\n"
    "                             \"watchCloseEvery\":N, \"watchCloseProb\":P,\n"
    "                             \"watchStall\":true|false}\n"
    "                            where R is a number (all verbs), \"RATE:verb,verb\", or\n"
    "                            {\"get\":0.5,\"list\":0.1,…}\n"
    "  POST /admin/compact       forget the watch history: older RVs now get 410 Expired\n"
    "  POST /admin/restart       drop all state and reset the resourceVersion counter, close\n"
    "                            every watch (clients must notice and relist)\n"
    "  POST /admin/restart?mode=restore\n"
    "                            restart as after a restore from backup: keep every object,\n"
    "                            renumber the resourceVersions from 1, close every watch\n"
    "  GET  /admin/rv            the current resourceVersion\n"
    "  GET  /admin/sharding      {\"ignoreShardSelector\":B, \"shardedWatches\":N,\n"
    "                             \"filteredEvents\":N}\n"
    "  PUT  /admin/sharding      {\"ignoreShardSelector\":true|false}: ignore shardSelector\n"
    "                            from now on (as --shard-selector=ignore), or honor it again\n"
    "  POST /admin/clock?advance=S\n"
    "                            move the clock of the server's timestamps S seconds (1..86400)\n"
    "                            forward: a later second for tests, without sleeping\n";

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
            fputs(usage_text, stdout);
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
