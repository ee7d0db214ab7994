/*
 * Controller event mapping against the embedded API server: owned objects enqueue their
 * controller owner (spec C7: only the controller=true reference, group and kind matching, version
 * ignored, an update enqueues the old and the new owner), extra watches through a map function,
 * and predicates (spec C8: generation / resourceVersion / labels / annotations changed, AND / OR,
 * custom).
 *
 * "Not enqueued" is proved without waiting for time to pass: with one worker the queue is FIFO,
 * and one informer registration delivers events in store order, so once a marker event created
 * after the event under test has been reconciled, a key that event enqueued would have been
 * reconciled before it.
 */
#include "test_controller_fixture.h"

#include "controller/internal.h"

/* A started controller over ConfigMaps owning Secrets. */
static void owner_up(cfx *o)
{
    cfx_up(o, NULL, NULL);
    cfx_make(o);
    kc_controller_type owned = {.gvr = cfx_secrets};
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_controller_own(o->c, &owned, &e), 0, &e);
    cfx_start(o->c);
}

/* C7: an owned Secret's add enqueues its controller owner; its update and delete do too. */
static void test_controller_owner_secret_enqueues_owner(void **st)
{
    (void)st;
    cfx o;
    owner_up(&o);
    cfx_create_cm(&o.f, "own-a");
    assert_true(crec_wait_key(&o.r, "default/own-a", 1, 10000)); /* its own add */
    cfx_create_secret(&o.f, "s-a", "v1", "ConfigMap", "own-a", true);
    assert_true(crec_wait_key(&o.r, "default/own-a", 2, 10000)); /* the Secret's add */
    const char *patch = "{\"metadata\":{\"labels\":{\"x\":\"1\"}}}";
    assert_int_equal(kc_client_patch(o.f.client, &cfx_secrets, "default", "s-a", KC_PATCH_MERGE,
                                     patch, strlen(patch), NULL, NULL, NULL),
                     0);
    assert_true(crec_wait_key(&o.r, "default/own-a", 3, 10000)); /* the update */
    assert_int_equal(kc_client_delete(o.f.client, &cfx_secrets, "default", "s-a", NULL, NULL, NULL),
                     0);
    assert_true(crec_wait_key(&o.r, "default/own-a", 4, 10000)); /* the delete */
    cfx_down(&o);
}

/* C7: a reference that is not the controller, or of another kind or group, maps to nothing; the
 * version of the reference is ignored. */
static void test_controller_owner_only_controller_ref_of_primary_kind(void **st)
{
    (void)st;
    cfx o;
    owner_up(&o);
    cfx_create_secret(&o.f, "s-noctl", "v1", "ConfigMap", "no-ctl", false);
    cfx_create_secret(&o.f, "s-kind", "v1", "Secret", "other-kind", true);
    cfx_create_secret(&o.f, "s-group", "example.com/v1", "ConfigMap", "other-group", true);
    cfx_create_secret(&o.f, "s-badapi", "a/b/c", "ConfigMap", "bad-api", true);
    cfx_create_secret(&o.f, "s-ver", "v2", "ConfigMap", "other-version", true);
    /* marker: created last, reconciled last (one worker, FIFO) */
    cfx_create_secret(&o.f, "s-marker", "v1", "ConfigMap", "marker", true);
    assert_true(crec_wait_key(&o.r, "default/marker", 1, 10000));
    assert_int_equal(crec_count(&o.r, "default/no-ctl"), 0);
    assert_int_equal(crec_count(&o.r, "default/other-kind"), 0);
    assert_int_equal(crec_count(&o.r, "default/other-group"), 0);
    assert_int_equal(crec_count(&o.r, "default/bad-api"), 0);
    assert_int_equal(crec_count(&o.r, "default/other-version"), 1); /* version ignored */
    cfx_down(&o);
}

