/*
 * kc_cache readiness against the embedded API server: shared informers, wait for all synced,
 * late-started informers joining the readiness set (and the fd turning unreadable again),
 * optional informers, and stop waking every waiter.
 */
#include "test_informer_fixture.h"

#include <poll.h>
#include <pthread.h>

static const kc_gvr gvr_secrets = {"", "v1", "secrets"};

static bool fd_readable(int fd, int ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, ms) == 1;
}

static kc_cache *new_cache(ifx *f)
{
    kc_cache *c = NULL;
    kc_error e = KC_ERROR_INIT;
    kc_informer_opts defaults = {.backoff_initial_ms = 20, .backoff_max_ms = 50};
    kc_cache_opts o = {.defaults = &defaults, .defaults_size = sizeof defaults};
    IFX_RC(kc_cache_new(f->client, &o, &c, &e), 0, &e);
    return c;
}

static void test_cache_readiness_shared_informer_and_wait_all(void **st)
{
    ifx f;
    ifx_up(&f, "configmaps=10:ns=default,secrets=4:ns=default");
    kc_cache *c = new_cache(&f);
    kc_informer *a = NULL, *b = NULL, *s = NULL;
    kc_error e = KC_ERROR_INIT;
    kc_informer_opts o = {.ns = "default"};
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &o, &a, &e), 0, &e);
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &o, &b, &e), 0, &e);
    assert_ptr_equal(a, b); /* shared */
    IFX_RC(kc_cache_get_informer(c, &gvr_secrets, &o, &s, &e), 0, &e);
    assert_ptr_not_equal(a, s);
    assert_int_equal(kc_cache_informer_count(c), 2);
    assert_int_equal(kc_cache_wait_synced(c, 20000, NULL), 0);
    assert_true(kc_cache_has_synced(c));
    assert_true(kc_informer_has_synced(a) && kc_informer_has_synced(s));
    assert_int_equal(kc_store_len(kc_informer_store(a)), 10);
    assert_int_equal(kc_store_len(kc_informer_store(s)), 4);
    assert_true(fd_readable(kc_cache_sync_fd(c), 5000));
    kc_cache_free(c);
    ifx_down(&f);
}

static void test_cache_readiness_late_informer_joins(void **st)
{
    ifx f;
    ifx_up(&f, "configmaps=10:ns=default,secrets=4:ns=default");
    kc_cache *c = new_cache(&f);
    kc_informer *a = NULL, *late = NULL;
    kc_error e = KC_ERROR_INIT;
    kc_informer_opts o = {.ns = "default", .list_mode = KC_INFORMER_LIST_PAGED};
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &o, &a, &e), 0, &e);
    assert_int_equal(kc_cache_wait_synced(c, 20000, NULL), 0);
    assert_true(fd_readable(kc_cache_sync_fd(c), 5000));
    /* Lists now fail: the late informer cannot sync; the cache is not synced any more. */
    kc_server_faults fl = {0};
    fl.rate_503[KC_SERVER_VERB_LIST] = 1.0;
    ifx_faults(&f, &fl);
    IFX_RC(kc_cache_get_informer(c, &gvr_secrets, &o, &late, &e), 0, &e);
    assert_false(kc_cache_has_synced(c));
    assert_false(fd_readable(kc_cache_sync_fd(c), 0));
    assert_int_equal(kc_cache_wait_synced(c, 200, NULL), KC_ETIMEOUT);
    memset(&fl, 0, sizeof(fl));
    ifx_faults(&f, &fl);
    assert_int_equal(kc_cache_wait_synced(c, 20000, NULL), 0);
    assert_true(fd_readable(kc_cache_sync_fd(c), 5000));
    assert_int_equal(kc_store_len(kc_informer_store(late)), 4);
    kc_cache_free(c);
    ifx_down(&f);
}

static void test_cache_readiness_optional_informer_not_required(void **st)
{
    ifx f;
    ifx_up(&f, "configmaps=3:ns=default");
    kc_cache *c = new_cache(&f);
    kc_informer *a = NULL, *opt = NULL;
    kc_error e = KC_ERROR_INIT;
    kc_informer_opts o = {.ns = "default", .list_mode = KC_INFORMER_LIST_PAGED};
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, &o, &a, &e), 0, &e);
    assert_int_equal(kc_cache_wait_synced(c, 20000, NULL), 0);
    kc_server_faults fl = {0};
    fl.rate_503[KC_SERVER_VERB_LIST] = 1.0;
    ifx_faults(&f, &fl);
    kc_informer_opts oo = {.ns = "default", .list_mode = KC_INFORMER_LIST_PAGED, .optional = true};
    IFX_RC(kc_cache_get_informer(c, &gvr_secrets, &oo, &opt, &e), 0, &e);
    assert_false(kc_cache_informer_required(c, 1));
    assert_int_equal(kc_cache_wait_synced(c, 1000, NULL), 0);
    assert_true(kc_cache_ready(c));
    assert_false(kc_informer_has_synced(opt));
    kc_cache_free(c);
    ifx_down(&f);
}

struct cwait {
    kc_cache *c;
    int rc;
};

static void *cwait_main(void *p)
{
    struct cwait *w = p;
    w->rc = kc_cache_wait_synced(w->c, -1, NULL);
    return NULL;
}

static void test_cache_readiness_stop_wakes_waiters(void **st)
{
    ifx f;
    memset(&f, 0, sizeof(f));
    ifx_client_for(&f, "http://127.0.0.1:1");
    kc_cache *c = new_cache(&f);
    kc_informer *a = NULL;
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_cache_get_informer(c, &ifx_cm, NULL, &a, &e), 0, &e);
    struct cwait w[3] = {{c, 99}, {c, 99}, {c, 99}};
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, cwait_main, &w[i]);
    kc_cache_stop(c);
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(w[i].rc, KC_ESTOPPED);
    }
    IFX_RC(kc_cache_get_informer(c, &gvr_secrets, NULL, &a, &e), KC_ESTOPPED, &e);
    kc_error_clear(&e);
    kc_cache_free(c);
    kc_client_free(f.client);
    kc_config_unref(f.cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_readiness_shared_informer_and_wait_all),
        cmocka_unit_test(test_cache_readiness_late_informer_joins),
        cmocka_unit_test(test_cache_readiness_optional_informer_not_required),
        cmocka_unit_test(test_cache_readiness_stop_wakes_waiters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
