/*
 * Convergence under faults: random ConfigMap writes while the embedded server closes watches at
 * random, compacts its history (watches and lists at old RVs get 410), throttles LIST/WATCH with
 * 429 + Retry-After, and restarts with an RV reset. Two informers watch the same namespace, one by
 * streaming list and one by paged LIST+WATCH, each with a handler that mirrors its events into a
 * separate kc_store. After the writes stop and the faults are lifted:
 *   - each informer's store equals the server's LIST (same keys, same RVs);
 *   - each mirror equals its store (the handler event sequence is consistent: no lost deletes),
 *     and no event contradicted the mirror (update/delete of an unknown key, add of a known one);
 *   - the store watermark went backwards at most once (sampled at every handler callback): at the
 *     relist after the restart with an RV reset, where it follows the server's new timeline.
 */
#include "test_informer_fixture.h"

#include <pthread.h>

typedef struct mirror {
    kc_store *m;
    kc_store *watched; /* the informer's store, for watermark samples */
    pthread_mutex_t mu;
    char last_wm[KC_STORE_RV_MAX];
    int contradictions, backwards, events;
} mirror;

static void sample_wm(mirror *x)
{
    char wm[KC_STORE_RV_MAX];
    if (kc_store_watermark(x->watched, wm, sizeof(wm)) < 0)
        return;
    pthread_mutex_lock(&x->mu);
    if (x->last_wm[0] && kc_rv_compare(wm, x->last_wm) == KC_RV_LESS)
        x->backwards++;
    strcpy(x->last_wm, wm);
    x->events++;
    pthread_mutex_unlock(&x->mu);
}

static bool known(mirror *x, kc_obj *o, const char **ret_rv, kc_obj **keep)
{
    kc_obj *cur = kc_store_get(x->m, kc_obj_namespace(o), kc_obj_name(o));
    *keep = cur;
    *ret_rv = cur ? kc_obj_resource_version(cur) : NULL;
    return cur != NULL;
}

static void m_add(void *ud, kc_obj *o)
{
    mirror *x = ud;
    const char *rv;
    kc_obj *cur;
    if (known(x, o, &rv, &cur))
        x->contradictions++;
    kc_obj_unref(cur);
    kc_store_apply(x->m, KC_WATCH_ADDED, o, NULL, NULL);
    sample_wm(x);
}

static void m_update(void *ud, kc_obj *old, kc_obj *o)
{
    mirror *x = ud;
    const char *rv;
    kc_obj *cur;
    if (!known(x, o, &rv, &cur) || strcmp(rv, kc_obj_resource_version(old)) != 0)
        x->contradictions++;
    kc_obj_unref(cur);
    kc_store_apply(x->m, KC_WATCH_MODIFIED, o, NULL, NULL);
    sample_wm(x);
}

static void m_delete(void *ud, kc_obj *o, bool tombstone)
{
    mirror *x = ud;
    const char *rv;
    kc_obj *cur;
    if (!known(x, o, &rv, &cur))
        x->contradictions++;
    kc_obj_unref(cur);
    kc_store_apply(x->m, KC_WATCH_DELETED, o, NULL, NULL);
    sample_wm(x);
}

/* Every key of a equals (same RV) the key in b and the sizes match. */
static size_t store_diff(kc_store *a, kc_store *b)
{
    kc_obj **v;
    size_t n, d = 0;
    assert_int_equal(kc_store_list(a, &v, &n, NULL), 0);
    for (size_t i = 0; i < n; i++) {
        kc_obj *o = kc_store_get(b, kc_obj_namespace(v[i]), kc_obj_name(v[i]));
        if (!o || strcmp(kc_obj_resource_version(o), kc_obj_resource_version(v[i])) != 0) {
            fprintf(stderr, "mirror diff: %s/%s\n", kc_obj_namespace(v[i]), kc_obj_name(v[i]));
            d++;
        }
        kc_obj_unref(o);
    }
    if (kc_store_len(b) != n)
        d++;
    kc_obj_array_free(v, n);
    return d;
}

typedef struct writer {
    ifx *f;
    int ops;
    kc__rng rng;
    kc_informer **inf; /* the informers under test: the restart waits for them to see it */
    int n_inf;
} writer;

static void set_faults(ifx *f, double close_prob, double r429, double watch503)
{
    kc_server_faults fl = {0};
    fl.watch_close_prob = close_prob;
    fl.rate_429[KC_SERVER_VERB_LIST] = r429;
    fl.rate_429[KC_SERVER_VERB_WATCH] = r429;
    fl.rate_503[KC_SERVER_VERB_WATCH] = watch503;
    fl.retry_after_s = r429 > 0 ? 1 : 0;
    ifx_faults(f, &fl);
}

