/*
 * bench_informer — informer throughput and memory against the embedded API server.
 *
 * The server runs in a forked child process (so the parent's RSS and CPU time are the client's
 * alone; bench/server_child.h), seeded with seed_spec "pods=N" (genpod-shaped ~6 KB Pods, 40 %
 * managedFields). Then:
 *   1. initial sync of N Pods, streaming list and paged LIST (500 per page), REPEAT runs each:
 *      wall objects/s, client CPU seconds (getrusage), peak RSS during the sync (VmHWM after
 *      resetting it through /proc/self/clear_refs) and steady RSS with the store alive (after
 *      malloc_trim), both above the baseline before the run;
 *   2. watch ingest: the child creates M more Pods (copies of a seeded one, managedFields
 *      included) before the parent starts; the parent watches from the RV before them and applies
 *      every event to a kc_store (decode, strip, apply). events/s are per second of the watching
 *      thread's CPU time (user + system, getrusage(RUSAGE_THREAD); curl runs in this thread), since
 *      the server shares the two cores; the whole process's CPU over the pass is printed beside it
 *      (it agrees: no other client thread works). A second pass applies the same events to the
 *      filled store ("warm": each replaces an object, reusing freed memory as MODIFIED traffic
 *      does). The same events through an informer (reflector + one no-op handler; watches
 *      from the RV before them without listing): events per second of the whole process's CPU,
 *      with user/sys µs, page faults and context switches per event. The informer runs come
 *      FIRST: run after the bare passes, every informer run took 0.71 first-touch faults per
 *      event (its thread's malloc arena got no memory back from the earlier runs), while its own
 *      runs 2+ reuse what the previous informer freed (0.00), as the bare runs 2+ reuse the
 *      previous bare pass's memory (0.16-0.3); each path now follows only runs of its own kind;
 *   2b. with --informer-only, only that informer phase (skips phase 1 too);
 *   3. with --node, the same server against @kubernetes/client-node 1.4.0 makeInformer
 *      (bench/node_sync.h: bench/node/informer_sync.mjs, NODE_PATH=$KC_NODE_MODULES or
 *      tests/conformance/node/node_modules): ratio of
 *      objects/s and of steady RSS.
 * Usage: bench_informer [N=100000] [--node] [--repeat R=3] [--updates M=20000] [--ingest-only]
 * [--informer-only] (--ingest-only skips phase 1, e.g. to profile the watch path alone).
 * Output: human text plus `BENCH <metric> <value> <unit>` lines (medians).
 */
#include "core/internal.h"
#include "informer/internal.h"
#include "kcache/informer.h"
#include "kcache/server.h"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "handler_count.h"
#include "node_sync.h"
#include "proc_usage.h"
#include "server_child.h"

static const kc_gvr PODS = {"", "v1", "pods"};

/* ---- 1. initial sync --------------------------------------------------------------------------
 */

typedef struct syncres {
    double wall_s, cpu_s;
    long peak_kb, steady_kb;
} syncres;

static int sync_once(kc_client *cli, kc_informer_list_mode mode, int n, syncres *res)
{
    malloc_trim(0);
    long base = status_kb("VmRSS");
    reset_hwm();
    double c0 = self_cpu();
    uint64_t t0 = kc__now_ns();
    kc_informer_opts o = {.list_mode = mode, .initial_events_timeout_ms = 60000};
    kc_informer *inf = NULL;
    kc_error e = KC_ERROR_INIT;
    if (kc_informer_new(cli, &PODS, &o, &inf, &e) || kc_informer_start(inf, &e))
        return -1;
    int rc = kc_informer_wait_synced(inf, 600000, NULL);
    res->wall_s = (kc__now_ns() - t0) / 1e9;
    res->cpu_s = self_cpu() - c0;
    res->peak_kb = status_kb("VmHWM") - base;
    malloc_trim(0);
    res->steady_kb = status_kb("VmRSS") - base;
    size_t got = kc_store_len(kc_informer_store(inf));
    kc_informer_free(inf);
    if (rc != 0 || got != (size_t)n) {
        fprintf(stderr, "sync failed: rc=%d objects=%zu\n", rc, got);
        return -1;
    }
    return 0;
}

