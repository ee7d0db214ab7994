/*
 * test_server_faults.c — fault injection state (src/server/testbed/faults.c): duration and rate
 * parsing, per-verb injection with Retry-After (spec §9 #96–#98), watch close decisions (#99),
 * delays, the JSON form used by the admin endpoint, and the change listener.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "server/testbed/faults.h"

static void test_server_faults_parse_delay_forms(void **state)
{
    unsigned lo = 99, hi = 99;
    assert_int_equal(kc__faults_parse_delay("10ms-500ms", &lo, &hi, NULL), 0);
    assert_int_equal(lo, 10);
    assert_int_equal(hi, 500);
    assert_int_equal(kc__faults_parse_delay("50ms", &lo, &hi, NULL), 0);
    assert_int_equal(lo, 50);
    assert_int_equal(hi, 50);
    assert_int_equal(kc__faults_parse_delay("1s", &lo, &hi, NULL), 0);
    assert_int_equal(lo, 1000);
    assert_int_equal(kc__faults_parse_delay("0", &lo, &hi, NULL), 0);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 0);
    assert_int_equal(kc__faults_parse_delay("0.5s-2s", &lo, &hi, NULL), 0);
    assert_int_equal(lo, 500);
    assert_int_equal(hi, 2000);
}

static void test_server_faults_parse_delay_rejects_bad_text(void **state)
{
    const char *bad[] = {"", "ms", "10", "10xs", "-5ms", "10ms-", "500ms-10ms", "1s-2s-3s", "abc"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unsigned lo = 7, hi = 7;
        kc_error err = KC_ERROR_INIT;
        assert_int_equal(kc__faults_parse_delay(bad[i], &lo, &hi, &err), KC_EINVAL);
        assert_non_null(err.message);
        assert_int_equal(lo, 7); /* untouched on failure */
        kc_error_clear(&err);
    }
}

static void test_server_faults_parse_rate_verbs(void **state)
{
    double r[KC_SERVER_VERB__COUNT];
    assert_int_equal(kc__faults_parse_rate("0.25", r, NULL), 0);
    for (int i = 0; i < KC_SERVER_VERB__COUNT; i++)
        assert_true(r[i] == 0.25);
    assert_int_equal(kc__faults_parse_rate("1:get,LIST", r, NULL), 0);
    assert_true(r[KC_SERVER_VERB_GET] == 1 && r[KC_SERVER_VERB_LIST] == 1);
    assert_true(r[KC_SERVER_VERB_WATCH] == 0 && r[KC_SERVER_VERB_CREATE] == 0);
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc__faults_parse_rate("1.5", r, &err), KC_EINVAL);
    kc_error_clear(&err);
    assert_int_equal(kc__faults_parse_rate("0.1:frobnicate", r, &err), KC_EINVAL);
    assert_non_null(strstr(err.message, "frobnicate"));
    kc_error_clear(&err);
    assert_int_equal(kc__faults_parse_rate("0.1:", r, NULL), KC_EINVAL);
}

/* The public text forms (kcache/server.h), as `kcache serve` uses them. */
static void test_server_faults_public_duration_parse(void **state)
{
    unsigned ms = 7;
    assert_int_equal(kc_server_duration_parse("250us", &ms, NULL), 0);
    assert_int_equal(ms, 0);
    assert_int_equal(kc_server_duration_parse("1500us", &ms, NULL), 0);
    assert_int_equal(ms, 2);
    assert_int_equal(kc_server_duration_parse("0.5s", &ms, NULL), 0);
    assert_int_equal(ms, 500);
    assert_int_equal(kc_server_duration_parse("2m", &ms, NULL), 0);
    assert_int_equal(ms, 120000);
    assert_int_equal(kc_server_duration_parse("0", &ms, NULL), 0);
    assert_int_equal(ms, 0);
    const char *bad[] = {"", "10", "1h", "-1s", "s", "9999999m", " 1s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kc_error err = KC_ERROR_INIT;
        ms = 7;
        assert_int_equal(kc_server_duration_parse(bad[i], &ms, &err), KC_EINVAL);
        assert_int_equal(ms, 7); /* untouched on failure */
        assert_non_null(strstr(err.message, bad[i]));
        kc_error_clear(&err);
    }
    assert_int_equal(kc_server_duration_parse(NULL, &ms, NULL), KC_EINVAL);
    assert_int_equal(kc_server_duration_parse("1s", NULL, NULL), KC_EINVAL);
}

