/*
 * bench_sim.c — the simulated cluster of `kcache serve --simulate-nodes` (docs/server.md,
 * "Simulated nodes and workload controllers"): how long a 1,000-replica Deployment takes to
 * become Available on 100 simulated nodes, and the CPU the server spends on it.
 *
 * Usage: bench_sim [REPLICAS] [NODES] [RUNS]   (defaults 1000 100 3)
 *
 * Each run starts a fresh in-process server (kc_server_opts.simulate_nodes = NODES, kubelet
 * delays at their defaults: 50 ms per step), waits until its last node exists, then POSTs one
 * Deployment (nginx, REPLICAS replicas) and GETs it every 20 ms until status.availableReplicas
 * is REPLICAS and condition Available is True. Time = POST to that GET; CPU = getrusage of the
 * whole process (user + system) over the same window — the server's threads plus this
 * client's GETs (a few hundred small requests, a negligible share); and the time the process's
 * threads spent runnable but waiting for a CPU (schedstat: the machine's load). Median of RUNS.
 * Prints `BENCH <metric> <value> <unit>` lines.
 */
#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/internal.h"
#include "kcache/server.h"
#include "proc_usage.h"

typedef struct body {
    char *p;
    size_t n;
} body;

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    body *b = ud;
    char *q = realloc(b->p, b->n + sz * n + 1);
    if (!q)
        return 0;
    memcpy(q + b->n, p, sz * n);
    b->p = q;
    b->n += sz * n;
    b->p[b->n] = 0;
    return sz * n;
}

/* One request; the parsed reply (NULL on failure), *status the HTTP status. */
static json_t *req(CURL *c, const char *url, const char *method, const char *data, long *status)
{
    body b = {0};
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, data);
    if (!data)
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    *status = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    curl_slist_free_all(h);
    json_t *j = b.p ? json_loads(b.p, 0, NULL) : NULL;
    free(b.p);
    return j;
}

static bool available(const json_t *d, long replicas)
{
    json_t *st = json_object_get(d, "status");
    if (json_integer_value(json_object_get(st, "availableReplicas")) != replicas)
        return false;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(st, "conditions"), i, c)
    {
        if (!strcmp(json_string_value(json_object_get(c, "type")) ?: "", "Available") &&
            !strcmp(json_string_value(json_object_get(c, "status")) ?: "", "True"))
            return true;
    }
    return false;
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* One run: seconds to Available and CPU seconds into *cpu; < 0 on failure. */
static double run(long replicas, unsigned nodes, double *cpu, double *wait)
{
    kc_server_opts o;
    memset(&o, 0, sizeof(o));
    o.listen = "127.0.0.1:0";
    o.quiet = true;
    o.simulate_nodes = nodes;
    kc_server *srv = NULL;
    kc_error err = KC_ERROR_INIT;
    if (kc_server_new(&o, &srv, &err) != 0 || kc_server_start(srv, &err) != 0) {
        fprintf(stderr, "server: %s\n", err.message);
        kc_error_clear(&err);
        kc_server_free(srv);
        return -1;
    }
    CURL *c = curl_easy_init();
    char url[256], last[256];
    long st = 0;
    snprintf(last, sizeof(last), "%s/api/v1/nodes/kcache-node-%u", kc_server_url(srv), nodes - 1);
    for (int i = 0; i < 1000 && st != 200; i++) {
        json_decref(req(c, last, "GET", NULL, &st));
        if (st != 200)
            pause_ms(5);
    }
    char dep[1024];
    snprintf(dep, sizeof(dep),
             "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"big\"},"
             "\"spec\":{\"replicas\":%ld,\"selector\":{\"matchLabels\":{\"app\":\"big\"}},"
             "\"template\":{\"metadata\":{\"labels\":{\"app\":\"big\"}},\"spec\":{\"containers\":"
             "[{\"name\":\"nginx\",\"image\":\"nginx\"}]}}}}",
             replicas);
    snprintf(url, sizeof(url), "%s/apis/apps/v1/namespaces/default/deployments",
             kc_server_url(srv));
    double cpu0 = self_cpu(), wait0 = run_delay();
    uint64_t t0 = kc__now_ns();
    json_decref(req(c, url, "POST", dep, &st));
    double secs = -1;
    strcat(url, "/big");
    for (int i = 0; st == 201 && i < 6000; i++) {
        json_t *d = req(c, url, "GET", NULL, &st);
        bool ok = d && available(d, replicas);
        json_decref(d);
        if (ok) {
            secs = (double)(kc__now_ns() - t0) / 1e9;
            break;
        }
        st = 201;
        pause_ms(20);
    }
    *cpu = self_cpu() - cpu0;
    *wait = run_delay() - wait0;
    curl_easy_cleanup(c);
    kc_server_free(srv);
    return secs;
}

int main(int argc, char **argv)
{
    long replicas = argc > 1 ? atol(argv[1]) : 1000;
    unsigned nodes = argc > 2 ? (unsigned)atoi(argv[2]) : 100;
    int runs = argc > 3 ? atoi(argv[3]) : 3;
    if (replicas <= 0 || nodes == 0 || nodes > 10000 || runs <= 0 || runs > 64) {
        fprintf(stderr, "usage: bench_sim [REPLICAS] [NODES] [RUNS]\n");
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    double t[64], cpu[64], wait[64];
    for (int i = 0; i < runs; i++) {
        t[i] = run(replicas, nodes, &cpu[i], &wait[i]);
        if (t[i] < 0) {
            fprintf(stderr, "run %d: the Deployment did not become Available\n", i + 1);
            return 1;
        }
        printf("run %d: %ld replicas on %u nodes Available in %.3f s, %.3f CPU s, %.3f s "
               "runnable but waiting for a CPU\n",
               i + 1, replicas, nodes, t[i], cpu[i], wait[i]);
    }
    printf("BENCH sim_deploy_available_s %.3f s\n", med(t, runs));
    printf("BENCH sim_deploy_cpu_s %.3f s\n", med(cpu, runs));
    printf("BENCH sim_deploy_cpu_wait_s %.3f s\n", med(wait, runs));
    printf("BENCH sim_deploy_cpu_per_pod_us %.1f us\n", med(cpu, runs) / replicas * 1e6);
    curl_global_cleanup();
    return 0;
}
