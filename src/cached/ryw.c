/*
 * cached/ryw.c — block-on-read bookkeeping of a cached client: the client's own writes that its
 * cache may not have observed yet.
 *
 * One hash table (core's kc__htab) keyed by (type, namespace, name) as a kc__hkey. An entry is
 * either
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
    kc__hent h;             /* key (type, ns, name); a key's superseded entries share it */
    char *type, *ns, *name; /* into the joined key, one allocation, see entry_new */
    char *rv;               /* write: the returned RV; pending delete: an RV of it, or NULL */
    char *uid;              /* write: the object's UID, or NULL */
    char *delete_uid;       /* pending delete: the UID; NULL for a write */
    uint64_t after_seq;
    uint64_t gen;
    bool superseded; /* a pending delete a later entry of the key replaced (see above) */
};

#define RYW_MIN_SWEEP 1024

static void entry_free(kc__ryw_entry *e)
{
    if (!e)
        return;
    free(e->rv);
    free(e->uid);
    free(e->delete_uid);
    free(e);
}

static kc__ryw_entry *entry_new(const kc__hkey *k)
{
    kc__ryw_entry *e = calloc(1, sizeof(*e) + k->klen + 1);
    if (!e)
        return NULL;
    char *p = (char *)(e + 1);
    kc__hkey_write(k, p);
    e->h = (kc__hent){k->hash, k->klen, p};
    e->type = p;
    e->ns = p + k->len[0] + 1;
    e->name = e->ns + k->len[1] + 1;
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
    for (size_t i = 0; i < t->map.cap; i++)
        entry_free((kc__ryw_entry *)KC__HTAB_AT(&t->map, i));
    kc__htab_free(&t->map);
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

/* The current entry of the key, creating it (blank) when create is set. NULL when absent / on
 * ENOMEM. */
static kc__ryw_entry *find(kc__ryw *t, const kc__hkey *k, bool create)
{
    size_t pos = 0;
    for (kc__hent *h; (h = kc__htab_find_key(&t->map, k, &pos));)
        if (!((kc__ryw_entry *)h)->superseded)
            return (kc__ryw_entry *)h;
    kc__ryw_entry *e = create ? entry_new(k) : NULL;
    if (e && kc__htab_insert(&t->map, &e->h) < 0) {
        entry_free(e);
        return NULL;
    }
    return e;
}

/* The entry of the key with generation gen (current or superseded); gen 0: the current one. */
static kc__ryw_entry *find_gen(kc__ryw *t, const kc__hkey *k, uint64_t gen)
{
    if (gen == 0)
        return find(t, k, false);
    size_t pos = 0;
    for (kc__hent *h; (h = kc__htab_find_key(&t->map, k, &pos));)
        if (((kc__ryw_entry *)h)->gen == gen)
            return (kc__ryw_entry *)h;
    return NULL;
}

static void unlink_entry(kc__ryw *t, kc__ryw_entry *victim)
{
    kc__htab_remove_ent(&t->map, &victim->h);
    entry_free(victim);
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
    kc__hkey k;
    kc__hkey_init(&k, 3, type, ns, name);
    if (dup_opt(rv, &rv_copy) && dup_opt(uid, &uid_copy) && dup_opt(delete_uid, &del_copy)) {
        e = find(t, &k, false);
        if (e && e->delete_uid && *e->delete_uid) {
            e->superseded = true; /* keeps hiding its UID until the store saw it go */
            e = NULL;
        }
        if (!e)
            e = find(t, &k, true);
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
    kc__hkey k;
    kc__hkey_init(&k, 3, type, ns, name);
    kc__ryw_entry *e = find_gen(t, &k, gen);
    if (e)
        unlink_entry(t, e);
}

void kc__ryw_refine(kc__ryw *t, const char *type, const char *ns, const char *name, uint64_t gen,
                    const char *uid, const char *rv)
{
    kc__hkey k;
    kc__hkey_init(&k, 3, type, ns, name);
    kc__ryw_entry *e = find_gen(t, &k, gen);
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
    kc__hkey k;
    kc__hkey_init(&k, 3, type, ns, name);
    kc__ryw_entry *e = find(t, &k, false);
    if (!e)
        return 0;
    int rc = copy_want(e, ret);
    return rc < 0 ? rc : 1;
}

int kc__ryw_collect(kc__ryw *t, const char *type, const char *ns, const char *name,
                    kc__ryw_want **ret)
{
    size_t n = 0, cap = 0, pos = 0;
    kc__ryw_want *out = NULL;
    bool all_ns = !ns || !*ns;
    kc__hkey k;
    kc__hkey_init(&k, 3, type, ns, name);
    /* one key: the entries with its key (current and superseded); else every entry */
    for (size_t i = 0; name ? pos < t->map.cap : i < t->map.cap; i++) {
        const kc__ryw_entry *e = (const kc__ryw_entry *)(name ? kc__htab_find_key(&t->map, &k, &pos)
                                                              : KC__HTAB_AT(&t->map, i));
        if (!e || (!name && (strcmp(e->type, type) || (!all_ns && strcmp(e->ns, ns)))))
            continue;
        if (kc__grow(&out, &cap, n + 1, sizeof(*out), 8) < 0)
            goto nomem;
        if (copy_want(e, &out[n]) < 0)
            goto nomem;
        n++;
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
    return t->map.n >= t->sweep_at;
}

void kc__ryw_swept(kc__ryw *t)
{
    size_t next = t->map.n * 2;
    t->sweep_at = next < RYW_MIN_SWEEP ? RYW_MIN_SWEEP : next;
}
