/*
 * webhook_ready — a webhook-style server that reports ready only after its caches have synced.
 *
 * It keeps an informer on ConfigMaps and serves, on one port, an admission-style endpoint
 * (POST /validate: denies a ConfigMap whose name is already taken in its namespace, answered from
 * the cache) and, on another, the kcache health endpoint (/readyz, /healthz, /metrics). /readyz is
 * 503 until the informer's initial list has been applied, so a Kubernetes readiness probe never
 * routes admission traffic to a pod whose cache is still empty. The admission handler itself also
 * refuses (503) while the cache is not synced, instead of answering from an empty view.
 *
 *   webhook_ready --demo             start an embedded API server with 2,000 ConfigMaps in default,
 * show /readyz before and after the sync, ask one admission question webhook_ready URL [LISTEN] use
 * the API server at URL (no auth); serve the webhook on LISTEN (default 127.0.0.1:8443, plain HTTP)
 * until Ctrl-C
 */
#include <kcache/cache.h>
#include <kcache/health.h>
#include <kcache/server.h>

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const kc_gvr CONFIGMAPS = {"", "v1", "configmaps"};

typedef struct app {
    kc_cache *cache;
    kc_informer *cms;
} app;

typedef struct body {
    char buf[65536];
    size_t len;
} body;

/* The smallest useful admission answer: allowed unless ns/name is already in the cache. The
 * request body is scanned for "namespace" and "name" of the object (a real webhook would decode the
 * AdmissionReview with a JSON parser; kept minimal here). */
static void find_field(const char *json, const char *field, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\":\"", field);
    const char *p = strstr(json, pat);
    out[0] = '\0';
    if (!p)
        return;
    p += strlen(pat);
    size_t i = 0;
    while (p[i] && p[i] != '"' && i + 1 < cap) {
        out[i] = p[i];
        i++;
    }
    out[i] = '\0';
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *text)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    if (MHD_add_response_header(r, "Content-Type", "application/json") != MHD_YES) {
        MHD_destroy_response(r);
        return MHD_NO;
    }
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result on_validate(void *cls, struct MHD_Connection *c, const char *url,
                                   const char *method, const char *version, const char *upload,
                                   size_t *upload_size, void **con_cls)
{
    app *a = cls;
    body *b = *con_cls;
    if (!b) {
        *con_cls = b = calloc(1, sizeof(*b));
        return b ? MHD_YES : MHD_NO;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        if (b->len + n >= sizeof(b->buf))
            n = sizeof(b->buf) - 1 - b->len;
        memcpy(b->buf + b->len, upload, n);
        b->len += n;
        *upload_size = 0;
        return MHD_YES;
    }
    if (strcmp(url, "/validate") != 0 || strcmp(method, "POST") != 0)
        return reply(c, 404, "{\"error\":\"not found\"}");
    if (!kc_informer_has_synced(a->cms)) /* never answer from a partial view */
        return reply(c, 503, "{\"error\":\"cache not synced yet\"}");
    char ns[128], name[256], out[1024];
    find_field(b->buf, "namespace", ns, sizeof(ns));
    find_field(b->buf, "name", name, sizeof(name));
    kc_obj *existing = kc_store_get(kc_informer_store(a->cms), ns, name);
    snprintf(out, sizeof(out),
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":"
             "{\"allowed\":%s%s}}",
             existing ? "false" : "true",
             existing ? ",\"status\":{\"code\":409,\"message\":\"name already taken (from cache)\"}"
                      : "");
    kc_obj_unref(existing);
    return reply(c, 200, out);
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe)
{
    free(*con_cls);
    *con_cls = NULL;
}

static struct MHD_Daemon *serve_webhook(app *a, const char *listen, int *ret_port)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    char host[64] = "127.0.0.1";
    int port = 0;
    if (listen && sscanf(listen, "%63[^:]:%d", host, &port) < 1)
        return NULL;
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1 || port < 0 || port > 65535)
        return NULL;
    sa.sin_port = htons((uint16_t)port);
    struct MHD_Daemon *d =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL,
                         on_validate, a, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                         MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL, MHD_OPTION_END);
    const union MHD_DaemonInfo *info = d ? MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    if (!info) {
        if (d)
            MHD_stop_daemon(d);
        return NULL;
    }
    *ret_port = info->port;
    return d;
}

