/*
 * event_series.c — the events.k8s.io/v1 recorder's series cache (spec E8, E9; client-go
 * tools/events): which occurrences of an event are written, and when a series is written again.
 *
 * Isomorphic key (E8): type, action, reason and the regarding and related references (every
 * field); reportingController and reportingInstance are the recorder's own, the same for all its
 * events, so they are left out of the key. The note is not in the key: events that differ only in
 * note merge, and the first note is kept.
 *
 * Series (E9): the first occurrence is created (no series); the second is written as a PATCH of
 * series {count: 2, lastObservedTime} (created with that series on 404); later occurrences only
 * bump the cached count and lastObservedTime. Every refresh interval (30 min) all series are
 * written again; every finish interval (6 min) a series not observed for that long gets a final
 * write and is evicted, and singletons older than that are dropped (a later occurrence starts a
 * new Event). The cache is a bounded LRU (4096 keys): an evicted key starts over.
 *
 * Each cache entry keeps a copy of the first occurrence (name, references, first note, eventTime)
 * so that any later write — a patch, or its re-creation on 404 — is built from it.
 * Thread-safety: none; owned by the recorder's sender thread.
 */
#include "events/internal.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_LRU     4096
#define DEFAULT_FINISH  (6 * 60 * KC__NS_PER_SEC)
#define DEFAULT_REFRESH (30 * 60 * KC__NS_PER_SEC)

typedef struct series_rec {
    kc__event *first;   /* the first occurrence (owned): event_name set */
    int64_t count;      /* occurrences seen; 1 = a singleton */
    uint64_t last_mono; /* when last observed (monotonic) */
    uint64_t last_wall; /* lastObservedTime */
} series_rec;

struct kc__event_series {
    kc__lru *lru;
    uint64_t finish_ns, refresh_ns;
    uint64_t next_finish, next_refresh; /* monotonic; 0 until the first observation */
    uint64_t last_stamp;
};

static void rec_free(void *p)
{
    series_rec *r = p;
    kc__event_free(r->first);
    free(r);
}

kc__event_series *kc__event_series_new(size_t lru_len, uint64_t finish_ns, uint64_t refresh_ns)
{
    kc__event_series *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->finish_ns = finish_ns ? finish_ns : DEFAULT_FINISH;
    s->refresh_ns = refresh_ns ? refresh_ns : DEFAULT_REFRESH;
    if (!(s->lru = kc__lru_new(lru_len ? lru_len : DEFAULT_LRU, rec_free))) {
        free(s);
        return NULL;
    }
    return s;
}

void kc__event_series_free(kc__event_series *s)
{
    if (!s)
        return;
    kc__lru_free(s->lru);
    free(s);
}

static int key_of(const kc__event *ev, kc__buf *b)
{
    const char *parts[] = {ev->type,
                           ev->action,
                           ev->reason,
                           ev->api_version,
                           ev->kind,
                           ev->obj_ns,
                           ev->name,
                           ev->uid,
                           ev->rv,
                           ev->field_path,
                           ev->rel_api_version,
                           ev->rel_kind,
                           ev->rel_ns,
                           ev->rel_name,
                           ev->rel_uid,
                           ev->rel_rv,
                           ev->rel_field_path};
    kc__buf_reset(b);
    for (size_t i = 0; i < KC__ARRAY_LEN(parts); i++) {
        /* Unit separator between parts: "a\x1fb" never equals "a" + "b" split elsewhere. */
        if (kc__buf_append_str(b, parts[i]) < 0 || kc__buf_append_char(b, '\x1f') < 0)
            return KC_ENOMEM;
    }
    return kc__buf_append_char(b, ev->has_related ? 'r' : '-');
}

/* A patch of r's series, as a new event built from its first occurrence. */
static kc__event *series_write(const series_rec *r)
{
    kc__event *ev = kc__event_clone(r->first);
    if (!ev || !(ev->event_name = kc__strdup(r->first->event_name))) {
        kc__event_free(ev);
        return NULL;
    }
    ev->patch = true;
    ev->count = r->count;
    ev->series_wall_ns = r->last_wall;
    return ev;
}

