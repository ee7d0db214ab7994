/*
 * bench_watch_ingest — watch ingest through an informer against the wire: the same watch stream
 * downloaded and thrown away.
 *
 * One embedded API server runs in a forked child (bench/server_child.h) seeded with "pods=SEED";
 * it then creates M more Pods through a client (genpod-shaped copies of a seeded Pod,
 * managedFields included, ~6 KB each): M ADDED events in the server's history after rv_before.
 * In one run, REPS rounds, each alternating (the order flips from round to round):
 *   raw   — libcurl in this process downloads GET /api/v1/pods?watch=1&resourceVersion=rv_before
 *           &allowWatchBookmarks=true into a null sink that only counts the ADDED lines, and stops
 *           at the M-th: the same bytes the informer receives, no parsing;
 *   cold  — a FRESH PROCESS (fork + exec of this binary with --child: nothing of this process's
 *           memory is inherited) starts a kc_informer with one registered no-op handler, watching
 *           from rv_before without listing (kc__informer_watch_from, bench-only), and waits until
 *           the handler has seen all M events and its queue is idle (decode, strip, store apply,
 *           hand-off to the dispatcher: the whole informer path);
 *   warm  — in that same child, the informer is freed and a second one ingests the same events
 *           (the allocator now recycles the first one's memory, as steady MODIFIED traffic does).
 * Figures per round, then the median over rounds: events/s of each; the ratio ingest wall ÷ raw
 * wall of the same round (1.0 = the informer keeps up with the wire); the client's CPU per event
 * (the child process's user + system time over the ingest, getrusage; every client thread:
 * reflector, dispatcher, the waiting main thread) split into user/sys, with minor page faults per
 * event; curl's own CPU per event for the raw download; the server's CPU over each transfer
 * (utime + stime of the server child, /proc/PID/stat): its serve rate per CPU-second and its busy
 * fraction (≈ 1.0 of the transfer's wall time = the server is the bottleneck of the raw figure);
 * the child's run-queue wait (schedstat: the machine's load, not the code).
 * Usage: bench_watch_ingest [M=20000] [--seed N=1000] [--reps R=5]
 * Output: human text plus `BENCH <metric> <value> <unit>` lines (medians), M in the metric name.
 */
#include "core/internal.h"
#include "informer/internal.h"
#include "kcache/informer.h"
#include "kcache/server.h"

#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handler_count.h"
#include "proc_usage.h"
#include "server_child.h"

static const kc_gvr PODS = {"", "v1", "pods"};

/* ---- raw transfer --------------------------------------------------------------------------- */

static const char ADDED[] = "{\"type\":\"ADDED\"";
#define ADDED_LEN (sizeof(ADDED) - 1)

typedef struct sink {
    size_t bytes;
    long want, got;
    char start[ADDED_LEN]; /* the first bytes of the current line */
    size_t start_len;
} sink;

static size_t sink_write(char *p, size_t sz, size_t nm, void *ud)
{
    sink *s = ud;
    size_t n = sz * nm, at = 0;
    s->bytes += n;
    while (at < n) {
        if (s->start_len < ADDED_LEN) {
            size_t k = n - at < ADDED_LEN - s->start_len ? n - at : ADDED_LEN - s->start_len;
            memcpy(s->start + s->start_len, p + at, k);
            s->start_len += k;
        }
        char *nl = memchr(p + at, '\n', n - at);
        if (!nl)
            break;
        if (s->start_len == ADDED_LEN && memcmp(s->start, ADDED, ADDED_LEN) == 0 &&
            ++s->got >= s->want)
            return 0; /* stop the transfer: all M events are in */
        s->start_len = 0;
        at = (size_t)(nl - p) + 1;
    }
    return n;
}

typedef struct rawres {
    double wall_s, server_cpu_s, client_cpu_s;
    size_t bytes;
} rawres;

static int raw_watch(const child *c, long m, rawres *r)
{
    CURL *h = curl_easy_init();
    sink s = {.want = m};
    char url[512];
    snprintf(url, sizeof(url), "%s/api/v1/pods?watch=1&resourceVersion=%s&allowWatchBookmarks=true",
             c->url, c->rv_before);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    double sc0 = proc_cpu(c->pid), cc0 = self_cpu();
    uint64_t t0 = kc__now_ns();
    curl_easy_perform(h); /* ends with CURLE_WRITE_ERROR when the sink stops it */
    r->wall_s = (kc__now_ns() - t0) / 1e9;
    r->server_cpu_s = proc_cpu(c->pid) - sc0;
    r->client_cpu_s = self_cpu() - cc0;
    r->bytes = s.bytes;
    curl_easy_cleanup(h);
    return s.got == m ? 0 : -1;
}

/* ---- the fresh process: ingest through an informer ------------------------------------------ */

typedef struct ingres {
    double wall_s, cpu_s, user_s, sys_s, server_cpu_s, delay_s;
    long minflt;
} ingres;

