/*
 * enrich_reuse.c — the helper's answer cache: a record naming a pod whose answer the helper already
 * holds gets the same reply text again, without asking the daemon and without formatting.
 *
 * Design: the answer of a lookup (the pod's metadata, or "no such pod") can only change when the
 * view's owner applies a change, and the owner bumps a generation counter after each one
 * (kc__enrich_view.generation; for the daemon's helpers a page the daemon shares, read through the
 * client's stamp). The cache holds, per record key (namespace, pod, container, container id and
 * hash, pod UID: everything the reply depends on besides the metadata), the last reply and the
 * stamp read before it was asked: while the stamp read now is the same, nothing that could alter
 * that answer has been applied since, so the held reply is the reply (CA3: a change moves the
 * counter; a record read after that asks again). Both kinds of answer are held: metadata (rc 0)
 * and "not known" (KC_ENOTFOUND); no answer now (daemon down, not synced) is never held.
 *
 * The keys too: a record's key is a function of the few fields read from it (enrich_project.c's
 * id of them) and of the file system (a /var/log/containers link's target, FN13 — one readlink per
 * record, and a regex for Fluent Bit's names). The key derived for an id is held for
 * KC_ENRICH_KEY_TTL_MS (1 s): a link's target is fixed for the link's life (its name carries the
 * container's unique id), and the bound makes even a replaced link count within a second.
 *
 * Bounded: SLOTS entries per table (open addressing by a hash of the id, two probes; a third id
 * evicts the less recently used of the two), each with its reply or key, so memory is 2 × SLOTS
 * entries at most whatever arrives. Not thread-safe (one per helper loop).
 */
#include "enrich.h"

#include <stdlib.h>
#include <string.h>

#define SLOTS 4096

typedef struct entry {
    uint64_t hash, stamp, used;
    char *key; /* the id bytes, then the reply (or the flattened key) */
    size_t key_len;
    kc__enrich_answer a;
} entry;

typedef struct table {
    entry *slot[SLOTS];
} table;

struct kc__enrich_reuse {
    table answers, keys;
    uint64_t clock;
};

/* The key's fields as one byte string (a field absent and one empty differ); its length, or 0
 * when it does not fit. */
static size_t flatten(const kc__enrich_key *k, char *out, size_t cap)
{
    const char *f[] = {k->ns, k->pod, k->container, k->container_id, k->container_hash, k->uid};
    size_t n = 0;
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        size_t l = f[i] ? strlen(f[i]) + 1 : 0;
        if (n + l + 1 > cap)
            return 0;
        out[n++] = f[i] ? '+' : '-';
        memcpy(out + n, f[i] ? f[i] : "", l);
        n += l;
    }
    return n;
}

/* The inverse of flatten, into k (its strings in k->buf). */
static void unflatten(const char *s, size_t n, kc__enrich_key *k)
{
    memset(k, 0, offsetof(kc__enrich_key, buf));
    const char **f[] = {&k->ns, &k->pod, &k->container, &k->container_id, &k->container_hash,
                        &k->uid};
    memcpy(k->buf, s, n < sizeof k->buf ? n : sizeof k->buf);
    size_t at = 0;
    for (size_t i = 0; i < sizeof f / sizeof *f && at < n; i++)
        if (k->buf[at++] == '+') {
            *f[i] = k->buf + at;
            at += strlen(k->buf + at) + 1;
        }
}

static uint64_t hash_of(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

kc__enrich_reuse *kc__enrich_reuse_new(void)
{
    return calloc(1, sizeof(kc__enrich_reuse));
}

static void entry_free(entry *e)
{
    if (e) {
        json_decref(e->a.add);
        free(e->key);
        free(e);
    }
}

void kc__enrich_reuse_free(kc__enrich_reuse *r)
{
    if (!r)
        return;
    for (int i = 0; i < SLOTS; i++) {
        entry_free(r->answers.slot[i]);
        entry_free(r->keys.slot[i]);
    }
    free(r);
}

/* The entry for id, or NULL. */
static entry *find(table *t, const char *id, size_t n, uint64_t h)
{
    for (int p = 0; p < 2; p++) {
        entry *e = t->slot[(h + (uint64_t)p) % SLOTS];
        if (e && e->hash == h && e->key_len == n && !memcmp(e->key, id, n))
            return e;
    }
    return NULL;
}

/* Hold a (its reply copied) for id at stamp, replacing id's entry, else an empty probe, else the
 * least recently used of the two. */
static void put(kc__enrich_reuse *r, table *t, const char *id, size_t n, uint64_t stamp,
                const kc__enrich_answer *a)
{
    uint64_t h = hash_of(id, n);
    entry **p0 = &t->slot[h % SLOTS], **p1 = &t->slot[(h + 1) % SLOTS], **s;
    if (*p0 && find(t, id, n, h) == *p0)
        s = p0;
    else if (*p1 && find(t, id, n, h) == *p1)
        s = p1;
    else
        s = !*p0 ? p0 : !*p1 ? p1 : (*p0)->used <= (*p1)->used ? p0 : p1;
    entry *e = malloc(sizeof *e);
    char *buf = e ? malloc(n + a->reply_len + 1) : NULL;
    if (!buf) {
        free(e);
        return; /* not held: asked again next time */
    }
    memcpy(buf, id, n);
    if (a->reply)
        memcpy(buf + n, a->reply, a->reply_len);
    buf[n + a->reply_len] = '\0';
    *e = (entry){.hash = h,
                 .stamp = stamp,
                 .used = ++r->clock,
                 .key = buf,
                 .key_len = n,
                 .a = {.rc = a->rc,
                       .reply = a->reply ? buf + n : NULL,
                       .reply_len = a->reply_len,
                       .add = json_incref(a->add)}};
    entry_free(*s);
    *s = e;
}

const kc__enrich_answer *kc__enrich_reuse_get(kc__enrich_reuse *r, const kc__enrich_key *key,
                                              uint64_t stamp)
{
    char k[sizeof key->buf + 16];
    size_t n = r ? flatten(key, k, sizeof k) : 0;
    entry *e = n ? find(&r->answers, k, n, hash_of(k, n)) : NULL;
    if (!e || e->stamp != stamp)
        return NULL;
    e->used = ++r->clock;
    return &e->a;
}

void kc__enrich_reuse_put(kc__enrich_reuse *r, const kc__enrich_key *key, uint64_t stamp,
                          const kc__enrich_answer *a)
{
    char k[sizeof key->buf + 16];
    size_t n = r ? flatten(key, k, sizeof k) : 0;
    if (n)
        put(r, &r->answers, k, n, stamp, a);
}

int kc__enrich_reuse_key_get(kc__enrich_reuse *r, const char *id, size_t n, int64_t now_ms,
                             kc__enrich_key *key)
{
    entry *e = r && n ? find(&r->keys, id, n, hash_of(id, n)) : NULL;
    if (!e || now_ms < (int64_t)e->stamp || now_ms - (int64_t)e->stamp >= KC_ENRICH_KEY_TTL_MS)
        return -1;
    e->used = ++r->clock;
    unflatten(e->a.reply, e->a.reply_len, key);
    return 0;
}

void kc__enrich_reuse_key_put(kc__enrich_reuse *r, const char *id, size_t n, int64_t now_ms,
                              const kc__enrich_key *key)
{
    char k[sizeof key->buf + 16];
    size_t kn = r && n && now_ms >= 0 ? flatten(key, k, sizeof k) : 0;
    if (kn && kn <= sizeof key->buf)
        put(r, &r->keys, id, n, (uint64_t)now_ms,
            &(kc__enrich_answer){.reply = k, .reply_len = kn});
}
