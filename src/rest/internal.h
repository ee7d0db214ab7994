/*
 * rest/internal.h — library-internal contracts of the REST layer (prefix kc__):
 * struct kc_client, the request core (rate limit → credential → transport → 401 refresh →
 * Retry-After retries → error mapping), URL building, and the discovery cache.
 * Not installed. Include as "rest/internal.h".
 */
#ifndef KC_REST_INTERNAL_H
#define KC_REST_INTERNAL_H

#include "http/internal.h"
#include "json/decode_internal.h"
#include "kcache/client.h"

typedef struct kc__disc kc__disc;

struct kc_client {
    kc_config *cfg;
    kc__http *http;
    kc__auth *auth;
    kc__ratelimit rl;
    int max_retries;
    int64_t timeout_ms;
    int64_t retry_after_max_ms; /* cap of one Retry-After sleep (opts; <= KC__RETRY_BUDGET_MS) */
    size_t max_response;        /* kc_client_opts.max_response_bytes (default applied) */
    pthread_mutex_t disc_mu;    /* guards disc (the pointer; a kc__disc is immutable) */
    kc__disc *disc;
};

/* Upper bound of the total time spent sleeping for Retry-After in one call. */
#define KC__RETRY_BUDGET_MS 60000

/*
 * Run one API call: req->method/path/body/content_type/stream/on_data/cancel set by the caller;
 * cred and timeout are filled here. idempotent: may be re-sent after 429/5xx with Retry-After
 * (non-idempotent calls only after a 429). Returns 0 for a 2xx response (body in resp), the mapped
 * error for any other status (detail from the Status body in err, err->http_status set), or a
 * transport error.
 */
int kc__client_call(kc_client *c, kc__http_req *req, bool idempotent, kc__http_resp *resp,
                    kc_error *err);

/* kc_client_watch, plus on_flush(ud) after each read of the stream has been decoded (every event
 * complete in it delivered) and once at its end: the informer applies a burst's events one by one
 * but notifies its handlers once per read. on_flush may be NULL. shard (may be NULL): the
 * decoder's hash-range filter (json/decode_internal.h; borrowed for the call). */
int kc__client_watch_ex(kc_client *c, const kc_gvr *gvr, const char *ns, const kc_watch_opts *opts,
                        const kc_shard_selector *shard, kc_watch_event_cb cb,
                        void (*on_flush)(void *ud), void *ud, kc_cancel *cancel, kc_error *err);

/* How the pages of a LIST answered its shardSelector (KEP-5866, controller-semantics S8/S13.1). */
typedef struct kc__list_echo {
    uint64_t pages;        /* pages received */
    uint64_t pages_echoed; /* pages whose metadata.shardInfo.selector == opts->shard_selector,
                              byte for byte */
} kc__list_echo;

/* kc_client_list_all (opts a full-size copy or NULL, its decode too) with the decoder's filter
 * shard (may be NULL; borrowed for the call), also counting each page's shardInfo echo into *echo
 * (may be NULL; not zeroed here). */
/* One LIST page, as kc_client_list, with the filter and the echo count of
 * kc__client_list_all_ex. */
int kc__client_list_page(kc_client *c, const kc_gvr *gvr, const char *ns, const kc_list_opts *opts,
                         const kc_shard_selector *shard, kc_list_meta *ret_meta,
                         kc__list_echo *echo, kc_list_item_cb on_item, void *ud, kc_error *err);
int kc__client_list_all_ex(kc_client *c, const kc_gvr *gvr, const char *ns,
                           const kc_list_opts *opts, const kc_shard_selector *shard,
                           kc_list_meta *ret_meta, kc__list_echo *echo, kc_list_item_cb on_item,
                           void *ud, kc_error *err);

/* kc_client_delete, plus the UID a Status response names (details.uid): *ret_status_uid (may be
 * NULL) is a new malloc'd string — caller frees — or NULL when the server returned an object, or a
 * Status without a UID (and on failure). */
int kc__client_delete_ex(kc_client *c, const kc_gvr *gvr, const char *ns, const char *name,
                         const kc_delete_opts *opts, kc_obj **ret_obj, char **ret_status_uid,
                         kc_error *err);

/* ---- LIST (verbs.c, pager.c) ------------------------------------------------------------------
 */
#define KC__DEFAULT_PAGE 500

