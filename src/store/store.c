/*
 * store/store.c — kc_store: reads, single-writer mutations, the watermark, tombstones and the
 * lock-free read path (the atomic relist swap is relist.c).
 *
 * Locking: one mutex (s->mu) guards the live table pointer and everything in it, the tombstone
 * records, the sequence counter, the watermark and the waiter lists. Lists hold it for their copy
 * (plus one reference increment per returned object); Get takes no lock (below). The single writer
 * (the reflector) mutates under it too; a relist batch is built without the lock and swapped in
 * under it.
 *
 * Relist (kc_store_replace, batches): relist.c. Grace periods and the retired items: reclaim.c.
 *
 * Lock-free Get: kc_store_get / kc_store_get_key take no lock. Two mechanisms:
 *   - a seqlock (s->rseq, odd while the writer mutates the live key map, always inside s->mu) makes
 *     the probe consistent: the reader loads rseq (acquire), probes with acquire loads and
 *     re-reads rseq; any change means the probe may have seen a half-moved table (backward-shift
 *     deletion, growth) and it retries — after a few failures (a writer descheduled mid-write) it
 *     takes the mutex, so it always terminates. No fences (ThreadSanitizer does not model them):
 *     every slot store is a release store, so a reader whose acquire load sees a store made
 *     inside a write window also sees the odd rseq stored before it, and its later re-read of
 *     rseq (ordered after the acquire loads) cannot return the even value it started with. On
 *     x86-64 acquire loads and release stores are plain moves;
 *   - epoch-based reclamation makes what the probe touches stay allocated: a reader announces
 *     itself in readers[epoch & 1] (seq_cst increment, then re-checks the epoch — the Dekker pair
 *     with the writer's seq_cst epoch flip and counter load), and the writer hands everything a
 *     reader could still hold (replaced slot arrays, removed entries, one extra reference to each
 *     replaced or removed object, relisted-away tables) to the retirer instead of freeing it; it
 *     is released after a grace period (reclaim.c). Readers never block the writer and never wait
 *     on the mutex while announced, so no deadlock.
 * The reference the reader takes is on an object the store still holds (directly or through the
 * retired extra reference), so it never resurrects a freed object.
 */
#include "store/internal.h"

#include "kcache/rv.h"

#include <stdlib.h>
#include <string.h>

/* Reader side. */
static inline unsigned reader_enter(kc_store *s)
{
    for (;;) {
        unsigned e = atomic_load_explicit(&s->epoch, memory_order_relaxed);
        atomic_fetch_add_explicit(&s->readers[e & 1].n, 1, memory_order_seq_cst);
        if (atomic_load_explicit(&s->epoch, memory_order_seq_cst) == e)
            return e;
        atomic_fetch_sub_explicit(&s->readers[e & 1].n, 1, memory_order_release);
    }
}

static inline void reader_exit(kc_store *s, unsigned e)
{
    atomic_fetch_sub_explicit(&s->readers[e & 1].n, 1, memory_order_release);
}

/* Writer: open / close a seqlock window over the live map (with s->mu held). */
static inline void write_begin(kc_store *s)
{
    KC__ASSERT_HELD(&s->mu);
    uint64_t q = atomic_load_explicit(&s->rseq, memory_order_relaxed);
    KC__DEBUG_ASSERT((q & 1) == 0); /* no window open already */
    atomic_store_explicit(&s->rseq, q + 1, memory_order_relaxed);
}

static inline void write_end(kc_store *s)
{
    uint64_t q = atomic_load_explicit(&s->rseq, memory_order_relaxed);
    atomic_store_explicit(&s->rseq, q + 1, memory_order_release);
}

static void publish_tab(kc_store *s, kc__stab *t)
{
    t->map.ret = &s->retirer;
    __atomic_store_n(&s->tab, t, __ATOMIC_RELEASE);
}

void kc__store_swap_tab(kc_store *s, kc__stab *t)
{
    write_begin(s);
    publish_tab(s, t);
    write_end(s);
}

