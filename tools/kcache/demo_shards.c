/*
 * demo_shards.c — `kcache demo shards`, the parent: R replica processes of a sharded controller
 * (demo_shard_replica.c) over the embedded API server holding N Pods, with short lease timings,
 * and what it measures (docs/scale-out.md):
 *
 *   balanced_ms     replicas started → every range held by a live replica, each holding
 *                   floor(K/R) or ceil(K/R) (spec P1);
 *   converged_ms    → every Pod's owner annotation names the holder of its range (P2, P6);
 *   ingest_share    once converged, every Pod is updated once: the bytes each replica's client
 *                   received meanwhile ÷ those of one unsharded informer over the same Pods
 *                   (≈ 1/R when the server shards, ≈ 1 in the fallback);
 *   failover_ms     SIGKILL of one replica → all its ranges held by others (P5);
 *   stale writes    SIGSTOP of another past its lease, then SIGCONT: the server's own history
 *                   decides — a Pod write (its owner annotation changing, at resourceVersion w)
 *                   by a replica that was not the holder of the Pod's range Lease at w is stale;
 *                   counted over the whole pass (must be 0);
 *   overlap         the replicas' reconcile logs: one key reconciled by two replicas at once (P4,
 *                   must be 0); unowned: Pods whose owner is not their range's holder after
 *                   convergence (must be 0).
 * Then the same with the server ignoring shardSelector (fallback: the replicas filter on the
 * client; their ingest share is then ≈ 1).
 *
 *   netns cut       --netns: the last replica's veth down past its lease, then up
 *                   (demo_shard_netns.c): its ranges must be acquired by others only after its
 *                   write fence passed, and it must rejoin.
 *
 * The parent watches Leases and Pods through its own informers (demo_shard_watch.c); the embedded
 * server's resourceVersions are one counter over all resources, so "the holder at w" is the last
 * Lease change of that range with a smaller resourceVersion. Waiting: on the parent's caches,
 * polled every 20 ms against a deadline (these are measurements of a distributed system, not
 * tests).
 */

#include "cli.h"
#include "demo_shards_ctx.h"

#include "kcache/cache.h"
#include "kcache/server.h"
#include "kcache/shard.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const kc_gvr PODS = {"", "v1", "pods"};
static const kc_gvr NAMESPACES = {"", "v1", "namespaces"};

/* ---- replicas ------------------------------------------------------------------------------- */

static int spawn(shards_ctx *c, unsigned i)
{
    char id[16], ranges[16], ld[24], rd[24], rp[24], pass[16];
    snprintf(id, sizeof id, "%u", i);
    snprintf(pass, sizeof pass, "%u", c->pass);
    snprintf(ranges, sizeof ranges, "%u", c->o->ranges);
    snprintf(ld, sizeof ld, "%lld", (long long)c->o->ld_ms);
    snprintf(rd, sizeof rd, "%lld", (long long)c->o->rd_ms);
    snprintf(rp, sizeof rp, "%lld", (long long)c->o->rp_ms);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        char errpath[256];
        snprintf(errpath, sizeof errpath, "%s/replica-%u.err", c->pass_dir, i);
        /* the replica's log lines: a file of the run, or the parent's stderr when verbose */
        int fd = c->o->verbose ? -1 : open(errpath, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd >= 0)
            dup2(fd, STDERR_FILENO);
        if (c->netns.on && i == c->o->replicas - 1 && shards_netns_enter(&c->netns) < 0)
            _exit(126);
        char *argv[] = {"kcache", "demo", "shards", "--replica", id,         "--pass", pass,
                        "--url",  c->url, "--dir",  c->pass_dir, "--ranges", ranges,   "--ld",
                        ld,       "--rd", rd,       "--rp",      rp,         NULL};
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    c->pid[i] = pid;
    return 0;
}

static void reap(shards_ctx *c, unsigned i, int sig)
{
    if (c->pid[i] <= 0)
        return;
    kill(c->pid[i], sig);
    waitpid(c->pid[i], NULL, 0);
    c->pid[i] = 0;
}

/* Every range held by a live replica of this pass, each holding floor or ceil of K / live. */
static bool balanced(shards_ctx *c, const bool *live)
{
    unsigned n_live = 0, count[SHARDS_MAX_REPL] = {0};
    for (unsigned i = 0; i < c->o->replicas; i++)
        n_live += live[i];
    if (!n_live)
        return false;
    bool ok = true;
    pthread_mutex_lock(&c->mu);
    for (unsigned r = 0; r < c->o->ranges && ok; r++) {
        int h = c->holder[r];
        ok = h >= 0 && live[h];
        if (ok)
            count[h]++;
    }
    pthread_mutex_unlock(&c->mu);
    unsigned lo = c->o->ranges / n_live, hi = (c->o->ranges + n_live - 1) / n_live;
    for (unsigned i = 0; i < c->o->replicas && ok; i++)
        ok = !live[i] || (count[i] >= lo && count[i] <= hi);
    return ok;
}

