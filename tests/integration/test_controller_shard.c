/*
 * Integration tests of kc_shard_coordinator and a sharded kc_controller against the embedded API
 * server (spec §5.3–5.4: A8–A13, A15, P1, P2, P4, P5), with short timings: LD 1 s (a Lease stores
 * whole seconds), RD 600 ms, RP 100 ms, K = 16 ranges, 3–4 replicas in one process, each with its
 * own kc_client, coordinator and controller over ConfigMaps in "default".
 *
 * Every reconcile is logged (replica, key, [start, end) on CLOCK_MONOTONIC, shared by all
 * replicas) and takes 5 ms of simulated work, so overlaps would show. Waits are on conditions
 * with deadlines: the recorder's condition variable, or a bounded poll of the coordinators' state
 * (which no callback exposes), never a sleep used as synchronisation. The failover bounds get a
 * generous absolute slack for a loaded machine (ε below) and the measured times are printed.
 */
#include "coordinator/internal.h"
#include "test_informer_fixture.h"

#include "kcache/controller.h"

#include <pthread.h>

#define K      16
#define LD_MS  1000
#define RD_MS  600
#define RP_MS  100
#define EPS_MS 1500 /* API latency and scheduling on a shared 2-core machine */
#define NREP   4
#define NCM    40
#define LOGMAX 20000

typedef struct slog {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t n;
    struct {
        int rep;
        char key[64];
        uint64_t start, end;
    } e[LOGMAX];
} slog;

typedef struct replica {
    int id;
    slog *log;
    kc_config *cfg;
    kc_client *client;
    kc_shard_coordinator *coord;
    kc_controller *ctrl;
} replica;

typedef struct world {
    ifx f;
    slog log;
    replica rep[NREP];
    char uids[NCM][64];
} world;

static kc_reconcile_result rec(void *ud, const kc_reconcile_request *req, kc_cached_client *cc)
{
    (void)cc;
    replica *p = ud;
    slog *l = p->log;
    pthread_mutex_lock(&l->mu);
    size_t i = l->n < LOGMAX ? l->n++ : LOGMAX - 1;
    l->e[i].rep = p->id;
    snprintf(l->e[i].key, sizeof l->e[i].key, "%s", req->key);
    l->e[i].start = kc__now_ns();
    l->e[i].end = 0;
    pthread_mutex_unlock(&l->mu);
    kc__sleep_ns(5 * KC__NS_PER_MS); /* simulated work, not synchronisation */
    pthread_mutex_lock(&l->mu);
    l->e[i].end = kc__now_ns();
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    return (kc_reconcile_result){KC_RECONCILE_DONE, 0};
}

static const kc_controller_type cm_type = {.gvr = {"", "v1", "configmaps"}, .kind = "ConfigMap"};

static void rep_start(world *w, int i, uint32_t k)
{
    replica *p = &w->rep[i];
    p->id = i;
    p->log = &w->log;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_config_from_url(kc_server_url(w->f.srv), NULL, NULL, &p->cfg, &e), 0, &e);
    kc_client_opts co = {.qps = -1, .max_retries = -1};
    IFX_RC(kc_client_new(p->cfg, &co, &p->client, &e), 0, &e);
    char id[32];
    snprintf(id, sizeof id, "replica-%d", i);
    kc_shard_coordinator_opts so = {.ns = "default",
                                    .prefix = "demo",
                                    .identity = id,
                                    .ranges = k,
                                    .lease_duration_ms = LD_MS,
                                    .renew_deadline_ms = RD_MS,
                                    .retry_period_ms = RP_MS,
                                    .drain_timeout_ms = 5000};
    IFX_RC(kc_shard_coordinator_new(p->client, &so, &p->coord, &e), 0, &e);
    kc_controller_opts o = {.name = id,
                            .primary = &cm_type,
                            .primary_size = sizeof cm_type,
                            .reconcile = rec,
                            .ud = p,
                            .max_concurrent_reconciles = 2,
                            .sync_timeout_ms = 20000,
                            .coordinator = p->coord};
    IFX_RC(kc_controller_new(p->client, &o, &p->ctrl, &e), 0, &e);
    IFX_RC(kc_controller_start(p->ctrl, &e), 0, &e);
    IFX_RC(kc_shard_coordinator_start(p->coord, &e), 0, &e);
    kc_error_clear(&e);
}

