/* test_core_htab.c — the one hash table (src/core/htab.c): lookups after growth and heavy churn
 * (backward-shift deletion must keep every remaining key reachable), removal by entry, duplicate
 * keys found one by one, iteration visiting each entry once, and composite keys (kc__hkey) that
 * are told apart by where the parts split. */
#include "core/htab.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

typedef struct item {
    kc__hent h;
    int id;
    char buf[24];
} item;

/* key: "same" (duplicates) or "ns-<id>/pod-<id>" */
static void item_init(item *it, int id, bool same)
{
    it->id = id;
    int n = same ? snprintf(it->buf, sizeof(it->buf), "same")
                 : snprintf(it->buf, sizeof(it->buf), "ns-%d/pod-%d", id, id);
    it->h = (kc__hent){kc__hash(it->buf, (size_t)n), (size_t)n, it->buf};
}

static item *find(const kc__htab *t, const char *key)
{
    return (item *)kc__htab_find(t, key, strlen(key), kc__hash(key, strlen(key)));
}

static void test_core_htab_finds_every_key_through_growth_and_churn(void **state)
{
    enum { N = 5000 };
    item *v = calloc(N, sizeof(*v));
    assert_non_null(v);
    kc__htab t = {0};
    for (int i = 0; i < N; i++) {
        item_init(&v[i], i, false);
        assert_int_equal(kc__htab_insert(&t, &v[i].h), 0);
    }
    assert_int_equal(t.n, N);
    assert_true(t.n * 4 <= t.cap * 3); /* load factor ≤ 0.75 */
    /* remove two of every three (by key, and by entry), then look every key up */
    for (int i = 0; i < N; i++) {
        if (i % 3 == 1)
            assert_ptr_equal(kc__htab_remove(&t, v[i].buf, v[i].h.klen, v[i].h.hash), &v[i].h);
        else if (i % 3 == 2)
            kc__htab_remove_ent(&t, &v[i].h);
    }
    assert_int_equal(t.n, (N + 2) / 3);
    for (int i = 0; i < N; i++)
        assert_ptr_equal(find(&t, v[i].buf), i % 3 == 0 ? &v[i] : NULL);
    assert_null(kc__htab_remove(&t, v[1].buf, v[1].h.klen, v[1].h.hash)); /* already gone */
    /* iteration sees each remaining entry exactly once */
    int seen = 0;
    for (size_t i = 0; i < t.cap; i++) {
        item *it = (item *)KC__HTAB_AT(&t, i);
        if (it) {
            assert_int_equal(it->id % 3, 0);
            seen++;
        }
    }
    assert_int_equal(seen, (N + 2) / 3);
    kc__htab_free(&t);
    assert_int_equal(t.n, 0);
    assert_null(find(&t, v[0].buf)); /* an empty (freed) table is a valid table */
    free(v);
}

static void test_core_htab_duplicates_are_found_one_by_one(void **state)
{
    item a, b, c, other;
    item_init(&a, 1, true);
    item_init(&b, 2, true);
    item_init(&c, 3, true);
    item_init(&other, 4, false);
    kc__htab t = {0};
    assert_int_equal(kc__htab_insert(&t, &a.h), 0);
    assert_int_equal(kc__htab_insert(&t, &other.h), 0);
    assert_int_equal(kc__htab_insert(&t, &b.h), 0);
    assert_int_equal(kc__htab_insert(&t, &c.h), 0);
    int ids = 0, n = 0;
    size_t pos = 0;
    for (kc__hent *h; (h = kc__htab_match(&t, "same", 4, a.h.hash, &pos)); n++)
        ids |= 1 << ((item *)h)->id;
    assert_int_equal(n, 3);
    assert_int_equal(ids, 0xe);
    kc__htab_remove_ent(&t, &b.h); /* the middle one: the others stay reachable */
    pos = n = 0;
    while (kc__htab_match(&t, "same", 4, a.h.hash, &pos))
        n++;
    assert_int_equal(n, 2);
    assert_ptr_equal(find(&t, "ns-4/pod-4"), &other);
    kc__htab_free(&t);
}

