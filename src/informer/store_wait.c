/*
 * informer/store_wait.c — waiters on a kc_store: "key reached RV", "key gone", "watermark reached".
 *
 * Protocol: a waiter evaluates its condition under the store mutex; if it does not hold, it links a
 * kc__waiter (on its own stack, with its own CLOCK_MONOTONIC condition variable) into a wait list
 * and sleeps on it. Key waiters live in one of KC__WAIT_BUCKETS lists chosen by the key hash;
 * watermark waiters in one list. The writer, still holding the mutex after applying an event,
 * evaluates only the waiters of that key's bucket (plus the watermark list), marks the satisfied
 * ones done, unlinks them and signals their condition variable; relists and stop re-evaluate
 * everyone. So a wake-up is never spurious for the waiter, an event touches only the waiters it can
 * satisfy, and nobody polls. The lock is never held while returning to user code.
 */
#include "informer/store_internal.h"

#include "kcache/rv.h"

#include <string.h>

static int eval_key_rv(kc_store *s, const kc_store_cond *c, const char *key, size_t kl, uint64_t h)
{
    bool comparable = kc_rv_is_canonical(c->rv);
    kc__ent *e = (kc__ent *)kc__htab_find(&s->tab->map, key, kl, h);
    if (e) {
        const char *erv = kc_obj_resource_version(e->obj);
        if (comparable) {
            kc_rv_order o = kc_rv_compare(erv, c->rv);
            if (o == KC_RV_GREATER || o == KC_RV_EQUAL)
                return 1;
            if (o == KC_RV_LESS)
                return 0;
        }
        return (c->rv && strcmp(erv, c->rv) == 0) || e->seq > c->after_seq;
    }
    kc__tomb *t = (kc__tomb *)kc__htab_find(&s->tombs, key, kl, h);
    if (t) {
        if (comparable) {
            kc_rv_order o = kc_rv_compare(t->rv, c->rv);
            if (o == KC_RV_GREATER || o == KC_RV_EQUAL)
                return 1;
            if (o == KC_RV_LESS)
                return 0;
        }
        return t->seq > c->after_seq;
    }
    return comparable ? 0 : c->after_seq < s->tomb_floor;
}

int kc__store_eval(kc_store *s, const kc_store_cond *c, const char *key, size_t klen, uint64_t hash)
{
    switch (c->kind) {
    case KC_STORE_WAIT_KEY_RV:
        return eval_key_rv(s, c, key, klen, hash);
    case KC_STORE_WAIT_KEY_GONE: {
        kc__ent *e = (kc__ent *)kc__htab_find(&s->tab->map, key, klen, hash);
        if (!e)
            return 1;
        return (c->uid && *c->uid && strcmp(kc_obj_uid(e->obj), c->uid) != 0) ? 1 : 0;
    }
    case KC_STORE_WAIT_WATERMARK:
        if (kc_rv_is_canonical(c->rv)) {
            kc_rv_order o = kc_rv_compare(s->wm, c->rv);
            return o == KC_RV_GREATER || o == KC_RV_EQUAL;
        }
        return strcmp(s->wm, c->rv) == 0 || s->seq > c->after_seq;
    }
    return 0;
}

/* Validate c and compute its key. Returns 0 or KC_EINVAL. */
static int cond_prepare(const kc_store_cond *c, kc__waiter *w)
{
    w->c = c;
    w->done = false;
    w->klen = 0;
    w->hash = 0;
    w->key[0] = '\0';
    switch (c->kind) {
    case KC_STORE_WAIT_KEY_RV:
        if (!c->rv)
            return KC_EINVAL;
        /* fall through */
    case KC_STORE_WAIT_KEY_GONE: {
        int kl = kc__store_key(c->ns, c->name, w->key, sizeof(w->key));
        if (kl < 0)
            return KC_EINVAL;
        w->klen = (size_t)kl;
        w->hash = kc__hash(w->key, w->klen);
        return 0;
    }
    case KC_STORE_WAIT_WATERMARK:
        return c->rv ? 0 : KC_EINVAL;
    }
    return KC_EINVAL;
}

