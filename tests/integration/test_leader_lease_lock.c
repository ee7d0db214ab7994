/*
 * test_leader_lease_lock.c — the internal Lease lock (src/leader/lease_lock.h) against the
 * embedded API server, with a fake monotonic clock per lock so expiry is stepped, never slept:
 * acquire on a fresh Lease (L3 step 2), renew keeps holder and acquireTime (L3 step 5), a held
 * Lease is taken over only once LD has passed since the last observed change (L5), renewTime far
 * in the future or the past changes nothing (L5), a stale resourceVersion never wins (L4), release
 * (L9), strategy / preferredHolder kept and coordinated mode (L2), the fence deadline from t_send
 * (L12a), and caller annotations (A8).
 */
#include "leader/lease_lock.h"
#include "test_informer_fixture.h"

static const kc_gvr leases = {"coordination.k8s.io", "v1", "leases"};

#define LD_NS (2 * KC__NS_PER_SEC)
#define RD_NS (KC__NS_PER_SEC)

typedef struct fake_clock {
    uint64_t now;
} fake_clock;

static uint64_t fake_now(void *ud)
{
    return ((fake_clock *)ud)->now;
}

static kc__lease_lock *lock_for(ifx *f, const char *name, const char *id, fake_clock *c,
                                bool coordinated)
{
    kc__lease_lock_opts o = {.client = f->client,
                             .ns = "default",
                             .name = name,
                             .identity = id,
                             .lease_duration_ns = LD_NS,
                             .renew_deadline_ns = RD_NS,
                             .clock = fake_now,
                             .clock_ud = c,
                             .coordinated = coordinated};
    kc__lease_lock *l = NULL;
    kc_error e = KC_ERROR_INIT;
    KC_TEST_RC(kc__lease_lock_new(&o, &l, &e), 0, &e);
    return l;
}

static char *lease_str(ifx *f, const char *name, const char *ptr)
{
    kc_obj *o = NULL;
    kc_error e = KC_ERROR_INIT;
    KC_TEST_RC(kc_client_get(f->client, &leases, "default", name, &o, &e), 0, &e);
    char *s = NULL;
    if (kc_obj_get_string(o, ptr, &s, NULL, NULL) < 0)
        s = NULL;
    kc_obj_unref(o);
    return s;
}

static void put_lease(ifx *f, const char *json)
{
    kc_error e = KC_ERROR_INIT;
    KC_TEST_RC(kc_client_create(f->client, &leases, "default", json, strlen(json), NULL, NULL, &e),
               0, &e);
}

/* L3 (2): a missing Lease is created with us as holder and 0 transitions; L12a: the fence is
 * t_send + RD on the lock's clock. L3 (5): a renew keeps holder, acquireTime and transitions. */
static void test_acquire_then_renew(void **state)
{
    ifx *f = *state;
    fake_clock c = {1000};
    kc__lease_lock *a = lock_for(f, "l1", "a", &c, false);
    assert_int_equal(kc__lease_lock_try(a, NULL), 1);
    assert_true(kc__lease_lock_is_holder(a));
    assert_int_equal(kc__lease_lock_valid_until(a), 1000 + RD_NS);
    assert_int_equal(kc__lease_lock_record(a)->transitions, 0);
    assert_int_equal(kc__lease_lock_record(a)->duration_s, 2);
    char *acq = lease_str(f, "l1", "/spec/acquireTime");
    assert_non_null(acq);
    c.now += KC__NS_PER_SEC / 2;
    assert_int_equal(kc__lease_lock_try(a, NULL), 1);
    assert_int_equal(kc__lease_lock_valid_until(a), c.now + RD_NS);
    char *acq2 = lease_str(f, "l1", "/spec/acquireTime");
    char *holder = lease_str(f, "l1", "/spec/holderIdentity");
    assert_string_equal(acq, acq2);
    assert_string_equal(holder, "a");
    assert_int_equal(kc__lease_lock_record(a)->transitions, 0);
    assert_int_equal(kc__lease_lock_slowpath(a), 0);
    free(acq);
    free(acq2);
    free(holder);
    kc__lease_lock_free(a);
}

/* L3 (4), L5: b waits LD after its own observation of the last change, then takes over with
 * transitions + 1; a renew by a meanwhile restarts b's wait. */
