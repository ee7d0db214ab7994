/*
 * fuzz_reflector.c — libFuzzer target for the reflector's decisions (src/informer/backoff.h):
 * what each watch event means (kc__refl_classify) and what to do after a LIST or WATCH ended
 * (kc__refl_decide, kc__backoff_step) — the functions reflector.c runs, here on a virtual clock,
 * so nothing sleeps and the budget is counted, not timed (issue 29 point 13).
 *
 * The input is a misbehaving server: five bytes of options (backoff initial / max / reset,
 * watch timeoutSeconds, paged or streaming lists), then calls. Each call is a LIST (paged or
 * streaming) or a WATCH, as the reflector's state says, with a duration, arbitrary events (any
 * type, unknown ones too; RVs that go back, empty or non-numeric; ERROR events with 410, too
 * large or other codes; initial-events-end bookmarks) and an end (clean close, error with a
 * Retry-After, 410, too large, cancel). The harness plays the reflector's part (reflector.c's
 * list_cycle / watch_cycle / watch_cb) around the real functions and checks:
 *   - every delay <= backoff max (a Retry-After never parks the informer longer);
 *   - a step waits at least min(initial × 2^k, max) (k counted here from the documented reset
 *     rule), and at most twice that or the capped Retry-After;
 *   - no wait only where backoff.h allows it: a cancel, after a complete list, a list at the last
 *     RV that failed with 410 / too large, a healthy watch (>= min(timeoutSeconds, reset));
 *   - the request budget: at most KC__BACKOFF_FREE_MAX requests between two steps or healthy
 *     watches, hence requests <= FREE_MAX × (1 + virtual time / min(initial, healthy));
 *   - the resume RV never moves back (an event or bookmark older than it ends the stream).
 */
#include "informer/backoff.h"
#include "kcache/rv.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_reflector: %s:%d: %s\n", __FILE__, __LINE__, #c);                \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

typedef struct in {
    const uint8_t *p;
    size_t n;
} in;

static uint8_t byte(in *s)
{
    if (!s->n)
        return 0;
    s->n--;
    return *s->p++;
}

/* The simulated reflector and the budget's counters. */
typedef struct sim {
    kc__backoff bo;
    uint64_t now, timeout_ns, healthy_ns;
    bool streaming, need_list, list_at_rv;
    char rv[32]; /* resume RV */
    /* the model of the backoff (backoff.h's contract) */
    unsigned k;
    uint64_t last_step;
    /* budget */
    uint64_t requests, free_run, spans, t0;
} sim;

/* An RV near the current one: back, forward, empty or non-numeric. */
static void next_rv(sim *s, uint8_t b, char *out, size_t cap)
{
    long cur = s->rv[0] && kc_rv_compare(s->rv, "0") != KC_RV_NOT_COMPARABLE ? atol(s->rv) : 100;
    if (b == 0x80)
        snprintf(out, cap, "%s", "");
    else if (b == 0x7f)
        snprintf(out, cap, "%s", "x7");
    else
        snprintf(out, cap, "%ld", cur + (int8_t)b > 1 ? cur + (int8_t)b : 1);
}

/* An ERROR event's Status, as the decoder would fill it, classified by kc__refl_error_code: a
 * code, or an HTTP status / reason / message / cause that says 410 or too large. */
static int error_code(uint8_t b)
{
    static const int codes[4] = {0, KC_ESERVER, KC_ETHROTTLED, KC_EGONE};
    static const int http[4] = {0, 410, 504, 500};
    static char *reasons[4] = {NULL, "Expired", "ResourceVersionTooLarge", "Timeout"};
    static char *messages[4] = {NULL, "Too large resource version: 12, current: 10",
                                "too old resource version", "boom"};
    kc_cause cause = {0};
    cause.reason = "ResourceVersionTooLarge";
    kc_error e = KC_ERROR_INIT;
    e.code = codes[b & 3];
    e.http_status = http[(b >> 2) & 3];
    e.reason = reasons[(b >> 4) & 3];
    e.message = messages[(b >> 6) & 3];
    if ((b & 0xc0) == 0xc0) {
        e.causes = &cause;
        e.n_causes = 1;
    }
    int code = kc__refl_error_code(b == 0xff ? NULL : &e);
    CHECK(code < 0);
    if (e.http_status == 410 && code != KC_ERV_TOO_LARGE)
        CHECK(code == KC_EGONE);
    return code;
}

