/*
 * enrich_opts.c — `kcache enrich` settings from argv and from --config FILE, and its --help.
 *
 * Design: a table of options parsed by hand (not getopt: the same code reads config lines, and
 * rsyslog's mmexternal splits its `binary` parameter into argv with an empty environment, MX2,
 * so every setting — node name, kubeconfig — must be expressible here). "--name=value" and
 * "--name value" both work; a switch takes "--name" (on) or "--name=on|off". A config file holds
 * "name=value" lines (the option names without "--"; '#' comments, blank lines ignored), applied
 * where --config appears, so later arguments override it. Every error names the argument; the
 * caller decides where it goes (never stderr under --mmexternal).
 */
#include "enrich.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char kc__enrich_usage[] =
    "Usage: kcache enrich [--mmexternal | --daemon] [options]\n"
    "\n"
    "Add pod metadata to log records, as rsyslog's mmkubernetes or Fluent Bit's kubernetes\n"
    "filter do, from a watch-fed node cache instead of one GET per pod (docs/node-agents.md).\n"
    "\n"
    "Modes:\n"
    "  (default)                  filter: JSON records on stdin, each written to stdout with\n"
    "                             the fields merged in (unchanged when it names no pod)\n"
    "  --mmexternal               rsyslog mmexternal helper: fulljson messages on stdin, one\n"
    "                             reply line each ({} = no change); nothing is ever written to\n"
    "                             stderr and no environment variable is read. Configure\n"
    "                             interface.input=\"fulljson\" and interface.output=\"json\"\n"
    "                             (the default): with \"none\" nothing can be enriched\n"
    "  --daemon                   node daemon: owns the watches and the cache, answers the\n"
    "                             helpers on --socket; runs until SIGTERM/SIGINT\n"
    "  --socket PATH              the daemon's Unix socket (helpers ask it; while it is absent\n"
    "                             they answer file-derived fields and retry with backoff)\n"
    "  --standalone               a cache in this process instead of --socket (use with\n"
    "                             forceSingleInstance=\"on\")\n"
    "\n"
    "Cache (--daemon, --standalone):\n"
    "  --node NAME                this node (pods are watched with spec.nodeName=NAME);\n"
    "                             alias --node-name. Required: $NODE_NAME is read only outside\n"
    "                             --mmexternal\n"
    "  --all-nodes                watch the pods of every node\n"
    "  --kubeconfig PATH          kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)\n"
    "  --context NAME             kubeconfig context\n"
    "  --server URL               the API server without a kubeconfig or environment (what a\n"
    "                             helper under rsyslog needs: MX2), with --token-file PATH\n"
    "                             (read at start; default the service account's token when\n"
    "                             present) and --certificate-authority PATH (default its ca.crt)\n"
    "  --deleted-grace DUR        serve a deleted pod's last state this long (default 10m)\n"
    "  --not-seen-wait DUR        wait this long for a pod not seen yet (default 100ms)\n"
    "  --sync-wait DUR            before the first sync, wait at most this long, then answer\n"
    "                             file-derived fields (default 500ms)\n"
    "  --unsynced buffer|bare     before the first sync: wait --sync-wait (buffer, default) or\n"
    "                             answer file-derived fields at once (bare)\n"
    "  --health-listen ADDR:PORT  serve /readyz /healthz /metrics (--daemon)\n"
    "  --max-clients N            helpers served at once by --daemon (default 64)\n"
    "  --socket-timeout DUR       a helper's bound on one exchange with the daemon (default 1s)\n"
    "  --fetch-rate N             a pod the synced cache lacks (another node's, a lagging\n"
    "                             watch) is fetched by one background GET, at most N per\n"
    "                             second (default 2; 0: never); replies never wait for it\n"
    "  --fetch-burst N            GETs allowed at once before the rate applies (default 5)\n"
    "  --fetch-ttl DUR            a fetched pod is served this long, then fetched again\n"
    "                             (default 1m); a 404 or failure is remembered 30s\n"
    "\n"
    "Output:\n"
    "  --format mmkubernetes|fluentbit  field names and shape (default mmkubernetes)\n"
    "  --annotation-match RE      keep annotations whose key matches this POSIX extended regex\n"
    "                             (repeatable; mmkubernetes keeps none without one)\n"
    "  --label-match RE           keep only labels whose key matches (repeatable; default all)\n"
    "  --de-dot[=on|off]          '.' in label/annotation keys → separator (default on for\n"
    "                             mmkubernetes, off for fluentbit)\n"
    "  --de-dot-separator S       (default _)\n"
    "  --de-slash[=on|off]        '/' in keys → --de-slash-separator (default off; default _)\n"
    "  --labels=on|off            emit labels (default on)\n"
    "  --annotations=on|off       fluentbit: emit annotations (default on)\n"
    "  --namespace-metadata=on|off  mmkubernetes: namespace_id, namespace_labels,\n"
    "                             namespace_annotations, creation_timestamp (default on)\n"
    "  --namespace-labels[=on|off], --namespace-annotations[=on|off]\n"
    "                             fluentbit: the kubernetes_namespace map (default off)\n"
    "  --owner-references[=on|off]  ownerReferences (default off)\n"
    "  --pod-ip[=on|off], --container-image[=on|off]\n"
    "                             mmkubernetes extras pod_ip, container_image and\n"
    "                             container_hash (default off; fluentbit always has them)\n"
    "  --master-url URL           mmkubernetes master_url\n"
    "                             (default https://kubernetes.default.svc.cluster.local:443)\n"
    "  --orphans keep|drop        fluentbit, pod not known: file-derived fields, or no\n"
    "                             kubernetes map (default drop)\n"
    "\n"
    "Input:\n"
    "  --filename-path P          record path of the file name (default $!metadata!filename;\n"
    "                             '!' separates keys; \"$!\" is rsyslog's variable tree)\n"
    "  --container-name-path P    journald CONTAINER_NAME (default $!CONTAINER_NAME)\n"
    "  --container-id-path P      journald CONTAINER_ID_FULL (default $!CONTAINER_ID_FULL)\n"
    "  --namespace-field P, --pod-field P, --container-field P, --container-id-field P\n"
    "                             explicit fields, read first when given (default none)\n"
    "  --tag-path P               Fluent Bit's tag (kube.var.log.containers.<file name>), read\n"
    "                             when the record has no file name (default: not read)\n"
    "  --kube-tag-prefix S        the tag's prefix, skipped by its length as Fluent Bit does\n"
    "                             (default kube.var.log.containers.)\n"
    "  --pods-dir[=on|off]        also accept /var/log/pods/<ns>_<pod>_<uid>/<c>/<n>.log names\n"
    "                             (default off: the anchors reject them)\n"
    "  --resolve-links=on|off     read a /var/log/containers link's /var/log/pods target: the\n"
    "                             pod UID, and the pod of a name cut at 255 bytes (default on)\n"
    "  --containers-dir DIR       where the kubelet's links are (default /var/log/containers)\n"
    "  --max-line BYTES           longer input lines are answered {} and counted (default 4Mi)\n"
    "\n"
    "Other:\n"
    "  --config FILE              name=value lines, the options without \"--\"\n"
    "  --log-file FILE            errors and statistics (under --mmexternal the only place\n"
    "                             they go)\n"
    "  -h, --help                 this text\n"
    "\n"
    "DUR: 500ms, 30s, 10m, 1h (a bare number is seconds). Exit status: 0 (EOF on stdin,\n"
    "SIGTERM), 1 (failure), 2 (bad arguments).\n";

