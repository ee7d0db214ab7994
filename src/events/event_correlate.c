/*
 * event_correlate.c — client-go's EventCorrelate (spec §6, E3–E6) for the event recorder: what to
 * do with one event before anything is sent. Three stages, in this order (E3):
 *
 *   1. aggregation (E4): the group key is involvedObject (kind, namespace, name, uid, apiVersion)
 *      + type + reason (the source, reportingController and reportingInstance are the recorder's
 *      own, hence constant, in every key here); the local key is the message. A group remembers
 *      its distinct messages while occurrences are less than 600 s apart; the occurrence that
 *      makes 10 distinct messages — and every new one after it — is replaced by an event with the
 *      message "(combined from similar events): <message>", correlated under the group key, so
 *      the combined Event is created once and then patched (one message is forgotten each time,
 *      as client-go's PopAny, keeping the set at 9).
 *   2. dedupe (E5): an event whose full key (the above + fieldPath + message; the group key for a
 *      combined event) was seen before is a repeat: same Event name, firstTimestamp kept, count
 *      = the last count + 1, sent as a patch. Else a new Event "<name>.<hex unix-nanos>" (E1;
 *      a random UUID when that is not a DNS subdomain), count 1.
 *   3. spam filter (E6): a token bucket per involvedObject + type (reason and message are NOT in
 *      the key), full at first (burst 25), refilled one token per 300 s; an event finding no
 *      token is skipped. As in client-go the skipped event has already been counted by stage 2,
 *      so the next patch that gets through carries the full count.
 *
 * Every cache is an LRU of 4096 entries (event_lru.c), so state is bounded. Times come from the
 * event (mono_ns for the windows and the bucket, wall_ns for timestamps and names), which makes
 * the correlator deterministic for tests (tests/unit/test_events_correlate.c).
 * Thread-safety: none (owned by the sender thread).
 */
#include "events/internal.h"

#include "core/internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_LRU         4096
#define DEFAULT_MAX_SIMILAR 10
#define DEFAULT_WINDOW_NS   (600ull * KC__NS_PER_SEC)
#define DEFAULT_BURST       25
#define DEFAULT_REFILL_NS   (300ull * KC__NS_PER_SEC)
#define COMBINED_PREFIX     "(combined from similar events): "
#define KEY_SEP             '\x1f'

typedef struct group_rec {
    char **msgs; /* distinct messages seen (at most max_similar) */
    size_t n;
    uint64_t last_ns;
} group_rec;

typedef struct dedupe_rec {
    int64_t count;
    uint64_t first_wall_ns;
    char *name;
} dedupe_rec;

typedef struct spam_rec {
    uint64_t credit_ns; /* tokens × refill_ns */
    uint64_t last_ns;
} spam_rec;

struct kc__event_correlator {
    kc__event_correlator_opts o;
    kc__lru *groups, *dedupe, *spam;
    uint64_t last_stamp; /* name stamps strictly increase: two events never share a name */
    kc__rng rng;
    size_t max_similar;
};

static void group_free(void *p)
{
    group_rec *g = p;
    for (size_t i = 0; i < g->n; i++)
        free(g->msgs[i]);
    free(g->msgs);
    free(g);
}

static void dedupe_free(void *p)
{
    dedupe_rec *d = p;
    free(d->name);
    free(d);
}

kc__event_correlator *kc__event_correlator_new(const kc__event_correlator_opts *opts)
{
    kc__event_correlator *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (opts)
        c->o = *opts;
    if (!c->o.lru_len)
        c->o.lru_len = DEFAULT_LRU;
    if (!c->o.max_similar)
        c->o.max_similar = DEFAULT_MAX_SIMILAR;
    if (!c->o.similar_window_ns)
        c->o.similar_window_ns = DEFAULT_WINDOW_NS;
    if (!c->o.spam_burst)
        c->o.spam_burst = DEFAULT_BURST;
    if (!c->o.spam_refill_ns)
        c->o.spam_refill_ns = DEFAULT_REFILL_NS;
    kc__rng_seed_auto(&c->rng);
    c->groups = kc__lru_new(c->o.lru_len, group_free);
    c->dedupe = kc__lru_new(c->o.lru_len, dedupe_free);
    c->spam = kc__lru_new(c->o.lru_len, free);
    if (!c->groups || !c->dedupe || !c->spam) {
        kc__event_correlator_free(c);
        return NULL;
    }
    return c;
}

