/*
 * Informer readiness and initial sync against the embedded API server: streaming list and paged
 * LIST+WATCH (fallback is in test_informer_fallback.c), waits that time out (unreachable server,
 * list failing), stop waking every waiter, the sync fd, and handlers.
 */
#include "test_informer_fixture.h"

#include <poll.h>
#include <pthread.h>

static kc_informer *start_inf(ifx *f, const kc_informer_opts *o)
{
    kc_informer *inf = NULL;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_informer_new(f->client, &ifx_cm, o, &inf, &e), 0, &e);
    IFX_RC(kc_informer_start(inf, &e), 0, &e);
    return inf;
}

static void check_synced_equal(ifx *f, kc_informer *inf)
{
    assert_int_equal(kc_informer_wait_synced(inf, 20000, NULL), 0);
    assert_true(kc_informer_has_synced(inf));
    char rv[KC_STORE_RV_MAX];
    assert_int_equal(ifx_diff(f, &ifx_cm, "default", kc_informer_store(inf), rv, true), 0);
}

static void test_informer_sync_streaming_list(void **st)
{
    ifx f;
    ifx_up(&f, "configmaps=120:ns=default");
    kc_informer_opts o = {.ns = "default"};
    kc_informer *inf = start_inf(&f, &o);
    check_synced_equal(&f, inf);
    kc_informer_status s;
    kc_informer_get_status(inf, &s);
    assert_true(s.streaming);
    assert_int_equal(s.objects, 120);
    assert_true(s.watermark[0] != '\0');
    kc_informer_free(inf);
    ifx_down(&f);
}

static void test_informer_sync_paged_list_then_watch(void **st)
{
    ifx f;
    ifx_up(&f, "configmaps=120:ns=default");
    kc_informer_opts o = {.ns = "default", .list_mode = KC_INFORMER_LIST_PAGED, .page_size = 7};
    kc_informer *inf = start_inf(&f, &o);
    check_synced_equal(&f, inf);
    kc_informer_status s;
    kc_informer_get_status(inf, &s);
    assert_false(s.streaming);
    /* The watch from the list RV delivers later writes. */
    char rv[KC_STORE_RV_MAX];
    assert_int_equal(ifx_cm_create(&f, "default", "after-list", "1", rv), 0);
    kc_store_cond c = {KC_STORE_WAIT_KEY_RV, "default", "after-list", rv, NULL, 0};
    assert_int_equal(kc_store_wait(kc_informer_store(inf), &c, 10000, NULL), 0);
    kc_informer_free(inf);
    ifx_down(&f);
}

static void test_informer_sync_wait_times_out_when_unreachable(void **st)
{
    ifx f;
    memset(&f, 0, sizeof(f));
    ifx_client_for(&f, "http://127.0.0.1:1");
    kc_informer_opts o = {.ns = "default", .backoff_initial_ms = 50};
    kc_informer *inf = start_inf(&f, &o);
    uint64_t t0 = kc__now_ns();
    assert_int_equal(kc_informer_wait_synced(inf, 300, NULL), KC_ETIMEOUT);
    uint64_t el = kc__now_ns() - t0;
    assert_true(el >= 290 * KC__NS_PER_MS && el < 3000 * KC__NS_PER_MS);
    assert_false(kc_informer_ready(inf));
    kc_informer_free(inf);
    kc_client_free(f.client);
    kc_config_unref(f.cfg);
}

static void test_informer_sync_wait_times_out_when_list_fails(void **st)
{
    ifx f;
    ifx_up(&f, "configmaps=5:ns=default");
    kc_server_faults fl = {0};
    fl.rate_503[KC_SERVER_VERB_LIST] = 1.0;
    ifx_faults(&f, &fl);
    kc_informer_opts o = {.ns = "default",
                          .list_mode = KC_INFORMER_LIST_PAGED,
                          .backoff_initial_ms = 20,
                          .backoff_max_ms = 50};
    kc_informer *inf = start_inf(&f, &o);
    assert_int_equal(kc_informer_wait_synced(inf, 400, NULL), KC_ETIMEOUT);
    /* Once the list succeeds the informer syncs. */
    memset(&fl, 0, sizeof(fl));
    ifx_faults(&f, &fl);
    assert_int_equal(kc_informer_wait_synced(inf, 20000, NULL), 0);
    kc_informer_free(inf);
    ifx_down(&f);
}

struct waiter {
    kc_informer *inf;
    int rc;
};

static void *wait_main(void *p)
{
    struct waiter *w = p;
    w->rc = kc_informer_wait_synced(w->inf, -1, NULL);
    return NULL;
}

static void *store_wait_main(void *p)
{
    struct waiter *w = p;
    kc_store_cond c = {KC_STORE_WAIT_KEY_RV, "default", "never", "999999", NULL, 0};
    w->rc = kc_store_wait(kc_informer_store(w->inf), &c, -1, NULL);
    return NULL;
}

