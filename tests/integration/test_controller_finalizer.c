/*
 * test_controller_finalizer.c — the controller's finalizer registry (kc_controller_add_finalizer,
 * kube-runtime's finalizer(): Event::Apply / Event::Cleanup; Issue 31 point 6) against the
 * embedded API server, which keeps an object being deleted while finalizers remain and deletes it
 * when the last one is removed (apiserver-semantics §3.5, #36, #37, #50):
 *   - a new object gets the finalizer before reconcile runs (the reconcile's cached read sees it);
 *   - a delete leaves the object (deletionTimestamp set); cleanup runs, not reconcile; a failing
 *     cleanup (ERROR twice) is retried with the queue's growing backoff (spec C3 error row, R2)
 *     and keeps the finalizer; once cleanup returns DONE the finalizer is removed and the object
 *     disappears from the server and from the controller's cache;
 *   - an object being deleted without our finalizer (another one keeps it) gets neither reconcile
 *     nor cleanup;
 *   - with a label selector, only matching objects get the finalizer, and one that stops matching
 *     is cleaned up and released while it lives on.
 */
#include "test_controller_fixture.h"

#include "kcache/finalizer.h"

#define FIN "kcache.example.com/cleanup"

typedef struct cleanup_rec {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned n, fail_first;
    uint64_t start_ns[16], end_ns[16];
    unsigned reconciles_at[16]; /* recorder's reconcile count at each cleanup */
    bool saw_deleting;          /* every cleanup got an object with deletionTimestamp + FIN */
    crec *r;
} cleanup_rec;

static kc_reconcile_result cleanup(void *ud, const kc_reconcile_request *req, kc_obj *obj,
                                   kc_cached_client *cc)
{
    (void)req, (void)cc;
    cleanup_rec *c = ud;
    pthread_mutex_lock(&c->r->mu);
    unsigned rec = (unsigned)c->r->n;
    pthread_mutex_unlock(&c->r->mu);
    pthread_mutex_lock(&c->mu);
    unsigned i = c->n < 16 ? c->n : 15;
    c->start_ns[i] = kc__now_ns();
    c->reconciles_at[i] = rec;
    if (!kc_obj_deleting(obj) || !kc_obj_has_finalizer(obj, FIN))
        c->saw_deleting = false;
    bool fail = c->n < c->fail_first;
    c->end_ns[i] = kc__now_ns();
    c->n++;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return (kc_reconcile_result){fail ? KC_RECONCILE_ERROR : KC_RECONCILE_DONE, 0};
}

static bool cleanup_wait(cleanup_rec *c, unsigned n, int64_t timeout_ms)
{
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    pthread_mutex_lock(&c->mu);
    while (c->n < n && kc__cond_wait_until(&c->cv, &c->mu, deadline) == 0) {
    }
    bool ok = c->n >= n;
    pthread_mutex_unlock(&c->mu);
    return ok;
}

/* Every reconcile checks that the object it reads from the cache carries the finalizer. */
static unsigned missing_in_reconcile;
static kc_reconcile_result check_fin(crec *r, const kc_reconcile_request *req, kc_cached_client *cc,
                                     unsigned nth)
{
    (void)r, (void)nth;
    kc_obj *o = NULL;
    if (kc_cached_client_get(cc, &ifx_cm, req->ns, req->name, NULL, &o, NULL) == 0) {
        if (!kc_obj_has_finalizer(o, FIN))
            __atomic_add_fetch(&missing_in_reconcile, 1, __ATOMIC_RELAXED);
        kc_obj_unref(o);
    }
    return (kc_reconcile_result){KC_RECONCILE_DONE, 0};
}

static kc_controller *fin_make(cfx *x, cleanup_rec *c, unsigned fail_first)
{
    memset(c, 0, sizeof(*c));
    pthread_mutex_init(&c->mu, NULL);
    kc__cond_init_monotonic(&c->cv);
    c->fail_first = fail_first;
    c->saw_deleting = true;
    c->r = &x->r;
    x->queue.base_delay_ms = 50;
    x->queue.bucket_qps = -1;
    kc_controller *ctrl = cfx_make(x);
    kc_error e = KC_ERROR_INIT;
    kc_finalizer_opts fo = {.finalizer = FIN, .cleanup = cleanup, .ud = c};
    kc_finalizer_opts other = {.finalizer = "other.example.com/x", .cleanup = cleanup, .ud = c};
    kc_finalizer_opts bad = {.finalizer = "bad name!", .cleanup = cleanup, .ud = c};
    kc_finalizer_opts badsel = {.finalizer = FIN, .cleanup = cleanup, .label_selector = "a in ("};
    IFX_RC(kc_controller_add_finalizer(ctrl, &badsel, &e), KC_EINVAL, &e);
    kc_error_clear(&e);
    IFX_RC(kc_controller_add_finalizer(ctrl, &bad, &e), KC_EINVAL, &e); /* not a qualified name */
    kc_error_clear(&e);
    IFX_RC(kc_controller_add_finalizer(ctrl, &fo, &e), 0, &e);
    /* One per controller. */
    IFX_RC(kc_controller_add_finalizer(ctrl, &other, &e), KC_EEXISTS, &e);
    kc_error_clear(&e);
    cfx_start(ctrl);
    IFX_RC(kc_controller_add_finalizer(ctrl, &fo, &e), KC_EBUSY, &e);
    kc_error_clear(&e);
    return ctrl;
}