/* Graceful (kill = false) or as a killed process: the coordinator stops renewing, releases
 * nothing; its controller stops (a dead process reconciles nothing). */
static void rep_stop(world *w, int i, bool kill)
{
    replica *p = &w->rep[i];
    if (!p->coord)
        return;
    if (kill)
        kc__shard_coordinator_kill(p->coord);
    kc_controller_stop(p->ctrl);
    if (!kill)
        assert_int_equal(kc_shard_coordinator_stop(p->coord), 0);
    kc_controller_free(p->ctrl);
    kc_shard_coordinator_free(p->coord);
    kc_client_free(p->client);
    kc_config_unref(p->cfg);
    memset(p, 0, sizeof(*p));
}

static void world_up(world *w)
{
    memset(w, 0, sizeof(*w));
    ifx_up(&w->f, NULL);
    pthread_mutex_init(&w->log.mu, NULL);
    kc__cond_init_monotonic(&w->log.cv);
    for (int i = 0; i < NCM; i++) {
        char name[32];
        snprintf(name, sizeof name, "cm-%02d", i);
        assert_int_equal(ifx_cm_create(&w->f, "default", name, "v0", NULL), 0);
        kc_obj *o = NULL;
        kc_error e = KC_ERROR_INIT;
        IFX_RC(kc_client_get(w->f.client, &ifx_cm, "default", name, &o, &e), 0, &e);
        snprintf(w->uids[i], sizeof w->uids[i], "%s", kc_obj_uid(o));
        kc_obj_unref(o);
    }
}

static void world_down(world *w)
{
    for (int i = 0; i < NREP; i++)
        rep_stop(w, i, false);
    pthread_cond_destroy(&w->log.cv);
    pthread_mutex_destroy(&w->log.mu);
    ifx_down(&w->f);
}

/* Live replicas' holdings: every range held by exactly one, each at floor or ceil (P1). */
static bool balanced(world *w)
{
    int n = 0;
    for (int i = 0; i < NREP; i++)
        n += w->rep[i].coord != NULL;
    unsigned lo = K / (unsigned)n, hi = lo + (K % n ? 1 : 0);
    for (uint32_t r = 0; r < K; r++) {
        int owners = 0;
        for (int i = 0; i < NREP; i++)
            owners += w->rep[i].coord && kc_shard_coordinator_holds(w->rep[i].coord, r);
        if (owners != 1)
            return false;
    }
    for (int i = 0; i < NREP; i++) {
        if (!w->rep[i].coord)
            continue;
        kc_shard_coordinator_stats st;
        kc_shard_coordinator_get_stats(w->rep[i].coord, &st);
        if (st.held < lo || st.held > hi || st.draining)
            return false;
    }
    return true;
}

/* Every range held by some live replica. */
static bool covered(world *w)
{
    for (uint32_t r = 0; r < K; r++) {
        bool held = false;
        for (int i = 0; i < NREP; i++)
            held = held || (w->rep[i].coord && kc_shard_coordinator_holds(w->rep[i].coord, r));
        if (!held)
            return false;
    }
    return true;
}

/* Bounded poll of the coordinators' state (no callback reports "balanced"); ms taken or -1. */
static int64_t wait_for(world *w, bool (*pred)(world *), int64_t timeout_ms)
{
    uint64_t t0 = kc__now_ns(), dl = kc__deadline_after_ms(timeout_ms);
    while (!pred(w)) {
        if (kc__now_ns() >= dl)
            return -1;
        kc__sleep_ns(KC__NS_PER_MS); /* bounded poll of a condition */
    }
    return (int64_t)((kc__now_ns() - t0) / KC__NS_PER_MS);
}

