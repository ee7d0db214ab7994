/*
 * hub.c — watch fan-out hub of the embedded API server.
 *
 * Design
 * - One mutex per hub guards everything in it: the topics (one per resource_key, each a list of
 *   its watchers) and every watcher's queue and flags. Each watcher has its own condition
 *   variable (CLOCK_MONOTONIC) used with the hub mutex, so a publish wakes only the watchers it
 *   queued for. One lock means no lock order inside the hub; publish is O(watchers offered the
 *   event: the key's unpinned ones and those pinned to the event's values).
 * - A watcher's queue is a ring of {event, due time} that grows by doubling up to the bound.
 *   When a publish finds it full the watcher is marked overflowed, its queued events are released
 *   at once (memory stays bounded) and next() returns KC_ETOOLARGE: the stream ends and the
 *   client resumes from the last RV it saw, which the server's history can serve.
 * - The filter runs at publish time under the hub lock and picks the type and object to send.
 * - Pinned watchers (kube-apiserver's watch cache "triggers"): a watcher whose selector pins a
 *   field (spec.nodeName=X) sits in the topic's index by value (hub_index.c) instead of the loose
 *   chain; a publish locates that field once in the new and old object (seeding the memo the
 *   filters read), then offers the event to the loose watchers and to the two buckets of those
 *   values only — not to the other nodes' agents, whose filters would have said no. A value that
 *   cannot be compared as it stands (a string with escapes) offers it to every pinned watcher.
 *   The filter still decides for every watcher offered the event, so what a watcher receives
 *   (the ADDED / DELETED of an object moving into / out of its selection included) is what the
 *   full scan gave; progress (bookmarks) counts the skipped events as filtered out, as before.
 * - Watch delay: one delay is drawn per published event (outside the hub lock, from the faults
 *   PRNG) and each watcher's entry is due at max(previous due of that watcher, now + delay), so
 *   order within a stream is preserved. next() sleeps until the head is due or the caller's
 *   deadline, whichever is first — a timed wait, not polling.
 * - Stall fault: the hub registers as the faults change listener and keeps its own copy of the
 *   flag; when the stall is lifted it wakes every watcher. While stalled, queued events stay
 *   queued (not lost) and may overflow the bound.
 * - Progress (bookmarks): the hub remembers the RV of the last event published on any topic.
 *   Storage publishes in RV order under its lock, and a publish queues for every watcher before
 *   that RV is recorded (both under the hub lock), so a watcher with an empty queue has been
 *   offered every event up to it: filtered out, or queued and since taken. With events queued,
 *   its progress stops just before the first of them (held back by a delay or the stall fault).
 * - Lifetime: the hub is destroyed when kc__hub_free has been called and its last watcher is
 *   freed, so a watcher may outlive kc__hub_free (its next() returns KC_ESTOPPED).
 * - Non-blocking owners (event-loop servers): kc__watcher_take pops every due event at once and
 *   kc__watcher_arm records that the owner is going to sleep. An armed watcher is woken exactly
 *   once through its wake callback (under the hub lock) when an event is queued, it is closed or
 *   overflowed, the stall is lifted, or its wake time passes. Wake times are kept by one hub
 *   timer thread, started at the first arm, which sleeps until the earliest armed wake time
 *   (an arm with an earlier time signals it). Because wakes happen under the hub lock and
 *   kc__watcher_free unlinks under it, a callback never runs after its watcher was freed.
 * Lock order: storage lock → faults notify lock → hub lock → (wake callback's own lock, e.g.
 * libmicrohttpd's connection lock); the faults value lock is taken only with the hub lock
 * released. Object references are taken and dropped under the hub lock
 * (kc_obj_unref is an atomic decrement plus, at most, a free).
 */
#include "server/storage/hub.h"

#include "core/internal.h"
#include "server/storage/hub_index.h"

#include <stdlib.h>
#include <string.h>