static int readyz_status(kc_health *h)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "curl -s -o /dev/null -w '%%{http_code}' %s/readyz",
             kc_health_url(h));
    FILE *p = popen(cmd, "r");
    int code = 0;
    if (p) {
        if (fscanf(p, "%d", &code) != 1)
            code = 0;
        if (pclose(p) != 0)
            code = 0; /* curl failed: no answer */
    }
    return code;
}

static volatile sig_atomic_t g_stop;
static void on_sigint(int sig)
{
    g_stop = 1;
}

/* Report a failed step with its reason; returns 1 (the exit status). */
static int failed(const char *what, int rc, const kc_error *e)
{
    fprintf(stderr, "%s: %s: %s\n", what, kc_errno_name(rc),
            e->message ? e->message : kc_strerror(rc));
    return 1;
}

/* Every call's result is checked; on failure the reason is printed and what exists is released
 * (every kcache destructor accepts NULL). */
int main(int argc, char **argv)
{
    bool demo = argc > 1 && strcmp(argv[1], "--demo") == 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s --demo | URL [LISTEN]\n", argv[0]);
        return 2;
    }
    kc_error e = KC_ERROR_INIT;
    kc_server *srv = NULL;
    kc_config *cfg = NULL;
    kc_client *client = NULL;
    kc_health *h = NULL;
    struct MHD_Daemon *wh = NULL;
    app a = {0};
    const char *url = argv[1];
    int status = 1, rc, wport = 0;
    if (demo) {
        kc_server_opts so = {
            .listen = "127.0.0.1:0", .seed_spec = "configmaps=2000:ns=default", .quiet = true};
        if ((rc = kc_server_new(&so, &srv, &e)) < 0 || (rc = kc_server_start(srv, &e)) < 0) {
            status = failed("server", rc, &e);
            goto out;
        }
        url = kc_server_url(srv);
    }
    if ((rc = kc_config_from_url(url, NULL, NULL, &cfg, &e)) < 0 ||
        (rc = kc_client_new(cfg, NULL, &client, &e)) < 0 ||
        (rc = kc_cache_new(client, NULL, &a.cache, &e)) < 0) {
        status = failed("client", rc, &e);
        goto out;
    }
    if ((rc = kc_health_new(a.cache, "127.0.0.1:0", NULL, &h, &e)) < 0) {
        status = failed("health endpoint", rc, &e);
        goto out;
    }
    wh = serve_webhook(&a, demo ? "127.0.0.1:0" : (argc > 2 ? argv[2] : "127.0.0.1:8443"), &wport);
    if (!wh) {
        fprintf(stderr, "cannot serve the webhook\n");
        goto out;
    }
    printf("health endpoint %s (readiness probe: /readyz), webhook on port %d\n", kc_health_url(h),
           wport);
    /* The informer starts now; until its initial list is applied /readyz answers 503. */
    if ((rc = kc_cache_get_informer(a.cache, &CONFIGMAPS, NULL, &a.cms, &e)) < 0) {
        status = failed("informer", rc, &e);
        goto out;
    }
    if (demo) {
        bool ready_now = kc_cache_ready(a.cache);
        printf("right after start: ready=%s, /readyz %d\n", ready_now ? "true" : "false",
               readyz_status(h));
    }
    if ((rc = kc_cache_wait_synced(a.cache, 60000, &e)) < 0) { /* e says which and why */
        status = failed("waiting for the caches", rc, &e);
        goto out;
    }
    printf("caches synced: %zu ConfigMaps; /readyz now %d\n",
           kc_store_len(kc_informer_store(a.cms)), demo ? readyz_status(h) : 200);
    if (demo) {
        char cmd[512];
        snprintf(cmd, sizeof(cmd),
                 "curl -s -X POST -d '{\"request\":{\"object\":{\"metadata\":{\"namespace\":"
                 "\"default\",\"name\":\"cm-00000\"}}}}' http://127.0.0.1:%d/validate; echo",
                 wport);
        printf("admission for an existing name: ");
        fflush(stdout);
        if (system(cmd) != 0)
            printf("(curl failed)\n");
    } else {
        if (signal(SIGINT, on_sigint) == SIG_ERR || signal(SIGTERM, on_sigint) == SIG_ERR) {
            perror("signal");
            goto out;
        }
        while (!g_stop)
            pause();
    }
    status = 0;
out:
    kc_error_clear(&e);
    if (wh)
        MHD_stop_daemon(wh);
    kc_health_free(h);
    kc_cache_free(a.cache);
    kc_client_free(client);
    kc_config_unref(cfg);
    kc_server_free(srv);
    return status;
}
