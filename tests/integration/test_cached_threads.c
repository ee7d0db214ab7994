/*
 * test_cached_threads.c — 8 concurrent writer threads sharing one cached client (run it in the
 * TSan build: -DKC_SANITIZE=thread). Each thread runs create → get → patch → get → delete → get
 * on its own keys and checks read-your-writes after every step, in block-on-write and in
 * block-on-read mode, while the server delays watch events by 0–30 ms.
 */
#include "test_cached_fixture.h"

#include <pthread.h>
#include <stdatomic.h>

#define NS      "default"
#define THREADS 8
#define ROUNDS  25

typedef struct shared {
    kc_cached_client *cc;
    atomic_uint next_id, violations, errors;
} shared;

static void check_fresh(shared *s, const char *name, const kc_obj *w)
{
    kc_obj *g = NULL;
    int rc = kc_cached_client_get(s->cc, &fx_secrets, NS, name, NULL, &g, NULL);
    if (rc != 0 ||
        kc_rv_compare(kc_obj_resource_version(g), kc_obj_resource_version(w)) == KC_RV_LESS)
        atomic_fetch_add(&s->violations, 1);
    kc_obj_unref(g);
}

static void *writer(void *p)
{
    shared *s = p;
    unsigned id = atomic_fetch_add(&s->next_id, 1);
    for (int r = 0; r < ROUNDS; r++) {
        char name[64], body[512];
        snprintf(name, sizeof(name), "t%u-r%d", id, r);
        int len = fx_secret_json(body, sizeof(body), name, NULL, NULL);
        kc_obj *w = NULL;
        if (kc_cached_client_create(s->cc, &fx_secrets, NS, body, (size_t)len, NULL, NULL, &w,
                                    NULL)) {
            atomic_fetch_add(&s->errors, 1);
            continue;
        }
        check_fresh(s, name, w);
        kc_obj_unref(w);
        w = NULL;
        const char *patch = "{\"metadata\":{\"labels\":{\"step\":\"patched\"}}}";
        if (kc_cached_client_patch(s->cc, &fx_secrets, NS, name, KC_PATCH_MERGE, patch,
                                   strlen(patch), NULL, NULL, &w, NULL)) {
            atomic_fetch_add(&s->errors, 1);
            continue;
        }
        check_fresh(s, name, w);
        kc_obj_unref(w);
        if (kc_cached_client_delete(s->cc, &fx_secrets, NS, name, NULL, NULL, NULL, NULL)) {
            atomic_fetch_add(&s->errors, 1);
            continue;
        }
        kc_obj *g = NULL;
        if (kc_cached_client_get(s->cc, &fx_secrets, NS, name, NULL, &g, NULL) != KC_ENOTFOUND)
            atomic_fetch_add(&s->violations, 1);
        kc_obj_unref(g);
    }
    return NULL;
}

static void run_threads(kc_ryw_mode mode)
{
    fx f;
    fx_up(&f, 0, 30, mode, 10000);
    fx_store(&f, &fx_secrets);
    shared s = {.cc = f.cc};
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, writer, &s), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&s.errors), 0);
    assert_int_equal(atomic_load(&s.violations), 0);
    fx_down(&f);
}

static void test_cached_threads_block_on_write_8_writers(void **state)
{
    run_threads(KC_RYW_BLOCK_ON_WRITE);
}

static void test_cached_threads_block_on_read_8_writers(void **state)
{
    run_threads(KC_RYW_BLOCK_ON_READ);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cached_threads_block_on_write_8_writers),
        cmocka_unit_test(test_cached_threads_block_on_read_8_writers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