typedef enum { T_FLAG, T_BOOL, T_STR, T_DUR, T_SIZE, T_INT } otype;

typedef struct opt {
    const char *name;
    otype t;
    size_t off; /* into kc__enrich_opts */
} opt;

#define O(f) offsetof(kc__enrich_opts, f)
static const opt opts_table[] = {
    {"mmexternal", T_FLAG, 0},
    {"daemon", T_FLAG, 0},
    {"standalone", T_BOOL, O(standalone)},
    {"socket", T_STR, O(socket)},
    {"node", T_STR, O(node)},
    {"node-name", T_STR, O(node)},
    {"all-nodes", T_BOOL, O(all_nodes)},
    {"kubeconfig", T_STR, O(kubeconfig)},
    {"context", T_STR, O(context)},
    {"server", T_STR, O(server)},
    {"token-file", T_STR, O(token_file)},
    {"certificate-authority", T_STR, O(ca_file)},
    {"deleted-grace", T_DUR, O(deleted_grace_ms)},
    {"not-seen-wait", T_DUR, O(not_seen_wait_ms)},
    {"sync-wait", T_DUR, O(sync_wait_ms)},
    {"unsynced", T_FLAG, 0},
    {"health-listen", T_STR, O(health_listen)},
    {"max-clients", T_INT, O(max_clients)},
    {"socket-timeout", T_DUR, O(socket_timeout_ms)},
    {"fetch-rate", T_FLAG, 0},
    {"fetch-burst", T_INT, O(fetch_burst)},
    {"fetch-ttl", T_DUR, O(fetch_ttl_ms)},
    {"format", T_FLAG, 0},
    {"annotation-match", T_FLAG, 0},
    {"label-match", T_FLAG, 0},
    {"de-dot", T_BOOL, O(out.de_dot)},
    {"de-dot-separator", T_FLAG, 0},
    {"de-slash", T_BOOL, O(out.de_slash)},
    {"de-slash-separator", T_FLAG, 0},
    {"labels", T_BOOL, O(out.labels)},
    {"annotations", T_BOOL, O(out.annotations)},
    {"namespace-metadata", T_BOOL, O(out.ns_meta)},
    {"namespace-labels", T_BOOL, O(out.ns_labels)},
    {"namespace-annotations", T_BOOL, O(out.ns_annotations)},
    {"owner-references", T_BOOL, O(out.owner_refs)},
    {"pod-ip", T_BOOL, O(out.pod_ip)},
    {"container-image", T_BOOL, O(out.image)},
    {"master-url", T_STR, O(out.master_url)},
    {"orphans", T_FLAG, 0},
    {"filename-path", T_STR, O(fields.filename)},
    {"container-name-path", T_STR, O(fields.container_name)},
    {"container-id-path", T_STR, O(fields.container_id_full)},
    {"namespace-field", T_STR, O(fields.ns)},
    {"pod-field", T_STR, O(fields.pod)},
    {"container-field", T_STR, O(fields.container)},
    {"container-id-field", T_STR, O(fields.container_id)},
    {"tag-path", T_STR, O(fields.tag)},
    {"kube-tag-prefix", T_STR, O(fields.tag_prefix)},
    {"pods-dir", T_BOOL, O(fields.pods_dir)},
    {"resolve-links", T_BOOL, O(fields.resolve_link)},
    {"containers-dir", T_FLAG, 0},
    {"max-line", T_SIZE, O(max_line)},
    {"config", T_FLAG, 0},
    {"log-file", T_STR, O(log_file)},
};

