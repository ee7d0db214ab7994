/*
 * cmd_get.c — `kcache get`: read objects from a cluster or `kcache serve` as kubectl get does.
 *
 * Arguments are kubectl's: TYPE[,TYPE…] [NAME…] or TYPE/NAME…, with TYPE any name the
 * RESTMapper knows (pods, po, deploy, deployments.apps, CRD kinds…) and the kubeconfig rules
 * (--kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster). Design: arguments become a list of
 * targets (a resource and a name, or NULL for the collection), in kubectl's order (types outer,
 * names inner); every type is resolved before anything is read. Output:
 *   - table (default) / wide: the server's own columns (get_table.c), one table per run of the
 *     same type, names prefixed "kind.group/" when several types are shown;
 *   - name: kind.group/name per line; json / yaml: one List document, or the object alone when a
 *     single TYPE NAME (or TYPE/NAME) was asked (get_print.c).
 * A missing object is reported (as kubectl: error from server (NotFound): …) and the others are
 * still printed; the exit status is then 1. Bad arguments exit 2 (cli_util.c's format).
 */
#include "cli.h"
#include "get.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

typedef struct get_args {
    kc__cli_scope s;
    get_fmt fmt;
    int64_t limit;
} get_args;

typedef struct target {
    const char *resource; /* as typed; points into argv or into the args' copy */
    const char *name;     /* NULL = the collection */
    kc_resource_info *ri; /* resolved */
} target;

typedef struct get_run {
    get_args a;
    target *t;
    size_t n;
    bool single;
    char *types_copy;      /* the TYPE,TYPE argument, split in place */
    kc_resource_info *ris; /* one per target, shared by equal resource strings */
    kc_client *c;
    bool failed;
} get_run;

enum { OPT_LIMIT = KC_CLI_OPT_OWN };

static const char get_optstring[] = ":n:Al:o:h";

static void get_usage(FILE *f)
{
    fprintf(f, "Usage: kcache get TYPE[,TYPE…] [NAME…] [options]\n"
               "       kcache get TYPE/NAME… [options]\n"
               "\n"
               "Print objects as kubectl get does. TYPE is any name kubectl accepts: plural,\n"
               "singular, short name or kind, optionally .GROUP or .VERSION.GROUP qualified\n"
               "(pods, po, Pod, deploy, deployments.apps, CRD kinds).\n"
               "\n"
               "  -n, --namespace NS      namespace (default: the context's)\n"
               "  -A, --all-namespaces    list across all namespaces (not with NAME)\n"
               "  -l, --selector SEL      label selector (not with NAME)\n"
               "      --field-selector S  field selector (not with NAME)\n"
               "  -o, --output FMT        table (default): the server's columns (server-side\n"
               "                          printing); wide: also its priority columns; name:\n"
               "                          kind.group/name; json | yaml: one List document, or the\n"
               "                          object itself for a single TYPE NAME\n"
               "      --limit N           page size while listing, N > 0 (default 500)\n"
               "      --kubeconfig PATH   kubeconfig file (default: $KUBECONFIG, ~/.kube/config)\n"
               "      --context NAME      kubeconfig context\n"
               "  -h, --help              this help\n"
               "\n"
               "Exit status: 0 all found, 1 an error (missing objects are reported, the others\n"
               "still printed), 2 bad arguments.\n");
}

static int parse_fmt(const char *s, get_fmt *ret)
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
            *ret = fmts[i].fmt;
            return 0;
        }
    return kc__cli_usage_error("get",
                               "-o: unknown output format \"%s\" (allowed: table, wide, name, "
                               "json, yaml)",
                               s);
}

/* Flags into r->a. -1 to go on, else the exit status. */
static int parse_flags(int argc, char **argv, get_args *a)
{
    static const struct option longopts[] = {KC__CLI_SCOPE_OPTIONS,
                                             {"output", required_argument, NULL, 'o'},
                                             {"limit", required_argument, NULL, OPT_LIMIT},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int ch;
    char *end;
    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(argc, argv, get_optstring, longopts, NULL)) != -1) {
        if (kc__cli_scope_flag(&a->s, ch, optarg))
            continue;
        switch (ch) {
        case 'o':
            if (parse_fmt(optarg, &a->fmt))
                return KC_CLI_EXIT_USAGE;
            break;
        case OPT_LIMIT:
            errno = 0;
            a->limit = strtoll(optarg, &end, 10);
            if (errno || end == optarg || *end || a->limit <= 0)
                return kc__cli_usage_error("get", "--limit: expected a positive integer, got '%s'",
                                           optarg);
            break;
        case 'h':
            get_usage(stdout);
            return 0;
        default:
            return kc__cli_getopt_error("get", ch, get_optstring, argv);
        }
    }
    return -1;
}

