/*
 * nodeagent/internal.h — the node-scoped pod metadata cache's internals (prefix kc__pm_), shared
 * by the files of src/nodeagent/. Not installed. The node agent layer uses the informer (and what
 * is below it).
 *
 *   pm_entry.c    immutable, reference-counted entries (a pod with its containers pre-extracted,
 *                 a namespace), built by the writer at event time
 *   pm_index.c    the immutable hash indexes over them (snapshots) and their lookup
 *   pm_hazard.c   publishing snapshots to lock-free readers, and reclaiming old ones
 *   pm_writer.c   the writer: informer events → live pods, tombstones, namespaces → snapshots
 *   podmeta.c     the public API: life cycle, readiness, the fd, lookups, stats, metrics
 */
#ifndef KC_NODEAGENT_INTERNAL_H
#define KC_NODEAGENT_INTERNAL_H

#include "core/internal.h"
#include "kcache/podmeta.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- entries (pm_entry.c) ------------------------------------------------------------------- */

/* A container's four status strings (name, image, imageID, containerID) as spans: off < KC__PM_TAIL
 * is an offset in the projected object's text (kc_obj_json; the string has no escapes there), else
 * off - KC__PM_TAIL an offset in the entry's own tail (an unescaped copy). Not NUL-terminated. */
#define KC__PM_TAIL 0x80000000u
typedef struct kc__pm_cont {
    uint32_t off[4], len[4];
    uint32_t id_skip; /* bytes of "<runtime>://" at the start of containerID */
    kc_podmeta_container_kind kind;
} kc__pm_cont;

/* The containers' NUL-terminated strings, made on the first kc_podmeta_pod_container call of an
 * entry (the lookups and the enricher never need them): 4 per container, then their text. */
typedef struct kc__pm_cstrs {
    size_t heap;
    const char *s[];
} kc__pm_cstrs;

struct kc_podmeta_pod {
    _Atomic uint32_t refs;
    uint32_t n_cont;
    kc_obj *obj;            /* projected Pod (a reference) */
    uint64_t h_name, h_uid; /* hashes of ns/name and uid */
    int64_t deleted_at_ms;  /* wall clock, 0 when live */
    uint64_t expires_ns;    /* monotonic deadline of a tombstone, 0 when live */
    _Atomic(kc__pm_cstrs *) cstrs;
    uint32_t heap;      /* bytes of this allocation */
    bool deleted;       /* a tombstone */
    kc__pm_cont cont[]; /* then the tail: copies of strings that had escapes */
};

struct kc_podmeta_ns {
    _Atomic uint32_t refs;
    bool deleted;
    kc_obj *obj;
    uint64_t h_name;
    size_t heap;
};

/* A new entry for obj (a reference is taken), containers extracted from its status; deleted
 * entries carry deleted_at_ms / expires_ns. NULL on out of memory. */
kc_podmeta_pod *kc__pm_pod_new(kc_obj *obj, bool deleted, int64_t deleted_at_ms,
                               uint64_t expires_ns);
kc_podmeta_ns *kc__pm_ns_new(kc_obj *obj, bool deleted);

uint64_t kc__pm_hash(const char *s, size_t n, uint64_t seed);
uint64_t kc__pm_hash_name(const char *ns, const char *name);
/* The id of a container id: after "<runtime>://", else the whole string. */
const char *kc__pm_strip_runtime(const char *cid);
/* String f (0 name, 1 image, 2 imageID, 3 containerID) of container c of p, *len its length (not
 * NUL-terminated); kc__pm_cont_id: the id (containerID without "<runtime>://"). */
const char *kc__pm_cont_str(const kc_podmeta_pod *p, uint32_t c, int f, size_t *len);
const char *kc__pm_cont_id(const kc_podmeta_pod *p, uint32_t c, size_t *len);
/* Bytes held by p: its allocation, and the strings kc_podmeta_pod_container made. */
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

/* pm_writer.c: the informer handlers (ud = pm), the keeper thread, the change signal. */
extern const kc_informer_handlers kc__pm_pod_handlers;
extern const kc_informer_handlers kc__pm_ns_handlers;
void *kc__pm_keeper(void *arg);
void kc__pm_signal(kc_podmeta *pm);
void kc__pm_writer_clear(kc_podmeta *pm);
int kc__pm_publish_empty(kc_podmeta *pm);

#endif
