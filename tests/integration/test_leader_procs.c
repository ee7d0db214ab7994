/*
 * test_leader_procs.c — leader election across processes (spec L4, L5, L7, L12a;
 * property P4 "no overlap"): this process hosts the API server on loopback; three helper_leader
 * processes run electors on one Lease (LD 600 ms, RD 400 ms, RP 100 ms) and log their leading
 * intervals [start, fence deadline) on CLOCK_MONOTONIC. The driver does 50 random actions —
 * SIGKILL (the process is restarted at once) or SIGSTOP for 150–900 ms then SIGCONT — and then
 * checks that no two intervals intersect and that some process led most of the time.
 *
 * An interval ends at its last logged fence deadline; a process signalled while leading may have
 * renewed after its last log line, so its interval is stretched to t_signal + RD, a bound on any
 * deadline it can have set (the renew was sent before the signal). The chaos pacing below is the
 * schedule of the faults, not synchronisation: every check reads the logs after the fact.
 */
#include "test_informer_fixture.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define N_PROCS   3
#define N_ACTIONS 50
#define RD_NS     (400 * KC__NS_PER_MS)
#define MAX_IV    4096
#define MAX_SIG   256

typedef struct iv {
    long pid;
    uint64_t start, end;
} iv;

typedef struct sigrec {
    long pid;
    uint64_t t;
} sigrec;

static char log_path[256];
static const char *url;
static pid_t procs[N_PROCS];
static sigrec sigs[MAX_SIG];
static size_t n_sigs;

static pid_t spawn(int slot)
{
    char bin[512], s[8];
    snprintf(bin, sizeof(bin), "%s/bin/helper_leader", KC_BINARY_DIR);
    snprintf(s, sizeof(s), "%d", slot);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execl(bin, bin, url, "procs", s, log_path, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void note_signal(pid_t pid)
{
    if (n_sigs < MAX_SIG)
        sigs[n_sigs++] = (sigrec){pid, kc__now_ns()};
}

/* One random fault on one random process. */
static void act(kc__rng *r)
{
    int i = (int)kc__rng_range(r, 0, N_PROCS - 1);
    if (kc__rng_range(r, 0, 1) == 0) {
        note_signal(procs[i]);
        kill(procs[i], SIGKILL);
        waitpid(procs[i], NULL, 0);
        procs[i] = spawn(i);
    } else {
        note_signal(procs[i]);
        kill(procs[i], SIGSTOP);
        kc__sleep_ns(kc__rng_range(r, 150, 900) * KC__NS_PER_MS); /* the fault's length */
        kill(procs[i], SIGCONT);
    }
    kc__sleep_ns(kc__rng_range(r, 50, 250) * KC__NS_PER_MS); /* pacing of the schedule */
}

static size_t find_iv(iv *ivs, size_t n, long pid, uint64_t start)
{
    for (size_t i = 0; i < n; i++)
        if (ivs[i].pid == pid && ivs[i].start == start)
            return i;
    return n;
}

static size_t read_intervals(iv *ivs)
{
    FILE *fp = fopen(log_path, "r");
    assert_non_null(fp);
    size_t n = 0;
    char kind;
    long pid;
    unsigned long long a, b;
    char line[256];
    while (fgets(line, sizeof(line), fp)) {
        int k = sscanf(line, "%c %ld %llu %llu", &kind, &pid, &a, &b);
        if (k < 3)
            continue;
        size_t j = find_iv(ivs, n, pid, a);
        if (j == n) {
            if (n == MAX_IV)
                continue;
            ivs[n++] = (iv){pid, a, a + RD_NS}; /* a bound of any deadline: t_send < start */
        }
        if (kind == 'V' && k == 4 && b > ivs[j].end)
            ivs[j].end = b;
    }
    fclose(fp);
    for (size_t i = 0; i < n; i++)
        for (size_t s = 0; s < n_sigs; s++)
            if (sigs[s].pid == ivs[i].pid && sigs[s].t >= ivs[i].start && sigs[s].t < ivs[i].end &&
                sigs[s].t + RD_NS > ivs[i].end)
                ivs[i].end = sigs[s].t + RD_NS;
    return n;
}

static int by_start(const void *a, const void *b)
{
    const iv *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* One process runs its elector's runs one after another: a run ends (fence closed) before the
 * next starts, so the t_signal + RD stretch of a run never goes past the next run's start of the
 * same process. (Sorted by start.) */
static void cap_same_process(iv *ivs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (ivs[j].pid == ivs[i].pid) {
                if (ivs[i].end > ivs[j].start)
                    ivs[i].end = ivs[j].start;
                break;
            }
}

/* Pairs of intersecting intervals (sorted by start), each printed. */
static size_t count_overlaps(const iv *ivs, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n && ivs[j].start < ivs[i].end; j++) {
            fprintf(stderr, "overlap: pid %ld [%llu, %llu) and pid %ld [%llu, %llu)\n", ivs[i].pid,
                    (unsigned long long)ivs[i].start, (unsigned long long)ivs[i].end, ivs[j].pid,
                    (unsigned long long)ivs[j].start, (unsigned long long)ivs[j].end);
            bad++;
        }
    return bad;
}

static void test_no_two_leaders(void **state)
{
    (void)state;
    ifx f;
    ifx_up(&f, NULL);
    url = kc_server_url(f.srv);
    snprintf(log_path, sizeof(log_path), "/tmp/kc_leader_procs_%ld.log", (long)getpid());
    unlink(log_path);
    for (int i = 0; i < N_PROCS; i++)
        procs[i] = spawn(i);
    kc__rng r;
    kc__rng_seed_auto(&r);
    kc__sleep_ns(1500 * KC__NS_PER_MS); /* let a first leader settle before the faults */
    uint64_t t0 = kc__now_ns();
    for (int a = 0; a < N_ACTIONS; a++)
        act(&r);
    uint64_t t1 = kc__now_ns();
    for (int i = 0; i < N_PROCS; i++) {
        kill(procs[i], SIGKILL);
        waitpid(procs[i], NULL, 0);
    }
    static iv ivs[MAX_IV];
    size_t n = read_intervals(ivs);
    qsort(ivs, n, sizeof(*ivs), by_start);
    assert_true(n >= 3); /* leadership moved around */
    cap_same_process(ivs, n);
    assert_int_equal(count_overlaps(ivs, n), 0);
    uint64_t covered = 0, reach = t0;
    for (size_t i = 0; i < n; i++) {
        uint64_t s = ivs[i].start > reach ? ivs[i].start : reach;
        uint64_t e = ivs[i].end < t1 ? ivs[i].end : t1;
        if (e > s)
            covered += e - s;
        if (e > reach)
            reach = e;
    }
    double share = (double)covered / (double)(t1 - t0);
    fprintf(stderr, "leader_procs: %zu intervals over %.1f s, a leader %.0f%% of the time\n", n,
            (double)(t1 - t0) / 1e9, share * 100);
    assert_true(share > 0.5);
    unlink(log_path);
    ifx_down(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_two_leaders),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