/* Positional arguments into targets. -1 to go on, else the exit status. */
static int parse_targets(get_run *r, int argc, char **argv)
{
    int first = optind, n = argc - optind;
    if (n <= 0)
        return kc__cli_usage_error("get", "TYPE: missing (e.g. kcache get pods)");
    size_t slashed = 0;
    for (int i = first; i < argc; i++)
        slashed += strchr(argv[i], '/') != NULL;
    if (slashed && slashed != (size_t)n)
        return kc__cli_usage_error(
            "get", "there is no need to specify a resource type as a separate argument when "
                   "passing arguments in resource/name form (e.g. 'kcache get resource/"
                   "<resource_name>' instead of 'kcache get resource resource/<resource_name>')");
    if (slashed) {
        r->t = calloc((size_t)n, sizeof(*r->t));
        if (!r->t)
            return KC_CLI_EXIT_FAIL;
        for (int i = first; i < argc; i++) {
            char *s = argv[i], *slash = strchr(s, '/');
            if (slash == s || !slash[1] || strchr(slash + 1, '/'))
                return kc__cli_usage_error("get",
                                           "%s: arguments in resource/name form must have "
                                           "a single resource and name",
                                           s);
            *slash = '\0';
            r->t[r->n++] = (target){.resource = s, .name = slash + 1};
        }
        r->single = n == 1;
        return -1;
    }
    if (!(r->types_copy = strdup(argv[first])))
        return KC_CLI_EXIT_FAIL;
    size_t ntypes = 1;
    for (const char *p = r->types_copy; *p; p++)
        ntypes += *p == ',';
    size_t nnames = (size_t)n - 1;
    r->t = calloc(ntypes * (nnames ? nnames : 1), sizeof(*r->t));
    if (!r->t)
        return KC_CLI_EXIT_FAIL;
    char *type = r->types_copy;
    for (size_t i = 0; i < ntypes; i++) {
        char *comma = strchr(type, ',');
        if (comma)
            *comma = '\0';
        if (!*type)
            return kc__cli_usage_error("get", "%s: an empty resource type", argv[first]);
        for (size_t k = 0; k < (nnames ? nnames : 1); k++)
            r->t[r->n++] =
                (target){.resource = type, .name = nnames ? argv[first + 1 + (int)k] : NULL};
        type = comma ? comma + 1 : type;
    }
    r->single = ntypes == 1 && nnames == 1;
    return -1;
}

/* Resolve every target's type (equal strings share one lookup). 0, or the error reported. */
static int resolve_all(get_run *r)
{
    if (!(r->ris = calloc(r->n, sizeof(*r->ris))))
        return KC_ENOMEM;
    for (size_t i = 0; i < r->n; i++) {
        for (size_t j = 0; j < i && !r->t[i].ri; j++)
            if (!strcmp(r->t[j].resource, r->t[i].resource))
                r->t[i].ri = r->t[j].ri;
        if (r->t[i].ri)
            continue;
        int rc = kc__cli_resolve("get", r->c, r->t[i].resource, &r->ris[i]);
        if (rc)
            return rc;
        r->t[i].ri = &r->ris[i];
    }
    return 0;
}

static const char *target_ns(const get_run *r, const target *t)
{
    if (!t->ri->namespaced || r->a.s.all_ns)
        return NULL;
    return r->a.s.ns ? r->a.s.ns : kc_client_namespace(r->c);
}

static kc_gvr target_gvr(const target *t)
{
    return (kc_gvr){t->ri->group, t->ri->version, t->ri->resource};
}

static bool same_type(const kc_resource_info *a, const kc_resource_info *b)
{
    return !strcmp(a->group, b->group) && !strcmp(a->resource, b->resource);
}

static kc_list_opts list_opts(const get_run *r)
{
    return (kc_list_opts){.label_selector = r->a.s.label_selector,
                          .field_selector = r->a.s.field_selector,
                          .limit = r->a.limit};
}

static void report(get_run *r, int rc, const kc_error *err)
{
    kc__cli_error("get", rc, err);
    r->failed = true;
}

typedef struct doc_ctx {
    get_doc *d;
    const kc_resource_info *ri;
    get_run *r;
} doc_ctx;

static int on_item(void *ud, kc_obj *obj)
{
    doc_ctx *x = ud;
    if (get_doc_add(x->d, obj, x->ri))
        x->r->failed = true;
    kc_obj_unref(obj);
    return 0;
}

