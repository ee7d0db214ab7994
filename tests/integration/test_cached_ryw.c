/*
 * test_cached_ryw.c — the cached client's internals without a server: block-on-read bookkeeping
 * (kc__ryw_*: replace by key, generations, per type/namespace collection, sweep threshold) and the
 * wait primitive (kc__cc_wait) on a hand-fed kc_store — including resourceVersions that are not
 * comparable ("that exact RV or any later event on the key") and UID-based delete conditions.
 */
#include "client/cached_internal.h"
#include "kcache/cached_client.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- bookkeeping ----------------------------------------------------------------------------- */

static void test_cached_ryw_note_write_then_lookup(void **state)
{
    kc__ryw t;
    kc__ryw_init(&t);
    assert_int_equal(kc__ryw_note_write(&t, "/v1/secrets", "ns", "a", "42", 7), 0);
    kc__ryw_want w;
    assert_int_equal(kc__ryw_lookup(&t, "/v1/secrets", "ns", "a", &w), 1);
    assert_string_equal(w.rv, "42");
    assert_null(w.delete_uid);
    assert_int_equal(w.after_seq, 7);
    kc__ryw_want_clear(&w);
    assert_int_equal(kc__ryw_lookup(&t, "/v1/secrets", "other", "a", &w), 0);
    assert_int_equal(kc__ryw_lookup(&t, "/v1/configmaps", "ns", "a", &w), 0);
    kc__ryw_destroy(&t);
}

static void test_cached_ryw_write_replaces_pending_delete_and_forget_is_by_generation(void **state)
{
    kc__ryw t;
    kc__ryw_init(&t);
    uint64_t gen = 0;
    assert_int_equal(kc__ryw_note_delete(&t, "/v1/secrets", "ns", "a", "uid-1", 1, &gen), 0);
    assert_int_equal(kc__ryw_note_write(&t, "/v1/secrets", "ns", "a", "50", 2), 0); /* re-created */
    kc__ryw_forget(&t, "/v1/secrets", "ns", "a", gen); /* the old delete's generation: kept */
    kc__ryw_want w;
    assert_int_equal(kc__ryw_lookup(&t, "/v1/secrets", "ns", "a", &w), 1);
    assert_string_equal(w.rv, "50");
    assert_null(w.delete_uid);
    kc__ryw_forget(&t, "/v1/secrets", "ns", "a", w.gen);
    kc__ryw_want_clear(&w);
    assert_int_equal(t.n_entries, 0);
    kc__ryw_destroy(&t);
}

static void test_cached_ryw_collect_filters_type_and_namespace(void **state)
{
    kc__ryw t;
    kc__ryw_init(&t);
    for (int i = 0; i < 300; i++) { /* enough to grow the table several times */
        char name[16];
        snprintf(name, sizeof(name), "o%d", i);
        assert_int_equal(kc__ryw_note_write(&t, i % 2 ? "/v1/secrets" : "/v1/configmaps",
                                            i % 3 ? "a" : "b", name, "9", 0),
                         0);
    }
    kc__ryw_want *w = NULL;
    int n = kc__ryw_collect(&t, "/v1/secrets", "b", &w);
    assert_int_equal(n, 50); /* odd i with i % 3 == 0 */
    for (int i = 0; i < n; i++) {
        assert_string_equal(w[i].ns, "b");
        kc__ryw_want_clear(&w[i]);
    }
    free(w);
    n = kc__ryw_collect(&t, "/v1/secrets", NULL, &w);
    assert_int_equal(n, 150);
    for (int i = 0; i < n; i++)
        kc__ryw_want_clear(&w[i]);
    free(w);
    kc__ryw_destroy(&t);
}

