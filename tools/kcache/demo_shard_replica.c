/*
 * demo_shard_replica.c — one replica of `kcache demo shards`, a process of its own (started by
 * the parent as `kcache demo shards --replica ID --url URL --dir DIR …`).
 *
 * It runs a kc_shard_coordinator (member and range Leases in the demo namespace) and a sharded
 * controller over the namespace's Pods (kc_controller_opts.coordinator): the controller's Pod
 * informer asks the server for the ranges this replica holds (shardSelector; filtered on the
 * client too when the server ignores it) and follows the coordinator as it gains or loses one. Its
 * reconcile reads the Pod from the cache and, unless the Pod's owner annotation already names this
 * replica, patches it to do so — after checking that the Pod's range is still held (spec A11): a
 * range lost meanwhile (drained, or its fence passed while the process was stopped) is a refusal,
 * counted, never a write.
 *
 * Evidence for the parent, written so that a SIGKILL loses nothing already done:
 *   DIR/replica-ID.log     one line per reconcile, "R ID KEY START_NS END_NS" (CLOCK_MONOTONIC,
 *                          which all processes of the machine share), appended with one write(2);
 *                          END is the reconcile's end or, when its range's fence had closed by
 *                          then, the latest fence deadline it saw (at its start, before and after
 *                          its write): its writes carry that fence, so past it nothing is sent;
 *   DIR/replica-ID.fence   "F RANGE VALID_UNTIL_NS AT_NS": each new write-fence deadline of a
 *                          held range, seen on the 100 ms tick (the --netns check reads it);
 *   DIR/replica-ID.status  every 100 ms (write + rename): held ranges, bytes received by the
 *                          controller's client (Pod list/watch and writes; the coordinator's
 *                          Lease traffic goes through a client of its own), reconciles, writes
 *                          and refusals.
 * SIGTERM stops it gracefully (the coordinator drains and releases every range, then the member
 * Lease).
 */
#include "demo_shards.h"

#include "kcache/controller.h"
#include "kcache/coordinator.h"
#include "kcache/shard.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const kc_gvr PODS = {"", "v1", "pods"};

typedef struct replica {
    unsigned id, pass, ranges;
    char ident[32], dir[400];
    int64_t ld_ms, rd_ms, rp_ms;
    kc_client *client; /* the controller's: Pod list/watch and writes (its bytes: the ingest) */
    kc_client *lease_client; /* the coordinator's Lease traffic, kept out of the ingest figure */
    kc_shard_coordinator *coord;
    kc_controller *ctrl;
    kc_informer *pods; /* the controller's Pod informer (borrowed from its cache) */
    int log_fd, fence_fd;
    uint64_t fence_logged[SHARDS_MAX_RANGES]; /* the last deadline written to the fence log */
    atomic_uint reconciles, writes, refused;
    pthread_mutex_t mu; /* held[] */
    bool held[SHARDS_MAX_RANGES];
} replica;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void log_reconcile(replica *r, const char *key, uint64_t t0, uint64_t t1)
{
    char line[512];
    int n = snprintf(line, sizeof line, "R %u %s %llu %llu\n", r->id, key, (unsigned long long)t0,
                     (unsigned long long)t1);
    if (n > 0 && (size_t)n < sizeof line && write(r->log_fd, line, (size_t)n) != n)
        fprintf(stderr, "replica %u: log write: %s\n", r->id, strerror(errno));
}

static bool owned_by_me(replica *r, kc_obj *pod)
{
    char *owner = NULL;
    bool mine = kc_obj_get_string(pod, "/metadata/annotations/demo.kcache.io~1owner", &owner, NULL,
                                  NULL) == 0 &&
                owner && strcmp(owner, r->ident) == 0;
    free(owner);
    return mine;
}

