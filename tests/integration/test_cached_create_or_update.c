/*
 * test_cached_create_or_update.c — kc_cached_client_create_or_update / create_or_patch
 * (controllerutil.CreateOrUpdate / CreateOrPatch; Issue 31 point 5) against the embedded server,
 * watch events delayed 10–40 ms so the cache lags other writers:
 *   - created / updated / unchanged, and no write at all when unchanged (the resourceVersion stays
 *     and no read-your-writes wait happened — every write of a block-on-write client waits);
 *   - read-your-writes: a cached get right after shows the written resourceVersion;
 *   - N threads each incrementing a counter K times through create-or-update (and create-or-patch)
 *     of one ConfigMap end with N*K: no lost update, because every write carries the
 *     resourceVersion it was computed from and a 409 re-reads (mutate ran more than N*K times:
 *     retries happened; the racing creates hit AlreadyExists and retried too);
 *   - create-or-patch on a type with a status subresource (ResourceQuota): updatedStatusOnly,
 *     updatedStatus, updated, unchanged;
 *   - mutate changing the name or namespace is KC_EINVAL; mutate's own code ends the call (even
 *     KC_ECONFLICT: only the server's conflicts retry).
 */
#include "test_cached_fixture.h"

#include <pthread.h>

#define NS "default"

static const kc_gvr rq_gvr = {"", "v1", "resourcequotas"};

static int setup(void **state)
{
    fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    fx_up(f, 10, 40, KC_RYW_BLOCK_ON_WRITE, 5000);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_down(*state);
    free(*state);
    return 0;
}

/* Set ptr to the string ud. */
static int set_value(void *ud, kc_doc *doc, const kc_obj *existing)
{
    (void)existing;
    const char *const *kv = ud; /* {ptr, value} */
    return kc_doc_set_string(doc, kv[0], kv[1], NULL);
}

static kc_obj *live(fx *f, const kc_gvr *gvr, const char *name)
{
    kc_obj *o = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_client_get(f->client, gvr, NS, name, &o, &e), 0, &e);
    return o;
}

static uint64_t waits(kc_cached_client *cc)
{
    kc_cached_client_stats st;
    kc_cached_client_get_stats(cc, &st);
    return st.waits;
}

static void test_cou_created_updated_unchanged(void **state)
{
    fx *f = *state;
    const char *kv1[] = {"/data/k", "v1"}, *kv2[] = {"/data/k", "v2"};
    kc_op_result res = -1;
    kc_obj *o = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cached_client_create_or_update(f->cc, &fx_configmaps, "ConfigMap", NS, "cou-a",
                                            set_value, kv1, NULL, NULL, &res, &o, &e),
          0, &e);
    assert_int_equal(res, KC_OP_CREATED);
    assert_string_equal(kc_op_result_name(res), "created");
    assert_string_equal(kc_obj_kind(o), "ConfigMap");
    char *rv1 = strdup(kc_obj_resource_version(o));
    kc_obj_unref(o);

    uint64_t w0 = waits(f->cc);
    FX_RC(kc_cached_client_create_or_update(f->cc, &fx_configmaps, "ConfigMap", NS, "cou-a",
                                            set_value, kv1, NULL, NULL, &res, &o, &e),
          0, &e);
    assert_int_equal(res, KC_OP_UNCHANGED);
    assert_string_equal(kc_obj_resource_version(o), rv1);
    kc_obj_unref(o);
    assert_int_equal(waits(f->cc), w0); /* no write: a block-on-write write always waits */
    kc_obj *s = live(f, &fx_configmaps, "cou-a");
    assert_string_equal(kc_obj_resource_version(s), rv1); /* no RV bump on the server */
    kc_obj_unref(s);

    FX_RC(kc_cached_client_create_or_update(f->cc, &fx_configmaps, "ConfigMap", NS, "cou-a",
                                            set_value, kv2, NULL, NULL, &res, &o, &e),
          0, &e);
    assert_int_equal(res, KC_OP_UPDATED);
    assert_string_not_equal(kc_obj_resource_version(o), rv1);
    kc_obj *g = NULL; /* read-your-writes */
    FX_RC(kc_cached_client_get(f->cc, &fx_configmaps, NS, "cou-a", NULL, &g, &e), 0, &e);
    assert_string_equal(kc_obj_resource_version(g), kc_obj_resource_version(o));
    char *v = NULL;
    FX_RC(kc_obj_get_string(g, "/data/k", &v, NULL, &e), 0, &e);
    assert_string_equal(v, "v2");
    free(v);
    kc_obj_unref(g);
    kc_obj_unref(o);
    free(rv1);
}

