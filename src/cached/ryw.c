/*
 * cached/ryw.c — block-on-read bookkeeping of a cached client: the client's own writes that its
 * cache may not have observed yet.
 *
 * One chained hash table keyed by (type, namespace, name). An entry is either
 *   - a write: the resourceVersion the server returned, the object's UID (a later delete of the
 *     key may need it: the cache may not hold the object yet) and the store sequence read before
 *     the request was sent (for RVs that are not comparable: "that RV or any later event on the
 *     key");
 *   - a pending delete: the UID that was deleted (registered before the DELETE is sent, since the
 *     DELETED event can beat the response) and, when known, an RV the object had or its deletion
 *     RV; reads must never return an object with that UID. It is done only once the store has
 *     observed the deletion (KC_STORE_WAIT_DELETED): "key absent" alone proves nothing, the store
 *     may not have seen the object yet.
 * A later write or delete of the same key replaces the key's entry — except a pending delete of a
 * known UID, which is kept, *superseded*, next to the new entry until the store has observed that
 * deletion: re-creating a name (or deleting the re-created object, or a delete that fails) must
 * not bring back the object deleted first while the cache still holds it (with no_wait, or when
 * the newer entry completes on evidence about the newer object). Lookups of "the key's entry" see
 * only the current one; reads collect both. A pending delete of an unknown UID ("" — hide any
 * object at the key) is replaced, as it cannot be told from the re-created object. The highest RV
 * per type, which a list waits for, is computed from the type's entries when a list collects them
 * (entries are few: they are dropped as soon as they are observed), so there is no second
 * structure to keep in step.
 *
 * Bounded memory: a read drops the entries it finds observed; and when the table doubles in size
 * (at least 1024 entries) the writer sweeps the type it writes: it copies the entries out, checks
 * each against the store without holding the client lock (never two locks at once), and forgets
 * those observed (by generation, so a newer write to the key is kept). Entries the cache can never
 * observe (objects outside the informer's selectors) stay until the key is written or deleted
 * again.
 *
 * Not thread-safe by itself: the cached client's mutex guards every call.
 */
#include "cached/internal.h"

#include <stdlib.h>
#include <string.h>

struct kc__ryw_entry {
    kc__ryw_entry *next;
    uint64_t hash;
    char *type, *ns, *name; /* one allocation, see entry_new */
    char *rv;               /* write: the returned RV; pending delete: an RV of it, or NULL */
    char *uid;              /* write: the object's UID, or NULL */
    char *delete_uid;       /* pending delete: the UID; NULL for a write */
    uint64_t after_seq;
    uint64_t gen;
    bool superseded; /* a pending delete a later entry of the key replaced (see above) */
};

#define RYW_MIN_BUCKETS 64
#define RYW_MIN_SWEEP   1024

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (h ^ 0x1f) * 1099511628211ull; /* field separator */
}

static uint64_t key_hash(const char *type, const char *ns, const char *name)
{
    return fnv(fnv(fnv(14695981039346656037ull, type), ns ? ns : ""), name);
}

/* e is an entry of the key (current or superseded). */
static bool entry_of(const kc__ryw_entry *e, uint64_t h, const char *type, const char *ns,
                     const char *name)
{
    return e->hash == h && !strcmp(e->type, type) && !strcmp(e->ns, ns ? ns : "") &&
           !strcmp(e->name, name);
}

/* e is the key's current entry. */
static bool entry_is(const kc__ryw_entry *e, uint64_t h, const char *type, const char *ns,
                     const char *name)
{
    return !e->superseded && entry_of(e, h, type, ns, name);
}

static void entry_free(kc__ryw_entry *e)
{
    if (!e)
        return;
    free(e->rv);
    free(e->uid);
    free(e->delete_uid);
    free(e);
}

static kc__ryw_entry *entry_new(uint64_t h, const char *type, const char *ns, const char *name)
{
    size_t lt = strlen(type) + 1, ln = strlen(ns ? ns : "") + 1, lm = strlen(name) + 1;
    kc__ryw_entry *e = calloc(1, sizeof(*e) + lt + ln + lm);
    if (!e)
        return NULL;
    char *p = (char *)(e + 1);
    e->type = memcpy(p, type, lt);
    e->ns = memcpy(p + lt, ns ? ns : "", ln);
    e->name = memcpy(p + lt + ln, name, lm);
    e->hash = h;
    return e;
}

void kc__ryw_init(kc__ryw *t)
{
    memset(t, 0, sizeof(*t));
    t->sweep_at = RYW_MIN_SWEEP;
    t->next_gen = 1;
}