/* "500ms", "30s", "10m", "1h", bare seconds; -1 when bad. */
static int64_t parse_dur(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || v < 0 || v > 1e9)
        return -1;
    double mult = !strcmp(end, "ms")           ? 1
                  : !*end || !strcmp(end, "s") ? 1000
                  : !strcmp(end, "m")          ? 60000
                  : !strcmp(end, "h")          ? 3600000
                                               : -1;
    return mult < 0 ? -1 : (int64_t)(v * mult + 0.5);
}

/* "4096", "64Ki", "4Mi"; 0 when bad. */
static size_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno || *s == '-')
        return 0;
    unsigned long long mult = !*end                ? 1
                              : !strcmp(end, "Ki") ? 1024
                              : !strcmp(end, "Mi") ? 1 << 20
                                                   : 0;
    return mult && v <= (1ull << 40) / mult ? (size_t)(v * mult) : 0;
}

static int bad(char *msg, size_t n, const char *name, const char *what, const char *val)
{
    snprintf(msg, n, "--%s: %s%s%s%s", name, what, val ? " (got \"" : "", val ? val : "",
             val ? "\")" : "");
    return KC_CLI_EXIT_USAGE;
}

static int load_config(kc__enrich_opts *o, const char *path, char *msg, size_t n);
static char *own(kc__enrich_opts *o, const char *s, size_t len);