#define HUB_DEFAULT_BOUND ((size_t)100000)
#define RING_INITIAL      16

typedef struct entry {
    kc__hub_event ev;
    uint64_t due_ns;
} entry;

typedef struct topic {
    const void *key;
    kc__watcher *head; /* every watcher (timer, stall, close) */
    struct topic *next;
    /* publish visits: the unpinned watchers, and those of the event's values in the index */
    kc__pin *loose;
    kc__pin_index pinned;
    char *pointer; /* the field the index is on (the first pinned watcher's), while pinned.n */
} topic;

struct kc__watcher {
    kc__hub *hub;
    topic *topic; /* NULL once unlinked */
    kc__watcher *prev, *next;
    pthread_cond_t cond;
    kc__watch_filter_fn filter;
    void *filter_ud;
    kc__pin pin; /* in topic->loose or topic->pinned */
    entry *ring;
    size_t cap, head, count;
    uint64_t last_due_ns;
    kc__watcher_wake_fn wake_fn;
    void *wake_ud;
    uint64_t wake_at_ns;   /* while armed */
    uint64_t last_wake_ns; /* when the owner was last woken for an event (coalescing) */
    size_t last_batch;     /* events the owner took after that wake */
    bool batch_open;       /* the next non-empty take starts a new batch */
    bool closed, overflowed, armed;
};

struct kc__hub {
    pthread_mutex_t mu;
    kc__faults *faults;
    size_t bound;
    topic *topics;
    size_t n_watchers; /* allocated watchers, linked or not */
    uint64_t fault_seq;
    uint64_t rv; /* RV of the last event published (any topic): all up to it were offered */
    bool stalled;
    bool freed; /* kc__hub_free called: destroy with the last watcher */
    /* timer thread of armed watchers */
    pthread_cond_t timer_cond;
    pthread_t timer;
    uint64_t timer_target; /* the wake time the timer sleeps until */
    uint64_t coalesce_ns;  /* at most one event wake per watcher per this long ... */
    size_t coalesce_min;   /* ... once its last batch had at least this many events */
    bool timer_started, timer_stop;
};

/* ---- helpers (hub lock held) ----------------------------------------------------------------- */

void kc__hub_event_release(kc__hub_event *ev)
{
    if (!ev)
        return;
    kc_obj_unref(ev->obj);
    kc_obj_unref(ev->old);
    memset(ev, 0, sizeof *ev);
}

static void drop_queue(kc__watcher *w)
{
    for (size_t i = 0; i < w->count; i++)
        kc__hub_event_release(&w->ring[(w->head + i) % w->cap].ev);
    free(w->ring);
    w->ring = NULL;
    w->cap = w->head = w->count = 0;
}

/* Wake an armed (non-blocking) owner once. */
static void wake_locked(kc__watcher *w)
{
    if (!w->armed)
        return;
    w->armed = false;
    if (w->wake_fn)
        w->wake_fn(w->wake_ud);
}

/* An event was queued for an empty watcher (due at due_ns). Wake its armed owner now, or — when it
 * was woken for events less than coalesce_ns ago — let the timer wake it at last wake +
 * coalesce_ns, so a busy stream takes one batch per period instead of one wake per event. */
static void event_wake_locked(kc__hub *hub, kc__watcher *w, uint64_t due_ns)
{
    if (!w->armed)
        return;
    uint64_t at = w->last_wake_ns + hub->coalesce_ns;
    if (due_ns > at)
        at = due_ns;
    if (!hub->coalesce_ns || w->last_batch < hub->coalesce_min || at <= kc__now_ns()) {
        w->last_wake_ns = kc__now_ns();
        w->batch_open = true;
        wake_locked(w);
        return;
    }
    if (at < w->wake_at_ns) {
        w->wake_at_ns = at;
        if (at < hub->timer_target) {
            hub->timer_target = at;
            pthread_cond_signal(&hub->timer_cond);
        }
    }
}

