/*
 * kcache/client.h — kc_client: the REST client for the Kubernetes API (verbs, paging, streaming
 * watch, discovery and RESTMapper) over libcurl.
 *
 * Thread model: one kc_client is shared by any number of threads. Every call may run concurrently
 * with every other call on the same client. Internally each request borrows a libcurl easy handle
 * from a small pool (handles are returned after the request and reused, so keep-alive connections
 * survive between requests); connections, DNS results and TLS sessions are shared between handles
 * through a CURLSH with per-data locks. A request never holds a client lock while it waits on the
 * network. Callbacks (list items, watch events) run on the calling thread. kc_client_free must not
 * race with calls in flight.
 *
 * Every request:
 *   - waits for the client-side token bucket (qps/burst), watches included — so a server that
 *     ends every watch at once gets at most qps of them (the informer backs off too; see
 *     kcache/informer.h); a cancelled request stops waiting;
 *   - authenticates from the kc_config (bearer token, token file re-read when it changes,
 *     client certificate, basic, exec plugin with cached credential; on 401 the credential is
 *     refreshed once and the request re-sent);
 *   - is retried on 429 or 5xx only when the response carries an integer Retry-After, at most
 *     max_retries times and within a budget of 60 s of such sleeps per call, and only for
 *     idempotent verbs (GET, LIST, PUT, DELETE) — POST and PATCH are re-sent only after a 429,
 *     which the server answers before doing anything. Each sleep is the Retry-After capped at
 *     retry_after_max_ms (a hostile "Retry-After: 999999" costs 10 s by default, not 11 days);
 *     the error returned when retries run out keeps the server's value in err->retry_after_s;
 *   - maps failures to the error model: a Status body → code + detail (kc_status_parse); transport
 *     failures → KC_EDNS, KC_ETLS (the verification reason in the message), KC_ETIMEOUT, KC_EIO;
 *     a response header over libcurl's limit (CURL_MAX_HTTP_HEADER, 100 KiB a header line) →
 *     KC_ETOOLARGE naming it (libcurl itself says "Out of memory").
 * Credentials are never sent over plain http to a non-loopback host unless
 * allow_insecure_credentials is set (KC_ECONFIG otherwise), and never logged.
 */
#ifndef KCACHE_CLIENT_H
#define KCACHE_CLIENT_H

#include "cancel.h"
#include "config.h"
#include "decode.h"

KC_BEGIN_DECLS

typedef struct kc_client kc_client;

/* Client options. Zero-initialised (or NULL) means the defaults. Strings copied. */
typedef struct kc_client_opts {
    double qps;                      /* token-bucket rate; 0 → 50; < 0 disables the limiter */
    int burst;                       /* bucket size; 0 → 100 */
    int max_retries;                 /* Retry-After retries; 0 → 5; < 0 → none */
    int64_t request_timeout_ms;      /* per request (watches exempt); 0 → 30000; < 0 → none */
    bool allow_insecure_credentials; /* allow credentials over http to a non-loopback host */
    const char *user_agent;          /* NULL → "kcache/<version>" */
    /* The longest one Retry-After retry sleeps, whatever the server asks; 0 (or < 0) → 10000;
     * values above 60000 (the per-call budget of Retry-After sleeps) act as 60000. (appended) */
    int64_t retry_after_max_ms;
    /* The most bytes one response body may have when it is collected whole (every call but a
     * watch's event stream: a LIST page, a GET, an error Status): more is KC_ETOOLARGE, naming
     * this field — at once when Content-Length announces more. The body's buffer grows with the
     * bytes that arrive, never with what Content-Length announces (at most 8 MiB is reserved
     * ahead), so this bounds what one response costs in memory. A LIST whose first page is its
     * last (a server ignoring limit) must fit: 100k Pods are ~600 MB. 0 → 1 GiB (1073741824). */
    size_t max_response_bytes;
} kc_client_opts;

