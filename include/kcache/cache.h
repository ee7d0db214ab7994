/*
 * kcache/cache.h — kc_cache: a set of shared informers (one per resource + namespace + selectors),
 * with one readiness for all of them.
 *
 * kc_cache_get_informer creates and starts an informer on first use and returns the same one to
 * every later caller asking for the same gvr, namespace, selectors and metadata mode (other option
 * fields of later callers are ignored). Informers started late join the readiness set:
 * kc_cache_wait_synced waits for every required informer that exists while it waits.
 *
 * User indexers (kc_cache_add_indexer or kc_cache_opts.indexers) are attached by type to every
 * informer the cache creates for it, before the informer starts.
 *
 * Lifecycle: kc_cache_new → [kc_cache_add_indexer …] → kc_cache_get_informer … → kc_cache_stop →
 * kc_cache_free.
 * Thread-safety: every function is thread-safe except kc_cache_free.
 */
#ifndef KCACHE_CACHE_H
#define KCACHE_CACHE_H

#include "informer.h"

KC_BEGIN_DECLS

typedef struct kc_cache kc_cache;

/*
 * A user indexer for every informer of one type (kcache/store.h, kc_store_add_indexer): whichever
 * informer the cache creates for gvr (any namespace, selectors or metadata mode) gets it before it
 * starts, so kc_cached_client_list_by_index(…, name, …) works on that type. Strings are copied; ud
 * is borrowed and must outlive the cache. fn runs on the informer's reflector thread (possibly
 * under the store lock): it must be pure, fast and thread-safe.
 */
typedef struct kc_cache_indexer {
    kc_gvr gvr;       /* group NULL or "" = core */
    const char *name; /* not "namespace" (built in); unique per type */
    kc_store_indexer_fn fn;
    void *ud;
} kc_cache_indexer;

/* Cache options. Zero-initialised (or NULL) means the defaults. */
typedef struct kc_cache_opts {
    /* Applied to fields a get_informer caller leaves zero (not ns, selectors or name); copied by
     * kc_cache_new (shard ranges too, checked there: KC_EINVAL). NULL = none. Shard options apply
     * as a whole, to informers whose own shard_field and ranges are unset; an informer's ranges
     * are part of its identity (two ranges of one resource are two informers). */
    const kc_informer_opts *defaults;
    size_t defaults_size; /* sizeof(kc_informer_opts) when defaults is set (docs/abi.md) */
    size_t max_informers; /* 0 = 256 */
    const kc_cache_indexer *indexers; /* copied by kc_cache_new (see kc_cache_indexer) */
    size_t n_indexers;
} kc_cache_opts;

/* New cache over client (borrowed: must outlive the cache). opts may be NULL (copied).
 * Errors: KC_EINVAL (client or ret NULL, a bad indexer), KC_EUNSUPPORTED (opts of a newer
 * header), KC_ENOMEM. *ret is new — caller frees with kc_cache_free. Thread-safe. Since 0.1. */
KC_API int(kc_cache_new)(kc_client *client, const kc_cache_opts *opts, size_t opts_size,
                         kc_cache **ret, kc_error *err);
#define kc_cache_new(client, opts, ret, err)                                                       \
    (kc_cache_new)((client), (opts), sizeof(kc_cache_opts), (ret), (err))

/*
 * Register a user indexer for gvr's informers (see kc_cache_indexer; same as listing it in
 * kc_cache_opts.indexers). Must come before the cache creates any informer of gvr — a cached
 * client creates one on its first read or write of the type — else KC_EBUSY. Errors: KC_EINVAL
 * (NULL/empty name, "namespace", no fn, bad gvr, or the name already registered for gvr),
 * KC_ETOOLARGE (more than KC_STORE_MAX_INDEXERS for gvr), KC_ESTOPPED, KC_EBUSY, KC_ENOMEM.
 * gvr and name are copied; fn and ud are kept (ud borrowed: must outlive the cache). Thread-safe.
 * Since 0.1.
 */
