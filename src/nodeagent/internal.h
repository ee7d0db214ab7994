/*
 * nodeagent/internal.h — the node-scoped pod metadata cache's internals (prefix kc__pm_), shared
 * by the files of src/nodeagent/. Not installed. The node agent layer uses the informer (and what
 * is below it).
 *
 *   pm_dict.c     the key dictionary: label and annotation keys interned once per cache
 *   pm_rec.c      a pod's record: its kept fields as packed strings, built by the Pod informer's
 *                 transform into the object the informer stores (json/obj_ident.c)
 *   pm_entry.c    immutable, reference-counted entries (a pod's record, a namespace), made by the
 *                 writer at event time; the containers' accessors
 *   pm_access.c   the pod's other accessors: fields, labels, annotations, owners, its JSON
 *   pm_index.c    the immutable hash indexes over them (snapshots) and their lookup
 *   pm_hazard.c   publishing snapshots to lock-free readers, and reclaiming old ones
 *   pm_writer.c   the writer: informer events → live pods, tombstones, namespaces → snapshots
 *   podmeta.c     the public API: life cycle, readiness, the fd, lookups, stats, metrics
 */
#ifndef KC_NODEAGENT_INTERNAL_H
#define KC_NODEAGENT_INTERNAL_H

#include "core/internal.h"
#include "json/obj_internal.h"
#include "kcache/podmeta.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- the key dictionary (pm_dict.c) ---------------------------------------------------------- */

#define KC__PM_DICT_MAX     16384      /* keys */
#define KC__PM_DICT_KEY_MAX 320        /* bytes of one key (a qualified name: 253 + 1 + 63) */
#define KC__PM_DICT_BYTES   (1u << 20) /* text held */

typedef struct kc__pm_dstr {
    uint32_t len;
    char s[]; /* NUL-terminated */
} kc__pm_dstr;
typedef struct kc__pm_dict kc__pm_dict;

kc__pm_dict *kc__pm_dict_new(void);
kc__pm_dict *kc__pm_dict_ref(kc__pm_dict *d);
void kc__pm_dict_unref(kc__pm_dict *d);
/* The id of s (n bytes), interned now if new; -1 when it is not kept (too long, full, ENOMEM). */
int64_t kc__pm_dict_intern(kc__pm_dict *d, const char *s, size_t n);
/* The key of an id a published record holds (lock-free). */
const kc__pm_dstr *kc__pm_dict_get(const kc__pm_dict *d, uint32_t id);
size_t kc__pm_dict_heap(kc__pm_dict *d);

/* ---- records (pm_rec.c) --------------------------------------------------------------------- */

/*
 * A pod's record: what the enricher keeps of a Pod, as packed strings, in the identity object's
 * own allocation (kc__obj_ident_new's ext: the informer stores that object, the entry holds it).
 *
 *   kc__pm_rec   counts, where the arena is, the slot width, what was present
 *   slots        one per string, 2 bytes (4 when the arena is 32 KiB or more): 0 = absent, an
 *                offset in the arena, or (high bit) a key's dictionary id. In order: the fixed
 *                fields (KC__PM_F_*), labels (key, value)…, annotations (key, value)…, owner
 *                references (apiVersion, kind, name, uid)…, container statuses (name, image,
 *                imageID, containerID)…
 *   flags        one byte per owner (KC__PM_OWN_*), then one per container (its kind)
 *   arena        a NUL, then the strings in slot order, each NUL-terminated (a string's length is
 *                where the next one in the arena starts: a value holding NUL bytes is kept whole)
 */
enum { KC__PM_F_NODE, KC__PM_F_POD_IP, KC__PM_F_HOST_IP, KC__PM_F_DELETION, KC__PM_NF };
enum { KC__PM_OWN_CTRL = 1, KC__PM_OWN_CTRL_TRUE = 2, KC__PM_OWN_BOD = 4, KC__PM_OWN_BOD_TRUE = 8 };
/* present bits: the map or array was in the object (an empty one renders as {} / []) */
enum { KC__PM_HAS_LABELS = 1, KC__PM_HAS_ANNOTS = 2, KC__PM_HAS_OWNERS = 4, KC__PM_HAS_CS = 8 };
#define KC__PM_MAX_CONT 255 /* the index's slots hold a container index in 8 bits */

typedef struct kc__pm_rec {
    uint32_t n_lab, n_ann, n_own, n_cont;
    uint32_t arena_at, arena_len; /* from the record's start */
    uint8_t wide;                 /* 4-byte slots */
    uint8_t present;              /* KC__PM_HAS_*, KC__PM_HAS_CS << kind per status list */
} kc__pm_rec;

/* The identity object (kc__obj_ident_new) of the projected Pod src with its record appended, keys
 * interned in d: 0 and a new reference in *ret, KC_ENOMEM, KC_ETOOLARGE. */