/* One option with its value (NULL when none was attached with '='). */
static int set_special(kc__enrich_opts *o, const opt *op, const char *v, char *msg, size_t n)
{
    const char *nm = op->name;
    if (!strcmp(nm, "mmexternal") || !strcmp(nm, "daemon")) {
        kc__enrich_mode m = nm[0] == 'm' ? KC_ENRICH_MODE_MMX : KC_ENRICH_MODE_DAEMON;
        if (o->mode != KC_ENRICH_MODE_FILTER && o->mode != m)
            return bad(msg, n, nm, "--mmexternal and --daemon exclude each other", NULL);
        o->mode = m;
    } else if (!strcmp(nm, "unsynced")) {
        if (strcmp(v, "buffer") && strcmp(v, "bare"))
            return bad(msg, n, nm, "expected buffer or bare", v);
        o->unsynced_bare = !strcmp(v, "bare");
    } else if (!strcmp(nm, "fetch-rate")) {
        char *end;
        errno = 0;
        double r = strtod(v, &end);
        if (end == v || *end || errno || !(r >= 0 && r <= 10000))
            return bad(msg, n, nm, "expected GETs per second from 0 to 10000", v);
        o->fetch_rate = r;
    } else if (!strcmp(nm, "format")) {
        if (strcmp(v, "mmkubernetes") && strcmp(v, "fluentbit"))
            return bad(msg, n, nm, "expected mmkubernetes or fluentbit", v);
        o->out.fmt = v[0] == 'f' ? KC_ENRICH_FMT_FLB : KC_ENRICH_FMT_MMK;
    } else if (!strcmp(nm, "orphans")) {
        if (strcmp(v, "keep") && strcmp(v, "drop"))
            return bad(msg, n, nm, "expected keep or drop", v);
        o->out.orphans_keep = v[0] == 'k';
    } else if (!strcmp(nm, "annotation-match") || !strcmp(nm, "label-match")) {
        char why[256];
        kc__enrich_filter *f = nm[0] == 'a' ? &o->out.annotation_match : &o->out.label_match;
        if (kc__enrich_filter_add(f, v, why, sizeof why))
            return bad(msg, n, nm, why, NULL);
    } else if (!strcmp(nm, "de-dot-separator") || !strcmp(nm, "de-slash-separator")) {
        char *d = nm[3] == 'd' ? o->out.de_dot_sep : o->out.de_slash_sep;
        if (strlen(v) >= sizeof o->out.de_dot_sep)
            return bad(msg, n, nm, "at most 15 bytes", v);
        strcpy(d, v);
    } else if (!strcmp(nm, "containers-dir")) {
        char dir[4096];
        size_t len = strlen(v);
        if (*v != '/' || len + 2 > sizeof dir)
            return bad(msg, n, nm, "expected an absolute directory", v);
        snprintf(dir, sizeof dir, "%s%s", v, v[len - 1] == '/' ? "" : "/"); /* ends with '/' */
        if (!(o->fields.containers_dir = own(o, dir, strlen(dir))))
            return KC_CLI_EXIT_FAIL;
    } else if (!strcmp(nm, "config")) {
        return load_config(o, v, msg, n);
    }
    return 0;
}