static void wl_link(kc__waiter **head, kc__waiter *w)
{
    w->next = *head;
    if (*head)
        (*head)->pprev = &w->next;
    w->pprev = head;
    *head = w;
}

static void wl_unlink(kc__waiter *w)
{
    if (!w->pprev)
        return;
    *w->pprev = w->next;
    if (w->next)
        w->next->pprev = w->pprev;
    w->pprev = NULL;
    w->next = NULL;
}

static kc__waiter **list_for(kc_store *s, kc__waiter *w)
{
    return w->c->kind == KC_STORE_WAIT_WATERMARK ? &s->wm_waiters
                                                 : &s->key_waiters[w->hash % KC__WAIT_BUCKETS];
}

static void wake_list(kc_store *s, kc__waiter **head, uint64_t hash, const char *key, size_t kl)
{
    kc__waiter *w = *head;
    while (w) {
        kc__waiter *next = w->next;
        bool match = !key || (w->hash == hash && w->klen == kl && memcmp(w->key, key, kl) == 0);
        if (s->stopped || (match && kc__store_eval(s, w->c, w->key, w->klen, w->hash) == 1)) {
            w->done = true;
            wl_unlink(w);
            pthread_cond_signal(&w->cv);
        }
        w = next;
    }
}

void kc__store_wake_key(kc_store *s, uint64_t hash, const char *key, size_t klen)
{
    if (key)
        wake_list(s, &s->key_waiters[hash % KC__WAIT_BUCKETS], hash, key, klen);
    /* The watermark or the store sequence may have moved: watermark waiters re-check. */
    wake_list(s, &s->wm_waiters, 0, NULL, 0);
}

void kc__store_wake_all(kc_store *s)
{
    for (size_t i = 0; i < KC__WAIT_BUCKETS; i++)
        wake_list(s, &s->key_waiters[i], 0, NULL, 0);
    wake_list(s, &s->wm_waiters, 0, NULL, 0);
}

int kc_store_check(kc_store *s, const kc_store_cond *c)
{
    kc__waiter w;
    if (!c || cond_prepare(c, &w) < 0)
        return KC_EINVAL;
    pthread_mutex_lock(&s->mu);
    int r = kc__store_eval(s, c, w.key, w.klen, w.hash);
    pthread_mutex_unlock(&s->mu);
    return r;
}

int kc_store_wait(kc_store *s, const kc_store_cond *c, int64_t timeout_ms)
{
    kc__waiter w;
    if (!c || cond_prepare(c, &w) < 0)
        return KC_EINVAL;
    uint64_t deadline =
        timeout_ms < 0 ? KC__DEADLINE_NEVER : kc__now_ns() + (uint64_t)timeout_ms * KC__NS_PER_MS;
    pthread_mutex_lock(&s->mu);
    if (s->stopped) {
        pthread_mutex_unlock(&s->mu);
        return KC_ESTOPPED;
    }
    if (kc__store_eval(s, c, w.key, w.klen, w.hash) == 1) {
        pthread_mutex_unlock(&s->mu);
        return 0;
    }
    if (timeout_ms == 0) {
        pthread_mutex_unlock(&s->mu);
        return KC_ETIMEOUT;
    }
    if (kc__cond_init_monotonic(&w.cv) < 0) {
        pthread_mutex_unlock(&s->mu);
        return KC_ENOMEM;
    }
    w.pprev = NULL;
    wl_link(list_for(s, &w), &w);
    int rc = 0;
    while (!w.done) {
        if (kc__cond_wait_until(&w.cv, &s->mu, deadline) == KC_ETIMEOUT && !w.done) {
            rc = KC_ETIMEOUT;
            break;
        }
    }
    wl_unlink(&w);
    if (s->stopped && rc == 0 && kc__store_eval(s, c, w.key, w.klen, w.hash) != 1)
        rc = KC_ESTOPPED;
    if (rc == KC_ETIMEOUT && s->stopped)
        rc = KC_ESTOPPED;
    pthread_mutex_unlock(&s->mu);
    pthread_cond_destroy(&w.cv);
    return rc;
}