/* -o name | json | yaml: streamed, object by object. */
static void run_docs(get_run *r)
{
    get_doc *d = get_doc_new(stdout, r->a.fmt, r->single);
    if (!d) {
        report(r, KC_ENOMEM, NULL);
        return;
    }
    kc_list_opts lo = list_opts(r);
    for (size_t i = 0; i < r->n; i++) {
        target *t = &r->t[i];
        kc_gvr gvr = target_gvr(t);
        kc_error err = KC_ERROR_INIT;
        doc_ctx x = {d, t->ri, r};
        int rc;
        if (t->name) {
            kc_obj *obj = NULL;
            rc = kc_client_get(r->c, &gvr, target_ns(r, t), t->name, &obj, &err);
            if (!rc)
                rc = on_item(&x, obj);
        } else {
            rc = kc_client_list_all(r->c, &gvr, target_ns(r, t), &lo, NULL, on_item, &x, &err);
        }
        if (rc)
            report(r, rc, &err);
        kc_error_clear(&err);
    }
    if (get_doc_finish(d)) {
        fprintf(stderr, "kcache get: writing the output failed\n");
        r->failed = true;
    }
}

/* table | wide: one table per run of targets of the same type, printed once all are read. */
static void run_tables(get_run *r)
{
    get_table **tabs = calloc(r->n, sizeof(*tabs));
    const kc_resource_info **tab_ri = calloc(r->n, sizeof(*tab_ri));
    size_t ntabs = 0;
    if (!tabs || !tab_ri) {
        free(tabs);
        free(tab_ri);
        report(r, KC_ENOMEM, NULL);
        return;
    }
    kc_list_opts lo = list_opts(r);
    for (size_t i = 0; i < r->n; i++) {
        target *t = &r->t[i];
        if (!ntabs || !same_type(t->ri, tab_ri[ntabs - 1])) {
            bool show_ns = t->ri->namespaced && r->a.s.all_ns;
            if (!(tabs[ntabs] = get_table_new(t->ri, r->a.fmt == GET_WIDE, show_ns))) {
                report(r, KC_ENOMEM, NULL);
                break;
            }
            tab_ri[ntabs++] = t->ri;
        }
        kc_gvr gvr = target_gvr(t);
        kc_error err = KC_ERROR_INIT;
        int rc = get_table_fetch(tabs[ntabs - 1], r->c, &gvr, target_ns(r, t), t->name, &lo, &err);
        if (rc)
            report(r, rc, &err);
        kc_error_clear(&err);
    }
    /* kubectl prefixes names with their kind when more than one type is printed */
    size_t types = 0;
    for (size_t i = 0; i < ntabs; i++) {
        bool seen = !get_table_rows(tabs[i]);
        for (size_t j = 0; j < i && !seen; j++)
            seen = get_table_rows(tabs[j]) && same_type(tab_ri[j], tab_ri[i]);
        types += !seen;
    }
    bool first = true;
    for (size_t i = 0; i < ntabs; i++) {
        if (!get_table_rows(tabs[i]))
            continue;
        if (!first)
            fputc('\n', stdout);
        get_table_print(tabs[i], stdout, types > 1);
        first = false;
    }
    if (first && !r->failed) {
        const char *ns = target_ns(r, &r->t[0]);
        if (ns)
            fprintf(stderr, "No resources found in %s namespace.\n", ns);
        else
            fprintf(stderr, "No resources found\n");
    }
    for (size_t i = 0; i < ntabs; i++)
        get_table_free(tabs[i]);
    free(tabs);
    free(tab_ri);
}

static int cmd_get(int argc, char **argv)
{
    get_run r = {.a = {.fmt = GET_TABLE, .limit = 500}};
    int status = parse_flags(argc, argv, &r.a);
    if (status < 0)
        status = parse_targets(&r, argc, argv);
    bool named = false;
    for (size_t i = 0; status < 0 && i < r.n; i++)
        named = named || r.t[i].name;
    if (status < 0 && named && r.a.s.all_ns) /* kubectl's words for these three */
        status = kc__cli_usage_error(
            "get", "a resource cannot be retrieved by name across all namespaces");
    else if (status < 0 && named && (r.a.s.label_selector || r.a.s.field_selector))
        status = kc__cli_usage_error("get", "name cannot be provided when a selector is specified");
    if (status < 0) {
        status = KC_CLI_EXIT_FAIL;
        if (!kc__cli_connect("get", r.a.s.kubeconfig, r.a.s.context, &r.c) && !resolve_all(&r)) {
            if (r.a.fmt == GET_TABLE || r.a.fmt == GET_WIDE)
                run_tables(&r);
            else
                run_docs(&r);
            status = r.failed ? KC_CLI_EXIT_FAIL : 0;
        }
    }
    for (size_t i = 0; r.ris && i < r.n; i++)
        kc_resource_info_clear(&r.ris[i]);
    free(r.ris);
    free(r.t);
    free(r.types_copy);
    kc_client_free(r.c);
    return status;
}

KC_CLI_COMMAND(get, "get objects (kubeconfig rules, kubectl resource names and output)", cmd_get)