int kc__pm_rec_build(const kc_obj *src, kc__pm_dict *d, kc_obj **ret);
/* Slot i of r: the string (NUL-terminated; "" when absent), *len its length, *present whether it
 * was in the object. */
const char *kc__pm_rec_str(const kc__pm_rec *r, const kc__pm_dict *d, size_t i, size_t *len,
                           bool *present);
static inline size_t kc__pm_rec_lab(const kc__pm_rec *r, size_t i)
{
    (void)r;
    return KC__PM_NF + 2 * i;
}
static inline size_t kc__pm_rec_ann(const kc__pm_rec *r, size_t i)
{
    return KC__PM_NF + 2 * (size_t)r->n_lab + 2 * i;
}
static inline size_t kc__pm_rec_own(const kc__pm_rec *r, size_t i)
{
    return KC__PM_NF + 2 * ((size_t)r->n_lab + r->n_ann) + 4 * i;
}
static inline size_t kc__pm_rec_cont(const kc__pm_rec *r, size_t i)
{
    return kc__pm_rec_own(r, r->n_own) + 4 * i;
}
static inline const uint8_t *kc__pm_rec_flags(const kc__pm_rec *r)
{
    size_t n = kc__pm_rec_cont(r, r->n_cont);
    return (const uint8_t *)(r + 1) + n * (r->wide ? 4 : 2);
}

/* ---- entries (pm_entry.c) ------------------------------------------------------------------- */

struct kc_podmeta_pod {
    _Atomic uint32_t refs;
    uint32_t n_cont;
    kc_obj *obj;            /* the identity object with the record (a reference) */
    kc__pm_dict *dict;      /* the record's keys (a reference) */
    uint64_t h_name, h_uid; /* hashes of ns/name and uid */
    int64_t deleted_at_ms;  /* wall clock, 0 when live */
    uint64_t expires_ns;    /* monotonic deadline of a tombstone, 0 when live */
    _Atomic(kc_obj *) full; /* kc_podmeta_pod_obj's object, made on its first call */
    bool deleted;           /* a tombstone */
    uint64_t h_cid[];       /* per container: kc__pm_hash_cid of its id, 0 = no id yet */
};

static inline const kc__pm_rec *kc__pm_rec_of(const kc_podmeta_pod *p)
{
    return kc__obj_ext(p->obj);
}

struct kc_podmeta_ns {
    _Atomic uint32_t refs;
    bool deleted;
    kc_obj *obj;
    uint64_t h_name;
    size_t heap;
};

/* A new entry for obj (an identity object with its record: a reference is taken); deleted entries
 * carry deleted_at_ms / expires_ns. NULL on out of memory. */
kc_podmeta_pod *kc__pm_pod_new(kc_obj *obj, kc__pm_dict *d, bool deleted, int64_t deleted_at_ms,
                               uint64_t expires_ns);
kc_podmeta_ns *kc__pm_ns_new(kc_obj *obj, bool deleted);

uint64_t kc__pm_hash(const char *s, size_t n, uint64_t seed);
uint64_t kc__pm_hash_name(const char *ns, const char *name);
/* The hash of a container id (without "<runtime>://"): never 0. */
uint64_t kc__pm_hash_cid(const char *id, size_t n);
/* The id of a container id: after "<runtime>://", else the whole string. */
const char *kc__pm_strip_runtime(const char *cid);
/* String f (0 name, 1 image, 2 imageID, 3 containerID) of container c of p, *len its length;
 * kc__pm_cont_id: the id (containerID without "<runtime>://"). */
const char *kc__pm_cont_str(const kc_podmeta_pod *p, uint32_t c, int f, size_t *len);
const char *kc__pm_cont_id(const kc_podmeta_pod *p, uint32_t c, size_t *len);
/* Bytes held by p: its allocation, its object (with the record), kc_podmeta_pod_obj's object. */
size_t kc__pm_pod_heap(const kc_podmeta_pod *p);

/* ---- snapshots (pm_index.c) ------------------------------------------------------------------ */

/* The pods (live and tombstones), indexed by ns/name, uid and container id. Immutable once
 * published; holds a reference on each entry. */
typedef struct kc__pm_psnap kc__pm_psnap;
/* The namespaces (live and tombstones), indexed by name. */
typedef struct kc__pm_nsnap kc__pm_nsnap;

kc__pm_psnap *kc__pm_psnap_new(kc_podmeta_pod *const *live, size_t n_live,
                               kc_podmeta_pod *const *tombs, size_t n_tombs);
