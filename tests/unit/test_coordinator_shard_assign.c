/*
 * Unit tests for the shard assignment state machine and the range gate (spec §5.3–5.4:
 * A8–A13, P1, P2, P3, P5) with a fake clock and a scripted Lease store.
 *
 * The simulation: a Lease store (member and range Leases, each with a resourceVersion, a holder,
 * the K annotation and the time of its last write) and R replicas, each a kc__shard_assign plus a
 * kc__shard_gate and a local observation of every Lease (last seen RV and the local time it
 * changed, L5). A replica's poll renews its member Lease, observes, steps and applies the acts
 * with RV preconditions (L4): a write whose RV is not the one observed is a conflict. Its next
 * poll is at the machine's wake time plus a deterministic jitter ≤ 0.2·RP (A16). Time jumps from
 * one poll to the next; replicas can be paused (they miss polls, keep their state), crashed (never
 * poll again, release nothing) or stopped gracefully (leave, then release the member Lease).
 *
 * Checked on every write and every poll, through whole scenarios:
 *   P2  at most one replica's gate admits a range at any time (and after convergence, exactly
 *       one live replica holds each range);
 *   P3  every holder change X→Y (Y ≠ "") on the store is preceded by X→"" or by ≥ LD without a
 *       write to that Lease;
 *   P1  after T_conv ≤ LD + 3·RP of stable membership every range has one live holder and every
 *       live replica holds floor(K/N) or ceil(K/N);
 *   P5  a crashed replica's ranges are re-held within LD + RP·(1+j) + ε, a stopped one's within
 *       RP·(1+j) + ε.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "coordinator/shard_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LD   600
#define RD   400
#define RP   100
#define MAXR 8
#define MAXK 64

typedef struct lease {
    bool exists;
    char holder[32];
    uint64_t rv, last_write;
    uint32_t k;
} lease;

typedef enum rstate { R_OFF, R_RUN, R_PAUSED, R_CRASHED, R_LEAVING, R_GONE } rstate;

typedef struct replica {
    char id[32];
    rstate st;
    kc__shard_assign *a;
    kc__shard_gate *g;
    uint64_t next;
    uint64_t seen_rv[MAXR + MAXK], observed[MAXR + MAXK];
    bool seen[MAXR + MAXK];
    uint64_t busy_until[MAXK]; /* simulated in-flight reconciles per range */
} replica;

typedef struct sim {
    uint32_t k;
    uint64_t now, rv;
    lease members[MAXR], ranges[MAXK];
    replica rep[MAXR];
    int n;
    kc__rng rng;
    unsigned p3_violations, p2_violations, holder_changes;
} sim;

static void sim_init(sim *s, uint32_t k, int n, uint64_t seed)
{
    memset(s, 0, sizeof(*s));
    s->k = k;
    s->n = n;
    s->now = 1000;
    kc__rng_seed(&s->rng, seed);
    for (int i = 0; i < n; i++)
        snprintf(s->rep[i].id, sizeof s->rep[i].id, "replica-%d", i);
}

/* A write of holder to l, checked against P3 (as seen by the recorder: the store). */
static void store_write(sim *s, lease *l, const char *holder, uint32_t k)
{
    if (l->exists && *l->holder && *holder && strcmp(l->holder, holder) != 0) {
        s->holder_changes++;
        if (s->now - l->last_write < LD)
            s->p3_violations++;
    }
    l->exists = true;
    snprintf(l->holder, sizeof l->holder, "%s", holder);
    l->rv = ++s->rv;
    l->last_write = s->now;
    if (k)
        l->k = k;
}

static void observe(sim *s, replica *p, int slot, const lease *l)
{
    if (!p->seen[slot] || p->seen_rv[slot] != l->rv) {
        p->seen[slot] = true;
        p->seen_rv[slot] = l->rv;
        p->observed[slot] = s->now;
    }
}

/* A conditional write (L4): succeeds only when the store's RV is the observed one. */
static bool cas(sim *s, replica *p, int slot, lease *l, const char *holder)
{
    if (l->exists && (!p->seen[slot] || p->seen_rv[slot] != l->rv))
        return false;
    store_write(s, l, holder, s->k);
    p->seen[slot] = true;
    p->seen_rv[slot] = l->rv;
    p->observed[slot] = s->now;
    return true;
}

