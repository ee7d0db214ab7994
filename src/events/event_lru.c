/*
 * event_lru.c — a bounded map from string keys to values with least-recently-used eviction: the
 * correlator's three caches (aggregation groups, dedupe records, spam buckets), each bounded like
 * client-go's (4096 entries, spec E4/E5) so memory stays bounded however many objects get events.
 *
 * Design: a chained hash table (FNV-1a, power-of-two buckets, sized once for cap: no rehash) and
 * a doubly linked recency list; get moves the entry to the front, put evicts from the back.
 * Thread-safety: none (owned by the sender thread).
 */
#include "events/internal.h"

#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct lru_entry {
    struct lru_entry *hnext;       /* bucket chain */
    struct lru_entry *prev, *next; /* recency list, most recent first */
    uint64_t hash;
    char *key;
    void *value;
} lru_entry;

struct kc__lru {
    lru_entry **buckets;
    size_t mask, len, cap;
    lru_entry *head, *tail;
    void (*free_value)(void *);
};

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

kc__lru *kc__lru_new(size_t cap, void (*free_value)(void *))
{
    if (cap == 0)
        cap = 1;
    size_t nb = 16;
    while (nb < cap && nb < ((size_t)1 << 30))
        nb <<= 1;
    kc__lru *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->buckets = calloc(nb, sizeof *l->buckets);
    if (!l->buckets) {
        free(l);
        return NULL;
    }
    l->mask = nb - 1;
    l->cap = cap;
    l->free_value = free_value;
    return l;
}

static void entry_free(kc__lru *l, lru_entry *e)
{
    if (l->free_value && e->value)
        l->free_value(e->value);
    free(e->key);
    free(e);
}

void kc__lru_free(kc__lru *l)
{
    if (!l)
        return;
    for (lru_entry *e = l->head, *n; e; e = n) {
        n = e->next;
        entry_free(l, e);
    }
    free(l->buckets);
    free(l);
}

static void list_unlink(kc__lru *l, lru_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        l->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        l->tail = e->prev;
    e->prev = e->next = NULL;
}

static void list_push_front(kc__lru *l, lru_entry *e)
{
    e->prev = NULL;
    e->next = l->head;
    if (l->head)
        l->head->prev = e;
    l->head = e;
    if (!l->tail)
        l->tail = e;
}

static lru_entry *find(kc__lru *l, const char *key, uint64_t h)
{
    for (lru_entry *e = l->buckets[h & l->mask]; e; e = e->hnext)
        if (e->hash == h && strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

static void bucket_remove(kc__lru *l, lru_entry *e)
{
    lru_entry **p = &l->buckets[e->hash & l->mask];
    while (*p != e)
        p = &(*p)->hnext;
    *p = e->hnext;
}

void *kc__lru_get(kc__lru *l, const char *key)
{
    lru_entry *e = find(l, key, fnv1a(key));
    if (!e)
        return NULL;
    list_unlink(l, e);
    list_push_front(l, e);
    return e->value;
}

int kc__lru_put(kc__lru *l, const char *key, void *value)
{
    uint64_t h = fnv1a(key);
    lru_entry *e = find(l, key, h);
    if (e) {
        if (e->value != value && l->free_value && e->value)
            l->free_value(e->value);
        e->value = value;
        list_unlink(l, e);
        list_push_front(l, e);
        return 0;
    }
    e = calloc(1, sizeof *e);
    char *k = kc__strdup(key);
    if (!e || !k) {
        free(e);
        free(k);
        if (l->free_value && value)
            l->free_value(value);
        return KC_ENOMEM;
    }
    if (l->len == l->cap) {
        lru_entry *old = l->tail;
        list_unlink(l, old);
        bucket_remove(l, old);
        entry_free(l, old);
        l->len--;
    }
    e->hash = h;
    e->key = k;
    e->value = value;
    e->hnext = l->buckets[h & l->mask];
    l->buckets[h & l->mask] = e;
    list_push_front(l, e);
    l->len++;
    return 0;
}

size_t kc__lru_len(const kc__lru *l)
{
    return l ? l->len : 0;
}

void kc__lru_each(kc__lru *l, bool (*fn)(void *ud, const char *key, void *value), void *ud)
{
    if (!l)
        return;
    for (lru_entry *e = l->head, *n; e; e = n) {
        n = e->next;
        if (fn(ud, e->key, e->value)) {
            list_unlink(l, e);
            bucket_remove(l, e);
            entry_free(l, e);
            l->len--;
        }
    }
}