void kc__pm_psnap_free(kc__pm_psnap *s);
size_t kc__pm_psnap_heap(const kc__pm_psnap *s); /* its tables */
kc__pm_nsnap *kc__pm_nsnap_new(kc_podmeta_ns *const *ents, size_t n);
void kc__pm_nsnap_free(kc__pm_nsnap *s);
size_t kc__pm_nsnap_heap(const kc__pm_nsnap *s);

/* The pod the query names in s (borrowed from s), *cont the container index or -1; NULL when
 * none (DP5: a tombstone never answers once the query's extra keys tell it apart). */
kc_podmeta_pod *kc__pm_psnap_find(const kc__pm_psnap *s, const kc_podmeta_query *q, int *cont);
kc_podmeta_ns *kc__pm_nsnap_find(const kc__pm_nsnap *s, const char *name);

/* ---- publication and reclamation (pm_hazard.c) ---------------------------------------------- */

#define KC__PM_SLOTS 64

/* One reader slot (a cache line): the snapshots it protects and its lookup counters. */
typedef struct kc__pm_slot {
    _Atomic int owner;
    _Atomic(kc__pm_psnap *) hp_pods;
    _Atomic(kc__pm_nsnap *) hp_ns;
    _Atomic uint64_t lookups, hits, tombstone_hits;
} __attribute__((aligned(64))) kc__pm_slot;

typedef struct kc__pm_domain {
    _Atomic(kc__pm_psnap *) pods; /* current snapshots (never NULL once set up) */
    _Atomic(kc__pm_nsnap *) ns;
    kc__pm_slot slots[KC__PM_SLOTS];
    /* the writer's (under its lock): retired snapshots still possibly read */
    kc__pm_psnap **old_pods;
    size_t n_old_pods, cap_old_pods;
    kc__pm_nsnap **old_ns;
    size_t n_old_ns, cap_old_ns;
} kc__pm_domain;

/* A reader's protection: claims a slot and protects the current snapshots. */
kc__pm_slot *kc__pm_enter(kc__pm_domain *d, kc__pm_psnap **pods, kc__pm_nsnap **ns);
void kc__pm_leave(kc__pm_slot *slot);
/* Writer only (serialised by the caller): publish (NULL = keep that one), retire the previous,
 * free what no slot protects. KC_ENOMEM leaves the new snapshot published and the old retired
 * later. */
void kc__pm_publish(kc__pm_domain *d, kc__pm_psnap *pods, kc__pm_nsnap *ns);
/* Free every snapshot (no reader may be inside). */
void kc__pm_domain_clear(kc__pm_domain *d);

/* ---- the cache (podmeta.c, pm_writer.c) ------------------------------------------------------ */

struct kc_podmeta {
    kc_client *client;
    kc_podmeta_opts o; /* copied; strings below */
    char *node, *prefix;
    char *pod_inf_name, *ns_inf_name, *field_selector;
    kc_informer *pods, *nsi;
    kc_informer_reg *pods_reg, *ns_reg;
    kc__pm_dict *dict; /* label and annotation keys of the records (pm_dict.c) */
    kc__pm_domain dom;

    /* writer state, under wmu (informer dispatchers and the keeper thread write) */
    pthread_mutex_t wmu;
    kc_podmeta_pod **live;
    size_t n_live, cap_live;
    kc_podmeta_pod **tombs; /* oldest first (deadline order: one grace for all) */
    size_t n_tombs, cap_tombs;
    kc_podmeta_ns **ns_live;
    size_t n_ns, cap_ns;
    kc_podmeta_ns **ns_tombs;
    size_t n_ns_tombs, cap_ns_tombs;
    _Atomic size_t st_pods, st_ns, st_tombs, st_evicted, st_heap;

    /* waiting: generation of changes, readiness */
    pthread_mutex_t mu;
    pthread_cond_t cond;
    uint64_t gen;
    _Atomic bool pods_synced, ns_synced, stopped, started;
    _Atomic uint64_t fb_misses, fb_waits; /* counted outside a slot */

    int efd;  /* kc_podmeta_fd */
    int wake; /* the keeper's */
    pthread_t keeper;
    bool keeper_running;
    _Atomic bool quit;
};

/* podmeta.c: the Pod projection (kc_decode_opts.keep) of the cache's informer. */
extern const char *const kc__pm_pod_keep[];

/* pm_writer.c: the Pod informer's transform (kc_informer_opts.transform, ud = pm: the identity
 * object with the pod's record), the informer handlers (ud = pm), the keeper thread, the change
 * signal. */
kc_obj *kc__pm_transform(void *ud, kc_obj *obj);
extern const kc_informer_handlers kc__pm_pod_handlers;
extern const kc_informer_handlers kc__pm_ns_handlers;
void *kc__pm_keeper(void *arg);
void kc__pm_signal(kc_podmeta *pm);
void kc__pm_writer_clear(kc_podmeta *pm);
int kc__pm_publish_empty(kc_podmeta *pm);

#endif
