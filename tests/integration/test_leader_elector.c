/*
 * test_leader_elector.c — kc_leader_elector against the embedded API server with short
 * timings (LD 600 ms, RD 400 ms, RP 100 ms): option validation (L6), acquire on a fresh Lease
 * (L3), renew keeps holder and acquireTime (L3 step 5), takeover after the leader stops renewing
 * judged by observation (L5, with renewTime far in the future and the past), a race of three
 * electors yields one leader (L4), release on stop lets another acquire at once (L9), callback
 * order (L8), the lock's Events (L8), metrics (L11), and the fence closing on loss (L10, L12a).
 */
#include "test_leader_fixture.h"

/* L6: LD > RD > 1.2·RP, all > 0; zero = the defaults 15 s / 10 s / 2 s; the name is required. */
static void test_validation(void **state)
{
    ifx *f = *state;
    kc_leader_elector_opts o = {.name = "v"};
    kc_leader_elector *el = NULL;
    assert_int_equal(kc_leader_elector_new(f->client, &o, &el, NULL), 0);
    kc_leader_elector_free(el);
    int64_t bad[][3] = {
        {400, 400, 100}, {600, 120, 100}, {600, 400, -1}, {-5, 400, 100}, {600, 700, 100}};
    for (size_t i = 0; i < KC__ARRAY_LEN(bad); i++) {
        o.lease_duration_ms = bad[i][0];
        o.renew_deadline_ms = bad[i][1];
        o.retry_period_ms = bad[i][2];
        el = NULL;
        assert_int_equal(kc_leader_elector_new(f->client, &o, &el, NULL), KC_EINVAL);
        assert_null(el);
    }
    kc_leader_elector_opts noname = {0};
    assert_int_equal(kc_leader_elector_new(f->client, &noname, &el, NULL), KC_EINVAL);
    /* a default identity is unique per elector */
    kc_leader_elector *a = NULL, *b = NULL;
    o = (kc_leader_elector_opts){.name = "v"};
    assert_int_equal(kc_leader_elector_new(f->client, &o, &a, NULL), 0);
    assert_int_equal(kc_leader_elector_new(f->client, &o, &b, NULL), 0);
    assert_string_not_equal(kc_leader_elector_identity(a), kc_leader_elector_identity(b));
    /* stop then free, never started: safe; stop is idempotent */
    assert_int_equal(kc_leader_elector_stop(a), 0);
    assert_int_equal(kc_leader_elector_stop(a), 0);
    kc_leader_elector_free(a);
    kc_leader_elector_free(b);
    assert_int_equal(kc_leader_elector_stop(NULL), KC_EINVAL);
    assert_false(kc_leader_elector_is_leader(NULL));
}

/* L3 + L8: acquire a fresh Lease: new_leader(us) then started, the fence valid inside started;
 * renewals keep holder and acquireTime while renewTime moves. L11: master_status 1 then 0. */
static void test_acquire_and_renew(void **state)
{
    ifx *f = *state;
    lrec r;
    lrec_init(&r);
    kc_leader_elector_opts o = lfx_opts("acq", "a", &r);
    kc_leader_elector *el = lfx_new(f, &o);
    lfx_start(el);
    assert_true(LREC_WAIT(&r, started, 1, 5000));
    assert_true(r.leader_in_started);
    assert_string_equal(r.ev[0], "new:a");
    assert_string_equal(r.ev[1], "started");
    char *acq = lfx_lease_str(f, "acq", "/spec/acquireTime");
    char *renew = lfx_lease_str(f, "acq", "/spec/renewTime");
    assert_non_null(acq);
    char *now = NULL;
    assert_true(LFX_WAIT((free(now), now = lfx_lease_str(f, "acq", "/spec/renewTime"),
                          now && strcmp(now, renew) != 0),
                         5000));
    char *acq2 = lfx_lease_str(f, "acq", "/spec/acquireTime");
    char *holder = lfx_lease_str(f, "acq", "/spec/holderIdentity");
    assert_string_equal(acq, acq2);
    assert_string_equal(holder, "a");
    char *m = kc_leader_elector_metrics_render(el);
    assert_non_null(strstr(m, "leader_election_master_status{name=\"acq\"} 1"));
    assert_non_null(strstr(m, "leader_election_slowpath_total{name=\"acq\"}"));
    free(m);
    assert_int_equal(kc_leader_elector_stop(el), 0);
    assert_int_equal(LREC_GET(&r, stopped), 1);
    assert_false(kc_leader_elector_is_leader(el));
    assert_int_equal(kc_fence_valid_until(kc_leader_elector_fence(el)), 0);
    m = kc_leader_elector_metrics_render(el);
    assert_non_null(strstr(m, "leader_election_master_status{name=\"acq\"} 0"));
    free(m);
    free(acq), free(acq2), free(renew), free(now), free(holder);
    kc_leader_elector_free(el);
    lrec_destroy(&r);
}

/* L5 + L8: b sees a lead (new_leader a), never starts while a renews; once a stops without a
 * release, b takes over after LD of no observed change; b's callbacks: new:a, new:b, started.
 * An elector that never led still gets exactly one stopped (L8). */
