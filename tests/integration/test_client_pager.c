/*
 * test_client_pager.c — kc__client_list_pipelined (rest/pager.c), the informer's paged LIST with
 * download and decode overlapped, against the embedded server over TLS: the same items in the same
 * order as kc_client_list_all, callbacks one at a time on one worker thread, and every way out
 * (callback error, cancel, an expired continue token) returns its code with no callback after;
 * the next page is asked for before the previous one is decoded, its fetcher started from the
 * first page's head.
 * Pagination rules: apiserver-semantics §3 (limit/continue, 410 on an expired token).
 */
#include "test_client_fixture.h"

#include "rest/internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define TOKEN "pager-token"
#define N_CM  23

static int group_setup(void **state)
{
    static const char *const nss[] = {"pp", "pexp", "pbig", NULL};
    if (client_fixture_up(TOKEN, nss))
        return -1;
    for (int i = 0; i < N_CM; i++) {
        char n[32];
        snprintf(n, sizeof n, "cm%02d", i);
        kc_obj_unref(create_cm("pp", n, NULL));
    }
    for (int i = 0; i < 8; i++) {
        char n[32];
        snprintf(n, sizeof n, "ex%d", i);
        kc_obj_unref(create_cm("pexp", n, NULL));
    }
    return 0;
}

typedef struct seen {
    char names[64][32];
    int n, stop_at, stop_code;
    atomic_int inside; /* callbacks running now */
    bool overlapped;   /* two callbacks ran at once */
    pthread_t thread;
    bool one_thread; /* every callback ran on the same thread */
    kc_cancel *cancel_at_stop;
    bool compact_at_first;
} seen;

static int seen_cb(void *ud, kc_obj *o)
{
    seen *s = ud;
    if (atomic_fetch_add(&s->inside, 1) != 0)
        s->overlapped = true;
    if (s->n == 0) {
        s->thread = pthread_self();
        s->one_thread = true;
    } else if (!pthread_equal(s->thread, pthread_self())) {
        s->one_thread = false;
    }
    if (s->n < 64)
        snprintf(s->names[s->n], sizeof s->names[0], "%s", kc_obj_name(o));
    s->n++;
    kc_obj_unref(o);
    if (s->compact_at_first && s->n == 1) {
        kc_obj_unref(create_cm("pexp", "ex-new", NULL));
        kc_server_compact(srv);
    }
    int rc = 0;
    if (s->stop_at && s->n == s->stop_at) {
        if (s->cancel_at_stop)
            kc_cancel_fire(s->cancel_at_stop);
        else
            rc = s->stop_code;
    }
    atomic_fetch_sub(&s->inside, 1);
    return rc;
}

/* 23 ConfigMaps in pages of 2 (12 pages): the items of kc_client_list_all, in its order, delivered
 * once each, one callback at a time, all on one thread that is not the caller's; the metadata of
 * the last page (a list RV, no continue token). */
static void test_client_pager_same_items_in_order(void **state)
{
    seen *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    kc_list_opts lo = {.limit = 2};
    kc_list_meta ma = {0}, mb = {0};
    assert_int_equal(kc_client_list_all(cli, &CM, "pp", &lo, &ma, seen_cb, a, NULL), 0);
    assert_int_equal(kc__client_list_pipelined(cli, &CM, "pp", &lo, &mb, seen_cb, b, NULL), 0);
    assert_int_equal(a->n, N_CM);
    assert_int_equal(b->n, N_CM);
    for (int i = 0; i < N_CM; i++)
        assert_string_equal(a->names[i], b->names[i]);
    assert_false(b->overlapped);
    assert_true(b->one_thread);
    assert_false(pthread_equal(b->thread, pthread_self()));
    assert_null(mb.continue_token);
    assert_non_null(mb.resource_version);
    assert_string_equal(ma.resource_version, mb.resource_version);
    kc_list_meta_clear(&ma);
    kc_list_meta_clear(&mb);
    free(a);
    free(b);
}

/* A callback's error stops the list: that code comes back, no callback runs after it, and the
 * caller's meta is untouched. */
static void test_client_pager_callback_error_stops(void **state)
{
    seen *s = calloc(1, sizeof *s);
    s->stop_at = 5;
    s->stop_code = KC_EEXISTS;
    kc_list_opts lo = {.limit = 2};
    kc_list_meta m = {0};
    assert_int_equal(kc__client_list_pipelined(cli, &CM, "pp", &lo, &m, seen_cb, s, NULL),
                     KC_EEXISTS);
    assert_int_equal(s->n, 5);
    assert_null(m.resource_version);
    free(s);
}

/* Cancel fired from a callback: KC_ECANCELED before the whole list is delivered. */
static void test_client_pager_cancel(void **state)
{
    seen *s = calloc(1, sizeof *s);
    kc_cancel *c = NULL;
    assert_int_equal(kc_cancel_new(&c, NULL), 0);
    s->stop_at = 3;
    s->cancel_at_stop = c;
    kc_list_opts lo = {.limit = 2, .cancel = c};
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__client_list_pipelined(cli, &CM, "pp", &lo, NULL, seen_cb, s, &err),
                     KC_ECANCELED);
    assert_true(s->n < N_CM);
    kc_error_clear(&err);
    kc_cancel_free(c);
    free(s);
}

/* The history compacted while the first page is being decoded: a later continue request gets 410,
 * returned as KC_EGONE with the HTTP status in err (the informer relists from scratch). Pages of
 * one item: at most two pages are fetched ahead of the page being decoded (three buffers), so the
 * requests for pages 3-7 follow the compaction. */
