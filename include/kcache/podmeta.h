/*
 * kcache/podmeta.h — a node-scoped pod metadata cache for node agents (log and metrics enrichers).
 *
 * One call builds what fluent-bit's kubernetes filter and rsyslog's mmkubernetes do with one GET
 * per pod, from a watch instead: a Pod informer limited to one node
 * (fieldSelector=spec.nodeName=<node>) and a Namespace informer. The Pod informer decodes only the
 * fields an enricher needs (a projection applied at decode: metadata name, namespace, uid,
 * labels, annotations, ownerReferences and deletionTimestamp, spec.nodeName, status.podIP and
 * hostIP, and the containers' name, image, imageID and containerID from
 * status.{,init,ephemeral}containerStatuses) and keeps them as packed strings, label and
 * annotation keys interned once per cache (read them with kc_podmeta_pod_get,
 * kc_podmeta_pod_map_*, kc_podmeta_pod_owner, kc_podmeta_pod_container, or as JSON with
 * kc_podmeta_pod_json), so a cached pod costs little more than those strings. The Namespace
 * informer keeps the Namespace's metadata without managedFields (a kc_obj).
 *
 * Lookups (kc_podmeta_lookup) are for the hot path: by namespace and name, by pod UID, or by
 * container ID with or without its runtime prefix ("containerd://", "cri-o://", "docker://");
 * O(1), lock-free for readers (they never wait for the writer), and never a network call. A
 * deleted pod stays findable, marked deleted, for a grace period (default 10 minutes); those
 * tombstones are bounded in count and age and reported by kc_podmeta_get_stats. A lookup of a pod
 * not (yet) seen may wait for the cache up to a small bound (default 100 ms) — the watch lags the
 * kubelet's first log line by milliseconds.
 *
 * Embedding: kcache runs the watches on its own threads; the caller's event loop polls
 * kc_podmeta_fd, which becomes readable when the cache changed or its readiness changed
 * (kc_podmeta_fd_drain consumes that). kc_podmeta_ready says whether both informers hold their
 * initial list and are fresh (max_staleness_ms), so an agent can buffer records while it is not.
 *
 * Entries are immutable and reference-counted: a lookup returns a new reference to the entry that
 * was current; later changes publish new entries and never modify one a reader holds.
 *
 * Thread-safety: every function is thread-safe except kc_podmeta_free (no call may race with it).
 */
#ifndef KCACHE_PODMETA_H
#define KCACHE_PODMETA_H

#include "informer.h"

KC_BEGIN_DECLS

typedef struct kc_podmeta kc_podmeta;
typedef struct kc_podmeta_pod kc_podmeta_pod; /* an immutable cached pod (or tombstone) */
typedef struct kc_podmeta_ns kc_podmeta_ns;   /* an immutable cached namespace */

/* Options. Zero-initialised (or NULL) means the defaults. Strings are copied. */
typedef struct kc_podmeta_opts {
    const char *node_name;    /* NULL or "" = $NODE_NAME; neither set = KC_EINVAL */
    bool all_nodes;           /* no node field selector (a cluster-wide agent, tests) */
    bool no_namespaces;       /* no Namespace informer (kc_podmeta_result.ns stays NULL) */
    int64_t deleted_grace_ms; /* tombstone lifetime; 0 = 600000 (10 min), < 0 = none kept */
    size_t max_tombstones;    /* oldest evicted first beyond this; 0 = 4096 */
    int64_t not_seen_wait_ms; /* default lookup wait for an unknown pod; 0 = 100, < 0 = 0 */
    int64_t max_staleness_ms; /* kc_podmeta_ready false after the watch is down this long;
                                 0 = never (kc_informer_opts.max_staleness_ms) */
    const char *name_prefix;  /* informer names "<prefix>pods", "<prefix>namespaces";
                                 NULL = "podmeta-" */
} kc_podmeta_opts;

/*
 * New cache reading through client (borrowed: must outlive the cache). Nothing is sent until
 * kc_podmeta_start. Errors: KC_EINVAL (client or ret NULL; no node name given and NODE_NAME unset
 * or empty, unless all_nodes; a node name that is not a DNS subdomain — err names it),
 * KC_EUNSUPPORTED (opts of a newer header), KC_ENOMEM. opts are copied. *ret is new — caller frees
 * with kc_podmeta_free. Thread-safe. Since 0.1.
 */
