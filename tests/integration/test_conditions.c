/*
 * test_conditions.c — a status condition written through the status subresource and read back
 * from the cache: a Pod (served with "status") is read from the cache, copied into a kc_doc, given
 * a condition (kc_doc_condition_set) and written with kc_cached_client_update_status; the cached
 * object then carries it (kc_obj_condition_status reads it in place), and a second set with the
 * same status keeps its lastTransitionTime (meta.SetStatusCondition) through the round trip.
 */
#include "test_cached_fixture.h"

#include "kcache/condition.h"

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

/* The cached Pod (read-your-writes: the cache holds at least what the last write returned). */
static kc_obj *cached(fx *f, const char *name)
{
    kc_obj *o = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cached_client_get(f->cc, &fx_pods, NS, name, NULL, &o, &e), 0, &e);
    return o;
}

/* Copy obj into a doc, set c, write the status; returns whether the set changed the doc. */
static bool set_and_write(fx *f, const kc_obj *obj, const kc_condition *c)
{
    kc_doc *d = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_doc_from_obj(obj, &d, &e), 0, &e);
    bool changed = false;
    FX_RC(kc_doc_condition_set(d, c, &changed, &e), 0, &e);
    if (changed) {
        char *json = NULL;
        size_t len = 0;
        FX_RC(kc_doc_json(d, &json, &len, &e), 0, &e);
        kc_obj *out = NULL;
        FX_RC(kc_cached_client_update_status(f->cc, &fx_pods, NS, json, len, NULL, NULL, &out, &e),
              0, &e);
        free(json);
        kc_obj_unref(out);
    }
    kc_doc_free(d);
    return changed;
}

static char *ltt(const kc_obj *o)
{
    char *s = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_obj_get_string(o, "/status/conditions/0/lastTransitionTime", &s, NULL, &e), 0, &e);
    return s;
}

static void test_conditions_round_trip_through_status(void **state)
{
    fx *f = *state;
    (void)fx_store(f, &fx_pods); /* the Pod informer, synced */
    const char *pod = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"cond\"},"
                      "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}";
    kc_obj *v1 = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cached_client_create(f->cc, &fx_pods, NS, pod, strlen(pod), NULL, NULL, &v1, &e), 0,
          &e);
    kc_obj_unref(v1);

    kc_obj *o = cached(f, "cond");
    const char *status = NULL;
    assert_int_equal(kc_obj_condition_status(o, "Synced", &status, &e), KC_ENOTFOUND);
    kc_error_clear(&e);
    kc_condition c = {.type = "Synced", .status = "True", .reason = "Mirrored", .message = "one"};
    assert_true(set_and_write(f, o, &c));
    kc_obj_unref(o);

    /* the status write reached the cache (apiserver-semantics: a /status PUT writes .status) */
    o = cached(f, "cond");
    assert_int_equal(kc_obj_condition_status(o, "Synced", &status, &e), 0);
    assert_string_equal(status, "True");
    assert_true(kc_obj_condition_is_true(o, "Synced"));
    char *t1 = ltt(o);
    /* unchanged input: nothing to write (ret_changed lets create-or-update skip the PUT) */
    assert_false(set_and_write(f, o, &c));
    /* same status, new message: written, lastTransitionTime kept (meta.SetStatusCondition) */
    c.message = "two";
    c.last_transition_time = "2001-01-01T00:00:00Z"; /* ignored: the status did not change */
    assert_true(set_and_write(f, o, &c));
    kc_obj_unref(o);

    o = cached(f, "cond");
    char *t2 = ltt(o);
    assert_string_equal(t1, t2);
    char *msg = NULL;
    FX_RC(kc_obj_get_string(o, "/status/conditions/0/message", &msg, NULL, &e), 0, &e);
    assert_string_equal(msg, "two");
    free(msg);
    /* a status change moves the time (to the caller's, when given) */
    c.status = "False";
    assert_true(set_and_write(f, o, &c));
    kc_obj_unref(o);
    o = cached(f, "cond");
    char *t3 = ltt(o);
    assert_string_equal(t3, "2001-01-01T00:00:00Z");
    assert_false(kc_obj_condition_is_true(o, "Synced"));
    kc_obj_unref(o);
    free(t1);
    free(t2);
    free(t3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_conditions_round_trip_through_status, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
