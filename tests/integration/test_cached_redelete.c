/*
 * test_cached_redelete.c — block-on-read: a pending delete survives what this client does to the
 * key next. The object U1 is created and seen by the cache; the watch then stalls (the store keeps
 * U1 whatever happens on the server), U1 is deleted through the cached client, and the key is
 * written again:
 *   - re-created by another client (U2) and deleted by this one with U2's UID precondition;
 *   - re-created by this client (U2), then read with no_wait;
 *   - re-created by this client (U2) and deleted by it again (the cache holds U1, the server U2);
 *   - deleted a second time, a DELETE that fails (404): its pending delete is forgotten.
 * No read — get with or without no_wait, list — may return U1 while the store still holds it
 * (found by the fault soak, tools/soak: the later write replaced the pending delete of U1, so U1
 * came back from the cache). Once the stall is lifted and the store caught up, every pending entry
 * completes.
 */
#include "test_cached_fixture.h"

#define NS "default"

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    fx_up(f, 0, 0, KC_RYW_BLOCK_ON_READ, 5000);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_down(*state);
    free(*state);
    return 0;
}

/* Create name through f->cc, read it back (the cache has it), stall the watch, delete it through
 * f->cc. U1's UID into uid; returns the store. */
static kc_store *deleted_while_stalled(fx *f, const char *name, char *uid)
{
    kc_store *s = fx_store(f, &fx_secrets);
    kc_obj *w = fx_create(f->cc, NS, name, NULL, NULL, 0), *r = NULL;
    snprintf(uid, 64, "%s", kc_obj_uid(w));
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cached_client_get(f->cc, &fx_secrets, NS, name, NULL, &r, &e), 0,
          &e); /* waits for it */
    kc_obj_unref(r);
    kc_obj_unref(w);
    fx_set_stall(f, true);
    FX_RC(kc_cached_client_delete(f->cc, &fx_secrets, NS, name, NULL, NULL, NULL, &e), 0, &e);
    return s;
}

static kc_obj *create_by(fx *f, bool own, const char *name)
{
    char body[512];
    int len = fx_secret_json(body, sizeof(body), name, NULL, NULL);
    kc_obj *obj = NULL;
    kc_error e = KC_ERROR_INIT;
    if (own)
        FX_RC(kc_cached_client_create(f->cc, &fx_secrets, NS, body, (size_t)len, NULL, NULL, &obj,
                                      &e),
              0, &e);
    else
        FX_RC(kc_client_create(f->client, &fx_secrets, NS, body, (size_t)len, NULL, &obj, &e), 0,
              &e);
    return obj;
}

/* The store still holds U1 (stalled), yet no read through f->cc returns it. */
static void assert_u1_hidden(fx *f, kc_store *s, const char *name, const char *uid)
{
    kc_obj *cur = kc_store_get(s, NS, name);
    assert_non_null(cur);
    assert_string_equal(kc_obj_uid(cur), uid);
    kc_obj_unref(cur);
    kc_cached_call_opts calls[] = {{.no_wait = true}, {.timeout_ms = 50}};
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
        kc_obj *g = NULL;
        kc_error e = KC_ERROR_INIT;
        int rc = kc_cached_client_get(f->cc, &fx_secrets, NS, name, &calls[i], &g, &e);
        if (rc == 0)
            assert_string_not_equal(kc_obj_uid(g), uid);
        else if (rc != KC_ENOT_CAUGHT_UP)
            FX_RC(rc, KC_ENOTFOUND, &e);
        kc_obj_unref(g);
        kc_error_clear(&e);
        kc_obj **items = NULL;
        size_t n = 0;
        rc = kc_cached_client_list(f->cc, &fx_secrets, NS, NULL, NULL, &calls[i], &items, &n, &e);
        if (rc != KC_ENOT_CAUGHT_UP)
            FX_RC(rc, 0, &e);
        for (size_t j = 0; j < n; j++)
            assert_string_not_equal(kc_obj_uid(items[j]), uid);
        kc_obj_array_free(items, n);
        kc_error_clear(&e);
    }
}

/* Lift the stall; once the store has every event, a get says want_rc and nothing is pending. */
static void assert_settles(fx *f, kc_store *s, const char *name, int want_rc)
{
    fx_set_stall(f, false);
    char rv[32];
    snprintf(rv, sizeof(rv), "%llu", (unsigned long long)kc_server_current_rv(f->srv));
    kc_store_cond c = {.kind = KC_STORE_WAIT_WATERMARK, .rv = rv};
    assert_int_equal(kc_store_wait(s, &c, 10000, NULL), 0);
    kc_obj *g = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cached_client_get(f->cc, &fx_secrets, NS, name, NULL, &g, &e), want_rc, &e);
    kc_obj_unref(g);
    kc_error_clear(&e);
    kc_obj **items = NULL;
    size_t n = 0;
    FX_RC(kc_cached_client_list(f->cc, &fx_secrets, NS, NULL, NULL, NULL, &items, &n, &e), 0, &e);
    kc_obj_array_free(items, n);
    kc_cached_client_stats st;
    kc_cached_client_get_stats(f->cc, &st);
    assert_int_equal(st.pending, 0);
}

static void test_cached_redelete_other_client_recreates_and_this_one_deletes(void **state)
{
    fx *f = *state;
    char uid[64];
    kc_store *s = deleted_while_stalled(f, "rd-other", uid);
    kc_obj *u2 = create_by(f, false, "rd-other");
    kc_delete_opts d = {0};
    d.precondition_uid = kc_obj_uid(u2);
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cached_client_delete(f->cc, &fx_secrets, NS, "rd-other", &d, NULL, NULL, &e), 0, &e);
    assert_u1_hidden(f, s, "rd-other", uid);
    kc_obj_unref(u2);
    assert_settles(f, s, "rd-other", KC_ENOTFOUND);
}

static void test_cached_redelete_recreated_key_read_without_waiting(void **state)
{
    fx *f = *state;
    char uid[64];
    kc_store *s = deleted_while_stalled(f, "rd-nowait", uid);
    kc_obj *u2 = create_by(f, true, "rd-nowait");
    assert_u1_hidden(f, s, "rd-nowait", uid);
    kc_obj_unref(u2);
    assert_settles(f, s, "rd-nowait", 0);
}

static void test_cached_redelete_recreated_key_deleted_again(void **state)
{
    fx *f = *state;
    char uid[64];
    kc_store *s = deleted_while_stalled(f, "rd-again", uid);
    kc_obj *u2 = create_by(f, true, "rd-again");
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cached_client_delete(f->cc, &fx_secrets, NS, "rd-again", NULL, NULL, NULL, &e), 0, &e);
    assert_u1_hidden(f, s, "rd-again", uid);
    kc_obj_unref(u2);
    assert_settles(f, s, "rd-again", KC_ENOTFOUND);
}

static void test_cached_redelete_failed_second_delete_keeps_the_first(void **state)
{
    fx *f = *state;
    char uid[64];
    kc_store *s = deleted_while_stalled(f, "rd-twice", uid);
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cached_client_delete(f->cc, &fx_secrets, NS, "rd-twice", NULL, NULL, NULL, &e),
          KC_ENOTFOUND, &e);
    kc_error_clear(&e);
    assert_u1_hidden(f, s, "rd-twice", uid);
    assert_settles(f, s, "rd-twice", KC_ENOTFOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_cached_redelete_other_client_recreates_and_this_one_deletes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cached_redelete_recreated_key_read_without_waiting,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_cached_redelete_recreated_key_deleted_again, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cached_redelete_failed_second_delete_keeps_the_first,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