static int rename_it(void *ud, kc_doc *doc, const kc_obj *existing)
{
    (void)existing;
    return kc_doc_set_string(doc, ud, "elsewhere", NULL);
}

static int calls;
static int fail_conflict(void *ud, kc_doc *doc, const kc_obj *existing)
{
    (void)ud, (void)doc, (void)existing;
    calls++;
    return KC_ECONFLICT;
}

static void test_cou_mutate_errors(void **state)
{
    fx *f = *state;
    kc_op_result res = KC_OP_UNCHANGED;
    kc_obj *o = NULL;
    kc_error e = KC_ERROR_INIT;
    const char *ptrs[] = {"/metadata/name", "/metadata/namespace"};
    for (int i = 0; i < 2; i++) { /* absent (create) and, the second time, present */
        for (int p = 0; p < 2; p++) {
            FX_RC(kc_cached_client_create_or_update(f->cc, &fx_configmaps, "ConfigMap", NS, "cou-n",
                                                    rename_it, (void *)ptrs[p], NULL, NULL, &res,
                                                    &o, &e),
                  KC_EINVAL, &e);
            assert_non_null(strstr(e.message, "MutateFn cannot mutate object name"));
            kc_error_clear(&e);
            FX_RC(kc_cached_client_create_or_patch(f->cc, &fx_configmaps, "ConfigMap", NS, "cou-n",
                                                   rename_it, (void *)ptrs[p], NULL, NULL, &res, &o,
                                                   &e),
                  KC_EINVAL, &e);
            kc_error_clear(&e);
        }
        assert_null(o);
        const char *kv[] = {"/data/x", "1"};
        if (i == 0)
            FX_RC(kc_cached_client_create_or_update(f->cc, &fx_configmaps, "ConfigMap", NS, "cou-n",
                                                    set_value, kv, NULL, NULL, NULL, NULL, &e),
                  0, &e);
    }
    calls = 0;
    FX_RC(kc_cached_client_create_or_update(f->cc, &fx_configmaps, "ConfigMap", NS, "cou-n",
                                            fail_conflict, NULL, NULL, NULL, &res, &o, &e),
          KC_ECONFLICT, &e);
    kc_error_clear(&e);
    assert_int_equal(calls, 1); /* mutate's own conflict is not retried */
    FX_RC(kc_cached_client_create_or_update(f->cc, &fx_configmaps, NULL, NS, "cou-n", set_value,
                                            NULL, NULL, NULL, &res, &o, &e),
          KC_EINVAL, &e); /* no kind */
    kc_error_clear(&e);
}

/* ---- concurrent writers ------------------------------------------------------------------- */

#define WRITERS 4
#define INCS    10

typedef struct race {
    fx *f;
    bool patch;
    int mutates; /* atomic */
    int failures;
} race;

static int increment(void *ud, kc_doc *doc, const kc_obj *existing)
{
    race *r = ud;
    __atomic_add_fetch(&r->mutates, 1, __ATOMIC_RELAXED);
    int64_t n = 0;
    const char *s = NULL;
    if (existing && kc_doc_get_string(doc, "/data/n", &s, NULL, NULL) == 0)
        n = strtoll(s, NULL, 10);
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)(n + 1));
    return kc_doc_set_string(doc, "/data/n", buf, NULL);
}

static void *racer(void *arg)
{
    race *r = arg;
    kc_mutate_opts mo = {.max_retries = 200, .backoff_ms = 1};
    for (int i = 0; i < INCS; i++) {
        kc_error e = KC_ERROR_INIT;
        kc_op_result res;
        int rc = r->patch ? kc_cached_client_create_or_patch(r->f->cc, &fx_configmaps, "ConfigMap",
                                                             NS, "counter", increment, r, &mo, NULL,
                                                             &res, NULL, &e)
                          : kc_cached_client_create_or_update(r->f->cc, &fx_configmaps, "ConfigMap",
                                                              NS, "counter", increment, r, &mo,
                                                              NULL, &res, NULL, &e);
        if (rc != 0 || (res != KC_OP_CREATED && res != KC_OP_UPDATED)) {
            fprintf(stderr, "racer: %s (%s) result %d\n", kc_errno_name(rc),
                    e.message ? e.message : "", (int)res);
            __atomic_add_fetch(&r->failures, 1, __ATOMIC_RELAXED);
        }
        kc_error_clear(&e);
    }
    return NULL;
}

