/*
 * workqueue/wq_table.c — the work queue's key records: one chained hash table of interned keys.
 *
 * Every key the queue knows has one record (kc__wq_ent) holding the key bytes inline and its state
 * flags; the dirty, processing, queued and waiting "sets" of client-go are flags on that record,
 * so the table is the only index and membership tests are one lookup. Chains are linked through
 * the records (no node allocation); the bucket array doubles at load 1 and never shrinks below 16.
 * Records are allocated with room for the key rounded up to 16 bytes; freed records of keys up to
 * KC__WQ_POOL_KEY bytes go to a bounded pool per such size class and are reused, so the steady
 * state of add → get → done on recurring keys allocates nothing. Caller holds q->mu.
 */
#include "workqueue/internal.h"
#include "core/htab.h"

#include <stdlib.h>
#include <string.h>

uint32_t kc__wq_hash(const char *key, size_t klen)
{
    return (uint32_t)kc__hash(key, klen);
}

kc__wq_ent *kc__wq_find(kc_workqueue *q, const char *key, uint32_t hash)
{
    if (!q->cap)
        return NULL;
    /* records keep no hash or length (36-byte header): strcmp stops at either NUL */
    for (kc__wq_ent *e = q->buckets[hash & (q->cap - 1)]; e; e = e->hnext)
        if (e->key[0] == key[0] && strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

static int grow(kc_workqueue *q)
{
    size_t ncap = q->cap ? q->cap * 2 : 16;
    kc__wq_ent **nb = calloc(ncap, sizeof(*nb));
    if (!nb)
        return KC_ENOMEM;
    for (size_t i = 0; i < q->cap; i++) {
        for (kc__wq_ent *e = q->buckets[i], *next; e; e = next) {
            next = e->hnext;
            kc__wq_ent **b = &nb[kc__wq_hash(e->key, strlen(e->key)) & (ncap - 1)];
            e->hnext = *b;
            *b = e;
        }
    }
    free(q->buckets);
    q->buckets = nb;
    q->cap = ncap;
    return 0;
}

/* Records are sized to fill a glibc malloc chunk (16-byte steps with an 8-byte header), and a
 * size class is that chunk size / 16: records of one class are interchangeable. */
static size_t alloc_size(const kc_workqueue *q, size_t klen)
{
    size_t total = offsetof(kc__wq_ent, key) + klen + 1 + (q->name ? sizeof(uint64_t) : 0);
    return ((total + 8 + 15) & ~(size_t)15) - 8;
}

static size_t size_class(const kc_workqueue *q, size_t klen)
{
    return (alloc_size(q, klen) + 8) / 16 - 3; /* the smallest record (klen 0) is class 0 */
}

static kc__wq_ent *ent_alloc(kc_workqueue *q, size_t klen)
{
    size_t c = size_class(q, klen);
    if (c < KC__WQ_POOL_CLASSES && q->pool[c]) {
        kc__wq_ent *e = q->pool[c];
        q->pool[c] = e->hnext;
        q->pool_n--;
        return e;
    }
    return malloc(alloc_size(q, klen));
}

kc__wq_ent *kc__wq_intern(kc_workqueue *q, const char *key, size_t klen, uint32_t hash)
{
    kc__wq_ent *e = kc__wq_find(q, key, hash);
    if (e)
        return e;
    if (q->n >= q->cap && grow(q) < 0)
        return NULL;
    e = ent_alloc(q, klen);
    if (!e)
        return NULL;
    memset(e, 0, offsetof(kc__wq_ent, key));
    memcpy(e->key, key, klen);
    e->key[klen] = '\0';
    kc__wq_ent **b = &q->buckets[hash & (q->cap - 1)];
    e->hnext = *b;
    *b = e;
    q->n++;
    return e;
}

void kc__wq_release_if_idle(kc_workqueue *q, kc__wq_ent *e, uint32_t hash)
{
    if (e->flags || e->failures)
        return;
    kc__wq_ent **p = &q->buckets[hash & (q->cap - 1)];
    while (*p != e)
        p = &(*p)->hnext;
    *p = e->hnext;
    q->n--;
    size_t c = size_class(q, strlen(e->key));
    if (c < KC__WQ_POOL_CLASSES && q->pool_n < KC__WQ_POOL_MAX) {
        e->hnext = q->pool[c];
        q->pool[c] = e;
        q->pool_n++;
        return;
    }
    free(e);
}

void kc__wq_table_free(kc_workqueue *q)
{
    for (size_t i = 0; i < q->cap; i++) {
        for (kc__wq_ent *e = q->buckets[i], *next; e; e = next) {
            next = e->hnext;
            free(e);
        }
    }
    for (size_t c = 0; c < KC__WQ_POOL_CLASSES; c++) {
        for (kc__wq_ent *e = q->pool[c], *next; e; e = next) {
            next = e->hnext;
            free(e);
        }
        q->pool[c] = NULL;
    }
    free(q->buckets);
    q->buckets = NULL;
    q->cap = q->n = q->pool_n = 0;
}
