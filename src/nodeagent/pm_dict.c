/*
 * pm_dict.c — the node agent cache's key dictionary: label and annotation keys interned once per
 * cache, so a cached pod holds a 2- or 4-byte id per key instead of the key.
 *
 * Why: keys are a vocabulary shared by every pod of a node ("app.kubernetes.io/name",
 * "pod-template-hash", "prometheus.io/scrape", "kubectl.kubernetes.io/restartedAt"…) whatever the
 * workload, while values mostly differ; in a typical pod the keys are a quarter of what the
 * enricher keeps. Values are never interned here.
 *
 * Bounded: at most KC__PM_DICT_MAX keys of at most KC__PM_DICT_KEY_MAX bytes and
 * KC__PM_DICT_BYTES bytes of text; past that a key is stored in the pod's own record, as one
 * that is too long is. Ids are never reused and strings never freed while the dictionary lives
 * (no key a record names goes away); it lives while the cache or any entry holds a reference.
 *
 * Threads: one writer at a time (kc__pm_dict_intern, under mu: the Pod informer's transform);
 * readers (kc__pm_dict_get) take no lock — ids go into chunks of 256 slots whose pointers are
 * published with release stores, and an id reaches a reader only through a record published
 * after it was interned.
 */
#include "nodeagent/internal.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK 256

struct kc__pm_dict {
    _Atomic uint32_t refs;
    pthread_mutex_t mu;
    uint32_t n;     /* ids given */
    size_t bytes;   /* text held */
    uint32_t *tab;  /* open addressing: id + 1, 0 = empty (under mu) */
    size_t tab_cap; /* a power of 2, at most half full */
    _Atomic(kc__pm_dstr *) *chunk[KC__PM_DICT_MAX / CHUNK];
};

kc__pm_dict *kc__pm_dict_new(void)
{
    kc__pm_dict *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    atomic_init(&d->refs, 1);
    pthread_mutex_init(&d->mu, NULL);
    return d;
}

kc__pm_dict *kc__pm_dict_ref(kc__pm_dict *d)
{
    if (d)
        atomic_fetch_add_explicit(&d->refs, 1, memory_order_relaxed);
    return d;
}

void kc__pm_dict_unref(kc__pm_dict *d)
{
    if (!d || atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (size_t c = 0; c < KC__PM_DICT_MAX / CHUNK && d->chunk[c]; c++) {
        for (size_t i = 0; i < CHUNK; i++)
            free(atomic_load_explicit(&d->chunk[c][i], memory_order_relaxed));
        free(d->chunk[c]);
    }
    free(d->tab);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

const kc__pm_dstr *kc__pm_dict_get(const kc__pm_dict *d, uint32_t id)
{
    _Atomic(kc__pm_dstr *) *c = d->chunk[id / CHUNK];
    return atomic_load_explicit(&c[id % CHUNK], memory_order_acquire);
}

static const kc__pm_dstr *at(const kc__pm_dict *d, uint32_t id)
{
    return atomic_load_explicit(&d->chunk[id / CHUNK][id % CHUNK], memory_order_relaxed);
}

static uint64_t hash(const char *s, size_t n)
{
    return kc__pm_hash(s, n, 0xcbf29ce484222325ULL);
}

static int grow_tab(kc__pm_dict *d)
{
    size_t cap = d->tab_cap ? d->tab_cap * 2 : 64;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t)
        return KC_ENOMEM;
    for (uint32_t id = 0; id < d->n; id++) {
        const kc__pm_dstr *s = at(d, id);
        size_t i = hash(s->s, s->len) & (cap - 1);
        while (t[i])
            i = (i + 1) & (cap - 1);
        t[i] = id + 1;
    }
    free(d->tab);
    d->tab = t;
    d->tab_cap = cap;
    return 0;
}

/* A new id for s (mu held): -1 when full or out of memory. */
static int64_t add(kc__pm_dict *d, const char *s, size_t n, size_t slot)
{
    size_t need = sizeof(kc__pm_dstr) + n + 1;
    if (d->n >= KC__PM_DICT_MAX || d->bytes + need > KC__PM_DICT_BYTES)
        return -1;
    uint32_t id = d->n;
    if (!d->chunk[id / CHUNK] && !(d->chunk[id / CHUNK] = calloc(CHUNK, sizeof(void *))))
        return -1;
    kc__pm_dstr *e = malloc(need);
    if (!e)
        return -1;
    e->len = (uint32_t)n;
    memcpy(e->s, s, n);
    e->s[n] = '\0';
    atomic_store_explicit(&d->chunk[id / CHUNK][id % CHUNK], e, memory_order_release);
    d->tab[slot] = id + 1;
    d->n++;
    d->bytes += need;
    return id;
}

int64_t kc__pm_dict_intern(kc__pm_dict *d, const char *s, size_t n)
{
    if (n > KC__PM_DICT_KEY_MAX)
        return -1;
    pthread_mutex_lock(&d->mu);
    int64_t id = -1;
    if (2 * (d->n + 1) > d->tab_cap && grow_tab(d))
        goto out;
    size_t i = hash(s, n) & (d->tab_cap - 1);
    for (; d->tab[i]; i = (i + 1) & (d->tab_cap - 1)) {
        const kc__pm_dstr *e = at(d, d->tab[i] - 1);
        if (e->len == n && memcmp(e->s, s, n) == 0) {
            id = d->tab[i] - 1;
            goto out;
        }
    }
    id = add(d, s, n, i);
out:
    pthread_mutex_unlock(&d->mu);
    return id;
}

size_t kc__pm_dict_heap(kc__pm_dict *d)
{
    pthread_mutex_lock(&d->mu);
    size_t chunks = (d->n + CHUNK - 1) / CHUNK;
    size_t h =
        sizeof *d + d->bytes + d->tab_cap * sizeof(uint32_t) + chunks * CHUNK * sizeof(void *);
    pthread_mutex_unlock(&d->mu);
    return h;
}