/* The events of one call, as watch_cb handles them. Returns the call's rc (0: the stream ends
 * by the input's choice). *listed: a streaming list reached its initial-events-end bookmark. */
static int events(sim *s, in *f, bool initial, bool *listed)
{
    unsigned n = byte(f) % 16;
    for (unsigned i = 0; i < n; i++) {
        uint8_t t = byte(f), rb = byte(f);
        int type = (t & 7) == 6 ? 0 : (t & 7) == 7 ? 99 : (t & 7); /* 0 and 99: unknown */
        char rv[32];
        next_rv(s, rb, rv, sizeof(rv));
        int code = type == KC_WATCH_ERROR ? error_code(byte(f)) : 0;
        kc__ev_verdict v = kc__refl_classify(initial, type, s->rv, rv, (t & 0x80) != 0, code);
        bool back = s->rv[0] && rv[0] && kc_rv_compare(rv, s->rv) == KC_RV_LESS;
        switch (v) {
        case KC__EV_SKIP:
            CHECK(initial && type == KC_WATCH_BOOKMARK);
            break;
        case KC__EV_INITIAL_END:
            CHECK(initial && type == KC_WATCH_BOOKMARK);
            initial = false;
            *listed = true;
            s->need_list = false;
            s->list_at_rv = false;
            if (rv[0])
                snprintf(s->rv, sizeof(s->rv), "%s", rv);
            break;
        case KC__EV_APPLY:
        case KC__EV_BOOKMARK:
            CHECK(type >= KC_WATCH_ADDED && type <= KC_WATCH_BOOKMARK);
            CHECK(initial || !back); /* the resume RV never moves back */
            if (!initial && rv[0])
                snprintf(s->rv, sizeof(s->rv), "%s", rv);
            break;
        case KC__EV_STOP_GONE:
            CHECK(type == KC_WATCH_ERROR && code == KC_EGONE);
            return KC_EGONE;
        case KC__EV_STOP_RV_BACK:
            CHECK((type == KC_WATCH_ERROR && code == KC_ERV_TOO_LARGE) || (!initial && back));
            return KC_ERV_TOO_LARGE;
        case KC__EV_STOP_ERROR:
            CHECK(type == KC_WATCH_ERROR || type == 0 || type == 99 ||
                  (initial && type == KC_WATCH_DELETED));
            return type == KC_WATCH_ERROR ? code : KC_EPARSE;
        }
    }
    return 0;
}

/* Check one decision against backoff.h's contract and advance the virtual clock. */
static void check_next(sim *s, const kc__refl_result *r, const kc__refl_next *nx)
{
    const kc__backoff *b = &s->bo;
    CHECK(nx->delay_ns <= b->max_ns);
    bool healthy = !r->list && r->ended_ns - r->started_ns >= s->healthy_ns;
    if (r->end != KC__END_CANCELED) {
        s->requests++;
        s->free_run++;
    }
    if (nx->stepped) {
        if (s->last_step && r->ended_ns - s->last_step > b->reset_ns)
            s->k = 0;
        s->last_step = r->ended_ns;
        uint64_t base = b->initial_ns;
        for (unsigned i = 0; i < s->k && base < b->max_ns; i++)
            base *= 2;
        if (base >= b->max_ns)
            base = b->max_ns;
        else
            s->k++;
        uint64_t ra = r->retry_after_s > 0 ? (uint64_t)r->retry_after_s * KC__NS_PER_SEC : 0;
        if (ra > b->max_ns)
            ra = b->max_ns;
        CHECK(nx->delay_ns >= base && nx->delay_ns >= ra);
        CHECK(nx->delay_ns <= 2 * base || nx->delay_ns == ra);
        CHECK(!healthy);
        s->free_run = 0;
        s->spans++;
    } else {
        CHECK(nx->delay_ns == 0);
        bool list_ok = r->list && r->end == KC__END_OK;
        bool list_retry =
            r->list && r->list_at_rv && (r->end == KC__END_GONE || r->end == KC__END_RV_BACK);
        CHECK(r->end == KC__END_CANCELED || list_ok || list_retry || healthy);
        if (healthy) {
            s->free_run = 0;
            s->spans++;
        }
    }
    /* the request budget: at most FREE_MAX calls per span (a step or a healthy watch), the last
     * of them ending it, and each span takes >= unit of virtual time */
    CHECK(s->free_run < KC__BACKOFF_FREE_MAX);
    CHECK(s->requests <= KC__BACKOFF_FREE_MAX * (1 + s->spans));
    uint64_t unit = b->initial_ns < s->healthy_ns ? b->initial_ns : s->healthy_ns;
    s->now = r->ended_ns + nx->delay_ns;
    CHECK(s->spans <= (s->now - s->t0) / unit);
    if (r->list && r->list_at_rv && nx->need_list) /* a list at the last RV that failed with 410 /
                                           too large is retried at "" */
        CHECK(!nx->list_at_rv || r->end == KC__END_ERROR || r->end == KC__END_CANCELED);
}