static void apply(sim *s, replica *p, uint32_t r, kc__shard_act act)
{
    lease *l = &s->ranges[r];
    int slot = MAXR + (int)r;
    bool ok;
    switch (act) {
    case KC__SHARD_ACT_ACQUIRE:
    case KC__SHARD_ACT_RENEW:
    case KC__SHARD_ACT_DRAIN:
        ok = cas(s, p, slot, l, p->id);
        if (act == KC__SHARD_ACT_ACQUIRE)
            kc__shard_assign_report(p->a, r, act, ok);
        if (ok)
            kc__shard_gate_hold(p->g, r, s->now + RD); /* send time + RD (L12 a) */
        if (act != KC__SHARD_ACT_DRAIN)
            break;
        kc__shard_gate_drain(p->g, r);
        if (s->now < p->busy_until[r])
            break;
        /* idle at once: release in the same poll */
        __attribute__((fallthrough));
    case KC__SHARD_ACT_RELEASE:
        kc__shard_gate_drop(p->g, r);
        cas(s, p, slot, l, ""); /* a failed release expires after LD (A12) */
        kc__shard_assign_report(p->a, r, KC__SHARD_ACT_RELEASE, true);
        break;
    case KC__SHARD_ACT_LOSE:
        kc__shard_gate_drop(p->g, r);
        kc__shard_assign_report(p->a, r, act, true);
        break;
    default:
        break;
    }
}

/* P2: at most one replica's gate admits each range now. */
static void check_p2(sim *s)
{
    for (uint32_t r = 0; r < s->k; r++) {
        int valid = 0;
        for (int i = 0; i < s->n; i++)
            if (s->rep[i].g && kc__shard_gate_valid(s->rep[i].g, r, s->now))
                valid++;
        if (valid > 1)
            s->p2_violations++;
    }
}

static void poll_replica(sim *s, int i)
{
    replica *p = &s->rep[i];
    if (p->st == R_RUN || p->st == R_LEAVING)
        store_write(s, &s->members[i], p->id, 0); /* member Lease renew (A9) */
    kc__shard_member_obs mo[MAXR];
    kc__shard_range_obs ro[MAXK];
    bool idle[MAXK];
    for (int j = 0; j < s->n; j++) { /* members first, then ranges */
        observe(s, p, j, &s->members[j]);
        mo[j] = (kc__shard_member_obs){s->members[j].exists ? s->members[j].holder : NULL,
                                       p->observed[j]};
    }
    for (uint32_t r = 0; r < s->k; r++) {
        observe(s, p, MAXR + (int)r, &s->ranges[r]);
        ro[r] = (kc__shard_range_obs){s->ranges[r].exists, s->ranges[r].holder,
                                      p->observed[MAXR + r], s->ranges[r].k};
        idle[r] = s->now >= p->busy_until[r];
    }
    kc__shard_view v = {mo, (size_t)s->n, ro, idle};
    kc__shard_act acts[MAXK];
    uint64_t wake = kc__shard_assign_step(p->a, &v, s->now, acts);
    for (uint32_t r = 0; r < s->k; r++)
        apply(s, p, r, acts[r]);
    if (p->st == R_LEAVING && kc__shard_assign_none_held(p->a)) {
        store_write(s, &s->members[i], "", 0); /* then the member Lease (A12) */
        p->st = R_GONE;
    }
    p->next = wake + kc__rng_range(&s->rng, 0, RP / 5); /* jitter j ≤ 0.2 */
    check_p2(s);
}

static void start(sim *s, int i)
{
    replica *p = &s->rep[i];
    if (!p->a) {
        p->a = kc__shard_assign_new(s->k, p->id, LD, RP);
        p->g = kc__shard_gate_new(s->k);
        assert_non_null(p->a);
        assert_non_null(p->g);
    }
    p->st = R_RUN;
    p->next = s->now;
}

/* Run until time `until`, polling replicas in time order. */
static void run_until(sim *s, uint64_t until)
{
    for (;;) {
        int best = -1;
        for (int i = 0; i < s->n; i++) {
            rstate st = s->rep[i].st;
            if ((st == R_RUN || st == R_LEAVING) &&
                (best < 0 || s->rep[i].next < s->rep[best].next))
                best = i;
        }
        if (best < 0 || s->rep[best].next > until)
            break;
        if (s->rep[best].next > s->now)
            s->now = s->rep[best].next;
        poll_replica(s, best);
    }
    if (s->now < until)
        s->now = until;
    check_p2(s);
}

static bool live(const replica *p)
{
    return p->st == R_RUN || p->st == R_PAUSED;
}

/* P1 (and P2 after convergence): each range held by exactly one live replica (Lease holder and
 * gate agree), every live replica at floor or ceil of K/N. */