static void test_takeover_after_observed_expiry(void **state)
{
    ifx *f = *state;
    fake_clock ca = {5}, cb = {7};
    kc__lease_lock *a = lock_for(f, "l2", "a", &ca, false);
    kc__lease_lock *b = lock_for(f, "l2", "b", &cb, false);
    assert_int_equal(kc__lease_lock_try(a, NULL), 1);
    assert_int_equal(kc__lease_lock_try(b, NULL), 0);
    assert_int_equal(kc__lease_lock_valid_until(b), 0);
    cb.now += LD_NS - 1;
    assert_int_equal(kc__lease_lock_try(b, NULL), 0); /* not yet: LD not passed */
    ca.now += KC__NS_PER_SEC;
    assert_int_equal(kc__lease_lock_try(a, NULL), 1); /* a renews: a new record */
    cb.now += 2;                                      /* LD since b's first look, but ... */
    assert_int_equal(kc__lease_lock_try(b, NULL), 0); /* ... the change restarted it (L5) */
    cb.now += LD_NS;
    assert_int_equal(kc__lease_lock_try(b, NULL), 1);
    assert_int_equal(kc__lease_lock_record(b)->transitions, 1);
    /* a's own view still says valid: its fast-path update has a stale RV (409, L4), it falls
     * back to Get and sees b (one winner per resourceVersion). */
    assert_int_equal(kc__lease_lock_try(a, NULL), 0);
    assert_false(kc__lease_lock_is_holder(a));
    assert_int_equal(kc__lease_lock_valid_until(a), 0);
    char *holder = lease_str(f, "l2", "/spec/holderIdentity");
    assert_string_equal(holder, "b");
    free(holder);
    kc__lease_lock_free(a);
    kc__lease_lock_free(b);
}

/* L5: renewTime is never compared with the local clock — a record from the far future or past
 * is judged by when we saw it change, nothing else. */
static void check_clock_skew(ifx *f, const char *name, const char *renew)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"holderIdentity\":\"other\","
             "\"leaseDurationSeconds\":2,\"renewTime\":\"%s\",\"acquireTime\":\"%s\","
             "\"leaseTransitions\":3}}",
             name, renew, renew);
    put_lease(f, json);
    fake_clock c = {100};
    kc__lease_lock *b = lock_for(f, name, "b", &c, false);
    assert_int_equal(kc__lease_lock_try(b, NULL), 0);
    c.now += LD_NS - 1;
    assert_int_equal(kc__lease_lock_try(b, NULL), 0);
    c.now += 1;
    assert_int_equal(kc__lease_lock_try(b, NULL), 1);
    assert_int_equal(kc__lease_lock_record(b)->transitions, 4);
    kc__lease_lock_free(b);
}

static void test_renew_time_skew_ignored(void **state)
{
    check_clock_skew(*state, "future", "2099-01-01T00:00:00.000000Z");
    check_clock_skew(*state, "past", "1971-01-01T00:00:00.000000Z");
}

/* L4: two locks that both judge c's Lease expired at the same resourceVersion: the first update
 * wins; the second re-Gets, sees the winner's fresh record and does not take it (never two
 * holders). The stale-RV 409 itself is exercised in test_takeover_after_observed_expiry. */
static void test_conflict_one_winner(void **state)
{
    ifx *f = *state;
    fake_clock ca = {0}, cb = {0}, cc = {0};
    kc__lease_lock *a = lock_for(f, "l3", "a", &ca, false);
    kc__lease_lock *b = lock_for(f, "l3", "b", &cb, false);
    kc__lease_lock *c = lock_for(f, "l3", "c", &cc, false);
    assert_int_equal(kc__lease_lock_try(c, NULL), 1);
    assert_int_equal(kc__lease_lock_try(a, NULL), 0);
    assert_int_equal(kc__lease_lock_try(b, NULL), 0);
    ca.now = cb.now = LD_NS; /* both see c's lease expire; both hold the same RV */
    assert_int_equal(kc__lease_lock_try(a, NULL), 1);
    /* b re-Gets (it is not holder), so it sees a's fresh record and waits: 0, not a winner */
    assert_int_equal(kc__lease_lock_try(b, NULL), 0);
    assert_false(kc__lease_lock_is_holder(b));
    kc__lease_lock_free(a);
    kc__lease_lock_free(b);
    kc__lease_lock_free(c);
}

/* L9: release writes holder "", leaseDurationSeconds 1, keeps the transitions; another lock
 * acquires at once (empty holder, L3 step 4). */
static void test_release(void **state)
{
    ifx *f = *state;
    fake_clock ca = {0}, cb = {0};
    kc__lease_lock *a = lock_for(f, "l4", "a", &ca, false);
    kc__lease_lock *b = lock_for(f, "l4", "b", &cb, false);
    assert_int_equal(kc__lease_lock_try(a, NULL), 1);
    assert_int_equal(kc__lease_lock_try(b, NULL), 0);
    assert_int_equal(kc__lease_lock_release(a, NULL), 0);
    assert_int_equal(kc__lease_lock_valid_until(a), 0);
    const kc__lease_record *r = kc__lease_lock_record(a);
    assert_string_equal(r->holder, "");
    assert_int_equal(r->duration_s, 1);
    assert_int_equal(r->transitions, 0);
    assert_int_equal(kc__lease_lock_try(b, NULL), 1); /* no clock step needed */
    assert_int_equal(kc__lease_lock_record(b)->transitions, 1);
    assert_int_equal(kc__lease_lock_release(a, NULL), 0); /* not holder: nothing to do */
    char *holder = lease_str(f, "l4", "/spec/holderIdentity");
    assert_string_equal(holder, "b");
    free(holder);
    kc__lease_lock_free(a);
    kc__lease_lock_free(b);
}

