/*
 * bench_node_agents — 100 node agents against one `kcache serve` (Issue 34 point 9): what a
 * watch-fed node cache (kc_podmeta) and the GET-per-pod pattern of rsyslog's mmkubernetes and
 * Fluent Bit's kubernetes filter cost the API server, in requests and server CPU, for the same pod
 * churn.
 *
 * Usage: bench_node_agents        (environment: NODES=100 PODS_PER_NODE=110 NAMESPACES=10
 *                                  RATES="0 1 10 50" WINDOW_S=15 GET_DELAY_MS=300
 *                                  WATCH_HOLD_S=0 — > 0: the first watch agents idle that long
 *                                  first, counting their watches' re-establishments
 *                                  KCACHE=<dir of this program>/kcache)
 *
 * Method (docs/node-agents.md, "Scale: 100 nodes"):
 *   - `kcache serve --simulate-nodes NODES` in a child process (node_agents_serve.h): Nodes
 *     kcache-node-0..N-1 and a kubelet that takes a bound pod Pending → Running with containerd
 *     ids and removes a deleted one 100 ms after its graceful delete. Requests are counted from its
 *     request log, server CPU from /proc/PID/stat; each window ends at a GET /admin/rv whose log
 *     line is awaited, so every request sent in the window is counted in it.
 *   - Fill: NODES × PODS_PER_NODE bare pods with spec.nodeName set (round-robin over NAMESPACES
 *     namespaces), created by 4 threads, then awaited Running.
 *   - Churn at R pods/s cluster-wide: op k deletes the oldest pod of node k mod N and creates a
 *     new one there (a node keeps PODS_PER_NODE pods, plus the one terminating for 100 ms).
 *   - Two patterns, each with N agents started together for each R: "watch" (N kc_podmeta, each
 *     with its own kc_client: a Pod watch with fieldSelector spec.nodeName=<node> and a
 *     Namespace watch; awaited ready) and "get" (node_agents_get.h: N agents with new caches,
 *     each with its own client, GET every pod of their node and each namespace once; then every
 *     pod the churn creates is GET once by its node's agent GET_DELAY_MS after its create).
 *     Per R: watch start (measured), a watch window, the agents stopped, a churn-only window;
 *     get start (measured), a get window, the agents stopped, a churn-only window. A pattern's
 *     window and its baseline are adjacent, so load drift over the run cancels in the difference.
 *   - Per window (WINDOW_S seconds): requests by class and per hour, server CPU seconds per hour,
 *     the agents' share (minus the churn-only window that follows), the formula's requests per
 *     hour; per start: time to all ready, requests (and the formula's), server CPU.
 *
 * Output: BENCH lines (node_agents_<pattern>_r<R>_<metric>, node_agents_<pattern>_start_<metric>;
 * pattern churn, watch or get; each churn window printed twice per R); bench/plot_node_agents.py
 * takes the medians over one or more runs, prints the tables and draws
 * docs/img/node-agents-scale.svg.
 */
#include "node_agents_get.h"
#include "node_agents_serve.h"
#include "proc_usage.h"

#include <kcache/client.h>
#include <kcache/config.h>
#include <kcache/podmeta.h>

#include <libgen.h>
#include <limits.h>
#include <sys/resource.h>

static int N = 100, P = 110, NS = 10, SECS = 15, DELAY_MS = 300, HOLD_S = 0;
static int rates[16], nrates;
static serve srv;
static kc_config *cfg;
static kc_client *driver; /* the churn driver's and the bench's own client */
static unsigned *ring;    /* [node * P + slot]: the pod sequence numbers on each node */
static unsigned *head, *next_seq;
static const kc_gvr pods_gvr = {"", "v1", "pods"};

static void pod_name(char *buf, size_t n, int node, unsigned seq)
{
    snprintf(buf, n, "p%d-%u", node, seq);
}
static int pod_ns_index(int node, unsigned seq)
{
    return (int)((seq + (unsigned)node) % (unsigned)NS);
}
static void pod_ns(char *buf, size_t n, int node, unsigned seq)
{
    snprintf(buf, n, "bench-%d", pod_ns_index(node, seq));
}