/*
 * New client for cfg (the client keeps its own reference to cfg; the caller may free it).
 * opts may be NULL. Errors: KC_EINVAL, KC_ECONFIG (credentials over plain http to a remote host),
 * KC_EUNSUPPORTED (opts of a newer header), KC_ENOMEM. opts are copied. On success *ret is new —
 * caller frees with kc_client_free(). Thread-safe. Since 0.1.
 */
KC_API int(kc_client_new)(const kc_config *cfg, const kc_client_opts *opts, size_t opts_size,
                          kc_client **ret, kc_error *err);
#define kc_client_new(cfg, opts, ret, err)                                                         \
    (kc_client_new)((cfg), (opts), sizeof(kc_client_opts), (ret), (err))

/* Free the client (consumed; it drops its reference to the config). No call may be in flight: not
 * thread-safe. Accepts NULL. Never fails. Since 0.1. */
KC_API void kc_client_free(kc_client *client);

/* Transport counters of a client (monotonic since kc_client_new). */
typedef struct kc_client_stats {
    uint64_t bytes_received; /* response body bytes received, every call (lists, watches, …) */
    uint64_t connections;    /* TCP/TLS connections opened */
} kc_client_stats;

/* Counters into *ret (at most ret_size bytes; docs/abi.md). client NULL: zeroed; ret NULL:
 * nothing. Copied into the caller's *ret. Thread-safe. Never fails. The macro passes
 * sizeof(kc_client_stats). Since 0.1. */
KC_API void(kc_client_get_stats)(kc_client *client, kc_client_stats *ret, size_t ret_size);
#define kc_client_get_stats(client, ret)                                                           \
    (kc_client_get_stats)((client), (ret), sizeof(kc_client_stats))

/* Default namespace of the client's configuration. Borrowed: valid until the client is freed.
 * NULL for NULL. Thread-safe. Never fails. Since 0.1. */
KC_API const char *kc_client_namespace(const kc_client *client);

/* ---- resources and options ---------------------------------------------------------------- */

/* Group/version/resource. Strings borrowed for the call. */
typedef struct kc_gvr {
    const char *group;    /* "" (or NULL) for the core group */
    const char *version;  /* e.g. "v1" */
    const char *resource; /* lowercase plural, e.g. "pods" */
} kc_gvr;

/* LIST options. Zero-initialised (or NULL) means none. Strings borrowed for the call. */
typedef struct kc_list_opts {
    const char *label_selector, *field_selector;
    int64_t limit;                      /* page size; 0 = none */
    const char *continue_token;         /* from kc_list_meta.continue_token */
    const char *resource_version;       /* NULL = most recent (quorum read) */
    const char *resource_version_match; /* "NotOlderThan" | "Exact" | NULL */
    int64_t timeout_s;                  /* server-side timeoutSeconds; 0 = none */
    bool metadata_only; /* Accept PartialObjectMetadataList (JSON fallback), KC_DECODE_METADATA_ONLY
                         */
    const kc_decode_opts *decode; /* NULL = defaults */
    size_t decode_size;           /* sizeof(kc_decode_opts) when decode is set (docs/abi.md) */
    kc_cancel *cancel; /* borrowed; when fired the request (or the pager between pages) stops with
                        * KC_ECANCELED; NULL = not cancellable */
    /* shardSelector (server-side sharded list, KEP-5866; kcache/shard.h), sent on every page as
     * is: give the canonical form (kc_shard_selector_string) to compare the server's echo. An old
     * server ignores it and returns everything; to filter regardless, also set decode->shard.
     * NULL = none. */
    const char *shard_selector;
    /* kc_client_list_all: the most pages one walk may take; a page beyond it (a server whose
     * continue tokens never end) stops the walk with KC_ETOOLARGE naming this field. An informer
     * sets it from kc_informer_opts.max_list_pages. 0 = no limit. */
    int64_t max_pages;
} kc_list_opts;

