/*
 * bench/node_agents_get.h — the GET-per-pod node agent of bench_node_agents, as rsyslog's
 * mmkubernetes and Fluent Bit's kubernetes filter behave by default (header-only, static): a
 * cache per agent that is never refreshed (mmk cacheexpireinterval=-1, flb kube_meta_cache_ttl=0);
 * one Pod GET per pod on first sight and one Namespace GET per namespace on first sight, with the
 * agent's own client (no client-side rate limit, as both use libcurl directly).
 *
 *   void gq_init(gq *q, kc_client **clients, int nodes, int namespaces, int delay_ms)
 *   void gq_push(gq *q, int node, const char *ns, int ns_index, const char *name)
 *       A pod started on `node`: its agent GETs it `delay_ms` later (the kubelet's two steps to
 *       Running are 2 × 50 ms; a shipper meets a pod when its first log file appears), and its
 *       namespace if this agent has not seen it yet. Pushes come in time order (one driver), so
 *       the queue is a FIFO of due times.
 *   void gq_agent_saw_ns(gq *q, int node, int ns_index) → true the first time (then GET it)
 *   void gq_drain(gq *q)   waits until every pushed GET is done
 *   void gq_stop(gq *q)    joins the workers (GQ_WORKERS threads share the queue)
 *   long gq_failed(gq *q)  GETs that failed
 */
#ifndef KC_BENCH_NODE_AGENTS_GET_H
#define KC_BENCH_NODE_AGENTS_GET_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcache/client.h"

#define GQ_WORKERS 4
#define GQ_CAP     65536

typedef struct gq_item {
    double due;
    int node, ns_index;
    char ns[32], name[48];
} gq_item;

typedef struct gq {
    pthread_mutex_t mu;
    pthread_cond_t cv, idle;
    gq_item *items; /* ring of GQ_CAP */
    size_t head, len, busy;
    bool stop;
    long failed;
    kc_client **clients; /* one per agent (node), borrowed */
    uint8_t *seen_ns;    /* [node * namespaces + ns]: the agent's namespace cache */
    int namespaces, delay_ms;
    pthread_t th[GQ_WORKERS];
} gq;

static double gq_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const kc_gvr gq_pods = {"", "v1", "pods"};
static const kc_gvr gq_nss = {"", "v1", "namespaces"};

static bool gq_agent_saw_ns(gq *q, int node, int ns_index)
{
    pthread_mutex_lock(&q->mu);
    uint8_t *b = &q->seen_ns[(size_t)node * (size_t)q->namespaces + (size_t)ns_index];
    bool first = !*b;
    *b = 1;
    pthread_mutex_unlock(&q->mu);
    return first;
}

/* One agent meeting one pod: its namespace on first sight, then the pod. */
static int gq_agent_get(gq *q, int node, const char *ns, int ns_index, const char *name)
{
    kc_obj *o = NULL;
    int rc = 0;
    if (gq_agent_saw_ns(q, node, ns_index)) {
        rc = kc_client_get(q->clients[node], &gq_nss, NULL, ns, &o, NULL);
        kc_obj_unref(o);
        o = NULL;
    }
    int rc2 = kc_client_get(q->clients[node], &gq_pods, ns, name, &o, NULL);
    kc_obj_unref(o);
    return rc ? rc : rc2;
}

static void *gq_worker(void *ud)
{
    gq *q = ud;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->stop && q->len == 0)
            pthread_cond_wait(&q->cv, &q->mu);
        if (q->stop && q->len == 0)
            break;
        gq_item it = q->items[q->head];
        q->head = (q->head + 1) % GQ_CAP;
        q->len--;
        q->busy++;
        pthread_mutex_unlock(&q->mu);
        double wait = it.due - gq_now();
        if (wait > 0) {
            struct timespec ts = {(time_t)wait, (long)((wait - (time_t)wait) * 1e9)};
            nanosleep(&ts, NULL);
        }
        int rc = gq_agent_get(q, it.node, it.ns, it.ns_index, it.name);
        pthread_mutex_lock(&q->mu);
        q->failed += rc != 0;
        q->busy--;
        if (q->len == 0 && q->busy == 0)
            pthread_cond_broadcast(&q->idle);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

static void gq_init(gq *q, kc_client **clients, int nodes, int namespaces, int delay_ms)
{
    memset(q, 0, sizeof *q);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    pthread_cond_init(&q->idle, NULL);
    q->items = calloc(GQ_CAP, sizeof *q->items);
    q->seen_ns = calloc((size_t)nodes * (size_t)namespaces, 1);
    q->clients = clients;
    q->namespaces = namespaces;
    q->delay_ms = delay_ms;
    for (int i = 0; i < GQ_WORKERS; i++)
        pthread_create(&q->th[i], NULL, gq_worker, q);
}

static void gq_push(gq *q, int node, const char *ns, int ns_index, const char *name)
{
    pthread_mutex_lock(&q->mu);
    if (q->len < GQ_CAP) {
        gq_item *it = &q->items[(q->head + q->len) % GQ_CAP];
        it->due = gq_now() + q->delay_ms / 1e3;
        it->node = node;
        it->ns_index = ns_index;
        snprintf(it->ns, sizeof it->ns, "%s", ns);
        snprintf(it->name, sizeof it->name, "%s", name);
        q->len++;
        pthread_cond_signal(&q->cv);
    } else {
        q->failed++;
    }
    pthread_mutex_unlock(&q->mu);
}

static void gq_drain(gq *q)
{
    pthread_mutex_lock(&q->mu);
    while (q->len || q->busy)
        pthread_cond_wait(&q->idle, &q->mu);
    pthread_mutex_unlock(&q->mu);
}

static long gq_failed(gq *q)
{
    pthread_mutex_lock(&q->mu);
    long f = q->failed;
    pthread_mutex_unlock(&q->mu);
    return f;
}

static void gq_stop(gq *q)
{
    pthread_mutex_lock(&q->mu);
    q->stop = true;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
    for (int i = 0; i < GQ_WORKERS; i++)
        pthread_join(q->th[i], NULL);
    free(q->items);
    free(q->seen_ns);
}

#endif