static bool wait_balanced(shards_ctx *c, const bool *live, uint64_t t0, double *ret_ms)
{
    while (!balanced(c, live)) {
        if (ms_since(t0) > 60000)
            return false;
        pause_ms(20);
    }
    *ret_ms = ms_since(t0);
    return true;
}

/* Pods whose owner annotation does not name their range's current holder. */
static unsigned unowned(shards_ctx *c)
{
    kc_obj **v = NULL;
    size_t n = 0;
    if (kc_store_list(kc_informer_store(c->pods_inf), &v, &n, NULL) < 0)
        return c->o->objects;
    unsigned bad = 0;
    for (size_t i = 0; i < n; i++) {
        char *own = shards_owner_of(v[i]);
        int who = shards_who_of(c, own);
        pthread_mutex_lock(&c->mu);
        bad += who < 0 || c->holder[shards_range_of(c, v[i])] != who;
        pthread_mutex_unlock(&c->mu);
        free(own);
    }
    kc_obj_array_free(v, n);
    return bad + (n < c->o->objects ? c->o->objects - (unsigned)n : 0);
}

static bool wait_converged(shards_ctx *c, uint64_t t0, double *ret_ms, unsigned *ret_unowned)
{
    unsigned bad;
    while ((bad = unowned(c)) > 0 && ms_since(t0) < 90000)
        pause_ms(50);
    *ret_ms = ms_since(t0);
    *ret_unowned = bad;
    return bad == 0;
}

/* Ranges held by replica i now. */
static unsigned held_by(shards_ctx *c, int i, bool *ret_held)
{
    unsigned n = 0;
    pthread_mutex_lock(&c->mu);
    for (unsigned r = 0; r < c->o->ranges; r++) {
        ret_held[r] = c->holder[r] == i;
        n += ret_held[r];
    }
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* Wait until none of the ranges in was[] is held by i any more (re-owned by another). */
static bool wait_reowned(shards_ctx *c, int i, const bool *was, uint64_t t0, double *ret_ms)
{
    for (;;) {
        bool done = true;
        pthread_mutex_lock(&c->mu);
        for (unsigned r = 0; r < c->o->ranges && done; r++)
            done = !was[r] || (c->holder[r] >= 0 && c->holder[r] != i);
        pthread_mutex_unlock(&c->mu);
        if (done) {
            *ret_ms = ms_since(t0);
            return true;
        }
        if (ms_since(t0) > 60000)
            return false;
        pause_ms(5);
    }
}

/* A replica's status file: bytes received and refusals. */
static bool read_status(const shards_ctx *c, unsigned i, uint64_t *bytes, unsigned *refused)
{
    char path[256], key[32];
    snprintf(path, sizeof path, "%s/replica-%u.status", c->pass_dir, i);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    unsigned long long v;
    while (fscanf(f, "%31s %llu", key, &v) == 2) {
        if (!strcmp(key, "bytes"))
            *bytes = v;
        else if (!strcmp(key, "refused"))
            *refused += (unsigned)v;
    }
    fclose(f);
    return true;
}

/* The reference of the ingest shares: one unsharded Pod informer on its own client, running
 * through the pass. */
typedef struct ref_inf {
    kc_config *cfg;
    kc_client *client;
    kc_cache *cache;
    kc_informer *inf;
} ref_inf;

static int ref_start(shards_ctx *c, ref_inf *r, kc_error *err)
{
    kc_informer_opts io = {.ns = SHARDS_NS};
    kc_client_opts co = {.qps = -1};
    int rc = kc_config_from_url(c->url, NULL, NULL, &r->cfg, err);
    if (rc == 0)
        rc = kc_client_new(r->cfg, &co, &r->client, err);
    if (rc == 0)
        rc = kc_cache_new(r->client, NULL, &r->cache, err);
    if (rc == 0)
        rc = kc_cache_get_informer(r->cache, &PODS, &io, &r->inf, err);
    if (rc == 0)
        rc = kc_cache_wait_synced(r->cache, 60000, err);
    return rc;
}

static void ref_stop(ref_inf *r)
{
    kc_cache_free(r->cache);
    kc_client_free(r->client);
    kc_config_unref(r->cfg);
    memset(r, 0, sizeof *r);
}

static uint64_t client_bytes(kc_client *cl)
{
    kc_client_stats st;
    kc_client_get_stats(cl, &st);
    return st.bytes_received;
}

/* Every replica's bytes (from its status file) into b; the sum. */
static uint64_t replica_bytes(const shards_ctx *c, uint64_t *b)
{
    uint64_t sum = 0;
    for (unsigned i = 0; i < c->o->replicas; i++) {
        unsigned refused = 0;
        b[i] = 0;
        read_status(c, i, &b[i], &refused);
        sum += b[i];
    }
    return sum;
}

/* Wait until the replicas' byte counts stop moving (two status periods alike). */
static void replicas_quiet(const shards_ctx *c, uint64_t *b)
{
    uint64_t last = UINT64_MAX, now;
    for (int i = 0; i < 100 && (now = replica_bytes(c, b)) != last; i++) {
        last = now;
        pause_ms(300);
    }
}

typedef struct touch_job {
    kc_client *client;
    kc_obj **pods;
    size_t n;
    unsigned pass;
    atomic_size_t next;
} touch_job;

static void *toucher(void *arg)
{
    touch_job *j = arg;
    char body[128];
    int len = snprintf(body, sizeof body,
                       "{\"metadata\":{\"labels\":{\"demo.kcache.io/touched\":\"%u\"}}}", j->pass);
    for (size_t i; (i = atomic_fetch_add(&j->next, 1)) < j->n;)
        kc_client_patch(j->client, &PODS, SHARDS_NS, kc_obj_name(j->pods[i]), KC_PATCH_MERGE, body,
                        (size_t)len, NULL, NULL, NULL);
    return NULL;
}

/* --verbose: every replica's status file on stderr. */
static void dump_status(const shards_ctx *c)
{
    for (unsigned i = 0; c->o->verbose && i < c->o->replicas; i++) {
        char path[256], line[256];
        snprintf(path, sizeof path, "%s/replica-%u.status", c->pass_dir, i);
        FILE *f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f))
            fprintf(stderr, "replica %u: %s", i, line);
        if (f)
            fclose(f);
    }
}