/* WATCH options. Zero-initialised (or NULL) means none. Strings borrowed for the call. */
typedef struct kc_watch_opts {
    const char *label_selector, *field_selector;
    const char *resource_version; /* NULL/"" = start with synthetic ADDED of current state */
    const char *resource_version_match;
    bool allow_bookmarks;
    bool send_initial_events;
    int64_t timeout_s;  /* server-side timeoutSeconds; 0 = none */
    bool metadata_only; /* Accept PartialObjectMetadata (JSON fallback), KC_DECODE_METADATA_ONLY */
    const kc_decode_opts *decode; /* NULL = defaults */
    size_t decode_size;           /* sizeof(kc_decode_opts) when decode is set (docs/abi.md) */
    const char *shard_selector;   /* shardSelector, as for kc_list_opts (a watch has no echo) */
} kc_watch_opts;

/* Options for create / update / update_status. Zero-initialised (or NULL) means none. */
typedef struct kc_write_opts {
    const char *field_manager;    /* fieldManager */
    const char *field_validation; /* "Strict" | "Warn" | "Ignore" | NULL */
    bool dry_run;                 /* dryRun=All */
    const kc_decode_opts *decode; /* decoding of the returned object; NULL = defaults */
    size_t decode_size;           /* sizeof(kc_decode_opts) when decode is set (docs/abi.md) */
} kc_write_opts;

typedef enum kc_patch_type {
    KC_PATCH_MERGE = 0,     /* application/merge-patch+json (RFC 7386) */
    KC_PATCH_JSON = 1,      /* application/json-patch+json (RFC 6902) */
    KC_PATCH_STRATEGIC = 2, /* application/strategic-merge-patch+json (built-in types only) */
    KC_PATCH_APPLY = 3,     /* application/apply-patch+yaml: server-side apply (needs a manager) */
} kc_patch_type;

/* Options for patch. Zero-initialised (or NULL) means none. */
typedef struct kc_patch_opts {
    const char *field_manager; /* required for KC_PATCH_APPLY */
    bool force;                /* apply only: take ownership of conflicting fields */
    bool dry_run;
    const char *subresource;      /* e.g. "status"; NULL = the object itself */
    const kc_decode_opts *decode; /* NULL = defaults */
    size_t decode_size;           /* sizeof(kc_decode_opts) when decode is set (docs/abi.md) */
} kc_patch_opts;

/* Options for delete / delete_collection. Zero-initialised (or NULL) means none: no
 * gracePeriodSeconds is sent, so the server applies the object's default grace period (a Pod's
 * terminationGracePeriodSeconds). To send one, set has_grace_period: {.has_grace_period = true,
 * .grace_period_s = 0} deletes now (a Pod is removed without waiting for its kubelet). */
typedef struct kc_delete_opts {
    const char *propagation;      /* "Background" | "Foreground" | "Orphan" | NULL */
    bool has_grace_period;        /* send grace_period_s as gracePeriodSeconds */
    int64_t grace_period_s;       /* >= 0; read only when has_grace_period */
    const char *precondition_uid; /* NULL = none */
    const char *precondition_rv;  /* NULL = none */
    bool dry_run;
    const char *label_selector, *field_selector; /* delete_collection only */
    const kc_decode_opts *decode;                /* NULL = defaults */
    size_t decode_size; /* sizeof(kc_decode_opts) when decode is set (docs/abi.md) */
} kc_delete_opts;

/* ---- verbs -------------------------------------------------------------------------------- */
/*
 * Common rules: gvr and strings are borrowed for the call. ns is the namespace for namespaced
 * resources (NULL or "" = cluster-scoped path, or all namespaces for list/watch). On success an
 * object out-parameter receives a new reference — caller unrefs. On failure err (may be NULL)
 * carries the detail; out-parameters are untouched. All verbs are thread-safe.
 */

/* GET one object. Errors: any mapped HTTP/transport code (KC_ENOTFOUND, …), KC_EINVAL, KC_ETOOLARGE
 * (a body over max_response_bytes). gvr, ns and name are borrowed for the call; *ret_obj is a new
 * reference — caller unrefs. Thread-safe. Since 0.1. */