KC_API int(kc_podmeta_new)(kc_client *client, const kc_podmeta_opts *opts, size_t opts_size,
                           kc_podmeta **ret, kc_error *err);
#define kc_podmeta_new(client, opts, ret, err)                                                     \
    (kc_podmeta_new)((client), (opts), sizeof(kc_podmeta_opts), (ret), (err))

/* Start both informers (list, then watch, on kcache's threads). Errors: KC_EINVAL (pm NULL, or
 * started twice), KC_ENOMEM, the informer's start errors. No ownership transfer. Thread-safe.
 * Since 0.1. */
KC_API int kc_podmeta_start(kc_podmeta *pm, kc_error *err);
/* Stop the informers (lookups keep answering from what is cached). Accepts NULL. No ownership
 * transfer. Thread-safe. Never fails. Since 0.1. */
KC_API void kc_podmeta_stop(kc_podmeta *pm);
/* Stop and free (pm consumed; entries readers still hold stay valid until unref'd). Accepts
 * NULL. Not thread-safe: no other call on pm may race with it. Never fails. Since 0.1. */
KC_API void kc_podmeta_free(kc_podmeta *pm);

/* The Pod informer (borrowed, owned by pm): for kc_health / a kc_cache, metrics, status. Its store
 * holds each pod's identity object (apiVersion, kind, name, namespace, uid, resourceVersion: its
 * transform keeps the rest in the cache's own form — read pods through kc_podmeta_lookup). NULL
 * for NULL. Thread-safe. Never fails. Since 0.1. */
KC_API kc_informer *kc_podmeta_pod_informer(kc_podmeta *pm);
/* The Namespace informer (borrowed, owned by pm; NULL when no_namespaces). NULL for NULL.
 * Thread-safe. Never fails. Since 0.1. */
KC_API kc_informer *kc_podmeta_ns_informer(kc_podmeta *pm);

/* True when both informers hold their initial list and are fresh (max_staleness_ms). No ownership
 * transfer. False for NULL. Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_podmeta_ready(kc_podmeta *pm);
/* Block until ready, at most timeout_ms (< 0 = no bound), without polling. Errors: KC_EINVAL
 * (NULL), KC_ETIMEOUT, KC_ESTOPPED (stopped meanwhile). No ownership transfer. Thread-safe. Since
 * 0.1. */
KC_API int kc_podmeta_wait_ready(kc_podmeta *pm, int64_t timeout_ms, kc_error *err);

/* A file descriptor (owned by pm: never close it) that polls readable after any change of the
 * cache (pod or namespace added, changed, deleted, tombstone expired) or of kc_podmeta_ready, until
 * kc_podmeta_fd_drain. Level-triggered; changes coalesce. Errors: KC_EINVAL for NULL. Thread-safe.
 * Since 0.1. */
KC_API int kc_podmeta_fd(kc_podmeta *pm);
/* Consume the fd's readiness; returns the number of changes since the last drain (coalesced,
 * saturating), 0 when none. Errors: KC_EINVAL for NULL. No ownership transfer. Thread-safe.
 * Since 0.1. */
KC_API int64_t kc_podmeta_fd_drain(kc_podmeta *pm);

/* What to look up: the first key given of container_id, uid, (ns, name) is the key; the others,
 * when also given, decide between a live pod and a tombstone of the same name (a StatefulSet pod
 * recreated: the old file's container ID names the old pod). */
typedef struct kc_podmeta_query {
    const char *ns;           /* with name: the pod's namespace */
    const char *name;         /* with ns: the pod's name */
    const char *uid;          /* metadata.uid */
    const char *container_id; /* "<runtime>://<id>" or the bare id */
    int64_t wait_ms;          /* wait for a pod not (yet) seen: 0 = opts.not_seen_wait_ms, < 0 =
                                 never; also waits (same bound) while the cache is not ready */
} kc_podmeta_query;

