/*
 * informer/handlers.c — event handler registrations: one dispatcher thread and one bounded queue
 * per registration, so a slow handler delays only itself, never the watch or other handlers.
 *
 * Queue policy: the reflector pushes (old, new) changes in store order. While a registration's
 * queue holds fewer than `cap` items they are queued as is. When it is full the registration turns
 * "lagging": from then on changes are coalesced per key into a map holding the state the handler
 * last saw (first_old) and the latest state (latest, NULL when deleted). The dispatcher drains the
 * queue first (older changes), then the map, delivering one synthesised change per key:
 *   first_old=NULL, latest=X → add(X); first_old=A, latest=B → update(A, B);
 *   first_old=A, latest=NULL → delete(final state from the event, else A; tombstone as recorded);
 *   NULL, NULL → nothing.
 * When both are empty the registration leaves lagging mode. Memory is bounded by the number of
 * distinct keys, deletes are never lost and the order per key is kept; order across keys is relaxed
 * only while lagging.
 *
 * "Synced" per registration: a SYNCED marker is queued after the initial contents (at the
 * informer's sync, or right after the snapshot for a late registration); the registration is synced
 * once the dispatcher reaches it. Adds delivered before that are the initial contents
 * (on_add_ex's in_initial_list, client-go's isInInitialList); a registration that overflowed
 * during the initial list syncs only once drained, so a watch add coalesced with it counts as
 * initial too. Periodic resync (update(o, o) for
 * every stored object) runs when the queue is empty. Callbacks run without any lock held.
 *
 * Batching (watch ingest): the reflector applies each event to the store at once but holds the
 * changes back (inf->pend, ev_mu) until the read of the stream they came in is decoded
 * (kc__inf_flush, at most KC__PEND_MAX at a time); a flush takes each registration's lock once and
 * wakes its dispatcher at most once, and the dispatcher takes up to KC__DISPATCH_RUN changes per
 * lock round trip. Per-event futex wake-ups (and the context switches they cost on two cores) had
 * made the informer's ingest ~1.6x the CPU of the bare watch + store apply.
 */
#include "informer/internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- queue (reg->mu held) ------------------------------------------------------------------- */

static int ring_push(kc_informer_reg *r, kc__qitem it)
{
    KC__ASSERT_HELD(&r->mu);
    if (r->n == r->rcap) {
        size_t nc = kc__grow_cap(r->rcap, r->rcap + 1, sizeof(kc__qitem), 64);
        kc__qitem *nr = nc ? malloc(nc * sizeof(*nr)) : NULL;
        if (!nr)
            return KC_ENOMEM;
        for (size_t i = 0; i < r->n; i++)
            nr[i] = r->ring[(r->head + i) % r->rcap];
        free(r->ring);
        r->ring = nr;
        r->rcap = nc;
        r->head = 0;
    }
    r->ring[(r->head + r->n) % r->rcap] = it;
    r->n++;
    return 0;
}

static kc__qitem ring_pop(kc_informer_reg *r)
{
    kc__qitem it = r->ring[r->head];
    r->head = (r->head + 1) % r->rcap;
    r->n--;
    return it;
}

/* Out of memory while coalescing: the change is lost for this handler. Counted in the informer's
 * status (events_dropped) and logged. */
static void drop_change(kc_informer_reg *r, const char *key)
{
    atomic_fetch_add(&r->inf->events_dropped, 1);
    KC__LOG_WARN("informer", "informer %s: out of memory coalescing %s; change dropped",
                 r->inf->name, key);
}

static void coalesce(kc_informer_reg *r, const kc_store_change *ch)
{
    const kc_obj *any = ch->new_obj ? ch->new_obj : ch->old_obj;
    char key[KC__KEY_MAX];
    int kl = kc__store_key(kc_obj_namespace(any), kc_obj_name(any), key, sizeof(key));
    if (kl < 0)
        return;
    uint64_t h = kc__hash(key, (size_t)kl);
    kc__coal *c = (kc__coal *)kc__htab_find(&r->coal, key, (size_t)kl, h);
    bool deleted = ch->kind == KC_STORE_CHANGE_DELETED;
    if (!c) {
        c = kc__calloc("informer.coalesce", 1, sizeof(*c) + (size_t)kl + 1);
        if (!c) {
            drop_change(r, key);
            return;
        }
        memcpy(c->keybuf, key, (size_t)kl + 1);
        c->h.key = c->keybuf;
        c->h.klen = (size_t)kl;
        c->h.hash = h;
        if (kc__htab_insert(&r->coal, &c->h) < 0) {
            free(c);
            drop_change(r, key);
            return;
        }
        c->first_old = ch->kind == KC_STORE_CHANGE_ADDED ? NULL : kc_obj_ref(ch->old_obj);
    } else {
        kc_obj_unref(c->latest);
        kc_obj_unref(c->final);
        c->final = NULL;
    }
    c->latest = deleted ? NULL : kc_obj_ref(ch->new_obj);
    c->final = deleted ? kc_obj_ref(ch->new_obj) : NULL;
    c->tombstone = deleted && ch->tombstone;
}

