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
 *   - jsonpath / custom-columns, and any output with --sort-by: every object is read first
 *     (get_collect.c), then sorted and printed;
 *   - -w / --watch-only: the list, then each change (get_watch.c).
 * "all" as the TYPE stands for the resources whose discovery categories contain "all"
 * (get_all.c), expanded once connected. Flags are get_args.c's.
 * A missing object is reported (as kubectl: error from server (NotFound): …) and the others are
 * still printed; the exit status is then 1. Bad arguments exit 2 (cli_util.c's format).
 */
#include "cli.h"
#include "get.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

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
    char *types_copy; /* the TYPE,TYPE argument, split in place */
    char **all_types; /* `get all`'s resources (get_all.c): names get their kind, as kubectl */
    size_t n_all;
    kc_resource_info *ris; /* one per target, shared by equal resource strings */
    kc_client *c;
    bool failed;
} get_run;

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

/* `all` among the types: replaced by the resources in the "all" category (get_all.c), each with
 * the names given. 0, or -1 after reporting why. */
static int expand_all(get_run *r)
{
    size_t n_all = 0;
    for (size_t i = 0; i < r->n; i++)
        n_all += !strcmp(r->t[i].resource, "all");
    if (!n_all)
        return 0;
    if (get_all_types(r->c, &r->all_types, &r->n_all))
        return -1;
    target *t = calloc(r->n - n_all + n_all * r->n_all + 1, sizeof(*t));
    if (!t)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (strcmp(r->t[i].resource, "all")) {
            t[k++] = r->t[i];
            continue;
        }
        for (size_t j = 0; j < r->n_all; j++)
            t[k++] = (target){.resource = r->all_types[j], .name = r->t[i].name};
    }
    free(r->t);
    r->t = t;
    r->n = k;
    r->single = r->single && k == 1;
    return 0;
}

/* Resolve every target's type (equal strings share one lookup). 0, or the error reported. */
static int resolve_all(get_run *r)
{
    if (!(r->ris = calloc(r->n + 1, sizeof(*r->ris))))
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

typedef struct collect_ctx {
    get_items *l;
    const kc_resource_info *ri;
    get_run *r;
} collect_ctx;

static int on_collect(void *ud, kc_obj *obj)
{
    collect_ctx *x = ud;
    if (get_items_add(x->l, obj, x->ri)) {
        fprintf(stderr, "kcache get: an object could not be loaded (out of memory, or a number "
                        "beyond 64 bits)\n");
        x->r->failed = true;
    }
    return 0;
}

/* -o name | json | yaml: streamed, object by object. */
static void run_docs(get_run *r)
{
    get_doc *d = get_doc_new(stdout, r->a.out.fmt, r->single);
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

/* Every target's objects into l (for sorting, templates, columns). */
static void collect(get_run *r, get_items *l)
{
    kc_list_opts lo = list_opts(r);
    for (size_t i = 0; i < r->n; i++) {
        target *t = &r->t[i];
        kc_gvr gvr = target_gvr(t);
        kc_error err = KC_ERROR_INIT;
        collect_ctx x = {l, t->ri, r};
        int rc;
        if (t->name) {
            kc_obj *obj = NULL;
            rc = kc_client_get(r->c, &gvr, target_ns(r, t), t->name, &obj, &err);
            if (!rc)
                rc = on_collect(&x, obj);
        } else {
            rc = kc_client_list_all(r->c, &gvr, target_ns(r, t), &lo, NULL, on_collect, &x, &err);
        }
        if (rc)
            report(r, rc, &err);
        kc_error_clear(&err);
    }
}

/* --sort-by over l; false after reporting a failure. */
static bool sort_items(get_run *r, get_items *l)
{
    char err[320];
    if (!r->a.out.sort || !get_items_sort(l, r->a.out.sort, r->a.out.sort_text, err, sizeof err))
        return true;
    fprintf(stderr, "kcache get: --sort-by: %s\n", err);
    r->failed = true;
    return false;
}

/* jsonpath, custom-columns, or any document output with --sort-by. */
static void run_collected(get_run *r)
{
    get_items l = {0};
    collect(r, &l);
    if (sort_items(r, &l) && get_items_print(&l, &r->a.out, r->single, stdout))
        r->failed = true;
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "kcache get: writing the output failed\n");
        r->failed = true;
    }
    get_items_clear(&l);
}

/* --sort-by on tables: each table's rows in the order of the sorted objects. */
static void sort_tables(get_run *r, get_table **tabs, const kc_resource_info **tab_ri, size_t ntabs)
{
    get_items l = {0};
    collect(r, &l);
    if (sort_items(r, &l)) {
        for (size_t i = 0; i < ntabs; i++) {
            size_t n = get_table_rows(tabs[i]);
            size_t *rank = malloc((n + 1) * sizeof(*rank)),
                   *order = malloc((n + 1) * sizeof(*order));
            for (size_t k = 0; rank && order && k < n; k++) {
                const char *ns, *name;
                get_table_row_id(tabs[i], k, &ns, &name);
                rank[k] = get_items_rank(&l, tab_ri[i], ns, name);
                order[k] = k;
            }
            for (size_t k = 1; rank && order && k < n; k++) /* insertion sort: stable */
                for (size_t j = k; j > 0 && rank[order[j - 1]] > rank[order[j]]; j--) {
                    size_t x = order[j];
                    order[j] = order[j - 1];
                    order[j - 1] = x;
                }
            if (!rank || !order || get_table_permute(tabs[i], order))
                report(r, KC_ENOMEM, NULL);
            free(rank);
            free(order);
        }
    }
    get_items_clear(&l);
}