static void close_locked(kc__watcher *w)
{
    if (w->closed)
        return;
    w->closed = true;
    drop_queue(w);
    pthread_cond_broadcast(&w->cond);
    wake_locked(w);
}

static void unlink_locked(kc__hub *hub, kc__watcher *w)
{
    topic *t = w->topic;
    if (!t)
        return;
    if (w->prev)
        w->prev->next = w->next;
    else
        t->head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    w->prev = w->next = NULL;
    w->topic = NULL;
    if (w->pin.bucket) {
        kc__pin_index_remove(&t->pinned, &w->pin);
        if (!t->pinned.n) {
            kc__pin_index_free(&t->pinned);
            free(t->pointer);
            t->pointer = NULL;
        }
    } else {
        kc__pin_unlink(&t->loose, &w->pin);
    }
    if (!t->head) {
        for (topic **pp = &hub->topics; *pp; pp = &(*pp)->next)
            if (*pp == t) {
                *pp = t->next;
                break;
            }
        free(t);
    }
}

static topic *find_topic(kc__hub *hub, const void *key)
{
    for (topic *t = hub->topics; t; t = t->next)
        if (t->key == key)
            return t;
    return NULL;
}

static bool ring_grow(kc__watcher *w, size_t bound)
{
    size_t ncap = kc__grow_cap(w->cap, w->cap + 1, sizeof(entry), RING_INITIAL);
    if (!ncap || ncap > bound)
        ncap = bound;
    entry *n = malloc(ncap * sizeof *n);
    if (!n)
        return false;
    for (size_t i = 0; i < w->count; i++)
        n[i] = w->ring[(w->head + i) % w->cap];
    free(w->ring);
    w->ring = n;
    w->cap = ncap;
    w->head = 0;
    return true;
}

static void destroy_hub(kc__hub *hub)
{
    while (hub->topics) {
        topic *t = hub->topics;
        hub->topics = t->next;
        kc__pin_index_free(&t->pinned);
        free(t->pointer);
        free(t);
    }
    pthread_cond_destroy(&hub->timer_cond);
    pthread_mutex_destroy(&hub->mu);
    free(hub);
}

/* Timer thread: wake armed watchers whose wake time passed; sleep until the earliest other. */
static void *timer_main(void *arg)
{
    kc__hub *hub = arg;
    pthread_mutex_lock(&hub->mu);
    while (!hub->timer_stop) {
        uint64_t now = kc__now_ns(), next = KC__DEADLINE_NEVER;
        for (topic *t = hub->topics; t; t = t->next)
            for (kc__watcher *w = t->head; w; w = w->next) {
                if (!w->armed)
                    continue;
                if (w->wake_at_ns <= now) {
                    if (w->count) {
                        w->last_wake_ns = now;
                        w->batch_open = true;
                    }
                    wake_locked(w);
                } else if (w->wake_at_ns < next)
                    next = w->wake_at_ns;
            }
        hub->timer_target = next;
        kc__cond_wait_until(&hub->timer_cond, &hub->mu, next);
    }
    pthread_mutex_unlock(&hub->mu);
    return NULL;
}

/* Faults listener: track the stall flag; wake everyone when it is lifted. */
static void on_faults(void *ud, uint64_t seq, const kc_server_faults *now)
{
    kc__hub *hub = ud;
    pthread_mutex_lock(&hub->mu);
    if (seq > hub->fault_seq) {
        hub->fault_seq = seq;
        bool was = hub->stalled;
        hub->stalled = now->watch_stall;
        if (was && !hub->stalled)
            for (topic *t = hub->topics; t; t = t->next)
                for (kc__watcher *w = t->head; w; w = w->next) {
                    pthread_cond_signal(&w->cond);
                    wake_locked(w);
                }
    }
    pthread_mutex_unlock(&hub->mu);
}

/* ---- hub ------------------------------------------------------------------------------------- */