/* Queue n changes (reg->mu taken once). move: the queue takes over the changes' references (the
 * last registration of a flush), else it takes its own. */
static void push_items(kc_informer_reg *r, kc_store_change *chs, size_t n, bool move)
{
    pthread_mutex_lock(&r->mu);
    if (r->stop) {
        pthread_mutex_unlock(&r->mu);
        if (move)
            for (size_t i = 0; i < n; i++)
                kc_store_change_clear(&chs[i]);
        return;
    }
    /* The dispatcher waits only after finding the ring empty and leaving lagging mode (under mu),
     * so it can be asleep only if the ring is empty now: wake it once per flush (a burst of
     * events), not per event (a futex wake and a context switch each). */
    bool wake = r->n == 0 && !r->lagging;
    for (size_t i = 0; i < n; i++) {
        kc_store_change *ch = &chs[i];
        kc_obj *o = move ? ch->old_obj : kc_obj_ref(ch->old_obj);
        kc_obj *nw = move ? ch->new_obj : kc_obj_ref(ch->new_obj);
        bool queued = false;
        if (!r->lagging && r->n < r->cap) {
            kc__qitem it = {ch->kind == KC_STORE_CHANGE_ADDED     ? KC__Q_ADD
                            : ch->kind == KC_STORE_CHANGE_UPDATED ? KC__Q_UPDATE
                                                                  : KC__Q_DELETE,
                            ch->tombstone, o, nw};
            queued = ring_push(r, it) == 0;
        }
        if (!queued) {
            r->lagging = true;
            coalesce(r, ch);
            kc_obj_unref(o);
            kc_obj_unref(nw);
        }
        if (move)
            memset(ch, 0, sizeof(*ch));
    }
    pthread_mutex_unlock(&r->mu);
    /* Signalled after unlocking, so the woken dispatcher does not block on mu at once (glibc does
     * not hand the mutex over). r stays valid: it is freed only after being unlinked under ev_mu,
     * which the caller holds. */
    if (wake && n > 0)
        pthread_cond_signal(&r->cv);
}

void kc__inf_flush(kc_informer *inf)
{
    KC__ASSERT_HELD(&inf->ev_mu);
    size_t n = inf->npend;
    if (n == 0)
        return;
    inf->npend = 0;
    for (kc_informer_reg *r = inf->regs; r; r = r->next)
        push_items(r, inf->pend, n, r->next == NULL);
    for (size_t i = 0; i < n; i++) /* no registration (or moved: already zero) */
        kc_store_change_clear(&inf->pend[i]);
}

void kc__inf_push_change_owned(kc_informer *inf, kc_store_change *ch)
{
    if (ch->kind == KC_STORE_CHANGE_NONE || !inf->regs) {
        kc_store_change_clear(ch);
        return;
    }
    inf->pend[inf->npend++] = *ch;
    memset(ch, 0, sizeof(*ch));
    if (inf->npend == KC__PEND_MAX)
        kc__inf_flush(inf);
}

void kc__inf_push_change(kc_informer *inf, const kc_store_change *ch)
{
    KC__ASSERT_HELD(&inf->ev_mu);
    if (ch->kind == KC_STORE_CHANGE_NONE || !inf->regs)
        return;
    kc_store_change c = {ch->kind, kc_obj_ref(ch->old_obj), kc_obj_ref(ch->new_obj), ch->tombstone};
    kc__inf_push_change_owned(inf, &c);
}