static void test_informer_sync_stop_wakes_every_waiter(void **st)
{
    ifx f;
    memset(&f, 0, sizeof(f));
    ifx_client_for(&f, "http://127.0.0.1:1");
    kc_informer_opts o = {.ns = "default"};
    kc_informer *inf = start_inf(&f, &o);
    struct waiter w[4] = {{inf, 99}, {inf, 99}, {inf, 99}, {inf, 99}};
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, i < 2 ? wait_main : store_wait_main, &w[i]);
    kc_informer_stop(inf);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(w[i].rc, KC_ESTOPPED);
    }
    assert_int_equal(kc_informer_wait_synced(inf, 1000, NULL), KC_ESTOPPED);
    kc_informer_free(inf);
    kc_client_free(f.client);
    kc_config_unref(f.cfg);
}

/* The fd turns readable exactly when the informer has synced: before that poll times out, and
 * whenever poll reports it readable, has_synced is already true. */
static void test_informer_sync_fd_readable_exactly_at_sync(void **st)
{
    ifx f;
    ifx_up(&f, "configmaps=50:ns=default");
    kc_server_faults fl = {0};
    fl.rate_503[KC_SERVER_VERB_LIST] = 1.0;
    ifx_faults(&f, &fl);
    kc_informer_opts o = {.ns = "default",
                          .list_mode = KC_INFORMER_LIST_PAGED,
                          .backoff_initial_ms = 20,
                          .backoff_max_ms = 40};
    kc_informer *inf = start_inf(&f, &o);
    struct pollfd p = {kc_informer_sync_fd(inf), POLLIN, 0};
    assert_int_equal(poll(&p, 1, 200), 0);
    assert_false(kc_informer_has_synced(inf));
    memset(&fl, 0, sizeof(fl));
    ifx_faults(&f, &fl);
    assert_int_equal(poll(&p, 1, 20000), 1);
    assert_true(kc_informer_has_synced(inf));
    assert_int_equal(kc_store_len(kc_informer_store(inf)), 50);
    assert_int_equal(kc_informer_wait_synced(inf, 0, NULL), 0);
    kc_informer_free(inf);
    ifx_down(&f);
}

/* ---- handlers ------------------------------------------------------------------------------ */

typedef struct counts {
    pthread_mutex_t mu;
    int adds, updates, deletes, tombstones;
    pthread_cond_t cv; /* broadcast on every callback */
} counts;

/* Wait (bounded, woken by each callback) until c->deletes >= n. Returns the count. */
static int wait_deletes(counts *c, int n)
{
    uint64_t deadline = kc__deadline_after_ms(10000);
    pthread_mutex_lock(&c->mu);
    while (c->deletes < n && kc__cond_wait_until(&c->cv, &c->mu, deadline) == 0)
        ;
    int d = c->deletes;
    pthread_mutex_unlock(&c->mu);
    return d;
}

static void h_add(void *ud, kc_obj *o)
{
    counts *c = ud;
    pthread_mutex_lock(&c->mu);
    c->adds++;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static void h_update(void *ud, kc_obj *a, kc_obj *b)
{
    counts *c = ud;
    pthread_mutex_lock(&c->mu);
    c->updates++;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static void h_delete(void *ud, kc_obj *o, bool tomb)
{
    counts *c = ud;
    pthread_mutex_lock(&c->mu);
    c->deletes++;
    c->tombstones += tomb;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static void test_informer_sync_handlers_early_and_late(void **st)
{
    ifx f;
    ifx_up(&f, "configmaps=30:ns=default");
    kc_informer *inf = NULL;
    kc_error e = KC_ERROR_INIT;
    kc_informer_opts o = {.ns = "default"};
    IFX_RC(kc_informer_new(f.client, &ifx_cm, &o, &inf, &e), 0, &e);
    counts early = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, PTHREAD_COND_INITIALIZER};
    assert_int_equal(kc__cond_init_monotonic(&early.cv), 0);
    kc_informer_handlers h = {
        .on_add = h_add, .on_update = h_update, .on_delete = h_delete, .ud = &early};
    kc_informer_reg *r1 = NULL;
    IFX_RC(kc_informer_add_handler(inf, &h, NULL, &r1, &e), 0, &e);
    assert_false(kc_informer_reg_synced(r1));
    IFX_RC(kc_informer_start(inf, &e), 0, &e);
    assert_int_equal(kc_informer_reg_wait_synced(r1, 20000, NULL), 0);
    assert_int_equal(early.adds, 30); /* everything delivered before "synced" */
    /* A late registration gets the current contents as adds, then is synced. */
    counts late = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, PTHREAD_COND_INITIALIZER};
    assert_int_equal(kc__cond_init_monotonic(&late.cv), 0);
    kc_informer_handlers h2 = {
        .on_add = h_add, .on_update = h_update, .on_delete = h_delete, .ud = &late};
    kc_informer_reg *r2 = NULL;
    IFX_RC(kc_informer_add_handler(inf, &h2, NULL, &r2, &e), 0, &e);
    assert_int_equal(kc_informer_reg_wait_synced(r2, 20000, NULL), 0);
    assert_int_equal(late.adds, 30);
    /* Live events reach both, in order. */
    assert_int_equal(ifx_cm_create(&f, "default", "live", "1", NULL), 0);
    assert_int_equal(ifx_cm_update(&f, "default", "live", "2"), 0);
    assert_int_equal(ifx_cm_delete(&f, "default", "live"), 0);
    /* Store waiters are woken when the event is applied; handlers get it right after. */
    assert_int_equal(wait_deletes(&early, 1), 1);
    assert_int_equal(wait_deletes(&late, 1), 1);
    assert_int_equal(kc_informer_reg_wait_idle(r1, 10000, NULL), 0);
    assert_int_equal(kc_informer_reg_wait_idle(r2, 10000, NULL), 0);
    assert_int_equal(early.adds, 31);
    assert_int_equal(early.updates, 1);
    assert_int_equal(early.deletes, 1);
    assert_int_equal(early.tombstones, 0);
    assert_int_equal(late.adds, 31);
    assert_int_equal(late.deletes, 1);
    kc_informer_remove_handler(inf, r2);
    kc_informer_free(inf);
    ifx_down(&f);
}

static void test_informer_sync_periodic_resync(void **st)
{
    ifx f;
    ifx_up(&f, "configmaps=3:ns=default");
    kc_informer_opts o = {.ns = "default"};
    kc_informer *inf = start_inf(&f, &o);
    counts c = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, PTHREAD_COND_INITIALIZER};
    assert_int_equal(kc__cond_init_monotonic(&c.cv), 0);
    kc_informer_handlers h = {
        .on_add = h_add, .on_update = h_update, .on_delete = h_delete, .ud = &c};
    kc_informer_handler_opts ho = {.resync_ms = 50};
    kc_informer_reg *r = NULL;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_informer_add_handler(inf, &h, &ho, &r, &e), 0, &e);
    assert_int_equal(kc_informer_wait_synced(inf, 20000, NULL), 0);
    assert_int_equal(kc_informer_reg_wait_synced(r, 20000, NULL), 0);
    /* Wait (bounded, woken by each update) for two resync rounds: updates with old == new. */
    uint64_t deadline = kc__deadline_after_ms(5000);
    pthread_mutex_lock(&c.mu);
    while (c.updates < 6 && kc__cond_wait_until(&c.cv, &c.mu, deadline) == 0)
        ;
    int updates = c.updates;
    pthread_mutex_unlock(&c.mu);
    assert_true(updates >= 6);
    kc_informer_free(inf);
    ifx_down(&f);
}