static int set_opt(kc__enrich_opts *o, const opt *op, const char *v, char *msg, size_t n)
{
    char *field = (char *)o + op->off;
    switch (op->t) {
    case T_BOOL:
        if (v && strcmp(v, "on") && strcmp(v, "off") && strcmp(v, "true") && strcmp(v, "false"))
            return bad(msg, n, op->name, "expected on or off", v);
        *(bool *)field = !v || !strcmp(v, "on") || !strcmp(v, "true");
        if (!strcmp(op->name, "de-dot"))
            o->de_dot_set = true;
        return 0;
    case T_STR:
        *(const char **)field = v;
        return 0;
    case T_DUR: {
        int64_t ms = parse_dur(v);
        if (ms < 0)
            return bad(msg, n, op->name, "expected a duration such as 500ms, 30s, 10m", v);
        *(int64_t *)field = ms;
        return 0;
    }
    case T_SIZE: {
        size_t s = parse_size(v);
        if (!s)
            return bad(msg, n, op->name, "expected a positive size such as 65536, 64Ki, 4Mi", v);
        *(size_t *)field = s;
        return 0;
    }
    case T_INT: {
        char *end;
        long l = strtol(v, &end, 10);
        if (end == v || *end || l < 1 || l > 100000)
            return bad(msg, n, op->name, "expected a number from 1 to 100000", v);
        *(int *)field = (int)l;
        return 0;
    }
    case T_FLAG:
        return set_special(o, op, v, msg, n);
    }
    return 0;
}

static bool takes_value(const opt *op)
{
    return op->t != T_BOOL && strcmp(op->name, "mmexternal") && strcmp(op->name, "daemon");
}

static const opt *find_opt(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof opts_table / sizeof *opts_table; i++)
        if (strlen(opts_table[i].name) == len && !strncmp(opts_table[i].name, name, len))
            return &opts_table[i];
    return NULL;
}

/* "name=value" (a config line, or an argument without its "--"); *used_next when the value is
 * the next argument (next may be NULL: none). */
static int apply(kc__enrich_opts *o, const char *arg, const char *next, bool *used_next, char *msg,
                 size_t n)
{
    size_t len = strcspn(arg, "=");
    const opt *op = find_opt(arg, len);
    if (!op) {
        snprintf(msg, n, "--%.*s: unknown option", (int)len, arg);
        return KC_CLI_EXIT_USAGE;
    }
    const char *v = arg[len] == '=' ? arg + len + 1 : NULL;
    if (!v && takes_value(op)) {
        if (!next)
            return bad(msg, n, op->name, "missing value", NULL);
        v = next;
        *used_next = true;
    } else if (v && !takes_value(op) && op->t != T_BOOL) {
        return bad(msg, n, op->name, "takes no value", v);
    }
    return set_opt(o, op, v, msg, n);
}

static char *own(kc__enrich_opts *o, const char *s, size_t len)
{
    char **p = realloc(o->owned, (o->n_owned + 1) * sizeof *p);
    if (!p)
        return NULL;
    o->owned = p;
    char *c = strndup(s, len);
    if (c)
        o->owned[o->n_owned++] = c;
    return c;
}