void kc__event_correlator_free(kc__event_correlator *c)
{
    if (!c)
        return;
    kc__lru_free(c->groups);
    kc__lru_free(c->dedupe);
    kc__lru_free(c->spam);
    free(c);
}

/* Append the parts, each followed by KEY_SEP (strings never hold that byte in practice; a part
 * that did could only merge two keys that then share an Event, never lose one). */
static int key_build(kc__buf *b, const char *const *parts, size_t n)
{
    kc__buf_reset(b);
    for (size_t i = 0; i < n; i++)
        if (kc__buf_append_str(b, parts[i]) < 0 || kc__buf_append_char(b, KEY_SEP) < 0)
            return KC_ENOMEM;
    return 0;
}

/* ---- stage 1: aggregation ---------------------------------------------------------------- */

static bool group_has(const group_rec *g, const char *msg)
{
    for (size_t i = 0; i < g->n; i++)
        if (strcmp(g->msgs[i], msg) == 0)
            return true;
    return false;
}

/* Aggregate ev within its group (key in gkey). On return *ret_combined tells whether ev now is the
 * combined event (message replaced; correlate it under the group key). */
static int aggregate(kc__event_correlator *c, kc__event *ev, const char *gkey, bool *ret_combined)
{
    *ret_combined = false;
    group_rec *g = kc__lru_get(c->groups, gkey);
    if (!g) {
        if (!(g = calloc(1, sizeof *g)) || !(g->msgs = calloc(c->o.max_similar, sizeof *g->msgs))) {
            free(g);
            return KC_ENOMEM;
        }
        if (kc__lru_put(c->groups, gkey, g) < 0)
            return KC_ENOMEM;
    } else if (ev->mono_ns - g->last_ns > c->o.similar_window_ns) {
        for (size_t i = 0; i < g->n; i++)
            free(g->msgs[i]);
        g->n = 0; /* E4: occurrences further apart than the window start over */
    }
    g->last_ns = ev->mono_ns;
    if (!group_has(g, ev->message)) {
        char *m = kc__strdup(ev->message);
        if (!m)
            return KC_ENOMEM;
        g->msgs[g->n++] = m;
    }
    if (g->n < c->o.max_similar)
        return 0;
    /* The set is full: forget one message (client-go PopAny) and emit the combined event. */
    free(g->msgs[0]);
    memmove(g->msgs, g->msgs + 1, (g->n - 1) * sizeof *g->msgs);
    g->n--;
    size_t plen = sizeof COMBINED_PREFIX - 1, mlen = strlen(ev->message);
    char *m = malloc(plen + mlen + 1);
    if (!m)
        return KC_ENOMEM;
    memcpy(m, COMBINED_PREFIX, plen);
    memcpy(m + plen, ev->message, mlen + 1);
    free(ev->message);
    ev->message = m;
    ev->aggregated = true;
    *ret_combined = true;
    return 0;
}

/* ---- stage 2: dedupe ---------------------------------------------------------------------- */

char *kc__event_name_new(const kc__event *ev, uint64_t *last_stamp, kc__rng *rng)
{
    uint64_t stamp = ev->wall_ns > *last_stamp ? ev->wall_ns : *last_stamp + 1;
    *last_stamp = stamp;
    char buf[300];
    int n = snprintf(buf, sizeof buf, "%s.%" PRIx64, ev->name, stamp);
    if (n < 0 || (size_t)n >= sizeof buf || !kc__is_dns1123_subdomain(buf, (size_t)n)) {
        uint64_t a = kc__rng_next(rng), b = kc__rng_next(rng);
        snprintf(buf, sizeof buf,
                 "%08" PRIx64 "-%04" PRIx64 "-4%03" PRIx64 "-%04" PRIx64 "-%012" PRIx64, a >> 32,
                 (a >> 16) & 0xffff, a & 0xfff, ((b >> 48) & 0x3fff) | (uint64_t)0x8000,
                 b & (uint64_t)0xffffffffffff);
    }
    return kc__strdup(buf);
}

static char *fresh_name(kc__event_correlator *c, const kc__event *ev)
{
    return kc__event_name_new(ev, &c->last_stamp, &c->rng);
}