/* One answer. Release with kc_podmeta_result_clear. */
typedef struct kc_podmeta_result {
    kc_podmeta_pod *pod; /* new reference (caller releases via _clear) */
    kc_podmeta_ns *ns;   /* its namespace, new reference; NULL when not known or no_namespaces */
    int container;       /* index (kc_podmeta_pod_container) of the container the query's
                            container_id named, else -1 */
} kc_podmeta_result;

/*
 * Look a pod up. Never sends a request; waits (the query's wait_ms) only when the pod is not known
 * or the cache is not ready, woken by the cache, never polling. Errors: KC_EINVAL (pm, q or ret
 * NULL; no key; ns without name or name without ns), KC_ENOTFOUND (not known, after the wait),
 * KC_EUNSUPPORTED (q or ret of a newer header). q is borrowed for the call; on success *ret holds
 * new references (caller clears), on failure it is zeroed with container -1. Thread-safe,
 * lock-free when no wait is needed. Since 0.1.
 */
KC_API int(kc_podmeta_lookup)(kc_podmeta *pm, const kc_podmeta_query *q, size_t q_size,
                              kc_podmeta_result *ret, size_t ret_size, kc_error *err);
#define kc_podmeta_lookup(pm, q, ret, err)                                                         \
    (kc_podmeta_lookup)((pm), (q), sizeof(kc_podmeta_query), (ret), sizeof(kc_podmeta_result),     \
                        (err))
/* Release the references res holds (consumed) and zero it (container -1); res_size =
 * sizeof(kc_podmeta_result), the macro passes it. Accepts NULL. Thread-safe for distinct results.
 * Never fails. Since 0.1. */
KC_API void(kc_podmeta_result_clear)(kc_podmeta_result *res, size_t res_size);
#define kc_podmeta_result_clear(res) (kc_podmeta_result_clear)((res), sizeof(kc_podmeta_result))

/* Another reference to a pod entry: returns pod, a new reference — caller unrefs. Accepts NULL.
 * Thread-safe. Never fails. Since 0.1. */
KC_API kc_podmeta_pod *kc_podmeta_pod_ref(kc_podmeta_pod *pod);
/* Release a pod entry reference (consumed). Accepts NULL. Thread-safe. Never fails. Since 0.1. */
KC_API void kc_podmeta_pod_unref(kc_podmeta_pod *pod);
/* Another reference to a namespace entry: returns ns, a new reference — caller unrefs. Accepts
 * NULL. Thread-safe. Never fails. Since 0.1. */
KC_API kc_podmeta_ns *kc_podmeta_ns_ref(kc_podmeta_ns *ns);
/* Release a namespace entry reference (consumed). Accepts NULL. Thread-safe. Never fails.
 * Since 0.1. */
KC_API void kc_podmeta_ns_unref(kc_podmeta_ns *ns);

/* The fields of a cached pod kc_podmeta_pod_get reads. */
typedef enum kc_podmeta_field {
    KC_PODMETA_FIELD_NAME = 0,
    KC_PODMETA_FIELD_NAMESPACE = 1,
    KC_PODMETA_FIELD_UID = 2,
    KC_PODMETA_FIELD_RESOURCE_VERSION = 3,
    KC_PODMETA_FIELD_NODE_NAME = 4,          /* spec.nodeName */
    KC_PODMETA_FIELD_POD_IP = 5,             /* status.podIP */
    KC_PODMETA_FIELD_HOST_IP = 6,            /* status.hostIP */
    KC_PODMETA_FIELD_DELETION_TIMESTAMP = 7, /* metadata.deletionTimestamp */
} kc_podmeta_field;

/* Field f of the pod: borrowed from the entry (valid while it is held), NUL-terminated, "" when
 * absent; *ret_len (may be NULL) its length (a value holding NUL bytes is kept whole: use the
 * length). NULL for a NULL pod or an unknown f. No ownership transfer. Thread-safe. Never fails.
 * Since 0.1. */
KC_API const char *kc_podmeta_pod_get(const kc_podmeta_pod *pod, kc_podmeta_field f,
                                      size_t *ret_len);