/* Steady-state ingest (spec: bytes received per replica ≈ 1/R of the unsharded informer): every
 * Pod is updated once; each replica's bytes over that window ÷ the reference informer's. */
static void ingest(shards_ctx *c, shards_pass *p, ref_inf *ref)
{
    uint64_t b0[SHARDS_MAX_REPL], b1[SHARDS_MAX_REPL];
    replicas_quiet(c, b0);
    uint64_t r0 = client_bytes(ref->client);
    if (c->o->verbose)
        fprintf(stderr, "pass %u: touch window begins\n", c->pass);
    dump_status(c);
    touch_job j = {.client = c->client, .pass = c->pass};
    if (kc_store_list(kc_informer_store(ref->inf), &j.pods, &j.n, NULL) < 0)
        return;
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, toucher, &j);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    size_t touched = j.n;
    kc_obj_array_free(j.pods, j.n);
    j.n = touched;
    pause_ms(300);
    replicas_quiet(c, b1);
    uint64_t r1 = client_bytes(ref->client);
    dump_status(c);
    if (c->o->verbose)
        fprintf(stderr, "pass %u: the unsharded informer: %llu bytes for %zu Pods touched\n",
                c->pass, (unsigned long long)(r1 - r0), j.n);
    if (r1 <= r0)
        return;
    for (unsigned i = 0; i < c->o->replicas; i++) {
        p->ingest_share[i] = (double)(b1[i] - b0[i]) / (double)(r1 - r0);
        if (c->o->verbose)
            fprintf(stderr, "pass %u: replica %u: %llu bytes in the touch window, share %.3f\n",
                    c->pass, i, (unsigned long long)(b1[i] - b0[i]), p->ingest_share[i]);
        if (p->ingest_share[i] > p->ingest_share_max)
            p->ingest_share_max = p->ingest_share[i];
    }
}

/* --netns: the last replica's link down until its ranges are held by others (+ 2 retry periods),
 * then up; it must rejoin to a balanced assignment. */
