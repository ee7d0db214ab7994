/*
 * bench_priority_queue — what the controller's priority queue buys (spec C12): the latency of a
 * change's reconcile while a startup backlog is being worked, priority queue on against off.
 *
 * Method. The embedded API server runs in a forked child (bench/server_child.h) seeded with N Pods
 * (default 100,000). Each run starts a controller over Pods with ONE worker whose reconcile
 * busy-waits 100 µs (so N keys take about N × 100 µs: a backlog measured in seconds), and, on
 * the controller's own Pod informer, a second handler registration that stamps the probe Pod's
 * watch event. Once start has returned (caches synced: the N initial-list keys are queued) and
 * 1,000 reconciles have run (the backlog is being worked), the bench creates one new Pod (the
 * probe) and measures:
 *   - create → reconcile: from kc_client_create returning to the probe's reconcile starting;
 *   - event → reconcile:  from the probe's ADDED event reaching the second registration to the
 *                         reconcile starting (the informer's delivery excluded);
 *   - backlog: from start returning to every one of the N Pods reconciled once.
 * With the priority queue (the default) the initial-list keys are low priority and the probe,
 * a watch event, is next in line; without it (kc_controller_opts.no_priority_queue) it waits
 * behind whatever of the backlog is still queued. Runs alternate on / off (the order flips every
 * repeat), after one warm-up run of each mode that is not counted; medians over the repeats.
 * The probe is deleted after each run, so every run sees N Pods plus its own probe.
 * Target: create → reconcile ≤ 50 ms with the priority queue on, against roughly the backlog's
 * remaining time off.
 * Usage: bench_priority_queue [N=100000] [--repeat R=3] [--busy-us U=100]
 * Output: human text plus `BENCH <metric> <value> <unit>` lines.
 */
#include "core/internal.h"
#include "kcache/controller.h"
#include "kcache/server.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc_usage.h"
#include "server_child.h"

static const kc_gvr PODS = {"", "v1", "pods"};

#define WORKED_BEFORE_PROBE 1000

typedef struct run {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t busy_ns;
    const char *probe;   /* the probe Pod's name */
    size_t n;            /* seeded Pods */
    unsigned char *seen; /* per seeded Pod index */
    size_t distinct;     /* seeded Pods reconciled at least once */
    uint64_t reconciles;
    uint64_t t_all;   /* the last seeded Pod's first reconcile */
    uint64_t t_event; /* the probe's ADDED event at the second registration */
    uint64_t t_probe; /* the probe's reconcile start */
} run;

/* The seed names Pods web-7d9f8c6b5-<index, 5+ digits>. */
static long pod_index(const char *name)
{
    const char *dash = strrchr(name, '-');
    return dash && !strncmp(name, "web-", 4) ? strtol(dash + 1, NULL, 10) : -1;
}

static kc_reconcile_result busy(void *ud, const kc_reconcile_request *req, kc_cached_client *cc)
{
    (void)cc;
    run *r = ud;
    uint64_t t0 = kc__now_ns();
    pthread_mutex_lock(&r->mu);
    r->reconciles++;
    if (!r->t_probe && !strcmp(req->name, r->probe)) {
        r->t_probe = t0;
        pthread_cond_broadcast(&r->cv);
    }
    long i = pod_index(req->name);
    if (i >= 0 && (size_t)i < r->n && !r->seen[i]) {
        r->seen[i] = 1;
        if (++r->distinct == r->n) {
            r->t_all = kc__now_ns();
            pthread_cond_broadcast(&r->cv);
        }
    }
    if (r->reconciles == WORKED_BEFORE_PROBE)
        pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    while (kc__now_ns() - t0 < r->busy_ns) { /* the reconcile's work: a busy wait */
    }
    return (kc_reconcile_result){KC_RECONCILE_DONE, 0};
}

static void on_probe_add(void *ud, kc_obj *obj, bool initial)
{
    run *r = ud;
    if (initial || strcmp(kc_obj_name(obj), r->probe))
        return;
    pthread_mutex_lock(&r->mu);
    if (!r->t_event)
        r->t_event = kc__now_ns();
    pthread_mutex_unlock(&r->mu);
}

static void die(const char *what, const kc_error *e)
{
    fprintf(stderr, "bench_priority_queue: %s: %s\n", what, e->message ? e->message : "failed");
    exit(1);
}

/* Wait (bounded, 10 min) until cond holds, under r->mu. */
#define WAIT(r, cond)                                                                              \
    do {                                                                                           \
        uint64_t dl_ = kc__deadline_after_ms(600000);                                              \
        pthread_mutex_lock(&(r)->mu);                                                              \
        while (!(cond) && kc__cond_wait_until(&(r)->cv, &(r)->mu, dl_) == 0) {                     \
        }                                                                                          \
        bool ok_ = (cond);                                                                         \
        pthread_mutex_unlock(&(r)->mu);                                                            \
        if (!ok_) {                                                                                \
            fprintf(stderr, "bench_priority_queue: timed out waiting for %s\n", #cond);            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct result {
    double create_ms, event_ms, backlog_s;
} result;

static void create_probe(kc_client *client, const char *name)
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"default\"},\"spec\":{\"containers\":[{\"name\":\"c\","
             "\"image\":\"busybox\"}]}}",
             name);
    kc_error e = KC_ERROR_INIT;
    if (kc_client_create(client, &PODS, "default", body, strlen(body), NULL, NULL, &e) < 0)
        die("create the probe", &e);
}

