/*
 * bench/server_child.h — the embedded API server in a forked child, for bench_informer
 * (header-only, static: each bench .c file is its own program). Running the server in another
 * process keeps the parent's RSS and CPU time the client's alone.
 *
 *   int child_start(child *c, int n, int updates)
 *       Forks a child that starts kc_server on 127.0.0.1:0 seeded with "pods=N", writes a
 *       kubeconfig for it, then creates `updates` more Pods through a client (copies of a seeded
 *       Pod, managedFields included; each one ADDED event in the history, which holds
 *       updates + 1000 events). Fills c->url, c->kubeconfig and the RVs before and after the
 *       creates. 0 on success, -1 (with "server child did not start" on stderr) when the child
 *       did not report.
 *       With child_list_delay_ms set first, every collection LIST is answered after that delay.
 *   void child_stop(child *c)
 *       Tells the child to stop, reaps it and removes the kubeconfig.
 *   kc_client *child_client(child *c, kc_config **ret_cfg, const char *who)
 *       A client of the child's server without rate limit (qps -1); *ret_cfg is its config (both
 *       new: kc_client_free, kc_config_unref). NULL (with "<who>: client failed" on stderr, the
 *       child stopped) on failure.
 */
#ifndef KC_BENCH_SERVER_CHILD_H
#define KC_BENCH_SERVER_CHILD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/internal.h"
#include "kcache/client.h"
#include "kcache/server.h"

typedef struct child {
    pid_t pid;
    int stop_fd;
    char url[128], kubeconfig[256], rv_before[32], rv_after[32];
} child;

static int keep_first_cb(void *ud, kc_obj *o)
{
    kc_obj **keep = ud;
    if (!*keep)
        *keep = o;
    else
        kc_obj_unref(o);
    return 0;
}

/* Remove `"key":"value",` (first occurrence) from the NUL-terminated json in place. */
static void drop_field(char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\":\"", key);
    char *p = strstr(json, pat);
    if (!p)
        return;
    char *q = strchr(p + strlen(pat), '"');
    if (!q)
        return;
    q++;
    if (*q == ',')
        q++;
    memmove(p, q, strlen(q) + 1);
}

/* In the child: M Pod creates (genpod-shaped copies of a seeded Pod, managedFields included)
 * through a client to our own server; each is one ADDED event in the history. */
static void child_creates(const char *url, int m)
{
    const kc_gvr pods = {"", "v1", "pods"};
    kc_config *cfg = NULL;
    kc_client *cli = NULL;
    kc_client_opts co = {.qps = -1};
    if (kc_config_from_url(url, NULL, NULL, &cfg, NULL) || kc_client_new(cfg, &co, &cli, NULL))
        _exit(3);
    kc_decode_opts keep = {.flags = KC_DECODE_KEEP_MANAGED_FIELDS};
    kc_list_opts lo = {.limit = 1, .decode = &keep, .decode_size = sizeof keep};
    kc_obj *tpl = NULL;
    kc_client_list(cli, &pods, NULL, &lo, NULL, keep_first_cb, &tpl, NULL);
    if (!tpl)
        _exit(4);
    size_t tl;
    const char *tj = kc_obj_json(tpl, &tl);
    char *base = malloc(tl + 1);
    memcpy(base, tj, tl + 1);
    drop_field(base, "resourceVersion");
    drop_field(base, "uid");
    drop_field(base, "generateName");
    char orig[300];
    snprintf(orig, sizeof(orig), "\"name\":\"%s\"", kc_obj_name(tpl));
    char *at = strstr(base, orig);
    char ns[128];
    snprintf(ns, sizeof(ns), "%s", kc_obj_namespace(tpl));
    kc__buf body = KC__BUF_INIT(0);
    for (int i = 0; at && i < m; i++) {
        kc__buf_reset(&body);
        kc__buf_append(&body, base, (size_t)(at - base));
        kc__buf_printf(&body, "\"name\":\"bench-%d\"", i);
        kc__buf_append_str(&body, at + strlen(orig));
        kc_client_create(cli, &pods, ns, body.data, body.len, NULL, NULL, NULL);
    }
    kc__buf_free(&body);
    free(base);
    kc_obj_unref(tpl);
    kc_client_free(cli);
    kc_config_unref(cfg);
}

/* Set before child_start: the server answers each collection LIST after this many ms
 * (kc_server_faults.list_delay_min_ms/max_ms), as an API server reading its storage would. */
static unsigned child_list_delay_ms;

static int child_start(child *c, int n, int updates)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        return -1;
    snprintf(c->kubeconfig, sizeof(c->kubeconfig), "/tmp/kcache-bench-informer-%d.kubeconfig",
             (int)getpid());
    c->pid = fork();
    if (c->pid == 0) {
        close(up[0]);
        close(down[1]);
        char spec[64];
        snprintf(spec, sizeof(spec), "pods=%d", n);
        kc_server_opts o = {.listen = "127.0.0.1:0",
                            .seed_spec = spec,
                            .quiet = true,
                            .history = (size_t)updates + 1000,
                            .watch_queue = 1000000};
        kc_server_faults faults = {.list_delay_min_ms = child_list_delay_ms,
                                   .list_delay_max_ms = child_list_delay_ms};
        if (child_list_delay_ms) {
            o.faults = &faults;
            o.faults_size = sizeof faults;
        }
        kc_server *srv = NULL;
        kc_error e = KC_ERROR_INIT;
        if (kc_server_new(&o, &srv, &e) || kc_server_start(srv, &e)) {
            fprintf(stderr, "server: %s\n", e.message ? e.message : "failed");
            _exit(2);
        }
        kc_server_write_kubeconfig(srv, c->kubeconfig, NULL);
        uint64_t before = kc_server_current_rv(srv);
        if (updates > 0)
            child_creates(kc_server_url(srv), updates);
        uint64_t after = kc_server_current_rv(srv);
        dprintf(up[1], "%s %llu %llu\n", kc_server_url(srv), (unsigned long long)before,
                (unsigned long long)after);
        close(up[1]);
        char x;
        while (read(down[0], &x, 1) > 0)
            ;
        kc_server_free(srv);
        _exit(0);
    }
    close(up[1]);
    close(down[0]);
    c->stop_fd = down[1];
    char buf[256] = {0};
    size_t got = 0;
    ssize_t r;
    while (got < sizeof(buf) - 1 && (r = read(up[0], buf + got, sizeof(buf) - 1 - got)) > 0)
        got += (size_t)r;
    close(up[0]);
    if (sscanf(buf, "%127s %31s %31s", c->url, c->rv_before, c->rv_after) == 3)
        return 0;
    fprintf(stderr, "server child did not start\n");
    return -1;
}

static void child_stop(child *c)
{
    close(c->stop_fd);
    waitpid(c->pid, NULL, 0);
    unlink(c->kubeconfig);
}

static inline kc_client *child_client(child *c, kc_config **ret_cfg, const char *who)
{
    kc_client *client = NULL;
    kc_client_opts co = {.qps = -1};
    *ret_cfg = NULL;
    if (kc_config_from_url(c->url, NULL, NULL, ret_cfg, NULL) ||
        kc_client_new(*ret_cfg, &co, &client, NULL)) {
        fprintf(stderr, "%s: client failed\n", who);
        kc_config_unref(*ret_cfg);
        child_stop(c);
        return NULL;
    }
    return client;
}

#endif
