/*
 * Unit tests for kc_store's waiters (kc_store_wait): woken by the event, the delete or the
 * bookmark a condition names, timed out, stopped, refused when malformed, and only the right one
 * of many woken (no server needed).
 */
#include "store_fixture.h"

#include "kcache/rv.h"

#include <pthread.h>
#include <stdbool.h>

/* ---- waiters
 * ------------------------------------------------------------------------------------- */

struct waitarg {
    kc_store *s;
    kc_store_cond c;
    int64_t timeout;
    int rc;
};

static void *wait_thread(void *p)
{
    struct waitarg *a = p;
    a->rc = kc_store_wait(a->s, &a->c, a->timeout, NULL);
    return NULL;
}

static void test_store_wait_key_rv_woken_by_event(void **st)
{
    kc_store *s = new_store();
    put(s, KC_WATCH_ADDED, mk("n", "a", "u", "5", NULL));
    struct waitarg a = {s, {KC_STORE_WAIT_KEY_RV, "n", "a", "7", NULL, 0}, 10000, 99};
    assert_int_equal(kc_store_check(s, &a.c, NULL), 0);
    pthread_t t;
    pthread_create(&t, NULL, wait_thread, &a);
    put(s, KC_WATCH_MODIFIED, mk("n", "a", "u", "6", NULL));  /* not enough */
    put(s, KC_WATCH_ADDED, mk("n", "other", "u", "9", NULL)); /* other key */
    put(s, KC_WATCH_MODIFIED, mk("n", "a", "u", "7", NULL));
    pthread_join(t, NULL);
    assert_int_equal(a.rc, 0);
    assert_int_equal(kc_store_check(s, &a.c, NULL), 1);
    kc_store_free(s);
}

static void test_store_wait_times_out(void **st)
{
    kc_store *s = new_store();
    kc_store_cond c = {KC_STORE_WAIT_KEY_RV, "n", "missing", "5", NULL, 0};
    uint64_t t0 = kc_store_seq(s);
    (void)t0;
    assert_int_equal(kc_store_wait(s, &c, 0, NULL), KC_ETIMEOUT);
    assert_int_equal(kc_store_wait(s, &c, 30, NULL), KC_ETIMEOUT);
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_store_wait(s, &c, 30, &e), KC_ETIMEOUT);
    assert_int_equal(e.code, KC_ETIMEOUT);
    assert_non_null(strstr(e.message, "within 30 ms"));
    kc_error_clear(&e);
    kc_store_free(s);
}

static void test_store_stop_wakes_every_waiter(void **st)
{
    kc_store *s = new_store();
    struct waitarg a[3] = {
        {s, {KC_STORE_WAIT_KEY_RV, "n", "a", "7", NULL, 0}, -1, 99},
        {s, {KC_STORE_WAIT_WATERMARK, NULL, NULL, "100", NULL, 0}, -1, 99},
        {s, {KC_STORE_WAIT_KEY_GONE, "n", "a", NULL, NULL, 0}, -1, 99},
    };
    put(s, KC_WATCH_ADDED, mk("n", "a", "u", "5", NULL));
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, wait_thread, &a[i]);
    kc_store_stop(s);
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(a[i].rc, KC_ESTOPPED);
    }
    kc_store_cond c = {KC_STORE_WAIT_WATERMARK, NULL, NULL, "1", NULL, 0};
    assert_int_equal(kc_store_wait(s, &c, -1, NULL), KC_ESTOPPED);
    kc_store_free(s);
}

static void test_store_wait_gone_by_delete_and_uid(void **st)
{
    kc_store *s = new_store();
    put(s, KC_WATCH_ADDED, mk("n", "a", "u1", "5", NULL));
    kc_store_cond gone = {KC_STORE_WAIT_KEY_GONE, "n", "a", NULL, "u1", 0};
    assert_int_equal(kc_store_check(s, &gone, NULL), 0);
    /* Recreated with another uid: the u1 object is gone. */
    put(s, KC_WATCH_DELETED, mk("n", "a", "u1", "6", NULL));
    assert_int_equal(kc_store_check(s, &gone, NULL), 1);
    put(s, KC_WATCH_ADDED, mk("n", "a", "u2", "7", NULL));
    assert_int_equal(kc_store_check(s, &gone, NULL), 1);
    kc_store_cond absent = {KC_STORE_WAIT_KEY_GONE, "n", "a", NULL, NULL, 0};
    assert_int_equal(kc_store_check(s, &absent, NULL), 0);
    struct waitarg a = {s, absent, 10000, 99};
    pthread_t t;
    pthread_create(&t, NULL, wait_thread, &a);
    put(s, KC_WATCH_DELETED, mk("n", "a", "u2", "8", NULL));
    pthread_join(t, NULL);
    assert_int_equal(a.rc, 0);
    kc_store_free(s);
}

