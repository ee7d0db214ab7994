/*
 * store/wait.c — waiters on a kc_store: "key reached RV", "key gone", "watermark reached",
 * and the two read-your-writes conditions "write observed" and "deletion observed" (store.h).
 *
 * Protocol: a waiter evaluates its condition under the store mutex; if it does not hold, it links a
 * kc__waiter (on its own stack) into a wait list, releases the mutex and sleeps on the waiter's
 * own futex word. Key waiters live in one of KC__WAIT_BUCKETS lists chosen by the key hash;
 * watermark waiters in one list. The writer, still holding the mutex after applying an event,
 * evaluates only the waiters of that key's bucket (plus the watermark list) and claims the
 * satisfied ones: marks them done with their result, unlinks them and queues them; relists and
 * stop re-evaluate everyone. After releasing the mutex the writer posts each claimed waiter (store
 * the futex word, FUTEX_WAKE). So the woken thread never finds the mutex held by its waker (a
 * signal under the lock on a 2-CPU machine often preempts the writer while it holds the lock and
 * costs a second sleep/wake), needs no lock at all to return, a wake-up is never spurious for the
 * waiter, an event touches only the waiters it can satisfy, and nobody polls.
 *
 * Lifetime: the waiter returns only once posted, or after unlinking itself under the mutex when no
 * writer claimed it (timeout). A claimed waiter whose timeout fires waits for its post, which
 * follows within the writer's unlock. The writer reads a waiter's list link before posting it and
 * never touches its memory afterwards (the FUTEX_WAKE that follows only passes the address to the
 * kernel: at worst a spurious wake-up of whatever reuses that word, which futex users tolerate).
 */
#include "store/internal.h"

#include "kcache/rv.h"

#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* At or past rv (both comparable), or true when the key's RV is not comparable (fail open). */
static bool rv_reached(const char *have, const char *rv)
{
    kc_rv_order o = kc_rv_compare(have, rv);
    return o == KC_RV_GREATER || o == KC_RV_EQUAL || o == KC_RV_NOT_COMPARABLE;
}

/* Key-level evidence of a write at rv sent after after_seq: that exact RV, or any event on the key
 * since (a delete counts). */
static int key_event_since(const kc_store *s, const kc_store_cond *c, const kc__ent *e,
                           const kc__tomb *t)
{
    if (e)
        return (c->rv && strcmp(kc_obj_resource_version(e->obj), c->rv) == 0) ||
               e->seq > c->after_seq;
    if (t)
        return t->seq > c->after_seq;
    return c->after_seq < s->tomb_floor;
}

static int eval_key_rv(kc_store *s, const kc_store_cond *c, const kc__waiter *w)
{
    bool comparable = kc_rv_is_canonical(c->rv);
    kc__ent *e = (kc__ent *)kc__htab_find(&s->tab->map, w->key, w->klen, w->hash);
    kc__tomb *t = e ? NULL : (kc__tomb *)kc__htab_find(&s->tombs, w->key, w->klen, w->hash);
    if (comparable && (e || t)) {
        kc_rv_order o = kc_rv_compare(e ? kc_obj_resource_version(e->obj) : t->rv, c->rv);
        if (o == KC_RV_GREATER || o == KC_RV_EQUAL)
            return 1;
        if (o == KC_RV_LESS)
            return 0;
    }
    if (!e && !t && comparable)
        return 0;
    return key_event_since(s, c, e, t);
}

/* KC_STORE_WAIT_WRITTEN (store.h). The watermark test comes first: while it fails (nearly always,
 * for a waiter) the key is not looked up. */
static int eval_written(kc_store *s, const kc_store_cond *c, const kc__waiter *w)
{
    bool comparable = kc_rv_is_canonical(c->rv);
    bool regressed = s->regress_seq > c->after_seq;
    if (comparable && s->wm[0] && kc_rv_compare(s->wm, c->rv) != KC_RV_LESS) {
        kc__ent *e = (kc__ent *)kc__htab_find(&s->tab->map, w->key, w->klen, w->hash);
        if (e && rv_reached(kc_obj_resource_version(e->obj), c->rv))
            return 1;
        kc__tomb *t = e ? NULL : (kc__tomb *)kc__htab_find(&s->tombs, w->key, w->klen, w->hash);
        if (t && (!t->rv[0] || rv_reached(t->rv, c->rv)))
            return 1;
        if (!e && !t && (s->relist_seq > c->after_seq || s->tomb_floor > c->after_seq))
            return 1; /* deleted before the store saw it, caught up by a replace */
        if (!regressed)
            return 0; /* the key disagrees: the server's RVs went back and nobody noticed yet */
    }
    if (comparable && !regressed)
        return 0;
    kc__ent *e = (kc__ent *)kc__htab_find(&s->tab->map, w->key, w->klen, w->hash);
    kc__tomb *t = e ? NULL : (kc__tomb *)kc__htab_find(&s->tombs, w->key, w->klen, w->hash);
    return key_event_since(s, c, e, t);
}