static void push_synced(kc_informer_reg *r)
{
    pthread_mutex_lock(&r->mu);
    kc__qitem it = {KC__Q_SYNCED, false, NULL, NULL};
    if (r->lagging || ring_push(r, it) < 0)
        r->sync_after_drain = true;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

void kc__inf_push_synced(kc_informer *inf)
{
    kc__inf_flush(inf);
    for (kc_informer_reg *r = inf->regs; r; r = r->next)
        push_synced(r);
}

/* ---- dispatcher thread ---------------------------------------------------------------------- */

/* Changes a dispatcher takes off its queue at once (delivered in order without the lock). */
#define KC__DISPATCH_RUN 32

static void deliver(kc_informer_reg *r, kc__qkind kind, kc_obj *old_obj, kc_obj *new_obj,
                    bool tombstone)
{
    switch (kind) {
    case KC__Q_ADD: /* before the SYNCED marker: the initial contents (synced is ours to write) */
        if (r->h.on_add_ex)
            r->h.on_add_ex(r->h.ud, new_obj, !r->synced);
        else if (r->h.on_add)
            r->h.on_add(r->h.ud, new_obj);
        break;
    case KC__Q_UPDATE:
        if (r->h.on_update)
            r->h.on_update(r->h.ud, old_obj, new_obj);
        break;
    case KC__Q_DELETE: /* the final state from the event when known, else the last stored one */
        if (r->h.on_delete)
            r->h.on_delete(r->h.ud, new_obj ? new_obj : old_obj, tombstone);
        break;
    case KC__Q_SYNCED:
        break;
    }
}

static kc__coal *coal_pop(kc_informer_reg *r)
{
    for (size_t i = 0; i < r->coal.cap; i++) {
        size_t s = (r->coal_cursor + i) % r->coal.cap;
        kc__hent *e = KC__HTAB_AT(&r->coal, s);
        if (e) {
            r->coal_cursor = s;
            return (kc__coal *)kc__htab_remove(&r->coal, e->key, e->klen, e->hash);
        }
    }
    return NULL;
}

static void resync(kc_informer_reg *r)
{
    kc_obj **v = NULL;
    size_t n = 0;
    if (kc_store_list(r->inf->store, &v, &n, NULL) < 0)
        return;
    for (size_t i = 0; i < n; i++)
        deliver(r, KC__Q_UPDATE, v[i], v[i], false);
    kc_obj_array_free(v, n);
}

static void *dispatcher_main(void *arg)
{
    kc_informer_reg *r = arg;
    uint64_t next_resync = r->resync_ms > 0 ? kc__now_ns() + (uint64_t)r->resync_ms * KC__NS_PER_MS
                                            : KC__DEADLINE_NEVER;
    pthread_mutex_lock(&r->mu);
    while (!r->stop) {
        if (r->n > 0) {
            if (r->ring[r->head].kind == KC__Q_SYNCED) {
                ring_pop(r);
                r->synced = true;
                pthread_cond_broadcast(&r->idle_cv);
                continue;
            }
            /* Take a run of changes (up to the next SYNCED marker) and deliver it without the lock:
             * one lock round trip per run instead of per change. */
            kc__qitem run[KC__DISPATCH_RUN];
            size_t k = 0;
            while (r->n > 0 && k < KC__DISPATCH_RUN && r->ring[r->head].kind != KC__Q_SYNCED)
                run[k++] = ring_pop(r);
            r->busy = true;
            pthread_mutex_unlock(&r->mu);
            for (size_t i = 0; i < k; i++) {
                deliver(r, run[i].kind, run[i].old_obj, run[i].new_obj, run[i].tombstone);
                kc_obj_unref(run[i].old_obj);
                kc_obj_unref(run[i].new_obj);
            }
            pthread_mutex_lock(&r->mu);
            r->busy = false;
            continue;
        }
        kc__coal *c = coal_pop(r);
        if (c) {
            r->busy = true;
            pthread_mutex_unlock(&r->mu);
            if (!c->first_old && c->latest)
                deliver(r, KC__Q_ADD, NULL, c->latest, false);
            else if (c->first_old && c->latest)
                deliver(r, KC__Q_UPDATE, c->first_old, c->latest, false);
            else if (c->first_old)
                deliver(r, KC__Q_DELETE, c->first_old, c->final, c->tombstone);
            kc_obj_unref(c->first_old);
            kc_obj_unref(c->latest);
            kc_obj_unref(c->final);
            free(c);
            pthread_mutex_lock(&r->mu);
            r->busy = false;
            continue;
        }
        if (r->lagging) {
            r->lagging = false;
            kc__htab_free(&r->coal);
        }
        if (r->sync_after_drain) {
            r->sync_after_drain = false;
            r->synced = true;
        }
        pthread_cond_broadcast(&r->idle_cv);
        if (kc__now_ns() >= next_resync) {
            r->busy = true;
            pthread_mutex_unlock(&r->mu);
            resync(r);
            pthread_mutex_lock(&r->mu);
            r->busy = false;
            next_resync = kc__now_ns() + (uint64_t)r->resync_ms * KC__NS_PER_MS;
            continue;
        }
        kc__cond_wait_until(&r->cv, &r->mu, next_resync);
    }
    pthread_cond_broadcast(&r->idle_cv);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

/* ---- registration API ----------------------------------------------------------------------- */

static void reg_free(kc_informer_reg *r)
{
    while (r->n > 0) {
        kc__qitem it = ring_pop(r);
        kc_obj_unref(it.old_obj);
        kc_obj_unref(it.new_obj);
    }
    free(r->ring);
    kc__coal *c;
    while ((c = coal_pop(r))) {
        kc_obj_unref(c->first_old);
        kc_obj_unref(c->latest);
        kc_obj_unref(c->final);
        free(c);
    }
    kc__htab_free(&r->coal);
    pthread_cond_destroy(&r->cv);
    pthread_cond_destroy(&r->idle_cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

/* Stop the dispatcher and join it (once: a stopped registration stays allocated, and valid for
 * kc_informer_reg_* calls, until it is removed or the informer freed). Not from its own thread. */
static void reg_stop(kc_informer_reg *r)
{
    pthread_mutex_lock(&r->mu);
    r->stop = true;
    pthread_cond_broadcast(&r->cv);
    pthread_cond_broadcast(&r->idle_cv);
    bool join = r->thread_started;
    r->thread_started = false;
    pthread_mutex_unlock(&r->mu);
    if (join && !pthread_equal(r->thread, pthread_self()))
        pthread_join(r->thread, NULL);
}

int(kc_informer_add_handler)(kc_informer *inf, const kc_informer_handlers *h, size_t h_size,
                             const kc_informer_handler_opts *opts, size_t opts_size,
                             kc_informer_reg **ret_reg, kc_error *err)
{
    if (!inf || !h) /* before KC__OPTS_TAKE, which would turn a NULL h into empty handlers */
        return kc_error_set(err, KC_EINVAL, "informer: informer and handlers required");
    KC__OPTS_TAKE(h, kc_informer_handlers, err);
    KC__OPTS_TAKE(opts, kc_informer_handler_opts, err);
    kc_informer_reg *r = calloc(1, sizeof(*r));
    if (!r)
        return kc_error_set(err, KC_ENOMEM, "informer: out of memory");
    r->inf = inf;
    r->h = *h;
    r->resync_ms = (opts && opts->resync_ms) ? opts->resync_ms : inf->o.resync_ms;
    r->cap = (opts && opts->queue_cap) ? opts->queue_cap : inf->o.handler_queue_cap;
    pthread_mutex_init(&r->mu, NULL);
    if (kc__cond_init_monotonic(&r->cv) < 0 || kc__cond_init_monotonic(&r->idle_cv) < 0) {
        free(r);
        return kc_error_set(err, KC_ENOMEM, "informer: out of memory");
    }
    if (kc__inf_stopping(inf)) {
        reg_free(r);
        return kc_error_set(err, KC_ESTOPPED, "informer: stopped");
    }
    if (pthread_create(&r->thread, NULL, dispatcher_main, r) != 0) {
        reg_free(r);
        return kc_error_set(err, KC_ENOMEM, "informer: cannot start a dispatcher thread");
    }
    r->thread_started = true;
    /* Snapshot + link under the event lock: consistent with the event stream. */
    pthread_mutex_lock(&inf->ev_mu);
    kc__inf_flush(inf); /* the registrations so far get the changes the snapshot includes */
    kc_obj **v = NULL;
    size_t n = 0;
    int rc = kc_store_list(inf->store, &v, &n, NULL);
    for (size_t i = 0; rc == 0 && i < n; i += KC__PEND_MAX) {
        kc_store_change chs[KC__PEND_MAX];
        size_t k = n - i < KC__PEND_MAX ? n - i : KC__PEND_MAX;
        for (size_t j = 0; j < k; j++)
            chs[j] = (kc_store_change){KC_STORE_CHANGE_ADDED, NULL, v[i + j], false};
        push_items(r, chs, k, false);
    }
    kc_obj_array_free(v, n);
    if (rc == 0) {
        if (inf->ev_synced)
            push_synced(r);
        r->next = inf->regs;
        inf->regs = r;
        inf->nregs++;
    }
    pthread_mutex_unlock(&inf->ev_mu);
    if (rc < 0) {
        reg_stop(r);
        reg_free(r);
        return kc_error_set(err, rc, "informer: out of memory");
    }
    if (ret_reg)
        *ret_reg = r;
    return 0;
}

void kc_informer_remove_handler(kc_informer *inf, kc_informer_reg *reg)
{
    if (!inf || !reg)
        return;
    bool found = false;
    pthread_mutex_lock(&inf->ev_mu);
    for (kc_informer_reg **p = &inf->regs; *p; p = &(*p)->next) {
        if (*p == reg) {
            *p = reg->next;
            inf->nregs--;
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&inf->ev_mu);
    if (!found)
        return;
    reg_stop(reg);
    reg_free(reg);
}

void kc__inf_regs_stop_all(kc_informer *inf)
{
    pthread_mutex_lock(&inf->ev_mu);
    kc__inf_flush(inf);
    kc_informer_reg *list = inf->regs;
    pthread_mutex_unlock(&inf->ev_mu);
    /* The informer is stopping: the reflector has been joined, so nobody links or unlinks
     * registrations but kc_informer_remove_handler, which must not race with stop or free. */
    for (kc_informer_reg *r = list; r; r = r->next)
        reg_stop(r);
}

void kc__inf_regs_free_all(kc_informer *inf)
{
    kc_informer_reg *list = inf->regs;
    inf->regs = NULL;
    inf->nregs = 0;
    while (list) {
        kc_informer_reg *next = list->next;
        reg_stop(list);
        reg_free(list);
        list = next;
    }
}

bool kc_informer_reg_synced(kc_informer_reg *reg)
{
    if (!reg)
        return false;
    pthread_mutex_lock(&reg->mu);
    bool s = reg->synced;
    pthread_mutex_unlock(&reg->mu);
    return s;
}

bool kc_informer_reg_lagging(kc_informer_reg *reg)
{
    if (!reg)
        return false;
    pthread_mutex_lock(&reg->mu);
    bool l = reg->lagging;
    pthread_mutex_unlock(&reg->mu);
    return l;
}

static int reg_wait(kc_informer_reg *reg, int64_t timeout_ms, bool idle, kc_error *err)
{
    const char *what = idle ? "kc_informer_reg_wait_idle" : "kc_informer_reg_wait_synced";
    if (!reg)
        return kc_error_set(err, KC_EINVAL, "%s: reg is NULL", what);
    uint64_t deadline = kc__deadline_after_ms(timeout_ms);
    int rc = 0;
    if (idle) {
        /* The reflector holds the event lock across "apply to the store + push to every
         * registration" (and across a relist's swap + notifications): taking it once and flushing
         * the changes held back for a burst means every change already visible in the store has
         * been pushed to our queue. */
        pthread_mutex_lock(&reg->inf->ev_mu);
        kc__inf_flush(reg->inf);
        pthread_mutex_unlock(&reg->inf->ev_mu);
    }
    pthread_mutex_lock(&reg->mu);
    for (;;) {
        if (idle ? (reg->n == 0 && reg->coal.n == 0 && !reg->busy && !reg->sync_after_drain)
                 : reg->synced)
            break;
        if (reg->stop) {
            rc = KC_ESTOPPED;
            break;
        }
        if (kc__cond_wait_until(&reg->idle_cv, &reg->mu, deadline) == KC_ETIMEOUT) {
            bool ok = idle ? (reg->n == 0 && reg->coal.n == 0 && !reg->busy) : reg->synced;
            rc = ok ? 0 : KC_ETIMEOUT;
            break;
        }
    }
    pthread_mutex_unlock(&reg->mu);
    if (rc == KC_ESTOPPED)
        return kc_error_set(err, rc, "%s: informer %s stopped", what, reg->inf->name);
    if (rc == KC_ETIMEOUT)
        return kc_error_set(err, rc, "%s: informer %s: not %s within %lld ms", what, reg->inf->name,
                            idle ? "idle" : "synced", (long long)timeout_ms);
    return rc;
}

int kc_informer_reg_wait_synced(kc_informer_reg *reg, int64_t timeout_ms, kc_error *err)
{
    return reg_wait(reg, timeout_ms, false, err);
}

int kc_informer_reg_wait_idle(kc_informer_reg *reg, int64_t timeout_ms, kc_error *err)
{
    return reg_wait(reg, timeout_ms, true, err);
}

size_t kc__inf_lagging_count(kc_informer *inf)
{
    size_t n = 0;
    pthread_mutex_lock(&inf->ev_mu);
    for (kc_informer_reg *r = inf->regs; r; r = r->next)
        n += kc_informer_reg_lagging(r) ? 1 : 0;
    pthread_mutex_unlock(&inf->ev_mu);
    return n;
}