/* A Deployment-made pod's usual shape: labels, an owner, one container with resources. */
static int create_pod(kc_client *c, int node, unsigned seq)
{
    char name[48], ns[32], body[1400];
    pod_name(name, sizeof name, node, seq);
    pod_ns(ns, sizeof ns, node, seq);
    int len = snprintf(
        body, sizeof body,
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"labels\":{"
        "\"app\":\"web\",\"app.kubernetes.io/name\":\"web\",\"app.kubernetes.io/instance\":"
        "\"web-prod\",\"pod-template-hash\":\"7d9f8c6b5\",\"team\":\"payments\"},"
        "\"annotations\":{\"prometheus.io/scrape\":\"true\",\"prometheus.io/port\":\"9090\"}},"
        "\"spec\":{\"nodeName\":\"kcache-node-%d\",\"containers\":[{\"name\":\"web\",\"image\":"
        "\"nginx:1.27\",\"ports\":[{\"containerPort\":8080}],\"env\":[{\"name\":\"MODE\","
        "\"value\":\"prod\"}],\"resources\":{\"requests\":{\"cpu\":\"10m\",\"memory\":"
        "\"32Mi\"},\"limits\":{\"memory\":\"64Mi\"}}}]}}",
        name, node);
    kc_obj *o = NULL;
    int rc = kc_client_create(c, &pods_gvr, ns, body, (size_t)len, NULL, &o, NULL);
    kc_obj_unref(o);
    return rc;
}

static int delete_pod(kc_client *c, int node, unsigned seq)
{
    char name[48], ns[32];
    pod_name(name, sizeof name, node, seq);
    pod_ns(ns, sizeof ns, node, seq);
    return kc_client_delete(c, &pods_gvr, ns, name, NULL, NULL, NULL);
}

static double now_s(void)
{
    return gq_now();
}

static double load1(void)
{
    double l = 0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f && fscanf(f, "%lf", &l) != 1)
        l = 0;
    if (f)
        fclose(f);
    return l;
}

/* Threads and open descriptors of process pid ("self" for this one). */
static void proc_threads_fds(const char *pid, long *threads, long *fds)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%s/status", pid);
    FILE *f = fopen(path, "r");
    *threads = *fds = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "Threads:", 8))
            *threads = strtol(line + 8, NULL, 10);
    if (f)
        fclose(f);
    snprintf(path, sizeof path, "/proc/%s/fd", pid);
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));)
        *fds += e->d_name[0] != '.';
    if (d)
        closedir(d);
}

static void report_threads(const char *pat)
{
    char pid[16];
    long t, fd, st, sfd;
    proc_threads_fds("self", &t, &fd);
    snprintf(pid, sizeof pid, "%d", (int)srv.pid);
    proc_threads_fds(pid, &st, &sfd);
    printf("%s: bench process %ld threads, %ld fds; server %ld threads, %ld fds\n", pat, t, fd, st,
           sfd);
    printf("BENCH node_agents_%s_bench_threads %ld threads\n", pat, t);
    printf("BENCH node_agents_%s_bench_fds %ld fds\n", pat, fd);
    printf("BENCH node_agents_%s_server_threads %ld threads\n", pat, st);
}

/* ---- fill ----------------------------------------------------------------------------------- */

typedef struct fill_arg {
    int t, threads;
    long failed;
} fill_arg;

static void *fill_main(void *ud)
{
    fill_arg *a = ud;
    for (long k = a->t; k < (long)N * P; k += a->threads)
        a->failed += create_pod(driver, (int)(k % N), (unsigned)(k / N)) != 0;
    return NULL;
}

static int count_cb(void *ud, kc_obj *o)
{
    (*(long *)ud)++;
    kc_obj_unref(o);
    return 0;
}