static void test_store_wait_incomparable_rv_any_later_event(void **st)
{
    kc_store *s = new_store();
    put(s, KC_WATCH_ADDED, mk("n", "a", "u", "x1", NULL));
    uint64_t q = kc_store_key_seq(s, "n", "a");
    kc_store_cond c = {KC_STORE_WAIT_KEY_RV, "n", "a", "x9", NULL, q};
    assert_int_equal(kc_store_check(s, &c, NULL), 0);
    put(s, KC_WATCH_ADDED, mk("n", "b", "u", "x2", NULL)); /* another key */
    assert_int_equal(kc_store_check(s, &c, NULL), 0);
    put(s, KC_WATCH_MODIFIED, mk("n", "a", "u", "x3", NULL));
    assert_int_equal(kc_store_check(s, &c, NULL), 1);
    /* Exact match without a later event. */
    kc_store_cond e = {KC_STORE_WAIT_KEY_RV, "n", "a", "x3", NULL, kc_store_seq(s)};
    assert_int_equal(kc_store_check(s, &e, NULL), 1);
    /* A delete counts as a later event. */
    q = kc_store_key_seq(s, "n", "b");
    kc_store_cond d = {KC_STORE_WAIT_KEY_RV, "n", "b", "zz", NULL, q};
    assert_int_equal(kc_store_check(s, &d, NULL), 0);
    put(s, KC_WATCH_DELETED, mk("n", "b", "u", "x4", NULL));
    assert_int_equal(kc_store_check(s, &d, NULL), 1);
    kc_store_free(s);
}

static void test_store_wait_key_rv_satisfied_by_later_delete(void **st)
{
    kc_store *s = new_store();
    put(s, KC_WATCH_ADDED, mk("n", "a", "u", "5", NULL));
    kc_store_cond c = {KC_STORE_WAIT_KEY_RV, "n", "a", "6", NULL, 0};
    put(s, KC_WATCH_DELETED, mk("n", "a", "u", "7", NULL));
    assert_int_equal(kc_store_check(s, &c, NULL), 1);
    kc_store_cond c2 = {KC_STORE_WAIT_KEY_RV, "n", "a", "8", NULL, 0};
    assert_int_equal(kc_store_check(s, &c2, NULL), 0);
    kc_store_free(s);
}

static void test_store_wait_watermark_by_bookmark_and_relist(void **st)
{
    kc_store *s = new_store();
    struct waitarg a = {s, {KC_STORE_WAIT_WATERMARK, NULL, NULL, "50", NULL, 0}, 10000, 99};
    pthread_t t;
    pthread_create(&t, NULL, wait_thread, &a);
    kc_store_bookmark(s, "49");
    kc_store_bookmark(s, "50");
    pthread_join(t, NULL);
    assert_int_equal(a.rc, 0);
    struct waitarg b = {s, {KC_STORE_WAIT_WATERMARK, NULL, NULL, "60", NULL, 0}, 10000, 99};
    pthread_create(&t, NULL, wait_thread, &b);
    kc_store_batch *batch;
    assert_int_equal(kc_store_batch_new(s, &batch, NULL), 0);
    assert_int_equal(kc_store_replace(s, batch, "61", NULL, NULL, NULL), 0);
    pthread_join(t, NULL);
    assert_int_equal(b.rc, 0);
    kc_store_free(s);
}

static void test_store_wait_rejects_bad_condition(void **st)
{
    kc_store *s = new_store();
    kc_store_cond c = {KC_STORE_WAIT_KEY_RV, "n", NULL, "5", NULL, 0};
    assert_int_equal(kc_store_wait(s, &c, 10, NULL), KC_EINVAL);
    kc_store_cond w = {KC_STORE_WAIT_WATERMARK, NULL, NULL, NULL, NULL, 0};
    assert_int_equal(kc_store_check(s, &w, NULL), KC_EINVAL);
    kc_error e = KC_ERROR_INIT;
    assert_int_equal(kc_store_check(s, &w, &e), KC_EINVAL);
    assert_non_null(strstr(e.message, "WATERMARK: rv is NULL"));
    kc_error_clear(&e);
    kc_store_free(s);
}

/* Many keys in the same wait bucket: only the right waiter is woken, the others keep waiting. */
static void test_store_wait_many_waiters_distinct_keys(void **st)
{
    kc_store *s = new_store();
    enum { N = 40 };
    struct waitarg a[N];
    pthread_t t[N];
    char names[N][16];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof(names[i]), "k%d", i);
        a[i] = (struct waitarg){s, {KC_STORE_WAIT_KEY_RV, "n", names[i], "10", NULL, 0}, 10000, 99};
        pthread_create(&t[i], NULL, wait_thread, &a[i]);
    }
    for (int i = 0; i < N; i++)
        put(s, KC_WATCH_ADDED, mk("n", names[i], "u", "10", NULL));
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(a[i].rc, 0);
    }
    kc_store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_wait_key_rv_woken_by_event),
        cmocka_unit_test(test_store_wait_times_out),
        cmocka_unit_test(test_store_stop_wakes_every_waiter),
        cmocka_unit_test(test_store_wait_gone_by_delete_and_uid),
        cmocka_unit_test(test_store_wait_incomparable_rv_any_later_event),
        cmocka_unit_test(test_store_wait_key_rv_satisfied_by_later_delete),
        cmocka_unit_test(test_store_wait_watermark_by_bookmark_and_relist),
        cmocka_unit_test(test_store_wait_rejects_bad_condition),
        cmocka_unit_test(test_store_wait_many_waiters_distinct_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
