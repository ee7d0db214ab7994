/*
 * controller/shard_keys.c — a sharded controller's key → shard hash map (spec A15).
 *
 * Queue keys are "namespace/name", but ranges are of FNV-1a(uid): the primary object's own uid,
 * or for an owned object its controller ownerReference's uid (which is the owner's uid, so owner
 * and children land in one range). The handlers record the hash of every key they enqueue; a
 * worker looks it up before admitting the key (run.c), falling back to the primary store (keys
 * enqueued by kc_controller_enqueue or a map function). An entry is removed once the key was
 * handled and its object is gone from the store, so the map stays as large as the store.
 *
 * One chained hash table behind one mutex; never held while calling out.
 */
#include "controller/internal.h"
#include "store/internal.h" /* kc__hash */

#include <stdlib.h>
#include <string.h>

typedef struct kent {
    struct kent *next;
    uint64_t h;
    char key[];
} kent;

struct kc__ctrl_keymap {
    pthread_mutex_t mu;
    kent **b;
    size_t cap, n;
};

kc__ctrl_keymap *kc__ctrl_keymap_new(void)
{
    kc__ctrl_keymap *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->cap = 64;
    m->b = calloc(m->cap, sizeof(*m->b));
    if (!m->b) {
        free(m);
        return NULL;
    }
    pthread_mutex_init(&m->mu, NULL);
    return m;
}

void kc__ctrl_keymap_free(kc__ctrl_keymap *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->cap; i++)
        for (kent *e = m->b[i], *nx; e; e = nx) {
            nx = e->next;
            free(e);
        }
    free(m->b);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static kent **slot(kc__ctrl_keymap *m, const char *key)
{
    kent **p = &m->b[kc__hash(key, strlen(key)) & (m->cap - 1)];
    while (*p && strcmp((*p)->key, key) != 0)
        p = &(*p)->next;
    return p;
}

static void grow(kc__ctrl_keymap *m)
{
    size_t ncap = m->cap * 2;
    kent **nb = calloc(ncap, sizeof(*nb));
    if (!nb)
        return; /* longer chains, still correct */
    for (size_t i = 0; i < m->cap; i++)
        for (kent *e = m->b[i], *nx; e; e = nx) {
            nx = e->next;
            size_t j = kc__hash(e->key, strlen(e->key)) & (ncap - 1);
            e->next = nb[j];
            nb[j] = e;
        }
    free(m->b);
    m->b = nb;
    m->cap = ncap;
}

void kc__ctrl_keymap_put(kc__ctrl_keymap *m, const char *key, uint64_t h)
{
    pthread_mutex_lock(&m->mu);
    kent **p = slot(m, key);
    if (*p) {
        (*p)->h = h;
    } else {
        size_t len = strlen(key);
        kent *e = malloc(sizeof(*e) + len + 1);
        if (e) {
            e->next = NULL;
            e->h = h;
            memcpy(e->key, key, len + 1);
            *p = e;
            if (++m->n > m->cap)
                grow(m);
        }
    }
    pthread_mutex_unlock(&m->mu);
}

bool kc__ctrl_keymap_get(kc__ctrl_keymap *m, const char *key, uint64_t *ret)
{
    pthread_mutex_lock(&m->mu);
    kent *e = *slot(m, key);
    if (e)
        *ret = e->h;
    pthread_mutex_unlock(&m->mu);
    return e != NULL;
}

void kc__ctrl_keymap_del(kc__ctrl_keymap *m, const char *key)
{
    pthread_mutex_lock(&m->mu);
    kent **p = slot(m, key);
    if (*p) {
        kent *e = *p;
        *p = e->next;
        free(e);
        m->n--;
    }
    pthread_mutex_unlock(&m->mu);
}