kc__hub *kc__hub_new(kc__faults *faults, size_t queue_bound)
{
    kc__hub *hub = calloc(1, sizeof *hub);
    if (!hub)
        return NULL;
    if (pthread_mutex_init(&hub->mu, NULL)) {
        free(hub);
        return NULL;
    }
    if (kc__cond_init_monotonic(&hub->timer_cond)) {
        pthread_mutex_destroy(&hub->mu);
        free(hub);
        return NULL;
    }
    hub->timer_target = KC__DEADLINE_NEVER;
    hub->faults = faults;
    hub->bound = queue_bound ? queue_bound : HUB_DEFAULT_BOUND;
    if (faults) {
        kc_server_faults now;
        hub->fault_seq = kc__faults_set_listener(faults, on_faults, hub, &now);
        hub->stalled = now.watch_stall;
    }
    return hub;
}

void kc__hub_close_all(kc__hub *hub)
{
    if (!hub)
        return;
    pthread_mutex_lock(&hub->mu);
    for (topic *t = hub->topics; t; t = t->next)
        for (kc__watcher *w = t->head; w; w = w->next)
            close_locked(w);
    pthread_mutex_unlock(&hub->mu);
}

void kc__hub_free(kc__hub *hub)
{
    if (!hub)
        return;
    if (hub->faults)
        kc__faults_set_listener(hub->faults, NULL, NULL, NULL);
    pthread_mutex_lock(&hub->mu);
    hub->freed = true;
    /* Unlink every watcher: they stay allocated (owned by their streams) but see KC_ESTOPPED. */
    while (hub->topics) {
        kc__watcher *w = hub->topics->head;
        close_locked(w);
        unlink_locked(hub, w); /* frees the topic with its last watcher */
    }
    bool last = hub->n_watchers == 0;
    bool join = hub->timer_started;
    hub->timer_stop = true;
    pthread_cond_signal(&hub->timer_cond);
    pthread_mutex_unlock(&hub->mu);
    if (join)
        pthread_join(hub->timer, NULL);
    if (last)
        destroy_hub(hub);
}

size_t kc__hub_watchers(kc__hub *hub)
{
    pthread_mutex_lock(&hub->mu);
    size_t n = 0;
    for (topic *t = hub->topics; t; t = t->next)
        for (kc__watcher *w = t->head; w; w = w->next)
            n += !w->closed && !w->overflowed;
    pthread_mutex_unlock(&hub->mu);
    return n;
}

/* Link w into t: the index when it pins a value of t's indexed field (the first pinned watcher
 * chooses the field), else the loose chain. false on ENOMEM. */
static bool link_locked(topic *t, kc__watcher *w, const char *pointer, const char *value)
{
    w->pin.owner = w;
    if (pointer && value && (!t->pinned.n || strcmp(t->pointer, pointer) == 0)) {
        if (!t->pinned.n && !(t->pointer = kc__strdup(pointer)))
            return false;
        if (kc__pin_index_add(&t->pinned, &w->pin, value, strlen(value)) == 0)
            return true;
        if (!t->pinned.n) {
            free(t->pointer);
            t->pointer = NULL;
        }
        return false;
    }
    kc__pin_push(&t->loose, &w->pin);
    return true;
}

kc__watcher *kc__hub_subscribe(kc__hub *hub, const void *resource_key, kc__watch_filter_fn filter,
                               void *filter_ud)
{
    return kc__hub_subscribe_pinned(hub, resource_key, filter, filter_ud, NULL, NULL);
}