/* C7: an update that moves the controller reference enqueues both the old and the new owner. */
static void test_controller_owner_update_enqueues_old_and_new(void **st)
{
    (void)st;
    cfx o;
    owner_up(&o);
    cfx_create_secret(&o.f, "s-move", "v1", "ConfigMap", "old-owner", true);
    assert_true(crec_wait_key(&o.r, "default/old-owner", 1, 10000));
    const char *patch = "{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":"
                        "\"ConfigMap\",\"name\":\"new-owner\",\"uid\":\"u-n\",\"controller\":"
                        "true}]}}";
    assert_int_equal(kc_client_patch(o.f.client, &cfx_secrets, "default", "s-move", KC_PATCH_MERGE,
                                     patch, strlen(patch), NULL, NULL, NULL),
                     0);
    assert_true(crec_wait_key(&o.r, "default/new-owner", 1, 10000));
    assert_true(crec_wait_key(&o.r, "default/old-owner", 2, 10000));
    cfx_down(&o);
}

/* An extra watch: the map function's keys are reconciled. */
static void map_by_label(void *ud, kc_controller *ctrl, kc_controller_event ev, kc_obj *old_obj,
                         kc_obj *new_obj)
{
    (void)ud;
    (void)ev;
    (void)old_obj;
    const char *target = kc_obj_label(new_obj, "target");
    if (target)
        kc_controller_enqueue(ctrl, kc_obj_namespace(new_obj), target);
}

static void test_controller_watch_map_function(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, NULL, NULL);
    kc_controller *c = cfx_make(&x);
    kc_controller_type w = {.gvr = cfx_secrets};
    kc_error e = KC_ERROR_INIT;
    IFX_RC(kc_controller_watch(c, &w, map_by_label, NULL, &e), 0, &e);
    assert_int_equal(kc_controller_watch(c, &w, NULL, NULL, NULL), KC_EINVAL);
    cfx_start(c);
    /* types are added before start only */
    assert_int_equal(kc_controller_own(c, &w, NULL), KC_EBUSY);
    const char *body = "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"m1\","
                       "\"labels\":{\"target\":\"mapped\"}}}";
    assert_int_equal(
        kc_client_create(x.f.client, &cfx_secrets, "default", body, strlen(body), NULL, NULL, NULL),
        0);
    assert_true(crec_wait_key(&x.r, "default/mapped", 1, 10000));
    cfx_down(&x);
}

/* ---- predicates (C8), on parsed objects ------------------------------------------------------ */

static kc_obj *obj(const char *meta)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":%s}",
             meta);
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(buf, strlen(buf), NULL, &o, NULL), 0);
    return o;
}

static bool pass(unsigned flags, bool any, kc_obj *a, kc_obj *b)
{
    kc_predicate p = {.flags = flags, .any = any};
    return kc__ctrl_predicate_pass(&p, KC_CONTROLLER_EVENT_UPDATE, a, b);
}