KC_API int kc_client_get(kc_client *client, const kc_gvr *gvr, const char *ns, const char *name,
                         kc_obj **ret_obj, kc_error *err);

/*
 * LIST one page: the body is decoded with kc_list_decode; ret_meta (may be NULL) gets the list
 * metadata (caller clears with kc_list_meta_clear), on_item (may be NULL) gets each item (consumed:
 * the callback owns the reference). opts may be NULL. If the request fails, on_item is never
 * called; a decode error after some items were delivered is returned as is. gvr, ns and opts are
 * borrowed for the call; ret_meta's strings are new, owned by it. Errors: KC_EINVAL, the server's
 * mapped codes (KC_ENOTFOUND, KC_ECONFLICT, KC_EFORBIDDEN, …) and transport codes (KC_EIO,
 * KC_ETIMEOUT, KC_EDNS, KC_ETLS), KC_ETOOLARGE (a page over max_response_bytes), KC_EPARSE,
 * KC_ECANCELED, the callback's code. Thread-safe. Since 0.1.
 */
KC_API int(kc_client_list)(kc_client *client, const kc_gvr *gvr, const char *ns,
                           const kc_list_opts *opts, size_t opts_size, kc_list_meta *ret_meta,
                           kc_list_item_cb on_item, void *ud, kc_error *err);
#define kc_client_list(client, gvr, ns, opts, ret_meta, on_item, ud, err)                          \
    (kc_client_list)((client), (gvr), (ns), (opts), sizeof(kc_list_opts), (ret_meta), (on_item),   \
                     (ud), (err))

/*
 * LIST every page: follows metadata.continue (limit from opts, default 500 when 0). ret_meta gets
 * the metadata of the last page (its resource_version is the list's RV; continue_token NULL).
 * A 410 on a continue request is returned as KC_EGONE (the caller relists from scratch); a
 * continue token on page opts->max_pages (when set) as KC_ETOOLARGE. Ownership as kc_client_list
 * (items consumed by on_item, ret_meta's strings owned by it). Errors: as kc_client_list, and
 * KC_EGONE, KC_ETOOLARGE. Thread-safe. Since 0.1.
 */
KC_API int(kc_client_list_all)(kc_client *client, const kc_gvr *gvr, const char *ns,
                               const kc_list_opts *opts, size_t opts_size, kc_list_meta *ret_meta,
                               kc_list_item_cb on_item, void *ud, kc_error *err);
#define kc_client_list_all(client, gvr, ns, opts, ret_meta, on_item, ud, err)                      \
    (kc_client_list_all)((client), (gvr), (ns), (opts), sizeof(kc_list_opts), (ret_meta),          \
                         (on_item), (ud), (err))

/*
 * WATCH: blocks, feeding the response body to a kc_watch_decoder as it arrives; cb gets every
 * event (ERROR events too — the callback decides). Returns 0 when the server ends the stream
 * cleanly, KC_ECANCELED when cancel (may be NULL) fires, the callback's negative code if it stops
 * the watch, or the error: the HTTP status of the watch request mapped (410 → KC_EGONE, 504
 * ResourceVersionTooLarge → KC_ERV_TOO_LARGE, …, with detail), transport errors, KC_EPARSE.
 * No client-side timeout applies (TCP keepalive is on); the rate limiter is not consulted.
 * gvr, ns, opts and cancel are borrowed for the call; events' objects are borrowed for the
 * callback (kc_obj_ref() to keep). Errors: KC_ECANCELED, KC_EGONE, KC_ERV_TOO_LARGE, KC_EPARSE,
 * KC_EINVAL, other mapped and transport codes. Thread-safe. Since 0.1.
 */
KC_API int(kc_client_watch)(kc_client *client, const kc_gvr *gvr, const char *ns,
                            const kc_watch_opts *opts, size_t opts_size, kc_watch_event_cb cb,
                            void *ud, kc_cancel *cancel, kc_error *err);
#define kc_client_watch(client, gvr, ns, opts, cb, ud, cancel, err)                                \
    (kc_client_watch)((client), (gvr), (ns), (opts), sizeof(kc_watch_opts), (cb), (ud), (cancel),  \
                      (err))