static kc_reconcile_result reconcile(void *ud, const kc_reconcile_request *req,
                                     kc_cached_client *cc)
{
    replica *r = ud;
    uint64_t t0 = mono_ns(), vu = kc_fence_valid_until(req->fence); /* the fence, sampled */
    kc_reconcile_result res = {KC_RECONCILE_DONE, 0};
    kc_obj *pod = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_cached_client_get(cc, &PODS, req->ns, req->name, NULL, &pod, &err);
    if (rc == 0 && !owned_by_me(r, pod)) {
        const char *uid = kc_obj_uid(pod);
        uint32_t range =
            kc_shard_coordinator_range_of(r->coord, kc_shard_hash(uid, uid ? strlen(uid) : 0));
        if (!kc_shard_coordinator_holds(r->coord, range)) {
            atomic_fetch_add(&r->refused, 1); /* A11: not ours (any more): never write */
        } else {
            char body[160];
            int n = snprintf(body, sizeof body,
                             "{\"metadata\":{\"annotations\":{\"" SHARDS_OWNER_ANNOT "\":\"%s\"}}}",
                             r->ident);
            kc_error_clear(&err);
            /* the range's fence: a pause between the check above and the send cannot make
             * this a stale write (KC_EFENCED, nothing sent) */
            kc_cached_call_opts call = {.fence = req->fence};
            uint64_t v = kc_fence_valid_until(req->fence);
            vu = v > vu ? v : vu;
            rc = kc_cached_client_patch(cc, &PODS, req->ns, req->name, KC_PATCH_MERGE, body,
                                        (size_t)n, NULL, &call, NULL, &err);
            v = kc_fence_valid_until(req->fence);
            vu = v > vu ? v : vu;
            if (rc == 0)
                atomic_fetch_add(&r->writes, 1);
            else if (rc == KC_EFENCED)
                atomic_fetch_add(&r->refused, 1);
            else if (rc != KC_ENOTFOUND)
                res.code = KC_RECONCILE_ERROR;
        }
    } else if (rc < 0 && rc != KC_ENOTFOUND) {
        res.code = KC_RECONCILE_ERROR;
    }
    kc_obj_unref(pod);
    kc_error_clear(&err);
    atomic_fetch_add(&r->reconciles, 1);
    /* P4 is about acting on a key: the interval ends when the reconcile ends or when its range's
     * fence passed, whichever is first — past the fence its writes are refused (a process
     * stopped mid-reconcile resumes after it with no authority left). */
    uint64_t t1 = mono_ns();
    bool valid = kc_fence_valid(req->fence); /* still: it acted until its end */
    log_reconcile(r, req->key, t0, valid || vu >= t1 ? t1 : vu > t0 ? vu : t0);
    return res;
}

/* ---- the held ranges, for the status file -------------------------------------------------- */

static void on_range(void *ud, uint32_t range, const kc_shard_range *bounds, bool gained)
{
    (void)bounds;
    replica *r = ud;
    pthread_mutex_lock(&r->mu);
    if (range < SHARDS_MAX_RANGES)
        r->held[range] = gained;
    pthread_mutex_unlock(&r->mu);
}

static void on_gained(void *ud, uint32_t range, const kc_shard_range *bounds)
{
    on_range(ud, range, bounds, true);
}

static void on_lost(void *ud, uint32_t range, const kc_shard_range *bounds)
{
    on_range(ud, range, bounds, false);
}

/* Appends each range's fence deadline when it changed since the last tick. */
static void log_fences(replica *r)
{
    uint64_t now = mono_ns();
    for (uint32_t i = 0; i < r->ranges; i++) {
        uint64_t v = kc_fence_valid_until(kc_shard_coordinator_fence(r->coord, i));
        if (!v || v == r->fence_logged[i])
            continue;
        r->fence_logged[i] = v;
        char line[96];
        int n = snprintf(line, sizeof line, "F %u %llu %llu\n", i, (unsigned long long)v,
                         (unsigned long long)now);
        if (write(r->fence_fd, line, (size_t)n) != n)
            fprintf(stderr, "replica %u: fence log write: %s\n", r->id, strerror(errno));
    }
}

static void write_status(replica *r)
{
    log_fences(r);
    char tmp[480], path[480];
    snprintf(path, sizeof path, "%s/replica-%u.status", r->dir, r->id);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    kc_client_stats cs;
    kc_client_get_stats(r->client, &cs);
    kc_informer_status is;
    kc_informer_get_status(r->pods, &is);
    fprintf(f,
            "bytes %llu\nreconciles %u\nwrites %u\nrefused %u\nrelists %llu\nevents %llu\n"
            "objects %llu\nheld",
            (unsigned long long)cs.bytes_received, atomic_load(&r->reconciles),
            atomic_load(&r->writes), atomic_load(&r->refused), (unsigned long long)is.relists,
            (unsigned long long)is.events_applied, (unsigned long long)is.objects);
    pthread_mutex_lock(&r->mu);
    for (uint32_t i = 0; i < r->ranges; i++)
        if (r->held[i])
            fprintf(f, " %u", i);
    pthread_mutex_unlock(&r->mu);
    fputc('\n', f);
    if (fclose(f) == 0)
        rename(tmp, path);
}

/* ---- set-up ---------------------------------------------------------------------------------- */

