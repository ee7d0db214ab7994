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
 * Bounded: SLOTS entries (open addressing by a hash of the key, two probes; a third key evicts the
 * older of the two), each with its reply, so memory is SLOTS replies at most whatever arrives. Not
 * thread-safe (one per helper loop).
 */
#include "enrich.h"

#include <stdlib.h>
#include <string.h>

#define SLOTS 4096

typedef struct entry {
    uint64_t hash, stamp, used;
    char *key; /* the key's fields, each NUL-terminated, then the reply */
    size_t key_len;
    kc__enrich_answer a;
} entry;

struct kc__enrich_reuse {
    entry *slot[SLOTS];
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
    for (int i = 0; i < SLOTS; i++)
        entry_free(r->slot[i]);
    free(r);
}

/* The slot holding key, or NULL. */
static entry **find(kc__enrich_reuse *r, const char *k, size_t n, uint64_t h)
{
    for (int p = 0; p < 2; p++) {
        entry **s = &r->slot[(h + (uint64_t)p) % SLOTS];
        if (*s && (*s)->hash == h && (*s)->key_len == n && !memcmp((*s)->key, k, n))
            return s;
    }
    return NULL;
}

const kc__enrich_answer *kc__enrich_reuse_get(kc__enrich_reuse *r, const kc__enrich_key *key,
                                              uint64_t stamp)
{
    char k[sizeof key->buf + 16];
    size_t n = r ? flatten(key, k, sizeof k) : 0;
    if (!n)
        return NULL;
    entry **s = find(r, k, n, hash_of(k, n));
    if (!s || (*s)->stamp != stamp)
        return NULL;
    (*s)->used = ++r->clock;
    return &(*s)->a;
}

void kc__enrich_reuse_put(kc__enrich_reuse *r, const kc__enrich_key *key, uint64_t stamp,
                          const kc__enrich_answer *a)
{
    char k[sizeof key->buf + 16];
    size_t n = r ? flatten(key, k, sizeof k) : 0;
    if (!n)
        return;
    uint64_t h = hash_of(k, n);
    entry **s = find(r, k, n, h);
    if (!s) { /* an empty probe, else the least recently used of the two */
        entry **p0 = &r->slot[h % SLOTS], **p1 = &r->slot[(h + 1) % SLOTS];
        s = !*p0 ? p0 : !*p1 ? p1 : (*p0)->used <= (*p1)->used ? p0 : p1;
    }
    entry *e = malloc(sizeof *e);
    char *buf = e ? malloc(n + a->reply_len + 1) : NULL;
    if (!buf) {
        free(e);
        return; /* not held: asked again next time */
    }
    memcpy(buf, k, n);
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