typedef enum kc_podmeta_map {
    KC_PODMETA_LABELS = 0,      /* metadata.labels */
    KC_PODMETA_ANNOTATIONS = 1, /* metadata.annotations */
} kc_podmeta_map;

/* Number of entries of map m (in the object's order). 0 for NULL or an unknown m. No ownership
 * transfer. Thread-safe. Never fails. Since 0.1. */
KC_API size_t kc_podmeta_pod_map_count(const kc_podmeta_pod *pod, kc_podmeta_map m);
/* Entry i of map m: *ret_key, *ret_value (each may be NULL) borrowed from the entry,
 * NUL-terminated; *ret_value_len (may be NULL) the value's length. Errors: KC_EINVAL (NULL pod,
 * unknown m), KC_ENOTFOUND (i out of range). No ownership transfer. Thread-safe. Since 0.1. */
KC_API int kc_podmeta_pod_map_at(const kc_podmeta_pod *pod, kc_podmeta_map m, size_t i,
                                 const char **ret_key, const char **ret_value,
                                 size_t *ret_value_len);
/* The value of key in map m (borrowed from the entry, NUL-terminated), NULL when absent (or NULL
 * arguments). key is borrowed for the call. O(entries). Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_podmeta_pod_map_get(const kc_podmeta_pod *pod, kc_podmeta_map m,
                                          const char *key);

/* One owner reference of a cached pod. Strings borrowed from the entry (valid while it is held),
 * NUL-terminated, never NULL ("" when absent). */
typedef struct kc_podmeta_owner {
    const char *api_version;
    const char *kind;
    const char *name;
    const char *uid;
    bool controller;
    bool block_owner_deletion;
} kc_podmeta_owner;

/* Number of metadata.ownerReferences. 0 for NULL. No ownership transfer. Thread-safe. Never
 * fails. Since 0.1. */
KC_API size_t kc_podmeta_pod_owner_count(const kc_podmeta_pod *pod);
/* Owner reference i into *ret (strings borrowed from the entry). Errors: KC_EINVAL (NULL),
 * KC_ENOTFOUND (i out of range), KC_EUNSUPPORTED (ret of a newer header). Thread-safe. Since 0.1.
 */
KC_API int(kc_podmeta_pod_owner)(const kc_podmeta_pod *pod, size_t i, kc_podmeta_owner *ret,
                                 size_t ret_size);
#define kc_podmeta_pod_owner(pod, i, ret)                                                          \
    (kc_podmeta_pod_owner)((pod), (i), (ret), sizeof(kc_podmeta_owner))

/* The cached pod as JSON: {"apiVersion":"v1","kind":"Pod","metadata":{name, namespace, uid,
 * resourceVersion, labels, annotations, ownerReferences, deletionTimestamp},"spec":{nodeName},
 * "status":{podIP, hostIP, containerStatuses, initContainerStatuses, ephemeralContainerStatuses
 * (name, image, imageID, containerID)}} — what is present of those. Returns a new malloc'd
 * string — caller frees; *ret_len (may be NULL) its length. Errors: NULL for a NULL pod or out of
 * memory. Thread-safe. Since 0.1. */
KC_API char *kc_podmeta_pod_json(const kc_podmeta_pod *pod, size_t *ret_len);

/* The cached pod as a kc_obj (kc_podmeta_pod_json's document, parsed): borrowed, valid while the
 * entry is held; use the kc_obj accessors (kc_obj_name, kc_obj_label, kc_obj_get_raw(obj,
 * "/metadata/annotations", …), kc_obj_iter). Made on the first call for an entry and kept with it
 * (the cache's heap_bytes counts it): an agent that reads every pod this way holds each twice —
 * the accessors above read the entry itself. NULL for NULL. Thread-safe. Never fails (out of
 * memory: the pod's identity object, name, namespace, uid and resourceVersion only). Since 0.1. */