static void test_server_faults_public_parse_changes_only_its_field(void **state)
{
    kc_server_faults f = {.retry_after_s = 3, .watch_close_every = 9};
    f.rate_500[KC_SERVER_VERB_GET] = 0.5;
    assert_int_equal(kc_server_faults_parse("watchDelay", "10ms-2s", &f, NULL), 0);
    assert_int_equal(f.watch_delay_min_ms, 10);
    assert_int_equal(f.watch_delay_max_ms, 2000);
    assert_int_equal(kc_server_faults_parse("rate429", "0.25:watch,Create", &f, NULL), 0);
    assert_true(f.rate_429[KC_SERVER_VERB_WATCH] == 0.25 &&
                f.rate_429[KC_SERVER_VERB_CREATE] == 0.25);
    assert_true(f.rate_429[KC_SERVER_VERB_GET] == 0 &&
                f.rate_429[KC_SERVER_VERB_DELETECOLLECTION] == 0);
    assert_int_equal(kc_server_faults_parse("rate503", "1", &f, NULL), 0);
    for (int i = 0; i < KC_SERVER_VERB__COUNT; i++)
        assert_true(f.rate_503[i] == 1);
    /* what no setting named kept its value */
    assert_true(f.rate_500[KC_SERVER_VERB_GET] == 0.5);
    assert_int_equal(f.retry_after_s, 3);
    assert_int_equal(f.watch_close_every, 9);
    assert_int_equal(kc_server_faults_parse("rate500", "0", &f, NULL), 0);
    assert_true(f.rate_500[KC_SERVER_VERB_GET] == 0);
}