static result one_run(kc_client *client, size_t n, uint64_t busy_ns, bool priority, int id)
{
    char probe[64];
    snprintf(probe, sizeof probe, "probe-%d", id);
    run r = {.busy_ns = busy_ns, .probe = probe, .n = n};
    pthread_mutex_init(&r.mu, NULL);
    kc__cond_init_monotonic(&r.cv);
    r.seen = calloc(n, 1);
    kc_controller_type pods = {.gvr = PODS, .kind = "Pod"};
    kc_controller_opts o = {.name = "bench",
                            .primary = &pods,
                            .primary_size = sizeof pods,
                            .reconcile = busy,
                            .ud = &r,
                            .max_concurrent_reconciles = 1,
                            .sync_timeout_ms = 600000,
                            .no_priority_queue = !priority};
    kc_controller *c = NULL;
    kc_error e = KC_ERROR_INIT;
    if (kc_controller_new(client, &o, &c, &e) || kc_controller_start(c, &e))
        die("controller", &e);
    uint64_t t_started = kc__now_ns();
    /* the probe's event, on the controller's own (shared) Pod informer */
    kc_informer *inf = NULL;
    kc_informer_reg *reg = NULL;
    kc_informer_handlers h = {.on_add_ex = on_probe_add, .ud = &r};
    if (kc_cache_get_informer(kc_controller_cache(c), &PODS, NULL, &inf, &e) ||
        kc_informer_add_handler(inf, &h, NULL, &reg, &e) ||
        kc_informer_reg_wait_synced(reg, 600000, &e))
        die("probe handler", &e);
    WAIT(&r, r.reconciles >= WORKED_BEFORE_PROBE);
    create_probe(client, probe);
    uint64_t t_created = kc__now_ns();
    WAIT(&r, r.t_probe != 0 && r.t_event != 0);
    WAIT(&r, r.distinct == n);
    /* signed: the controller's registration may see the event before the probe handler's */
    result res = {(double)(int64_t)(r.t_probe - t_created) / 1e6,
                  (double)(int64_t)(r.t_probe - r.t_event) / 1e6,
                  (double)(r.t_all - t_started) / 1e9};
    kc_informer_remove_handler(inf, reg);
    kc_controller_free(c);
    if (kc_client_delete(client, &PODS, "default", probe, NULL, NULL, &e) < 0)
        die("delete the probe", &e);
    free(r.seen);
    pthread_cond_destroy(&r.cv);
    pthread_mutex_destroy(&r.mu);
    return res;
}

int main(int argc, char **argv)
{
    int n = 100000, repeat = 3, busy_us = 100;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--busy-us") && i + 1 < argc)
            busy_us = atoi(argv[++i]);
        else
            n = atoi(argv[i]);
    }
    if (n <= WORKED_BEFORE_PROBE || repeat < 1 || repeat > 20 || busy_us < 0) {
        fprintf(stderr, "usage: bench_priority_queue [N > %d] [--repeat R] [--busy-us U]\n",
                WORKED_BEFORE_PROBE);
        return 2;
    }
    child ch;
    if (child_start(&ch, n, 0) < 0)
        return 1;
    kc_config *cfg = NULL;
    kc_client *client = child_client(&ch, &cfg, "bench_priority_queue");
    if (!client)
        return 1;
    uint64_t busy_ns = (uint64_t)busy_us * 1000;
    int id = 0;
    for (int w = 0; w < 2; w++) { /* warm-up, one run of each mode, not counted */
        result x = one_run(client, (size_t)n, busy_ns, w == 0, id++);
        printf("warm-up (%s): create → reconcile %.1f ms, backlog %.2f s (not counted)\n",
               w == 0 ? "on" : "off", x.create_ms, x.backlog_s);
    }
    double c_on[20], e_on[20], b_on[20], c_off[20], e_off[20], b_off[20];
    for (int i = 0; i < repeat; i++) {
        for (int k = 0; k < 2; k++) {
            bool on = (i + k) % 2 == 0; /* on, off; then off, on; … */
            result x = one_run(client, (size_t)n, busy_ns, on, id++);
            (on ? c_on : c_off)[i] = x.create_ms;
            (on ? e_on : e_off)[i] = x.event_ms;
            (on ? b_on : b_off)[i] = x.backlog_s;
            printf("run %d, priority queue %-3s: create → reconcile %9.1f ms, event → reconcile "
                   "%9.1f ms, backlog (start → all %d reconciled) %.2f s\n",
                   i + 1, on ? "on" : "off", x.create_ms, x.event_ms, n, x.backlog_s);
        }
    }
    printf("BENCH pq_on_create_to_reconcile %.1f ms\n", med(c_on, repeat));
    printf("BENCH pq_on_event_to_reconcile %.1f ms\n", med(e_on, repeat));
    printf("BENCH pq_off_create_to_reconcile %.1f ms\n", med(c_off, repeat));
    printf("BENCH pq_off_event_to_reconcile %.1f ms\n", med(e_off, repeat));
    printf("BENCH pq_on_backlog %.2f s\n", med(b_on, repeat));
    printf("BENCH pq_off_backlog %.2f s\n", med(b_off, repeat));
    kc_client_free(client);
    kc_config_unref(cfg);
    child_stop(&ch);
    return 0;
}