/* Random writes on 40 names; the fault script runs at fixed points of the sequence:
 *   20 %  watches closed at random (5 % per event)
 *   30 %  every watch closed at its next event and re-watching fails (503): the informers fall
 *         behind while writes go on
 *   40 %  compaction: their resume RV is now below the history floor
 *   45 %  watches allowed again → 410 Expired → relist (at the last RV, then at "")
 *   50 %  LIST and WATCH throttled (30 % 429 with Retry-After: 1)
 *   70 %  restart with an RV reset (server went back in time); the writes pause until every
 *         informer has converged on the new, empty state
 *   80 %  compaction again
 * Why the pause: a reset is only detectable while the server's RV is below the informer's resume
 * RV (504 too large / older events). If writes went on, a slow informer (TSan, 429 backoff) could
 * reconnect after the new RVs passed its old one, get a plausible replay and keep stale objects —
 * undetectable by any client, so the test failed by timing (seen under `make tsan` on 2 cores). */
static void run_writes(writer *w)
{
    char name[32], val[32];
    int n = w->ops;
    for (int i = 0; i < n; i++) {
        if (i == n / 5)
            set_faults(w->f, 0.05, 0, 0);
        if (i == 3 * n / 10)
            set_faults(w->f, 1.0, 0, 1.0);
        if (i == 4 * n / 10)
            assert_int_equal(kc_server_compact(w->f->srv), 0);
        if (i == 45 * n / 100)
            set_faults(w->f, 0.05, 0, 0);
        if (i == n / 2)
            set_faults(w->f, 0.05, 0.3, 0);
        if (i == 6 * n / 10)
            set_faults(w->f, 0.02, 0, 0);
        if (i == 7 * n / 10) {
            assert_int_equal(kc_server_restart(w->f->srv, KC_SERVER_RESTART_WIPE, NULL), 0);
            for (int k = 0; k < w->n_inf; k++)
                assert_int_equal(
                    ifx_converge(w->f, &ifx_cm, "default", kc_informer_store(w->inf[k]), 60000), 0);
        }
        if (i == 8 * n / 10)
            assert_int_equal(kc_server_compact(w->f->srv), 0);
        snprintf(name, sizeof(name), "cm-%d", (int)kc__rng_range(&w->rng, 0, 39));
        snprintf(val, sizeof(val), "%d", i);
        switch (kc__rng_range(&w->rng, 0, 2)) {
        case 0:
            ifx_cm_create(w->f, "default", name, val, NULL);
            break;
        case 1:
            ifx_cm_update(w->f, "default", name, val);
            break;
        default:
            ifx_cm_delete(w->f, "default", name);
            break;
        }
    }
    set_faults(w->f, 0, 0, 0);
}

static void test_informer_faults_converge_after_chaos(void **st)
{
    ifx f;
    ifx_up(&f, "configmaps=20:ns=default");
    kc_informer *inf[2];
    mirror mx[2];
    kc_informer_reg *reg[2];
    kc_error e = KC_ERROR_INIT;
    for (int i = 0; i < 2; i++) {
        kc_informer_opts o = {.ns = "default",
                              .list_mode =
                                  i == 0 ? KC_INFORMER_LIST_STREAMING : KC_INFORMER_LIST_PAGED,
                              .page_size = 9,
                              .backoff_initial_ms = 50,
                              .backoff_max_ms = 400,
                              .name = i == 0 ? "streaming" : "paged"};
        IFX_RC(kc_informer_new(f.client, &ifx_cm, &o, &inf[i], &e), 0, &e);
        memset(&mx[i], 0, sizeof(mx[i]));
        pthread_mutex_init(&mx[i].mu, NULL);
        IFX_RC(kc_store_new(NULL, &mx[i].m, &e), 0, &e);
        mx[i].watched = kc_informer_store(inf[i]);
        kc_informer_handlers h = {
            .on_add = m_add, .on_update = m_update, .on_delete = m_delete, .ud = &mx[i]};
        IFX_RC(kc_informer_add_handler(inf[i], &h, NULL, &reg[i], &e), 0, &e);
        IFX_RC(kc_informer_start(inf[i], &e), 0, &e);
    }
    for (int i = 0; i < 2; i++)
        assert_int_equal(kc_informer_wait_synced(inf[i], 20000, NULL), 0);
    writer w = {&f, 600, {{0}}, inf, 2};
    kc__rng_seed(&w.rng, 42);
    run_writes(&w);
    for (int i = 0; i < 2; i++) {
        size_t d = ifx_converge(&f, &ifx_cm, "default", kc_informer_store(inf[i]), 60000);
        if (d)
            fprintf(stderr, "informer %s did not converge\n", kc_informer_name(inf[i]));
        assert_int_equal(d, 0);
        assert_int_equal(kc_informer_reg_wait_idle(reg[i], 10000, NULL), 0);
        assert_int_equal(store_diff(kc_informer_store(inf[i]), mx[i].m), 0);
        assert_int_equal(mx[i].contradictions, 0);
        assert_true(mx[i].backwards <= 1); /* the one RV reset (restart at 70 %) */
        kc_informer_status s;
        kc_informer_get_status(inf[i], &s);
        fprintf(stderr, "%s: events %llu relists %llu watch restarts %llu errors %llu\n",
                kc_informer_name(inf[i]), (unsigned long long)s.events_applied,
                (unsigned long long)s.relists, (unsigned long long)s.watch_restarts,
                (unsigned long long)s.errors);
        assert_true(s.relists >= 1); /* compaction and restart force relists */
    }
    for (int i = 0; i < 2; i++) {
        kc_informer_free(inf[i]);
        kc_store_free(mx[i].m);
    }
    ifx_down(&f);
}