/* P4: reconciles of one key by different replicas never overlap. */
static void check_no_overlap(world *w)
{
    slog *l = &w->log;
    pthread_mutex_lock(&l->mu);
    size_t n = l->n < LOGMAX ? l->n : LOGMAX;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            if (l->e[i].rep == l->e[j].rep || strcmp(l->e[i].key, l->e[j].key) != 0)
                continue;
            uint64_t ei = l->e[i].end ? l->e[i].end : UINT64_MAX;
            uint64_t ej = l->e[j].end ? l->e[j].end : UINT64_MAX;
            bool overlap = l->e[i].start < ej && l->e[j].start < ei;
            if (overlap)
                fprintf(stderr, "overlap: %s by %d and %d\n", l->e[i].key, l->e[i].rep,
                        l->e[j].rep);
            assert_false(overlap);
        }
    pthread_mutex_unlock(&l->mu);
}

/* Wait until every ConfigMap was reconciled after time since (ns); returns the replicas that did,
 * per ConfigMap, in who[] (-1 none, -2 more than one). */
static bool wait_some_since(world *w, uint64_t since, const bool *want, int *who,
                            int64_t timeout_ms);
static bool wait_all_since(world *w, uint64_t since, int *who, int64_t timeout_ms)
{
    return wait_some_since(w, since, NULL, who, timeout_ms);
}

/* The same for the ConfigMaps with want[c] (NULL: all). */
static bool wait_some_since(world *w, uint64_t since, const bool *want, int *who,
                            int64_t timeout_ms)
{
    uint64_t dl = kc__deadline_after_ms(timeout_ms);
    slog *l = &w->log;
    pthread_mutex_lock(&l->mu);
    for (;;) {
        int done = 0;
        for (int c = 0; c < NCM; c++) {
            char key[64];
            snprintf(key, sizeof key, "default/cm-%02d", c);
            who[c] = -1;
            for (size_t i = 0; i < l->n && i < LOGMAX; i++)
                if (l->e[i].start >= since && l->e[i].end && !strcmp(l->e[i].key, key))
                    who[c] = who[c] == -1 || who[c] == l->e[i].rep ? l->e[i].rep : -2;
            done += who[c] != -1 || (want && !want[c]);
        }
        if (done == NCM || kc__cond_wait_until(&l->cv, &l->mu, dl) != 0)
            break;
    }
    bool all = true;
    for (int c = 0; c < NCM; c++)
        all = all && (who[c] != -1 || (want && !want[c]));
    pthread_mutex_unlock(&l->mu);
    return all;
}

/* The replica holding the range of ConfigMap c's uid (A15: FNV-1a of the uid), or -1. */
static int holder_of(world *w, int c)
{
    uint32_t r = (uint32_t)(kc_shard_hash(w->uids[c], strlen(w->uids[c])) >> 60); /* K = 16 */
    for (int i = 0; i < NREP; i++)
        if (w->rep[i].coord && kc_shard_coordinator_holds(w->rep[i].coord, r))
            return i;
    return -1;
}

static void touch_all(world *w, const char *val)
{
    for (int c = 0; c < NCM; c++) {
        char name[32];
        snprintf(name, sizeof name, "cm-%02d", c);
        assert_int_equal(ifx_cm_update(&w->f, "default", name, val), 0);
    }
}

/* P1, P2, P4: three replicas converge to 6/5/5 of 16 within LD + 3·RP (+ε); afterwards every
 * ConfigMap change is reconciled by exactly one replica, the holder of its uid's range. */
static void test_shard_converge_exactly_one(void **st)
{
    (void)st;
    world *w = calloc(1, sizeof(*w));
    world_up(w);
    for (int i = 0; i < 3; i++)
        rep_start(w, i, K);
    int64_t t = wait_for(w, balanced, LD_MS + 3 * RP_MS + EPS_MS);
    fprintf(stderr, "converged in %lld ms (bound LD + 3RP = %d ms + eps)\n", (long long)t,
            LD_MS + 3 * RP_MS);
    assert_true(t >= 0);
    int who[NCM];
    uint64_t since = kc__now_ns();
    touch_all(w, "v1");
    assert_true(wait_all_since(w, since, who, 20000));
    for (int c = 0; c < NCM; c++) {
        assert_true(who[c] >= 0); /* exactly one replica reconciled it */
        assert_int_equal(who[c], holder_of(w, c));
    }
    check_no_overlap(w);
    world_down(w);
    free(w);
}