static void test_takeover_after_stop(void **state)
{
    ifx *f = *state;
    lrec ra, rb;
    lrec_init(&ra);
    lrec_init(&rb);
    kc_leader_elector_opts oa = lfx_opts("take", "a", &ra), ob = lfx_opts("take", "b", &rb);
    kc_leader_elector *a = lfx_new(f, &oa), *b = lfx_new(f, &ob);
    lfx_start(a);
    assert_true(LREC_WAIT(&ra, started, 1, 5000));
    lfx_start(b);
    assert_true(LREC_WAIT(&rb, news, 1, 5000));
    assert_string_equal(rb.ev[0], "new:a");
    assert_int_equal(LREC_GET(&rb, started), 0);
    uint64_t t_stop = kc__now_ns();
    kc_leader_elector_stop(a); /* no release: b must wait for the lease to expire */
    assert_true(LREC_WAIT(&rb, started, 1, 5000));
    /* leaseDurationSeconds is 1: b cannot have taken over before ~1 s without a record change */
    assert_true(rb.t_started - t_stop >= 900 * KC__NS_PER_MS);
    assert_string_equal(rb.ev[1], "new:b");
    assert_string_equal(rb.ev[2], "started");
    kc_leader_elector_stop(b);
    assert_int_equal(LREC_GET(&rb, stopped), 1);
    /* c never leads: one stopped */
    lrec rc;
    lrec_init(&rc);
    kc_leader_elector_opts oc = lfx_opts("take", "c", &rc);
    kc_leader_elector *c = lfx_new(f, &oc);
    lfx_start(b);
    assert_true(LREC_WAIT(&rb, started, 2, 5000));
    lfx_start(c);
    assert_true(LREC_WAIT(&rc, news, 1, 5000));
    kc_leader_elector_stop(c);
    assert_int_equal(LREC_GET(&rc, stopped), 1);
    assert_int_equal(LREC_GET(&rc, started), 0);
    kc_leader_elector_free(c);
    kc_leader_elector_free(a);
    kc_leader_elector_free(b);
    lrec_destroy(&ra), lrec_destroy(&rb), lrec_destroy(&rc);
}

/* L5: a Lease held by "ghost" whose renewTime is far in the future (or the past) is taken over
 * after LD of no observed change, not never (future) and not at once (past). */
static void check_skew(ifx *f, const char *lease, const char *t)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"holderIdentity\":\"ghost\","
             "\"leaseDurationSeconds\":1,\"acquireTime\":\"%s\",\"renewTime\":\"%s\"}}",
             lease, t, t);
    assert_int_equal(
        kc_client_create(f->client, &lfx_leases, "default", json, strlen(json), NULL, NULL, NULL),
        0);
    lrec r;
    lrec_init(&r);
    kc_leader_elector_opts o = lfx_opts(lease, "b", &r);
    kc_leader_elector *b = lfx_new(f, &o);
    uint64_t t0 = kc__now_ns();
    lfx_start(b);
    assert_true(LREC_WAIT(&r, started, 1, 5000));
    assert_true(r.t_started - t0 >= 900 * KC__NS_PER_MS);
    assert_string_equal(r.ev[0], "new:ghost");
    kc_leader_elector_free(b);
    lrec_destroy(&r);
}

static void test_renew_time_skew(void **state)
{
    check_skew(*state, "future", "2099-01-01T00:00:00.000000Z");
    check_skew(*state, "past", "1971-01-01T00:00:00.000000Z");
}

/* L4: three electors started together on a fresh Lease: exactly one leads, and the Lease names
 * it; the two others report it as the new leader. */
static void test_race_one_leader(void **state)
{
    ifx *f = *state;
    lrec r[3];
    kc_leader_elector *el[3];
    const char *ids[3] = {"r0", "r1", "r2"};
    for (int i = 0; i < 3; i++) {
        lrec_init(&r[i]);
        kc_leader_elector_opts o = lfx_opts("race", ids[i], &r[i]);
        el[i] = lfx_new(f, &o);
    }
    for (int i = 0; i < 3; i++)
        lfx_start(el[i]);
    int leader = -1;
    assert_true(LFX_WAIT((leader = LREC_GET(&r[0], started)   ? 0
                                   : LREC_GET(&r[1], started) ? 1
                                   : LREC_GET(&r[2], started) ? 2
                                                              : -1,
                          leader >= 0),
                         5000));
    for (int i = 0; i < 3; i++)
        assert_true(LREC_WAIT(&r[i], news, 1, 5000));
    int leaders = 0;
    for (int i = 0; i < 3; i++) {
        leaders += kc_leader_elector_is_leader(el[i]);
        char *h = NULL;
        assert_int_equal(kc_leader_elector_leader(el[i], &h), 0);
        assert_string_equal(h, ids[leader]);
        free(h);
    }
    assert_int_equal(leaders, 1);
    char *holder = lfx_lease_str(f, "race", "/spec/holderIdentity");
    assert_string_equal(holder, ids[leader]);
    free(holder);
    for (int i = 0; i < 3; i++) {
        kc_leader_elector_free(el[i]);
        assert_int_equal(LREC_GET(&r[i], started), i == leader ? 1u : 0u);
        assert_int_equal(LREC_GET(&r[i], stopped), 1);
        lrec_destroy(&r[i]);
    }
}