static bool cut(shards_ctx *c, shards_pass *p, bool *live)
{
    shards_cut *w = &p->cut;
    unsigned x = c->o->replicas - 1;
    w->ran = true;
    w->replica = x;
    held_by(c, (int)x, w->held);
    pthread_mutex_lock(&c->mu);
    memset(c->first_acq, 0, sizeof c->first_acq);
    c->cut_who = (int)x;
    c->cut_t = w->t_cut = now_ns();
    pthread_mutex_unlock(&c->mu);
    if (c->o->verbose)
        fprintf(stderr, "pass %u: replica %u's link down\n", c->pass, x);
    bool ok = shards_netns_link(&c->netns, false);
    live[x] = false;
    ok = ok && wait_reowned(c, (int)x, w->held, w->t_cut, &w->takeover_ms);
    pause_ms((unsigned)c->o->rp_ms * 2);
    w->t_restore = now_ns();
    ok = shards_netns_link(&c->netns, true) && ok;
    live[x] = true;
    ok = ok && wait_balanced(c, live, w->t_restore, &w->rejoin_ms);
    pthread_mutex_lock(&c->mu);
    memcpy(w->acq, c->first_acq, sizeof w->acq);
    c->cut_t = 0;
    pthread_mutex_unlock(&c->mu);
    return ok;
}

/* Kill one replica, time the takeover, restart it; pause another past its lease, resume it. */
static bool faults(shards_ctx *c, shards_pass *p, bool *live)
{
    bool was[SHARDS_MAX_RANGES];
    double ms;
    unsigned victim = 0, paused = c->o->replicas > 1 ? 1 : 0;
    held_by(c, (int)victim, was);
    uint64_t t = now_ns();
    reap(c, victim, SIGKILL);
    live[victim] = false;
    if (!wait_reowned(c, (int)victim, was, t, &p->failover_ms) || !wait_balanced(c, live, t, &ms))
        return false;
    if (spawn(c, victim) < 0)
        return false;
    live[victim] = true;
    if (!wait_balanced(c, live, now_ns(), &ms))
        return false;
    held_by(c, (int)paused, was);
    kill(c->pid[paused], SIGSTOP);
    live[paused] = false;
    t = now_ns();
    bool ok = wait_reowned(c, (int)paused, was, t, &ms);
    pause_ms((unsigned)c->o->rp_ms * 2); /* stay stopped a little past the takeover */
    kill(c->pid[paused], SIGCONT);
    live[paused] = true;
    ok = ok && wait_balanced(c, live, now_ns(), &ms);
    return ok && (!c->netns.on || cut(c, p, live));
}

static int run_pass(shards_ctx *c, shards_pass *p, kc_error *err)
{
    snprintf(c->pass_dir, sizeof c->pass_dir, "%s/pass-%u", c->dir, c->pass);
    if (mkdir(c->pass_dir, 0700) < 0)
        return kc_error_set(err, KC_EIO, "mkdir %s: %s", c->pass_dir, strerror(errno));
    bool live[SHARDS_MAX_REPL] = {false};
    uint64_t t0 = now_ns();
    for (unsigned i = 0; i < c->o->replicas; i++) {
        if (spawn(c, i) < 0)
            return kc_error_set(err, KC_EIO, "fork: %s", strerror(errno));
        live[i] = true;
    }
    p->ran = true;
    int rc = 0;
    if (!wait_balanced(c, live, t0, &p->balanced_ms))
        rc = kc_error_set(err, KC_ETIMEOUT, "pass %u: no balanced assignment within 60 s", c->pass);
    if (rc == 0 && !wait_converged(c, t0, &p->converged_ms, &p->unowned_after_converge))
        rc = kc_error_set(err, KC_ETIMEOUT, "pass %u: %u Pods not owned by their range's holder",
                          c->pass, p->unowned_after_converge);
    ref_inf ref = {0};
    if (rc == 0 && (rc = ref_start(c, &ref, err)) == 0)
        ingest(c, p, &ref);
    ref_stop(&ref);
    if (rc == 0 && !faults(c, p, live))
        rc = kc_error_set(err, KC_ETIMEOUT, "pass %u: no recovery after a kill or pause", c->pass);
    if (rc == 0)
        wait_converged(c, now_ns(), &(double){0}, &p->unowned_after_converge);
    for (unsigned i = 0; i < c->o->replicas; i++) {
        uint64_t b = 0;
        read_status(c, i, &b, &p->fenced_refusals);
        reap(c, i, SIGTERM);
    }
    p->stale_leader_writes = shards_stale_writes(c);
    p->overlap_violations = shards_check_overlap(c->pass_dir, c->o->replicas, &p->reconciles,
                                                 c->o->verbose ? stderr : NULL);
    if (p->cut.ran)
        p->cut.late =
            shards_check_cut(c->pass_dir, &p->cut, c->o->ranges, c->o->verbose ? stderr : NULL);
    return rc;
}