static bool any_json_contains(kc_informer *inf, const char *needle)
{
    kc_obj **v;
    size_t n;
    bool found = false;
    assert_int_equal(kc_store_list(kc_informer_store(inf), &v, &n, NULL), 0);
    assert_true(n > 0);
    for (size_t i = 0; i < n && !found; i++)
        found = strstr(kc_obj_json(v[i], NULL), needle) != NULL;
    kc_obj_array_free(v, n);
    return found;
}

/* Transform: managedFields are stripped by default and kept on request; metadata-only keeps
 * apiVersion, kind and metadata. */
static void test_informer_sync_transform_and_metadata_only(void **st)
{
    ifx f;
    ifx_up(&f, "pods=3:ns=default");
    kc_error e = KC_ERROR_INIT;
    kc_decode_opts keep = {.flags = KC_DECODE_KEEP_MANAGED_FIELDS};
    kc_informer_opts o[3] = {
        {.ns = "default"},
        {.ns = "default", .decode = &keep, .decode_size = sizeof keep},
        {.ns = "default", .metadata_only = true},
    };
    kc_informer *inf[3];
    for (int i = 0; i < 3; i++) {
        IFX_RC(kc_informer_new(f.client, &ifx_pods, &o[i], &inf[i], &e), 0, &e);
        IFX_RC(kc_informer_start(inf[i], &e), 0, &e);
        assert_int_equal(kc_informer_wait_synced(inf[i], 20000, NULL), 0);
        assert_int_equal(kc_store_len(kc_informer_store(inf[i])), 3);
    }
    assert_false(any_json_contains(inf[0], "\"managedFields\""));
    assert_true(any_json_contains(inf[0], "\"spec\""));
    assert_true(any_json_contains(inf[1], "\"managedFields\""));
    assert_false(any_json_contains(inf[2], "\"spec\""));
    assert_true(any_json_contains(inf[2], "\"metadata\""));
    /* served by the server as PartialObjectMetadata, not trimmed client-side */
    assert_true(any_json_contains(inf[2], "\"PartialObjectMetadata\""));
    for (int i = 0; i < 3; i++)
        kc_informer_free(inf[i]);
    ifx_down(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_informer_sync_streaming_list),
        cmocka_unit_test(test_informer_sync_paged_list_then_watch),
        cmocka_unit_test(test_informer_sync_wait_times_out_when_unreachable),
        cmocka_unit_test(test_informer_sync_wait_times_out_when_list_fails),
        cmocka_unit_test(test_informer_sync_stop_wakes_every_waiter),
        cmocka_unit_test(test_informer_sync_fd_readable_exactly_at_sync),
        cmocka_unit_test(test_informer_sync_handlers_early_and_late),
        cmocka_unit_test(test_informer_sync_periodic_resync),
        cmocka_unit_test(test_informer_sync_transform_and_metadata_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