/* P5 graceful, A12: a stopped replica's ranges are held by the others within RP·(1+j) + ε after
 * its stop returned; then P1 again, and every key still reconciled by exactly one. */
static void test_shard_graceful_failover(void **st)
{
    (void)st;
    world *w = calloc(1, sizeof(*w));
    world_up(w);
    for (int i = 0; i < 3; i++)
        rep_start(w, i, K);
    assert_true(wait_for(w, balanced, 10 * LD_MS) >= 0);
    rep_stop(w, 2, false);
    int64_t t = wait_for(w, covered, RP_MS + RP_MS / 5 + EPS_MS);
    fprintf(stderr, "graceful: re-held in %lld ms (bound RP(1+j) = %d ms + eps)\n", (long long)t,
            RP_MS + RP_MS / 5);
    assert_true(t >= 0);
    assert_true(wait_for(w, balanced, LD_MS + 3 * RP_MS + EPS_MS) >= 0);
    int who[NCM];
    uint64_t since = kc__now_ns();
    touch_all(w, "v2");
    assert_true(wait_all_since(w, since, who, 20000));
    for (int c = 0; c < NCM; c++)
        assert_true(who[c] == 0 || who[c] == 1);
    check_no_overlap(w);
    world_down(w);
    free(w);
}

/* P5 crash, A16: a replica that stops renewing without releasing loses its ranges to the others
 * within LD + RP·(1+j) + ε of the kill (its last renew was before the kill). */
static void test_shard_killed_failover(void **st)
{
    (void)st;
    world *w = calloc(1, sizeof(*w));
    world_up(w);
    for (int i = 0; i < 3; i++)
        rep_start(w, i, K);
    assert_true(wait_for(w, balanced, 10 * LD_MS) >= 0);
    bool orphan[NCM];
    for (int c = 0; c < NCM; c++)
        orphan[c] = holder_of(w, c) == 1;
    rep_stop(w, 1, true);
    /* after the stop: a reconcile replica 1 finished while being stopped is not a new holder's */
    uint64_t since = kc__now_ns();
    int64_t t = wait_for(w, covered, LD_MS + RP_MS + RP_MS / 5 + EPS_MS);
    fprintf(stderr, "killed: re-held in %lld ms (bound LD + RP(1+j) = %d ms + eps)\n", (long long)t,
            LD_MS + RP_MS + RP_MS / 5);
    assert_true(t >= 0);
    assert_true(t >= LD_MS - RP_MS - RP_MS / 5 - 50); /* not before the Lease expired (P3) */
    /* P6: with no change to them, the dead replica's keys are reconciled by their new holders
     * (a gained range re-enqueues the cache's keys in it) */
    int who[NCM];
    assert_true(wait_some_since(w, since, orphan, who, 20000));
    for (int c = 0; c < NCM; c++)
        if (orphan[c])
            assert_true(who[c] == 0 || who[c] == 2);
    assert_true(wait_for(w, balanced, LD_MS + 3 * RP_MS + EPS_MS) >= 0);
    check_no_overlap(w);
    world_down(w);
    free(w);
}

/* A12, A13, P4: a joining replica takes ranges only once their holders drained them: while keys
 * are being changed throughout, no key is ever reconciled by two replicas at once; the group
 * converges to 4/4/4/4. */
static void test_shard_join_no_overlap(void **st)
{
    (void)st;
    world *w = calloc(1, sizeof(*w));
    world_up(w);
    for (int i = 0; i < 3; i++)
        rep_start(w, i, K);
    assert_true(wait_for(w, balanced, 10 * LD_MS) >= 0);
    rep_start(w, 3, K);
    for (int round = 0; round < 5; round++) { /* changes while ranges move */
        char v[8];
        snprintf(v, sizeof v, "j%d", round);
        touch_all(w, v);
    }
    assert_true(wait_for(w, balanced, LD_MS + 3 * RP_MS + EPS_MS) >= 0);
    kc_shard_coordinator_stats s3;
    kc_shard_coordinator_get_stats(w->rep[3].coord, &s3);
    assert_int_equal(s3.held, 4);
    assert_int_equal(s3.lost, 0); /* every range it got was released to it, none taken */
    int who[NCM];
    uint64_t since = kc__now_ns();
    touch_all(w, "after");
    assert_true(wait_all_since(w, since, who, 20000));
    for (int c = 0; c < NCM; c++)
        assert_int_equal(who[c], holder_of(w, c));
    check_no_overlap(w);
    world_down(w);
    free(w);
}