/* The object on the server (NULL when gone). */
static kc_obj *server_get(cfx *x, const char *name)
{
    kc_obj *o = NULL;
    int rc = kc_client_get(x->f.client, &ifx_cm, "default", name, &o, NULL);
    return rc == 0 ? o : NULL;
}

static void test_controller_finalizer_lifecycle(void **st)
{
    (void)st;
    cfx x;
    cleanup_rec c;
    cfx_up(&x, NULL, check_fin);
    kc_controller *ctrl = fin_make(&x, &c, 2);
    cfx_create_cm(&x.f, "fa");
    assert_true(crec_wait_key(&x.r, "default/fa", 1, 10000));
    assert_int_equal(__atomic_load_n(&missing_in_reconcile, __ATOMIC_RELAXED), 0);
    kc_obj *o = server_get(&x, "fa");
    assert_non_null(o);
    assert_true(kc_obj_has_finalizer(o, FIN)); /* added before the reconcile ran */
    kc_obj_unref(o);
    /* The finalizer's own patch is an event too: a second reconcile. Let the controller go idle
     * so that the deletion is the only event left and the cleanup retries are the backoff's. */
    assert_true(crec_wait_key(&x.r, "default/fa", 2, 10000));
    kc_controller_stats s;
    assert_true(CFX_WAIT_STATS(
        ctrl, s, kc_workqueue_len(kc_controller_queue(ctrl)) == 0 && s.running == 0, 10000));
    uint64_t done0 = s.done;

    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_client_delete(x.f.client, &ifx_cm, "default", "fa", NULL, NULL, &e), 0, &e);
    o = server_get(&x, "fa");
    assert_non_null(o); /* kept by the finalizer */
    assert_true(kc_obj_deleting(o));
    kc_obj_unref(o);

    assert_true(cleanup_wait(&c, 3, 10000));
    pthread_mutex_lock(&c.mu);
    assert_true(c.saw_deleting);
    /* Rate-limited retries after each ERROR: 50 ms, then 100 ms (base 50, doubling). */
    assert_true(c.start_ns[1] >= c.end_ns[0] + 50 * KC__NS_PER_MS);
    assert_true(c.start_ns[2] >= c.end_ns[1] + 100 * KC__NS_PER_MS);
    /* No reconcile while the object was being cleaned up. */
    assert_int_equal(c.reconciles_at[0], c.reconciles_at[2]);
    pthread_mutex_unlock(&c.mu);

    /* DONE: the finalizer is removed, the server deletes the object (bounded poll). */
    uint64_t deadline = kc__deadline_after_ms(10000);
    while ((o = server_get(&x, "fa")) != NULL && kc__now_ns() < deadline) {
        kc_obj_unref(o);
        kc__sleep_ns(5 * KC__NS_PER_MS); /* bounded poll of the server, not a sleep-for-sync */
    }
    assert_null(o);
    /* ...and the controller's cache no longer has it once the cleanup's key returned: the
     * finalizer's removal waited for the cache (read-your-writes). */
    assert_true(CFX_WAIT_STATS(ctrl, s, s.done >= done0 + 1 && s.errors >= 2, 10000));
    kc_obj *g = NULL;
    IFX_RC(kc_cached_client_get(kc_controller_client(ctrl), &ifx_cm, "default", "fa", NULL, &g, &e),
           KC_ENOTFOUND, &e);
    kc_error_clear(&e);
    assert_int_equal(c.n, 3);
    cfx_down(&x);
}

/* Deleting with another finalizer left: ours is removed after cleanup, the object stays; a later
 * change of it runs neither reconcile nor cleanup. */
