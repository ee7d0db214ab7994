/*
 * workqueue/internal.h — the work queue's internals (prefix kc__): its key records, the delay
 * heap, the rate limiter and the metrics, shared by the files of src/workqueue/. Not installed.
 * The work queue uses core only.
 *
 * The work queue (workqueue.c, wq_table.c, wq_delay.c, wq_limit.c, wq_metrics.c) keeps ONE record
 * per key it knows (kc__wq_ent, the key interned inline), found through one hash table. The record
 * carries the key's whole state as flags — dirty, processing, queued (in the FIFO), waiting (in
 * the delay heap) — plus the rate limiter's failure count and the metrics' timestamps, so an add,
 * get, done or a delayed add is one hash lookup and no allocation once the record exists. A record
 * is released when no flag is set and its failure count is 0. Everything is behind q->mu (one lock
 * per queue; see docs/controller.md, "Work queue").
 *
 * Priorities (wq_prio.c): queued records sit in one doubly linked FIFO per priority level, the
 * levels kept in an array sorted by priority (highest first; a level exists while it holds a
 * record), so add, get and a priority raise are O(1) plus a search among the few levels in use.
 */
#ifndef KC_WORKQUEUE_INTERNAL_H
#define KC_WORKQUEUE_INTERNAL_H

#include "core/internal.h"
#include "kcache/workqueue.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* ---- key records ----------------------------------------------------------------------------- */

enum {
    KC__WQ_DIRTY = 1u << 0,      /* W1: needs processing (queued, or re-added while processing) */
    KC__WQ_PROCESSING = 1u << 1, /* W5: handed out by get, not yet done */
    KC__WQ_QUEUED = 1u << 2,     /* in the FIFO (implies DIRTY and not PROCESSING: W1) */
    KC__WQ_WAITING = 1u << 3,    /* in the delay heap (D1–D3) */
};

/* Failure counts saturate here (24 bits beside the flags keep the record header at 36 bytes). */
#define KC__WQ_FAILURES_MAX 0xffffffu

typedef struct kc__wq_ent {
    struct kc__wq_ent *hnext; /* hash chain */
    union {
        struct kc__wq_ent *qnext; /* FIFO link while QUEUED */
        uint64_t t_start;         /* get time while PROCESSING (never QUEUED then) */
    } u;
    struct kc__wq_ent *qprev; /* FIFO back link while QUEUED (a priority raise unlinks) */
    uint32_t heap_idx;        /* slot in the delay heap while WAITING */
    uint32_t flags : 8;       /* KC__WQ_* */
    uint32_t failures : 24;   /* R2: exponential backoff count (num_requeues), saturating */
    int32_t priority;         /* while DIRTY: the highest priority it was added with (C12) */
    char key[];               /* NUL-terminated; in a named queue followed by the 8 bytes of the
                                 time the key entered dirty (queue duration, M2): kc__wq_t_add */
} kc__wq_ent;

/* The time e's key entered dirty, stored after the key's NUL (named queues only: an unnamed queue
 * keeps no timestamps, and its records are 8 bytes shorter). Unaligned: read and written with
 * memcpy. */
static inline uint64_t kc__wq_t_add_get(const kc__wq_ent *e)
{
    uint64_t t;
    memcpy(&t, e->key + strlen(e->key) + 1, sizeof t);
    return t;
}

static inline void kc__wq_t_add_set(kc__wq_ent *e, uint64_t t)
{
    memcpy(e->key + strlen(e->key) + 1, &t, sizeof t);
}

/* A delay-heap slot: when the key becomes ready, its record, and the priority it is added with
 * then (the highest of the delayed adds while it waits, C12). */
typedef struct kc__wq_timer {
    uint64_t ready_ns;
    kc__wq_ent *e;
    int priority;
} kc__wq_timer;

/* One priority level of the ready FIFO. */
typedef struct kc__wq_level {
    int priority;
    kc__wq_ent *head, *tail;
} kc__wq_level;

/* Depth per priority for the controller's queue metrics (controller-runtime keeps at most 25
 * priority label values; later ones share the label "exceeded_cardinality_limit"). */
#define KC__WQ_PRIO_SERIES 25
typedef struct kc__wq_prio_depth {
    int priority;
    int64_t depth;
} kc__wq_prio_depth;

/* A Prometheus histogram with client-go's workqueue buckets 1e-8·10^k s, k = 0..11 (M1). */
#define KC__WQ_BUCKETS 12
typedef struct kc__wq_hist {
    uint64_t le[KC__WQ_BUCKETS]; /* non-cumulative counts; rendered cumulatively */
    uint64_t count;
    double sum_s;
} kc__wq_hist;

