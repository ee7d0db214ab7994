/*
 * The event correlator (src/events/event_correlate.c) on made-up times — the parts of spec
 * §6 that need a clock: the spam filter's refill (E6: burst 25, one token per 300 s), the
 * aggregation window (E4: 600 s) and the bound of its caches (LRU, E4/E5), plus the name rule
 * (E1) and the bounded LRU itself. No thread, no server, no sleep.
 */
#include "events/internal.h"

#include "core/internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define SEC KC__NS_PER_SEC

static const uint64_t T0 = 1000 * SEC;
static const uint64_t WALL0 = 1764633600ull * SEC; /* 2025-12-02T00:00:00Z */

/* An event about Pod ns/name at monotonic time mono (wall = WALL0 + mono). */
static kc__event *ev_at(const char *name, const char *type, const char *reason, const char *msg,
                        uint64_t mono)
{
    kc_event_ref r = {"v1", "Pod", "ns", name, "uid", "1", NULL};
    kc__event *ev = kc__event_new(&r, NULL, type, reason, NULL, msg);
    assert_non_null(ev);
    ev->mono_ns = mono;
    ev->wall_ns = WALL0 + mono;
    return ev;
}

/* Correlate one event; returns the correlate result, the event's count in *count (may be NULL)
 * and whether it is a patch in *patch (may be NULL). */
static int run(kc__event_correlator *c, const char *name, const char *type, const char *reason,
               const char *msg, uint64_t mono, int64_t *count, bool *patch, bool *aggregated)
{
    kc__event *ev = ev_at(name, type, reason, msg, mono);
    int rc = kc__event_correlate(c, ev);
    assert_true(rc == 0 || rc == 1);
    if (count)
        *count = ev->count;
    if (patch)
        *patch = ev->patch;
    if (aggregated)
        *aggregated = ev->aggregated;
    kc__event_free(ev);
    return rc;
}

/* E6: 25 pass at once, the 26th is skipped; one more passes per 300 s, never more than 25 saved. */
static void test_spam_refill(void **state)
{
    (void)state;
    kc__event_correlator *c = kc__event_correlator_new(NULL);
    char reason[32];
    for (int i = 0; i < 25; i++) {
        snprintf(reason, sizeof reason, "R%d", i);
        assert_int_equal(run(c, "p", "Normal", reason, "m", T0, NULL, NULL, NULL), 0);
    }
    assert_int_equal(run(c, "p", "Normal", "R25", "m", T0, NULL, NULL, NULL), 1);
    /* Another type, another object: their own buckets. */
    assert_int_equal(run(c, "p", "Warning", "R25", "m", T0, NULL, NULL, NULL), 0);
    assert_int_equal(run(c, "q", "Normal", "R25", "m", T0, NULL, NULL, NULL), 0);
    /* 299 s later: still no token; at 300 s one. */
    assert_int_equal(run(c, "p", "Normal", "R26", "m", T0 + 299 * SEC, NULL, NULL, NULL), 1);
    assert_int_equal(run(c, "p", "Normal", "R27", "m", T0 + 300 * SEC, NULL, NULL, NULL), 0);
    assert_int_equal(run(c, "p", "Normal", "R28", "m", T0 + 300 * SEC, NULL, NULL, NULL), 1);
    /* A day later the bucket is full again, but only 25. */
    uint64_t day = T0 + 86400 * SEC;
    int passed = 0;
    for (int i = 0; i < 40; i++) {
        snprintf(reason, sizeof reason, "D%d", i);
        passed += run(c, "p", "Normal", reason, "m", day, NULL, NULL, NULL) == 0;
    }
    assert_int_equal(passed, 25);
    kc__event_correlator_free(c);
}