static int dedupe(kc__event_correlator *c, kc__event *ev, const char *key)
{
    dedupe_rec *d = kc__lru_get(c->dedupe, key);
    if (!(ev->key = kc__strdup(key)))
        return KC_ENOMEM;
    if (d && d->count > 0) {
        ev->patch = true;
        ev->count = d->count + 1;
        ev->first_wall_ns = d->first_wall_ns;
        if (!(ev->event_name = kc__strdup(d->name)))
            return KC_ENOMEM;
        d->count = ev->count;
        return 0;
    }
    ev->patch = false;
    ev->count = 1;
    ev->first_wall_ns = ev->wall_ns;
    if (!(ev->event_name = fresh_name(c, ev)))
        return KC_ENOMEM;
    if (!(d = calloc(1, sizeof *d)) || !(d->name = kc__strdup(ev->event_name))) {
        free(d);
        return KC_ENOMEM;
    }
    d->count = 1;
    d->first_wall_ns = ev->first_wall_ns;
    return kc__lru_put(c->dedupe, key, d);
}

/* ---- stage 3: spam filter ----------------------------------------------------------------- */

/* true when the bucket of key has no token for an event at now_ns. */
static int spam_filtered(kc__event_correlator *c, const char *key, uint64_t now_ns)
{
    if (c->o.spam_burst < 0)
        return 0;
    uint64_t cap = (uint64_t)c->o.spam_burst * c->o.spam_refill_ns;
    spam_rec *s = kc__lru_get(c->spam, key);
    if (!s) {
        if (!(s = calloc(1, sizeof *s)))
            return KC_ENOMEM;
        s->credit_ns = cap;
        s->last_ns = now_ns;
        if (kc__lru_put(c->spam, key, s) < 0)
            return KC_ENOMEM;
    } else if (now_ns > s->last_ns) {
        uint64_t add = now_ns - s->last_ns;
        s->credit_ns = add >= cap - s->credit_ns ? cap : s->credit_ns + add;
        s->last_ns = now_ns;
    }
    if (s->credit_ns < c->o.spam_refill_ns)
        return 1;
    s->credit_ns -= c->o.spam_refill_ns;
    return 0;
}

int kc__event_correlate(kc__event_correlator *c, kc__event *ev)
{
    kc__buf b;
    kc__buf_init(&b, 0);
    bool combined = false;
    const char *group[] = {ev->kind,        ev->obj_ns, ev->name,  ev->uid,
                           ev->api_version, ev->type,   ev->reason};
    int rc = key_build(&b, group, KC__ARRAY_LEN(group));
    if (rc == 0)
        rc = aggregate(c, ev, b.data, &combined);
    if (rc == 0 && !combined) {
        const char *full[] = {ev->kind,        ev->obj_ns, ev->name,   ev->field_path, ev->uid,
                              ev->api_version, ev->type,   ev->reason, ev->message};
        rc = key_build(&b, full, KC__ARRAY_LEN(full));
    }
    if (rc == 0)
        rc = dedupe(c, ev, b.data);
    if (rc == 0) {
        const char *spam[] = {ev->kind, ev->obj_ns, ev->name, ev->uid, ev->api_version, ev->type};
        rc = key_build(&b, spam, KC__ARRAY_LEN(spam));
        if (rc == 0)
            rc = spam_filtered(c, b.data, ev->mono_ns);
    }
    kc__buf_free(&b);
    return rc;
}

int kc__event_spam(kc__event_correlator *c, const kc__event *ev)
{
    kc__buf b;
    kc__buf_init(&b, 0);
    const char *spam[] = {ev->kind, ev->obj_ns, ev->name, ev->uid, ev->api_version, ev->type};
    int rc = key_build(&b, spam, KC__ARRAY_LEN(spam));
    if (rc == 0)
        rc = spam_filtered(c, b.data, ev->mono_ns);
    kc__buf_free(&b);
    return rc;
}

void kc__event_correlator_sent(kc__event_correlator *c, const kc__event *ev, const char *name,
                               int64_t count)
{
    if (!ev->key || !name)
        return;
    dedupe_rec *d = kc__lru_get(c->dedupe, ev->key);
    if (d) {
        if (strcmp(d->name, name) != 0) {
            char *n = kc__strdup(name);
            if (!n)
                return;
            free(d->name);
            d->name = n;
        }
        if (count > d->count)
            d->count = count;
        return;
    }
    if (!(d = calloc(1, sizeof *d)) || !(d->name = kc__strdup(name))) {
        free(d);
        return;
    }
    d->count = count;
    d->first_wall_ns = ev->first_wall_ns;
    kc__lru_put(c->dedupe, ev->key, d);
}
