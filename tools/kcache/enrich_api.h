/*
 * enrich_api.h — what the daemon asks the API server besides its two watches:
 *   enrich_fetch.c  the background GET of a pod the cache misses after sync (spec CA5);
 *   enrich_rbac.c   the start-up check of the RBAC it needs (RB1).
 * Used by the kc_podmeta view (enrich_podmeta.c); apart from enrich.h so that the rest of
 * `kcache enrich` stays free of them.
 */
#ifndef KC_ENRICH_API_H
#define KC_ENRICH_API_H

#include "enrich.h"

#include "kcache/client.h"
#include "kcache/store.h"

/* One GET (tests fake it): resource "pods" (ns, name) or "namespaces" (name; ns NULL). 0 with
 * *body (new malloc'd, NUL-terminated) and *len, or a negative KC_E code with *status (the HTTP
 * status, 0 for a transport failure) and *retry_after_s (-1: none). */
typedef int (*kc__enrich_get_fn)(void *ud, const char *resource, const char *ns, const char *name,
                                 char **body, size_t *len, int *status, int *retry_after_s);

typedef struct kc__enrich_fetch_opts {
    double rate;        /* GETs per second (token bucket); <= 0: no fetching at all */
    int burst;          /* bucket size; 0 → 5 */
    int64_t ttl_ms;     /* a fetched object is served this long, then fetched again; 0 → 60000 */
    int64_t neg_ttl_ms; /* a 404 or a failure is remembered this long; 0 → 30000 (CA5) */
    size_t max_entries; /* side-table entries (pods and namespaces); 0 → 1024 */
    size_t max_bytes;   /* their JSON bytes; 0 → 64 MiB */
    kc_store *ns_store; /* Namespaces already watched (not fetched); may be NULL */
    _Atomic uint64_t *generation; /* bumped (release) after a stored result; may be NULL */
    kc__enrich_get_fn get;        /* NULL: kc_client_get on client */
    void *get_ud;
} kc__enrich_fetch_opts;

typedef struct kc__enrich_fetch_stats {
    uint64_t sent, ok, notfound, throttled, errors; /* GETs sent, and their outcomes */
    uint64_t hits, negative_hits, queued, dropped, evicted;
    size_t entries, bytes;
    bool paused; /* after a 429/503 or a transport failure, until its Retry-After or backoff */
} kc__enrich_fetch_stats;

typedef struct kc__enrich_fetch kc__enrich_fetch;

/* Start the fetcher's thread. client (borrowed, outlives the fetcher) should not retry by itself
 * (max_retries < 0) nor rate-limit (qps < 0): the fetcher does both. NULL on failure. */
kc__enrich_fetch *kc__enrich_fetch_new(kc_client *client, const kc__enrich_fetch_opts *o);
/* Stop the thread (waits for a GET in flight, bounded by the client's request timeout), free. */
void kc__enrich_fetch_free(kc__enrich_fetch *f);
/* The answer for key from the side table: 0 (meta filled, or ret->same), or KC_ENOTFOUND — then a
 * GET of the pod is queued when none is in flight or remembered. Never waits on the network.
 * Keys without namespace and name (a container id or uid alone) cannot be fetched. */
int kc__enrich_fetch_lookup(kc__enrich_fetch *f, const kc__enrich_key *key, kc__enrich_meta *ret);
void kc__enrich_fetch_get_stats(kc__enrich_fetch *f, kc__enrich_fetch_stats *ret);
/* Prometheus text of the stats (a kc_health metrics source: new malloc'd, or NULL). */
char *kc__enrich_fetch_metrics(void *f);

/* ---- the start-up RBAC check (enrich_rbac.c) ------------------------------------------------ */

/* Ask the API server (SelfSubjectAccessReview) whether this client may get, list and watch pods
 * and namespaces (RB1). 0: all allowed; 1: one is denied, msg (size n) names the verb and the
 * resource; -1: the check itself failed (API server unreachable, reviews not served), msg says
 * why — the caller goes on: the informers' errors and /readyz will tell. */
int kc__enrich_rbac_check(kc_client *client, char *msg, size_t n);

#endif