static int fill(void)
{
    char ns[32], body[128];
    for (int i = 0; i < NS; i++) {
        snprintf(ns, sizeof ns, "bench-%d", i);
        int len = snprintf(body, sizeof body, "{\"metadata\":{\"name\":\"%s\"}}", ns);
        const kc_gvr g = {"", "v1", "namespaces"};
        kc_obj *o = NULL;
        if (kc_client_create(driver, &g, NULL, body, (size_t)len, NULL, &o, NULL))
            return fprintf(stderr, "bench_node_agents: namespace %s not created\n", ns), -1;
        kc_obj_unref(o);
    }
    double t0 = now_s(), c0 = serve_cpu(&srv);
    fill_arg a[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        a[t] = (fill_arg){.t = t, .threads = 4};
        pthread_create(&th[t], NULL, fill_main, &a[t]);
    }
    long failed = 0;
    for (int t = 0; t < 4; t++)
        pthread_join(th[t], NULL), failed += a[t].failed;
    long pending = -1;
    for (int i = 0; i < 600 && pending != 0; i++) {
        pending = 0;
        kc_list_opts lo = {.field_selector = "status.phase!=Running"};
        kc_client_list(driver, &pods_gvr, NULL, &lo, NULL, count_cb, &pending, NULL);
        if (pending) {
            struct timespec ts = {0, 200000000};
            nanosleep(&ts, NULL);
        }
    }
    printf("fill: %d pods (%d nodes x %d) in %.1f s, server CPU %.1f s, %ld create errors, %ld "
           "not Running\n",
           N * P, N, P, now_s() - t0, serve_cpu(&srv) - c0, failed, pending);
    printf("BENCH node_agents_fill_s %.1f s\n", now_s() - t0);
    return failed || pending ? -1 : 0;
}

/* ---- churn and windows ---------------------------------------------------------------------- */

typedef struct win {
    double wall, cpu, bench_cpu, load;
    long churned, failed;
    rq_counts rq;
} win;

static gq *active_gq; /* the GET agents, while they run */
static unsigned long churn_k;

/* One churn op: the oldest pod of the next node deleted, a new one created there. */
static int churn_op(void)
{
    int node = (int)(churn_k++ % (unsigned long)N);
    unsigned *slot = &ring[(size_t)node * (size_t)P + head[node]];
    int rc = delete_pod(driver, node, *slot);
    unsigned seq = next_seq[node]++;
    rc |= create_pod(driver, node, seq);
    *slot = seq;
    head[node] = (head[node] + 1) % (unsigned)P;
    if (active_gq) {
        char name[48], ns[32];
        pod_name(name, sizeof name, node, seq);
        pod_ns(ns, sizeof ns, node, seq);
        gq_push(active_gq, node, ns, pod_ns_index(node, seq), name);
    }
    return rc;
}