kc__watcher *kc__hub_subscribe_pinned(kc__hub *hub, const void *resource_key,
                                      kc__watch_filter_fn filter, void *filter_ud,
                                      const char *pointer, const char *value)
{
    kc__watcher *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    if (kc__cond_init_monotonic(&w->cond)) {
        free(w);
        return NULL;
    }
    w->hub = hub;
    w->filter = filter;
    w->filter_ud = filter_ud;
    pthread_mutex_lock(&hub->mu);
    topic *t = find_topic(hub, resource_key);
    bool made = false;
    if (!t && !hub->freed) {
        t = calloc(1, sizeof *t);
        if (t) {
            t->key = resource_key;
            t->next = hub->topics;
            hub->topics = t;
            made = true;
        }
    }
    if (hub->freed) {
        w->closed = true; /* subscribing to a freed hub: a closed watcher */
    } else if (!t || !link_locked(t, w, pointer, value)) {
        if (made) {
            hub->topics = t->next;
            free(t);
        }
        pthread_mutex_unlock(&hub->mu);
        pthread_cond_destroy(&w->cond);
        free(w);
        return NULL;
    } else {
        w->topic = t;
        w->next = t->head;
        if (t->head)
            t->head->prev = w;
        t->head = w;
    }
    hub->n_watchers++;
    pthread_mutex_unlock(&hub->mu);
    return w;
}

/* Offer ev to w (hub lock held): its filter decides; queue it due at due. */
static void offer_locked(kc__hub *hub, kc__watcher *w, const kc__hub_event *ev, uint64_t due)
{
    if (w->closed || w->overflowed)
        return;
    kc_watch_type type = ev->type;
    kc_obj *obj = ev->obj;
    if (w->filter) {
        type = w->filter(w->filter_ud, ev, &obj);
        if (!type)
            return;
    }
    if (w->count == hub->bound || (w->count == w->cap && !ring_grow(w, hub->bound))) {
        w->overflowed = true;
        drop_queue(w);
        pthread_cond_signal(&w->cond);
        wake_locked(w);
        return;
    }
    entry *e = &w->ring[(w->head + w->count) % w->cap];
    w->count++;
    e->ev.type = type;
    e->ev.obj = kc_obj_ref(obj);
    e->ev.old = kc_obj_ref(ev->old);
    e->ev.rv = ev->rv;
    e->ev.memo = NULL;
    if (due < w->last_due_ns)
        e->due_ns = w->last_due_ns;
    else
        e->due_ns = w->last_due_ns = due;
    /* Wake only on empty → non-empty: with events already queued the reader either is not
     * waiting, was signalled already, or sleeps until the (earlier) head is due. */
    if (w->count == 1) {
        pthread_cond_signal(&w->cond);
        event_wake_locked(hub, w, due);
    }
}

static void offer_chain(kc__hub *hub, kc__pin *p, const kc__hub_event *ev, uint64_t due)
{
    for (; p; p = p->next)
        offer_locked(hub, p->owner, ev, due);
}

/* The indexed field of one of ev's objects (slot 0 obj, 1 old), located once and put in the
 * memo the filters read (kc__ev_memo: their selectors find it there). false when its value
 * cannot be compared as it stands (a string with escapes). */
static bool index_value(const topic *t, const kc_obj *o, kc__ev_memo *memo, int slot,
                        const char **val, size_t *len)
{
    const char *raw = NULL;
    size_t rl = 0;
    if (kc_obj_get_raw(o, t->pointer, &raw, &rl, NULL) < 0)
        raw = NULL, rl = 0;
    memo->f[slot][0] = (kc__ev_field){t->pointer, raw, rl};
    memo->n[slot] = 1;
    return kc__pin_value_of(raw, rl, val, len);
}

/* The values of ev's new and old objects in t's index (the memo seeded before any filter runs). */
typedef struct ev_values {
    const char *v[2];
    size_t l[2];
    bool two, ok;
} ev_values;

static void values_of(const topic *t, kc__hub_event *ev, ev_values *vs)
{
    vs->two = ev->old != NULL;
    vs->ok = index_value(t, ev->obj, ev->memo, 0, &vs->v[0], &vs->l[0]);
    if (vs->ok && vs->two)
        vs->ok = index_value(t, ev->old, ev->memo, 1, &vs->v[1], &vs->l[1]);
}

