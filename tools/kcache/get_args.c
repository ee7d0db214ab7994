/*
 * get_args.c — the flags of `kcache get`, spelled as kubectl spells them, and its --help.
 *
 * Design: getopt_long over the shared scope flags (cli.h: -n, -A, -l, --field-selector,
 * --kubeconfig, --context, --request-timeout) and get's own; every value is checked here, before
 * anything is read, so a bad template or column spec is a usage error (exit 2) naming the offset
 * or the column. -o jsonpath-file= and custom-columns-file= read their file here (at most 64 KiB).
 * Positional arguments (TYPE, NAME, TYPE/NAME) are cmd_get.c's.
 */
#include "get.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define GET_FILE_MAX (64 * 1024)

enum { OPT_LIMIT = KC_CLI_OPT_OWN, OPT_WATCH_ONLY, OPT_SHOW_LABELS, OPT_SORT_BY, OPT_NO_HEADERS };

static const char get_optstring[] = ":n:Al:o:wL:h";

void get_usage(FILE *f)
{
    fprintf(
        f,
        "Usage: kcache get TYPE[,TYPE…] [NAME…] [options]\n"
        "       kcache get TYPE/NAME… [options]\n"
        "       kcache get all [options]\n"
        "\n"
        "Print objects as kubectl get does. TYPE is any name kubectl accepts: plural,\n"
        "singular, short name or kind, optionally .GROUP or .VERSION.GROUP qualified\n"
        "(pods, po, Pod, deploy, deployments.apps, CRD kinds); \"all\" is every resource\n"
        "whose discovery categories contain \"all\" (pods, services, deployments…).\n"
        "\n"
        "  -n, --namespace NS      namespace (default: the context's)\n"
        "  -A, --all-namespaces    list across all namespaces (not with NAME)\n"
        "  -l, --selector SEL      label selector (not with NAME)\n"
        "      --field-selector S  field selector (not with NAME)\n"
        "  -o, --output FMT        table (default): the server's columns (server-side\n"
        "                          printing); wide: also its priority columns; name:\n"
        "                          kind.group/name; json | yaml: one List document, or the\n"
        "                          object itself for a single TYPE NAME;\n"
        "                          jsonpath=TEMPLATE | jsonpath-file=FILE: kubectl's\n"
        "                          JSONPath, run against the List (or the single object),\n"
        "                          e.g. '{range .items[*]}{.metadata.name}{\"\\n\"}{end}';\n"
        "                          custom-columns=NAME:.path,… | custom-columns-file=FILE\n"
        "  -w, --watch             after printing, print each change (one TYPE, at most one\n"
        "                          NAME) until interrupted\n"
        "      --watch-only        print only the changes, not the current objects\n"
        "      --sort-by PATH      sort by a JSONPath field (.metadata.name, {.spec.replicas}):\n"
        "                          numbers numerically, strings bytewise\n"
        "      --show-labels       a LABELS column last (table output)\n"
        "  -L, --label-columns K,… a column per label key (table output; repeatable)\n"
        "      --no-headers        no header line (table and custom-columns output)\n"
        "      --limit N           page size while listing, N > 0 (default "
        "500)\n" KC__CLI_SCOPE_HELP "  -h, --help              this help\n"
        "\n"
        "Global flags (-n, --kubeconfig, --context, --request-timeout) may also come before\n"
        "the command: kcache --kubeconfig F get pods.\n"
        "\n"
        "Exit status: 0 all found, 1 an error (missing objects are reported, the others\n"
        "still printed), 2 bad arguments.\n");
}

/* A -o …-file=PATH's text. New malloc'd, or NULL after reporting why. */
static char *read_spec_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        kc__cli_usage_error("get", "-o: %s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = malloc(GET_FILE_MAX + 1);
    size_t n = buf ? fread(buf, 1, GET_FILE_MAX + 1, f) : 0;
    fclose(f);
    if (!buf || n > GET_FILE_MAX) {
        free(buf);
        kc__cli_usage_error("get", "-o: %s: larger than %d bytes", path, GET_FILE_MAX);
        return NULL;
    }
    buf[n] = '\0';
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) /* kubectl trims the file's end */
        buf[--n] = '\0';
    return buf;
}

/* -o jsonpath=… | jsonpath-file=… | custom-columns=… | custom-columns-file=…. */
static int parse_template_fmt(const char *s, get_args *a)
{
    const char *eq = strchr(s, '=');
    size_t kl = eq ? (size_t)(eq - s) : strlen(s);
    bool jp =
        (kl == 8 && !strncmp(s, "jsonpath", kl)) || (kl == 13 && !strncmp(s, "jsonpath-file", kl));
    bool file = kl == 13 || kl == 19;
    if (!eq || !eq[1])
        return kc__cli_usage_error("get", "-o %s: %s", s,
                                   jp ? "template format specified but no template given"
                                      : "custom-columns format specified but no custom "
                                        "columns given");
    free(a->spec_text);
    a->spec_text = file ? read_spec_file(eq + 1) : strdup(eq + 1);
    if (!a->spec_text)
        return KC_CLI_EXIT_USAGE;
    char err[320];
    if (jp) {
        a->out.fmt = GET_JSONPATH;
        a->out.tmpl_text = a->spec_text;
        jp_free(a->out.tmpl);
        if (jp_parse(a->spec_text, false, &a->out.tmpl, err, sizeof err)) /* kubectl's words */
            return kc__cli_usage_error("get", "error parsing jsonpath %s: %s", a->spec_text,
                                       err + strlen("jsonpath: "));
        return 0;
    }
    a->out.fmt = GET_COLUMNS;
    get_cols_free(a->out.cols);
    if (get_cols_parse(a->spec_text, file, &a->out.cols, err, sizeof err))
        return kc__cli_usage_error("get", "-o %.*s: %s", (int)kl, s, err);
    return 0;
}