/* L9: a leader with release_on_stop writes holder "" on stop; the waiting elector acquires
 * without waiting for expiry (well under the 1 s leaseDurationSeconds). */
static void test_release_on_stop(void **state)
{
    ifx *f = *state;
    lrec ra, rb;
    lrec_init(&ra);
    lrec_init(&rb);
    kc_leader_elector_opts oa = lfx_opts("rel", "a", &ra), ob = lfx_opts("rel", "b", &rb);
    oa.release_on_stop = true;
    kc_leader_elector *a = lfx_new(f, &oa), *b = lfx_new(f, &ob);
    lfx_start(a);
    assert_true(LREC_WAIT(&ra, started, 1, 5000));
    lfx_start(b);
    assert_true(LREC_WAIT(&rb, news, 1, 5000));
    kc_leader_elector_stop(a);
    char *holder = lfx_lease_str(f, "rel", "/spec/holderIdentity");
    assert_true(holder == NULL || !strcmp(holder, "") || !strcmp(holder, "b"));
    free(holder);
    uint64_t t_stop = kc__now_ns();
    assert_true(LREC_WAIT(&rb, started, 1, 5000));
    /* at most one jittered retry (2.2·RP = 220 ms) after the release; 1 s would be expiry */
    assert_true(rb.t_started - t_stop < 800 * KC__NS_PER_MS);
    kc_obj *o = NULL;
    assert_int_equal(kc_client_get(f->client, &lfx_leases, "default", "rel", &o, NULL), 0);
    int64_t transitions = -1;
    assert_int_equal(kc_obj_get_int(o, "/spec/leaseTransitions", &transitions, NULL), 0);
    assert_int_equal(transitions, 1); /* a: 0 on create, kept by the release; b: +1 */
    kc_obj_unref(o);
    kc_leader_elector_free(a);
    kc_leader_elector_free(b);
    lrec_destroy(&ra), lrec_destroy(&rb);
}

/* Messages of the LeaderElection Events in default about Lease name, in one string. */
typedef struct evs {
    const char *lease;
    char text[512];
} evs;

static int collect_ev(void *ud, kc_obj *o)
{
    evs *e = ud;
    char *reason = NULL, *kind = NULL, *name = NULL, *msg = NULL;
    kc_obj_get_string(o, "/reason", &reason, NULL, NULL);
    kc_obj_get_string(o, "/involvedObject/kind", &kind, NULL, NULL);
    kc_obj_get_string(o, "/involvedObject/name", &name, NULL, NULL);
    kc_obj_get_string(o, "/message", &msg, NULL, NULL);
    if (reason && !strcmp(reason, "LeaderElection") && kind && !strcmp(kind, "Lease") && name &&
        !strcmp(name, e->lease) && msg) {
        strncat(e->text, msg, sizeof e->text - strlen(e->text) - 2);
        strcat(e->text, ";");
    }
    free(reason), free(kind), free(name), free(msg);
    kc_obj_unref(o);
    return 0;
}

static const kc_gvr ev_gvr = {"", "v1", "events"};

/* L8: with opts.events the lock records "<identity> became leader" and "<identity> stopped
 * leading" about the Lease (reason LeaderElection), as client-go's LeaseLock.RecordEvent. */
static void test_leader_events(void **state)
{
    ifx *f = *state;
    lrec r;
    lrec_init(&r);
    kc_event_recorder *rec = NULL;
    kc_error e = KC_ERROR_INIT;
    KC_TEST_RC(kc_event_recorder_new(f->client, NULL, &rec, &e), 0, &e);
    kc_leader_elector_opts o = lfx_opts("evl", "ev-a", &r);
    o.events = rec;
    kc_leader_elector *el = lfx_new(f, &o);
    lfx_start(el);
    assert_true(LREC_WAIT(&r, started, 1, 5000));
    assert_int_equal(kc_leader_elector_stop(el), 0);
    KC_TEST_RC(kc_event_recorder_flush(rec, 5000, &e), 0, &e);
    evs got = {.lease = "evl"};
    KC_TEST_RC(kc_client_list_all(f->client, &ev_gvr, "default", NULL, NULL, collect_ev, &got, &e),
               0, &e);
    assert_non_null(strstr(got.text, "ev-a became leader;"));
    assert_non_null(strstr(got.text, "ev-a stopped leading;"));
    kc_leader_elector_free(el);
    kc_event_recorder_free(rec);
    lrec_destroy(&r);
}

static int setup(void **state)
{
    static ifx f;
    ifx_up(&f, NULL);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    ifx_down(*state);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validation),          cmocka_unit_test(test_acquire_and_renew),
        cmocka_unit_test(test_takeover_after_stop), cmocka_unit_test(test_renew_time_skew),
        cmocka_unit_test(test_race_one_leader),     cmocka_unit_test(test_release_on_stop),
        cmocka_unit_test(test_leader_events),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