/*
 * Server-side printing, as kubectl get does: GET the collection (name NULL) or one object (name)
 * as a meta.k8s.io/v1 Table — Accept "application/json;as=Table;v=v1;g=meta.k8s.io,
 * application/json". For a collection, opts (may be NULL) gives the selectors, limit and
 * continue_token as for kc_client_list: one page, whose metadata.continue names the next. On
 * success *ret_json gets the response body (new malloc'd, NUL-terminated — caller frees) and
 * *ret_len (may be NULL) its length; a server without server-side printing answers with the
 * plain object or list instead (check its "kind"). Errors: KC_EINVAL (client or ret_json NULL,
 * name ""), then as kc_client_get. gvr, ns, name and opts are borrowed for the call. Thread-safe.
 * Since 0.1.
 */
KC_API int(kc_client_get_table)(kc_client *client, const kc_gvr *gvr, const char *ns,
                                const char *name, const kc_list_opts *opts, size_t opts_size,
                                char **ret_json, size_t *ret_len, kc_error *err);
#define kc_client_get_table(client, gvr, ns, name, opts, ret_json, ret_len, err)                   \
    (kc_client_get_table)((client), (gvr), (ns), (name), (opts), sizeof(kc_list_opts), (ret_json), \
                          (ret_len), (err))

/* POST json (len bytes; copied for the request) to the collection. ret_obj may be NULL. gvr, ns,
 * name, opts and the body are borrowed for the call; *ret_obj (may be NULL) is a new reference —
 * caller unrefs. Errors: KC_EINVAL, the server's mapped codes (KC_ENOTFOUND, KC_ECONFLICT,
 * KC_EFORBIDDEN, …) and transport codes (KC_EIO, KC_ETIMEOUT, KC_EDNS, KC_ETLS), KC_ETOOLARGE (a
 * response over max_response_bytes). Thread-safe. Since 0.1. */
KC_API int(kc_client_create)(kc_client *client, const kc_gvr *gvr, const char *ns, const char *json,
                             size_t len, const kc_write_opts *opts, size_t opts_size,
                             kc_obj **ret_obj, kc_error *err);
#define kc_client_create(client, gvr, ns, json, len, opts, ret_obj, err)                           \
    (kc_client_create)((client), (gvr), (ns), (json), (len), (opts), sizeof(kc_write_opts),        \
                       (ret_obj), (err))

/* PUT json to the object (name taken from the body's metadata.name; KC_EINVAL if absent). gvr, ns,
 * name, opts and the body are borrowed for the call; *ret_obj (may be NULL) is a new reference —
 * caller unrefs. Errors: KC_EINVAL, the server's mapped codes (KC_ENOTFOUND, KC_ECONFLICT,
 * KC_EFORBIDDEN, …) and transport codes (KC_EIO, KC_ETIMEOUT, KC_EDNS, KC_ETLS), KC_ETOOLARGE (a
 * response over max_response_bytes). Thread-safe. Since 0.1. */
KC_API int(kc_client_update)(kc_client *client, const kc_gvr *gvr, const char *ns, const char *json,
                             size_t len, const kc_write_opts *opts, size_t opts_size,
                             kc_obj **ret_obj, kc_error *err);
#define kc_client_update(client, gvr, ns, json, len, opts, ret_obj, err)                           \
    (kc_client_update)((client), (gvr), (ns), (json), (len), (opts), sizeof(kc_write_opts),        \
                       (ret_obj), (err))

/* PUT json to the object's /status subresource. gvr, ns, name, opts and the body are borrowed for
 * the call; *ret_obj (may be NULL) is a new reference — caller unrefs. Errors: KC_EINVAL, the
 * server's mapped codes (KC_ENOTFOUND, KC_ECONFLICT, KC_EFORBIDDEN, …) and transport codes (KC_EIO,
 * KC_ETIMEOUT, KC_EDNS, KC_ETLS), KC_ETOOLARGE (a response over max_response_bytes). Thread-safe.
 * Since 0.1. */