static int load_config(kc__enrich_opts *o, const char *path, char *msg, size_t n)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(msg, n, "--config %s: %s", path, strerror(errno));
        return KC_CLI_EXIT_USAGE;
    }
    char line[4096];
    int rc = 0, lineno = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        char *s = line + strspn(line, " \t");
        size_t len = strcspn(s, "\r\n");
        while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
            len--;
        if (!len || *s == '#')
            continue;
        s[len] = '\0';
        char *eq = strchr(s, '='), ebuf[512];
        if (eq) { /* "name = value": blanks around '=' dropped */
            char *ne = eq, *v = eq + 1 + strspn(eq + 1, " \t");
            while (ne > s && (ne[-1] == ' ' || ne[-1] == '\t'))
                ne--;
            memmove(ne + 1, v, strlen(v) + 1);
            *ne = '=';
        }
        char *c = own(o, s, strlen(s));
        bool unused = false;
        if (!c || strchr(c, '=') == NULL)
            rc = c ? bad(msg, n, "config", "expected name=value lines", c) : KC_CLI_EXIT_FAIL;
        else if ((rc = apply(o, c, NULL, &unused, ebuf, sizeof ebuf)))
            snprintf(msg, n, "%s:%d: %s", path, lineno, ebuf);
    }
    fclose(f);
    return rc;
}

static void defaults(kc__enrich_opts *o)
{
    memset(o, 0, sizeof *o);
    o->deleted_grace_ms = 600000;
    o->not_seen_wait_ms = 100;
    o->sync_wait_ms = 500;
    o->socket_timeout_ms = 1000;
    o->max_line = 4u << 20;
    o->max_clients = 64;
    o->fetch_rate = 2;
    o->fetch_burst = 5;
    o->fetch_ttl_ms = 60000;
    o->fields = (kc__enrich_fields){.filename = "$!metadata!filename",
                                    .container_name = "$!CONTAINER_NAME",
                                    .container_id_full = "$!CONTAINER_ID_FULL",
                                    .resolve_link = true};
    o->out.labels = o->out.annotations = o->out.ns_meta = true;
    strcpy(o->out.de_dot_sep, "_");
    strcpy(o->out.de_slash_sep, "_");
    o->out.master_url = "https://kubernetes.default.svc.cluster.local:443";
}

static int check(kc__enrich_opts *o, char *msg, size_t n)
{
    if (!o->de_dot_set)
        o->out.de_dot = o->out.fmt == KC_ENRICH_FMT_MMK;
    if (o->mode == KC_ENRICH_MODE_DAEMON && !o->socket)
        return bad(msg, n, "daemon", "needs --socket PATH", NULL);
    if (o->mode == KC_ENRICH_MODE_DAEMON && o->standalone)
        return bad(msg, n, "standalone", "not with --daemon (the daemon is the cache)", NULL);
    if (o->mode != KC_ENRICH_MODE_DAEMON && o->socket && o->standalone)
        return bad(msg, n, "standalone", "either --socket or --standalone", NULL);
    if (o->mode == KC_ENRICH_MODE_MMX && !o->socket && !o->standalone)
        return bad(msg, n, "mmexternal", "needs --socket PATH or --standalone", NULL);
    if (o->fields.ns && !o->fields.pod)
        return bad(msg, n, "namespace-field", "needs --pod-field too", NULL);
    if (o->fields.pod && !o->fields.ns)
        return bad(msg, n, "pod-field", "needs --namespace-field too", NULL);
    return 0;
}

int kc__enrich_opts_parse(kc__enrich_opts *o, int argc, char **argv, char *msg, size_t n)
{
    defaults(o);
    msg[0] = '\0';
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return 1;
        if (strncmp(a, "--", 2) || !a[2]) {
            snprintf(msg, n, "%s: unexpected argument (options start with --)", a);
            return KC_CLI_EXIT_USAGE;
        }
        bool used_next = false;
        int rc = apply(o, a + 2, i + 1 < argc ? argv[i + 1] : NULL, &used_next, msg, n);
        if (rc)
            return rc;
        i += used_next;
    }
    return check(o, msg, n);
}

void kc__enrich_opts_free(kc__enrich_opts *o)
{
    for (size_t i = 0; i < o->n_owned; i++)
        free(o->owned[i]);
    free(o->owned);
    o->owned = NULL;
    o->n_owned = 0;
    kc__enrich_filter_free(&o->out.annotation_match);
    kc__enrich_filter_free(&o->out.label_match);
}