/* The pinned watchers ev may concern: those of its new and old objects' values (an object
 * entering or leaving a watcher's selection concerns it, as kube-apiserver's watch cache triggers
 * do), or every one when a value cannot be compared as it stands. */
static void offer_pinned(kc__hub *hub, topic *t, const ev_values *vs, kc__hub_event *ev,
                         uint64_t due)
{
    if (!vs->ok) {
        for (size_t i = 0; i < t->pinned.tab.cap; i++)
            offer_chain(hub, kc__pin_index_at(&t->pinned, i), ev, due);
        return;
    }
    offer_chain(hub, kc__pin_index_find(&t->pinned, vs->v[0], vs->l[0]), ev, due);
    if (vs->two && (vs->l[1] != vs->l[0] || memcmp(vs->v[0], vs->v[1], vs->l[0]) != 0))
        offer_chain(hub, kc__pin_index_find(&t->pinned, vs->v[1], vs->l[1]), ev, due);
}

void kc__hub_publish(kc__hub *hub, const void *resource_key, const kc__hub_event *event)
{
    /* one memo of located fields for every filter of this event (watchers' field selectors) */
    kc__ev_memo memo;
    memo.n[0] = memo.n[1] = 0;
    kc__hub_event evm = *event;
    evm.memo = &memo;
    uint64_t delay = hub->faults ? kc__faults_watch_delay_ns(hub->faults) : 0;
    uint64_t due = kc__now_ns() + delay;
    pthread_mutex_lock(&hub->mu);
    topic *t = find_topic(hub, resource_key);
    if (t) {
        ev_values vs;
        bool pinned = t->pinned.n != 0;
        if (pinned)
            values_of(t, &evm, &vs);
        offer_chain(hub, t->loose, &evm, due);
        if (pinned)
            offer_pinned(hub, t, &vs, &evm, due);
    }
    hub->rv = evm.rv;
    pthread_mutex_unlock(&hub->mu);
}

void kc__hub_reset_rv(kc__hub *hub, uint64_t rv)
{
    pthread_mutex_lock(&hub->mu);
    hub->rv = rv;
    pthread_mutex_unlock(&hub->mu);
}

uint64_t kc__watcher_progress(kc__watcher *w)
{
    kc__hub *hub = w->hub;
    pthread_mutex_lock(&hub->mu);
    uint64_t rv = 0;
    if (w->closed || w->overflowed)
        rv = 0; /* its queue was dropped: it may have missed events */
    else if (w->count)
        rv = w->ring[w->head].ev.rv - 1;
    else
        rv = hub->rv;
    pthread_mutex_unlock(&hub->mu);
    return rv;
}

/* ---- watcher --------------------------------------------------------------------------------- */

/* With the hub lock held: move up to max events due by now from the head of w's queue into evs
 * (the caller takes over their references). Returns how many. */
static size_t pop_due_locked(kc__watcher *w, uint64_t now, kc__hub_event *evs, size_t max)
{
    size_t n = 0;
    while (n < max && w->count) {
        entry *e = &w->ring[w->head];
        if (e->due_ns > now)
            break;
        evs[n++] = e->ev;
        memset(&e->ev, 0, sizeof e->ev);
        w->head = w->head + 1 == w->cap ? 0 : w->head + 1;
        w->count--;
    }
    return n;
}

int kc__watcher_next(kc__watcher *w, kc__hub_event *ret, int64_t timeout_ms)
{
    kc__hub *hub = w->hub;
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    int rc;
    pthread_mutex_lock(&hub->mu);
    for (;;) {
        if (w->closed) {
            rc = KC_ESTOPPED;
            break;
        }
        if (w->overflowed) {
            rc = KC_ETOOLARGE;
            break;
        }
        uint64_t now = kc__now_ns();
        uint64_t wake = deadline;
        if (w->count && !hub->stalled) {
            if (pop_due_locked(w, now, ret, 1)) {
                rc = 0;
                break;
            }
            if (w->ring[w->head].due_ns < wake)
                wake = w->ring[w->head].due_ns;
        }
        if (deadline != KC__DEADLINE_NEVER && now >= deadline) {
            rc = KC_ETIMEOUT;
            break;
        }
        kc__cond_wait_until(&w->cond, &hub->mu, wake);
    }
    pthread_mutex_unlock(&hub->mu);
    return rc;
}