/* ---- 2. watch ingest --------------------------------------------------------------------------
 */

typedef struct ingest {
    kc_store *s;
    long want, got;
} ingest;

static int ingest_cb(void *ud, const kc_watch_event *ev)
{
    ingest *g = ud;
    if (ev->type == KC_WATCH_ADDED || ev->type == KC_WATCH_MODIFIED ||
        ev->type == KC_WATCH_DELETED) {
        kc_store_change ch;
        if (kc_store_apply(g->s, ev->type, ev->obj, &ch, NULL) == 0)
            kc_store_change_clear(&ch);
        if (++g->got >= g->want)
            return KC_ECANCELED; /* stop the watch */
    }
    return 0;
}

/* CPU seconds of the calling thread (user + system: decode, recv, page faults) and its minor
 * page faults. */
typedef struct tcpu {
    double user, sys;
    long minflt;
} tcpu;

static tcpu thread_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (tcpu){ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
                  ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_minflt};
}

typedef struct ingres {
    double cpu_rate, wall_rate,
        proc_rate; /* events per thread CPU-s, per wall s, per process CPU-s */
    double user_s, sys_s;
    long minflt;
} ingres;

/* One pass of the watch from rv_before into g->s (ADDED into a new store = cold: every object is
 * fresh memory; the same events again into the filled store = warm: each replaces an object and
 * reuses the memory the replaced one freed, as steady-state MODIFIED events do). */
static int ingest_pass(kc_client *cli, const child *c, ingest *g, ingres *res)
{
    kc_watch_opts wo = {.resource_version = c->rv_before, .allow_bookmarks = true};
    g->got = 0;
    double p0 = self_cpu();
    tcpu t0 = thread_cpu();
    uint64_t w0 = kc__now_ns();
    int rc = kc_client_watch(cli, &PODS, NULL, &wo, ingest_cb, g, NULL, NULL);
    double wall = (kc__now_ns() - w0) / 1e9;
    tcpu t1 = thread_cpu();
    double proc = self_cpu() - p0;
    if (g->got < g->want) {
        fprintf(stderr, "watch ingest: got %ld of %ld events (rc %d)\n", g->got, g->want, rc);
        return -1;
    }
    res->user_s = t1.user - t0.user;
    res->sys_s = t1.sys - t0.sys;
    res->minflt = t1.minflt - t0.minflt;
    res->cpu_rate = g->got / (res->user_s + res->sys_s);
    res->wall_rate = g->got / wall;
    res->proc_rate = g->got / proc;
    return 0;
}

static int watch_ingest(kc_client *cli, const child *c, long m, ingres *cold, ingres *warm)
{
    ingest g = {NULL, m, 0};
    kc_store_new(NULL, &g.s, NULL);
    int rc = ingest_pass(cli, c, &g, cold);
    if (rc == 0)
        rc = ingest_pass(cli, c, &g, warm);
    kc_store_free(g.s);
    return rc;
}

/* ---- 2b. the same events through an informer ---------------------------------------------------
 * An informer (reflector thread + one registered handler on its dispatcher thread) watches from
 * rv_before without listing (kc__informer_watch_from). Counted: the whole process's CPU (every
 * client thread: reflector, dispatcher, this one waiting) from start until the handler has seen
 * every event and its queue is idle; the server is another process. */

static int informer_ingest(kc_client *cli, const child *c, long m, double *ret_rate, double *us_ev,
                           double *sys_ev, double *flt_ev, double *csw_ev)
{
    hcount hc;
    kc_informer *inf;
    kc_informer_reg *reg;
    if (hcount_informer_new(cli, &PODS, c->rv_before, m, &hc, &inf, &reg))
        return -1;
    double u0, s0, u1, s1;
    long f0, f1, csw0, csw1;
    self_usage(&u0, &s0, &f0, &csw0);
    double p0 = u0 + s0;
    int rc = hcount_wait(&hc, reg, kc_informer_start(inf, NULL), 120000);
    self_usage(&u1, &s1, &f1, &csw1);
    double proc = u1 + s1 - p0;
    *us_ev = (u1 - u0) * 1e6 / m;
    *sys_ev = (s1 - s0) * 1e6 / m;
    *flt_ev = (double)(f1 - f0) / m;
    *csw_ev = (double)(csw1 - csw0) / m;
    if (hcount_informer_free(&hc, inf, rc))
        return -1;
    *ret_rate = m / proc;
    return 0;
}

