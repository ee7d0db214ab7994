/*
 * The events.k8s.io/v1 series cache (src/events/event_series.c) on made-up times — spec E8
 * (isomorphic key without the note; the first note kept) and E9 (first created, second patched
 * with series count 2, later ones only counted; a refresh writes every series again; a series idle
 * for the finish interval gets a final write with its count and is forgotten; a singleton that old
 * is forgotten). No thread, no server, no sleep.
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

static const uint64_t WALL0 = 1764633600ull * SEC;

static kc__rng rng;

static kc__event *ev_at(const char *name, const char *action, const char *note, uint64_t mono)
{
    kc_event_ref r = {"v1", "Pod", "ns", name, "uid", "1", NULL};
    kc__event *ev = kc__event_new(&r, NULL, "Normal", "Created", action, note);
    assert_non_null(ev);
    ev->mono_ns = mono;
    ev->wall_ns = WALL0 + mono;
    return ev;
}

typedef struct seen {
    int rc;
    bool patch;
    int64_t count;
    char name[128];
    char note[64];
    uint64_t series_wall;
} seen;

static seen observe(kc__event_series *s, const char *name, const char *action, const char *note,
                    uint64_t mono)
{
    kc__event *ev = ev_at(name, action, note, mono);
    seen r = {0};
    r.rc = kc__event_series_observe(s, ev, &rng);
    r.patch = ev->patch;
    r.count = ev->count;
    snprintf(r.name, sizeof r.name, "%s", ev->event_name ? ev->event_name : "");
    snprintf(r.note, sizeof r.note, "%s", ev->message);
    r.series_wall = ev->series_wall_ns;
    kc__event_free(ev);
    return r;
}

/* The writes due at now: their count in *n, the first one's series count in *count. */
static uint64_t due(kc__event_series *s, uint64_t now, size_t *n, int64_t *count)
{
    kc__event **v = NULL;
    uint64_t next = 0;
    assert_int_equal(kc__event_series_due(s, now, &v, n, &next), 0);
    *count = *n ? v[0]->count : 0;
    for (size_t i = 0; i < *n; i++) {
        assert_true(v[i]->patch);
        assert_non_null(v[i]->event_name);
        kc__event_free(v[i]);
    }
    free(v);
    return next;
}

/* E9: created, patched with count 2 (first note kept, E8), then only counted; E8: the note is not
 * part of the key, the action is. */
static void test_series_first_second_later(void **state)
{
    (void)state;
    kc__event_series *s = kc__event_series_new(0, 10 * SEC, 100 * SEC);
    seen a = observe(s, "p", "Create", "first note", 0);
    assert_int_equal(a.rc, 0);
    assert_false(a.patch);
    assert_int_equal(a.count, 1);
    assert_non_null(strstr(a.name, "p."));
    assert_true(a.series_wall == 0);
    seen b = observe(s, "p", "Create", "second note", 1 * SEC);
    assert_int_equal(b.rc, 0);
    assert_true(b.patch);
    assert_int_equal(b.count, 2);
    assert_string_equal(b.name, a.name);
    assert_string_equal(b.note, "first note");
    assert_true(b.series_wall == WALL0 + 1 * SEC);
    seen c = observe(s, "p", "Create", "third", 2 * SEC);
    assert_int_equal(c.rc, 1); /* only counted */
    seen other = observe(s, "p", "Delete", "x", 2 * SEC);
    assert_int_equal(other.rc, 0);
    assert_false(other.patch);
    assert_string_not_equal(other.name, a.name);
    kc__event_series_free(s);
}

/* E9 finish: a series idle for the finish interval gets one final write with its full count and
 * is forgotten (the next occurrence starts a new Event); a singleton is forgotten without a write.
 */
static void test_series_finish(void **state)
{
    (void)state;
    kc__event_series *s = kc__event_series_new(0, 10 * SEC, 100 * SEC);
    observe(s, "p", "A", "n", 0);
    observe(s, "p", "A", "n", 1 * SEC);
    observe(s, "p", "A", "n", 2 * SEC);
    observe(s, "q", "A", "n", 0); /* singleton */
    size_t n;
    int64_t count;
    uint64_t next = due(s, 5 * SEC, &n, &count);
    assert_int_equal((int)n, 0); /* not yet: the first check is at 10 s */
    assert_true(next == 10 * SEC);
    next = due(s, 10 * SEC, &n, &count); /* idle 8 s < 10 s: kept; q idle 10 s: dropped */
    assert_int_equal((int)n, 0);
    assert_true(next == 20 * SEC);
    seen q = observe(s, "q", "A", "n", 11 * SEC);
    assert_false(q.patch); /* q started over */
    next = due(s, 20 * SEC, &n, &count);
    assert_int_equal((int)n, 1); /* p: final write with count 3 */
    assert_int_equal((int)count, 3);
    seen p = observe(s, "p", "A", "n", 21 * SEC);
    assert_int_equal(p.rc, 0);
    assert_false(p.patch); /* forgotten: a new Event */
    kc__event_series_free(s);
}

/* E9 refresh: every refresh interval each series (count > 1) is written again, and stays. */
static void test_series_refresh(void **state)
{
    (void)state;
    kc__event_series *s = kc__event_series_new(0, 1000 * SEC, 10 * SEC);
    observe(s, "p", "A", "n", 0);
    observe(s, "p", "A", "n", 1 * SEC);
    observe(s, "r", "A", "n", 1 * SEC); /* singleton: never refreshed */
    size_t n;
    int64_t count;
    uint64_t next = due(s, 10 * SEC, &n, &count);
    assert_int_equal((int)n, 1);
    assert_int_equal((int)count, 2);
    assert_true(next == 20 * SEC);
    observe(s, "p", "A", "n", 15 * SEC);
    due(s, 20 * SEC, &n, &count);
    assert_int_equal((int)n, 1);
    assert_int_equal((int)count, 3);
    kc__event_series_free(s);
}

/* The related object is part of the key (E8). */
static void test_series_related_in_key(void **state)
{
    (void)state;
    kc__event_series *s = kc__event_series_new(0, 0, 0);
    kc_event_ref r = {"v1", "Pod", "ns", "p", "uid", "1", NULL};
    kc_event_ref rel = {"v1", "Secret", "ns", "s", NULL, NULL, NULL};
    kc__event *a = kc__event_new(&r, NULL, "Normal", "R", "A", "n");
    kc__event *b = kc__event_new(&r, &rel, "Normal", "R", "A", "n");
    assert_int_equal(kc__event_series_observe(s, a, &rng), 0);
    assert_int_equal(kc__event_series_observe(s, b, &rng), 0);
    assert_false(b->patch);
    assert_true(b->has_related);
    assert_string_equal(b->rel_kind, "Secret");
    kc__event_free(a);
    kc__event_free(b);
    kc__event_series_free(s);
}

int main(void)
{
    kc__rng_seed(&rng, 42);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_series_first_second_later),
        cmocka_unit_test(test_series_finish),
        cmocka_unit_test(test_series_refresh),
        cmocka_unit_test(test_series_related_in_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