static bool balanced(sim *s)
{
    int n_live = 0;
    for (int i = 0; i < s->n; i++)
        n_live += s->rep[i].st == R_RUN;
    uint32_t lo = s->k / (uint32_t)n_live, hi = lo + (s->k % (uint32_t)n_live ? 1 : 0);
    for (uint32_t r = 0; r < s->k; r++) {
        int owners = 0;
        for (int i = 0; i < s->n; i++)
            if (s->rep[i].st == R_RUN && kc__shard_gate_valid(s->rep[i].g, r, s->now) &&
                strcmp(s->ranges[r].holder, s->rep[i].id) == 0)
                owners++;
        if (owners != 1)
            return false;
    }
    for (int i = 0; i < s->n; i++) {
        if (s->rep[i].st != R_RUN)
            continue;
        uint32_t h = kc__shard_assign_held(s->rep[i].a);
        if (h < lo || h > hi)
            return false;
    }
    return true;
}

static void sim_free(sim *s)
{
    for (int i = 0; i < s->n; i++) {
        kc__shard_assign_free(s->rep[i].a);
        kc__shard_gate_free(s->rep[i].g);
    }
}

static int held_by(sim *s, int i)
{
    int n = 0;
    for (uint32_t r = 0; r < s->k; r++)
        n += strcmp(s->ranges[r].holder, s->rep[i].id) == 0;
    return n;
}

/* Time until every range once held by replica i is held (and admitted) by another live one. */
static uint64_t time_to_reheld(sim *s, int i, const bool *was, uint64_t from, uint64_t limit)
{
    for (uint64_t t = from; t <= from + limit; t += 5) {
        run_until(s, t);
        bool all = true;
        for (uint32_t r = 0; r < s->k && all; r++) {
            if (!was[r])
                continue;
            bool ok = false;
            for (int j = 0; j < s->n; j++)
                if (j != i && live(&s->rep[j]) && kc__shard_gate_valid(s->rep[j].g, r, s->now))
                    ok = true;
            all = ok;
        }
        if (all)
            return t - from;
    }
    return UINT64_MAX;
}

static void mark_held(sim *s, int i, bool *was)
{
    for (uint32_t r = 0; r < s->k; r++)
        was[r] = strcmp(s->ranges[r].holder, s->rep[i].id) == 0;
}

/* P1, P2, P3: three replicas starting together converge to 22/21/21 of 64 within LD + 3·RP; no
 * range was ever admitted by two gates; no holder change skipped the release or LD. */
static void test_shard_assign_start_together(void **st)
{
    (void)st;
    sim s;
    sim_init(&s, 64, 3, 1);
    for (int i = 0; i < 3; i++)
        start(&s, i);
    uint64_t t0 = s.now;
    run_until(&s, t0 + LD + 3 * RP);
    assert_true(balanced(&s));
    run_until(&s, t0 + 10 * LD); /* and it stays so */
    assert_true(balanced(&s));
    assert_int_equal(s.p2_violations, 0);
    assert_int_equal(s.p3_violations, 0);
    sim_free(&s);
}

/* A13, P1, P3: a replica joining a converged group gets its share only after the holders drained
 * and released (every holder change goes through ""), within LD + 3·RP. */
static void test_shard_assign_join(void **st)
{
    (void)st;
    sim s;
    sim_init(&s, 64, 4, 2);
    for (int i = 0; i < 3; i++)
        start(&s, i);
    run_until(&s, s.now + LD + 3 * RP);
    assert_true(balanced(&s));
    start(&s, 3);
    uint64_t t0 = s.now;
    run_until(&s, t0 + LD + 3 * RP);
    assert_true(balanced(&s));
    assert_int_equal(held_by(&s, 3), 16);
    assert_int_equal(s.holder_changes, 0); /* every move went X → "" → Y */
    assert_int_equal(s.p2_violations, 0);
    assert_int_equal(s.p3_violations, 0);
    sim_free(&s);
}

/* P5 (graceful), A12: a stopped replica drains and releases; the others re-hold its ranges within
 * RP·(1+j) + ε of its member Lease release and rebalance. */