static void arm(kc__event_series *s, uint64_t now)
{
    if (!s->next_finish) {
        s->next_finish = now + s->finish_ns;
        s->next_refresh = now + s->refresh_ns;
    }
}

static int observe_new(kc__event_series *s, kc__event *ev, const char *key, kc__rng *rng)
{
    if (!(ev->event_name = kc__event_name_new(ev, &s->last_stamp, rng)))
        return KC_ENOMEM;
    ev->patch = false;
    ev->count = 1;
    ev->first_wall_ns = ev->wall_ns;
    series_rec *r = calloc(1, sizeof *r);
    if (!r || !(r->first = kc__event_clone(ev)) ||
        !(r->first->event_name = kc__strdup(ev->event_name))) {
        if (r)
            kc__event_free(r->first);
        free(r);
        return KC_ENOMEM;
    }
    r->count = 1;
    r->last_mono = ev->mono_ns;
    r->last_wall = ev->wall_ns;
    return kc__lru_put(s->lru, key, r);
}

int kc__event_series_observe(kc__event_series *s, kc__event *ev, kc__rng *rng)
{
    kc__buf key;
    kc__buf_init(&key, 0);
    int rc = key_of(ev, &key);
    if (rc < 0) {
        kc__buf_free(&key);
        return rc;
    }
    arm(s, ev->mono_ns);
    series_rec *r = kc__lru_get(s->lru, key.data);
    if (!r) {
        rc = observe_new(s, ev, key.data, rng);
        kc__buf_free(&key);
        return rc;
    }
    kc__buf_free(&key);
    r->count++;
    r->last_mono = ev->mono_ns;
    r->last_wall = ev->wall_ns;
    if (r->count > 2)
        return 1; /* E9: later occurrences only bump the cache */
    /* The second occurrence: patch the series in, keeping the first note and eventTime. */
    char *note = kc__strdup(r->first->message);
    if (!note || !(ev->event_name = kc__strdup(r->first->event_name))) {
        free(note);
        return KC_ENOMEM;
    }
    free(ev->message);
    ev->message = note;
    ev->first_wall_ns = r->first->wall_ns;
    ev->patch = true;
    ev->count = 2;
    ev->series_wall_ns = ev->wall_ns;
    return 0;
}

typedef struct due_ctx {
    kc__event_series *s;
    uint64_t now;
    bool finish, refresh;
    kc__event **v;
    size_t n, cap;
    int rc;
} due_ctx;

static bool due_one(void *ud, const char *key, void *value)
{
    (void)key;
    due_ctx *c = ud;
    series_rec *r = value;
    bool idle = c->now - r->last_mono >= c->s->finish_ns;
    bool write = r->count > 1 && ((c->finish && idle) || c->refresh);
    if (write && c->rc == 0) {
        kc__event *ev = series_write(r);
        if (!ev || kc__grow(&c->v, &c->cap, c->n + 1, sizeof *c->v, 8) < 0) {
            kc__event_free(ev);
            c->rc = KC_ENOMEM;
            return false; /* keep it: the next check writes it */
        }
        c->v[c->n++] = ev;
    }
    return c->finish && idle && c->rc == 0;
}

int kc__event_series_due(kc__event_series *s, uint64_t now, kc__event ***ret, size_t *ret_n,
                         uint64_t *ret_next)
{
    *ret = NULL;
    *ret_n = 0;
    due_ctx c = {.s = s, .now = now};
    if (s->next_finish) {
        c.finish = now >= s->next_finish;
        c.refresh = now >= s->next_refresh;
    }
    if (c.finish || c.refresh)
        kc__lru_each(s->lru, due_one, &c);
    if (c.finish)
        s->next_finish = now + s->finish_ns;
    if (c.refresh)
        s->next_refresh = now + s->refresh_ns;
    if (kc__lru_len(s->lru) == 0)
        s->next_finish = s->next_refresh = 0; /* nothing cached: no timer until the next event */
    *ret_next =
        s->next_finish ? (s->next_finish < s->next_refresh ? s->next_finish : s->next_refresh) : 0;
    *ret = c.v;
    *ret_n = c.n;
    return c.rc;
}