static void test_cached_ryw_sweep_threshold_doubles(void **state)
{
    kc__ryw t;
    kc__ryw_init(&t);
    for (int i = 0; i < 1023; i++) {
        char name[16];
        snprintf(name, sizeof(name), "o%d", i);
        kc__ryw_note_write(&t, "/v1/secrets", "", name, "1", 0);
    }
    assert_false(kc__ryw_should_sweep(&t));
    kc__ryw_note_write(&t, "/v1/secrets", "", "last", "1", 0);
    assert_true(kc__ryw_should_sweep(&t));
    kc__ryw_swept(&t); /* nothing dropped: next sweep at twice the size */
    assert_false(kc__ryw_should_sweep(&t));
    assert_int_equal(t.sweep_at, 2048);
    kc__ryw_destroy(&t);
}

/* ---- the wait primitive on a hand-fed store ------------------------------------------------- */

typedef struct wfx {
    kc_config *cfg;
    kc_client *client;
    kc_cache *cache;
    kc_cached_client *cc;
    kc_store *store;
} wfx;

static int wsetup(void **state)
{
    wfx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    /* The cached client is only used for its wait path: the URL is never contacted. */
    assert_int_equal(kc_config_from_url("http://127.0.0.1:1", NULL, NULL, &f->cfg, NULL), 0);
    assert_int_equal(kc_client_new(f->cfg, NULL, &f->client, NULL), 0);
    assert_int_equal(kc_cache_new(f->client, NULL, &f->cache, NULL), 0);
    assert_int_equal(kc_cached_client_new(f->client, f->cache, NULL, &f->cc, NULL), 0);
    assert_int_equal(kc_store_new(NULL, &f->store, NULL), 0);
    *state = f;
    return 0;
}

static int wteardown(void **state)
{
    wfx *f = *state;
    kc_store_free(f->store);
    kc_cached_client_free(f->cc);
    kc_cache_free(f->cache);
    kc_client_free(f->client);
    kc_config_free(f->cfg);
    free(f);
    return 0;
}

static void apply(kc_store *s, kc_watch_type type, const char *uid, const char *rv)
{
    char json[256];
    int n = snprintf(json, sizeof(json),
                     "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"a\","
                     "\"namespace\":\"ns\",\"uid\":\"%s\",\"resourceVersion\":\"%s\"}}",
                     uid, rv);
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(json, (size_t)n, NULL, &o, NULL), 0);
    assert_int_equal(kc_store_apply(s, type, o, NULL, NULL), 0);
    kc_obj_unref(o);
}

static int wait_ms(wfx *f, const kc__ryw_want *w, int64_t ms)
{
    kc_store_cond c = kc__ryw_want_cond(w);
    return kc__cc_wait(f->cc, f->store, &c, kc__deadline_after_ms(ms), NULL);
}

static void test_cached_ryw_noncomparable_rv_any_later_event_satisfies(void **state)
{
    wfx *f = *state;
    apply(f->store, KC_WATCH_ADDED, "u1", "opaque-1");
    kc__ryw_want w = {.ns = "ns",
                      .name = "a",
                      .rv = "opaque-9",
                      .after_seq = kc_store_seq(f->store)};  /* read before "sending" */
    assert_int_equal(wait_ms(f, &w, 50), KC_ENOT_CAUGHT_UP); /* no event since: not seen */
    apply(f->store, KC_WATCH_MODIFIED, "u1", "opaque-5");    /* any later event on the key */
    assert_int_equal(wait_ms(f, &w, 50), 0);
}

static void test_cached_ryw_noncomparable_rv_exact_match_satisfies(void **state)
{
    wfx *f = *state;
    apply(f->store, KC_WATCH_ADDED, "u1", "opaque-7");
    kc__ryw_want w = {
        .ns = "ns", .name = "a", .rv = "opaque-7", .after_seq = kc_store_seq(f->store)};
    assert_int_equal(wait_ms(f, &w, 50), 0); /* no later event needed: the exact RV is there */
}