/* How many distinct types have rows (kubectl prefixes names with their kind when over one). */
static size_t shown_types(get_table **tabs, const kc_resource_info **tab_ri, size_t ntabs)
{
    size_t types = 0;
    for (size_t i = 0; i < ntabs; i++) {
        bool seen = !get_table_rows(tabs[i]);
        for (size_t j = 0; j < i && !seen; j++)
            seen = get_table_rows(tabs[j]) && same_type(tab_ri[j], tab_ri[i]);
        types += !seen;
    }
    return types;
}

static void print_tables(get_run *r, get_table **tabs, const kc_resource_info **tab_ri,
                         size_t ntabs)
{
    size_t types = shown_types(tabs, tab_ri, ntabs);
    bool first = true;
    for (size_t i = 0; i < ntabs; i++) {
        if (!get_table_rows(tabs[i]))
            continue;
        if (!first)
            fputc('\n', stdout);
        get_table_print(tabs[i], stdout, types > 1 || r->n_all, !r->a.out.no_headers, NULL);
        first = false;
    }
    if (first && !r->failed) {
        const char *ns = target_ns(r, &r->t[0]);
        if (ns)
            fprintf(stderr, "No resources found in %s namespace.\n", ns);
        else
            fprintf(stderr, "No resources found\n");
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
            if (!(tabs[ntabs] = get_table_new(t->ri, r->a.out.fmt == GET_WIDE, show_ns))) {
                report(r, KC_ENOMEM, NULL);
                break;
            }
            get_table_labels(tabs[ntabs], r->a.out.label_keys, r->a.out.n_label_keys,
                             r->a.out.show_labels);
            tab_ri[ntabs++] = t->ri;
        }
        kc_gvr gvr = target_gvr(t);
        kc_error err = KC_ERROR_INIT;
        int rc = get_table_fetch(tabs[ntabs - 1], r->c, &gvr, target_ns(r, t), t->name, &lo, &err);
        if (rc)
            report(r, rc, &err);
        kc_error_clear(&err);
    }
    if (r->a.out.sort)
        sort_tables(r, tabs, tab_ri, ntabs);
    print_tables(r, tabs, tab_ri, ntabs);
    for (size_t i = 0; i < ntabs; i++)
        get_table_free(tabs[i]);
    free(tabs);
    free(tab_ri);
}

/* -w: one TYPE, at most one NAME (kubectl: "watch is only supported on individual resources
 * and resource collections"). */
static int run_watch(get_run *r)
{
    if (r->n > 1) {
        fprintf(stderr,
                "kcache get: watch is only supported on individual resources and "
                "resource collections, but %zu resources were found\n",
                r->n);
        return KC_CLI_EXIT_FAIL;
    }
    get_watch_req w = {.c = r->c,
                       .ri = r->t[0].ri,
                       .ns = target_ns(r, &r->t[0]),
                       .name = r->t[0].name,
                       .lo = list_opts(r),
                       .out = &r->a.out,
                       .watch_only = r->a.watch_only,
                       .show_ns = r->t[0].ri->namespaced && r->a.s.all_ns};
    return get_watch_run(&w);
}

/* Argument combinations kubectl refuses. -1 to go on, else the exit status. */
static int check_combinations(get_run *r)
{
    bool named = false;
    for (size_t i = 0; i < r->n; i++)
        named = named || r->t[i].name;
    if (named && r->a.s.all_ns) /* kubectl's words for these three */
        return kc__cli_usage_error("get",
                                   "a resource cannot be retrieved by name across all namespaces");
    if (named && (r->a.s.label_selector || r->a.s.field_selector))
        return kc__cli_usage_error("get", "name cannot be provided when a selector is specified");
    return -1;
}

/* Connected: expand `all`, resolve, read and print. Returns the exit status. */
static int run(get_run *r)
{
    if (expand_all(r) || resolve_all(r))
        return KC_CLI_EXIT_FAIL;
    if (!r->n) { /* `get all` on a server with nothing in that category */
        fprintf(stderr, "No resources found\n");
        return 0;
    }
    if (r->a.watch)
        return run_watch(r);
    get_fmt f = r->a.out.fmt;
    if (f == GET_TABLE || f == GET_WIDE)
        run_tables(r);
    else if (f == GET_JSONPATH || f == GET_COLUMNS || r->a.out.sort)
        run_collected(r);
    else
        run_docs(r);
    return r->failed ? KC_CLI_EXIT_FAIL : 0;
}

static int cmd_get(int argc, char **argv)
{
    get_run r = {.a = {.out.fmt = GET_TABLE, .limit = 500}};
    int status = get_args_parse(argc, argv, &r.a);
    if (status < 0)
        status = parse_targets(&r, argc, argv);
    if (status < 0)
        status = check_combinations(&r);
    if (status < 0) {
        status = KC_CLI_EXIT_FAIL;
        if (!kc__cli_connect("get", &r.a.s, &r.c))
            status = run(&r);
    }
    for (size_t i = 0; r.ris && i < r.n; i++)
        kc_resource_info_clear(&r.ris[i]);
    for (size_t i = 0; i < r.n_all; i++)
        free(r.all_types[i]);
    free(r.all_types);
    free(r.ris);
    free(r.t);
    free(r.types_copy);
    get_args_clear(&r.a);
    kc_client_free(r.c);
    return status;
}

KC_CLI_COMMAND(get, "get objects (kubeconfig rules, kubectl resource names and output)", cmd_get)