/* A new pass: its replicas are new identities; the history restarts from the current holders. */
static void pass_begin(shards_ctx *c, unsigned pass)
{
    pthread_mutex_lock(&c->mu);
    c->pass = pass;
    c->n_leases = c->n_writes = 0;
    for (unsigned r = 0; r < c->o->ranges; r++) {
        c->holder[r] = c->holder[r] == -1 ? -1 : -2;
        shards_push(&c->leases, &c->n_leases, &c->cap_leases, (hist_ev){0, r, c->holder[r]});
    }
    pthread_mutex_unlock(&c->mu);
}

static int setup(shards_ctx *c, kc_error *err)
{
    char seed[64];
    snprintf(seed, sizeof seed, "pods=%u:ns=" SHARDS_NS, c->o->objects);
    kc_server_opts so = {.listen = "127.0.0.1:0", .quiet = true, .seed_spec = seed};
    char listen[48];
    if (c->o->netns) { /* the server on the veth's host end: reachable from both sides */
        int nrc = shards_netns_setup(&c->netns, err);
        if (nrc < 0)
            return nrc;
        snprintf(listen, sizeof listen, "%s:0", c->netns.host_ip);
        so.listen = listen;
    }
    kc_config *cfg = NULL;
    kc_client_opts co = {.qps = -1};
    int rc = kc_server_new(&so, &c->srv, err);
    if (rc == 0)
        rc = kc_server_start(c->srv, err);
    if (rc == 0) {
        snprintf(c->url, sizeof c->url, "%s", kc_server_url(c->srv));
        rc = kc_config_from_url(c->url, NULL, NULL, &cfg, err);
    }
    if (rc == 0)
        rc = kc_client_new(cfg, &co, &c->client, err);
    kc_config_unref(cfg);
    static const char ns[] = "{\"metadata\":{\"name\":\"" SHARDS_NS "\"}}";
    if (rc == 0) {
        rc = kc_client_create(c->client, &NAMESPACES, NULL, ns, sizeof ns - 1, NULL, NULL, err);
        if (rc == KC_EEXISTS) {
            kc_error_clear(err);
            rc = 0;
        }
    }
    for (unsigned r = 0; r < SHARDS_MAX_RANGES; r++)
        c->holder[r] = -1;
    snprintf(c->dir, sizeof c->dir, "/tmp/kcache-shards-XXXXXX"); /* mkdtemp's template */
    if (rc == 0 && !(c->dir_made = mkdtemp(c->dir) != NULL))
        rc = kc_error_set(err, KC_EIO, "mkdtemp: %s", strerror(errno));
    if (rc == 0)
        rc = shards_watch_start(c, err);
    return rc;
}

static void remove_dir(const char *dir, unsigned replicas)
{
    char path[320];
    for (unsigned pass = 1; pass <= 2; pass++) {
        for (unsigned i = 0; i < replicas; i++)
            for (int k = 0; k < 4; k++) {
                static const char *const ext[] = {"log", "status", "err", "fence"};
                snprintf(path, sizeof path, "%s/pass-%u/replica-%u.%s", dir, pass, i, ext[k]);
                unlink(path);
            }
        snprintf(path, sizeof path, "%s/pass-%u", dir, pass);
        rmdir(path);
    }
    rmdir(dir);
}

int demo_shards_run(const shards_opts *o, shards_result *ret, kc_error *err)
{
    memset(ret, 0, sizeof *ret);
    ret->replicas = o->replicas;
    ret->objects = o->objects;
    ret->ranges = o->ranges;
    ret->lease_duration_ms = o->ld_ms;
    ret->fallback_decode_cpu_ratio = ret->fallback_list_decode_cpu_ratio = -1;
    static shards_ctx c; /* one run per process */
    memset(&c, 0, sizeof c);
    c.o = o;
    pthread_mutex_init(&c.mu, NULL);
    int rc = setup(&c, err);
    if (rc == 0) {
        pass_begin(&c, 1);
        rc = run_pass(&c, &ret->on, err);
    }
    if (rc == 0 && o->fallback) {
        kc_server_set_shard_selector_ignored(c.srv, true);
        pass_begin(&c, 2);
        rc = run_pass(&c, &ret->off, err);
    }
    for (unsigned i = 0; i < o->replicas; i++)
        reap(&c, i, SIGKILL);
    if (rc == 0 && o->fallback) /* after the replicas: this process has the cores to itself */
        shards_fallback_cpu(c.client, &ret->fallback_decode_cpu_ratio,
                            &ret->fallback_list_decode_cpu_ratio);
    kc_cache_free(c.watch);
    kc_client_free(c.client);
    kc_server_free(c.srv);
    shards_netns_teardown(&c.netns);
    if (c.dir_made)
        remove_dir(c.dir, o->replicas);
    free(c.leases);
    free(c.writes);
    pthread_mutex_destroy(&c.mu);
    return rc;
}
