/*
 * Concurrency (meant for the TSan build): a cache with three informers, two handler registrations
 * each, four reader threads (get, list, list by namespace, non-blocking checks and short waits) and
 * a writer, all at once; then stop everything while readers and waiters are still active. The
 * stores must equal the server afterwards, and every blocked waiter must return.
 */
#include "test_informer_fixture.h"

#include <pthread.h>
#include <stdatomic.h>

static const kc_gvr gvr_secrets = {"", "v1", "secrets"};

typedef struct shared {
    kc_informer *inf[3];
    atomic_bool stop;
    atomic_long reads;
} shared;

static void *reader_main(void *p)
{
    shared *sh = p;
    kc__rng rng;
    kc__rng_seed_auto(&rng);
    while (!atomic_load(&sh->stop)) {
        kc_informer *inf = sh->inf[kc__rng_range(&rng, 0, 2)];
        kc_store *s = kc_informer_store(inf);
        char name[32];
        snprintf(name, sizeof(name), "cm-%05d", (int)kc__rng_range(&rng, 0, 60));
        kc_obj *o = kc_store_get(s, "default", name);
        if (o)
            (void)kc_obj_resource_version(o);
        kc_obj_unref(o);
        kc_obj **v;
        size_t n;
        if (kc_store_list_by_namespace(s, "default", &v, &n, NULL) == 0)
            kc_obj_array_free(v, n);
        if (kc__rng_range(&rng, 0, 20) == 0 && kc_store_list(s, &v, &n, NULL) == 0)
            kc_obj_array_free(v, n);
        kc_store_cond c = {KC_STORE_WAIT_KEY_RV, "default", name,
                           "999999999",          NULL,      kc_store_seq(s)};
        kc_store_check(s, &c, NULL);
        kc_store_wait(s, &c, 1, NULL); /* times out or stops */
        kc_informer_status st;
        kc_informer_get_status(inf, &st);
        atomic_fetch_add(&sh->reads, 1);
    }
    return NULL;
}

static void *blocked_waiter_main(void *p)
{
    kc_store *s = p;
    kc_store_cond c = {KC_STORE_WAIT_WATERMARK, NULL, NULL, "999999999999", NULL, 0};
    return (void *)(intptr_t)kc_store_wait(s, &c, -1, NULL);
}

static atomic_long g_events;

static void on_add(void *ud, kc_obj *o)
{
    atomic_fetch_add(&g_events, 1);
}

static void on_update(void *ud, kc_obj *a, kc_obj *b)
{
    atomic_fetch_add(&g_events, 1);
    (void)kc_obj_resource_version(a);
    (void)kc_obj_resource_version(b);
}

static void on_delete(void *ud, kc_obj *o, bool tomb)
{
    atomic_fetch_add(&g_events, 1);
}

static void test_informer_threads_informers_handlers_readers(void **st)
{
    ifx f;
    ifx_up(&f, "configmaps=40:ns=default,secrets=20:ns=default");
    kc_cache *cache = NULL;
    kc_error e = KC_ERROR_INIT;
    kc_informer_opts defaults = {.backoff_initial_ms = 20, .backoff_max_ms = 100};
    kc_cache_opts co = {.defaults = &defaults, .defaults_size = sizeof defaults};
    IFX_RC(kc_cache_new(f.client, &co, &cache, &e), 0, &e);
    shared sh = {0};
    kc_informer_opts a = {.ns = "default"};
    kc_informer_opts b = {.ns = "default",
                          .list_mode = KC_INFORMER_LIST_PAGED,
                          .label_selector = "",
                          .metadata_only = true};
    IFX_RC(kc_cache_get_informer(cache, &ifx_cm, &a, &sh.inf[0], &e), 0, &e);
    IFX_RC(kc_cache_get_informer(cache, &ifx_cm, &b, &sh.inf[1], &e), 0, &e);
    IFX_RC(kc_cache_get_informer(cache, &gvr_secrets, &a, &sh.inf[2], &e), 0, &e);
    kc_informer_handlers h = {
        .on_add = on_add, .on_update = on_update, .on_delete = on_delete, .ud = NULL};
    kc_informer_handler_opts ho = {.resync_ms = 30, .queue_cap = 8};
    for (int i = 0; i < 3; i++) {
        IFX_RC(kc_informer_add_handler(sh.inf[i], &h, NULL, NULL, &e), 0, &e);
        IFX_RC(kc_informer_add_handler(sh.inf[i], &h, &ho, NULL, &e), 0, &e);
    }
    pthread_t readers[4], blocked;
    for (int i = 0; i < 4; i++)
        pthread_create(&readers[i], NULL, reader_main, &sh);
    pthread_create(&blocked, NULL, blocked_waiter_main, kc_informer_store(sh.inf[0]));
    assert_int_equal(kc_cache_wait_synced(cache, 20000, NULL), 0);
    kc__rng rng;
    kc__rng_seed(&rng, 9);
    for (int i = 0; i < 150; i++) {
        char name[32], val[16];
        snprintf(name, sizeof(name), "cm-%05d", (int)kc__rng_range(&rng, 0, 60));
        snprintf(val, sizeof(val), "%d", i);
        switch (kc__rng_range(&rng, 0, 2)) {
        case 0:
            ifx_cm_create(&f, "default", name, val, NULL);
            break;
        case 1:
            ifx_cm_update(&f, "default", name, val);
            break;
        default:
            ifx_cm_delete(&f, "default", name);
        }
    }
    assert_int_equal(ifx_converge(&f, &ifx_cm, "default", kc_informer_store(sh.inf[0]), 30000), 0);
    assert_int_equal(ifx_converge(&f, &ifx_cm, "default", kc_informer_store(sh.inf[1]), 30000), 0);
    /* Stop while readers run and a waiter is blocked. */
    kc_cache_stop(cache);
    void *wrc;
    pthread_join(blocked, &wrc);
    assert_int_equal((int)(intptr_t)wrc, KC_ESTOPPED);
    atomic_store(&sh.stop, true);
    for (int i = 0; i < 4; i++)
        pthread_join(readers[i], NULL);
    assert_true(atomic_load(&sh.reads) > 0);
    assert_true(atomic_load(&g_events) > 0);
    kc_cache_free(cache);
    ifx_down(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_informer_threads_informers_handlers_readers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