KC_API const kc_obj *kc_podmeta_pod_obj(const kc_podmeta_pod *pod);
/* Whether the pod was deleted (a tombstone, its last state). False for NULL. No ownership
 * transfer. Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_podmeta_pod_deleted(const kc_podmeta_pod *pod);
/* When the pod's deletion was seen (ms since the epoch, this process's clock); 0 when live or
 * NULL. No ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API int64_t kc_podmeta_pod_deleted_at_ms(const kc_podmeta_pod *pod);

typedef enum kc_podmeta_container_kind {
    KC_PODMETA_CONTAINER = 0, /* status.containerStatuses */
    KC_PODMETA_INIT = 1,      /* status.initContainerStatuses */
    KC_PODMETA_EPHEMERAL = 2, /* status.ephemeralContainerStatuses */
} kc_podmeta_container_kind;

/* One container of a cached pod. Strings borrowed from the entry (valid while it is held),
 * NUL-terminated, never NULL ("" when absent). */
typedef struct kc_podmeta_container {
    const char *name;
    const char *image;        /* status image, verbatim */
    const char *image_id;     /* status imageID, verbatim */
    const char *container_id; /* status containerID, verbatim ("containerd://<id>"), "" before
                                 the container exists */
    const char *id;           /* container_id without "<runtime>://" */
    kc_podmeta_container_kind kind;
} kc_podmeta_container;

/* Number of containers with a status in the entry. 0 for NULL. No ownership transfer.
 * Thread-safe. Never fails. Since 0.1. */
KC_API size_t kc_podmeta_pod_container_count(const kc_podmeta_pod *pod);
/* Container i (0-based: containers, then init, then ephemeral, each in status order) into *ret
 * (strings borrowed from the entry; the first call on an entry makes them, once). Errors: KC_EINVAL
 * (NULL), KC_ENOTFOUND (i out of range), KC_EUNSUPPORTED (ret of a newer header), KC_ENOMEM.
 * Thread-safe. Since 0.1. */
KC_API int(kc_podmeta_pod_container)(const kc_podmeta_pod *pod, size_t i, kc_podmeta_container *ret,
                                     size_t ret_size);
#define kc_podmeta_pod_container(pod, i, ret)                                                      \
    (kc_podmeta_pod_container)((pod), (i), (ret), sizeof(kc_podmeta_container))
/* Index of the container named name (NULL = any) whose id is id (with or without its runtime
 * prefix; NULL = any), or -1. Never fails. Thread-safe. No ownership transfer. Since 0.1. */
KC_API int kc_podmeta_pod_find_container(const kc_podmeta_pod *pod, const char *name,
                                         const char *id);

/* The projected Namespace (metadata without managedFields): borrowed, valid while the entry is
 * held. NULL for NULL. Thread-safe. Never fails. Since 0.1. */
KC_API const kc_obj *kc_podmeta_ns_obj(const kc_podmeta_ns *ns);

/* Counters and sizes, read at once (a snapshot). */
typedef struct kc_podmeta_stats {
    size_t pods;               /* live pods cached */
    size_t namespaces;         /* namespaces cached */
    size_t tombstones;         /* deleted pods kept */
    size_t tombstones_evicted; /* evicted by max_tombstones before their grace ended */
    size_t heap_bytes;         /* heap held by entries and indexes (pods, tombstones, namespaces) */
    uint64_t lookups;          /* lookups answered */
    uint64_t hits;             /* … found live */
    uint64_t tombstone_hits;   /* … found as a tombstone */
    uint64_t misses;           /* … KC_ENOTFOUND */
    uint64_t waits;            /* … that waited */
} kc_podmeta_stats;

/* Fill *ret (ret_size = sizeof(kc_podmeta_stats), the macro passes it). Zeroes *ret for a NULL pm.
 * No ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API void(kc_podmeta_get_stats)(kc_podmeta *pm, kc_podmeta_stats *ret, size_t ret_size);
#define kc_podmeta_get_stats(pm, ret) (kc_podmeta_get_stats)((pm), (ret), sizeof(kc_podmeta_stats))

/* Prometheus text of the stats (kcache_podmeta_* gauges and counters, with HELP/TYPE), in the
 * render signature of kc_health_add_metrics_source (ud is the kc_podmeta *). Returns a new malloc'd
 * string — caller frees. Errors: NULL for a NULL ud or out of memory. Thread-safe. Since 0.1. */
KC_API char *kc_podmeta_metrics_render(void *ud);

KC_END_DECLS

#endif
