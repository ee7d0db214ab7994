/*
 * Unit tests for kc_store: reads without copies, indexes, the watermark, atomic relists with
 * tombstones, lock-free reads, batches (no server needed). Waiters: test_store_wait.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/internal.h" /* kc__alloc_fail_hook_set */
#include "core/slab.h"
#include "kcache/rv.h"
#include "kcache/store.h"

#include "store_fixture.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static void test_store_get_returns_shared_reference(void **st)
{
    kc_store *s = new_store();
    kc_obj *o = mk("ns1", "a", "u1", "5", NULL);
    assert_int_equal(kc_store_apply(s, KC_WATCH_ADDED, o, NULL, NULL), 0);
    kc_obj *g = kc_store_get(s, "ns1", "a");
    assert_ptr_equal(g, o); /* no copy */
    kc_obj *g2 = kc_store_get_key(s, "ns1/a");
    assert_ptr_equal(g2, o);
    assert_null(kc_store_get(s, "ns2", "a"));
    assert_int_equal(kc_store_len(s), 1);
    kc_obj_unref(g);
    kc_obj_unref(g2);
    kc_obj_unref(o);
    kc_store_free(s);
}

static void test_store_apply_reports_changes(void **st)
{
    kc_store *s = new_store();
    kc_store_change ch;
    kc_obj *a1 = mk("ns1", "a", "u1", "5", NULL), *a2 = mk("ns1", "a", "u1", "6", NULL);
    assert_int_equal(kc_store_apply(s, KC_WATCH_ADDED, a1, &ch, NULL), 0);
    assert_int_equal(ch.kind, KC_STORE_CHANGE_ADDED);
    assert_ptr_equal(ch.new_obj, a1);
    kc_store_change_clear(&ch);
    assert_int_equal(kc_store_apply(s, KC_WATCH_MODIFIED, a2, &ch, NULL), 0);
    assert_int_equal(ch.kind, KC_STORE_CHANGE_UPDATED);
    assert_ptr_equal(ch.old_obj, a1);
    assert_ptr_equal(ch.new_obj, a2);
    kc_store_change_clear(&ch);
    assert_int_equal(kc_store_apply(s, KC_WATCH_DELETED, a2, &ch, NULL), 0);
    assert_int_equal(ch.kind, KC_STORE_CHANGE_DELETED);
    assert_ptr_equal(ch.old_obj, a2);
    assert_false(ch.tombstone);
    kc_store_change_clear(&ch);
    assert_int_equal(kc_store_apply(s, KC_WATCH_DELETED, a2, &ch, NULL), 0);
    assert_int_equal(ch.kind, KC_STORE_CHANGE_NONE); /* already gone */
    assert_int_equal(kc_store_len(s), 0);
    kc_obj_unref(a1);
    kc_obj_unref(a2);
    kc_store_free(s);
}

static size_t by_app(void *ud, const kc_obj *obj, const char **vals, size_t max)
{
    const char *v = kc_obj_label(obj, "app");
    if (!v || max == 0)
        return 0;
    vals[0] = v;
    return 1;
}

static void test_store_namespace_and_user_index(void **st)
{
    kc_store *s = new_store();
    assert_int_equal(kc_store_add_indexer(s, "app", by_app, NULL, NULL), 0);
    assert_int_equal(kc_store_add_indexer(s, "app", by_app, NULL, NULL), KC_EINVAL);
    char name[32];
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        put(s, KC_WATCH_ADDED, mk(i % 2 ? "odd" : "even", name, "u", "7", i < 10 ? "web" : "db"));
    }
    kc_obj **v;
    size_t n;
    assert_int_equal(kc_store_list_by_namespace(s, "odd", &v, &n, NULL), 0);
    assert_int_equal(n, 50);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(kc_obj_namespace(v[i]), "odd");
    kc_obj_array_free(v, n);
    assert_int_equal(kc_store_list_by_index(s, "app", "web", &v, &n, NULL), 0);
    assert_int_equal(n, 10);
    kc_obj_array_free(v, n);
    /* Re-label p0 (even) from web to db: the index follows. */
    put(s, KC_WATCH_MODIFIED, mk("even", "p0", "u", "8", "db"));
    assert_int_equal(kc_store_list_by_index(s, "app", "web", &v, &n, NULL), 0);
    assert_int_equal(n, 9);
    kc_obj_array_free(v, n);
    assert_int_equal(kc_store_list_by_index(s, "app", "db", &v, &n, NULL), 0);
    assert_int_equal(n, 91);
    kc_obj_array_free(v, n);
    /* Deleting every odd pod empties the bucket. */
    for (int i = 1; i < 100; i += 2) {
        snprintf(name, sizeof(name), "p%d", i);
        put(s, KC_WATCH_DELETED, mk("odd", name, "u", "9", "db"));
    }
    assert_int_equal(kc_store_list_by_namespace(s, "odd", &v, &n, NULL), 0);
    assert_int_equal(n, 0);
    assert_null(v);
    assert_int_equal(kc_store_list_by_namespace(s, "even", &v, &n, NULL), 0);
    assert_int_equal(n, 50);
    kc_obj_array_free(v, n);
    assert_int_equal(kc_store_list_by_index(s, "nope", "x", &v, &n, NULL), KC_ENOTFOUND);
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_store_list_by_index(s, "nope", "x", &v, &n, &e), KC_ENOTFOUND);
    assert_non_null(strstr(e.message, "no index \"nope\""));
    kc_error_clear(&e);
    assert_int_equal(kc_store_add_indexer(s, "late", by_app, NULL, NULL), KC_EBUSY);
    kc_store_free(s);
}