static int parse_fmt(const char *s, get_args *a)
{
    static const struct {
        const char *name;
        get_fmt fmt;
    } fmts[] = {{"table", GET_TABLE},
                {"wide", GET_WIDE},
                {"name", GET_NAME},
                {"json", GET_JSON},
                {"yaml", GET_YAML}};
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++)
        if (!strcmp(s, fmts[i].name)) {
            a->out.fmt = fmts[i].fmt;
            return 0;
        }
    static const char *const tmpl[] = {"jsonpath", "jsonpath-file", "custom-columns",
                                       "custom-columns-file"};
    for (size_t i = 0; i < sizeof tmpl / sizeof tmpl[0]; i++)
        if (!strncmp(s, tmpl[i], strlen(tmpl[i])) && strchr("=", s[strlen(tmpl[i])]))
            return parse_template_fmt(s, a);
    return kc__cli_usage_error("get",
                               "-o: unknown output format \"%s\" (allowed: table, wide, name, "
                               "json, yaml, jsonpath=…, jsonpath-file=…, custom-columns=…, "
                               "custom-columns-file=…)",
                               s);
}

/* -L a,b (repeatable): appended to out.label_keys. */
static int add_label_keys(get_args *a, const char *arg)
{
    const char *p = arg;
    for (;;) {
        size_t n = strcspn(p, ",");
        if (n) {
            char **k = realloc(a->out.label_keys, (a->out.n_label_keys + 1) * sizeof(*k));
            if (!k || !(k[a->out.n_label_keys] = strndup(p, n))) {
                a->out.label_keys = k ? k : a->out.label_keys;
                return KC_CLI_EXIT_FAIL;
            }
            a->out.label_keys = k;
            a->out.n_label_keys++;
        }
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

/* One of get's own flags. 0, or the exit status. */
static int own_flag(int ch, char **argv, get_args *a)
{
    char *end, err[320];
    switch (ch) {
    case 'o':
        return parse_fmt(optarg, a) ? KC_CLI_EXIT_USAGE : 0;
    case OPT_LIMIT:
        errno = 0;
        a->limit = strtoll(optarg, &end, 10);
        if (errno || end == optarg || *end || a->limit <= 0)
            return kc__cli_usage_error("get", "--limit: expected a positive integer, got '%s'",
                                       optarg);
        return 0;
    case 'w':
        a->watch = true;
        return 0;
    case OPT_WATCH_ONLY:
        a->watch = a->watch_only = true;
        return 0;
    case OPT_SHOW_LABELS:
        a->out.show_labels = true;
        return 0;
    case OPT_NO_HEADERS:
        a->out.no_headers = true;
        return 0;
    case 'L':
        return add_label_keys(a, optarg);
    case OPT_SORT_BY:
        jp_free(a->out.sort);
        a->out.sort = NULL;
        a->out.sort_text = optarg;
        if (*optarg && jp_parse(optarg, true, &a->out.sort, err, sizeof err))
            return kc__cli_usage_error("get", "--sort-by: %s", err);
        return 0;
    case 'h':
        get_usage(stdout);
        return -1;
    default:
        return kc__cli_getopt_error("get", ch, get_optstring, argv);
    }
}

int get_args_parse(int argc, char **argv, get_args *a)
{
    static const struct option longopts[] = {KC__CLI_SCOPE_OPTIONS,
                                             {"output", required_argument, NULL, 'o'},
                                             {"limit", required_argument, NULL, OPT_LIMIT},
                                             {"watch", no_argument, NULL, 'w'},
                                             {"watch-only", no_argument, NULL, OPT_WATCH_ONLY},
                                             {"show-labels", no_argument, NULL, OPT_SHOW_LABELS},
                                             {"label-columns", required_argument, NULL, 'L'},
                                             {"sort-by", required_argument, NULL, OPT_SORT_BY},
                                             {"no-headers", no_argument, NULL, OPT_NO_HEADERS},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int ch;
    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(argc, argv, get_optstring, longopts, NULL)) != -1) {
        int sf = kc__cli_scope_flag("get", &a->s, ch, optarg);
        if (sf < 0)
            return KC_CLI_EXIT_USAGE;
        if (sf)
            continue;
        int st = own_flag(ch, argv, a);
        if (st)
            return st < 0 ? 0 : st; /* -h: the help was printed */
    }
    if (a->out.show_labels && a->out.fmt != GET_TABLE && a->out.fmt != GET_WIDE)
        return kc__cli_usage_error("get", "--show-labels: only with table output (-o wide or "
                                          "none)");
    return -1;
}

void get_args_clear(get_args *a)
{
    jp_free(a->out.tmpl);
    jp_free(a->out.sort);
    get_cols_free(a->out.cols);
    for (size_t i = 0; i < a->out.n_label_keys; i++)
        free(a->out.label_keys[i]);
    free(a->out.label_keys);
    free(a->spec_text);
}
