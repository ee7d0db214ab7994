/*
 * cmd_watch.c — `kcache watch TYPE [NAME]`: stream watch events (TYPE, namespace/name,
 * resourceVersion, or JSON) until interrupted (Ctrl-C: cli_watch.c). One object (NAME, or
 * TYPE/NAME) is watched as kubectl does, through the field selector metadata.name=NAME. Without
 * --rv the stream starts with the current state (ADDED).
 *
 * Only an interruption is a success (exit 0). Everything else that ends the stream is a failure
 * the user must hear about (exit 1, with why on stderr): an ERROR event (printed like any event,
 * as the Status under -o json — 410 Expired, a too-large resourceVersion…), the server closing
 * the stream (the last resourceVersion is given, to resume with --rv), a broken connection or a
 * failed request. Bad arguments exit 2.
 */
#include "cli.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct watch_out {
    bool json;
    unsigned long n;
    char last_rv[128]; /* of the last event with an object ("" before the first) */
    kc_error stop;     /* the ERROR event that ended the watch (code 0: none) */
} watch_out;

/* An ERROR event as the server sent it: {"type":"ERROR","object":<Status>}, rebuilt from the
 * decoded Status. NULL on out of memory. New malloc'd. */
static char *error_event_json(const kc_error *e)
{
    json_t *st = json_pack("{s:s, s:s, s:{}, s:s}", "kind", "Status", "apiVersion", "v1",
                           "metadata", "status", "Failure");
    json_t *d = json_object();
    if (!st || !d)
        goto fail;
    if (e->message)
        json_object_set_new(st, "message", json_string(e->message));
    if (e->reason)
        json_object_set_new(st, "reason", json_string(e->reason));
    const char *keys[] = {"name", "group", "kind", "uid"};
    const char *vals[] = {e->name, e->group, e->kind, e->uid};
    for (size_t i = 0; i < 4; i++)
        if (vals[i])
            json_object_set_new(d, keys[i], json_string(vals[i]));
    if (e->n_causes) {
        json_t *causes = json_array();
        for (size_t i = 0; causes && i < e->n_causes; i++) {
            json_t *c = json_object();
            if (e->causes[i].reason)
                json_object_set_new(c, "reason", json_string(e->causes[i].reason));
            if (e->causes[i].message)
                json_object_set_new(c, "message", json_string(e->causes[i].message));
            if (e->causes[i].field)
                json_object_set_new(c, "field", json_string(e->causes[i].field));
            json_array_append_new(causes, c);
        }
        json_object_set_new(d, "causes", causes);
    }
    if (e->retry_after_s >= 0)
        json_object_set_new(d, "retryAfterSeconds", json_integer(e->retry_after_s));
    json_object_set_new(st, "code", json_integer(e->http_status));
    if (json_object_size(d))
        json_object_set(st, "details", d);
    json_decref(d);
    char *s = NULL;
    json_t *ev = json_pack("{s:s, s:o}", "type", "ERROR", "object", st);
    if (ev)
        s = json_dumps(ev, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(ev);
    return s;
fail:
    json_decref(st);
    json_decref(d);
    return NULL;
}

static void copy_error(kc_error *dst, const kc_error *src)
{
    kc_error_clear(dst);
    dst->code = src->code ? src->code : KC_ESERVER;
    dst->http_status = src->http_status;
    dst->reason = src->reason ? strdup(src->reason) : NULL;
    dst->message = src->message ? strdup(src->message) : NULL;
}

static int on_event(void *ud, const kc_watch_event *ev)
{
    watch_out *o = ud;
    o->n++;
    if (ev->type == KC_WATCH_ERROR) {
        static const kc_error none = KC_ERROR_INIT;
        const kc_error *e = ev->error ? ev->error : &none;
        char *js = o->json ? error_event_json(e) : NULL;
        if (js)
            printf("%s\n", js);
        else
            printf("%-9s %d %s: %s\n", "ERROR", e->http_status, e->reason ? e->reason : "",
                   e->message ? e->message : "");
        free(js);
        fflush(stdout);
        copy_error(&o->stop, e);
        return KC_ESTOPPED; /* the server ends the stream after an ERROR: stop here */
    }
    snprintf(o->last_rv, sizeof o->last_rv, "%s", kc_obj_resource_version(ev->obj));
    if (o->json) {
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

/* Why the watch ended, on stderr. Returns the exit status. */
static int explain_end(int rc, const kc_error *err, const watch_out *o)
{
    if (rc == KC_ECANCELED || !o->stop.code)
        return kc__cli_watch_ended("watch", rc, err, o->n, o->last_rv);
    const char *hint = o->stop.http_status == 410
                           ? "; start again without --rv (the current state first) or from "
                             "a newer resourceVersion"
                       : o->stop.code == KC_ERV_TOO_LARGE ||
                               (o->stop.message && strstr(o->stop.message, "Too large"))
                           ? "; the server has not reached that resourceVersion"
                           : "";
    fprintf(stderr, "kcache watch: stopped by an ERROR event (%d %s): %s%s\n", o->stop.http_status,
            o->stop.reason ? o->stop.reason : "", o->stop.message ? o->stop.message : "", hint);
    return KC_CLI_EXIT_FAIL;
}

static void watch_usage(FILE *f)
{
    fprintf(f,
            "Usage: kcache watch TYPE [NAME] [options]\n"
            "       kcache watch TYPE/NAME [options]\n"
            "\n"
            "Stream the watch events of a resource (or of one object: NAME) until interrupted\n"
            "(Ctrl-C / SIGTERM: exit 0). An ERROR event (410 Expired, a too-large\n"
            "resourceVersion…), the server closing the stream or a broken connection end it\n"
            "with exit 1 and the reason on stderr (with the last resourceVersion, to resume with\n"
            "--rv). Bad arguments exit 2.\n"
            "\n"
            "  -n, --namespace NS      namespace (default: the context's)\n"
            "  -A, --all-namespaces    all namespaces (not with NAME)\n"
            "  -l, --selector SEL      label selector\n"
            "      --field-selector S  field selector\n"
            "      --rv RV             start after this resourceVersion (default: current "
            "state first)\n"
            "      --bookmarks         ask for BOOKMARK events\n"
            "  -o, --output FMT        line (default): TYPE namespace/name resourceVersion, or\n"
            "                          ERROR code reason: message; json: each event as the\n"
            "                          server sent it, {\"type\":…,\"object\":…} (an ERROR's\n"
            "                          object is its Status)\n" KC__CLI_SCOPE_HELP
            "  -h, --help              this help\n");
}

enum { OPT_RV = KC_CLI_OPT_OWN, OPT_BOOKMARKS };

static const char watch_optstring[] = ":n:Al:o:h";

typedef struct watch_args {
    kc__cli_scope s;
    bool json;
    kc_watch_opts wo;
    char *type;   /* TYPE (a copy: TYPE/NAME is split) */
    char *fields; /* the field selector with metadata.name=NAME added */
} watch_args;

/* TYPE [NAME] or TYPE/NAME: one object is watched through metadata.name=NAME (kubectl's way). */
static int parse_target(int argc, char **argv, watch_args *a)
{
    if (optind >= argc)
        return kc__cli_usage_error("watch", "TYPE: missing (e.g. kcache watch pods)");
    if (optind + 2 < argc || (optind + 1 < argc && strchr(argv[optind], '/')))
        return kc__cli_usage_error("watch",
                                   "%s: unexpected argument (one TYPE and at most one NAME are "
                                   "watched)",
                                   argv[argc - 1]);
    if (!(a->type = strdup(argv[optind])))
        return KC_CLI_EXIT_FAIL;
    char *slash = strchr(a->type, '/');
    const char *name = optind + 1 < argc ? argv[optind + 1] : NULL;
    if (slash) {
        *slash = '\0';
        name = slash + 1;
        if (!*name || !*a->type || strchr(name, '/'))
            return kc__cli_usage_error("watch",
                                       "%s: arguments in resource/name form must have a single "
                                       "resource and name",
                                       argv[optind]);
    }
    if (!name)
        return -1;
    if (a->s.all_ns)
        return kc__cli_usage_error("watch",
                                   "a resource cannot be retrieved by name across all namespaces");
    const char *fs = a->s.field_selector;
    size_t n = strlen(name) + (fs ? strlen(fs) : 0) + 32;
    if (!(a->fields = malloc(n)))
        return KC_CLI_EXIT_FAIL;
    snprintf(a->fields, n, "metadata.name=%s%s%s", name, fs ? "," : "", fs ? fs : "");
    a->wo.field_selector = a->fields;
    return -1;
}

/* -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, watch_args *a)
{
    static const struct option longopts[] = {KC__CLI_SCOPE_OPTIONS,
                                             {"rv", required_argument, NULL, OPT_RV},
                                             {"bookmarks", no_argument, NULL, OPT_BOOKMARKS},
                                             {"output", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int ch;
    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(argc, argv, watch_optstring, longopts, NULL)) != -1) {
        int sf = kc__cli_scope_flag("watch", &a->s, ch, optarg);
        if (sf < 0)
            return KC_CLI_EXIT_USAGE;
        if (sf)
            continue;
        switch (ch) {
        case OPT_RV:
            a->wo.resource_version = optarg;
            break;
        case OPT_BOOKMARKS:
            a->wo.allow_bookmarks = true;
            break;
        case 'o':
            if (strcmp(optarg, "line") && strcmp(optarg, "json"))
                return kc__cli_usage_error(
                    "watch", "-o: unknown output format \"%s\" (allowed: line, json)", optarg);
            a->json = !strcmp(optarg, "json");
            break;
        case 'h':
            watch_usage(stdout);
            return 0;
        default:
            return kc__cli_getopt_error("watch", ch, watch_optstring, argv);
        }
    }
    a->wo.label_selector = a->s.label_selector;
    a->wo.field_selector = a->s.field_selector;
    return parse_target(argc, argv, a);
}

static int cmd_watch(int argc, char **argv)
{
    watch_args a = {0};
    int status = parse_args(argc, argv, &a);
    kc_client *c = NULL;
    if (status < 0 && kc__cli_connect("watch", &a.s, &c))
        status = KC_CLI_EXIT_FAIL;
    if (status >= 0) {
        free(a.type);
        free(a.fields);
        return status;
    }
    kc_error err = KC_ERROR_INIT;
    kc_resource_info ri = {0};
    kc_cancel *cancel = NULL;
    kc__cli_sigstop *stop = NULL;
    watch_out o = {.json = a.json, .stop = KC_ERROR_INIT};
    int rc = kc_cancel_new(&cancel, NULL);
    if (rc == 0)
        rc = kc__cli_resolve("watch", c, a.type, &ri);
    if (rc) {
        status = KC_CLI_EXIT_FAIL;
    } else {
        stop = kc__cli_sigstop_start(cancel);
        kc_gvr gvr = {ri.group, ri.version, ri.resource};
        const char *ns =
            ri.namespaced && !a.s.all_ns ? (a.s.ns ? a.s.ns : kc_client_namespace(c)) : NULL;
        rc = kc_client_watch(c, &gvr, ns, &a.wo, on_event, &o, cancel, &err);
        status = explain_end(rc, &err, &o);
    }
    kc__cli_sigstop_end(stop);
    kc_error_clear(&err);
    kc_error_clear(&o.stop);
    kc_resource_info_clear(&ri);
    kc_cancel_free(cancel);
    kc_client_free(c);
    free(a.type);
    free(a.fields);
    return status;
}

KC_CLI_COMMAND(watch, "stream watch events of a resource (or one object) until interrupted",
               cmd_watch)