static void test_server_faults_public_parse_rejects(void **state)
{
    kc_server_faults f = {.watch_delay_min_ms = 1, .watch_delay_max_ms = 2};
    f.rate_429[KC_SERVER_VERB_LIST] = 0.5;
    const kc_server_faults before = f;
    const struct {
        const char *field, *text, *named;
    } bad[] = {
        {"watchDelay", "500ms-10ms", "smaller"},
        {"watchDelay", "10", "10"},
        {"rate429", "0.1:frobnicate", "frobnicate"},
        {"rate429", "2", "2"},
        {"rate500", "0.5:", "empty verb list"},
        {"rateTeapot", "0.5", "rateTeapot"},
        {"watch-delay", "1s", "watch-delay"},
        {"listDelay", "20ms-5ms", "smaller"},
        {"listDelay", "5", "5"},
        {"listDelay", "", "bad delay"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kc_error err = KC_ERROR_INIT;
        assert_int_equal(kc_server_faults_parse(bad[i].field, bad[i].text, &f, &err), KC_EINVAL);
        assert_non_null(err.message);
        if (!strstr(err.message, bad[i].named))
            fail_msg("%s=%s: '%s' does not name '%s'", bad[i].field, bad[i].text, err.message,
                     bad[i].named);
        assert_memory_equal(&f, &before, sizeof f); /* untouched on failure */
        kc_error_clear(&err);
    }
    assert_int_equal(kc_server_faults_parse(NULL, "1", &f, NULL), KC_EINVAL);
    assert_int_equal(kc_server_faults_parse("rate429", NULL, &f, NULL), KC_EINVAL);
    assert_int_equal(kc_server_faults_parse("rate429", "1", NULL, NULL), KC_EINVAL);
}

/* #96: 429 with Retry-After on the chosen verb only. */
static void test_server_faults_inject_429_per_verb(void **state)
{
    kc_server_faults f = {0};
    f.rate_429[KC_SERVER_VERB_GET] = 1.0;
    f.retry_after_s = 1;
    kc__faults *st = kc__faults_new(&f, 42);
    assert_non_null(st);
    unsigned ra = 99;
    assert_int_equal(kc__faults_inject(st, KC_SERVER_VERB_GET, &ra), 429);
    assert_int_equal(ra, 1);
    assert_int_equal(kc__faults_inject(st, KC_SERVER_VERB_LIST, &ra), 0);
    assert_int_equal(ra, 0);
    kc__faults_free(st);
}

/* #98: a 500 never carries Retry-After; a 503 does. */
static void test_server_faults_inject_500_without_retry_after(void **state)
{
    kc_server_faults f = {0};
    f.rate_500[KC_SERVER_VERB_CREATE] = 1.0;
    f.rate_503[KC_SERVER_VERB_DELETE] = 1.0;
    f.retry_after_s = 3;
    kc__faults *st = kc__faults_new(&f, 1);
    unsigned ra = 99;
    assert_int_equal(kc__faults_inject(st, KC_SERVER_VERB_CREATE, &ra), 500);
    assert_int_equal(ra, 0);
    assert_int_equal(kc__faults_inject(st, KC_SERVER_VERB_DELETE, &ra), 503);
    assert_int_equal(ra, 3);
    kc__faults_free(st);
}

static void test_server_faults_inject_rate_is_respected(void **state)
{
    kc_server_faults f = {0};
    f.rate_429[KC_SERVER_VERB_PATCH] = 0.3;
    kc__faults *st = kc__faults_new(&f, 7);
    int hits = 0;
    for (int i = 0; i < 10000; i++)
        hits += kc__faults_inject(st, KC_SERVER_VERB_PATCH, NULL) == 429;
    assert_in_range(hits, 2700, 3300);
    kc__faults_free(st);
}

static void test_server_faults_no_faults_by_default(void **state)
{
    kc__faults *st = kc__faults_new(NULL, 0);
    for (int v = 0; v < KC_SERVER_VERB__COUNT; v++)
        assert_int_equal(kc__faults_inject(st, (kc_server_verb)v, NULL), 0);
    assert_int_equal(kc__faults_watch_delay_ns(st), 0);
    assert_false(kc__faults_close_watch(st, 1));
    assert_false(kc__faults_stalled(st));
    kc__faults_free(st);
}

/* #99: close every N events. */
static void test_server_faults_close_every_n(void **state)
{
    kc_server_faults f = {0};
    f.watch_close_every = 3;
    kc__faults *st = kc__faults_new(&f, 1);
    bool got[7];
    for (uint64_t i = 1; i <= 6; i++)
        got[i] = kc__faults_close_watch(st, i);
    assert_false(got[1]);
    assert_false(got[2]);
    assert_true(got[3]);
    assert_false(got[4]);
    assert_true(got[6]);
    kc__faults_free(st);
}

static void test_server_faults_close_probability(void **state)
{
    kc_server_faults f = {0};
    f.watch_close_prob = 1.0;
    kc__faults *st = kc__faults_new(&f, 1);
    assert_true(kc__faults_close_watch(st, 1));
    f.watch_close_prob = 0.5;
    kc__faults_set(st, &f);
    int n = 0;
    for (int i = 1; i <= 2000; i++)
        n += kc__faults_close_watch(st, (uint64_t)i);
    assert_in_range(n, 850, 1150);
    kc__faults_free(st);
}

static void test_server_faults_delay_within_range(void **state)
{
    kc_server_faults f = {.watch_delay_min_ms = 10, .watch_delay_max_ms = 500};
    kc__faults *st = kc__faults_new(&f, 3);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < 5000; i++) {
        uint64_t d = kc__faults_watch_delay_ns(st);
        assert_in_range(d, 10000000ull, 500000000ull);
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
    }
    assert_true(lo < 30000000ull); /* spread over the range, not a constant */
    assert_true(hi > 480000000ull);
    kc__faults_free(st);
}

/* listDelay: the text form sets only the list delay fields; an unknown field's error lists it. */
static void test_server_faults_list_delay_parse(void **state)
{
    kc_server_faults f = {.watch_delay_min_ms = 1, .watch_delay_max_ms = 2};
    assert_int_equal(kc_server_faults_parse("listDelay", "5ms-20ms", &f, NULL), 0);
    assert_int_equal(f.list_delay_min_ms, 5);
    assert_int_equal(f.list_delay_max_ms, 20);
    assert_int_equal(f.watch_delay_min_ms, 1);
    assert_int_equal(f.watch_delay_max_ms, 2);
    assert_int_equal(kc_server_faults_parse("listDelay", "1s", &f, NULL), 0);
    assert_int_equal(f.list_delay_min_ms, 1000);
    assert_int_equal(f.list_delay_max_ms, 1000);
    kc_error err = KC_ERROR_INIT;
    assert_int_equal(kc_server_faults_parse("listdelay", "1s", &f, &err), KC_EINVAL);
    assert_non_null(strstr(err.message, "listDelay"));
    kc_error_clear(&err);
}