void kc__watcher_set_wake(kc__watcher *w, kc__watcher_wake_fn fn, void *ud)
{
    pthread_mutex_lock(&w->hub->mu);
    w->wake_fn = fn;
    w->wake_ud = ud;
    pthread_mutex_unlock(&w->hub->mu);
}

int kc__watcher_take(kc__watcher *w, kc__hub_event *evs, size_t max, size_t *ret_n)
{
    kc__hub *hub = w->hub;
    size_t n = 0;
    int rc = 0;
    pthread_mutex_lock(&hub->mu);
    if (w->closed) {
        rc = KC_ESTOPPED;
    } else if (w->overflowed) {
        rc = KC_ETOOLARGE;
    } else if (w->count && !hub->stalled) {
        n = pop_due_locked(w, kc__now_ns(), evs, max);
        if (w->batch_open && n) {
            w->last_batch = n;
            w->batch_open = false;
        } else if (n) {
            w->last_batch += n;
        }
    }
    pthread_mutex_unlock(&hub->mu);
    *ret_n = n;
    return rc;
}

int kc__watcher_arm(kc__watcher *w, uint64_t wake_at_ns)
{
    kc__hub *hub = w->hub;
    int rc = 0;
    pthread_mutex_lock(&hub->mu);
    if (w->closed || w->overflowed) {
        rc = 1;
    } else if (w->count && !hub->stalled && w->ring[w->head].due_ns <= kc__now_ns()) {
        rc = 1;
    } else {
        if (w->count && !hub->stalled && w->ring[w->head].due_ns < wake_at_ns)
            wake_at_ns = w->ring[w->head].due_ns;
        if ((wake_at_ns != KC__DEADLINE_NEVER || hub->coalesce_ns) && !hub->timer_started &&
            !hub->timer_stop) {
            if (pthread_create(&hub->timer, NULL, timer_main, hub) != 0)
                rc = KC_ENOMEM;
            else
                hub->timer_started = true;
        }
        if (rc == 0) {
            w->armed = true;
            w->wake_at_ns = wake_at_ns;
            if (wake_at_ns < hub->timer_target) {
                hub->timer_target = wake_at_ns;
                pthread_cond_signal(&hub->timer_cond);
            }
        }
    }
    pthread_mutex_unlock(&hub->mu);
    return rc;
}

void kc__hub_set_coalesce(kc__hub *hub, uint64_t ns, size_t min_batch)
{
    pthread_mutex_lock(&hub->mu);
    hub->coalesce_ns = ns;
    hub->coalesce_min = min_batch;
    pthread_mutex_unlock(&hub->mu);
}

size_t kc__watcher_queued(kc__watcher *w)
{
    pthread_mutex_lock(&w->hub->mu);
    size_t n = w->count;
    pthread_mutex_unlock(&w->hub->mu);
    return n;
}

void kc__watcher_close(kc__watcher *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->hub->mu);
    close_locked(w);
    pthread_mutex_unlock(&w->hub->mu);
}

void kc__watcher_free(kc__watcher *w)
{
    if (!w)
        return;
    kc__hub *hub = w->hub;
    pthread_mutex_lock(&hub->mu);
    w->wake_fn = NULL; /* freeing: no more callbacks */
    close_locked(w);
    unlink_locked(hub, w);
    hub->n_watchers--;
    bool last = hub->freed && hub->n_watchers == 0;
    pthread_mutex_unlock(&hub->mu);
    pthread_cond_destroy(&w->cond);
    free(w);
    if (last)
        destroy_hub(hub);
}