static void test_shard_assign_graceful_leave(void **st)
{
    (void)st;
    sim s;
    sim_init(&s, 64, 3, 3);
    for (int i = 0; i < 3; i++)
        start(&s, i);
    run_until(&s, s.now + LD + 3 * RP);
    assert_true(balanced(&s));
    bool was[MAXK];
    mark_held(&s, 2, was);
    kc__shard_assign_leave(s.rep[2].a);
    s.rep[2].st = R_LEAVING;
    s.rep[2].next = s.now; /* the stop polls at once */
    run_until(&s, s.now);
    assert_int_equal(s.rep[2].st, R_GONE);
    assert_int_equal(held_by(&s, 2), 0);
    uint64_t t = time_to_reheld(&s, 2, was, s.now, LD);
    assert_true(t <= RP + RP / 5 + 5);
    run_until(&s, s.now + LD + 3 * RP);
    assert_true(balanced(&s));
    assert_int_equal(s.p2_violations, 0);
    assert_int_equal(s.p3_violations, 0);
    sim_free(&s);
}

/* P5 (crash), A16: a replica that stops renewing without releasing loses its ranges to the others
 * within LD + RP·(1+j) + ε of its last write; the takeover waited LD (P3). */
static void test_shard_assign_crash(void **st)
{
    (void)st;
    sim s;
    sim_init(&s, 64, 3, 4);
    for (int i = 0; i < 3; i++)
        start(&s, i);
    run_until(&s, s.now + LD + 3 * RP);
    bool was[MAXK];
    mark_held(&s, 1, was);
    uint64_t last_write = 0;
    for (uint32_t r = 0; r < s.k; r++)
        if (was[r] && s.ranges[r].last_write > last_write)
            last_write = s.ranges[r].last_write;
    s.rep[1].st = R_CRASHED;
    uint64_t t = time_to_reheld(&s, 1, was, s.now, 3 * LD);
    assert_true(t != UINT64_MAX);
    assert_true(s.now - last_write <= LD + RP + RP / 5 + 5);
    assert_true(s.holder_changes > 0);    /* the takeovers were direct X → Y ... */
    assert_int_equal(s.p3_violations, 0); /* ... each after ≥ LD without a write */
    run_until(&s, s.now + LD + 3 * RP);
    assert_true(balanced(&s));
    assert_int_equal(s.p2_violations, 0);
    sim_free(&s);
}

/* L12 a, A11, P2: a replica paused longer than LD is fenced by its gate before anyone takes its
 * ranges; on resume its renews conflict (L4), it sees the new holders and LOSEs them, then the
 * group rebalances with it. */
static void test_shard_assign_pause(void **st)
{
    (void)st;
    sim s;
    sim_init(&s, 64, 3, 5);
    for (int i = 0; i < 3; i++)
        start(&s, i);
    run_until(&s, s.now + LD + 3 * RP);
    s.rep[0].st = R_PAUSED;
    run_until(&s, s.now + 2 * LD);
    for (uint32_t r = 0; r < s.k; r++) /* fenced: the gate admits nothing of its old ranges */
        assert_false(kc__shard_gate_valid(s.rep[0].g, r, s.now));
    s.rep[0].st = R_RUN;
    s.rep[0].next = s.now;
    run_until(&s, s.now + 2 * LD + 3 * RP);
    assert_true(balanced(&s));
    assert_int_equal(s.p2_violations, 0);
    assert_int_equal(s.p3_violations, 0);
    sim_free(&s);
}

/* A12: a range with a reconcile in flight is renewed while draining and released only once idle:
 * the joiner cannot take it before. */
static void test_shard_assign_drain_waits(void **st)
{
    (void)st;
    sim s;
    sim_init(&s, 4, 2, 6);
    start(&s, 0);
    run_until(&s, s.now + LD + 3 * RP);
    assert_int_equal(held_by(&s, 0), 4);
    for (uint32_t r = 0; r < 4; r++)
        s.rep[0].busy_until[r] = s.now + 3 * LD; /* long reconciles everywhere */
    start(&s, 1);
    run_until(&s, s.now + 2 * LD);
    assert_int_equal(held_by(&s, 1), 0); /* still draining, still renewed */
    assert_int_equal(held_by(&s, 0), 4);
    run_until(&s, s.now + 2 * LD);
    assert_true(balanced(&s));
    assert_int_equal(held_by(&s, 1), 2);
    assert_int_equal(s.holder_changes, 0);
    assert_int_equal(s.p2_violations, 0);
    sim_free(&s);
}

/* A8: a range Lease recording another K makes the replica refuse to act: it holds nothing. */
static void test_shard_assign_k_mismatch(void **st)
{
    (void)st;
    sim s;
    sim_init(&s, 8, 1, 7);
    store_write(&s, &s.ranges[5], "", 16);
    start(&s, 0);
    run_until(&s, s.now + 3 * LD);
    assert_true(kc__shard_assign_refused(s.rep[0].a));
    assert_int_equal(held_by(&s, 0), 0);
    sim_free(&s);
}

