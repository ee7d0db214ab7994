/*
 * test_cached_ryw.c — the cached client's internals without a server: block-on-read bookkeeping
 * (kc__ryw_*: replace by key, superseded pending deletes, generations, per type/namespace/key
 * collection, sweep threshold) and the wait primitive (kc__cc_wait) on a hand-fed kc_store —
 * including resourceVersions that are not comparable ("that exact RV or any later event on the
 * key") and UID-based delete conditions.
 */
#include "cached/internal.h"
#include "store/internal.h"
#include "kcache/cached_client.h"

#include <pthread.h>
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
    assert_int_equal(kc__ryw_note_write(&t, "/v1/secrets", "ns", "a", "42", "uid-a", 7), 0);
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

/* A write (the name re-created) becomes the key's entry, but the pending delete of the first UID is
 * kept, superseded, until forgotten by its own generation: lookups see the write, collections
 * both (reads keep hiding the deleted UID while the cache may still hold it). */
static void
test_cached_ryw_write_supersedes_pending_delete_and_forget_is_by_generation(void **state)
{
    kc__ryw t;
    kc__ryw_init(&t);
    uint64_t gen = 0;
    assert_int_equal(kc__ryw_note_delete(&t, "/v1/secrets", "ns", "a", "uid-1", NULL, 1, &gen), 0);
    assert_int_equal(kc__ryw_note_write(&t, "/v1/secrets", "ns", "a", "50", NULL, 2),
                     0); /* re-created */
    kc__ryw_want w;
    assert_int_equal(kc__ryw_lookup(&t, "/v1/secrets", "ns", "a", &w), 1);
    assert_string_equal(w.rv, "50");
    assert_null(w.delete_uid);
    kc__ryw_want *all = NULL;
    assert_int_equal(kc__ryw_collect(&t, "/v1/secrets", "ns", "a", &all), 2);
    int del = all[0].delete_uid ? 0 : 1;
    assert_string_equal(all[del].delete_uid, "uid-1");
    assert_int_equal(all[del].gen, gen);
    for (int i = 0; i < 2; i++)
        kc__ryw_want_clear(&all[i]);
    free(all);
    kc__ryw_forget(&t, "/v1/secrets", "ns", "a", gen); /* the old delete: only it goes */
    assert_int_equal(t.map.n, 1);
    kc__ryw_want_clear(&w);
    assert_int_equal(kc__ryw_lookup(&t, "/v1/secrets", "ns", "a", &w), 1);
    assert_string_equal(w.rv, "50");
    kc__ryw_forget(&t, "/v1/secrets", "ns", "a", w.gen);
    kc__ryw_want_clear(&w);
    assert_int_equal(t.map.n, 0);
    kc__ryw_destroy(&t);
}

/* Every pending delete of a known UID survives the entries that follow it (another delete, a
 * delete that fails and is forgotten); a pending delete of an unknown UID does not (it would hide
 * the re-created object too). */