int(kc_store_new)(const kc_store_opts *opts, size_t opts_size, kc_store **ret, kc_error *err)
{
    KC__OPTS_TAKE(opts, kc_store_opts, err);
    if (!ret)
        return kc_error_set(err, KC_EINVAL, "store: ret is required");
    kc_store *s = aligned_alloc(64, (sizeof(*s) + 63) & ~(size_t)63);
    if (!s)
        return kc_error_set(err, KC_ENOMEM, "store: out of memory");
    memset(s, 0, sizeof(*s));
    s->retirer.fn = kc__store_retire;
    s->max_tombs = (opts && opts->max_tombstones) ? opts->max_tombstones : 65536;
    s->nixs = 1;
    s->ixs[0].name = KC_STORE_INDEX_NAMESPACE;
    kc__stab *t = kc__stab_new(1);
    if (!t || pthread_mutex_init(&s->mu, NULL) != 0) {
        kc__stab_free(t);
        free(s);
        return kc_error_set(err, KC_ENOMEM, "store: out of memory");
    }
    publish_tab(s, t);
    *ret = s;
    return 0;
}

void kc_store_stop(kc_store *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->stopped = true;
    kc__store_wake_all(s);
    kc__waiter *wk = kc__store_take_posts(s);
    pthread_mutex_unlock(&s->mu);
    kc__store_post(wk);
}

static void tombs_clear(kc_store *s)
{
    for (size_t i = 0; i < s->tombs.cap; i++)
        free(KC__HTAB_AT(&s->tombs, i));
    kc__htab_free(&s->tombs);
}