/* E6 option: spam_burst < 0 turns the filter off; a custom burst is honoured. */
static void test_spam_options(void **state)
{
    (void)state;
    kc__event_correlator_opts off = {.spam_burst = -1};
    kc__event_correlator *c = kc__event_correlator_new(&off);
    for (int i = 0; i < 100; i++)
        assert_int_equal(run(c, "p", "Normal", "R", "m", T0, NULL, NULL, NULL), 0);
    kc__event_correlator_free(c);
    kc__event_correlator_opts two = {.spam_burst = 2, .spam_refill_ns = 10 * SEC};
    c = kc__event_correlator_new(&two);
    assert_int_equal(run(c, "p", "Normal", "A", "m", T0, NULL, NULL, NULL), 0);
    assert_int_equal(run(c, "p", "Normal", "B", "m", T0, NULL, NULL, NULL), 0);
    assert_int_equal(run(c, "p", "Normal", "C", "m", T0, NULL, NULL, NULL), 1);
    assert_int_equal(run(c, "p", "Normal", "D", "m", T0 + 10 * SEC, NULL, NULL, NULL), 0);
    kc__event_correlator_free(c);
}

/* E5: repeats count up and are patches; the first keeps its name and firstTimestamp. */
static void test_dedupe_counts(void **state)
{
    (void)state;
    kc__event_correlator *c = kc__event_correlator_new(NULL);
    kc__event *a = ev_at("p", "Normal", "R", "m", T0);
    assert_int_equal(kc__event_correlate(c, a), 0);
    assert_false(a->patch);
    assert_int_equal(a->count, 1);
    assert_int_equal(a->first_wall_ns, a->wall_ns);
    kc__event *b = ev_at("p", "Normal", "R", "m", T0 + 5 * SEC);
    assert_int_equal(kc__event_correlate(c, b), 0);
    assert_true(b->patch);
    assert_int_equal(b->count, 2);
    assert_string_equal(b->event_name, a->event_name);
    assert_int_equal(b->first_wall_ns, a->wall_ns);
    /* A different fieldPath is a different Event (full key). */
    kc_event_ref r = {"v1", "Pod", "ns", "p", "uid", "1", "spec.containers{app}"};
    kc__event *d = kc__event_new(&r, NULL, "Normal", "R", NULL, "m");
    assert_non_null(d);
    d->mono_ns = T0 + 6 * SEC;
    d->wall_ns = WALL0 + d->mono_ns;
    assert_string_equal(d->field_path, "spec.containers{app}");
    assert_int_equal(kc__event_correlate(c, d), 0);
    assert_false(d->patch);
    assert_string_not_equal(d->event_name, a->event_name);
    kc__event_free(a);
    kc__event_free(b);
    kc__event_free(d);
    kc__event_correlator_free(c);
}

/* E4: the window — distinct messages further apart than 600 s never combine. */
static void test_aggregation_window(void **state)
{
    (void)state;
    kc__event_correlator *c = kc__event_correlator_new(NULL);
    bool agg = false;
    char msg[32];
    for (int i = 0; i < 9; i++) {
        snprintf(msg, sizeof msg, "m%d", i);
        run(c, "p", "Warning", "R", msg, T0 + (uint64_t)i * SEC, NULL, NULL, &agg);
        assert_false(agg);
    }
    /* The 10th distinct message, 601 s after the 9th: the group started over. */
    run(c, "p", "Warning", "R", "m9", T0 + 8 * SEC + 601 * SEC, NULL, NULL, &agg);
    assert_false(agg);
    /* Nine more within the window from there: the 10th distinct of the new run combines. */
    uint64_t t = T0 + 610 * SEC;
    for (int i = 10; i < 18; i++) {
        snprintf(msg, sizeof msg, "m%d", i);
        run(c, "p", "Warning", "R", msg, t, NULL, NULL, &agg);
        assert_false(agg);
    }
    int64_t count = 0;
    bool patch = true;
    run(c, "p", "Warning", "R", "m18", t, &count, &patch, &agg);
    assert_true(agg);
    assert_false(patch);
    assert_int_equal(count, 1);
    /* Repeating a message still in the set is not a new distinct one: no combining (and, as in
     * client-go, it is an Event of its own: the earlier m18 went into the combined one). */
    run(c, "p", "Warning", "R", "m18", t, &count, &patch, &agg);
    assert_false(agg);
    assert_false(patch);
    /* A new one combines again: the combined Event is patched. */
    run(c, "p", "Warning", "R", "m19", t, &count, &patch, &agg);
    assert_true(agg);
    assert_true(patch);
    assert_int_equal(count, 2);
    /* Another reason is another group. */
    run(c, "p", "Warning", "Other", "m19", t, NULL, NULL, &agg);
    assert_false(agg);
    kc__event_correlator_free(c);
}

