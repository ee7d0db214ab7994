/*
 * helper_leader — one replica for test_leader_procs: runs a kc_leader_elector
 * (LD 600 ms, RD 400 ms, RP 100 ms) on one Lease and logs its leading intervals, on
 * CLOCK_MONOTONIC (shared by every process of the machine), to a file opened O_APPEND (each line
 * one write, so lines of several processes never interleave):
 *   S <pid> <start_ns>                 on_started_leading ran (the fence had just opened)
 *   V <pid> <start_ns> <valid_until>   the fence deadline moved (polled every 2 ms)
 * An interval ends at its last fence deadline, not when the process notices the loss. When a run
 * ends (loss) a new one is started at once, as a restarted process would. Public headers only,
 * linked with the shared libkcache as a user's program is.
 *
 *   helper_leader URL LEASE SLOT LOGFILE
 *
 * Runs until killed. Exit status 2 when the set-up failed. alarm(120) bounds a forgotten child.
 */
#include <kcache/fence.h>
#include <kcache/leader.h>

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int log_fd = -1;
static _Atomic uint64_t start_ns; /* 0 while not leading */
static atomic_bool run_ended;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void log_line(const char *line)
{
    ssize_t n = write(log_fd, line, strlen(line));
    (void)n;
}

static void on_started(void *ud, kc_leader_elector *el)
{
    (void)ud;
    uint64_t now = mono_ns();
    char line[128];
    snprintf(line, sizeof(line), "S %ld %llu\n", (long)getpid(), (unsigned long long)now);
    log_line(line);
    uint64_t v = kc_fence_valid_until(kc_leader_elector_fence(el));
    snprintf(line, sizeof(line), "V %ld %llu %llu\n", (long)getpid(), (unsigned long long)now,
             (unsigned long long)v);
    log_line(line);
    atomic_store(&start_ns, now);
}

static void on_stopped(void *ud, kc_leader_elector *el)
{
    (void)ud, (void)el;
    atomic_store(&run_ended, true);
}

int main(int argc, char **argv)
{
    if (argc != 5)
        return 2;
    alarm(120);
    log_fd = open(argv[4], O_WRONLY | O_APPEND | O_CREAT, 0644);
    kc_config *cfg = NULL;
    kc_client *client = NULL;
    kc_leader_elector *el = NULL;
    kc_error e = KC_ERROR_INIT;
    char id[64];
    snprintf(id, sizeof(id), "slot%s_%ld", argv[3], (long)getpid());
    kc_client_opts co = {.qps = -1, .request_timeout_ms = 200};
    kc_leader_elector_opts o = {.ns = "default",
                                .name = argv[2],
                                .identity = id,
                                .lease_duration_ms = 600,
                                .renew_deadline_ms = 400,
                                .retry_period_ms = 100,
                                .on_started_leading = on_started,
                                .on_stopped_leading = on_stopped};
    if (log_fd < 0 || kc_config_from_url(argv[1], NULL, NULL, &cfg, &e) < 0 ||
        kc_client_new(cfg, &co, &client, &e) < 0 ||
        kc_leader_elector_new(client, &o, &el, &e) < 0 || kc_leader_elector_start(el, &e) < 0) {
        fprintf(stderr, "helper_leader: set-up: %s\n", e.message ? e.message : "?");
        return 2;
    }
    kc_fence *fence = kc_leader_elector_fence(el);
    uint64_t last = 0;
    for (;;) {
        uint64_t s = atomic_load(&start_ns);
        uint64_t v = kc_fence_valid_until(fence);
        if (s && v && v != last) {
            char line[128];
            snprintf(line, sizeof(line), "V %ld %llu %llu\n", (long)getpid(), (unsigned long long)s,
                     (unsigned long long)v);
            log_line(line);
            last = v;
        }
        if (atomic_load(&run_ended)) {
            atomic_store(&start_ns, 0);
            atomic_store(&run_ended, false);
            if (kc_leader_elector_start(el, &e) < 0)
                return 3;
        }
        struct timespec ts = {0, 2000000}; /* a poll of the fence: the log's resolution */
        nanosleep(&ts, NULL);
    }
}