static int informer_ingest(kc_client *cli, const char *rv, long m, pid_t server, ingres *r)
{
    hcount hc;
    kc_informer *inf;
    kc_informer_reg *reg;
    if (hcount_informer_new(cli, &PODS, rv, m, &hc, &inf, &reg))
        return -1;
    double u0, s0, u1, s1, d0 = run_delay(), sv0 = proc_cpu(server);
    long f0, f1;
    self_usage(&u0, &s0, &f0, NULL);
    uint64_t t0 = kc__now_ns();
    int rc = hcount_wait(&hc, reg, kc_informer_start(inf, NULL), 300000);
    r->wall_s = (kc__now_ns() - t0) / 1e9;
    self_usage(&u1, &s1, &f1, NULL);
    r->server_cpu_s = proc_cpu(server) - sv0;
    r->delay_s = run_delay() - d0; /* the informer's threads are still alive here */
    r->user_s = u1 - u0, r->sys_s = s1 - s0, r->cpu_s = r->user_s + r->sys_s;
    r->minflt = f1 - f0;
    return hcount_informer_free(&hc, inf, rc);
}

#define RESULT_FMT "RESULT %lf %lf %lf %lf %lf %lf %ld"

static void print_res(const ingres *r)
{
    printf("RESULT %.6f %.6f %.6f %.6f %.6f %.6f %ld\n", r->wall_s, r->cpu_s, r->user_s, r->sys_s,
           r->server_cpu_s, r->delay_s, r->minflt);
}

/* --child URL RV M SERVER: cold ingest, then warm; two RESULT lines on stdout. */
static int child_main(const char *url, const char *rv, long m, pid_t server)
{
    kc_config *cfg = NULL;
    kc_client *cli = NULL;
    kc_client_opts co = {.qps = -1};
    if (kc_config_from_url(url, NULL, NULL, &cfg, NULL) || kc_client_new(cfg, &co, &cli, NULL))
        return 2;
    ingres cold, warm;
    if (informer_ingest(cli, rv, m, server, &cold))
        return 3;
    if (informer_ingest(cli, rv, m, server, &warm))
        return 4;
    print_res(&cold);
    print_res(&warm);
    fflush(stdout);
    kc_client_free(cli);
    kc_config_unref(cfg);
    return 0;
}

static int run_child(const char *self, const child *c, long m, ingres *cold, ingres *warm)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "%s --child %s %s %ld %d", self, c->url, c->rv_before, m,
             (int)c->pid);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[512];
    int got = 0;
    while (fgets(line, sizeof(line), p)) {
        ingres *r = got == 0 ? cold : warm;
        if (got < 2 && sscanf(line, RESULT_FMT, &r->wall_s, &r->cpu_s, &r->user_s, &r->sys_s,
                              &r->server_cpu_s, &r->delay_s, &r->minflt) == 7)
            got++;
    }
    return pclose(p) == 0 && got == 2 ? 0 : -1;
}

/* ---- rounds and report ---------------------------------------------------------------------- */

#define MAXREPS 32

typedef struct series {
    double raw_eps[MAXREPS], cold_eps[MAXREPS], warm_eps[MAXREPS], ratio[MAXREPS], wratio[MAXREPS];
    double raw_us[MAXREPS], cold_us[MAXREPS], cold_user[MAXREPS], cold_sys[MAXREPS],
        cold_flt[MAXREPS], warm_us[MAXREPS], warm_flt[MAXREPS];
    double srv_raw_us[MAXREPS], srv_cold_us[MAXREPS], srv_gbps[MAXREPS], srv_busy[MAXREPS],
        srv_busy_cold[MAXREPS], delay[MAXREPS], cpu_ratio[MAXREPS];
    size_t bytes;
} series;

static int round_once(const char *self, const child *c, long m, int i, series *s)
{
    rawres r;
    ingres k, w;
    bool raw_first = (i % 2) == 0;
    if (raw_first && raw_watch(c, m, &r))
        return -1;
    if (run_child(self, c, m, &k, &w))
        return -1;
    if (!raw_first && raw_watch(c, m, &r))
        return -1;
    double us = 1e6 / (double)m;
    s->raw_eps[i] = m / r.wall_s, s->cold_eps[i] = m / k.wall_s, s->warm_eps[i] = m / w.wall_s;
    s->ratio[i] = k.wall_s / r.wall_s, s->wratio[i] = w.wall_s / r.wall_s;
    s->raw_us[i] = r.client_cpu_s * us, s->cold_us[i] = k.cpu_s * us;
    s->cold_user[i] = k.user_s * us, s->cold_sys[i] = k.sys_s * us;
    s->cold_flt[i] = (double)k.minflt / m, s->warm_us[i] = w.cpu_s * us;
    s->warm_flt[i] = (double)w.minflt / m;
    s->srv_raw_us[i] = r.server_cpu_s * us, s->srv_cold_us[i] = k.server_cpu_s * us;
    s->srv_gbps[i] = r.server_cpu_s > 0 ? r.bytes / r.server_cpu_s / 1e9 : 0;
    s->srv_busy[i] = r.server_cpu_s / r.wall_s, s->srv_busy_cold[i] = k.server_cpu_s / k.wall_s;
    s->delay[i] = k.delay_s;
    s->cpu_ratio[i] = (k.cpu_s + k.server_cpu_s) / (r.client_cpu_s + r.server_cpu_s);
    s->bytes = r.bytes;
    return 0;
}

