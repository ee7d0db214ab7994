/*
 * cmd_watch.c — `kcache watch RESOURCE`: stream watch events (TYPE, namespace/name,
 * resourceVersion, or JSON) until interrupted. SIGINT/SIGTERM are blocked in every thread and
 * taken by a small thread with sigwait(), which fires the watch's kc_cancel (a signal handler
 * could not safely do that). Without --rv the stream starts with the current state (ADDED).
 */
#include "cli.h"

#include "kcache/client.h"

#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kc__cli_connect(const char *kubeconfig, const char *context, kc_client **ret);

typedef struct watch_out {
    bool json;
    unsigned long n;
} watch_out;

static int on_event(void *ud, const kc_watch_event *ev)
{
    watch_out *o = ud;
    o->n++;
    if (ev->type == KC_WATCH_ERROR) {
        printf("ERROR %s\n", ev->error && ev->error->message ? ev->error->message : "");
    } else if (o->json) {
        printf("{\"type\":\"%s\",\"object\":%s}\n", kc_watch_type_name(ev->type),
               kc_obj_json(ev->obj, NULL));
    } else {
        const char *ns = kc_obj_namespace(ev->obj);
        printf("%-9s %s%s%s %s\n", kc_watch_type_name(ev->type), ns, *ns ? "/" : "",
               kc_obj_name(ev->obj), kc_obj_resource_version(ev->obj));
    }
    fflush(stdout);
    return 0;
}

typedef struct sigctx {
    sigset_t set;
    kc_cancel *cancel;
} sigctx;

static void *sig_thread(void *p)
{
    sigctx *s = p;
    int sig = 0;
    sigwait(&s->set, &sig);
    if (sig != SIGUSR1) /* SIGUSR1: the watch ended by itself, just exit */
        kc_cancel_fire(s->cancel);
    return NULL;
}

static void watch_usage(FILE *f)
{
    fprintf(f, "Usage: kcache watch RESOURCE [options]\n"
               "  -n, --namespace NS      namespace (default: the context's)\n"
               "  -A, --all-namespaces    all namespaces\n"
               "  -l, --selector SEL      label selector\n"
               "      --field-selector S  field selector\n"
               "      --rv RV             start after this resourceVersion (default: current "
               "state first)\n"
               "      --bookmarks         ask for BOOKMARK events\n"
               "  -o, --output FMT        line (default) | json\n"
               "      --kubeconfig PATH   kubeconfig file\n"
               "      --context NAME      kubeconfig context\n");
}

static int cmd_watch(int argc, char **argv)
{
    static const struct option longopts[] = {{"namespace", required_argument, NULL, 'n'},
                                             {"all-namespaces", no_argument, NULL, 'A'},
                                             {"selector", required_argument, NULL, 'l'},
                                             {"field-selector", required_argument, NULL, 'f'},
                                             {"rv", required_argument, NULL, 'r'},
                                             {"bookmarks", no_argument, NULL, 'b'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"kubeconfig", required_argument, NULL, 'k'},
                                             {"context", required_argument, NULL, 'c'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *kubeconfig = NULL, *context = NULL, *nsopt = NULL, *output = "line";
    bool all_ns = false;
    kc_watch_opts wo = {0};
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "n:Al:o:h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'n':
            nsopt = optarg;
            break;
        case 'A':
            all_ns = true;
            break;
        case 'l':
            wo.label_selector = optarg;
            break;
        case 'f':
            wo.field_selector = optarg;
            break;
        case 'r':
            wo.resource_version = optarg;
            break;
        case 'b':
            wo.allow_bookmarks = true;
            break;
        case 'o':
            output = optarg;
            break;
        case 'k':
            kubeconfig = optarg;
            break;
        case 'c':
            context = optarg;
            break;
        case 'h':
            watch_usage(stdout);
            return 0;
        default:
            watch_usage(stderr);
            return 2;
        }
    }
    if (optind != argc - 1 || (strcmp(output, "line") && strcmp(output, "json"))) {
        watch_usage(stderr);
        return 2;
    }
    kc_client *c = NULL;
    if (kc__cli_connect(kubeconfig, context, &c))
        return 1;
    kc_error err = KC_ERROR_INIT;
    kc_resource_info ri = {0};
    sigctx s = {.cancel = kc_cancel_new()};
    pthread_t th;
    bool have_thread = false;
    int rc = s.cancel ? kc_client_resolve(c, argv[optind], &ri, &err) : KC_ENOMEM;
    if (rc)
        goto out;
    sigemptyset(&s.set);
    sigaddset(&s.set, SIGINT);
    sigaddset(&s.set, SIGTERM);
    sigaddset(&s.set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &s.set, NULL);
    have_thread = pthread_create(&th, NULL, sig_thread, &s) == 0;
    kc_gvr gvr = {ri.group, ri.version, ri.resource};
    const char *ns = ri.namespaced && !all_ns ? (nsopt ? nsopt : kc_client_namespace(c)) : NULL;
    watch_out o = {.json = !strcmp(output, "json")};
    rc = kc_client_watch(c, &gvr, ns, &wo, on_event, &o, s.cancel, &err);
    if (rc == KC_ECANCELED)
        rc = 0;
out:
    if (have_thread) {
        if (!kc_cancel_fired(s.cancel))
            pthread_kill(th, SIGUSR1);
        pthread_join(th, NULL);
    }
    if (rc)
        fprintf(stderr, "kcache watch: %s\n", err.message ? err.message : kc_strerror(rc));
    kc_error_clear(&err);
    kc_resource_info_clear(&ri);
    kc_cancel_free(s.cancel);
    kc_client_free(c);
    return rc ? 1 : 0;
}

KC_CLI_COMMAND(watch, "stream watch events of a resource until interrupted", cmd_watch)
