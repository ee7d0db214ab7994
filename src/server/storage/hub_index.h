/*
 * hub_index.h — the watch hub's index of watchers by a pinned field value (hub_index.c).
 *
 * A watcher whose field selector pins one field to a value (`spec.nodeName=node-7`) can only be
 * delivered events whose old or new object has that value: the hub keeps such watchers in a
 * hash by value (kube-apiserver's watch cache "triggers") and visits, per event, only the
 * watchers of the event's values plus the unpinned ones. Internal to the storage room.
 */
#ifndef KC_SERVER_HUB_INDEX_H
#define KC_SERVER_HUB_INDEX_H

#include "core/htab.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct kc__pin_bucket kc__pin_bucket;

/* A member of the index or of a plain chain (intrusive: embedded in the watcher). */
typedef struct kc__pin {
    struct kc__pin *prev, *next;
    kc__pin_bucket *bucket; /* NULL: in a plain chain, or in none */
    void *owner;            /* the watcher */
} kc__pin;

/* Value → chain of pins. Zero-initialised = empty. Not thread-safe (the hub lock). */
typedef struct kc__pin_index {
    kc__htab tab; /* of kc__pin_bucket */
    size_t n;     /* pins in the index */
} kc__pin_index;

/* Add p under value (len bytes; copied). 0 or KC_ENOMEM (then p unchanged). */
int kc__pin_index_add(kc__pin_index *ix, kc__pin *p, const char *value, size_t len);
/* Remove p (which is in ix); frees its bucket when it was the last. */
void kc__pin_index_remove(kc__pin_index *ix, kc__pin *p);
/* The first pin of value's chain (follow ->next), or NULL. */
kc__pin *kc__pin_index_find(const kc__pin_index *ix, const char *value, size_t len);
/* The first pin of the i-th slot's chain (i < ix->tab.cap; NULL for an empty slot): walks every
 * pin of the index. */
kc__pin *kc__pin_index_at(const kc__pin_index *ix, size_t i);
/* Free the (empty) index's table. */
void kc__pin_index_free(kc__pin_index *ix);

/* Plain chain: push p at the head of *head / unlink it. */
void kc__pin_push(kc__pin **head, kc__pin *p);
void kc__pin_unlink(kc__pin **head, kc__pin *p);

/* The string form a field selector compares (kc_field_selector_match_fn): raw is the field's
 * JSON text (NULL: absent). Sets *val and *len (borrowed from raw, or "" for absent and null) and
 * returns true; false when it cannot tell without unescaping (a string with escapes). */
bool kc__pin_value_of(const char *raw, size_t raw_len, const char **val, size_t *len);

#endif