/* A11, P6: a key refused at admission only because its held range's fence passed (a renew late
 * by more than RD, as on an overloaded machine: the range never moves, so no gain re-enqueues
 * it) is reconciled once the next renew lifts the fence. The late renew is forced by setting the
 * range's fence to now in the gate, as a late renew leaves it; the coordinator's next renew
 * extends it. When that renew wins the race against the change's admission, nothing is refused
 * and the attempt is repeated (bounded). */
static void test_shard_late_renew_loses_no_key(void **st)
{
    (void)st;
    world *w = calloc(1, sizeof(*w));
    world_up(w);
    rep_start(w, 0, K);
    assert_true(wait_for(w, balanced, 10 * LD_MS) >= 0);
    int who[NCM];
    assert_true(wait_all_since(w, 0, who, 20000)); /* the initial adds are done */
    replica *p = &w->rep[0];
    kc__shard_gate *g = kc__shard_coordinator_gate(p->coord);
    uint32_t r = (uint32_t)(kc_shard_hash(w->uids[0], strlen(w->uids[0])) >> 60); /* K = 16 */
    bool want[NCM] = {[0] = true}, refused = false;
    uint64_t since = 0;
    int attempt = 0;
    for (; attempt < 50 && !refused; attempt++) {
        kc_controller_stats s0, s1;
        kc_controller_get_stats(p->ctrl, &s0);
        since = kc__now_ns();
        kc__shard_gate_hold(g, r, kc__now_ms()); /* the fence passes now */
        char v[16];
        snprintf(v, sizeof v, "late%d", attempt);
        assert_int_equal(ifx_cm_update(&w->f, "default", "cm-00", v), 0);
        uint64_t dl = kc__deadline_after_ms(5000);
        bool done = false;
        do { /* bounded poll: refused (a counter) or reconciled (the log) */
            kc__sleep_ns(KC__NS_PER_MS);
            kc_controller_get_stats(p->ctrl, &s1);
            refused = s1.shard_dropped > s0.shard_dropped;
            done = wait_some_since(w, since, want, who, 0);
        } while (!refused && !done && kc__now_ns() < dl);
        assert_true(refused || done);
    }
    fprintf(stderr, "late renew: a change refused as fenced at attempt %d of 50\n", attempt);
    assert_true(refused);
    /* without the resumed re-enqueue the key is never reconciled: the range stays held here */
    assert_true(wait_some_since(w, since, want, who, 5000));
    assert_int_equal(who[0], 0);
    assert_true(atomic_load(&p->coord->n_resumed) >= 1);
    world_down(w);
    free(w);
}

/* A8: a replica configured with another K refuses to act on Leases that record K = 16. */
static void test_shard_k_mismatch_refuses(void **st)
{
    (void)st;
    world *w = calloc(1, sizeof(*w));
    world_up(w);
    rep_start(w, 0, K);
    assert_true(wait_for(w, balanced, 10 * LD_MS) >= 0);
    rep_start(w, 1, 8);
    kc_shard_coordinator_stats s1;
    uint64_t dl = kc__deadline_after_ms(10000);
    do { /* bounded poll: the refusal is a state, no callback reports it */
        kc__sleep_ns(KC__NS_PER_MS);
        kc_shard_coordinator_get_stats(w->rep[1].coord, &s1);
    } while (!s1.refused && kc__now_ns() < dl);
    assert_true(s1.refused);
    assert_int_equal(s1.held, 0);
    assert_int_equal(s1.acquired, 0);
    world_down(w);
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shard_converge_exactly_one),
        cmocka_unit_test(test_shard_graceful_failover),
        cmocka_unit_test(test_shard_killed_failover),
        cmocka_unit_test(test_shard_join_no_overlap),
        cmocka_unit_test(test_shard_k_mismatch_refuses),
        cmocka_unit_test(test_shard_late_renew_loses_no_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