static void test_cached_ryw_comparable_rv_older_state_does_not_satisfy(void **state)
{
    wfx *f = *state;
    apply(f->store, KC_WATCH_ADDED, "u1", "10");
    kc__ryw_want w = {.ns = "ns", .name = "a", .rv = "12", .after_seq = 0};
    assert_int_equal(wait_ms(f, &w, 50), KC_ENOT_CAUGHT_UP);
    apply(f->store, KC_WATCH_MODIFIED, "u1", "13"); /* a later state also counts */
    assert_int_equal(wait_ms(f, &w, 50), 0);
}

/* A write we never saw, deleted by someone else, and the cache catching up by a relist: the key
 * is absent and has no tombstone, so a per-key condition would wait forever; the written-object
 * condition (store watermark for comparable RVs) completes. */
static void test_cached_ryw_written_cond_completes_after_relist_without_key(void **state)
{
    wfx *f = *state;
    apply(f->store, KC_WATCH_ADDED, "u1", "10"); /* some other state of the store: key "a" */
    kc_store_cond per_key = {.kind = KC_STORE_WAIT_KEY_RV, .ns = "ns", .name = "gone", .rv = "12"};
    kc_store_cond written = kc__cc_written_cond("ns", "gone", "12", kc_store_seq(f->store));
    assert_int_equal(kc__cc_wait(f->cc, f->store, &written, kc__deadline_after_ms(30), NULL),
                     KC_ENOT_CAUGHT_UP);
    kc_store_batch *b = NULL;
    assert_int_equal(kc_store_batch_new(f->store, &b, NULL), 0); /* relist: "gone" is not there */
    assert_int_equal(kc_store_replace(f->store, b, "15", NULL, NULL, NULL), 0);
    assert_int_equal(kc_store_check(f->store, &per_key), 0); /* would never complete */
    assert_int_equal(kc__cc_wait(f->cc, f->store, &written, kc__deadline_after_ms(30), NULL), 0);
}

static void test_cached_ryw_delete_condition_is_gone_or_other_uid(void **state)
{
    wfx *f = *state;
    apply(f->store, KC_WATCH_ADDED, "u1", "10");
    kc__ryw_want w = {.ns = "ns", .name = "a", .delete_uid = "u1"};
    assert_int_equal(wait_ms(f, &w, 30), KC_ENOT_CAUGHT_UP); /* still the deleted UID */
    apply(f->store, KC_WATCH_DELETED, "u1", "11");
    apply(f->store, KC_WATCH_ADDED, "u2", "12"); /* re-created under the same name */
    assert_int_equal(wait_ms(f, &w, 30), 0);
}

static void test_cached_ryw_stopped_store_wakes_with_stopped(void **state)
{
    wfx *f = *state;
    kc_store_stop(f->store);
    kc__ryw_want w = {.ns = "ns", .name = "a", .rv = "99"};
    assert_int_equal(wait_ms(f, &w, 5000), KC_ESTOPPED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cached_ryw_note_write_then_lookup),
        cmocka_unit_test(test_cached_ryw_write_replaces_pending_delete_and_forget_is_by_generation),
        cmocka_unit_test(test_cached_ryw_collect_filters_type_and_namespace),
        cmocka_unit_test(test_cached_ryw_sweep_threshold_doubles),
        cmocka_unit_test_setup_teardown(test_cached_ryw_noncomparable_rv_any_later_event_satisfies,
                                        wsetup, wteardown),
        cmocka_unit_test_setup_teardown(test_cached_ryw_noncomparable_rv_exact_match_satisfies,
                                        wsetup, wteardown),
        cmocka_unit_test_setup_teardown(test_cached_ryw_comparable_rv_older_state_does_not_satisfy,
                                        wsetup, wteardown),
        cmocka_unit_test_setup_teardown(
            test_cached_ryw_written_cond_completes_after_relist_without_key, wsetup, wteardown),
        cmocka_unit_test_setup_teardown(test_cached_ryw_delete_condition_is_gone_or_other_uid,
                                        wsetup, wteardown),
        cmocka_unit_test_setup_teardown(test_cached_ryw_stopped_store_wakes_with_stopped, wsetup,
                                        wteardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