void kc__ryw_destroy(kc__ryw *t)
{
    for (size_t i = 0; i < t->n_buckets; i++) {
        kc__ryw_entry *e = t->buckets[i];
        while (e) {
            kc__ryw_entry *next = e->next;
            entry_free(e);
            e = next;
        }
    }
    free(t->buckets);
    memset(t, 0, sizeof(*t));
}

void kc__ryw_want_clear(kc__ryw_want *w)
{
    if (!w)
        return;
    free(w->ns);
    free(w->name);
    free(w->rv);
    free(w->uid);
    free(w->delete_uid);
    memset(w, 0, sizeof(*w));
}

static int grow(kc__ryw *t)
{
    if (t->n_buckets && t->n_entries < t->n_buckets)
        return 0;
    size_t nb =
        kc__grow_cap(t->n_buckets, t->n_buckets + 1, sizeof(kc__ryw_entry *), RYW_MIN_BUCKETS);
    kc__ryw_entry **b = nb ? calloc(nb, sizeof(*b)) : NULL;
    if (!b)
        return t->n_buckets ? 0 : KC_ENOMEM; /* a full table still works, only slower */
    for (size_t i = 0; i < t->n_buckets; i++) {
        kc__ryw_entry *e = t->buckets[i];
        while (e) {
            kc__ryw_entry *next = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
            e = next;
        }
    }
    free(t->buckets);
    t->buckets = b;
    t->n_buckets = nb;
    return 0;
}

/* The current entry of the key, creating it (blank) when create is set. NULL when absent / on
 * ENOMEM. */
static kc__ryw_entry *find(kc__ryw *t, const char *type, const char *ns, const char *name,
                           bool create)
{
    uint64_t h = key_hash(type, ns, name);
    if (t->n_buckets) {
        for (kc__ryw_entry *e = t->buckets[h & (t->n_buckets - 1)]; e; e = e->next)
            if (entry_is(e, h, type, ns, name))
                return e;
    }
    if (!create || grow(t) < 0)
        return NULL;
    kc__ryw_entry *e = entry_new(h, type, ns, name);
    if (!e)
        return NULL;
    size_t i = h & (t->n_buckets - 1);
    e->next = t->buckets[i];
    t->buckets[i] = e;
    t->n_entries++;
    return e;
}

/* The entry of the key with generation gen (current or superseded); gen 0: the current one. */
static kc__ryw_entry *find_gen(kc__ryw *t, const char *type, const char *ns, const char *name,
                               uint64_t gen)
{
    if (gen == 0)
        return find(t, type, ns, name, false);
    uint64_t h = key_hash(type, ns, name);
    for (kc__ryw_entry *e = t->n_buckets ? t->buckets[h & (t->n_buckets - 1)] : NULL; e;
         e = e->next)
        if (e->gen == gen && entry_of(e, h, type, ns, name))
            return e;
    return NULL;
}

static void unlink_entry(kc__ryw *t, kc__ryw_entry *victim)
{
    kc__ryw_entry **pp = &t->buckets[victim->hash & (t->n_buckets - 1)];
    for (; *pp; pp = &(*pp)->next) {
        if (*pp == victim) {
            *pp = victim->next;
            entry_free(victim);
            t->n_entries--;
            return;
        }
    }
}

/* A copy of s (NULL stays NULL) into *ret; false on ENOMEM. */
static bool dup_opt(const char *s, char **ret)
{
    *ret = s ? kc__strdup(s) : NULL;
    return !s || *ret;
}

static int set_entry(kc__ryw *t, const char *type, const char *ns, const char *name, const char *rv,
                     const char *uid, const char *delete_uid, uint64_t after_seq, uint64_t *ret_gen)
{
    char *rv_copy = NULL, *uid_copy = NULL, *del_copy = NULL;
    kc__ryw_entry *e = NULL;
    if (dup_opt(rv, &rv_copy) && dup_opt(uid, &uid_copy) && dup_opt(delete_uid, &del_copy)) {
        e = find(t, type, ns, name, false);
        if (e && e->delete_uid && *e->delete_uid) {
            e->superseded = true; /* keeps hiding its UID until the store saw it go */
            e = NULL;
        }
        if (!e)
            e = find(t, type, ns, name, true);
    }
    if (!e) {
        free(rv_copy);
        free(uid_copy);
        free(del_copy);
        return KC_ENOMEM;
    }
    free(e->rv);
    free(e->uid);
    free(e->delete_uid);
    e->rv = rv_copy;
    e->uid = uid_copy;
    e->delete_uid = del_copy;
    e->after_seq = after_seq;
    e->gen = t->next_gen++;
    if (ret_gen)
        *ret_gen = e->gen;
    return 0;
}