static void report(long m, const series *s, int reps)
{
    double lo = 1e9, hi = 0;
    for (int i = 0; i < reps; i++)
        lo = s->ratio[i] < lo ? s->ratio[i] : lo, hi = s->ratio[i] > hi ? s->ratio[i] : hi;
    double raw = med(s->raw_eps, reps);
    printf("watch of %ld ADDED events, %d alternated rounds (medians):\n", m, reps);
    printf("  raw download %.0f events/s (%.0f MB, %.2f GB/s), curl CPU %.2f us/event\n", raw,
           s->bytes / 1e6, s->bytes / 1e9 * raw / m, med(s->raw_us, reps));
    printf("  informer cold %.0f events/s = %.2fx the raw wall time (%.2f..%.2f); warm %.0f "
           "events/s = %.2fx\n",
           med(s->cold_eps, reps), med(s->ratio, reps), lo, hi, med(s->warm_eps, reps),
           med(s->wratio, reps));
    printf("  client CPU per event: cold %.2f us (user %.2f + sys %.2f, %.2f faults), warm %.2f us "
           "(%.2f faults)\n",
           med(s->cold_us, reps), med(s->cold_user, reps), med(s->cold_sys, reps),
           med(s->cold_flt, reps), med(s->warm_us, reps), med(s->warm_flt, reps));
    printf("  server CPU per event: %.2f us serving curl (%.2f GB/s per CPU-s, busy %.2f of the "
           "transfer), %.2f us serving the informer (busy %.2f)\n",
           med(s->srv_raw_us, reps), med(s->srv_gbps, reps), med(s->srv_busy, reps),
           med(s->srv_cold_us, reps), med(s->srv_busy_cold, reps));
    printf("  cold ingest: client + server CPU = %.2fx the raw transfer's; the child's threads "
           "waited %.3f s for a CPU\n",
           med(s->cpu_ratio, reps), med(s->delay, reps));
    printf("BENCH watch_ingest_%ld_raw_events_per_s %.0f events/s\n", m, raw);
    printf("BENCH watch_ingest_%ld_cold_events_per_s %.0f events/s\n", m, med(s->cold_eps, reps));
    printf("BENCH watch_ingest_%ld_warm_events_per_s %.0f events/s\n", m, med(s->warm_eps, reps));
    printf("BENCH watch_ingest_%ld_cold_vs_raw %.2f x\n", m, med(s->ratio, reps));
    printf("BENCH watch_ingest_%ld_warm_vs_raw %.2f x\n", m, med(s->wratio, reps));
    printf("BENCH watch_ingest_%ld_cold_cpu_us_per_event %.2f us\n", m, med(s->cold_us, reps));
    printf("BENCH watch_ingest_%ld_warm_cpu_us_per_event %.2f us\n", m, med(s->warm_us, reps));
    printf("BENCH watch_ingest_%ld_raw_cpu_us_per_event %.2f us\n", m, med(s->raw_us, reps));
    printf("BENCH watch_ingest_%ld_server_cpu_us_per_event %.2f us\n", m, med(s->srv_raw_us, reps));
    printf("BENCH watch_ingest_%ld_server_gbps_per_cpu %.2f GB/s\n", m, med(s->srv_gbps, reps));
    printf("BENCH watch_ingest_%ld_server_busy %.2f x\n", m, med(s->srv_busy, reps));
}

int main(int argc, char **argv)
{
    if (argc >= 6 && strcmp(argv[1], "--child") == 0)
        return child_main(argv[2], argv[3], atol(argv[4]), (pid_t)atoi(argv[5]));
    long m = 20000;
    int seed = 1000, reps = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = atoi(argv[++i]);
        else
            m = atol(argv[i]);
    }
    reps = reps < 1 ? 1 : reps > MAXREPS ? MAXREPS : reps;
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    child c;
    if (child_start(&c, seed, (int)m))
        return 1;
    printf("bench_watch_ingest: %ld events after %d seeded Pods, %d alternated rounds; server pid "
           "%d\n",
           m, seed, reps, (int)c.pid);
    rawres warmup;
    int rc = raw_watch(&c, m, &warmup);
    static series s;
    for (int i = 0; i < reps && rc == 0; i++)
        rc = round_once(argv[0], &c, m, i, &s);
    if (rc) {
        fprintf(stderr, "a round failed\n");
        child_stop(&c);
        return 1;
    }
    report(m, &s, reps);
    child_stop(&c);
    curl_global_cleanup();
    return 0;
}