static void test_cached_ryw_pending_deletes_of_known_uids_accumulate(void **state)
{
    kc__ryw t;
    kc__ryw_init(&t);
    uint64_t g1 = 0, g2 = 0, g3 = 0;
    assert_int_equal(kc__ryw_note_delete(&t, "/v1/secrets", "ns", "a", "uid-1", NULL, 1, &g1), 0);
    assert_int_equal(kc__ryw_note_delete(&t, "/v1/secrets", "ns", "a", "uid-2", "7", 2, &g2), 0);
    assert_int_equal(kc__ryw_note_delete(&t, "/v1/secrets", "ns", "a", "uid-2", NULL, 3, &g3), 0);
    kc__ryw_forget(&t, "/v1/secrets", "ns", "a", g3); /* that DELETE failed */
    kc__ryw_want *all = NULL;
    assert_int_equal(kc__ryw_collect(&t, "/v1/secrets", "ns", "a", &all), 2);
    bool saw1 = false, saw2 = false;
    for (int i = 0; i < 2; i++) {
        saw1 |= !strcmp(all[i].delete_uid, "uid-1") && all[i].gen == g1;
        saw2 |= !strcmp(all[i].delete_uid, "uid-2") && all[i].gen == g2;
        kc__ryw_want_clear(&all[i]);
    }
    free(all);
    assert_true(saw1 && saw2);
    kc__ryw_refine(&t, "/v1/secrets", "ns", "a", g1, NULL, "5"); /* superseded: still refined */
    kc__ryw_forget(&t, "/v1/secrets", "ns", "a", g1);
    kc__ryw_forget(&t, "/v1/secrets", "ns", "a", g2);
    assert_int_equal(t.map.n, 0);
    uint64_t g4 = 0;
    assert_int_equal(kc__ryw_note_delete(&t, "/v1/secrets", "ns", "b", "", NULL, 4, &g4), 0);
    assert_int_equal(kc__ryw_note_write(&t, "/v1/secrets", "ns", "b", "60", "uid-3", 5), 0);
    assert_int_equal(t.map.n, 1); /* the unknown-UID delete was replaced */
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
                                            i % 3 ? "a" : "b", name, "9", NULL, 0),
                         0);
    }
    kc__ryw_want *w = NULL;
    int n = kc__ryw_collect(&t, "/v1/secrets", "b", NULL, &w);
    assert_int_equal(n, 50); /* odd i with i % 3 == 0 */
    for (int i = 0; i < n; i++) {
        assert_string_equal(w[i].ns, "b");
        kc__ryw_want_clear(&w[i]);
    }
    free(w);
    n = kc__ryw_collect(&t, "/v1/secrets", NULL, NULL, &w);
    assert_int_equal(n, 150);
    for (int i = 0; i < n; i++)
        kc__ryw_want_clear(&w[i]);
    free(w);
    n = kc__ryw_collect(&t, "/v1/secrets", "b", "o3", &w); /* one key */
    assert_int_equal(n, 1);
    assert_string_equal(w[0].name, "o3");
    kc__ryw_want_clear(&w[0]);
    free(w);
    assert_int_equal(kc__ryw_collect(&t, "/v1/secrets", "a", "o3", &w), 0);
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
        kc__ryw_note_write(&t, "/v1/secrets", "", name, "1", NULL, 0);
    }
    assert_false(kc__ryw_should_sweep(&t));
    kc__ryw_note_write(&t, "/v1/secrets", "", "last", "1", NULL, 0);
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
    kc_config_unref(f->cfg);
    free(f);
    return 0;
}

static kc_obj *secret(const char *name, const char *uid, const char *rv)
{
    char json[256];
    int n = snprintf(json, sizeof(json),
                     "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"%s\","
                     "\"namespace\":\"ns\",\"uid\":\"%s\",\"resourceVersion\":\"%s\"}}",
                     name, uid, rv);
    kc_obj *o = NULL;
    assert_int_equal(kc_obj_parse(json, (size_t)n, NULL, &o, NULL), 0);
    return o;
}

/* Apply an event on ns/<name>. */
static void apply_to(kc_store *s, const char *name, kc_watch_type type, const char *uid,
                     const char *rv)
{
    kc_obj *o = secret(name, uid, rv);
    assert_int_equal(kc_store_apply(s, type, o, NULL, NULL), 0);
    kc_obj_unref(o);
}

static void apply(kc_store *s, kc_watch_type type, const char *uid, const char *rv)
{
    apply_to(s, "a", type, uid, rv);
}

/* Relist: the store's contents become the objects ns/<names[i]> (uids[i], rvs[i]) at list_rv. */
static void relist(kc_store *s, const char *list_rv, size_t n, const char *const *names,
                   const char *const *uids, const char *const *rvs)
{
    kc_store_batch *b = NULL;
    assert_int_equal(kc_store_batch_new(s, &b, NULL), 0);
    for (size_t i = 0; i < n; i++) {
        kc_obj *o = secret(names[i], uids[i], rvs[i]);
        assert_int_equal(kc_store_batch_add(b, o, NULL), 0);
        kc_obj_unref(o);
    }
    assert_int_equal(kc_store_replace(s, b, list_rv, NULL, NULL, NULL), 0);
}

static void wm_is(kc_store *s, const char *want)
{
    char wm[KC_STORE_RV_MAX];
    assert_true(kc_store_watermark(s, wm, sizeof(wm)) >= 0);
    assert_string_equal(wm, want);
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
    assert_int_equal(kc_store_check(f->store, &per_key, NULL), 0); /* would never complete */
    assert_int_equal(kc__cc_wait(f->cc, f->store, &written, kc__deadline_after_ms(30), NULL), 0);
}

/* A delete of the cached object (its RV known): done once the key no longer holds the UID, its
 * tombstone gone too — a re-creation under the same name, at a watermark past the RV. */