/* L2: strategy and preferredHolder survive our renew; coordinated mode never acquires a free
 * Lease and stops renewing once someone else is preferred. */
static void test_coordinated_fields(void **state)
{
    ifx *f = *state;
    put_lease(f, "{\"metadata\":{\"name\":\"l5\"},\"spec\":{\"holderIdentity\":\"a\","
                 "\"leaseDurationSeconds\":2,\"strategy\":\"OldestEmulationVersion\"}}");
    fake_clock c = {0};
    kc__lease_lock *a = lock_for(f, "l5", "a", &c, true);
    assert_int_equal(kc__lease_lock_try(a, NULL), 1);
    c.now += 1;
    assert_int_equal(kc__lease_lock_try(a, NULL), 1);
    char *s = lease_str(f, "l5", "/spec/strategy");
    assert_string_equal(s, "OldestEmulationVersion");
    free(s);
    kc_obj *o = NULL;
    assert_int_equal(kc_client_get(f->client, &leases, "default", "l5", &o, NULL), 0);
    const char *pre = "{\"metadata\":{\"name\":\"l5\",\"resourceVersion\":%s},\"spec\":{"
                      "\"holderIdentity\":\"a\",\"leaseDurationSeconds\":2,"
                      "\"strategy\":\"OldestEmulationVersion\",\"preferredHolder\":\"z\"}}";
    char *body = NULL;
    size_t n = 0;
    assert_int_equal(kc_json_format(&body, &n, NULL, pre, kc_obj_resource_version(o)), 0);
    kc_obj_unref(o);
    assert_int_equal(kc_client_update(f->client, &leases, "default", body, n, NULL, NULL, NULL), 0);
    free(body);
    c.now += 1;
    assert_int_equal(kc__lease_lock_try(a, NULL), 0); /* preferredHolder is z: stop renewing */
    s = lease_str(f, "l5", "/spec/preferredHolder");
    assert_string_equal(s, "z");
    free(s);
    kc__lease_lock_free(a);
    kc__lease_lock *b = lock_for(f, "l6", "b", &c, true);
    assert_int_equal(kc__lease_lock_try(b, NULL), 0); /* missing Lease: coordinated never creates */
    kc__lease_lock_free(b);
}

/* A8: the caller's annotations are written on create and update; annotations others put on the
 * Lease are kept. */
static void test_annotations(void **state)
{
    ifx *f = *state;
    fake_clock c = {0};
    kc__lease_lock *a = lock_for(f, "l7", "a", &c, false);
    assert_int_equal(kc__lease_lock_set_annotation(a, "kcache.io/k", "64"), 0);
    assert_int_equal(kc__lease_lock_try(a, NULL), 1);
    char *v = NULL;
    assert_int_equal(kc__lease_lock_annotation(a, "kcache.io/k", &v), 0);
    assert_string_equal(v, "64");
    free(v);
    /* someone adds an annotation: a merge patch */
    const char *p = "{\"metadata\":{\"annotations\":{\"other/x\":\"y\"}}}";
    assert_int_equal(kc_client_patch(f->client, &leases, "default", "l7", KC_PATCH_MERGE, p,
                                     strlen(p), NULL, NULL, NULL),
                     0);
    assert_int_equal(kc__lease_lock_set_annotation(a, "kcache.io/k", "128"), 0);
    c.now += 1;
    assert_int_equal(kc__lease_lock_try(a, NULL), 1); /* fast path: 409, then Get + update */
    char *k = lease_str(f, "l7", "/metadata/annotations/kcache.io~1k");
    char *x = lease_str(f, "l7", "/metadata/annotations/other~1x");
    assert_string_equal(k, "128");
    assert_string_equal(x, "y");
    free(k);
    free(x);
    assert_int_equal(kc__lease_lock_annotation(a, "absent", &v), KC_ENOTFOUND);
    kc__lease_lock_free(a);
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
        cmocka_unit_test(test_acquire_then_renew),
        cmocka_unit_test(test_takeover_after_observed_expiry),
        cmocka_unit_test(test_renew_time_skew_ignored),
        cmocka_unit_test(test_conflict_one_winner),
        cmocka_unit_test(test_release),
        cmocka_unit_test(test_coordinated_fields),
        cmocka_unit_test(test_annotations),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
