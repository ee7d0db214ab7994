/*
 * test_cached_stale.c — the demo's "create then read" scenario as assertions: under a 10–500 ms
 * watch delay, 2,000 Secrets created by 64 concurrent workers and each read back through the
 * cache right after its create give 0 stale reads with block-on-write and with block-on-read, and
 * more than 0 without waiting (which proves the check can fail). A wait that timed out is reported
 * as KC_ENOT_CAUGHT_UP (the distinct "write succeeded, cache still behind" result): such writes are
 * counted apart, not as stale, and they must not be all of them.
 */
#include "test_cached_fixture.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#define NS      "default"
#define WORKERS 64

typedef struct run {
    kc_cached_client *cc;
    const char *prefix;
    unsigned n;
    atomic_uint next, stale, behind, errors;
} run;

static void *worker(void *p)
{
    run *r = p;
    for (unsigned i; (i = atomic_fetch_add(&r->next, 1)) < r->n;) {
        char name[64], body[512];
        snprintf(name, sizeof(name), "%s-%05u", r->prefix, i);
        int len = fx_secret_json(body, sizeof(body), name, NULL, NULL);
        kc_obj *w = NULL, *g = NULL;
        int rc = kc_cached_client_create(r->cc, &fx_secrets, NS, body, (size_t)len, NULL, NULL, &w,
                                         NULL);
        if (rc < 0 && rc != KC_ENOT_CAUGHT_UP) {
            atomic_fetch_add(&r->errors, 1);
            continue;
        }
        /* KC_ENOT_CAUGHT_UP from the write (block-on-write) or the read (block-on-read) is the
         * library saying "the cache is still behind" when the wait timed out (3 s; a loaded
         * sanitizer build can take that long): no promise was made, so it is counted apart.
         * A stale read is one the library returned as current: not found, or an older RV. */
        bool write_behind = rc == KC_ENOT_CAUGHT_UP;
        rc = kc_cached_client_get(r->cc, &fx_secrets, NS, name, NULL, &g, NULL);
        if (rc == KC_ENOT_CAUGHT_UP || write_behind)
            atomic_fetch_add(&r->behind, 1);
        else if (rc == KC_ENOTFOUND ||
                 (rc == 0 && kc_rv_compare(kc_obj_resource_version(g),
                                           kc_obj_resource_version(w)) == KC_RV_LESS))
            atomic_fetch_add(&r->stale, 1);
        else if (rc < 0)
            atomic_fetch_add(&r->errors, 1);
        kc_obj_unref(g);
        kc_obj_unref(w);
    }
    return NULL;
}

static void run_mode(kc_ryw_mode mode, const char *prefix, unsigned n, unsigned *ret_stale)
{
    fx f;
    fx_up(&f, 10, 500, mode, KC_RYW_DEFAULT_TIMEOUT_MS);
    fx_store(&f, &fx_secrets);
    run r = {.cc = f.cc, .prefix = prefix, .n = n};
    pthread_t th[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, worker, &r), 0);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(th[i], NULL);
    fprintf(stderr, "  %s: %u writes, %u stale, %u still behind (timed out, reported), %u errors\n",
            prefix, n, atomic_load(&r.stale), atomic_load(&r.behind), atomic_load(&r.errors));
    assert_int_equal(atomic_load(&r.errors), 0);
    assert_true(atomic_load(&r.behind) < n);
    *ret_stale = atomic_load(&r.stale);
    fx_down(&f);
}

static void test_cached_stale_block_on_write_has_none_over_2000_writes(void **state)
{
    unsigned stale;
    run_mode(KC_RYW_BLOCK_ON_WRITE, "bow", 2000, &stale);
    assert_int_equal(stale, 0);
}

static void test_cached_stale_block_on_read_has_none_over_2000_writes(void **state)
{
    unsigned stale;
    run_mode(KC_RYW_BLOCK_ON_READ, "bor", 2000, &stale);
    assert_int_equal(stale, 0);
}

static void test_cached_stale_no_wait_has_stale_reads(void **state)
{
    unsigned stale;
    run_mode(KC_RYW_NONE, "none", 200, &stale);
    assert_true(stale > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cached_stale_no_wait_has_stale_reads),
        cmocka_unit_test(test_cached_stale_block_on_write_has_none_over_2000_writes),
        cmocka_unit_test(test_cached_stale_block_on_read_has_none_over_2000_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