static void race_run(fx *f, bool patch)
{
    race r = {.f = f, .patch = patch};
    pthread_t t[WRITERS];
    for (int i = 0; i < WRITERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, racer, &r), 0);
    for (int i = 0; i < WRITERS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(r.failures, 0);
    kc_obj *s = live(f, &fx_configmaps, "counter");
    char *v = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_obj_get_string(s, "/data/n", &v, NULL, &e), 0, &e);
    assert_int_equal(strtoll(v, NULL, 10), WRITERS * INCS); /* no lost update */
    free(v);
    kc_obj_unref(s);
    fprintf(stderr, "%s: %d increments took %d mutate calls\n",
            patch ? "create_or_patch" : "create_or_update", WRITERS * INCS, r.mutates);
    assert_true(r.mutates > WRITERS * INCS); /* conflicts (409, AlreadyExists) were retried */
}

static void test_cou_concurrent_writers_no_lost_update(void **state)
{
    race_run(*state, false);
}

static void test_cop_concurrent_writers_no_lost_update(void **state)
{
    race_run(*state, true);
}

/* ---- create-or-patch and status ----------------------------------------------------------- */

typedef struct rq_want {
    const char *hard, *used, *label; /* NULL: leave */
} rq_want;

static int rq_mutate(void *ud, kc_doc *doc, const kc_obj *existing)
{
    (void)existing;
    const rq_want *w = ud;
    int rc = 0;
    if (w->hard)
        rc = kc_doc_set_string(doc, "/spec/hard/pods", w->hard, NULL);
    if (rc == 0 && w->used)
        rc = kc_doc_set_string(doc, "/status/used/pods", w->used, NULL);
    if (rc == 0 && w->label)
        rc = kc_doc_set_string(doc, "/metadata/labels/l", w->label, NULL);
    return rc;
}

static kc_op_result cop(fx *f, rq_want w, kc_obj **ret)
{
    kc_op_result res = -1;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cached_client_create_or_patch(f->cc, &rq_gvr, "ResourceQuota", NS, "rq", rq_mutate, &w,
                                           NULL, NULL, &res, ret, &e),
          0, &e);
    return res;
}

static void want_str(const kc_obj *o, const char *ptr, const char *want)
{
    char *v = NULL;
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_obj_get_string(o, ptr, &v, NULL, &e), 0, &e);
    assert_string_equal(v, want);
    free(v);
}

static void test_cop_status_results(void **state)
{
    fx *f = *state;
    kc_obj *o = NULL;
    assert_int_equal(cop(f, (rq_want){.hard = "10"}, &o), KC_OP_CREATED);
    kc_obj_unref(o);
    assert_int_equal(cop(f, (rq_want){.hard = "10", .used = "1"}, &o), KC_OP_UPDATED_STATUS_ONLY);
    kc_obj_unref(o);
    kc_obj *s = live(f, &rq_gvr, "rq");
    want_str(s, "/status/used/pods", "1");
    want_str(s, "/spec/hard/pods", "10");
    kc_obj_unref(s);
    assert_int_equal(cop(f, (rq_want){.hard = "20", .used = "2"}, &o), KC_OP_UPDATED_STATUS);
    assert_string_equal(kc_op_result_name(KC_OP_UPDATED_STATUS), "updatedStatus");
    kc_obj *g = NULL; /* read-your-writes: the cache has the status write */
    kc_error e = KC_ERROR_INIT;
    FX_RC(kc_cached_client_get(f->cc, &rq_gvr, NS, "rq", NULL, &g, &e), 0, &e);
    assert_string_equal(kc_obj_resource_version(g), kc_obj_resource_version(o));
    want_str(g, "/status/used/pods", "2");
    want_str(g, "/spec/hard/pods", "20");
    kc_obj_unref(g);
    kc_obj_unref(o);
    assert_int_equal(cop(f, (rq_want){.label = "x"}, &o), KC_OP_UPDATED);
    char *rv = strdup(kc_obj_resource_version(o));
    kc_obj_unref(o);
    uint64_t w0 = waits(f->cc);
    assert_int_equal(cop(f, (rq_want){.hard = "20", .used = "2", .label = "x"}, &o),
                     KC_OP_UNCHANGED);
    kc_obj_unref(o);
    assert_int_equal(waits(f->cc), w0);
    s = live(f, &rq_gvr, "rq");
    assert_string_equal(kc_obj_resource_version(s), rv);
    kc_obj_unref(s);
    free(rv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cou_created_updated_unchanged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cou_mutate_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cou_concurrent_writers_no_lost_update, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cop_concurrent_writers_no_lost_update, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cop_status_results, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