static void test_store_watermark_monotonic_between_relists(void **st)
{
    kc_store *s = new_store();
    wm_is(s, "");
    put(s, KC_WATCH_ADDED, mk("n", "a", "u", "10", NULL));
    wm_is(s, "10");
    kc_store_bookmark(s, "9");
    wm_is(s, "10");
    kc_store_bookmark(s, "100");
    wm_is(s, "100");
    uint64_t q = kc_store_seq(s);
    put(s, KC_WATCH_MODIFIED, mk("n", "a", "u", "abc", NULL)); /* not comparable */
    wm_is(s, "100");
    assert_true(kc_store_seq(s) > q); /* but it counts as an event */
    put(s, KC_WATCH_MODIFIED, mk("n", "a", "u", "50", NULL));
    wm_is(s, "100");
    kc_store_free(s);
}

static int collect(void *ud, const kc_store_change *ch)
{
    int *counts = ud;
    counts[ch->kind]++;
    if (ch->kind == KC_STORE_CHANGE_DELETED)
        counts[0] += ch->tombstone ? 1 : 0;
    return 0;
}

static void test_store_replace_is_atomic_with_tombstones(void **st)
{
    kc_store *s = new_store();
    put(s, KC_WATCH_ADDED, mk("n", "keep", "u1", "5", NULL));
    put(s, KC_WATCH_ADDED, mk("n", "change", "u2", "6", NULL));
    put(s, KC_WATCH_ADDED, mk("n", "vanish", "u3", "7", NULL));
    kc_store_batch *b;
    assert_int_equal(kc_store_batch_new(s, &b, NULL), 0);
    kc_obj *o;
    o = mk("n", "keep", "u1", "5", NULL);
    assert_int_equal(kc_store_batch_add(b, o, NULL), 0);
    kc_obj_unref(o);
    o = mk("n", "change", "u2", "8", NULL);
    assert_int_equal(kc_store_batch_add(b, o, NULL), 0);
    kc_obj_unref(o);
    o = mk("n", "new", "u4", "9", NULL);
    assert_int_equal(kc_store_batch_add(b, o, NULL), 0);
    kc_obj_unref(o);
    assert_int_equal(kc_store_batch_len(b), 3);
    /* Not visible before the swap. */
    assert_null(kc_store_get(s, "n", "new"));
    int counts[4] = {0};
    assert_int_equal(kc_store_replace(s, b, "20", collect, counts, NULL), 0);
    assert_int_equal(counts[KC_STORE_CHANGE_ADDED], 1);
    assert_int_equal(counts[KC_STORE_CHANGE_UPDATED], 1);
    assert_int_equal(counts[KC_STORE_CHANGE_DELETED], 1);
    assert_int_equal(counts[0], 1); /* the delete is a tombstone */
    assert_int_equal(kc_store_len(s), 3);
    assert_null(kc_store_get(s, "n", "vanish"));
    o = kc_store_get(s, "n", "change");
    assert_string_equal(kc_obj_resource_version(o), "8");
    kc_obj_unref(o);
    wm_is(s, "20");
    /* A relist at an older RV: the server's RVs went back (restore, restart with an RV reset).
     * The watermark follows the new timeline, or RV waits would end at once until the server's
     * RVs passed the old value again. */
    assert_int_equal(kc_store_batch_new(s, &b, NULL), 0);
    assert_int_equal(kc_store_replace(s, b, "3", NULL, NULL, NULL), 0);
    wm_is(s, "3");
    assert_int_equal(kc_store_len(s), 0);
    kc_store_free(s);
}