/* KC_STORE_WAIT_DELETED (store.h). */
static int eval_deleted(kc_store *s, const kc_store_cond *c, kc__waiter *w)
{
    bool any_uid = !c->uid || !*c->uid;
    kc__ent *e = (kc__ent *)kc__htab_find(&s->tab->map, w->key, w->klen, w->hash);
    if (e && (any_uid || strcmp(kc_obj_uid(e->obj), c->uid) == 0)) {
        w->seen = true; /* a later state without it is after the deletion */
        return 0;
    }
    bool by_rv = kc_rv_is_canonical(c->rv) && s->regress_seq <= c->after_seq;
    if (by_rv && (!s->wm[0] || kc_rv_compare(s->wm, c->rv) == KC_RV_LESS))
        by_rv = false;
    if (any_uid) /* unknown UID: absent (at rv) is all there is */
        return w->seen || !kc_rv_is_canonical(c->rv) || by_rv;
    if (w->seen || by_rv)
        return 1;
    kc__tomb *t = e ? NULL : (kc__tomb *)kc__htab_find(&s->tombs, w->key, w->klen, w->hash);
    return t && strcmp(t->uid, c->uid) == 0;
}

int kc__store_eval(kc_store *s, kc__waiter *w)
{
    const kc_store_cond *c = w->c;
    switch (c->kind) {
    case KC_STORE_WAIT_KEY_RV:
        return eval_key_rv(s, c, w);
    case KC_STORE_WAIT_KEY_GONE: {
        kc__ent *e = (kc__ent *)kc__htab_find(&s->tab->map, w->key, w->klen, w->hash);
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
    case KC_STORE_WAIT_WRITTEN:
        return eval_written(s, c, w);
    case KC_STORE_WAIT_DELETED:
        return eval_deleted(s, c, w);
    }
    return 0;
}

/* Validate c and compute its key. Returns 0 or KC_EINVAL. */
static int cond_prepare(const kc_store_cond *c, kc__waiter *w, kc_error *err)
{
    w->c = c;
    w->done = false;
    w->seen = false;
    w->klen = 0;
    w->hash = 0;
    w->key[0] = '\0';
    switch (c->kind) {
    case KC_STORE_WAIT_KEY_RV:
    case KC_STORE_WAIT_WRITTEN:
        if (!c->rv)
            return kc_error_set(err, KC_EINVAL, "store condition %d: rv is NULL", (int)c->kind);
        /* fall through */
    case KC_STORE_WAIT_KEY_GONE:
    case KC_STORE_WAIT_DELETED: {
        int kl = kc__store_key(c->ns, c->name, w->key, sizeof(w->key));
        if (kl < 0)
            return kc_error_set(err, KC_EINVAL,
                                "store condition %d: no name, or a key longer than %zu bytes",
                                (int)c->kind, sizeof(w->key) - 1);
        w->klen = (size_t)kl;
        w->hash = kc__hash(w->key, w->klen);
        return 0;
    }
    case KC_STORE_WAIT_WATERMARK:
        return c->rv ? 0 : kc_error_set(err, KC_EINVAL, "store condition WATERMARK: rv is NULL");
    }
    return kc_error_set(err, KC_EINVAL, "store condition: unknown kind %d", (int)c->kind);
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

/* Watermark waiters are re-evaluated on every event and bookmark, key waiters on the events of
 * their key; relists and stop re-evaluate both. A comparable WRITTEN condition depends on the
 * watermark (and then on its key, whose events are events too): the watermark list. */
static kc__waiter **list_for(kc_store *s, kc__waiter *w)
{
    bool wm = w->c->kind == KC_STORE_WAIT_WATERMARK ||
              (w->c->kind == KC_STORE_WAIT_WRITTEN && kc_rv_is_canonical(w->c->rv));
    return wm ? &s->wm_waiters : &s->key_waiters[w->hash % KC__WAIT_BUCKETS];
}

static void wake_list(kc_store *s, kc__waiter **head, uint64_t hash, const char *key, size_t kl)
{
    kc__waiter *w = *head;
    while (w) {
        kc__waiter *next = w->next;
        bool match = !key || (w->hash == hash && w->klen == kl && memcmp(w->key, key, kl) == 0);
        int ok = match ? kc__store_eval(s, w) : 0;
        if (ok == 1 || s->stopped) {
            w->done = true;
            w->result = ok == 1 ? 0 : KC_ESTOPPED;
            wl_unlink(w);
            w->post_next = s->to_post;
            s->to_post = w;
        }
        w = next;
    }
}

kc__waiter *kc__store_take_posts(kc_store *s)
{
    kc__waiter *l = s->to_post;
    s->to_post = NULL;
    return l;
}

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)word, op, val, ts, NULL, 0);
}