KC_API int kc_cache_add_indexer(kc_cache *cache, const kc_gvr *gvr, const char *name,
                                kc_store_indexer_fn fn, void *ud, kc_error *err);

/*
 * The informer for gvr with opts (may be NULL), created and started if needed. gvr and opts are
 * checked first, as kc_informer_new does (KC_EINVAL naming the field and the reason), whether or
 * not the informer exists. gvr, ns, the selectors (compared in canonical form: "b=2, a=1" is
 * "a=1,b=2") and metadata_only identify the informer; other option fields of later callers are
 * ignored. opts->name, when given, must not be the name of another informer of this cache
 * (KC_EINVAL): names label /readyz and /metrics (see kc_informer_name). *ret_inf is borrowed:
 * valid until kc_cache_free; gvr and opts are copied. Errors: KC_EINVAL, KC_ESTOPPED,
 * KC_ETOOLARGE (max_informers), KC_EUNSUPPORTED (opts of a newer header), KC_ENOMEM, or an error
 * of creating or starting the informer (kc_informer_new). Thread-safe. Since 0.1.
 */
KC_API int(kc_cache_get_informer)(kc_cache *cache, const kc_gvr *gvr, const kc_informer_opts *opts,
                                  size_t opts_size, kc_informer **ret_inf, kc_error *err);
#define kc_cache_get_informer(cache, gvr, opts, ret_inf, err)                                      \
    (kc_cache_get_informer)((cache), (gvr), (opts), sizeof(kc_informer_opts), (ret_inf), (err))

/*
 * Block until every required informer (current and added meanwhile) has synced: 0; KC_ETIMEOUT
 * (timeout_ms < 0 = forever); KC_ESTOPPED (the cache, or a required informer, was stopped); or at
 * once, the code of a required informer whose initial list failed for good (KC_ENOTFOUND: the
 * server does not serve the resource; KC_EBADREQUEST, KC_EMETHOD — see kc_informer_wait_synced).
 * Event-driven. err (may be NULL) says why on failure: which informers are not synced and the
 * last error of each (code, HTTP status, reason, message, how long ago). KC_EINVAL for NULL.
 * Errors: as listed (KC_ETIMEOUT, KC_ESTOPPED, KC_EINVAL, an informer's final code). No ownership
 * transfer. Thread-safe. Since 0.1.
 */
KC_API int kc_cache_wait_synced(kc_cache *cache, int64_t timeout_ms, kc_error *err);

/* true when every required informer is synced (has_synced). false for NULL. No ownership
 * transfer. Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_cache_has_synced(kc_cache *cache);

/* true when every required informer is ready (synced and fresh enough). false for NULL. No
 * ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_cache_ready(kc_cache *cache);

/* An eventfd readable exactly while every required informer has synced (a late-added informer
 * makes it unreadable again until it syncs). Borrowed: closed by kc_cache_free. Never read it.
 * Errors: KC_EINVAL for NULL. Thread-safe. Since 0.1. */
KC_API int kc_cache_sync_fd(kc_cache *cache);

/* Number of informers (0 for NULL). No ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API size_t kc_cache_informer_count(kc_cache *cache);
/* The i-th informer (borrowed: valid until kc_cache_free; NULL out of range or for a NULL cache).
 * Thread-safe. Never fails. Since 0.1. */
KC_API kc_informer *kc_cache_informer_at(kc_cache *cache, size_t i);
/* Whether the i-th informer is required for readiness (false out of range or for NULL). No
 * ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API bool kc_cache_informer_required(kc_cache *cache, size_t i);

/* Stop every informer and wake every waiter (KC_ESTOPPED). Idempotent. Accepts NULL. No
 * ownership transfer. Thread-safe. Never fails. Since 0.1. */
KC_API void kc_cache_stop(kc_cache *cache);

/* Stop if needed and free everything (cache is consumed; borrowed informers die with it).
 * Accepts NULL. Not thread-safe: no other call on the cache may be in flight. Never fails.
 * Since 0.1. */
KC_API void kc_cache_free(kc_cache *cache);

KC_END_DECLS

#endif