/* d (may be NULL) copied, with KC_DECODE_METADATA_ONLY added when metadata_only. */
kc_decode_opts kc__decode_opts(const kc_decode_opts *d, bool metadata_only);
/* The prologue of a paged LIST walk (kc__client_list_all_ex, kc__client_list_pipelined): *ret a
 * copy of opts (NULL: all zero) with limit KC__DEFAULT_PAGE when it is <= 0. KC_EINVAL when c
 * is NULL (*ret untouched). */
int kc__list_opts_paged(const kc_client *c, const kc_list_opts *opts, kc_list_opts *ret,
                        kc_error *err);
/* The error of a paged LIST walk that took opts->max_pages pages and got a continue token again
 * (issue 29 point 4): KC_ETOOLARGE naming the resource and the limit. */
int kc__list_pages_exceeded(const kc_gvr *gvr, const kc_list_opts *opts, kc_error *err);
/* GET the collection (name NULL; opts' selectors, limit, continue… in the query) or one object,
 * with the given Accept (NULL = JSON), into *resp (kept by the caller: its body's capacity is
 * reused). 0 for a 2xx response, else the mapped error. */
int kc__get_call(kc_client *c, const kc_gvr *gvr, const char *ns, const char *name,
                 const kc_list_opts *opts, const char *accept, kc__http_resp *resp, kc_error *err);
/* kc__get_call of a collection, calling on_body(body_ud, body so far) after each chunk of a 2xx
 * body arrives (on the calling thread; see kc__http_req.on_body). */
int kc__list_call_watched(kc_client *c, const kc_gvr *gvr, const char *ns, const kc_list_opts *opts,
                          const char *accept, void (*on_body)(void *body_ud, const kc__buf *body),
                          void *body_ud, kc__http_resp *resp, kc_error *err);

/*
 * kc_client_list_all, pipelined (pager.c): page k+1 is asked for as soon as page k's head (the
 * list metadata, with its continue token, precedes items) has arrived — the calling thread and a
 * helper take pages in turn — and a worker thread decodes the pages in order while the next ones
 * download. on_item is called in order, one call at a time, but on the worker thread (the caller
 * is blocked in this call meanwhile). Three response buffers are reused across pages and parsed in
 * place (no copy of the body). Same results and errors as kc_client_list_all; falls back to it
 * when the worker cannot start, and fetches alone when the helper cannot.
 */
int kc__client_list_pipelined(kc_client *c, const kc_gvr *gvr, const char *ns,
                              const kc_list_opts *opts, kc_list_meta *ret_meta,
                              kc_list_item_cb on_item, void *ud, kc_error *err);
/* Helper fetchers kc__client_list_pipelined has started in this process (tests: a list of one
 * page, which a server ignoring limit sends, starts none). */
uint64_t kc__pager_helpers_started(void);
/* The bytes of page 0's body received when the last helper started (tests: it starts from the
 * page's head, not once the whole page is in). */
uint64_t kc__pager_helper_start_len(void);

/* Map a non-2xx response to a code and detail. */
int kc__client_status_error(const kc__http_resp *resp, const char *method, const char *path,
                            kc_error *err);

/* ---- URLs (path.c) ----------------------------------------------------------------------------
 */

/* /api/v1 or /apis/G/V [/namespaces/NS] /RESOURCE [/NAME [/SUB]] (components escaped). */
int kc__path(kc__buf *b, const kc_gvr *gvr, const char *ns, const char *name, const char *sub);
/* Append "?key=value" or "&key=value" (value percent-escaped); NULL or "" value: nothing. */
int kc__query(kc__buf *b, const char *key, const char *value);
int kc__query_int(kc__buf *b, const char *key, int64_t value);
/* Checks of what goes into a path, KC_EINVAL with err naming the field and the rule:
 * kc__gvr_check: group "" or a DNS subdomain, version a DNS-1035 label, resource a DNS-1123
 * label; kc__ns_check: NULL, "" or a DNS-1123 label; kc__segment_check (names, subresources;
 * what names the field in the message): non-empty, not "." or "..", no '/' or '%'. */
int kc__gvr_check(const kc_gvr *gvr, kc_error *err);
int kc__ns_check(const char *ns, kc_error *err);
int kc__segment_check(const char *what, const char *s, kc_error *err);
/* Percent-escape s (RFC 3986 unreserved kept). */
int kc__escape(kc__buf *b, const char *s);

/* ---- discovery (discovery.c) ------------------------------------------------------------------
 */
void kc__disc_free(kc__disc *d);

/* Accept headers of metadata-only list/watch requests (PartialObjectMetadata, JSON fallback). */
#define KC__ACCEPT_PARTIAL_LIST                                                                    \
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
#define KC__ACCEPT_PARTIAL                                                                         \
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

#endif