int kc__ryw_note_write(kc__ryw *t, const char *type, const char *ns, const char *name,
                       const char *rv, const char *uid, uint64_t after_seq)
{
    return set_entry(t, type, ns, name, rv ? rv : "", uid && *uid ? uid : NULL, NULL, after_seq,
                     NULL);
}

int kc__ryw_note_delete(kc__ryw *t, const char *type, const char *ns, const char *name,
                        const char *uid, const char *rv, uint64_t after_seq, uint64_t *ret_gen)
{
    return set_entry(t, type, ns, name, rv && *rv ? rv : NULL, NULL, uid ? uid : "", after_seq,
                     ret_gen);
}

void kc__ryw_forget(kc__ryw *t, const char *type, const char *ns, const char *name, uint64_t gen)
{
    kc__ryw_entry *e = find_gen(t, type, ns, name, gen);
    if (e)
        unlink_entry(t, e);
}

void kc__ryw_refine(kc__ryw *t, const char *type, const char *ns, const char *name, uint64_t gen,
                    const char *uid, const char *rv)
{
    kc__ryw_entry *e = find_gen(t, type, ns, name, gen);
    if (!e || e->gen != gen || !e->delete_uid)
        return; /* a newer write to the key replaced it, or it is done */
    if (uid && *uid && strcmp(uid, e->delete_uid) != 0) {
        char *u = kc__strdup(uid), *r = NULL;
        if (!u || !dup_opt(rv && *rv ? rv : NULL, &r)) {
            free(u); /* ENOMEM: keep what is known */
            return;
        }
        free(e->delete_uid);
        free(e->rv);
        e->delete_uid = u;
        e->rv = r;
    } else if (!e->rv && rv && *rv) {
        e->rv = kc__strdup(rv); /* ENOMEM: stays unknown */
    }
}

static int copy_want(const kc__ryw_entry *e, kc__ryw_want *w)
{
    memset(w, 0, sizeof(*w));
    w->ns = kc__strdup(e->ns);
    w->name = kc__strdup(e->name);
    w->after_seq = e->after_seq;
    w->gen = e->gen;
    if (!w->ns || !w->name || !dup_opt(e->rv, &w->rv) || !dup_opt(e->uid, &w->uid) ||
        !dup_opt(e->delete_uid, &w->delete_uid)) {
        kc__ryw_want_clear(w);
        return KC_ENOMEM;
    }
    return 0;
}

int kc__ryw_lookup(kc__ryw *t, const char *type, const char *ns, const char *name,
                   kc__ryw_want *ret)
{
    kc__ryw_entry *e = find(t, type, ns, name, false);
    if (!e)
        return 0;
    int rc = copy_want(e, ret);
    return rc < 0 ? rc : 1;
}

int kc__ryw_collect(kc__ryw *t, const char *type, const char *ns, const char *name,
                    kc__ryw_want **ret)
{
    size_t n = 0, cap = 0;
    kc__ryw_want *out = NULL;
    bool all_ns = !ns || !*ns;
    uint64_t h = name ? key_hash(type, ns, name) : 0;
    size_t first = 0, end = t->n_buckets; /* one key: its bucket only */
    if (name && t->n_buckets) {
        first = h & (t->n_buckets - 1);
        end = first + 1;
    }
    for (size_t i = first; i < end; i++) {
        for (kc__ryw_entry *e = t->buckets[i]; e; e = e->next) {
            if (name ? !entry_of(e, h, type, ns, name)
                     : strcmp(e->type, type) || (!all_ns && strcmp(e->ns, ns)))
                continue;
            if (kc__grow(&out, &cap, n + 1, sizeof(*out), 8) < 0)
                goto nomem;
            if (copy_want(e, &out[n]) < 0)
                goto nomem;
            n++;
        }
    }
    *ret = out;
    return (int)n;
nomem:
    for (size_t j = 0; j < n; j++)
        kc__ryw_want_clear(&out[j]);
    free(out);
    return KC_ENOMEM;
}

kc_store_cond kc__ryw_want_cond(const kc__ryw_want *w)
{
    if (!w->delete_uid)
        return kc__cc_written_cond(w->ns, w->name, w->rv, w->after_seq);
    return kc__cc_deleted_cond(w->ns, w->name, w->delete_uid, w->rv, w->after_seq);
}

bool kc__ryw_should_sweep(const kc__ryw *t)
{
    return t->n_entries >= t->sweep_at;
}

void kc__ryw_swept(kc__ryw *t)
{
    size_t next = t->n_entries * 2;
    t->sweep_at = next < RYW_MIN_SWEEP ? RYW_MIN_SWEEP : next;
}