/* Churn: joins, leaves, crashes and pauses in sequence under several seeds; P2 and P3 always,
 * P1 after each settles. */
static void test_shard_assign_churn(void **st)
{
    (void)st;
    for (uint64_t seed = 10; seed < 20; seed++) {
        sim s;
        sim_init(&s, 64, 6, seed);
        for (int i = 0; i < 4; i++)
            start(&s, i);
        run_until(&s, s.now + LD + 3 * RP);
        assert_true(balanced(&s));
        start(&s, 4);
        run_until(&s, s.now + RP / 2); /* a second join before the first settled */
        start(&s, 5);
        run_until(&s, s.now + LD + 3 * RP);
        assert_true(balanced(&s));
        s.rep[1].st = R_CRASHED;
        kc__shard_assign_leave(s.rep[3].a);
        s.rep[3].st = R_LEAVING;
        run_until(&s, s.now + 2 * LD + 3 * RP);
        assert_true(balanced(&s));
        s.rep[0].st = R_PAUSED;
        run_until(&s, s.now + LD / 2);
        s.rep[0].st = R_RUN;
        run_until(&s, s.now + 2 * LD + 3 * RP);
        assert_true(balanced(&s));
        assert_int_equal(s.p2_violations, 0);
        assert_int_equal(s.p3_violations, 0);
        sim_free(&s);
    }
}

/* The gate (A11): enter admits only a held, not draining range before its fence; in-flight counts
 * and wait_idle; the range of a hash is its top bits (S15). */
static void test_shard_gate(void **st)
{
    (void)st;
    kc__shard_gate *g = kc__shard_gate_new(64);
    assert_non_null(g);
    assert_null(kc__shard_gate_new(48));
    assert_int_equal(kc__shard_gate_range_of(g, 0), 0);
    assert_int_equal(kc__shard_gate_range_of(g, UINT64_MAX), 63);
    assert_int_equal(kc__shard_gate_range_of(g, kc_shard_hash("a", 1)),
                     0xaf63dc4c8601ec8cull >> 58);
    assert_false(kc__shard_gate_enter(g, 3, 100));
    kc__shard_gate_hold(g, 3, 200);
    assert_true(kc__shard_gate_enter(g, 3, 100));
    assert_false(kc__shard_gate_enter(g, 3, 200)); /* fenced at valid_until */
    assert_int_equal(kc__shard_gate_inflight(g, 3), 1);
    kc__shard_gate_drain(g, 3);
    assert_false(kc__shard_gate_enter(g, 3, 100));
    assert_int_equal(kc__shard_gate_wait_idle(g, 3, 0), KC_ETIMEOUT);
    kc__shard_gate_leave(g, 3);
    assert_int_equal(kc__shard_gate_wait_idle(g, 3, 0), 0);
    kc__shard_gate_drop(g, 3);
    assert_false(kc__shard_gate_hold(g, 3, 200)); /* a new hold: the gain re-enqueues */
    assert_true(kc__shard_gate_valid(g, 3, 150)); /* re-held after a drop: not draining */
    /* P6: a key refused only as fenced (a late renew) is reported once by the renew that lifts
     * the fence, so the range's keys are re-enqueued; still held meanwhile (the informer) */
    assert_false(kc__shard_gate_enter(g, 3, 250));
    assert_true(kc__shard_gate_held(g, 3));
    assert_true(kc__shard_gate_hold(g, 3, 400));
    assert_false(kc__shard_gate_hold(g, 3, 500));
    kc__shard_gate_drain(g, 3); /* refused while draining: the next holder's gain re-enqueues */
    assert_false(kc__shard_gate_enter(g, 3, 450));
    assert_false(kc__shard_gate_held(g, 3));
    assert_false(kc__shard_gate_hold(g, 3, 600));
    kc__shard_gate_free(g);
    kc__shard_gate *one = kc__shard_gate_new(1);
    assert_int_equal(kc__shard_gate_range_of(one, UINT64_MAX), 0);
    kc__shard_gate_free(one);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shard_assign_start_together),
        cmocka_unit_test(test_shard_assign_join),
        cmocka_unit_test(test_shard_assign_graceful_leave),
        cmocka_unit_test(test_shard_assign_crash),
        cmocka_unit_test(test_shard_assign_pause),
        cmocka_unit_test(test_shard_assign_drain_waits),
        cmocka_unit_test(test_shard_assign_k_mismatch),
        cmocka_unit_test(test_shard_assign_churn),
        cmocka_unit_test(test_shard_gate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
