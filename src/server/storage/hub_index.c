/*
 * hub_index.c — the watch hub's index of watchers by a pinned field value (hub_index.h).
 *
 * Design
 * - A bucket per distinct value (core's kc__htab, key = the value's bytes), holding a doubly
 *   linked chain of the pins (watchers) pinned to it; a bucket is freed with its last pin, so the
 *   memory is bounded by the watchers. Adding and removing a watcher is O(1); finding the
 *   watchers of one value is one hash lookup.
 * - The value compared is the field's string form as field selectors compare it (selector_field.c:
 *   a string unescaped, a number or boolean as written, null or absent as ""): kc__pin_value_of
 *   gives it straight from the raw JSON text, except for a string with escapes, which the caller
 *   then treats as "any value" (it visits every pinned watcher) — exact, never a missed watcher.
 * Not thread-safe: the hub calls everything here under its lock.
 */
#include "server/storage/hub_index.h"

#include "kcache/error.h"

#include <stdlib.h>
#include <string.h>

struct kc__pin_bucket {
    kc__hent h; /* key = val */
    kc__pin *head;
    char val[];
};

int kc__pin_index_add(kc__pin_index *ix, kc__pin *p, const char *value, size_t len)
{
    uint64_t hash = kc__hash(value, len);
    kc__pin_bucket *b = (kc__pin_bucket *)kc__htab_find(&ix->tab, value, len, hash);
    if (!b) {
        b = malloc(sizeof *b + len + 1);
        if (!b)
            return KC_ENOMEM;
        memcpy(b->val, value, len);
        b->val[len] = '\0';
        b->h = (kc__hent){hash, len, b->val};
        b->head = NULL;
        if (kc__htab_insert(&ix->tab, &b->h) != 0) {
            free(b);
            return KC_ENOMEM;
        }
    }
    kc__pin_push(&b->head, p);
    p->bucket = b;
    ix->n++;
    return 0;
}

void kc__pin_index_remove(kc__pin_index *ix, kc__pin *p)
{
    kc__pin_bucket *b = p->bucket;
    if (!b)
        return;
    kc__pin_unlink(&b->head, p);
    p->bucket = NULL;
    ix->n--;
    if (!b->head) {
        kc__htab_remove_ent(&ix->tab, &b->h);
        free(b);
    }
}

kc__pin *kc__pin_index_find(const kc__pin_index *ix, const char *value, size_t len)
{
    if (!ix->n)
        return NULL;
    kc__pin_bucket *b = (kc__pin_bucket *)kc__htab_find(&ix->tab, value, len, kc__hash(value, len));
    return b ? b->head : NULL;
}

kc__pin *kc__pin_index_at(const kc__pin_index *ix, size_t i)
{
    kc__pin_bucket *b = (kc__pin_bucket *)KC__HTAB_AT(&ix->tab, i);
    return b ? b->head : NULL;
}

void kc__pin_index_free(kc__pin_index *ix)
{
    kc__htab_free(&ix->tab);
    ix->n = 0;
}

void kc__pin_push(kc__pin **head, kc__pin *p)
{
    p->prev = NULL;
    p->next = *head;
    if (*head)
        (*head)->prev = p;
    *head = p;
}

void kc__pin_unlink(kc__pin **head, kc__pin *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else if (*head == p)
        *head = p->next;
    if (p->next)
        p->next->prev = p->prev;
    p->prev = p->next = NULL;
}

bool kc__pin_value_of(const char *raw, size_t raw_len, const char **val, size_t *len)
{
    if (!raw || raw_len == 0 || (raw_len == 4 && memcmp(raw, "null", 4) == 0)) {
        *val = "";
        *len = 0;
        return true;
    }
    if (raw[0] != '"') { /* number, boolean, object, array: as written */
        *val = raw;
        *len = raw_len;
        return true;
    }
    if (raw_len < 2 || memchr(raw, '\\', raw_len))
        return false;
    *val = raw + 1;
    *len = raw_len - 2;
    return true;
}