void kc__store_post(kc__waiter *w)
{
    while (w) {
        kc__waiter *next = w->post_next; /* w may be gone once posted */
        _Atomic uint32_t *word = &w->posted;
        atomic_store_explicit(word, 1, memory_order_release);
        futex(word, FUTEX_WAKE_PRIVATE, 1, NULL);
        w = next;
    }
}

void kc__store_wake_key(kc_store *s, uint64_t hash, const char *key, size_t klen)
{
    KC__ASSERT_HELD(&s->mu);
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

int(kc_store_check)(kc_store *s, const kc_store_cond *c, size_t c_size, kc_error *err)
{
    if (!s || !c)
        return kc_error_set(err, KC_EINVAL, "kc_store_check: %s is NULL", !s ? "store" : "cond");
    KC__OPTS_TAKE(c, kc_store_cond, err);
    kc__waiter w;
    int rc = cond_prepare(c, &w, err);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&s->mu);
    int r = kc__store_eval(s, &w);
    pthread_mutex_unlock(&s->mu);
    return r;
}

/* Sleep until w is posted or deadline passes (FUTEX_WAIT takes a relative CLOCK_MONOTONIC
 * timeout). Returns true once posted. */
static bool sleep_posted(kc__waiter *w, uint64_t deadline)
{
    for (;;) {
        if (atomic_load_explicit(&w->posted, memory_order_acquire))
            return true;
        struct timespec ts, *tp = NULL;
        if (deadline != KC__DEADLINE_NEVER) {
            uint64_t left = kc__deadline_left_ns(deadline);
            if (left == 0)
                return false;
            ts.tv_sec = (time_t)(left / KC__NS_PER_SEC);
            ts.tv_nsec = (long)(left % KC__NS_PER_SEC);
            tp = &ts;
        }
        futex(&w->posted, FUTEX_WAIT_PRIVATE, 0, tp); /* EAGAIN/EINTR/ETIMEDOUT: re-check */
    }
}

/* What a finished wait returns; err says why it ended without the condition. */
static int wait_result(const kc__waiter *w, int64_t timeout_ms, kc_error *err)
{
    if (w->result == KC_ETIMEOUT)
        return kc_error_set(err, KC_ETIMEOUT, "store condition did not hold within %lld ms",
                            (long long)timeout_ms);
    if (w->result == KC_ESTOPPED)
        return kc_error_set(err, KC_ESTOPPED, "store stopped while waiting");
    return w->result;
}

int(kc_store_wait)(kc_store *s, const kc_store_cond *c, size_t c_size, int64_t timeout_ms,
                   kc_error *err)
{
    if (!s || !c)
        return kc_error_set(err, KC_EINVAL, "kc_store_wait: %s is NULL", !s ? "store" : "cond");
    KC__OPTS_TAKE(c, kc_store_cond, err);
    kc__waiter w;
    int rc = cond_prepare(c, &w, err);
    if (rc < 0)
        return rc;
    uint64_t deadline =
        timeout_ms < 0 ? KC__DEADLINE_NEVER : kc__now_ns() + (uint64_t)timeout_ms * KC__NS_PER_MS;
    pthread_mutex_lock(&s->mu);
    if (s->stopped) {
        pthread_mutex_unlock(&s->mu);
        return kc_error_set(err, KC_ESTOPPED, "store stopped");
    }
    if (kc__store_eval(s, &w) == 1) {
        pthread_mutex_unlock(&s->mu);
        return 0;
    }
    if (timeout_ms == 0) {
        pthread_mutex_unlock(&s->mu);
        return kc_error_set(err, KC_ETIMEOUT, "store condition does not hold (timeout 0)");
    }
    atomic_init(&w.posted, 0);
    w.result = 0;
    w.pprev = NULL;
    w.post_next = NULL;
    wl_link(list_for(s, &w), &w);
    pthread_mutex_unlock(&s->mu);
    if (sleep_posted(&w, deadline))
        return wait_result(&w, timeout_ms, err);
    /* Timed out: unlink unless a writer claimed us meanwhile (then its post is imminent). */
    pthread_mutex_lock(&s->mu);
    bool claimed = w.done, stopped = s->stopped;
    if (!claimed)
        wl_unlink(&w);
    pthread_mutex_unlock(&s->mu);
    if (!claimed) {
        w.result = stopped ? KC_ESTOPPED : KC_ETIMEOUT;
        return wait_result(&w, timeout_ms, err);
    }
    sleep_posted(&w, KC__DEADLINE_NEVER);
    return wait_result(&w, timeout_ms, err);
}
