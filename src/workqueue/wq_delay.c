/*
 * workqueue/wq_delay.c — delayed adds (spec §1.2, rules D1–D4): one timer thread per queue and a
 * binary min-heap of (ready time, record), never a thread or a timer per key.
 *
 * add_after(key, d) counts a retry (D1), then with d = 0 adds at once; otherwise the key's record
 * gets a heap slot (its index kept in the record, so a second add_after of a waiting key is a
 * decrease-key in place: the earlier ready time wins and a later one changes nothing — D2; the
 * heap holds each key at most once, so it is bounded by the number of distinct keys). The thread
 * sleeps on q->timer_cond until the head's ready time, or until a new head or shutdown wakes it;
 * when it wakes it pops every due key and adds it (D3: so W3 applies; a plain add does not cancel
 * a pending delayed add). Waiting keys are in neither dirty nor the FIFO (D3, W7). At shutdown the
 * heap is emptied and the thread exits (D4). A slot carries the priority the key is added with
 * when it fires: a second delayed add keeps the higher one (C12); keys that fire join their
 * level's FIFO in firing order, i.e. by ready time (as controller-runtime's priority queue).
 *
 * Differences from client-go, deliberate: no 1000-entry channel between add_after and the loop
 * (the caller inserts into the heap under q->mu, so add_after never blocks), hence no 10 s
 * heartbeat either — the thread's deadline is always the head's exact ready time.
 */
#include "workqueue/internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- the heap ----------------------------------------------------------------------------------
 */

static void place(kc_workqueue *q, size_t i, kc__wq_timer t)
{
    q->heap[i] = t;
    t.e->heap_idx = (uint32_t)i;
}

static void sift_up(kc_workqueue *q, size_t i)
{
    kc__wq_timer t = q->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (q->heap[p].ready_ns <= t.ready_ns)
            break;
        place(q, i, q->heap[p]);
        i = p;
    }
    place(q, i, t);
}

static void sift_down(kc_workqueue *q, size_t i)
{
    kc__wq_timer t = q->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= q->heap_n)
            break;
        if (c + 1 < q->heap_n && q->heap[c + 1].ready_ns < q->heap[c].ready_ns)
            c++;
        if (t.ready_ns <= q->heap[c].ready_ns)
            break;
        place(q, i, q->heap[c]);
        i = c;
    }
    place(q, i, t);
}

static kc__wq_timer heap_pop(kc_workqueue *q)
{
    kc__wq_timer t = q->heap[0];
    t.e->flags &= ~KC__WQ_WAITING;
    if (--q->heap_n > 0) {
        q->heap[0] = q->heap[q->heap_n];
        sift_down(q, 0);
    }
    return t;
}

/* ---- add_after ----------------------------------------------------------------------------------
 */

int kc__wq_add_after_locked(kc_workqueue *q, kc__wq_ent *e, uint64_t now, uint64_t delay_ns,
                            int priority)
{
    if (delay_ns == 0) {
        kc__wq_add_locked(q, e, now, priority);
        return 0;
    }
    uint64_t ready = now + delay_ns < now ? UINT64_MAX : now + delay_ns;
    if (e->flags & KC__WQ_WAITING) { /* D2: earlier wins; C12: the higher priority too */
        size_t i = e->heap_idx;
        if (priority > q->heap[i].priority)
            q->heap[i].priority = priority;
        if (ready >= q->heap[i].ready_ns)
            return 0;
        q->heap[i].ready_ns = ready;
        sift_up(q, i);
    } else {
        if (q->heap_n == q->heap_cap) {
            size_t ncap = q->heap_cap ? q->heap_cap * 2 : 64;
            kc__wq_timer *nh = realloc(q->heap, ncap * sizeof(*nh));
            if (!nh)
                return KC_ENOMEM;
            q->heap = nh;
            q->heap_cap = ncap;
        }
        e->flags |= KC__WQ_WAITING;
        q->heap[q->heap_n] = (kc__wq_timer){ready, e, priority};
        sift_up(q, q->heap_n++);
    }
    if (q->heap[0].e == e) /* a new head: the thread's deadline moved earlier */
        pthread_cond_signal(&q->timer_cond);
    return 0;
}