/* One call, as list_cycle / watch_cycle make it. */
static void call(sim *s, in *f)
{
    uint8_t h = byte(f);
    uint64_t dur_ms = (uint64_t)byte(f) | (uint64_t)byte(f) << 8;
    if (h & 0x80)
        dur_ms *= 100; /* up to ~110 min: healthy watches too */
    bool list = s->need_list, at_rv = s->need_list && s->list_at_rv && s->rv[0];
    bool listed = false;
    int rc = 0;
    if (!list || s->streaming)
        rc = events(s, f, list, &listed);
    if (rc == 0) {
        static const int ends[8] = {
            0, 0, KC_EIO, KC_ETHROTTLED, KC_EGONE, KC_ERV_TOO_LARGE, KC_ECANCELED, KC_EUNSUPPORTED};
        rc = ends[h & 7];
        if (list && !s->streaming && rc == 0) { /* a paged list: its RV may be older */
            char lrv[32];
            next_rv(s, byte(f), lrv, sizeof(lrv));
            if (at_rv && s->rv[0] && lrv[0] && kc_rv_compare(lrv, s->rv) == KC_RV_LESS)
                rc = KC_ERV_TOO_LARGE;
            else
                snprintf(s->rv, sizeof(s->rv), "%s", lrv[0] ? lrv : s->rv);
        }
        if (list && s->streaming && !listed && rc == 0)
            rc = KC_EUNSUPPORTED; /* closed before the bookmark */
    }
    int64_t ra = -1;
    if (h & 0x40) {
        uint8_t v = byte(f), shift = byte(f) & 15;
        ra = (int64_t)v << shift; /* up to ~9 days */
    }
    kc__refl_result r = {.list = list && !listed,
                         .list_at_rv = at_rv && !listed,
                         .end = kc__refl_end_of(rc),
                         .started_ns = s->now,
                         .ended_ns = s->now + dur_ms * KC__NS_PER_MS,
                         .timeout_ns = list && !listed ? 0 : s->timeout_ns,
                         .retry_after_s = ra};
    kc__refl_next nx = kc__refl_decide(&s->bo, &r);
    check_next(s, &r, &nx);
    s->need_list = nx.need_list;
    s->list_at_rv = nx.list_at_rv;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    in f = {data, size};
    sim s;
    memset(&s, 0, sizeof(s));
    int64_t initial_ms = 1 + (int64_t)byte(&f) * 4;
    int64_t max_ms = initial_ms * (1 + (byte(&f) & 63));
    int64_t reset_ms = 1 + (int64_t)byte(&f) * 1000;
    uint8_t t = byte(&f);
    s.streaming = byte(&f) & 1;
    kc__backoff_init(&s.bo, initial_ms, max_ms, reset_ms, 0x5eed);
    s.timeout_ns = t == 255 ? 0 : (uint64_t)(1 + t % 10) * KC__NS_PER_SEC;
    s.healthy_ns = s.bo.reset_ns;
    if (s.timeout_ns && s.timeout_ns < s.healthy_ns)
        s.healthy_ns = s.timeout_ns;
    s.now = s.t0 = 1000 * KC__NS_PER_SEC;
    s.need_list = true;
    for (unsigned i = 0; f.n && i < 20000; i++)
        call(&s, &f);
    return 0;
}