/* ---- lock-free Get under concurrent writes ----------------------------------------------------
 * Readers call kc_store_get / kc_store_get_key in a loop while the writer adds, modifies and
 * deletes churn keys (growing the table and backward-shifting runs) and relists. Every object a
 * reader gets must be the one for its key (a freed or mixed-up object would fail the name check,
 * and ASan/TSan builds check the memory itself), and stable keys, never written after the start,
 * must never be missed — a probe that raced a table change retries instead of answering "absent".
 */
#define LF_STABLE 64
#define LF_CHURN  512

typedef struct lf_arg {
    kc_store *s;
    atomic_bool *done;
    unsigned seed;
    long gets, hits;
} lf_arg;

static void *lf_reader(void *p)
{
    lf_arg *a = p;
    char name[32], key[48];
    unsigned x = a->seed;
    while (!atomic_load(a->done)) {
        x = x * 1103515245u + 12345u;
        unsigned k = (x >> 8) % (LF_STABLE + LF_CHURN);
        bool stable = k < LF_STABLE;
        snprintf(name, sizeof(name), stable ? "stable-%u" : "churn-%u", stable ? k : k - LF_STABLE);
        kc_obj *o;
        if (x & 0x10000) {
            o = kc_store_get(a->s, "ns", name);
        } else {
            snprintf(key, sizeof(key), "ns/%s", name);
            o = kc_store_get_key(a->s, key);
        }
        a->gets++;
        if (stable && !o)
            fail_msg("stable key %s missed", name);
        if (o) {
            a->hits++;
            if (strcmp(kc_obj_name(o), name) != 0 || strcmp(kc_obj_namespace(o), "ns") != 0)
                fail_msg("got %s/%s for ns/%s", kc_obj_namespace(o), kc_obj_name(o), name);
            kc_obj_unref(o);
        }
    }
    return NULL;
}

