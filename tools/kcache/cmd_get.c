/*
 * cmd_get.c — `kcache get RESOURCE [NAME]`: read objects from a cluster or `kcache serve` using
 * the kubeconfig rules (--kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster) and the
 * RESTMapper (pods, po, deploy, deployments.apps, CRD kinds…). Prints a short table, the names,
 * or the JSON of each object (one per line).
 */
#include "cli.h"

#include "kcache/client.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct get_args {
    const char *kubeconfig, *context, *ns, *selector, *field_selector, *output;
    bool all_ns;
    int64_t limit;
} get_args;

typedef struct get_out {
    const char *output;
    bool show_ns;
    size_t n;
} get_out;

static void print_obj(get_out *o, const kc_obj *obj)
{
    if (!strcmp(o->output, "json")) {
        printf("%s\n", kc_obj_json(obj, NULL));
    } else if (!strcmp(o->output, "name")) {
        printf("%s\n", kc_obj_name(obj));
    } else {
        if (o->n == 0)
            printf(o->show_ns ? "%-20s %-40s %s\n" : "%.0s%-40s %s\n", "NAMESPACE", "NAME",
                   "RESOURCEVERSION");
        printf(o->show_ns ? "%-20s %-40s %s\n" : "%.0s%-40s %s\n", kc_obj_namespace(obj),
               kc_obj_name(obj), kc_obj_resource_version(obj));
    }
    o->n++;
}

static int on_item(void *ud, kc_obj *obj)
{
    print_obj(ud, obj);
    kc_obj_unref(obj);
    return 0;
}

static void get_usage(FILE *f)
{
    fprintf(f, "Usage: kcache get RESOURCE [NAME] [options]\n"
               "  -n, --namespace NS      namespace (default: the context's)\n"
               "  -A, --all-namespaces    list across all namespaces\n"
               "  -l, --selector SEL      label selector\n"
               "      --field-selector S  field selector\n"
               "  -o, --output FMT        table (default) | name | json\n"
               "      --limit N           page size while listing (default 500)\n"
               "      --kubeconfig PATH   kubeconfig file (default: $KUBECONFIG, ~/.kube/config)\n"
               "      --context NAME      kubeconfig context\n");
}

int kc__cli_connect(const char *kubeconfig, const char *context, kc_client **ret);
int kc__cli_connect(const char *kubeconfig, const char *context, kc_client **ret)
{
    kc_config_opts co = {.kubeconfig = kubeconfig, .context = context};
    kc_config *cfg = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_config_load(&co, &cfg, &err);
    if (!rc) {
        rc = kc_client_new(cfg, NULL, ret, &err);
        kc_config_free(cfg);
    }
    if (rc)
        fprintf(stderr, "kcache: %s\n", err.message ? err.message : kc_strerror(rc));
    kc_error_clear(&err);
    return rc;
}

static int cmd_get(int argc, char **argv)
{
    static const struct option longopts[] = {{"namespace", required_argument, NULL, 'n'},
                                             {"all-namespaces", no_argument, NULL, 'A'},
                                             {"selector", required_argument, NULL, 'l'},
                                             {"field-selector", required_argument, NULL, 'f'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"limit", required_argument, NULL, 'L'},
                                             {"kubeconfig", required_argument, NULL, 'k'},
                                             {"context", required_argument, NULL, 'c'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    get_args a = {.output = "table", .limit = 500};
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "n:Al:o:h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'n':
            a.ns = optarg;
            break;
        case 'A':
            a.all_ns = true;
            break;
        case 'l':
            a.selector = optarg;
            break;
        case 'f':
            a.field_selector = optarg;
            break;
        case 'o':
            a.output = optarg;
            break;
        case 'L':
            a.limit = atoll(optarg);
            break;
        case 'k':
            a.kubeconfig = optarg;
            break;
        case 'c':
            a.context = optarg;
            break;
        case 'h':
            get_usage(stdout);
            return 0;
        default:
            get_usage(stderr);
            return 2;
        }
    }
    if (optind >= argc || argc - optind > 2 ||
        (strcmp(a.output, "table") && strcmp(a.output, "name") && strcmp(a.output, "json"))) {
        get_usage(stderr);
        return 2;
    }
    const char *resource = argv[optind];
    const char *name = argc - optind == 2 ? argv[optind + 1] : NULL;
    kc_client *c = NULL;
    if (kc__cli_connect(a.kubeconfig, a.context, &c))
        return 1;
    kc_error err = KC_ERROR_INIT;
    kc_resource_info ri = {0};
    int rc = kc_client_resolve(c, resource, &ri, &err);
    if (rc)
        goto out;
    kc_gvr gvr = {ri.group, ri.version, ri.resource};
    const char *ns = NULL;
    if (ri.namespaced && !(a.all_ns && !name))
        ns = a.ns ? a.ns : kc_client_namespace(c);
    get_out o = {.output = a.output, .show_ns = ri.namespaced && a.all_ns && !name};
    if (name) {
        kc_obj *obj = NULL;
        rc = kc_client_get(c, &gvr, ns, name, &obj, &err);
        if (!rc)
            print_obj(&o, obj);
        kc_obj_unref(obj);
    } else {
        kc_list_opts lo = {
            .label_selector = a.selector, .field_selector = a.field_selector, .limit = a.limit};
        rc = kc_client_list_all(c, &gvr, ns, &lo, NULL, on_item, &o, &err);
        if (!rc && o.n == 0 && !strcmp(a.output, "table"))
            fprintf(stderr, "No resources found%s%s.\n", ns ? " in namespace " : "", ns ? ns : "");
    }
out:
    if (rc)
        fprintf(stderr, "kcache get: %s\n", err.message ? err.message : kc_strerror(rc));
    kc_error_clear(&err);
    kc_resource_info_clear(&ri);
    kc_client_free(c);
    return rc ? 1 : 0;
}

KC_CLI_COMMAND(get, "get objects (kubeconfig rules, kubectl resource names)", cmd_get)
