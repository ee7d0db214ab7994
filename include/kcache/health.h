/*
 * kcache/health.h — a health endpoint (libmicrohttpd) wired to a kc_cache.
 *
 *   GET /readyz   200 "ok" only when every required informer is synced and fresh enough (see
 *                 kc_informer_opts.max_staleness_ms), else 503; `?verbose` lists each check as the
 *                 API server does: "[+]informer pods ok" / "[-]informer pods failed: not synced",
 *                 followed, while the informer keeps failing, by its last error: ": last error
 *                 1.2s ago (4 in a row): KC_EFORBIDDEN (HTTP 403 Forbidden): <message>".
 *   GET /healthz, /livez   200 "ok" while the endpoint runs (`?verbose` supported).
 *   GET /metrics  Prometheus text format (0.0.4): objects, watermark, relists, watch restarts,
 *                 events applied, errors, failures in a row, time of the last error, last sync
 *                 duration, readiness — per informer, with HELP/TYPE. Each series is labelled
 *                 {informer="<kc_informer_name>",group,version,resource,namespace}; informer
 *                 names are unique within a cache, so no two series of a metric share labels.
 *                 Then the text of every source added with kc_health_add_metrics_source (a
 *                 controller's work queue, …).
 *   Informers outside the cache (kc_health_add_informer) count in /readyz and /metrics alike.
 *
 * Lifecycle: kc_health_new → kc_health_free (stops and frees). Thread-safety: the endpoint reads
 * the cache from its own thread; kc_health_url/port are thread-safe; kc_health_free must not race
 * with other calls on the endpoint.
 */
#ifndef KCACHE_HEALTH_H
#define KCACHE_HEALTH_H

#include "cache.h"

KC_BEGIN_DECLS

typedef struct kc_health kc_health;

/* Options. Zero-initialised (or NULL) means the defaults. */
typedef struct kc_health_opts {
    unsigned max_connections; /* 0 = 64 */
} kc_health_opts;

/*
 * New endpoint for cache (borrowed: must outlive the endpoint), serving on return on listen
 * "ADDR:PORT" (NULL = "127.0.0.1:0"; port 0 picks a free port). Errors: KC_EINVAL (bad address,
 * cache or ret NULL), KC_EIO (cannot bind), KC_EUNSUPPORTED (opts of a newer header), KC_ENOMEM.
 * listen and opts are copied. *ret is new — caller frees with kc_health_free, which stops serving.
 * Thread-safe. Since 0.1.
 */
KC_API int(kc_health_new)(kc_cache *cache, const char *listen, const kc_health_opts *opts,
                          size_t opts_size, kc_health **ret, kc_error *err);
#define kc_health_new(cache, listen, opts, ret, err)                                               \
    (kc_health_new)((cache), (listen), (opts), sizeof(kc_health_opts), (ret), (err))

/* "http://ADDR:PORT" of the endpoint. Borrowed: valid until kc_health_free. NULL for NULL.
 * Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_health_url(const kc_health *h);
/* The port. No ownership transfer. Errors: KC_EINVAL for NULL. Thread-safe. Since 0.1. */
KC_API int kc_health_port(const kc_health *h);

/* Render /metrics into a new malloc'd NUL-terminated string (caller frees). Usable without a
 * running endpoint. Errors: NULL on out of memory or for a NULL cache. Thread-safe. Since 0.1. */
KC_API char *kc_health_metrics_text(kc_cache *cache);

/*
 * Append another component's metrics to /metrics (e.g. a work queue's:
 * kc_health_add_metrics_source(h, kc_workqueue_metrics_render, q)). On every
 * scrape, after the cache's metrics, render(ud) is called from the endpoint's thread; it returns
 * a new malloc'd Prometheus text (freed by the endpoint) or NULL (nothing appended). ud is
 * borrowed: it must stay valid until kc_health_remove_metrics_source or kc_health_free. render
 * runs under the endpoint's source lock and must not call kc_health functions. At most
 * KC_HEALTH_METRICS_SOURCES_MAX sources. Thread-safe. Errors: KC_EINVAL (NULL h or render),
 * KC_EBUSY (too many sources), KC_ENOMEM. Since 0.1.
 */
#define KC_HEALTH_METRICS_SOURCES_MAX 256
KC_API int kc_health_add_metrics_source(kc_health *h, char *(*render)(void *ud), void *ud);

/* Remove the source added with this (render, ud); on return render(ud) is not running and will
 * not be called again. No ownership transfer (ud is the caller's again). Thread-safe (not from
 * inside render). Errors: KC_EINVAL (NULL), KC_ENOTFOUND (no such source). Since 0.1. */
KC_API int kc_health_remove_metrics_source(kc_health *h, char *(*render)(void *ud), void *ud);

/*
 * Also report inf, an informer outside the endpoint's cache (e.g. kc_podmeta_pod_informer: a
 * component that runs its own informers), in /readyz — one "[+]informer <name> ok" / "[-]informer
 * <name> failed: …" line, with its last error, like the cache's; /readyz is 503 while a required
 * one is not ready — and in /metrics (the same kcache_informer_* series). Its name
 * (kc_informer_name) should differ from the cache's informers'. inf is borrowed: it must stay
 * valid until kc_health_remove_informer or kc_health_free. At most
 * KC_HEALTH_INFORMERS_MAX. Thread-safe. Errors: KC_EINVAL (NULL h or inf), KC_EEXISTS (added
 * already), KC_EBUSY (too many), KC_ENOMEM. Since 0.1.
 */
#define KC_HEALTH_INFORMERS_MAX 256
KC_API int kc_health_add_informer(kc_health *h, kc_informer *inf, bool required);

/* Stop reporting inf; on return the endpoint no longer reads it. No ownership transfer.
 * Thread-safe. Errors: KC_EINVAL (NULL), KC_ENOTFOUND (not added). Since 0.1. */
KC_API int kc_health_remove_informer(kc_health *h, kc_informer *inf);

/* Stop serving and free (h is consumed). Accepts NULL. Not thread-safe: must not race with other
 * calls on the endpoint. Never fails. Since 0.1. */
KC_API void kc_health_free(kc_health *h);

KC_END_DECLS

#endif