static int start_replica(replica *r, const char *url, kc_error *err)
{
    kc_config *cfg = NULL;
    int rc = kc_config_from_url(url, NULL, NULL, &cfg, err);
    kc_client_opts co = {.qps = -1};
    if (rc == 0)
        rc = kc_client_new(cfg, &co, &r->client, err);
    if (rc == 0)
        rc = kc_client_new(cfg, &co, &r->lease_client, err);
    kc_config_unref(cfg);
    if (rc < 0)
        return rc;
    kc_shard_coordinator_opts so = {.ns = SHARDS_NS,
                                    .prefix = SHARDS_PREFIX,
                                    .identity = r->ident,
                                    .ranges = r->ranges,
                                    .lease_duration_ms = r->ld_ms,
                                    .renew_deadline_ms = r->rd_ms,
                                    .retry_period_ms = r->rp_ms,
                                    .on_gained = on_gained,
                                    .on_lost = on_lost,
                                    .ud = r};
    if ((rc = kc_shard_coordinator_new(r->lease_client, &so, &r->coord, err)) < 0)
        return rc;
    /* The controller shards its Pod informer on uid and makes it follow the held ranges (none
     * at first). */
    kc_informer_opts io = {.ns = SHARDS_NS};
    kc_controller_type primary = {
        .gvr = PODS, .kind = "Pod", .informer = &io, .informer_size = sizeof io};
    kc_controller_opts o = {.name = "demo-shards",
                            .primary = &primary,
                            .primary_size = sizeof primary,
                            .reconcile = reconcile,
                            .ud = r,
                            .max_concurrent_reconciles = 4,
                            .coordinator = r->coord};
    if ((rc = kc_controller_new(r->client, &o, &r->ctrl, err)) < 0 ||
        (rc = kc_shard_coordinator_start(r->coord, err)) < 0 ||
        (rc = kc_controller_start(r->ctrl, err)) < 0)
        return rc;
    kc_cache *cache = kc_controller_cache(r->ctrl);
    for (size_t i = 0; i < kc_cache_informer_count(cache); i++)
        r->pods = kc_cache_informer_at(cache, i);
    return 0;
}

static bool parse_u(const char *s, unsigned long max, unsigned long *ret)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || errno || v > max)
        return false;
    *ret = v;
    return true;
}

/* --replica ID --pass P --url URL --dir DIR --ranges K --ld MS --rd MS --rp MS */
static int parse_args(int argc, char **argv, replica *r, const char **url)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        unsigned long u = 0;
        if (!strcmp(a, "--url"))
            *url = v;
        else if (!strcmp(a, "--dir"))
            snprintf(r->dir, sizeof r->dir, "%s", v);
        else if (!parse_u(v, 1000000, &u))
            return -1;
        else if (!strcmp(a, "--replica"))
            r->id = (unsigned)u;
        else if (!strcmp(a, "--pass"))
            r->pass = (unsigned)u;
        else if (!strcmp(a, "--ranges"))
            r->ranges = (unsigned)u;
        else if (!strcmp(a, "--ld"))
            r->ld_ms = (int64_t)u;
        else if (!strcmp(a, "--rd"))
            r->rd_ms = (int64_t)u;
        else if (!strcmp(a, "--rp"))
            r->rp_ms = (int64_t)u;
        else
            return -1;
    }
    return *url && r->dir[0] && r->ranges && r->ranges <= SHARDS_MAX_RANGES ? 0 : -1;
}

int demo_shard_replica_main(int argc, char **argv)
{
    static replica r; /* large (held[]); one per process */
    const char *url = NULL;
    if (parse_args(argc, argv, &r, &url) < 0) {
        fprintf(stderr, "kcache demo shards: bad replica arguments\n");
        return 2;
    }
    snprintf(r.ident, sizeof r.ident, "p%u-replica-%u", r.pass, r.id);
    pthread_mutex_init(&r.mu, NULL);
    char path[480];
    snprintf(path, sizeof path, "%s/replica-%u.log", r.dir, r.id);
    r.log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    snprintf(path, sizeof path, "%s/replica-%u.fence", r.dir, r.id);
    r.fence_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* before any thread: all inherit the mask */
    kc_error err = KC_ERROR_INIT;
    int rc = r.log_fd < 0 || r.fence_fd < 0 ? KC_EIO : start_replica(&r, url, &err);
    if (rc < 0) {
        fprintf(stderr, "kcache demo shards: replica %u: %s: %s\n", r.id, kc_strerror(rc),
                err.message ? err.message : "");
        return 1;
    }
    for (;;) {
        struct timespec tick = {0, 100 * 1000 * 1000};
        int sig = sigtimedwait(&set, NULL, &tick);
        if (sig == SIGTERM || sig == SIGINT)
            break;
        write_status(&r);
    }
    kc_shard_coordinator_stop(r.coord); /* drain, release every range, then the member Lease */
    write_status(&r);
    kc_controller_free(r.ctrl);
    kc_shard_coordinator_free(r.coord);
    kc_client_free(r.lease_client);
    kc_client_free(r.client);
    close(r.log_fd);
    close(r.fence_fd);
    return 0;
}