static void test_cached_ryw_delete_condition_is_gone_or_other_uid(void **state)
{
    wfx *f = *state;
    apply(f->store, KC_WATCH_ADDED, "u1", "10");
    kc__ryw_want w = {.ns = "ns", .name = "a", .delete_uid = "u1", .rv = "10"};
    assert_int_equal(wait_ms(f, &w, 30), KC_ENOT_CAUGHT_UP); /* still the deleted UID */
    apply(f->store, KC_WATCH_DELETED, "u1", "11");
    apply(f->store, KC_WATCH_ADDED, "u2", "12"); /* re-created under the same name */
    assert_int_equal(wait_ms(f, &w, 30), 0);
}

/* Issue 16 point 1 on the store: the cache has not seen the object yet (an own create whose ADDED
 * event is on its way, or someone else's object deleted by precondition UID). "Key absent" proves
 * nothing; the DELETED event of that UID does — and so does the UID vanishing across a relist. */
static void test_cached_ryw_delete_absent_key_proves_nothing(void **state)
{
    wfx *f = *state;
    kc__ryw_want w = {.ns = "ns", .name = "a", .delete_uid = "u1", .after_seq = 0};
    kc_store_cond c = kc__ryw_want_cond(&w);
    assert_int_equal(kc_store_check(f->store, &c, NULL), 0); /* absent, never seen: not done */
    apply(f->store, KC_WATCH_ADDED, "u1", "10");             /* the ADDED event arrives late */
    assert_int_equal(kc_store_check(f->store, &c, NULL), 0);
    apply(f->store, KC_WATCH_DELETED, "u1", "11");
    assert_int_equal(kc_store_check(f->store, &c, NULL), 1); /* its DELETED event: done */
    /* Another UID at the key, older than the deleted one (no RV known to order them): not done. */
    kc__ryw_want w2 = {.ns = "ns", .name = "b", .delete_uid = "u3"};
    kc_store_cond c2 = kc__ryw_want_cond(&w2);
    apply_to(f->store, "b", KC_WATCH_ADDED, "u2", "12");
    assert_int_equal(kc_store_check(f->store, &c2, NULL), 0);
    /* The deleted UID vanishing across a relist is a deletion the store has seen. */
    apply_to(f->store, "b", KC_WATCH_DELETED, "u2", "13");
    apply_to(f->store, "b", KC_WATCH_ADDED, "u3", "14");
    assert_int_equal(kc_store_check(f->store, &c2, NULL), 0);
    relist(f->store, "20", 0, NULL, NULL, NULL);
    assert_int_equal(kc_store_check(f->store, &c2, NULL), 1);
}

/* With an RV the deleted object had (an own create's RV): another UID at the key counts once the
 * watermark has passed that RV — before, it may be an older object with the same name. */
static void test_cached_ryw_delete_with_rv_orders_other_uids(void **state)
{
    wfx *f = *state;
    apply(f->store, KC_WATCH_ADDED, "u0", "5"); /* an older incarnation, still in the cache */
    kc__ryw_want w = {.ns = "ns", .name = "a", .delete_uid = "u1", .rv = "10"};
    kc_store_cond c = kc__ryw_want_cond(&w);
    assert_int_equal(kc_store_check(f->store, &c, NULL), 0);
    apply(f->store, KC_WATCH_DELETED, "u0", "6");
    apply(f->store, KC_WATCH_ADDED, "u1", "10");
    apply(f->store, KC_WATCH_DELETED, "u1", "11");
    apply(f->store, KC_WATCH_ADDED, "u2", "12");             /* the tombstone of u1 is gone now */
    assert_int_equal(kc_store_check(f->store, &c, NULL), 1); /* watermark 12 >= 10 and u1 gone */
}

typedef struct bg_wait {
    kc_store *s;
    kc_store_cond c;
    int rc;
} bg_wait;

static void *bg_waiter(void *p)
{
    bg_wait *a = p;
    a->rc = kc_store_wait(a->s, &a->c, 10000, NULL);
    return NULL;
}

/* Wait (bounded) until a thread is blocked in kc_store_wait on s: the waiter lists are the only
 * observable of that. */
static void until_waiting(kc_store *s)
{
    uint64_t deadline = kc__deadline_after_ms(10000);
    for (;;) {
        bool linked = false;
        pthread_mutex_lock(&s->mu);
        for (size_t i = 0; i < KC__WAIT_BUCKETS; i++)
            linked = linked || s->key_waiters[i];
        linked = linked || s->wm_waiters;
        pthread_mutex_unlock(&s->mu);
        if (linked || kc__now_ns() > deadline)
            break;
        kc__sleep_ns(KC__NS_PER_MS);
    }
}

