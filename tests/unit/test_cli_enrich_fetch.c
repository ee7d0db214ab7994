/*
 * test_cli_enrich_fetch.c — the daemon's background GET for a pod its cache misses after sync
 * (tools/kcache/enrich_fetch.c; enrich-semantics CA5) with a fake GET: a miss answers at once and
 * queues one GET however often it is asked (one in flight per pod), the result is served later
 * and bumps the view's generation; a 404 is remembered (negative hits, no second GET); a 429
 * pauses every GET for its Retry-After; the token bucket paces GETs; the table is bounded (count,
 * eviction counted); keys without namespace and name are never fetched; rate 0 fetches nothing.
 * Waits are on the fetcher's counters with deadlines (no event exists for them).
 */
#include "enrich_api.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "kcache/error.h"

typedef struct fake {
    pthread_mutex_t mu;
    int calls;
    int64_t at_ms[64];
    char name[64][64];
    int busy_left; /* "busy": 429 this many times, then 200 */
} fake;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int fake_get(void *ud, const char *resource, const char *ns, const char *name, char **body,
                    size_t *len, int *status, int *retry_after_s)
{
    fake *f = ud;
    pthread_mutex_lock(&f->mu);
    int i = f->calls++;
    if (i < 64) {
        f->at_ms[i] = now_ms();
        snprintf(f->name[i], sizeof f->name[i], "%s:%s", resource, name);
    }
    bool busy = !strcmp(name, "busy") && f->busy_left > 0 && f->busy_left--;
    pthread_mutex_unlock(&f->mu);
    *retry_after_s = -1;
    if (busy) {
        *status = 429;
        *retry_after_s = 1;
        return KC_ETHROTTLED;
    }
    if (!strncmp(name, "gone", 4)) {
        *status = 404;
        return KC_ENOTFOUND;
    }
    *status = 200;
    if (asprintf(body,
                 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"u-%s\","
                 "\"resourceVersion\":\"7\"},\"spec\":{\"nodeName\":\"other\"}}",
                 name, ns ? ns : "", name) < 0)
        return KC_ENOMEM;
    *len = strlen(*body);
    return 0;
}

static kc__enrich_key key_of(const char *ns, const char *pod)
{
    kc__enrich_key k;
    memset(&k, 0, sizeof k);
    k.ns = ns;
    k.pod = pod;
    k.container = "app";
    return k;
}

/* Wait (bounded) until the fetcher has seen n responses. */
static bool responses(kc__enrich_fetch *f, uint64_t n, int64_t timeout_ms)
{
    int64_t end = now_ms() + timeout_ms;
    for (;;) {
        kc__enrich_fetch_stats s;
        kc__enrich_fetch_get_stats(f, &s);
        if (s.ok + s.notfound + s.throttled + s.errors >= n)
            return true;
        if (now_ms() > end)
            return false;
        usleep(2000);
    }
}

static kc__enrich_fetch *start(fake *fk, double rate, int burst, _Atomic uint64_t *gen)
{
    memset(fk, 0, sizeof *fk);
    pthread_mutex_init(&fk->mu, NULL);
    kc__enrich_fetch_opts o = {
        .rate = rate, .burst = burst, .generation = gen, .get = fake_get, .get_ud = fk};
    kc__enrich_fetch *f = kc__enrich_fetch_new(NULL, &o);
    assert_non_null(f);
    return f;
}

/* CA5, CA4: a miss answers at once and queues one GET; later lookups are served from it. */
static void test_miss_then_served(void **st)
{
    (void)st;
    fake fk;
    _Atomic uint64_t gen = 0;
    kc__enrich_fetch *f = start(&fk, 100, 5, &gen);
    kc__enrich_key k = key_of("shop", "far");
    kc__enrich_meta m;
    for (int i = 0; i < 50; i++) { /* asked often while in flight: still one GET */
        int rc = kc__enrich_fetch_lookup(f, &k, &m);
        if (rc == 0)
            break;
        assert_int_equal(rc, KC_ENOTFOUND);
    }
    assert_true(responses(f, 2, 5000)); /* the pod, then its namespace (no watch holds it here) */
    assert_int_equal(kc__enrich_fetch_lookup(f, &k, &m), 0);
    assert_string_equal(fk.name[1], "namespaces:shop");
    assert_non_null(m.ns);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(m.pod, "spec"), "nodeName")),
        "other"); /* another node's pod is served */
    assert_non_null(strstr(m.version, "u-far/7"));
    assert_true(atomic_load(&gen) >= 1);
    k.have_version = m.version; /* the asker holds it: "same" */
    kc__enrich_meta m2;
    assert_int_equal(kc__enrich_fetch_lookup(f, &k, &m2), 0);
    assert_true(m2.same);
    assert_null(m2.pod);
    kc__enrich_meta_clear(&m);
    kc__enrich_fetch_free(f);
    assert_int_equal(fk.calls, 2);
}

