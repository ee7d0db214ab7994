/*
 * bench/node_agents_serve.h — `kcache serve` as a child process with its request log counted, for
 * bench_node_agents (header-only, static: each bench .c file is its own program).
 *
 *   int serve_start(serve *s, const char *kcache, int nodes)
 *       Runs `KCACHE serve --listen 127.0.0.1:0 --simulate-nodes NODES` with stdout and stderr
 *       on pipes, reads the URL from its "listening on" line and starts a thread that reads the
 *       request log (stderr, "kcache serve: METHOD PATH STATUS", written when the response
 *       headers are queued — a watch counts when it starts) and counts each request in one
 *       class (enum rq). 0 on success, -1 (a message on stderr) otherwise.
 *   int serve_mark(serve *s, kc_client *c, rq_counts *ret)
 *       A synchronisation point: sends GET /admin/rv and waits (≤ 10 s) until the reader has
 *       read that request's own log line; *ret gets the counts of every request logged before
 *       it. Every request the bench sent before the call is then counted. 0, or -1 on a timeout.
 *   double serve_cpu(serve *s)   the child's utime + stime so far, seconds (/proc/PID/stat)
 *   void serve_stop(serve *s)    SIGTERM, reap, join the reader.
 */
#ifndef KC_BENCH_NODE_AGENTS_SERVE_H
#define KC_BENCH_NODE_AGENTS_SERVE_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kcache/client.h"
#include "proc_usage.h"

/* Request classes, from the method and the path (the log has no query: a collection GET is a
 * LIST or a WATCH; kc_informer's streaming list is one WATCH per start). */
enum rq {
    RQ_POD_GET,  /* GET /api/v1/namespaces/NS/pods/NAME */
    RQ_NS_GET,   /* GET /api/v1/namespaces/NS */
    RQ_POD_COLL, /* GET /api/v1/pods, /api/v1/namespaces/NS/pods: LIST or WATCH */
    RQ_NS_COLL,  /* GET /api/v1/namespaces: LIST or WATCH */
    RQ_CREATE,   /* POST */
    RQ_DELETE,   /* DELETE */
    RQ_OTHER,    /* anything else (discovery, other writes) */
    RQ_N
};
static const char *const rq_name[RQ_N] = {"pod_get", "ns_get", "pod_list_watch", "ns_list_watch",
                                          "create",  "delete", "other"};

typedef struct rq_counts {
    long n[RQ_N];
} rq_counts;

typedef struct serve {
    pid_t pid;
    FILE *err;
    pthread_t reader;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    rq_counts now, at_mark;
    long marks; /* GET /admin/rv lines read */
    char url[128];
} serve;

static enum rq rq_classify(const char *method, const char *path)
{
    if (!strcmp(method, "POST"))
        return RQ_CREATE;
    if (!strcmp(method, "DELETE"))
        return RQ_DELETE;
    if (strcmp(method, "GET") != 0)
        return RQ_OTHER;
    if (!strcmp(path, "/api/v1/pods"))
        return RQ_POD_COLL;
    if (!strcmp(path, "/api/v1/namespaces"))
        return RQ_NS_COLL;
    if (strncmp(path, "/api/v1/namespaces/", 19) != 0)
        return RQ_OTHER;
    const char *p = strchr(path + 19, '/');
    if (!p)
        return RQ_NS_GET;
    if (!strcmp(p, "/pods"))
        return RQ_POD_COLL;
    if (!strncmp(p, "/pods/", 6) && !strchr(p + 6, '/'))
        return RQ_POD_GET;
    return RQ_OTHER;
}

static void *serve_reader(void *ud)
{
    serve *s = ud;
    char line[2200], method[16], path[2048];
    unsigned status;
    while (fgets(line, sizeof line, s->err)) {
        if (sscanf(line, "kcache serve: %15s %2047s %u", method, path, &status) != 3)
            continue;
        pthread_mutex_lock(&s->mu);
        if (!strcmp(method, "GET") && !strcmp(path, "/admin/rv")) {
            s->at_mark = s->now;
            s->marks++;
            pthread_cond_broadcast(&s->cv);
        } else {
            s->now.n[rq_classify(method, path)]++;
        }
        pthread_mutex_unlock(&s->mu);
    }
    return NULL;
}

static int serve_start(serve *s, const char *kcache, int nodes)
{
    memset(s, 0, sizeof *s);
    int out[2], err[2];
    if (pipe(out) || pipe(err))
        return perror("pipe"), -1;
    char n[16];
    snprintf(n, sizeof n, "%d", nodes);
    s->pid = fork();
    if (s->pid < 0)
        return perror("fork"), -1;
    if (s->pid == 0) {
        dup2(out[1], 1);
        dup2(err[1], 2);
        close(out[0]), close(out[1]), close(err[0]), close(err[1]);
        execl(kcache, kcache, "serve", "--listen", "127.0.0.1:0", "--simulate-nodes", n,
              (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    FILE *o = fdopen(out[0], "r");
    s->err = fdopen(err[0], "r");
    char line[512];
    while (o && fgets(line, sizeof line, o))
        if (sscanf(line, "kcache serve: listening on %127s", s->url) == 1)
            break;
    if (o)
        fclose(o); /* nothing more is printed on stdout */
    if (!s->url[0]) {
        fprintf(stderr, "bench_node_agents: %s serve did not start\n", kcache);
        return -1;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    pthread_create(&s->reader, NULL, serve_reader, s);
    return 0;
}

static int serve_mark(serve *s, kc_client *c, rq_counts *ret)
{
    pthread_mutex_lock(&s->mu);
    long want = s->marks + 1;
    pthread_mutex_unlock(&s->mu);
    int status = 0;
    if (kc_client_raw(c, "GET", "/admin/rv", NULL, NULL, 0, &status, NULL, NULL, NULL) ||
        status != 200)
        return -1;
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 10;
    int rc = 0;
    pthread_mutex_lock(&s->mu);
    while (s->marks < want && rc == 0)
        rc = pthread_cond_timedwait(&s->cv, &s->mu, &dl);
    long got = s->marks;
    if (got >= want && ret)
        *ret = s->at_mark;
    pthread_mutex_unlock(&s->mu);
    return got >= want ? 0 : -1;
}

static double serve_cpu(serve *s)
{
    return proc_cpu(s->pid);
}

static void serve_stop(serve *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        waitpid(s->pid, NULL, 0);
        pthread_join(s->reader, NULL);
        fclose(s->err);
    }
    s->pid = 0;
}

#endif