/* The list delay is drawn from [min,max] ms, and is 0 with no fault set. */
static void test_server_faults_list_delay_within_range(void **state)
{
    kc__faults *st = kc__faults_new(NULL, 5);
    assert_int_equal(kc__faults_list_delay_ns(st), 0);
    kc_server_faults f = {.list_delay_min_ms = 5, .list_delay_max_ms = 20};
    kc__faults_set(st, &f);
    for (int i = 0; i < 1000; i++)
        assert_in_range(kc__faults_list_delay_ns(st), 5000000ull, 20000000ull);
    assert_int_equal(kc__faults_watch_delay_ns(st), 0); /* the watch delay is its own */
    kc__faults_free(st);
}

/* listDelayMinMs/MaxMs round-trip through the admin JSON; the "listDelay" string sets both. */
static void test_server_faults_list_delay_json(void **state)
{
    kc_server_faults f = {.list_delay_min_ms = 5, .list_delay_max_ms = 20};
    char *s = kc__faults_to_json(&f);
    assert_non_null(s);
    assert_non_null(strstr(s, "\"listDelayMinMs\":5"));
    assert_non_null(strstr(s, "\"listDelayMaxMs\":20"));
    kc_server_faults g = {0};
    assert_int_equal(kc__faults_from_json(s, strlen(s), &g, NULL), 0);
    assert_int_equal(g.list_delay_min_ms, 5);
    assert_int_equal(g.list_delay_max_ms, 20);
    free(s);
    const char *doc = "{\"listDelay\":\"10ms-1s\"}";
    assert_int_equal(kc__faults_from_json(doc, strlen(doc), &g, NULL), 0);
    assert_int_equal(g.list_delay_min_ms, 10);
    assert_int_equal(g.list_delay_max_ms, 1000);
    const char *doc2 = "{\"listDelayMinMs\":0,\"listDelayMaxMs\":0}";
    assert_int_equal(kc__faults_from_json(doc2, strlen(doc2), &g, NULL), 0);
    assert_int_equal(g.list_delay_min_ms, 0);
    assert_int_equal(g.list_delay_max_ms, 0);
}

static void test_server_faults_json_round_trip(void **state)
{
    kc_server_faults f = {0};
    f.watch_delay_min_ms = 10;
    f.watch_delay_max_ms = 500;
    f.list_delay_min_ms = 3;
    f.list_delay_max_ms = 30;
    f.rate_429[KC_SERVER_VERB_LIST] = 0.5;
    f.rate_503[KC_SERVER_VERB_WATCH] = 0.25;
    f.retry_after_s = 2;
    f.watch_close_every = 7;
    f.watch_close_prob = 0.125;
    f.watch_stall = true;
    char *s = kc__faults_to_json(&f);
    assert_non_null(s);
    kc_server_faults g = {0};
    assert_int_equal(kc__faults_from_json(s, strlen(s), &g, NULL), 0);
    assert_memory_equal(&f, &g, sizeof f);
    free(s);
}

static void test_server_faults_json_partial_keeps_other_fields(void **state)
{
    kc_server_faults f = {0};
    f.retry_after_s = 5;
    f.watch_close_every = 9;
    const char *doc = "{\"rate429\":\"1:get\",\"watchDelay\":\"10ms-20ms\",\"watchStall\":true}";
    assert_int_equal(kc__faults_from_json(doc, strlen(doc), &f, NULL), 0);
    assert_true(f.rate_429[KC_SERVER_VERB_GET] == 1.0 && f.rate_429[KC_SERVER_VERB_LIST] == 0);
    assert_int_equal(f.watch_delay_min_ms, 10);
    assert_int_equal(f.watch_delay_max_ms, 20);
    assert_true(f.watch_stall);
    assert_int_equal(f.retry_after_s, 5);
    assert_int_equal(f.watch_close_every, 9);
    const char *doc2 = "{\"rate500\":{\"create\":0.5},\"rate503\":0.1}";
    assert_int_equal(kc__faults_from_json(doc2, strlen(doc2), &f, NULL), 0);
    assert_true(f.rate_500[KC_SERVER_VERB_CREATE] == 0.5 && f.rate_500[KC_SERVER_VERB_GET] == 0);
    assert_true(f.rate_503[KC_SERVER_VERB_DELETECOLLECTION] == 0.1);
}