/* CA5: a 404 is negatively cached (30 s): no second GET, negative hits counted. */
static void test_404_remembered(void **st)
{
    (void)st;
    fake fk;
    kc__enrich_fetch *f = start(&fk, 100, 5, NULL);
    kc__enrich_key k = key_of("shop", "gone-1");
    kc__enrich_meta m;
    assert_int_equal(kc__enrich_fetch_lookup(f, &k, &m), KC_ENOTFOUND);
    assert_true(responses(f, 1, 5000));
    for (int i = 0; i < 20; i++)
        assert_int_equal(kc__enrich_fetch_lookup(f, &k, &m), KC_ENOTFOUND);
    kc__enrich_fetch_stats s;
    kc__enrich_fetch_get_stats(f, &s);
    assert_int_equal(s.notfound, 1);
    assert_int_equal(s.negative_hits, 20);
    assert_int_equal(s.sent, 1);
    kc__enrich_fetch_free(f);
}

/* AN5, CA5: a 429 pauses all GETs for its Retry-After (1 s), then the pod is fetched; replies
 * meanwhile are immediate "not found". */
static void test_429_pauses(void **st)
{
    (void)st;
    fake fk;
    kc__enrich_fetch *f = start(&fk, 100, 5, NULL);
    fk.busy_left = 1;
    kc__enrich_key k = key_of("shop", "busy"), k2 = key_of("shop", "other");
    kc__enrich_meta m;
    assert_int_equal(kc__enrich_fetch_lookup(f, &k, &m), KC_ENOTFOUND);
    assert_true(responses(f, 1, 5000));
    kc__enrich_fetch_stats s;
    kc__enrich_fetch_get_stats(f, &s);
    assert_int_equal(s.throttled, 1);
    assert_true(s.paused);
    int64_t t0 = now_ms();
    assert_int_equal(kc__enrich_fetch_lookup(f, &k2, &m), KC_ENOTFOUND); /* queued, paused */
    assert_true(now_ms() - t0 < 100);                                    /* never waits */
    assert_true(responses(f, 4, 5000)); /* busy (429), busy, other, their namespace */
    assert_int_equal(fk.calls, 4);
    assert_string_equal(fk.name[1], "pods:busy");  /* queued first, sent first after the pause */
    assert_true(fk.at_ms[1] - fk.at_ms[0] >= 990); /* Retry-After honoured */
    assert_int_equal(kc__enrich_fetch_lookup(f, &k, &m), 0);
    kc__enrich_meta_clear(&m);
    kc__enrich_fetch_free(f);
}

/* The token bucket: burst 2 at once, then one per 1/rate. */
static void test_rate_limited(void **st)
{
    (void)st;
    fake fk;
    kc__enrich_fetch *f = start(&fk, 10, 2, NULL);
    char names[5][16];
    for (int i = 0; i < 5; i++) {
        snprintf(names[i], sizeof names[i], "gone-%d", i);
        kc__enrich_key k = key_of("shop", names[i]);
        kc__enrich_meta m;
        assert_int_equal(kc__enrich_fetch_lookup(f, &k, &m), KC_ENOTFOUND);
    }
    assert_true(responses(f, 5, 5000));
    assert_true(fk.at_ms[2] - fk.at_ms[0] >= 90);  /* the third waited for a token (100 ms) */
    assert_true(fk.at_ms[4] - fk.at_ms[0] >= 290); /* 3 tokens after the burst: 300 ms */
    kc__enrich_fetch_free(f);
}

/* Bounds and keys: at most max_entries (oldest evicted, counted); a key without namespace and
 * name (a container id, a uid) is never fetched; rate 0 never fetches. */
static void test_bounds_and_keys(void **st)
{
    (void)st;
    fake fk;
    memset(&fk, 0, sizeof fk);
    pthread_mutex_init(&fk.mu, NULL);
    kc__enrich_fetch_opts o = {
        .rate = 1000, .burst = 100, .max_entries = 4, .get = fake_get, .get_ud = &fk};
    kc__enrich_fetch *f = kc__enrich_fetch_new(NULL, &o);
    assert_non_null(f);
    kc__enrich_meta m;
    char names[10][16];
    for (int i = 0; i < 10; i++) {
        snprintf(names[i], sizeof names[i], "gone-%d", i);
        kc__enrich_key k = key_of("shop", names[i]);
        kc__enrich_fetch_lookup(f, &k, &m);
        assert_true(responses(f, (uint64_t)i + 1, 5000));
    }
    kc__enrich_fetch_stats s;
    kc__enrich_fetch_get_stats(f, &s);
    assert_true(s.entries <= 4);
    assert_int_equal(s.evicted, 6);
    kc__enrich_key cid;
    memset(&cid, 0, sizeof cid);
    cid.container_id = "containerd://abc";
    cid.uid = "u-1";
    assert_int_equal(kc__enrich_fetch_lookup(f, &cid, &m), KC_ENOTFOUND);
    kc__enrich_fetch_get_stats(f, &s);
    assert_int_equal(s.queued, 10);
    kc__enrich_fetch_free(f);

    kc__enrich_fetch *off = start(&fk, 0, 0, NULL);
    kc__enrich_key k = key_of("shop", "far");
    assert_int_equal(kc__enrich_fetch_lookup(off, &k, &m), KC_ENOTFOUND);
    kc__enrich_fetch_get_stats(off, &s);
    assert_int_equal(s.queued, 0);
    kc__enrich_fetch_free(off);
    assert_int_equal(fk.calls, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_miss_then_served), cmocka_unit_test(test_404_remembered),
        cmocka_unit_test(test_429_pauses),       cmocka_unit_test(test_rate_limited),
        cmocka_unit_test(test_bounds_and_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