static void test_store_lock_free_get_under_writes(void **st)
{
    kc_store *s = new_store();
    char name[32], rv[24];
    for (unsigned i = 0; i < LF_STABLE; i++) {
        snprintf(name, sizeof(name), "stable-%u", i);
        put(s, KC_WATCH_ADDED, mk("ns", name, "u", "1", NULL));
    }
    atomic_bool done = false;
    lf_arg a[2] = {{s, &done, 1, 0, 0}, {s, &done, 2, 0, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, lf_reader, &a[i]);
    unsigned x = 7;
    uint64_t v = 2;
    for (int round = 0; round < 6; round++) {
        for (int op = 0; op < 3000; op++) {
            x = x * 1103515245u + 12345u;
            snprintf(name, sizeof(name), "churn-%u", (x >> 8) % LF_CHURN);
            snprintf(rv, sizeof(rv), "%llu", (unsigned long long)v++);
            /* Grow during the first half of a round, shrink during the second. */
            bool del = (x >> 4) % 4 == 0 || (op > 1500 && (x >> 4) % 4 < 3);
            put(s, del ? KC_WATCH_DELETED : KC_WATCH_MODIFIED, mk("ns", name, "u", rv, NULL));
        }
        /* Relist: the stable keys unchanged plus a few churn keys. */
        kc_store_batch *b = NULL;
        assert_int_equal(kc_store_batch_new(s, &b, NULL), 0);
        for (unsigned i = 0; i < LF_STABLE; i++) {
            snprintf(name, sizeof(name), "stable-%u", i);
            kc_obj *o = mk("ns", name, "u", "1", NULL);
            assert_int_equal(kc_store_batch_add(b, o, NULL), 0);
            kc_obj_unref(o);
        }
        for (unsigned i = 0; i < 40; i++) {
            snprintf(name, sizeof(name), "churn-%u", i * 7 % LF_CHURN);
            snprintf(rv, sizeof(rv), "%llu", (unsigned long long)v);
            kc_obj *o = mk("ns", name, "u", rv, NULL);
            assert_int_equal(kc_store_batch_add(b, o, NULL), 0);
            kc_obj_unref(o);
        }
        snprintf(rv, sizeof(rv), "%llu", (unsigned long long)v++);
        assert_int_equal(kc_store_replace(s, b, rv, NULL, NULL, NULL), 0);
    }
    atomic_store(&done, true);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert_true(a[0].gets > 0 && a[1].gets > 0);
    for (unsigned i = 0; i < LF_STABLE; i++) {
        snprintf(name, sizeof(name), "stable-%u", i);
        kc_obj *o = kc_store_get(s, "ns", name);
        assert_non_null(o);
        kc_obj_unref(o);
    }
    kc_store_free(s);
    (void)st;
}

/* A key added to a batch more than once keeps the object added last — before and after the batch
 * placed its entries (kc_store_batch_len places what is pending; relist.c defers placement to
 * size the map once) — with the indexes and the change callbacks following that last object. */
static void test_store_batch_same_key_twice_keeps_the_last(void **st)
{
    (void)st;
    kc_store *s = new_store();
    assert_int_equal(kc_store_add_indexer(s, "app", by_app, NULL, NULL), 0);
    kc_store_batch *b;
    assert_int_equal(kc_store_batch_new(s, &b, NULL), 0);
    const char *apps[] = {"one", "two", "three", "four"};
    for (int i = 0; i < 4; i++) {
        char rv[8];
        snprintf(rv, sizeof rv, "%d", 10 + i);
        kc_obj *o = mk("n", "a", "u1", rv, apps[i]);
        assert_int_equal(kc_store_batch_add(b, o, NULL), 0);
        kc_obj_unref(o);
        kc_obj *other = mk("n", i % 2 ? "c" : "b", "u2", rv, "other");
        assert_int_equal(kc_store_batch_add(b, other, NULL), 0);
        kc_obj_unref(other);
        if (i == 1) /* places the pending entries: later adds meet placed ones */
            assert_int_equal(kc_store_batch_len(b), 3);
    }
    assert_int_equal(kc_store_batch_len(b), 3);
    int counts[4] = {0};
    assert_int_equal(kc_store_replace(s, b, "20", collect, counts, NULL), 0);
    assert_int_equal(counts[KC_STORE_CHANGE_ADDED], 3);
    assert_int_equal(kc_store_len(s), 3);
    kc_obj *g = kc_store_get(s, "n", "a");
    assert_string_equal(kc_obj_resource_version(g), "13");
    kc_obj_unref(g);
    g = kc_store_get(s, "n", "b");
    assert_string_equal(kc_obj_resource_version(g), "12");
    kc_obj_unref(g);
    kc_obj **v = NULL;
    size_t n = 0;
    for (int i = 0; i < 3; i++) { /* the earlier objects' index values are gone */
        assert_int_equal(kc_store_list_by_index(s, "app", apps[i], &v, &n, NULL), 0);
        assert_int_equal(n, 0);
        kc_obj_array_free(v, n);
    }
    assert_int_equal(kc_store_list_by_index(s, "app", "four", &v, &n, NULL), 0);
    assert_int_equal(n, 1);
    kc_obj_array_free(v, n);
    assert_int_equal(kc_store_list_by_index(s, "app", "other", &v, &n, NULL), 0);
    assert_int_equal(n, 2);
    kc_obj_array_free(v, n);
    kc_store_free(s);
}

/* app and a constant: with the namespace, three index values per object (two fit in an entry,
 * the third makes it allocate its refs: "store.index_refs"). */
static size_t by_app_and_all(void *ud, const kc_obj *obj, const char **vals, size_t max)
{
    (void)ud;
    const char *v = kc_obj_label(obj, "app");
    if (!v || max < 2)
        return 0;
    vals[0] = v;
    vals[1] = "all";
    return 2;
}

static bool fail_index_refs(const char *site)
{
    return strcmp(site, "store.index_refs") == 0;
}

/* Placing a batch's objects (kc_store_batch_len, or the replace) re-indexes the entry of a key
 * added twice; when that runs out of memory the objects after it are dropped, so the batch must not
 * be installed: later adds and the replace report KC_ENOMEM, and the store keeps what it had. */
static void test_store_batch_placement_out_of_memory_refuses_the_batch(void **st)
{
    (void)st;
    kc_store *s = new_store();
    assert_int_equal(kc_store_add_indexer(s, "app", by_app_and_all, NULL, NULL), 0);
    put(s, KC_WATCH_ADDED, mk("n", "keep", "u0", "5", "old"));
    kc_store_batch *b;
    assert_int_equal(kc_store_batch_new(s, &b, NULL), 0);
    const char *apps[] = {"one", "two"};
    for (int i = 0; i < 2; i++) {
        kc_obj *o = mk("n", "a", "u1", i ? "11" : "10", apps[i]);
        assert_int_equal(kc_store_batch_add(b, o, NULL), 0);
        kc_obj_unref(o);
    }
    kc__alloc_fail_hook_set(fail_index_refs);
    assert_int_equal(kc_store_batch_len(b), 1); /* the second "a" could not be placed */
    kc__alloc_fail_hook_set(NULL);
    kc_obj *c = mk("n", "c", "u2", "12", "three");
    assert_int_equal(kc_store_batch_add(b, c, NULL), KC_ENOMEM);
    kc_obj_unref(c);
    assert_int_equal(kc_store_replace(s, b, "20", NULL, NULL, NULL), KC_ENOMEM); /* consumed */
    assert_int_equal(kc_store_len(s), 1);
    kc_obj *g = kc_store_get(s, "n", "keep");
    assert_non_null(g);
    kc_obj_unref(g);
    kc_store_free(s);
}

/* A batch's entries come from the object arena when it is on (store/table.c, ent_alloc: a list's
 * decoding thread then faults in no heap pages for them); watch events' entries from malloc.
 * Every path frees them with the right size — a replace retiring the old table, deletes retiring
 * single entries, the store's free — so every arena chunk ends: a wrong size or a double free
 * would leave one in use (or trip AddressSanitizer's poisoning of the arena's free space). */
static void test_store_batch_entries_from_arena(void **st)
{
    (void)st;
    bool was = kc__slab_enabled();
    kc__slab_set_enabled(true);
    kc__slab_release_thread();
    kc__slab_trim();
    kc__slab_stats s0, s1;
    kc__slab_stats_get(&s0);
    kc_store *s = new_store();
    char name[32], uid[32];
    for (int round = 0; round < 2; round++) {
        kc_store_batch *b = NULL;
        assert_int_equal(kc_store_batch_new(s, &b, NULL), 0);
        for (int i = 0; i < 3000; i++) {
            snprintf(name, sizeof name, "p%d", i);
            snprintf(uid, sizeof uid, "u%d", i);
            kc_obj *o = mk("ns", name, uid, round ? "11" : "10", NULL);
            assert_int_equal(kc_store_batch_add(b, o, NULL), 0);
            kc_obj_unref(o);
        }
        kc__slab_stats_get(&s1);
        assert_true(s1.chunks_in_use > s0.chunks_in_use); /* the objects are malloc'd: entries */
        assert_int_equal(kc_store_replace(s, b, round ? "11" : "10", NULL, NULL, NULL), 0);
    }
    for (int i = 0; i < 3000; i += 2) {
        snprintf(name, sizeof name, "p%d", i);
        snprintf(uid, sizeof uid, "u%d", i);
        put(s, KC_WATCH_DELETED, mk("ns", name, uid, "12", NULL));
    }
    put(s, KC_WATCH_ADDED, mk("ns", "new", "u-new", "13", NULL));
    put(s, KC_WATCH_MODIFIED, mk("ns", "p1", "u1", "14", "changed"));
    assert_int_equal(kc_store_len(s), 1501);
    kc_obj *g = kc_store_get(s, "ns", "p2999");
    assert_non_null(g);
    assert_string_equal(kc_obj_resource_version(g), "11");
    kc_obj_unref(g);
    assert_null(kc_store_get(s, "ns", "p2998"));
    kc_store_free(s);
    kc__slab_release_thread();
    kc__slab_stats_get(&s1);
    assert_int_equal(s1.chunks_in_use, s0.chunks_in_use);
    kc__slab_set_enabled(was);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_get_returns_shared_reference),
        cmocka_unit_test(test_store_apply_reports_changes),
        cmocka_unit_test(test_store_namespace_and_user_index),
        cmocka_unit_test(test_store_watermark_monotonic_between_relists),
        cmocka_unit_test(test_store_replace_is_atomic_with_tombstones),
        cmocka_unit_test(test_store_lock_free_get_under_writes),
        cmocka_unit_test(test_store_batch_entries_from_arena),
        cmocka_unit_test(test_store_batch_same_key_twice_keeps_the_last),
        cmocka_unit_test(test_store_batch_placement_out_of_memory_refuses_the_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