KC_API int(kc_client_update_status)(kc_client *client, const kc_gvr *gvr, const char *ns,
                                    const char *json, size_t len, const kc_write_opts *opts,
                                    size_t opts_size, kc_obj **ret_obj, kc_error *err);
#define kc_client_update_status(client, gvr, ns, json, len, opts, ret_obj, err)                    \
    (kc_client_update_status)((client), (gvr), (ns), (json), (len), (opts), sizeof(kc_write_opts), \
                              (ret_obj), (err))

/* PATCH name with body (len bytes) of the given type. KC_PATCH_APPLY without a field manager is
 * KC_EINVAL. gvr, ns, name, opts and the body are borrowed for the call; *ret_obj (may be NULL) is
 * a new reference — caller unrefs. Errors: KC_EINVAL, the server's mapped codes (KC_ENOTFOUND,
 * KC_ECONFLICT, KC_EFORBIDDEN, …) and transport codes (KC_EIO, KC_ETIMEOUT, KC_EDNS, KC_ETLS),
 * KC_ETOOLARGE (a response over max_response_bytes). Thread-safe. Since 0.1. */
KC_API int(kc_client_patch)(kc_client *client, const kc_gvr *gvr, const char *ns, const char *name,
                            kc_patch_type type, const char *body, size_t len,
                            const kc_patch_opts *opts, size_t opts_size, kc_obj **ret_obj,
                            kc_error *err);
#define kc_client_patch(client, gvr, ns, name, type, body, len, opts, ret_obj, err)                \
    (kc_client_patch)((client), (gvr), (ns), (name), (type), (body), (len), (opts),                \
                      sizeof(kc_patch_opts), (ret_obj), (err))

/* DELETE name (DeleteOptions sent as the JSON body). *ret_obj (may be NULL) gets the object when
 * the server returned one (e.g. with deletionTimestamp while finalizers are pending, or the deleted
 * pod) or NULL when it returned a Status. gvr, ns, name, opts and the body are borrowed for the
 * call; *ret_obj (may be NULL) is a new reference — caller unrefs. Errors: KC_EINVAL, the server's
 * mapped codes (KC_ENOTFOUND, KC_ECONFLICT, KC_EFORBIDDEN, …) and transport codes (KC_EIO,
 * KC_ETIMEOUT, KC_EDNS, KC_ETLS), KC_ETOOLARGE (a response over max_response_bytes). Thread-safe.
 * Since 0.1. */
KC_API int(kc_client_delete)(kc_client *client, const kc_gvr *gvr, const char *ns, const char *name,
                             const kc_delete_opts *opts, size_t opts_size, kc_obj **ret_obj,
                             kc_error *err);
#define kc_client_delete(client, gvr, ns, name, opts, ret_obj, err)                                \
    (kc_client_delete)((client), (gvr), (ns), (name), (opts), sizeof(kc_delete_opts), (ret_obj),   \
                       (err))

/* DELETE the collection, filtered by opts->label_selector/field_selector. gvr, ns and opts are
 * borrowed for the call. Errors: KC_EINVAL, the server's mapped codes (KC_ENOTFOUND, KC_ECONFLICT,
 * KC_EFORBIDDEN, …) and transport codes (KC_EIO, KC_ETIMEOUT, KC_EDNS, KC_ETLS), KC_ETOOLARGE (a
 * response over max_response_bytes). Thread-safe. Since 0.1. */
KC_API int(kc_client_delete_collection)(kc_client *client, const kc_gvr *gvr, const char *ns,
                                        const kc_delete_opts *opts, size_t opts_size,
                                        kc_error *err);
#define kc_client_delete_collection(client, gvr, ns, opts, err)                                    \
    (kc_client_delete_collection)((client), (gvr), (ns), (opts), sizeof(kc_delete_opts), (err))