int kc_workqueue_add_after_with_priority(kc_workqueue *q, const char *key, uint64_t delay_ms,
                                         int priority)
{
    kc__wq_ent *e;
    uint32_t h;
    int rc = kc__wq_lock_key(q, key, KC__WQ_ADDING, &e, &h);
    if (rc < 0)
        return rc;
    uint64_t delay_ns =
        delay_ms > UINT64_MAX / KC__NS_PER_MS ? UINT64_MAX : delay_ms * KC__NS_PER_MS;
    if (q->name)
        q->retries_total++; /* D1: counted first */
    rc = kc__wq_add_after_locked(q, e, kc__wq_now(q), delay_ns, priority);
    if (rc < 0)
        kc__wq_release_if_idle(q, e, h);
    pthread_mutex_unlock(&q->mu);
    return rc;
}

int kc_workqueue_add_after(kc_workqueue *q, const char *key, uint64_t delay_ms)
{
    return kc_workqueue_add_after_with_priority(q, key, delay_ms, 0);
}

/* ---- firing, the thread --------------------------------------------------------------------- */

uint64_t kc__wq_delay_fire_locked(kc_workqueue *q, uint64_t now)
{
    while (q->heap_n > 0 && q->heap[0].ready_ns <= now) {
        kc__wq_timer t = heap_pop(q);
        kc__wq_add_locked(q, t.e, now, t.priority); /* D3: W3 applies */
    }
    return q->heap_n ? q->heap[0].ready_ns : UINT64_MAX;
}

void kc__wq_delay_clear_locked(kc_workqueue *q)
{
    while (q->heap_n > 0) {
        kc__wq_ent *e = q->heap[--q->heap_n].e;
        e->flags &= ~KC__WQ_WAITING;
        kc__wq_release_if_idle(q, e, kc__wq_hash(e->key, strlen(e->key)));
    }
}

static void *timer_main(void *arg)
{
    kc_workqueue *q = arg;
    pthread_mutex_lock(&q->mu);
    while (!q->shutting_down) {
        if (q->manual_pump) { /* a test's clock: the test pumps */
            kc__cond_wait_until(&q->timer_cond, &q->mu, KC__DEADLINE_NEVER);
            continue;
        }
        /* the next ready time is a CLOCK_MONOTONIC deadline (UINT64_MAX = none = never) */
        uint64_t next = kc__wq_delay_fire_locked(q, kc__wq_now(q));
        kc__cond_wait_until(&q->timer_cond, &q->mu, next);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

int kc__wq_delay_start(kc_workqueue *q)
{
    if (pthread_create(&q->timer, NULL, timer_main, q) != 0)
        return KC_ENOMEM;
    q->timer_started = true;
    return 0;
}

void kc__wq_delay_join(kc_workqueue *q)
{
    if (q->timer_started)
        pthread_join(q->timer, NULL);
    q->timer_started = false;
}

/* ---- test hooks ---------------------------------------------------------------------------------
 */

size_t kc__workqueue_pump(kc_workqueue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t before = q->heap_n;
    kc__wq_delay_fire_locked(q, kc__wq_now(q));
    size_t fired = before - q->heap_n;
    pthread_mutex_unlock(&q->mu);
    return fired;
}

size_t kc__workqueue_waiting(kc_workqueue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->heap_n;
    pthread_mutex_unlock(&q->mu);
    return n;
}

uint64_t kc__workqueue_next_ready(kc_workqueue *q)
{
    pthread_mutex_lock(&q->mu);
    uint64_t t = q->heap_n ? q->heap[0].ready_ns : UINT64_MAX;
    pthread_mutex_unlock(&q->mu);
    return t;
}
