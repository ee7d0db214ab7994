/*
 * handler_count.h — an informer handler that counts deliveries and wakes the waiting thread
 * once, when all have arrived (benches that end their measurement at "the handler has seen
 * every event", not only "the store has": bench_informer, bench_watch_ingest).
 *
 *   hcount hc = {.mu = PTHREAD_MUTEX_INITIALIZER, .want = m};
 *   kc__cond_init_monotonic(&hc.cv);
 *   kc_informer_handlers h = {h_add, h_update, h_delete, &hc};
 */
#ifndef KC_BENCH_HANDLER_COUNT_H
#define KC_BENCH_HANDLER_COUNT_H

#include "kcache/informer.h"

#include <pthread.h>
#include <stdbool.h>

typedef struct hcount {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long n, want;
} hcount;

static inline void h_count(hcount *h)
{
    if (++h->n == h->want) { /* only the dispatcher thread writes n */
        pthread_mutex_lock(&h->mu);
        pthread_cond_signal(&h->cv);
        pthread_mutex_unlock(&h->mu);
    }
}

static inline void h_add(void *ud, kc_obj *o)
{
    (void)o;
    h_count(ud);
}

static inline void h_update(void *ud, kc_obj *old, kc_obj *o)
{
    (void)old;
    (void)o;
    h_count(ud);
}

static inline void h_delete(void *ud, kc_obj *o, bool tombstone)
{
    (void)o;
    (void)tombstone;
    h_count(ud);
}

#endif