/* Recycled records: freed records of the first KC__WQ_POOL_CLASSES size classes (16-byte steps of
 * malloc chunks: keys up to about 16·KC__WQ_POOL_CLASSES − 41 bytes) are kept, at most
 * KC__WQ_POOL_MAX of them, and reused, so a key that comes and goes costs no malloc. */
#define KC__WQ_POOL_CLASSES 12
#define KC__WQ_POOL_MAX     1024

struct kc_workqueue {
    pthread_mutex_t mu;
    pthread_cond_t cond;       /* workers: a key was queued, or shutdown (W4, W8) */
    pthread_cond_t drain_cond; /* shutdown_drain: processing emptied, or drain released (W9) */
    pthread_cond_t timer_cond; /* the timer thread: heap head changed, or shutdown (D4) */

    /* hash table of every record (chained; cap a power of two) */
    kc__wq_ent **buckets;
    size_t cap, n;
    kc__wq_ent *pool[KC__WQ_POOL_CLASSES]; /* recycled records by size class (through hnext) */
    size_t pool_n;

    /* FIFOs of QUEUED records, one per priority level, highest first (wq_prio.c) */
    kc__wq_level *levels;
    size_t n_levels, levels_cap;
    size_t qlen;

    /* delay heap (min-heap on ready_ns) and its thread */
    kc__wq_timer *heap;
    size_t heap_n, heap_cap;
    pthread_t timer;
    bool timer_started;

    /* lifecycle */
    bool shutting_down;
    bool draining; /* a shutdown_drain is waiting; kc_workqueue_shutdown clears it (W9) */
    size_t n_processing;
    size_t waiters; /* threads blocked in get */

    /* rate limiter (R2, R3, R5) */
    uint64_t base_ns, max_ns;
    double qps; /* <= 0: no bucket */
    double burst, tokens;
    uint64_t tokens_at_ns;

    /* clock (injectable for tests; with an injected clock the timer thread fires nothing and the
     * test pumps the heap itself, so delays fire exactly when the test moves time) */
    uint64_t (*now_ns)(void *ud);
    void *clock_ud;
    bool manual_pump;

    /* metrics (M1, M2); only kept when named */
    char *name;
    uint64_t depth, adds_total, retries_total;
    kc__wq_hist queue_hist, work_hist;
    /* a controller's queue (kc__workqueue_set_controller): label controller="…" on every series
     * and, with priorities, depth by priority */
    char *controller;
    bool prio_metrics;
    kc__wq_prio_depth prio_depth[KC__WQ_PRIO_SERIES];
    size_t n_prio_depth;
    int64_t depth_exceeded; /* depth of priorities beyond the KC__WQ_PRIO_SERIES first */
};

/* q->now_ns(q->clock_ud). */
static inline uint64_t kc__wq_now(const kc_workqueue *q)
{
    return q->now_ns(q->clock_ud);
}

/* ---- wq_table.c: the record table (q->mu held) ----------------------------------------------- */

/* The record of key (hash: kc__wq_hash of it), or NULL. */
kc__wq_ent *kc__wq_find(kc_workqueue *q, const char *key, uint32_t hash);
/* The record of key, created (no flags, 0 failures) when absent; NULL on out of memory. */
kc__wq_ent *kc__wq_intern(kc_workqueue *q, const char *key, size_t klen, uint32_t hash);
/* Release e when nothing refers to it any more (no flag, no failures); hash is its key's. */
void kc__wq_release_if_idle(kc_workqueue *q, kc__wq_ent *e, uint32_t hash);
/* Hash of key as the table uses it. */
uint32_t kc__wq_hash(const char *key, size_t klen);
/* Free every record and the pool (kc_workqueue_free). */
void kc__wq_table_free(kc_workqueue *q);

/* ---- workqueue.c ------------------------------------------------------------------------------
 */

/* W3/W4 on an existing record at priority: mark dirty and queue unless processing; a key dirty
 * already keeps the higher of its priorities (a queued one moves to the tail of the higher level,
 * C12); q->mu held. */
void kc__wq_add_locked(kc_workqueue *q, kc__wq_ent *e, uint64_t now, int priority);

/* ---- wq_prio.c: the ready FIFO by priority (q->mu held) ---------------------------------- */

/* Allocate the level array (kc_workqueue_new). 0 or KC_ENOMEM. */
int kc__wq_levels_init(kc_workqueue *q);
/* Queue e at the tail of the level of e->priority (sets QUEUED; signals one waiter). Never fails:
 * when the level array cannot grow (out of memory) e joins the nearest level in use. */
void kc__wq_push(kc_workqueue *q, kc__wq_ent *e);
/* Take the head of the highest level (qlen > 0 required; clears QUEUED). */
kc__wq_ent *kc__wq_pop(kc_workqueue *q);
/* Take e (QUEUED) out of its level (clears QUEUED). */
void kc__wq_unlink(kc_workqueue *q, kc__wq_ent *e);