static void test_controller_predicates_builtin(void **st)
{
    (void)st;
    kc_obj *base = obj("{\"name\":\"a\",\"generation\":1,\"resourceVersion\":\"5\","
                       "\"labels\":{\"l\":\"1\"},\"annotations\":{\"n\":\"1\"}}");
    kc_obj *rv = obj("{\"name\":\"a\",\"generation\":1,\"resourceVersion\":\"6\","
                     "\"labels\":{\"l\":\"1\"},\"annotations\":{\"n\":\"1\"}}");
    kc_obj *gen = obj("{\"name\":\"a\",\"generation\":2,\"resourceVersion\":\"7\","
                      "\"labels\":{\"l\":\"1\"},\"annotations\":{\"n\":\"1\"}}");
    kc_obj *lab = obj("{\"name\":\"a\",\"generation\":1,\"resourceVersion\":\"8\","
                      "\"labels\":{\"l\":\"2\"},\"annotations\":{\"n\":\"1\"}}");
    kc_obj *ann = obj("{\"name\":\"a\",\"generation\":1,\"resourceVersion\":\"9\","
                      "\"labels\":{\"l\":\"1\"},\"annotations\":{\"n\":\"2\"}}");
    kc_obj *noann = obj("{\"name\":\"a\",\"generation\":1,\"resourceVersion\":\"9\","
                        "\"labels\":{\"l\":\"1\"}}");
    kc_obj *emptyann = obj("{\"name\":\"a\",\"generation\":1,\"resourceVersion\":\"9\","
                           "\"labels\":{\"l\":\"1\"},\"annotations\":{}}");
    /* generation */
    assert_false(pass(KC_PREDICATE_GENERATION_CHANGED, false, base, rv));
    assert_true(pass(KC_PREDICATE_GENERATION_CHANGED, false, base, gen));
    /* resourceVersion: a resync (same object) is dropped */
    assert_false(pass(KC_PREDICATE_RESOURCE_VERSION_CHANGED, false, base, base));
    assert_true(pass(KC_PREDICATE_RESOURCE_VERSION_CHANGED, false, base, rv));
    /* labels, annotations */
    assert_false(pass(KC_PREDICATE_LABELS_CHANGED, false, base, ann));
    assert_true(pass(KC_PREDICATE_LABELS_CHANGED, false, base, lab));
    assert_false(pass(KC_PREDICATE_ANNOTATIONS_CHANGED, false, base, lab));
    assert_true(pass(KC_PREDICATE_ANNOTATIONS_CHANGED, false, base, ann));
    assert_true(pass(KC_PREDICATE_ANNOTATIONS_CHANGED, false, base, noann));
    assert_false(pass(KC_PREDICATE_ANNOTATIONS_CHANGED, false, noann, emptyann));
    /* AND (default) and OR */
    unsigned gl = KC_PREDICATE_GENERATION_CHANGED | KC_PREDICATE_LABELS_CHANGED;
    assert_false(pass(gl, false, base, lab));
    assert_true(pass(gl, true, base, lab));
    assert_false(pass(gl, true, base, ann));
    /* adds and deletes always pass the built-in flags */
    kc_predicate p = {.flags = gl};
    assert_true(kc__ctrl_predicate_pass(&p, KC_CONTROLLER_EVENT_ADD, NULL, base));
    assert_true(kc__ctrl_predicate_pass(&p, KC_CONTROLLER_EVENT_DELETE, NULL, base));
    kc_obj *all[] = {base, rv, gen, lab, ann, noann, emptyann};
    for (size_t i = 0; i < KC__ARRAY_LEN(all); i++)
        kc_obj_unref(all[i]);
}

/* A custom predicate on the primary type drops events before they enqueue (stats.filtered). */
static bool not_skipped(void *ud, kc_controller_event ev, kc_obj *old_obj, kc_obj *new_obj)
{
    (void)ud;
    (void)ev;
    (void)old_obj;
    return strncmp(kc_obj_name(new_obj), "skip-", 5) != 0;
}

static void test_controller_predicate_custom_filters_events(void **st)
{
    (void)st;
    cfx x;
    cfx_up(&x, NULL, NULL);
    x.pred.custom = not_skipped;
    kc_controller *c = cfx_make(&x);
    cfx_start(c);
    cfx_create_cm(&x.f, "skip-a");
    cfx_create_cm(&x.f, "keep-b");
    assert_true(crec_wait_key(&x.r, "default/keep-b", 1, 10000));
    assert_int_equal(crec_count(&x.r, "default/skip-a"), 0);
    kc_controller_stats s;
    kc_controller_get_stats(c, &s);
    assert_true(s.filtered >= 1);
    cfx_down(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_controller_owner_secret_enqueues_owner),
        cmocka_unit_test(test_controller_owner_only_controller_ref_of_primary_kind),
        cmocka_unit_test(test_controller_owner_update_enqueues_old_and_new),
        cmocka_unit_test(test_controller_watch_map_function),
        cmocka_unit_test(test_controller_predicates_builtin),
        cmocka_unit_test(test_controller_predicate_custom_filters_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