void kc_store_free(kc_store *s)
{
    if (!s)
        return;
    kc__store_release_retired(s); /* no call in flight: no reader */
    s->tab->map.ret = NULL;
    kc__stab_free(s->tab);
    tombs_clear(s);
    for (size_t i = 1; i < s->nixs; i++)
        free(s->ixs[i].name);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

int kc_store_add_indexer(kc_store *s, const char *name, kc_store_indexer_fn fn, void *ud,
                         kc_error *err)
{
    if (!s)
        return kc_error_set(err, KC_EINVAL, "store is NULL");
    if (!name || !*name || !fn || strcmp(name, KC_STORE_INDEX_NAMESPACE) == 0)
        return kc_error_set(err, KC_EINVAL, "store: bad indexer name or function");
    int rc = 0;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nixs; i++)
        if (strcmp(s->ixs[i].name, name) == 0)
            rc = kc_error_set(err, KC_EINVAL, "store: indexer %s already registered", name);
    if (!rc && (s->has_objects || s->tab->map.n))
        rc = kc_error_set(err, KC_EBUSY, "store: indexers must be added before objects");
    if (!rc && s->nixs >= 1 + KC_STORE_MAX_INDEXERS)
        rc = kc_error_set(err, KC_ETOOLARGE, "store: more than %d indexers", KC_STORE_MAX_INDEXERS);
    if (!rc) {
        char *n = kc__strdup(name);
        if (!n) {
            rc = kc_error_set(err, KC_ENOMEM, "store: out of memory");
        } else {
            s->ixs[s->nixs].name = n;
            s->ixs[s->nixs].fn = fn;
            s->ixs[s->nixs].ud = ud;
            s->nixs++;
            s->tab->nidx = s->nixs;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* ---- reads ---------------------------------------------------------------------------------- */

/* With s->mu held: the object at key (kl bytes, NUL-terminated and zero-padded to KC__KEY_WORDS(kl)
 * words, like the entries' keys). The fallback of the lock-free probe below. */
static kc_obj *lookup_locked(kc_store *s, const char *key, size_t kl, uint64_t h)
{
    const kc__htab *t = &s->tab->map;
    if (t->cap == 0)
        return NULL;
    size_t mask = t->cap - 1, nw = KC__KEY_WORDS(kl);
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        const kc__slot *sl = &t->slots[i];
        if (!sl->e)
            return NULL;
        if (sl->hash != h || sl->klen != kl)
            continue;
        const kc__ent *e = (const kc__ent *)sl->e;
        uint64_t diff = 0;
        for (size_t w = 0; w < nw; w++)
            diff |= kc__rd64(e->keybuf + 8 * w) ^ kc__rd64(key + 8 * w);
        if (diff == 0)
            return kc_obj_ref(sl->aux);
    }
}

static __attribute__((noinline)) kc_obj *lookup_slow(kc_store *s, const char *key, size_t kl,
                                                     uint64_t h)
{
    pthread_mutex_lock(&s->mu);
    kc_obj *o = lookup_locked(s, key, kl, h);
    pthread_mutex_unlock(&s->mu);
    return o;
}

/*
 * One optimistic probe of the live map (inside a reader section): *ret = the object pointer (not
 * yet referenced) or NULL. Returns false when a writer was active (retry). The slot holds the
 * hash, the key length, the entry and the object; on a hash and length match (and a consistent
 * slot) the entry's key words are checked (whole words including the terminator: equal words ⇒
 * equal key), touching only the entry's key line. Every load from shared slots is
 * atomic; the entry's key is immutable once published (release store of the slot's entry) and
 * stays allocated while the reader is announced. The probe is bounded by the capacity, so a table
 * changing under it cannot keep it looping.
 */
static inline __attribute__((always_inline)) bool probe(kc_store *s, const char *key, size_t kl,
                                                        uint64_t h, kc_obj **ret)
{
    uint64_t q = atomic_load_explicit(&s->rseq, memory_order_acquire);
    if (q & 1)
        return false;
    const kc__stab *t = __atomic_load_n(&s->tab, __ATOMIC_ACQUIRE);
    const kc__slot *slots = __atomic_load_n(&t->map.slots, __ATOMIC_ACQUIRE);
    kc_obj *o = NULL;
    if (slots) {
        size_t mask = (size_t)slots[-1].hash - 1, nw = KC__KEY_WORDS(kl);
        for (size_t i = h & mask, n = 0; n <= mask; i = (i + 1) & mask, n++) {
            const kc__slot *sl = &slots[i];
            const kc__ent *e = (const kc__ent *)__atomic_load_n(&sl->e, __ATOMIC_ACQUIRE);
            if (!e)
                break;
            if (__atomic_load_n(&sl->hash, __ATOMIC_ACQUIRE) != h ||
                __atomic_load_n(&sl->klen, __ATOMIC_ACQUIRE) != kl)
                continue;
            /* The slot's fields may be torn by a concurrent move: validate before reading nw words
             * of e's key (consistent ⇒ e's key has length kl, so the words are inside it). */
            if (atomic_load_explicit(&s->rseq, memory_order_relaxed) != q)
                return false;
            uint64_t diff = 0;
            for (size_t w = 0; w < nw; w++)
                diff |= kc__rd64(e->keybuf + 8 * w) ^ kc__rd64(key + 8 * w);
            if (diff == 0) {
                o = __atomic_load_n(&sl->aux, __ATOMIC_ACQUIRE);
                break;
            }
        }
    }
    if (atomic_load_explicit(&s->rseq, memory_order_relaxed) != q)
        return false;
    *ret = o;
    return true;
}

/* The Get: lock-free probes, falling back to the mutex when writers keep interfering. */
static inline __attribute__((always_inline)) kc_obj *lookup(kc_store *s, const char *key, size_t kl,
                                                            uint64_t h)
{
    kc_obj *o = NULL;
    unsigned e = reader_enter(s);
    for (int tries = 0; tries < 16; tries++) {
        if (probe(s, key, kl, h, &o)) {
            if (o)
                kc_obj_ref(o); /* still held by the store, or by a retired extra reference */
            reader_exit(s, e);
            return o;
        }
        __builtin_ia32_pause();
    }
    reader_exit(s, e); /* never wait for the mutex while announced */
    return lookup_slow(s, key, kl, h);
}

/* Build the padded key of (ns, name) into buf (KC__KEY_MAX + 8 bytes). Length, or -1 (no name / too
 * long). Inline: the Get hot path pays two strlen and two short copies, no call. */
static inline int get_key(const char *ns, const char *name, char *buf)
{
    if (!name || !*name)
        return -1;
    size_t nl = (ns && *ns) ? strlen(ns) : 0, ml = strlen(name);
    size_t len = nl ? nl + 1 + ml : ml;
    if (len + 1 > KC__KEY_MAX) /* as kc__store_key: such a key is never stored */
        return -1;
    memset(buf + (len & ~(size_t)7), 0, 8); /* the last word: terminator and padding */
    char *p = buf;
    if (nl) {
        memcpy(p, ns, nl);
        p += nl;
        *p++ = '/';
    }
    memcpy(p, name, ml);
    return (int)len;
}

kc_obj *kc_store_get_key(kc_store *s, const char *key)
{
    if (!s || !key)
        return NULL;
    size_t kl = strlen(key);
    if (kl + 1 > KC__KEY_MAX)
        return NULL; /* longer than any stored key */
    _Alignas(8) char buf[KC__KEY_MAX + 8];
    memset(buf + (kl & ~(size_t)7), 0, 8);
    memcpy(buf, key, kl);
    return lookup(s, buf, kl, kc__hash(buf, kl));
}

kc_obj *kc_store_get(kc_store *s, const char *ns, const char *name)
{
    if (!s)
        return NULL;
    _Alignas(8) char key[KC__KEY_MAX + 8];
    int kl = get_key(ns, name, key);
    if (kl < 0)
        return NULL;
    return lookup(s, key, (size_t)kl, kc__hash(key, (size_t)kl));
}

size_t kc_store_len(kc_store *s)
{
    if (!s)
        return 0;
    pthread_mutex_lock(&s->mu);
    size_t n = s->tab->map.n;
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* KC_EINVAL naming the NULL argument of a list function. */
static int list_args(const char *fn, kc_store *s, kc_obj ***ret_objs, size_t *ret_n, kc_error *err)
{
    if (s && ret_objs && ret_n)
        return 0;
    return kc_error_set(err, KC_EINVAL, "%s: %s is NULL", fn,
                        !s          ? "store"
                        : !ret_objs ? "ret_objs"
                                    : "ret_n");
}

int kc_store_list(kc_store *s, kc_obj ***ret_objs, size_t *ret_n, kc_error *err)
{
    int rc = list_args("kc_store_list", s, ret_objs, ret_n, err);
    if (rc)
        return rc;
    pthread_mutex_lock(&s->mu);
    size_t n = s->tab->map.n, k = 0;
    kc_obj **v = n ? malloc(n * sizeof(*v)) : NULL;
    if (n && !v) {
        pthread_mutex_unlock(&s->mu);
        return kc_error_set(err, KC_ENOMEM, "store list: out of memory (%zu objects)", n);
    }
    for (size_t i = 0; i < s->tab->map.cap && k < n; i++) {
        kc__ent *e = (kc__ent *)KC__HTAB_AT(&s->tab->map, i);
        if (e)
            v[k++] = kc_obj_ref(e->obj);
    }
    pthread_mutex_unlock(&s->mu);
    *ret_objs = v;
    *ret_n = k;
    return 0;
}

static int list_bucket(kc_store *s, size_t ix, const char *value, kc_obj ***ret_objs, size_t *ret_n,
                       kc_error *err)
{
    size_t vl = strlen(value);
    uint64_t h = kc__hash(value, vl);
    pthread_mutex_lock(&s->mu);
    kc__bucket *b = (kc__bucket *)kc__htab_find(&s->tab->idx[ix], value, vl, h);
    size_t n = b ? b->n : 0;
    kc_obj **v = n ? malloc(n * sizeof(*v)) : NULL;
    if (n && !v) {
        pthread_mutex_unlock(&s->mu);
        return kc_error_set(err, KC_ENOMEM, "store list: out of memory (%zu objects)", n);
    }
    for (size_t i = 0; i < n; i++)
        v[i] = kc_obj_ref(b->items[i]->obj);
    pthread_mutex_unlock(&s->mu);
    *ret_objs = v;
    *ret_n = n;
    return 0;
}

int kc_store_list_by_namespace(kc_store *s, const char *ns, kc_obj ***ret_objs, size_t *ret_n,
                               kc_error *err)
{
    int rc = list_args("kc_store_list_by_namespace", s, ret_objs, ret_n, err);
    return rc ? rc : list_bucket(s, 0, ns ? ns : "", ret_objs, ret_n, err);
}

int kc_store_list_by_index(kc_store *s, const char *index, const char *value, kc_obj ***ret_objs,
                           size_t *ret_n, kc_error *err)
{
    int rc = list_args("kc_store_list_by_index", s, ret_objs, ret_n, err);
    if (rc)
        return rc;
    if (!index || !value)
        return kc_error_set(err, KC_EINVAL, "kc_store_list_by_index: %s is NULL",
                            !index ? "index" : "value");
    for (size_t i = 0; i < s->nixs; i++) /* indexer set is frozen once objects exist */
        if (strcmp(s->ixs[i].name, index) == 0)
            return list_bucket(s, i, value, ret_objs, ret_n, err);
    return kc_error_set(err, KC_ENOTFOUND, "store has no index \"%s\"", index);
}

int kc_store_watermark(kc_store *s, char *buf, size_t cap)
{
    if (!s || !buf)
        return KC_EINVAL;
    pthread_mutex_lock(&s->mu);
    size_t n = strlen(s->wm);
    int rc = (int)n;
    if (n + 1 > cap)
        rc = KC_ETOOLARGE;
    else
        memcpy(buf, s->wm, n + 1);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

uint64_t kc_store_seq(kc_store *s)
{
    if (!s)
        return 0;
    pthread_mutex_lock(&s->mu);
    uint64_t q = s->seq;
    pthread_mutex_unlock(&s->mu);
    return q;
}

uint64_t kc_store_key_seq(kc_store *s, const char *ns, const char *name)
{
    (void)ns;
    (void)name; /* the store-wide counter is a valid "now" for every key */
    return kc_store_seq(s);
}

/* ---- writes --------------------------------------------------------------------------------- */

void kc_store_change_clear(kc_store_change *ch)
{
    if (!ch)
        return;
    kc_obj_unref(ch->old_obj);
    kc_obj_unref(ch->new_obj);
    memset(ch, 0, sizeof(*ch));
}

bool kc__store_advance(kc_store *s, const char *rv)
{
    KC__ASSERT_HELD(&s->mu);
    if (!rv || !kc_rv_is_canonical(rv))
        return false;
    size_t n = strlen(rv);
    if (n >= KC_STORE_RV_MAX)
        return false;
    if (s->wm[0] && kc_rv_compare(rv, s->wm) != KC_RV_GREATER)
        return false;
    memcpy(s->wm, rv, n + 1);
    return true;
}

void kc__store_tomb_put(kc_store *s, const char *key, size_t kl, uint64_t h, uint64_t seq,
                        const char *rv, const char *uid)
{
    KC__ASSERT_HELD(&s->mu);
    free(kc__htab_remove(&s->tombs, key, kl, h)); /* a newer record replaces an older one */
    if (s->tombs.n >= s->max_tombs) {
        tombs_clear(s);
        s->tomb_floor = seq; /* absent keys without a record: an event may have happened */
    }
    size_t ul = uid ? strlen(uid) : 0;
    kc__tomb *t = calloc(1, sizeof(*t) + kl + 1 + ul + 1); /* key, NUL, uid, NUL */
    if (t) {
        memcpy(t->keybuf, key, kl);
        memcpy(t->keybuf + kl + 1, uid ? uid : "", ul);
        t->uid = t->keybuf + kl + 1;
        t->h.key = t->keybuf;
        t->h.klen = kl;
        t->h.hash = h;
    }
    if (!t || kc__htab_insert(&s->tombs, &t->h) < 0) {
        free(t);
        s->tomb_floor = seq + 1; /* cannot record: answer "maybe" for every absent key */
        return;
    }
    t->seq = seq;
    size_t rl = rv ? strlen(rv) : 0;
    if (rl >= KC_STORE_RV_MAX)
        rl = 0;
    memcpy(t->rv, rv ? rv : "", rl);
    t->rv[rl] = '\0';
}

void kc__store_tomb_drop(kc_store *s, const char *key, size_t kl, uint64_t h)
{
    KC__ASSERT_HELD(&s->mu);
    free(kc__htab_remove(&s->tombs, key, kl, h));
}

int kc_store_apply(kc_store *s, kc_watch_type type, kc_obj *obj, kc_store_change *ret_change,
                   kc_error *err)
{
    if (!s)
        return kc_error_set(err, KC_EINVAL, "store is NULL");
    if (!obj || (type != KC_WATCH_ADDED && type != KC_WATCH_MODIFIED && type != KC_WATCH_DELETED))
        return kc_error_set(err, KC_EINVAL,
                            "store: apply needs an object and ADDED/MODIFIED/DELETED");
    char key[KC__KEY_MAX];
    int kl = kc__store_key(kc_obj_namespace(obj), kc_obj_name(obj), key, sizeof(key));
    if (kl < 0)
        return kc_error_set(err, KC_EINVAL, "store: object without a name or key too long");
    uint64_t h = kc__hash(key, (size_t)kl);
    kc_store_change ch = {0};
    int rc = 0;
    KC__STORE_WRITER_ENTER(s);
    pthread_mutex_lock(&s->mu);
    write_begin(s);
    kc__ent *e = (kc__ent *)kc__htab_find(&s->tab->map, key, (size_t)kl, h);
    uint64_t seq = s->seq + 1;
    if (type == KC_WATCH_DELETED) {
        if (e) {
            ch.kind = KC_STORE_CHANGE_DELETED;
            ch.old_obj = kc__stab_remove(s->tab, e);
            ch.new_obj = kc_obj_ref(obj);
        }
        kc__store_tomb_put(s, key, (size_t)kl, h, seq, kc_obj_resource_version(obj),
                           kc_obj_uid(obj));
    } else if (e) {
        rc = kc__stab_set(s->tab, s->ixs, e, obj, &ch.old_obj);
        if (rc == 0) {
            e->seq = seq;
            ch.kind = KC_STORE_CHANGE_UPDATED;
            ch.new_obj = kc_obj_ref(obj);
        }
    } else {
        rc = kc__stab_insert(s->tab, s->ixs, key, (size_t)kl, h, obj, seq, NULL);
        if (rc == 0) {
            s->has_objects = true;
            kc__store_tomb_drop(s, key, (size_t)kl, h);
            ch.kind = KC_STORE_CHANGE_ADDED;
            ch.new_obj = kc_obj_ref(obj);
        }
    }
    write_end(s); /* before any waiter can run: a woken waiter's Get sees the event */
    if (rc == 0) {
        s->seq = seq;
        kc__store_advance(s, kc_obj_resource_version(obj));
        kc__store_wake_key(s, h, key, (size_t)kl);
    }
    kc__store_reclaim(s);
    kc__waiter *wk = kc__store_take_posts(s);
    pthread_mutex_unlock(&s->mu);
    KC__STORE_WRITER_EXIT(s);
    kc__store_post(wk); /* outside the lock: a woken waiter never blocks on it */
    if (rc < 0)
        return kc_error_set(err, rc, "store: out of memory applying %s", key);
    if (ret_change)
        *ret_change = ch;
    else
        kc_store_change_clear(&ch);
    return 0;
}

void kc_store_bookmark(kc_store *s, const char *rv)
{
    if (!s)
        return;
    KC__STORE_WRITER_ENTER(s);
    pthread_mutex_lock(&s->mu);
    if (kc__store_advance(s, rv))
        kc__store_wake_key(s, 0, NULL, 0);
    kc__waiter *wk = kc__store_take_posts(s);
    pthread_mutex_unlock(&s->mu);
    KC__STORE_WRITER_EXIT(s);
    kc__store_post(wk);
}