static void test_client_pager_expired_continue_is_gone(void **state)
{
    seen *s = calloc(1, sizeof *s);
    s->compact_at_first = true;
    kc_list_opts lo = {.limit = 1};
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__client_list_pipelined(cli, &CM, "pexp", &lo, NULL, seen_cb, s, &err),
                     KC_EGONE);
    assert_int_equal(err.http_status, 410);
    assert_true(s->n < 8);
    kc_error_clear(&err);
    free(s);
}

typedef struct ahead {
    uint64_t start, want, got; /* bytes received: at the start, needed, seen in the callback */
    int n;
} ahead;

/* The first item waits (up to 10 s) until the client has received `want` more bytes. */
static int ahead_cb(void *ud, kc_obj *o)
{
    ahead *a = ud;
    kc_obj_unref(o);
    if (a->n++ == 0) {
        uint64_t until = kc__now_ns() + 10 * KC__NS_PER_SEC;
        while ((a->got = kc__http_bytes_received(cli->http) - a->start) < a->want &&
               kc__now_ns() < until)
            kc__sleep_ns(KC__NS_PER_MS);
    }
    return 0;
}

/* The next page is asked for as soon as this page's head (its continue token) has arrived, not
 * after the page is decoded: while the first page's first callback blocks, the pages after it
 * still arrive — two of them (three buffers: the one being decoded, two being received). A
 * pager that waits for the decoder before asking again receives at most one. */
static void test_client_pager_fetches_ahead_of_the_decoder(void **state)
{
    kc_list_opts lo = {.limit = 2};
    uint64_t b0 = kc__http_bytes_received(cli->http);
    assert_int_equal(kc_client_list(cli, &CM, "pp", &lo, NULL, NULL, NULL, NULL), 0); /* a page */
    uint64_t page = kc__http_bytes_received(cli->http) - b0;
    ahead a = {.start = kc__http_bytes_received(cli->http), .want = page * 5 / 2};
    assert_int_equal(kc__client_list_pipelined(cli, &CM, "pp", &lo, NULL, ahead_cb, &a, NULL), 0);
    assert_int_equal(a.n, N_CM);
    assert_true(a.got >= a.want); /* pages 1 and 2 arrived while page 0 was being decoded */
}

/* The helper fetcher starts from page 0's head (its continue token), while page 0 is still
 * arriving, so page 1's request does not wait for the rest of page 0. Pages of one ConfigMap of
 * 600 KB: libcurl hands a body over in pieces of at most its 256 KiB receive buffer, so the head
 * is seen with at most that much of the page in. A pager that starts the helper once page 0 is
 * received starts it with all 600 KB in. */
static void test_client_pager_helper_starts_at_the_first_head(void **state)
{
    enum { BIG = 600 * 1024 };
    char *body = malloc(BIG + 256);
    assert_non_null(body);
    for (int i = 0; i < 3; i++) {
        int n = snprintf(body, 256,
                         "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
                         "{\"name\":\"big%d\"},\"data\":{\"k\":\"",
                         i);
        memset(body + n, 'x', BIG);
        memcpy(body + n + BIG, "\"}}", 4);
        kc_obj *o = NULL;
        kc_error err = KC_ERROR_INIT;
        int rc = kc_client_create(cli, &CM, "pbig", body, strlen(body), NULL, &o, &err);
        if (rc)
            fail_msg("create big%d: %s %s", i, kc_errno_name(rc), err.message);
        kc_obj_unref(o);
    }
    free(body);
    seen s = {0};
    kc_list_opts lo = {.limit = 1};
    uint64_t h0 = kc__pager_helpers_started();
    assert_int_equal(kc__client_list_pipelined(cli, &CM, "pbig", &lo, NULL, seen_cb, &s, NULL), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(kc__pager_helpers_started(), h0 + 1);
    uint64_t at = kc__pager_helper_start_len();
    assert_true(at > 0);
    assert_true(at <= 256 * 1024); /* the head, not the page: BIG is over twice that */
}

/* A list that fits one page (limit above the count: what a server ignoring limit sends) starts no
 * helper fetcher; a list of several pages starts one. */
static void test_client_pager_one_page_starts_no_helper(void **state)
{
    seen s = {0};
    kc_list_opts one = {.limit = 500};
    uint64_t h0 = kc__pager_helpers_started();
    assert_int_equal(kc__client_list_pipelined(cli, &CM, "pp", &one, NULL, seen_cb, &s, NULL), 0);
    assert_int_equal(s.n, N_CM);
    assert_int_equal(kc__pager_helpers_started(), h0);
    seen t = {0};
    kc_list_opts paged = {.limit = 5};
    assert_int_equal(kc__client_list_pipelined(cli, &CM, "pp", &paged, NULL, seen_cb, &t, NULL), 0);
    assert_int_equal(t.n, N_CM);
    assert_int_equal(kc__pager_helpers_started(), h0 + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_pager_same_items_in_order),
        cmocka_unit_test(test_client_pager_callback_error_stops),
        cmocka_unit_test(test_client_pager_cancel),
        cmocka_unit_test(test_client_pager_expired_continue_is_gone),
        cmocka_unit_test(test_client_pager_fetches_ahead_of_the_decoder),
        cmocka_unit_test(test_client_pager_helper_starts_at_the_first_head),
        cmocka_unit_test(test_client_pager_one_page_starts_no_helper),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