/* A block-on-write delete's waiter sees every state of its key: once it has seen the deleted UID,
 * any later state without it is after the deletion — even a relist that replaced the object by a
 * new one under the same name (no tombstone, no RV known). */
static void test_cached_ryw_delete_waiter_that_saw_the_uid(void **state)
{
    wfx *f = *state;
    bg_wait a = {.s = f->store,
                 .c = kc__cc_deleted_cond("ns", "a", "u1", NULL, kc_store_seq(f->store)),
                 .rc = 99};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, bg_waiter, &a), 0);
    until_waiting(f->store);
    apply(f->store, KC_WATCH_ADDED, "u1", "10");
    const char *names[] = {"a"}, *uids[] = {"u2"}, *rvs[] = {"15"};
    relist(f->store, "15", 1, names, uids, rvs);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(a.rc, 0);
    /* The same relist seen by a check that never saw u1 proves nothing. */
    kc_store_cond c = kc__cc_deleted_cond("ns", "a", "u1", NULL, 0);
    assert_int_equal(kc_store_check(f->store, &c, NULL), 0);
}

/* Issue 16 point 2 on the store: the server's RVs went back (restore, restart with an RV reset). */
static void test_cached_ryw_rv_regression_resets_watermark_and_waits(void **state)
{
    wfx *f = *state;
    apply(f->store, KC_WATCH_ADDED, "u1", "100"); /* the old timeline: watermark 100 */
    uint64_t before = kc_store_seq(f->store);
    /* A write sent before the regression (old timeline, RV 100 of key a) and one right after the
     * server went back (key b at RV 5), both before the informer relists. */
    kc_store_cond old_w = kc__cc_written_cond("ns", "a", "100", before);
    kc_store_cond new_w = kc__cc_written_cond("ns", "b", "5", before);
    assert_int_equal(kc_store_check(f->store, &old_w, NULL), 1);
    /* Watermark 100 >= 5 but the key disagrees (absent, no tombstone, no relist since): not
     * observed. A watermark-only condition said "observed" here: the read that followed did not
     * find the object. */
    assert_int_equal(kc_store_check(f->store, &new_w, NULL), 0);
    /* The informer relists from the new timeline: list RV 6 < watermark → reset. */
    const char *names[] = {"b"}, *uids[] = {"u5"}, *rvs[] = {"5"};
    relist(f->store, "6", 1, names, uids, rvs);
    wm_is(f->store, "6");
    assert_int_equal(kc_store_check(f->store, &new_w, NULL), 1);
    /* The old write (RV 100 > the new watermark) falls back to key-level evidence: its key
     * vanished in the relist, an event after it was sent. */
    assert_int_equal(kc_store_check(f->store, &old_w, NULL), 1);
    /* A write after the reset waits for the new timeline's events again (the old watermark would
     * have said "observed" at once). */
    kc_store_cond next = kc__cc_written_cond("ns", "c", "8", kc_store_seq(f->store));
    assert_int_equal(kc_store_check(f->store, &next, NULL), 0);
    apply_to(f->store, "c", KC_WATCH_ADDED, "u8", "8");
    assert_int_equal(kc_store_check(f->store, &next, NULL), 1);
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
        cmocka_unit_test(
            test_cached_ryw_write_supersedes_pending_delete_and_forget_is_by_generation),
        cmocka_unit_test(test_cached_ryw_pending_deletes_of_known_uids_accumulate),
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
        cmocka_unit_test_setup_teardown(test_cached_ryw_delete_absent_key_proves_nothing, wsetup,
                                        wteardown),
        cmocka_unit_test_setup_teardown(test_cached_ryw_delete_with_rv_orders_other_uids, wsetup,
                                        wteardown),
        cmocka_unit_test_setup_teardown(test_cached_ryw_delete_waiter_that_saw_the_uid, wsetup,
                                        wteardown),
        cmocka_unit_test_setup_teardown(test_cached_ryw_rv_regression_resets_watermark_and_waits,
                                        wsetup, wteardown),
        cmocka_unit_test_setup_teardown(test_cached_ryw_stopped_store_wakes_with_stopped, wsetup,
                                        wteardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
