/*
 * test_cached_finalizer.c — kc_cached_client_add_finalizer / kc_cached_client_remove_finalizer
 * (controllerutil.AddFinalizer / RemoveFinalizer + a patch; Issue 31 point 6) against the embedded
 * server, with watch events delayed 150–250 ms so that the cache is stale right after another
 * client's write:
 *   - a concurrent writer's change made between the helper's (cached) read and its patch is never
 *     overwritten: the patch's resourceVersion test fails, the helper re-reads live and retries —
 *     a remove by index computed from the stale object would otherwise drop the other writer's
 *     finalizer;
 *   - no write when already in the wanted state (resourceVersion unchanged);
 *   - read-your-writes: the cache holds the result when the call returns (block-on-write);
 *   - bad names are KC_EINVAL; adding to an object being deleted is the server's 422
 *     (apiserver-semantics #36); removing the last finalizer of a deleting object deletes it (#37).
 */
#include "test_cached_fixture.h"

#include "kcache/finalizer.h"

#define NS  "default"
#define FIN "kcache.example.com/f"

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    fx_up(f, 150, 250, KC_RYW_BLOCK_ON_WRITE, 5000);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_down(*state);
    free(*state);
    return 0;
}

static kc_obj *live(fx *f, const char *name)
{
    kc_obj *o = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_client_get(f->client, &fx_secrets, NS, name, &o, &e), 0, &e);
    return o;
}

/* Another writer (the plain client, not the cache) replaces the object's finalizers. */
static void other_writer_sets(fx *f, const char *name, const char *finalizers_json)
{
    char body[256];
    int n = snprintf(body, sizeof body, "{\"metadata\":{\"finalizers\":%s}}", finalizers_json);
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_client_patch(f->client, &fx_secrets, NS, name, KC_PATCH_MERGE, body, (size_t)n, NULL,
                          NULL, &e),
          0, &e);
}

static void test_cached_finalizer_remove_keeps_concurrent_writers_change(void **state)
{
    fx *f = *state;
    kc_obj_unref(fx_create(f->cc, NS, "fin-r", FIN, NULL, 0)); /* in the cache: block-on-write */
    /* The other writer puts its finalizer first: the cache still shows [FIN] at index 0. */
    other_writer_sets(f, "fin-r", "[\"other.example.com/x\",\"" FIN "\"]");
    kc_obj *o = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cached_client_remove_finalizer(f->cc, &fx_secrets, NS, "fin-r", FIN, NULL, &o, &e), 0,
          &e);
    assert_false(kc_obj_has_finalizer(o, FIN));
    kc_obj_unref(o);
    kc_obj *s = live(f, "fin-r");
    assert_false(kc_obj_has_finalizer(s, FIN));
    assert_true(kc_obj_has_finalizer(s, "other.example.com/x")); /* not overwritten */
    assert_int_equal(kc_obj_finalizer_count(s), 1);
    /* Read-your-writes: the cached read right after shows the result. */
    FX_RC(kc_cached_client_get(f->cc, &fx_secrets, NS, "fin-r", NULL, &o, &e), 0, &e);
    assert_string_equal(kc_obj_resource_version(o), kc_obj_resource_version(s));
    kc_obj_unref(o);
    kc_obj_unref(s);
}

static void test_cached_finalizer_add_keeps_concurrent_writers_change(void **state)
{
    fx *f = *state;
    kc_obj_unref(fx_create(f->cc, NS, "fin-a", "other.example.com/y", NULL, 0));
    other_writer_sets(f, "fin-a", "[\"other.example.com/y\",\"other.example.com/z\"]");
    kc_obj *o = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cached_client_add_finalizer(f->cc, &fx_secrets, NS, "fin-a", FIN, NULL, &o, &e), 0,
          &e);
    kc_obj_unref(o);
    kc_obj *s = live(f, "fin-a");
    assert_int_equal(kc_obj_finalizer_count(s), 3);
    assert_true(kc_obj_has_finalizer(s, "other.example.com/z"));
    assert_true(kc_obj_has_finalizer(s, FIN));
    kc_obj_unref(s);
}

static void test_cached_finalizer_no_write_when_in_state(void **state)
{
    fx *f = *state;
    kc_obj *c = fx_create(f->cc, NS, "fin-n", FIN, NULL, 0);
    kc_obj *o = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cached_client_add_finalizer(f->cc, &fx_secrets, NS, "fin-n", FIN, NULL, &o, &e), 0,
          &e);
    assert_string_equal(kc_obj_resource_version(o), kc_obj_resource_version(c));
    kc_obj_unref(o);
    FX_RC(kc_cached_client_remove_finalizer(f->cc, &fx_secrets, NS, "fin-n", "a.example.com/none",
                                            NULL, &o, &e),
          0, &e);
    kc_obj_unref(o);
    kc_obj *s = live(f, "fin-n");
    assert_string_equal(kc_obj_resource_version(s), kc_obj_resource_version(c)); /* no write */
    kc_obj_unref(s);
    kc_obj_unref(c);
    FX_RC(kc_cached_client_add_finalizer(f->cc, &fx_secrets, NS, "fin-n", "Bad Name", NULL, &o, &e),
          KC_EINVAL, &e);
    assert_non_null(strstr(e.message, "Bad Name"));
    kc_error_clear(&e);
}

static void test_cached_finalizer_deleting_object(void **state)
{
    fx *f = *state;
    kc_obj_unref(fx_create(f->cc, NS, "fin-d", FIN, NULL, 0));
    kc_obj *o = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cached_client_delete(f->cc, &fx_secrets, NS, "fin-d", NULL, NULL, &o, &e), 0, &e);
    assert_true(kc_obj_deleting(o));
    kc_obj_unref(o);
    o = NULL;
    FX_RC(kc_cached_client_add_finalizer(f->cc, &fx_secrets, NS, "fin-d", "a.example.com/new", NULL,
                                         &o, &e),
          KC_EUNPROCESSABLE, &e); /* no new finalizers on a deleting object */
    kc_error_clear(&e);
    assert_null(o);
    FX_RC(kc_cached_client_remove_finalizer(f->cc, &fx_secrets, NS, "fin-d", FIN, NULL, &o, &e), 0,
          &e);
    kc_obj_unref(o);
    o = NULL;
    FX_RC(kc_client_get(f->client, &fx_secrets, NS, "fin-d", &o, &e), KC_ENOTFOUND, &e);
    kc_error_clear(&e);
    /* The cache has observed the deletion when the call returned. */
    FX_RC(kc_cached_client_get(f->cc, &fx_secrets, NS, "fin-d", NULL, &o, &e), KC_ENOTFOUND, &e);
    kc_error_clear(&e);
    /* Gone: removing again is a no-op. */
    FX_RC(kc_cached_client_remove_finalizer(f->cc, &fx_secrets, NS, "fin-d", FIN, NULL, &o, &e), 0,
          &e);
    assert_null(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_cached_finalizer_remove_keeps_concurrent_writers_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cached_finalizer_add_keeps_concurrent_writers_change,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_cached_finalizer_no_write_when_in_state, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cached_finalizer_deleting_object, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