static void test_controller_finalizer_absent_while_deleting(void **st)
{
    (void)st;
    cfx x;
    cleanup_rec c;
    cfx_up(&x, NULL, check_fin);
    kc_controller *ctrl = fin_make(&x, &c, 0);
    const char *body = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                       "\"fb\",\"finalizers\":[\"other.example.com/keep\"]}}";
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_client_create(x.f.client, &ifx_cm, "default", body, strlen(body), NULL, NULL, &e), 0,
           &e);
    assert_true(crec_wait_key(&x.r, "default/fb", 1, 10000));
    IFX_RC(kc_client_delete(x.f.client, &ifx_cm, "default", "fb", NULL, NULL, &e), 0, &e);
    assert_true(cleanup_wait(&c, 1, 10000));
    uint64_t deadline = kc__deadline_after_ms(10000);
    kc_obj *o = NULL;
    for (;;) { /* bounded poll: our finalizer gone, the other one keeps the object */
        o = server_get(&x, "fb");
        assert_non_null(o);
        if (!kc_obj_has_finalizer(o, FIN) || kc__now_ns() >= deadline)
            break;
        kc_obj_unref(o);
        kc__sleep_ns(5 * KC__NS_PER_MS);
    }
    assert_false(kc_obj_has_finalizer(o, FIN));
    assert_true(kc_obj_has_finalizer(o, "other.example.com/keep"));
    assert_true(kc_obj_deleting(o));
    kc_obj_unref(o);

    kc_controller_stats s;
    assert_true(CFX_WAIT_STATS(
        ctrl, s, kc_workqueue_len(kc_controller_queue(ctrl)) == 0 && s.running == 0, 10000));
    uint64_t before = s.reconciles;
    unsigned recs = crec_count(&x.r, "default/fb");
    const char *patch = "{\"metadata\":{\"labels\":{\"touched\":\"yes\"}}}";
    IFX_RC(kc_client_patch(x.f.client, &ifx_cm, "default", "fb", KC_PATCH_MERGE, patch,
                           strlen(patch), NULL, NULL, &e),
           0, &e);
    assert_true(CFX_WAIT_STATS(ctrl, s, s.reconciles > before, 10000));
    assert_int_equal(crec_count(&x.r, "default/fb"), recs); /* no reconcile */
    pthread_mutex_lock(&c.mu);
    assert_int_equal(c.n, 1); /* no second cleanup */
    pthread_mutex_unlock(&c.mu);
    cfx_down(&x);
}

/* Poll the server (bounded) until name's finalizer presence is want; true when it is. */
static bool server_fin_is(cfx *x, const char *name, bool want)
{
    uint64_t deadline = kc__deadline_after_ms(10000);
    for (;;) {
        kc_obj *o = server_get(x, name);
        bool has = o && kc_obj_has_finalizer(o, FIN);
        kc_obj_unref(o);
        if (has == want || kc__now_ns() >= deadline)
            return has == want;
        kc__sleep_ns(5 * KC__NS_PER_MS); /* bounded poll of the server, not a sleep-for-sync */
    }
}

/* kc_finalizer_opts.label_selector: an object outside it gets no finalizer; labelled, it gets
 * one; unlabelled, cleanup runs on the live object (not deleting), the finalizer is released and
 * reconcile runs after it — the object is never left with a finalizer nobody will remove. */
static void test_controller_finalizer_selector(void **st)
{
    (void)st;
    cfx x;
    cleanup_rec c;
    memset(&c, 0, sizeof c);
    pthread_mutex_init(&c.mu, NULL);
    kc__cond_init_monotonic(&c.cv);
    cfx_up(&x, NULL, NULL);
    c.r = &x.r;
    kc_controller *ctrl = cfx_make(&x);
    kc_error e = KC_ERROR_INIT;
    kc_finalizer_opts fo = {
        .finalizer = FIN, .cleanup = cleanup, .ud = &c, .label_selector = "mirror=true"};
    IFX_RC(kc_controller_add_finalizer(ctrl, &fo, &e), 0, &e);
    cfx_start(ctrl);
    cfx_create_cm(&x.f, "fs");
    assert_true(crec_wait_key(&x.r, "default/fs", 1, 10000));
    assert_true(server_fin_is(&x, "fs", false)); /* not for this object */
    const char *label = "{\"metadata\":{\"labels\":{\"mirror\":\"true\"}}}";
    IFX_RC(kc_client_patch(x.f.client, &ifx_cm, "default", "fs", KC_PATCH_MERGE, label,
                           strlen(label), NULL, NULL, &e),
           0, &e);
    assert_true(server_fin_is(&x, "fs", true));
    unsigned recs = crec_count(&x.r, "default/fs");
    const char *unlabel = "{\"metadata\":{\"labels\":{\"mirror\":null}}}";
    IFX_RC(kc_client_patch(x.f.client, &ifx_cm, "default", "fs", KC_PATCH_MERGE, unlabel,
                           strlen(unlabel), NULL, NULL, &e),
           0, &e);
    assert_true(cleanup_wait(&c, 1, 10000));
    assert_true(server_fin_is(&x, "fs", false)); /* released */
    kc_obj *o = server_get(&x, "fs");
    assert_non_null(o);
    assert_false(kc_obj_deleting(o)); /* the object lives on */
    kc_obj_unref(o);
    assert_true(crec_wait_key(&x.r, "default/fs", recs + 1, 10000)); /* reconciled after */
    pthread_mutex_lock(&c.mu);
    assert_int_equal(c.n, 1);
    pthread_mutex_unlock(&c.mu);
    cfx_down(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_controller_finalizer_lifecycle),
        cmocka_unit_test(test_controller_finalizer_absent_while_deleting),
        cmocka_unit_test(test_controller_finalizer_selector),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