/* E4/E5 bound: with a cache of 4 entries, a fifth object evicts the oldest dedupe record, whose
 * next event is then a new Event (count 1), while the recent ones still count up. */
static void test_cache_bounded(void **state)
{
    (void)state;
    kc__event_correlator_opts o = {.lru_len = 4};
    kc__event_correlator *c = kc__event_correlator_new(&o);
    const char *names[] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < 5; i++)
        run(c, names[i], "Normal", "R", "m", T0, NULL, NULL, NULL);
    int64_t count = 0;
    bool patch = true;
    run(c, "e", "Normal", "R", "m", T0, &count, &patch, NULL);
    assert_true(patch);
    assert_int_equal(count, 2);
    run(c, "a", "Normal", "R", "m", T0, &count, &patch, NULL);
    assert_false(patch); /* evicted */
    assert_int_equal(count, 1);
    kc__event_correlator_free(c);
}

/* E1: "<name>.<hex>" with strictly increasing stamps; a UUID when that is no DNS subdomain. */
static void test_names(void **state)
{
    (void)state;
    kc__event_correlator *c = kc__event_correlator_new(NULL);
    kc__event *a = ev_at("p", "Normal", "A", "m", T0);
    kc__event *b = ev_at("p", "Normal", "B", "m", T0); /* same instant */
    assert_int_equal(kc__event_correlate(c, a), 0);
    assert_int_equal(kc__event_correlate(c, b), 0);
    char want[64];
    snprintf(want, sizeof want, "p.%llx", (unsigned long long)a->wall_ns);
    assert_string_equal(a->event_name, want);
    assert_string_not_equal(a->event_name, b->event_name);
    kc__event *u = ev_at("Not_A_DNS_Name", "Normal", "A", "m", T0);
    assert_int_equal(kc__event_correlate(c, u), 0);
    assert_int_equal(strlen(u->event_name), 36);
    assert_true(kc__is_dns1123_subdomain(u->event_name, 36));
    assert_int_equal(u->event_name[14], '4');
    kc__event_free(a);
    kc__event_free(b);
    kc__event_free(u);
    kc__event_correlator_free(c);
}

/* The LRU: get refreshes recency, put replaces (freeing the old value) and evicts the least
 * recent entry when full. */
static int freed;
static void count_free(void *p)
{
    freed++;
    free(p);
}

static void test_lru(void **state)
{
    (void)state;
    freed = 0;
    kc__lru *l = kc__lru_new(2, count_free);
    assert_int_equal(kc__lru_put(l, "x", strdup("1")), 0);
    assert_int_equal(kc__lru_put(l, "y", strdup("2")), 0);
    assert_string_equal(kc__lru_get(l, "x"), "1");         /* x now most recent */
    assert_int_equal(kc__lru_put(l, "z", strdup("3")), 0); /* evicts y */
    assert_null(kc__lru_get(l, "y"));
    assert_int_equal(freed, 1);
    assert_int_equal(kc__lru_put(l, "x", strdup("4")), 0); /* replaces */
    assert_int_equal(freed, 2);
    assert_string_equal(kc__lru_get(l, "x"), "4");
    assert_int_equal(kc__lru_len(l), 2);
    kc__lru_free(l);
    assert_int_equal(freed, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spam_refill),   cmocka_unit_test(test_spam_options),
        cmocka_unit_test(test_dedupe_counts), cmocka_unit_test(test_aggregation_window),
        cmocka_unit_test(test_cache_bounded), cmocka_unit_test(test_names),
        cmocka_unit_test(test_lru),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
