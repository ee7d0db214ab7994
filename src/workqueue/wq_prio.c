/*
 * workqueue/wq_prio.c — the ready FIFO by priority: controller-runtime's priority queue ordering
 * (spec C12; pkg/controller/priorityqueue) on client-go's queue semantics (W1–W11).
 *
 * Ready (QUEUED) records sit in one FIFO per priority level, doubly linked through the records
 * (qprev / u.qnext), so a record can leave the middle of its level in O(1). The levels are an
 * array sorted by priority, highest first, holding only the levels in use (a level is removed when
 * it empties; the array keeps its capacity): get takes the head of levels[0] in O(1), and finding
 * a level is a binary search among the few distinct priorities queued (typically two: 0 for
 * changes, KC_WORKQUEUE_PRIORITY_LOW for the initial list and resyncs).
 *
 * Order: higher priority first; within a priority, the order in which keys became ready (FIFO for
 * adds; for delayed adds the order in which they fire, i.e. their ready time). A key queued already
 * and added again with a higher priority moves to the tail of the higher level (as
 * controller-runtime: FIFO within the new level); a lower priority changes nothing (W3).
 *
 * The level array starts with room for 4 levels, so a push into an empty queue never allocates;
 * if it must grow and cannot (out of memory) the record joins the nearest level in use, taking its
 * priority, instead of failing: a wrong place in line, never a lost key (done cannot fail, W6).
 * So a queued record is always in the level of its own priority.
 */
#include "workqueue/internal.h"

#include <stdlib.h>
#include <string.h>

#define LEVELS_INITIAL 4

int kc__wq_levels_init(kc_workqueue *q)
{
    q->levels = calloc(LEVELS_INITIAL, sizeof(*q->levels));
    if (!q->levels)
        return KC_ENOMEM;
    q->levels_cap = LEVELS_INITIAL;
    return 0;
}

/* Index of the level of priority p, or where it would be inserted (*found false). Levels are
 * sorted by priority, descending. */
static size_t level_search(const kc_workqueue *q, int p, bool *found)
{
    size_t lo = 0, hi = q->n_levels;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int mp = q->levels[mid].priority;
        if (mp == p) {
            *found = true;
            return mid;
        }
        if (mp > p)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

/* The level of priority p, created when absent; out of memory: the nearest level in use (there
 * is one: the array has room for LEVELS_INITIAL levels, so it is full, hence not empty). */
static kc__wq_level *level_get(kc_workqueue *q, int p)
{
    bool found;
    size_t i = level_search(q, p, &found);
    if (found)
        return &q->levels[i];
    if (q->n_levels == q->levels_cap) {
        size_t ncap = q->levels_cap * 2;
        kc__wq_level *nl = realloc(q->levels, ncap * sizeof(*nl));
        if (!nl)
            return &q->levels[i < q->n_levels ? i : q->n_levels - 1];
        q->levels = nl;
        q->levels_cap = ncap;
    }
    memmove(&q->levels[i + 1], &q->levels[i], (q->n_levels - i) * sizeof(*q->levels));
    q->levels[i] = (kc__wq_level){p, NULL, NULL};
    q->n_levels++;
    return &q->levels[i];
}

static void level_drop_if_empty(kc_workqueue *q, kc__wq_level *l)
{
    if (l->head)
        return;
    size_t i = (size_t)(l - q->levels);
    memmove(&q->levels[i], &q->levels[i + 1], (q->n_levels - i - 1) * sizeof(*q->levels));
    q->n_levels--;
}

void kc__wq_push(kc_workqueue *q, kc__wq_ent *e)
{
    kc__wq_level *l = level_get(q, e->priority);
    if (l->priority != e->priority) { /* out of memory: it takes the nearest level's priority */
        kc__wq_depth_add(q, e->priority, -1);
        kc__wq_depth_add(q, l->priority, 1);
        e->priority = l->priority;
    }
    e->flags |= KC__WQ_QUEUED;
    e->u.qnext = NULL;
    e->qprev = l->tail;
    if (l->tail)
        l->tail->u.qnext = e;
    else
        l->head = e;
    l->tail = e;
    q->qlen++;
    if (q->waiters)
        pthread_cond_signal(&q->cond);
}

static void unlink_from(kc_workqueue *q, kc__wq_level *l, kc__wq_ent *e)
{
    if (e->qprev)
        e->qprev->u.qnext = e->u.qnext;
    else
        l->head = e->u.qnext;
    if (e->u.qnext)
        e->u.qnext->qprev = e->qprev;
    else
        l->tail = e->qprev;
    e->u.qnext = e->qprev = NULL;
    e->flags &= ~KC__WQ_QUEUED;
    q->qlen--;
    level_drop_if_empty(q, l);
}

kc__wq_ent *kc__wq_pop(kc_workqueue *q)
{
    kc__wq_level *l = &q->levels[0];
    kc__wq_ent *e = l->head;
    unlink_from(q, l, e);
    return e;
}

void kc__wq_unlink(kc_workqueue *q, kc__wq_ent *e)
{
    bool found;
    size_t i = level_search(q, e->priority, &found); /* found: e is in its priority's level */
    unlink_from(q, &q->levels[i], e);
}