static void test_server_faults_json_rejects_bad_fields(void **state)
{
    const char *bad[] = {"not json",
                         "[1]",
                         "{\"nope\":1}",
                         "{\"rate429\":2}",
                         "{\"rate429\":{\"fly\":0.1}}",
                         "{\"retryAfterSeconds\":-1}",
                         "{\"watchStall\":\"yes\"}",
                         "{\"watchDelay\":\"soon\"}",
                         "{\"watchDelayMinMs\":5,\"watchDelayMaxMs\":1}",
                         "{\"listDelay\":\"soon\"}",
                         "{\"listDelay\":20}",
                         "{\"listDelayMinMs\":-1}",
                         "{\"listDelayMinMs\":5,\"listDelayMaxMs\":1}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kc_server_faults f = {.retry_after_s = 4};
        kc_error err = KC_ERROR_INIT;
        assert_int_equal(kc__faults_from_json(bad[i], strlen(bad[i]), &f, &err), KC_EBADREQUEST);
        assert_non_null(err.message);
        assert_int_equal(f.retry_after_s, 4); /* untouched on failure */
        kc_error_clear(&err);
    }
}

typedef struct listen_rec {
    int calls;
    uint64_t last_seq;
    bool stall;
} listen_rec;

static void on_change(void *ud, uint64_t seq, const kc_server_faults *now)
{
    listen_rec *r = ud;
    r->calls++;
    assert_true(seq > r->last_seq);
    r->last_seq = seq;
    r->stall = now->watch_stall;
}

static void test_server_faults_listener_sees_every_set(void **state)
{
    kc__faults *st = kc__faults_new(NULL, 1);
    listen_rec rec = {0};
    kc_server_faults now;
    uint64_t seq0 = kc__faults_set_listener(st, on_change, &rec, &now);
    assert_false(now.watch_stall);
    kc_server_faults f = {.watch_stall = true};
    kc__faults_set(st, &f);
    assert_int_equal(rec.calls, 1);
    assert_true(rec.last_seq > seq0);
    assert_true(rec.stall);
    kc_server_faults g;
    kc__faults_get(st, &g);
    assert_true(g.watch_stall);
    assert_true(kc__faults_stalled(st));
    kc__faults_set_listener(st, NULL, NULL, NULL);
    kc__faults_set(st, &(kc_server_faults){0});
    assert_int_equal(rec.calls, 1);
    kc__faults_free(st);
}

static void test_server_faults_verb_names(void **state)
{
    for (int v = 0; v < KC_SERVER_VERB__COUNT; v++) {
        const char *n = kc__verb_name((kc_server_verb)v);
        assert_int_equal(kc__verb_parse(n, strlen(n)), v);
    }
    assert_string_equal(kc__verb_name(KC_SERVER_VERB__COUNT), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_faults_parse_delay_forms),
        cmocka_unit_test(test_server_faults_parse_delay_rejects_bad_text),
        cmocka_unit_test(test_server_faults_parse_rate_verbs),
        cmocka_unit_test(test_server_faults_public_duration_parse),
        cmocka_unit_test(test_server_faults_public_parse_changes_only_its_field),
        cmocka_unit_test(test_server_faults_public_parse_rejects),
        cmocka_unit_test(test_server_faults_inject_429_per_verb),
        cmocka_unit_test(test_server_faults_inject_500_without_retry_after),
        cmocka_unit_test(test_server_faults_inject_rate_is_respected),
        cmocka_unit_test(test_server_faults_no_faults_by_default),
        cmocka_unit_test(test_server_faults_close_every_n),
        cmocka_unit_test(test_server_faults_close_probability),
        cmocka_unit_test(test_server_faults_delay_within_range),
        cmocka_unit_test(test_server_faults_list_delay_parse),
        cmocka_unit_test(test_server_faults_list_delay_within_range),
        cmocka_unit_test(test_server_faults_list_delay_json),
        cmocka_unit_test(test_server_faults_json_round_trip),
        cmocka_unit_test(test_server_faults_json_partial_keeps_other_fields),
        cmocka_unit_test(test_server_faults_json_rejects_bad_fields),
        cmocka_unit_test(test_server_faults_listener_sees_every_set),
        cmocka_unit_test(test_server_faults_verb_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