static void sleep_until(double t)
{
    double d = t - now_s();
    if (d > 0) {
        struct timespec ts = {(time_t)d, (long)((d - (time_t)d) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* rate ops per second for secs seconds, paced from the start (a late op does not shift the
 * others); returns the ops done. */
static long churn(int rate, double secs, long *failed)
{
    double t0 = now_s();
    long k = 0;
    for (; rate > 0; k++) {
        double due = t0 + (double)k / rate;
        if (due >= t0 + secs)
            break;
        sleep_until(due);
        *failed += churn_op() != 0;
    }
    sleep_until(t0 + secs);
    return k;
}

static int mark(rq_counts *ret)
{
    if (serve_mark(&srv, driver, ret) == 0)
        return 0;
    fprintf(stderr, "bench_node_agents: the server's request log did not show the mark\n");
    return -1;
}

static void win_begin(win *w, rq_counts *a)
{
    memset(w, 0, sizeof *w);
    mark(a);
    w->wall = now_s();
    w->cpu = serve_cpu(&srv);
    w->bench_cpu = self_cpu();
    w->load = load1();
}

static void win_end(win *w, const rq_counts *a)
{
    rq_counts b = {0};
    mark(&b);
    w->wall = now_s() - w->wall;
    w->cpu = serve_cpu(&srv) - w->cpu;
    w->bench_cpu = self_cpu() - w->bench_cpu;
    w->load = (w->load + load1()) / 2;
    for (int i = 0; i < RQ_N; i++)
        w->rq.n[i] = b.n[i] - a->n[i];
}

static void window(int rate, win *w)
{
    rq_counts a;
    win_begin(w, &a);
    w->churned = churn(rate, SECS, &w->failed);
    if (active_gq)
        gq_drain(active_gq);
    win_end(w, &a);
}

static long agent_requests(const win *w)
{
    return w->rq.n[RQ_POD_GET] + w->rq.n[RQ_NS_GET] + w->rq.n[RQ_POD_COLL] + w->rq.n[RQ_NS_COLL] +
           w->rq.n[RQ_OTHER];
}

/* ---- on paper ------------------------------------------------------------------------------- */

/* Requests per hour the agents send, steady state. watch: each of the 2 watches per agent is
 * re-established when its timeoutSeconds (random 300..600 s, mean 450) ends — churn does not
 * matter; get: one Pod GET per new pod (new namespaces: none here). */
static double paper_per_hour(const char *pat, int rate)
{
    if (!strncmp(pat, "watch", 5))
        return 2.0 * N * 3600 / 450;
    if (!strcmp(pat, "get"))
        return 3600.0 * rate;
    return 0;
}

/* Requests of N agents starting at once. watch: one streaming WATCH per informer (a LIST and a
 * WATCH each without streaming lists); get: a GET per pod and per namespace on the node. */
static double paper_start(const char *pat)
{
    if (!strcmp(pat, "watch"))
        return 2.0 * N;
    return (double)N * (P + (NS < P ? NS : P));
}

/* ---- reporting ------------------------------------------------------------------------------ */

static void report(const char *pat, int rate, const win *w, const win *base)
{
    double h = 3600 / w->wall;
    printf("%s, R=%d/s: %.1f s, %ld ops (%.2f/s, %ld failed), server CPU %.2f s, bench CPU "
           "%.2f s, load %.2f; requests:",
           pat, rate, w->wall, w->churned, w->churned / w->wall, w->failed, w->cpu, w->bench_cpu,
           w->load);
    for (int i = 0; i < RQ_N; i++)
        printf(" %s %ld", rq_name[i], w->rq.n[i]);
    printf("\n");
    for (int i = 0; i < RQ_N; i++)
        printf("BENCH node_agents_%s_r%d_%s %ld requests\n", pat, rate, rq_name[i], w->rq.n[i]);
    printf("BENCH node_agents_%s_r%d_churn_per_s %.2f pods/s\n", pat, rate, w->churned / w->wall);
    printf("BENCH node_agents_%s_r%d_agent_requests_per_hour %.0f requests/h\n", pat, rate,
           agent_requests(w) * h);
    printf("BENCH node_agents_%s_r%d_paper_requests_per_hour %.0f requests/h\n", pat, rate,
           paper_per_hour(pat, rate));
    printf("BENCH node_agents_%s_r%d_server_cpu_s_per_hour %.1f s/h\n", pat, rate, w->cpu * h);
    if (base) /* minus the churn-only window that followed this one */
        printf("BENCH node_agents_%s_r%d_agents_server_cpu_s_per_hour %.1f s/h\n", pat, rate,
               w->cpu * h - base->cpu * 3600 / base->wall);
    printf("BENCH node_agents_%s_r%d_bench_cpu_s_per_hour %.1f s/h\n", pat, rate, w->bench_cpu * h);
    printf("BENCH node_agents_%s_r%d_load %.2f load\n", pat, rate, w->load);
    fflush(stdout);
}

static void report_start(const char *pat, const win *w, long failed)
{
    printf("%s: %d agents started at once: ready in %.2f s, server CPU %.2f s, %ld agent requests "
           "(on paper %.0f), %ld failed, load %.2f\n",
           pat, N, w->wall, w->cpu, agent_requests(w), paper_start(pat), failed, w->load);
    for (int i = 0; i < RQ_N; i++)
        printf("BENCH node_agents_%s_start_%s %ld requests\n", pat, rq_name[i], w->rq.n[i]);
    printf("BENCH node_agents_%s_start_s %.2f s\n", pat, w->wall);
    printf("BENCH node_agents_%s_start_requests %ld requests\n", pat, agent_requests(w));
    printf("BENCH node_agents_%s_start_paper_requests %.0f requests\n", pat, paper_start(pat));
    printf("BENCH node_agents_%s_start_server_cpu_s %.2f s\n", pat, w->cpu);
    fflush(stdout);
}

/* ---- the patterns --------------------------------------------------------------------------- */

static kc_client **new_clients(void)
{
    kc_client **cl = calloc((size_t)N, sizeof *cl);
    kc_client_opts co = {.qps = -1}; /* mmk and flb have no client-side limiter */
    for (int i = 0; i < N; i++)
        if (kc_client_new(cfg, &co, &cl[i], NULL))
            return fprintf(stderr, "bench_node_agents: client %d failed\n", i), NULL;
    return cl;
}

static void free_clients(kc_client **cl)
{
    for (int i = 0; cl && i < N; i++)
        kc_client_free(cl[i]);
    free(cl);
}

/* The churn alone for one window, right after a pattern's window: its baseline. */
static void baseline(int rate, const char *pat, const win *w)
{
    win base;
    window(rate, &base);
    report("churn", rate, &base, NULL);
    report(pat, rate, w, &base);
}

/* The watch agents idle for secs: long enough for every watch to reach its timeoutSeconds
 * (300..600 s) and be re-established; printed as pattern "watchhold", rate 0. */
static void hold(int secs)
{
    win w;
    rq_counts a;
    win_begin(&w, &a);
    sleep_until(now_s() + secs);
    win_end(&w, &a);
    report("watchhold", 0, &w, NULL);
}

/* 100 watch agents: start together (measured), one window at rate, stop; then the baseline. */
static int watch_round(int rate, bool first)
{
    kc_podmeta **pm = calloc((size_t)N, sizeof *pm);
    kc_client **cl = calloc((size_t)N, sizeof *cl);
    for (int i = 0; i < N; i++) {
        char node[32];
        snprintf(node, sizeof node, "kcache-node-%d", i);
        kc_podmeta_opts o = {.node_name = node};
        kc_error err = {0};
        if (kc_client_new(cfg, NULL, &cl[i], &err) || kc_podmeta_new(cl[i], &o, &pm[i], &err))
            return fprintf(stderr, "bench_node_agents: agent %d: %s\n", i, err.message), -1;
    }
    win w;
    rq_counts a;
    long failed = 0;
    win_begin(&w, &a);
    for (int i = 0; i < N; i++)
        failed += kc_podmeta_start(pm[i], NULL) != 0;
    for (int i = 0; i < N; i++)
        failed += kc_podmeta_wait_ready(pm[i], 120000, NULL) != 0;
    win_end(&w, &a);
    report_start("watch", &w, failed);
    if (first)
        report_threads("watch");
    if (first && HOLD_S > 0) /* the watches' own re-establishments, without churn */
        hold(HOLD_S);
    window(rate, &w);
    /* every agent's cache holds its node's pods once the last deletions are through */
    sleep_until(now_s() + 0.5);
    int right = 0;
    for (int i = 0; i < N; i++) {
        kc_podmeta_stats st;
        kc_podmeta_get_stats(pm[i], &st);
        right += st.pods == (size_t)P && st.namespaces >= (size_t)NS;
    }
    printf("watch: %d of %d agents hold exactly their node's %d pods\n", right, N, P);
    for (int i = 0; i < N; i++)
        kc_podmeta_free(pm[i]);
    free(pm);
    free_clients(cl);
    baseline(rate, "watch", &w);
    return right == N && !failed ? 0 : -1;
}

typedef struct gstart {
    gq *q;
    int node;
    long failed;
} gstart;

/* One GET agent's start: every pod of its node (the files it finds), each namespace once. */
static void *get_start_main(void *ud)
{
    gstart *g = ud;
    for (int s = 0; s < P; s++) {
        unsigned seq = ring[(size_t)g->node * (size_t)P + (size_t)s];
        char name[48], ns[32];
        pod_name(name, sizeof name, g->node, seq);
        pod_ns(ns, sizeof ns, g->node, seq);
        g->failed += gq_agent_get(g->q, g->node, ns, pod_ns_index(g->node, seq), name) != 0;
    }
    return NULL;
}

/* 100 GET agents (new caches): start together (measured), one window at rate, stop; then the
 * baseline. */
static int get_round(int rate, bool first)
{
    kc_client **cl = new_clients();
    if (!cl)
        return -1;
    gq q;
    gq_init(&q, cl, N, NS, DELAY_MS);
    gstart *g = calloc((size_t)N, sizeof *g);
    pthread_t *th = calloc((size_t)N, sizeof *th);
    win w;
    rq_counts a;
    win_begin(&w, &a);
    for (int i = 0; i < N; i++) {
        g[i] = (gstart){.q = &q, .node = i};
        pthread_create(&th[i], NULL, get_start_main, &g[i]);
    }
    long failed = 0;
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL), failed += g[i].failed;
    win_end(&w, &a);
    report_start("get", &w, failed);
    if (first)
        report_threads("get");
    active_gq = &q;
    window(rate, &w);
    active_gq = NULL;
    failed += gq_failed(&q);
    gq_stop(&q);
    free(g);
    free(th);
    free_clients(cl);
    baseline(rate, "get", &w);
    printf("get: %ld failed requests\n", failed);
    return failed ? -1 : 0;
}

static int env_int(const char *name, int def)
{
    const char *s = getenv(name);
    return s && *s ? atoi(s) : def;
}

static void setup(char *argv0, char *kcache, size_t n)
{
    N = env_int("NODES", N);
    P = env_int("PODS_PER_NODE", P);
    NS = env_int("NAMESPACES", NS);
    SECS = env_int("WINDOW_S", SECS);
    DELAY_MS = env_int("GET_DELAY_MS", DELAY_MS);
    HOLD_S = env_int("WATCH_HOLD_S", HOLD_S);
    const char *r = getenv("RATES");
    char buf[256];
    snprintf(buf, sizeof buf, "%s", r && *r ? r : "0 1 10 50");
    for (char *t = strtok(buf, " ,"); t && nrates < 16; t = strtok(NULL, " ,"))
        rates[nrates++] = atoi(t);
    const char *k = getenv("KCACHE");
    if (k && *k)
        snprintf(kcache, n, "%s", k);
    else
        snprintf(kcache, n, "%s/kcache", dirname(argv0));
    struct rlimit rl; /* 2 watches per agent plus the GET agents' connections */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    ring = calloc((size_t)N * (size_t)P, sizeof *ring);
    head = calloc((size_t)N, sizeof *head);
    next_seq = calloc((size_t)N, sizeof *next_seq);
    for (int i = 0; i < N; i++) {
        for (int s = 0; s < P; s++)
            ring[(size_t)i * (size_t)P + (size_t)s] = (unsigned)s;
        next_seq[i] = (unsigned)P;
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    char kcache[PATH_MAX];
    setup(argv[0], kcache, sizeof kcache);
    printf("bench_node_agents: %d nodes x %d pods, %d namespaces, rates", N, P, NS);
    for (int i = 0; i < nrates; i++)
        printf(" %d", rates[i]);
    printf(" pods/s, %d s per window; load %.2f\n", SECS, load1());
    kc_client_opts co = {.qps = -1};
    if (serve_start(&srv, kcache, N) || kc_config_from_url(srv.url, NULL, NULL, &cfg, NULL) ||
        kc_client_new(cfg, &co, &driver, NULL))
        return 1;
    int rc = fill();
    for (int ri = 0; rc == 0 && ri < nrates; ri++) {
        rc = watch_round(rates[ri], ri == 0);
        if (rc == 0)
            rc = get_round(rates[ri], ri == 0);
    }
    printf("load at the end %.2f\n", load1());
    kc_client_free(driver);
    kc_config_unref(cfg);
    serve_stop(&srv);
    return rc ? 1 : 0;
}