/*
 * Raw request (escape hatch, tools and tests): method "GET"/"POST"/…, path_and_query starting with
 * '/' (already escaped), optional body with its content type (NULL → application/json). Returns 0
 * for any complete HTTP response (check *ret_status) or a transport error — also when the status
 * line arrived but the body did not (cut short, over max_response_bytes, a timeout: the status is
 * not an answer then). *ret_body (may be NULL) gets the
 * response body (new malloc'd, NUL-terminated — caller frees), *ret_len its length. Subject to the
 * rate limiter, authentication and Retry-After retries for idempotent methods. The arguments are
 * borrowed for the call. Errors: KC_EINVAL, transport codes (KC_EIO, KC_ETIMEOUT, KC_EDNS,
 * KC_ETLS), KC_ETOOLARGE (a body over max_response_bytes), KC_ENOMEM. Thread-safe. Since 0.1.
 */
KC_API int kc_client_raw(kc_client *client, const char *method, const char *path_and_query,
                         const char *content_type, const char *body, size_t len, int *ret_status,
                         char **ret_body, size_t *ret_len, kc_error *err);

/*
 * Small helper to build a request body safely: a format string whose directives are
 *   %s  a C string written as a JSON string (quoted, escaped; NULL → null)
 *   %r  raw JSON text inserted as is (e.g. kc_obj_json of another object; NULL → null)
 *   %d  int      %l  int64_t      %b  bool (int promoted: true/false)      %%  a '%'
 * e.g. kc_json_format(&body, &len, err, "{\"metadata\":{\"name\":%s,\"labels\":{\"app\":%s}}}",
 * name, app). Other text is copied verbatim (it is the caller's JSON). *ret (new malloc'd,
 * NUL-terminated — caller frees) and *ret_len (may be NULL) are set on success. Errors: KC_EINVAL
 * (unknown directive), KC_ENOMEM, KC_ETOOLARGE (over 64 MiB). The arguments are borrowed for the
 * call. Thread-safe. Since 0.1.
 */
KC_API int kc_json_format(char **ret, size_t *ret_len, kc_error *err, const char *fmt, ...);

/* ---- discovery and RESTMapper ------------------------------------------------------------- */

/* A resolved resource. All strings owned by the struct; release with kc_resource_info_clear. */
typedef struct kc_resource_info {
    char *group; /* "" for core */
    char *version;
    char *resource; /* plural */
    char *kind;
    char *singular;
    bool namespaced;
    char **short_names;
    size_t n_short;
    char **verbs;
    size_t n_verbs;
} kc_resource_info;

/*
 * Resolve a user-facing name as kubectl does: plural, singular, short name or kind (kind
 * case-insensitively), optionally qualified as NAME.GROUP or NAME.VERSION.GROUP — e.g. "pods",
 * "po", "Pod", "deployments.apps", "deploy", "Deployment.v1.apps", CRD plurals and kinds. Uses
 * the preferred version of each group unless the version is given; the core group wins ties, then
 * discovery order. Discovery documents are fetched on first use and cached; a name not found in
 * the cache triggers one refresh (new CRDs) before KC_ENOTFOUND. On success *ret is filled (the
 * caller clears it: its strings are new, owned by it — kc_resource_info_clear). name is borrowed
 * for the call. Errors: KC_ENOTFOUND, KC_EINVAL, the discovery requests' mapped and transport
 * codes, KC_ENOMEM. Thread-safe. Since 0.1.
 */
KC_API int kc_client_resolve(kc_client *client, const char *name, kc_resource_info *ret,
                             kc_error *err);

/* Free the strings of info (borrowed; the strings it owns are freed) and zero it. Accepts NULL.
 * Thread-safe for distinct infos. Never fails. Since 0.1. */
KC_API void kc_resource_info_clear(kc_resource_info *info);

/* Drop the cached discovery documents: the next resolve fetches them again. No ownership
 * transfer. Errors: KC_EINVAL (NULL). Thread-safe. Since 0.1. */
KC_API int kc_client_discovery_invalidate(kc_client *client);

KC_END_DECLS

#endif