static kc_informer *start_one(ifx *f, kc_informer_list_mode mode)
{
    kc_informer_opts o = {
        .ns = "default", .list_mode = mode, .backoff_initial_ms = 20, .backoff_max_ms = 100};
    kc_informer *inf = NULL;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_informer_new(f->client, &ifx_cm, &o, &inf, &e), 0, &e);
    IFX_RC(kc_informer_start(inf, &e), 0, &e);
    assert_int_equal(kc_informer_wait_synced(inf, 20000, NULL), 0);
    return inf;
}

/* The watch breaks, writes go on, the history is compacted: resuming gets 410 Expired and the
 * informer relists (informer-semantics §6.5). Both list paths. */
static void test_informer_faults_relist_after_410(void **st)
{
    for (int mode = 0; mode < 2; mode++) {
        ifx f;
        ifx_up(&f, "configmaps=10:ns=default");
        kc_informer *inf =
            start_one(&f, mode ? KC_INFORMER_LIST_PAGED : KC_INFORMER_LIST_STREAMING);
        set_faults(&f, 1.0, 0, 1.0); /* close at the next event; re-watching fails (503) */
        assert_int_equal(ifx_cm_create(&f, "default", "closer", "1", NULL), 0);
        /* Wait (bounded) until a re-watch has failed: the informer is then behind. No event marks
         * it, so this polls the status with a deadline. */
        uint64_t deadline = kc__deadline_after_ms(20000);
        kc_informer_status s0;
        do {
            kc__sleep_ns(10 * KC__NS_PER_MS);
            kc_informer_get_status(inf, &s0);
        } while (s0.errors == 0 && kc__now_ns() < deadline);
        assert_true(s0.errors > 0);
        for (int i = 0; i < 5; i++) { /* missed while the watch is down */
            char name[16];
            snprintf(name, sizeof(name), "missed-%d", i);
            assert_int_equal(ifx_cm_create(&f, "default", name, "1", NULL), 0);
        }
        assert_int_equal(ifx_cm_delete(&f, "default", "cm-00000"), 0);
        assert_int_equal(kc_server_compact(f.srv), 0);
        set_faults(&f, 0, 0, 0);
        assert_int_equal(ifx_converge(&f, &ifx_cm, "default", kc_informer_store(inf), 30000), 0);
        kc_informer_status s;
        kc_informer_get_status(inf, &s);
        assert_true(s.relists >= 1);
        kc_informer_free(inf);
        ifx_down(&f);
    }
}

/* The server restarts with an RV reset: the informer notices (504 too large / older bookmarks),
 * relists from scratch, and the watermark follows the server's new timeline down (left at the old,
 * higher RV, it would satisfy every read-your-writes wait at once). */
static void test_informer_faults_server_restart_relists(void **st)
{
    ifx f;
    ifx_up(&f, "configmaps=30:ns=default");
    kc_informer *inf = start_one(&f, KC_INFORMER_LIST_AUTO);
    char before[KC_STORE_RV_MAX], after[KC_STORE_RV_MAX];
    assert_true(kc_store_watermark(kc_informer_store(inf), before, sizeof(before)) > 0);
    assert_int_equal(kc_server_restart(f.srv, KC_SERVER_RESTART_WIPE, NULL), 0);
    assert_int_equal(ifx_cm_create(&f, "default", "reborn", "1", NULL), 0);
    assert_int_equal(ifx_converge(&f, &ifx_cm, "default", kc_informer_store(inf), 30000), 0);
    assert_int_equal(kc_store_len(kc_informer_store(inf)), 1);
    assert_true(kc_store_watermark(kc_informer_store(inf), after, sizeof(after)) > 0);
    assert_int_equal(kc_rv_compare(after, before), KC_RV_LESS);
    kc_informer_free(inf);
    ifx_down(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_informer_faults_relist_after_410),
        cmocka_unit_test(test_informer_faults_server_restart_relists),
        cmocka_unit_test(test_informer_faults_converge_after_chaos),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
