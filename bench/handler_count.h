/*
 * handler_count.h — an informer handler that counts deliveries and wakes the waiting thread
 * once, when all have arrived (benches that end their measurement at "the handler has seen
 * every event", not only "the store has": bench_informer, bench_watch_ingest).
 *
 *   hcount hc = {.mu = PTHREAD_MUTEX_INITIALIZER, .want = m};
 *   kc__cond_init_monotonic(&hc.cv);
 *   kc_informer_handlers h = {.on_add = h_add, .on_update = h_update, .on_delete = h_delete, .ud =
 * &hc};
 *
 * Or the whole "an informer with this handler ingests m events" run (both benches):
 *   int  hcount_informer_new(cli, gvr, rv, m, &hc, &inf, &reg)
 *        hc set up for m deliveries; a paged-mode informer with hc's handler registered, watching
 *        from rv without listing (kc__informer_watch_from). -1 on failure.
 *   int  hcount_wait(&hc, reg, rc, timeout_ms)
 *        when rc (kc_informer_start's) is 0, waits until the handler has seen all m events, then
 *        until its queue is idle, up to timeout_ms each; returns rc or the idle wait's error.
 *   int  hcount_informer_free(&hc, inf, rc)
 *        frees the informer and hc's condition variable; -1 (with a line on stderr) when rc is
 *        not 0 or the store or the handler got fewer than m, else 0.
 */
#ifndef KC_BENCH_HANDLER_COUNT_H
#define KC_BENCH_HANDLER_COUNT_H

#include "core/internal.h"
#include "informer/internal.h"
#include "kcache/informer.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

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

static inline int hcount_informer_new(kc_client *cli, const kc_gvr *gvr, const char *rv, long m,
                                      hcount *hc, kc_informer **ret_inf, kc_informer_reg **ret_reg)
{
    *hc = (hcount){.want = m};
    pthread_mutex_init(&hc->mu, NULL);
    if (kc__cond_init_monotonic(&hc->cv) < 0)
        return -1;
    kc_informer_opts o = {.list_mode = KC_INFORMER_LIST_PAGED};
    kc_informer_handlers h = {
        .on_add = h_add, .on_update = h_update, .on_delete = h_delete, .ud = hc};
    *ret_inf = NULL;
    *ret_reg = NULL;
    if (kc_informer_new(cli, gvr, &o, ret_inf, NULL) ||
        kc_informer_add_handler(*ret_inf, &h, NULL, ret_reg, NULL) ||
        kc__informer_watch_from(*ret_inf, rv))
        return -1;
    return 0;
}

static inline int hcount_wait(hcount *hc, kc_informer_reg *reg, int rc, int64_t timeout_ms)
{
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    pthread_mutex_lock(&hc->mu);
    while (rc == 0 && hc->n < hc->want && kc__now_ns() < deadline)
        kc__cond_wait_until(&hc->cv, &hc->mu, deadline);
    pthread_mutex_unlock(&hc->mu);
    if (rc == 0)
        rc = kc_informer_reg_wait_idle(reg, timeout_ms, NULL);
    return rc;
}

static inline int hcount_informer_free(hcount *hc, kc_informer *inf, int rc)
{
    size_t got = kc_store_len(kc_informer_store(inf));
    long seen = hc->n, m = hc->want;
    kc_informer_free(inf);
    pthread_cond_destroy(&hc->cv);
    if (rc != 0 || (long)got < m || seen < m) {
        fprintf(stderr, "informer ingest: rc %d, %zu objects, %ld handler calls of %ld\n", rc, got,
                seen, m);
        return -1;
    }
    return 0;
}

#endif
