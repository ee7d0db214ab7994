/*
 * test_cached_missing_informer.c — kc_cached_client_opts.fail_on_missing_informer, controller-
 * runtime's ReaderFailOnMissingInformer (Issue 31 point 10): a cached read of a type the cache has
 * no informer for fails at once with KC_ENOTFOUND naming the type and starts nothing; a type whose
 * informer exists (kc_cache_get_informer, or started by an earlier use) is read as before; writes
 * of an uncached type are sent without a read-your-writes wait and start no informer. The default
 * (option off) still starts the informer on first use.
 */
#include "test_cached_fixture.h"

#define NS "default"

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    fx_up(f, 0, 0, KC_RYW_BLOCK_ON_WRITE, 5000);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_down(*state);
    free(*state);
    return 0;
}

static kc_cached_client *strict_cc(fx *f)
{
    kc_cached_client_opts o = {.fail_on_missing_informer = true, .timeout_ms = 5000};
    kc_cached_client *cc = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cached_client_new(f->client, f->cache, &o, &cc, &e), 0, &e);
    return cc;
}

/* A ConfigMap created live (no informer involved). */
static void live_configmap(fx *f, const char *name)
{
    char body[256];
    int n = snprintf(body, sizeof body,
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"},"
                     "\"data\":{\"a\":\"1\"}}",
                     name);
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_client_create(f->client, &fx_configmaps, NS, body, (size_t)n, NULL, NULL, &e), 0, &e);
}

static void test_missing_informer_get_and_list_fail_without_starting(void **state)
{
    fx *f = *state;
    kc_cached_client *cc = strict_cc(f);
    live_configmap(f, "cm-a");
    kc_obj *o = NULL;
    kc_error e = KC_ERROR_INIT;
    uint64_t t0 = kc__now_ns();
    FX_RC(kc_cached_client_get(cc, &fx_configmaps, NS, "cm-a", NULL, &o, &e), KC_ENOTFOUND, &e);
    assert_true(fx_ms_since(t0) < 1000); /* at once: no sync wait */
    assert_non_null(e.message);
    assert_non_null(strstr(e.message, "no informer for core/v1 configmaps"));
    kc_error_clear(&e);
    kc_obj **items = NULL;
    size_t n = 0;
    FX_RC(kc_cached_client_list(cc, &fx_configmaps, NS, NULL, NULL, NULL, &items, &n, &e),
          KC_ENOTFOUND, &e);
    assert_non_null(strstr(e.message, "no informer for"));
    kc_error_clear(&e);
    FX_RC(kc_cached_client_list_by_index(cc, &fx_configmaps, KC_STORE_INDEX_NAMESPACE, NS, NULL,
                                         &items, &n, &e),
          KC_ENOTFOUND, &e);
    kc_error_clear(&e);
    assert_int_equal(kc_cache_informer_count(f->cache), 0); /* nothing started */
    kc_cached_client_stats st;
    kc_cached_client_get_stats(cc, &st);
    assert_int_equal(st.informers_started, 0);
    /* A live read still works. */
    kc_cached_call_opts live = {.live = true};
    FX_RC(kc_cached_client_get(cc, &fx_configmaps, NS, "cm-a", &live, &o, &e), 0, &e);
    kc_obj_unref(o);
    kc_cached_client_free(cc);
}

static void test_missing_informer_existing_informer_is_read(void **state)
{
    fx *f = *state;
    kc_cached_client *cc = strict_cc(f);
    live_configmap(f, "cm-b");
    kc_informer *inf = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cache_get_informer(f->cache, &fx_configmaps, NULL, &inf, &e), 0, &e);
    /* Not waited for here: the read waits for the sync as before. */
    kc_obj *o = NULL;
    FX_RC(kc_cached_client_get(cc, &fx_configmaps, NS, "cm-b", NULL, &o, &e), 0, &e);
    assert_string_equal(kc_obj_name(o), "cm-b");
    kc_obj_unref(o);
    kc_obj **items = NULL;
    size_t n = 0;
    FX_RC(kc_cached_client_list(cc, &fx_configmaps, NS, NULL, NULL, NULL, &items, &n, &e), 0, &e);
    assert_int_equal(n, 1);
    kc_obj_array_free(items, n);
    assert_int_equal(kc_cache_informer_count(f->cache), 1);
    /* A write of another, uncached type (Secrets) starts no informer. */
    kc_obj *w = fx_create(cc, NS, "s-1", NULL, NULL, 0);
    assert_int_equal(kc_cache_informer_count(f->cache), 1);
    kc_obj_unref(w);
    kc_cached_client_free(cc);
}

static void test_missing_informer_started_by_earlier_use(void **state)
{
    fx *f = *state;
    live_configmap(f, "cm-c");
    kc_obj *o = NULL;
    kc_error e = KC_ERROR_INIT;
    /* The default client (option off) starts the informer on first use... */
    FX_RC(kc_cached_client_get(f->cc, &fx_configmaps, NS, "cm-c", NULL, &o, &e), 0, &e);
    kc_obj_unref(o);
    assert_int_equal(kc_cache_informer_count(f->cache), 1);
    /* ...which a strict client over the same cache then reads. */
    kc_cached_client *cc = strict_cc(f);
    FX_RC(kc_cached_client_get(cc, &fx_configmaps, NS, "cm-c", NULL, &o, &e), 0, &e);
    kc_obj_unref(o);
    kc_cached_client_free(cc);
}

static void test_missing_informer_write_sent_without_wait(void **state)
{
    fx *f = *state;
    kc_cached_client *cc = strict_cc(f);
    kc_obj *w = fx_create(cc, NS, "s-2", NULL, NULL, 0);
    assert_string_equal(kc_obj_name(w), "s-2");
    kc_obj_unref(w);
    assert_int_equal(kc_cache_informer_count(f->cache), 0);
    kc_cached_client_stats st;
    kc_cached_client_get_stats(cc, &st);
    assert_int_equal(st.waits, 0);
    kc_obj *o = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_client_get(f->client, &fx_secrets, NS, "s-2", &o, &e), 0, &e);
    kc_obj_unref(o);
    FX_RC(kc_cached_client_delete(cc, &fx_secrets, NS, "s-2", NULL, NULL, NULL, &e), 0, &e);
    assert_int_equal(kc_cache_informer_count(f->cache), 0);
    kc_cached_client_free(cc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_missing_informer_get_and_list_fail_without_starting,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_informer_existing_informer_is_read, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_missing_informer_started_by_earlier_use, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_missing_informer_write_sent_without_wait, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
