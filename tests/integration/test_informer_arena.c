/*
 * The object arena under an informer (src/core/slab.c; on here even in sanitizer builds, where it
 * is off by default): a paged LIST (objects built on the pager's worker) and a streaming list
 * (built on the watch thread until the initial-events-end bookmark) fill the store from arena
 * chunks; deletes through the API server free them on the informer's thread; after the informer
 * is freed every chunk has ended — nothing leaked, no thread still owns one — and the pages freed
 * on the way were returned. With sanitizers this is the leak check LeakSanitizer cannot make
 * inside the arena, and the TSan build runs the cross-thread frees.
 */
#include "core/slab.h"
#include "test_informer_fixture.h"

static kc__slab_stats stats(void)
{
    kc__slab_stats s;
    kc__slab_stats_get(&s);
    return s;
}

enum { PODS = 1500, DELETES = 500 };

static void sync_delete_free(kc_informer_list_mode mode)
{
    kc__slab_set_enabled(true);
    ifx f;
    ifx_up(&f, "pods=1500:ns=default");
    kc__slab_trim();
    kc__slab_stats s0 = stats();
    kc_error e = KC_ERROR_INIT;
    kc_informer_opts o = {.ns = "default", .list_mode = mode};
    kc_informer *inf = NULL;
    IFX_RC(kc_informer_new(f.client, &ifx_pods, &o, &inf, &e), 0, &e);
    IFX_RC(kc_informer_start(inf, &e), 0, &e);
    IFX_RC(kc_informer_wait_synced(inf, 30000, &e), 0, &e);
    kc_store *st = kc_informer_store(inf);
    assert_int_equal(kc_store_len(st), PODS);
    /* ~4 KB Pods: 1500 of them fill several chunks, and no decoding thread kept one */
    kc__slab_stats s1 = stats();
    assert_true(s1.chunks_in_use >= s0.chunks_in_use + 2);

    kc_obj **v = NULL;
    size_t n = 0;
    IFX_RC(kc_store_list(st, &v, &n, &e), 0, &e);
    kc_delete_opts now = {.has_grace_period = true, .grace_period_s = 0}; /* no kubelet here */
    for (size_t i = 0; i < DELETES; i++)
        IFX_RC(
            kc_client_delete(f.client, &ifx_pods, "default", kc_obj_name(v[2 * i]), &now, NULL, &e),
            0, &e);
    kc_obj_array_free(v, n);
    assert_int_equal(ifx_converge(&f, &ifx_pods, "default", st, 30000), 0);
    assert_int_equal(kc_store_len(st), PODS - DELETES);
    kc__slab_trim(); /* what the decay does after a second */
    kc__slab_stats s2 = stats();
    assert_true(s2.pages_released > s1.pages_released); /* deleted Pods' own pages */

    kc_informer_free(inf);
    /* every object freed, every chunk ended */
    assert_int_equal(stats().chunks_in_use, s0.chunks_in_use);
    ifx_down(&f);
}

static void test_informer_arena_paged(void **state)
{
    (void)state;
    sync_delete_free(KC_INFORMER_LIST_PAGED);
}

static void test_informer_arena_streaming(void **state)
{
    (void)state;
    sync_delete_free(KC_INFORMER_LIST_STREAMING);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_informer_arena_paged),
        cmocka_unit_test(test_informer_arena_streaming),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