/*
 * The prologue of every call that takes a key: check q and key (KC_EINVAL for NULL or a key
 * longer than KC_WORKQUEUE_KEY_MAX), hash the key outside the lock, take q->mu and look the key's
 * record up into *e (NULL when absent). With KC__WQ_ADDING the record is created when absent, and
 * a shutting-down queue is KC_ESTOPPED (W2, D1); out of memory is KC_ENOMEM. Returns 0 with q->mu
 * HELD (*hash = the key's hash), or a negative code with q->mu not held.
 */
#define KC__WQ_ADDING 1
int kc__wq_lock_key(kc_workqueue *q, const char *key, int mode, kc__wq_ent **e, uint32_t *hash);

/* ---- wq_delay.c: delayed adds -------------------------------------------------------------- */

/* Start the timer thread. 0 or KC_ENOMEM. */
int kc__wq_delay_start(kc_workqueue *q);
/* Wake and join the timer thread (shutdown must have been set). */
void kc__wq_delay_join(kc_workqueue *q);
/* D1–D2 under q->mu: queue e at now + delay_ns (earlier time wins); delay 0 adds now. 0 or
 * KC_ENOMEM. */
int kc__wq_add_after_locked(kc_workqueue *q, kc__wq_ent *e, uint64_t now, uint64_t delay_ns,
                            int priority);
/* D3 under q->mu: add every waiting key whose time has come; returns the next ready time
 * (UINT64_MAX when none waits). */
uint64_t kc__wq_delay_fire_locked(kc_workqueue *q, uint64_t now);
/* Drop every waiting key (shutdown; D4). */
void kc__wq_delay_clear_locked(kc_workqueue *q);

/* ---- wq_limit.c: the rate limiter ---------------------------------------------------------- */

/* R4/R5: the delay for one more failure of e (increments its count, spends a token). */
uint64_t kc__wq_limiter_when_locked(kc_workqueue *q, kc__wq_ent *e, uint64_t now);

/* ---- wq_metrics.c ---------------------------------------------------------------------------- */

/* Record one observation of seconds s. */
void kc__wq_hist_observe(kc__wq_hist *h, double s);
/* Depth of priority moves by delta (named queue; M2 by priority). */
void kc__wq_depth_add(kc_workqueue *q, int priority, int64_t delta);

/* Prometheus text (0.0.4) helpers, shared with the controller's metrics (src/controller/):
 * a label value escaped (backslash, quote, newline); the # HELP and # TYPE lines; a histogram
 * from n non-cumulative bucket counts le[] with their bounds as text (then +Inf, _sum, _count),
 * every series labelled lv (label pairs without braces). */
void kc__prom_escape(kc__buf *b, const char *v);
void kc__prom_header(kc__buf *b, const char *metric, const char *type, const char *help);
void kc__prom_histogram(kc__buf *b, const char *metric, const char *help, const char *lv,
                        const char *const *bound_text, const uint64_t *le, size_t n, uint64_t count,
                        double sum);

/* ---- test hooks --------------------------------------------------------------------------------
 */

/* Replace the queue's clock (monotonic ns; NULL = CLOCK_MONOTONIC). Call before any add. Delays,
 * the token bucket and metric durations all read it. With an injected clock the timer thread
 * stands still: a test calls kc__workqueue_pump after moving its time. */
void kc__workqueue_set_clock(kc_workqueue *q, uint64_t (*now_ns)(void *ud), void *ud);
/* Add every delayed key whose time has come by the queue's clock, now, in the calling thread
 * (what the timer thread does when it wakes). Returns how many were added. */
size_t kc__workqueue_pump(kc_workqueue *q);
/* Ready time (queue clock, ns) of the first waiting key; UINT64_MAX when none waits. */
uint64_t kc__workqueue_next_ready(kc_workqueue *q);
/* Number of keys waiting in the delay heap. */
size_t kc__workqueue_waiting(kc_workqueue *q);
/* Number of key records the queue holds (for leak checks: 0 once everything is done and
 * forgotten). */
size_t kc__workqueue_records(kc_workqueue *q);

/* ---- for the controller (src/controller/) -------------------------------------------------- */

/* Mark q as controller's queue for its metrics, as controller-runtime exports them: every series
 * gets the label controller="<controller>" (copied) besides name; workqueue_depth also gets
 * priority — per priority when by_priority (the priority queue), else priority="". 0 or
 * KC_ENOMEM. Call before use. */
int kc__workqueue_set_controller(kc_workqueue *q, const char *controller, bool by_priority);

#endif