int main(int argc, char **argv)
{
    int n = 100000, repeat = 3, updates = 20000;
    bool node = false, ingest_only = false, informer_only = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--node") == 0)
            node = true;
        else if (strcmp(argv[i], "--ingest-only") == 0)
            ingest_only = true;
        else if (strcmp(argv[i], "--informer-only") == 0)
            ingest_only = informer_only = true;
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (strcmp(argv[i], "--updates") == 0 && i + 1 < argc)
            updates = atoi(argv[++i]);
        else
            n = atoi(argv[i]);
    }
    if (repeat < 1 || repeat > 15)
        repeat = 3;
    signal(SIGPIPE, SIG_IGN);
    child c;
    uint64_t ts = kc__now_ns();
    if (child_start(&c, n, updates) != 0)
        return 1;
    printf("server child seeded with %d pods and created %d more in %.1f s (%s)\n", n, updates,
           (kc__now_ns() - ts) / 1e9, c.url);
    kc_config *cfg = NULL;
    kc_client *cli = NULL;
    kc_client_opts co = {.qps = -1};
    if (kc_config_from_url(c.url, NULL, NULL, &cfg, NULL) || kc_client_new(cfg, &co, &cli, NULL))
        return 1;
    int total = n + updates; /* the ingest pods are there too */
    const char *names[2] = {"streaming", "paged"};
    double ops[2] = {0}, steady[2] = {0}, peak[2] = {0};
    for (int m = 0; m < (ingest_only ? 0 : 2); m++) {
        double w[15], cp[15], pk[15], sd[15];
        for (int r = 0; r < repeat; r++) {
            syncres res;
            if (sync_once(cli, m == 0 ? KC_INFORMER_LIST_STREAMING : KC_INFORMER_LIST_PAGED, total,
                          &res) != 0)
                return 1;
            w[r] = res.wall_s;
            cp[r] = res.cpu_s;
            pk[r] = res.peak_kb / 1024.0;
            sd[r] = res.steady_kb / 1024.0;
            printf("  %s run %d: %.2f s wall (%.0f objects/s), client CPU %.2f s, peak +%.0f MiB, "
                   "steady +%.0f MiB\n",
                   names[m], r + 1, w[r], total / w[r], cp[r], pk[r], sd[r]);
        }
        double wm = med(w, repeat), cm = med(cp, repeat);
        peak[m] = med(pk, repeat);
        steady[m] = med(sd, repeat);
        ops[m] = total / wm;
        printf(
            "initial sync (%s) of %d pods: median %.2f s = %.0f objects/s; client CPU %.2f s "
            "(%.0f objects per CPU-second); peak +%.0f MiB, steady +%.0f MiB (%.2f KiB/object)\n",
            names[m], total, wm, ops[m], cm, total / cm, peak[m], steady[m],
            steady[m] * 1024 / total);
        printf("BENCH informer_sync_%s_objects_per_s %.0f objects/s\n", names[m], ops[m]);
        printf("BENCH informer_sync_%s_cpu_objects_per_s %.0f objects/s\n", names[m], total / cm);
        printf("BENCH informer_sync_%s_peak_rss %.0f MiB\n", names[m], peak[m]);
        printf("BENCH informer_sync_%s_steady_rss %.0f MiB\n", names[m], steady[m]);
    }
    if (updates > 0) {
        double cr[15], wr[15], pr[15], us[15], ss[15], fl[15], wc[15], ir[15];
        for (int r = 0; r < repeat; r++) {
            double ius, iss, ifl, ics;
            if (informer_ingest(cli, &c, updates, &ir[r], &ius, &iss, &ifl, &ics) != 0)
                return 1;
            printf("  informer ingest run %d: %.0f events per process CPU-s (user %.2f us + sys "
                   "%.2f us per event, %.2f page faults and %.3f context switches per event)\n",
                   r + 1, ir[r], ius, iss, ifl, ics);
        }
        for (int r = 0; r < (informer_only ? 0 : repeat); r++) {
            ingres cold, warm;
            if (watch_ingest(cli, &c, updates, &cold, &warm) != 0)
                return 1;
            cr[r] = cold.cpu_rate;
            wr[r] = cold.wall_rate;
            pr[r] = cold.proc_rate;
            us[r] = cold.user_s * 1e6 / updates;
            ss[r] = cold.sys_s * 1e6 / updates;
            fl[r] = (double)cold.minflt / updates;
            wc[r] = warm.cpu_rate;
            printf("  ingest run %d: %.0f events per thread CPU-s (user %.2f us + sys %.2f us per "
                   "event, %.2f page faults per event; process CPU: %.0f events/s), %.0f/s wall; "
                   "warm (replacing): %.0f per CPU-s (%.2f faults per event)\n",
                   r + 1, cr[r], us[r], ss[r], fl[r], pr[r], wr[r], wc[r],
                   (double)warm.minflt / updates);
        }
        if (!informer_only) {
            double crm = med(cr, repeat), wrm = med(wr, repeat);
            printf("watch ingest of %d events (decode + store apply): %.0f events per client "
                   "CPU-second (user %.2f + sys %.2f us per event, %.2f page faults per event; "
                   "whole-process CPU %.0f/s), %.0f events/s wall (server shares the cores); "
                   "warm %.0f per CPU-s\n",
                   updates, crm, med(us, repeat), med(ss, repeat), med(fl, repeat), med(pr, repeat),
                   wrm, med(wc, repeat));
            printf("BENCH informer_watch_ingest_cpu %.0f events/s\n", crm);
            printf("BENCH informer_watch_ingest_wall %.0f events/s\n", wrm);
            printf("BENCH informer_watch_ingest_process_cpu %.0f events/s\n", med(pr, repeat));
            printf("BENCH informer_watch_ingest_warm_cpu %.0f events/s\n", med(wc, repeat));
        }
        printf("watch ingest through an informer with one handler: %.0f events per process "
               "CPU-second\n",
               med(ir, repeat));
        printf("BENCH informer_watch_ingest_informer_cpu %.0f events/s\n", med(ir, repeat));
    }
    if (node) {
        double nw;
        long npk, nsd;
        if (node_sync(&c, total, &nw, &npk, &nsd) == 0) {
            double nops = total / nw;
            printf("client-node 1.4.0 makeInformer: %.2f s = %.0f objects/s, peak %.0f MiB, steady "
                   "%.0f MiB (above its baseline)\n",
                   nw, nops, npk / 1024.0, nsd / 1024.0);
            printf("ratio objects/s kcache(best)/node: %.1fx; kcache peak / node steady RSS: "
                   "%.2fx\n",
                   (ops[0] > ops[1] ? ops[0] : ops[1]) / nops,
                   (peak[0] < peak[1] ? peak[0] : peak[1]) / (nsd / 1024.0));
            printf("BENCH node_informer_objects_per_s %.0f objects/s\n", nops);
            printf("BENCH node_informer_steady_rss %.0f MiB\n", nsd / 1024.0);
            printf("BENCH informer_vs_node_speedup %.1f x\n",
                   (ops[0] > ops[1] ? ops[0] : ops[1]) / nops);
            printf("BENCH informer_peak_vs_node_steady_rss %.2f x\n",
                   (peak[0] < peak[1] ? peak[0] : peak[1]) / (nsd / 1024.0));
        } else {
            printf("client-node run failed (is tests/conformance/node/node_modules installed?)\n");
        }
    }
    kc_client_free(cli);
    kc_config_unref(cfg);
    child_stop(&c);
    return 0;
}