typedef struct kitem {
    kc__hent h;
    char key[32];
} kitem;

static void kitem_init(kitem *it, size_t n, const char *a, const char *b, const char *c)
{
    kc__hkey k;
    kc__hkey_init(&k, n, a, b, c);
    assert_true(k.klen < sizeof(it->key));
    kc__hkey_write(&k, it->key);
    it->h = (kc__hent){k.hash, k.klen, it->key};
}

static void test_core_htab_composite_keys_split_where_their_parts_do(void **state)
{
    kitem x, y, z;
    kitem_init(&x, 2, "ns", "name", NULL);
    kitem_init(&y, 2, "", "nsname", NULL);
    kitem_init(&z, 3, "/v1/pods", NULL, "a"); /* NULL part = "" */
    assert_memory_equal(x.key, "ns\0name", 8);
    kc__htab t = {0};
    assert_int_equal(kc__htab_insert(&t, &x.h), 0);
    assert_int_equal(kc__htab_insert(&t, &y.h), 0);
    assert_int_equal(kc__htab_insert(&t, &z.h), 0);
    kc__hkey k;
    kc__hkey_init(&k, 2, "ns", "name", NULL);
    assert_ptr_equal(kc__htab_find_key(&t, &k, NULL), &x.h);
    kc__hkey_init(&k, 2, NULL, "nsname", NULL);
    assert_ptr_equal(kc__htab_find_key(&t, &k, NULL), &y.h);
    kc__hkey_init(&k, 2, "nsn", "ame", NULL); /* same bytes but "\0" elsewhere: another key */
    assert_null(kc__htab_find_key(&t, &k, NULL));
    kc__hkey_init(&k, 3, "/v1/pods", "", "a");
    assert_ptr_equal(kc__htab_find_key(&t, &k, NULL), &z.h);
    kc__hkey_init(&k, 2, "/v1/pods", "a", NULL);
    assert_null(kc__htab_find_key(&t, &k, NULL));
    kc__htab_free(&t);
}

/* kc__htab_reserve sizes the table once for a bulk insert: kc__htab_insert_slot then never moves
 * the slot array (no rehash), keeps the caller's aux, and every key is found; a reserve below the
 * current size changes nothing. */
static void test_core_htab_reserve_then_insert_slots_never_rehashes(void **state)
{
    (void)state;
    enum { N = 3000 };
    item *v = calloc(N, sizeof(*v));
    assert_non_null(v);
    kc__htab t = {0};
    assert_int_equal(kc__htab_reserve(&t, N), 0);
    assert_true(t.cap * 3 >= (size_t)N * 4);
    kc__slot *slots = t.slots;
    size_t cap = t.cap;
    for (int i = 0; i < N; i++) {
        item_init(&v[i], i, false);
        kc__htab_prefetch(&t, v[i].h.hash);
        assert_int_equal(
            kc__htab_insert_slot(&t, (kc__slot){v[i].h.hash, &v[i].h, &v[i].id, v[i].h.klen}), 0);
    }
    assert_ptr_equal(t.slots, slots);
    assert_int_equal(t.cap, cap);
    assert_int_equal(kc__htab_reserve(&t, 10), 0); /* smaller: nothing moves */
    assert_ptr_equal(t.slots, slots);
    for (int i = 0; i < N; i++) {
        assert_ptr_equal(find(&t, v[i].buf), &v[i]);
        assert_ptr_equal(kc__htab_slot_of(&t, &v[i].h)->aux, &v[i].id);
    }
    assert_int_equal(kc__htab_reserve(&t, 4 * N), 0); /* larger: a rehash keeps everything */
    assert_true(t.cap > cap);
    for (int i = 0; i < N; i++)
        assert_ptr_equal(kc__htab_slot_of(&t, &v[i].h)->aux, &v[i].id);
    kc__htab_free(&t);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_htab_finds_every_key_through_growth_and_churn),
        cmocka_unit_test(test_core_htab_duplicates_are_found_one_by_one),
        cmocka_unit_test(test_core_htab_composite_keys_split_where_their_parts_do),
        cmocka_unit_test(test_core_htab_reserve_then_insert_slots_never_rehashes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
